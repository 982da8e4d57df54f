#!/usr/bin/env python3
"""Writes Fixtures/ticds/: synthetic TICoreDataSync remote folders and the facts a reader must
find in them, independently of the toolkit (issue 39, "Fixtures and tests").

Each case is `Fixtures/ticds/<case>/folder/` (the remote tree a TICoreDataSync app keeps in its
Dropbox or shared folder: `<app id>/ReadMe.txt`, `ClientDevices/`, `Encryption/`, `Information/`,
`Documents/<doc id>/...`) and `Fixtures/ticds/<case>/facts.json`: the ground truth in a neutral
form (Fixtures/ticds/README.md describes every field and the framework source file each rule
rests on). Every fact is derived here from the data this script wrote, never from the toolkit.

What is written, and how:
- property lists with plistlib (XML as NSDictionary's writeToFile: writes them; one client's
  deviceInfo.plist as a binary property list, which the framework also reads);
- NSKeyedArchiver archives (the password test file, the IntegrityKey file, the change sets'
  transformable payloads) laid out by hand with plistlib.UID references;
- change sets in Core Data's SQLite layout of the TICDSSyncChange model (the form the
  framework's feature/iCloudBasedSync branch reads), and one "binary-store" set: bytes that are not
  SQLite (the main branches write Apple's binary store, whose layout is not public: the bytes here
  are synthetic and only stand for "not SQLite");
- WholeStore.ticdsync: a Core Data SQLite store of the Notebook example model, zipped in two cases;
  AppliedSyncChangeSets.ticdsync: a Core Data SQLite store of the TICDSSyncChangeSet model;
- FZACryptor files (key = SHA-256(password UTF-16LE + salt) and 7,499 more SHA-256 rounds; file =
  IV, the AES-256-CBC (no padding) encryption of file key + file IV under the key, the body in
  AES-256-CBC with PKCS#7 under the file key, HMAC-SHA256 keyed with the key over all of that).

Git keeps no modification times, and the framework orders change sets by the remote file's
modification time, so every file's time is in facts.json (`fileDates`); this script sets them with
os.utime when it writes, and a test must set them again on its copy of a checkout.

Identifiers, keys, IVs and times come from a seed (39 unless --seed says otherwise), so a rerun with
the same SQLite and zlib libraries writes the same bytes.

Usage: scripts/ticds-generate.py [--out Fixtures/ticds] [--seed N]   write every case
       scripts/ticds-generate.py --check                  write every case into a temporary folder,
                                                          compare it byte for byte with
                                                          Fixtures/ticds, re-read every file with
                                                          sqlite3/plistlib/zipfile against the facts,
                                                          validate every facts.json against
                                                          Fixtures/ticds/facts.schema.json (when
                                                          jsonschema is installed), check that
                                                          row-order replays differ from the
                                                          framework's, and decrypt every FZACryptor
                                                          body with
                                                          `openssl enc` (and with --slow, derive a key
                                                          with 7,500 `openssl dgst` runs)
Needs Python 3 and the `cryptography` package; --check also needs the `openssl` command.
"""
import argparse
import copy
import datetime
import hashlib
import hmac
import io
import json
import os
import plistlib
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import uuid
import zipfile

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "Fixtures", "ticds")
TEMPLATES = os.path.join(ROOT, "Fixtures", "external", "ticoredatasync", "05 File Structure")
SEED = 39
UNIX_2001 = 978307200  # seconds from 1970-01-01 to 2001-01-01, Core Data's reference date
BASE = 1793610000  # 2026-11-02 09:00:00 UTC: the first event of every case
NOW = 1795176000  # 2026-11-20 12:00:00 UTC: the moment a reader of the folder is assumed to look
APP_ID = "com.example.TICDSNotebook"
SQLITE_MAGIC = b"SQLite format 3\x00"


# ---------------------------------------------------------------------------------------------
# Deterministic randomness


def det_bytes(label, length):
    """Bytes that depend only on the seed and the label."""
    return hashlib.shake_256(("%d/%s" % (SEED, label)).encode("utf-8")).digest(length)


def unique_string(label):
    """Like NSProcessInfo.globallyUniqueString (TICDSUtilities uuidString): a UUID, a process
    number and a 64-bit counter in hex."""
    raw = det_bytes("guid/" + label, 26)
    text = str(uuid.UUID(bytes=raw[:16], version=4)).upper()
    pid = 1000 + int.from_bytes(raw[16:18], "big") % 60000
    return "%s-%d-%016X" % (text, pid, int.from_bytes(raw[18:26], "big") >> 12)


def set_identifier(created_unix, label):
    """A change set id as TICDSPostSynchronizationOperation names it: the reference-date time with
    the number format 0000000000.000000, '-', a unique string."""
    return "%017.6f-%s" % (created_unix - UNIX_2001, unique_string("set/" + label))


# ---------------------------------------------------------------------------------------------
# NSKeyedArchiver archives, written the way Apple's archiver lays them out


class Archiver:
    def __init__(self):
        self.objects = ["$null"]
        self.unique = {}
        self.classes = {}

    def class_uid(self, chain):
        if chain not in self.classes:
            self.objects.append({"$classname": chain[0], "$classes": list(chain)})
            self.classes[chain] = len(self.objects) - 1
        return plistlib.UID(self.classes[chain])

    def encode(self, value):
        if value is None:
            return plistlib.UID(0)
        if isinstance(value, (str, int, float, bytes)) and not isinstance(value, bool):
            key = (type(value).__name__, value)
            if key not in self.unique:  # each equal string or number is stored once
                self.objects.append(value)
                self.unique[key] = len(self.objects) - 1
            return plistlib.UID(self.unique[key])
        if isinstance(value, dict):
            index = len(self.objects)
            self.objects.append(None)
            keys = sorted(value)
            body = {"NS.keys": [self.encode(k) for k in keys], "NS.objects": [self.encode(value[k]) for k in keys]}
            body["$class"] = self.class_uid(("NSMutableDictionary", "NSDictionary", "NSObject"))
            self.objects[index] = body
            return plistlib.UID(index)
        raise ValueError("cannot archive %r" % (value,))


def keyed_archive(root):
    archiver = Archiver()
    top = archiver.encode(root)
    return plistlib.dumps({"$archiver": "NSKeyedArchiver", "$version": 100000, "$objects": archiver.objects,
                           "$top": {"root": top}}, fmt=plistlib.FMT_BINARY, sort_keys=True)


def unarchive(data):
    """Reads back what keyed_archive writes (used by --check only)."""
    archive = plistlib.loads(data)
    objects = archive["$objects"]

    def value(ref):
        item = objects[ref.data]
        if item == "$null":
            return None
        if isinstance(item, dict):
            classname = objects[item["$class"].data]["$classname"]
            if classname in ("NSDictionary", "NSMutableDictionary"):
                return {value(k): value(v) for k, v in zip(item["NS.keys"], item["NS.objects"])}
            raise ValueError(classname)
        return item

    return value(archive["$top"]["root"])


# ---------------------------------------------------------------------------------------------
# FZACryptor (FZACryptor.m, FZAKeyManager.m)


def derive_key(password, salt):
    digest = hashlib.sha256(password.encode("utf-16-le") + salt).digest()
    for _ in range(7499):
        digest = hashlib.sha256(digest).digest()
    return digest


def fza_encrypt(key, plain, label):
    top_iv = det_bytes("iv/" + label, 16)
    file_key_iv = det_bytes("filekey/" + label, 48)
    wrap = Cipher(algorithms.AES(key), modes.CBC(top_iv)).encryptor()
    wrapped = wrap.update(file_key_iv) + wrap.finalize()
    padder = padding.PKCS7(128).padder()
    padded = padder.update(plain) + padder.finalize()
    body_cipher = Cipher(algorithms.AES(file_key_iv[:32]), modes.CBC(file_key_iv[32:])).encryptor()
    body = body_cipher.update(padded) + body_cipher.finalize()
    head = top_iv + wrapped + body
    return head + hmac.new(key, head, hashlib.sha256).digest()


def fza_decrypt(key, data):
    """Returns the plain bytes, or raises ValueError naming the reason (--check only)."""
    if len(data) < 16 + 48 + 16 + 32 or (len(data) - 16 - 48 - 32) % 16:
        raise ValueError("truncated")
    if not hmac.compare_digest(hmac.new(key, data[:-32], hashlib.sha256).digest(), data[-32:]):
        raise ValueError("hmac")
    unwrap = Cipher(algorithms.AES(key), modes.CBC(data[:16])).decryptor()
    file_key_iv = unwrap.update(data[16:64]) + unwrap.finalize()
    body = Cipher(algorithms.AES(file_key_iv[:32]), modes.CBC(file_key_iv[32:])).decryptor()
    padded = body.update(data[64:-32]) + body.finalize()
    unpadder = padding.PKCS7(128).unpadder()
    return unpadder.update(padded) + unpadder.finalize()


# ---------------------------------------------------------------------------------------------
# Core Data SQLite stores (the layout of Spec/device-state.md 2: entities numbered in
# case-insensitive name order, one Z<ROOT> table each starting Z_PK, Z_ENT, Z_OPT, columns grouped
# integers, dates, strings, blobs in name order, join tables Z_<a><REL>)

NOTEBOOK = {  # Examples/Notebook: Note (title, content, ticdsSyncID, tags <->> Tag.notes), Tag (name, ticdsSyncID)
    "Note": ["content", "ticdsSyncID", "title"],
    "Tag": ["name", "ticdsSyncID"],
}
NOTEBOOK_TO_MANY = {("Note", "tags"): ("Tag", "notes"), ("Tag", "notes"): ("Note", "tags")}
PAGE_SIZE = 512  # the smallest SQLite allows (Core Data uses 4096): keeps the kit small


def version_hashes(model, entities):
    # Synthetic: the real hashes are Core Data's digest of each entity, which needs Apple's code.
    return {name: hashlib.sha256(("%s/%s" % (model, name)).encode()).digest() for name in entities}


def metadata_plist(model, entities):
    return plistlib.dumps({
        "NSPersistenceFrameworkVersion": 407,
        "NSStoreModelVersionHashes": version_hashes(model, entities),
        "NSStoreModelVersionHashesVersion": 3,
        "NSStoreModelVersionIdentifiers": [""],
        "NSStoreType": "SQLite",
        "_NSAutoVacuumLevel": "2",
    }, fmt=plistlib.FMT_BINARY, sort_keys=True)


def sqlite_bytes(build):
    """Runs build(db) on a new database in a private folder and returns the file's bytes."""
    work = tempfile.mkdtemp(prefix="ticds-fixture-")
    try:
        path = os.path.join(work, "store.sqlite")
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA page_size=%d" % PAGE_SIZE)
        db.execute("PRAGMA journal_mode=DELETE")
        db.execute("BEGIN")
        build(db)
        db.execute("COMMIT")
        db.close()
        with open(path, "rb") as handle:
            return handle.read()
    finally:
        shutil.rmtree(work)


def core_data_frame(db, model, entities, maxima, store_uuid):
    db.execute("CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
    db.execute("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
    for number, name in enumerate(entities, start=1):
        db.execute("INSERT INTO Z_PRIMARYKEY VALUES (?, ?, 0, ?)", (number, name, maxima[name]))
    db.execute("INSERT INTO Z_METADATA VALUES (1, ?, ?)", (store_uuid, metadata_plist(model, entities)))


def change_set_store(changes, store_uuid):
    """A change set: TICDSSyncChange rows in the given (row) order."""
    def build(db):
        db.execute("CREATE TABLE ZTICDSSYNCCHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, "
                   "ZCHANGETYPE INTEGER, ZLOCALTIMESTAMP TIMESTAMP, ZOBJECTENTITYNAME VARCHAR, ZOBJECTSYNCID VARCHAR, "
                   "ZRELATEDOBJECTENTITYNAME VARCHAR, ZRELEVANTKEY VARCHAR, ZCHANGEDATTRIBUTES BLOB, "
                   "ZCHANGEDRELATIONSHIPS BLOB )")
        for pk, change in enumerate(changes, start=1):
            db.execute("INSERT INTO ZTICDSSYNCCHANGE VALUES (?, 1, 1, ?, ?, ?, ?, ?, ?, ?, ?)", (
                pk, change.type, change.timestamp - UNIX_2001, change.entity, change.sync_id, change.related_entity,
                change.key, None if change.attributes is None else keyed_archive(change.attributes),
                None if change.relationship is None else keyed_archive(change.relationship)))
        core_data_frame(db, "TICDSSyncChange", ["TICDSSyncChange"], {"TICDSSyncChange": len(changes)}, store_uuid)
    return sqlite_bytes(build)


def applied_sets_store(rows, store_uuid):
    """AppliedSyncChangeSets.ticdsync: TICDSSyncChangeSet rows (id, client, creation, application)."""
    def build(db):
        db.execute("CREATE TABLE ZTICDSSYNCCHANGESET ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, "
                   "ZCREATIONDATE TIMESTAMP, ZLOCALDATEOFAPPLICATION TIMESTAMP, ZCLIENTIDENTIFIER VARCHAR, "
                   "ZFILENAME VARCHAR, ZSYNCCHANGESETIDENTIFIER VARCHAR )")
        for pk, row in enumerate(rows, start=1):
            db.execute("INSERT INTO ZTICDSSYNCCHANGESET VALUES (?, 1, 1, ?, ?, ?, ?, ?)", (
                pk, row["creationDate"] - UNIX_2001, row["localDateOfApplication"] - UNIX_2001, row["client"],
                row["fileName"], row["id"]))
        core_data_frame(db, "TICDSSyncChangeSet", ["TICDSSyncChangeSet"], {"TICDSSyncChangeSet": len(rows)}, store_uuid)
    return sqlite_bytes(build)


def notebook_store(state, store_uuid):
    """The app's store: Note and Tag rows (primary keys in sync-id order), Z_1TAGS join rows."""
    def build(db):
        db.execute("CREATE TABLE ZNOTE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, "
                   "ZCONTENT VARCHAR, ZTICDSSYNCID VARCHAR, ZTITLE VARCHAR )")
        db.execute("CREATE TABLE ZTAG ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, "
                   "ZNAME VARCHAR, ZTICDSSYNCID VARCHAR )")
        db.execute("CREATE TABLE Z_1TAGS ( Z_1NOTES INTEGER, Z_2TAGS INTEGER, PRIMARY KEY (Z_1NOTES, Z_2TAGS) )")
        db.execute("CREATE INDEX Z_1TAGS_Z_2TAGS_INDEX ON Z_1TAGS (Z_2TAGS, Z_1NOTES)")
        keys = {}
        for number, entity in enumerate(["Note", "Tag"], start=1):
            for pk, sync_id in enumerate(sorted(state[entity]), start=1):
                keys[(entity, sync_id)] = pk
                attributes = state[entity][sync_id]["attributes"]
                values = [attributes.get(name) for name in NOTEBOOK[entity]]
                db.execute("INSERT INTO Z%s VALUES (?, %d, 1, %s)" % (entity.upper(), number, ", ".join("?" * len(values))),
                           [pk] + values)
        for sync_id, note in sorted(state["Note"].items()):
            for tag in note["relationships"]["tags"]:
                db.execute("INSERT INTO Z_1TAGS VALUES (?, ?)", (keys[("Note", sync_id)], keys[("Tag", tag)]))
        core_data_frame(db, "Notebook", ["Note", "Tag"], {e: len(state[e]) for e in ("Note", "Tag")}, store_uuid)
    return sqlite_bytes(build)


def zipped(name, data):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo(name, date_time=(2026, 11, 2, 9, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.create_system = 3
        info.external_attr = 0o100644 << 16
        archive.writestr(info, data)
    return buffer.getvalue()


def binary_store_bytes(label, changes):
    """Stands for a change set in Apple's binary store form. Apple has not published that layout;
    these bytes are synthetic, are not SQLite and not a property list, and a reader can only know
    that only Apple's frameworks read such a file."""
    return b"TICDS-GEN binary store stand-in (not Apple's layout)\n" + det_bytes("binary/" + label, 400 + 37 * len(changes))


# ---------------------------------------------------------------------------------------------
# The model of a history: changes, sets, whole stores


class Change:
    def __init__(self, ctype, entity, sync_id, timestamp, key=None, attributes=None, related_entity=None, relationship=None):
        self.type, self.entity, self.sync_id, self.timestamp = ctype, entity, sync_id, timestamp
        self.key, self.attributes, self.related_entity, self.relationship = key, attributes, related_entity, relationship

    def facts(self, pk):
        return {"pk": pk, "changeType": self.type, "entity": self.entity, "syncID": self.sync_id, "key": self.key,
                "relatedEntity": self.related_entity, "localTimeStamp": self.timestamp,
                "changedAttributes": self.attributes, "changedRelationships": self.relationship}


def insert(entity, sync_id, t, **attributes):
    attributes["ticdsSyncID"] = sync_id
    return Change(1, entity, sync_id, t, attributes=attributes)


def set_attribute(entity, sync_id, t, key, value):
    return Change(2, entity, sync_id, t, key=key, attributes=value)


def add_tag(tag_id, note_id, t):  # only Tag.notes changes are recorded ("notes" < "tags")
    return Change(4, "Tag", tag_id, t, key="notes", related_entity="Note", relationship=note_id)


def remove_tag(tag_id, note_id, t):
    return Change(5, "Tag", tag_id, t, key="notes", related_entity="Note", relationship=note_id)


def delete(entity, sync_id, t):
    return Change(10, entity, sync_id, t)


class ChangeSet:
    def __init__(self, label, client, created, mtime, changes, form="sqlite"):
        self.label, self.client, self.created, self.mtime, self.changes, self.form = label, client, created, mtime, changes, form
        self.id = set_identifier(created, label)
        self.damage = None  # None, "tampered-hmac" or "truncated"


class WholeStore:
    def __init__(self, client, applied, mtime, zipped=False):
        self.client, self.applied, self.mtime, self.zipped = client, applied, mtime, zipped  # applied: set labels


class Client:
    def __init__(self, label, description, user_info=None, plist_format="xml"):
        self.label, self.description, self.user_info, self.format = label, description, user_info, plist_format
        self.id = unique_string("client/" + label)
        self.device_info = True  # False: ClientDevices/<id>/ exists without deviceInfo.plist
        self.devices_folder = True  # False: no ClientDevices/<id>/ at all
        self.registered = BASE - 86400


class Document:
    def __init__(self, label, description, creator, sets, stores, recent):
        self.label, self.description, self.creator = label, description, creator
        self.id = unique_string("document/" + label)
        self.sets, self.stores, self.recent = sets, stores, recent  # recent: client label -> unix
        self.integrity = [(unique_string("integrity/" + label), creator)]  # (key, client label)
        self.temporary = None  # client label with an upload left in TemporaryFiles
        self.deleted_clients = []  # client labels whose deviceInfo sits in the document's DeletedClients


def empty_state():
    return {"Note": {}, "Tag": {}}


ROW_ORDER = False  # --check sets it to show that the cases tell the framework's order from row order


def sorted_changes(changes):
    # TICDSSynchronizationOperation: fetched sorted by changeType then localTimeStamp, applied in
    # changeType order after the conflict check (a stable sort keeps the time order).
    return list(changes) if ROW_ORDER else sorted(changes, key=lambda c: (c.type, c.timestamp))


def apply_change(state, change, warnings, set_label):
    objects = state[change.entity]
    target = objects.get(change.sync_id)

    def warn(kind):
        warnings.append({"kind": kind, "set": set_label, "changeType": change.type, "entity": change.entity,
                         "syncID": change.sync_id, "key": change.key})

    if change.type == 1:  # an insert of an existing sync id updates that object's attributes
        if target is None:
            target = objects[change.sync_id] = {"attributes": {}, "relationships": {}}
            for (entity, name), _ in NOTEBOOK_TO_MANY.items():
                if entity == change.entity:
                    target["relationships"][name] = []
        for name, value in change.attributes.items():
            target["attributes"][name] = value
    elif target is None:
        warn("object-not-found")
    elif change.type == 2:
        target["attributes"][change.key] = change.attributes
    elif change.type in (4, 5):
        related_entity, inverse = NOTEBOOK_TO_MANY[(change.entity, change.key)]
        related = state[related_entity].get(change.relationship)
        if related is None:
            warn("related-object-not-found")
            return
        members = set(target["relationships"][change.key])
        back = set(related["relationships"][inverse])
        if change.type == 4:
            members.add(change.relationship)
            back.add(change.sync_id)
        else:
            members.discard(change.relationship)
            back.discard(change.sync_id)
        target["relationships"][change.key] = sorted(members)
        related["relationships"][inverse] = sorted(back)
    elif change.type == 10:
        for (entity, name), (related_entity, inverse) in NOTEBOOK_TO_MANY.items():
            if entity == change.entity:
                for other in target["relationships"][name]:
                    peer = state[related_entity].get(other)
                    if peer is not None:
                        peer["relationships"][inverse] = [x for x in peer["relationships"][inverse] if x != change.sync_id]
        del objects[change.sync_id]
    else:
        raise ValueError(change.type)


def copy_state(state):
    return json.loads(json.dumps(state))


def framework_order(sets):
    """TICDSSynchronizationOperation: unapplied sets sorted by creationDate (the remote file's
    modification time, TICDSFileManagerBasedPreSynchronizationOperation) then by set id."""
    return sorted(sets, key=lambda s: (s.mtime, s.id))


def replay(document, store, sets_by_label, clients, unreadable):
    """The WholeStore's objects, then every set its client had not applied, in the framework's order.
    Returns the replay facts (with "stoppedAt" at a set the replay cannot read or where the framework
    would pause for a conflict)."""
    state = copy_state(store.objects)
    applied = set(store.applied)
    pending = framework_order([s for s in document.sets if s.label not in applied])
    order = [{"client": clients[s.client].id, "id": s.id, "date": s.mtime} for s in pending]
    warnings = []
    written = {}  # (entity, sync id, key) -> (side, set, value) of the last attribute change applied
    outcome = {"wholeStoreClient": clients[store.client].id, "order": order, "stoppedAt": None, "state": None,
               "warnings": warnings}
    resolved = {"remote": copy_state(state), "local": copy_state(state)}
    conflict = None
    for change_set in pending:
        if conflict is None and (change_set.form == "binary-store" or change_set.label in unreadable):
            outcome["stoppedAt"] = {"kind": "binary-store-set" if change_set.form == "binary-store" else "unreadable-set",
                                    "set": change_set.id, "client": clients[change_set.client].id,
                                    "date": change_set.mtime, "file": sets_by_label[change_set.label]["file"],
                                    "size": sets_by_label[change_set.label]["size"]}
            outcome["stateAtStop"] = state
            return outcome
        side = "local" if change_set.client == store.client else "remote"
        for change in sorted_changes(change_set.changes):
            if change.type == 2:
                key = (change.entity, change.sync_id, change.key)
                earlier = written.get(key)
                if earlier and earlier[0] != side and earlier[2] != change.attributes and conflict is None:
                    local, remote = (change_set, earlier[1]) if side == "local" else (earlier[1], change_set)
                    conflict = {"kind": "conflict", "set": change_set.id, "client": clients[change_set.client].id,
                                "otherSet": earlier[1].id, "otherClient": clients[earlier[1].client].id,
                                "entity": change.entity, "syncID": change.sync_id, "key": change.key,
                                "localSet": local.id, "remoteSet": remote.id,
                                "localValue": change.attributes if side == "local" else earlier[2],
                                "remoteValue": change.attributes if side == "remote" else earlier[2]}
                    outcome["stoppedAt"] = conflict
                    outcome["stateAtStop"] = copy_state(state)
                written[key] = (side, change_set, change.attributes)
        for change in sorted_changes(change_set.changes):
            apply_change(state, change, warnings if conflict is None else [], change_set.id)
        # the two resolutions: a change of the losing side to a key the other side also changed is skipped
        for resolution in ("remote", "local"):
            for change in sorted_changes(change_set.changes):
                if change.type == 2 and side != resolution and conflict is not None:
                    key = (change.entity, change.sync_id, change.key)
                    if key == (conflict["entity"], conflict["syncID"], conflict["key"]):
                        continue
                apply_change(resolved[resolution], change, [], change_set.id)
    if conflict is None:
        outcome["state"] = state
    else:
        outcome["resolved"] = resolved
    return outcome


# ---------------------------------------------------------------------------------------------
# Cases

ANN = ("ann", "Ann's MacBook Pro", {"model": "MacBookPro8,2"}, "xml")
BEN = ("ben", "Ben's iPad", None, "binary")
CAL = ("cal", "Cal's iMac", None, "xml")


def T(minutes):
    return BASE + 60 * minutes


class Case:
    def __init__(self, name, description):
        self.name, self.description = name, description
        self.clients = {}
        self.documents = []
        self.deleted_documents = []  # (label, description, creator label)
        self.password = None
        self.password_to_use = None
        self.damages = []  # (kind, file or a callable of the path table, detail)
        self.same_dates = None  # every file gets this time
        self.original_dates_note = False

    def client(self, spec):
        c = Client(*spec)
        self.clients[c.label] = c
        return c


def notebook_history(prefix, clients=("ann", "ben")):
    """Two clients on one document: Ann creates notes and tags, Ben edits, both tag and untag.
    Within Ann's first set the rows are stored in an order unlike the framework's (relationship
    rows first), and Ben's first set holds two changes of one title, the later one stored first:
    a reader that applies rows in row order gets a different state."""
    a, b = clients
    n1, n2, n3 = ("%s-note-%d" % (prefix, i) for i in (1, 2, 3))
    t1, t2 = ("%s-tag-%d" % (prefix, i) for i in (1, 2))
    n1, n2, n3, t1, t2 = (unique_string(x) for x in (n1, n2, n3, t1, t2))
    sets = [
        ChangeSet(prefix + "/a1", a, T(0), T(0) + 4, [
            add_tag(t1, n1, T(0) + 0.75),
            insert("Note", n1, T(0) + 0.25, title="Groceries", content="milk, eggs"),
            insert("Tag", t1, T(0) + 0.5, name="home"),
            insert("Note", n2, T(0) + 0.375, title="Ideas", content="a shed"),
        ]),
        ChangeSet(prefix + "/b1", b, T(30), T(30) + 6, [
            # two saves before one sync: both changes of the title travel; the later one (stored
            # first here) must win
            set_attribute("Note", n1, T(30) + 0.625, "title", "Groceries (Sun)"),
            set_attribute("Note", n1, T(30) + 0.5, "title", "Groceries (Sat)"),
            insert("Tag", t2, T(30) + 0.25, name="work"),
            add_tag(t2, n2, T(30) + 0.75),
        ]),
        ChangeSet(prefix + "/a2", a, T(60), T(60) + 3, [
            add_tag(t1, n3, T(60) + 0.5),  # stored before the insert of the note it tags
            insert("Note", n3, T(60) + 0.25, title="Call Ben", content="about the shed"),
            remove_tag(t1, n1, T(60) + 0.625),
            set_attribute("Note", n2, T(60) + 0.75, "content", "a shed, a bench"),
        ]),
        ChangeSet(prefix + "/b2", b, T(90), T(90) + 5, [
            delete("Note", n1, T(90) + 0.5),
            set_attribute("Tag", t2, T(90) + 0.25, "name", "office"),
        ]),
    ]
    ids = {"n1": n1, "n2": n2, "n3": n3, "t1": t1, "t2": t2}
    return sets, ids


def standard_document(case, label, description, creator="ann", zipped_store=False):
    sets, ids = notebook_history(label)
    p = label + "/"
    stores = [
        # Ann uploaded her store after her two sets and Ben's first (all three applied, her own too)
        WholeStore("ann", [p + "a1", p + "b1", p + "a2"], T(75), zipped_store),
        # Ben uploaded his after his first set and Ann's first
        WholeStore("ben", [p + "a1", p + "b1"], T(45), False),
    ]
    recent = {"ann": T(75), "ben": T(95)}
    document = Document(label, description, creator, sets, stores, recent)
    document.ids = ids
    case.documents.append(document)
    return document


def second_document(case):
    """A smaller second document: one set each, Ben's store applied both."""
    label = "shopping"
    s1, s2, t1 = (unique_string("%s-%s" % (label, x)) for x in ("note-1", "note-2", "tag-1"))
    sets = [
        ChangeSet(label + "/a1", "ann", T(10), T(10) + 2, [
            insert("Note", s1, T(10) + 0.25, title="Hardware", content="screws"),
            insert("Tag", t1, T(10) + 0.5, name="diy"),
            add_tag(t1, s1, T(10) + 0.75),
        ]),
        ChangeSet(label + "/b1", "ben", T(40), T(40) + 2, [
            insert("Note", s2, T(40) + 0.25, title="Paint", content="white"),
            add_tag(t1, s2, T(40) + 0.5),
        ]),
        ChangeSet(label + "/a2", "ann", T(70), T(70) + 2, [
            set_attribute("Note", s2, T(70) + 0.5, "content", "white, 2 litres"),  # the later save, stored first
            set_attribute("Note", s2, T(70) + 0.25, "content", "white, 1 litre"),
        ]),
    ]
    stores = [WholeStore("ben", [label + "/a1", label + "/b1"], T(50), False)]
    document = Document(label, "Shopping lists", "ann", sets, stores, {"ann": T(72), "ben": T(50)})
    case.documents.append(document)
    return document


def two_clients(case):
    case.client(ANN)
    case.client(BEN)


def cases():
    result = []

    c = Case("healthy", "Two clients, two documents, plain files; every set SQLite; nothing wrong.")
    two_clients(c)
    standard_document(c, "notebook", "Ann's notebook")
    second_document(c)
    result.append(c)

    c = Case("encrypted", "The healthy notebook document with encryption on: deviceInfo, documentInfo, the "
             "password test file, change sets and WholeStore files are FZACryptor files; the salt, "
             "IntegrityKey, RecentSyncs and AppliedSyncChangeSets are not.")
    two_clients(c)
    standard_document(c, "notebook", "Ann's notebook")
    c.password = c.password_to_use = "correct horse battery staple"
    result.append(c)

    c = Case("zipped-wholestore", "Ann's WholeStore.ticdsync is a zip archive holding her store (the Dropbox "
             "path with compression on); Ben's is not.")
    two_clients(c)
    standard_document(c, "notebook", "Ann's notebook", zipped_store=True)
    result.append(c)

    c = Case("encrypted-zipped", "Encryption on and both WholeStores zipped, as the Dropbox path writes them with "
             "compression on: the store is zipped first, then encrypted, so a reader decrypts, then unzips.")
    two_clients(c)
    d = standard_document(c, "notebook", "Ann's notebook", zipped_store=True)
    d.stores[1].zipped = True
    c.password = c.password_to_use = "correct horse battery staple"
    result.append(c)

    c = Case("wrong-password", "The encrypted case, but the password a user gives is not the one the folder was "
             "encrypted with: Encryption/test.ticdsync fails its HMAC under the given password.")
    two_clients(c)
    standard_document(c, "notebook", "Ann's notebook")
    c.password, c.password_to_use = "correct horse battery staple", "Tr0ub4dor&3"
    c.damages.append(("wrong-password", "Encryption/test.ticdsync", "HMAC fails under passwordToUse; passes under password"))
    result.append(c)

    c = Case("tampered-hmac", "Encrypted; one byte of the body of Ben's second change set was changed after "
             "writing, so its HMAC no longer matches (the password is right).")
    two_clients(c)
    d = standard_document(c, "notebook", "Ann's notebook")
    c.password = c.password_to_use = "correct horse battery staple"
    d.sets[3].damage = "tampered-hmac"
    result.append(c)

    c = Case("truncated", "Encrypted; Ben's second change set was cut to 100 bytes, shorter than the smallest "
             "FZACryptor file (16 + 48 + 16 + 32 = 112 bytes).")
    two_clients(c)
    d = standard_document(c, "notebook", "Ann's notebook")
    c.password = c.password_to_use = "correct horse battery staple"
    d.sets[3].damage = "truncated"
    result.append(c)

    c = Case("truncated-sqlite", "Not encrypted; Ben's second change set, an SQLite file, was cut after its second "
             "page: the SQLite header is intact but the database is not (a damaged set, not a binary-store one).")
    two_clients(c)
    d = standard_document(c, "notebook", "Ann's notebook")
    d.sets[3].damage = "truncated"
    result.append(c)

    c = Case("no-device-info", "Ben's ClientDevices folder exists but holds no deviceInfo.plist; his sets are still "
             "applied (clients are found by listing SyncChanges/).")
    two_clients(c)
    c.clients["ben"].device_info = False
    standard_document(c, "notebook", "Ann's notebook")
    c.damages.append(("no-device-info", lambda paths: paths["clientFolder"]["ben"], "ClientDevices/<ben>/ has no deviceInfo.plist"))
    result.append(c)

    c = Case("unknown-client", "Cal has change sets under SyncChanges/ but no ClientDevices folder at all; his set "
             "is still applied by the others.")
    two_clients(c)
    cal = c.client(CAL)
    cal.devices_folder = False
    d = standard_document(c, "notebook", "Ann's notebook")
    d.sets.append(ChangeSet("notebook/c1", "cal", T(100), T(100) + 7, [
        set_attribute("Note", d.ids["n3"], T(100) + 0.25, "content", "about the shed, by Friday"),
    ]))
    d.recent["cal"] = T(101)
    c.damages.append(("unknown-client", lambda paths: paths["syncChangesFolder"]["cal"], "no ClientDevices/<cal>/ folder"))
    result.append(c)

    c = Case("integrity-key-mismatch", "The document's IntegrityKey folder holds two keys: the one Ann made when she "
             "registered the document, and one Cal's archive names as its maker (he registered the same document id "
             "again). A client holding one key fails to sync against a folder showing the other (which of the two the "
             "framework reads first is the order the folder lists them in).")
    two_clients(c)
    cal = c.client(CAL)
    cal.devices_folder = True
    d = standard_document(c, "notebook", "Ann's notebook")
    d.integrity.append((unique_string("integrity/notebook/second"), "cal"))
    c.damages.append(("integrity-key-mismatch", lambda paths: paths["integrityKeys"][1],
                      "a second key in IntegrityKey/, made by cal; documentInfo names ann as the document's original device"))
    result.append(c)

    c = Case("temporary-upload", "Ann's WholeStore upload stopped half-way: TemporaryFiles/WholeStore/<ann>/ still "
             "holds the two files it was about to move into WholeStore/<ann>/.")
    two_clients(c)
    d = standard_document(c, "notebook", "Ann's notebook")
    d.temporary = "ann"
    c.damages.append(("temporary-upload", lambda paths: paths["temporary"][0], "an upload left in TemporaryFiles"))
    result.append(c)

    c = Case("binary-store-set", "Ben's first change set is in Apple's binary store form (as the framework's main "
             "branches write them): bytes that are not SQLite. Replays stop there.")
    two_clients(c)
    d = standard_document(c, "notebook", "Ann's notebook")
    d.sets[1].form = "binary-store"
    d.stores = [WholeStore("ann", ["notebook/a1"], T(15))]
    d.recent = {"ann": T(15), "ben": T(95)}
    c.damages.append(("binary-store-set", lambda paths: paths["sets"]["notebook/b1"], "not SQLite; only Apple's Core Data reads it"))
    result.append(c)

    c = Case("conflict", "After Ann's WholeStore upload, Ann and Ben each changed the title of the same note to a "
             "different value without having applied the other's set. Replaying Ann's store, her set is the local "
             "side and Ben's the remote side: the framework would pause for the app to decide.")
    two_clients(c)
    label = "notebook"
    n1, n2 = unique_string("conflict-note-1"), unique_string("conflict-note-2")
    sets = [
        ChangeSet(label + "/a1", "ann", T(0), T(0) + 3, [
            insert("Note", n1, T(0) + 0.25, title="Plan", content="draft"),
            insert("Note", n2, T(0) + 0.5, title="Budget", content="100"),
        ]),
        ChangeSet(label + "/b1", "ben", T(40), T(40) + 3, [
            set_attribute("Note", n1, T(40) + 0.25, "title", "Plan (Ben)"),
            set_attribute("Note", n2, T(40) + 0.5, "content", "120"),
        ]),
        ChangeSet(label + "/a2", "ann", T(45), T(45) + 60, [
            set_attribute("Note", n1, T(45) + 0.25, "title", "Plan (Ann)"),
            set_attribute("Note", n2, T(45) + 0.5, "title", "Budget 2027"),
        ]),
    ]
    d = Document(label, "Ann's notebook", "ann", sets, [WholeStore("ann", [label + "/a1"], T(20))],
                 {"ann": T(46), "ben": T(41)})
    c.documents.append(d)
    c.damages.append(("conflict", lambda paths: paths["sets"]["notebook/a2"],
                      "changes Note.title of the same note as notebook/b1 to another value"))
    result.append(c)

    c = Case("same-dates", "Every file has the same modification time, as after a copy that lost them (or a git "
             "checkout). Ben's second set was made before Ann's second but uploaded after it; with equal dates the "
             "framework falls back to the set id, which is the creation time, and the order changes.")
    two_clients(c)
    d = standard_document(c, "notebook", "Ann's notebook")
    d.sets[3].created = T(50)  # Ben made b2 offline before Ann's a2 ...
    d.sets[3].id = set_identifier(T(50), d.sets[3].label)
    d.sets[3].mtime = T(95)  # ... and uploaded it after
    for change in d.sets[3].changes:
        change.timestamp -= 60 * 40
    c.same_dates = T(200)
    c.damages.append(("same-dates", lambda paths: paths["documentFolder"], "every file of the folder has the same modification time"))
    result.append(c)

    c = Case("future-dates", "Ben's change sets carry modification times years in the future (a device with a wrong "
             "clock, or a copy tool that set them); the framework orders them after everything else, so Ann's "
             "replay (her store had applied only a1) takes her a2 before Ben's earlier b1.")
    two_clients(c)
    d = standard_document(c, "notebook", "Ann's notebook")
    d.stores = [WholeStore("ann", ["notebook/a1"], T(15)), d.stores[1]]  # so that b1 is in Ann's replay
    d.sets[1].mtime = BASE + 5 * 365 * 86400
    d.sets[3].mtime = BASE + 5 * 365 * 86400 + 60
    for index in (1, 3):
        c.damages.append(("future-dates", (lambda label: lambda paths: paths["sets"][label])(d.sets[index].label),
                          "modification time after `now`"))
    result.append(c)

    c = Case("replay-edges", "Rules of applying a set, each once: an insert of a sync id that already exists updates "
             "that object; an attribute change, a to-many change and a deletion of an object that does not exist are "
             "skipped with a warning; a to-many change naming a related object that does not exist is skipped with a "
             "warning.")
    two_clients(c)
    label = "notebook"
    n1, t1 = unique_string("edges-note-1"), unique_string("edges-tag-1")
    ghost = unique_string("edges-ghost")
    sets = [
        ChangeSet(label + "/a1", "ann", T(0), T(0) + 3, [
            insert("Note", n1, T(0) + 0.25, title="First", content="one"),
            insert("Tag", t1, T(0) + 0.5, name="misc"),
        ]),
        ChangeSet(label + "/b1", "ben", T(30), T(30) + 3, [
            insert("Note", n1, T(30) + 0.25, title="First again", content="uno"),
            set_attribute("Note", ghost, T(30) + 0.5, "title", "nobody"),
            add_tag(t1, ghost, T(30) + 0.75),
            add_tag(ghost, n1, T(30) + 0.875),
            delete("Tag", ghost, T(30) + 1.0),
        ]),
    ]
    d = Document(label, "Edge cases", "ann", sets, [WholeStore("ann", [label + "/a1"], T(10))], {"ann": T(10), "ben": T(31)})
    c.documents.append(d)
    result.append(c)

    c = Case("deleted", "A document deleted by Ann (its documentInfo.plist copied into Information/DeletedDocuments/ "
             "and its folder removed) and a client Ann removed from the notebook document (its deviceInfo.plist copied "
             "into the document's DeletedClients/, its sets, RecentSyncs file and WholeStore folder removed).")
    two_clients(c)
    c.client(CAL)
    standard_document(c, "notebook", "Ann's notebook")
    c.documents[0].deleted_clients = ["cal"]
    c.deleted_documents.append(("old-notes", "Old notes", "ben"))
    result.append(c)
    return result


# ---------------------------------------------------------------------------------------------
# Writing a case


class Writer:
    def __init__(self, folder, case):
        self.folder, self.case = folder, case
        self.dates = {}
        self.encrypted = {}  # path -> plain bytes of every FZACryptor file (for the openssl check)
        self.key = None
        if case.password is not None:
            self.salt = det_bytes("salt/" + case.name, 16)
            self.key = derive_key(case.password, self.salt)

    def write(self, relative, data, mtime, encrypt=False):
        path = os.path.join(self.folder, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if encrypt and self.key is not None:
            self.encrypted[relative] = data
            data = fza_encrypt(self.key, data, self.case.name + "/" + relative)
        with open(path, "wb") as handle:
            handle.write(data)
        self.dates[relative] = mtime
        return len(data)

    def folder_only(self, relative):
        os.makedirs(os.path.join(self.folder, relative), exist_ok=True)

    def empty_folders(self):
        """Folders holding no file at any depth: a git checkout does not have them."""
        found = []
        for folder, _, _ in os.walk(self.folder):
            if not any(files for _, _, files in os.walk(folder)):
                found.append(os.path.relpath(folder, self.folder).replace(os.sep, "/"))
        return sorted(found)


def plist_bytes(value, fmt="xml"):
    return plistlib.dumps(value, fmt=plistlib.FMT_XML if fmt == "xml" else plistlib.FMT_BINARY, sort_keys=True)


def device_info_fields(client):
    fields = {"kTICDSClientDeviceDescription": client.description, "kTICDSClientDeviceIdentifier": client.id}
    if client.user_info is not None:
        fields["kTICDSClientDeviceUserInfo"] = client.user_info
    return fields


def write_case(case, out):
    folder = os.path.join(out, case.name, "folder")
    if os.path.exists(os.path.join(out, case.name)):
        shutil.rmtree(os.path.join(out, case.name))
    os.makedirs(folder)
    w = Writer(folder, case)
    encrypted = case.password is not None
    app = APP_ID
    clients = case.clients
    paths = {"clientFolder": {}, "syncChangesFolder": {}, "sets": {}, "integrityKeys": [], "temporary": []}

    with open(os.path.join(TEMPLATES, "ReadMe.txt"), "rb") as handle:
        w.write(app + "/ReadMe.txt", handle.read(), BASE - 86400 * 2)
    for sub in ("Documents", "Information/DeletedDocuments", "Information/DeletedClients", "Encryption", "ClientDevices"):
        w.folder_only(app + "/" + sub)
    facts_encryption = None
    if encrypted:
        w.write(app + "/Encryption/salt.ticdsync", w.salt, BASE - 86400 * 2)
        test_plain = keyed_archive(app + unique_string("password-test/" + case.name))
        w.write(app + "/Encryption/test.ticdsync", test_plain, BASE - 86400 * 2, encrypt=True)
        facts_encryption = {"password": case.password, "passwordToUse": case.password_to_use,
                            "salt": w.salt.hex(), "key": w.key.hex(),
                            "passwordTestPlain": app + unique_string("password-test/" + case.name)}

    client_facts = []
    for client in clients.values():
        entry = {"id": client.id, "label": client.label, "clientDevicesFolder": client.devices_folder, "deviceInfo": None}
        if client.devices_folder:
            relative = "%s/ClientDevices/%s" % (app, client.id)
            paths["clientFolder"][client.label] = relative + "/"
            w.folder_only(relative)
            if not client.device_info:
                # what a sync service leaves when two uploads of the file collide: the folder keeps a
                # renamed copy (which the framework never reads) but no deviceInfo.plist; the copy
                # also keeps the folder in a git checkout, which drops empty folders
                conflicted = relative + "/deviceInfo (%s's conflicted copy 2026-11-01).plist" % client.label.capitalize()
                w.write(conflicted, plist_bytes(device_info_fields(client)), client.registered)
            else:
                fmt = client.format if not encrypted else "xml"
                file = relative + "/deviceInfo.plist"
                w.write(file, plist_bytes(device_info_fields(client), fmt), client.registered, encrypt=True)
                entry["deviceInfo"] = {"file": file, "format": fmt, "encrypted": encrypted, "fields": device_info_fields(client)}
        client_facts.append(entry)

    deleted_documents = []
    for label, description, creator in case.deleted_documents:
        doc_id = unique_string("document/" + label)
        fields = {"kTICDSDocumentDescription": description, "kTICDSDocumentIdentifier": doc_id,
                  "kTICDSOriginalDeviceDescription": clients[creator].description,
                  "kTICDSOriginalDeviceIdentifier": clients[creator].id}
        file = "%s/Information/DeletedDocuments/%s.plist" % (app, doc_id)
        w.write(file, plist_bytes(fields), T(5), encrypt=True)
        deleted_documents.append({"id": doc_id, "file": file, "encrypted": encrypted, "fields": fields})

    document_facts = []
    for document in case.documents:
        document_facts.append(write_document(case, w, document, paths, encrypted))

    original = None
    if case.same_dates is not None:
        # what the folder said before its dates were lost: the facts a reader given these dates
        # (a dates file) must find
        original = {"fileDates": dict(sorted(w.dates.items())), "documents": []}
        for facts in copy.deepcopy(document_facts):
            refresh_dates(facts, w.dates, case.clients)
            original["documents"].append({k: facts[k] for k in ("id", "clientViews", "wholeStoreDownloadCandidates",
                                                                 "wholeStoreDownloadWouldTake", "vacuum", "replays")})
        for relative in w.dates:
            w.dates[relative] = case.same_dates
    for relative, mtime in w.dates.items():
        os.utime(os.path.join(folder, relative), (mtime, mtime))

    damages = []
    for kind, file, detail in case.damages:
        damages.append({"kind": kind, "file": file(paths) if callable(file) else app + "/" + file, "detail": detail})
    for document, facts in zip(case.documents, document_facts):
        for change_set in document.sets:
            if change_set.damage:
                detail = {"tampered-hmac": "tampered: one body byte changed after the HMAC was computed",
                          "truncated": "FZACryptor file cut to 100 bytes" if encrypted
                          else "SQLite file cut to %d of its %d bytes; its header still counts %d pages of %d bytes"
                          % (2 * PAGE_SIZE, change_set.original_size, change_set.original_size // PAGE_SIZE, PAGE_SIZE)}
                damages.append({"kind": change_set.damage, "file": paths["sets"][change_set.label],
                                "detail": detail[change_set.damage]})
    # Dates as the folder now has them (same-dates changes them after the facts were first built)
    for facts in document_facts:
        refresh_dates(facts, w.dates, case.clients)

    facts = {
        "case": case.name,
        "description": case.description,
        "generator": "scripts/ticds-generate.py",
        "seed": SEED,
        "appId": app,
        "root": app,
        "now": NOW,
        "encryption": facts_encryption,
        "clients": client_facts,
        "documents": document_facts,
        "deletedDocuments": deleted_documents,
        "damages": damages,
        "fileDates": dict(sorted(w.dates.items())),
        "emptyFolders": w.empty_folders(),
    }
    if original is not None:
        facts["withOriginalDates"] = original
    with open(os.path.join(out, case.name, "facts.json"), "w", encoding="utf-8") as handle:
        handle.write(json.dumps(facts, indent=1, ensure_ascii=False) + "\n")
    return w


def write_document(case, w, document, paths, encrypted):
    app = APP_ID
    clients = case.clients
    base = "%s/Documents/%s" % (app, document.id)
    paths["documentFolder"] = base + "/"
    for sub in ("SyncChanges", "SyncCommands", "RecentSyncs", "WholeStore", "IntegrityKey", "DeletedClients",
                "TemporaryFiles/WholeStore"):
        w.folder_only(base + "/" + sub)
    creator = clients[document.creator]
    info = {"kTICDSDocumentDescription": document.description, "kTICDSDocumentIdentifier": document.id,
            "kTICDSOriginalDeviceDescription": creator.description, "kTICDSOriginalDeviceIdentifier": creator.id}
    w.write(base + "/documentInfo.plist", plist_bytes(info), BASE - 3600, encrypt=True)
    integrity = []
    for index, (key, maker) in enumerate(document.integrity):
        file = "%s/IntegrityKey/%s" % (base, key)
        w.write(file, keyed_archive({"kTICDSOriginalDeviceIdentifier": clients[maker].id}), BASE - 3600 + 86400 * index)
        integrity.append({"key": key, "file": file, "originalDeviceIdentifier": clients[maker].id})
        paths["integrityKeys"].append(file)

    # change sets
    set_facts = []
    sets_by_label = {}
    set_clients = []
    unreadable = set()
    for change_set in document.sets:
        client = clients[change_set.client]
        folder = "%s/SyncChanges/%s" % (base, client.id)
        paths["syncChangesFolder"][change_set.client] = folder + "/"
        if client.id not in set_clients:
            set_clients.append(client.id)
        file = "%s/%s.syncchg" % (folder, change_set.id)
        paths["sets"][change_set.label] = file
        store_uuid = None
        if change_set.form == "sqlite":
            store_uuid = str(uuid.UUID(bytes=det_bytes("store-uuid/" + change_set.label, 16), version=4)).upper()
            plain = change_set_store(change_set.changes, store_uuid)
        else:
            plain = binary_store_bytes(change_set.label, change_set.changes)
        size = w.write(file, plain, change_set.mtime, encrypt=True)
        if change_set.damage:
            unreadable.add(change_set.label)
            with open(os.path.join(w.folder, file), "rb") as handle:
                data = bytearray(handle.read())
            change_set.original_size = len(data)
            if change_set.damage == "tampered-hmac":
                data[16 + 48 + 5] ^= 0x01
            elif encrypted:
                data = data[:100]
            else:  # a plain SQLite set: the header and first page stay, the rest is gone
                data = data[:2 * PAGE_SIZE]
            with open(os.path.join(w.folder, file), "wb") as handle:
                handle.write(bytes(data))
            size = len(data)
            w.encrypted.pop(file, None)
        entry = {"client": client.id, "id": change_set.id, "file": file, "mtime": change_set.mtime, "size": size,
                 "form": change_set.form, "encrypted": encrypted, "readable": not change_set.damage,
                 "storeUUID": store_uuid,
                 "changes": [c.facts(pk) for pk, c in enumerate(change_set.changes, start=1)]
                 if change_set.form == "sqlite" else None}
        set_facts.append(entry)
        sets_by_label[change_set.label] = entry

    # recent syncs (plain XML plists; their modification time is the sync date)
    recent_facts = []
    for label, when in sorted(document.recent.items(), key=lambda item: clients[item[0]].id):
        file = "%s/RecentSyncs/%s.recentsync" % (base, clients[label].id)
        w.write(file, plistlib.dumps({"kTICDSLastSyncDate": datetime.datetime.fromtimestamp(when, datetime.timezone.utc).replace(tzinfo=None)},
                                     fmt=plistlib.FMT_XML), when)
        recent_facts.append({"client": clients[label].id, "file": file, "mtime": when, "lastSyncDate": when})

    # whole stores
    by_label = {s.label: s for s in document.sets}
    store_facts = []
    for store in document.stores:
        state = empty_state()
        for change_set in framework_order([by_label[label] for label in store.applied]):
            for change in sorted_changes(change_set.changes):
                apply_change(state, change, [], change_set.id)
        store.objects = state
        client = clients[store.client]
        folder = "%s/WholeStore/%s" % (base, client.id)
        store_uuid = str(uuid.UUID(bytes=det_bytes("app-store/" + document.label + store.client, 16), version=4)).upper()
        plain = notebook_store(state, store_uuid)
        entry_name = None
        if store.zipped:
            entry_name = "Notebook.sqlite"
            plain = zipped(entry_name, plain)
        size = w.write(folder + "/WholeStore.ticdsync", plain, store.mtime, encrypt=True)
        rows = []
        for change_set in framework_order([by_label[label] for label in store.applied]):
            own = change_set.client == store.client
            rows.append({"id": change_set.id, "client": clients[change_set.client].id,
                         "creationDate": change_set.mtime,
                         "localDateOfApplication": change_set.mtime + (0 if own else 120),
                         "fileName": change_set.id + ".syncchg"})
        applied_uuid = str(uuid.UUID(bytes=det_bytes("applied/" + document.label + store.client, 16), version=4)).upper()
        w.write(folder + "/AppliedSyncChangeSets.ticdsync", applied_sets_store(rows, applied_uuid), store.mtime)
        store_facts.append({"client": client.id, "file": folder + "/WholeStore.ticdsync", "mtime": store.mtime,
                            "size": size, "zipped": store.zipped, "zipEntry": entry_name, "encrypted": encrypted,
                            "storeUUID": store_uuid, "appliedSetsFile": folder + "/AppliedSyncChangeSets.ticdsync",
                            "appliedSetsStoreUUID": applied_uuid, "appliedSets": rows, "objects": state})
        if document.temporary == store.client:
            temp = "%s/TemporaryFiles/WholeStore/%s" % (base, client.id)
            w.write(temp + "/WholeStore.ticdsync", notebook_store(state, store_uuid), store.mtime + 600, encrypt=True)
            w.write(temp + "/AppliedSyncChangeSets.ticdsync", applied_sets_store(rows, applied_uuid), store.mtime + 601)
            paths["temporary"] = [temp + "/WholeStore.ticdsync", temp + "/AppliedSyncChangeSets.ticdsync"]

    deleted_clients = []
    for label in document.deleted_clients:
        client = clients[label]
        file = "%s/DeletedClients/%s.plist" % (base, client.id)
        w.write(file, plist_bytes(device_info_fields(client)), T(120), encrypt=True)
        deleted_clients.append({"client": client.id, "file": file, "fields": device_info_fields(client)})

    return {
        "id": document.id,
        "folder": base,
        "documentInfo": {"file": base + "/documentInfo.plist", "format": "xml", "encrypted": encrypted, "fields": info},
        "integrityKeys": integrity,
        "syncChangeClients": sorted(set_clients),
        "changeSets": set_facts,
        "recentSyncs": recent_facts,
        "wholeStores": store_facts,
        "temporaryFiles": paths["temporary"] if document.temporary else [],
        "deletedClients": deleted_clients,
        "_document": document,
        "_sets_by_label": sets_by_label,
        "_unreadable": unreadable,
    }


def refresh_dates(facts, dates, clients):
    """Re-derives every date-dependent fact from the dates the files finally have."""
    document = facts.pop("_document")
    sets_by_label = facts.pop("_sets_by_label")
    unreadable = facts.pop("_unreadable")
    for change_set in document.sets:
        change_set.mtime = dates[sets_by_label[change_set.label]["file"]]
        sets_by_label[change_set.label]["mtime"] = change_set.mtime
    for entry in facts["recentSyncs"]:
        entry["mtime"] = dates[entry["file"]]
    for store, entry in zip(document.stores, facts["wholeStores"]):
        store.mtime = entry["mtime"] = dates[entry["file"]]
    facts["changeSets"].sort(key=lambda e: (e["client"], e["id"]))

    client_of = {s.label: clients[s.client].id for s in document.sets}
    # each client's view: other clients' sets (listed under SyncChanges/) it has not applied,
    # in the framework's order; what it has applied is only known from its WholeStore folder
    views = {}
    all_clients = sorted(set(client_of.values()) | {s["client"] for s in facts["wholeStores"]}
                         | {r["client"] for r in facts["recentSyncs"]})
    for client in all_clients:
        store = next((s for s in facts["wholeStores"] if s["client"] == client), None)
        applied = None if store is None else [row["id"] for row in store["appliedSets"]]
        others = [s for s in document.sets if client_of[s.label] != client and s.id not in (applied or [])]
        views[client] = {"appliedSetIds": applied,
                         "next": [{"client": client_of[s.label], "id": s.id, "date": s.mtime} for s in framework_order(others)]}
    facts["clientViews"] = views

    # TICDSFileManagerBasedWholeStoreDownloadOperation: the WholeStore with the latest time; on a
    # tie the first the folder listing names, which no file decides
    latest = max([s["mtime"] for s in facts["wholeStores"]], default=None)
    candidates = sorted(s["client"] for s in facts["wholeStores"] if s["mtime"] == latest)
    facts["wholeStoreDownloadCandidates"] = candidates
    facts["wholeStoreDownloadWouldTake"] = candidates[0] if len(candidates) == 1 else None

    # TICDSVacuumOperation (file-manager based): keep everything from the earliest WholeStore time
    # or, when earlier, the earliest RecentSyncs time; a client removes its own older sets.
    keep = min([s["mtime"] for s in facts["wholeStores"]] or [NOW])
    recent = [r["mtime"] for r in facts["recentSyncs"]]
    if recent and min(recent) < keep:
        keep = min(recent)
    remove = {}
    for change_set in document.sets:
        if change_set.mtime < keep:
            remove.setdefault(client_of[change_set.label], []).append(change_set.id)
    facts["vacuum"] = {"keepFrom": keep, "wouldRemove": {k: sorted(v) for k, v in sorted(remove.items())}}

    facts["replays"] = {}
    for store in document.stores:
        facts["replays"][clients[store.client].id] = replay(document, store, sets_by_label, clients, unreadable)


# ---------------------------------------------------------------------------------------------
# --check


def tree_files(top):
    found = {}
    for folder, _, names in os.walk(top):
        for name in names:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, top).replace(os.sep, "/")] = path
    return found


def openssl_check(folder, relative, key, plain):
    """Decrypts the file key block and the body with the openssl command, not with Python."""
    with open(os.path.join(folder, relative), "rb") as handle:
        data = handle.read()
    expected_mac = hmac.new(key, data[:-32], hashlib.sha256).digest()
    if expected_mac != data[-32:]:
        return "HMAC does not match"
    run = lambda args, payload: subprocess.run(["openssl", "enc", "-d", "-aes-256-cbc"] + args, input=payload,
                                               capture_output=True, check=True).stdout
    file_key_iv = run(["-nopad", "-K", key.hex(), "-iv", data[:16].hex()], data[16:64])
    body = run(["-K", file_key_iv[:32].hex(), "-iv", file_key_iv[32:48].hex()], data[64:-32])
    return None if body == plain else "openssl decrypts other bytes"


def reread(folder, facts, key):
    """Reads the written files back with sqlite3, plistlib and zipfile and compares with the facts."""
    problems = []

    def content(relative, encrypted):
        with open(os.path.join(folder, relative), "rb") as handle:
            data = handle.read()
        return fza_decrypt(key, data) if encrypted else data

    def rows(data, sql):
        with tempfile.NamedTemporaryFile(suffix=".sqlite") as handle:
            handle.write(data)
            handle.flush()
            db = sqlite3.connect("file:%s?mode=ro" % handle.name, uri=True)
            try:
                return db.execute(sql).fetchall()
            finally:
                db.close()

    for client in facts["clients"]:
        if client["deviceInfo"]:
            info = client["deviceInfo"]
            if plistlib.loads(content(info["file"], info["encrypted"])) != info["fields"]:
                problems.append("deviceInfo of %s" % client["id"])
    for document in facts["documents"]:
        for entry in document["changeSets"]:
            if not entry["readable"]:
                try:
                    data = content(entry["file"], entry["encrypted"])
                    rows(data, "SELECT COUNT(*) FROM ZTICDSSYNCCHANGE")
                    problems.append("%s should not be readable" % entry["file"])
                except (ValueError, sqlite3.DatabaseError):
                    pass
                continue
            data = content(entry["file"], entry["encrypted"])
            if (entry["form"] == "sqlite") != data.startswith(SQLITE_MAGIC):
                problems.append("form of %s" % entry["file"])
            if entry["form"] != "sqlite":
                continue
            found = rows(data, "SELECT Z_PK, ZCHANGETYPE, ZOBJECTENTITYNAME, ZOBJECTSYNCID, ZRELEVANTKEY, "
                               "ZRELATEDOBJECTENTITYNAME, ZLOCALTIMESTAMP, ZCHANGEDATTRIBUTES, ZCHANGEDRELATIONSHIPS "
                               "FROM ZTICDSSYNCCHANGE ORDER BY Z_PK")
            decoded = [{"pk": r[0], "changeType": r[1], "entity": r[2], "syncID": r[3], "key": r[4], "relatedEntity": r[5],
                        "localTimeStamp": r[6] + UNIX_2001, "changedAttributes": None if r[7] is None else unarchive(r[7]),
                        "changedRelationships": None if r[8] is None else unarchive(r[8])} for r in found]
            if decoded != entry["changes"]:
                problems.append("changes of %s" % entry["file"])
            if rows(data, "SELECT Z_UUID FROM Z_METADATA")[0][0] != entry["storeUUID"]:
                problems.append("store UUID of %s" % entry["file"])
        for store in document["wholeStores"]:
            data = content(store["file"], store["encrypted"])
            if store["zipped"]:
                with zipfile.ZipFile(io.BytesIO(data)) as archive:
                    if archive.namelist() != [store["zipEntry"]]:
                        problems.append("zip entries of %s" % store["file"])
                    data = archive.read(store["zipEntry"])
            objects = empty_state()
            notes = {pk: sid for pk, sid in rows(data, "SELECT Z_PK, ZTICDSSYNCID FROM ZNOTE")}
            tags = {pk: sid for pk, sid in rows(data, "SELECT Z_PK, ZTICDSSYNCID FROM ZTAG")}
            for pk, content_, sid, title in rows(data, "SELECT Z_PK, ZCONTENT, ZTICDSSYNCID, ZTITLE FROM ZNOTE"):
                attributes = {k: v for k, v in (("content", content_), ("ticdsSyncID", sid), ("title", title)) if v is not None}
                objects["Note"][sid] = {"attributes": attributes, "relationships": {"tags": []}}
            for pk, name, sid in rows(data, "SELECT Z_PK, ZNAME, ZTICDSSYNCID FROM ZTAG"):
                attributes = {k: v for k, v in (("name", name), ("ticdsSyncID", sid)) if v is not None}
                objects["Tag"][sid] = {"attributes": attributes, "relationships": {"notes": []}}
            for note, tag in rows(data, "SELECT Z_1NOTES, Z_2TAGS FROM Z_1TAGS"):
                objects["Note"][notes[note]]["relationships"]["tags"].append(tags[tag])
                objects["Tag"][tags[tag]]["relationships"]["notes"].append(notes[note])
            for entity in objects.values():
                for item in entity.values():
                    for name in item["relationships"]:
                        item["relationships"][name].sort()
            if objects != store["objects"]:
                problems.append("objects of %s" % store["file"])
            with open(os.path.join(folder, store["appliedSetsFile"]), "rb") as handle:
                applied = rows(handle.read(), "SELECT ZSYNCCHANGESETIDENTIFIER, ZCLIENTIDENTIFIER FROM ZTICDSSYNCCHANGESET ORDER BY Z_PK")
            if [list(r) for r in applied] != [[r["id"], r["client"]] for r in store["appliedSets"]]:
                problems.append("applied sets of %s" % store["appliedSetsFile"])
        for key_entry in document["integrityKeys"]:
            with open(os.path.join(folder, key_entry["file"]), "rb") as handle:
                if unarchive(handle.read()) != {"kTICDSOriginalDeviceIdentifier": key_entry["originalDeviceIdentifier"]}:
                    problems.append("integrity key %s" % key_entry["file"])
    return problems


def schema_problems(work, out):
    """Every facts.json against Fixtures/ticds/facts.schema.json (when jsonschema is installed, as
    scripts/test installs it)."""
    try:
        import jsonschema
    except ImportError:
        print("facts.schema.json not checked: the jsonschema package is not installed")
        return []
    with open(os.path.join(out, "facts.schema.json"), encoding="utf-8") as handle:
        validator = jsonschema.Draft202012Validator(json.load(handle))
    problems = []
    for name in sorted(os.listdir(work)):
        path = os.path.join(work, name, "facts.json")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                for error in validator.iter_errors(json.load(handle)):
                    problems.append("%s/facts.json %s: %s" % (name, "/".join(map(str, error.absolute_path)), error.message))
    print("facts.schema.json: %d facts documents checked" % len([n for n in os.listdir(work) if os.path.exists(os.path.join(work, n, "facts.json"))]))
    return problems


def openssl_key(password, salt):
    """The FZAKeyManager key computed with openssl alone: 7,500 `openssl dgst -sha256` runs (slow)."""
    digest = password.encode("utf-16-le") + salt
    for _ in range(7500):
        digest = subprocess.run(["openssl", "dgst", "-sha256", "-binary"], input=digest, capture_output=True,
                                check=True).stdout
    return digest


def check(out, slow=False):
    if shutil.which("openssl") is None:
        sys.exit("--check needs the openssl command")
    work = tempfile.mkdtemp(prefix="ticds-check-")
    failed = False
    try:
        writers = {case.name: write_case(case, work) for case in cases()}
        fresh = tree_files(work)
        committed = {k: v for k, v in tree_files(out).items()
                     if k not in ("README.md", "facts.schema.json", "Notebook.xcdatamodel/contents")}
        for relative in sorted(set(fresh) | set(committed)):
            if relative not in committed:
                print("missing in %s: %s" % (out, relative), file=sys.stderr)
                failed = True
            elif relative not in fresh:
                print("not written by the generator: %s" % relative, file=sys.stderr)
                failed = True
            else:
                with open(fresh[relative], "rb") as a, open(committed[relative], "rb") as b:
                    if a.read() != b.read():
                        print("differs: %s" % relative, file=sys.stderr)
                        failed = True
        decrypted = 0
        for name, writer in sorted(writers.items()):
            folder = os.path.join(work, name, "folder")
            with open(os.path.join(work, name, "facts.json"), encoding="utf-8") as handle:
                facts = json.load(handle)
            problems = []
            for relative, mtime in facts["fileDates"].items():
                if int(os.stat(os.path.join(folder, relative)).st_mtime) != mtime:
                    problems.append("mtime of %s" % relative)
            for relative, plain in sorted(writer.encrypted.items()):
                problem = openssl_check(folder, relative, writer.key, plain)
                decrypted += 1
                if problem:
                    problems.append("%s: %s" % (relative, problem))
            if facts["encryption"] and facts["encryption"]["passwordToUse"] != facts["encryption"]["password"]:
                wrong = derive_key(facts["encryption"]["passwordToUse"], bytes.fromhex(facts["encryption"]["salt"]))
                try:
                    with open(os.path.join(folder, facts["root"], "Encryption/test.ticdsync"), "rb") as handle:
                        fza_decrypt(wrong, handle.read())
                    problems.append("the wrong password opens test.ticdsync")
                except ValueError:
                    pass
            try:
                problems += reread(folder, facts, writer.key)
            except (ValueError, KeyError, OSError, sqlite3.Error, zipfile.BadZipFile, plistlib.InvalidFileException) as error:
                problems.append("re-reading: %s %s" % (type(error).__name__, error))
            print("%-24s %s" % (name, "ok" if not problems else "; ".join(problems)), file=sys.stderr if problems else sys.stdout)
            failed = failed or bool(problems)
        print("openssl decrypted %d FZACryptor bodies" % decrypted)
        if slow:
            encryption = next(w for w in writers.values() if w.key is not None).case
            writer = writers[encryption.name]
            if openssl_key(encryption.password, writer.salt) != writer.key:
                print("%s: openssl derives another key" % encryption.name, file=sys.stderr)
                failed = True
            else:
                print("openssl derives the key of %s" % encryption.name)
        problems = schema_problems(work, out)
        for problem in problems:
            print(problem, file=sys.stderr)
        failed = failed or bool(problems)
        # The healthy case's replays must come out otherwise when a set's rows are applied in row
        # order rather than by change type and time stamp; otherwise it pins nothing.
        global ROW_ORDER
        ROW_ORDER = True
        try:
            healthy = next(case for case in cases() if case.name == "healthy")
            write_case(healthy, os.path.join(work, "row-order"))
            with open(os.path.join(work, "row-order", "healthy", "facts.json"), encoding="utf-8") as handle:
                naive = json.load(handle)
            with open(os.path.join(work, "healthy", "facts.json"), encoding="utf-8") as handle:
                right = json.load(handle)
            same = [(d["id"], c) for d, e in zip(right["documents"], naive["documents"])
                    for c in d["replays"] if d["replays"][c]["state"] == e["replays"][c]["state"]]
            print("row-order replays equal to the framework's: %d" % len(same))
            if same:
                print("healthy: a replay does not depend on the order inside a set: %s" % same, file=sys.stderr)
                failed = True
        finally:
            ROW_ORDER = False
    finally:
        shutil.rmtree(work)
    return not failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="regenerate into a temporary folder and compare")
    parser.add_argument("--slow", action="store_true",
                        help="with --check, also derive one case's key with 7,500 openssl runs (about 100 s)")
    parser.add_argument("--seed", type=int, default=SEED,
                        help="another seed gives other identifiers, keys and IVs (the committed kit uses %d)" % SEED)
    arguments = parser.parse_args()
    if arguments.seed != SEED:
        if arguments.check:
            sys.exit("--check compares with the committed kit, which uses the default seed")
        globals()["SEED"] = arguments.seed
    if arguments.check:
        sys.exit(0 if check(arguments.out, arguments.slow) else 1)
    os.makedirs(arguments.out, exist_ok=True)
    for case in cases():  # each case's folder is replaced; nothing else in --out is touched
        write_case(case, arguments.out)
        print("wrote", os.path.relpath(os.path.join(arguments.out, case.name), ROOT))


if __name__ == "__main__":
    main()
