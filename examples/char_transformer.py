"""A tiny character-level transformer (token + position embeddings, a causal TransformerEncoder, a linear read-out)
learns to continue the opening of *A Tale of Two Cities* (examples/data/tiny.txt, public domain).

The training loss falls from ln(vocabulary) towards zero; at the end the model writes a greedy continuation of
"It was the ". Pure PyTorch API: only the import line differs, so
``python -m tapegrad.parity examples/char_transformer.py --fast`` runs it under both and compares the printed
numbers (weights, batches and dropout-free layers make both runs see the same numbers).
"""

import argparse
import math
import os

import numpy as np

import tapegrad as torch
from tapegrad import nn

TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tiny.txt")


def numpy_init_(model, seed):
    """Weights uniform +-1/sqrt(fan_in) from NumPy, biases zero, LayerNorms as they are: torch and tapegrad agree."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                bound = 1.0 / math.sqrt(p.shape[1])
                p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))
            elif name.endswith("bias"):
                p.zero_()


class CharTransformer(nn.Module):
    def __init__(self, vocab, block, d_model=48, nhead=4, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(block, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=4 * d_model, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d_model), enable_nested_tensor=False)
        self.out = nn.Linear(d_model, vocab)
        # position i may look at positions <= i only: -inf above the diagonal
        self.register_buffer("causal", torch.triu(torch.full((block, block), float("-inf")), diagonal=1))

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t))
        x = self.encoder(x, mask=self.causal[:t, :t], is_causal=True)
        return self.out(x)


def main():
    ap = argparse.ArgumentParser(description="A tiny character-level transformer learns to continue the opening of "
                                             "A Tale of Two Cities, then writes a greedy continuation.")
    ap.add_argument("--fast", action="store_true", help="A run of a few seconds: 40 training steps.")
    ap.add_argument("--steps", type=int, default=None, help="Training steps (default: 800, or 40 with --fast).")
    args = ap.parse_args()
    steps = args.steps or (40 if args.fast else 800)

    with open(TEXT, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = np.array([stoi[c] for c in text], dtype=np.int64)
    vocab, block, batch_size = len(chars), 32, 16
    print(f"text: {len(text)} characters, vocabulary {vocab}; uniform-guess loss ln({vocab}) = {math.log(vocab):.4f}")

    model = CharTransformer(vocab, block)
    numpy_init_(model, seed=0)
    print("parameters:", sum(p.numel() for p in model.parameters()))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(1)
    first = None
    for step in range(1, steps + 1):
        starts = rng.integers(0, len(data) - block - 1, batch_size)
        xb = torch.from_numpy(np.stack([data[s:s + block] for s in starts]))
        yb = torch.from_numpy(np.stack([data[s + 1:s + block + 1] for s in starts]))
        logits = model(xb)
        loss = loss_fn(logits.reshape(-1, vocab), yb.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        first = loss.item() if first is None else first
        if step == 1 or step % (steps // 6) == 0:
            print(f"step {step}: loss {loss.item():.4f}")
    print(f"loss fell from {first:.4f} to {loss.item():.4f}")

    model.eval()
    idx = [stoi[c] for c in "It was the "]
    with torch.no_grad():
        for _ in range(40):
            logits = model(torch.tensor([idx[-block:]]))
            idx.append(int(logits[0, -1].argmax()))
    print("sample:", repr("".join(chars[i] for i in idx)))


if __name__ == "__main__":
    main()
