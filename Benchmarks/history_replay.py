#!/usr/bin/env python3
"""The Ensembles history of one cloud folder, read for the CRDT workloads (loro/, pycrdt/).

Everything the workloads share and that does not depend on a CRDT library: the folder listing
(Spec/cloud-layout.md, simplified: debris is skipped, not reported), multipart joining, decoding
of v2 JSON events (Spec/v2-json.md, without schema validation), deduplication, the choice of
baselines (Spec/merge.md 4.4), dropping covered events (4.5), the replay order (section 6), and
the comparison of a merged document with a state document of `logtool merge` (section 9).

`load_history(folder, tags, include_covered)` does the reading; each workload maps the result to
its own library. Imported by loro/loro_workload.py and pycrdt/pycrdt_workload.py.
"""

import base64
import json
import os
import re
import stat
import sys

# --------------------------------------------------------------------------------------------------
# Constants

INSERT, UPDATE, DELETE = 100, 200, 300
ROOT_MAP = "objects"
BASELINE_PEER = "baseline"           # display name of the pseudo-peer that writes the baselines
BASELINE_PEER_SEED = "_baseline"     # hashed for its peer id; '_' never occurs in a store identifier
ENSEMBLE_SUBFOLDERS = ("stores", "events", "baselines", "data")
KNOWN_TAGS = ("decimal", "date", "data", "number", "uuid", "url")

PARTIAL_SUFFIXES = (".tmp", ".partial", ".part", ".download", ".crdownload", "~")
SYSTEM_FILES = (".DS_Store", "Thumbs.db", "desktop.ini", "Icon\r")
INT64_MAX = 9223372036854775807

NAME_FIELD = re.compile(r"[^\x00/\\_]+\Z")
INT64_TEXT = re.compile(r"(0|[1-9][0-9]{0,18})\Z")
PART_FIELD = re.compile(r"([1-9][0-9]*)of([1-9][0-9]*)\Z")


class Fatal(Exception):
    """A condition that stops the benchmark (exit status 2)."""


PROGRAM = ["history_replay"]   # the prefix of warnings; set_program() names the workload


def set_program(name):
    PROGRAM[0] = name


def warn(message):
    WARNINGS.append(message)
    print(PROGRAM[0] + ": warning: " + message, file=sys.stderr)


WARNINGS = []

# --------------------------------------------------------------------------------------------------
# Cloud folder (Spec/cloud-layout.md, simplified: debris is skipped, not reported)


def is_ensemble_folder(path):
    for name in ENSEMBLE_SUBFOLDERS:
        p = os.path.join(path, name)
        if os.path.isdir(p) and not os.path.islink(p):
            return True
    return False


def find_ensemble(path):
    if not os.path.isdir(path):
        raise Fatal("%s is not a directory" % path)
    if is_ensemble_folder(path):
        return path
    found = []
    for name in sorted(os.listdir(path)):
        p = os.path.join(path, name)
        if os.path.isdir(p) and not os.path.islink(p) and is_ensemble_folder(p):
            found.append(p)
    if not found:
        raise Fatal("%s is neither an ensemble folder nor a root holding one" % path)
    if len(found) > 1:
        raise Fatal("%s holds %d ensembles (%s); give one ensemble folder"
                    % (path, len(found), ", ".join(os.path.basename(f) for f in found)))
    return found[0]


def is_debris(name, st):
    """Rules 1-5 of cloud-layout.md section 7 (symlinks are handled by the caller)."""
    if name.startswith(".") and name.endswith(".icloud"):
        return True
    if name in SYSTEM_FILES or name.startswith("._"):
        return True
    if name.endswith(PARTIAL_SUFFIXES) or name.startswith(".~"):
        return True
    if stat.S_ISREG(st.st_mode) and st.st_size == 0 and name.endswith(".cdeevent"):
        return True
    i = name.find("(")
    if i >= 0 and name.find(")", i) > i:
        return True
    return False


def int64_field(text):
    return INT64_TEXT.match(text) is not None and int(text) <= INT64_MAX


def part_field(text):
    m = PART_FIELD.match(text)
    if not m:
        return None
    i, n = int(m.group(1)), int(m.group(2))
    if i > n or n > 10000:
        return None
    return i, n


def utf16_length(s):
    return len(s.encode("utf-16-le")) // 2


def classify(folder, name):
    """Return (base name, part index, part count) or None for a name that matches no grammar."""
    if not name.endswith(".cdeevent"):
        return None
    fields = name[: -len(".cdeevent")].split("_")
    k = len(fields)
    part = None
    if folder == "events":
        if k not in (3, 4):
            return None
        if not (int64_field(fields[0]) and NAME_FIELD.match(fields[1]) and int64_field(fields[2])):
            return None
        if k == 4:
            part = part_field(fields[3])
            if part is None:
                return None
        base = "_".join(fields[:3])
    else:  # baselines
        if k < 2 or k > 4 or not int64_field(fields[0]):
            return None
        if not all(NAME_FIELD.match(f) for f in fields[1:]):
            return None
        if k == 2:
            base = name[: -len(".cdeevent")]
        elif k == 3:
            if utf16_length(fields[2]) == 8:
                base = "_".join(fields)
            else:
                part = part_field(fields[2])
                if part is None:
                    return None
                base = "_".join(fields[:2])
        else:
            if utf16_length(fields[2]) != 8:
                return None
            part = part_field(fields[3])
            if part is None:
                return None
            base = "_".join(fields[:3])
    if part is None:
        return base, 0, 0
    return base, part[0], part[1]


def list_groups(ensemble, folder):
    """Logical events of events/ or baselines/: list of lists of paths (parts in order)."""
    path = os.path.join(ensemble, folder)
    if not os.path.isdir(path) or os.path.islink(path):
        return []
    groups = {}
    for name in sorted(os.listdir(path)):
        p = os.path.join(path, name)
        try:
            st = os.lstat(p)
        except OSError as e:
            warn("cannot read %s: %s" % (p, e))
            continue
        if stat.S_ISLNK(st.st_mode) or is_debris(name, st) or not stat.S_ISREG(st.st_mode):
            continue
        c = classify(folder, name)
        if c is None:
            continue
        base, i, n = c
        groups.setdefault(base, []).append((i, n, p))
    result = []
    for base in sorted(groups):
        entries = groups[base]
        if len(entries) == 1 and entries[0][0] == 0:
            result.append([entries[0][2]])
            continue
        counts = {n for (_, n, _) in entries}
        if any(i == 0 for (i, _, _) in entries) or len(counts) != 1:
            warn("%s/%s: inconsistent part group (v2.duplicate-part), skipped" % (folder, base))
            continue
        n = counts.pop()
        indices = sorted(i for (i, _, _) in entries)
        if indices != list(range(1, n + 1)):
            warn("%s/%s: incomplete multipart set (%d of %d parts), skipped"
                 % (folder, base, len(indices), n))
            continue
        result.append([p for (_, _, p) in sorted(entries)])
    return result


# --------------------------------------------------------------------------------------------------
# Events (Spec/v2-json.md, without schema validation)


class Event(object):
    __slots__ = ("path", "uid", "type", "store", "revision", "gc", "ts", "revisions", "raw",
                 "changes", "writes")


def load_json_file(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:1] == b"\x89":
        raise Fatal("%s is a v2 binary event file; this benchmark reads v2 JSON only. Convert the "
                    "folder first: logtool convert --encoding json SOURCE DESTINATION "
                    "(Spec/convert.md)" % path)
    value = json.loads(data)
    if isinstance(value, list) or (
            isinstance(value, dict)
            and any(k in value for k in ("store", "changes", "otherstores"))
            and "storeIdentifier" not in value and "changesByEntity" not in value):
        raise Fatal("%s is in the v1 JSON dialect; this benchmark reads v2 JSON only. Convert it "
                    "first: logtool convert --model MODEL --encoding json SOURCE DESTINATION"
                    % path)
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


def read_logical_event(paths):
    """Read and join one logical event; returns the header dict and the joined changesByEntity."""
    head = load_json_file(paths[0])
    joined = {}
    for i, p in enumerate(paths):
        part = head if i == 0 else load_json_file(p)
        if i > 0 and "type" in part:
            raise ValueError("%s: header key in a continuation part" % p)
        for entity, arr in (part.get("changesByEntity") or {}).items():
            joined.setdefault(entity, []).extend(arr)
    for key in ("uniqueIdentifier", "type", "globalCount", "timestamp", "storeIdentifier",
                "revisionsByStoreIdentifier"):
        if key not in head:
            raise ValueError("missing header key %r" % key)
    return head, joined


def tag_value(value, tags):
    """An attribute value as written to Loro."""
    if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str):
        tag, payload = value
        if tag == "uuid" and isinstance(payload, str):
            payload = payload.upper()
            value = ["uuid", payload]
        if tags == "list":
            return value
        if tag == "date":
            return float(payload)
        if tag == "data":
            return base64.b64decode(payload)
        if tag == "number":
            return {"nan": float("nan"), "+inf": float("inf"), "-inf": float("-inf")}[payload]
        return payload  # decimal text, uuid, url, dataFile name
    return value


def decode_changes(joined, tags):
    """Object changes in decoded order (v2-json.md 5.8), property changes in name order.

    Each change is (key, type, props); each prop is (name, kind, payload):
      kind 0/1: payload is the value to write (attribute value, related id or None)
      kind 2:   payload is (added ids, removed ids)
      kind 3:   payload is (removed ids, [(added id, position or None)],
                [(moved id not added, position)])
    """
    changes = []
    writes = 0
    for entity in sorted(joined):
        for ch in joined[entity]:
            ctype = ch["type"]
            key = entity + "/" + ch["globalIdentifier"]
            props = []
            for p in ch.get("properties") or ():
                name = p.get("propertyName", p.get("name"))
                kind = p["type"]
                if kind == 0:
                    if "filename" in p:
                        payload = tag_value(["dataFile", p["filename"]], tags)
                    else:
                        payload = tag_value(p.get("value"), tags)
                elif kind == 1:
                    payload = p.get("relatedIdentifier")
                elif kind == 2:
                    payload = (sorted(p.get("addedIdentifiers") or ()),
                               sorted(p.get("removedIdentifiers") or ()))
                elif kind == 3:
                    added = sorted(p.get("addedIdentifiers") or ())
                    positions = {}
                    for pos, gid in (p.get("movedIdentifiersByIndex") or {}).items():
                        pos = int(pos)
                        if gid not in positions or pos < positions[gid]:
                            positions[gid] = pos
                    members = [(gid, positions.get(gid)) for gid in added]
                    added_set = set(added)
                    moved = [(gid, pos) for gid, pos in sorted(positions.items())
                             if gid not in added_set]
                    payload = (sorted(p.get("removedIdentifiers") or ()), members, moved)
                else:
                    raise ValueError("unknown property kind %r" % (kind,))
                props.append((name, kind, payload))
            props.sort(key=lambda t: t[0])
            writes += len(props)
            changes.append((key, ctype, props))
    return changes, writes


def read_ensemble(ensemble, tags):
    """All complete logical events and baselines, decoded; read errors become warnings."""
    events, baselines = [], []
    skipped = 0
    for folder in ("events", "baselines"):
        for paths in list_groups(ensemble, folder):
            try:
                head, joined = read_logical_event(paths)
                ev = Event()
                ev.path = paths[0]
                ev.uid = head["uniqueIdentifier"]
                ev.type = head["type"]
                ev.store = head["storeIdentifier"]
                ev.revisions = head["revisionsByStoreIdentifier"]
                ev.revision = ev.revisions[ev.store]
                ev.gc = head["globalCount"]
                ev.ts = float(head["timestamp"])
                # Sorted together in the replay order: a store, count or revision of another JSON
                # type (a damaged file) would stop the sort, so the file is skipped here instead.
                if not (isinstance(ev.store, str) and all(isinstance(v, int) and not isinstance(v, bool)
                                                          for v in (ev.gc, ev.revision))):
                    raise TypeError("storeIdentifier, globalCount or its revision of the wrong JSON type")
                ev.raw = (head, joined)
                ev.changes, ev.writes = decode_changes(joined, tags)
            except Fatal:
                raise
            except (ValueError, KeyError, TypeError, AttributeError) as e:
                skipped += 1
                warn("%s: unreadable, skipped (%s: %s)" % (paths[0], type(e).__name__, e))
                continue
            if ev.type == 100:
                baselines.append(ev)
            elif ev.type in (200, 300):
                events.append(ev)
            else:
                skipped += 1
                warn("%s: event of type %r (incomplete), skipped" % (ev.path, ev.type))
    return events, baselines, skipped


def comparable(ev):
    head, joined = ev.raw
    h = dict(head)
    h["changesByEntity"] = joined
    h.pop("timestamp")
    return h, ev.ts


def deduplicate(events):
    by_key = {}
    for ev in sorted(events, key=lambda e: e.path):
        k = (ev.store, ev.revision)
        if k in by_key:
            if comparable(by_key[k]) != comparable(ev):
                warn("store %s revision %d: conflicting events %s and %s; keeping the first"
                     % (ev.store, ev.revision, by_key[k].path, ev.path))
            continue
        by_key[k] = ev
    return list(by_key.values())


def dominates(x, y):
    stores = set(x) | set(y)
    return (all(x.get(s, -1) >= y.get(s, -1) for s in stores)
            and any(x.get(s, -1) > y.get(s, -1) for s in stores))


def choose_baselines(candidates):
    """Spec/merge.md 4.4: the baselines taking part (oldest first) and their merged revision set."""
    kept = [b for b in candidates
            if not any(o is not b and dominates(o.revisions, b.revisions) for o in candidates)]
    groups = {}
    for b in kept:
        groups.setdefault(tuple(sorted(b.revisions.items())), []).append(b)
    chosen = []
    age = lambda b: (b.gc, b.ts, b.uid)
    for group in groups.values():
        group.sort(key=age)
        best = group[-1]
        ties = [b for b in group if age(b) == age(best)]
        if any(comparable(b) != comparable(best) for b in ties):
            warn("baselines %s are tied but differ (merge.conflicting-revision); using %s"
                 % (", ".join(b.path for b in ties), best.path))
        chosen.append(best)
    chosen.sort(key=age)
    merged = {}
    for b in chosen:
        for s, r in b.revisions.items():
            merged[s] = max(merged.get(s, -1), r)
    return chosen, merged


def replay_key(ev):
    """Spec/merge.md section 6 (Python str order is code point order = UTF-8 byte order)."""
    return (ev.gc, ev.ts, ev.store, ev.revision)


# --------------------------------------------------------------------------------------------------
# Comparison with a state document (Spec/merge.md section 9)




def state_from_objects(objects):
    """A merged document's root map (plain Python values: object key -> {property: value}) in
    the state shape of merge.md section 9. A relationship's nested map becomes a list of ids:
    sorted for to-many (member -> true), by position then id for ordered to-many."""
    entities = {}
    for key, props in objects.items():
        entity, gid = key.split("/", 1)
        obj = {}
        for name, value in props.items():
            if isinstance(value, dict):
                if any(v is True for v in value.values()):
                    value = sorted(value)
                else:
                    value = [g for g, _ in sorted(
                        value.items(), key=lambda kv: (kv[1] is None, kv[1] or 0, kv[0]))]
            obj[name] = value
        entities.setdefault(entity, {})[gid] = obj
    return entities


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (a != a and b != b)
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) == type(b) and a == b




def compare(expected_entities, got_entities, who):
    """Counts equal, different, missing and extra objects and properties of got_entities (the
    workload's document, named `who` in the keys and examples) against expected_entities."""
    res = {"objectsExpected": 0, "objects" + who: 0, "objectsMissingIn" + who: 0,
           "objectsExtraIn" + who: 0, "propertiesExpected": 0, "propertiesEqual": 0,
           "propertiesDifferent": 0, "propertiesMissingIn" + who: 0,
           "propertiesExtraIn" + who: 0}
    examples = []
    exp = {(e, g): p for e, objs in expected_entities.items() for g, p in objs.items()}
    got = {(e, g): p for e, objs in got_entities.items() for g, p in objs.items()}
    res["objectsExpected"], res["objects" + who] = len(exp), len(got)
    for k in sorted(set(exp) | set(got)):
        if k not in got:
            res["objectsMissingIn" + who] += 1
            res["propertiesExpected"] += len(exp[k])
            res["propertiesMissingIn" + who] += len(exp[k])
            if len(examples) < 8:
                examples.append("%s/%s: object missing in " % k + who)
            continue
        if k not in exp:
            res["objectsExtraIn" + who] += 1
            if len(examples) < 8:
                examples.append("%s/%s: extra object in " % k + who)
            continue
        e, g = exp[k], got[k]
        res["propertiesExpected"] += len(e)
        for name in sorted(set(e) | set(g)):
            if name not in g:
                res["propertiesMissingIn" + who] += 1
                what = "missing in %s (expected %s)" % (who, json.dumps(e[name]))
            elif name not in e:
                res["propertiesExtraIn" + who] += 1
                what = "extra in %s (%s)" % (who, json.dumps(g[name]))
            elif same(e[name], g[name]):
                res["propertiesEqual"] += 1
                continue
            else:
                res["propertiesDifferent"] += 1
                what = "expected %s, %s %s" % (json.dumps(e[name]), who, json.dumps(g[name]))
            if len(examples) < 8:
                examples.append("%s/%s.%s: %s" % (k[0], k[1], name, what))
    res["agree"] = (res["objectsMissingIn" + who] == res["objectsExtraIn" + who] == 0
                    and res["propertiesDifferent"] == res["propertiesMissingIn" + who]
                    == res["propertiesExtraIn" + who] == 0)
    res["examples"] = examples
    return res


# --------------------------------------------------------------------------------------------------
# The history to replay


class History(object):
    """What load_history read: the ensemble folder, the chosen baselines (oldest first), the
    events to replay by store (each list in the replay order restricted to that store), the
    number of events dropped as covered by the baselines and of files skipped as unreadable."""
    __slots__ = ("ensemble", "baselines", "by_store", "covered", "unreadable")


def load_history(folder, tags, include_covered):
    """Reads one ensemble as logtool merge would replay it (Spec/merge.md 4.4, 4.5, 6)."""
    h = History()
    h.ensemble = find_ensemble(folder)
    events, baseline_candidates, h.unreadable = read_ensemble(h.ensemble, tags)
    events = deduplicate(events)
    h.baselines, merged_revisions = choose_baselines(baseline_candidates)
    h.covered = 0
    if not include_covered:
        kept = []
        for ev in events:
            if ev.store in merged_revisions and ev.revision <= merged_revisions[ev.store]:
                h.covered += 1
            else:
                kept.append(ev)
        events = kept
    h.by_store = {}
    for ev in events:
        h.by_store.setdefault(ev.store, []).append(ev)
    for evs in h.by_store.values():
        evs.sort(key=replay_key)  # the replay order restricted to one store
    return h


def run_workload(program, ap, argv, run):
    """Parses a peer's arguments with the checks both peers make, then runs it; a Fatal ends it
    with its message and exit status 2."""
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if args.compare_state and args.tags != "list":
        ap.error("--compare-state needs --tags list")
    set_program(program)
    try:
        return run(args)
    except Fatal as e:
        print(program + ": " + str(e), file=sys.stderr)
        return 2
