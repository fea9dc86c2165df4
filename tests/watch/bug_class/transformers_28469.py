#!/usr/bin/python3
"""transformers #28469: a persistent eval loader made again at every evaluation.

Trainer.evaluate() called get_eval_dataloader(), which built a new DataLoader every time, and
accelerate's prepare() kept a reference to each one it had seen. With
dataloader_persistent_workers=True the old loaders' workers never exit: the live workers grow by
num_workers at every evaluation (users called it a fork bomb). PR #29538 keeps the eval loader
and hands out the same one.

    transformers_28469.py            a new eval loader every evaluation
    transformers_28469.py --fixed    the eval loader made once and kept
"""

import torch
from torch.utils.data import Dataset

from bug_common import parse_args, worker_loader


class TrainSet(Dataset):
    def __len__(self):
        return 128

    def __getitem__(self, index):
        return torch.tensor(float(index))


class EvalSet(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, index):
        return torch.tensor(float(index))


class Accelerator:
    """accelerate keeps every loader it prepared."""

    def __init__(self):
        self._dataloaders = []

    def prepare(self, loader):
        self._dataloaders.append(loader)
        return loader


class Trainer:
    def __init__(self, fixed):
        self.fixed = fixed
        self.accelerator = Accelerator()
        self._eval_dataloader = None

    def get_eval_dataloader(self):
        if self.fixed and self._eval_dataloader is not None:
            return self._eval_dataloader  # PR #29538: made once, kept
        loader = worker_loader(EvalSet(), batch_size=16, persistent_workers=True)
        self._eval_dataloader = self.accelerator.prepare(loader)
        return self._eval_dataloader

    def evaluate(self):
        return sum(float(batch.sum()) for batch in self.get_eval_dataloader())


def main():
    args = parse_args(__doc__, "keep the eval loader", epochs=3)
    trainer = Trainer(args.fixed)
    train_loader = worker_loader(TrainSet(), batch_size=32, persistent_workers=True)
    for epoch in range(args.epochs):
        print(f"Epoch {epoch}", flush=True)
        for batch in train_loader:
            pass
        print(f"eval {trainer.evaluate():.0f}", flush=True)


if __name__ == "__main__":
    main()
