#!/usr/bin/env python3
"""Writes Fixtures/wrappers/: cloud folders wrapped the way Ensembles 2's wrappers do, and damaged
wrapped files, with an implementation independent of the toolkit (Spec/wrappers.md).

RNCryptor v3 comes from Python's `cryptography` (PBKDF2-HMAC-SHA1, AES-256-CBC, PKCS#7, HMAC-SHA256)
and zip archives from the standard `zipfile` module. Every expected code and byte offset in
`damaged/cases.json` is computed here from the bytes written, not by the toolkit.

Usage: scripts/make-wrapped-fixtures.py [--out Fixtures/wrappers]
Salts and IVs come from a seeded generator, so a run gives the same bytes again (zlib versions
may still change deflated bytes: tests compare content, never these bytes with new output).
"""
import argparse
import hashlib
import io
import json
import os
import random
import shutil
import struct
import sys
import zipfile
import zlib

from cryptography.hazmat.primitives import hashes, hmac, padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PASSWORD = "correct horse battery staple"
WRONG_PASSWORD = "Tr0ub4dor&3"
RANDOM = random.Random(16)


def random_bytes(count):
    return bytes(RANDOM.getrandbits(8) for _ in range(count))


def derive(password, salt):
    return PBKDF2HMAC(algorithm=hashes.SHA1(), length=32, salt=salt, iterations=10000).derive(password.encode("utf-8"))


def encrypt(plaintext, password=PASSWORD):
    """RNCryptor v3, password mode: 03 01 | encryption salt | HMAC salt | IV | ciphertext | HMAC."""
    encryption_salt, hmac_salt, iv = random_bytes(8), random_bytes(8), random_bytes(16)
    padder = padding.PKCS7(128).padder()
    padded = padder.update(plaintext) + padder.finalize()
    encryptor = Cipher(algorithms.AES(derive(password, encryption_salt)), modes.CBC(iv)).encryptor()
    message = bytes([3, 1]) + encryption_salt + hmac_salt + iv + encryptor.update(padded) + encryptor.finalize()
    mac = hmac.HMAC(derive(password, hmac_salt), hashes.SHA256())
    mac.update(message)
    return message + mac.finalize()


def zip_bytes(name, content, deflate=True, descriptor=False):
    """One entry, as SSZipArchive writes it; `descriptor` writes to an unseekable stream, which
    makes zipfile put the CRC and sizes in a data descriptor after the data (flag bit 3)."""
    buffer = io.BytesIO()
    target = Unseekable(buffer) if descriptor else buffer
    method = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    with zipfile.ZipFile(target, "w", compression=method) as archive:
        info = zipfile.ZipInfo(name, date_time=(2024, 5, 1, 10, 0, 0))
        info.compress_type = method
        archive.writestr(info, content)
    return buffer.getvalue()


class Unseekable(io.RawIOBase):
    def __init__(self, target):
        self.target = target

    def writable(self):
        return True

    def seekable(self):
        return False

    def write(self, data):
        return self.target.write(data)

    def flush(self):
        pass


def end_record(data):
    """Offset of the end of central directory record (no comment is ever written here)."""
    offset = data.rfind(b"PK\x05\x06")
    assert offset == len(data) - 22, "unexpected end record"
    return offset


def central_offset(data):
    return struct.unpack_from("<I", data, end_record(data) + 16)[0]


def local_data_start(data):
    name_length, extra_length = struct.unpack_from("<HH", data, 26)
    return 30 + name_length + extra_length


def wrap(content, layers, name):
    """Applies the layers, innermost first, e.g. ["zip", "encrypted"] zips then encrypts."""
    for layer in layers:
        content = zip_bytes(name, content) if layer == "zip" else encrypt(content)
    return content


SOURCES = {
    "healthy": "Fixtures/verify/healthy",
    "multipart": "Fixtures/merge/data-file-and-multipart",
}
VARIANTS = {
    "encrypted": (["encrypted"], ""),
    "zipped": (["zip"], ""),
    # Zipped, then encrypted; event and baseline names carry the wrapper suffixes, which readers
    # strip before matching (Spec/wrappers.md 5.3).
    "zipped-encrypted": (["zip", "encrypted"], ".zip.enc"),
}


def write_folders(out):
    cases = []
    folders = os.path.join(out, "folders")
    for source_name, source in SOURCES.items():
        for variant, (layers, suffix) in VARIANTS.items():
            name = f"{source_name}-{variant}"
            write_folder(os.path.join(ROOT, source, "cloud"), os.path.join(folders, name, "cloud"), layers, suffix, lambda path: True)
            cases.append({"name": name, "source": source, "layers": layers, "suffix": suffix, "password": "password.txt" if "encrypted" in layers else None})
    # A folder that two devices with different settings wrote into: ALPHA-STORE's events are
    # encrypted, everything else is plain.
    name = "healthy-mixed"
    write_folder(os.path.join(ROOT, SOURCES["healthy"], "cloud"), os.path.join(folders, name, "cloud"), ["encrypted"], "", lambda path: "ALPHA-STORE_" in os.path.basename(path))
    cases.append({"name": name, "source": SOURCES["healthy"], "layers": ["encrypted"], "suffix": "", "password": "password.txt", "only": "events of ALPHA-STORE"})
    with open(os.path.join(folders, "password.txt"), "w") as handle:
        handle.write(PASSWORD + "\n")
    with open(os.path.join(folders, "cases.json"), "w") as handle:
        json.dump({"password": PASSWORD, "cases": cases}, handle, indent=2)
        handle.write("\n")


def write_folder(source, destination, layers, suffix, selected):
    for directory, _, files in sorted(os.walk(source)):
        relative = os.path.relpath(directory, source)
        target = os.path.join(destination, relative)
        os.makedirs(target, exist_ok=True)
        for file_name in sorted(files):
            path = os.path.join(directory, file_name)
            with open(path, "rb") as handle:
                content = handle.read()
            if not selected(path):
                shutil.copyfile(path, os.path.join(target, file_name))
                continue
            folder = os.path.basename(directory)
            written_name = file_name + suffix if folder in ("events", "baselines") else file_name
            with open(os.path.join(target, written_name), "wb") as handle:
                handle.write(wrap(content, layers, file_name))


def write_damaged(out):
    damaged = os.path.join(out, "damaged")
    os.makedirs(damaged, exist_ok=True)
    with open(os.path.join(ROOT, SOURCES["healthy"], "cloud/E/events/0_ALPHA-STORE_0.cdeevent"), "rb") as handle:
        event = handle.read()
    cases = []

    def add(file_name, data, code, offset, why, password=PASSWORD):
        with open(os.path.join(damaged, file_name), "wb") as handle:
            handle.write(data)
        cases.append({"file": file_name, "password": password, "code": code, "offset": offset, "why": why})

    encrypted = encrypt(event)
    flipped = bytearray(encrypted)
    flipped[-1] ^= 0x01
    add("hmac-flipped.cdeevent", bytes(flipped), "wrap.bad-password", len(encrypted) - 32,
        "the last byte of the HMAC flipped: the HMAC (at length - 32) no longer matches")
    body_flipped = bytearray(encrypt(event))
    body_flipped[40] ^= 0x80
    add("ciphertext-flipped.cdeevent", bytes(body_flipped), "wrap.bad-password", len(body_flipped) - 32,
        "one ciphertext byte flipped: checked by the HMAC before anything is decrypted")
    cut = encrypt(event)[:-5]
    add("truncated.cdeevent", cut, "wrap.truncated", len(cut),
        "an encrypted file cut 5 bytes short: the ciphertext is no longer whole 16-byte blocks")
    add("wrong-password.cdeevent", encrypt(event, WRONG_PASSWORD), "wrap.bad-password", len(encrypt(event, WRONG_PASSWORD)) - 32,
        "encrypted with another password")
    add("no-password.cdeevent", encrypt(event), "wrap.password-required", 0,
        "encrypted, read without a password", password=None)
    short = bytes([3, 1]) + random_bytes(60)
    add("short-encrypted-header.cdeevent", short, "file.kind-unknown", 0,
        "03 01 followed by 60 bytes: shorter than the 82 bytes of the smallest password-mode file, so not detected as encrypted")

    bomb_content = b" " * (20 * 1024 * 1024)
    bomb = zip_bytes("0_ALPHA-STORE_0.cdeevent", bomb_content)
    add("zip-bomb.cdeevent", bomb, "wrap.inflate-ratio", central_offset(bomb) + 24,
        "20 MiB of spaces deflated to %d bytes: more than 100 times; refused from the central directory's size field before inflating" % (len(bomb)))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("0_ALPHA-STORE_0.cdeevent", (2024, 5, 1, 10, 0, 0)), event)
        archive.writestr(zipfile.ZipInfo("extra.txt", (2024, 5, 1, 10, 0, 0)), b"a second entry")
    two = buffer.getvalue()
    add("zip-two-entries.cdeevent", two, "wrap.zip-entry-count", end_record(two) + 10,
        "two entries: the entry count of the end record")
    crc = bytearray(zip_bytes("0_ALPHA-STORE_0.cdeevent", event))
    central = central_offset(crc)
    (stored_crc,) = struct.unpack_from("<I", crc, 14)
    wrong = stored_crc ^ 0xFFFFFFFF
    struct.pack_into("<I", crc, 14, wrong)
    struct.pack_into("<I", crc, central + 16, wrong)
    add("zip-crc-mismatch.cdeevent", bytes(crc), "wrap.zip-checksum", local_data_start(crc),
        "the CRC-32 in both headers changed: the content no longer matches it; reported at the entry's data")
    zip64 = io.BytesIO()
    with zipfile.ZipFile(zip64, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open(zipfile.ZipInfo("0_ALPHA-STORE_0.cdeevent", (2024, 5, 1, 10, 0, 0)), "w", force_zip64=True) as entry:
            entry.write(event)
    add("zip64.cdeevent", zip64.getvalue(), "wrap.zip-unsupported", 18,
        "the local header carries ZIP64 sizes (0xFFFFFFFF at offset 18); ZIP64 is refused")
    stored_cut = zip_bytes("0_ALPHA-STORE_0.cdeevent", event)[:-30]
    add("zip-truncated.cdeevent", stored_cut, "wrap.truncated", len(stored_cut),
        "a zip archive cut 30 bytes short: the end record is gone")
    add("zip-in-zip.cdeevent", zip_bytes("inner.zip", zip_bytes("0_ALPHA-STORE_0.cdeevent", event)), "wrap.too-many-layers", 0,
        "a zip archive inside a zip archive: one zip layer at most")
    add("encrypted-twice.cdeevent", encrypt(encrypt(event)), "wrap.too-many-layers", 0,
        "encrypted twice: one encryption layer at most")
    add("zip-encrypted-zip.cdeevent", zip_bytes("a", encrypt(zip_bytes("b", event))), "wrap.too-many-layers", 0,
        "three layers: two at most")
    add("binary-plist.cdeevent", b"bplist00\xd1\x01\x02Ukey\x00\x08\x0b\x11\x00\x00\x00\x00\x00\x00\x01\x01\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x12",
        "file.kind-binary-plist", 0, "a binary property list placed as an event")
    add("sqlite.cdeevent", b"SQLite format 3\x00" + bytes(84), "file.kind-sqlite", 0, "the first 100 bytes of an SQLite database placed as an event")
    with open(os.path.join(ROOT, SOURCES["healthy"], "cloud/E/stores/ALPHA-STORE"), "rb") as handle:
        add("xml-plist.cdeevent", handle.read(), "file.kind-xml-plist", 0, "a store registration placed as an event")
    add("random.cdeevent", bytes([0x00, 0xFF, 0x13, 0x37]) + random_bytes(60), "file.kind-unknown", 0, "64 random bytes placed as an event")
    add("zipped-sqlite.cdeevent", zip_bytes("db.sqlite", b"SQLite format 3\x00" + bytes(84)), "file.kind-sqlite", 0,
        "an SQLite database inside a zip archive: unwrapped, then named; the offset is in the unwrapped bytes")

    # wrap.zip-corrupt and where it points (Spec/wrappers.md 4.2 steps 4, 6, 7, 8), on stored
    # archives (no DEFLATE, so the bytes never depend on zlib); no generator call, so the files
    # above keep their bytes.
    def patched(edit, descriptor=False):
        data = bytearray(zip_bytes("0_ALPHA-STORE_0.cdeevent", event, deflate=descriptor, descriptor=descriptor))
        end = len(data) - 22
        central = central_offset(data)
        at = edit(data, end, central)
        return bytes(data), at

    def put(data, offset, fmt, value):
        struct.pack_into(fmt, data, offset, value)

    def too_long_directory(data, end, central):
        put(data, end + 12, "<I", struct.unpack_from("<I", data, end + 12)[0] + 1)
        return end + 12
    data, at = patched(too_long_directory)
    add("zip-directory-past-end.cdeevent", data, "wrap.zip-corrupt", at,
        "the end record's central directory size is one byte too large, so the directory would run into the end record (step 4): at the end record's size field, end + 12")

    def moved_directory(data, end, central):
        put(data, end + 16, "<I", central - 1)
        put(data, end + 12, "<I", end - (central - 1))
        return central - 1
    data, at = patched(moved_directory)
    add("zip-directory-not-a-header.cdeevent", data, "wrap.zip-corrupt", at,
        "the end record gives the central directory one byte early (size adjusted), where no PK 01 02 starts (step 4): at the offset it gives")

    def comment_too_long(data, end, central):
        put(data, central + 32, "<H", 1)
        return central + 28
    data, at = patched(comment_too_long)
    add("zip-header-not-filling.cdeevent", data, "wrap.zip-corrupt", at,
        "the central header claims a one-byte comment, so it no longer fills the central directory exactly (step 4): at its lengths, central header + 28")

    def stored_sizes(data, end, central):
        put(data, central + 20, "<I", struct.unpack_from("<I", data, central + 20)[0] + 1)
        return central + 20
    data, at = patched(stored_sizes)
    add("zip-stored-sizes-differ.cdeevent", data, "wrap.zip-corrupt", at,
        "a stored entry whose compressed size in the central header is one more than its size (step 6): at the central header's compressed size, + 20")

    def no_local(data, end, central):
        put(data, central + 42, "<I", 1)
        return central + 42
    data, at = patched(no_local)
    add("zip-no-local-header.cdeevent", data, "wrap.zip-corrupt", at,
        "the central header gives the local header at offset 1, where no PK 03 04 starts (step 7): at the central header's local header offset field, + 42")

    def local_method(data, end, central):
        put(data, 8, "<H", 8)
        return 6
    data, at = patched(local_method)
    add("zip-local-method-differs.cdeevent", data, "wrap.zip-corrupt", at,
        "the local header says deflated where the central header says stored (step 7): at the local header's flags, + 6, which its method follows")

    def local_crc(data, end, central):
        put(data, 14, "<I", struct.unpack_from("<I", data, 14)[0] ^ 1)
        return 14
    data, at = patched(local_crc)
    add("zip-local-crc-differs.cdeevent", data, "wrap.zip-corrupt", at,
        "without flag bit 3, the local header's CRC-32 differs from the central header's (step 8): at the local header's CRC-32, + 14")

    def descriptor_crc(data, end, central):
        stored = struct.unpack_from("<I", data, central + 20)[0]
        position = local_data_start(data) + stored
        if data[position:position + 4] == b"PK\x07\x08":
            position += 4
        put(data, position, "<I", struct.unpack_from("<I", data, position)[0] ^ 1)
        return position
    data, at = patched(descriptor_crc, descriptor=True)
    add("zip-descriptor-differs.cdeevent", data, "wrap.zip-corrupt", at,
        "with flag bit 3, the data descriptor's CRC-32 differs from the central header's (step 8): at the descriptor's CRC-32, after its optional PK 07 08 signature")

    # Wrapped files that are read: each holds exactly the bytes of the plain event.
    valid = os.path.join(out, "valid")
    os.makedirs(valid, exist_ok=True)
    valid_cases = []
    for file_name, data, layers in [
        ("stored.cdeevent", zip_bytes("0_ALPHA-STORE_0.cdeevent", event, deflate=False), ["zip"]),
        ("deflated.cdeevent", zip_bytes("0_ALPHA-STORE_0.cdeevent", event), ["zip"]),
        ("data-descriptor.cdeevent", zip_bytes("0_ALPHA-STORE_0.cdeevent", event, descriptor=True), ["zip"]),
        ("encrypted.cdeevent", encrypt(event), ["encrypted"]),
        ("encrypted-zip.cdeevent", encrypt(zip_bytes("0_ALPHA-STORE_0.cdeevent", event)), ["encrypted", "zip"]),
        ("zipped-encrypted.cdeevent", zip_bytes("0_ALPHA-STORE_0.cdeevent", encrypt(event)), ["zip", "encrypted"]),
    ]:
        with open(os.path.join(valid, file_name), "wb") as handle:
            handle.write(data)
        valid_cases.append({"file": file_name, "layers": layers, "password": PASSWORD})
    with open(os.path.join(valid, "cases.json"), "w") as handle:
        json.dump({"content": SOURCES["healthy"] + "/cloud/E/events/0_ALPHA-STORE_0.cdeevent",
                   "contentSHA256": hashlib.sha256(event).hexdigest(), "cases": valid_cases}, handle, indent=2)
        handle.write("\n")
    with open(os.path.join(damaged, "cases.json"), "w") as handle:
        json.dump({"cases": cases}, handle, indent=2)
        handle.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "Fixtures/wrappers"))
    arguments = parser.parse_args()
    for sub in ("folders", "damaged", "valid"):
        shutil.rmtree(os.path.join(arguments.out, sub), ignore_errors=True)
    write_folders(arguments.out)
    write_damaged(arguments.out)
    print(f"wrote {arguments.out}")


if __name__ == "__main__":
    sys.exit(main())
