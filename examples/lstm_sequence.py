"""An LSTM learns to count: read a sequence of 12 random bits, say how many are ones (13 classes).

The majority guess ("six") is right 23% of the time; the LSTM gets far past that. Pure PyTorch API: only the import
line differs, so ``python -m tapegrad.parity examples/lstm_sequence.py --fast`` runs it under both and compares
the printed numbers (weights and data come from NumPy, so both frameworks see the same numbers).
"""

import argparse

import numpy as np

import tapegrad as torch
from tapegrad import nn

SEQ_LEN = 12


def numpy_init_(model, seed):
    """Uniform +-1/sqrt(fan_in) weights and zero biases from NumPy, so that torch and tapegrad start equal."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                bound = 1.0 / np.sqrt(p.shape[1])
                p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))
            elif name.startswith("bias") or ".bias" in name:
                p.zero_()


def batch(rng, n):
    bits = rng.integers(0, 2, (n, SEQ_LEN))
    x = torch.from_numpy(bits.astype(np.float32)[:, :, None])     # (batch, time, 1)
    y = torch.from_numpy(bits.sum(1).astype(np.int64))            # how many ones: 0..12
    return x, y


class Counter(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.lstm = nn.LSTM(input_size=1, hidden_size=hidden, batch_first=True)
        self.head = nn.Linear(hidden, SEQ_LEN + 1)

    def forward(self, x):
        out, (h, c) = self.lstm(x)          # out: (batch, time, hidden); h: (layers, batch, hidden)
        return self.head(h[-1])


def main():
    ap = argparse.ArgumentParser(description="An LSTM learns to count: it reads a sequence of 12 random bits and "
                                             "says how many are ones.")
    ap.add_argument("--fast", action="store_true", help="A run of a few seconds: 150 training steps.")
    ap.add_argument("--steps", type=int, default=None, help="Training steps (default: 1500, or 150 with --fast).")
    args = ap.parse_args()
    steps = args.steps or (150 if args.fast else 1500)

    model = Counter()
    numpy_init_(model, seed=0)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(1)
    x_test, y_test = batch(np.random.default_rng(2), 1000)
    chance = (y_test == 6).float().mean().item()
    print(f"task: count the ones in {SEQ_LEN} bits; majority-class accuracy {100 * chance:.1f}%")
    for step in range(1, steps + 1):
        x, y = batch(rng, 64)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        if step % (steps // 5) == 0:
            with torch.no_grad():
                acc = (model(x_test).argmax(1) == y_test).float().mean().item()
            print(f"step {step}: loss {loss.item():.5f}  test accuracy {100 * acc:.1f}%")
    print(f"final test accuracy {100 * acc:.1f}% (chance {100 * chance:.1f}%)")


if __name__ == "__main__":
    main()
