#!/usr/bin/env python3
"""Writes Fixtures/repair-cure/recover-one: the folder of lost-one, with the event-data folder of a
device that still holds the lost event (Spec/repair.md 3.6.6), independently of the toolkit.

The cloud folder and the model are lost-one's, copied. The device is store STORE-BBBB's: its
event store (`device/E/events.sqlite`, written with scripts/make-device-fixtures.py's writer, the
rules of Spec/device-state.md 2) holds every event of the cloud folder as it imported them, and the
lost A/1 (global count 3): the insert of Note n2 with text "two" and folder f1, as lost-one's README
supposes it. The expected files in recover-one/expected are derived by hand in
Fixtures/repair-cure/README.md, not by this script.

Usage: scripts/make-recovery-fixture.py            write the case's cloud/, model and device/
       scripts/make-recovery-fixture.py --check    write into a scratch folder and compare the
                                                   files with the committed ones (SQLite may
                                                   write other bytes elsewhere: rows are compared)
"""
import importlib.util
import json
import os
import plistlib
import shutil
import sqlite3
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "Fixtures", "repair-cure", "lost-one")
CASE = os.path.join(ROOT, "Fixtures", "repair-cure", "recover-one")

spec = importlib.util.spec_from_file_location("device_fixtures", os.path.join(ROOT, "scripts", "make-device-fixtures.py"))
device = importlib.util.module_from_spec(spec)
spec.loader.exec_module(device)
device.MODEL_VERSION_TEXT = None  # lost-one's events name no model version


def prop(item):
    kind = item["type"]
    if kind == 0:
        value = item.get("value")
        return device.Prop(item["propertyName"], 0, None if value is None else ("string", value))
    if kind == 1:
        return device.Prop(item["propertyName"], 1, related=item.get("relatedIdentifier"))
    return device.Prop(item["propertyName"], kind, added=item.get("addedIdentifiers", ()), removed=item.get("removedIdentifiers", ()))


def event_from_json(doc):
    changes = []
    for entity in sorted(doc.get("changesByEntity", {})):
        for change in doc["changesByEntity"][entity]:
            changes.append(device.Change(entity, change["globalIdentifier"], change["type"], [prop(p) for p in change.get("properties", [])]))
    ev = device.Event(doc["uniqueIdentifier"], doc["type"], doc["globalCount"], doc["storeIdentifier"],
                      doc["revisionsByStoreIdentifier"], float(doc["timestamp"]), changes)
    ev.uid = doc["uniqueIdentifier"]
    return ev


LOST = {"uniqueIdentifier": "A-1", "type": 200, "globalCount": 3, "storeIdentifier": "STORE-AAAA",
        "revisionsByStoreIdentifier": {"STORE-AAAA": 1, "STORE-BBBB": 0}, "timestamp": "3.0",
        "changesByEntity": {"Note": [{"globalIdentifier": "n2", "type": 100, "properties": [
            {"propertyName": "folder", "type": 1, "relatedIdentifier": "f1"},
            {"propertyName": "text", "type": 0, "value": "two"}]}]}}


def write(out):
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    for name in ("cloud", "Model.xcdatamodeld"):
        shutil.copytree(os.path.join(SOURCE, name), os.path.join(out, name))
    events_dir = os.path.join(SOURCE, "cloud", "E", "events")
    docs = [json.load(open(os.path.join(events_dir, n), encoding="utf-8")) for n in sorted(os.listdir(events_dir))]
    docs.append(LOST)
    events = [event_from_json(d) for d in sorted(docs, key=lambda d: d["globalCount"])]
    folder = os.path.join(out, "device", "E")
    os.makedirs(folder)
    device.write_store(os.path.join(folder, "events.sqlite"), events, [])
    info = {"persistentStoreIdentifier": "STORE-BBBB", "cloudFileSystemIdentity": device.keyed_archive("alice"),
            "incompleteEventIdentifiers": {}, "verifiesStoreRegistrationInCloud": True}
    with open(os.path.join(folder, "store.plist"), "wb") as handle:
        handle.write(plistlib.dumps(info, fmt=plistlib.FMT_XML, sort_keys=True))


def rows(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {t: sorted(db.execute("SELECT * FROM %s" % t).fetchall(), key=repr) for t in tables}
    finally:
        db.close()


def check():
    scratch = tempfile.mkdtemp(prefix="recovery-fixture-")
    try:
        out = os.path.join(scratch, "case")
        write(out)
        bad = []
        for base, _, files in os.walk(out):
            for name in files:
                made = os.path.join(base, name)
                rel = os.path.relpath(made, out)
                kept = os.path.join(CASE, rel)
                if not os.path.exists(kept):
                    bad.append("missing: " + rel)
                elif name == "events.sqlite":
                    if rows(made) != rows(kept):
                        bad.append("rows differ: " + rel)
                elif open(made, "rb").read() != open(kept, "rb").read():
                    bad.append("differs: " + rel)
        for line in bad:
            print(line)
        print("recovery fixture: %s" % ("FAIL" if bad else "ok"))
        return 1 if bad else 0
    finally:
        shutil.rmtree(scratch)


if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        sys.exit(check())
    if sys.argv[1:]:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    keep = os.path.join(CASE, "expected")
    saved = tempfile.mkdtemp(prefix="recovery-expected-")
    if os.path.isdir(keep):
        shutil.copytree(keep, os.path.join(saved, "expected"))
    write(CASE)
    if os.path.isdir(os.path.join(saved, "expected")):
        shutil.copytree(os.path.join(saved, "expected"), keep)
    shutil.rmtree(saved)
