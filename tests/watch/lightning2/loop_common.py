"""What the programs of this folder share: a small data set, a loader with two fork workers,
and the way Lightning 2.x reads a sized loader: by its length, never to exhaustion.

Each program reproduces one thing real Lightning 2.x does by default, reduced to plain torch, so
that `dlreset watch` can be held to what it says of it.
"""

import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    """Sample i is i squared, so a sum tells whether every batch arrived."""

    def __init__(self, size=128):
        self.size = size

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return torch.tensor(float(index) ** 2)


def worker_loader(dataset, **options):
    """A DataLoader with two workers started by fork; options are the DataLoader's own."""
    torch.set_num_threads(1)
    return DataLoader(dataset, num_workers=2, multiprocessing_context="fork", **options)


def read_by_length(iterator, loader):
    """Lightning 2.x's fetchers stop after len(loader) batches: the pass never raises
    StopIteration, so torch does not shut its workers down until the iterator is collected."""
    total = 0.0
    for _ in range(len(loader)):
        total += float(next(iterator).sum())
    return total
