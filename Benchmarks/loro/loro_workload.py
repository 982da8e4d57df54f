#!/usr/bin/env python3
"""Replay the history of an Ensembles cloud folder as a Loro CRDT workload and time Loro's merge.

Reads every v2 JSON event and baseline of one ensemble folder, turns each store into a Loro peer
(its own LoroDoc) that writes its own events, then times how long a fresh LoroDoc takes to import
all peers' exported updates. Prints one JSON object on stdout and one human line on stderr.

Reading the folder (listing, multipart joining, deduplication, baselines, replay order) is
../history_replay.py, shared with ../pycrdt/pycrdt_workload.py. See README.md next to this file
for the mapping and the fairness caveats.

    python3 loro_workload.py CLOUD_FOLDER [--repeat N] [--compare-state STATE.json] ...

Requires the pip package `loro` (written against 1.17.1: LoroMap.ensure_mergeable_map).
"""

import argparse
import bisect
import gc
import hashlib
import json
import os
import platform
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from history_replay import (run_workload, BASELINE_PEER, BASELINE_PEER_SEED, DELETE, INSERT, ROOT_MAP,  # noqa: E402
                            WARNINGS, Fatal, compare, load_history, replay_key,
                            state_from_objects, warn)

try:
    import loro
    from loro import ID, CounterSpan, ExportMode, IdSpan, LoroDoc, LoroMap
except ImportError:  # pragma: no cover
    sys.exit("loro_workload: the Python package 'loro' is missing: pip install loro")

APPLE_EPOCH_UNIX = 978307200         # 2001-01-01T00:00:00Z in Unix seconds

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
    return run_workload("loro_workload", ap, argv, run)


def run(args):
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of small tuples: the cyclic collector only slows reading down

    t0 = time.perf_counter()
    history = load_history(args.folder, args.tags, args.include_covered)
    ensemble, baselines, by_store = history.ensemble, history.baselines, history.by_store
    covered, unreadable = history.covered, history.unreadable
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
        result["compare"] = compare(expected, state_from_objects(deep.get(ROOT_MAP, {})), "Loro")
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
