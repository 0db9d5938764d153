"""Fine-tuning with a frozen backbone: pretrain a small network on task A, freeze its backbone with
``requires_grad_(False)``, train only a new head on task B.

Shows what freezing means: the frozen parameters' ``.grad`` stays ``None`` through every backward, their values are
bit-for-bit unchanged, the backbone's features carry no graph (``requires_grad=False``), and only the head moves.
Task A: which of 8 angular sectors a 2-d point lies in; task B: is the point in the upper half-plane (the sector
features make B easy). Pure PyTorch API: only the import line differs, so
``python -m tapegrad.parity examples/finetune_frozen_backbone.py --fast`` compares both frameworks.
"""

import argparse

import numpy as np

import tapegrad as torch
from tapegrad import nn


def numpy_init_(model, seed):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                bound = 1.0 / np.sqrt(p.shape[1])
                p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))
            else:
                p.zero_()


class Net(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        return self.head(self.backbone(x))


def points(rng, n):
    xy = rng.normal(size=(n, 2)).astype(np.float32)
    angle = np.arctan2(xy[:, 1], xy[:, 0]) % (2 * np.pi)
    sector = (angle // (np.pi / 4)).astype(np.int64)          # task A: 8 sectors
    upper = (xy[:, 1] > 0).astype(np.int64)                    # task B: upper half-plane
    return torch.from_numpy(xy), torch.from_numpy(sector), torch.from_numpy(upper)


def train(model, params, rng, steps, task, label):
    optimizer = torch.optim.SGD(params, lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    for step in range(1, steps + 1):
        x, sector, upper = points(rng, 128)
        target = sector if task == "A" else upper
        optimizer.zero_grad()
        loss = loss_fn(model(x), target)
        loss.backward()
        optimizer.step()
        if step % (steps // 4) == 0:
            print(f"{label} step {step}: loss {loss.item():.5f}")


def accuracy(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def main():
    ap = argparse.ArgumentParser(description="Fine-tuning with a frozen backbone: a small network pretrained on one "
                                             "task keeps its backbone frozen while a new head learns a second task.")
    ap.add_argument("--fast", action="store_true", help="A run of a few seconds: 200 pretraining and 100 "
                                                        "fine-tuning steps (instead of 2000 and 500).")
    args = ap.parse_args()
    steps_a, steps_b = (200, 100) if args.fast else (2000, 500)
    rng = np.random.default_rng(0)
    x_test, sector_test, upper_test = points(np.random.default_rng(1), 2000)

    # 1. "pretrain" the whole network on task A
    model = Net(classes=8)
    numpy_init_(model, seed=0)
    train(model, model.parameters(), rng, steps_a, "A", "pretrain (task A)")
    print(f"task A accuracy: {100 * accuracy(model, x_test, sector_test):.1f}%")

    # 2. a new head for task B; freeze the backbone
    model.head = nn.Linear(32, 2)
    numpy_init_(model.head, seed=1)
    model.zero_grad(set_to_none=True)
    # the same as the lesson's `for p in model.backbone.parameters(): p.requires_grad = False`
    model.backbone.requires_grad_(False)
    before = {name: p.detach().clone() for name, p in model.backbone.named_parameters()}
    head_before = model.head.weight.detach().clone()
    print("trainable:", [name for name, p in model.named_parameters() if p.requires_grad])
    print("frozen   :", [name for name, p in model.named_parameters() if not p.requires_grad])
    print("backbone features require grad:", model.backbone(x_test[:4]).requires_grad)

    trainable = [p for p in model.parameters() if p.requires_grad]
    train(model, trainable, rng, steps_b, "B", "fine-tune head (task B)")
    print(f"task B accuracy: {100 * accuracy(model, x_test, upper_test):.1f}%")

    # 3. what freezing guarantees
    print("frozen grads are all None:", all(p.grad is None for p in model.backbone.parameters()))
    print("frozen values unchanged  :", all(torch.equal(before[name], p)
                                           for name, p in model.backbone.named_parameters()))
    print("head grads exist         :", all(p.grad is not None for p in model.head.parameters()))
    print("head weight moved by     :", round((model.head.weight - head_before).abs().max().item(), 5))


if __name__ == "__main__":
    main()
