#!/usr/bin/python3
"""Lightning #17641 (2.0.0-2.0.2): every validation loader's workers start at once.

With several validation loaders, Lightning 2.0's CombinedLoader in "sequential" mode called
iter() on all of them before reading the first, so every loader started its workers and filled
its prefetch queue at once: the peak was the sum of their workers, not the largest. PR #17639
made each loader's iterator only when its turn came.

    lightning_17641.py            iterators made all at once (2.0.0)
    lightning_17641.py --fixed    each iterator made when its loader's turn comes
"""

from bug_common import Squares, parse_args, worker_loader


class SequentialCombinedLoader:
    """trainer/supporters.py's CombinedLoader in mode="sequential", reduced to its iteration."""

    def __init__(self, loaders, fixed):
        self.loaders = loaders
        self.fixed = fixed

    def __iter__(self):
        if self.fixed:  # PR #17639: one loader's iterator at a time
            for index, loader in enumerate(self.loaders):
                for batch in loader:
                    yield batch, index
            return
        iterators = [iter(loader) for loader in self.loaders]  # 2.0.0: all of them, now
        for index, iterator in enumerate(iterators):
            for batch in iterator:
                yield batch, index


def main():
    args = parse_args(__doc__, "make each iterator in its turn", loaders=3)
    loaders = [worker_loader(Squares(128), batch_size=32) for _ in range(args.loaders)]
    print("Epoch 0 validation", flush=True)
    totals = [0.0] * args.loaders
    for batch, index in SequentialCombinedLoader(loaders, args.fixed):
        totals[index] += float(batch.sum())
    print("sums", " ".join(f"{total:.0f}" for total in totals))


if __name__ == "__main__":
    main()
