"""Writes the shards the real torch.utils.data.DistributedSampler (Debian's python3-torch 1.13.1)
gives every rank, epoch by epoch, for the cases dlreset_oracle_tests asks about; the test draws
the same shards with dlreset's DistributedSampler and requires them equal.

    /usr/bin/python3 tests/oracle/distributed_shards.py --cases cases.json --out shards.json

cases.json is a list of {"name", "size", "num_replicas", "shuffle", "seed", "drop_last",
"epochs"}; shards.json maps each name to {"num_samples", "total_size", "shards"}, where
shards[epoch][rank] is that rank's list of indices.
"""

import argparse
import json

from torch.utils.data.distributed import DistributedSampler


class Sized:
    """All a DistributedSampler asks of its dataset: its length."""

    def __init__(self, size):
        self.size = size

    def __len__(self):
        return self.size


def shards(case):
    dataset = Sized(case["size"])
    samplers = [
        DistributedSampler(dataset, num_replicas=case["num_replicas"], rank=rank,
                           shuffle=case["shuffle"], seed=case["seed"], drop_last=case["drop_last"])
        for rank in range(case["num_replicas"])
    ]
    by_epoch = []
    for epoch in case["epochs"]:
        for sampler in samplers:
            sampler.set_epoch(epoch)
        by_epoch.append([list(iter(sampler)) for sampler in samplers])
    return {"num_samples": samplers[0].num_samples, "total_size": samplers[0].total_size,
            "shards": by_epoch}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    with open(args.cases) as f:
        cases = json.load(f)
    with open(args.out, "w") as f:
        json.dump({case["name"]: shards(case) for case in cases}, f)


if __name__ == "__main__":
    main()
