# A character-level model zoo in makemore's manner, condensed: a causal bag-of-words (masked_fill with a tril
# buffer, softmax), a GRU cell unrolled by hand with a learned start state, a tanh-GELU, cross-entropy with
# ignore_index=-1 on padded targets, AdamW with betas and weight decay, and greedy generation with a top-k crop
# (logits[logits < v[:, [-1]]] = -inf). Weights and data from NumPy.
import math, numpy as np, torch, torch.nn as nn, torch.nn.functional as F
rng = np.random.default_rng(11)
V, T, C = 12, 7, 16
class GELU(nn.Module):
    def forward(self, x): return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
class BoW(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(T, C)
        self.register_buffer("bias", torch.tril(torch.ones(T, T)).view(1, T, T))
        self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(C, 4 * C), c_proj=nn.Linear(4 * C, C)))
        self.act, self.head = GELU(), nn.Linear(C, V)
    def forward(self, idx, targets=None):
        b, t = idx.size()
        x = self.wte(idx) + self.wpe(torch.arange(0, t, dtype=torch.long).unsqueeze(0))
        att = torch.zeros((b, t, t)).masked_fill(self.bias[:, :t, :t] == 0, float("-inf"))
        x = x + F.softmax(att, dim=-1) @ x
        m = self.mlp
        x = x + m.c_proj(self.act(m.c_fc(x)))
        logits = self.head(x)
        loss = None if targets is None else F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss
class GRU(nn.Module):
    def __init__(self):
        super().__init__()
        self.start = nn.Parameter(torch.zeros(1, C)); self.wte = nn.Embedding(V, C)
        self.xh_to_z, self.xh_to_r, self.xh_to_hbar = nn.Linear(2 * C, C), nn.Linear(2 * C, C), nn.Linear(2 * C, C)
        self.head = nn.Linear(C, V)
    def forward(self, idx, targets=None):
        b, t = idx.size(); emb = self.wte(idx)
        hprev, hs = self.start.expand((b, -1)), []
        for i in range(t):
            xh = torch.cat([emb[:, i, :], hprev], dim=1)
            r = F.sigmoid(self.xh_to_r(xh))
            hbar = F.tanh(self.xh_to_hbar(torch.cat([emb[:, i, :], r * hprev], dim=1)))
            z = F.sigmoid(self.xh_to_z(xh))
            hprev = (1 - z) * hprev + z * hbar
            hs.append(hprev)
        logits = self.head(torch.stack(hs, 1))
        loss = None if targets is None else F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss
def generate(model, idx, n, top_k=None):
    for _ in range(n):
        logits, _ = model(idx if idx.size(1) <= T else idx[:, -T:])
        logits = logits[:, -1, :] / 0.8
        if top_k is not None:
            v, _ = torch.topk(logits, top_k)
            logits[logits < v[:, [-1]]] = -float("Inf")
        _, nxt = torch.topk(F.softmax(logits, dim=-1), k=1, dim=-1)
        idx = torch.cat((idx, nxt), dim=1)
    return idx
X = torch.from_numpy(rng.integers(1, V, size=(8, T)))
Y = torch.roll(X, -1, 1); Y[:, -2:] = -1; X[:, 0] = 0
for model in (BoW(), GRU()):
    with torch.no_grad():
        for p in model.parameters(): p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)) * 0.3))
    print(type(model).__name__, sum(p.numel() for p in model.parameters()))
    opt = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01, betas=(0.9, 0.99), eps=1e-8)
    for step in range(4):
        logits, loss = model(X, Y)
        model.zero_grad(set_to_none=True); loss.backward(); opt.step()
        print(f"step {step} | loss {loss.item():.6f}", logits.shape)
    model.eval()
    with torch.no_grad():
        print(generate(model, torch.zeros(3, 1, dtype=torch.long), 9, top_k=4).tolist())
