"""Mixture models and HMMs as small probabilistic codebases write them on plain torch: a Gaussian mixture fitted
by EM (diagonal and full covariances, log-responsibilities by logsumexp, a BIC with np.log(n) added to a
0-d tensor, Multinomial/MultivariateNormal sampling), a mixture density network trained by its negative
log-likelihood (log_softmax + Normal.log_prob + logsumexp, and the same through MixtureSameFamily), and a discrete
HMM trained through its log-domain forward algorithm, decoded by Viterbi and sampled by Categorical."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import (Categorical, Independent, MixtureSameFamily, Multinomial, MultivariateNormal,
                                 Normal)

torch.manual_seed(0)
np.random.seed(0)


# --- a Gaussian mixture by expectation-maximisation ---------------------------------------------------------
class EMMixture(nn.Module):
    def __init__(self, k, d, covariance="diag", eps=1e-6):
        super().__init__()
        self.k, self.d, self.covariance, self.eps = k, d, covariance, eps
        self.mu = nn.Parameter(torch.randn(1, k, d), requires_grad=False)
        if covariance == "diag":
            self.var = nn.Parameter(torch.ones(1, k, d), requires_grad=False)
        else:
            self.var = nn.Parameter(torch.eye(d).reshape(1, 1, d, d).repeat(1, k, 1, 1), requires_grad=False)
        self.pi = nn.Parameter(torch.Tensor(1, k, 1), requires_grad=False).fill_(1.0 / k)

    def log_gauss(self, x):                          # (n, 1, d) -> (n, k, 1)
        if self.covariance == "diag":
            prec = torch.rsqrt(self.var)
            sq = torch.sum((self.mu * self.mu + x * x - 2 * x * self.mu) * prec ** 2, dim=2, keepdim=True)
            log_det = torch.sum(torch.log(prec), dim=2, keepdim=True)
            return -0.5 * (self.d * math.log(2 * math.pi) + sq) + log_det
        diff = (x - self.mu).unsqueeze(-1)           # (n, k, d, 1)
        prec = torch.inverse(self.var)
        sq = (diff.transpose(-1, -2) @ prec @ diff).squeeze(-1)
        log_det = torch.stack([2 * torch.log(torch.diagonal(torch.linalg.cholesky(self.var[0, j]))).sum()
                               for j in range(self.k)]).view(1, self.k, 1)
        return -0.5 * (self.d * math.log(2 * math.pi) + sq + log_det)

    def e_step(self, x):
        weighted = self.log_gauss(x) + torch.log(self.pi)
        norm = torch.logsumexp(weighted, dim=1, keepdim=True)
        return torch.mean(norm), weighted - norm

    def m_step(self, x, log_resp):
        resp = torch.exp(log_resp)
        pi = torch.sum(resp, dim=0, keepdim=True) + self.eps
        mu = torch.sum(resp * x, dim=0, keepdim=True) / pi
        if self.covariance == "diag":
            var = torch.sum((x - mu) ** 2 * resp, dim=0, keepdim=True) / pi + self.eps
        else:
            outer = (x - mu).unsqueeze(-1).matmul((x - mu).unsqueeze(-2))
            var = torch.sum(outer * resp.unsqueeze(-1), dim=0, keepdim=True) / pi.unsqueeze(-1) \
                + torch.eye(self.d) * self.eps
        return pi / x.shape[0], mu, var

    def fit(self, x, n_iter=12):
        x = x.unsqueeze(1)
        ll = -np.inf
        for _ in range(n_iter):
            score, log_resp = self.e_step(x)
            self.pi.data, self.mu.data, self.var.data = self.m_step(x, log_resp)
            if torch.isinf(score.abs()) or torch.isnan(score):
                break
            delta, ll = score - ll, score
            if delta < 1e-5:
                break
        return ll

    def bic(self, x):
        n = x.shape[0]
        per_sample = torch.logsumexp(self.log_gauss(x.unsqueeze(1)) + torch.log(self.pi), dim=1)
        free = self.d * self.k + self.d + self.k - 1
        return -2.0 * per_sample.mean() * n + free * np.log(n)       # a NumPy float64 on a float32 0-d tensor

    def sample(self, n):
        counts = Multinomial(total_count=n, probs=self.pi.squeeze()).sample()
        y = torch.cat([torch.full([int(c)], j) for j, c in enumerate(counts)])
        xs = []
        for j in np.arange(self.k)[counts.numpy() > 0]:
            if self.covariance == "diag":
                xs.append(self.mu[0, j] + torch.randn(int(counts[j]), self.d) * torch.sqrt(self.var[0, j]))
            else:
                mvn = MultivariateNormal(self.mu[0, j], self.var[0, j])
                xs.append(torch.stack([mvn.sample() for _ in range(int(counts[j]))]))
        return torch.cat(xs), y


data = torch.Tensor(120, 2).normal_()
data[:60] = (data[:60] - 1) * math.sqrt(3)
data[60:] = (data[60:] + 1) * math.sqrt(2)
for cov in ("diag", "full"):
    gmm = EMMixture(2, 2, cov)
    ll = gmm.fit(data)
    labels = torch.max(gmm.log_gauss(data.unsqueeze(1)) + torch.log(gmm.pi), 1)[1].squeeze().type(torch.LongTensor)
    bic = gmm.bic(data)
    print(cov, "ll", ll, "bic", bic, bic.dtype, "labels", labels[:12].tolist(), labels.sum().item())
    print(" mu", gmm.mu.data.squeeze(0), "pi", gmm.pi.data.flatten())
    xs, ys = gmm.sample(6)
    print(" sample", xs.shape, ys.tolist(), xs.sum().item())


# --- a mixture density network --------------------------------------------------------------------------------
class MDN(nn.Module):
    def __init__(self, hidden, k):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.mu, self.sigma, self.logits = nn.Linear(hidden, k), nn.Linear(hidden, k), nn.Linear(hidden, k)
        self.unflatten = nn.Unflatten(-1, (k, 1))

    def forward(self, x):
        h = self.trunk(x)
        return (self.unflatten(self.mu(h)), self.unflatten(F.softplus(self.sigma(h)) + 1e-6),
                self.logits(h).unsqueeze(-1))


def mdn_nll(mu, sigma, logits, y):
    lp = Normal(mu, sigma).log_prob(y.unsqueeze(-2))
    return -torch.logsumexp(logits.log_softmax(-2) + lp, dim=-2).mean()


x = torch.rand(96, 1) * 2 - 1
y = torch.sin(3 * x) + 0.3 * torch.sign(torch.randn(96, 1)) + 0.05 * torch.randn(96, 1)
net = MDN(16, 3)
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(25):
    loss = mdn_nll(*net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 6 == 0:
        print("mdn step", step, round(loss.item(), 5))
mu, sigma, logits = net(x)
mix = MixtureSameFamily(Categorical(logits=logits.squeeze(-1)), Independent(Normal(mu, sigma), 1))
print("mixture nll", -mix.log_prob(y).mean(), "batch", mix.batch_shape, "event", mix.event_shape)
print("mixture mean/var", mix.mean[:3].flatten(), mix.variance[:3].flatten())
with torch.inference_mode():
    hard = F.gumbel_softmax(logits.squeeze(-1).expand(4, -1, -1), tau=1, hard=True, dim=-1)
    draws = (hard.unsqueeze(-1) * Normal(mu, sigma).sample((4,))).sum(-2)
print("gumbel draws", draws.shape, hard.sum().item(), draws.is_inference(), mix.sample((2,)).shape)


# --- an HMM by its forward algorithm ----------------------------------------------------------------------------
class HMM(nn.Module):
    def __init__(self, n_states, n_obs):
        super().__init__()
        self.prior = nn.Parameter(torch.randn(n_states))
        self.trans = nn.Parameter(torch.randn(n_states, n_states))
        self.emit = nn.Parameter(torch.randn(n_states, n_obs))

    def log_matmul(self, log_a, log_b):           # out[i, j] = logsumexp_k a[i, k] + b[k, j]
        return torch.logsumexp(log_a.unsqueeze(-1) + log_b.unsqueeze(-3), dim=-2)

    def forward(self, obs, lengths):
        log_t = F.log_softmax(self.trans, dim=0)
        log_e = F.log_softmax(self.emit, dim=1)
        alpha = torch.zeros(obs.shape[0], obs.shape[1], self.trans.shape[0])
        alpha[:, 0, :] = log_e[:, obs[:, 0]].transpose(0, 1) + F.log_softmax(self.prior, dim=0)
        for t in range(1, obs.shape[1]):
            alpha[:, t, :] = log_e[:, obs[:, t]].transpose(0, 1) \
                + self.log_matmul(log_t, alpha[:, t - 1, :].transpose(0, 1)).transpose(0, 1)
        return torch.gather(alpha.logsumexp(dim=2), 1, lengths.view(-1, 1) - 1)

    def viterbi(self, obs, lengths):
        log_t = F.log_softmax(self.trans, dim=0)
        log_e = F.log_softmax(self.emit, dim=1)
        delta = torch.zeros(obs.shape[0], obs.shape[1], self.trans.shape[0])
        psi = torch.zeros_like(delta).long()
        delta[:, 0, :] = log_e[:, obs[:, 0]].transpose(0, 1) + F.log_softmax(self.prior, dim=0)
        for t in range(1, obs.shape[1]):
            scores = log_t.unsqueeze(0) + delta[:, t - 1, :].unsqueeze(1)
            best, arg = torch.max(scores, dim=2)
            delta[:, t, :] = log_e[:, obs[:, t]].transpose(0, 1) + best
            psi[:, t, :] = arg
        paths = []
        for i in range(obs.shape[0]):
            path = [delta[i, lengths[i] - 1, :].max(dim=0)[1].item()]
            for t in range(lengths[i] - 1, 0, -1):
                path.insert(0, psi[i, t, path[0]].item())
            paths.append(path)
        return paths

    def sample(self, length):
        z = Categorical(F.softmax(self.prior, dim=0)).sample().item()
        xs = []
        for _ in range(length):
            xs.append(Categorical(F.softmax(self.emit, dim=1)[z]).sample().item())
            z = Categorical(F.softmax(self.trans, dim=0)[:, z]).sample().item()
        return xs


words = [[int(c) for c in np.random.randint(0, 5, np.random.randint(2, 7))] for _ in range(16)]
lengths = torch.tensor([len(w) for w in words])
obs = torch.stack([torch.tensor(w + [0] * (int(lengths.max()) - len(w))) for w in words])
hmm = HMM(4, 5)
opt = torch.optim.Adam(hmm.parameters(), lr=0.05, weight_decay=1e-5)
sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, "min", patience=1)
for epoch in range(6):
    loss = -hmm(obs, lengths).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step(loss.item())
    print("hmm epoch", epoch, round(loss.item(), 5), opt.param_groups[0]["lr"])
print("viterbi", hmm.viterbi(obs[:3], lengths[:3]), "sample", hmm.sample(8))
