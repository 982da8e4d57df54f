#!/usr/bin/env python3
"""Replay the history of an Ensembles cloud folder as a Loro CRDT workload and time Loro's merge.

Reads every v2 JSON event and baseline of one ensemble folder, turns each store into a Loro peer
(its own LoroDoc) that writes its own events, then times how long a fresh LoroDoc takes to import
all peers' exported updates. Prints one JSON object on stdout and one human line on stderr.

See README.md next to this file for the mapping and the fairness caveats.

    python3 loro_workload.py CLOUD_FOLDER [--repeat N] [--compare-state STATE.json] ...

Requires the pip package `loro` (written against 1.17.1: LoroMap.ensure_mergeable_map).
"""

import argparse
import base64
import bisect
import gc
import hashlib
import json
import os
import platform
import re
import resource
import stat
import sys
import time

try:
    import loro
    from loro import ID, CounterSpan, ExportMode, IdSpan, LoroDoc, LoroMap
except ImportError:  # pragma: no cover
    sys.exit("loro_workload: the Python package 'loro' is missing: pip install loro")

# --------------------------------------------------------------------------------------------------
# Constants

INSERT, UPDATE, DELETE = 100, 200, 300
ROOT_MAP = "objects"
BASELINE_PEER = "baseline"           # display name of the pseudo-peer that writes the baselines
BASELINE_PEER_SEED = "_baseline"     # hashed for its peer id; '_' never occurs in a store identifier
APPLE_EPOCH_UNIX = 978307200         # 2001-01-01T00:00:00Z in Unix seconds
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


def warn(message):
    WARNINGS.append(message)
    print("loro_workload: warning: " + message, file=sys.stderr)


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


# --------------------------------------------------------------------------------------------------
# Loro peers


def peer_id_for(seed):
    """Deterministic peer id: the first 8 bytes of SHA-256(UTF-8 seed), cut to 53 bits."""
    return int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest()[:8], "big") >> 11


class Peer(object):
    def __init__(self, name, seed, commit_meta, containers, base=None):
        self.name = name
        self.peer_id = peer_id_for(seed)
        # A store peer that shares the baseline starts as a fork of the baseline peer's document
        # (the same as importing its updates, without decoding them again).
        self.doc = LoroDoc() if base is None else base.fork()
        self.doc.peer_id = self.peer_id
        self.mergeable = containers == "mergeable"
        self.objects = self.doc.get_map(ROOT_MAP)
        self.cache = {}          # object key -> [LoroMap, {property: relationship LoroMap} or None]
        self.commit_meta = commit_meta
        self.events = 0
        self.writes = 0
        self.revs = []           # revisions applied, in application order
        self.ends = []           # exclusive end counter of own ops after each of them
        self.monotonic = True    # revisions were applied in increasing order
        self.known = {}          # other peer -> exclusive end counter of its ops imported here

    def own_end(self):
        last = self.doc.oplog_vv.get_last(self.peer_id)
        return 0 if last is None else last + 1

    def end_through(self, revision):
        """End counter of own ops after the applied events with a revision <= revision."""
        if self.monotonic:
            i = bisect.bisect_right(self.revs, revision)
            return self.ends[i - 1] if i else 0
        end = 0
        for r, e in zip(self.revs, self.ends):
            if r <= revision:
                end = max(end, e)
        return end

    def child_map(self, parent, key):
        if self.mergeable:
            return parent.ensure_mergeable_map(key)
        try:
            return parent.get_or_create_container(key, LoroMap())
        except Exception:  # the key holds a plain value: replace it with a new map
            return parent.insert_container(key, LoroMap())

    def obj(self, key):
        entry = self.cache.get(key)
        if entry is None:
            entry = self.cache[key] = [self.child_map(self.objects, key), None]
        return entry

    def apply(self, ev):
        changes = ev.changes
        # Phase A: inserts make the object's map visible (merge.md 8.2).
        for key, ctype, _ in changes:
            if ctype == INSERT:
                self.obj(key)
        # Phase B: property writes of inserts and updates, in change order (merge.md 8.3).
        for key, ctype, props in changes:
            if ctype == DELETE or not props:
                continue
            entry = self.obj(key)
            m = entry[0]
            for name, kind, payload in props:
                if kind <= 1:
                    m.insert(name, payload)
                    if entry[1] is not None:
                        entry[1].pop(name, None)
                    continue
                rels = entry[1]
                if rels is None:
                    rels = entry[1] = {}
                rm = rels.get(name)
                if rm is None:
                    rm = rels[name] = self.child_map(m, name)
                if kind == 2:
                    added, removed = payload
                    if ctype != INSERT:
                        for gid in removed:
                            rm.delete(gid)
                    for gid in added:
                        rm.insert(gid, True)
                else:
                    removed, members, moved = payload
                    if ctype != INSERT:
                        for gid in removed:
                            rm.delete(gid)
                    for gid, pos in members:
                        rm.insert(gid, pos)
                    # A position for a non-member adds nothing (merge.md 8.3.5); the peer can
                    # only see the members it knows of locally.
                    for gid, pos in moved:
                        if rm.get(gid) is not None:
                            rm.insert(gid, pos)
        # Phase C: deletes remove the object's entry (merge.md 8.4, without detaching).
        for key, ctype, _ in changes:
            if ctype == DELETE:
                self.objects.delete(key)
                self.cache.pop(key, None)
        if self.commit_meta == "none":
            self.doc.commit()
        elif self.commit_meta == "timestamp":
            self.doc.commit_with(timestamp=int(ev.ts) + APPLE_EPOCH_UNIX)
        else:
            self.doc.commit_with(timestamp=int(ev.ts) + APPLE_EPOCH_UNIX, commit_msg=ev.uid)
        self.events += 1
        self.writes += ev.writes
        end = self.own_end()
        if self.revs and ev.revision < self.revs[-1]:
            self.monotonic = False
        self.revs.append(ev.revision)
        self.ends.append(end)

    def export_range(self, start, end):
        span = IdSpan(peer=self.peer_id, counter=CounterSpan(start=start, end=end))
        return self.doc.export(ExportMode.UpdatesInRange(spans=[span]))

    def export(self, mode):
        """This peer's own operations (updates), or its whole document (snapshot)."""
        if mode == "snapshot":
            return self.doc.export(ExportMode.Snapshot())
        if not self.own_end():
            return None
        others = self.doc.oplog_vv   # everything this document holds, except its own operations
        others.set_end(ID(self.peer_id, 0))
        return self.doc.export(ExportMode.Updates(from_=others))


def replay_key(ev):
    """Spec/merge.md section 6 (Python str order is code point order = UTF-8 byte order)."""
    return (ev.gc, ev.ts, ev.store, ev.revision)


# --------------------------------------------------------------------------------------------------
# Comparison with a state document (Spec/merge.md section 9)


def loro_state(deep):
    entities = {}
    for key, props in deep.get(ROOT_MAP, {}).items():
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


def compare(expected_entities, got_entities):
    res = dict(objectsExpected=0, objectsLoro=0, objectsMissingInLoro=0, objectsExtraInLoro=0,
               propertiesExpected=0, propertiesEqual=0, propertiesDifferent=0,
               propertiesMissingInLoro=0, propertiesExtraInLoro=0)
    examples = []
    exp = {(e, g): p for e, objs in expected_entities.items() for g, p in objs.items()}
    got = {(e, g): p for e, objs in got_entities.items() for g, p in objs.items()}
    res["objectsExpected"], res["objectsLoro"] = len(exp), len(got)
    for k in sorted(set(exp) | set(got)):
        if k not in got:
            res["objectsMissingInLoro"] += 1
            res["propertiesExpected"] += len(exp[k])
            res["propertiesMissingInLoro"] += len(exp[k])
            if len(examples) < 8:
                examples.append("%s/%s: object missing in Loro" % k)
            continue
        if k not in exp:
            res["objectsExtraInLoro"] += 1
            if len(examples) < 8:
                examples.append("%s/%s: extra object in Loro" % k)
            continue
        e, g = exp[k], got[k]
        res["propertiesExpected"] += len(e)
        for name in sorted(set(e) | set(g)):
            if name not in g:
                res["propertiesMissingInLoro"] += 1
                what = "missing in Loro (expected %s)" % json.dumps(e[name])
            elif name not in e:
                res["propertiesExtraInLoro"] += 1
                what = "extra in Loro (%s)" % json.dumps(g[name])
            elif same(e[name], g[name]):
                res["propertiesEqual"] += 1
                continue
            else:
                res["propertiesDifferent"] += 1
                what = "expected %s, Loro %s" % (json.dumps(e[name]), json.dumps(g[name]))
            if len(examples) < 8:
                examples.append("%s/%s.%s: %s" % (k[0], k[1], name, what))
    res["agree"] = (res["objectsMissingInLoro"] == res["objectsExtraInLoro"] == 0
                    and res["propertiesDifferent"] == res["propertiesMissingInLoro"]
                    == res["propertiesExtraInLoro"] == 0)
    res["examples"] = examples
    return res


# --------------------------------------------------------------------------------------------------
# Main


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Time Loro merging the history of an Ensembles cloud folder (v2 JSON).")
    ap.add_argument("folder", help="an ensemble folder, or a root holding exactly one ensemble")
    ap.add_argument("--repeat", type=int, default=3, metavar="N",
                    help="time the import N times and report the best (default 3)")
    ap.add_argument("--tags", choices=("list", "scalar"), default="list",
                    help="tagged attribute values: as the JSON list ['date', n] (default), or as "
                         "the bare payload (date -> double, data -> bytes, others -> string)")
    ap.add_argument("--commit-meta", choices=("none", "timestamp", "message"), default="timestamp",
                    help="per-event commit metadata: none, the event timestamp (default), or the "
                         "timestamp plus the event's uniqueIdentifier as commit message")
    ap.add_argument("--baseline", choices=("shared", "isolated"), default="shared",
                    help="shared (default): every store peer starts as a fork of the baseline "
                         "peer's document; isolated: store peers never see the baseline")
    ap.add_argument("--causal", action="store_true",
                    help="before each event, its peer imports the other stores' operations up to "
                         "the revisions named in the event's revision set (default: store peers "
                         "never see each other)")
    ap.add_argument("--containers", choices=("mergeable", "plain"), default="mergeable",
                    help="object and relationship maps: mergeable child containers (default; "
                         "concurrent creations converge) or plain child containers "
                         "(get_or_create_container; concurrent creations fork, one wins)")
    ap.add_argument("--peer-export", choices=("updates", "snapshot"), default="updates",
                    help="what each peer exports for the timed import (default updates)")
    ap.add_argument("--include-covered", action="store_true",
                    help="also replay events covered by the baselines (merge.md 4.5 skips them)")
    ap.add_argument("--compare-state", metavar="STATE.json",
                    help="compare Loro's merged document with a state document of logtool merge")
    ap.add_argument("--no-deep-value", action="store_true",
                    help="do not time get_deep_value() of the merged document")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if args.compare_state and args.tags != "list":
        ap.error("--compare-state needs --tags list")

    try:
        return run(args)
    except Fatal as e:
        print("loro_workload: " + str(e), file=sys.stderr)
        return 2


def run(args):
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of small tuples: the cyclic collector only slows reading down

    t0 = time.perf_counter()
    ensemble = find_ensemble(args.folder)
    events, baseline_candidates, unreadable = read_ensemble(ensemble, args.tags)
    events = deduplicate(events)
    baselines, merged_revisions = choose_baselines(baseline_candidates)
    covered = 0
    if not args.include_covered:
        kept = []
        for ev in events:
            if ev.store in merged_revisions and ev.revision <= merged_revisions[ev.store]:
                covered += 1
            else:
                kept.append(ev)
        events = kept
    by_store = {}
    for ev in events:
        by_store.setdefault(ev.store, []).append(ev)
    for evs in by_store.values():
        evs.sort(key=replay_key)  # the replay order restricted to one store
    t_read = time.perf_counter() - t0

    # Build the peers.
    t0 = time.perf_counter()
    peers = []
    base_peer = None
    if baselines:
        base_peer = Peer(BASELINE_PEER, BASELINE_PEER_SEED, args.commit_meta, args.containers)
        for b in baselines:
            base_peer.apply(b)
        peers.append(base_peer)
    base_doc = None
    if base_peer is not None and args.baseline == "shared":
        base_doc = base_peer.doc
    store_peers = {}
    for store in sorted(by_store):
        p = store_peers[store] = Peer(store, store, args.commit_meta, args.containers, base_doc)
        peers.append(p)
    ids = {}
    for p in peers:
        if p.peer_id in ids:
            raise Fatal("peer id collision between %r and %r" % (ids[p.peer_id], p.name))
        ids[p.peer_id] = p.name
    causal_imports = causal_import_calls = 0
    causal_import_seconds = 0.0
    if not args.causal:
        for store in sorted(by_store):
            p = store_peers[store]
            for ev in by_store[store]:
                p.apply(ev)
    else:
        # Whole history in replay order; before each event its store's peer imports the other
        # stores' operations up to the revisions the event's revision set names.
        for ev in sorted((ev for evs in by_store.values() for ev in evs), key=replay_key):
            p = store_peers[ev.store]
            blobs = []
            for store, revision in ev.revisions.items():
                q = store_peers.get(store)
                if q is None or q is p:
                    continue
                need = q.end_through(revision)
                have = p.known.get(store, 0)
                if need > have:
                    blobs.append(q.export_range(have, need))
                    p.known[store] = need
            if blobs:
                start = time.perf_counter()
                p.doc.import_batch(blobs)
                causal_import_seconds += time.perf_counter() - start
                p.cache.clear()  # handles may now point at maps that a remote delete hid
                causal_imports += len(blobs)
                causal_import_calls += 1
            p.apply(ev)
    t_build = time.perf_counter() - t0

    t0 = time.perf_counter()
    blobs = [p.export(args.peer_export) for p in peers]
    t_export = time.perf_counter() - t0
    per_peer = [dict(store=p.name, peerId=p.peer_id, events=p.events, propertyWrites=p.writes,
                     exportBytes=len(b) if b else 0) for p, b in zip(peers, blobs)]
    blobs = [b for b in blobs if b]
    for p in peers:  # free the peers' documents before timing
        p.cache = None
        p.objects = None
        p.doc = None
    del peers, base_peer
    gc.collect()

    # The timed step: a fresh document imports every peer's export.
    times = []
    merged = None
    for _ in range(args.repeat):
        merged = None
        gc.collect()
        doc = LoroDoc()
        start = time.perf_counter()
        status = doc.import_batch(blobs)
        times.append(time.perf_counter() - start)
        if status.pending is not None:
            warn("import left pending updates: %s" % (status.pending,))
        merged = doc
        doc = None

    snapshot = merged.export(ExportMode.Snapshot())
    result = dict(
        tool="loro_workload",
        loroVersion=loro.LORO_VERSION,
        python=platform.python_version(),
        ensemble=ensemble,
        peers=len(per_peer),
        stores=len(by_store),
        baselinePeer=bool(baselines),
        baselines=len(baselines),
        events=sum(len(v) for v in by_store.values()),
        coveredEventsSkipped=covered,
        unreadableFilesSkipped=unreadable,
        propertyWrites=sum(p["propertyWrites"] for p in per_peer),
        objectChanges=sum(len(ev.changes) for evs in by_store.values() for ev in evs)
        + sum(len(b.changes) for b in baselines),
        loroOps=merged.len_ops,
        loroChanges=merged.len_changes,
        exportBytes=sum(p["exportBytes"] for p in per_peer),
        snapshotBytes=len(snapshot),
        importSeconds=min(times),
        importSecondsAll=times,
        repeat=args.repeat,
        readSeconds=t_read,
        buildSeconds=t_build,
        exportSeconds=t_export,
        options=dict(tags=args.tags, commitMeta=args.commit_meta, baseline=args.baseline,
                     causal=args.causal, containers=args.containers, peerExport=args.peer_export,
                     includeCovered=args.include_covered),
        causalImports=causal_imports,
        causalImportCalls=causal_import_calls,
        causalImportSeconds=causal_import_seconds,
        perPeer=per_peer,
        warnings=len(WARNINGS),
    )
    deep = None
    if not args.no_deep_value or args.compare_state:
        start = time.perf_counter()
        deep = merged.get_deep_value()
        result["deepValueSeconds"] = time.perf_counter() - start
    if args.compare_state:
        with open(args.compare_state, "rb") as f:
            expected = json.loads(f.read())["entities"]
        result["compare"] = compare(expected, loro_state(deep))
    result["maxRssMiB"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)
    if gc_was_enabled:
        gc.enable()

    json.dump(result, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    line = ("loro %s: %d peers, %d property writes (%d events, %d baselines), exports %d bytes, "
            "snapshot %d bytes, import %.4f s (best of %d)"
            % (loro.LORO_VERSION, result["peers"], result["propertyWrites"], result["events"],
               result["baselines"], result["exportBytes"], result["snapshotBytes"],
               result["importSeconds"], args.repeat))
    if "compare" in result:
        c = result["compare"]
        line += "; vs state: %d/%d properties equal%s" % (
            c["propertiesEqual"], c["propertiesExpected"], "" if c["agree"] else " (differs)")
    print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
