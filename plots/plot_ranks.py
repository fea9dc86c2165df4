#!/usr/bin/python3
"""Plots the whole fit's time against ranks × workers: one line per variant, one point per
(ranks, workers) configuration of a multi-rank sweep (`plots/sweep.py --ranks 1,2 ...`).

Every rank of a DDP job owns its loaders, so Lightning 1.5.0 restarts ranks × W workers at every
epoch, all at once on the machine's shared cores; 1.5.1 starts them once. The x axis is that
product, labelled "ranks×workers"; a point shows the median over the sweep's repetitions, with
bars from the minimum to the maximum, and the numbers above the buggy line are its median over
fixed's at the same configuration. Times are rank 0's whole fit (the ranks step together).

Prints one line per configuration on stdout with the counts the figure rests on.
"""

import argparse
import statistics
import sys
from collections import defaultdict

import plotstyle
from plotstyle import InputError

import matplotlib.pyplot as plt


def load(path):
    doc = plotstyle.load_checked(path, ("dlreset.sweep",),
                                 f"'{path}' is not a sweep; write one with `plots/sweep.py --ranks 1,2 ...`.")
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not runs:
        raise InputError(f"'{path}' holds no runs; run plots/sweep.py again.")
    # (variant, ranks, workers) -> [(seconds, worker spawns over every rank)]
    points = defaultdict(list)
    for run in runs:
        try:
            ranks = int(run.get("world_size", 1))
            spawns = (run["totals"] if ranks > 1 else run)
            spawned = spawns["train"]["worker_spawns"] + spawns["val"]["worker_spawns"]
            points[(run["variant"], ranks, int(run["workers"]))].append((float(run["total_s"]), spawned))
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(f"'{path}' holds a run without a usable {e} field; "
                             "pass a sweep written by plots/sweep.py.") from e
    return points, doc.get("settings", {}), doc.get("machine", {})


def build_figure(points, settings, machine, title):
    plotstyle.apply()
    configs = sorted({(r, w) for _, r, w in points}, key=lambda c: (c[0] * c[1], c[0]))
    xs = {config: i for i, config in enumerate(configs)}
    variants = sorted({v for v, _, _ in points}, key=plotstyle.variant_order)
    fig, ax = plt.subplots(figsize=(9.5, 7.5))
    top = 0.0
    medians = {}
    for variant in variants:
        mine = [c for c in configs if (variant, *c) in points]
        values = [[s for s, _ in points[(variant, *c)]] for c in mine]
        med = [statistics.median(v) for v in values]
        top = max([top] + [max(v) for v in values])
        ax.errorbar([xs[c] for c in mine], med, yerr=[[m - min(v) for m, v in zip(med, values)],
                                                       [max(v) - m for m, v in zip(med, values)]],
                    label=plotstyle.variant_label(variant), markeredgewidth=2, elinewidth=2.5,
                    **plotstyle.variant_style(variant))
        for c, m, v in zip(mine, med, values):
            medians[(variant, c)] = (m, max(v))
    for config in configs:
        buggy, fixed = medians.get(("buggy", config)), medians.get(("fixed", config))
        if buggy and fixed:
            ax.annotate(f"×{buggy[0] / fixed[0]:.1f}", (xs[config], buggy[1]), textcoords="offset points",
                        xytext=(0, 10), ha="center", va="bottom", fontsize=15, fontweight="bold",
                        color=plotstyle.variant_style("buggy")["color"])
    ax.set_xticks(range(len(configs)))
    ax.set_xticklabels([f"{r}×{w}" for r, w in configs])
    ax.set_xlabel("ranks × DataLoader workers per loader")
    ax.set_ylabel("whole fit, rank 0 (s)")
    ax.set_ylim(0, top * 1.15)
    ax.margins(x=0.1)
    ax.legend(loc="upper left", frameon=False)
    workload = (f"{settings.get('epochs', '?')} epochs of {settings.get('limit_train_batches', '?')} train + "
                f"{settings.get('limit_val_batches', '?')} val batches per rank, "
                f"{', '.join(settings.get('start_methods', []))}, {machine.get('nproc', '?')} cores")
    fig.suptitle(title, fontweight="bold")
    ax.set_title(workload + "\n×: buggy median / fixed median", fontsize=13, color="#333333")
    fig.tight_layout()
    return fig


def main(argv=None):
    parser = argparse.ArgumentParser(prog="plot_ranks.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep", metavar="SWEEP", help="a sweep from plots/sweep.py with --ranks")
    plotstyle.add_figure_arguments(parser, "Lightning 1.5.0 across ranks: ranks × W workers restart every epoch")
    args = parser.parse_args(argv)
    try:
        points, settings, machine = load(args.sweep)
        fig = build_figure(points, settings, machine, args.title)
        plotstyle.save(fig, args.out)
    except InputError as e:
        print(f"plot_ranks.py: {e}", file=sys.stderr)
        return 1
    for (variant, ranks, workers), samples in sorted(points.items(), key=lambda p: (p[0][1], p[0][2], p[0][0])):
        times = [s for s, _ in samples]
        spawns = sorted({n for _, n in samples})
        print(f"{variant} ranks={ranks} workers={workers}: runs={len(samples)} "
              f"worker_spawns={'/'.join(str(n) for n in spawns)} median_s={statistics.median(times):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
