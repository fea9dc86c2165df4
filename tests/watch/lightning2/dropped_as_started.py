#!/usr/bin/python3
"""Lightning 2.0.7's check, without persistent workers: an iterator dropped as its workers start.

Before the fit, 2.0.7 checked that the train loader is iterable by calling iter() on it and
throwing the iterator away. The iterator asks its workers for prefetch_factor x workers = 4
batches and is collected at once, while its workers are still starting (here each worker's
set-up takes a moment, as a data set that opens its files does). None of the 4 batches was made:
the iterator knows it asked for 4, and that it had received none.

    dropped_as_started.py
"""

import time

from loop_common import Squares, read_by_length, worker_loader


def slow_start(worker_id):
    time.sleep(1.0)  # opening the data set's files


def _check_dataloader_iterable(dataloader):
    """trainer/connectors/data_connector.py @ 2.0.7: try iter(), keep nothing."""
    iter(dataloader)


def main():
    loader = worker_loader(Squares(), batch_size=32, worker_init_fn=slow_start)
    _check_dataloader_iterable(loader)
    print("Epoch 0", flush=True)
    total = read_by_length(iter(loader), loader)
    print(f"sum {total:.0f}")


if __name__ == "__main__":
    main()
