#!/usr/bin/python3
"""Lightning #18414 (2.0.x): an extra iter() throws a persistent loader's prefetched batches away.

Before the fit, Lightning 2.0's data connector checked that the train loader is iterable by
calling iter() on it (_check_dataloader_iterable). With persistent workers that iterator is kept
and starts prefetching at once; the first epoch's own iter() then resets it, and the batches it
had prefetched are thrown away (a data set that reads from a queue loses them for good). The fix
stopped calling iter() for a DataLoader, which is iterable by its type.

    lightning_18414.py            the check calls iter() (2.0.x)
    lightning_18414.py --fixed    the check looks at the type
"""

from torch.utils.data import DataLoader

from bug_common import Squares, parse_args, wait_for_prefetch, worker_loader


def _check_dataloader_iterable(dataloader, fixed):
    """trainer/connectors/data_connector.py: refuse what cannot be iterated."""
    if fixed and isinstance(dataloader, DataLoader):
        return  # a DataLoader is iterable: nothing to try
    try:
        iter(dataloader)  # 2.0.x: tries it, and the iterator starts its workers' prefetching
    except TypeError:
        raise TypeError("the train dataloader is not iterable")


def main():
    args = parse_args(__doc__, "check the type, not iter()", epochs=3)
    loader = worker_loader(Squares(), batch_size=32, persistent_workers=True)
    _check_dataloader_iterable(loader, args.fixed)
    if loader._iterator is not None:
        wait_for_prefetch(loader._iterator, 4)  # the fit's set-up before its first epoch
    total = 0.0
    for epoch in range(args.epochs):
        print(f"Epoch {epoch}", flush=True)
        for batch in loader:
            total += float(batch.sum())
    print(f"sum {total:.0f}")


if __name__ == "__main__":
    main()
