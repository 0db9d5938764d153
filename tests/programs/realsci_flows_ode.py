# Density models and continuous-time models as normalizing-flow, neural-ODE and Bayesian-NN repositories write
# them: RealNVP affine couplings with a parity swap and a logistic prior (TransformedDistribution of a Uniform by
# SigmoidTransform().inv), a MADE-masked autoregressive layer (MAF), a planar flow, an ActNorm initialised from the
# first batch, a neural ODE integrated by a hand-written RK4 and by a small adaptive Dormand-Prince loop (step-size
# control with .item() on the error norm), a Bayes-by-backprop layer (softplus scales by logaddexp, a
# two-Gaussian mixture prior, samples accumulated into preallocated tensors), and NumPy ufuncs applied to tensors.
# Seeded with torch.manual_seed.
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import MultivariateNormal, Normal, SigmoidTransform, TransformedDistribution, Uniform

torch.manual_seed(1)
torch.set_default_dtype(torch.float64)


def mixture(n):
    centers = torch.tensor([[0.0, -2.0], [0.0, 0.0], [2.0, 2.0], [-2.0, 2.0]])
    idx = torch.randint(0, 4, (n,))
    return centers[idx] + 0.5 * torch.randn(n, 2)


class MLP(nn.Module):
    def __init__(self, nin, nout, nh):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(nin, nh), nn.LeakyReLU(0.2), nn.Linear(nh, nh), nn.LeakyReLU(0.2),
                                 nn.Linear(nh, nout))

    def forward(self, x):
        return self.net(x)


class AffineHalf(nn.Module):
    def __init__(self, dim, parity, nh=16):
        super().__init__()
        self.parity = parity
        self.s = MLP(dim // 2, dim // 2, nh)
        self.t = MLP(dim // 2, dim // 2, nh)

    def forward(self, x):
        x0, x1 = x[:, ::2], x[:, 1::2]
        if self.parity:
            x0, x1 = x1, x0
        s, t = self.s(x0), self.t(x0)
        z1 = torch.exp(s) * x1 + t
        z = torch.cat([x0, z1], dim=1) if not self.parity else torch.cat([z1, x0], dim=1)
        return z, torch.sum(s, dim=1)

    def backward(self, z):
        z0, z1 = z[:, :1], z[:, 1:]
        if self.parity:
            z0, z1 = z1, z0
        s, t = self.s(z0), self.t(z0)
        x1 = (z1 - t) * torch.exp(-s)
        x = torch.cat([z0, x1], dim=1) if not self.parity else torch.cat([x1, z0], dim=1)
        return x, torch.sum(-s, dim=1)


class ActNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.s = nn.Parameter(torch.zeros(1, dim))
        self.t = nn.Parameter(torch.zeros(1, dim))
        self.ready = False

    def forward(self, x):
        if not self.ready:
            self.s.data = (-torch.log(x.std(dim=0, keepdim=True))).detach()
            self.t.data = (-(x * torch.exp(self.s)).mean(dim=0, keepdim=True)).detach()
            self.ready = True
        return x * torch.exp(self.s) + self.t, torch.sum(self.s, dim=1)


class MaskedLinear(nn.Linear):
    def __init__(self, nin, nout, mask):
        super().__init__(nin, nout)
        self.register_buffer("mask", mask)

    def forward(self, x):
        return F.linear(x, self.mask * self.weight, self.bias)


class MAF(nn.Module):
    def __init__(self, dim, nh=12):
        super().__init__()
        m_in = torch.arange(dim)
        m_h = torch.arange(nh) % (dim - 1)
        self.l1 = MaskedLinear(dim, nh, (m_h[:, None] >= m_in[None, :]).to(torch.get_default_dtype()))
        m_out = torch.arange(dim).repeat(2)
        self.l2 = MaskedLinear(nh, 2 * dim, (m_out[:, None] > m_h[None, :]).to(torch.get_default_dtype()))

    def forward(self, x):
        st = self.l2(torch.tanh(self.l1(x)))
        s, t = st.split(x.shape[1], dim=1)
        return x * torch.exp(s) + t, s.sum(dim=1)


class Planar(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.u = nn.Parameter(torch.randn(1, dim) * 0.1)
        self.w = nn.Parameter(torch.randn(1, dim) * 0.1)
        self.b = nn.Parameter(torch.zeros(1))

    def forward(self, z):
        wu = (self.w * self.u).sum()
        u_hat = self.u + (F.softplus(wu) - 1 - wu) * self.w / (self.w ** 2).sum()
        lin = z @ self.w.t() + self.b
        f = z + u_hat * torch.tanh(lin)
        psi = (1 - torch.tanh(lin) ** 2) * self.w
        return f, torch.log(torch.abs(1 + psi @ u_hat.t()) + 1e-8).squeeze(1)


def fit_flow(flows, prior, steps=25, lr=3e-3):
    model = nn.ModuleList(flows)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-5)
    for k in range(steps):
        x = mixture(64)
        log_det = torch.zeros(x.shape[0])
        for f in model:
            x, ld = f(x)
            log_det = log_det + ld
        loss = -torch.sum(prior.log_prob(x).view(x.size(0), -1).sum(1) + log_det)
        model.zero_grad()
        loss.backward()
        opt.step()
        if k % 8 == 0:
            print(type(flows[-1]).__name__, k, round(loss.item(), 6))
    return model


logistic = TransformedDistribution(Uniform(torch.zeros(2), torch.ones(2)), SigmoidTransform().inv)
gauss = MultivariateNormal(torch.zeros(2), torch.eye(2))
realnvp = fit_flow([ActNorm(2)] + [AffineHalf(2, i % 2) for i in range(4)], gauss)
with torch.no_grad():
    z = gauss.sample((5,))
    x = z
    for f in list(realnvp)[:0:-1]:
        x, _ = f.backward(x)
    print("realnvp sample", x, logistic.sample((2,)).shape, logistic.log_prob(torch.zeros(3, 2)))
fit_flow([MAF(2), MAF(2)], logistic)
fit_flow([Planar(2) for _ in range(4)], gauss)


# ---- neural ODE: RK4 with a fixed grid and an adaptive Dormand-Prince loop ----------------------------------
class ODEFunc(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 2))
        for m in self.net.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0, std=0.1)
                nn.init.constant_(m.bias, val=0)
        self.nfe = 0

    def forward(self, t, y):
        self.nfe += 1
        return self.net(y ** 3)


def rk4(func, y0, t):
    ys = [y0]
    for t0, t1 in zip(t[:-1], t[1:]):
        dt, y = t1 - t0, ys[-1]
        k1 = func(t0, y)
        k2 = func(t0 + dt / 2, y + dt / 2 * k1)
        k3 = func(t0 + dt / 2, y + dt / 2 * k2)
        k4 = func(t1, y + dt * k3)
        ys.append(y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
    return torch.stack(ys)


A = [[], [1 / 5], [3 / 40, 9 / 40], [44 / 45, -56 / 15, 32 / 9],
     [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
     [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656]]
B = [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]
E = [71 / 57600, 0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40]
C = [0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1]


def dopri5(func, y0, t0, t1, rtol=1e-5, atol=1e-6):
    t, y, dt, steps = float(t0), y0, 0.05, 0
    while t < float(t1) - 1e-12:
        dt = min(dt, float(t1) - t)
        ks = []
        for i in range(6):
            yi = y + dt * sum(a * k for a, k in zip(A[i], ks)) if i else y
            ks.append(func(torch.tensor(t + C[i] * dt), yi))
        y_new = y + dt * sum(b * k for b, k in zip(B, ks))
        ks.append(func(torch.tensor(t + dt), y_new))
        err = dt * sum(e * k for e, k in zip(E, ks))
        tol = atol + rtol * torch.max(y.abs(), y_new.abs())
        ratio = torch.linalg.vector_norm(err / tol) / math.sqrt(err.numel())
        if ratio.item() <= 1:
            t, y, steps = t + dt, y_new, steps + 1
        dt = dt * min(5.0, max(0.2, 0.9 * ratio.item() ** -0.2))
    return y, steps


true_A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]])
true_y0 = torch.tensor([[2.0, 0.0]])
t = torch.linspace(0.0, 2.0, 21)
with torch.no_grad():
    true_y = rk4(lambda t, y: torch.mm(y ** 3, true_A), true_y0, t)
func = ODEFunc()
opt = torch.optim.RMSprop(func.parameters(), lr=1e-3)
for itr in range(12):
    opt.zero_grad()
    s = torch.from_numpy(np.random.RandomState(itr).choice(np.arange(15, dtype=np.int64), 6, replace=False))
    batch_y0, batch_t = true_y[s], t[:6]
    batch_y = torch.stack([true_y[s + i] for i in range(6)], dim=0)
    loss = torch.mean(torch.abs(rk4(func, batch_y0, batch_t) - batch_y))
    loss.backward()
    opt.step()
    if itr % 4 == 0:
        print(f"node {itr}: {loss.item():.8f} nfe {func.nfe}")
y1, steps = dopri5(func, true_y0, 0.0, 2.0)
y1.sum().backward()
print("dopri5", y1, steps, func.net[0].weight.grad.norm().item())


# ---- Bayes by backprop --------------------------------------------------------------------------------------
class BayesLinear(nn.Module):
    def __init__(self, nin, nout):
        super().__init__()
        self.W_mu = nn.Parameter(torch.Tensor(nout, nin))
        self.W_rho = nn.Parameter(torch.Tensor(nout, nin))
        self.b_mu = nn.Parameter(torch.Tensor(nout))
        self.b_rho = nn.Parameter(torch.Tensor(nout))
        nn.init.kaiming_uniform_(self.W_mu, a=np.sqrt(5))
        fan_in, _ = nn.init._calculate_fan_in_and_fan_out(self.W_mu)
        nn.init.uniform_(self.b_mu, -1 / np.sqrt(fan_in), 1 / np.sqrt(fan_in))
        nn.init.uniform_(self.W_rho, -5, -4)
        nn.init.uniform_(self.b_rho, -5, -4)

    def forward(self, x):
        W_std = torch.logaddexp(torch.zeros(1), self.W_rho)
        b_std = torch.logaddexp(torch.zeros(1), self.b_rho)
        self.W = self.W_mu + torch.randn_like(self.W_rho) * W_std
        self.b = self.b_mu + torch.randn_like(self.b_rho) * b_std
        self.kl = (Normal(self.W_mu, W_std).log_prob(self.W).sum() + Normal(self.b_mu, b_std).log_prob(self.b).sum()
                   - self.log_prior(self.W) - self.log_prior(self.b))
        return F.linear(x, self.W, self.b)

    @staticmethod
    def log_prior(w):
        pi = torch.Tensor([0.5])
        return torch.sum(torch.logaddexp(torch.log(pi) + Normal(0, 1.0).log_prob(w),
                                         torch.log(1 - pi) + Normal(0, math.exp(-6)).log_prob(w)))


bnn = nn.Sequential(BayesLinear(2, 16), nn.ReLU(), BayesLinear(16, 4), nn.LogSoftmax(dim=-1))
opt = torch.optim.Adam(bnn.parameters(), lr=1e-2)
X = mixture(48)
y = (X[:, 0] > 0).long() + 2 * (X[:, 1] > 1).long()
for epoch in range(6):
    log_probs = torch.zeros(3, X.shape[0], 4)
    kls = torch.zeros(3)
    for i in range(3):
        log_probs[i] = bnn(X)
        kls[i] = sum(m.kl for m in bnn if isinstance(m, BayesLinear))
    nll = F.nll_loss(log_probs.mean(dim=0), y)
    loss = nll + 1e-3 * kls.mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    acc = (log_probs.mean(0).argmax(1) == y).double().mean().item()
    print(f"bnn {epoch}: loss {loss.item():.6f} kl {kls.mean().item():.4f} acc {acc:.4f}")
q, p = Normal(torch.tensor([0.3]), torch.tensor([0.8])), Normal(torch.tensor([0.0]), torch.tensor([1.0]))
print("kl", torch.distributions.kl_divergence(q, p), q.rsample((2,)).shape, q.entropy())


# ---- NumPy on tensors: a box density's constant by np.log of a tensor, and a NumPy-first helper that falls back
# to torch's functions when NumPy refuses a tensor that requires grad ------------------------------------------
class BoxBase(nn.Module):
    def __init__(self, d, low=-1.0, high=1.0):
        super().__init__()
        self.low, self.high = torch.tensor(low), torch.tensor(high)
        self.log_prob_val = -d * np.log(self.high - self.low)

    def log_prob(self, z):
        log_p = self.log_prob_val * torch.ones(z.shape[0])
        outside = torch.logical_or(z < self.low, z > self.high)
        log_p[torch.any(torch.reshape(outside, (z.shape[0], -1)), dim=-1)] = -np.inf
        return log_p


def polar_to_xy(ql):
    try:
        xy = np.zeros_like(ql)
        sin, cos = np.sin, np.cos
    except RuntimeError:
        xy = torch.zeros_like(ql)
        sin, cos = torch.sin, torch.cos
    xy[:, 0] = ql[:, 0] * sin(ql[:, 1])
    xy[:, 1] = -ql[:, 0] * cos(ql[:, 1])
    return xy


box = BoxBase(3)
print("box", box.log_prob_val, box.log_prob(torch.tensor([[0.5, 0.2, -0.1], [1.5, 0.0, 0.0]])))
ql = torch.tensor([[1.1, 0.5], [0.9, -0.3]])
polar = ql.clone().requires_grad_(True)
xy = polar_to_xy(polar)
xy.sum().backward()
print("polar", polar_to_xy(ql), xy, polar.grad, np.exp(ql), np.maximum.accumulate(ql[:, 1]))
