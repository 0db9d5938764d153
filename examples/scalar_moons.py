"""micrograd's moons demo on tapegrad.scalar — the code of micrograd's demo.ipynb, only the imports changed.

A 2-layer MLP of scalar Values learns to separate two interleaved half-moons (max-margin loss + L2, SGD).
It reaches 100% training accuracy, as micrograd's does.

    python examples/scalar_moons.py            # 100 steps, as the notebook
    python examples/scalar_moons.py --fast     # stop as soon as training accuracy reaches 100%
"""

import argparse
import os
import random
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from tapegrad.scalar import Value  # noqa: E402  (micrograd: from micrograd.engine import Value)
from tapegrad.scalar.nn import MLP  # noqa: E402  (micrograd: from micrograd.nn import Neuron, Layer, MLP)

def moons(n_samples=100, noise=None, random_state=None, shuffle=True):
    """Two interleaved half-moons with scikit-learn's make_moons interface and numbers: without a random_state it
    draws from NumPy's global generator, so np.random.seed(1337) below makes every run the same."""
    rng = np.random if random_state is None else np.random.RandomState(random_state)   # the global one, or a new
    n_out = n_samples // 2
    n_in = n_samples - n_out
    outer = np.linspace(0, np.pi, n_out)
    inner = np.linspace(0, np.pi, n_in)
    X = np.vstack([np.append(np.cos(outer), 1 - np.cos(inner)),
                   np.append(np.sin(outer), 1 - np.sin(inner) - 0.5)]).T
    y = np.hstack([np.zeros(n_out, dtype=np.intp), np.ones(n_in, dtype=np.intp)])
    if shuffle:
        order = np.arange(n_samples)
        rng.shuffle(order)
        X, y = X[order], y[order]
    if noise is not None:
        X += rng.normal(scale=noise, size=X.shape)
    return X, y


try:
    from sklearn.datasets import make_moons
except ImportError:   # the same numbers without scikit-learn
    make_moons = moons


def main(argv=None):
    ap = argparse.ArgumentParser(description="micrograd's moons demo on tapegrad.scalar: a 2-layer MLP of scalar "
                                             "Values learns to separate two interleaved half-moons.")
    ap.add_argument("--steps", type=int, default=100, help="Training steps, at most (default: 100, as micrograd's "
                                                           "notebook).")
    ap.add_argument("--fast", action="store_true", help="Stop as soon as the training accuracy reaches 100%%.")
    args = ap.parse_args(argv)

    np.random.seed(1337)
    random.seed(1337)

    # make up a dataset
    X, y = make_moons(n_samples=100, noise=0.1)
    y = y * 2 - 1  # make y be -1 or 1

    # initialize a model
    model = MLP(2, [16, 16, 1])  # 2-layer neural network
    print(model)
    print("number of parameters", len(model.parameters()))

    # loss function
    def loss(batch_size=None):
        # inline DataLoader :)
        if batch_size is None:
            Xb, yb = X, y
        else:
            ri = np.random.permutation(X.shape[0])[:batch_size]
            Xb, yb = X[ri], y[ri]
        inputs = [list(map(Value, xrow)) for xrow in Xb]

        # forward the model to get scores
        scores = list(map(model, inputs))

        # svm "max-margin" loss
        losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(yb, scores)]
        data_loss = sum(losses) * (1.0 / len(losses))
        # L2 regularization
        alpha = 1e-4
        reg_loss = alpha * sum((p * p for p in model.parameters()))  # noqa: UP034 - as in micrograd
        total_loss = data_loss + reg_loss

        # also get accuracy
        accuracy = [(yi > 0) == (scorei.data > 0) for yi, scorei in zip(yb, scores)]
        return total_loss, sum(accuracy) / len(accuracy)

    # optimization
    acc = 0.0
    for k in range(args.steps):
        # forward
        total_loss, acc = loss()

        # backward
        model.zero_grad()
        total_loss.backward()

        # update (sgd)
        learning_rate = 1.0 - 0.9 * k / 100
        for p in model.parameters():
            p.data -= learning_rate * p.grad

        if k % 1 == 0:
            print(f"step {k} loss {total_loss.data}, accuracy {acc*100}%")
        if args.fast and acc == 1.0:
            break
    print(f"final training accuracy {acc*100}%")
    return acc


if __name__ == "__main__":
    main()
