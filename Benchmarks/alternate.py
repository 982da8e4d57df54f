#!/usr/bin/env python3
"""Alternated rounds of two or more logtool builds on the same folders: prints tables, never
part of the unit tests.

On a shared machine the same build's merge time moves by a third from one quarter hour to the
next, more than most changes make; a round runs every build once on each folder, one after the
other, with the `cat` floor of issue 42 measured in the same round, so that builds are compared
within minutes of each other. Each run's CPU time (user + system, from the kernel's accounting
of the child) is printed beside its wall time: when both cores are busy for the whole merge, CPU
time is the work, and it moves less with the machine's load than the wall time does.

    python3 Benchmarks/alternate.py --folders /tmp/g1m-binary /tmp/g1m-json --rounds 8 \
        OLD/logtool NEW/logtool [--command merge] [--arguments ...]

A folder is one made by `logtool generate` (its `cloud/` and `Model.xcdatamodeld`). `--command`
is `merge` (default: `merge CLOUD --model MODEL`) or any other logtool command taking the same
two; `--arguments` are added after them. The first build's output of each folder is kept, and
every other run's output and exit status must equal it, byte for byte (a faster build that
prints something else is a failure, not a result): the script stops with status 1 if one differs.

Table (one row per folder and build): medians over the rounds of wall time (s), of CPU time (s),
wall time / the round's `cat` floor, and, for every build after the first, in how many rounds it
was faster than the first (wall time; CPU time).
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time


def run(cmd, out_path):
    """Runs cmd with stdout to out_path; returns (wall s, CPU s, exit status)."""
    with open(out_path, "wb") as out:
        start = time.perf_counter()
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def cat_floor(cloud):
    """Issue 42's floor: `find CLOUD -type f -exec cat {} + > /dev/null`, wall time."""
    start = time.perf_counter()
    subprocess.run(f"find '{cloud}' -type f -exec cat {{}} + > /dev/null", shell=True, check=True)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description="Alternated rounds of logtool builds on generated folders.")
    parser.add_argument("builds", nargs="+", help="logtool executables; the first is the reference")
    parser.add_argument("--folders", nargs="+", required=True, help="folders made by logtool generate")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--command", default="merge")
    parser.add_argument("--arguments", nargs=argparse.REMAINDER, default=[])
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    work = tempfile.mkdtemp(prefix="alternate-")
    wall = {(f, b): [] for f in args.folders for b in args.builds}
    cpu = {(f, b): [] for f in args.folders for b in args.builds}
    floors = {f: [] for f in args.folders}
    statuses = {}
    try:
        for round_number in range(args.rounds):
            for number, folder in enumerate(args.folders):
                cloud = os.path.join(folder, "cloud")
                model = os.path.join(folder, "Model.xcdatamodeld")
                floors[folder].append(cat_floor(cloud))
                reference = os.path.join(work, f"{number}.out")
                for index, build in enumerate(args.builds):
                    first_run = round_number == 0 and index == 0
                    output = reference if first_run else os.path.join(work, "run.out")
                    seconds, cpu_seconds, status = run([build, args.command, cloud, "--model", model, *args.arguments], output)
                    if first_run:
                        statuses[folder] = status
                    elif status != statuses[folder] or not same_file(output, reference):
                        sys.exit(f"{build} {args.command} {folder}: exit status {status} and output differ from {args.builds[0]}'s")
                    wall[(folder, build)].append(seconds)
                    cpu[(folder, build)].append(cpu_seconds)
            print(f"round {round_number + 1} of {args.rounds} done", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'folder':<28} {'build':<28} {'wall s':>8} {'CPU s':>8} {'/cat':>7} {'faster wall':>12} {'faster CPU':>11}")
    for folder in args.folders:
        floor = statistics.median(floors[folder])
        print(f"{os.path.basename(folder.rstrip('/')):<28} {'cat':<28} {floor:8.3f}")
        first = args.builds[0]
        for build in args.builds:
            key = (folder, build)
            row = f"{'':<28} {build[-28:]:<28} {statistics.median(wall[key]):8.3f} {statistics.median(cpu[key]):8.3f}"
            row += f" {statistics.median(w / c for w, c in zip(wall[key], floors[folder])):6.2f}x"
            if build != first:
                faster_wall = sum(b < a for a, b in zip(wall[(folder, first)], wall[key]))
                faster_cpu = sum(b < a for a, b in zip(cpu[(folder, first)], cpu[key]))
                row += f" {faster_wall:>5} of {args.rounds:<4} {faster_cpu:>4} of {args.rounds}"
            print(row)


def same_file(a, b):
    with open(a, "rb") as x, open(b, "rb") as y:
        while True:
            p, q = x.read(1 << 20), y.read(1 << 20)
            if p != q:
                return False
            if not p:
                return True


if __name__ == "__main__":
    main()
