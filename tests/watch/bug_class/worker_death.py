#!/usr/bin/python3
"""A DataLoader worker killed by a signal, each way a worker dies in the reports: the watcher
must say what ran out, or who sent it.

    worker_death.py --case shm       batches of 4 MiB: in an 8 MiB /dev/shm the workers' batches
                                     in flight do not fit, and a worker dies of SIGBUS
    worker_death.py --case shm --fixed   batches of 64 KiB, which fit
    worker_death.py --case oom       a worker's sample takes 1 GiB: in a cgroup limited below
                                     that, the kernel's OOM killer ends it with SIGKILL
    worker_death.py --case oom --fixed   a sample of 8 MiB
    worker_death.py --case kill      another process sends a worker `kill -9`
    worker_death.py --case kill --fixed  nobody does

Run the shm case in a mount namespace with a small /dev/shm, and the oom case in a memory-limited
cgroup (tests/watch/worker_deaths_test.cpp does both). A worker's death makes torch raise in the
loop; the program says so and exits 1, as a training script would.
"""

import subprocess
import sys
import time

import torch
from torch.utils.data import Dataset, get_worker_info

from bug_common import parse_args, worker_loader


class Sized(Dataset):
    """Sample i: a float32 tensor of `numel` elements; in the oom case a worker first takes
    `hog_bytes` of memory and touches all of it."""

    def __init__(self, numel, hog_bytes=0, size=64, one_at_a_time=False):
        self.numel = numel
        self.hog_bytes = hog_bytes
        self.size = size
        self.one_at_a_time = one_at_a_time

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if self.hog_bytes and index == 0:
            hog = bytearray(self.hog_bytes)  # zero-filled: every page is touched
            hog[-1] = 1
        worker = get_worker_info()
        # Worker 1 waits while worker 0 fills /dev/shm, and on past torch's 5 s wait for it to
        # stop, which then ends it with SIGTERM: one worker dies, not whichever did first.
        time.sleep(10.0 if self.one_at_a_time and worker is not None and worker.id == 1 else 0.02)
        return torch.full((self.numel,), float(index))


def main():
    args = parse_args(__doc__, "the same program without the death", cases=("kill", "shm", "oom"), epochs=2)
    case = args.case
    numel = 16 * 1024  # 64 KiB a sample
    hog = 0
    if case == "shm" and not args.fixed:
        numel = 1024 * 1024  # 4 MiB a sample
    if case == "oom":
        hog = (8 << 20) if args.fixed else (1 << 30)
    loader = worker_loader(Sized(numel, hog, one_at_a_time=case == "shm" and not args.fixed), batch_size=1)
    try:
        for epoch in range(args.epochs):
            print(f"Epoch {epoch}", flush=True)
            iterator = iter(loader)
            for step, batch in enumerate(iterator):
                if case == "kill" and not args.fixed and epoch == 0 and step == 4:
                    victim = iterator._workers[0].pid
                    subprocess.run(["kill", "-9", str(victim)], check=True)
                    time.sleep(0.5)
                assert batch.numel() == numel
            del iterator
    except RuntimeError as error:
        print(f"the loop failed: {error}", file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
