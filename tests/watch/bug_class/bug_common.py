"""What the programs of this folder share: their command line and a small data set.

Each program is a public bug of the class, reduced to plain torch: it runs as the bug shipped, and
with --fixed as it was fixed. Two workers started by fork, as in the reports.
"""

import argparse
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    """Sample i is i squared, so a sum tells whether every batch arrived."""

    def __init__(self, size=256):
        self.size = size

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return torch.tensor(float(index) ** 2)


def parse_args(doc, fixed_help, cases=(), **counts):
    """The program's flags: --fixed; with `cases`, --case, one of them (the first by default);
    and one integer flag a keyword (resume_epoch=2 gives --resume-epoch, 2 by default). Torch
    keeps to one thread, so that the workers are the load."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fixed", action="store_true", help=fixed_help)
    if cases:
        parser.add_argument("--case", choices=cases, default=cases[0], help="which form of the bug to run")
    for name, default in counts.items():
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=default)
    args = parser.parse_args()
    torch.set_num_threads(1)
    return args


def wait_for_prefetch(iterator, batches, timeout_s=30.0):
    """What a fit does between making an iterator and reading it (moving the model, a sanity
    check) takes long enough for the workers to make what they were asked for: wait until
    `batches` of them wait in the iterator's result queue, so that what a reset throws away is
    the whole prefetch, whatever the machine's load."""
    deadline = time.monotonic() + timeout_s
    while iterator._worker_result_queue.qsize() < batches and time.monotonic() < deadline:
        time.sleep(0.01)


def worker_loader(dataset, **options):
    """A DataLoader with two workers started by fork; options are the DataLoader's own."""
    return DataLoader(dataset, num_workers=2, multiprocessing_context="fork", **options)
