"""What the programs of this folder share: the bug class's data set and loader with two fork
workers (tests/watch/bug_class/bug_common.py), and the way Lightning 2.x reads a sized loader: by
its length, never to exhaustion.

Each program reproduces one thing real Lightning 2.x does by default, reduced to plain torch, so
that `dlreset watch` can be held to what it says of it.
"""

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bug_class"))
from bug_common import Squares, worker_loader as bug_class_loader  # noqa: E402

__all__ = ["Squares", "read_by_length", "worker_loader"]


def worker_loader(dataset, **options):
    """The bug class's loader (two workers started by fork), with torch kept to one thread, so
    that the workers are the load."""
    torch.set_num_threads(1)
    return bug_class_loader(dataset, **options)


def read_by_length(iterator, loader):
    """Lightning 2.x's fetchers stop after len(loader) batches: the pass never raises
    StopIteration, so torch does not shut its workers down until the iterator is collected."""
    total = 0.0
    for _ in range(len(loader)):
        total += float(next(iterator).sum())
    return total
