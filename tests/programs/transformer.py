import math, numpy as np, torch, torch.nn as nn, torch.nn.functional as F
from torch.utils.data import TensorDataset, DataLoader, random_split
rng = np.random.default_rng(0)
def init_(model):
    with torch.no_grad():
        for n, p in model.named_parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.05))
class PosEnc(nn.Module):
    def __init__(self, d, max_len=64):
        super().__init__()
        pe = torch.zeros(max_len, d)
        pos = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div = torch.exp(torch.arange(0, d, 2).float() * (-math.log(10000.0) / d))
        pe[:, 0::2] = torch.sin(pos * div); pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe.unsqueeze(0))
    def forward(self, x): return x + self.pe[:, :x.size(1)]
class Model(nn.Module):
    def __init__(self, vocab=20, d=32, nhead=4, classes=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        self.pos = PosEnc(d)
        layer = nn.TransformerEncoderLayer(d, nhead, dim_feedforward=64, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)
    def forward(self, x):
        mask = x == 0
        h = self.enc(self.pos(self.emb(x)), src_key_padding_mask=mask)
        h = self.norm(h).masked_fill(mask.unsqueeze(-1), 0.0)
        return self.head(h.sum(1) / (~mask).sum(1, keepdim=True).clamp(min=1))
X = torch.from_numpy(rng.integers(1, 20, (64, 12))); X[:, 9:] = 0
Y = torch.from_numpy(rng.integers(0, 3, 64))
ds = TensorDataset(X, Y)
model = Model(); init_(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
for epoch in range(3):
    total = 0.0
    for i in range(0, 64, 16):
        xb, yb = X[i:i+16], Y[i:i+16]
        opt.zero_grad()
        out = model(xb)
        loss = F.cross_entropy(out, yb, label_smoothing=0.1)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        total += loss.item()
    sched.step()
    print(f"epoch {epoch} loss {total/4:.5f} lr {sched.get_last_lr()[0]:.6f}")
with torch.no_grad():
    acc = (model(X).argmax(-1) == Y).float().mean()
print("acc", acc.item())
print(sum(p.numel() for p in model.parameters() if p.requires_grad))
