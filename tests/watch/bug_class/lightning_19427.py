#!/usr/bin/python3
"""Lightning #19427 (2.1-2.5.2): iter() twice in the first epoch after a resume.

Resuming a fit, Lightning 2.1 called iter() on the train loader in FitLoop.setup_data() and again
in TrainingEpochLoop's reset: the first iterator was made, started its workers and prefetched,
and was dropped unread. Without persistent workers that is a whole extra set of workers; a data
set that reads from a queue loses what it prefetched. The fix kept the first iterator.

    lightning_19427.py            resumed at epoch 2 of 3, iter() twice (2.1)
    lightning_19427.py --fixed    the iterator made in setup_data() is the one the epoch reads
"""

from bug_common import Squares, parse_args, wait_for_prefetch, worker_loader


class FitLoop:
    def __init__(self, loader, fixed):
        self.loader = loader
        self.fixed = fixed
        self.data_iter = None

    def setup_data(self):
        self.data_iter = iter(self.loader)  # fit_loop.py: the fetcher's iterator, made at setup

    def run_epoch(self, epoch, restarting):
        if restarting and not self.fixed:
            self.data_iter = iter(self.loader)  # training_epoch_loop.py reset(): a second one
        elif not restarting:
            self.data_iter = iter(self.loader)
        total = 0.0
        for batch in self.data_iter:
            total += float(batch.sum())
        return total


def main():
    args = parse_args(__doc__, "one iterator for the resumed epoch", resume_epoch=2, epochs=3)
    loader = worker_loader(Squares(), batch_size=32)
    loop = FitLoop(loader, args.fixed)
    loop.setup_data()  # trainer.fit(ckpt_path=...): restored at the end of epoch resume_epoch - 1
    wait_for_prefetch(loop.data_iter, 4)  # the fit's set-up before its first epoch
    total = 0.0
    for epoch in range(args.resume_epoch, args.epochs):
        print(f"Epoch {epoch}", flush=True)
        total += loop.run_epoch(epoch, restarting=epoch == args.resume_epoch)
    print(f"sum {total:.0f}")


if __name__ == "__main__":
    main()
