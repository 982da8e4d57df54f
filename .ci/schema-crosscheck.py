#!/usr/bin/env python3
"""Schema cross-check: Python's jsonschema against the Swift validator, over every fixture.

Usage: python3 .ci/schema-crosscheck.py LOGTOOL
       python3 .ci/schema-crosscheck.py --python-only     (print Python's verdicts; no Swift run)

Walks Fixtures/ and picks a schema per file:
  path containing "/expected/inspect"                        -> Spec/schemas/inspect.schema.json
  path ending "/expected/state.json"                         -> Spec/schemas/state.schema.json
  path ending "/expected/verify.json"                        -> Spec/schemas/verify.schema.json
  path ending "/expected/device.json"                        -> Spec/schemas/device.schema.json
  path ending "/expected/repair.json"                        -> Spec/schemas/repair.schema.json
  path ending "/expected/device-state.json"                  -> Spec/schemas/device-state.schema.json
  under /expected-v1/, or under Fixtures/v1-json/ outside expected/ and originals/
                                                             -> Spec/schemas/v1-event.schema.json
  name ending ".cdeevent", or any file under Fixtures/v2-json/ -> Spec/schemas/v2-event.schema.json
  manifests (cases.json, originals.json)                     -> skipped
  anything else                                              -> skipped (counted)
Python's verdict per file is "unparseable" when strict JSON parsing fails (the limits and rules of
Spec: UTF-8 only, no BOM, no duplicate keys, no NaN/Infinity, no lone surrogate escapes, depth <= 64,
number tokens <= 1,000 chars, strings <= 16 MiB, file <= 256 MiB), else "valid" or "invalid" by
Draft202012Validator. The Swift side runs once per schema (in chunks of 200 files):
  LOGTOOL validate --schema <v2-event|inspect> --json FILE...
and prints {"files":[{"file":..,"verdict":..,"errors":[..]}]} (exit 0 all valid, 1 some not, 2 usage).
Exit status: 0 when every verdict agrees, 1 when any differs, 2 on a usage or tool error.
Needs Python 3.11 and jsonschema (4.26); nothing else.
"""
import json
import os
import subprocess
import sys

import jsonschema
from jsonschema import Draft202012Validator

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = 'Fixtures'
SCHEMAS = {
    'v2-event': 'Spec/schemas/v2-event.schema.json',
    'v1-event': 'Spec/schemas/v1-event.schema.json',
    'inspect': 'Spec/schemas/inspect.schema.json',
    'state': 'Spec/schemas/state.schema.json',
    'verify': 'Spec/schemas/verify.schema.json',
    'device': 'Spec/schemas/device.schema.json',
    'repair': 'Spec/schemas/repair.schema.json',
    'device-state': 'Spec/schemas/device-state.schema.json',
}
CHUNK = 200
MAX_FILE = 256 * 1024 * 1024
MAX_DEPTH = 64
MAX_STRING = 16 * 1024 * 1024
MAX_NUMBER = 1000


class Unparseable(Exception):
    pass


def _pairs(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise Unparseable('duplicate key %r' % k)
        d[k] = v
    return d


def _constant(name):
    raise Unparseable('%s is not JSON' % name)


def _int(text):
    if len(text) > MAX_NUMBER:
        raise Unparseable('number token longer than %d chars' % MAX_NUMBER)
    return int(text)


def _float(text):
    if len(text) > MAX_NUMBER:
        raise Unparseable('number token longer than %d chars' % MAX_NUMBER)
    return float(text)


def _check_string(s):
    if any(0xD800 <= ord(c) <= 0xDFFF for c in s):
        raise Unparseable('lone surrogate escape')
    if len(s.encode('utf-8')) > MAX_STRING:
        raise Unparseable('string longer than 16 MiB')


def _walk(v, depth):
    if isinstance(v, dict):
        depth += 1
        if depth > MAX_DEPTH:
            raise Unparseable('nesting deeper than %d' % MAX_DEPTH)
        for k, x in v.items():
            _check_string(k)
            _walk(x, depth)
    elif isinstance(v, list):
        depth += 1
        if depth > MAX_DEPTH:
            raise Unparseable('nesting deeper than %d' % MAX_DEPTH)
        for x in v:
            _walk(x, depth)
    elif isinstance(v, str):
        _check_string(v)


def strict_load(data):
    """Parse bytes as strict JSON (RFC 8259 plus the Spec's limits) or raise Unparseable."""
    if len(data) > MAX_FILE:
        raise Unparseable('file larger than 256 MiB')
    if data.startswith(b'\xef\xbb\xbf'):
        raise Unparseable('UTF-8 byte order mark')
    try:
        text = data.decode('utf-8', errors='strict')
    except UnicodeDecodeError as e:
        raise Unparseable('invalid UTF-8 at byte %d' % e.start)
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant,
                           parse_int=_int, parse_float=_float)
    except Unparseable:
        raise
    except (ValueError, RecursionError) as e:   # JSONDecodeError is a ValueError
        raise Unparseable(str(e))
    _walk(value, 0)
    return value


def schema_for(rel):
    """rel: '/'-separated path relative to the repository root."""
    if '/expected/inspect' in rel:
        return 'inspect'
    if rel.endswith('/expected/state.json'):
        return 'state'
    if rel.endswith('/expected/verify.json'):
        return 'verify'
    if rel.endswith('/expected/device.json'):
        return 'device'
    if rel.endswith('/expected/device-state.json'):
        return 'device-state'
    if rel.endswith('/expected/repair.json'):
        return 'repair'
    name = rel.rsplit('/', 1)[-1]
    if name in ('cases.json', 'originals.json'):
        return None
    if '/expected-v1/' in rel:
        return 'v1-event'
    if rel.startswith(FIXTURES + '/v1-json/') and '/expected/' not in rel and '/originals/' not in rel:
        return 'v1-event'
    if rel.endswith('.cdeevent') or rel.startswith(FIXTURES + '/v2-json/'):
        return 'v2-event'
    return None


def collect():
    picked, skipped = [], 0
    for dirpath, dirnames, filenames in os.walk(os.path.join(REPO, FIXTURES)):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, REPO).replace(os.sep, '/')
            schema = None if os.path.islink(full) else schema_for(rel)
            if schema is None:
                skipped += 1
            else:
                picked.append((rel, schema))
    return picked, skipped


def load_validators():
    validators = {}
    for key, rel in SCHEMAS.items():
        path = os.path.join(REPO, rel)
        with open(path, 'rb') as f:
            schema = json.load(f)
        Draft202012Validator.check_schema(schema)
        validators[key] = Draft202012Validator(schema, registry=_registry())
    return validators


def _registry():
    """Every schema under Spec/schemas, so that cross-file $refs resolve without a network."""
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012
    resources = []
    folder = os.path.join(REPO, 'Spec', 'schemas')
    for name in sorted(os.listdir(folder)):
        if not name.endswith('.json'):
            continue
        with open(os.path.join(folder, name), 'rb') as f:
            contents = json.load(f)
        if not isinstance(contents, dict):
            continue
        res = Resource.from_contents(contents, default_specification=DRAFT202012)
        resources.append((name, res))
        if isinstance(contents.get('$id'), str):
            resources.append((contents['$id'], res))
    return Registry().with_resources(resources)


def python_verdict(rel, validator):
    with open(os.path.join(REPO, rel), 'rb') as f:
        data = f.read()
    try:
        instance = strict_load(data)
    except Unparseable as e:
        return 'unparseable', str(e)
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    if not errors:
        return 'valid', ''
    first = errors[0]
    pointer = ''.join('/' + str(p).replace('~', '~0').replace('/', '~1') for p in first.absolute_path)
    return 'invalid', 'schema.%s at "%s"' % (first.validator, pointer)


def swift_verdicts(logtool, schema, files):
    out = {}
    for i in range(0, len(files), CHUNK):
        chunk = files[i:i + CHUNK]
        proc = subprocess.run([logtool, 'validate', '--schema', schema, '--json'] + chunk,
                              cwd=REPO, capture_output=True)
        if proc.returncode not in (0, 1):
            sys.stderr.write('schema cross-check: %s exited %d\n%s\n' % (logtool, proc.returncode,
                             proc.stderr.decode('utf-8', 'replace')))
            sys.exit(2)
        try:
            doc = json.loads(proc.stdout)
            entries = doc['files']
        except (ValueError, KeyError, TypeError) as e:
            sys.stderr.write('schema cross-check: cannot read the output of %s validate: %s\n%s\n' % (
                logtool, e, proc.stdout[:2000].decode('utf-8', 'replace')))
            sys.exit(2)
        for entry in entries:
            errs = entry.get('errors') or []
            detail = ''
            if errs:
                detail = '%s at %s' % (errs[0].get('code'), json.dumps(errs[0].get('pointer')))
            out[entry.get('file')] = (entry.get('verdict'), detail)
    return out


def main(argv):
    if len(argv) != 2 or argv[1] in ('-h', '--help'):
        sys.stderr.write('usage: schema-crosscheck.py LOGTOOL | --python-only\n')
        return 2
    picked, skipped = collect()
    validators = load_validators()
    py = {rel: python_verdict(rel, validators[schema]) for rel, schema in picked}

    if argv[1] == '--python-only':
        for rel, schema in picked:
            v, detail = py[rel]
            print('%-11s %-9s %s  %s' % (v, schema, rel, detail))
        print('%d files (%d skipped)' % (len(picked), skipped))
        return 0

    logtool = os.path.abspath(argv[1])
    if not os.path.isfile(logtool):
        sys.stderr.write('schema cross-check: no such tool: %s\n' % argv[1])
        return 2
    swift = {}
    for schema in SCHEMAS:
        files = [rel for rel, s in picked if s == schema]
        if files:
            swift.update(swift_verdicts(logtool, schema, files))

    rows = []
    for rel, schema in picked:
        pv, pd = py[rel]
        sv, sd = swift.get(rel, ('missing', 'no entry in the tool output'))
        if pv != sv:
            rows.append((rel, schema, pv, sv, pd, sd))
    if rows:
        w = max(len(r[0]) for r in rows)
        print('%-*s  %-8s  %-11s  %-11s  details' % (w, 'file', 'schema', 'python', 'swift'))
        for rel, schema, pv, sv, pd, sd in rows:
            print('%-*s  %-8s  %-11s  %-11s  python: %s | swift: %s' % (w, rel, schema, pv, sv, pd or '-', sd or '-'))
        print('schema cross-check: %d of %d files disagree (%d skipped)' % (len(rows), len(picked), skipped))
        return 1
    print('schema cross-check: %d files agree (%d skipped)' % (len(picked), skipped))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
