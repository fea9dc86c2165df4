#!/usr/bin/python3
"""A torch loop that waits in line, for dlreset watch's head-of-line blocking tests.

Two fork workers; torch deals task i to worker i % 2, and the loop works no time between two
batches. The batches finish in an order the workers keep between them through a shared counter,
not by the clock, so that a busy machine changes the times and never the order:

- by default (skewed), 1, 0, 3, 2, 5, 4, ...: worker 1's batch 2k+1 finishes --fetch-ms / 4 after
  worker 0's batch 2k-2, and worker 0's batch 2k --fetch-ms after that. The loop waits for each
  even batch while the next odd one, received out of order, is ready: every even batch but a
  pass's first is a head-of-line blocked wait for worker 0, with 1 later batch ready, --batches / 2
  - 1 of them a pass. The order is the order the workers' __getitem__ returns; each then puts its
  batch on the result queue, and the gaps keep those puts in the same order.
- --balanced: 0, 1, 2, 3, ...: each batch finishes --fetch-ms / 2 after the one before it, so the
  batches arrive in order: the loop waits about as long, and no later batch is ever ready first.

The loader keeps its workers (persistent_workers=True) over --epochs passes. Prints each pass's
batches, the same watched or not.
"""

import argparse
import multiprocessing
import sys
import time

from torch.utils.data import DataLoader, Dataset


POLL_S = 0.0005  # how often a worker looks whether its batch's turn has come


class InLine(Dataset):
    """One batch an index (the loader runs with batch_size=None). `finished` counts the batches
    finished since the start, over every pass: batch i of a pass finishes as the turn-th of its
    pass, once `finished` % batches says that turn has come, `delay_s` after it came."""

    def __init__(self, batches, fetch_ms, balanced):
        self.batches = batches
        self.fetch_s = fetch_ms / 1000.0
        self.balanced = balanced
        self.finished = multiprocessing.get_context("fork").Value("l", 0)

    def __len__(self):
        return self.batches

    def turn(self, index):
        if self.balanced:
            return index, self.fetch_s / 2
        if index % 2 == 0:
            return index + 1, self.fetch_s  # after worker 1's next batch
        return index - 1, self.fetch_s / 4

    def __getitem__(self, index):
        turn, delay_s = self.turn(index)
        while self.finished.value % self.batches != turn:
            time.sleep(POLL_S)
        time.sleep(delay_s)
        with self.finished.get_lock():
            self.finished.value += 1
        return index


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=16, help="batches a pass, even (default 16)")
    parser.add_argument("--fetch-ms", type=float, default=100.0,
                        help="sets the gaps between finishes: a busy machine must hold a process up "
                        "that long to change a count (default 100)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--balanced", action="store_true")
    args = parser.parse_args(argv)
    if args.batches < 2 or args.batches % 2:
        parser.error("--batches must be even: worker 0's batch 2k waits for worker 1's batch 2k+1")

    loader = DataLoader(InLine(args.batches, args.fetch_ms, args.balanced), batch_size=None, num_workers=2,
                        persistent_workers=True, multiprocessing_context="fork")
    for epoch in range(args.epochs):
        print(f"Epoch {epoch}: {[batch for batch in loader]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
