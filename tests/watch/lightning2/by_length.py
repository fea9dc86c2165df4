#!/usr/bin/python3
"""Lightning 2.0.3's validation: loaders without persistent workers, read by length.

Every validation pass makes a new iterator of each loader (persistent_workers=False, the
default), reads len(loader) batches and keeps the iterator until the next pass replaces it.
Torch ends a pass's workers when its iterator is exhausted or collected; this one is neither
until the next iter() has started the next pass's workers, so the two sets overlap. That is
ordinary torch: a new set of workers a pass is what persistent_workers=False asks for.

    by_length.py [--loaders N] [--passes P]
"""

import argparse

from loop_common import Squares, read_by_length, worker_loader


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loaders", type=int, default=1)
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args()
    loaders = [worker_loader(Squares(), batch_size=32) for _ in range(args.loaders)]
    iterators = [None] * len(loaders)
    total = 0.0
    for epoch in range(args.passes):
        print(f"Epoch {epoch}", flush=True)
        for i, loader in enumerate(loaders):
            iterators[i] = iter(loader)  # the last pass's iterator is collected only now
            total += read_by_length(iterators[i], loader)
    print(f"sum {total:.0f}")


if __name__ == "__main__":
    main()
