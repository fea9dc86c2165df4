"""Runs plots/sweep.py for real on a tiny grid and checks what it collected; then checks that a
failing run stops it loudly. Never checks a timing.

    check_sweep.py --sweep plots/sweep.py --dlreset build/bin/dlreset --workdir DIR
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

VARIANTS = ["buggy", "fixed"]
WORKERS = [0, 1]
METHODS = ["fork", "thread"]
REPEAT = 2
EPOCHS = 2


def main():
    parser = argparse.ArgumentParser(prog="check_sweep.py")
    parser.add_argument("--sweep", required=True)
    parser.add_argument("--dlreset", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    out = os.path.join(args.workdir, "sweep.json")
    events = os.path.join(args.workdir, "events")
    failures = []

    command = [sys.executable, args.sweep, "--dlreset", args.dlreset,
               "--variants", ",".join(VARIANTS), "--workers", ",".join(map(str, WORKERS)),
               "--start-methods", ",".join(METHODS), "--epochs", str(EPOCHS),
               "--limit-train-batches", "2", "--limit-val-batches", "1", "--repeat", str(REPEAT),
               "--events-dir", events, "--out", out, "--", "--seed", "3"]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        print("sweep failed:\n" + result.stderr)
        return 1
    with open(out, encoding="utf-8") as f:
        doc = json.load(f)
    runs = doc["runs"]

    # 0 workers run once per variant (first start method); 1 worker once per start method.
    expected = sorted((v, w, m) for _ in range(REPEAT) for v in VARIANTS for w in WORKERS
                      for m in (METHODS[:1] if w == 0 else METHODS))
    got = sorted((r["variant"], r["workers"], r["start_method"]) for r in runs)
    if got != expected:
        failures.append(f"configurations {got}, expected {expected}")
    if len(doc["commands"]) != len(runs):
        failures.append(f"{len(doc['commands'])} commands for {len(runs)} runs")
    # Interleaved: within each block of len(VARIANTS) runs every variant appears once, and the
    # second repetition starts its blocks with another variant than the first.
    blocks = [runs[i:i + len(VARIANTS)] for i in range(0, len(runs), len(VARIANTS))]
    for block in blocks:
        if sorted(r["variant"] for r in block) != sorted(VARIANTS):
            failures.append(f"a block runs {[r['variant'] for r in block]}, not each variant once")
    half = len(blocks) // REPEAT
    if [b[0]["variant"] for b in blocks[:half]] == [b[0]["variant"] for b in blocks[half:]]:
        failures.append("both repetitions run the variants in the same order")
    for run, cmd in zip(runs, doc["commands"]):
        if run["epochs"] != EPOCHS or run["seed"] != 3:
            failures.append(f"a run has epochs={run['epochs']} seed={run['seed']}: flags not passed")
        if cmd[-2:] != ["--seed", "3"] or "--json" not in cmd:
            failures.append(f"recorded command {cmd} lacks the pass-through flags or --json")
        if run["workers"] == 0 and run["persistent_workers"]:
            failures.append("a 0-worker run has persistent workers")
        # docs/design.md §5: with persistent workers, buggy spawns E·W train workers, fixed W.
        spawns = run["train"]["worker_spawns"]
        want = run["workers"] * (EPOCHS if run["variant"] == "buggy" else 1)
        if spawns != want:
            failures.append(f"{run['variant']} {run['start_method']} W={run['workers']}: "
                            f"{spawns} train spawns, expected {want}")
    machine = doc["machine"]
    if not (isinstance(machine.get("nproc"), int) and machine.get("cpu") and machine.get("date")):
        failures.append(f"machine record incomplete: {machine}")
    if doc["settings"].get("passthrough") != ["--seed", "3"]:
        failures.append(f"settings do not record the pass-through flags: {doc['settings']}")
    names = sorted(os.listdir(events)) if os.path.isdir(events) else []
    if len(names) != len(runs):
        failures.append(f"{len(names)} events files for {len(runs)} runs: {names}")
    for name in names:
        with open(os.path.join(events, name), encoding="utf-8") as f:
            if "events" not in json.load(f):
                failures.append(f"{name} is not a timeline")
    progress = [line for line in result.stderr.splitlines() if line.startswith("[")]
    if len(progress) != len(runs) or "0 runs left" not in progress[-1]:
        failures.append(f"expected one progress line per run, got {progress}")

    # A run that fails stops the sweep: non-zero exit, the command and dlreset's own error on
    # stderr, and no output file.
    bad_out = os.path.join(args.workdir, "bad.json")
    bad = subprocess.run([sys.executable, args.sweep, "--dlreset", args.dlreset, "--variants", "fixed",
                          "--workers", "1", "--epochs", "1", "--limit-train-batches", "1",
                          "--limit-val-batches", "1", "--out", bad_out, "--", "--batch-size", "0"],
                         capture_output=True, text=True)
    if bad.returncode == 0:
        failures.append("a sweep whose run fails exited 0")
    wanted = ("command: ", "--batch-size 0", "dlreset: --batch-size")
    if not all(text in bad.stderr for text in wanted):
        failures.append(f"a failing sweep's stderr lacks the command or dlreset's error:\n{bad.stderr}")
    if os.path.exists(bad_out):
        failures.append("a failing sweep wrote its output file")

    if failures:
        print("\n".join(failures))
        return 1
    print(f"ok: {len(runs)} runs collected, failing run reported")
    return 0


if __name__ == "__main__":
    sys.exit(main())
