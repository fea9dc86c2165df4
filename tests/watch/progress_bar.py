#!/usr/bin/python3
"""A training loop that reports progress as tqdm and Lightning's progress bar do: one line,
redrawn after a carriage return at the start of each epoch (Lightning's on_train_epoch_start
resets the bar and sets "Epoch N" as its description) and at every step ("Epoch 1:  40%|####
| 4/10"), never ended by a newline until the run ends. Its workers are reset at every epoch
start, after the bar's first draw, as Lightning 1.5.0 reset them, so each epoch after the first
has one respawn."""

import sys

import torch
from torch.utils.data import DataLoader
from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter


def main():
    torch.set_num_threads(1)
    loader = DataLoader(list(range(80)), batch_size=8, num_workers=2, persistent_workers=True,
                        multiprocessing_context="fork")
    steps = len(loader)

    def draw(epoch, step):
        done = "#" * (10 * step // steps)
        sys.stderr.write(f"\rEpoch {epoch}: {100 * step // steps:3d}%|{done:<10}| {step}/{steps}")
        sys.stderr.flush()

    for epoch in range(3):
        draw(epoch, 0)
        if isinstance(loader._iterator, _MultiProcessingDataLoaderIter):
            loader._iterator._shutdown_workers()
        loader._iterator = None
        for step, _ in enumerate(loader, 1):
            draw(epoch, step)
    sys.stderr.write("\n")


if __name__ == "__main__":
    main()
