#!/usr/bin/python3
"""Lightning 2.1's resume: iter() in two functions, the second ending the first's pass unread.

Resumed from a checkpoint, FitLoop.setup_data() makes the fetcher's iterator, and then
_TrainingEpochLoop.on_run_start() calls iter() on the fetcher again. The combined loader's
__iter__ shuts the workers of the iterator it holds down first, so the first pass ends there,
before it handed out a batch. The line to fix is the second iter(), which shows only in the whole
stack of that shutdown; the shutdown itself is always in the same helper.

    resume_double_iter.py [--epochs N]
"""

import argparse

from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter

from loop_common import Squares, read_by_length, worker_loader


def _shutdown_workers_and_reset_iterator(dataloader, iterator):
    """utilities/combined_loader.py: stop the workers of the iterator about to be replaced."""
    if isinstance(iterator, _MultiProcessingDataLoaderIter):
        iterator._shutdown_workers()


class CombinedLoader:
    def __init__(self, loader):
        self.loader = loader
        self.iterator = None

    def __iter__(self):
        if self.iterator is not None:
            _shutdown_workers_and_reset_iterator(self.loader, self.iterator)
        self.iterator = iter(self.loader)
        return self

    def __next__(self):
        return next(self.iterator)


class FitLoop:
    def __init__(self, combined):
        self.combined = combined

    def setup_data(self):
        iter(self.combined)  # fit_loop.py: the fetcher's iterator, made at setup


class TrainingEpochLoop:
    def __init__(self, combined):
        self.combined = combined

    def on_run_start(self, restarting):
        if restarting:
            iter(self.combined)  # training_epoch_loop.py: a second iter() after a resume

    def run(self, restarting):
        self.on_run_start(restarting)
        return read_by_length(self.combined, self.combined.loader)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    combined = CombinedLoader(worker_loader(Squares(), batch_size=32))
    FitLoop(combined).setup_data()  # trainer.fit(ckpt_path=...): restored, then set up
    epoch_loop = TrainingEpochLoop(combined)
    total = 0.0
    for epoch in range(args.epochs):
        print(f"Epoch {epoch}", flush=True)
        if epoch > 0:
            iter(combined)
        total += epoch_loop.run(restarting=epoch == 0)
    print(f"sum {total:.0f}")


if __name__ == "__main__":
    main()
