#!/usr/bin/env python3
"""Runs each program of Examples/ (the library as a user sees it) on a fixture case and compares
what it prints with what the case's expected files say, which were derived from the Spec by hand
(never by running the toolkit): the merged state, verify's findings, a device's view, a repair plan.
First, from `swift package dump-package`: each example depends on the EnsemblesToolkit module
alone, with member import visibility on and without the package's `package` access (so that it
sees only what an app sees), and the library product a user depends on holds it.

Usage: python3 scripts/check-examples.py BIN   (BIN: the folder `swift build --show-bin-path` names)
Exit status: 0 when every program prints what its case expects, 1 otherwise.
"""
import json
import os
import subprocess
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
fixtures = os.path.join(root, "Fixtures")
failures = []


EXAMPLES = ["MergeAFolder", "VerifyAFolder", "DeviceView", "RepairPlan"]
manifest = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=root, capture_output=True, text=True, check=True).stdout)
targets = {target["name"]: target for target in manifest["targets"]}
for name in EXAMPLES:
    target = targets.get(name, {})
    dependencies = [d.get("byName", [None])[0] for d in target.get("dependencies", [])]
    features = [s["kind"].get("enableUpcomingFeature", {}).get("_0") for s in target.get("settings", [])]
    if (target.get("type") != "executable" or dependencies != ["EnsemblesToolkit"] or "MemberImportVisibility" not in features
            or target.get("packageAccess") is not False):
        failures.append("Examples/%s: not an executable depending on EnsemblesToolkit alone, with MemberImportVisibility and without"
                        " package access: %s" % (name, target))
if not any(p["name"] == "EnsemblesToolkit" and "EnsemblesToolkit" in p["targets"] for p in manifest["products"]):
    failures.append("the library product EnsemblesToolkit does not hold the EnsemblesToolkit module")


def run(binary, arguments, cwd):
    done = subprocess.run([os.path.join(os.path.abspath(sys.argv[1]), binary)] + arguments, cwd=cwd, capture_output=True, text=True)
    return done.returncode, done.stdout


def expect(name, actual, expected):
    if actual != expected:
        failures.append("%s printed:\n%s\nexpected:\n%s" % (name, actual, expected))
    else:
        print("Examples/%s: as its case expects" % name)


def load(*path):
    with open(os.path.join(fixtures, *path), encoding="utf-8") as handle:
        return handle.read()


# MergeAFolder: the state document of the case (Spec/merge.md 9), byte for byte.
status, out = run("MergeAFolder", ["cloud/E"], os.path.join(fixtures, "merge", "baseline-covers"))
expect("MergeAFolder", (status, out.rstrip("\n")), (0, load("merge", "baseline-covers", "expected", "state.json").rstrip("\n")))

# VerifyAFolder: one line per finding of the expected verify document; exit 1 when one is an error.
case = os.path.join(fixtures, "verify", "revision-gap")
report = json.loads(load("verify", "revision-gap", "expected", "verify.json"))
lines = ["%s %s %s %s" % (ensemble["identifier"], d["severity"], d["code"], ",".join(d["files"]))
         for ensemble in report["ensembles"] for d in ensemble["diagnostics"]]
errors = any(d["severity"] == "error" for ensemble in report["ensembles"] for d in ensemble["diagnostics"])
status, out = run("VerifyAFolder", ["cloud"], case)
expect("VerifyAFolder", (status, out.splitlines()), (1 if errors else 0, lines))

# DeviceView: the outcome, then the stop and each held-back file's reasons (Spec/merge.md 15.6).
case = os.path.join(fixtures, "merge", "device-held-back")
device = json.loads(load("merge", "device-held-back", "expected", "device.json"))["device"]
stop = device["stop"]
lines = ["%s %s" % (device["store"], device["outcome"])]
lines += ["%s %s" % (stop["code"], ",".join(stop["files"]))] if stop else []
for held in device["heldBackBaselines"] + device["heldBack"]:
    lines += ["%s %s" % (r["code"], ",".join(r["files"])) for r in held["reasons"] if not stop or r["code"] != stop["code"]]
everything = device["outcome"] == "integrates" and not device["heldBack"] and not device["heldBackBaselines"]
status, out = run("DeviceView", ["cloud/E", device["store"]], case)
expect("DeviceView", (status, out.splitlines()), (0 if everything else 1, lines))

# RepairPlan: each action's code and quarantined files (relative to the cloud root), then the
# number of errors before and left.
case = os.path.join(fixtures, "repair", "fold-and-quarantine")
plan = json.loads(load("repair", "fold-and-quarantine", "expected", "repair.json"))["plan"]
prefix = plan["cloudRoot"].rstrip("/") + "/"
lines = ["%s %s" % (a["code"], ",".join(q[len(prefix):] for q in a["quarantine"])) for a in plan["actions"]]
lines.append("errors %d left %d" % (plan["errorsBefore"], len(plan["errorsLeft"])))
status, out = run("RepairPlan", ["cloud/E"], case)
expect("RepairPlan", (status, out.splitlines()), (0, lines))

for failure in failures:
    print("error: " + failure, file=sys.stderr)
sys.exit(1 if failures else 0)
