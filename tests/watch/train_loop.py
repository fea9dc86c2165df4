#!/usr/bin/python3
"""A small real-torch training loop for dlreset watch's tests and docs.

A linear model over a map-style dataset that loads lazily in each worker (it builds and
normalises its tensors on first use, as a data set read from disk would), trained for a few
epochs with torch.utils.data.DataLoader. `--mode` picks how the loader's workers live:

  persistent     persistent_workers=True: one set of workers for the whole run
  reset          persistent_workers=True, but at each epoch start the loader gets Lightning
                 1.5.0's reset: _shutdown_workers() on its iterator, then _iterator = None
  nonpersistent  persistent_workers=False: a new set of workers every epoch

Prints "Epoch N" at the start of each epoch and exits with --exit-status; --time-file gives the
benchmarks the program's own time, which a watcher must not slow.
"""

import argparse
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter


class LazyDataset(Dataset):
    def __init__(self, samples):
        self.samples = samples
        self.features = None
        self.labels = None

    def load(self):
        generator = torch.Generator().manual_seed(0)
        raw = torch.rand(self.samples, 784, generator=generator) * 255
        self.features = (raw / 255 - 0.2860) / 0.3530
        self.labels = torch.randint(0, 10, (self.samples,), generator=generator)

    def __len__(self):
        return self.samples

    def __getitem__(self, index):
        if self.features is None:
            self.load()
        return self.features[index], self.labels[index]


def reset_like_lightning_1_5_0(loader):
    """What Lightning 1.5.0's DataFetcher.reset does to a loader at every epoch start."""
    if isinstance(loader._iterator, _MultiProcessingDataLoaderIter):
        loader._iterator._shutdown_workers()
    loader._iterator = None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("persistent", "reset", "nonpersistent"), default="persistent")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--samples", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--start-method", choices=("fork", "spawn", "forkserver"), default="fork")
    parser.add_argument("--wait-for", metavar="PATH",
                        help="wait until this file exists before building the loader (for attaching)")
    parser.add_argument("--exit-status", type=int, default=0)
    parser.add_argument("--time-file", metavar="PATH",
                        help="write the seconds from the loader's creation to the end of training here")
    args = parser.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(0)
    if args.wait_for:
        while not os.path.exists(args.wait_for):
            time.sleep(0.02)
    started = time.monotonic()
    loader = DataLoader(LazyDataset(args.samples), batch_size=args.batch_size, shuffle=True,
                        num_workers=args.workers,
                        persistent_workers=args.workers > 0 and args.mode != "nonpersistent",
                        multiprocessing_context=args.start_method if args.workers > 0 else None)
    model = torch.nn.Linear(784, 10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(args.epochs):
        print(f"Epoch {epoch}", flush=True)
        if args.mode == "reset":
            reset_like_lightning_1_5_0(loader)
        for features, labels in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(features), labels)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} done, loss {loss.item():.4f}", flush=True)
    if args.time_file:
        with open(args.time_file, "w") as out:
            out.write(f"{time.monotonic() - started:.6f}\n")
    sys.exit(args.exit_status)


if __name__ == "__main__":
    main()
