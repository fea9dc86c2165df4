#!/usr/bin/python3
"""Fork workers started while a thread of the program holds a lock.

A thread named 'holder' takes a lock and keeps it while the loop reads a loader of two workers.
Started by fork, each worker is a copy of the process made while 'holder' held the lock: in the
copy the lock stays held for ever, and a worker that took it (a logging handler's, say) would
hang. These workers never take it, so the program ends; the watcher's note says what could have
happened. With --spawn the workers are fresh interpreters, which copy no lock.

    fork_beside_thread.py            fork workers beside 'holder'
    fork_beside_thread.py --spawn    spawn workers: no note
"""

import sys
import threading

import torch
from torch.utils.data import DataLoader

from squares import Squares


def main():
    torch.set_num_threads(1)
    lock = threading.Lock()
    done = threading.Event()
    held = threading.Event()

    def hold():
        with lock:
            held.set()
            done.wait()

    holder = threading.Thread(target=hold, name="holder")
    holder.start()
    held.wait()
    method = "spawn" if "--spawn" in sys.argv else "fork"
    loader = DataLoader(Squares(32), batch_size=8, num_workers=2, multiprocessing_context=method)
    total = sum(float(batch.sum()) for batch in loader)
    assert total == sum(float(i) ** 2 for i in range(32))
    done.set()
    holder.join()


if __name__ == "__main__":
    main()
