#!/usr/bin/python3
"""Where each fit's time went, as stacked bars: one bar per variant and number of workers, split
into the loop's own work (step), the wait for data at the starts of the loaders' passes, and the
wait in steady state; what is left of the whole fit (iter() itself, the workers' shutdowns, the
loops between passes) is the bar's grey top. Under Lightning 1.5.0 every pass starts new workers
that load the data set again, so its wait at the starts grows with the workers, while the step
stays the same: that is why more workers make 1.5.0 slower.

Inputs are sweeps from plots/sweep.py (or single reports from `dlreset run --json F`) written by
a dlreset whose reports carry `data_time` (docs/run-json.md). One panel per start method; the
0-worker runs, which start no workers, appear in every panel. Where several runs share a
configuration, the bar is the run with the median whole-fit time (the lower of the middle two),
drawn as it was measured, so its parts add up to its own total.

The wait at a start is split by its cause: "new workers" (the pass's iter() started workers)
and "workers kept" (its workers were persistent, or it has none).
"""

import argparse
import sys
from collections import defaultdict

import plotstyle
from plotstyle import InputError

import matplotlib.pyplot as plt

# Bottom to top: what the loop did, then each cause of its waiting, then the rest of the fit.
PARTS = (
    ("step", "the loop's own work (step)", plotstyle.OKABE_ITO["sky_blue"], None),
    ("start_new", "wait at starts, new workers", plotstyle.OKABE_ITO["vermillion"], None),
    ("start_kept", "wait at starts, workers kept (or none)", plotstyle.OKABE_ITO["orange"], None),
    ("steady", "wait in steady state", plotstyle.OKABE_ITO["yellow"], None),
    ("rest", "rest of the fit (iter(), shutdowns, between passes)", "#BBBBBB", "//"),
)
DATA_TIME_FIELDS = ("wait_s", "step_s", "wait_at_start_new_workers_s", "wait_at_start_workers_kept_s",
                    "wait_steady_s", "starts_new_workers", "starts_workers_kept")


def reports_of(path):
    unusable = (f"'{path}' is neither a sweep (plots/sweep.py) nor a report from `dlreset run "
                "--json`; pass one of those.")
    reports = plotstyle.run_reports(path, unusable, "total_s")
    for report in reports:
        data_time = report.get("data_time")
        if not isinstance(data_time, dict) or any(f not in data_time for f in DATA_TIME_FIELDS):
            raise InputError(f"'{path}' holds runs without `data_time` (their dlreset did not account "
                             "for the wait for data); sweep again with a dlreset that writes "
                             "`dlreset.run` version 2 or later.")
    return reports


def parts_of(report):
    """The bar's parts of one run, in seconds; `rest` is what the parts leave of the whole fit."""
    t = report["data_time"]
    parts = {
        "step": t["step_s"],
        "start_new": t["wait_at_start_new_workers_s"],
        "start_kept": t["wait_at_start_workers_kept_s"],
        "steady": t["wait_steady_s"],
    }
    parts["rest"] = max(0.0, report["total_s"] - sum(parts.values()))
    return parts


def median_run(runs):
    """The run with the median whole-fit time; the lower of the middle two for an even count."""
    ordered = sorted(runs, key=lambda r: r["total_s"])
    return ordered[(len(ordered) - 1) // 2]


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="plot_wait.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  /usr/bin/python3 plots/plot_wait.py out/sweep.json --out out/wait")
    parser.add_argument("inputs", nargs="+", metavar="FILE", help="sweep JSON or dlreset run report")
    plotstyle.add_figure_arguments(parser, "Where the fit's time went: more workers, more waiting in 1.5.0")
    args = parser.parse_args(argv)
    try:
        reports = [r for path in args.inputs for r in reports_of(path)]
    except InputError as e:
        print(f"plot_wait.py: {e}", file=sys.stderr)
        return 1
    if not reports:
        print("plot_wait.py: the inputs hold no runs; pass a sweep that ran.", file=sys.stderr)
        return 1

    # (start method or "" for 0 workers, workers, variant) -> runs
    groups = defaultdict(list)
    for r in reports:
        method = "" if r["workers"] == 0 else r["start_method"]
        groups[(method, r["workers"], r["variant"])].append(r)
    known = plotstyle.START_METHODS
    methods = sorted({m for m, _, _ in groups if m}, key=lambda m: (known.index(m) if m in known else 9, m)) or [""]

    print(f"{'start':6} {'variant':10} {'workers':>7} {'runs':>4} {'starts_new':>10} {'starts_kept':>11} "
          f"{'total_s':>8} {'step_s':>7} {'start_new_s':>11} {'start_kept_s':>12} {'steady_s':>8} "
          f"{'rest_s':>7} {'wait_share':>10}")
    bars = {}
    for key in sorted(groups, key=lambda k: (k[0], k[1], plotstyle.variant_order(k[2]))):
        method, workers, variant = key
        run = median_run(groups[key])
        parts = parts_of(run)
        bars[key] = parts
        t = run["data_time"]
        share = t["wait_s"] / (t["wait_s"] + t["step_s"]) if t["wait_s"] + t["step_s"] > 0 else 0.0
        print(f"{method or '-':6} {variant:10} {workers:>7} {len(groups[key]):>4} {t['starts_new_workers']:>10} "
              f"{t['starts_workers_kept']:>11} {run['total_s']:>8.3f} {parts['step']:>7.3f} "
              f"{parts['start_new']:>11.3f} {parts['start_kept']:>12.3f} {parts['steady']:>8.3f} "
              f"{parts['rest']:>7.3f} {100 * share:>9.0f}%")

    plotstyle.apply()
    width, height = max(7.0 * len(methods) + 1.5, 12.0), 8.0
    fig, axes = plt.subplots(1, len(methods), figsize=(width, height), sharey=True, squeeze=False)
    top = max(sum(p.values()) for p in bars.values())
    for ax, method in zip(axes.flat, methods):
        keys = sorted([k for k in bars if k[0] in (method, "")],
                      key=lambda k: (k[1], plotstyle.variant_order(k[2])))
        worker_counts = sorted({k[1] for k in keys})
        xs, labels, centres = [], [], []
        x = 0.0
        for workers in worker_counts:
            group = [k for k in keys if k[1] == workers]
            start = x
            for key in group:
                bottom = 0.0
                for name, _, colour, hatch in PARTS:
                    value = bars[key][name]
                    ax.bar(x, value, bottom=bottom, width=0.8, color=colour, hatch=hatch,
                           edgecolor="#333333", linewidth=0.8)
                    bottom += value
                xs.append(x)
                labels.append(key[2])
                x += 1.0
            centres.append(((start + x - 1.0) / 2.0, workers))
            x += 0.8
        ax.set_xticks(xs)
        ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=13)
        for ax_x, workers in centres:
            ax.text(ax_x, top * 1.04, f"{workers} worker{'s' if workers != 1 else ''}", ha="center",
                    va="bottom", fontsize=15, fontweight="bold")
        ax.set_title(method if method else "no workers", pad=34)
        ax.grid(axis="x", visible=False)
    axes[0, 0].set_ylabel("seconds of the whole fit")
    axes[0, 0].set_ylim(0, top * 1.12)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c, hatch=h, ec="#333333") for _, _, c, h in PARTS]
    fig.legend(handles, [label for _, label, _, _ in PARTS], loc="lower center", ncol=3, frameon=False,
               bbox_to_anchor=(0.5, 0.02))
    fig.suptitle(args.title, fontweight="bold")
    sample = reports[0]
    fig.text(0.5, 0.935, f"{sample.get('epochs')} epochs of {sample.get('limit_train_batches')} train + "
             f"{sample.get('limit_val_batches')} val batches; each bar the run of median fit time",
             ha="center", va="top", fontsize=14, color="#333333")
    fig.subplots_adjust(left=1.2 / width, right=1 - 0.3 / width, top=0.78, bottom=0.30, wspace=0.06)
    for path in plotstyle.save(fig, args.out):
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
