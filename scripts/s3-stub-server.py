#!/usr/bin/env python3
"""A stub S3 server on 127.0.0.1 for the remote-folder tests (Spec/remote.md 10, 11): the answers
moto never gives, and a listing of many keys without uploading them. Standard library only.

    s3-stub-server.py

Path-style requests, unsigned (the tests run without AWS credentials, remote.md 11.6):

  - bucket `many`: 10,000 keys `E/events/f00000` ... `E/events/f09999`, each holding its own last
    segment's 6 bytes, dated 1,600,000,000 + its number of seconds. ListObjectsV2 answers pages
    of at most `max-keys` (at most 1,000) keys, each truncated page with an opaque continuation
    token the stub alone can map back; an unknown token is answered 400. The keys are sent
    URL-encoded when `encoding-type=url` is asked.
  - bucket `fail`, by prefix: `list500/` (ListObjectsV2 answers 500 InternalError), `malformed/`
    (a ListBucketResult cut short), `notoken/` (a truncated page without a token), `cycle/`
    (tokens A, B, A, ...; after 20 pages answered 400), `repeat/` (a second page listing the first's key again:
    `repeat/a`, then `repeat/a` and `repeat/b`; each object is the byte `y`), and `files/`
    listing `files/ok` (2 bytes), `files/drop` (the connection dropped after 10 of 100 bytes),
    `files/stall` (10 of 100 bytes, then nothing for 5 s) and `files/500` (GetObject answers 500).

`GET /_stats` answers `LIST-REQUESTS LARGEST-PAGE` of the bucket `many`. Binds an ephemeral port,
prints it on one line, and serves until standard input closes.
"""
import datetime
import hashlib
import http.server
import os
import socket
import sys
import threading
import time
import urllib.parse

COUNT = 10_000
KEYS = [f"E/events/f{i:05d}" for i in range(COUNT)]
KEY_SET = set(KEYS)
# Opaque tokens: a hash of the index a page starts at, known only here.
TOKENS = {hashlib.sha256(f"page-{i}".encode()).hexdigest(): i for i in range(0, COUNT)}
TOKEN_OF = {i: t for t, i in TOKENS.items()}
FILES = {"files/ok": (2, 2), "files/drop": (100, 10), "files/stall": (100, 10), "files/500": (2, 2)}
STATS = {"lists": 0, "largest": 0, "cycle": 0}
LOCK = threading.Lock()


def stamp(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def contents(key, size, seconds, encode):
    shown = urllib.parse.quote_plus(key, safe="/") if encode else key
    return (
        f"<Contents><Key>{shown}</Key><LastModified>{stamp(seconds)}</LastModified>"
        f'<ETag>"{hashlib.md5(key.encode()).hexdigest()}"</ETag><Size>{size}</Size></Contents>'
    )


def result(bucket, prefix, items, truncated, token, encode):
    parts = ['<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">']
    parts.append(f"<Name>{bucket}</Name><Prefix>{prefix}</Prefix><KeyCount>{len(items)}</KeyCount>")
    parts.append(f"<IsTruncated>{'true' if truncated else 'false'}</IsTruncated>")
    if encode:
        parts.append("<EncodingType>url</EncodingType>")
    if token:
        parts.append(f"<NextContinuationToken>{token}</NextContinuationToken>")
    parts.extend(items)
    parts.append("</ListBucketResult>")
    return "".join(parts).encode()


def error(code):
    return f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code><Message>stub</Message></Error>'.encode()


class Stub(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body leave in separate writes: with Nagle's algorithm on, each answer on a
    # kept-alive connection would wait for the client's delayed ACK (40 ms), 10,000 times.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        parsed = urllib.parse.urlsplit(self.path)
        query = {k: v[0] for k, v in urllib.parse.parse_qs(parsed.query, keep_blank_values=True).items()}
        segments = parsed.path.lstrip("/").split("/", 1)
        bucket = segments[0]
        key = urllib.parse.unquote(segments[1]) if len(segments) > 1 else ""
        if parsed.path == "/_stats":
            return self.answer(200, f"{STATS['lists']} {STATS['largest']}".encode())
        if "Authorization" in self.headers:
            return self.answer(400, error("UnexpectedSignature"))
        if not key and query.get("list-type") == "2":
            return self.list(bucket, query)
        if bucket == "many" and key in KEY_SET:
            index = int(key[-5:])
            body = key[-6:].encode()
            return self.answer(200, body, [("Last-Modified", http_date(1_600_000_000 + index)), ("ETag", f'"{hashlib.md5(key.encode()).hexdigest()}"')])
        if bucket == "fail" and key in ("repeat/a", "repeat/b"):
            return self.answer(200, b"y", [("Last-Modified", http_date(1_600_000_000))])
        if bucket == "fail" and key in FILES:
            size, sent = FILES[key]
            if key == "files/500":
                return self.answer(500, error("InternalError"))
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.end_headers()
            self.wfile.write(b"x" * sent)
            self.wfile.flush()
            if key == "files/drop":
                self.connection.shutdown(socket.SHUT_RDWR)
            elif key == "files/stall":
                time.sleep(5)
            self.close_connection = True
            return
        return self.answer(404, error("NoSuchKey"))

    def list(self, bucket, query):
        prefix = query.get("prefix", "")
        encode = query.get("encoding-type") == "url"
        if bucket == "many":
            size = min(int(query.get("max-keys", "1000")), 1000)
            token = query.get("continuation-token")
            if token is not None and token not in TOKENS:
                return self.answer(400, error("InvalidArgument"))
            start = TOKENS[token] if token is not None else 0
            chosen = [k for k in KEYS[start:] if k.startswith(prefix)][:size]
            end = start + len(chosen)
            with LOCK:
                STATS["lists"] += 1
                STATS["largest"] = max(STATS["largest"], len(chosen))
            items = [contents(k, 6, 1_600_000_000 + int(k[-5:]), encode) for k in chosen]
            truncated = end < COUNT
            return self.answer(200, result(bucket, prefix, items, truncated, TOKEN_OF.get(end) if truncated else None, encode))
        if bucket == "fail":
            if prefix == "list500/":
                return self.answer(500, error("InternalError"))
            if prefix == "malformed/":
                return self.answer(200, b'<?xml version="1.0"?><ListBucketResult><Contents><Key>malformed/a</Key>')
            if prefix == "notoken/":
                return self.answer(200, result(bucket, prefix, [contents("notoken/a", 1, 1_600_000_000, encode)], True, None, encode))
            if prefix == "cycle/":
                # Tokens A, B, then A again: each page new keys' names, the pages for ever.
                token = query.get("continuation-token")
                # A client that follows the cycle is stopped after 20 pages (400), so that a
                # test of it ends.
                with LOCK:
                    STATS["cycle"] = 0 if token is None else STATS["cycle"] + 1
                    if STATS["cycle"] > 20:
                        return self.answer(400, error("EndlessListing"))
                following = {None: "A", "A": "B", "B": "A"}[token]
                return self.answer(200, result(bucket, prefix, [contents(f"cycle/{token or 'first'}", 1, 1_600_000_000, encode)], True, following, encode))
            if prefix == "repeat/":
                # Two pages, the second listing the first's key again.
                if query.get("continuation-token") == "second":
                    items = [contents(k, 1, 1_600_000_000, encode) for k in ["repeat/a", "repeat/b"]]
                    return self.answer(200, result(bucket, prefix, items, False, None, encode))
                return self.answer(200, result(bucket, prefix, [contents("repeat/a", 1, 1_600_000_000, encode)], True, "second", encode))
            if prefix == "files/":
                items = [contents(k, size, 1_600_000_000, encode) for k, (size, _) in sorted(FILES.items())]
                return self.answer(200, result(bucket, prefix, items, False, None, encode))
        return self.answer(404, error("NoSuchBucket"))

    def do_PUT(self):
        self.answer(405, error("MethodNotAllowed"))

    do_DELETE = do_POST = do_HEAD = do_PUT


def http_date(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT")


def main():
    def watch():
        sys.stdin.buffer.read()
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    server.daemon_threads = True
    print(server.server_port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
