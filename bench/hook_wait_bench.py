#!/usr/bin/python3
"""What the hook's clock on the input wait adds to a next() call, against no clock, in one process.

The hook's two descriptors on torch's _BaseDataLoaderIter (`__next__` and `_num_yielded`, from
watch/hook/python/_dlreset_hook/waits.py) are put on the class and taken off again between
blocks of next() calls, in turns (plain, hooked, hooked, plain: ABBA), so that both sides share
the process, its caches and the machine's moment. The hook's channel sends to a socket this
script reads, as the watcher's would: every hooked block ends its pass, and its event is counted.

- per call: two iterators derived from _BaseDataLoaderIter whose _next_data returns at once:
  `minimal`, whose __next__ does what torch 1.13's does but for its profiler scope
  (record_function, tens of microseconds here, whose spread would hide the hook's), with the
  hook's `__next__` property put on it as on torch's class; and `torch_next`, torch's own
  __next__. A block is timed by the thread's CPU clock (time.thread_time()), so that the time
  other processes of a shared machine take from it is not counted. The figure is the median of
  the paired differences (hooked minus plain, a repetition), with a bootstrap 95% interval of that
  median.
- with --before-hook-dir, a second copy of the hook (another commit's, say) is loaded beside the
  first, as a package of its own, and the per-call blocks run in turns plain, before, after,
  after, before, plain: the figure is after minus before, the median of the paired differences,
  with its interval, from one run.
- a blocked wait: what the clock's slow path (blocking.py: a wait of 2^10 us or more, read for
  head-of-line blocking) adds to a call. The `_num_yielded` setter is called on a
  _MultiProcessingDataLoaderIter made without __init__, holding what torch 1.13's holds at that
  moment with 4 workers (7 later tasks, 3 of them received out of order), its call noted 2 ms
  before (slow) or just before (fast), in turns; the figure is slow minus fast a call.
- the loop: a persistent loader with 2 fork workers, its epochs in turns plain and hooked, timed
  by the wall clock; the figure is hooked / plain batches a second, the median of the paired
  ratios (an ABBA group each) with its interval.

    bench/hook_wait_bench.py --hook-dir watch/hook/python [--before-hook-dir DIR]
        [--repetitions R] [--calls N] [--epochs E] [--json FILE]

Run it without the hook (not under `dlreset watch`): it puts the hook's descriptors on itself.
"""

import argparse
import importlib
import itertools
import json
import os
import random
import socket
import statistics
import sys
import tempfile
import time


def interval(values, statistic, resamples=2000, seed=1):
    """A bootstrap 95% interval of `statistic` over `values`."""
    draw = random.Random(seed)
    found = sorted(statistic([draw.choice(values) for _ in values]) for _ in range(resamples))
    return found[int(0.025 * resamples)], found[int(0.975 * resamples) - 1]


class Events:
    """The watcher's end of the hook's socket: counts the pass_waits events."""

    def __init__(self, directory):
        self.path = os.path.join(directory, "events")
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(self.path)
        self.socket.setblocking(False)
        self.pass_waits = 0

    def drain(self):
        while True:
            try:
                event = json.loads(self.socket.recv(1 << 20))
            except BlockingIOError:
                return
            self.pass_waits += event.get("kind") == "pass_waits"


def load_hook(directory, events):
    """The hook's package in `directory`, loaded as a copy of its own (none of it stays in
    sys.modules, so that another copy can be loaded beside it), its channel open on `events`:
    its waits module."""
    def forget():
        for name in [name for name in sys.modules if name.split(".")[0] == "_dlreset_hook"]:
            del sys.modules[name]

    forget()
    sys.path.insert(0, os.path.abspath(directory))
    try:
        waits = importlib.import_module("_dlreset_hook.waits")
        hook = importlib.import_module("_dlreset_hook.state").HOOK
    finally:
        sys.path.pop(0)
        forget()
    if not hook.start(events.path):
        sys.exit("hook_wait_bench.py: the hook's channel did not open on %s." % events.path)
    return waits


def descriptors(waits, original_next, minimal_next, multi):
    """A copy's `__next__` properties (torch's, Minimal's) and its `_num_yielded` descriptor."""
    try:
        yielded = waits.YieldedDescriptor(multi)
    except TypeError:
        yielded = waits.YieldedDescriptor()  # a hook from before the head-of-line count
    return waits.next_property(original_next), waits.next_property(minimal_next), yielded


def per_blocked_wait(waits, yielded, multi, calls):
    """Thread CPU us a `_num_yielded` assignment takes after a slow call and after a fast one,
    ABBA, on an iterator that holds later batches of other workers; and the blocked waits the
    copy counted of the slow ones (0 where it has no slow path)."""
    iterator = object.__new__(multi)
    # torch 1.13's state as __next__ assigns `_num_yielded += 1` for task 8 (worker 0 of 4):
    # tasks 9 to 15 asked of the workers, 9 to 11 received out of order. _shutdown: its __del__
    # has nothing to stop.
    iterator.__dict__.update(_shutdown=True, _num_workers=4, _workers_status=[True] * 4, _rcvd_idx=9, _send_idx=16,
                             _task_info={task: (task % 4, None) if task < 12 else (task % 4,)
                                         for task in range(9, 16)})
    setter = yielded.__set__
    setter(iterator, 0)  # the pass begins
    current = waits._PASSES[id(iterator)]
    current.batches = 1  # the first batch's wait is not read
    clock = time.monotonic
    sides = {False: [], True: []}
    count = 2
    for slow in (False, True, True, False):
        before = 0.002 if slow else 0.0
        start = time.thread_time()
        for _ in itertools.repeat(None, calls):
            current.called = clock() - before
            setter(iterator, count)
            count += 1
        sides[slow].append(1e6 * (time.thread_time() - start) / calls)
    blocked = getattr(current, "blocked", 0)
    del iterator
    return statistics.fmean(sides[False]), statistics.fmean(sides[True]), blocked


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hook-dir", required=True, help="the folder of the hook's sitecustomize.py")
    parser.add_argument("--before-hook-dir", help="another copy's folder, timed against the first in turns")
    parser.add_argument("--repetitions", type=int, default=200, help="ABBA groups of blocks (default 200)")
    parser.add_argument("--calls", type=int, default=2000, help="next() calls a block (default 2000)")
    parser.add_argument("--epochs", type=int, default=24, help="loop epochs, a multiple of 4 (default 24; 0: none)")
    parser.add_argument("--json", help="write the figures to this file too")
    args = parser.parse_args()

    import torch
    from torch.utils.data import DataLoader
    from torch.utils.data import dataloader

    base = dataloader._BaseDataLoaderIter
    original_next = base.__dict__["__next__"]
    if isinstance(original_next, property) or "_num_yielded" in base.__dict__:
        sys.exit("hook_wait_bench.py: the hook is on already; run it without `dlreset watch` and its PYTHONPATH.")
    multi = dataloader._MultiProcessingDataLoaderIter

    directory = tempfile.TemporaryDirectory()
    events = Events(directory.name)

    class TorchNext(base):
        """torch's own __next__ around a _next_data that returns at once."""

        def __init__(self):
            self._sampler_iter = itertools.repeat(0)
            self._dataset_kind = dataloader._DatasetKind.Map
            self._IterableDataset_len_called = None
            self._num_workers = 0
            self._profile_name = "enumerate(DataLoader)#Minimal.__next__"
            self._num_yielded = 0

        def _next_data(self):
            return 0

    class Minimal(TorchNext):
        """torch 1.13's __next__ without its profiler scope."""

        def __next__(self):
            if self._sampler_iter is None:
                self._reset()
            data = self._next_data()
            self._num_yielded += 1
            if self._dataset_kind == dataloader._DatasetKind.Iterable and self._IterableDataset_len_called is not None:
                pass
            return data

    minimal_next = Minimal.__dict__["__next__"]
    copies = {"after": load_hook(args.hook_dir, events)}
    if args.before_hook_dir:
        copies["before"] = load_hook(args.before_hook_dir, events)
    sides = {name: descriptors(waits, original_next, minimal_next, multi) for name, waits in copies.items()}

    def hook(on):
        """Puts a copy's descriptors on ("after" where `on` is True), or takes them off."""
        side = "after" if on is True else on
        if side:
            base.__next__, Minimal.__next__, base._num_yielded = sides[side]
        else:
            base.__next__ = original_next
            Minimal.__next__ = minimal_next
            if "_num_yielded" in base.__dict__:
                del base._num_yielded

    def per_call(make):
        iterator = make()
        step = next
        calls = itertools.repeat(None, args.calls)
        start = time.thread_time()
        for _ in calls:
            step(iterator)
        seconds = time.thread_time() - start
        del iterator
        return 1e6 * seconds / args.calls

    results = {"python": sys.version.split()[0], "torch": torch.__version__, "calls": args.calls,
               "repetitions": args.repetitions}
    hooked_blocks = 0
    order = [False, "before", "after", "after", "before", False] if "before" in sides else [False, True, True, False]
    for name, make in (("minimal", Minimal), ("torch_next", TorchNext)):
        means = {side: [] for side in (False, "after", "before")}
        for _ in range(args.repetitions):
            block = {side: [] for side in means}
            for side in order:
                hook(side)
                block["after" if side is True else side].append(per_call(make))
                hooked_blocks += side is not False
            hook(False)
            events.drain()
            for side, values in block.items():
                if values:
                    means[side].append(statistics.fmean(values))
        differences = [hooked - plain for hooked, plain in zip(means["after"], means[False])]
        low, high = interval(differences, statistics.median)
        results[name] = {"plain_us": statistics.median(means[False]), "hooked_us": statistics.median(means["after"]),
                         "added_us": statistics.median(differences), "added_us_95": [low, high],
                         "added_us_quartiles": statistics.quantiles(differences, n=4)[::2]}
        print("%-15s next(): plain %.3f us, hooked %.3f us; added a call %.3f us (95%% interval %.3f to %.3f; "
              "quartiles of %d pairs %.3f to %.3f)" % (
                  name, results[name]["plain_us"], results[name]["hooked_us"], results[name]["added_us"], low, high,
                  len(differences), *results[name]["added_us_quartiles"]))
        if means["before"]:
            before = [hooked - plain for hooked, plain in zip(means["before"], means[False])]
            change = [after - earlier for after, earlier in zip(means["after"], means["before"])]
            low, high = interval(change, statistics.median)
            results[name].update({"before_us": statistics.median(means["before"]),
                                  "before_added_us": statistics.median(before),
                                  "after_minus_before_us": statistics.median(change),
                                  "after_minus_before_us_95": [low, high]})
            print("%-15s before: hooked %.3f us, added a call %.3f us; after minus before %.3f us a call "
                  "(95%% interval %.3f to %.3f)" % (name, results[name]["before_us"], results[name]["before_added_us"],
                                                     results[name]["after_minus_before_us"], low, high))

    for side, waits in copies.items():
        fast, slow, counted = [], [], 0
        for _ in range(args.repetitions):
            fast_us, slow_us, blocked = per_blocked_wait(waits, sides[side][2], multi, args.calls)
            fast.append(fast_us)
            slow.append(slow_us)
            counted += blocked
            hooked_blocks += 1
            events.drain()  # the socket's queue holds a few datagrams only
        differences = [after - earlier for after, earlier in zip(slow, fast)]
        low, high = interval(differences, statistics.median)
        results["blocked_wait_" + side] = {
            "fast_us": statistics.median(fast), "slow_us": statistics.median(slow),
            "added_us": statistics.median(differences), "added_us_95": [low, high],
            "slow_calls": 2 * args.calls * args.repetitions, "blocked_counted": counted}
        # A fast call the machine held up past 2^10 us between its two clock reads counts too.
        print("%-15s a blocked wait (%s): _num_yielded set after a fast call %.3f us, after a slow one %.3f us: "
              "%.3f us more (95%% interval %.3f to %.3f); counted blocked %d, of %d slow calls" % (
                  "blocked_wait", side, statistics.median(fast), statistics.median(slow),
                  statistics.median(differences), low, high, counted, 2 * args.calls * args.repetitions))

    if args.epochs:
        loader = DataLoader(torch.arange(20000, dtype=torch.float32).reshape(-1, 1), batch_size=64, num_workers=2,
                            persistent_workers=True, multiprocessing_context="fork")
        ratios, rates = [], {False: [], True: []}
        sum(1 for _ in loader)  # the workers start: not a pass of either side
        for group in range(max(1, args.epochs // 4)):
            seconds = {False: 0.0, True: 0.0}
            for on in (False, True, True, False):
                hook(on)
                start = time.perf_counter()
                batches = sum(1 for _ in loader)
                elapsed = time.perf_counter() - start
                seconds[on] += elapsed
                rates[on].append(batches / elapsed)
                hooked_blocks += on
            hook(False)
            events.drain()
            ratios.append(seconds[False] / seconds[True])  # hooked / plain batches a second
        del loader
        low, high = interval(ratios, statistics.median)
        results["loop"] = {"batches_per_epoch": len(range(0, 20000, 64)), "plain_batches_per_s":
                           statistics.median(rates[False]), "hooked_batches_per_s": statistics.median(rates[True]),
                           "hooked_over_plain": statistics.median(ratios), "hooked_over_plain_95": [low, high]}
        print("loop (2 fork workers, %d epochs): plain %.1f, hooked %.1f batches/s; hooked / plain %.4f "
              "(95%% interval %.4f to %.4f%s)" % (
                  len(ratios) * 4, results["loop"]["plain_batches_per_s"], results["loop"]["hooked_batches_per_s"],
                  results["loop"]["hooked_over_plain"], low, high,
                  "; wider than 1%: this run cannot resolve a 1% cost" if high - low > 0.01 else ""))

    time.sleep(0.05)
    events.drain()
    # Every hooked block's pass was sent: a per-call block's when its iterator was freed, a hooked
    # epoch's at the next hooked epoch's reset, the last one's when the loader was let go.
    results["hooked_blocks"] = hooked_blocks
    results["pass_waits_events"] = events.pass_waits
    print("hooked blocks %d, pass_waits events received %d" % (hooked_blocks, events.pass_waits))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)
    return 0 if events.pass_waits == hooked_blocks else 1


if __name__ == "__main__":
    sys.exit(main())
