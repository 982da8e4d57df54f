#!/usr/bin/env python3
"""Expected values for the Core Data store fixtures, derived without the toolkit's code.

Reads every store in Fixtures/external/coredata-sqlite/ with Python's sqlite3 (read-only,
immutable) and plistlib, and writes:

  Fixtures/coredata/expected/inspect-<file>.json   the `logtool inspect --json <store>` document
                                                   (Spec/inspect.md 3.5) for the store given as its
                                                   path from the repository root
  Fixtures/coredata/model-versions.json            per store: the entity hashes as the original
                                                   writes an event's modelVersion -- an XML property
                                                   list, and "md5" + MD5 in each NSData description
                                                   style (Spec/model.md 8.3) -- plus the same forms
                                                   for the hashes with one byte changed (a model
                                                   version the store does not know)

Run it on purpose after changing the stores or the rules, check the output by hand, then run
scripts/update-manifest. Needs Python 3.9 or later; nothing else.
"""
import glob
import hashlib
import json
import os
import plistlib
import sqlite3
import urllib.parse

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
STORES = os.path.join(ROOT, "Fixtures", "external", "coredata-sqlite")
OUT = os.path.join(ROOT, "Fixtures", "coredata")
KNOWN_KEYS = {
    "NSStoreType", "NSStoreUUID", "NSStoreModelVersionIdentifiers", "NSPersistenceFrameworkVersion",
    "NSStoreModelVersionHashes", "NSStoreModelVersionHashesVersion", "NSStoreModelVersionHashesDigest",
}


def utf8_key(text):
    return text.encode("utf-8")


def chunks(data):
    return [data[i:i + 4].hex() for i in range(0, len(data), 4)]


def describe(data, style):
    """NSData's description of `data`: the grouped form (before iOS 13 / macOS 10.15, and
    swift-corelibs-foundation) or the length-prefixed form (iOS 13 / macOS 10.15 and later)."""
    if style == "grouped":
        return "<" + " ".join(chunks(data)) + ">"
    if len(data) <= 24:
        return "{length = %d, bytes = 0x%s}" % (len(data), data.hex())
    return "{length = %d, bytes = 0x%s ... %s }" % (len(data), " ".join(chunks(data[:16])), " ".join(chunks(data[-8:])))


def md5_model_version(hashes, style):
    names = sorted(hashes, key=lambda name: name.encode("utf-16-be"))
    text = "__".join("%s_%s" % (name, describe(hashes[name], style)) for name in names)
    return "md5" + hashlib.md5(text.encode("utf-8")).hexdigest()


def integer(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_store(path):
    uri = "file:" + urllib.parse.quote(path) + "?immutable=1"
    db = sqlite3.connect(uri, uri=True)
    try:
        uuid, blob = db.execute("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION DESC LIMIT 1").fetchone()
        metadata = plistlib.loads(bytes(blob))
        hashes = {name: bytes(value) for name, value in metadata["NSStoreModelVersionHashes"].items()}
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        keys = db.execute("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY").fetchall()
        by_number = {number: (name, parent, maximum) for number, name, parent, maximum in keys}

        def root_name(number):
            seen = set()
            while by_number[number][1] not in (0, None):
                if number in seen:
                    return None
                seen.add(number)
                number = by_number[number][1]
            return by_number[number][0]

        counts = {}
        entities = []
        for number, (name, parent, maximum) in by_number.items():
            root = root_name(number)
            table = "Z" + root.upper() if root is not None else None
            rows = None
            if table not in tables:
                table = None
            else:
                if table not in counts:
                    columns = [row[1] for row in db.execute('PRAGMA table_info("%s")' % table)]
                    counts[table] = dict(db.execute('SELECT Z_ENT, COUNT(*) FROM "%s" GROUP BY Z_ENT' % table).fetchall()) if "Z_ENT" in columns else None
                if counts[table] is not None:
                    rows = counts[table].get(number, 0)
                elif root == name and not any(other[1] == number for other in by_number.values()):
                    rows = db.execute('SELECT COUNT(*) FROM "%s"' % table).fetchone()[0]
            parent_number = parent if parent not in (0, None) else None
            entities.append({
                "name": name, "number": number, "superNumber": parent_number,
                "parent": by_number[parent_number][0] if parent_number in by_number else None,
                "maxPrimaryKey": maximum, "table": table, "rows": rows,
                "versionHash": hashes[name].hex() if name in hashes else None,
            })
        for name, value in hashes.items():
            if name not in by_number_names(by_number):
                entities.append({"name": name, "number": None, "superNumber": None, "parent": None, "maxPrimaryKey": None,
                                 "table": None, "rows": None, "versionHash": value.hex()})
        entities.sort(key=lambda entity: (utf8_key(entity["name"]), entity["number"] if entity["number"] is not None else -1))
        identifiers = metadata.get("NSStoreModelVersionIdentifiers", [])
        document = {
            "inspectVersion": 1,
            "kind": "coreDataStore",
            "path": os.path.relpath(path, ROOT).replace(os.sep, "/"),
            "storeType": metadata.get("NSStoreType") if isinstance(metadata.get("NSStoreType"), str) else None,
            "uuid": uuid if uuid is not None else metadata.get("NSStoreUUID"),
            "modelVersionIdentifiers": [value for value in identifiers if isinstance(value, str)] if isinstance(identifiers, list) else [],
            "persistenceFrameworkVersion": integer(metadata.get("NSPersistenceFrameworkVersion")),
            "modelVersionHashesVersion": integer(metadata.get("NSStoreModelVersionHashesVersion")),
            "modelVersionHashesDigest": metadata.get("NSStoreModelVersionHashesDigest") if isinstance(metadata.get("NSStoreModelVersionHashesDigest"), str) else None,
            "otherMetadataKeys": sorted((key for key in metadata if key not in KNOWN_KEYS), key=utf8_key),
            "hashEncoding": "hex",
            "entities": entities,
            "md5ModelVersions": {style: md5_model_version(hashes, style) for style in ("grouped", "length-prefixed")},
            "errors": [],
        }
        return document, hashes
    finally:
        db.close()


def by_number_names(by_number):
    return {name for name, _, _ in by_number.values()}


def forms(hashes):
    return {
        "propertyList": plistlib.dumps(hashes, fmt=plistlib.FMT_XML).decode("utf-8"),
        "md5": {style: md5_model_version(hashes, style) for style in ("grouped", "length-prefixed")},
    }


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def main():
    os.makedirs(os.path.join(OUT, "expected"), exist_ok=True)
    versions = {}
    for path in sorted(glob.glob(os.path.join(STORES, "*"))):
        name = os.path.basename(path)
        if name.startswith("LICENSE"):
            continue
        document, hashes = read_store(path)
        with open(os.path.join(OUT, "expected", "inspect-%s.json" % name), "w", encoding="utf-8") as out:
            out.write(canonical(document) + "\n")
        # Another model version: the first entity's hash (in name order) with its first byte flipped.
        first = sorted(hashes, key=utf8_key)[0]
        changed = dict(hashes)
        changed[first] = bytes([changed[first][0] ^ 0xFF]) + changed[first][1:]
        versions[name] = {"known": forms(hashes), "unknown": forms(changed)}
    with open(os.path.join(OUT, "model-versions.json"), "w", encoding="utf-8") as out:
        out.write(json.dumps(versions, sort_keys=True, indent=1, ensure_ascii=False) + "\n")
    print("Fixtures/coredata: %d stores" % len(versions))


if __name__ == "__main__":
    main()
