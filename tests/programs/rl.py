import numpy as np, torch, torch.nn as nn, torch.nn.functional as F
from torch.distributions import Categorical, Normal
rng = np.random.default_rng(11)
pol = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3))
val = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
for m in (pol, val):
    with torch.no_grad():
        for p in m.parameters(): p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
opt = torch.optim.Adam(list(pol.parameters()) + list(val.parameters()), lr=3e-3)
gamma = 0.99
for ep in range(4):
    obs = torch.from_numpy(rng.standard_normal((20, 4)).astype(np.float32))
    logits = pol(obs); dist = Categorical(logits=logits)
    acts = torch.from_numpy(rng.integers(0, 3, 20))
    logp = dist.log_prob(acts); ent = dist.entropy().mean()
    rews = torch.from_numpy(rng.standard_normal(20).astype(np.float32))
    disc = torch.zeros_like(rews); run = torch.tensor(0.0)
    for t in reversed(range(20)):
        run = rews[t] + gamma * run; disc[t] = run
    v = val(obs).squeeze(-1)
    adv = (disc - v.detach()); adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    loss = -(logp * adv).mean() + 0.5 * F.mse_loss(v, disc) - 0.01 * ent
    opt.zero_grad(); loss.backward()
    gn = torch.nn.utils.clip_grad_norm_(list(pol.parameters()) + list(val.parameters()), 0.5)
    opt.step()
    print(ep, f"{loss.item():.5f} {ent.item():.5f} {gn.item():.5f} {torch.isfinite(gn).item()}")
mu = torch.zeros(3, requires_grad=True); ls = torch.zeros(3, requires_grad=True)
d = Normal(mu, ls.exp()); a = torch.tensor([0.5, -0.2, 1.0])
lp = d.log_prob(a).sum(); lp.backward(); print(mu.grad, ls.grad, d.entropy().sum().item())
print(torch.flip(torch.cumsum(torch.flip(torch.arange(5.), [0]), 0), [0]))
print(Categorical(probs=torch.tensor([0.2, 0.3, 0.5])).probs, Categorical(logits=torch.tensor([0., 1.])).logits)
