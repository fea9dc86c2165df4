#!/usr/bin/python3
"""Lightning #21938 (2.5.3 on): the first epoch after a resume replays epoch 0's order.

FitLoop.setup_data() creates the train iterator before the sampler's epoch is set, and a loader
with workers draws its first pass's indices as its iterator is made. Resumed at epoch 2, the
DistributedSampler still says epoch 0 then; set_epoch(2) comes after the order was drawn, so
epoch 2 trains on epoch 0's shuffle. PR #21941 sets the epoch before the iterator is made.

    lightning_21938.py            set_epoch after the iterator was made (2.5.3)
    lightning_21938.py --fixed    set_epoch first
"""

from torch.utils.data.distributed import DistributedSampler

from bug_common import parse_args, worker_loader


def main():
    args = parse_args(__doc__, "set the epoch before the iterator is made", resume_epoch=2, epochs=4)
    dataset = list(range(128))  # sample i is i, so a pass's first samples show its order
    # One replica: the order is the sampler's own shuffle, seeded by its epoch.
    sampler = DistributedSampler(dataset, num_replicas=1, rank=0, shuffle=True, seed=0)
    loader = worker_loader(dataset, batch_size=16, sampler=sampler, persistent_workers=True)
    # setup_data(), resumed at the end of epoch resume_epoch - 1:
    if args.fixed:
        sampler.set_epoch(args.resume_epoch)
    iterator = iter(loader)
    for epoch in range(args.resume_epoch, args.epochs):
        print(f"Epoch {epoch}", flush=True)
        sampler.set_epoch(epoch)  # FitLoop.on_advance_start(): _set_sampler_epoch
        if epoch != args.resume_epoch:
            iterator = iter(loader)
        first = [int(index) for index in next(iterator)[:4]]
        for _ in iterator:
            pass
        print(f"epoch {epoch} starts with samples {first}", flush=True)


if __name__ == "__main__":
    main()
