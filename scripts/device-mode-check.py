#!/usr/bin/env python3
"""Independent cross-check of the `device-*` merge fixtures (Spec/merge.md section 15, device mode).

Written from the Spec alone (merge.md 4-9 and 15, cloud-layout.md, diagnostics.md 2.4,
v2-json.md), without reading the toolkit's Swift sources and without running the tool. For each
Fixtures/merge/device-* case it reads the case's ensemble folder, applies merge.md 15.4 step by
step for the STORE after `--as-store`, builds `{"device": REPORT, "state": STATE}` and the exit
status (15.6), and compares them with expected/device.json (members named `message` ignored) and
case.json's exitCode. Prints `OK name` or `DIFF name` plus differences; exits 0 only if all agree.

Supported subset (anything else raises Unsupported and the case is reported as DIFF):
- command `merge --as-store STORE --json INPUT` with one ensemble-folder INPUT (no --model, so the
  204 check never runs and informativeCodes is always []; no --out/--sqlite); its copies `E 2` ...
  `E 9` are folded in (cloud-layout.md 3.1), their entries named through `..`;
- v2 JSON files only (no v1, no binary); no read errors, no v2.duplicate-part groups, no
  merge.conflicting-revision (those stop device mode as a merge stops: not modelled);
- replay of attribute changes (kind 0) only: inserts/updates setting strings, null, booleans,
  integers or data-file references (`filename`), and deletes of objects. Relationship kinds 1-3,
  doubles and tagged values are refused (they need 8.3.3-8.8 / canonical number forms).
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "Fixtures", "merge")
PARTIAL_SUFFIXES = (".tmp", ".partial", ".part", ".download", ".crdownload", "~")


class Unsupported(Exception):
    pass


def key8(s):  # string order = unsigned UTF-8 bytes (README section 4)
    return s.encode("utf-8", "surrogateescape")


def is_int64_text(t):
    return t.isdigit() and t.isascii() and (t == "0" or t[0] != "0") and int(t) <= 2**63 - 1


def is_name(t):  # name-char: anything but NUL, "/", "\" and "_"
    return t != "" and not any(c in t for c in "\0/\\_")


def part_suffix(field):  # "<i>of<n>" -> (i, n) or None (cloud-layout 4.1)
    i, sep, n = field.partition("of")
    ok = sep and i[:1] in "123456789" and n[:1] in "123456789" and i.isdigit() and n.isdigit()
    return (int(i), int(n)) if ok and i.isascii() and 1 <= int(i) <= int(n) <= 10000 else None


def parse_name(folder, name):
    """cloud-layout 4.3 (the folder decides): (base name, part, (store, revision) or None) or None."""
    f = name[: -len(".cdeevent")].split("_") if name.endswith(".cdeevent") else []
    part = part_suffix(f[-1]) if len(f) > 2 else None
    if folder == "events":
        ok = len(f) in (3, 4) and is_int64_text(f[0]) and is_name(f[1]) and is_int64_text(f[2])
        return ("_".join(f[:3]), part if len(f) == 4 else None, (f[1], int(f[2]))) \
            if ok and (len(f) == 3 or part) else None
    if len(f) < 2 or len(f) > 4 or not is_int64_text(f[0]) or not all(is_name(x) for x in f[1:]):
        return None
    prefix8 = len(f) > 2 and len(f[2].encode("utf-16-le")) == 16  # 8 UTF-16 code units
    if len(f) == 2 or (len(f) == 3 and prefix8):
        return ("_".join(f), None, None)
    return ("_".join(f[:-1]), part, None) if part and (len(f) == 3 or prefix8) else None


def arriving_name(path, name):
    """diagnostics.md 2.4: the NAME that a placeholder or partial file stands for, else None."""
    if name.startswith(".") and name.endswith(".icloud") and len(name) > len("..icloud"):
        return name[1 : -len(".icloud")]
    suffix = next((x for x in PARTIAL_SUFFIXES if name.endswith(x) and name != x), None)
    if name.startswith(".~") or suffix:
        return name[2:] if name.startswith(".~") else name[: -len(suffix)]
    return name if name.endswith(".cdeevent") and os.path.getsize(path) == 0 else None


def is_debris(path, name):  # cloud-layout 7, rules 1-6 (rule 0 cannot occur with str names)
    return (os.path.islink(path) or (name.startswith(".") and name.endswith(".icloud"))
            or name in (".DS_Store", "Thumbs.db", "desktop.ini", "Icon\r") or name.startswith("._")
            or arriving_name(path, name) is not None or ("(" in name and ")" in name[name.index("("):])
            or not os.path.isfile(path))


def copies(case_dir, inp):
    """cloud-layout 3.1 rule 1, for an ensemble folder given directly: the folder, then E 2 ... E 9."""
    root = os.path.join(case_dir, inp).rstrip("/")
    parent, base = os.path.split(root)
    shown = inp.rstrip("/")
    found = [(root, shown + "/")]
    for k in range(2, 10):
        copy = os.path.join(parent, "%s %d" % (base, k))
        if os.path.isdir(copy) and not os.path.islink(copy):
            found.append((copy, "%s/../%s %d/" % (shown, base, k)))
    return found


def read_folder(case_dir, inp):
    """Reads INPUT (an ensemble folder and its copies, folded as cloud-layout 3.1 says): stores,
    data names, logical events, pending sets, arrivals."""
    f = {"stores": set(), "data": set(), "arriving": set(), "logical": [], "pending": [], "sets": []}
    for sub in ("stores", "data", "events", "baselines"):
        taken = {}  # rule 2: an entry p is read from the first of the folder and its copies that has it
        for root, prefix in copies(case_dir, inp):
            d = os.path.join(root, sub)
            for name in (os.listdir(d) if os.path.isdir(d) else []):
                taken.setdefault(name, (os.path.join(d, name), prefix + sub + "/" + name))
        groups = {}
        for name in sorted(taken, key=key8):
            path, shown = taken[name]
            if arriving_name(path, name) is not None and not os.path.islink(path):
                f["arriving"].add((sub, arriving_name(path, name)))
            if is_debris(path, name):
                continue
            if sub in ("stores", "data"):
                if sub == "data" or is_name(name):
                    f[sub].add(name)
                continue
            parsed = parse_name(sub, name)
            if parsed:
                groups.setdefault(parsed[0], []).append((parsed[1], shown, path, parsed[2], name))
        for members in groups.values():
            counts = {p[1] if p else None for p, _, _, _, _ in members}
            if len(counts) != 1 or (None in counts and len(members) > 1):
                raise Unsupported("v2.duplicate-part group: %s" % [m[1] for m in members])
            members.sort(key=lambda m: m[0][0] if m[0] else 1)
            n = counts.pop()
            if n is not None and [m[0][0] for m in members] != list(range(1, n + 1)):
                f["pending"].append(sorted((m[1] for m in members), key=key8))
                if members[0][3]:  # an incomplete set of events/: its missing parts' names
                    have = {m[0][0] for m in members}
                    stem = members[0][4].rsplit("_", 1)[0]
                    f["sets"].append((members[0][3], ["%s_%dof%d.cdeevent" % (stem, i, n)
                                                      for i in range(1, n + 1) if i not in have]))
                continue
            try:
                docs = [json.load(open(m[2], encoding="utf-8")) for m in members]
            except ValueError as exc:  # a read error stops device mode as it stops a merge (3.5)
                raise Unsupported("read error in %s: %s" % (members[0][1], exc))
            if not all(isinstance(d, dict) for d in docs) or "revisionsByStoreIdentifier" not in docs[0]:
                raise Unsupported("not a v2 JSON event: %s" % members[0][1])
            ev = dict(docs[0], file=members[0][1], files=[m[1] for m in members])
            changes = {}
            for doc in docs:  # v2-json 8.2: per entity, concatenate the arrays in part order
                for entity, arr in (doc.get("changesByEntity") or {}).items():
                    changes.setdefault(entity, []).extend(arr)
            ev["changesByEntity"] = changes
            f["logical"].append(ev)
    # diagnostics.md 2.4, last row: an incomplete set stands for its revision while it is itself
    # pending: a missing part is arriving, or its store has no complete event of a higher revision
    # (a type 0 event is not complete).
    highest = {}
    for ev in f["logical"]:
        if ev.get("type") in (200, 300) and ev["storeIdentifier"] in ev["revisionsByStoreIdentifier"]:
            s = ev["storeIdentifier"]
            highest[s] = max(highest.get(s, -1), rev(ev))
    f["parts"] = {(s, r) for (s, r), missing in f["sets"]
                  if any(("events", m) in f["arriving"] for m in missing) or highest.get(s, -1) <= r}
    return f


def finding(code, number, files, details):
    return {"code": code, "details": details, "files": files, "message": "", "number": number}


def rev(ev):  # the event's own revision (v2-json 5.1)
    return ev["revisionsByStoreIdentifier"][ev["storeIdentifier"]]


def entry(ev, reasons):  # one element of heldBack / heldBackBaselines (15.6)
    return {"file": ev["file"], "store": ev["storeIdentifier"], "revision": rev(ev), "reasons": reasons}


def basic(f, ev):  # 15.3: 210 (with a folder); 204 only with --model, which the subset excludes
    return [finding("merge.missing-data-file", 210, [ev["file"]],
                    {"dataFile": n, "delivery": "pending" if ("data", n) in f["arriving"] else "missing"})
            for n in data_refs(ev) if n not in f["data"]]


def revision_delivery(f, store, first, last):  # diagnostics.md 2.4, for 200 and 201
    names = [parse_name("events", n) for sub, n in f["arriving"] if sub == "events"]
    hits = {p[2] for p in names if p} | f["parts"]
    return "pending" if any(t == store and first <= r <= last for t, r in hits) else "missing"


def data_refs(ev):  # 5.6: dataFiles of object changes and filename of property changes
    names = set()
    for arr in ev["changesByEntity"].values():
        for oc in arr:
            names.update(oc.get("dataFiles", []))
            names.update(pc["filename"] for pc in oc.get("properties", []) if "filename" in pc)
    return sorted(names, key=key8)


def logical_key(ev):  # 4.2 equality, approximated by the decoded JSON (ignoring the file name)
    return json.dumps({k: v for k, v in ev.items() if k not in ("file", "files")}, sort_keys=True)


def choose_baselines(cands):
    """4.4 steps 2-4: drop dominated candidates, keep the greatest of equal sets, oldest first."""
    rs, key = (lambda b: b["revisionsByStoreIdentifier"]), \
        (lambda b: (b["globalCount"], float(b["timestamp"]), key8(b["uniqueIdentifier"])))

    def dominates(x, y):  # 4.3; a store a set does not name counts as -1
        stores = set(x) | set(y)
        return all(x.get(s, -1) >= y.get(s, -1) for s in stores) and x != y
    groups = {}  # revision sets are equal exactly when the dicts are (revisions are >= 0)
    for b in cands:
        if not any(dominates(rs(o), rs(b)) for o in cands):
            groups.setdefault(json.dumps(sorted(rs(b).items())), []).append(b)
    kept = []
    for same in groups.values():
        ties = [b for b in same if key(b) == max(map(key, same))]
        if len({logical_key(b) for b in ties}) > 1:
            raise Unsupported("merge.conflicting-revision between baselines")
        kept.append(min(ties, key=lambda b: key8(b["file"])))
    return sorted(kept, key=lambda b: (key(b), sorted((key8(s), r) for s, r in rs(b).items())))


def apply(state, ev):
    """Phases A, B, C (8.2-8.4) for the supported subset: attribute changes and deletes."""
    changes = [(e, oc) for e in sorted(ev["changesByEntity"], key=key8) for oc in ev["changesByEntity"][e]]
    for e, oc in changes:  # phase A
        if oc["type"] not in (100, 200, 300):
            raise Unsupported("object change type %r" % oc["type"])
        if oc["type"] == 100:
            state.setdefault(e, {}).setdefault(oc["globalIdentifier"], {})
    for e, oc in changes:  # phase B
        obj = state.get(e, {}).get(oc["globalIdentifier"])
        if oc["type"] == 300 or obj is None:
            continue  # 8.3.1: an update of an object that is not live is ignored
        for pc in sorted(oc.get("properties", []), key=lambda p: key8(p.get("propertyName", p.get("name")))):
            value = pc.get("value")
            if pc["type"] != 0 or not (value is None or isinstance(value, (str, bool, int))):
                raise Unsupported("property change outside the subset: %r" % pc)
            obj[pc.get("propertyName", pc.get("name"))] = ["dataFile", pc["filename"]] if "filename" in pc else value
    for e, oc in changes:  # phase C (no relationships in the subset, so nothing to detach)
        if oc["type"] == 300:
            state.get(e, {}).pop(oc["globalIdentifier"], None)


def device(case_dir, command):
    """merge.md 15.4 steps 1-4 and the stops; returns (REPORT, STATE or None, exit status)."""
    if len(command) != 5 or command[:2] != ["merge", "--as-store"] or command[3] != "--json":
        raise Unsupported("command outside the subset: %r" % command)
    store, f = command[2], read_folder(case_dir, command[4])
    if any(ev.get("type") not in (0, 100, 200, 300) for ev in f["logical"]):
        raise Unsupported("an event type outside 0, 100, 200, 300")
    # step 1; a type 0 event is named by its file as 5.9 names it (part 1 of a multipart one, 15.6)
    pending = f["pending"] + [[ev["file"]] for ev in f["logical"] if ev["type"] == 0]
    report = {"store": store, "outcome": "integrates", "stop": None, "baselines": [], "heldBackBaselines": [],
              "integrated": 0, "covered": 0, "heldBack": [], "informativeCodes": [],
              "pending": sorted(pending, key=lambda fs: [key8(x) for x in fs])}
    if store not in f["stores"]:  # step 2: the device leaves the ensemble
        delivery = "pending" if ("stores", store) in f["arriving"] else "missing"
        report.update(outcome="deleeches", stop=finding("merge.unregistered-store", 205, [],
                                                        {"store": store, "delivery": delivery}))
        return report, None, 1
    ok = []  # step 3: baselines of other stores that fail a basic check are held back
    for b in sorted((e for e in f["logical"] if e["type"] == 100), key=lambda e: key8(e["file"])):
        if basic(f, b) and b["storeIdentifier"] != store:
            report["heldBackBaselines"].append(entry(b, basic(f, b)))
        else:
            ok.append(b)
    chosen = choose_baselines(ok)
    report["baselines"] = [b["file"] for b in chosen]
    B = {}  # 4.4 step 5: the store-wise maximum
    for b in chosen:
        for s, r in b["revisionsByStoreIdentifier"].items():
            B[s] = max(B.get(s, -1), r)
    by_rev = {}  # step 4: one event per (store, revision), named by its first file
    for ev in sorted((e for e in f["logical"] if e["type"] in (200, 300)), key=lambda e: key8(e["file"])):
        by_rev.setdefault((ev["storeIdentifier"], rev(ev)), []).append(ev)
    if any(len({logical_key(e) for e in evs}) > 1 for evs in by_rev.values()):
        raise Unsupported("merge.conflicting-revision")
    events = sorted((evs[0] for evs in by_rev.values()), key=lambda e: key8(e["file"]))
    bad = sorted((b["file"] for b in chosen if basic(f, b)), key=key8)  # X3: every failing one, in string order
    if not chosen or bad:  # step 3's stops: every event is held back with the stop's code
        stop = finding("device.baseline-not-integrable", None, bad, {}) if bad else \
            finding("device.no-baseline", None, [], {})
        report.update(outcome="integrates-nothing", stop=stop,
                      heldBack=[entry(e, [finding(stop["code"], None, [e["file"]], {})]) for e in events])
        return report, None, 1
    held, covered = hold_back(f, B, by_rev, events)
    report["heldBack"] = [entry(e, held[e["file"]]) for e in events if e["file"] in held]
    integrated = [e for e in events if e["file"] not in held and e["file"] not in covered]
    report.update(covered=len(covered), integrated=len(integrated))
    state = {}  # step 8: baselines oldest first, then the events in replay order (section 6)
    for ev in chosen + sorted(integrated, key=lambda e: (e["globalCount"], float(e["timestamp"]),
                                                        key8(e["storeIdentifier"]), rev(e))):
        apply(state, ev)
    clean = not report["heldBack"] and not report["heldBackBaselines"]  # 15.6
    return report, {"entities": {e: objs for e, objs in state.items() if objs}}, 0 if clean else 1


def hold_back(f, B, by_rev, events):
    """Steps 5-7: returns ({file: reasons} of the held-back events, set of covered files)."""
    held, covered, present = {}, set(), {}
    for s, r in by_rev:
        present.setdefault(s, set()).add(r)
    for e in events:  # step 5: covered, then the basic checks
        s = e["storeIdentifier"]
        if s in B and rev(e) <= B[s]:
            covered.add(e["file"])
        elif basic(f, e):
            held[e["file"]] = basic(f, e)
    active = [e for e in events if e["file"] not in held and e["file"] not in covered]
    for e in active:  # step 6: continuity
        s = e["storeIdentifier"]
        if s not in B:
            held[e["file"]] = [finding("device.not-in-baseline", None, [e["file"]], {"store": s})]
            continue
        g = B[s] + 1
        while g in present[s]:
            g += 1
        if rev(e) > g:
            last = min(r for r in present[s] if r > g) - 1
            held[e["file"]] = [finding("merge.revision-gap", 200, [e["file"]], {
                "store": s, "first": g, "last": last, "delivery": revision_delivery(f, s, g, last)})]
    active = [e for e in active if e["file"] not in held]

    def breaks(e):  # step 7: the first (T, r), by store, that is neither known nor integrable
        for t in sorted(e["revisionsByStoreIdentifier"], key=key8):
            r = e["revisionsByStoreIdentifier"][t]
            if t != e["storeIdentifier"] and r > B.get(t, 0):
                if (t, r) not in by_rev:
                    return t, r, "missing"
                if by_rev[(t, r)][0]["file"] in held:
                    return t, r, "held-back"
        return None
    while True:  # repeated until nothing changes; the reason is then read off the final set
        new = [e for e in active if e["file"] not in held and breaks(e)]
        if not new:
            break
        held.update((e["file"], None) for e in new)
    for e in active:
        if e["file"] in held:
            t, r, dep = breaks(e)
            details = {"store": t, "revision": r, "dependency": dep}
            if dep == "missing":
                details["delivery"] = revision_delivery(f, t, r, r)
            held[e["file"]] = [finding("merge.missing-dependency", 201, [e["file"]], details)]
    return held, covered


def strip_messages(v):
    if isinstance(v, dict):
        return {k: strip_messages(x) for k, x in v.items() if k != "message"}
    return [strip_messages(x) for x in v] if isinstance(v, list) else v


def diff(a, b, ptr=""):
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in
                (diff(a[k], b[k], ptr + "/" + k) if k in a and k in b else
                 ["%s/%s: %s" % (ptr, k, "missing" if k in b else "unexpected %s" % json.dumps(a[k]))])]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in diff(x, y, "%s/%d" % (ptr, i))]
    return [] if a == b and type(a) == type(b) else ["%s: got %s, expected %s" % (ptr or "/", json.dumps(a), json.dumps(b))]


def main():
    failures = 0
    cases = sorted(c for c in os.listdir(FIXTURES)  # the --json cases (15.7); device-chains-lines has lines
                   if c.startswith("device-") and os.path.exists(os.path.join(FIXTURES, c, "expected", "device.json")))
    for name in cases:
        case_dir = os.path.join(FIXTURES, name)
        case = json.load(open(os.path.join(case_dir, "case.json"), encoding="utf-8"))
        expected = json.load(open(os.path.join(case_dir, "expected", "device.json"), encoding="utf-8"))
        try:
            report, state, code = device(case_dir, case["command"])
            diffs = diff(strip_messages({"device": report, "state": state}), strip_messages(expected))
            if code != case["exitCode"]:
                diffs.append("exit status: got %d, expected %d" % (code, case["exitCode"]))
        except Unsupported as exc:
            diffs = ["unsupported by this checker: %s" % exc]
        failures += bool(diffs)
        print(("DIFF " if diffs else "OK ") + name + "".join("\n    " + d for d in diffs))
    return 0 if cases and not failures else 1


if __name__ == "__main__":
    sys.exit(main())
