#!/usr/bin/env python3
"""Writes Fixtures/device/: synthetic Ensembles 1.x device folders and their expected facts
(Spec/device-state.md section 5), independently of the toolkit.

Each case folder holds what one device keeps for one ensemble (Spec/device-state-notes.md 1):
`eventdata/<ensemble>/events.sqlite` (a Core Data SQLite store of CDEEventStoreModel_2 laid out by
the rules of Spec/device-state.md 2, as the real stores of Fixtures/external/coredata-sqlite show
them), `store.plist`, `data/`, `newdata/` and `eventdata/transitcache/<ensemble>/{upload,download}`;
most cases also hold the cloud folder the device syncs with (`cloud/<ensemble>/`, v2 JSON events),
`case.json` (what the case is, and inputs a reader needs that no file holds) and
`expected/device-state.json` (the facts a reader must find).

Only the standard library is used: sqlite3 for the store, plistlib for `store.plist`, the
`Z_METADATA` property list and the keyed archives (NSKeyedArchiver's layout written by hand with
plistlib.UID references). Every expected fact is derived here from the data this script wrote.

Usage: scripts/make-device-fixtures.py [--out Fixtures/device]   write every case
       scripts/make-device-fixtures.py --check [--out ...]       re-read every written case with
                                                                 sqlite3 and plistlib and compare
                                                                 with its expected/device-state.json
Identifiers, timestamps and contents are fixed, so a rerun with the same SQLite library gives the
same bytes. The one exception is handled here: SQLite puts random salts in a `-wal` file's header,
so the generator rewrites them to fixed values and recomputes the WAL checksums. Another SQLite
version may write other bytes for the same rows (it records its version number in the header).
Git keeps no empty folders: an empty `data/`, `newdata/`, `upload/` or `download/` is absent from
the repository, and readers treat a missing one as empty (Spec/device-state.md 5).
"""
import argparse
import hashlib
import json
import os
import plistlib
import shutil
import sqlite3
import struct
import sys
import tempfile
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENSEMBLE = "MainStore"
NAMESPACE = uuid.UUID("6F0D3C52-8B1E-4C4A-9D2B-5E7A1F00E337")
DISTANT_PAST = -63114076800.0  # NSDate.distantPast, seconds from 2001-01-01 (leech baselines)
UNIX_2001 = 978307200  # seconds from 1970 to 2001-01-01


def uid(label):
    """A fixed, realistic unique identifier for a label."""
    return str(uuid.uuid5(NAMESPACE, label)).upper()


# Store identifiers look like NSProcessInfo.globallyUniqueString: a UUID, a process number and a
# 64-bit hex counter; no "_" (cloud-layout.md 4.1).
STORE_A = uid("store A") + "-4242-00000A1B2C3D4E5F"
STORE_B = uid("store B") + "-1717-00000F6E5D4C3B2A"
APP_STORE_UUID = uid("app store of device A")

# ---------------------------------------------------------------------------------------------
# Values. An attribute value is ("string", s), ("integer", n), ("date", seconds from 2001),
# ("data", bytes) or None. It is archived as NSKeyedArchiver does and written to v2 JSON as
# v2-json.md 5.5 says.


def v2_value(value):
    if value is None:
        return None
    kind, payload = value
    if kind in ("string", "integer"):
        return payload
    if kind == "date":
        milliseconds = (payload + UNIX_2001) * 1000
        return ["date", int(milliseconds) if float(milliseconds).is_integer() else milliseconds]
    if kind == "data":
        import base64
        return ["data", base64.b64encode(payload).decode("ascii")]
    raise ValueError(kind)


class Prop:
    """One CDEPropertyChangeValue (Spec/device-state-notes.md 3.1)."""

    def __init__(self, name, kind, value=None, filename=None, related=None, added=(), removed=(), moved=None):
        self.name, self.kind, self.value, self.filename = name, kind, value, filename
        self.related, self.added, self.removed, self.moved = related, list(added), list(removed), moved

    def v2(self):
        out = {"propertyName": self.name, "type": self.kind}
        if self.kind == 0:
            if self.filename is not None:
                out["filename"] = self.filename
            else:
                out["value"] = v2_value(self.value)
        elif self.kind == 1:
            out["relatedIdentifier"] = self.related
        else:
            out["addedIdentifiers"] = self.added
            out["removedIdentifiers"] = self.removed
            if self.kind == 3:
                out["movedIdentifiersByIndex"] = {str(k): v for k, v in sorted((self.moved or {}).items())}
        return out


class Change:
    def __init__(self, entity, gid, ctype, props=(), data_files=(), damaged=None):
        self.entity, self.gid, self.type = entity, gid, ctype
        self.props, self.data_files = list(props), list(data_files)
        self.damaged = damaged  # bytes written instead of a valid archive, or None


class Event:
    def __init__(self, label, etype, gc, store, revisions, timestamp, changes=()):
        self.label, self.uid, self.type, self.gc = label, uid(label), etype, gc
        self.store, self.revisions, self.timestamp = store, dict(revisions), timestamp
        self.changes = list(changes)

    @property
    def revision(self):
        return self.revisions[self.store]

    def v2(self):
        by_entity = {}
        for change in self.changes:
            item = {"globalIdentifier": change.gid, "type": change.type}
            if change.damaged is None and change.props:
                item["properties"] = [p.v2() for p in change.props]
            if change.data_files:
                item["dataFiles"] = list(change.data_files)
            by_entity.setdefault(change.entity, []).append(item)
        out = {
            "uniqueIdentifier": self.uid, "type": self.type, "globalCount": self.gc,
            "timestamp": repr(float(self.timestamp)), "storeIdentifier": self.store,
            "modelVersion": MODEL_VERSION_TEXT, "revisionsByStoreIdentifier": dict(sorted(self.revisions.items())),
        }
        if by_entity:
            out["changesByEntity"] = by_entity
        return out

    def cloud_name(self):
        if self.type == 100:
            return "baselines/%d_%s_%s.cdeevent" % (self.gc, self.uid, self.store[:8])
        return "events/%d_%s_%d.cdeevent" % (self.gc, self.store, self.revision)


# The app's model as the events' modelVersion names it: an XML property list of entity version
# hashes (Spec/device-state-notes.md 3). The hashes are synthetic (SHA-256 of the entity name):
# Apple's cannot be computed off Apple platforms.
MODEL_VERSION_TEXT = plistlib.dumps({name: hashlib.sha256(name.encode()).digest() for name in ("Folder", "Note")},
                                    fmt=plistlib.FMT_XML).decode("utf-8")

# ---------------------------------------------------------------------------------------------
# Keyed archives (Spec/device-state.md 3), written the way NSKeyedArchiver lays them out.


class Archiver:
    def __init__(self):
        self.objects = ["$null"]
        self.scalars = {}
        self.classes = {}

    def scalar(self, value):
        key = (type(value).__name__, value)
        if key not in self.scalars:  # NSKeyedArchiver stores each equal string/number once
            self.objects.append(value)
            self.scalars[key] = len(self.objects) - 1
        return plistlib.UID(self.scalars[key])

    def class_ref(self, chain):
        if chain not in self.classes:
            self.objects.append({"$classname": chain[0], "$classes": list(chain)})
            self.classes[chain] = len(self.objects) - 1
        return plistlib.UID(self.classes[chain])

    def new_object(self, body):
        self.objects.append(body)
        return len(self.objects) - 1

    def encode(self, value):
        if value is None:
            return plistlib.UID(0)  # NSKeyedArchiver writes a nil object as a reference to $null
        if isinstance(value, tuple) and value[0] in ("array", "set", "dict"):
            return self.encode_collection(value[0], value[1])
        if isinstance(value, tuple):  # an attribute value
            kind, payload = value
            if kind == "date":
                index = self.new_object(None)
                self.objects[index] = {"NS.time": float(payload), "$class": self.class_ref(("NSDate", "NSObject"))}
                return plistlib.UID(index)
            return self.scalar(payload)  # strings, numbers and NSData are plain property-list values
        if isinstance(value, (str, int, float, bytes)):
            return self.scalar(value)
        if isinstance(value, Prop):
            index = self.new_object(None)
            body = {"classVersion": 1, "propertyName": self.encode(value.name), "value": self.encode(value.value),
                    "filename": self.encode(value.filename), "relatedIdentifier": self.encode(value.related),
                    "addedIdentifiers": self.encode(("set", value.added) if value.kind >= 2 else None),
                    "removedIdentifiers": self.encode(("set", value.removed) if value.kind >= 2 else None),
                    "movedIdentifiersByIndex": self.encode(("dict", value.moved) if value.kind == 3 else None),
                    "type": value.kind}
            body["$class"] = self.class_ref(("CDEPropertyChangeValue", "NSObject"))
            self.objects[index] = body
            return plistlib.UID(index)
        raise ValueError(value)

    def encode_collection(self, kind, items):
        index = self.new_object(None)
        if kind == "array":
            body = {"NS.objects": [self.encode(i) for i in items]}
            chain = ("NSMutableArray", "NSArray", "NSObject")
        elif kind == "set":
            body = {"NS.objects": [self.encode(i) for i in items]}
            chain = ("NSMutableSet", "NSSet", "NSObject")
        else:
            pairs = sorted(items.items())
            body = {"NS.keys": [self.encode(k) for k, _ in pairs], "NS.objects": [self.encode(v) for _, v in pairs]}
            chain = ("NSMutableDictionary", "NSDictionary", "NSObject")
        body["$class"] = self.class_ref(chain)
        self.objects[index] = body
        return plistlib.UID(index)


def keyed_archive(root):
    archiver = Archiver()
    top = archiver.encode(root)
    return plistlib.dumps({"$archiver": "NSKeyedArchiver", "$version": 100000, "$objects": archiver.objects,
                           "$top": {"root": top}}, fmt=plistlib.FMT_BINARY, sort_keys=True)


def property_change_archive(props):
    return keyed_archive(("array", props))


# ---------------------------------------------------------------------------------------------
# The event store: CDEEventStoreModel_2 by the rules of Spec/device-state.md 2. Entities numbered
# in case-insensitive name order (2.1); one Z<ROOT> table each (2.2); columns in the order the
# real stores show: Z_PK, Z_ENT, Z_OPT, then integer attributes, to-one keys, dates and floats,
# strings, blobs, each group in name order.

ENTITIES = ["CDEDataFile", "CDEEventRevision", "CDEGlobalIdentifier", "CDEObjectChange", "CDEStoreModificationEvent"]
TABLES = {
    "CDEDataFile": [("ZOBJECTCHANGE", "INTEGER"), ("ZFILENAME", "VARCHAR")],
    "CDEEventRevision": [("ZREVISIONNUMBER", "INTEGER"), ("ZSTOREMODIFICATIONEVENT", "INTEGER"),
                         ("ZSTOREMODIFICATIONEVENTFOROTHERSTORES", "INTEGER"), ("ZPERSISTENTSTOREIDENTIFIER", "VARCHAR")],
    "CDEGlobalIdentifier": [("ZGLOBALIDENTIFIER", "VARCHAR"), ("ZNAMEOFENTITY", "VARCHAR"), ("ZSTOREURI", "VARCHAR")],
    "CDEObjectChange": [("ZTYPE", "INTEGER"), ("ZGLOBALIDENTIFIER", "INTEGER"), ("ZSTOREMODIFICATIONEVENT", "INTEGER"),
                        ("ZNAMEOFENTITY", "VARCHAR"), ("ZPROPERTYCHANGEVALUES", "BLOB")],
    "CDEStoreModificationEvent": [("ZGLOBALCOUNT", "INTEGER"), ("ZTYPE", "INTEGER"), ("ZEVENTREVISION", "INTEGER"),
                                  ("ZTIMESTAMP", "TIMESTAMP"), ("ZMODELVERSION", "VARCHAR"), ("ZUNIQUEIDENTIFIER", "VARCHAR")],
}
# Indexes as Core Data names them in the real stores: TABLE_COLUMN_INDEX for indexed attributes,
# then for to-one keys. (The model's two compound indexes are not written: no real store shows
# how Core Data names an index of the old `compoundIndexes` element.)
INDEXED = {
    "CDEDataFile": ["ZOBJECTCHANGE"],
    "CDEEventRevision": ["ZPERSISTENTSTOREIDENTIFIER", "ZREVISIONNUMBER", "ZSTOREMODIFICATIONEVENT",
                         "ZSTOREMODIFICATIONEVENTFOROTHERSTORES"],
    "CDEGlobalIdentifier": ["ZGLOBALIDENTIFIER", "ZSTOREURI"],
    "CDEObjectChange": ["ZNAMEOFENTITY", "ZGLOBALIDENTIFIER", "ZSTOREMODIFICATIONEVENT"],
    "CDEStoreModificationEvent": ["ZGLOBALCOUNT", "ZEVENTREVISION"],
}


def table_of(entity):
    return "Z" + entity.upper()


def metadata_plist():
    # Keys as in the real stores' Z_METADATA (kik.sqlite, Accounts3.sqlite); the version hashes
    # are synthetic (SHA-256 of the entity name), see MODEL_VERSION_TEXT.
    return plistlib.dumps({
        "NSPersistenceFrameworkVersion": 866,
        "NSStoreModelVersionHashes": {name: hashlib.sha256(("CDEEventStoreModel_2/" + name).encode()).digest()
                                      for name in ENTITIES},
        "NSStoreModelVersionHashesVersion": 3,
        "NSStoreModelVersionIdentifiers": ["2"],
        "NSStoreType": "SQLite",
        "_NSAutoVacuumLevel": "2",
    }, fmt=plistlib.FMT_BINARY, sort_keys=True)


def create_schema(db):
    for entity in ENTITIES:
        table = table_of(entity)
        columns = ", ".join("%s %s" % c for c in [("Z_PK", "INTEGER PRIMARY KEY"), ("Z_ENT", "INTEGER"), ("Z_OPT", "INTEGER")] + TABLES[entity])
        db.execute("CREATE TABLE %s ( %s )" % (table, columns))
        for column in INDEXED[entity]:
            db.execute("CREATE INDEX %s_%s_INDEX ON %s (%s)" % (table, column, table, column))
    db.execute("CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
    db.execute("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
    for number, entity in enumerate(ENTITIES, start=1):
        db.execute("INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, 0, 0)", (number, entity))
    db.execute("INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)", (uid("event store"), metadata_plist()))


class StoreWriter:
    """Appends events to an event store; keeps Z_PK counters and Z_MAX as Core Data does."""

    def __init__(self, db):
        self.db = db
        self.next = {e: 1 for e in ENTITIES}
        self.global_ids = {}
        self.rows = []  # (event uid, change index, Z_PK of the object change)

    def insert(self, entity, values):
        pk = self.next[entity]
        self.next[entity] += 1
        names = ["Z_PK", "Z_ENT", "Z_OPT"] + list(values)
        self.db.execute("INSERT INTO %s (%s) VALUES (%s)" % (table_of(entity), ", ".join(names), ", ".join("?" * len(names))),
                        [pk, ENTITIES.index(entity) + 1, 1] + list(values.values()))
        self.db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_NAME = ?", (pk, entity))
        return pk

    def add(self, event):
        event_pk = self.next["CDEStoreModificationEvent"]
        own_pk = self.insert("CDEEventRevision", {"ZREVISIONNUMBER": event.revision, "ZSTOREMODIFICATIONEVENT": event_pk,
                                                  "ZSTOREMODIFICATIONEVENTFOROTHERSTORES": None,
                                                  "ZPERSISTENTSTOREIDENTIFIER": event.store})
        self.insert("CDEStoreModificationEvent", {"ZGLOBALCOUNT": event.gc, "ZTYPE": event.type, "ZEVENTREVISION": own_pk,
                                                  "ZTIMESTAMP": float(event.timestamp), "ZMODELVERSION": MODEL_VERSION_TEXT,
                                                  "ZUNIQUEIDENTIFIER": event.uid})
        for store, revision in sorted(event.revisions.items()):
            if store != event.store:
                self.insert("CDEEventRevision", {"ZREVISIONNUMBER": revision, "ZSTOREMODIFICATIONEVENT": None,
                                                 "ZSTOREMODIFICATIONEVENTFOROTHERSTORES": event_pk,
                                                 "ZPERSISTENTSTOREIDENTIFIER": store})
        for index, change in enumerate(event.changes):
            key = (change.entity, change.gid)
            if key not in self.global_ids:
                number = len(self.global_ids) + 1
                self.global_ids[key] = self.insert("CDEGlobalIdentifier", {
                    "ZGLOBALIDENTIFIER": change.gid, "ZNAMEOFENTITY": change.entity,
                    "ZSTOREURI": "x-coredata://%s/%s/p%d" % (APP_STORE_UUID, change.entity, number)})
            blob = change.damaged if change.damaged is not None else property_change_archive(change.props)
            change_pk = self.insert("CDEObjectChange", {"ZTYPE": change.type, "ZGLOBALIDENTIFIER": self.global_ids[key],
                                                        "ZSTOREMODIFICATIONEVENT": event_pk, "ZNAMEOFENTITY": change.entity,
                                                        "ZPROPERTYCHANGEVALUES": blob})
            self.rows.append((event.uid, index, change_pk))
            for filename in change.data_files:
                self.insert("CDEDataFile", {"ZOBJECTCHANGE": change_pk, "ZFILENAME": filename})


# ---------------------------------------------------------------------------------------------
# WAL files: SQLite salts them at random; fixed salts and recomputed checksums make reruns equal.


def wal_checksum(data, big_endian, s0, s1):
    fmt = (">" if big_endian else "<") + "%dI" % (len(data) // 4)
    words = struct.unpack(fmt, data)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1


def normalise_wal(path, salt1=0x0E5E4B1E, salt2=0x2026112B):
    data = bytearray(open(path, "rb").read())
    magic, _, page_size = struct.unpack(">III", data[0:12])
    big_endian = magic & 1
    struct.pack_into(">II", data, 16, salt1, salt2)
    s0, s1 = wal_checksum(bytes(data[0:24]), big_endian, 0, 0)
    struct.pack_into(">II", data, 24, s0, s1)
    offset = 32
    while offset + 24 + page_size <= len(data):
        struct.pack_into(">II", data, offset + 8, salt1, salt2)
        s0, s1 = wal_checksum(bytes(data[offset:offset + 8]), big_endian, s0, s1)
        s0, s1 = wal_checksum(bytes(data[offset + 24:offset + 24 + page_size]), big_endian, s0, s1)
        struct.pack_into(">II", data, offset + 16, s0, s1)
        offset += 24 + page_size
    open(path, "wb").write(bytes(data))
    return (len(data) - 32) // (24 + page_size)


# ---------------------------------------------------------------------------------------------
# The history every case starts from: device A leeched (its leech baseline), imported B's first
# save, and saved once itself, with a photo in a data file.

PHOTO_1 = bytes(range(256)) * 48  # 12,288 bytes: above the 10 KB the framework keeps inline
PHOTO_2 = bytes(reversed(range(256))) * 48
PHOTO_3 = b"B's photo " * 1300
MD5 = lambda data: hashlib.md5(data).hexdigest().upper()  # CDEEventStore storeDataInFile: names a file by its MD5
T0 = 720000000.0  # 2023-10-25T08:00:00Z, seconds from 2001


def base_events():
    folder, n1, n2, n3 = uid("folder f1"), uid("note n1"), uid("note n2"), uid("note n3")
    baseline = Event("A leech baseline", 100, 0, STORE_A, {STORE_A: 0}, DISTANT_PAST, [
        Change("Folder", folder, 100, [Prop("name", 0, ("string", "Inbox")), Prop("notes", 2, added=[n1])]),
        Change("Note", n1, 100, [Prop("created", 0, ("date", T0 - 86400)), Prop("folder", 1, related=folder),
                                 Prop("photo", 0, None), Prop("title", 0, ("string", "First"))]),
    ])
    b_save = Event("B save 0", 200, 1, STORE_B, {STORE_B: 0, STORE_A: 0}, T0 + 10, [
        Change("Folder", folder, 200, [Prop("notes", 2, added=[n2])]),
        Change("Note", n2, 100, [Prop("created", 0, ("date", T0 + 5)), Prop("folder", 1, related=folder),
                                 Prop("photo", 0, None), Prop("title", 0, ("string", "From B"))]),
    ])
    a_save = Event("A save 1", 200, 2, STORE_A, {STORE_A: 1, STORE_B: 0}, T0 + 100, [
        Change("Note", n1, 200, [Prop("title", 0, ("string", "First, edited"))]),
        Change("Note", n3, 100, [Prop("created", 0, ("date", T0 + 90)), Prop("folder", 1, related=folder),
                                 Prop("photo", 0, filename=MD5(PHOTO_1)), Prop("title", 0, ("string", "Photo"))],
               data_files=[MD5(PHOTO_1)]),
        Change("Folder", folder, 200, [Prop("notes", 2, added=[n3])]),
    ])
    return [baseline, b_save, a_save]


class Case:
    def __init__(self, name, description, rule):
        self.name, self.description, self.rule = name, description, rule
        self.events = base_events()        # rows of events.sqlite (main file)
        self.wal_events = []               # rows only in events.sqlite-wal
        self.cloud_events = list(self.events)  # events whose files are in the cloud
        self.identity = "alice"            # the token archived in store.plist (local folder backend: user name)
        self.identity_now = None           # input: the backend's current token, when the case gives one
        self.incomplete = {}               # store.plist incompleteEventIdentifiers
        self.verifies = True
        self.baseline_used = uid("A leech baseline")
        self.registered = [STORE_A, STORE_B]
        self.data = {MD5(PHOTO_1): PHOTO_1}   # device data/
        self.newdata = {}
        self.cloud_data = {MD5(PHOTO_1): PHOTO_1}
        self.upload = {}                  # transit cache: name -> bytes
        self.download = {}
        self.has_cloud = True


def event_file(event):
    return (json.dumps(event.v2(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)).encode("utf-8")


def registration(store):
    return plistlib.dumps({"leechDate": __import__("datetime").datetime(2023, 10, 24, 8, 0, 0), "storeIdentifier": store},
                          fmt=plistlib.FMT_XML)


def cases():
    out = []
    extra = lambda label, gc, rev, others, ts, changes, etype=200, store=STORE_A: Event(
        label, etype, gc, store, dict({store: rev}, **others), ts, changes)
    n1, n3 = uid("note n1"), uid("note n3")

    c = Case("healthy", "A device in step with its cloud: every event of its store is in the cloud, every cloud event is in its store, nothing left in the transit cache.",
             "device-state.md 5 (expected facts)")
    out.append(c)

    c = Case("deleech-202", "The backend's identity token is now \"bob\"; the device leeched when it was \"alice\" (archived in store.plist). The original deleeches with error 202 at launch.",
             "device-state-notes.md 4 (202), 5")
    c.identity_now = "bob"
    out.append(c)

    c = Case("deleech-203", "The app's save was being recorded when the process stopped: store.plist lists the event as incomplete and mandatory, and the store holds it with type 0. The original deleeches with error 203 at launch.",
             "device-state-notes.md 4 (203, incomplete events)")
    pending = extra("A pending save 2", 3, 2, {STORE_B: 0}, T0 + 200,
                    [Change("Note", n1, 200, [Prop("title", 0, ("string", "Never recorded"))])], etype=0)
    c.events.append(pending)
    c.incomplete = {pending.uid: True}
    out.append(c)

    c = Case("deleech-205", "The device's registration file stores/<its store> is missing from the cloud, and store.plist says registration is verified. The original deleeches with error 205 at its next merge.",
             "device-state-notes.md 4 (205), 6")
    c.registered = [STORE_B]
    out.append(c)

    c = Case("never-uploaded", "Two saves of the device are not in the cloud: A/2 is in no upload folder, A/3 (with a new data file) sits in the transit cache's upload folder.",
             "device-state.md 5 (neverUploaded)")
    a2 = extra("A save 2", 3, 2, {STORE_B: 0}, T0 + 300, [Change("Note", n3, 200, [Prop("title", 0, ("string", "Photo, renamed"))])])
    n4 = uid("note n4")
    a3 = extra("A save 3", 4, 3, {STORE_B: 0}, T0 + 400, [
        Change("Note", n4, 100, [Prop("created", 0, ("date", T0 + 390)), Prop("folder", 1, related=uid("folder f1")),
                                 Prop("photo", 0, filename=MD5(PHOTO_2)), Prop("title", 0, ("string", "Second photo"))],
               data_files=[MD5(PHOTO_2)]),
        Change("Folder", uid("folder f1"), 200, [Prop("notes", 2, added=[n4])])])
    c.events += [a2, a3]
    c.data[MD5(PHOTO_2)] = PHOTO_2
    c.upload = {a3.cloud_name().split("/")[1]: event_file(a3), MD5(PHOTO_2): PHOTO_2}
    out.append(c)

    c = Case("not-imported", "Two saves of store B are in the cloud but not in the device's store: B/1 is being downloaded (its file is in the transit cache's download folder, its data file in newdata/), B/2 is not.",
             "device-state.md 5 (notImported)")
    n5 = uid("note n5")
    b1 = extra("B save 1", 3, 1, {STORE_A: 1}, T0 + 500, [
        Change("Note", n5, 100, [Prop("created", 0, ("date", T0 + 490)), Prop("folder", 1, related=None),
                                 Prop("photo", 0, filename=MD5(PHOTO_3)), Prop("title", 0, ("string", "B's photo"))],
               data_files=[MD5(PHOTO_3)])], store=STORE_B)
    b2 = extra("B save 2", 4, 2, {STORE_A: 1}, T0 + 600, [
        Change("Note", n5, 200, [Prop("title", 0, ("string", "B's photo, renamed"))])], store=STORE_B)
    c.cloud_events += [b1, b2]
    c.cloud_data[MD5(PHOTO_3)] = PHOTO_3
    c.newdata = {MD5(PHOTO_3): PHOTO_3}
    c.download = {b1.cloud_name().split("/")[1]: event_file(b1)}
    out.append(c)

    c = Case("interrupted-save", "A merge was being recorded when the process stopped (listed in store.plist, not mandatory), and an event of type 0 that no list names is left from an import. No deleech: at launch the original deletes both.",
             "device-state-notes.md 4 (incomplete events)")
    merging = extra("A merge in progress", 3, 2, {STORE_B: 0}, T0 + 700,
                    [Change("Note", n1, 200, [Prop("title", 0, ("string", "Half merged"))])], etype=0)
    orphan = extra("B import in progress", 4, 1, {STORE_A: 1}, T0 + 650,
                   [Change("Note", uid("note n2"), 200, [Prop("title", 0, ("string", "Half imported"))])], etype=0, store=STORE_B)
    c.events += [merging, orphan]
    c.incomplete = {merging.uid: False}
    out.append(c)

    c = Case("wal-only-rows", "The store's newest event (A/2, also in the cloud) is only in events.sqlite-wal: the main file alone does not hold it. A reader must read the -wal and leave the folder's bytes unchanged.",
             "device-state.md 2.6")
    a2 = extra("A save 2 in WAL", 3, 2, {STORE_B: 0}, T0 + 800, [Change("Note", n1, 200, [Prop("title", 0, ("string", "Only in the WAL"))])])
    c.wal_events = [a2]
    c.cloud_events.append(a2)
    out.append(c)

    c = Case("damaged-archive", "The propertyChangeValues of one object change (A/1, the update of note n1) is a binary property list that is not a keyed archive (no $archiver). The cloud copy of the event is intact.",
             "device-state.md 3.2 (archive.not-keyed-archive)")
    c.events = base_events()  # the cloud keeps the intact A/1 of cloud_events; only the store's copy is damaged
    c.events[2].changes[0].damaged = plistlib.dumps({"$objects": ["$null"], "propertyName": "title"},
                                                    fmt=plistlib.FMT_BINARY, sort_keys=True)
    out.append(c)

    c = Case("revision-differs", "The cloud's file for A/1 has the device's name for it (same global count, store and revision) but other contents: another title for note n1. The original never reads a file whose name it holds, so this device keeps its A/1 and the others apply the cloud's.",
             "device-state.md 5.6 (differingRevisions); repair.md 8.2")
    cloud_a1 = base_events()[2]
    cloud_a1.changes[0].props = [Prop("title", 0, ("string", "First, edited elsewhere"))]
    c.cloud_events = c.cloud_events[:2] + [cloud_a1]
    out.append(c)

    c = Case("baseline-replaced", "Another device rebased: the cloud's only baseline is B's new one, not the leech baseline the device's store was built from. At its next merge the device imports it and integrates in full.",
             "device-state.md 5.6 (otherBaselines); repair.md 8.3")
    rebased = extra("B rebased baseline", 3, 0, {STORE_A: 1}, T0 + 900, [
        Change("Folder", uid("folder f1"), 100, [Prop("name", 0, ("string", "Inbox")), Prop("notes", 2, added=[n1, uid("note n2"), n3])])],
        etype=100, store=STORE_B)
    rebased.revisions = {STORE_A: 1, STORE_B: 0}
    c.cloud_events = [e for e in c.cloud_events if e.type != 100] + [rebased]
    out.append(c)

    c = Case("missing-data-file", "A/1's object change references the data file of note n3's photo (a CDEDataFile row and the filename in its property change), but the file is in neither data/ nor newdata/. The cloud's data/ has it.",
             "device-state-notes.md 1 (data/, newdata/)")
    c.data = {}
    out.append(c)
    return out


# ---------------------------------------------------------------------------------------------
# Writing a case


def write_files(folder, files):
    os.makedirs(folder, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(folder, name), "wb") as handle:
            handle.write(data)


def write_store(path, events, wal_events):
    """Writes events.sqlite (and events.sqlite-wal when wal_events is not empty). Returns the
    object-change rows written, as (event uid, change index, Z_PK)."""
    work = tempfile.mkdtemp(prefix="device-fixture-")
    try:
        store = os.path.join(work, "events.sqlite")
        db = sqlite3.connect(store, isolation_level=None)
        db.execute("PRAGMA page_size=4096")  # as in the real stores; both before the file exists
        db.execute("PRAGMA auto_vacuum=2")  # incremental, as the real stores (and _NSAutoVacuumLevel "2")
        db.execute("PRAGMA journal_mode=WAL")  # as Core Data's stores are (the real ones' header says WAL)
        db.execute("BEGIN")
        create_schema(db)
        writer = StoreWriter(db)
        for event in events:
            writer.add(event)
        db.execute("COMMIT")
        db.close()  # the last connection checkpoints the WAL into the main file and removes it
        if wal_events:
            db = sqlite3.connect(store, isolation_level=None)
            db.execute("PRAGMA wal_autocheckpoint=0")
            writer.db = db
            db.execute("BEGIN")
            for event in wal_events:
                writer.add(event)
            db.execute("COMMIT")
            # copy while this connection holds the WAL: the main file has not been checkpointed
            shutil.copyfile(store, path)
            shutil.copyfile(store + "-wal", path + "-wal")
            db.close()
            normalise_wal(path + "-wal")
        else:
            shutil.copyfile(store, path)
        return writer.rows
    finally:
        shutil.rmtree(work)


def write_case(case, out):
    folder = os.path.join(out, case.name)
    if os.path.exists(folder):
        shutil.rmtree(folder)
    ensemble = os.path.join(folder, "eventdata", ENSEMBLE)
    os.makedirs(ensemble)
    for sub in ("data", "newdata"):
        os.makedirs(os.path.join(ensemble, sub))
    rows = write_store(os.path.join(ensemble, "events.sqlite"), case.events, case.wal_events)
    write_files(os.path.join(ensemble, "data"), case.data)
    write_files(os.path.join(ensemble, "newdata"), case.newdata)
    metadata = {
        "persistentStoreIdentifier": STORE_A,
        "cloudFileSystemIdentity": keyed_archive(case.identity),
        "incompleteEventIdentifiers": case.incomplete,
        "verifiesStoreRegistrationInCloud": case.verifies,
    }
    if case.baseline_used is not None:
        metadata["identifierOfBaselineUsedToConstructStore"] = case.baseline_used
    with open(os.path.join(ensemble, "store.plist"), "wb") as handle:
        handle.write(plistlib.dumps(metadata, fmt=plistlib.FMT_XML, sort_keys=True))
    cache = os.path.join(folder, "eventdata", "transitcache", ENSEMBLE)
    write_files(os.path.join(cache, "upload"), case.upload)
    write_files(os.path.join(cache, "download"), case.download)
    if case.has_cloud:
        cloud = os.path.join(folder, "cloud", ENSEMBLE)
        for sub in ("stores", "events", "baselines", "data"):
            os.makedirs(os.path.join(cloud, sub))
        write_files(os.path.join(cloud, "stores"), {s: registration(s) for s in case.registered})
        for event in case.cloud_events:
            with open(os.path.join(cloud, event.cloud_name()), "wb") as handle:
                handle.write(event_file(event))
        write_files(os.path.join(cloud, "data"), case.cloud_data)
    document = {"name": case.name, "description": case.description, "rule": case.rule,
                "ensemble": ENSEMBLE, "device": "eventdata", "cloud": "cloud" if case.has_cloud else None,
                "backendIdentityNow": case.identity_now}
    with open(os.path.join(folder, "case.json"), "w", encoding="utf-8") as handle:
        handle.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    os.makedirs(os.path.join(folder, "expected"))
    with open(os.path.join(folder, "expected", "device-state.json"), "w", encoding="utf-8") as handle:
        handle.write(json.dumps(expected_facts(case, rows), indent=2, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------------------------------------
# Expected facts (Spec/device-state.md 5), from the case's data


def most_recent_baseline(events):
    baselines = [e for e in events if e.type == 100]
    if not baselines:
        return None
    return max(baselines, key=lambda e: (e.gc, e.timestamp, e.store)).uid


def expected_facts(case, rows):
    all_events = case.events + case.wal_events
    pk_of = {(event_uid, index): pk for event_uid, index, pk in rows}
    events = []
    for event in sorted(all_events, key=lambda e: (e.gc, e.store, e.revision, e.uid)):
        entry = {"uniqueIdentifier": event.uid, "type": event.type, "globalCount": event.gc,
                 "storeIdentifier": event.store, "revision": event.revision,
                 "revisionsByStoreIdentifier": dict(sorted(event.revisions.items())),
                 "timestamp": repr(float(event.timestamp)), "objectChanges": len(event.changes),
                 "onlyInWal": event in case.wal_events}
        entry["changesByEntity"] = event.v2().get("changesByEntity", {})
        events.append(entry)
    complete = [e for e in all_events if e.type != 0]
    stores = {}
    for event in complete:
        if event.type == 100:
            continue
        entry = stores.setdefault(event.store, {"events": 0, "firstRevision": event.revision, "lastRevision": event.revision})
        entry["events"] += 1
        entry["firstRevision"] = min(entry["firstRevision"], event.revision)
        entry["lastRevision"] = max(entry["lastRevision"], event.revision)
    listed = case.incomplete
    incomplete = []
    for event in all_events:
        if event.type == 0 or event.uid in listed:
            incomplete.append({"uniqueIdentifier": event.uid, "inStore": True, "listed": event.uid in listed,
                               "mandatory": listed.get(event.uid, False)})
    for identifier in listed:
        if identifier not in [e.uid for e in all_events]:
            incomplete.append({"uniqueIdentifier": identifier, "inStore": False, "listed": True, "mandatory": listed[identifier]})
    incomplete.sort(key=lambda item: item["uniqueIdentifier"])
    referenced = sorted({name for e in all_events for ch in e.changes for name in ch.data_files})
    present = set(case.data) | set(case.newdata)
    damaged = []
    for event in all_events:
        for index, change in enumerate(event.changes):
            if change.damaged is not None:
                damaged.append({"table": "ZCDEOBJECTCHANGE", "primaryKey": pk_of[(event.uid, index)],
                                "column": "ZPROPERTYCHANGEVALUES", "event": event.uid, "entity": change.entity,
                                "globalIdentifier": change.gid, "code": "archive.not-keyed-archive", "pointer": "/$archiver"})
    damaged.sort(key=lambda item: (item["table"], item["primaryKey"]))
    facts = {
        "ensemble": ENSEMBLE,
        "storeIdentifier": STORE_A,
        "backendIdentity": {"archived": True, "value": case.identity},
        "verifiesStoreRegistrationInCloud": case.verifies,
        "baselineUsedToConstructStore": case.baseline_used,
        "mostRecentBaseline": most_recent_baseline(complete),
        "eventStore": {"modelVersion": "CDEEventStoreModel_2", "walFile": bool(case.wal_events),
                       "rows": {table_of(e): count_rows(all_events, e) for e in ENTITIES}},
        "incompleteEvents": incomplete,
        "events": events,
        "stores": dict(sorted(stores.items())),
        "dataFiles": {"data": sorted(case.data), "newdata": sorted(case.newdata), "referenced": referenced,
                      "missing": [n for n in referenced if n not in present],
                      "unreferenced": sorted(n for n in case.data if n not in referenced)},
        "transitCache": {"upload": sorted(case.upload), "download": sorted(case.download)},
        "damagedArchives": damaged,
    }
    if case.has_cloud:
        cloud_uids = {e.uid for e in case.cloud_events}
        device_uids = {e.uid for e in complete}
        never = [{"uniqueIdentifier": e.uid, "file": e.cloud_name(), "inUploadCache": e.cloud_name().split("/")[1] in case.upload}
                 for e in sorted(complete, key=lambda e: (e.gc, e.uid)) if e.store == STORE_A and e.uid not in cloud_uids]
        missing_import = [{"uniqueIdentifier": e.uid, "file": e.cloud_name(), "inDownloadCache": e.cloud_name().split("/")[1] in case.download}
                          for e in sorted(case.cloud_events, key=lambda e: (e.gc, e.uid)) if e.uid not in device_uids]
        # Baselines of the cloud other than the one the store was built from (none when the
        # device does not say which that was).
        other = [{"uniqueIdentifier": e.uid, "file": e.cloud_name()}
                 for e in sorted(case.cloud_events, key=lambda e: (e.gc, e.uid))
                 if e.type == 100 and case.baseline_used is not None and e.uid != case.baseline_used]
        # Save and merge events of one (store, revision) on both sides whose v2 forms differ;
        # a device event with a damaged archive is not compared (damagedArchives lists it).
        differing = []
        for e in sorted(complete, key=lambda e: (e.store, e.revision, e.uid)):
            if e.type == 100 or any(ch.damaged is not None for ch in e.changes):
                continue
            for c in sorted(case.cloud_events, key=lambda c: c.cloud_name()):
                if c.type != 100 and (c.store, c.revision) == (e.store, e.revision) and c.v2() != e.v2():
                    differing.append({"storeIdentifier": e.store, "revision": e.revision, "uniqueIdentifier": e.uid,
                                      "cloudUniqueIdentifier": c.uid, "file": c.cloud_name(),
                                      "sameName": c.cloud_name() == e.cloud_name()})
        facts["cloud"] = {"registered": STORE_A in case.registered, "neverUploaded": never, "notImported": missing_import,
                          "dataFilesNotInCloud": sorted(n for n in case.data if n not in case.cloud_data),
                          "otherBaselines": other, "differingRevisions": differing}
    else:
        facts["cloud"] = None
    facts["forcedDeleech"] = forced_deleech(case, incomplete)
    return facts


def count_rows(events, entity):
    if entity == "CDEStoreModificationEvent":
        return len(events)
    if entity == "CDEEventRevision":
        return sum(len(e.revisions) for e in events)
    if entity == "CDEObjectChange":
        return sum(len(e.changes) for e in events)
    if entity == "CDEDataFile":
        return sum(len(ch.data_files) for e in events for ch in e.changes)
    return len({(ch.entity, ch.gid) for e in events for ch in e.changes})


def forced_deleech(case, incomplete):
    """Every condition of Spec/device-state-notes.md 4 that holds, in code order. 202 only when
    the case gives the backend's current token; 205 only when there is a cloud folder."""
    found = []
    if case.identity_now is not None and case.identity_now != case.identity:
        found.append({"code": 202, "reason": "cloud identity changed",
                      "evidence": {"storedIdentity": case.identity, "currentIdentity": case.identity_now}})
    mandatory = [item["uniqueIdentifier"] for item in incomplete if item["mandatory"]]
    if mandatory:
        found.append({"code": 203, "reason": "mandatory incomplete event", "evidence": {"mandatoryIncompleteEvents": mandatory}})
    if case.has_cloud and case.verifies and STORE_A not in case.registered:
        found.append({"code": 205, "reason": "store unregistered",
                      "evidence": {"registrationFile": "stores/" + STORE_A, "present": False,
                                   "verifiesStoreRegistrationInCloud": True}})
    return found


# ---------------------------------------------------------------------------------------------
# --check: re-read every written case with sqlite3 and plistlib


def stage(store, with_wal):
    work = tempfile.mkdtemp(prefix="device-check-")
    shutil.copyfile(store, os.path.join(work, "events.sqlite"))
    if with_wal and os.path.exists(store + "-wal"):
        shutil.copyfile(store + "-wal", os.path.join(work, "events.sqlite-wal"))
    return work


def unarchive(blob):
    archive = plistlib.loads(blob)
    if not isinstance(archive, dict) or archive.get("$archiver") != "NSKeyedArchiver":
        raise ValueError("archive.not-keyed-archive")
    objects = archive["$objects"]

    def value(ref):
        item = objects[ref.data]
        if ref.data == 0:
            return None
        if isinstance(item, dict):
            name = objects[item["$class"].data]["$classname"]
            if name in ("NSMutableArray", "NSArray", "NSMutableSet", "NSSet"):
                return [value(r) for r in item["NS.objects"]]
            if name in ("NSMutableDictionary", "NSDictionary"):
                return {value(k): value(v) for k, v in zip(item["NS.keys"], item["NS.objects"])}
            if name == "NSDate":
                return ("date", item["NS.time"])
            if name == "CDEPropertyChangeValue":
                return {k: (value(v) if isinstance(v, plistlib.UID) else v) for k, v in item.items() if k != "$class"}
            raise ValueError(name)
        return item

    return value(archive["$top"]["root"])


def read_store(store, with_wal=True):
    work = stage(store, with_wal)
    try:
        db = sqlite3.connect(os.path.join(work, "events.sqlite"))
        assert open(store, "rb").read(20)[18:20] == b"\x02\x02", "not in WAL mode"
        assert db.execute("PRAGMA page_size").fetchone()[0] == 4096 and db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2, \
            "page size or auto-vacuum"
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "integrity check"
        numbers = {name: number for number, name in db.execute("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY")}
        assert sorted(numbers, key=str.lower) == ENTITIES and [numbers[e] for e in ENTITIES] == [1, 2, 3, 4, 5]
        for entity in ENTITIES:
            table = table_of(entity)
            columns = [row[1] for row in db.execute("PRAGMA table_info(%s)" % table)]
            assert columns == ["Z_PK", "Z_ENT", "Z_OPT"] + [c for c, _ in TABLES[entity]], (table, columns)
            top = db.execute("SELECT MAX(Z_PK) FROM %s" % table).fetchone()[0] or 0
            assert db.execute("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME=?", (entity,)).fetchone()[0] == top
            assert db.execute("SELECT COUNT(*) FROM %s WHERE Z_ENT != ?" % table, (numbers[entity],)).fetchone()[0] == 0
        plist = plistlib.loads(db.execute("SELECT Z_PLIST FROM Z_METADATA").fetchone()[0])
        assert sorted(plist["NSStoreModelVersionHashes"]) == sorted(ENTITIES)
        rows = {}
        for entity in ENTITIES:
            table = table_of(entity)
            cursor = db.execute("SELECT * FROM %s ORDER BY Z_PK" % table)
            names = [d[0] for d in cursor.description]
            rows[entity] = {r[0]: dict(zip(names, r)) for r in cursor}
        db.close()
        return rows
    finally:
        shutil.rmtree(work)


def facts_from_store(rows):
    revisions, events = rows["CDEEventRevision"], rows["CDEStoreModificationEvent"]
    out = {}
    for pk, event in events.items():
        own = revisions[event["ZEVENTREVISION"]]
        assert own["ZSTOREMODIFICATIONEVENT"] == pk
        revision_set = {own["ZPERSISTENTSTOREIDENTIFIER"]: own["ZREVISIONNUMBER"]}
        for other in revisions.values():
            if other["ZSTOREMODIFICATIONEVENTFOROTHERSTORES"] == pk:
                revision_set[other["ZPERSISTENTSTOREIDENTIFIER"]] = other["ZREVISIONNUMBER"]
        changes, damaged = [], []
        for cpk, change in rows["CDEObjectChange"].items():
            if change["ZSTOREMODIFICATIONEVENT"] != pk:
                continue
            gid = rows["CDEGlobalIdentifier"][change["ZGLOBALIDENTIFIER"]]
            assert gid["ZNAMEOFENTITY"] == change["ZNAMEOFENTITY"]
            files = sorted(f["ZFILENAME"] for f in rows["CDEDataFile"].values() if f["ZOBJECTCHANGE"] == cpk)
            try:
                props = unarchive(change["ZPROPERTYCHANGEVALUES"])
            except ValueError:
                damaged.append(cpk)
                props = None
            changes.append((change["ZNAMEOFENTITY"], gid["ZGLOBALIDENTIFIER"], change["ZTYPE"], props, files))
        out[event["ZUNIQUEIDENTIFIER"]] = {"type": event["ZTYPE"], "globalCount": event["ZGLOBALCOUNT"],
                                           "storeIdentifier": own["ZPERSISTENTSTOREIDENTIFIER"],
                                           "revision": own["ZREVISIONNUMBER"], "timestamp": repr(float(event["ZTIMESTAMP"])),
                                           "revisionsByStoreIdentifier": dict(sorted(revision_set.items())),
                                           "changes": changes, "damaged": damaged}
    return out


def v2_props_from_archive(props):
    out = []
    for p in props:
        item = {"propertyName": p["propertyName"], "type": p["type"]}
        if p["type"] == 0:
            if p["filename"] is not None:
                item["filename"] = p["filename"]
            else:
                item["value"] = v2_value(p["value"] if isinstance(p["value"], tuple) or p["value"] is None else
                                         (("string" if isinstance(p["value"], str) else "data" if isinstance(p["value"], bytes) else "integer"), p["value"]))
        elif p["type"] == 1:
            item["relatedIdentifier"] = p["relatedIdentifier"]
        else:
            item["addedIdentifiers"] = p["addedIdentifiers"] or []
            item["removedIdentifiers"] = p["removedIdentifiers"] or []
        out.append(item)
    return out


def check_case(folder):
    problems = []
    expected = json.load(open(os.path.join(folder, "expected", "device-state.json"), encoding="utf-8"))
    case = json.load(open(os.path.join(folder, "case.json"), encoding="utf-8"))
    ensemble = os.path.join(folder, "eventdata", case["ensemble"])
    store = os.path.join(ensemble, "events.sqlite")
    before = {n: open(os.path.join(ensemble, n), "rb").read() for n in os.listdir(ensemble) if n.startswith("events.sqlite")}
    rows = read_store(store)
    found = facts_from_store(rows)
    if {table_of(e): len(rows[e]) for e in ENTITIES} != expected["eventStore"]["rows"]:
        problems.append("row counts")
    if os.path.exists(store + "-wal") != expected["eventStore"]["walFile"]:
        problems.append("-wal file")
    after = {n: open(os.path.join(ensemble, n), "rb").read() for n in os.listdir(ensemble) if n.startswith("events.sqlite")}
    if before != after:
        problems.append("reading changed the device folder")
    main_only = facts_from_store(read_store(store, with_wal=False))
    for event in expected["events"]:
        got = found.get(event["uniqueIdentifier"])
        if got is None:
            problems.append("event %s not in the store" % event["uniqueIdentifier"])
            continue
        for key in ("type", "globalCount", "storeIdentifier", "revision", "timestamp", "revisionsByStoreIdentifier"):
            if got[key] != event[key]:
                problems.append("event %s: %s %r != %r" % (event["uniqueIdentifier"], key, got[key], event[key]))
        if len(got["changes"]) != event["objectChanges"]:
            problems.append("event %s: object changes" % event["uniqueIdentifier"])
        rebuilt = {}
        for entity, gid, ctype, props, files in got["changes"]:
            item = {"globalIdentifier": gid, "type": ctype}
            if props:
                item["properties"] = v2_props_from_archive(props)
            if files:
                item["dataFiles"] = files
            rebuilt.setdefault(entity, []).append(item)
        if rebuilt != event["changesByEntity"]:
            problems.append("event %s: changes differ from the archives" % event["uniqueIdentifier"])
        if (event["uniqueIdentifier"] in main_only) == event["onlyInWal"]:
            problems.append("event %s: main file alone %s it" % (event["uniqueIdentifier"], "holds" if event["onlyInWal"] else "lacks"))
    if len(found) != len(expected["events"]):
        problems.append("the store holds %d events, expected %d" % (len(found), len(expected["events"])))
    damaged = sorted(pk for e in found.values() for pk in e["damaged"])
    if damaged != sorted(d["primaryKey"] for d in expected["damagedArchives"]):
        problems.append("damaged archives %r" % damaged)
    metadata = plistlib.load(open(os.path.join(ensemble, "store.plist"), "rb"))
    if metadata["persistentStoreIdentifier"] != expected["storeIdentifier"]:
        problems.append("store identifier")
    if unarchive(metadata["cloudFileSystemIdentity"]) != expected["backendIdentity"]["value"]:
        problems.append("backend identity")
    if metadata.get("identifierOfBaselineUsedToConstructStore") != expected["baselineUsedToConstructStore"]:
        problems.append("baseline used")
    listed = metadata["incompleteEventIdentifiers"]
    for item in expected["incompleteEvents"]:
        if item["listed"] != (item["uniqueIdentifier"] in listed) or item["mandatory"] != listed.get(item["uniqueIdentifier"], False):
            problems.append("incomplete event %s" % item["uniqueIdentifier"])
        if item["inStore"] and found[item["uniqueIdentifier"]]["type"] != 0 and not item["listed"]:
            problems.append("incomplete event %s has a type" % item["uniqueIdentifier"])
    type0 = sorted(u for u, e in found.items() if e["type"] == 0)
    if type0 != sorted(i["uniqueIdentifier"] for i in expected["incompleteEvents"] if i["inStore"]):
        problems.append("type-0 events %r" % type0)
    listing = lambda *parts: sorted(os.listdir(os.path.join(*parts))) if os.path.isdir(os.path.join(*parts)) else []
    if listing(ensemble, "data") != expected["dataFiles"]["data"] or listing(ensemble, "newdata") != expected["dataFiles"]["newdata"]:
        problems.append("data files")
    referenced = sorted({f for e in found.values() for ch in e["changes"] for f in ch[4]})
    if referenced != expected["dataFiles"]["referenced"]:
        problems.append("referenced data files %r" % referenced)
    cache = os.path.join(folder, "eventdata", "transitcache", case["ensemble"])
    if listing(cache, "upload") != expected["transitCache"]["upload"] or listing(cache, "download") != expected["transitCache"]["download"]:
        problems.append("transit cache")
    if case["cloud"]:
        cloud = os.path.join(folder, case["cloud"], case["ensemble"])
        names = {"events/" + n for n in listing(cloud, "events")} | {"baselines/" + n for n in listing(cloud, "baselines")}
        cloud_uids = {}
        documents = {}
        for name in names:
            document = json.load(open(os.path.join(cloud, name), encoding="utf-8"))
            cloud_uids[document["uniqueIdentifier"]] = name
            documents[name] = document
        built_from = metadata.get("identifierOfBaselineUsedToConstructStore")
        other = sorted(n for n, d in documents.items() if d["type"] == 100 and built_from is not None and d["uniqueIdentifier"] != built_from)
        if other != sorted(i["file"] for i in expected["cloud"]["otherBaselines"]):
            problems.append("other baselines %r" % other)
        # Revisions on both sides: the cloud file against the store's rows read back (as the
        # event list above checked them), changes and header alike.
        by_uid = {e["uniqueIdentifier"]: e for e in expected["events"]}
        differing = []
        for uid_, got in found.items():
            if got["type"] in (0, 100) or got["damaged"]:
                continue
            for name, document in documents.items():
                if document["type"] == 100 or document["storeIdentifier"] != got["storeIdentifier"]:
                    continue
                if document["revisionsByStoreIdentifier"].get(document["storeIdentifier"]) != got["revision"]:
                    continue
                mine = by_uid[uid_]
                same = (document["uniqueIdentifier"] == uid_ and document["globalCount"] == got["globalCount"]
                        and document["revisionsByStoreIdentifier"] == got["revisionsByStoreIdentifier"]
                        and document.get("changesByEntity", {}) == mine["changesByEntity"]
                        and float(document["timestamp"]) == float(got["timestamp"]) and document["type"] == got["type"])
                if not same:
                    differing.append(name)
        if sorted(differing) != sorted(i["file"] for i in expected["cloud"]["differingRevisions"]):
            problems.append("differing revisions %r" % differing)
        never = [e for e, v in found.items() if v["type"] != 0 and v["storeIdentifier"] == expected["storeIdentifier"] and e not in cloud_uids]
        if sorted(never) != sorted(i["uniqueIdentifier"] for i in expected["cloud"]["neverUploaded"]):
            problems.append("never uploaded %r" % never)
        not_imported = [u for u in cloud_uids if u not in found or found[u]["type"] == 0]
        if sorted(not_imported) != sorted(i["uniqueIdentifier"] for i in expected["cloud"]["notImported"]):
            problems.append("not imported %r" % not_imported)
        registered = expected["storeIdentifier"] in listing(cloud, "stores")
        if registered != expected["cloud"]["registered"]:
            problems.append("registration")
    present = set(listing(ensemble, "data")) | set(listing(ensemble, "newdata"))
    if [f for f in referenced if f not in present] != expected["dataFiles"]["missing"]:
        problems.append("missing data files")
    # the forced-deleech conditions, from the files (Spec/device-state-notes.md 4)
    codes = []
    identity = unarchive(metadata["cloudFileSystemIdentity"])
    if case["backendIdentityNow"] is not None and case["backendIdentityNow"] != identity:
        codes.append(202)
    if any(listed.values()):
        codes.append(203)
    if case["cloud"] and metadata.get("verifiesStoreRegistrationInCloud") and not registered:
        codes.append(205)
    if codes != [item["code"] for item in expected["forcedDeleech"]]:
        problems.append("forced deleech %r" % codes)
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "Fixtures", "device"))
    parser.add_argument("--check", action="store_true", help="re-read the written cases and compare with their expected facts")
    arguments = parser.parse_args()
    if arguments.check:
        failed = 0
        for name in sorted(os.listdir(arguments.out)):
            folder = os.path.join(arguments.out, name)
            if not os.path.isdir(folder):
                continue
            try:
                problems = check_case(folder)
            except (AssertionError, KeyError, ValueError, OSError, sqlite3.Error) as error:
                problems = ["%s %s" % (type(error).__name__, error)]
            print("%-20s %s" % (name, "ok" if not problems else "; ".join(problems)))
            failed += bool(problems)
        sys.exit(1 if failed else 0)
    os.makedirs(arguments.out, exist_ok=True)
    for case in cases():
        write_case(case, arguments.out)
        print("wrote", os.path.relpath(os.path.join(arguments.out, case.name), ROOT))


if __name__ == "__main__":
    main()
