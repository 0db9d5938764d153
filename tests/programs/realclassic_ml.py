"""Classic machine learning written on torch tensors (the shapes of kmeans/PCA/kNN/t-SNE snippets and from-scratch
course code): Lloyd's k-means with dead-centre reseeding and a scatter_add_ variant, k-means++ seeding by
Categorical, PCA three ways, a kNN vote by mode and by scatter_add_, ridge by solve/lstsq/Cholesky, logistic
regression by LBFGS with a strong-Wolfe line search, a hinge-loss SVM, Gaussian naive Bayes, a few t-SNE steps,
NMF by multiplicative updates, Fisher LDA by a general eigendecomposition and LOBPCG's random start."""
import torch
from torch.distributions import Categorical

torch.set_default_dtype(torch.float64)
torch.manual_seed(0)
N, D, K = 240, 5, 3
labels = torch.randint(0, K, (N,))
x = (torch.randn(K, D) * 4)[labels] + torch.randn(N, D)


def lloyd(points, k, steps=8):
    c = points[torch.randperm(len(points))[:k]]
    for _ in range(steps):
        assign = ((points[:, None, :] - c[None]) ** 2).sum(-1).argmin(1)
        c = torch.stack([points[assign == j].mean(0) for j in range(k)])
        dead = torch.any(torch.isnan(c), dim=1)
        c[dead] = points[torch.randperm(len(points))[:int(dead.sum().item())]]
    return c, assign


c, assign = lloyd(x, K)
print("lloyd", c.sum().item(), torch.bincount(assign, minlength=K).tolist())
c2 = x[:K].clone()
for _ in range(8):
    cl = torch.cdist(x, c2).argmin(dim=1)
    c2.zero_().scatter_add_(0, cl[:, None].repeat(1, D), x)
    c2 /= torch.bincount(cl, minlength=K).type_as(c2).view(K, 1)
print("scatter kmeans", c2.abs().sum().item(), cl[:8].tolist())
seeds = [torch.randint(0, N, (1,)).item()]
for _ in range(K - 1):
    d2 = torch.cdist(x, x[seeds]).min(dim=1).values ** 2
    seeds.append(Categorical(probs=d2 / d2.sum()).sample().item())
print("kmeans++", seeds, torch.multinomial(torch.ones(N), 4, replacement=False).tolist())

xc = x - x.mean(0, keepdim=True)
print("pca_lowrank", torch.pca_lowrank(x, q=3)[1].tolist())
_, S, Vh = torch.linalg.svd(xc, full_matrices=False)
print("svd", S.tolist(), (xc @ Vh[:2].T).var(0).tolist())
print("eigh", torch.linalg.eigh(torch.cov(x.T))[0].flip(0).tolist(), (S ** 2 / (S ** 2).sum()).cumsum(0).tolist())

train, test = slice(0, 160), slice(160, None)
near = torch.cdist(x[test], x[train]).topk(5, largest=False)
votes = labels[train][near.indices]
print("knn", (torch.mode(votes, dim=1).values == labels[test]).double().mean().item(),
      torch.zeros(80, K).scatter_add_(1, votes, torch.ones_like(votes, dtype=torch.get_default_dtype()))
      .argmax(1)[:10].tolist())

y = x @ torch.randn(D, 1) + 0.1 * torch.randn(N, 1)
A = x.T @ x + 0.1 * torch.eye(D)
print("ridge", torch.linalg.solve(A, x.T @ y).flatten().tolist())
print("lstsq", torch.linalg.lstsq(x, y).solution.flatten().tolist(), (torch.linalg.pinv(x) @ y).sum().item())
print("cholesky", torch.cholesky_solve(x.T @ y, torch.linalg.cholesky(A)).flatten().tolist())

target = ((labels == 0) ^ (torch.rand(N) < 0.2)).double()
lin = torch.nn.Linear(D, 1)
opt = torch.optim.LBFGS(lin.parameters(), lr=0.5, max_iter=10, history_size=5, line_search_fn="strong_wolfe")


def closure():
    opt.zero_grad()
    loss = torch.nn.functional.binary_cross_entropy_with_logits(lin(x).squeeze(1), target)
    loss.backward()
    return loss


for i in range(2):
    print("lbfgs", i, opt.step(closure).item())

sign = target * 2 - 1
svm = torch.nn.Linear(D, 1)
opt = torch.optim.SGD(svm.parameters(), lr=0.01, weight_decay=1e-3)
for epoch in range(5):
    order = torch.randperm(N)
    for i in range(0, N, 60):
        b = order[i:i + 60]
        loss = torch.clamp(1 - sign[b] * svm(x[b]).squeeze(), min=0).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
print("svm", loss.item(), svm.weight.detach().flatten().tolist())

mu = torch.stack([x[labels == k].mean(0) for k in range(K)])
var = torch.stack([x[labels == k].var(0, unbiased=False) for k in range(K)]) + 1e-9
log_prior = (torch.bincount(labels, minlength=K).double() / N).log()
ll = -0.5 * (torch.log(2 * torch.pi * var)[None] + (x[:, None] - mu[None]) ** 2 / var[None]).sum(-1) + log_prior
print("naive bayes", (ll.argmax(1) == labels).double().mean().item(), torch.logsumexp(ll, 1)[:3].tolist())

P = torch.softmax(-torch.cdist(x[:60], x[:60]) ** 2 / 8 - 1e9 * torch.eye(60), dim=1)
P = (P + P.t()) / (2 * 60)
Y = (torch.randn(60, 2) * 1e-2).requires_grad_(True)
opt = torch.optim.Adam([Y], lr=0.3)
for it in range(20):
    num = (1.0 / (1.0 + torch.cdist(Y, Y) ** 2)) * (1 - torch.eye(60))
    Q = torch.clamp(num / num.sum(), min=1e-12)
    kl = (P * (P.clamp(min=1e-12) / Q).log()).sum()
    opt.zero_grad()
    kl.backward()
    opt.step()
print("tsne", kl.item(), Y.detach().abs().mean().item())

V = torch.rand(20, 12)
W, H = torch.rand(20, 3), torch.rand(3, 12)
for _ in range(30):
    H *= (W.T @ V) / (W.T @ W @ H + 1e-9)
    W *= (V @ H.T) / (W @ H @ H.T + 1e-9)
print("nmf", torch.linalg.norm(V - W @ H, "fro").item())

Sw = sum((x[labels == k] - mu[k]).T @ (x[labels == k] - mu[k]) for k in range(K))
Sb = sum((labels == k).sum() * torch.outer(mu[k] - x.mean(0), mu[k] - x.mean(0)) for k in range(K))
evals = torch.linalg.eigvals(torch.linalg.inv(Sw) @ Sb).real
print("lda", evals.sort(descending=True).values[:2].tolist())
E, _ = torch.lobpcg(torch.cov(x.T) + torch.eye(D), k=1)
print("lobpcg", E.tolist(), torch.rand(2).tolist())
