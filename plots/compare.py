#!/usr/bin/env python3
"""Compares two builds' benchmark runs, paired: after / before, run by run.

Give the JSON of runs that were made in turn (before, after, before, after, ...), each with
one repetition: the i-th file of --before is paired with the i-th of --after, so a drift of the
machine moves both sides of a pair, and the spread of the pairs says what the median is worth.
Prints a Markdown table of the median ratio and its range for every benchmark both sides ran.
Standard library only.

    plots/compare.py --before old-1.json old-2.json --after new-1.json new-2.json
"""

import argparse
import json
import re
import statistics
import sys

def short_name(run_name):
    """The name without the parts every run of a family shares (iterations, real time)."""
    return re.sub(r"/(iterations:\d+|real_time)", "", run_name)


def load(path):
    """{benchmark: {counter: value}} of one file's single repetition."""
    with open(path) as f:
        data = json.load(f)
    runs = {}
    for bench in data.get("benchmarks", []):
        if bench.get("run_type") != "iteration":
            continue
        name = short_name(bench["run_name"])
        if name in runs:
            sys.exit(f"compare.py: {path} holds more than one repetition of {name}; "
                     "run each side with --benchmark_repetitions=1.")
        runs[name] = bench
    return runs


def ratio_row(name, counter, pairs):
    ratios = [after[name][counter] / before[name][counter] for before, after in pairs
              if before[name].get(counter) and after[name].get(counter) is not None]
    if not ratios:
        return None
    return f"{statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", nargs="+", required=True, help="the baseline's runs, in order")
    parser.add_argument("--after", nargs="+", required=True, help="the changed build's runs, in order")
    parser.add_argument("--counters", default="batches_per_s,main_cpu_us_per_batch",
                        help="counters to compare, comma-separated (default: %(default)s)")
    args = parser.parse_args()
    if len(args.before) != len(args.after):
        sys.exit(f"compare.py: {len(args.before)} runs before and {len(args.after)} after; "
                 "give as many of each, in the order they ran.")
    pairs = [(load(b), load(a)) for b, a in zip(args.before, args.after)]
    names = sorted(set.intersection(*(set(b) & set(a) for b, a in pairs)))
    if not names:
        sys.exit("compare.py: no benchmark ran on both sides in every pair.")
    counters = [c for c in args.counters.split(",") if c]
    print(f"After / before, median of {len(pairs)} pairs (range):\n")
    print("| benchmark | " + " | ".join(counters) + " |")
    print("|---|" + "---|" * len(counters))
    for name in names:
        cells = [ratio_row(name, counter, pairs) or "–" for counter in counters]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
