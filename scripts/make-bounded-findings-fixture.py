#!/usr/bin/env python3
"""Writes the merge case Fixtures/merge/missing-dependency-201-bounded and its expected result,
both from the Spec alone (never by running the toolkit).

The folder: one ensemble E with store A registered and one event, A/0, whose revision set names
A at 0 and 150 other stores (S000 ... S149) at revision 0, none of which the folder knows.
Spec/merge.md 5.5 gives one 201 per (event, store) not known; README.md 6.2 keeps the first 100 in
report order (merge.md 5.9: by the store's UTF-8 bytes, so S000 ... S099) and counts the other 50
in one `merge.more-findings` with number 201 and details code, count.

Usage: python3 scripts/make-bounded-findings-fixture.py   (rewrites the case in place)
"""
import json
import os
import shutil

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
case = os.path.join(root, "Fixtures", "merge", "missing-dependency-201-bounded")
others = ["S%03d" % n for n in range(150)]
event_name = "0_A_0.cdeevent"
event_path = "cloud/E/events/" + event_name

shutil.rmtree(case, ignore_errors=True)
os.makedirs(os.path.join(case, "cloud", "E", "events"))
os.makedirs(os.path.join(case, "cloud", "E", "stores"))
os.makedirs(os.path.join(case, "expected"))

registration = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
\t<key>leechDate</key>
\t<date>2024-05-01T10:00:00Z</date>
\t<key>storeIdentifier</key>
\t<string>A</string>
</dict>
</plist>
"""
with open(os.path.join(case, "cloud", "E", "stores", "A"), "w", encoding="utf-8") as out:
    out.write(registration)

revisions = {"A": 0}
revisions.update({store: 0 for store in others})
event = {
    "changesByEntity": {"Item": [{"globalIdentifier": "i1", "properties": [{"propertyName": "title", "type": 0, "value": "a0"}], "type": 100}]},
    "globalCount": 0,
    "revisionsByStoreIdentifier": revisions,
    "storeIdentifier": "A",
    "timestamp": "100.0",
    "type": 200,
    "uniqueIdentifier": "A-0-0",
}
with open(os.path.join(case, "cloud", "E", "events", event_name), "w", encoding="utf-8") as out:
    out.write(json.dumps(event, separators=(",", ":"), sort_keys=True))

kept = sorted(others, key=lambda s: s.encode("utf-8"))[:100]
errors = [{"code": "merge.missing-dependency", "details": {"store": s, "revision": 0}, "files": [event_path], "number": 201} for s in kept]
# Report order (merge.md 5.9) sorts by code first: merge.missing-dependency < merge.more-findings.
errors.append({"code": "merge.more-findings", "details": {"code": "merge.missing-dependency", "count": len(others) - 100}, "files": [event_path], "number": 201})
with open(os.path.join(case, "expected", "error.json"), "w", encoding="utf-8") as out:
    out.write(json.dumps({"errors": errors}, separators=(",", ":")))

description = ("Event A/0 names revision 0 of 150 stores S000 ... S149 besides its own, and the folder knows none of them: merge.md 5.5 "
               "gives 150 findings of 201, of which README.md 6.2 keeps the first 100 in report order (the stores' UTF-8 bytes: "
               "S000 ... S099) and counts the other 50 in one merge.more-findings (number 201, details code and count). Written by "
               "scripts/make-bounded-findings-fixture.py from the Spec alone.")
with open(os.path.join(case, "case.json"), "w", encoding="utf-8") as out:
    out.write(json.dumps({"name": "missing-dependency-201-bounded", "description": description,
                          "rule": "README.md 6.2 (findings of one code for one file), merge.md 5.5 (201)",
                          "command": ["merge", "cloud"], "exitCode": 1}, indent=2) + "\n")
print("wrote", os.path.relpath(case, root))
