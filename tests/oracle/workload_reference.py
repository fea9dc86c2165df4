# Real PyTorch's run of dlreset's CNN workload: the initial weights and the per-step losses of
# SGD over the first Fashion-MNIST training batches, taken in order (no shuffle), on CPU with one
# thread. Prints them as JSON for tests/oracle/workload_oracle_test.cpp to compare bit for bit.
import argparse, gzip, json
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
for flag, kind in [("--data-dir", str), ("--seed", int), ("--batches", int), ("--batch-size", int),
                   ("--lr", float), ("--momentum", float), ("--mean", float), ("--std", float)]:
    parser.add_argument(flag, type=kind, required=True)
args = parser.parse_args()
torch.set_num_threads(1)
count = args.batches * args.batch_size

def idx(file, header_bytes, item_bytes):  # the first `count` items of a gzip'ed IDX file
    with gzip.open(f"{args.data_dir}/{file}.gz") as f:
        return np.frombuffer(f.read(header_bytes + count * item_bytes), np.uint8, offset=header_bytes)

# torchvision's ToTensor and Normalize, in float32: ((pixel / 255) - mean) / std.
mean, std = np.float32(args.mean), np.float32(args.std)
pixels = idx("train-images-idx3-ubyte", 16, 28 * 28).astype(np.float32)
images = torch.from_numpy((pixels / np.float32(255) - mean) / std).reshape(count, 1, 28, 28)
labels = torch.from_numpy(idx("train-labels-idx1-ubyte", 8, 1).astype(np.int64))

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1, self.fc2, self.fc3 = nn.Linear(16 * 5 * 5, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2).flatten(1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))

torch.manual_seed(args.seed)
net = Net()
report = {"losses": [], "parameters": [  # every value, as its little-endian float32 bytes in hex
    {"name": name, "shape": list(p.shape), "f32le": p.detach().numpy().astype("<f4").tobytes().hex()}
    for name, p in net.named_parameters()]}
optimizer = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=args.momentum)
for step in range(args.batches):
    batch = slice(step * args.batch_size, (step + 1) * args.batch_size)
    optimizer.zero_grad()
    loss = F.cross_entropy(net(images[batch]), labels[batch])
    loss.backward()
    optimizer.step()
    report["losses"].append(loss.item().hex())  # the float32 loss, exactly, as a double
print(json.dumps(report))
