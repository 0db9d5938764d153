# A training script that seeds with torch.manual_seed and uses the default initialisation, dropout, a shuffling
# DataLoader and samplers: tapegrad draws torch's random numbers, so every printed number is torch's.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(42)
X = torch.randn(256, 20)
y = (X[:, 0] + 0.5 * X[:, 1] > 0).long()
ds = TensorDataset(X, y)
dl = DataLoader(ds, batch_size=32, shuffle=True)
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 2))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    model.train(); tot = 0.0
    for xb, yb in dl:
        opt.zero_grad(); loss = F.cross_entropy(model(xb), yb); loss.backward(); opt.step(); tot += loss.item()
    model.eval()
    with torch.no_grad():
        acc = (model(X).argmax(1) == y).float().mean().item()
    print(epoch, round(tot / len(dl), 5), round(acc, 4))
print(torch.randn(3), torch.rand(2), torch.randint(0, 10, (5,)), torch.randperm(6))
emb = nn.Embedding(10, 4); lstm = nn.LSTM(4, 8, batch_first=True); conv = nn.Conv2d(3, 4, 3)
print(emb.weight.sum().item(), sum(p.sum().item() for p in lstm.parameters()), conv.weight.std().item())
d = torch.distributions.Normal(torch.zeros(3), torch.ones(3)); print(d.sample(), d.rsample((2,)).shape)
print(torch.multinomial(torch.tensor([0.1, 0.3, 0.6]), 5, replacement=True), torch.bernoulli(torch.full((6,), 0.5)))
g = torch.Generator().manual_seed(0); print(torch.rand(3, generator=g))
