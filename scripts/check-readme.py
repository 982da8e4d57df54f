#!/usr/bin/env python3
"""Replays every command of the README's `sh` blocks and checks its documented exit status.

    python3 scripts/check-readme.py LOGTOOL

The blocks run in order in one bash, as a reader would type them in one terminal (variables and
`cd` carry over), starting at the root of a scratch copy of the repository's tracked files (so
commands that write, such as `timeline -o` inside a fixture folder, change nothing here), with
LOGTOOL's folder first on PATH. `swift run logtool` is run as `logtool` (the binary the test
script built, the same program) and `/tmp/` as a private scratch folder, so that a second run does
not meet the first one's outputs. The exit status a command must give is the one its comment
states (`exit 1`), else 0. Commands that build in release mode, install packages or run for long
(benchmarks, fuzzing, mutations, the test script itself) are listed as skipped with the reason;
they are run by hand (README, "Benchmarks and fuzzing").
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

SKIPPED = [
    ("scripts/test", "the test script itself"),
    ("LOGTOOL_LONG_TESTS=1 scripts/test", "the long run of the test script, by hand"),
    ("scripts/mutate", "mutation runs are long (README: run by hand)"),
    ("Fuzz/run.sh", "fuzzing is long (README: run by hand)"),
    ("apt-get ", "installs packages"),
    ("swift build -c release", "a release build (10-15 minutes)"),
    ("swift run -c release", "a release build of the benchmarks"),
    ("python3 scripts/repair-race-check.py", "a timing check run by hand"),
    ("swift run logtool conformance --engine 'logtool merge'", "the same command runs in swift test (MergeFixtureTests)"),
    ("swift run logtool conformance$", "the same command runs in swift test (MergeFixtureTests)"),
]


def skips(prefix, command):
    """A SKIPPED entry matches the commands it begins; one ending in `$`, that command alone."""
    return command == prefix[:-1] if prefix.endswith("$") else command.startswith(prefix)


COMMENT = re.compile(r"\s{2,}#.*$")


def blocks(readme):
    """The command lines of each sh block (one shell session each): (line number, command,
    expected exit status), comment-only lines left out."""
    grouped, in_block = [], False
    for number, line in enumerate(readme.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("```"):
            in_block = (not in_block) and stripped == "```sh"
            if in_block:
                grouped.append([])
            continue
        if not in_block or not stripped or stripped.startswith("#"):
            continue
        comment = COMMENT.search(line)
        status = re.search(r"\bexit (\d+)", comment.group(0)) if comment else None
        grouped[-1].append((number, COMMENT.sub("", line).strip(), int(status.group(1)) if status else 0))
    return grouped


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check-readme.py LOGTOOL")
    logtool = os.path.abspath(sys.argv[1])
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    readme = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    scratch = tempfile.mkdtemp(prefix="check-readme-")
    failures, ran, skipped = [], 0, []
    try:
        copy = os.path.join(scratch, "repo")
        tracked = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout.split(b"\0")
        for name in filter(None, tracked):
            source = os.path.join(root.encode(), name)
            if not os.path.lexists(source):
                continue
            target = os.path.join(copy.encode(), name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
        temporary = os.path.join(scratch, "tmp")
        os.makedirs(temporary)
        environment = dict(os.environ, PATH=os.path.dirname(logtool) + os.pathsep + os.environ["PATH"])
        environment.pop("LOGTOOL_PASSWORD", None)
        if os.path.basename(logtool) != "logtool":
            sys.exit(f"{logtool}: the binary must be named logtool, as the README calls it")
        script = ["set -u"]
        for number, command, status in (line for block in blocks(readme) for line in block):
            reason = next((why for prefix, why in SKIPPED if skips(prefix, command)), None)
            if reason:
                skipped.append(f"README.md:{number}: {command}  ({reason})")
                continue
            ran += 1
            line = command.replace("swift run logtool", "logtool").replace("/tmp/", temporary + "/")
            script.append(
                f"{{ {line} ; }} >>\"$LOG\" 2>&1 </dev/null; s=$?; "
                f"if [ $s -ne {status} ]; then printf '%s: exit %s, expected {status}: %s\\n' README.md:{number} $s {shlex.quote(command)}; exit 1; fi"
            )
        log = os.path.join(scratch, "log")
        result = subprocess.run(
            ["bash", "-c", "\n".join(script)], cwd=copy, env=dict(environment, LOG=log), capture_output=True, text=True)
        if result.returncode != 0:
            output = open(log, encoding="utf-8", errors="replace").read() if os.path.exists(log) else ""
            failures.append(result.stdout.strip() + result.stderr.strip() + "\n--- the commands' output, last 3000 characters:\n" + output[-3000:])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for line in skipped:
        print("skipped " + line)
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"README commands: {ran} run, {len(skipped)} skipped: " + ("FAILED" if failures else "all gave their documented exit status"))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
