#!/usr/bin/python3
"""A torch loop whose input stalls by a known amount, for dlreset watch's input-wait tests.

Each batch costs a worker --fetch-ms of sleep, and each step of the loop --step-ms. With W
workers the loader makes a batch every fetch/W ms, so in the steady state each next() waits
max(0, fetch/W - step) ms and the loop's wait fraction is wait / (wait + step): fetch-ms =
W * (step + wait) sets it. --fetch-ms 0 is the clean twin: the same loop, fed at once.

The loader keeps its workers (persistent_workers=True), so the passes after the first begin
with the workers kept and the run has no respawn. Prints "Epoch N" at each epoch's start.
"""

import argparse
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


class SlowBatches(Dataset):
    """One batch an index (the loader runs with batch_size=None), made in fetch_ms."""

    def __init__(self, batches, fetch_ms):
        self.batches = batches
        self.fetch_ms = fetch_ms

    def __len__(self):
        return self.batches

    def __getitem__(self, index):
        if self.fetch_ms > 0:
            time.sleep(self.fetch_ms / 1000.0)
        return torch.full((8,), float(index))


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
    total = 0.0
    for epoch in range(args.epochs):
        print(f"Epoch {epoch}", flush=True)
        for batch in loader:
            total += float(batch.sum())
            time.sleep(args.step_ms / 1000.0)
    print(f"done: {total:.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
