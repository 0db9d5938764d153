"""Layer-level surface of the intermediate tutorials: a character RNN trained by hand with the old
``p.data.add_(-lr, p.grad.data)`` step, pruning applied twice to one weight and made permanent, a conv net in
channels-last memory format, and a causal attention block on scaled_dot_product_attention whose heads are merged
back with ``transpose(1, 2).view(...)``, eagerly, under ``sdp_kernel`` and compiled."""
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune

warnings.simplefilter("ignore", (UserWarning, FutureWarning))
torch.manual_seed(3)

letters = "abcdefgh"
rnn_in, rnn_h = nn.Linear(len(letters), 16), nn.Linear(16, 16)
rnn_out = nn.Linear(16, 3)
params = [*rnn_in.parameters(), *rnn_h.parameters(), *rnn_out.parameters()]
words = [("abc", 0), ("hgf", 1), ("dde", 2), ("bca", 0), ("ffh", 1)]
for epoch in range(3):
    total = 0.0
    for word, label in words:
        hidden = torch.zeros(1, 16)
        for ch in word:
            onehot = torch.zeros(1, len(letters))
            onehot[0][letters.index(ch)] = 1
            hidden = torch.tanh(rnn_in(onehot) + rnn_h(hidden))
        loss = F.nll_loss(F.log_softmax(rnn_out(hidden), dim=1), torch.tensor([label]))
        for p in params:
            p.grad = None
        loss.backward()
        for p in params:
            p.data.add_(-0.1, p.grad.data)
        total += loss.item()
    print("rnn epoch", epoch, round(total, 5))

conv = nn.Conv2d(2, 6, 3)
prune.random_unstructured(conv, name="weight", amount=0.3)
prune.ln_structured(conv, name="weight", amount=0.5, n=2, dim=0)
prune.l1_unstructured(conv, name="bias", amount=2)
print("kept channels", (conv.weight.abs().sum((1, 2, 3)) > 0).int().tolist(), conv.bias)
prune.remove(conv, "weight")
print("pruned params", sorted(n for n, _ in conv.named_parameters()), int((conv.weight == 0).sum()))

net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Conv2d(4, 2, 3)).to(memory_format=torch.channels_last)
img = torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last)
feat = net(img)
print("channels last", feat.is_contiguous(memory_format=torch.channels_last), feat.stride(), feat.sum().item())


class CausalAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.qkv, self.proj, self.heads = nn.Linear(dim, 3 * dim, bias=False), nn.Linear(dim, dim), heads

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in self.qkv(x).chunk(3, -1))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).view(b, t, -1))


block = CausalAttention(8, 2).eval()
tokens = torch.randn(2, 5, 8)
eager = block(tokens)
with torch.backends.cuda.sdp_kernel(enable_math=False, enable_mem_efficient=False):
    fused_only = block(tokens)
q = tokens.view(2, 5, 2, 4).transpose(1, 2)
with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False):
    math_out = F.scaled_dot_product_attention(q, q, q)
print("attention", eager[1, 4], torch.equal(eager, fused_only), math_out.stride(),
      F.scaled_dot_product_attention(q, q, q).stride())
print("compiled", torch.compile(block)(tokens)[0, 2])
