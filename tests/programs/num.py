import numpy as np, torch
rng = np.random.default_rng(9)
A = torch.from_numpy(rng.standard_normal((20, 3))); y = A @ torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64) + 0.01
sol = torch.linalg.lstsq(A, y.unsqueeze(-1)).solution.squeeze(-1); print(sol)
w = torch.zeros(3, dtype=torch.float64, requires_grad=True)
opt = torch.optim.LBFGS([w], lr=1, max_iter=50, line_search_fn="strong_wolfe")
def closure():
    opt.zero_grad(); loss = ((A @ w - y) ** 2).mean(); loss.backward(); return loss
for _ in range(3): l = opt.step(closure)
print(w.detach(), l.item() < 1e-3)
x = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
for it in range(6):
    f = x ** 3 - 2 * x - 5
    g, = torch.autograd.grad(f, x, create_graph=True)
    with torch.no_grad(): x -= f / g
print(x.item())
def rosen(p): return (1 - p[0]) ** 2 + 100 * (p[1] - p[0] ** 2) ** 2
p = torch.tensor([-1.0, 1.0], dtype=torch.float64, requires_grad=True)
H = torch.autograd.functional.hessian(rosen, p); print(H)
J = torch.autograd.functional.jacobian(lambda v: torch.stack([v[0] * v[1], v[0] ** 2]), p); print(J)
print(torch.linalg.eigvalsh(H), torch.linalg.cond(H), torch.linalg.det(H), torch.linalg.matrix_rank(H))
u, s, vh = torch.linalg.svd(A, full_matrices=False); print(s)
q, r = torch.linalg.qr(A); print(torch.allclose(q @ r, A), r.diag().abs())
L = torch.linalg.cholesky(A.T @ A); print(L)
print(torch.linalg.solve(A.T @ A, A.T @ y), torch.linalg.pinv(A).shape, torch.linalg.inv(A.T @ A)[0])
opt2 = torch.optim.Adam([p], lr=0.05)
for _ in range(200):
    opt2.zero_grad(); rosen(p).backward(); opt2.step()
print(p.detach(), rosen(p).item())
