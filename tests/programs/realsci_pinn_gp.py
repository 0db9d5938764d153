# Scientific-ML training code as it is written in PINN, Gaussian-process and Hamiltonian-NN repositories: a tanh
# MLP fitted to a PDE residual (second derivatives by autograd.grad with create_graph, Adam then L-BFGS with a
# strong-Wolfe line search), exact GP regression by hand (Cholesky factor, triangular and Cholesky solves, the log
# marginal likelihood, predictive variance), and a Hamiltonian network whose vector field is dH/dx turned by a
# symplectic matrix. Seeded with torch.manual_seed; float64 as PINN codes often set it.
import math

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
np.random.seed(0)
torch.set_default_dtype(torch.float64)


# ---- a physics-informed network for u'' = -pi^2 sin(pi x) on [0, 2], u(0) = u(2) = 0 ------------------------------
class MLP(nn.Module):
    def __init__(self, widths):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:]))
        for lin in self.layers:
            nn.init.xavier_normal_(lin.weight, gain=1.0)
            nn.init.zeros_(lin.bias)
        self.act = nn.Tanh()

    def forward(self, x):
        for lin in self.layers[:-1]:
            x = self.act(lin(x))
        return self.layers[-1](x)


def grad(out, wrt):
    return torch.autograd.grad(out, wrt, grad_outputs=torch.ones_like(out), create_graph=True, retain_graph=True)[0]


net = MLP([1, 16, 16, 1])
x_f = torch.linspace(0, 2, 41).reshape(-1, 1).requires_grad_(True)
x_b = torch.tensor([[0.0], [2.0]])
mse = nn.MSELoss(reduction="mean")


def pinn_loss():
    u = net(x_f)
    u_xx = grad(grad(u, x_f), x_f)
    residual = u_xx + math.pi ** 2 * torch.sin(math.pi * x_f)
    return mse(residual, torch.zeros_like(residual)) + mse(net(x_b), torch.zeros(2, 1))


adam = torch.optim.Adam(net.parameters(), lr=5e-3, betas=(0.9, 0.999), eps=1e-8, amsgrad=False)
for it in range(30):
    adam.zero_grad()
    loss = pinn_loss()
    loss.backward()
    adam.step()
    if it % 10 == 0:
        print(f"adam {it}: loss {loss.item():.6e}")
lbfgs = torch.optim.LBFGS(net.parameters(), lr=1, max_iter=15, max_eval=20, history_size=20,
                          tolerance_grad=1e-7, tolerance_change=0.5 * np.finfo(float).eps,
                          line_search_fn="strong_wolfe")
evals = []


def closure():
    lbfgs.zero_grad()
    loss = pinn_loss()
    loss.backward()
    evals.append(loss.item())
    return loss


lbfgs.step(closure)
print("lbfgs evals", len(evals), "first", round(evals[0], 6), "last", round(evals[-1], 6))
with torch.no_grad():
    xt = torch.linspace(0, 2, 5)[:, None]
    print("u(x)", net(xt).flatten(), "exact", torch.sin(math.pi * xt).flatten())
print("state", lbfgs.state_dict()["state"][0]["n_iter"], lbfgs.state[lbfgs._params[0]]["func_evals"])

# ---- exact GP regression with an RBF kernel, hyperparameters by the log marginal likelihood -----------------
X = torch.rand(25, 1) * 6 - 3
y = torch.sin(X) + 0.1 * torch.randn(25, 1)
log_ell = nn.Parameter(torch.tensor(np.log(0.7)))
log_sf = nn.Parameter(torch.tensor(0.0))
log_sn = nn.Parameter(torch.tensor(np.log(0.3)))


def rbf(A, B):
    sq = (A ** 2).sum(1, keepdim=True) + (B ** 2).sum(1, keepdim=True).T - 2 * A @ B.T
    return torch.exp(2 * log_sf) * torch.exp(-0.5 * sq.clamp_min(0) / torch.exp(2 * log_ell))


def neg_log_marginal():
    n = X.shape[0]
    K = rbf(X, X) + torch.exp(2 * log_sn) * torch.eye(n)
    L = torch.linalg.cholesky(K)
    alpha = torch.cholesky_solve(y, L)
    return 0.5 * (y.T @ alpha).squeeze() + torch.log(torch.diagonal(L)).sum() + 0.5 * n * math.log(2 * math.pi)


gp_opt = torch.optim.Adam([log_ell, log_sf, log_sn], lr=0.05)
for it in range(25):
    gp_opt.zero_grad()
    nlml = neg_log_marginal()
    nlml.backward()
    gp_opt.step()
    if it % 8 == 0:
        print(f"gp {it}: nlml {nlml.item():.6f} ell {log_ell.exp().item():.5f} sn {log_sn.exp().item():.5f}")
with torch.no_grad():
    Xs = torch.linspace(-3, 3, 7)[:, None]
    K = rbf(X, X) + torch.exp(2 * log_sn) * torch.eye(len(X))
    L = torch.linalg.cholesky(K)
    Ks = rbf(X, Xs)
    alpha = torch.cholesky_solve(y, L, upper=False)
    mean = Ks.T @ alpha
    v = torch.linalg.solve_triangular(L, Ks, upper=False)
    var = torch.exp(2 * log_sf) - (v * v).sum(0)
    print("mean", mean.flatten(), "std", var.clamp_min(1e-12).sqrt())
    sign, logabsdet = torch.linalg.slogdet(K)
    print("logdet", torch.logdet(K).item(), 2 * torch.log(torch.diag(L)).sum().item(), sign.item(), logabsdet.item())
    U = torch.linalg.cholesky(K, upper=True)
    print("upper", torch.allclose(U, L.mT), torch.cholesky_inverse(L)[0, :3], torch.cholesky_solve(y, U, upper=True)[:3, 0])
    L_ex, info = torch.linalg.cholesky_ex(-K)
    print("cholesky_ex info", info.item())
try:
    torch.linalg.cholesky(-torch.eye(3))
except torch.linalg.LinAlgError as e:
    print("LinAlgError", type(e).__name__, isinstance(e, RuntimeError), torch._C._LinAlgError is torch.linalg.LinAlgError)

# ---- a Hamiltonian network on the mass-spring system ----------------------------------------------------------
q = torch.rand(64, 1) * 2 - 1
p = torch.rand(64, 1) * 2 - 1
coords = torch.cat([q, p], dim=1).requires_grad_(True)
dcoords = torch.cat([p, -q], dim=1) * 2
M = torch.eye(2)
M = torch.cat([M[1:], -M[:1]])
hnn = MLP([2, 32, 32, 1])
opt = torch.optim.Adam(hnn.parameters(), lr=1e-3, weight_decay=1e-4)
for step in range(40):
    H = hnn(coords)
    dH = torch.autograd.grad(H.sum(), coords, create_graph=True)[0]
    field = dH @ M.t()
    loss = (field - dcoords).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    if step % 10 == 0:
        print(f"hnn {step}: {loss.item():.6e}")
F1, F2 = hnn(coords).split(1, 1) if hnn(coords).shape[1] == 2 else (hnn(coords), None)
print(torch.get_default_dtype(), "energy", F1[:4].flatten(), "tiled", M.unsqueeze(-1).tile(2).shape, M.tile(2, 1).sum().item(),
      "values is a method", callable(torch.mean(coords, dim=0).values))
