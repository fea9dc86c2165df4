#!/usr/bin/python3
"""Lightning #10389 (1.5.0): persistent workers shut down and restarted at every epoch start.

Lightning 1.5.0's DataFetcher.reset(), which __iter__ runs at the start of every epoch, shut the
loader's workers down and set its `_iterator` to None, so the next iter() started new workers,
each of which loaded its data set again. 1.5.1 (PR #10434) moved those lines into teardown().

    lightning_10389.py            the 1.5.0 fetcher
    lightning_10389.py --fixed    the 1.5.1 fetcher
"""

import torch
from torch.utils.data import Dataset
from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter

from bug_common import parse_args, worker_loader


class Squares(Dataset):
    """A map-style data set that loads itself lazily in each worker, as one read from disk."""

    def __init__(self, size=256):
        self.size = size
        self.values = None

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if self.values is None:
            self.values = torch.arange(self.size, dtype=torch.float32) ** 2
        return self.values[index]


def _shutdown_workers_and_reset_iterator(dataloader):
    """trainer/supporters.py in 1.5.0, as it was."""
    if hasattr(dataloader, "_iterator") and isinstance(dataloader._iterator, _MultiProcessingDataLoaderIter):
        dataloader._iterator._shutdown_workers()
    dataloader._iterator = None


class DataFetcher:
    """utilities/fetching.py: __iter__ calls reset(), then iter() on the loader."""

    def __init__(self, dataloader, fixed):
        self.dataloader = dataloader
        self.fixed = fixed

    def __iter__(self):
        self.reset()
        self.dataloader_iter = iter(self.dataloader)
        return self.dataloader_iter

    def reset(self):
        self.batches = []
        self.fetched = 0
        self.done = False
        if not self.fixed:  # 1.5.0: reset() also shuts the workers down, at every epoch
            _shutdown_workers_and_reset_iterator(self.dataloader)

    def teardown(self):
        if self.fixed:  # 1.5.1: only here, once, at the end of the fit
            _shutdown_workers_and_reset_iterator(self.dataloader)


def main():
    args = parse_args(__doc__, "the 1.5.1 fetcher", epochs=3)
    loader = worker_loader(Squares(), batch_size=32, persistent_workers=True)
    total = 0.0
    for epoch in range(args.epochs):
        print(f"Epoch {epoch}", flush=True)
        fetcher = DataFetcher(loader, args.fixed)  # FitLoop.advance makes a new one every epoch
        for batch in fetcher:
            total += float(batch.sum())
        fetcher.teardown() if epoch == args.epochs - 1 else None
    print(f"sum {total:.0f}")


if __name__ == "__main__":
    main()
