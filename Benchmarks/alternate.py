#!/usr/bin/env python3
"""Alternated rounds of two or more logtool builds on the same folders: prints tables, never
part of the unit tests.

On a shared machine the same build's merge time moves by a third from one quarter hour to the
next, more than most changes make; a round runs every build once on each folder, one after the
other, with the `cat` floor of issue 42 measured in the same round, so that builds are compared
within minutes of each other, and the builds take turns at running first (round r starts with
build r modulo their number). Each run's CPU time (user + system, from the kernel's accounting
of the child) is printed beside its wall time: when both cores are busy for the whole merge, CPU
time is the work, and it moves less with the machine's load than the wall time does.

    python3 Benchmarks/alternate.py --folders /tmp/g1m-binary /tmp/g1m-json --rounds 8 \\
        OLD/logtool NEW/logtool [--command merge] [--work DIR] [--arguments ...]

A folder is one made by `logtool generate` (its `cloud/` and `Model.xcdatamodeld`). `--command`
is `merge` (default: `merge CLOUD --model MODEL`) or any other logtool command taking the same
two; `--arguments`, which must come last, are added after them. The outputs go to `--work`
(default: /dev/shm where it exists, as in Benchmarks/README.md, else the temporary folder).
The first build's first output of each folder is the reference: it must not be empty, and a
nonzero exit status of it is said on standard error; every other run's output and exit status
must equal it, byte for byte (a faster build that prints something else is a failure, not a
result): the script stops with status 1 if one differs, and keeps that run's output.

Table (one row per folder and build, builds numbered as given): medians over the rounds of wall
time (s), of CPU time (s), of wall time / the round's `cat` floor, and, for every build after
the first, in how many rounds it was faster than the first (wall time; CPU time).
"""
import argparse, os, shlex, shutil, statistics, subprocess, sys, tempfile, time


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
    subprocess.run(f"find {shlex.quote(cloud)} -type f -exec cat {{}} + > /dev/null", shell=True, check=True)
    return time.perf_counter() - start


def same_file(a, b):
    with open(a, "rb") as x, open(b, "rb") as y:
        while True:
            p, q = x.read(1 << 20), y.read(1 << 20)
            if p != q:
                return False
            if not p:
                return True


def main():
    parser = argparse.ArgumentParser(description="Alternated rounds of logtool builds on generated folders.")
    parser.add_argument("builds", nargs="+", help="logtool executables; the first is the reference")
    parser.add_argument("--folders", nargs="+", required=True, help="folders made by logtool generate")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--command", default="merge")
    parser.add_argument("--work", default="/dev/shm" if os.path.isdir("/dev/shm") else None, help="where the outputs are written")
    parser.add_argument("--arguments", nargs=argparse.REMAINDER, default=[], help="added to every command; must come last")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    builds = len(args.builds)
    work = tempfile.mkdtemp(prefix="alternate-", dir=args.work)
    # By build number: the same executable given twice (a check of the noise) is two builds.
    wall = {(f, b): [] for f in args.folders for b in range(builds)}
    cpu = {(f, b): [] for f in args.folders for b in range(builds)}
    floors = {f: [] for f in args.folders}
    statuses = {}
    try:
        measure(args, work, wall, cpu, floors, statuses)
    except KeyboardInterrupt:
        shutil.rmtree(work, ignore_errors=True)
        raise
    shutil.rmtree(work, ignore_errors=True)
    report(args, wall, cpu, floors)


def measure(args, work, wall, cpu, floors, statuses):
    """The rounds; stops the script at the first run that differs (keeping `work`, which holds
    that run's output and the reference) or when the reference has no output."""
    builds = len(args.builds)
    for round_number in range(args.rounds):
        for number, folder in enumerate(args.folders):
            cloud = os.path.join(folder, "cloud")
            model = os.path.join(folder, "Model.xcdatamodeld")
            floors[folder].append(cat_floor(cloud))
            reference = os.path.join(work, f"{number}.out")
            for turn in range(builds):
                index = (round_number + turn) % builds
                build = args.builds[index]
                first_run = round_number == 0 and index == 0
                output = reference if first_run else os.path.join(work, "run.out")
                command = [build, args.command, cloud, "--model", model, *args.arguments]
                seconds, cpu_seconds, status = run(command, output)
                if first_run:
                    statuses[folder] = status
                    if os.path.getsize(reference) == 0:
                        shutil.rmtree(work, ignore_errors=True)
                        sys.exit(f"{shlex.join(command)}: exit status {status} and no output to compare")
                    if status != 0:
                        print(f"note: {shlex.join(command)} exits with status {status}", file=sys.stderr)
                else:
                    differences = []
                    if status != statuses[folder]:
                        differences.append(f"exit status {status}, not {statuses[folder]}")
                    if not same_file(output, reference):
                        differences.append(f"output {output}, not {reference}")
                    if differences:
                        sys.exit(f"{shlex.join(command)}: {' and '.join(differences)} (build 0: {args.builds[0]})")
                wall[(folder, index)].append(seconds)
                cpu[(folder, index)].append(cpu_seconds)
        print(f"round {round_number + 1} of {args.rounds} done", file=sys.stderr)


def report(args, wall, cpu, floors):
    builds = len(args.builds)
    for index, build in enumerate(args.builds):
        print(f"build {index}: {build}")
    print(f"{'folder':<28} {'build':<8} {'wall s':>8} {'CPU s':>8} {'/cat':>7} {'faster wall':>12} {'faster CPU':>11}")
    for folder in args.folders:
        print(f"{os.path.basename(folder.rstrip('/')):<28} {'cat':<8} {statistics.median(floors[folder]):8.3f}")
        for index in range(builds):
            key = (folder, index)
            row = f"{'':<28} {index:<8} {statistics.median(wall[key]):8.3f} {statistics.median(cpu[key]):8.3f}"
            row += f" {statistics.median(w / c for w, c in zip(wall[key], floors[folder])):6.2f}x"
            if index > 0:
                faster_wall = sum(b < a for a, b in zip(wall[(folder, 0)], wall[key]))
                faster_cpu = sum(b < a for a, b in zip(cpu[(folder, 0)], cpu[key]))
                row += f" {faster_wall:>5} of {args.rounds:<4} {faster_cpu:>4} of {args.rounds}"
            print(row)


if __name__ == "__main__":
    main()
