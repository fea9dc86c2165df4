#!/usr/bin/python3
"""A loader that hangs, each way the reports tell, and the same loader slow but never hung: the
watcher must call the first hung and name the frame each process is stuck in, and must leave the
second alone.

    hang.py --case queue           each sample waits on a queue that nothing ever fills: the
                                   workers block for ever (pytorch #96629)
    hang.py --case queue --fixed   the same wait with a timeout, after which the sample is made
    hang.py --case lock            a thread of the program holds a lock while the fork workers
                                   start; each worker then takes it for its first sample and
                                   deadlocks, since the thread that holds it is not in the
                                   worker (pytorch #39570)
    hang.py --case lock --fixed    the same workers started by spawn, which do not inherit the lock
    hang.py --case slow            every sample takes --sample-ms (1000 by default): slow, with
                                   a batch at least every second
    hang.py --case pause           one sample of the first pass takes --pause-ms (4000 by
                                   default), then the pass goes on: a hang that ends by itself

Run under `dlreset watch --hang-timeout`: tests/watch/hang_test.cpp does.
"""

import queue
import threading
import time

import torch
from torch.utils.data import DataLoader, Dataset

from bug_common import parse_args

# The lock the program's own thread holds (the lock case); a spawn worker imports this module
# afresh and gets a lock nobody holds.
LOCK = threading.Lock()


class Blocking(Dataset):
    """Sample i is i, made after the wait each case gives it."""

    def __init__(self, case, fixed, sample_s, pause_s, size=16):
        self.case = case
        self.fixed = fixed
        self.sample_s = sample_s
        self.pause_s = pause_s
        self.size = size
        self.nothing = queue.Queue() if case == "queue" else None

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if self.case == "queue":
            try:
                self.nothing.get(timeout=0.05 if self.fixed else None)
            except queue.Empty:
                pass
        elif self.case == "lock":
            with LOCK:
                pass
        elif self.case == "slow":
            time.sleep(self.sample_s)
        elif self.case == "pause" and index == 2:
            time.sleep(self.pause_s)
        return torch.tensor(float(index))


def hold_lock(held):
    with LOCK:
        held.set()
        time.sleep(3600)


def main():
    args = parse_args(__doc__, "the same loader without the hang", cases=("queue", "lock", "slow", "pause"), epochs=2,
                      sample_ms=1000, pause_ms=4000)
    case = args.case
    if case == "pause":
        args.epochs = 1  # one pause, so one hang
    context = "fork"
    if case == "lock":
        if args.fixed:
            context = "spawn"
        held = threading.Event()
        threading.Thread(target=hold_lock, args=(held,), name="holder", daemon=True).start()
        held.wait()
    dataset = Blocking(case, args.fixed, args.sample_ms / 1000.0, args.pause_ms / 1000.0, size=4 if case == "slow" else 16)
    loader = DataLoader(dataset, batch_size=1, num_workers=2, multiprocessing_context=context)
    total = 0.0
    for epoch in range(args.epochs):
        print(f"Epoch {epoch}", flush=True)
        for batch in loader:
            total += float(batch.sum())
    print(f"sum {total:.0f}", flush=True)


if __name__ == "__main__":
    main()
