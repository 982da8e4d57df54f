#!/usr/bin/env python3
"""A stub of the Ensembles Server protocol on 127.0.0.1, for the remote-folder tests
(Spec/remote.md 12). Standard library only.

    ensembles-server-stub.py ROOT --user U --password P [--inject FOLDER NAME]... [--redirect NAME]
                             [--malformed FOLDER] [--refuse FOLDER] [--status FOLDER CODE]
                             [--many FOLDER COUNT] [--drop NAME] [--stall NAME] [--fail NAME]

Serves the folder ROOT as a user's cloud tree: the cloud path /A/B is ROOT/A/B. Every POST must
carry HTTP Basic credentials U:P, else it is answered 401. Endpoints, as the 1.x client
(CDENodeCloudFileSystem.m, branch `server`) calls them, each answering a JSON object with
"success": true:

    POST /login                              {}
    POST /fileexists    {"path": P}          {"exists": bool, "isdir": bool}
    POST /listdir       {"path": P}          {"files": [name, ...]}   (files and folders alike)
    POST /downloadurls  {"paths": [P, ...]}  {"urls": [url, ...]}     (one URL per path)

The URLs point back at this server (GET /blob?path=...&signature=...), which serves the bytes
with Content-Length, Last-Modified (the file's date) and ETag and asks no credentials, as a
presigned S3 URL does. --inject adds NAME to the listing of cloud folder FOLDER (names no
file holds, such as `..`); --redirect makes the download of files named NAME answer 302, once, to itself (so a client that
follows redirects from a presigned URL gets the bytes). --malformed makes the listing of FOLDER a
body that is not JSON; --refuse makes it a JSON object with "success": false; --status makes it
answer the HTTP status CODE; --many adds COUNT names `f00000`, `f00001`, ... to it (listed only:
no file holds them). The download of files named NAME: --drop sends 10 of the bytes it announces
and closes the connection, --stall sends 10 and then nothing for 5 s, --fail answers 500.

Binds an ephemeral port, prints it on one line, and serves until standard input closes.
"""
import base64
import email.utils
import hashlib
import http.server
import json
import os
import socket
import sys
import threading
import time
import urllib.parse


def exit_with_parent():
    def watch():
        sys.stdin.buffer.read()
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def main(argv):
    root = os.path.realpath(argv[0])
    user = password = None
    injected = {}
    redirected = set()
    malformed = set()
    refused = set()
    statuses = {}
    many = {}
    broken = {}
    index = 1
    while index < len(argv):
        option = argv[index]
        if option == "--user":
            user = argv[index + 1]
            index += 2
        elif option == "--password":
            password = argv[index + 1]
            index += 2
        elif option == "--inject":
            injected.setdefault(argv[index + 1], []).append(argv[index + 2])
            index += 3
        elif option == "--malformed":
            malformed.add(argv[index + 1])
            index += 2
        elif option == "--refuse":
            refused.add(argv[index + 1])
            index += 2
        elif option == "--status":
            statuses[argv[index + 1]] = int(argv[index + 2])
            index += 3
        elif option == "--many":
            many[argv[index + 1]] = int(argv[index + 2])
            index += 3
        elif option in ("--drop", "--stall", "--fail"):
            broken[argv[index + 1]] = option[2:]
            index += 2
        elif option == "--redirect":
            redirected.add(argv[index + 1])
            index += 2
        else:
            raise SystemExit("unknown option " + option)
    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    def local(cloud_path):
        """ROOT joined with a cloud path, or None when the path would leave ROOT."""
        if not isinstance(cloud_path, str) or not cloud_path.startswith("/"):
            return None
        parts = [part for part in cloud_path.split("/") if part]
        if any(part in (".", "..") or "\0" in part for part in parts):
            return None
        return os.path.join(root, *parts)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def answer(self, status, document, headers=()):
            body = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.headers.get("Authorization") != expected:
                return self.answer(401, {"success": False, "error": "authentication failed"})
            try:
                request = json.loads(raw) if raw else {}
            except ValueError:
                return self.answer(400, {"success": False, "error": "not JSON"})
            endpoint = self.path
            if endpoint == "/login":
                return self.answer(200, {"success": True})
            if endpoint == "/fileexists":
                path = local(request.get("path"))
                if path is None:
                    return self.answer(400, {"success": False, "error": "bad path"})
                exists = os.path.lexists(path)
                return self.answer(200, {"success": True, "exists": exists, "isdir": exists and os.path.isdir(path)})
            if endpoint == "/listdir":
                cloud = request.get("path")
                path = local(cloud)
                if cloud in malformed:
                    body = b"<html>not json</html>"
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    return self.wfile.write(body)
                if cloud in statuses:
                    return self.answer(statuses[cloud], {"success": False, "error": "stub status"})
                if cloud in refused:
                    return self.answer(200, {"success": False, "error": "the bucket is unavailable"})
                if path is None or not os.path.isdir(path):
                    return self.answer(200, {"success": False, "error": "no such folder"})
                names = sorted(os.listdir(path)) + injected.get(cloud.rstrip("/") or "/", [])
                names += [f"f{i:05d}" for i in range(many.get(cloud, 0))]
                return self.answer(200, {"success": True, "files": names})
            if endpoint == "/downloadurls":
                paths = request.get("paths")
                if not isinstance(paths, list) or any(local(p) is None for p in paths):
                    return self.answer(400, {"success": False, "error": "bad paths"})
                host = f"http://127.0.0.1:{self.server.server_port}"
                urls = []
                for cloud in paths:
                    query = urllib.parse.urlencode({"path": cloud, "signature": hashlib.sha256(cloud.encode()).hexdigest()[:16]})
                    urls.append(f"{host}/blob?{query}")
                return self.answer(200, {"success": True, "urls": urls})
            return self.answer(404, {"success": False, "error": "no such endpoint"})

        def do_GET(self):
            parsed = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(parsed.query)
            if parsed.path != "/blob" or "path" not in query:
                return self.answer(404, {"success": False})
            # Presigned: the URL itself grants access; a request with credentials is refused,
            # so that a client sending them here is caught.
            if self.headers.get("Authorization") is not None:
                return self.answer(400, {"success": False, "error": "credentials sent to a presigned URL"})
            cloud = query["path"][0]
            path = local(cloud)
            if path is None or not os.path.isfile(path):
                return self.answer(404, {"success": False})
            # Redirected once, to the same host: a client that follows it gets the bytes.
            if os.path.basename(path) in redirected and "again" not in query:
                self.send_response(302)
                self.send_header("Location", self.path + "&again=1")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            failure = broken.get(os.path.basename(path))
            if failure == "fail":
                return self.answer(500, {"success": False})
            if failure in ("drop", "stall"):
                self.send_response(200)
                self.send_header("Content-Length", "100")
                self.end_headers()
                self.wfile.write(b"x" * 10)
                self.wfile.flush()
                if failure == "drop":
                    self.connection.shutdown(socket.SHUT_RDWR)
                else:
                    time.sleep(5)
                self.close_connection = True
                return
            with open(path, "rb") as handle:
                body = handle.read()
            modified = os.stat(path).st_mtime
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Last-Modified", email.utils.formatdate(modified, usegmt=True))
            self.send_header("ETag", '"' + hashlib.md5(body).hexdigest() + '"')
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_port, flush=True)
    exit_with_parent()
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
