#!/usr/bin/env python3
"""WebDAV servers on 127.0.0.1 for the remote-folder tests (Spec/remote.md 9).

    webdav-test-server.py wsgidav ROOT [--user U --password P [--basic]]
        WsgiDAV (with cheroot) serving ROOT read-only; Digest authentication when a user is
        given (--basic: Basic only).
    webdav-test-server.py stub
        A small server of the answers WsgiDAV never gives: 401, 403, 404, 500, malformed XML, a
        connection dropped mid-body, a stall, unsafe names, redirects, a body too large, and a
        folder of 10,000 members in one PROPFIND answer (/huge/).

Either binds an ephemeral port on 127.0.0.1, prints it on one line, and serves until killed.
"""
import http.server
import os
import socket
import sys
import threading
import time


def exit_with_parent():
    """Ends the server when standard input closes: the test process that started it is gone."""

    def watch():
        sys.stdin.buffer.read()
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def serve_wsgidav(argv):
    from cheroot import wsgi
    from wsgidav.wsgidav_app import WsgiDAVApp

    root = argv[0]
    rest = [a for a in argv[1:] if a != "--basic"]
    options = dict(zip(rest[0::2], rest[1::2]))
    user, password = options.get("--user"), options.get("--password")
    config = {
        "host": "127.0.0.1",
        "port": 0,
        "provider_mapping": {"/": {"root": root, "readonly": True}},
        "simple_dc": {"user_mapping": {"*": {user: {"password": password}} if user else True}},
        "http_authenticator": {
            "domain_controller": None,
            "accept_basic": True,
            "accept_digest": "--basic" not in argv,
            "default_to_digest": "--basic" not in argv,
        },
        "verbose": 0,
        "logging": {"enable": False},
        "dir_browser": {"enable": False},
        "lock_storage": False,
        "property_manager": None,
    }
    app = WsgiDAVApp(config)
    server = wsgi.Server(("127.0.0.1", 0), app, numthreads=16)
    server.prepare()
    print(server.bind_addr[1], flush=True)
    server.serve()


DATE = "Tue, 03 Nov 2026 10:20:30 GMT"


def multistatus(base, members):
    """members: (href, is_collection, size) tuples; the folder itself first."""
    parts = ['<?xml version="1.0" encoding="utf-8"?><D:multistatus xmlns:D="DAV:">']
    for href, folder, size in [(base, True, 0)] + members:
        kind = "<D:collection/>" if folder else ""
        length = "" if folder else f"<D:getcontentlength>{size}</D:getcontentlength>"
        parts.append(
            f"<D:response><D:href>{href}</D:href><D:propstat><D:prop><D:resourcetype>{kind}</D:resourcetype>{length}"
            f'<D:getetag>"e{len(href)}"</D:getetag><D:getlastmodified>{DATE}</D:getlastmodified></D:prop>'
            "<D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
        )
    parts.append("</D:multistatus>")
    return "".join(parts).encode()


class Stub(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    lock = threading.Lock()
    in_flight = 0
    most_in_flight = 0

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_PROPFIND(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        path = self.path
        if path.startswith("/status-"):
            code = int(path.split("-")[1].strip("/"))
            headers = [("WWW-Authenticate", 'Basic realm="stub"')] if code == 401 else []
            return self.answer(code, b"no", headers)
        if path == "/malformed/":
            return self.answer(207, b'<?xml version="1.0"?><D:multistatus xmlns:D="DAV:"><D:response><D:href>/malformed/a</D:href>')
        if path == "/not-multistatus/":
            return self.answer(207, b"<html><body>hello</body></html>")
        if path == "/drop/":
            return self.answer(207, multistatus("/drop/", [("/drop/a", False, 100)]))
        if path == "/stall/":
            return self.answer(207, multistatus("/stall/", [("/stall/a", False, 100)]))
        if path == "/big/":
            return self.answer(207, multistatus("/big/", [("/big/events", True, 0)]))
        if path == "/big/events/":
            return self.answer(207, multistatus("/big/events/", [("/big/events/huge", False, 300 * 1024 * 1024)]))
        if path == "/many/":
            return self.answer(207, multistatus("/many/", [(f"/many/f{i:02d}", False, 2) for i in range(40)]))
        if path == "/huge/":
            return self.answer(207, multistatus("/huge/", [(f"/huge/f{i:05d}", False, 6) for i in range(10_000)]))
        if path == "/names/":
            members = [
                ("/names/with%20space", False, 5),
                ("/names/%C3%BCn%C3%AFcode%E2%80%94%E6%97%A5", False, 5),
                ("/names/..", False, 5),
                ("/names/%2e%2e", False, 5),
                ("/names/a%2Fb", False, 5),
                # An encoded slash then a combining mark: one character, so only bytes see the slash.
                ("/names/..%2F%CC%81escape", False, 5),
                ("/names/../escape", False, 5),
                ("/elsewhere/x", False, 5),
                ("http://127.0.0.2/names/y", False, 5),
                ("/names/nul%00name", False, 5),
                ("/names/" + "n" * 256, False, 5),
            ]
            return self.answer(207, multistatus("/names/", members))
        if path == "/redirect-away/":
            return self.answer(302, b"", [("Location", f"http://localhost:{self.server.server_port}/names/")])
        if path.startswith("/redirect-here/"):
            return self.answer(301, b"", [("Location", "/names/" + path[len("/redirect-here/"):])])
        return self.answer(404, b"not found")

    def do_GET(self):
        path = self.path
        if path.startswith("/redirect-here/"):
            return self.answer(301, b"", [("Location", "/names/" + path[len("/redirect-here/"):])])
        if path == "/drop/a":
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b"x" * 10)
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        if path == "/stall/a":
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b"x" * 10)
            self.wfile.flush()
            time.sleep(6)
            self.close_connection = True
            return
        if path.startswith("/many/f"):
            with Stub.lock:
                Stub.in_flight += 1
                Stub.most_in_flight = max(Stub.most_in_flight, Stub.in_flight)
            time.sleep(0.2)
            with Stub.lock:
                Stub.in_flight -= 1
            return self.answer(200, b"ok", [("Last-Modified", DATE)])
        if path == "/most-in-flight":
            return self.answer(200, str(Stub.most_in_flight).encode())
        if path.startswith("/names/"):
            return self.answer(200, b"hello", [("Last-Modified", DATE)])
        return self.answer(404, b"not found")

    def do_PUT(self):
        self.answer(405)

    do_DELETE = do_MOVE = do_MKCOL = do_PROPPATCH = do_PUT


def serve_stub():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    server.daemon_threads = True
    print(server.server_port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    exit_with_parent()
    if len(sys.argv) >= 3 and sys.argv[1] == "wsgidav":
        serve_wsgidav(sys.argv[2:])
    elif len(sys.argv) == 2 and sys.argv[1] == "stub":
        serve_stub()
    else:
        sys.exit(__doc__)
