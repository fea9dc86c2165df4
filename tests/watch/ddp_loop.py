#!/usr/bin/python3
"""A data-parallel training loop for torchrun (torch.distributed.run): every rank joins a Gloo
group over loopback, gives its DataLoader (2 persistent fork workers) its DistributedSampler
shard, and runs 3 epochs. `--mode reset` gives each rank's loader Lightning 1.5.0's reset at
every epoch start, so every rank restarts its workers at every epoch, as a DDP job on 1.5.0 did.

    python3 -m torch.distributed.run --standalone --nproc_per_node 2 --redirects 1 --tee 1 \\
        ddp_loop.py --mode reset
"""

import argparse

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from squares import Squares
from train_loop import reset_like_lightning_1_5_0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("persistent", "reset"), default="persistent")
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    squares = Squares(128)
    sampler = DistributedSampler(squares, shuffle=True, seed=0)
    loader = DataLoader(squares, batch_size=16, sampler=sampler, num_workers=2, persistent_workers=True,
                        multiprocessing_context="fork")
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        print(f"Epoch {epoch} rank {dist.get_rank()}", flush=True)
        if args.mode == "reset":
            reset_like_lightning_1_5_0(loader)
        total = torch.zeros(())
        for batch in loader:
            total += batch.sum()
        dist.all_reduce(total)
    print(f"rank {dist.get_rank()} sum {float(total):.0f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
