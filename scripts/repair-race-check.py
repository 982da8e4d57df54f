#!/usr/bin/env python3
"""The repair against a sync service at work, through the real command (Spec/repair.md 5.2).

Each run makes a cloud folder in the temporary folder holding an orphan data file of SIZE MiB,
starts `logtool repair --apply` with the quarantine on /dev/shm (another file system, so the move
is a copy), and, while it runs, renames a new version over the data file the way a sync client
publishes a download. Afterwards the new version must still exist, in the cloud folder or in the
quarantine: the repair may keep both, and may find the old one already replaced by the sync client
(which is then the client's doing), but must never delete what the client published. Prints one
line per run and a summary; exit 1 if a new version was lost.

Run by hand (it takes a minute or two): python3 scripts/repair-race-check.py LOGTOOL [RUNS] [SIZE]
"""
import hashlib, os, shutil, subprocess, sys, tempfile, threading, time

def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()

def files_below(folder):
    for base, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(base, name)
            if not os.path.islink(path) and name != "journal.jsonl":
                yield path

def main():
    logtool = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    if os.stat("/dev/shm").st_dev == os.stat(tempfile.gettempdir()).st_dev:
        sys.exit("/dev/shm is on the same file system as the temporary folder: no copy to race")
    lost = 0
    replaced_during = 0
    for run in range(runs):
        work = tempfile.mkdtemp(prefix="repair-race-")
        shm = tempfile.mkdtemp(prefix="repair-race-", dir="/dev/shm")
        try:
            data = os.path.join(work, "cloud", "E", "data")
            os.makedirs(data)
            os.makedirs(os.path.join(work, "cloud", "E", "stores"))
            os.makedirs(os.path.join(work, "cloud", "E", "events"))
            target = os.path.join(data, "ORPHAN")
            with open(target, "wb") as f:
                f.write(os.urandom(size << 20))
            old = digest(target)
            new = os.urandom(size << 20)
            quarantine = os.path.join(shm, "q")
            process = subprocess.Popen([logtool, "repair", "E", "--apply", "--quarantine", quarantine],
                                       cwd=os.path.join(work, "cloud"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            # Publish the download at a moment spread over the run: the copy of SIZE MiB is most of it.
            delay = (run / runs) * 0.6 * size / 40

            def publish():
                time.sleep(delay)
                partial = os.path.join(data, ".ORPHAN.download")
                with open(partial, "wb") as f:
                    f.write(new)
                os.rename(partial, target)

            worker = threading.Thread(target=publish)
            worker.start()
            out, err = process.communicate()
            worker.join()
            found = {digest(p) for p in files_below(os.path.join(work, "cloud"))} | {digest(p) for p in files_below(shm)}
            missing = hashlib.sha256(new).hexdigest() not in found
            outcome = err.decode(errors="replace").strip().splitlines()[-1:] or [out.decode(errors="replace").strip().splitlines()[-1]]
            during = b"repair.source-changed" in err
            replaced_during += during
            lost += bool(missing)
            print(f"run {run + 1:2}: exit {process.returncode}, replaced {'during' if during else 'before or after'} the move, "
                  f"{'NEW VERSION LOST' if missing else 'new version kept'}, old version {'kept' if old in found else 'replaced by the client'} "
                  f"({outcome[0][:90]})")
        finally:
            shutil.rmtree(work, ignore_errors=True)
            shutil.rmtree(shm, ignore_errors=True)
    print(f"{runs - lost} of {runs} runs kept the new version; {replaced_during} replaced the file while it was being moved")
    sys.exit(1 if lost else 0)

if __name__ == "__main__":
    main()
