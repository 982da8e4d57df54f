#!/usr/bin/env python3
"""Scale benchmark of issue 7: prints a table, never part of the unit tests.

For generated folders of the given sizes (object changes over 10 stores and 50,000 objects,
v2 binary): merge time, changes per second, peak resident memory and output size; rebase time
and folder size before and after; verify time; the read floor (reading every byte of the
folder); and, with --loro, the Loro CRDT library fed the same history
(Benchmarks/loro/loro_workload.py, on the same history generated as v2 JSON).

    swift build -c release --product logtool
    python3 Benchmarks/scale.py --logtool .build/release/logtool --work /tmp/scale 100000 400000 1000000 4000000 \
        [--repeat 3] [--loro --loro-max 1000000]

The merge runs --repeat times: the table gives the best and the median time (this kind of
machine's speed varies by a third from run to run) and the highest peak memory. Memory growth is
printed for every pair of sizes ten times apart: the same 50,000 objects, ten times the history.
"""
import statistics
import argparse, json, os, re, shutil, subprocess, sys, time

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

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("sizes", nargs="+", type=int)
    parser.add_argument("--logtool", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--objects", type=int, default=50_000)
    parser.add_argument("--loro", action="store_true")
    parser.add_argument("--loro-max", type=int, default=1_000_000, help="run Loro only up to this size (it took 3 GB at 1M)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tool = os.path.abspath(args.logtool)
    os.makedirs(args.work, exist_ok=True)
    rows = []
    for size in args.sizes:
        folder = os.path.join(args.work, f"g{size}")
        if not os.path.exists(folder):
            subprocess.run([tool, "generate", folder, "--stores", "10", "--objects", str(args.objects), "--changes", str(size),
                            "--encoding", "binary", "--seed", "7"], check=True, capture_output=True)
        cloud, model = os.path.join(folder, "cloud"), os.path.join(folder, "Model.xcdatamodeld")
        read_floor(cloud)  # warm the page cache once, as every timed command after it gets it warm
        floor = read_floor(cloud)
        runs = [timed([tool, "merge", cloud, "--model", model]) for _ in range(args.repeat)]
        merge_s, merge_median_s = min(r[0] for r in runs), statistics.median(r[0] for r in runs)
        merge_mb, merge = max(r[1] for r in runs), runs[0][2]
        rebased = os.path.join(args.work, f"r{size}")
        shutil.rmtree(rebased, ignore_errors=True)
        rebase_s, rebase_mb, _ = timed([tool, "rebase", cloud, "--out", rebased, "--model", model, "--encoding", "binary"])
        verify_s, verify_mb, _ = timed([tool, "verify", cloud, "--model", model])
        row = {"changes": size, "merge_s": merge_s, "merge_median_s": merge_median_s, "changes_per_s": size / merge_s, "merge_peak_mb": merge_mb,
               "state_bytes": len(merge.stdout), "floor_s": floor, "rebase_s": rebase_s, "rebase_peak_mb": rebase_mb,
               "bytes_before": folder_bytes(cloud), "bytes_after": folder_bytes(rebased), "verify_s": verify_s, "verify_peak_mb": verify_mb}
        if args.loro and size <= args.loro_max:
            # The same history in v2 JSON (the Loro script reads JSON): the generator's choices do
            # not depend on the encoding, so the same seed gives the same events.
            json_copy = os.path.join(args.work, f"jg{size}")
            if not os.path.exists(json_copy):
                subprocess.run([tool, "generate", json_copy, "--stores", "10", "--objects", str(args.objects), "--changes", str(size),
                                "--encoding", "json", "--seed", "7"], check=True, capture_output=True)
            here = os.path.dirname(os.path.abspath(__file__))
            loro = subprocess.run([sys.executable, os.path.join(here, "loro", "loro_workload.py"), os.path.join(json_copy, "cloud")],
                                  check=True, capture_output=True)
            result = json.loads(loro.stdout)
            row["loro_import_s"] = result.get("importSeconds")
            row["loro_bytes"] = result.get("snapshotBytes")
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    print(f"{'changes':>9} {'merge s':>8} {'median s':>9} {'changes/s':>10} {'peak MB':>8} {'state MB':>9} {'floor s':>8} {'merge/floor':>11} "
          f"{'rebase s':>9} {'MB before':>10} {'MB after':>9} {'verify s':>9} {'verify MB':>10}" + ("  loro s  merge/loro  size/loro" if args.loro else ""))
    for r in rows:
        line = (f"{r['changes']:>9} {r['merge_s']:>8.2f} {r['merge_median_s']:>9.2f} {r['changes_per_s']:>10.0f} {r['merge_peak_mb']:>8.0f} {r['state_bytes']/1e6:>9.1f} "
                f"{r['floor_s']:>8.2f} {r['merge_s']/r['floor_s']:>11.1f} {r['rebase_s']:>9.2f} {r['bytes_before']/1e6:>10.1f} "
                f"{r['bytes_after']/1e6:>9.1f} {r['verify_s']:>9.2f} {r['verify_peak_mb']:>10.0f}")
        if args.loro and r.get("loro_import_s"):
            line += f"  {r['loro_import_s']:>6.2f}  {r['merge_s']/r['loro_import_s']:>10.1f}  {r['bytes_before']/r['loro_bytes']:>9.2f}"
        print(line)
    for small in rows:
        for large in rows:
            if large["changes"] == 10 * small["changes"]:
                growth = large["merge_peak_mb"] / small["merge_peak_mb"] - 1
                print(f"merge peak memory, {small['changes']} -> {large['changes']} changes: {small['merge_peak_mb']:.0f} -> "
                      f"{large['merge_peak_mb']:.0f} MB ({growth:+.0%}); state document {small['state_bytes']/1e6:.1f} -> {large['state_bytes']/1e6:.1f} MB")

if __name__ == "__main__":
    main()
