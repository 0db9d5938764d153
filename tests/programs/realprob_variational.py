"""Variational inference and state-space code on torch.distributions: a VAE whose encoder is an
Independent(Normal) and decoder an Independent(Bernoulli), trained against a standard, a mixture-of-Gaussians and
a VampPrior (analytic kl_divergence where one is registered, Monte Carlo otherwise); a mean-field Bayesian
logistic regression (rsample, kl_divergence between Normals, a NumPy-scalar KL weight); a tanh-squashed
TransformedDistribution and a low-rank Gaussian; a linear-Gaussian state-space model in float64 with its
covariances parametrised by register_parametrization, filtered and smoothed by Kalman's recursions and scored by
MultivariateNormal; and a probabilistic matrix factorisation with Gaussian and Poisson likelihoods."""

import math

import numpy as np
import torch
import torch.distributions as td
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.parametrize import register_parametrization

torch.manual_seed(0)


# --- a VAE with three priors ------------------------------------------------------------------------------------
class GaussianPrior(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.mean = nn.Parameter(torch.zeros(m), requires_grad=False)
        self.std = nn.Parameter(torch.ones(m), requires_grad=False)

    def forward(self):
        return td.Independent(td.Normal(self.mean, self.std), 1)


class MoGPrior(nn.Module):
    def __init__(self, m, k):
        super().__init__()
        self.means = nn.Parameter(torch.randn(k, m))
        self.log_stds = nn.Parameter(torch.zeros(k, m))
        self.logits = nn.Parameter(torch.zeros(k))

    def forward(self):
        comp = td.Independent(td.Normal(self.means, torch.exp(self.log_stds)), 1)
        return td.MixtureSameFamily(td.Categorical(logits=self.logits), comp)


class VampPrior(nn.Module):
    def __init__(self, k, encoder_net):
        super().__init__()
        self.encoder_net = encoder_net
        self.pseudo = nn.Parameter(torch.rand(k, 6, 6))
        self.register_buffer("logits", torch.zeros(k))

    def forward(self):
        mean, log_var = torch.chunk(self.encoder_net(self.pseudo), 2, dim=-1)
        comp = td.Independent(td.Normal(mean, torch.exp(0.5 * log_var)), 1)
        return td.MixtureSameFamily(td.Categorical(logits=self.logits), comp)


class VAE(nn.Module):
    def __init__(self, prior, encoder_net, decoder_net):
        super().__init__()
        self.prior, self.encoder_net, self.decoder_net = prior, encoder_net, decoder_net

    def encode(self, x):
        mean, log_var = torch.chunk(self.encoder_net(x), 2, dim=-1)
        log_var = torch.clamp(log_var, min=-20.0, max=20.0)
        return td.Independent(td.Normal(loc=mean, scale=torch.exp(0.5 * log_var)), 1)

    def elbo(self, x):
        q = self.encode(x)
        z = q.rsample()
        log_px = td.Independent(td.Bernoulli(logits=self.decoder_net(z)), 2).log_prob(x)
        prior = self.prior()
        if isinstance(prior, td.MixtureSameFamily):
            kl = q.log_prob(z) - prior.log_prob(z)
        else:
            kl = td.kl_divergence(q, prior)
        return torch.mean(log_px - kl, dim=0)

    def sample(self, n):
        return td.Independent(td.Bernoulli(logits=self.decoder_net(self.prior().sample(torch.Size([n])))), 2).sample()


images = (torch.rand(24, 6, 6) ** 2 > 0.5).float()
for name in ("gaussian", "mog", "vamp"):
    enc = nn.Sequential(nn.Flatten(), nn.Linear(36, 32), nn.ReLU(), nn.Linear(32, 4))
    dec = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 36), nn.Unflatten(-1, (6, 6)))
    prior = {"gaussian": lambda: GaussianPrior(2), "mog": lambda: MoGPrior(2, 3), "vamp": lambda: VampPrior(3, enc)}
    vae = VAE(prior[name](), enc, dec)
    opt = torch.optim.Adam(vae.parameters(), lr=1e-2)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images), batch_size=8, shuffle=True)
    for epoch in range(3):
        for (xb,) in loader:
            loss = -vae.elbo(xb)
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        print(name, "loss", round(loss.item(), 4), "elbo", vae.elbo(images).item(), "samples", vae.sample(3).sum().item())


# --- Bayes-by-backprop logistic regression ----------------------------------------------------------------------
X = torch.randn(64, 3)
w_true = torch.tensor([1.5, -2.0, 0.5])
Y = td.Bernoulli(logits=X @ w_true).sample()
q_mu = nn.Parameter(torch.zeros(3))
q_rho = nn.Parameter(torch.full((3,), -3.0))
prior = td.Normal(0.0, 1.0)
opt = torch.optim.Adam([q_mu, q_rho], lr=0.05)
kl_weight = np.float64(1.0) / len(X)                      # a NumPy scalar as the KL weight
for step in range(40):
    q = td.Normal(q_mu, F.softplus(q_rho))
    w = q.rsample((4,))                                    # 4 Monte Carlo draws
    ll = td.Bernoulli(logits=X @ w.T).log_prob(Y.unsqueeze(-1)).sum(0).mean()
    loss = -(ll / len(X)) + kl_weight * td.kl_divergence(q, prior).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 13 == 0:
        print("bbb", step, loss.dtype, round(loss.item(), 5))
print("posterior", q_mu.data, F.softplus(q_rho.data), td.kl_divergence(q, prior).sum().item())
probs = torch.sigmoid(X @ q.sample((50,)).T).mean(-1)
print("predictive", probs[:5], ((probs > 0.5).float() == Y).float().mean().item())

base = td.Independent(td.Normal(torch.zeros(2, 3), torch.ones(2, 3)), 1)
squashed = td.TransformedDistribution(base, [td.transforms.TanhTransform(cache_size=1),
                                             td.transforms.AffineTransform(loc=0.0, scale=2.0)])
a = squashed.rsample()
print("squashed", a, squashed.log_prob(a), squashed.batch_shape, squashed.event_shape)
lowrank = td.LowRankMultivariateNormal(torch.zeros(3), torch.randn(3, 1) * 0.5, torch.ones(3))
v = lowrank.sample((2,))
print("lowrank", v, lowrank.log_prob(v), lowrank.entropy(), lowrank.covariance_matrix.diagonal())
g = td.Gamma(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 0.5]))
print("gamma", g.rsample(), g.entropy(), td.kl_divergence(g, td.Gamma(1.0, 1.0)))


# --- a linear-Gaussian state-space model: Kalman filter and smoother ----------------------------------------------
torch.set_default_dtype(torch.float64)


class Diag(nn.Module):
    def forward(self, v):
        return torch.diag(v) ** 2

    def right_inverse(self, a):
        return torch.sqrt(torch.diag(a))


def random_model(dim):
    prior = nn.ParameterDict({"mean": nn.Parameter(torch.rand(dim)), "cov": nn.Parameter(torch.rand(dim))})
    transition = nn.ModuleDict({"map": nn.Linear(dim, dim)})
    transition.map.weight = nn.Parameter(torch.diag(torch.rand(dim)))
    transition.cov = nn.Parameter(torch.rand(dim))
    emission = nn.ModuleDict({"map": nn.Linear(dim, dim)})
    emission.cov = nn.Parameter(torch.rand(dim))
    model = nn.ModuleDict({"prior": prior, "transition": transition, "emission": emission})
    for part in (model.prior, model.transition, model.emission):
        register_parametrization(part, "cov", Diag())
        part.cov = torch.eye(torch.tensor(dim)) * 0.01
    return model


def kalman_filter(model, ys):
    A, C = model.transition.map.weight, model.emission.map.weight
    pred_means, pred_covs, means, covs = [], [], [], []
    ll = 0
    m, P = model.prior.mean, model.prior.cov
    for t in range(len(ys)):
        if t > 0:
            m, P = model.transition.map(means[-1]), A @ covs[-1] @ A.T + model.transition.cov
        pred_means.append(m)
        pred_covs.append(P)
        S = C @ P @ C.T + model.emission.cov
        ll = ll + td.MultivariateNormal(model.emission.map(m), covariance_matrix=S).log_prob(ys[t])
        K = P @ C.T @ torch.inverse(S)
        means.append(m + K @ (ys[t] - model.emission.map(m)))
        covs.append(P - K @ C @ P)
    return torch.stack(pred_means), torch.stack(pred_covs), torch.stack(means), torch.stack(covs), ll


def smooth(model, ys):
    pm, pc, fm, fc, _ = kalman_filter(model, ys)
    sm, sc = torch.zeros_like(fm), torch.zeros_like(fc)
    sm[-1], sc[-1] = fm[-1], fc[-1]              # (written into buffers, as the smoother is not differentiated)
    A = model.transition.map.weight
    for t in reversed(range(len(ys) - 1)):
        G = fc[t] @ A.T @ torch.linalg.inv(pc[t + 1])
        sm[t] = fm[t] + G @ (sm[t + 1] - pm[t + 1])
        sc[t] = fc[t] + G @ (sc[t + 1] - pc[t + 1]) @ G.T
    return sm, sc


true = random_model(2)
with torch.no_grad():
    z = td.MultivariateNormal(true.prior.mean, true.prior.cov).sample()
    ys = []
    for t in range(8):
        ys.append(td.MultivariateNormal(true.emission.map(z), true.emission.cov).sample())
        z = td.MultivariateNormal(true.transition.map(z), true.transition.cov).sample()
    ys = torch.stack(ys)
    print("ssm", ys.dtype, kalman_filter(true, ys)[-1])
learned = random_model(2)
print("parametrized", [n for n, _ in learned.named_parameters()][:3], learned.transition.cov.diagonal())
opt = torch.optim.Adam(learned.parameters(), lr=0.02)
for step in range(15):
    loss = -kalman_filter(learned, ys)[-1]
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print("kalman", step, round(loss.item(), 6))
sm, sc = smooth(learned, ys)
print("smoothed", sm[:3], sc[0])
torch.set_default_dtype(torch.float32)


# --- probabilistic matrix factorisation ---------------------------------------------------------------------------
R = torch.FloatTensor([[5, 3, 0, 1], [4, 0, 0, 1], [1, 1, 0, 5], [1, 0, 0, 4], [0, 1, 5, 4]])


def ll_gaussian(x, mu, sigma2, missing=False):
    w = (x != 0).float() if missing else 1.0
    return -0.5 * (math.log(2 * math.pi * sigma2) + torch.pow(x - mu, 2) / sigma2) * w


for likelihood in ("gaussian", "poisson"):
    P = nn.Parameter(torch.Tensor(2, 5).uniform_(0, 1))
    Q = nn.Parameter(torch.Tensor(2, 4).uniform_(0, 1))
    opt_p, opt_q = torch.optim.Adam([P], lr=0.02), torch.optim.Adam([Q], lr=0.02)
    for i in range(60):
        for opt in (opt_p, opt_q):
            opt.zero_grad()
            pred = torch.t(P) @ Q
            if likelihood == "gaussian":
                loss = -(ll_gaussian(R, pred, 1, True).sum() + ll_gaussian(P, 0, 1 / 0.003).sum()
                         + ll_gaussian(Q, 0, 1 / 0.003).sum())
            else:
                loss = -((R * torch.log(pred) - pred) * (R != 0).float()).sum()
            loss.backward()
            opt.step()
            P.data = torch.max(P.data, torch.zeros(P.data.size()))
            Q.data = torch.max(Q.data, torch.zeros(Q.data.size()))
    print(likelihood, "loss", round(loss.item(), 5), "pred", (torch.t(P) @ Q).data[0])
