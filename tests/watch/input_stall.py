#!/usr/bin/python3
"""A torch loop whose input stalls by a known amount, for dlreset watch's input-wait tests.

Each batch costs a worker --fetch-ms, and each step of the loop --step-ms. With W
workers the loader makes a batch every fetch/W ms, so in the steady state each next() waits
max(0, fetch/W - step) ms and the loop's wait fraction is wait / (wait + step): fetch-ms =
W * (step + wait) sets it. --fetch-ms 0 is the clean twin: the same loop, fed at once.

Both sides keep to their times on average, since a millisecond a step changes the fraction by
up to 4 points: time.sleep() wakes late by a fraction of a millisecond on an idle machine and
by milliseconds where the cores are busy, and the loop spends time of its own on each batch
besides. So each waits until a deadline: the loop's step ends --step-ms after next() returned
its batch, less what its steps so far ran over (it sleeps to a millisecond before the deadline
and spins the rest), and a worker kept busy finishes each batch --fetch-ms after its previous
one's deadline. A late wake is made up, not added up.

The loader keeps its workers (persistent_workers=True), so the passes after the first begin
with the workers kept and the run has no respawn. Prints "Epoch N" at each epoch's start.
"""

import argparse
import sys
import time

from torch.utils.data import DataLoader, Dataset


SPIN_S = 0.001  # the part of a wait spent spinning rather than asleep: more than a sleep's late wake


def wait_until(deadline, spin=True):
    """Returns at `deadline` (time.monotonic()), give or take the clock's read; without `spin`,
    a sleep's late wake after it."""
    left = deadline - time.monotonic()
    if not spin:
        if left > 0:
            time.sleep(left)
        return
    if left > SPIN_S:
        time.sleep(left - SPIN_S)
    while time.monotonic() < deadline:
        pass


class SlowBatches(Dataset):
    """One batch an index (the loader runs with batch_size=None), made in fetch_ms. A worker
    that asks for its next batch within half a batch's time of its last one's deadline (its own
    work between two batches) begins it at that deadline, so that the work does not add up."""

    def __init__(self, batches, fetch_ms):
        self.batches = batches
        self.fetch_ms = fetch_ms
        self.done = 0.0  # when this worker's (this process's copy's) last batch was due

    def __len__(self):
        return self.batches

    def __getitem__(self, index):
        if self.fetch_ms > 0:
            fetch_s = self.fetch_ms / 1000.0
            now = time.monotonic()
            self.done = (self.done if now - self.done < fetch_s / 2 else now) + fetch_s
            # Asleep to the end: a spinning worker would take a core from the loop, and its late
            # wake is made up at the next batch.
            wait_until(self.done, spin=False)
        # A number, not a tensor: a tensor's storage is handed to the loop through shared
        # memory, whose file descriptor next() fetches from a thread of the worker, a round trip
        # that costs next() milliseconds where the cores are busy, even with the batch ready.
        return float(index)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--fetch-ms", type=float, default=0.0)
    parser.add_argument("--step-ms", type=float, default=20.0)
    parser.add_argument("--batches", type=int, default=60)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args(argv)

    loader = DataLoader(SlowBatches(args.batches, args.fetch_ms), batch_size=None, num_workers=args.workers,
                        persistent_workers=args.workers > 0)
    step_s = args.step_ms / 1000.0
    total = 0.0
    owed = 0.0  # how much longer than step-ms the steps so far took in all: taken off the next
    for epoch in range(args.epochs):
        print(f"Epoch {epoch}", flush=True)
        for batch in loader:
            returned = time.monotonic()
            total += batch
            wait_until(returned + step_s - owed)
            owed += time.monotonic() - returned - step_s
    print(f"done: {total:.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
