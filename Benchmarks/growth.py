#!/usr/bin/env python3
"""How the time of a command grows with the size of a hostile input shape (issue 14): for each
class below, the input is written at every size, the command is timed (wall time and peak
resident memory) and the growth factor between consecutive sizes is printed. A linear command
grows about 10x for 10x the size; a quadratic one about 100x.

    swift build -c release --product logtool
    python3 Benchmarks/growth.py --logtool .build/release/logtool --work /tmp/growth 10000 100000 1000000

Classes (each with its largest size; larger sizes are skipped and the table says so):

  baselines     N concurrent baselines (one per store, each knowing only its own store, each
                inserting one object) in a cloud folder: `merge FOLDER`
  baselines-chain N baselines of one store, each with a higher revision than the one before
                (each dominated by all later ones): `merge FOLDER`
  history       one object updated by N events of one store: `history --json FOLDER`
  convert-json  one event with N entities of one insert each: `convert FILE OUT` (v2 JSON)
  convert-bin   the same event: `convert --encoding binary FILE OUT`
  inspect       one object change with N unknown members: `inspect --json FILE`
  inspect-folder the same event in an ensemble folder, as text: `inspect FOLDER`
  delete        one event inserts a parent and N children in its to-many, the next deletes
                the N children: `merge FILE FILE`
  delete-ordered the same with an ordered to-many: `merge FILE FILE`
  tomany-events one event inserts a parent and N children, then N/10 events add 10 members
                each to the parent's to-many: `merge FOLDER`
  convert-folder N events of one insert each in an ensemble folder: `convert FOLDER OUT`

Inputs are written once under --work and reused (delete the folder to write them again), and
read once before they are timed, so that the command finds them in the page cache.
"""
import argparse, json, os, resource, shutil, signal, subprocess, sys, time

REGISTRATION = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>leechDate</key>
	<date>2024-03-01T09:00:00Z</date>
	<key>storeIdentifier</key>
	<string>%s</string>
</dict>
</plist>
"""


# False while an input already written is only being named again (see prepare).
WRITE = True


def dump(path, document):
    if not WRITE:
        return
    with open(path, "w") as out:
        json.dump(document, out, separators=(",", ":"))


def event(store, revision, changes, kind=200, revisions=None, unique=None, **extra):
    document = {"changesByEntity": changes, "globalCount": revision, "revisionsByStoreIdentifier": revisions or {store: revision},
                "storeIdentifier": store, "timestamp": "%d.0" % revision, "type": kind,
                "uniqueIdentifier": unique or "%s-%d" % (store, revision)}
    document.update(extra)
    return document


def ensemble(folder, stores):
    """An ensemble folder with `stores` registered; returns it."""
    root = os.path.join(folder, "Ensemble")
    for sub in ("events", "baselines", "stores"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    for store in stores if WRITE else []:
        with open(os.path.join(root, "stores", store), "w") as out:
            out.write(REGISTRATION % store)
    return root


def write_baselines(folder, n):
    root = ensemble(folder, [])
    for i in range(n):
        store = "S%07d" % i
        changes = {"Item": [{"globalIdentifier": "o%07d" % i, "type": 100,
                             "properties": [{"propertyName": "value", "type": 0, "value": i}]}]}
        dump(os.path.join(root, "baselines", "0_B%07d_%s.cdeevent" % (i, store)),
             event(store, 0, changes, kind=100, unique="B%07d" % i))
    return ["merge", root]


def write_baselines_chain(folder, n):
    root = ensemble(folder, [])
    for i in range(n):
        changes = {"Item": [{"globalIdentifier": "o1", "type": 100, "properties": [{"propertyName": "value", "type": 0, "value": i}]}]}
        dump(os.path.join(root, "baselines", "%d_B%07d_S0000000.cdeevent" % (i, i)),
             event("S0000000", i, changes, kind=100, unique="B%07d" % i))
    return ["merge", root]


def write_history(folder, n):
    root = ensemble(folder, ["A"])
    for i in range(n):
        change = {"globalIdentifier": "o1", "type": 100 if i == 0 else 200,
                  "properties": [{"propertyName": "value", "type": 0, "value": i}]}
        dump(os.path.join(root, "events", "%d_A_%d.cdeevent" % (i, i)), event("A", i, {"Item": [change]}))
    return ["history", "--json", "--entity", "Item", "--id", "o1", root]


def write_entities(folder, n):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "event.cdeevent")
    dump(path, event("A", 0, {"E%07d" % i: [{"globalIdentifier": "o%d" % i, "type": 100}] for i in range(n)}))
    return path


def write_convert_json(folder, n):
    return ["convert", write_entities(folder, n), os.path.join(folder, "out.cdeevent")]


def write_convert_binary(folder, n):
    return ["convert", "--encoding", "binary", write_entities(folder, n), os.path.join(folder, "out.cdeevent")]


def unknown_members_event(n):
    change = {"globalIdentifier": "o1", "type": 100}
    change.update({"x%07d" % i: i for i in range(n)})
    return event("A", 0, {"Item": [change]})


def write_inspect(folder, n):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "event.cdeevent")
    dump(path, unknown_members_event(n))
    return ["inspect", "--json", path]


def write_inspect_folder(folder, n):
    root = ensemble(folder, ["A"])
    dump(os.path.join(root, "events", "0_A_0.cdeevent"), unknown_members_event(n))
    return ["inspect", root]


def write_delete(folder, n, ordered=False):
    os.makedirs(folder, exist_ok=True)
    children = [{"globalIdentifier": "c%08d" % i, "type": 100} for i in range(n)]
    members = {"propertyName": "members", "type": 3 if ordered else 2, "removedIdentifiers": [],
               "addedIdentifiers": ["c%08d" % i for i in range(n)]}
    if ordered:
        members["movedIdentifiersByIndex"] = {}
    parent = {"globalIdentifier": "p1", "type": 100, "properties": [members]}
    first, second = os.path.join(folder, "0.cdeevent"), os.path.join(folder, "1.cdeevent")
    dump(first, event("A", 0, {"Child": children, "Parent": [parent]}))
    dump(second, event("A", 1, {"Child": [{"globalIdentifier": "c%08d" % i, "type": 300} for i in range(n)]}))
    return ["merge", first, second]


def write_delete_ordered(folder, n):
    return write_delete(folder, n, ordered=True)


def write_tomany_events(folder, n):
    root = ensemble(folder, ["A"])
    children = [{"globalIdentifier": "c%08d" % i, "type": 100} for i in range(n)]
    dump(os.path.join(root, "events", "0_A_0.cdeevent"),
         event("A", 0, {"Child": children, "Parent": [{"globalIdentifier": "p1", "type": 100}]}))
    for k in range(n // 10):
        change = {"propertyName": "members", "type": 2, "removedIdentifiers": [],
                  "addedIdentifiers": ["c%08d" % i for i in range(10 * k, 10 * k + 10)]}
        dump(os.path.join(root, "events", "%d_A_%d.cdeevent" % (k + 1, k + 1)),
             event("A", k + 1, {"Parent": [{"globalIdentifier": "p1", "type": 200, "properties": [change]}]}))
    return ["merge", root]


def write_convert_folder(folder, n):
    root = ensemble(folder, ["A"])
    for i in range(n):
        change = {"globalIdentifier": "o%d" % i, "type": 100, "properties": [{"propertyName": "value", "type": 0, "value": i}]}
        dump(os.path.join(root, "events", "%d_A_%d.cdeevent" % (i, i)), event("A", i, {"Item": [change]}))
    return ["convert", root, os.path.join(folder, "out")]


# name: (writer, largest size by default, what N counts)
CLASSES = {
    "baselines": (write_baselines, 100_000, "baselines"),
    "baselines-chain": (write_baselines_chain, 100_000, "baselines"),
    "history": (write_history, 100_000, "events"),
    "convert-json": (write_convert_json, 1_000_000, "entities"),
    "convert-bin": (write_convert_binary, 1_000_000, "entities"),
    "convert-folder": (write_convert_folder, 100_000, "events"),
    "inspect": (write_inspect, 1_000_000, "members"),
    "inspect-folder": (write_inspect_folder, 1_000_000, "members"),
    "delete": (write_delete, 1_000_000, "live objects"),
    "delete-ordered": (write_delete_ordered, 1_000_000, "live objects"),
    "tomany-events": (write_tomany_events, 1_000_000, "members"),
}


def prepare(work, name, n):
    """Writes the input once (a marker says it is complete) and returns the command's arguments."""
    global WRITE
    folder = os.path.join(work, "%s-%d" % (name, n))
    marker = os.path.join(folder, ".complete")
    WRITE = not os.path.exists(marker)
    if WRITE and os.path.exists(folder):
        shutil.rmtree(folder)
    arguments = CLASSES[name][0](folder, n)
    with open(marker, "w") as out:
        out.write("ok\n")
    return folder, arguments


def warm(folder):
    """Reads every input file once, so that the timed command finds them in the page cache."""
    for directory, _, names in os.walk(folder):
        for name in names:
            with open(os.path.join(directory, name), "rb") as handle:
                while handle.read(1 << 20):
                    pass


def run(logtool, arguments, timeout):
    """Wall seconds and peak resident MB of one run, or None on timeout; exits on failure."""
    timed = os.path.exists("/usr/bin/time")
    command = (["/usr/bin/time", "-f", "%M"] if timed else []) + [logtool] + arguments
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.monotonic()
    # In a session of its own, so that a timeout stops logtool too, not only /usr/bin/time.
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, errors = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        return None
    seconds = time.monotonic() - started
    stderr = errors.decode(errors="replace").strip().splitlines()
    if child.returncode != 0:
        sys.exit("%s failed (%d): %s" % (" ".join(arguments[:3]), child.returncode, "\n".join(stderr[-5:])[:800]))
    if timed and stderr and stderr[-1].isdigit():
        peak = int(stderr[-1]) / 1024
    else:
        # The largest child so far: right only while sizes grow.
        peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    return seconds, peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logtool", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--classes", default=",".join(CLASSES), help="comma-separated, from: " + ", ".join(CLASSES))
    parser.add_argument("--max", action="append", default=[], metavar="CLASS=N", help="the largest size of a class (repeatable)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds; a class stops at its first run over it")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size; the fastest is shown")
    parser.add_argument("sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    args = parser.parse_args()
    limits = {name: spec[1] for name, spec in CLASSES.items()}
    for item in args.max:
        name, _, value = item.partition("=")
        limits[name] = int(value)
    print("class              size  counts          seconds  peak MB  growth")
    for name in args.classes.split(","):
        if name not in CLASSES:
            sys.exit("unknown class %s" % name)
        previous = None
        for n in args.sizes:
            if n > limits[name]:
                print("%-14s %8d  (over this class's maximum of %d: not run)" % (name, n, limits[name]))
                continue
            folder, arguments = prepare(args.work, name, n)
            for out in (os.path.join(folder, "out.cdeevent"), os.path.join(folder, "out")):
                if os.path.isdir(out):
                    shutil.rmtree(out)
                elif os.path.exists(out):
                    os.remove(out)
            warm(folder)
            runs = []
            for _ in range(args.repeat):
                measured = run(args.logtool, arguments, args.timeout)
                if measured is None:
                    break
                runs.append(measured)
                for out in (os.path.join(folder, "out.cdeevent"), os.path.join(folder, "out")):
                    if os.path.isdir(out):
                        shutil.rmtree(out)
                    elif os.path.exists(out):
                        os.remove(out)
            measured = min(runs) if len(runs) == args.repeat else None
            if measured is None:
                print("%-14s %8d  %-14s  > %.0f s (stopped; larger sizes not run)" % (name, n, CLASSES[name][2], args.timeout))
                break
            seconds, peak = measured
            growth = "" if previous is None or previous <= 0 else "%.1fx" % (seconds / previous)
            print("%-14s %8d  %-14s %8.2f %8.0f  %s" % (name, n, CLASSES[name][2], seconds, peak, growth), flush=True)
            previous = seconds


if __name__ == "__main__":
    main()
