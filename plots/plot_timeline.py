#!/usr/bin/python3
"""Draws the life of every DataLoader worker in one or more runs as a Gantt chart.

Each FILE is a timeline written by `dlreset run --events FILE`, or by `dlreset watch --events
FILE` for a program watched from outside (its workers' lives only: a watcher sees processes, not
data set loads or iterator resets). Every run gets its own panel,
stacked top to bottom in the order given (pass the buggy run first so it sits above the fixed
one), on one shared time axis. In a panel, each worker *instance* has its own lane, grouped by
loader (train above val) and ordered by when it was spawned: a worker that is killed and started
again shows as a new lane, so Lightning 1.5.0's respawns read as a staircase of short bars where
1.5.1 has one long bar per worker.

A lane's bar runs from the worker's spawn to its exit (to the end of the fit if it never
exited); the start-up (spawn until its loop runs) and the dataset load (which ends at the
`dataset_loaded` event and began `duration_s` earlier) are drawn over it, the shutdown request is
marked, and every time a loader's persistent iterator was set to null a line crosses that
loader's lanes. With 0 workers, each loader's dataset load in the main process gets one lane.
Epochs are shaded bands, labelled at the top. A watched program's timeline with the Python hook
on gets a "waiting for data" lane under the workers for each training process: each pass's first
batch's wait as its exact interval, the rest of the pass as a band shaded by its steady-state
wait fraction.

A timeline of a multi-rank job (`dlreset run --ranks N --events FILE`) gets one group of lanes
per rank and loader ("r1 train" holds rank 1's training workers), rank 0's on top.

Spawn and exit events are paired per loader and worker id in the order the file lists them (the
order in which the main process learned of them); thread workers share the main process's pid,
so the pid alone cannot tell instances apart.
"""

import argparse
import sys
from collections import defaultdict

import plotstyle
from plotstyle import InputError, OKABE_ITO

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

LOADER_ORDER = ("train", "val")

ALIVE_COLOR = "#C8C8C8"
STARTUP_COLOR = OKABE_ITO["sky_blue"]
LOAD_COLOR = OKABE_ITO["orange"]
MARK_COLOR = OKABE_ITO["black"]
WAIT_COLOR = OKABE_ITO["vermillion"]
EPOCH_SHADES = ("#FFFFFF", "#EDEDED")
# A reset during the fit is the bug, so it takes the buggy variant's colour; the one at teardown
# happens in every Lightning variant and stays grey.
RESET_COLOR = plotstyle.variant_style("buggy")["color"]
TEARDOWN_RESET_COLOR = "#666666"

# Lanes per inch of figure height: tall enough for a 15 pt tick label per lane.
LANES_PER_INCH = 2.6


class Instance:
    """One worker's life, from one spawn to the exit paired with it."""

    def __init__(self, loader, worker, pid, spawn):
        self.loader = loader
        self.worker = worker
        self.pid = pid
        self.spawn = spawn
        self.started = None
        self.generation = None
        self.load = None  # (begin, end)
        self.shutdown = None
        self.exit = None


class WaitLane:
    """A training process's waits for data (`dlreset watch --events`): its first batches' waits as
    exact intervals, and each pass's steady state as a band shaded by its wait fraction."""

    def __init__(self, pid):
        self.pid = pid
        self.first_batches = []  # [(begin, end)]
        self.steady = []  # [(begin, end, fraction)]


class Run:
    def __init__(self, path, doc):
        self.path = path
        self.variant = doc.get("variant", "?")
        # `dlreset watch --events` names the program it watched.
        self.command = doc.get("command")
        self.workers = doc.get("workers")
        self.start_method = doc.get("start_method", "?")
        self.persistent = doc.get("persistent_workers")
        self.total_s = float(doc.get("total_s", 0.0))
        self.epochs = doc.get("epochs", [])
        self.world_size = doc.get("world_size")  # a multi-rank job's timeline
        self.instances = []
        self.main_loads = defaultdict(list)  # loader -> [(begin, end)] with 0 workers
        self.resets = defaultdict(list)  # loader -> [(t, during the fit rather than at teardown)]
        self.spawns = defaultdict(int)
        self.loads = defaultdict(int)
        self.waits = {}  # pid -> WaitLane


def pair_events(path, doc):
    """Turns the flat event list into worker instances; raises InputError on a broken file."""
    run = Run(path, doc)
    events = doc.get("events")
    if not isinstance(events, list):
        raise InputError(f"'{path}' has no 'events' list; write it with `dlreset run --events FILE`.")
    # Per (loader, worker): instances spawned and not yet exited, oldest first.
    open_instances = defaultdict(list)

    def oldest_without(key, attribute, kind, event):
        for instance in open_instances[key]:
            if getattr(instance, attribute) is None:
                return instance
        raise InputError(f"'{path}': a '{kind}' event at t={event['t']:.4f} s for {key[0]} worker "
                         f"{key[1]} has no spawn before it; the timeline is incomplete.")

    # File order, not time order: the file lists events as the main process learned of them,
    # which is causal, while a forked child's own clock reading of its start can precede the
    # parent's record of its spawn by microseconds.
    for event in events:
        kind = event.get("kind")
        loader = event.get("loader", "?")
        if "rank" in event:  # each rank's loaders are loaders of their own
            loader = f"r{event['rank']} {loader}"
        if kind == "iterator_reset":
            run.resets[loader].append((event["t"], event.get("phase") != "teardown"))
            continue
        if kind == "input_wait":
            lane = run.waits.setdefault(event["pid"], WaitLane(event["pid"]))
            if event.get("phase") == "steady":
                lane.steady.append((event["start"], event["t"], event.get("fraction", 0.0)))
            else:
                lane.first_batches.append((event["start"], event["t"]))
            continue
        if kind == "dataset_loaded" and "worker" not in event:
            run.main_loads[loader].append((event["t"] - event.get("duration_s", 0.0), event["t"]))
            run.loads[loader] += 1
            continue
        if "worker" not in event:
            raise InputError(f"'{path}': a '{kind}' event at t={event.get('t')} names no worker.")
        key = (loader, event["worker"])
        if kind == "spawn":
            instance = Instance(loader, event["worker"], event.get("pid"), event["t"])
            instance.generation = event.get("generation")  # dlreset watch: the set it started in
            open_instances[key].append(instance)
            run.instances.append(instance)
            run.spawns[loader] += 1
        elif kind == "started":
            oldest_without(key, "started", kind, event).started = event["t"]
        elif kind == "dataset_loaded":
            run.loads[loader] += 1
            oldest_without(key, "load", kind, event).load = (event["t"] - event.get("duration_s", 0.0),
                                                              event["t"])
        elif kind == "shutdown":
            oldest_without(key, "shutdown", kind, event).shutdown = event["t"]
        elif kind == "exit":
            instance = oldest_without(key, "exit", kind, event)
            instance.exit = event["t"]
            open_instances[key].remove(instance)
        # Other kinds may be added to the file later; they are not drawn.
    return run


def load_runs(paths):
    runs = []
    for path in paths:
        not_a_timeline = (f"'{path}' is not a timeline; write one with `dlreset run --events FILE` "
                          "(a --json report or a sweep will not do).")
        doc = plotstyle.load_checked(path, ("dlreset.events",), not_a_timeline)
        if not isinstance(doc, dict) or "events" not in doc:
            raise InputError(not_a_timeline)
        runs.append(pair_events(path, doc))
    return runs


def loader_order(loader):
    """Rank by rank ("r1 val" is rank 1's val loader), train above val within each."""
    rank, name = 0, loader
    head, _, tail = loader.partition(" ")
    if tail and head[:1] == "r" and head[1:].isdigit():
        rank, name = int(head[1:]), tail
    return (rank, LOADER_ORDER.index(name) if name in LOADER_ORDER else 99, name)


def lanes_of(run):
    """The panel's lanes, top to bottom: (loader, label, instance or None for a main-process lane)."""
    loaders = sorted({i.loader for i in run.instances} | set(run.main_loads) | set(run.resets), key=loader_order)
    lanes = []
    for loader in loaders:
        if loader in run.main_loads:
            lanes.append((loader, f"{loader}: main", None))
        # Spawn order, so each respawn adds a step to the staircase; "#2" is a worker id's
        # second life.
        lives = defaultdict(int)
        for instance in sorted((i for i in run.instances if i.loader == loader), key=lambda i: i.spawn):
            lives[instance.worker] += 1
            if instance.generation is not None:  # watched: workers are known by pid and generation
                label = f"gen {instance.generation} pid {instance.pid}"
            else:
                label = f"{loader} w{instance.worker} #{lives[instance.worker]}"
            lanes.append((loader, label, instance))
    # Under the workers, each training process's waits for data.
    for pid in sorted(run.waits):
        lanes.append((f"waits of pid {pid}", f"pid {pid}: waiting for data", run.waits[pid]))
    return lanes


def describe(run):
    persistent = {True: "persistent", False: "not persistent"}.get(run.persistent, "")
    workers = f"{run.workers} worker{'s' if run.workers != 1 else ''}" if run.workers is not None else ""
    start_method = run.start_method
    if run.workers == 0:  # nothing starts and nothing persists: the main process loads
        start_method, persistent, workers = "", "", "0 workers (loads in the main process)"
    spawns = " + ".join(f"{run.spawns[l]} {l}" for l in sorted(run.spawns, key=loader_order))
    if run.variant == "watched":
        spawns = " + ".join(f"{run.spawns[l]}" for l in sorted(run.spawns))
    loads = sum(run.loads.values())
    resets = sum(1 for ts in run.resets.values() for _, during_fit in ts if during_fit)
    ranks = f"{run.world_size} ranks" if run.world_size else ""
    setup = ", ".join(p for p in (ranks, start_method, workers, persistent) if p)
    facts = []
    if spawns:
        facts.append(f"{spawns} worker spawns")
    if run.variant == "watched":  # seen from outside: no loads; resets where the Python hook saw them
        if resets:
            facts.append(f"{resets} resets seen by the Python hook")
        facts.append(f"watched for {run.total_s:.2f} s")
    else:
        facts.append(f"{loads} dataset loads")
        facts.append(f"{resets} iterator resets during the fit")
        facts.append(f"fit {run.total_s:.2f} s")
    label = run.command if run.command else plotstyle.variant_label(run.variant)
    return f"{label} — {setup}\n" + ", ".join(facts)


def fit_end(run):
    """When the last epoch ended: what happens after is teardown."""
    return max((e["end"] for e in run.epochs), default=run.total_s)


def draw_run(ax, run, lanes, xmax):
    height = 0.62
    # Epoch bands behind everything, labelled at the top of the panel.
    first_start = min((e["start"] for e in run.epochs), default=0.0)
    if first_start > 0.02 * xmax:
        ax.axvspan(0, first_start, color="#DDE8F0", zorder=0, lw=0)
        before = "start-\nup" if run.variant == "watched" else "sanity\ncheck"
        ax.text(first_start / 2, 1.0, before, transform=ax.get_xaxis_transform(), ha="center",
                va="bottom", fontsize=12, color="#333333")
    for n, epoch in enumerate(run.epochs):
        ax.axvspan(epoch["start"], epoch["end"], color=EPOCH_SHADES[n % 2], zorder=0, lw=0)
        ax.axvline(epoch["start"], color="#888888", lw=1.2, zorder=1)
        # "epoch 12" at 14 pt is about 0.8 in wide, some 6 % of the panel; narrower epochs get
        # their number alone, and very narrow ones no label.
        share = (epoch["end"] - epoch["start"]) / xmax
        label = f"epoch {epoch['epoch']}" if share > 0.07 else str(epoch["epoch"]) if share > 0.015 else ""
        ax.text((epoch["start"] + epoch["end"]) / 2, 1.0, label,
                transform=ax.get_xaxis_transform(), ha="center", va="bottom", fontsize=14)
    if run.epochs:
        ax.axvline(fit_end(run), color="#888888", lw=1.2, zorder=1)
        if run.total_s - fit_end(run) > 0.03 * xmax:
            ax.text((fit_end(run) + run.total_s) / 2, 1.0, "tear-\ndown", transform=ax.get_xaxis_transform(),
                    ha="center", va="bottom", fontsize=12, color="#333333")

    rows = {}
    for row, (loader, _, instance) in enumerate(lanes):
        y = -row
        rows.setdefault(loader, []).append(y)
        if isinstance(instance, WaitLane):
            for begin, end, fraction in instance.steady:
                ax.barh(y, end - begin, left=begin, height=height, color=WAIT_COLOR, alpha=max(0.1, fraction),
                        edgecolor="none", zorder=2)
                if end - begin > 0.08 * xmax:
                    ax.text((begin + end) / 2, y, f"{100 * fraction:.0f}%", ha="center", va="center",
                            fontsize=11, zorder=4)
            for begin, end in instance.first_batches:
                ax.barh(y, end - begin, left=begin, height=height, color=WAIT_COLOR, edgecolor="black", lw=1,
                        zorder=3)
            continue
        if instance is None:
            for begin, end in run.main_loads[loader]:
                ax.barh(y, end - begin, left=begin, height=height, color=LOAD_COLOR, edgecolor="black",
                        lw=1, hatch="//", zorder=3)
            continue
        end = instance.exit if instance.exit is not None else run.total_s
        ax.barh(y, end - instance.spawn, left=instance.spawn, height=height, color=ALIVE_COLOR,
                edgecolor="#555555", lw=1, zorder=2)
        if instance.started is not None and instance.started > instance.spawn:
            ax.barh(y, instance.started - instance.spawn, left=instance.spawn, height=height,
                    color=STARTUP_COLOR, edgecolor="none", zorder=3)
        if instance.load is not None:
            begin, finish = instance.load
            ax.barh(y, finish - begin, left=begin, height=height, color=LOAD_COLOR, edgecolor="black",
                    lw=1, hatch="//", zorder=3)
        if instance.shutdown is not None:
            ax.plot([instance.shutdown], [y], marker="|", markersize=26, markeredgewidth=4,
                    color=MARK_COLOR, zorder=5)
        if instance.exit is None:
            ax.plot([end], [y], marker=">", markersize=13, color=MARK_COLOR, zorder=5, clip_on=False)

    for loader, ys in rows.items():
        top, bottom = max(ys) + 0.5, min(ys) - 0.5
        for t, during_fit in run.resets.get(loader, []):
            color = RESET_COLOR if during_fit else TEARDOWN_RESET_COLOR
            ax.plot([t, t], [bottom, top], color=color, lw=3, ls=(0, (3, 1.5)), zorder=4)
            ax.plot([t], [top], marker="v", markersize=12, color=color, zorder=6, clip_on=False)
    # A rule between loader groups.
    for loader, ys in list(rows.items())[1:]:
        ax.axhline(max(ys) + 0.5, color="black", lw=1.5, zorder=1)

    ax.set_yticks([-row for row in range(len(lanes))])
    ax.set_yticklabels([label for _, label, _ in lanes])
    ax.set_ylim(-len(lanes) + 0.5, 0.5)
    ax.grid(axis="y", visible=False)
    ax.tick_params(axis="y", length=0)
    ax.set_title(describe(run), loc="left", fontsize=16, pad=30,
                 color=plotstyle.variant_style(run.variant)["color"], fontweight="bold")


def legend_handles():
    return [
        Patch(facecolor=ALIVE_COLOR, edgecolor="#555555", label="worker alive (spawn → exit)"),
        Patch(facecolor=STARTUP_COLOR, label="starting up"),
        Patch(facecolor=LOAD_COLOR, edgecolor="black", hatch="//", label="loading its dataset"),
        Line2D([], [], color=MARK_COLOR, marker="|", markersize=20, markeredgewidth=4, ls="none",
               label="shutdown requested"),
        Line2D([], [], color=MARK_COLOR, marker=">", markersize=12, ls="none",
               label="still alive when the fit returned"),
        Line2D([], [], color=RESET_COLOR, lw=3, ls=(0, (3, 1.5)), marker="v", markersize=12,
               label="iterator set to null during the fit"),
        Line2D([], [], color=TEARDOWN_RESET_COLOR, lw=3, ls=(0, (3, 1.5)), marker="v", markersize=12,
               label="… at teardown"),
        Patch(facecolor=WAIT_COLOR, edgecolor="black", label="waiting for data: a first batch (the band: "
                                                                "the steady state, shaded by its share)"),
    ]


def summary(run):
    """One line per run on stdout: the counts the figure shows."""
    lives = " ".join(f"{loader}={sum(1 for i in run.instances if i.loader == loader)}"
                     for loader in sorted({i.loader for i in run.instances}))
    loads = " ".join(f"{loader}={n}" for loader, n in sorted(run.loads.items()))
    # During the fit + at teardown, as dlreset run's own table counts them.
    resets = " ".join(f"{loader}={sum(1 for _, fit in ts if fit)}+{sum(1 for _, fit in ts if not fit)}"
                      for loader, ts in sorted(run.resets.items()))
    unexited = sum(1 for i in run.instances if i.exit is None)
    return (f"{run.path}: variant={run.variant}, worker_lives {lives or 'none'}, dataset_loads "
            f"{loads or 'none'}, iterator_resets {resets or 'none'}, alive_at_end={unexited}")


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="plot_timeline.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n"
               "  build/bin/dlreset run --variant buggy --events out/buggy.json\n"
               "  build/bin/dlreset run --variant fixed --events out/fixed.json\n"
               "  /usr/bin/python3 plots/plot_timeline.py out/buggy.json out/fixed.json --out out/timeline")
    parser.add_argument("inputs", nargs="+", metavar="FILE", help="timelines from dlreset run --events")
    plotstyle.add_figure_arguments(parser, "DataLoader workers over one fit")
    args = parser.parse_args(argv)
    try:
        runs = load_runs(args.inputs)
    except (InputError, KeyError, TypeError, ValueError) as e:
        message = str(e) if isinstance(e, InputError) else f"an event lacks a usable field ({e!r}); " \
            "pass files written by `dlreset run --events`."
        print(f"plot_timeline.py: {message}", file=sys.stderr)
        return 1
    for run in runs:
        print(summary(run))

    plotstyle.apply()
    lanes = [lanes_of(run) for run in runs]
    xmax = max(run.total_s for run in runs) or 1.0
    # The layout is in inches, so a lane is equally tall in every panel and the titles keep
    # their room however many lanes a run has.
    width, left, right = 15.0, 2.0, 0.35
    top, title_block, bottom = 0.55, 1.25, 2.0
    lane_heights = [max(len(l), 1) / LANES_PER_INCH for l in lanes]
    height = top + sum(title_block + h for h in lane_heights) + bottom
    fig = plt.figure(figsize=(width, height))
    axes = []
    y = height - top
    for run, run_lanes, lane_height in zip(runs, lanes, lane_heights):
        y -= title_block + lane_height
        ax = fig.add_axes([left / width, y / height, 1 - (left + right) / width, lane_height / height],
                          sharex=axes[0] if axes else None)
        draw_run(ax, run, run_lanes, xmax)
        ax.set_ylabel("worker")
        axes.append(ax)
    for ax in axes[:-1]:
        ax.tick_params(axis="x", labelbottom=False)
    axes[-1].set_xlim(0, xmax * 1.02)
    watched_only = all(run.variant == "watched" for run in runs)
    axes[-1].set_xlabel("time since the watch started (s)" if watched_only else "time since the fit started (s)")
    fig.suptitle(args.title, fontweight="bold", y=1 - 0.12 / height, va="top")
    fig.legend(handles=legend_handles(), loc="lower center", ncol=3, frameon=False,
               bbox_to_anchor=(0.5, 0.05 / height))
    for path in plotstyle.save(fig, args.out):
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
