#!/usr/bin/python3
"""pytorch #13246: workers whose memory grows as they read a list of Python objects.

A fork worker shares its parent's pages until one of them is written. Reading a Python object
writes it: its reference count goes up while it is used. So each worker that reads a dataset held
as a list of Python objects copies every page it reads from, and its private memory grows towards
the size of the whole list, once a worker. Issue #13246 has been open since 2018; the answer given
there is to hold the data in numpy arrays (or tensors), whose elements are bytes in one buffer, not
objects with counts.

    pytorch_13246.py            2 million strings in a list, read by 2 persistent fork workers in
                                shuffled order, for 3 epochs
    pytorch_13246.py --fixed    the same strings in one numpy array of fixed-width bytes

The first epoch copies; the others keep the workers, with their copies, for a while longer, as a
longer training run would (the watcher samples memory at most once a second, and less often on
big processes). It prints the sum of the lengths it read, "read 6000000 samples of 90000000
bytes", the same for both.
"""

import gc

import numpy
import torch
from torch.utils.data import Dataset

from bug_common import parse_args, worker_loader


class Names(Dataset):
    """Sample i is the length of the i-th name: "sample-00000007" and so on, held as a list of
    str objects, or (fixed) as one numpy array of 15-byte strings."""

    def __init__(self, size, as_array):
        names = [f"sample-{i:08d}" for i in range(size)]
        self.names = numpy.array(names, dtype="S15") if as_array else names
        del names
        # Whatever the parent lets go after the fork would be counted as the workers' own: let
        # go of it now.
        gc.collect()

    def __len__(self):
        return len(self.names)

    def __getitem__(self, index):
        return len(self.names[index])


def main():
    args = parse_args(__doc__, "hold the names in a numpy array", samples=2_000_000, epochs=3)
    dataset = Names(args.samples, as_array=args.fixed)
    # Shuffled, as a training loop reads: each worker reads samples from all over the list, so
    # it touches nearly every page of it.
    loader = worker_loader(dataset, batch_size=2000, shuffle=True, persistent_workers=True,
                           generator=torch.Generator().manual_seed(0))
    samples = 0
    total = 0
    for epoch in range(args.epochs):
        print(f"Epoch {epoch}", flush=True)
        for batch in loader:
            samples += len(batch)
            total += int(batch.sum())
    print(f"read {samples} samples of {total} bytes", flush=True)
    assert (samples, total) == (args.epochs * args.samples, 15 * args.epochs * args.samples)


if __name__ == "__main__":
    main()
