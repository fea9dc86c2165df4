#!/usr/bin/python3
"""pytorch #91252 (Lightning #18487): a loader made again every epoch leaks its workers' pipes.

With persistent_workers=True and pin_memory=True, torch's iterator registers an atexit hook for
each of its workers (`_MultiProcessingDataLoaderIter._clean_up_worker`), which keeps the worker's
Process object, and with it the two pipes multiprocessing opened to watch it, until the program
exits. Lightning's reload_dataloaders_every_n_epochs makes a new loader every epoch: each epoch's
workers end, but 2 pipes a worker stay open, and the job dies of "Too many open files" after
enough epochs. PR #176607 registers one hook for the process, which keeps no worker.

Torch turns pin_memory off where CUDA is not available, and its atexit hook with it; so that the
bug runs on any machine, the program registers for each worker what torch registers with
pin_memory on.

    pytorch_91252.py            a new persistent loader each epoch, each worker kept by atexit
    pytorch_91252.py --fixed    the same loaders, none kept (PR #176607)

It counts its own pipes at each epoch's start, once its iterator is made, and prints what piled
up: "pipes piled up: 12" (2 pipes x 2 workers x 3 epochs after the first).
"""

import atexit
import os

from torch.utils.data import dataloader

from bug_common import Squares, parse_args, wait_for_prefetch, worker_loader


def pipes():
    """The process's open pipes, as the watcher counts them (/proc/self/fd)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink("/proc/self/fd/" + fd).startswith("pipe:")
        except OSError:
            pass  # the listing's own descriptor, closed by now
    return count


def main():
    args = parse_args(__doc__, "keep no worker after its loader is gone (PR #176607)", epochs=4)
    counts = []
    for epoch in range(args.epochs):
        print(f"Epoch {epoch}", flush=True)
        # reload_dataloaders_every_n_epochs=1: the last epoch's loader is let go, a new one made.
        loader = worker_loader(Squares(64), batch_size=8, persistent_workers=True)
        iterator = iter(loader)
        counts.append(pipes())
        wait_for_prefetch(iterator, 4)  # the epoch's start takes a while; the watcher counts meanwhile
        if not args.fixed:
            for worker in iterator._workers:  # what torch 1.13 does with pin_memory on
                atexit.register(dataloader._MultiProcessingDataLoaderIter._clean_up_worker, worker)
        total = sum(float(batch.sum()) for batch in iterator)
        assert total == sum(float(i) ** 2 for i in range(64))
        del iterator, loader
    print("pipes at each epoch's start: " + ", ".join(str(count) for count in counts), flush=True)
    print(f"pipes piled up: {counts[-1] - counts[0]}", flush=True)


if __name__ == "__main__":
    main()
