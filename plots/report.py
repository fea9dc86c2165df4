#!/usr/bin/python3
"""Turns dlreset's benchmark and sweep JSON into the tables of docs/results.md.

Reads Google Benchmark JSON written by `dlreset_bench --benchmark_out=F --benchmark_out_format=json`
(any mix of the BM_LoaderEpoch, BM_LoaderEpochPaired, BM_LoaderBatchSize, BM_LibTorchLoaderEpoch,
BM_WorkerStartup, BM_WatchedStore, BM_Fit and BM_ComputeOnly families) and sweep JSON written by
plots/sweep.py (a sweep over rank counts gets tables of its own), and prints Markdown: the
tables, the cost models of the buggy overhead, one process and across ranks, and each target of
docs/results.md with its measured value and whether it is met. Nothing is hard-coded: every
number comes from the inputs.
"""

import argparse
import json
import os
import re
import statistics
import sys

VARIANTS = {0: "buggy", 1: "fixed", 2: "workaround", 3: "vanilla"}
STARTS = {0: "thread", 1: "fork", 2: "spawn"}
DATASETS = {0: "train", 1: "none", 2: "t10k"}


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="+", help="benchmark or sweep JSON files")
    parser.add_argument("--cores", type=int, default=os.cpu_count(),
                        help="cores of the machine the figures came from (default: this one's)")
    return parser.parse_args()


def name_args(name):
    """BM_Fit/variant:1/workers:4/start:1/iterations:1/real_time -> ('BM_Fit', {...})."""
    parts = name.split("/")
    args = {}
    for part in parts[1:]:
        match = re.fullmatch(r"([a-z_]+):(\d+)", part)
        if match and match.group(1) not in ("iterations", "repeats"):
            args[match.group(1)] = int(match.group(2))
    return parts[0], args


def seconds(entry):
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[entry.get("time_unit", "ns")]
    return entry["real_time"] * unit


def load(paths):
    """Benchmark runs grouped by (family, args), and sweep runs."""
    bench = {}
    runs = []
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        if "benchmarks" in data:
            for entry in data["benchmarks"]:
                if entry.get("run_type") == "aggregate" or entry.get("error_occurred"):
                    continue
                family, args = name_args(entry["name"])
                bench.setdefault((family, tuple(sorted(args.items()))), []).append(entry)
        elif "runs" in data:
            # A sweep over rank counts has tables of its own (ranks_tables).
            ranks_sweep = any(r > 1 for r in data.get("settings", {}).get("ranks", [1]))
            runs.extend(dict(run, sweep_file=path, ranks_sweep=ranks_sweep) for run in data["runs"])
        else:
            sys.exit(f"report.py: {path} is neither benchmark JSON nor sweep JSON.")
    return bench, runs


def entries(bench, family, **want):
    found = []
    for (fam, args), group in bench.items():
        args = dict(args)
        if fam == family and all(args.get(k) == v for k, v in want.items()):
            found.append((args, group))
    return sorted(found, key=lambda item: sorted(item[0].items()))


def median(values):
    return statistics.median(values) if values else float("nan")


def spread(values):
    if len(values) < 2:
        return ""
    return f" ({min(values):.2f}–{max(values):.2f})"


def verdict(ok):
    return "met" if ok else "**not met**"


def loader_tables(bench, targets):
    ours = {(a["start"], a["workers"], a.get("shm", 1)): g for a, g in entries(bench, "BM_LoaderEpoch")}
    theirs = {a["workers"]: g for a, g in entries(bench, "BM_LibTorchLoaderEpoch", batch=0)}
    if not ours:
        return
    rate = lambda g: median([e["batches_per_s"] for e in g])
    cpu = lambda g: median([e["main_cpu_us_per_batch"] for e in g])
    columns = [(0, 1, "thread"), (1, 1, "fork, shm"), (1, 0, "fork, socket"), (2, 1, "spawn, shm"),
               (2, 0, "spawn, socket")]
    print("### Loader-only epoch: 60000 training images, persistent workers\n")
    print("Batches/s, median of the repetitions; in brackets, against the thread back-end, then against "
          "LibTorch's loader at the same W.\n")
    print("| workers | LibTorch loader | " + " | ".join(f"ours, {name}" for _, _, name in columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    for workers in sorted({w for _, w, _ in ours}):
        libtorch = rate(theirs[workers]) if workers in theirs else float("nan")
        thread = ours.get((0, workers, 1))
        row = [f"{libtorch:.0f}"]
        for start, shm, name in columns:
            group = ours.get((start, workers, shm)) or (ours.get((0, 0, 1)) if workers == 0 else None)
            if group is None:
                row.append("–")
                continue
            mine = rate(group)
            against_thread = mine / rate(thread) if thread else float("nan")
            row.append(f"{mine:.0f} ({against_thread:.2f}×, {mine / libtorch:.2f}×)")
            if workers > 0 and shm == 1:
                targets.append((f"our loader ≥ 2 × LibTorch's, {name}, {workers} workers",
                                f"{mine / libtorch:.2f}×", mine >= 2 * libtorch))
                if start != 0:
                    targets.append((f"{name} ≥ 0.8 × thread, {workers} workers", f"{against_thread:.2f}×",
                                    against_thread >= 0.8))
        print(f"| {workers} | " + " | ".join(row) + " |")
    print("\nW = 0 loads in the main process: every \"ours\" column is the same run.\n")
    print("Main-process CPU per batch (µs, getrusage user + system). Thread workers are the main "
          "process's threads, so their CPU counts there.\n")
    print("| workers | LibTorch loader | " + " | ".join(f"ours, {name}" for _, _, name in columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    for workers in sorted({w for _, w, _ in ours if w > 0}):
        row = [f"{cpu(theirs[workers]):.0f}" if workers in theirs else "–"]
        for start, shm, name in columns:
            group = ours.get((start, workers, shm))
            row.append(f"{cpu(group):.0f}" if group else "–")
        print(f"| {workers} | " + " | ".join(row) + " |")
        for start in (1, 2):
            shm, socket = ours.get((start, workers, 1)), ours.get((start, workers, 0))
            if workers == 4 and shm and socket:
                ratio = cpu(shm) / cpu(socket)
                targets.append((f"main-process CPU per batch, {STARTS[start]} shm / socket ≤ 1/3, 4 workers",
                                f"{ratio:.2f}", ratio <= 1 / 3))
    process_columns = [c for c in columns if c[0] != 0]
    rows = [w for w in sorted({w for _, w, _ in ours if w > 0})
            if any("worker_cpu_us_per_batch" in e for start, shm, _ in process_columns
                   for e in ours.get((start, w, shm), []))]
    if rows:
        print("\nCPU per batch of the main process and the worker processes together (µs; the workers' "
              "from /proc/PID/schedstat): all that a batch costs, beside the thread back-end's "
              "main-process figure, which holds its workers too.\n")
        print("| workers | ours, thread | " + " | ".join(f"ours, {name}" for _, _, name in process_columns) + " |")
        print("|---|---|" + "---|" * len(process_columns))
        for workers in rows:
            thread = ours.get((0, workers, 1))
            row = [f"{cpu(thread):.0f}" if thread else "–"]
            for start, shm, name in process_columns:
                group = ours.get((start, workers, shm))
                if not group or any("worker_cpu_us_per_batch" not in e for e in group):
                    row.append("–")
                    continue
                total = median([e["main_cpu_us_per_batch"] + e["worker_cpu_us_per_batch"] for e in group])
                row.append(f"{total:.0f}")
            print(f"| {workers} | " + " | ".join(row) + " |")
    print()


STOLEN_BANDS = [(0.0, 0.05), (0.05, 0.15), (0.15, 1.0)]


def percent(share):
    return f"{100 * share:.0f}%"


def alternating_table(bench, targets):
    """BM_LoaderEpochPaired: a process back-end against the thread back-end, epochs alternating."""
    pairs = entries(bench, "BM_LoaderEpochPaired")
    if not pairs:
        return
    print("### Process workers against thread workers, epochs alternating\n")
    print("BM_LoaderEpochPaired: a loader of process workers (shared memory) and one of thread workers "
          "take turns epoch by epoch; each repetition gives the ratio of their batches/s. Medians of the "
          "repetitions, ranges in brackets; CPU per batch is the main process's and the workers' "
          "together; \"stolen\" is the share of the machine's CPU time its hypervisor gave elsewhere "
          "while the process side ran.\n")
    print("| start | workers | repetitions | process / thread | batches/s, process | batches/s, thread "
          "| CPU µs per batch, process | CPU µs per batch, thread | stolen |")
    print("|---|---|---|---|---|---|---|---|---|")
    for args, group in pairs:
        name, workers = STARTS[args["start"]], args["workers"]
        column = lambda key: [e[key] for e in group]
        ratio = median(column("against_thread"))
        print(f"| {name} | {workers} | {len(group)} | {ratio:.2f}×{spread(column('against_thread'))} "
              f"| {median(column('batches_per_s')):.0f} | {median(column('thread_batches_per_s')):.0f} "
              f"| {median(column('cpu_us_per_batch')):.0f} | {median(column('thread_cpu_us_per_batch')):.0f} "
              f"| {percent(median(column('stolen')))} ({percent(min(column('stolen')))}–"
              f"{percent(max(column('stolen')))}) |")
        targets.append((f"{name}, shm ≥ 0.8 × thread, {workers} workers, epochs alternating",
                        f"{ratio:.2f}×", ratio >= 0.8))
    print()
    # The repetitions of every start method and W together, by how much the hypervisor took
    # while the process side ran: where the process back-ends fall behind the thread back-end.
    print("The same repetitions, all start methods and W together, by the share the hypervisor "
          "took while the process side ran:\n")
    print("| stolen | repetitions | process / thread | CPU µs per batch, process / thread |")
    print("|---|---|---|---|")
    every = [e for _, group in pairs for e in group]
    for low, high in STOLEN_BANDS:
        band = [e for e in every if low <= e["stolen"] < high]
        if not band:
            continue
        label = f"{percent(low)}–{percent(high)}" if high < 1 else f"≥ {percent(low)}"
        ratios = [e["against_thread"] for e in band]
        cpu = [e["cpu_us_per_batch"] / e["thread_cpu_us_per_batch"] for e in band]
        print(f"| {label} | {len(band)} | {median(ratios):.2f}×{spread(ratios)} | {median(cpu):.2f}{spread(cpu)} |")
    print()


def batch_size_table(bench):
    ours = {(a["start"], a["batch"], a["shm"]): g for a, g in entries(bench, "BM_LoaderBatchSize")}
    theirs = {a["batch"]: g for a, g in entries(bench, "BM_LibTorchLoaderEpoch", workers=4) if a["batch"] > 0}
    if not ours:
        return
    print("### Batch sizes, 4 workers\n")
    print("Samples/s, main-process CPU per batch (µs) and the peak RSS the loader added, summed over "
          "every process (MiB: the main process's peak above its RSS before the loader, plus each "
          "worker's peak less what a fork inherited; pages processes share count in each), medians "
          "of the repetitions.\n")
    print("| batch | loader | samples/s | main CPU / batch (µs) | peak RSS added, all processes (MiB) |")
    print("|---|---|---|---|---|")
    rows = [("LibTorch's", theirs)] + [
        (f"ours, {STARTS[start]}" + ("" if start == 0 else (", shm" if shm else ", socket")),
         {b: g for (s, b, m), g in ours.items() if s == start and m == shm})
        for start, shm in ((0, 1), (1, 1), (1, 0), (2, 1), (2, 0))]
    for batch in sorted({b for _, b, _ in ours}):
        for name, groups in rows:
            group = groups.get(batch)
            if not group:
                continue
            samples = median([e["samples_per_s"] for e in group])
            cpu = median([e["main_cpu_us_per_batch"] for e in group])
            rss = median([e["peak_rss_added_mib"] for e in group])
            print(f"| {batch} | {name} | {samples:.0f} | {cpu:.0f} | {rss:.0f} |")
    print()


def startup_table(bench):
    found = entries(bench, "BM_WorkerStartup")
    if not found:
        return {}
    print("### Worker start-up: from iter() until each new worker has delivered its first batch\n")
    print("Rows with ranks > 1: that many processes (forked copies of the benchmark, as the ranks of a "
          "job on one machine), each starting its W at the same moment; the time is the slowest rank's.\n")
    print("| start method | dataset | workers at once | ranks | start-up (s) | their shutdown (s) |")
    print("|---|---|---|---|---|---|")
    table = {}
    for args, group in found:
        value = median([seconds(e) for e in group])
        shutdown = median([e.get("shutdown_s", float("nan")) for e in group])
        ranks = args.get("ranks", 1)  # files from before the ranks rows have none
        table[(args["start"], args["dataset"], args["workers"], ranks)] = (value, shutdown)
        print(f"| {STARTS[args['start']]} | {DATASETS[args['dataset']]} | {args['workers']} | {ranks} | "
              f"{value:.3f} | {shutdown:.3f} |")
    print()
    return table


def watched_table(bench, targets):
    found = {(a["mode"], a.get("pattern", 0)): median([seconds(e) * 1e9 for e in g])
             for a, g in entries(bench, "BM_WatchedStore")}
    if not found:
        return
    labels = ["plain pointer", "watched, disarmed", "watched, armed (count)", "watched, armed (count + stack)"]
    patterns = {0: "live and null, alternating", 1: "live only"}
    print("### Watched field: the cost of one store\n")
    print("| store | stores | ns | × plain |")
    print("|---|---|---|---|")
    for mode, pattern in sorted(found):
        base = found.get((0, pattern))
        print(f"| {labels[mode]} | {patterns[pattern]} | {found[(mode, pattern)]:.3f} | "
              f"{found[(mode, pattern)] / base:.2f} |")
    print()
    for pattern in sorted(patterns):
        if (1, pattern) in found and (0, pattern) in found:
            ratio = found[(1, pattern)] / found[(0, pattern)]
            targets.append((f"disarmed watched store ≤ 1.2 × plain pointer store, {patterns[pattern]} stores",
                            f"{ratio:.2f}×", ratio <= 1.2))


def fit_tables(bench, startup, cores, targets):
    fits = {}
    for args, group in entries(bench, "BM_Fit"):
        fits[(VARIANTS[args["variant"]], args["workers"], STARTS[args["start"]])] = group
    if not fits:
        return
    compute = entries(bench, "BM_ComputeOnly")
    compute_epoch = median([e["epoch_s"] for _, g in compute for e in g]) if compute else None
    print("### Whole fit: Fashion-MNIST CNN, 5 epochs of 50 training and 10 validation batches, "
          "sanity check on, persistent workers\n")
    starts = sorted({s for (_, _, s) in fits}, key=lambda s: list(STARTS.values()).index(s))
    for start in starts:
        print(f"**{start}** (seconds for the whole fit, median and range over repetitions; "
              "spawns and loads of both loaders)\n")
        print("| workers | buggy | fixed | vanilla | buggy / fixed | fixed / vanilla | spawns buggy / fixed | peak MiB buggy / fixed |")
        print("|---|---|---|---|---|---|---|---|")
        for workers in sorted({w for (_, w, s) in fits if s == start or w == 0}):
            key = lambda v: (v, workers, start if workers else "fork")
            times = {v: [seconds(e) for e in fits.get(key(v), [])] for v in ("buggy", "fixed", "vanilla")}
            if not all(times.values()):
                continue
            b, f, v = (median(times[x]) for x in ("buggy", "fixed", "vanilla"))
            spawns = lambda x: int(fits[key(x)][0]["worker_spawns"])
            peak = lambda x: max(e["peak_mib"] for e in fits[key(x)])
            print(f"| {workers} | {b:.2f}{spread(times['buggy'])} | {f:.2f}{spread(times['fixed'])} | "
                  f"{v:.2f}{spread(times['vanilla'])} | {b / f:.2f}× | {f / v:.3f} | "
                  f"{spawns('buggy')} / {spawns('fixed')} | {peak('buggy'):.0f} / {peak('fixed'):.0f} |")
            targets.append((f"fixed / vanilla ≤ 1.03, {start}, {workers} workers", f"{f / v:.3f}", f / v <= 1.03))
            if workers == 4:
                floor = 1.6 if start == "fork" else 2.5 if start == "spawn" else None
                if floor:
                    targets.append((f"buggy / fixed ≥ {floor}×, {start}, 4 workers", f"{b / f:.2f}×", b / f >= floor))
            if compute_epoch and workers >= 2:
                later = median([e["epoch_s_after_first"] for e in fits[key("fixed")]])
                ratio = later / compute_epoch
                targets.append((f"fixed epoch (epochs ≥ 2) / compute-only ≤ 1.10, {start}, {workers} workers",
                                f"{ratio:.3f}", ratio <= 1.10))
        print()
    if compute_epoch:
        print(f"Compute only (the same model steps on batches already in memory): {compute_epoch:.3f} s "
              "per epoch.\n")

    if not startup:
        return
    print("### Cost model of the buggy overhead\n")
    print("Per epoch after the first, 1.5.0 re-spawns the W train workers (each starts and loads the "
          "60000-image split) and, for the validation, the W val workers (each loads the 10000-image "
          "split). With C cores the W start-ups share min(W, C) of them, so the predicted overhead is")
    print()
    print("    (W / min(W, C)) × (start-up(train, 1 worker) + start-up(t10k, 1 worker))")
    print()
    print(f"with start-ups from BM_WorkerStartup (one worker alone) and C = {cores}. The second model "
          "uses what BM_WorkerStartup measures with W workers at once: their start-up, which includes "
          "their contention for the cores, memory bandwidth and the page allocator, plus the shutdown "
          "of the W workers they replace. The measured overhead is buggy's mean epoch time minus "
          "fixed's, over epochs 2 to 5 (BM_Fit's epoch_s_after_first).\n")
    print("| start | workers | predicted, 1-worker start-ups (s) | predicted, W at once with shutdown (s) | measured (s) | measured / second model |")
    print("|---|---|---|---|---|---|")
    for start_id, start in STARTS.items():
        for workers in (1, 2, 4):
            b, f = fits.get(("buggy", workers, start)), fits.get(("fixed", workers, start))
            alone = [startup.get((start_id, d, 1, 1)) for d in (0, 2)]
            together = [startup.get((start_id, d, workers, 1)) for d in (0, 2)]
            if not b or not f or None in alone:
                continue
            naive = workers / min(workers, cores) * sum(up for up, _ in alone)
            measured = median([e["epoch_s_after_first"] for e in b]) - median([e["epoch_s_after_first"] for e in f])
            concurrent = sum(up + down for up, down in together) if None not in together else float("nan")
            print(f"| {start} | {workers} | {naive:.3f} | {concurrent:.3f} | {measured:.3f} | "
                  f"{measured / concurrent:.2f} |")
            if workers == 4 and concurrent == concurrent:
                targets.append((f"buggy overhead within 25% of the cost model, {start}, 4 workers",
                                f"{measured / concurrent:.2f}", abs(measured / concurrent - 1) <= 0.25))
    print()


def sweep_table(runs):
    if not runs:
        return
    print("### `dlreset run` sweep: total seconds for the whole fit\n")
    grouped = {}
    for run in runs:
        key = (run["start_method"] if run["workers"] else "–", run["workers"], run["variant"])
        grouped.setdefault(key, []).append(run)
    variants = sorted({k[2] for k in grouped}, key=lambda v: list(VARIANTS.values()).index(v))
    print("| start | workers | " + " | ".join(variants) + " | train spawns / loads per variant |")
    print("|---|---|" + "---|" * len(variants) + "---|")
    for start, workers in sorted({(k[0], k[1]) for k in grouped}, key=lambda k: (k[0] != "–", k[0], k[1])):
        cells, counts = [], []
        for variant in variants:
            group = grouped.get((start, workers, variant), [])
            times = [r["total_s"] for r in group]
            cells.append(f"{median(times):.2f}{spread(times)}" if times else "–")
            if group:
                counts.append(f"{group[0]['train']['worker_spawns']}/{group[0]['train']['dataset_loads']}")
        print(f"| {start} | {workers} | " + " | ".join(cells) + " | " + ", ".join(counts) + " |")
    print()


def paired_table(runs, targets):
    """fixed / vanilla from runs of one repetition, paired: the two ran next to each other, so a
    drift of the machine moves both, and the spread of the pairs says what the median is worth."""
    pairs = {}
    for run in runs:
        if run["variant"] not in ("fixed", "vanilla") or "sweep_repetition" not in run or not run["workers"]:
            continue
        key = (run["start_method"], run["workers"])
        repetition = (run["sweep_file"], run["sweep_repetition"])
        pairs.setdefault(key, {}).setdefault(repetition, {})[run["variant"]] = run["total_s"]
    rows = []
    for (start, workers), by_rep in sorted(pairs.items()):
        ratios = [r["fixed"] / r["vanilla"] for r in by_rep.values() if "fixed" in r and "vanilla" in r]
        if ratios:
            rows.append((start, workers, ratios))
    if not rows:
        return
    print("### fixed / vanilla, paired by repetition\n")
    print("| start | workers | pairs | median | range | pairs above 1.03 |")
    print("|---|---|---|---|---|---|")
    for start, workers, ratios in rows:
        above = sum(1 for r in ratios if r > 1.03)
        print(f"| {start} | {workers} | {len(ratios)} | {median(ratios):.3f} | {min(ratios):.3f}–{max(ratios):.3f} | "
              f"{above} |")
        if len(ratios) >= 6:
            targets.append((f"fixed / vanilla ≤ 1.03, median of {len(ratios)} paired repetitions, {start}, "
                            f"{workers} workers", f"{median(ratios):.3f}", median(ratios) <= 1.03))
    print()


def later_epochs_s(run):
    """Mean seconds of the epochs after the first: the ones where 1.5.0 restarts its workers."""
    later = run["epoch_s"][1:]
    return sum(later) / len(later) if later else float("nan")


def ranks_tables(runs, startup, cores, targets):
    """buggy / fixed at ranks × W, the cost model extended to ranks × W start-ups, and the model
    at one node of 8 × 8 on 32 cores and at 4 such nodes."""
    if not runs:
        return
    by_rep = {}
    for run in runs:
        key = (int(run.get("world_size", 1)), run["workers"], run["start_method"])
        by_rep.setdefault(key, {}).setdefault((run["sweep_file"], run["sweep_repetition"]), {})[run["variant"]] = run
    print("### Across ranks: buggy / fixed, whole fit\n")
    print("Rank 0's whole fit (the ranks step together: they all-reduce every step), median and range "
          "over repetitions; buggy / fixed paired by repetition (the two ran next to each other); worker "
          "spawns summed over the ranks.\n")
    print("| start | ranks | workers | ranks × W | buggy (s) | fixed (s) | buggy / fixed | spawns buggy / fixed |")
    print("|---|---|---|---|---|---|---|---|")
    measured = {}
    for (ranks, workers, start), reps in sorted(by_rep.items(), key=lambda kv: (kv[0][2], kv[0][0] * kv[0][1], kv[0][0])):
        pairs = [r for r in reps.values() if "buggy" in r and "fixed" in r]
        if not pairs or not workers:
            continue
        b = [p["buggy"]["total_s"] for p in pairs]
        f = [p["fixed"]["total_s"] for p in pairs]
        ratios = [x / y for x, y in zip(b, f)]
        counts = lambda run: (run["totals"] if ranks > 1 else run)
        spawns = lambda v: sum(counts(pairs[0][v])[loader]["worker_spawns"] for loader in ("train", "val"))
        print(f"| {start} | {ranks} | {workers} | {ranks * workers} | {median(b):.2f}{spread(b)} | "
              f"{median(f):.2f}{spread(f)} | {median(ratios):.2f}×{spread(ratios)} | "
              f"{spawns('buggy')} / {spawns('fixed')} |")
        overhead = median([later_epochs_s(p["buggy"]) - later_epochs_s(p["fixed"]) for p in pairs])
        measured[(start, ranks, workers)] = overhead
    print()
    start_ids = {name: code for code, name in STARTS.items()}
    alone = {}
    for start in sorted({s for s, _, _ in measured}):
        ups = [startup.get((start_ids[start], d, 1, 1)) for d in (0, 2)]
        if None not in ups:
            alone[start] = sum(up for up, _ in ups)
    if not alone:
        return
    print("### Cost model across ranks\n")
    print("Each rank re-spawns its W train and W val workers at every epoch after the first, at the "
          "same moment as every other rank, so ranks × W start-ups of each split share the C cores:\n")
    print("    (R·W / min(R·W, C)) × (start-up(train, 1 worker) + start-up(t10k, 1 worker))\n")
    print("per epoch: the first model of the single-process table with W replaced by R·W. The second "
          "takes what BM_WorkerStartup measures with R·W workers starting at once in one process plus "
          "their shutdown, where R·W is one of its counts. The third takes its rows with R ranks, each "
          "a process starting its own W at once, timed to the slowest rank, as the job's next step "
          "waits for it. Measured: buggy's mean epoch time after the first minus "
          f"fixed's, median over the paired repetitions. C = {cores}.\n")
    print("| start | ranks | workers | first model (s) | second model (s) | third model (s) | measured (s) | "
          "measured / first | measured / second | measured / third |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    nan = float("nan")

    def start_ups(start, workers, ranks):
        """Train + t10k start-ups with their shutdowns, from BM_WorkerStartup, or NaN."""
        rows = [startup.get((start_ids[start], d, workers, ranks)) for d in (0, 2)]
        return sum(up + down for up, down in rows) if None not in rows else nan

    def ratio(overhead, model):
        return f"{overhead / model:.2f}" if model == model else "–"

    for (start, ranks, workers), overhead in sorted(measured.items(), key=lambda kv: (kv[0][0], kv[0][1] * kv[0][2], kv[0][1])):
        if start not in alone:
            continue
        n = ranks * workers
        naive = n / min(n, cores) * alone[start]
        concurrent = start_ups(start, n, 1)
        per_rank = start_ups(start, workers, ranks)
        print(f"| {start} | {ranks} | {workers} | {naive:.3f} | {concurrent:.3f} | {per_rank:.3f} | "
              f"{overhead:.3f} | {overhead / naive:.2f} | {ratio(overhead, concurrent)} | "
              f"{ratio(overhead, per_rank)} |")
        best = next((m for m in (per_rank, concurrent) if m == m), naive)
        targets.append((f"buggy overhead per epoch within 25% of the ranks × W model, {start}, {ranks} ranks × "
                        f"{workers} workers", f"{overhead / best:.2f}", abs(overhead / best - 1) <= 0.25))
    print()
    start = "fork" if "fork" in alone else sorted(alone)[0]
    per_worker = alone[start]
    print(f"### Model, not measured: 8 ranks × 8 workers per node on 32 cores ({start})\n")
    print(f"From the first model with the measured start-up of one {start} worker (train + t10k: "
          f"{per_worker:.3f} s on this machine). Nodes start their workers independently, so more "
          "nodes add start-ups and CPU time but not wall time per epoch.\n")
    print("| job | worker start-ups per epoch | CPU-seconds of start-up per epoch | wall seconds added per epoch |")
    print("|---|---|---|---|")
    for nodes in (1, 4):
        n = 8 * 8
        starts = 2 * n * nodes  # train and val workers
        cpu = n * nodes * per_worker
        wall = n / min(n, 32) * per_worker
        print(f"| {nodes} node{'s' if nodes > 1 else ''} × 8 ranks × 8 workers (model) | {starts} | {cpu:.1f} | {wall:.2f} |")
    print()


def main():
    args = parse_args()
    bench, runs = load(args.inputs)
    targets = []
    loader_tables(bench, targets)
    alternating_table(bench, targets)
    batch_size_table(bench)
    startup = startup_table(bench)
    watched_table(bench, targets)
    fit_tables(bench, startup, args.cores, targets)
    single = [run for run in runs if not run["ranks_sweep"]]
    sweep_table(single)
    paired_table(single, targets)
    ranks_tables([run for run in runs if run["ranks_sweep"]], startup, args.cores, targets)
    if targets:
        print("### Targets\n")
        print("| target | measured | |")
        print("|---|---|---|")
        for name, value, ok in targets:
            print(f"| {name} | {value} | {verdict(ok)} |")
        print()


if __name__ == "__main__":
    main()
