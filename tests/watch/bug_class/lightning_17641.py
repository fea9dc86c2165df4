#!/usr/bin/python3
"""Lightning #17641 (2.0.0-2.0.2): every validation loader's workers start at once.

With several validation loaders, Lightning 2.0's CombinedLoader in "sequential" mode called
iter() on all of them before reading the first, so every loader started its workers and filled
its prefetch queue at once: the peak was the sum of their workers, not the largest. PR #17639
made each loader's iterator only when its turn came.

    lightning_17641.py            iterators made all at once (2.0.0)
    lightning_17641.py --fixed    each iterator made when its loader's turn comes
"""

import argparse

import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __init__(self, size=128):
        self.size = size

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return torch.tensor(float(index) ** 2)


class SequentialCombinedLoader:
    """trainer/supporters.py's CombinedLoader in mode="sequential", reduced to its iteration."""

    def __init__(self, loaders, fixed):
        self.loaders = loaders
        self.fixed = fixed

    def __iter__(self):
        if self.fixed:  # PR #17639: one loader's iterator at a time
            for index, loader in enumerate(self.loaders):
                for batch in loader:
                    yield batch, index
            return
        iterators = [iter(loader) for loader in self.loaders]  # 2.0.0: all of them, now
        for index, iterator in enumerate(iterators):
            for batch in iterator:
                yield batch, index


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fixed", action="store_true", help="make each iterator in its turn")
    parser.add_argument("--loaders", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    loaders = [DataLoader(Squares(), batch_size=32, num_workers=2, multiprocessing_context="fork")
               for _ in range(args.loaders)]
    print("Epoch 0 validation", flush=True)
    totals = [0.0] * args.loaders
    for batch, index in SequentialCombinedLoader(loaders, args.fixed):
        totals[index] += float(batch.sum())
    print("sums", " ".join(f"{total:.0f}" for total in totals))


if __name__ == "__main__":
    main()
