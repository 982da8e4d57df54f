#!/usr/bin/env python3
"""Time to merge one to-many (or ordered to-many) relationship with N members, for growing N,
and the growth factor between sizes: a linear merge grows about 10x for 10x the members.

    swift build -c release --product logtool
    python3 Benchmarks/relationships.py --logtool .build/release/logtool --work /tmp/rel 10000 100000 1000000

Each size is written as loose v2 event files: one event inserts the N children and the parent,
then EVENTS events (default 1, and 100 with --events 100) add the members in equal slices.
"""
import argparse, json, os, subprocess, sys, time

def write(folder, n, ordered, events):
    os.makedirs(folder, exist_ok=True)
    children = [{"globalIdentifier": "c%08d" % i, "type": 100} for i in range(n)]
    files = [{"changesByEntity": {"Child": children, "Parent": [{"globalIdentifier": "p1", "type": 100}]},
              "globalCount": 0, "revisionsByStoreIdentifier": {"A": 0}, "storeIdentifier": "A",
              "timestamp": "0.0", "type": 200, "uniqueIdentifier": "U0"}]
    per = n // events
    for k in range(events):
        change = {"propertyName": "members", "type": 3 if ordered else 2, "removedIdentifiers": [],
                  "addedIdentifiers": ["c%08d" % i for i in range(k * per, (k + 1) * per)]}
        if ordered:
            change["movedIdentifiersByIndex"] = {}
        files.append({"changesByEntity": {"Parent": [{"globalIdentifier": "p1", "type": 200, "properties": [change]}]},
                      "globalCount": k + 1, "revisionsByStoreIdentifier": {"A": k + 1}, "storeIdentifier": "A",
                      "timestamp": "%d.0" % (k + 1), "type": 200, "uniqueIdentifier": "U%d" % (k + 1)})
    paths = []
    for i, document in enumerate(files):
        path = os.path.join(folder, "%d.cdeevent" % i)
        with open(path, "w") as out:
            json.dump(document, out, separators=(",", ":"))
        paths.append(path)
    return paths

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--logtool", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--events", type=int, default=1)
    parser.add_argument("sizes", type=int, nargs="+")
    args = parser.parse_args()
    print("kind     members  events  merge s  growth")
    for ordered in (False, True):
        previous = None
        for n in args.sizes:
            paths = write(os.path.join(args.work, "%s-%d-%d" % ("o" if ordered else "u", n, args.events)), n, ordered, args.events)
            started = time.monotonic()
            result = subprocess.run([args.logtool, "merge"] + paths, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            seconds = time.monotonic() - started
            if result.returncode != 0:
                sys.exit("merge failed: %s" % result.stderr.decode()[:500])
            growth = "" if previous is None else "%.1fx" % (seconds / previous[1] if previous[1] > 0 else 0)
            print("%-8s %8d %7d %8.2f  %s" % ("ordered" if ordered else "to-many", n, args.events, seconds, growth))
            previous = (n, seconds)

if __name__ == "__main__":
    main()
