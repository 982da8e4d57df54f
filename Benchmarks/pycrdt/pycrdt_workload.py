#!/usr/bin/env python3
"""Replay the history of an Ensembles cloud folder as a Yjs workload (pycrdt) and time its merge.

Reads the folder with ../history_replay.py (the same reading as ../loro/loro_workload.py), turns
each store into a Yjs peer (its own pycrdt Doc with a deterministic client id) that writes only its
own events, then times how long a fresh Doc takes to apply all peers' updates. Prints one JSON
object on stdout and one human line on stderr. See README.md next to this file for the mapping
and the caveats.

    python3 pycrdt_workload.py CLOUD_FOLDER [--repeat N] [--compare-state STATE.json] ...

Requires the pip package `pycrdt` (written against 0.14.13, the Python binding of yrs, the Rust
port of Yjs).
"""

import argparse
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
                            state_from_objects)

try:
    import pycrdt
    from pycrdt import Doc, Map
    from pycrdt._pycrdt import Map as RawMap
except ImportError:  # pragma: no cover
    sys.exit("pycrdt_workload: the Python package 'pycrdt' is missing: pip install pycrdt")


# --------------------------------------------------------------------------------------------------
# Yjs peers


def client_id_for(seed):
    """Deterministic Yjs client id: the first 4 bytes of SHA-256(UTF-8 seed). Yjs itself draws
    32-bit client ids, which every Yjs implementation encodes and compares the same way."""
    return int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest()[:4], "big")


def raw_get(raw_map, txn, key):
    """The value at key of an integrated map, or None (the binding raises for a missing key)."""
    try:
        return raw_map.get(txn, key)
    except ValueError:
        return None


class Peer(object):
    """One store (or the baseline pseudo-peer): a Doc of its own.

    Writes go through the binding's integrated maps (`Map.integrated`, pycrdt's Rust object) inside
    one explicit transaction per event: pycrdt's dict-like `Map.__setitem__` opens (or joins) a
    transaction and checks its argument on every call, which made the build several times slower.
    The documents are the same either way; only the untimed build is faster."""

    def __init__(self, name, seed, base_update=None):
        self.name = name
        self.client_id = client_id_for(seed)
        self.doc = Doc(client_id=self.client_id)
        if base_update is not None:
            # A store peer sharing the baseline starts from the baseline peer's document.
            self.doc.apply_update(base_update)
        self.root = self.doc.get(ROOT_MAP, type=Map).integrated
        self.cache = {}          # object key -> [raw map, {property: raw relationship map} or None]
        self.events = 0
        self.writes = 0
        self.log = []            # --causal: (revision, update of the event) in application order
        self.known = {}          # --causal: other store -> how many of its log entries applied here

    def obj(self, txn, key):
        entry = self.cache.get(key)
        if entry is None:
            m = raw_get(self.root, txn, key)
            if not isinstance(m, RawMap):
                # Not visible here (never inserted, or deleted): a new nested map. Two peers that
                # create one key concurrently make two maps; Yjs keeps one (see README.md).
                m = self.root.insert_map_prelim(txn, key)
            entry = self.cache[key] = [m, None]
        return entry

    def apply(self, ev, record=False):
        changes = ev.changes
        before = self.doc.get_state() if record else None
        with self.doc.transaction() as t:
            txn = t._txn
            # Phase A: inserts make the object's map visible (merge.md 8.2).
            for key, ctype, _ in changes:
                if ctype == INSERT:
                    self.obj(txn, key)
            # Phase B: property writes of inserts and updates, in change order (merge.md 8.3).
            for key, ctype, props in changes:
                if ctype == DELETE or not props:
                    continue
                entry = self.obj(txn, key)
                m = entry[0]
                for name, kind, payload in props:
                    if kind <= 1:
                        m.insert(txn, name, payload)
                        if entry[1] is not None:
                            entry[1].pop(name, None)
                        continue
                    rels = entry[1]
                    if rels is None:
                        rels = entry[1] = {}
                    rm = rels.get(name)
                    if rm is None:
                        rm = raw_get(m, txn, name)
                        if not isinstance(rm, RawMap):
                            rm = m.insert_map_prelim(txn, name)
                        rels[name] = rm
                    if kind == 2:
                        added, removed = payload
                        if ctype != INSERT:
                            for gid in removed:
                                rm.remove(txn, gid)
                        for gid in added:
                            rm.insert(txn, gid, True)
                    else:
                        removed, members, moved = payload
                        if ctype != INSERT:
                            for gid in removed:
                                rm.remove(txn, gid)
                        for gid, pos in members:
                            rm.insert(txn, gid, pos)
                        # A position for a non-member adds nothing (merge.md 8.3.5); the peer can
                        # only see the members it knows of locally.
                        for gid, pos in moved:
                            if rm.has(txn, gid):
                                rm.insert(txn, gid, pos)
            # Phase C: deletes remove the object's entry (merge.md 8.4, without detaching).
            for key, ctype, _ in changes:
                if ctype == DELETE:
                    self.root.remove(txn, key)
                    self.cache.pop(key, None)
        self.events += 1
        self.writes += ev.writes
        if record:
            # Only this event's operations (and the document's delete set, which Yjs updates
            # always carry whole).
            self.log.append((ev.revision, self.doc.get_update(before)))

    def export(self):
        """This peer's own operations (the update from everything else its document holds), or
        None when it wrote nothing."""
        if not self.events:
            return None
        others = decode_state_vector(self.doc.get_state())
        others.pop(self.client_id, None)
        return self.doc.get_update(encode_state_vector(others))


def decode_state_vector(data):
    """A Yjs v1 state vector: varuint count, then (client, clock) pairs of varuints."""
    pos = 0

    def varuint():
        nonlocal pos
        value = shift = 0
        while True:
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value
    return dict(tuple(varuint() for _ in range(2)) for _ in range(varuint()))


def encode_state_vector(clocks):
    out = bytearray()

    def varuint(value):
        while value >= 0x80:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)
    varuint(len(clocks))
    for client, clock in clocks.items():
        varuint(client)
        varuint(clock)
    return bytes(out)


def integral_floats_as_ints(value):
    """Yjs (pycrdt) stores a Python int of at most 53 bits as a double, so an integer attribute
    reads back as a float. Used on both sides of --compare-state, so 3 and 3.0 compare equal."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2 ** 53:
        return int(value)
    if isinstance(value, list):
        return [integral_floats_as_ints(v) for v in value]
    if isinstance(value, dict):
        return {k: integral_floats_as_ints(v) for k, v in value.items()}
    return value


# --------------------------------------------------------------------------------------------------
# Main


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Time Yjs (pycrdt) merging the history of an Ensembles cloud folder (v2 JSON).")
    ap.add_argument("folder", help="an ensemble folder, or a root holding exactly one ensemble")
    ap.add_argument("--repeat", type=int, default=3, metavar="N",
                    help="time the merge N times and report the best (default 3)")
    ap.add_argument("--tags", choices=("list", "scalar"), default="list",
                    help="tagged attribute values: as the JSON list ['date', n] (default), or as "
                         "the bare payload (date -> double, data -> bytes, others -> string)")
    ap.add_argument("--baseline", choices=("shared", "isolated"), default="shared",
                    help="shared (default): every store peer starts from the baseline peer's "
                         "document; isolated: store peers never see the baseline")
    ap.add_argument("--causal", action="store_true",
                    help="before each event, its peer applies the other stores' updates of the "
                         "events up to the revisions named in the event's revision set (default: "
                         "store peers never see each other)")
    ap.add_argument("--apply", choices=("each", "merged"), default="each",
                    help="the timed step: apply_update of each peer's update in turn (default), or "
                         "merge_updates of all of them and one apply_update of the result")
    ap.add_argument("--include-covered", action="store_true",
                    help="also replay events covered by the baselines (merge.md 4.5 skips them)")
    ap.add_argument("--compare-state", metavar="STATE.json",
                    help="compare the merged document with a state document of logtool merge")
    ap.add_argument("--no-deep-value", action="store_true",
                    help="do not time to_py() of the merged document")
    return run_workload("pycrdt_workload", ap, argv, run)


def run(args):
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of small tuples: the cyclic collector only slows reading down

    t0 = time.perf_counter()
    history = load_history(args.folder, args.tags, args.include_covered)
    baselines, by_store = history.baselines, history.by_store
    t_read = time.perf_counter() - t0

    # Build the peers.
    t0 = time.perf_counter()
    peers = []
    base_update = None
    if baselines:
        base_peer = Peer(BASELINE_PEER, BASELINE_PEER_SEED)
        for b in baselines:
            base_peer.apply(b)
        peers.append(base_peer)
        if args.baseline == "shared":
            base_update = base_peer.doc.get_update()
    store_peers = {}
    for store in sorted(by_store):
        p = store_peers[store] = Peer(store, store, base_update)
        peers.append(p)
    ids = {}
    for p in peers:
        if p.client_id in ids:
            raise Fatal("client id collision between %r and %r" % (ids[p.client_id], p.name))
        ids[p.client_id] = p.name
    causal_imports = causal_import_calls = 0
    causal_import_seconds = 0.0
    if not args.causal:
        for store in sorted(by_store):
            p = store_peers[store]
            for ev in by_store[store]:
                p.apply(ev)
    else:
        # Whole history in replay order; before each event its store's peer applies the other
        # stores' events (as replayed so far) up to the revisions the event's revision set names.
        # A store's log is in its replay order; its revisions are taken to increase along it.
        for ev in sorted((ev for evs in by_store.values() for ev in evs), key=replay_key):
            p = store_peers[ev.store]
            blobs = []
            for store, revision in ev.revisions.items():
                q = store_peers.get(store)
                if q is None or q is p:
                    continue
                have = p.known.get(store, 0)
                need = have
                while need < len(q.log) and q.log[need][0] <= revision:
                    need += 1
                blobs.extend(blob for _, blob in q.log[have:need])
                p.known[store] = need
            if blobs:
                start = time.perf_counter()
                for blob in blobs:
                    p.doc.apply_update(blob)
                causal_import_seconds += time.perf_counter() - start
                p.cache.clear()  # handles may now point at maps a remote write replaced or hid
                causal_imports += len(blobs)
                causal_import_calls += 1
            p.apply(ev, record=True)
    t_build = time.perf_counter() - t0

    t0 = time.perf_counter()
    blobs = [p.export() for p in peers]
    t_export = time.perf_counter() - t0
    per_peer = [dict(store=p.name, clientId=p.client_id, events=p.events, propertyWrites=p.writes,
                     exportBytes=len(b) if b else 0) for p, b in zip(peers, blobs)]
    blobs = [b for b in blobs if b]
    for p in peers:  # free the peers' documents before timing
        p.cache = None
        p.log = None
        p.root = None
        p.doc = None
    del peers
    gc.collect()

    # The timed step: a fresh document applies every peer's update (the baseline's first).
    times, cpu_times = [], []
    merged = None
    for _ in range(args.repeat):
        merged = None
        gc.collect()
        doc = Doc()
        start, start_cpu = time.perf_counter(), time.process_time()
        if args.apply == "each":
            for blob in blobs:
                doc.apply_update(blob)
        else:
            doc.apply_update(pycrdt.merge_updates(*blobs))
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - start_cpu)
        merged = doc
        doc = None

    encoded = merged.get_update()
    clocks = decode_state_vector(merged.get_state())
    result = dict(
        tool="pycrdt_workload",
        pycrdtVersion=pycrdt.__version__,
        python=platform.python_version(),
        ensemble=history.ensemble,
        peers=len(per_peer),
        stores=len(by_store),
        baselinePeer=bool(baselines),
        baselines=len(baselines),
        events=sum(len(v) for v in by_store.values()),
        coveredEventsSkipped=history.covered,
        unreadableFilesSkipped=history.unreadable,
        propertyWrites=sum(p["propertyWrites"] for p in per_peer),
        objectChanges=sum(len(ev.changes) for evs in by_store.values() for ev in evs)
        + sum(len(b.changes) for b in baselines),
        yjsClients=len(clocks),
        yjsItems=sum(clocks.values()),
        exportBytes=sum(p["exportBytes"] for p in per_peer),
        snapshotBytes=len(encoded),
        importSeconds=min(times),
        importSecondsAll=times,
        importCpuSeconds=min(cpu_times),
        repeat=args.repeat,
        readSeconds=t_read,
        buildSeconds=t_build,
        exportSeconds=t_export,
        options=dict(tags=args.tags, baseline=args.baseline, causal=args.causal, apply=args.apply,
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
        deep = merged.get(ROOT_MAP, type=Map).to_py() or {}
        result["deepValueSeconds"] = time.perf_counter() - start
    if args.compare_state:
        with open(args.compare_state, "rb") as f:
            expected = json.loads(f.read())["entities"]
        result["compare"] = compare(integral_floats_as_ints(expected),
                                    integral_floats_as_ints(state_from_objects(deep)), "Yjs")
    result["maxRssMiB"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)
    if gc_was_enabled:
        gc.enable()

    json.dump(result, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    line = ("pycrdt %s: %d peers, %d property writes (%d events, %d baselines), updates %d bytes, "
            "merged document %d bytes, apply %.4f s (best of %d)"
            % (pycrdt.__version__, result["peers"], result["propertyWrites"], result["events"],
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
