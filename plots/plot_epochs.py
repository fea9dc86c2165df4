#!/usr/bin/python3
"""Plots seconds per epoch for each variant: the bug shows as epochs after the first that stay as
slow as the first, because Lightning 1.5.0 starts the workers and loads the data set again every
epoch, where 1.5.1 pays that once.

Inputs are sweeps from plots/sweep.py and/or single reports from `dlreset run --json F`,
recognised by their content. Each distinct configuration (start method, workers, persistent
workers) gets its own panel; inside it, one line per variant. An epoch's time runs from its start
to the end of its validation; the sanity check before epoch 0 is not part of it. Where several
runs share a configuration, each point is their median with bars from the minimum to the
maximum. --workers, --start-methods and --variants keep only some of the runs.
"""

import argparse
import statistics
import sys
from collections import defaultdict

import plotstyle
from plotstyle import InputError

import matplotlib.pyplot as plt

WORKLOAD_FIELDS = ("epochs", "limit_train_batches", "limit_val_batches", "batch_size", "device")


def reports_of(path):
    unusable = (f"'{path}' is neither a sweep (plots/sweep.py) nor a report from `dlreset run "
                "--json`; pass one of those (timelines from --events and benchmark files hold no "
                "per-epoch times).")
    reports = plotstyle.run_reports(path, unusable, "epoch_s")
    for report in reports:
        missing = [f for f in ("variant", "workers", "start_method", "persistent_workers", "epoch_s")
                   if f not in report]
        if missing:
            raise InputError(f"'{path}' holds a report without {', '.join(missing)}; pass reports "
                             "written by `dlreset run --json`.")
    return reports


def config_of(report):
    """The panel a report belongs to; 0 workers have no start method or persistence to speak of."""
    if report["workers"] == 0:
        return (0, "", False)
    return (report["workers"], report["start_method"], bool(report["persistent_workers"]))


def config_title(config):
    workers, method, persistent = config
    if workers == 0:
        return "0 workers (main process)"
    plural = "s" if workers != 1 else ""
    return f"{method}, {workers} worker{plural}" + ("" if persistent else ", not persistent")


def parse_list(text, kind=str):
    return [kind(item.strip()) for item in text.split(",") if item.strip()]


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="plot_epochs.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  /usr/bin/python3 plots/plot_epochs.py out/sweep.json --workers 2,4 "
               "--start-methods fork --out out/epochs")
    parser.add_argument("inputs", nargs="+", metavar="FILE", help="sweep JSON or dlreset run report")
    plotstyle.add_figure_arguments(parser, "Seconds per epoch")
    parser.add_argument("--workers", metavar="LIST", help="keep only these worker counts, e.g. 2,4")
    parser.add_argument("--start-methods", metavar="LIST",
                        help="keep only these start methods, e.g. fork (0-worker runs are kept)")
    parser.add_argument("--variants", metavar="LIST", help="keep only these variants, e.g. buggy,fixed")
    args = parser.parse_args(argv)

    try:
        workers_kept = parse_list(args.workers, int) if args.workers else None
    except ValueError:
        parser.error(f"--workers takes comma-separated integers, got '{args.workers}'.")
    methods_kept = parse_list(args.start_methods) if args.start_methods else None
    variants_kept = parse_list(args.variants) if args.variants else None

    try:
        reports = [r for path in args.inputs for r in reports_of(path)]
    except InputError as e:
        print(f"plot_epochs.py: {e}", file=sys.stderr)
        return 1
    kept = [r for r in reports
            if (workers_kept is None or r["workers"] in workers_kept)
            and (methods_kept is None or r["workers"] == 0 or r["start_method"] in methods_kept)
            and (variants_kept is None or r["variant"] in variants_kept)]
    if not kept:
        print(f"plot_epochs.py: none of the {len(reports)} runs passes the filters "
              f"(--workers {args.workers}, --start-methods {args.start_methods}, --variants "
              f"{args.variants}); loosen them.", file=sys.stderr)
        return 1
    workloads = {tuple(r.get(f) for f in WORKLOAD_FIELDS) for r in kept}
    if len(workloads) > 1:
        print("plot_epochs.py: the runs were made with different workloads "
              f"({'; '.join(str(dict(zip(WORKLOAD_FIELDS, w))) for w in sorted(workloads, key=str))}); "
              "their epochs cannot be compared. Plot each workload on its own.", file=sys.stderr)
        return 1
    workload = dict(zip(WORKLOAD_FIELDS, workloads.pop()))

    # (config, variant) -> epoch -> seconds of every run.
    epochs = defaultdict(lambda: defaultdict(list))
    for r in kept:
        for n, seconds in enumerate(r["epoch_s"]):
            epochs[(config_of(r), r["variant"])][n].append(seconds)
    def config_order(config):
        workers, method, persistent = config
        known = plotstyle.START_METHODS
        return (workers != 0, known.index(method) if method in known else len(known), workers, not persistent)

    configs = sorted({c for c, _ in epochs}, key=config_order)

    print(f"{'configuration':32} {'variant':10} {'epoch':>5} {'runs':>4} {'median_s':>9} "
          f"{'min_s':>8} {'max_s':>8}")
    for config in configs:
        for variant in sorted({v for c, v in epochs if c == config}, key=plotstyle.variant_order):
            for n, values in sorted(epochs[(config, variant)].items()):
                print(f"{config_title(config):32} {variant:10} {n:>5} {len(values):>4} "
                      f"{statistics.median(values):>9.3f} {min(values):>8.3f} {max(values):>8.3f}")

    plotstyle.apply()
    columns = min(len(configs), 4)
    rows = -(-len(configs) // columns)
    # At least 11 in wide, so the legend fits on one row under a single panel.
    width, height = max(5.2 * columns + 1.6, 11.0), 5.2 * rows + 2.6
    fig, axes = plt.subplots(rows, columns, figsize=(width, height), sharey=True, squeeze=False)
    handles = {}
    counts = set()
    top = 0.0
    for ax, config in zip(axes.flat, configs):
        for variant in sorted({v for c, v in epochs if c == config}, key=plotstyle.variant_order):
            series = sorted(epochs[(config, variant)].items())
            xs = [n for n, _ in series]
            values = [v for _, v in series]
            counts.update(len(v) for v in values)
            med = [statistics.median(v) for v in values]
            top = max(top, max(max(v) for v in values))
            below = [m - min(v) for m, v in zip(med, values)]
            above = [max(v) - m for m, v in zip(med, values)]
            handles[variant] = ax.errorbar(xs, med, yerr=[below, above],
                                           label=plotstyle.variant_label(variant), markeredgewidth=2,
                                           elinewidth=2.5, **plotstyle.variant_style(variant))
        ax.set_title(config_title(config))
        ax.set_xticks(sorted({n for (c, _), per in epochs.items() if c == config for n in per}))
        ax.margins(x=0.1)
    for ax in axes.flat[len(configs):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("epoch (s)")
    for ax in axes.flat[:len(configs)]:
        ax.set_xlabel("epoch")
    axes[0, 0].set_ylim(0, top * 1.08)  # shared: one scale for every panel, from 0

    ordered = sorted(handles, key=plotstyle.variant_order)
    fig.legend([handles[v] for v in ordered], [plotstyle.variant_label(v) for v in ordered],
               loc="lower center", ncol=min(len(ordered), 3), frameon=False,
               bbox_to_anchor=(0.5, 0.05 / height))
    legend_rows = -(-len(ordered) // 3)
    fig.suptitle(args.title, fontweight="bold", y=1 - 0.1 / height, va="top")
    n = f"{min(counts)}" if min(counts) == max(counts) else f"{min(counts)}–{max(counts)}"
    spread = f"median of {n} runs, bars min–max" if max(counts) > 1 else "one run each"
    fig.text(0.5, 1 - 0.6 / height,
             f"{workload['epochs']} epochs of {workload['limit_train_batches']} train + "
             f"{workload['limit_val_batches']} val batches of {workload['batch_size']} on "
             f"{workload['device']}; an epoch includes its validation · {spread}",
             ha="center", va="top", fontsize=14, color="#333333")
    fig.subplots_adjust(left=1.1 / width, right=1 - 0.3 / width, top=1 - 1.5 / height,
                        bottom=(1.1 + 0.45 * legend_rows) / height, wspace=0.08, hspace=0.55)
    for path in plotstyle.save(fig, args.out):
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
