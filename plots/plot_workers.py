#!/usr/bin/python3
"""Plots the whole fit's time against the number of DataLoader workers: one line per variant,
one panel per start method -- the bug report's "time for 100 epochs vs n_jobs" figure.

Inputs are recognised by their content, and several can be given:
  * a sweep from plots/sweep.py ({"runs": [...], ...});
  * a Google Benchmark JSON from `dlreset_bench --benchmark_filter=BM_Fit
    --benchmark_out=F --benchmark_out_format=json` (its BM_Fit/variant:V/workers:W/start:S runs;
    the aggregates that --benchmark_repetitions adds are recomputed here, not read);
  * single reports from `dlreset run --json F`.
Sweeps and single reports are pooled; benchmark samples, which may come from another workload
(dlreset_bench defaults to 5 epochs), are drawn as their own dashed lines. Where a point has
several samples, it shows their median, with bars from the minimum to the maximum.

0 workers start no worker, so a run with 0 workers appears in every panel whatever its start
method. The numbers above the buggy line are its median time over the fixed one's.
"""

import argparse
import re
import statistics
import sys
from collections import defaultdict

import plotstyle
from plotstyle import InputError

import matplotlib.pyplot as plt

BENCH_NAME = re.compile(r"^BM_Fit/variant:(\d+)/workers:(\d+)/start:(\d+)(/|$)")

# Google Benchmark's time units, in seconds.
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}

# What must agree between reports before their times may be pooled into one point.
WORKLOAD_FIELDS = ("epochs", "limit_train_batches", "limit_val_batches", "batch_size", "device",
                   "num_sanity_val_steps")


class Sample:
    """One fit's total time, with what identifies its point and its line."""

    def __init__(self, variant, start_method, workers, persistent, seconds, source):
        self.variant = variant
        self.start_method = start_method
        self.workers = workers
        # With 0 workers there is nothing to persist; such runs join the persistent line.
        self.persistent = True if workers == 0 else persistent
        self.seconds = seconds
        self.source = source  # "run" (sweeps and single reports) or "benchmark"


def samples_from_report(report, path):
    try:
        return Sample(report["variant"], report["start_method"], int(report["workers"]),
                      bool(report["persistent_workers"]), float(report["total_s"]), "run")
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(f"'{path}' holds a run report without a usable {e} field; "
                         "pass reports written by `dlreset run --json`.") from e


def samples_from_benchmark(doc, path):
    samples = []
    for entry in doc.get("benchmarks", []):
        match = BENCH_NAME.match(entry.get("name", ""))
        if not match or entry.get("run_type", "iteration") != "iteration":
            continue
        if entry.get("error_occurred"):
            print(f"plot_workers.py: skipping {entry['name']} in '{path}': it failed "
                  f"({entry.get('error_message', 'no message')}).", file=sys.stderr)
            continue
        variant_code, workers, start_code = (int(g) for g in match.groups()[:3])
        unit = entry.get("time_unit", "ns")
        if unit not in TIME_UNITS:
            raise InputError(f"'{path}': {entry['name']} has time unit '{unit}', which is not one "
                             f"of {', '.join(TIME_UNITS)}.")
        variant = plotstyle.BENCH_VARIANTS.get(variant_code)
        start = plotstyle.BENCH_START_METHODS.get(start_code)
        if variant is None or start is None:
            raise InputError(f"'{path}': {entry['name']} names an unknown variant or start method; "
                             "this script knows variant 0-3 and start 0-2 (bench/fit_bench.cpp).")
        samples.append(Sample(variant, start, workers, True, entry["real_time"] * TIME_UNITS[unit],
                              "benchmark"))
    if not samples:
        raise InputError(f"'{path}' is a benchmark file without BM_Fit runs; write it with "
                         "`dlreset_bench --benchmark_filter=BM_Fit --benchmark_out=F "
                         "--benchmark_out_format=json`.")
    return samples


def load(paths):
    """All samples from all files, plus what the subtitle says about where they came from."""
    samples, workloads, machines = [], set(), []
    for path in paths:
        unusable = (f"'{path}' is neither a sweep (plots/sweep.py), a Google Benchmark JSON "
                    "(dlreset_bench --benchmark_out_format=json) nor a dlreset run report; pass "
                    "one of those.")
        doc = plotstyle.load_checked(path, ("dlreset.sweep", "dlreset.run"), unusable)
        if isinstance(doc, dict) and isinstance(doc.get("runs"), list):
            if not doc["runs"]:
                raise InputError(f"'{path}' is a sweep without runs; run plots/sweep.py again.")
            for report in doc["runs"]:
                samples.append(samples_from_report(report, path))
                workloads.add(tuple(report.get(f) for f in WORKLOAD_FIELDS))
            machine = doc.get("machine", {})
            if machine:
                machines.append(f"{machine.get('nproc', '?')} × {machine.get('cpu', '?')}")
        elif isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list):
            samples.extend(samples_from_benchmark(doc, path))
            context = doc.get("context", {})
            if context:
                machines.append(f"{context.get('num_cpus', '?')} CPUs at "
                                f"{context.get('mhz_per_cpu', '?')} MHz")
        elif isinstance(doc, dict) and "epoch_s" in doc and "events" not in doc:
            samples.append(samples_from_report(doc, path))
            workloads.add(tuple(doc.get(f) for f in WORKLOAD_FIELDS))
        else:
            raise InputError(unusable)
    if len(workloads) > 1:
        described = "; ".join(", ".join(f"{f}={v}" for f, v in zip(WORKLOAD_FIELDS, w))
                              for w in sorted(workloads, key=str))
        raise InputError("the run reports were made with different workloads and their times "
                         f"cannot share one point: {described}. Plot each workload on its own.")
    workload = dict(zip(WORKLOAD_FIELDS, workloads.pop())) if workloads else None
    return samples, workload, sorted(set(machines))


def series_key(sample):
    return (sample.source, sample.variant, sample.persistent)


def series_label(key, sources):
    source, variant, persistent = key
    label = plotstyle.variant_label(variant)
    if not persistent:
        label += ", persistent_workers off"
    if len(sources) > 1:
        label += " [dlreset_bench]" if source == "benchmark" else " [dlreset run]"
    return label


def build_figure(samples, workload, machines, title):
    plotstyle.apply()
    methods = sorted({s.start_method for s in samples if s.workers > 0},
                     key=lambda m: plotstyle.START_METHODS.index(m) if m in plotstyle.START_METHODS else 99)
    if not methods:
        methods = ["none"]  # only 0-worker runs: one panel
    sources = sorted({s.source for s in samples})
    # Every point: (series, start method, workers) -> seconds of each sample.
    points = defaultdict(list)
    for s in samples:
        for method in (methods if s.workers == 0 else [s.start_method]):
            points[(series_key(s), method, s.workers)].append(s.seconds)

    # With several sources, the ratios come from one of them only, or their labels collide.
    ratio_source = "run" if "run" in sources else sources[0]
    keys = sorted({k for k, _, _ in points},
                  key=lambda k: (sources.index(k[0]), plotstyle.variant_order(k[1]), not k[2]))
    width, height = 6.5 * len(methods) + 1.5, 7.0 + 0.45 * len(sources)
    fig, axes = plt.subplots(1, len(methods), figsize=(width, height), sharey=True, squeeze=False)
    axes = axes[0]
    counts = set()
    top = 0.0
    handles = {}
    for ax, method in zip(axes, methods):
        medians = {}
        for key in keys:
            xs = sorted(w for k, m, w in points if k == key and m == method)
            if not xs:
                continue
            values = [points[(key, method, w)] for w in xs]
            counts.update(len(v) for v in values)
            med = [statistics.median(v) for v in values]
            low = [m - min(v) for m, v in zip(med, values)]
            high = [max(v) - m for m, v in zip(med, values)]
            top = max(top, max(max(v) for v in values))
            style = dict(plotstyle.variant_style(key[1]))
            if not key[2]:
                style["linestyle"] = "-."
            if key[0] == "benchmark" and len(sources) > 1:
                style["linestyle"] = "--"
                style["markerfacecolor"] = "white"
            handles[key] = ax.errorbar(xs, med, yerr=[low, high], label=series_label(key, sources),
                                       markeredgewidth=2, elinewidth=2.5, **style)
            for x, m, v in zip(xs, med, values):
                medians[(key, x)] = (m, max(v))
        annotate_ratios(ax, medians, ratio_source)
        ax.set_xticks(sorted({w for _, m, w in points if m == method}))
        ax.set_xlabel("DataLoader workers per loader (num_workers)")
        ax.set_title(f"start method: {method}" if method != "none" else "no workers")
        ax.margins(x=0.08)
    axes[0].set_ylabel("whole fit (s)")
    # The y axis is shared and starts at 0, so heights compare across panels; the headroom
    # keeps the ratio labels inside the frame.
    axes[0].set_ylim(0, top * 1.12)

    # Legend columns hold one line each (variant, persistence) and its rows the sources, so
    # the benchmark's line sits under the sweep's line of the same variant.
    ordered = sorted(handles, key=lambda k: (plotstyle.variant_order(k[1]), not k[2], sources.index(k[0])))
    columns = len({(k[1], k[2]) for k in ordered})
    fig.legend([handles[k] for k in ordered], [series_label(k, sources) for k in ordered],
               loc="lower center", ncol=min(columns, 4), bbox_to_anchor=(0.5, 0.1 / height),
               frameon=False)
    rows = -(-len(ordered) // min(columns, 4))
    fig.suptitle(title, fontweight="bold", y=1 - 0.1 / height, va="top")
    note = "×: buggy median / fixed median"
    if len(sources) > 1:
        note += " of dlreset run" if ratio_source == "run" else " of dlreset_bench"
    described = subtitle(workload, machines, counts)
    if len(sources) > 1 and workload:
        described = "dlreset run: " + described
    fig.text(0.5, 1 - 0.6 / height, described + "\n" + note, ha="center", va="top",
             fontsize=14, color="#333333", linespacing=1.4)
    # Margins in inches, so titles and legend keep their room whatever the panel count.
    fig.subplots_adjust(left=1.1 / width, right=1 - 0.3 / width, top=1 - 1.9 / height,
                        bottom=(1.3 + 0.45 * rows) / height, wspace=0.06)
    return fig


def annotate_ratios(ax, medians, source):
    """Writes buggy/fixed (medians) above each buggy point of `source` that has a fixed point."""
    for (key, workers), (value, highest) in medians.items():
        key_source, variant, persistent = key
        if variant != "buggy" or workers == 0 or key_source != source:
            continue
        fixed = medians.get(((source, "fixed", persistent), workers))
        if fixed:
            ax.annotate(f"×{value / fixed[0]:.1f}", (workers, highest), textcoords="offset points",
                        xytext=(0, 10), ha="center", va="bottom", fontsize=15, fontweight="bold",
                        color=plotstyle.variant_style("buggy")["color"])


def subtitle(workload, machines, counts):
    parts = []
    if workload:
        parts.append(f"{workload['epochs']} epochs of {workload['limit_train_batches']} train + "
                     f"{workload['limit_val_batches']} val batches of {workload['batch_size']}, "
                     f"sanity check {workload['num_sanity_val_steps']} batches, {workload['device']}")
    if counts:
        n = f"{min(counts)}" if min(counts) == max(counts) else f"{min(counts)}–{max(counts)}"
        parts.append(f"median of {n} runs, bars min–max" if max(counts) > 1 else "one run a point")
    if machines:
        parts.append("; ".join(machines))
    return " · ".join(parts)


def print_table(samples):
    """The numbers behind the figure, on stdout: one line per point."""
    points = defaultdict(list)
    for s in samples:
        points[(s.source, s.start_method, s.variant, s.persistent, s.workers)].append(s.seconds)
    print(f"{'source':10} {'start':6} {'variant':11} {'persist':7} {'workers':>7} {'runs':>4} "
          f"{'median_s':>9} {'min_s':>8} {'max_s':>8}")
    def order(item):
        source, method, variant, persistent, workers = item[0]
        return (source, method, plotstyle.variant_order(variant), persistent, workers)

    for (source, method, variant, persistent, workers), values in sorted(points.items(), key=order):
        print(f"{source:10} {method:6} {variant:11} {str(persistent).lower():7} {workers:>7} "
              f"{len(values):>4} {statistics.median(values):>9.3f} {min(values):>8.3f} {max(values):>8.3f}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="plot_workers.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+", metavar="FILE",
                        help="sweep JSON, Google Benchmark JSON or dlreset run report")
    plotstyle.add_figure_arguments(parser, "Whole fit time vs DataLoader workers")
    args = parser.parse_args(argv)
    try:
        samples, workload, machines = load(args.inputs)
    except InputError as e:
        print(f"plot_workers.py: {e}", file=sys.stderr)
        return 1
    print_table(samples)
    fig = build_figure(samples, workload, machines, args.title)
    for path in plotstyle.save(fig, args.out):
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
