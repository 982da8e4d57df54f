#!/usr/bin/env python3
"""Differential test of device mode (Spec/merge.md 15): scripts/device-mode-check.py, written from
the Spec alone, against `logtool merge --as-store STORE --json`, on random damaged histories.

Usage: device-mode-differential.py LOGTOOL [FIRST_SEED COUNT]   (default: seeds 1..300)

Each seed draws one ensemble folder with Python's seeded generator: two or three stores writing
events that name what they have seen of the others, one or more baselines, data files, type 0
events and multipart events; then damage: events, parts, data files and registrations deleted,
iCloud placeholders and partial files left for some of them, files moved into a duplicate folder
`E 2`. The folder stays inside the checker's subset (v2 JSON, attribute changes, no read errors,
no conflicting revisions). For every seed, one of its stores (drawn by the seed) as STORE, both are run and must agree:
the exit status, the document without its `message` members (the checker writes none), and
standard error, which with `--json` holds nothing but warnings (15.6). Prints a summary line;
exits 1 with the first differences otherwise. The seed list is fixed, so a run is reproducible:
a failing seed is rerun alone with `device-mode-differential.py LOGTOOL SEED 1 --keep`.
"""
import concurrent.futures
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("checker", os.path.join(HERE, "device-mode-check.py"))
checker = importlib.util.module_from_spec(spec)
spec.loader.exec_module(checker)

REGISTRATION = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>leechDate</key>
	<date>2024-05-01T10:00:00Z</date>
	<key>storeIdentifier</key>
	<string>%s</string>
</dict>
</plist>
"""


def canon(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)


def draw(rng, root):
    """Writes one damaged ensemble folder at root/cloud/E (and maybe root/cloud/E 2)."""
    stores = ["STORE-AA", "STORE-BB", "STORE-CC"][: rng.choice((2, 3, 3))]
    ens = os.path.join(root, "cloud", "E")
    files = {}  # path relative to E -> text
    latest = {s: 0 for s in stores}  # every store starts at revision 0, named by the first baseline
    known = {s: {t: 0 for t in stores} for s in stores}
    gc, data_names = 1, []
    objects = ["o%d" % i for i in range(1, 7)]

    def changes(allow_files=True):
        out = {}
        for oid in rng.sample(objects, rng.randint(1, 3)):
            kind = rng.choice((100, 100, 200, 300))
            entity = rng.choice(("Item", "Item", "Tag"))
            oc = {"globalIdentifier": oid, "type": kind}
            if kind != 300:
                props = [{"propertyName": "title", "type": 0, "value": rng.choice(("a", "b", "c", None, "d%d" % rng.randint(0, 9)))}]
                if allow_files and rng.random() < 0.25:
                    name = "F%d" % rng.randint(1, 6)
                    data_names.append(name)
                    props.append({"propertyName": "photo", "type": 0, "filename": name})
                oc["properties"] = props
            out.setdefault(entity, []).append(oc)
        return out

    def baseline(store, revs, uid):
        nonlocal gc
        body = {"changesByEntity": {"Item": [{"globalIdentifier": o, "properties": [{"propertyName": "title", "type": 0, "value": "base-" + o}], "type": 100}
                                             for o in rng.sample(objects, 2)]},
                "globalCount": gc, "revisionsByStoreIdentifier": revs, "storeIdentifier": store, "timestamp": "%d.0" % gc,
                "type": 100, "uniqueIdentifier": uid}
        if rng.random() < 0.2:
            name = "F%d" % rng.randint(1, 6)
            data_names.append(name)
            body["changesByEntity"]["Item"][0]["properties"].append({"propertyName": "photo", "type": 0, "filename": name})
        files["baselines/%d_%s_%s.cdeevent" % (gc, uid, store[:8])] = canon(body)
        gc += 1

    baseline(rng.choice(stores), {s: 0 for s in stores}, "BASE0")
    for _ in range(rng.randint(4, 12)):
        s = rng.choice(stores)
        for t in stores:  # what s has seen of the others, never less than before
            if t != s and rng.random() < 0.5:
                known[s][t] = rng.randint(known[s][t], latest[t])
        if rng.random() < 0.08:
            baseline(s, dict(known[s]), "BASE%d" % gc)
            continue
        latest[s] += 1
        known[s][s] = latest[s]
        revs = {t: r for t, r in known[s].items() if t == s or rng.random() < 0.8}
        body = {"changesByEntity": changes(), "globalCount": gc, "revisionsByStoreIdentifier": revs, "storeIdentifier": s,
                "timestamp": "%d.0" % gc, "type": 0 if rng.random() < 0.06 else 200, "uniqueIdentifier": "%s-%d" % (s, gc)}
        stem = "events/%d_%s_%d" % (gc, s, latest[s])
        parts = [body["changesByEntity"]]
        if rng.random() < 0.2 and sum(len(v) for v in parts[0].values()) >= 2:  # a multipart event
            items = [(e, oc) for e, arr in sorted(parts[0].items()) for oc in arr]
            cut = rng.randint(1, len(items) - 1)
            parts = [{}, {}]
            for i, (e, oc) in enumerate(items):
                parts[0 if i < cut else 1].setdefault(e, []).append(oc)
            files["%s_1of2.cdeevent" % stem] = canon(dict(body, changesByEntity=parts[0]))
            files["%s_2of2.cdeevent" % stem] = canon({"changesByEntity": parts[1]})
        else:
            files[stem + ".cdeevent"] = canon(body)
        gc += 1
    for s in stores:
        files["stores/" + s] = REGISTRATION % s
    for name in sorted(set(data_names)):
        files["data/" + name] = "data %s\n" % name

    # Damage: delete some files, leaving an iCloud placeholder or a partial file for some of them.
    placeholders = {}
    for path in sorted(files):
        p = {"events": 0.12, "baselines": 0.08, "data": 0.3, "stores": 0.12}[path.split("/")[0]]
        if rng.random() < p:
            del files[path]
            folder, name = path.split("/")
            left = rng.random()
            if left < 0.3:
                placeholders["%s/.%s.icloud" % (folder, name)] = "placeholder"
            elif left < 0.4 and folder != "stores":
                placeholders["%s/%s.partial" % (folder, name)] = "half"
    copy = {}
    if rng.random() < 0.3:  # a duplicate folder holding files the ensemble lacks
        for path in sorted(files):
            if not path.startswith("stores/") and rng.random() < 0.15:
                copy[path] = files.pop(path)
        for path in sorted(placeholders):
            if rng.random() < 0.5:
                copy[path] = placeholders.pop(path)
    for path, text in list(files.items()) + list(placeholders.items()):
        write(os.path.join(ens, path), text)
    for sub in ("stores", "events", "baselines", "data"):
        os.makedirs(os.path.join(ens, sub), exist_ok=True)
    for path, text in copy.items():
        write(os.path.join(root, "cloud", "E 2", path), text)
    return stores


def compare(logtool, root, store):
    command = ["merge", "--as-store", store, "--json", "cloud/E"]
    run = subprocess.run([logtool] + command, cwd=root, capture_output=True)
    try:
        report, state, status = checker.device(root, command)
    except checker.Unsupported as exc:
        return ["outside the checker's subset: %s" % exc], "unsupported"
    held = bool(report["heldBack"] or report["heldBackBaselines"])
    outcome = report["outcome"] + (" with held-back" if held and report["outcome"] == "integrates" else "")
    expected = checker.strip_messages({"device": report, "state": state})
    diffs = []
    if run.returncode != status:
        diffs.append("exit status: tool %d, checker %d" % (run.returncode, status))
    try:
        got = checker.strip_messages(json.loads(run.stdout))
        diffs += checker.diff(got, expected)
    except ValueError:
        diffs.append("standard output is not JSON: %r" % run.stdout[:300])
    other = [l for l in run.stderr.decode("utf-8", "replace").splitlines() if not l.startswith("warning: ")]
    diffs += ["standard error holds more than warnings: %s" % l for l in other[:3]]
    return diffs, outcome


def main():
    args = [a for a in sys.argv[1:] if a != "--keep"]
    if len(args) not in (1, 3):
        sys.exit(__doc__)
    logtool = os.path.abspath(args[0])
    first, count = (int(args[1]), int(args[2])) if len(args) == 3 else (1, 300)

    def one(seed):
        root = tempfile.mkdtemp(prefix="device-diff-%d-" % seed)
        try:
            rng = random.Random(seed)
            store = rng.choice(draw(rng, root))  # one device per seed keeps CI under a minute
            diffs, outcome = compare(logtool, root, store)
            return seed, store, diffs, outcome
        finally:
            if "--keep" in sys.argv:
                print("kept", root)
            else:
                shutil.rmtree(root)

    failures, runs, outcomes = [], 0, {}
    # The seeds run on every core; each draw depends on its seed alone, so the result does not.
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for seed, store, diffs, outcome in pool.map(one, range(first, first + count)):
            runs += 1
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            if diffs:
                failures.append((seed, store, diffs))
    for seed, store, diffs in failures[:5]:
        print("DIFF seed %d, --as-store %s" % (seed, store) + "".join("\n    " + d for d in diffs[:8]))
    shown = ", ".join("%s %d" % item for item in sorted(outcomes.items()))
    print("device-mode differential: %d seeds (%d..%d), %d runs (%s), %d disagree" % (count, first, first + count - 1, runs, shown, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
