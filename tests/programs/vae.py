import numpy as np, torch, torch.nn as nn, torch.nn.functional as F
from torch.distributions import Normal, kl_divergence
rng = np.random.default_rng(1)
class VAE(nn.Module):
    def __init__(s, d=16, z=4):
        super().__init__()
        s.enc = nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Linear(32, 2 * z))
        s.dec = nn.Sequential(nn.Linear(z, 32), nn.ReLU(), nn.Linear(32, d))
    def forward(s, x, eps):
        mu, logvar = s.enc(x).chunk(2, dim=-1)
        std = torch.exp(0.5 * logvar)
        z = mu + eps * std
        return s.dec(z), mu, logvar
m = VAE()
with torch.no_grad():
    for p in m.parameters(): p.copy_(torch.tensor(rng.standard_normal(p.shape) * 0.1, dtype=torch.float32))
x = torch.tensor(rng.random((32, 16)), dtype=torch.float32)
opt = torch.optim.Adam(m.parameters(), lr=1e-2)
for step in range(5):
    eps = torch.tensor(rng.standard_normal((32, 4)), dtype=torch.float32)
    recon, mu, logvar = m(x, eps)
    rl = F.binary_cross_entropy_with_logits(recon, x, reduction="sum")
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    q = Normal(mu, torch.exp(0.5 * logvar)); p0 = Normal(torch.zeros_like(mu), torch.ones_like(mu))
    kl2 = kl_divergence(q, p0).sum()
    loss = (rl + kl) / 32
    opt.zero_grad(); loss.backward(); opt.step()
    print(step, round(loss.item(), 5), round(kl.item(), 5), round(kl2.item(), 5), q.log_prob(mu).sum().item())
print(torch.sigmoid(recon[0, :4]).detach().numpy())
