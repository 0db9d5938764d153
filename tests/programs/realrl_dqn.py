"""Value-based RL the way single-file DQN scripts write it: a seeded toy cart-pole in NumPy, a deque replay buffer
sampled with `random`, a Q-network and its target copy, TD targets by gather/max, Huber loss, double-DQN action
selection, soft target updates in place, a prioritised loss with importance weights, and a C51 distributional
projection with index_add_. Seeded with torch.manual_seed (actions, exploration) and NumPy (the environment)."""
import collections
import math
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

random.seed(3)
torch.manual_seed(3)


class CartPole:
    """Euler-integrated cart-pole; observations float32, reward 1 per step, done past the angle/position limits."""

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.state = self.rng.uniform(-0.05, 0.05, size=4)
        self.t = 0
        return self.state.astype(np.float32)

    def step(self, action):
        x, v, th, w = self.state
        force = 10.0 if int(action) == 1 else -10.0
        c, s = math.cos(th), math.sin(th)
        tmp = (force + 0.05 * w * w * s) / 1.1
        acc_th = (9.8 * s - c * tmp) / (0.5 * (4.0 / 3.0 - 0.1 * c * c / 1.1))
        acc_x = tmp - 0.05 * acc_th * c / 1.1
        self.state = np.array([x + 0.02 * v, v + 0.02 * acc_x, th + 0.02 * w, w + 0.02 * acc_th])
        self.t += 1
        done = abs(self.state[0]) > 2.4 or abs(self.state[2]) > 0.21 or self.t >= 100
        return self.state.astype(np.float32), 1.0, done


class Replay:
    def __init__(self, limit):
        self.buffer = collections.deque(maxlen=limit)

    def put(self, transition):
        self.buffer.append(transition)

    def sample(self, n):
        batch = random.sample(self.buffer, n)
        s, a, r, s2, m = zip(*batch)
        # a list of float32 arrays, a list of [0-d tensor or int] rows, Python floats
        return (torch.tensor(s, dtype=torch.float), torch.tensor([[x] for x in a]), torch.tensor(r).unsqueeze(1),
                torch.tensor(np.array(s2)), torch.tensor(m).unsqueeze(1))

    def __len__(self):
        return len(self.buffer)


class QNet(nn.Module):
    def __init__(self, n_out=2):
        super().__init__()
        self.fc1, self.fc2, self.out = nn.Linear(4, 64), nn.Linear(64, 64), nn.Linear(64, n_out)

    def forward(self, x):
        return self.out(F.relu(self.fc2(F.relu(self.fc1(x)))))

    def act(self, obs, eps):
        if random.random() < eps:
            return random.randint(0, 1)
        with torch.no_grad():
            return self.forward(torch.from_numpy(obs)).argmax()      # a 0-d tensor goes into the buffer


def soft_update(target, source, tau):
    with torch.no_grad():
        for tp, p in zip(target.parameters(), source.parameters()):
            tp.mul_(1.0 - tau).add_(tau * p)


env, memory = CartPole(0), Replay(2000)
q, q_target = QNet(), QNet()
q_target.load_state_dict(q.state_dict())
opt = optim.Adam(q.parameters(), lr=1e-3)
gamma, score, losses, norm = 0.98, 0.0, [0.0], torch.tensor(0.0)
for episode in range(12):
    s, done = env.reset(), False
    while not done:
        a = q.act(s, eps=max(0.05, 0.3 - 0.02 * episode))
        s2, r, done = env.step(a)
        memory.put((s, a, r / 100.0, s2, 0.0 if done else 1.0))
        s, score = s2, score + r
    if len(memory) > 40:
        for k in range(4):
            st, at, rt, s2t, mt = memory.sample(32)
            q_a = q(st).gather(1, at)
            with torch.no_grad():
                if episode % 2:      # double DQN: the online net picks, the target net values
                    best = q(s2t).argmax(1, keepdim=True)
                    nxt = q_target(s2t).gather(1, best)
                else:
                    nxt = q_target(s2t).max(1)[0].unsqueeze(1)
            loss = F.smooth_l1_loss(q_a, rt + gamma * nxt * mt)
            opt.zero_grad()
            loss.backward()
            norm = nn.utils.clip_grad_norm_(q.parameters(), 10.0)
            opt.step()
            losses.append(loss.item())
        soft_update(q_target, q, 0.05)
    if episode % 3 == 2:
        print(f"episode {episode} score {score / 3:.1f} buffer {len(memory)} loss {np.mean(losses):.5g} "
              f"norm {norm.item():.5g}")
        score, losses = 0.0, [0.0]
print("actions", torch.tensor([[q.act(env.reset(), 0.0)] for _ in range(3)]).flatten().tolist())
print("target", sum(p.double().sum().item() for p in q_target.parameters()).__round__(4))

# prioritised replay: per-sample squared TD errors times importance weights; new priorities from the errors
prios = np.ones(len(memory), dtype=np.float32)
probs = prios ** 0.6 / (prios ** 0.6).sum()
idx = np.random.RandomState(1).choice(len(memory), 16, p=probs)
batch = [memory.buffer[i] for i in idx]
st = torch.FloatTensor(np.float32([b[0] for b in batch]))
at = torch.LongTensor([int(b[1]) for b in batch])
weights = torch.FloatTensor((len(memory) * probs[idx]) ** -0.4 / ((len(memory) * probs.min()) ** -0.4))
td = q(st).gather(1, at.unsqueeze(1)).squeeze(1) - torch.tensor([b[2] for b in batch])
loss = (td.pow(2) * weights).mean()
opt.zero_grad()
loss.backward()
print("prioritised", f"{loss.item():.5g}", (td.detach().abs() + 1e-5).numpy().round(4)[:4])

# C51: project the target distribution onto the fixed support
atoms, vmin, vmax, n = 11, -2.0, 2.0, 8
support = torch.linspace(vmin, vmax, atoms)
dist_net = QNet(2 * atoms)
st, at, rt, s2t, mt = memory.sample(n)
with torch.no_grad():
    nd = F.softmax(dist_net(s2t).view(-1, 2, atoms), dim=2)
    na = (nd * support).sum(2).max(1)[1]
    nd = nd.gather(1, na.view(-1, 1, 1).expand(n, 1, atoms)).squeeze(1)
    tz = (rt + mt * 0.99 * support.unsqueeze(0)).clamp(min=vmin, max=vmax)
    b = (tz - vmin) / ((vmax - vmin) / (atoms - 1))
    lo, hi = b.floor().long(), b.ceil().long()
    offset = torch.linspace(0, (n - 1) * atoms, n).long().unsqueeze(1).expand(n, atoms)
    proj = torch.zeros(n, atoms)
    proj.view(-1).index_add_(0, (lo + offset).view(-1), (nd * (hi.float() - b)).view(-1))
    proj.view(-1).index_add_(0, (hi + offset).view(-1), (nd * (b - lo.float())).view(-1))
logp = F.log_softmax(dist_net(st).view(-1, 2, atoms), dim=2)
logp = logp.gather(1, at.unsqueeze(1).expand(n, 1, atoms)).squeeze(1)
c51 = -(proj * logp).sum(1).mean()
c51.backward()
print("c51", f"{c51.item():.5g}", proj.sum(1).numpy().round(4), dist_net.out.bias.grad.abs().sum().item().__round__(5))
