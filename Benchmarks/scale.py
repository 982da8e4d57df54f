#!/usr/bin/env python3
"""Scale benchmark of issues 7 and 18: prints tables, never part of the unit tests.

For each size (number of object changes), generates one history with
`logtool generate --stores S --objects N --changes SIZE --seed SEED` (defaults: 10 stores,
50,000 objects, seed 7) twice, as v2 JSON (what devices write; the main row) and as v2 binary
(ours). The generator's choices do not depend on the encoding, so both folders hold the same
events; the script checks that their merges print the same state. With --loro, the Loro CRDT
library is fed that same history (Benchmarks/loro/loro_workload.py reads the JSON folder); with
--pycrdt, so is Yjs through pycrdt, the Python binding of its Rust port yrs
(Benchmarks/pycrdt/pycrdt_workload.py; both read the folder with Benchmarks/history_replay.py).

    swift build -c release --product logtool --traits Jemalloc
    python3 Benchmarks/scale.py --logtool .build/release/logtool --work /tmp/scale 100000 400000 1000000 \
        [--repeat 3] [--objects 50000] [--stores 10] [--seed 7] [--encodings json binary] \
        [--loro [--loro-max 1000000]] [--pycrdt [--pycrdt-max 1000000]] [--baseline]

The folder of the issue 18 measurements (`generate --stores 10 --objects 100000 --changes 1000000
--seed 42`): `scale.py ... --objects 100000 --seed 42 1000000`.

Folders are generated once into --work (named after encoding, stores, objects, changes and seed)
and reused by later runs; the rebased copies are deleted once measured. Every timed command runs
under /usr/bin/time -v, with the folder's files in the page cache (the script reads them all just
before).

Table 1, merge (one row per size and encoding):
  changes      object changes generated (SIZE)
  enc          json or binary
  merge s      best of --repeat runs of `logtool merge CLOUD --model MODEL` (wall time)
  median s     median of those runs (this kind of machine's speed varies by a third run to run)
  changes/s    changes / best merge time
  peak MB      highest peak resident memory of those runs
  floor s      the read floor: reading every byte of every file of the folder once, in Python, 1 MiB
               at a time, page cache warm (one open per file is part of it); best of 3 reads
  merge/floor  best merge time / read floor
  cat s        the read floor as issue 18's table measured it, "cat every file": `find CLOUD -type f
               -exec cat {} + > /dev/null`, page cache warm, best of 3; slower than the floor above,
               which pays no process start and no copy out to a pipe or device
  merge/cat    best merge time / cat s
  loro s       with --loro (same for both encodings): Loro's import_batch of all peers' updates
               into a new document, best of --repeat (loro_workload.py's importSeconds)
  merge/loro   best merge time / Loro's import time (below 1: our merge is faster)
  pycrdt s     with --pycrdt (same for both encodings): a new pycrdt Doc applying every peer's
               update, best of --repeat (pycrdt_workload.py's importSeconds)
  merge/pycrdt best merge time / pycrdt's apply time (below 1: our merge is faster)

Table 2, sizes, rebase and verify (same rows):
  MB folder    bytes of all files of the generated cloud/ folder, in 1e6
  size/loro    with --loro: MB folder / the size of Loro's snapshot of the merged document
  state MB     size of the state document the merge prints
  rebase s     best of --repeat runs of `logtool rebase CLOUD --out R --model MODEL --encoding ENC`
               (it reads the new baseline back and checks it, Spec/merge.md 13.7); rebase MB: the
               highest peak memory of those runs. Every command is run once per round, --repeat
               rounds, each round's commands one after another (cat, merge, rebase, verify, device
               mode, timeline), so that a best compares with a best and table 5 can compare the
               commands of one round
  MB after     bytes of the rebased folder (deleted once measured)
  verify s     best of --repeat runs of `logtool verify CLOUD --model MODEL`; verify MB: the
               highest peak memory

Table 2b, timeline and the ratios issue 42 sets targets for (same rows). Device mode (`merge
--as-store`, Spec/merge.md 15) is measured only with --baseline: a device integrates nothing
without a baseline that names every store, which `generate --baseline` writes (those folders are
named with `-baseline`, and hold other events than the folders without it).
  timeline s   best of --repeat runs of `logtool timeline CLOUD --model MODEL -o PAGE --force`
               (Spec/timeline.md); timeline MB: the highest peak memory
  page MB      bytes of the page it wrote, in 1e6 (deleted once measured)
  tl/merge     timeline s / best merge time
  verify/merge, rebase/merge, rebase MB/merge MB: the ratios issue 42 sets targets for
  device s     with --baseline: best of --repeat runs of `logtool merge --as-store STORE CLOUD --model
               MODEL` for the first store in stores/ (the script checks that each prints the merge's
               state); device MB the highest peak memory; device/merge: device s / best merge time

Table 3, with --loro (one row per size where Loro ran: up to --loro-max, as 1M took 3 GB):
  loro s       as in table 1
  snapshot MB  Loro's snapshot of the merged document (export(ExportMode.Snapshot()))
  loro peak MB peak memory of loro_workload.py's process (reading the folder and building one
               document per store included)
  object changes  the object changes Loro replayed (a note is printed when it is not SIZE)

Table 4, with --pycrdt (one row per size where pycrdt ran: up to --pycrdt-max):
  pycrdt s     as in table 1
  cpu s        the least processor time of those runs (time.process_time(); on a busy machine the
               wall time above can be several times larger)
  doc MB       the merged document encoded as one Yjs update (get_update()), its snapshot
  pycrdt peak MB  peak memory of pycrdt_workload.py's process (reading the folder and building one
               document per store included)
  object changes  the object changes pycrdt replayed (a note is printed when it is not SIZE)

Table 5, ratios by round (same rows): for each ratio issue 42 sets a target for (merge/cat,
rebase/merge, verify/merge, device/merge with --baseline, timeline/merge, rebase MB/merge MB), the
median of the rounds' ratios, then the least and greatest. This kind of machine's speed moves by a
third from one minute to the next: two best-ofs taken minutes apart can put a slow minute on one
side only, where the two commands of one round ran in the same minute.

Memory growth and time of the merge are printed for every pair of sizes ten times apart, per
encoding: the same objects, ten times the history (time: best against best, median against
median; the sizes run minutes apart, so these are not by round). Each row's raw figures go to stderr as one JSON line.
"""
import argparse, json, os, re, shutil, statistics, subprocess, sys, time

ENCODINGS = ("json", "binary")

def timed(cmd, **kw):
    """Runs cmd under /usr/bin/time -v; returns (seconds, peak RSS in MB, completed process)."""
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, **kw)
    seconds = time.perf_counter() - start
    rss = re.search(rb"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr.decode()[-2000:]}")
    return seconds, int(rss.group(1)) / 1024 if rss else float("nan"), proc

def folder_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)

def read_floor(path):
    """Seconds to read every byte of every file once (the page cache warm, as for the merge)."""
    start = time.perf_counter()
    for d, _, fs in os.walk(path):
        for f in fs:
            with open(os.path.join(d, f), "rb") as handle:
                while handle.read(1 << 20):
                    pass
    return time.perf_counter() - start

def cat_floor(path):
    """Seconds for `find PATH -type f -exec cat {} +` with its output thrown away."""
    start = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        subprocess.run(["find", path, "-type", "f", "-exec", "cat", "{}", "+"], stdout=sink, check=True)
    return time.perf_counter() - start

def generate(tool, args, size, encoding):
    """The generated folder of this size and encoding, made once (into a temporary name first,
    so an interrupted run never leaves a folder that a later run would take as complete)."""
    folder = os.path.join(args.work, f"{encoding}-s{args.stores}-o{args.objects}-c{size}-seed{args.seed}"
                          + ("-baseline" if args.baseline else ""))
    if not os.path.exists(folder):
        partial = folder + ".partial"
        shutil.rmtree(partial, ignore_errors=True)
        proc = subprocess.run([tool, "generate", partial, "--stores", str(args.stores), "--objects", str(args.objects),
                               "--changes", str(size), "--encoding", encoding, "--seed", str(args.seed)]
                              + (["--baseline"] if args.baseline else []), capture_output=True)
        if proc.returncode != 0:
            sys.exit(f"generate failed ({proc.returncode}): {folder}\n{proc.stderr.decode()[-2000:]}")
        os.rename(partial, folder)
    return folder

def measure(tool, args, size, encoding, folder):
    """--repeat rounds, each running every command once, one after another: cat, merge, rebase,
    verify, device mode (with --baseline), timeline. This kind of machine's speed moves by a third
    from one minute to the next; a ratio of two commands of one round compares them in the same
    minute, where blocks of one command's runs put the slow minute on one side only."""
    cloud, model = os.path.join(folder, "cloud"), os.path.join(folder, "Model.xcdatamodeld")
    read_floor(cloud)  # warm the page cache once, as every timed command after it gets it warm
    floor = min(read_floor(cloud) for _ in range(3))  # a few ms at small sizes: take the best of 3
    rebased = os.path.join(args.work, f"rebased-{os.path.basename(folder)}")
    page = os.path.join(args.work, "timeline.html")
    store = sorted(os.listdir(os.path.join(cloud, "Generated", "stores")))[0] if args.baseline else None
    merge_out, bytes_after, page_bytes = None, None, None
    runs = {name: [] for name in ("cat", "merge", "rebase", "verify", "device", "timeline")}
    for _ in range(args.repeat):
        runs["cat"].append((cat_floor(cloud), float("nan")))
        seconds, rss, merged = timed([tool, "merge", cloud, "--model", model])
        if merge_out is not None and merged.stdout != merge_out:
            sys.exit(f"merges of {cloud} printed different states")
        merge_out = merged.stdout
        runs["merge"].append((seconds, rss))
        shutil.rmtree(rebased, ignore_errors=True)
        seconds, rss, _ = timed([tool, "rebase", cloud, "--out", rebased, "--model", model, "--encoding", encoding])
        runs["rebase"].append((seconds, rss))
        bytes_after = folder_bytes(rebased)
        shutil.rmtree(rebased, ignore_errors=True)
        runs["verify"].append(timed([tool, "verify", cloud, "--model", model])[:2])
        if store is not None:
            seconds, rss, seen = timed([tool, "merge", "--as-store", store, cloud, "--model", model])
            if seen.stdout != merge_out:
                sys.exit(f"device {store} of {cloud} printed another state than the merge")
            runs["device"].append((seconds, rss))
        runs["timeline"].append(timed([tool, "timeline", cloud, "--model", model, "-o", page, "--force"])[:2])
        page_bytes = os.path.getsize(page)
        os.remove(page)

    def best(name):
        return min(r[0] for r in runs[name])

    def peak(name):
        return max(r[1] for r in runs[name])

    def every(name):
        return [r[0] for r in runs[name]]

    # Each round's ratio of a command to that round's merge (of memory: of the peaks).
    rounds = {"merge/cat": [m[0] / c[0] for m, c in zip(runs["merge"], runs["cat"])]}
    for name in ("rebase", "verify", "device", "timeline"):
        if runs[name]:
            rounds[f"{name}/merge"] = [x[0] / m[0] for x, m in zip(runs[name], runs["merge"])]
    rounds["rebase MB/merge MB"] = [x[1] / m[1] for x, m in zip(runs["rebase"], runs["merge"])]
    device = {"device_s": best("device"), "device_peak_mb": peak("device"), "device_all_s": every("device")} if store else {}
    row = {"changes": size, "encoding": encoding, "stores": args.stores, "objects": args.objects, "seed": args.seed,
           "merge_s": best("merge"), "merge_median_s": statistics.median(every("merge")),
           "merge_all_s": every("merge"), "changes_per_s": size / best("merge"), "merge_peak_mb": peak("merge"),
           "state_bytes": len(merge_out), "floor_s": floor, "cat_floor_s": best("cat"), "cat_all_s": every("cat"),
           "rebase_s": best("rebase"), "rebase_peak_mb": peak("rebase"),
           "rebase_all_s": every("rebase"), "verify_all_s": every("verify"), "timeline_all_s": every("timeline"),
           "bytes_before": folder_bytes(cloud), "bytes_after": bytes_after, "verify_s": best("verify"), "verify_peak_mb": peak("verify"),
           "timeline_s": best("timeline"), "timeline_peak_mb": peak("timeline"),
           "page_bytes": page_bytes, "round_ratios": rounds, **device}
    return row, merge_out

def run_loro(args, json_folder):
    here = os.path.dirname(os.path.abspath(__file__))
    loro = subprocess.run([sys.executable, os.path.join(here, "loro", "loro_workload.py"), os.path.join(json_folder, "cloud"),
                           "--repeat", str(args.repeat), "--no-deep-value"], capture_output=True)
    if loro.returncode != 0:
        sys.exit(f"loro_workload.py failed ({loro.returncode}) on {json_folder}\n{loro.stderr.decode()[-2000:]}")
    result = json.loads(loro.stdout)
    return {"loro_import_s": result["importSeconds"], "loro_bytes": result["snapshotBytes"],
            "loro_peak_mb": result.get("maxRssMiB"), "loro_object_changes": result.get("objectChanges"),
            "loro_warnings": result.get("warnings")}

def run_pycrdt(args, json_folder):
    here = os.path.dirname(os.path.abspath(__file__))
    proc = subprocess.run([sys.executable, os.path.join(here, "pycrdt", "pycrdt_workload.py"), os.path.join(json_folder, "cloud"),
                           "--repeat", str(args.repeat), "--no-deep-value"], capture_output=True)
    if proc.returncode != 0:
        sys.exit(f"pycrdt_workload.py failed ({proc.returncode}) on {json_folder}\n{proc.stderr.decode()[-2000:]}")
    result = json.loads(proc.stdout)
    return {"pycrdt_import_s": result["importSeconds"], "pycrdt_import_cpu_s": result.get("importCpuSeconds"),
            "pycrdt_bytes": result["snapshotBytes"], "pycrdt_peak_mb": result.get("maxRssMiB"),
            "pycrdt_object_changes": result.get("objectChanges"), "pycrdt_warnings": result.get("warnings")}

def ratio(a, b):
    return a / b if a is not None and b else float("nan")

def main():
    parser = argparse.ArgumentParser(description="Merge, rebase and verify generated folders of the given sizes, "
                                     "v2 JSON and v2 binary (see the docstring for the columns).")
    parser.add_argument("sizes", nargs="+", type=int, help="numbers of object changes")
    parser.add_argument("--logtool", required=True)
    parser.add_argument("--work", required=True, help="folder for the generated folders (kept and reused)")
    parser.add_argument("--objects", type=int, default=50_000)
    parser.add_argument("--stores", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--encodings", nargs="+", choices=ENCODINGS, default=list(ENCODINGS),
                        help="which encodings to measure (default both; json is generated anyway with --loro)")
    parser.add_argument("--loro", action="store_true")
    parser.add_argument("--loro-max", type=int, default=1_000_000, help="run Loro only up to this size (it took 3 GB at 1M)")
    parser.add_argument("--pycrdt", action="store_true")
    parser.add_argument("--pycrdt-max", type=int, default=1_000_000, help="run pycrdt only up to this size")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", action="store_true",
                        help="generate with --baseline and also measure device mode (merge --as-store)")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.baseline and (args.loro or args.pycrdt):
        parser.error("--baseline cannot be used with --loro or --pycrdt: their workloads replay the events only, not a baseline")
    encodings = [e for e in ENCODINGS if e in args.encodings]
    tool = os.path.abspath(args.logtool)
    print(f"logtool: {tool} (allocator: {allocator(tool)})")
    os.makedirs(args.work, exist_ok=True)
    rows, loro_rows, pycrdt_rows, notes = [], {}, {}, []
    for size in args.sizes:
        states = {}
        folders = {e: generate(tool, args, size, e) for e in encodings}
        for encoding in encodings:
            row, states[encoding] = measure(tool, args, size, encoding, folders[encoding])
            rows.append(row)
        if len(states) == 2 and states["json"] != states["binary"]:
            notes.append(f"{size} changes: the JSON and the binary folder merge to different states")
        if args.loro and size <= args.loro_max:
            json_folder = folders.get("json") or generate(tool, args, size, "json")
            loro = loro_rows[size] = run_loro(args, json_folder)
            if loro["loro_object_changes"] != size:
                notes.append(f"{size} changes: Loro replayed {loro['loro_object_changes']} object changes")
            if loro["loro_warnings"]:
                notes.append(f"{size} changes: loro_workload.py printed {loro['loro_warnings']} warnings")
        if args.pycrdt and size <= args.pycrdt_max:
            json_folder = folders.get("json") or generate(tool, args, size, "json")
            yjs = pycrdt_rows[size] = run_pycrdt(args, json_folder)
            if yjs["pycrdt_object_changes"] != size:
                notes.append(f"{size} changes: pycrdt replayed {yjs['pycrdt_object_changes']} object changes")
            if yjs["pycrdt_warnings"]:
                notes.append(f"{size} changes: pycrdt_workload.py printed {yjs['pycrdt_warnings']} warnings")
        for row in rows[-len(encodings):]:
            row.update(loro_rows.get(size, {}))
            row.update(pycrdt_rows.get(size, {}))
            print(json.dumps(row), file=sys.stderr)

    show_loro, show_pycrdt = bool(loro_rows), bool(pycrdt_rows)
    print(f"{'changes':>9} {'enc':<6} {'merge s':>8} {'median s':>9} {'changes/s':>10} {'peak MB':>8} {'floor s':>8} "
          f"{'merge/floor':>11} {'cat s':>6} {'merge/cat':>9}" + (f" {'loro s':>7} {'merge/loro':>10}" if show_loro else "")
          + (f" {'pycrdt s':>8} {'merge/pycrdt':>12}" if show_pycrdt else ""))
    for r in rows:
        line = (f"{r['changes']:>9} {r['encoding']:<6} {r['merge_s']:>8.2f} {r['merge_median_s']:>9.2f} {r['changes_per_s']:>10.0f} "
                f"{r['merge_peak_mb']:>8.0f} {r['floor_s']:>8.3f} {ratio(r['merge_s'], r['floor_s']):>11.1f} "
                f"{r['cat_floor_s']:>6.3f} {ratio(r['merge_s'], r['cat_floor_s']):>9.1f}")
        if "loro_import_s" in r:
            line += f" {r['loro_import_s']:>7.2f} {ratio(r['merge_s'], r['loro_import_s']):>10.2f}"
        elif show_loro:
            line += f" {'':>7} {'':>10}"
        if "pycrdt_import_s" in r:
            line += f" {r['pycrdt_import_s']:>8.2f} {ratio(r['merge_s'], r['pycrdt_import_s']):>12.2f}"
        print(line)
    print()
    print(f"{'changes':>9} {'enc':<6} {'MB folder':>9}" + (f" {'size/loro':>9}" if show_loro else "") +
          f" {'state MB':>8} {'rebase s':>9} {'rebase MB':>9} {'MB after':>8} {'verify s':>9} {'verify MB':>9}")
    for r in rows:
        line = f"{r['changes']:>9} {r['encoding']:<6} {r['bytes_before']/1e6:>9.1f}"
        if show_loro:
            line += f" {ratio(r['bytes_before'], r['loro_bytes']):>9.2f}" if "loro_bytes" in r else f" {'':>9}"
        print(line + f" {r['state_bytes']/1e6:>8.1f} {r['rebase_s']:>9.2f} {r['rebase_peak_mb']:>9.0f} "
              f"{r['bytes_after']/1e6:>8.1f} {r['verify_s']:>9.2f} {r['verify_peak_mb']:>9.0f}")
    print()
    print(f"{'changes':>9} {'enc':<6} {'verify/merge':>12} {'rebase/merge':>12} "
          f"{'rebase MB/merge MB':>18} {'timeline s':>10} {'timeline MB':>11} {'page MB':>8} {'tl/merge':>8}"
          + (f" {'device s':>8} {'device MB':>9} {'device/merge':>12}" if args.baseline else ""))
    for r in rows:
        print(f"{r['changes']:>9} {r['encoding']:<6} {ratio(r['verify_s'], r['merge_s']):>12.2f} "
              f"{ratio(r['rebase_s'], r['merge_s']):>12.2f} {ratio(r['rebase_peak_mb'], r['merge_peak_mb']):>18.2f} "
              f"{r['timeline_s']:>10.2f} {r['timeline_peak_mb']:>11.0f} {r['page_bytes']/1e6:>8.1f} {ratio(r['timeline_s'], r['merge_s']):>8.2f}"
              + (f" {r['device_s']:>8.2f} {r['device_peak_mb']:>9.0f} {ratio(r['device_s'], r['merge_s']):>12.2f}" if args.baseline else ""))
    print()
    print("Ratios by round: the median of the rounds' ratios (least-greatest), each round's commands run one after another")
    names = list(rows[0]["round_ratios"]) if rows else []
    print(f"{'changes':>9} {'enc':<6}" + "".join(f" {name:>22}" for name in names))
    for r in rows:
        cells = []
        for name in names:
            values = r["round_ratios"][name]
            cells.append(f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})")
        print(f"{r['changes']:>9} {r['encoding']:<6}" + "".join(f" {cell:>22}" for cell in cells))
    if show_loro:
        print()
        print(f"{'changes':>9} {'loro s':>7} {'snapshot MB':>11} {'loro peak MB':>12} {'object changes':>14}")
        for size, loro in loro_rows.items():
            print(f"{size:>9} {loro['loro_import_s']:>7.2f} {loro['loro_bytes']/1e6:>11.1f} "
                  f"{loro['loro_peak_mb'] or float('nan'):>12.0f} {str(loro['loro_object_changes']):>14}")
    if show_pycrdt:
        print()
        print(f"{'changes':>9} {'pycrdt s':>8} {'cpu s':>7} {'doc MB':>7} {'pycrdt peak MB':>14} {'object changes':>14}")
        for size, yjs in pycrdt_rows.items():
            print(f"{size:>9} {yjs['pycrdt_import_s']:>8.2f} {yjs['pycrdt_import_cpu_s'] or float('nan'):>7.2f} "
                  f"{yjs['pycrdt_bytes']/1e6:>7.1f} {yjs['pycrdt_peak_mb'] or float('nan'):>14.0f} "
                  f"{str(yjs['pycrdt_object_changes']):>14}")
    print()
    for e in encodings:
        for small in rows:
            for large in rows:
                if small["encoding"] == large["encoding"] == e and large["changes"] == 10 * small["changes"]:
                    growth = large["merge_peak_mb"] / small["merge_peak_mb"] - 1
                    print(f"{e} merge peak memory, {small['changes']} -> {large['changes']} changes: {small['merge_peak_mb']:.0f} -> "
                          f"{large['merge_peak_mb']:.0f} MB ({growth:+.0%}); state document {small['state_bytes']/1e6:.1f} -> "
                          f"{large['state_bytes']/1e6:.1f} MB; time {ratio(large['merge_s'], small['merge_s']):.1f}x best, "
                          f"{ratio(large['merge_median_s'], small['merge_median_s']):.1f}x median")
    if len(encodings) == 2:
        same = [r["changes"] for r in rows if r["encoding"] == "json"]
        if not any("different states" in n for n in notes):
            print(f"JSON and binary folders merged to byte-identical states at every size ({', '.join(map(str, same))}).")
    for note in notes:
        print("note: " + note)


def allocator(tool):
    """Which malloc the binary links: the Jemalloc trait changes every figure (Package.swift)."""
    linked = subprocess.run(["ldd", tool], capture_output=True, text=True).stdout
    return "jemalloc" if "libjemalloc" in linked else "the C library's malloc"


if __name__ == "__main__":
    main()
