"""Second-order minimisation as a scipy-like minimiser library on torch writes it (Hessians and Jacobians as
batched vector-Jacobian products through `torch._vmap_internals._vmap`, the standard basis from torch's own
private helper, a strong-Wolfe line search imported from `torch.optim.lbfgs`, Newton-CG and trust-free exact
Newton on Rosenbrock), then factorization-machine click models with field offsets (FM, field-aware FM,
DeepFM) trained on a random split of a synthetic ratings table. Seeded with torch.manual_seed alone."""

import numpy as np
import torch
from torch._vmap_internals import _vmap
from torch.autograd.functional import _construct_standard_basis_for
from torch.optim.lbfgs import _strong_wolfe

torch.manual_seed(0)


# --- a minimiser library -----------------------------------------------------------------------------------------
def rosen(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


class ScalarFunction:
    def __init__(self, fun, x_shape, hess=False):
        self.fun, self._I = fun, torch.eye(int(np.prod(x_shape)), dtype=torch.float64) if hess else None
        self.nfev = 0

    def closure(self, x):
        x = x.detach().requires_grad_(True)
        with torch.enable_grad():
            f = self.fun(x)
            grad = torch.autograd.grad(f, x, create_graph=self._I is not None)[0]
        self.nfev += 1
        hess = None
        if self._I is not None:
            hess = _vmap(lambda v: torch.autograd.grad(grad, x, v, retain_graph=True)[0])(self._I)
        return f.detach(), grad.detach(), hess

    def dir_evaluate(self, x, t, d):
        x = x + d.mul(t)
        f, g, _ = self.closure(x)
        return float(f), g


def jacobian_by_vmap(outputs, inputs):
    basis = _construct_standard_basis_for((outputs,), (outputs.numel(),))[0]
    rows = _vmap(lambda v: torch.autograd.grad(outputs.reshape(-1), inputs, v, retain_graph=True)[0])(basis)
    return rows.view(outputs.shape + inputs.shape)


def minimize_bfgs(fun, x0, max_iter=60):
    sf = ScalarFunction(fun, x0.shape)
    x = x0.detach().clone()
    f, g, _ = sf.closure(x)
    H = torch.eye(x.numel(), dtype=x.dtype)
    for n_iter in range(max_iter):
        d = -(H @ g)
        gtd = g.dot(d)
        t = min(1.0, 1.0 / g.abs().sum().item()) if n_iter == 0 else 1.0
        f_new, g_new, t, ls_evals = _strong_wolfe(sf.dir_evaluate, x, t, d, float(f), g, gtd)
        s = d.mul(t)
        x = x + s
        y = g_new - g
        rho = 1 / y.dot(s)
        I = torch.eye(x.numel(), dtype=x.dtype)
        H = (I - rho * torch.outer(s, y)) @ H @ (I - rho * torch.outer(y, s)) + rho * torch.outer(s, s)
        f, g = torch.tensor(f_new, dtype=x.dtype), g_new
        if g.abs().max() <= 1e-6:
            break
    return x, f, n_iter, sf.nfev


def minimize_newton_exact(fun, x0, max_iter=30):
    sf = ScalarFunction(fun, x0.shape, hess=True)
    x = x0.detach().clone()
    for n_iter in range(max_iter):
        f, g, H = sf.closure(x)
        if g.abs().max() <= 1e-10:
            break
        try:
            L = torch.linalg.cholesky(H)
            d = -torch.cholesky_solve(g[:, None], L).squeeze(1)
        except torch.linalg.LinAlgError:
            d = -torch.linalg.solve(H + 1e-3 * torch.eye(len(x), dtype=x.dtype), g)
        _, _, t, _ = _strong_wolfe(sf.dir_evaluate, x, 1.0, d, float(f), g, g.dot(d))
        x = x + t * d
    return x, sf.closure(x)[0], n_iter


def newton_cg_direction(hessp, g, max_iter=20):
    z, r = torch.zeros_like(g), g.clone()
    p, rs = -r, r.dot(r)
    for _ in range(max_iter):
        Bp = hessp(p)
        curv = p.dot(Bp)
        if curv <= 0:
            return -g if not z.any() else z
        alpha = rs / curv
        z, r = z + alpha * p, r + alpha * Bp
        rs_new = r.dot(r)
        if rs_new.sqrt() < 1e-10:
            break
        p, rs = -r + (rs_new / rs) * p, rs_new
    return z


x0 = torch.tensor([-1.2, 1.0, 0.5, -0.3], dtype=torch.float64)
x, f, nit, nfev = minimize_bfgs(rosen, x0)
print("bfgs", x.tolist(), f.item(), nit, nfev)
x, f, nit = minimize_newton_exact(rosen, x0)
print("newton-exact", x.tolist(), f.item(), nit)
xc = x0.clone()
for it in range(12):
    xr = xc.detach().requires_grad_(True)
    g = torch.autograd.grad(rosen(xr), xr, create_graph=True)[0]
    d = newton_cg_direction(lambda v: torch.autograd.grad(g, xr, v, retain_graph=True)[0], g.detach())
    sf = ScalarFunction(rosen, xc.shape)
    _, _, t, _ = _strong_wolfe(sf.dir_evaluate, xc, 1.0, d, rosen(xc).item(), g.detach(), g.detach().dot(d))
    xc = xc + t * d
print("newton-cg", xc.tolist(), rosen(xc).item())
w = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
out = torch.tanh(w @ x0)
J = jacobian_by_vmap(out, w)
print("jacobian", J.shape, J.abs().sum().item(),
      torch.allclose(J, torch.autograd.functional.jacobian(lambda w_: torch.tanh(w_ @ x0), w)))
H = _vmap(lambda v: torch.autograd.grad(torch.autograd.grad(rosen(x0.requires_grad_()), x0, create_graph=True)[0],
                                        x0, v)[0])(torch.eye(4, dtype=torch.float64)[:1])
print("hessian row", H.tolist())


# --- factorization machines ------------------------------------------------------------------------------------------
class FeaturesEmbedding(torch.nn.Module):
    def __init__(self, field_dims, embed_dim):
        super().__init__()
        self.embedding = torch.nn.Embedding(sum(field_dims), embed_dim)
        self.offsets = np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.long)
        torch.nn.init.xavier_uniform_(self.embedding.weight.data)

    def forward(self, x):
        return self.embedding(x + x.new_tensor(self.offsets).unsqueeze(0))


class FM(torch.nn.Module):
    def __init__(self, field_dims, embed_dim):
        super().__init__()
        self.linear = FeaturesEmbedding(field_dims, 1)
        self.bias = torch.nn.Parameter(torch.zeros((1,)))
        self.embedding = FeaturesEmbedding(field_dims, embed_dim)

    def forward(self, x):
        e = self.embedding(x)
        inter = 0.5 * (torch.sum(e, dim=1) ** 2 - torch.sum(e ** 2, dim=1)).sum(1, keepdim=True)
        return torch.sigmoid((torch.sum(self.linear(x), dim=1) + self.bias + inter).squeeze(1))


class FFM(torch.nn.Module):
    def __init__(self, field_dims, embed_dim):
        super().__init__()
        self.num_fields = len(field_dims)
        self.embeddings = torch.nn.ModuleList([FeaturesEmbedding(field_dims, embed_dim) for _ in field_dims])

    def forward(self, x):
        xs = [emb(x) for emb in self.embeddings]
        ix = torch.stack([xs[j][:, i] * xs[i][:, j] for i in range(self.num_fields - 1)
                          for j in range(i + 1, self.num_fields)], dim=1)
        return torch.sigmoid(ix.sum(dim=(1, 2)))


class DeepFM(FM):
    def __init__(self, field_dims, embed_dim, hidden, dropout):
        super().__init__(field_dims, embed_dim)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(len(field_dims) * embed_dim, hidden), torch.nn.LayerNorm(hidden),
                                       torch.nn.ReLU(), torch.nn.Dropout(dropout), torch.nn.Linear(hidden, 1))
        self.embed_output_dim = len(field_dims) * embed_dim

    def forward(self, x):
        fm = torch.logit(super().forward(x))
        return torch.sigmoid(fm + self.mlp(self.embedding(x).view(-1, self.embed_output_dim)).squeeze(1))


class Ratings(torch.utils.data.Dataset):
    def __init__(self, n=400):
        users, items, ctx = torch.randint(0, 20, (n,)), torch.randint(0, 30, (n,)), torch.randint(0, 4, (n,))
        self.items = torch.stack((users, items, ctx), 1).numpy()
        score = torch.sin(users * 0.7) + torch.cos(items * 1.3) + 0.3 * torch.randn(n)
        self.targets = (score > 0).numpy().astype(np.float32)
        self.field_dims = np.max(self.items, axis=0) + 1

    def __len__(self):
        return self.targets.shape[0]

    def __getitem__(self, i):
        return self.items[i], self.targets[i]


data = Ratings()
train_set, test_set = torch.utils.data.random_split(data, (320, 80))
train_loader = torch.utils.data.DataLoader(train_set, batch_size=64, shuffle=True)
test_loader = torch.utils.data.DataLoader(test_set, batch_size=80)
for name, model in (("fm", FM(data.field_dims, 8)), ("ffm", FFM(data.field_dims, 4)),
                    ("deepfm", DeepFM(data.field_dims, 8, 16, 0.2))):
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=1e-6)
    criterion = torch.nn.BCELoss()
    for epoch in range(2):
        model.train()
        total = 0.0
        for fields, target in train_loader:
            loss = criterion(model(fields), target.float())
            model.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        model.eval()
        with torch.no_grad():
            fields, target = next(iter(test_loader))
            pred = model(fields)
            acc = ((pred > 0.5).float() == target).float().mean().item()
        print(name, epoch, total, acc, pred[:3].tolist())
