"""Policy-gradient RL the way single-file PPO/A2C/SAC scripts write it: a seeded toy pendulum and a discrete chain
world in NumPy, rollouts of Categorical and Normal policies sampled from torch's stream (torch.manual_seed),
transitions kept as 1-element tensors and turned into batches with torch.tensor, GAE by a reversed loop, the clipped
PPO objective with entropy and value terms, clip_grad_norm_, a tanh-squashed Gaussian with a learned temperature
(SAC), a MultivariateNormal with a diagonal covariance, and the policy's actions read back through NumPy."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical, MultivariateNormal, Normal

torch.manual_seed(0)


class Pendulum:
    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.th, self.w = self.rng.uniform(-math.pi, math.pi), self.rng.uniform(-1, 1)
        return np.array([math.cos(self.th), math.sin(self.th), self.w], dtype=np.float32)

    def step(self, u):
        u = float(np.clip(np.asarray(u, dtype=np.float64).reshape(-1)[0], -2, 2))
        norm = (self.th + math.pi) % (2 * math.pi) - math.pi
        cost = norm ** 2 + 0.1 * self.w ** 2 + 0.001 * u ** 2
        self.w = float(np.clip(self.w + (15.0 * math.sin(self.th) + 3.0 * u) * 0.05, -8, 8))
        self.th += self.w * 0.05
        return np.array([math.cos(self.th), math.sin(self.th), self.w], dtype=np.float32), -cost


class Chain:
    """Walk left/right on 6 cells; reward 1 at the right end, which ends the episode."""

    def reset(self):
        self.pos = 0
        return self.obs()

    def obs(self):
        return np.eye(6, dtype=np.float32)[self.pos]

    def step(self, a):
        self.pos = max(0, min(5, self.pos + (1 if a == 1 else -1)))
        return self.obs(), float(self.pos == 5), self.pos == 5


# --- PPO on the chain: Categorical(logits), GAE, clipped surrogate --------------------------------------------
class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 32), nn.Tanh())
        self.pi, self.v = nn.Linear(32, 2), nn.Linear(32, 1)

    def forward(self, x):
        h = self.body(x)
        return Categorical(logits=self.pi(h)), self.v(h).squeeze(-1)


net = ActorCritic()
opt = optim.Adam(net.parameters(), lr=3e-3, eps=1e-5)
env, gamma, lam = Chain(), 0.95, 0.9
for it in range(6):
    s, data, ret = env.reset(), [], 0.0
    for t in range(24):
        with torch.no_grad():
            dist, v = net(torch.from_numpy(s))
        a = dist.sample()
        s2, r, done = env.step(a.item())
        data.append((s, a, dist.log_prob(a), r, v, done))
        ret += r
        s = env.reset() if done else s2
    obs = torch.tensor(np.array([d[0] for d in data]))
    acts = torch.tensor([d[1] for d in data])                  # 0-d tensors -> a long vector
    old_logp = torch.tensor([d[2] for d in data])
    rews = torch.tensor([d[3] for d in data], dtype=torch.float32)
    vals = torch.stack([d[4] for d in data])
    masks = torch.tensor([0.0 if d[5] else 1.0 for d in data])
    adv, gae = torch.zeros(24), 0.0
    with torch.no_grad():
        nxt = net(torch.from_numpy(s))[1]
    for t in reversed(range(24)):
        nv = nxt if t == 23 else vals[t + 1]
        delta = rews[t] + gamma * nv * masks[t] - vals[t]
        gae = delta + gamma * lam * masks[t] * gae
        adv[t] = gae
    returns = adv + vals
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    for epoch in range(3):
        dist, v = net(obs)
        ratio = (dist.log_prob(acts) - old_logp).exp()
        surr = torch.min(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv)
        loss = -surr.mean() + 0.5 * F.mse_loss(v, returns) - 0.01 * dist.entropy().mean()
        opt.zero_grad()
        loss.backward()
        gn = nn.utils.clip_grad_norm_(net.parameters(), 0.5)
        opt.step()
    print(f"ppo {it} return {ret:.0f} loss {loss.item():.5g} grad-norm {gn.item():.5g} "
          f"actions {acts.tolist()[:8]}")

# --- A2C-style continuous actions: Normal samples kept as 1-element tensors -----------------------------------
actor = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 1))
log_std = nn.Parameter(torch.zeros(1))
popt = optim.Adam(list(actor.parameters()) + [log_std], lr=1e-3)
penv = Pendulum(1)
for it in range(3):
    s, acts, logps, rews = penv.reset(), [], [], []
    for t in range(20):
        dist = Normal(actor(torch.from_numpy(s)), log_std.exp())
        a = dist.sample()                                      # shape [1]
        s, r = penv.step(a.numpy())
        acts.append([a])
        logps.append(dist.log_prob(a))
        rews.append(r / 10.0)
    batch_a = torch.tensor(acts, dtype=torch.float)            # [[tensor([x])], ...]: shape (20, 1)
    disc, run = [], 0.0
    for r in rews[::-1]:
        run = r + 0.99 * run
        disc.insert(0, run)
    disc = torch.tensor(disc)
    loss = -(torch.cat(logps) * (disc - disc.mean())).sum()
    popt.zero_grad()
    loss.backward()
    popt.step()
    print(f"a2c {it} shape {tuple(batch_a.shape)} mean-action {batch_a.mean().item():.4f} loss {loss.item():.5g}")

# --- SAC's squashed Gaussian policy with an automatic temperature ----------------------------------------------
class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 32)
        self.mu, self.log_std = nn.Linear(32, 1), nn.Linear(32, 1)

    def forward(self, x):
        h = F.relu(self.fc(x))
        std = self.log_std(h).clamp(-20, 2).exp()
        normal = Normal(self.mu(h), std)
        x_t = normal.rsample()
        y_t = torch.tanh(x_t)
        logp = (normal.log_prob(x_t) - torch.log(1 - y_t.pow(2) + 1e-6)).sum(1, keepdim=True)
        return 2.0 * y_t, logp


pol = Policy()
q = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 1))
q_target = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 1))
q_target.load_state_dict(q.state_dict())
log_alpha = torch.zeros(1, requires_grad=True)
opts = [optim.Adam(m, lr=3e-3) for m in (pol.parameters(), q.parameters(), [log_alpha])]
states = torch.tensor(np.array([penv.reset() for _ in range(16)]))
for step in range(4):
    with torch.no_grad():
        a2, lp2 = pol(states)
        target = -0.1 + 0.99 * (q_target(torch.cat([states, a2], 1)) - log_alpha.exp() * lp2)
    a_buf = torch.FloatTensor(np.random.RandomState(step).uniform(-2, 2, (16, 1)))
    q_loss = F.mse_loss(q(torch.cat([states, a_buf], 1)), target)
    opts[1].zero_grad()
    q_loss.backward()
    opts[1].step()
    a, lp = pol(states)
    pi_loss = (log_alpha.exp().detach() * lp - q(torch.cat([states, a], 1))).mean()
    opts[0].zero_grad()
    pi_loss.backward()
    opts[0].step()
    alpha_loss = -(log_alpha * (lp + -1.0).detach()).mean()
    opts[2].zero_grad()
    alpha_loss.backward()
    opts[2].step()
    for tp, p in zip(q_target.parameters(), q.parameters()):
        tp.data.copy_(0.99 * tp.data + 0.01 * p.data)
    print(f"sac {step} q {q_loss.item():.3g} pi {pi_loss.item():.3g} alpha {log_alpha.exp().item():.4g}")   # (tanh near 1: ulps grow)

# --- a MultivariateNormal policy with a diagonal covariance, evaluated on stored actions -----------------------
mean_net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 2), nn.Tanh())
var = torch.full((2,), 0.36)
with torch.no_grad():
    dist = MultivariateNormal(mean_net(states[:1]), torch.diag(var).unsqueeze(0))
    stored = [dist.sample() for _ in range(5)]
old = torch.squeeze(torch.stack(stored, dim=0))
mean = mean_net(states[:5])
dist = MultivariateNormal(mean, torch.diag_embed(var.expand_as(mean)))
lp, ent = dist.log_prob(old), dist.entropy()
(-lp.mean() - 0.01 * ent.mean()).backward()
print("mvn", old.shape, lp.detach().numpy().round(4), ent[0].item().__round__(5),
      mean_net[0].weight.grad.abs().sum().item().__round__(5))
print("numpy", np.asarray(old).dtype, np.asarray(lp.detach()).shape, old.detach().cpu().numpy().flatten()[:3].round(4))
