#!/usr/bin/env python3
"""`logtool fetch` from a loopback WebDAV server (Spec/remote.md 4), beside `wget -r` of the same
folder, and its resumption after `kill -9`.

    python3 Benchmarks/fetch.py LOGTOOL [--files 20000] [--kill-at 0.4] [--keep]

Writes a generated folder of about FILES files (`logtool generate`, two object changes per event),
serves it read-only with WsgiDAV (cheroot, 16 threads) on 127.0.0.1 in this process, behind a
counter of requests by method and of GETs in flight, and measures:

1. a fetch into an empty folder: seconds, files/s, MB/s, requests, most GETs in flight (the Spec
   allows 8);
2. a fetch killed with SIGKILL once KILL-AT of the files were served, then run again: the second
   run's GETs against what the first left to do (a resumed fetch downloads only the files that
   were not complete), and the snapshot compared with the folder, bytes and modification times;
3. a third run on the complete snapshot (no GET expected);
4. `wget -r` of the same folder through the server's HTML listing pages, when wget is installed
   (one request at a time: wget has no parallel mode), and `rclone copy` with 8 transfers, when
   rclone is installed (Debian: `apt-get install rclone`), for scale.

Exit status 0 when every check holds (at most 8 in flight, a resumed run fetches no file twice
beyond those in flight at the kill, the snapshot equals the folder, a no-op run downloads
nothing), 1 otherwise. Needs `wsgidav` and `cheroot` (pip) like scripts/test. Figures go into
Benchmarks/README.md by hand.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time


class Counting:
    """WSGI middleware: requests by method, GETs in flight and the most seen at once."""

    def __init__(self, app):
        self.app, self.lock = app, threading.Lock()
        self.methods, self.in_flight, self.most, self.bytes = {}, 0, 0, 0

    def reset(self):
        with self.lock:
            self.methods, self.in_flight, self.most, self.bytes = {}, 0, 0, 0

    def gets(self):
        with self.lock:
            return self.methods.get("GET", 0)

    def __call__(self, environ, start_response):
        method = environ["REQUEST_METHOD"]
        with self.lock:
            self.methods[method] = self.methods.get(method, 0) + 1
            if method == "GET":
                self.in_flight += 1
                self.most = max(self.most, self.in_flight)
        try:
            for chunk in self.app(environ, start_response):
                with self.lock:
                    self.bytes += len(chunk)
                yield chunk
        finally:
            if method == "GET":
                with self.lock:
                    self.in_flight -= 1


def serve(root):
    from cheroot import wsgi
    from wsgidav.wsgidav_app import WsgiDAVApp

    config = {
        "host": "127.0.0.1",
        "port": 0,
        "provider_mapping": {"/": {"root": root, "readonly": True}},
        "simple_dc": {"user_mapping": {"*": True}},
        "verbose": 0,
        "logging": {"enable": False},
        "dir_browser": {"enable": True},  # HTML listings, for wget -r
        "lock_storage": False,
        "property_manager": None,
    }
    counting = Counting(WsgiDAVApp(config))
    server = wsgi.Server(("127.0.0.1", 0), counting, numthreads=16)
    server.prepare()
    threading.Thread(target=server.serve, daemon=True).start()
    return server, counting


def tree(root):
    """Relative path -> (bytes, whole-second modification time) of every regular file."""
    found = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root)
            if relative.startswith(".logtool-fetch") or name.startswith("."):
                continue
            with open(path, "rb") as handle:
                found[relative] = (handle.read(), int(os.stat(path).st_mtime))
    return found


def fetch(logtool, url, directory):
    started = time.monotonic()
    done = subprocess.run([logtool, "fetch", "-q", "--no-progress", url, directory], capture_output=True, text=True, timeout=1800)
    return time.monotonic() - started, done


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logtool")
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--kill-at", type=float, default=0.4)
    parser.add_argument("--keep", action="store_true")
    options = parser.parse_args()
    logtool = os.path.abspath(options.logtool)
    work = tempfile.mkdtemp(prefix="fetch-bench-")
    failures = []
    try:
        generated = os.path.join(work, "generated")
        subprocess.run(
            [logtool, "generate", generated, "-q", "--stores", "10", "--objects", "5000", "--changes", str(options.files * 2),
             "--changes-per-event", "2", "--seed", "42"],
            check=True, capture_output=True)
        source = os.path.join(generated, "cloud")
        expected = tree(source)
        size = sum(len(content) for content, _ in expected.values())
        server, counting = serve(source)
        url = "webdav://127.0.0.1:%d/" % server.bind_addr[1]
        print("folder: %d files, %.1f MB, %s" % (len(expected), size / 1e6, url))

        # 1. A whole fetch.
        counting.reset()
        seconds, done = fetch(logtool, url, os.path.join(work, "first"))
        if done.returncode != 0:
            failures.append("fetch exited %d: %s" % (done.returncode, done.stderr.strip()))
        print("logtool fetch: %.2f s, %.0f files/s, %.2f MB/s, requests %s, most GETs in flight %d"
              % (seconds, len(expected) / seconds, size / 1e6 / seconds, dict(sorted(counting.methods.items())), counting.most))
        if counting.most > 8:
            failures.append("%d GETs were in flight at once (Spec/remote.md 4.2: at most 8)" % counting.most)
        if tree(os.path.join(work, "first")) != expected:
            failures.append("the first snapshot differs from the folder (bytes or dates)")

        # 2. Killed part way, then resumed.
        counting.reset()
        resumed = os.path.join(work, "resumed")
        process = subprocess.Popen([logtool, "fetch", "-q", "--no-progress", url, resumed], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while process.poll() is None and counting.gets() < options.kill_at * len(expected):
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)
        process.wait()
        before = counting.gets()
        have = len(tree(resumed))
        counting.reset()
        seconds, done = fetch(logtool, url, resumed)
        again = counting.gets()
        print("killed after %d GETs with %d files complete; the second run: %d GETs in %.2f s (%d files were missing)"
              % (before, have, again, seconds, len(expected) - have))
        if done.returncode != 0:
            failures.append("the resumed fetch exited %d: %s" % (done.returncode, done.stderr.strip()))
        if again != len(expected) - have:
            failures.append("the resumed fetch made %d GETs for %d missing files" % (again, len(expected) - have))
        if tree(resumed) != expected:
            failures.append("the resumed snapshot differs from the folder (bytes or dates)")
        leftovers = [name for _, _, files in os.walk(resumed) for name in files if ".partial-" in name]
        if leftovers:
            failures.append("partial files left after the resumed run: %s" % leftovers[:3])

        # 3. Nothing to do.
        counting.reset()
        seconds, done = fetch(logtool, url, resumed)
        print("a third run: %d GETs, %s, %.2f s" % (counting.gets(), dict(sorted(counting.methods.items())), seconds))
        if counting.gets() != 0 or done.returncode != 0:
            failures.append("a run on a complete snapshot made %d GETs (exit %d)" % (counting.gets(), done.returncode))

        # 4. wget -r, for scale.
        if shutil.which("wget"):
            counting.reset()
            target = os.path.join(work, "wget")
            started = time.monotonic()
            subprocess.run(["wget", "-q", "-r", "-np", "-nH", "-l", "inf", "-R", "index.html*", "-P", target, url.replace("webdav://", "http://")],
                timeout=1800)
            seconds = time.monotonic() - started
            got = sum(len(files) for _, _, files in os.walk(target))
            print("wget -r: %.2f s, %d files, %.0f files/s, %.2f MB/s, requests %s, most GETs in flight %d"
                  % (seconds, got, got / seconds, size / 1e6 / seconds, dict(sorted(counting.methods.items())), counting.most))
        else:
            print("wget -r: not installed")

        # 5. rclone copy (8 transfers, as logtool), for scale.
        if shutil.which("rclone"):
            counting.reset()
            target = os.path.join(work, "rclone")
            started = time.monotonic()
            subprocess.run(
                ["rclone", "copy", "--config", "/dev/null", "--transfers", "8", "--checkers", "8", "--webdav-url",
                 url.replace("webdav://", "http://"), ":webdav:", target], capture_output=True, timeout=1800)
            seconds = time.monotonic() - started
            got = tree(target)
            print("rclone copy: %.2f s, %d files, %.0f files/s, %.2f MB/s, requests %s, most GETs in flight %d, same bytes and dates: %s"
                  % (seconds, len(got), len(got) / seconds, size / 1e6 / seconds, dict(sorted(counting.methods.items())), counting.most, got == expected))
        else:
            print("rclone copy: not installed")
    finally:
        if options.keep:
            print("kept " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    for failure in failures:
        print("error: " + failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    # cheroot's worker threads are not daemon threads: leave without waiting for them.
    os._exit(status)
