#!/usr/bin/python3
"""Runs `dlreset run` over a grid of variants, rank counts, worker counts and start methods, and
collects every run's JSON report into one file for plot_workers.py, plot_epochs.py and
plot_ranks.py.

Within each repetition the configurations are interleaved (every variant of one rank count,
worker count and start method runs before the next, and the variants' order rotates from one
repetition to the next), so that a slow drift of the machine -- another job starting, the CPU
heating up -- spreads over all variants instead of biasing one. A rank count above 1 runs
`dlreset run --ranks N --master-port 0`: N ranks on this machine, rank 0's report holding them all.

Flags after `--` go to every `dlreset run` unchanged, e.g. `-- --no-persistent-workers
--device cpu`. Each run's report is read from a temporary --json file; the recorded commands show
`--json -` (stdout) in its place, so they can be rerun as they are.
"""

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time

VARIANTS = ("buggy", "fixed", "workaround", "vanilla")
START_METHODS = ("thread", "fork", "spawn")

# Flags the sweep sets itself for every run: passing them through would contradict the grid or
# the file the report is read from.
OWNED_FLAGS = (
    "--variant",
    "--workers",
    "--start-method",
    "--epochs",
    "--limit-train-batches",
    "--limit-val-batches",
    "--json",
    "--events",
    "--ranks",
)


def csv_of(kind, allowed=None):
    """An argparse type for a comma-separated list; `kind` converts each item."""

    def parse(text):
        items = [item.strip() for item in text.split(",") if item.strip()]
        if not items:
            raise argparse.ArgumentTypeError(f"'{text}' is an empty list; give at least one value.")
        values = []
        for item in items:
            try:
                value = kind(item)
            except ValueError:
                raise argparse.ArgumentTypeError(f"'{item}' in '{text}' is not a valid {kind.__name__}.")
            if allowed is not None and value not in allowed:
                raise argparse.ArgumentTypeError(
                    f"'{item}' is not one of {', '.join(allowed)}; fix the list '{text}'."
                )
            values.append(value)
        if len(set(values)) != len(values):
            raise argparse.ArgumentTypeError(f"'{text}' names a value twice; list each once.")
        return values

    return parse


def int_at_least(minimum, what):
    """An argparse type: one integer of `minimum` or more; `what` says in the error what to give
    instead ("0 or more", "1 or more")."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not an integer.")
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is too small; give {what}.")
        return value

    return parse


def ints_at_least(minimum, what):
    """An argparse type: a comma-separated list of integers of `minimum` or more."""
    def parse(text):
        values = csv_of(int)(text)
        bad = [v for v in values if v < minimum]
        if bad:
            raise argparse.ArgumentTypeError(f"'{text}' holds {bad[0]}; give {what}.")
        return values

    return parse


def build_parser():
    parser = argparse.ArgumentParser(
        prog="sweep.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s [options] [-- FLAGS FOR dlreset run ...]",
        epilog=(
            "0 workers start no worker, so a worker count of 0 runs once per variant and\n"
            "repetition, with the first start method, whatever --start-methods says (dlreset run\n"
            "turns persistent workers off itself for 0 workers).\n\n"
            "example:\n"
            "  /usr/bin/python3 plots/sweep.py --repeat 3 --start-methods fork,spawn \\\n"
            "      --events-dir out/events --out out/sweep.json"
        ),
    )
    parser.add_argument("--dlreset", default="build/bin/dlreset", metavar="PATH",
                        help="the dlreset binary (default: %(default)s)")
    parser.add_argument("--variants", type=csv_of(str, VARIANTS), default=["buggy", "fixed", "vanilla"],
                        metavar="LIST", help="comma-separated, from %s (default: buggy,fixed,vanilla)"
                        % ",".join(VARIANTS))
    parser.add_argument("--ranks", type=ints_at_least(1, "counts of 1 or more"), default=[1], metavar="LIST",
                        help="comma-separated rank counts of each run (default: 1, one process)")
    parser.add_argument("--workers", type=ints_at_least(0, "counts of 0 or more"), default=[0, 1, 2, 4],
                        metavar="LIST",
                        help="comma-separated worker counts per loader (default: 0,1,2,4)")
    parser.add_argument("--start-methods", type=csv_of(str, START_METHODS), default=["fork"],
                        metavar="LIST", help="comma-separated, from thread,fork,spawn (default: fork)")
    parser.add_argument("--epochs", type=int_at_least(1, "1 or more"), default=3, metavar="N",
                        help="epochs per run (default: 3)")
    parser.add_argument("--limit-train-batches", type=int_at_least(0, "0 or more"), default=50, metavar="N",
                        help="training batches per epoch (default: 50)")
    parser.add_argument("--limit-val-batches", type=int_at_least(0, "0 or more"), default=10, metavar="N",
                        help="validation batches per epoch (default: 10)")
    parser.add_argument("--repeat", type=int_at_least(1, "1 or more"), default=1, metavar="N",
                        help="repetitions of the whole grid (default: 1)")
    parser.add_argument("--events-dir", metavar="DIR",
                        help="also keep each run's --events timeline here, as "
                        "events-VARIANT-START-wW-rR.json")
    parser.add_argument("--out", required=True, metavar="PATH", help="the combined JSON to write")
    return parser


def split_passthrough(argv):
    """Everything after the first `--` goes to dlreset run."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def grid(args):
    """The configurations of one repetition, before rotation: (ranks, workers, start method)
    blocks, each holding every variant."""
    blocks = []
    for ranks in args.ranks:
        for workers in args.workers:
            methods = args.start_methods[:1] if workers == 0 else args.start_methods
            for method in methods:
                blocks.append([(variant, ranks, workers, method) for variant in args.variants])
    return blocks


def schedule(args):
    """Every run in order: repetition r rotates the variants of each block by r places."""
    runs = []
    blocks = grid(args)
    for rep in range(args.repeat):
        for block in blocks:
            shift = rep % len(block)
            for variant, ranks, workers, method in block[shift:] + block[:shift]:
                runs.append((rep, variant, ranks, workers, method))
    return runs


def events_name(variant, ranks, workers, method, rep):
    """events-VARIANT-START-wW-rR.json, with -nN before -wW for a job of N > 1 ranks."""
    job = f"-n{ranks}" if ranks > 1 else ""
    return f"events-{variant}-{method}{job}-w{workers}-r{rep}.json"


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def dlreset_version(binary):
    result = subprocess.run([binary, "--version"], capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else None


def fail(message):
    print(f"sweep.py: {message}", file=sys.stderr)
    sys.exit(1)


def main(argv=None):
    own, passthrough = split_passthrough(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(own)
    for flag in passthrough:
        name = flag.split("=", 1)[0]
        if name in OWNED_FLAGS:
            parser.error(f"'{name}' after '--' is set by the sweep itself; use the sweep's own flag instead.")
    if not (os.path.isfile(args.dlreset) and os.access(args.dlreset, os.X_OK)):
        fail(f"'{args.dlreset}' is not an executable file; build it with "
             "`cmake --build --preset default --target dlreset` or pass --dlreset PATH.")
    if args.events_dir:
        os.makedirs(args.events_dir, exist_ok=True)

    plan = schedule(args)
    runs, commands = [], []
    with tempfile.TemporaryDirectory(prefix="dlreset-sweep-") as tmp:
        for i, (rep, variant, ranks, workers, method) in enumerate(plan):
            report_path = os.path.join(tmp, f"run-{i}.json")
            command = [
                args.dlreset, "run",
                "--variant", variant,
                "--workers", str(workers),
                "--start-method", method,
                "--epochs", str(args.epochs),
                "--limit-train-batches", str(args.limit_train_batches),
                "--limit-val-batches", str(args.limit_val_batches),
                "--no-progress",
                "--json", report_path,
            ]
            if ranks > 1:
                command += ["--ranks", str(ranks), "--master-port", "0"]
            if args.events_dir:
                events_path = os.path.join(args.events_dir, events_name(variant, ranks, workers, method, rep))
                command += ["--events", events_path]
            command += passthrough
            plural = "" if workers == 1 else "s"
            job = f"{ranks} ranks, " if ranks > 1 else ""
            config = f"{variant}, {method}, {job}{workers} worker{plural}, repetition {rep + 1}/{args.repeat}"
            started = time.monotonic()
            result = subprocess.run(command, capture_output=True, text=True)
            wall_s = time.monotonic() - started
            if result.returncode != 0:
                print(f"sweep.py: run {i + 1}/{len(plan)} ({config}) failed with exit status "
                      f"{result.returncode}.", file=sys.stderr)
                print("command: " + shlex.join(command), file=sys.stderr)
                print("its stderr:", file=sys.stderr)
                print(result.stderr.rstrip() or "(empty)", file=sys.stderr)
                fail(f"stopped after {i} successful runs; nothing was written to '{args.out}'.")
            try:
                with open(report_path, encoding="utf-8") as f:
                    report = json.load(f)
            except (OSError, json.JSONDecodeError) as e:
                fail(f"run {i + 1} ({config}) exited 0 but its report '{report_path}' is unreadable: "
                     f"{e}. command: {shlex.join(command)}")
            # Which repetition it was, so that report.py can pair the variants' runs of one.
            report["sweep_repetition"] = rep
            runs.append(report)
            # The report's path was temporary; record the command as one can rerun it.
            commands.append([("-" if part == report_path else part) for part in command])
            left = len(plan) - i - 1
            print(f"[{i + 1}/{len(plan)}] {config}: fit {report['total_s']:.2f} s "
                  f"(process {wall_s:.2f} s), {left} run{'s' if left != 1 else ''} left",
                  file=sys.stderr, flush=True)

    output = {
        "schema": "dlreset.sweep",
        "schema_version": 1,
        "runs": runs,
        "commands": commands,
        "machine": {
            "nproc": os.cpu_count(),
            "cpu": cpu_model(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "hostname": platform.node(),
            "kernel": platform.release(),
        },
        "settings": {
            "dlreset": args.dlreset,
            "dlreset_version": dlreset_version(args.dlreset),
            "variants": args.variants,
            "ranks": args.ranks,
            "workers": args.workers,
            "start_methods": args.start_methods,
            "epochs": args.epochs,
            "limit_train_batches": args.limit_train_batches,
            "limit_val_batches": args.limit_val_batches,
            "repeat": args.repeat,
            "passthrough": passthrough,
            "events_dir": args.events_dir,
            "order": "interleaved: per repetition, (ranks, workers, start method) blocks in the order "
                     "given, each running every variant, the variants rotated by the repetition index",
        },
    }
    directory = os.path.dirname(args.out)
    if directory:
        os.makedirs(directory, exist_ok=True)
    temporary = args.out + ".tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        json.dump(output, f, indent=1)
        f.write("\n")
    os.replace(temporary, args.out)
    print(f"sweep.py: wrote {len(runs)} runs to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
