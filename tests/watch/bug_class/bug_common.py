"""What the programs of this folder share: their command line and a small data set.

Each program is a public bug of the class, reduced to plain torch: it runs as the bug shipped, and
with --fixed as it was fixed. Two workers started by fork, as in the reports.
"""

import argparse

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


def parse_args(doc, fixed_help, **counts):
    """The program's flags: --fixed, and one integer flag a keyword (resume_epoch=2 gives
    --resume-epoch, 2 by default). Torch keeps to one thread, so that the workers are the load."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fixed", action="store_true", help=fixed_help)
    for name, default in counts.items():
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=default)
    args = parser.parse_args()
    torch.set_num_threads(1)
    return args


def worker_loader(dataset, **options):
    """A DataLoader with two workers started by fork; options are the DataLoader's own."""
    return DataLoader(dataset, num_workers=2, multiprocessing_context="fork", **options)
