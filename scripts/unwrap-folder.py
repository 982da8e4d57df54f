#!/usr/bin/env python3
"""Removes Ensembles 2's wrappers from every file of a folder, independently of the toolkit: the
check that files written by `logtool convert --zip/--encrypt` are what Spec/wrappers.md 3 and 4
say (RNCryptor v3 through Python's `cryptography`, zip archives through `zipfile`).

Usage: scripts/unwrap-folder.py --password-file FILE SOURCE DESTINATION
Writes DESTINATION (which must not exist) with every file of SOURCE unwrapped, and prints a JSON
object on standard output: each file's path inside SOURCE -> its layers, outermost first
(["encrypted", "zip"] is an encrypted file holding a zip archive). Layers are detected by the first
bytes (Spec/wrappers.md 2), at most two. Exit 1 when a file does not unwrap (a wrong password
fails the HMAC check).
"""
import argparse
import hmac as std_hmac
import io
import json
import os
import sys
import zipfile

from cryptography.hazmat.primitives import hashes, hmac, padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC


def derive(password, salt):
    return PBKDF2HMAC(algorithm=hashes.SHA1(), length=32, salt=salt, iterations=10000).derive(password)


def decrypt(data, password):
    """RNCryptor v3, password mode: 03 01 | encryption salt | HMAC salt | IV | ciphertext | HMAC."""
    if len(data) < 82 or data[0] != 3 or data[1] != 1:
        raise ValueError("not an RNCryptor v3 password-mode file")
    encryption_salt, hmac_salt, iv = data[2:10], data[10:18], data[18:34]
    message, mac = data[:-32], data[-32:]
    check = hmac.HMAC(derive(password, hmac_salt), hashes.SHA256())
    check.update(message)
    if not std_hmac.compare_digest(check.finalize(), mac):
        raise ValueError("HMAC mismatch: wrong password or changed bytes")
    decryptor = Cipher(algorithms.AES(derive(password, encryption_salt)), modes.CBC(iv)).decryptor()
    padded = decryptor.update(data[34:-32]) + decryptor.finalize()
    unpadder = padding.PKCS7(128).unpadder()
    return unpadder.update(padded) + unpadder.finalize()


def unzip(data, name):
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        entries = archive.infolist()
        if len(entries) != 1:
            raise ValueError("%d entries, not one" % len(entries))
        if entries[0].filename != name:
            raise ValueError("the entry is named %r, not %r" % (entries[0].filename, name))
        return archive.read(entries[0])  # checks the CRC-32


def unwrap(data, name, password):
    layers = []
    while len(layers) < 2:
        if data[:4] == b"PK\x03\x04" and "zip" not in layers:
            data = unzip(data, name)
            layers.append("zip")
        elif len(data) >= 82 and data[:2] == b"\x03\x01" and "encrypted" not in layers:
            data = decrypt(data, password)
            layers.append("encrypted")
        else:
            break
    return data, layers


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--password-file", required=True)
    parser.add_argument("source")
    parser.add_argument("destination")
    arguments = parser.parse_args()
    with open(arguments.password_file, "rb") as handle:
        password = handle.read()
    password = password[:-1] if password.endswith(b"\n") else password
    password = password[:-1] if password.endswith(b"\r") else password
    found = {}
    for directory, _, files in sorted(os.walk(arguments.source)):
        relative = os.path.relpath(directory, arguments.source)
        os.makedirs(os.path.join(arguments.destination, relative), exist_ok=True)
        for name in sorted(files):
            path = os.path.normpath(os.path.join(relative, name))
            with open(os.path.join(directory, name), "rb") as handle:
                data = handle.read()
            try:
                content, layers = unwrap(data, name, password)
            except Exception as error:  # any failure is this file's
                print("%s: %s" % (path, error), file=sys.stderr)
                return 1
            with open(os.path.join(arguments.destination, path), "wb") as handle:
                handle.write(content)
            found[path] = layers
    json.dump(found, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
