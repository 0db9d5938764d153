"""Optimizer-collection surface, condensed: update rules written as torch.optim.Optimizer subclasses the way
optimizer libraries write them (a sign-momentum rule, a rectified Adam, AMSGrad through ``torch.max(..., out=)``,
a layer-wise trust ratio passed as a 0-d tensor ``alpha``, a per-layer gradient-norm moment kept as a 0-d state, a
factored second moment with ``rsqrt(out=)``, a Lookahead wrapper), run on the Rosenbrock and Beale benchmark
functions with ``create_graph=True`` and on a small classifier; then state-dict round trips (the loaded tensors are
shared, as torch shares them), ``__setstate__`` through ``super()``, deepcopy and step hooks. Float64, seeded."""
import copy
import math

import torch
import torch.nn as nn
from torch.optim.optimizer import Optimizer

torch.set_default_dtype(torch.float64)


class SignMomentum(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if not st:
                    st["m"] = torch.zeros_like(p)
                p.mul_(1 - group["lr"] * group["weight_decay"])
                direction = st["m"].clone().mul_(b1).add(p.grad, alpha=1 - b1).sign_()
                p.add_(direction, alpha=-group["lr"])
                st["m"].lerp_(p.grad, 1 - b2)
        return loss


class RectifiedAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, amsgrad=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, amsgrad=amsgrad))

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)

    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad.data
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = 0
                    st["exp_avg"] = torch.zeros_like(p.data, memory_format=torch.preserve_format)
                    st["exp_avg_sq"] = torch.zeros_like(p.data)
                    st["max_sq"] = torch.zeros_like(p.data)
                st["step"] += 1
                m, v = st["exp_avg"], st["exp_avg_sq"]
                m.mul_(b1).add_(g, alpha=1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                if group["amsgrad"]:
                    torch.max(st["max_sq"], v, out=st["max_sq"])
                    v = st["max_sq"]
                rho_inf = 2 / (1 - b2) - 1
                rho = rho_inf - 2 * st["step"] * b2 ** st["step"] / (1 - b2 ** st["step"])
                if rho > 4:
                    r = math.sqrt((rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho))
                    size = group["lr"] * r * math.sqrt(1 - b2 ** st["step"]) / (1 - b1 ** st["step"])
                    p.data.addcdiv_(m, v.sqrt().add_(group["eps"]), value=-size)
                else:
                    p.data.add_(m, alpha=-group["lr"] / (1 - b1 ** st["step"]))
        return loss


class TrustRatio(Optimizer):
    """Adam direction scaled per tensor by ||w|| / ||update|| (a 0-d tensor used as alpha)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def step(self, closure=None):
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if not st:
                    st["m"], st["v"] = torch.zeros_like(p), torch.zeros_like(p)
                st["m"].mul_(b1).add_(p.grad.data, alpha=1 - b1)
                st["v"].mul_(b2).addcmul_(p.grad.data, p.grad.data, value=1 - b2)
                upd = st["m"] / st["v"].sqrt().add(group["eps"])
                upd.add_(p.data, alpha=group["weight_decay"])
                w_norm, u_norm = torch.norm(p.data).clamp(0, 10), torch.norm(upd)
                trust = 1 if w_norm == 0 or u_norm == 0 else w_norm / u_norm
                st["trust"] = trust
                p.data.add_(upd, alpha=-group["lr"] * trust)


class LayerNormMoment(Optimizer):
    """The second moment is one number per tensor (the squared gradient norm), kept as a 0-d tensor."""

    def __init__(self, params, lr=0.01, betas=(0.95, 0.98), eps=1e-8):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps))

    def step(self, closure=None):
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad.data.clone()
                st = self.state[p]
                if not st:
                    st["m"] = torch.zeros_like(p.data)
                    st["v"] = torch.zeros([]).to(p.device)
                norm = torch.sum(torch.pow(g, 2))
                if st["v"] == 0:
                    st["v"].copy_(norm)
                else:
                    st["v"].mul_(b2).add_(norm, alpha=1 - b2)
                g.div_(st["v"].sqrt().add_(group["eps"]))
                st["m"].mul_(b1).add_(g)
                p.data.add_(st["m"], alpha=-group["lr"])


class Factored(Optimizer):
    """A row/column factored second moment for matrices, a full one for vectors; relative step sizes."""

    def __init__(self, params, lr=None, eps=(1e-30, 1e-3), clip=1.0, decay=-0.8):
        super().__init__(params, dict(lr=lr, eps=eps, clip=clip, decay=decay))

    @staticmethod
    def _rms(t):
        return t.norm(2) / (t.numel() ** 0.5)

    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad.data
                st = self.state[p]
                factored = g.dim() >= 2
                if not st:
                    st["step"] = 0
                    if factored:
                        st["row"] = torch.zeros(g.shape[:-1]).type_as(g)
                        st["col"] = torch.zeros(g.shape[:-2] + g.shape[-1:]).type_as(g)
                    else:
                        st["sq"] = torch.zeros_like(g)
                st["step"] += 1
                lr = min(1e-2, 1 / math.sqrt(st["step"])) * max(group["eps"][1], self._rms(p.data))
                beta2t = 1.0 - math.pow(st["step"], group["decay"])
                upd = g ** 2 + group["eps"][0]
                if factored:
                    st["row"].mul_(beta2t).add_(upd.mean(dim=-1), alpha=1 - beta2t)
                    st["col"].mul_(beta2t).add_(upd.mean(dim=-2), alpha=1 - beta2t)
                    r = (st["row"] / st["row"].mean(dim=-1)).rsqrt_().unsqueeze(-1)
                    torch.mul(r, st["col"].unsqueeze(-2).rsqrt(), out=upd)
                    upd.mul_(g)
                else:
                    st["sq"].mul_(beta2t).add_(upd, alpha=1 - beta2t)
                    torch.rsqrt(st["sq"], out=upd).mul_(g)
                upd.div_(max(1.0, self._rms(upd) / group["clip"]))
                p.data.add_(-upd.mul_(lr))


class Lookahead(Optimizer):
    def __init__(self, base, k=5, alpha=0.5):
        self.base, self.k, self.alpha = base, k, alpha
        super().__init__(base.param_groups, base.defaults)
        self.param_groups = base.param_groups
        self.state = base.state
        self.slow = [[p.detach().clone() for p in g["params"]] for g in self.param_groups]
        self.count = 0

    def step(self, closure=None):
        loss = self.base.step(closure)
        self.count += 1
        if self.count % self.k == 0:
            for group, slow in zip(self.param_groups, self.slow):
                for p, q in zip(group["params"], slow):
                    q.add_(p.data - q, alpha=self.alpha)
                    p.data.copy_(q)
        return loss


def rosenbrock(t):
    x, y = t
    return (1 - x) ** 2 + (y - x ** 2) ** 2


def beale(t):
    x, y = t
    return (1.5 - x + x * y) ** 2 + (2.25 - x + x * y ** 2) ** 2 + (2.625 - x + x * y ** 3) ** 2


makers = {
    "sign": lambda ps: SignMomentum(ps, lr=0.01),
    "radam": lambda ps: RectifiedAdam(ps, lr=0.01),
    "amsgrad": lambda ps: RectifiedAdam(ps, lr=0.01, amsgrad=True),
    "trust": lambda ps: TrustRatio(ps, lr=0.02, weight_decay=1e-3),
    "normmoment": lambda ps: LayerNormMoment(ps, lr=0.02),
    "factored": lambda ps: Factored(ps),
    "lookahead": lambda ps: Lookahead(RectifiedAdam(ps, lr=0.02), k=4),
}
for fname, f in (("rosenbrock", rosenbrock), ("beale", beale)):
    for name, make in makers.items():
        x = torch.tensor([1.5, 1.5]).requires_grad_(True)
        opt = make([x])
        for i in range(80):
            opt.zero_grad()
            val = f(x)
            val.backward(retain_graph=True, create_graph=True)
            opt.step()
        print(fname, name, [f"{v:.7g}" for v in x.tolist()], f"{val.item():.5e}")

torch.manual_seed(0)
X = torch.randn(96, 6)
Y = (X[:, 0] * X[:, 1] - X[:, 2] > 0).long()
for name, make in makers.items():
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 2))
    opt = make(model.parameters())
    for epoch in range(25):
        loss = nn.functional.cross_entropy(model(X), Y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    acc = (model(X).argmax(1) == Y).double().mean().item()
    print("clf", name, f"{loss.item():.8f}", acc)

# state dicts: resume a copy and follow the original step for step
torch.manual_seed(2)
w, b, inp = torch.randn(5, 3, requires_grad=True), torch.randn(5, requires_grad=True), torch.randn(3)


def closure_for(opt, w, b):
    def closure():
        opt.zero_grad()
        loss = (w.mv(inp) + b).pow(2).sum()
        loss.backward()
        return loss
    return closure


opt = RectifiedAdam([w, b], lr=0.01, amsgrad=True)
for _ in range(10):
    opt.step(closure_for(opt, w, b))
w2, b2 = w.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
opt2 = RectifiedAdam([w2, b2], lr=0.01, amsgrad=True)
saved = copy.deepcopy(opt.state_dict())
opt2.load_state_dict(saved)
print("shared state", opt2.state[w2]["exp_avg"] is saved["state"][0]["exp_avg"])
for _ in range(10):
    l1 = opt.step(closure_for(opt, w, b))
    l2 = opt2.step(closure_for(opt2, w2, b2))
print("resumed", l1.item(), l2.item(), torch.allclose(w, w2), saved["state"][0]["step"])
print("saved buffer moved with the copy", saved["state"][0]["exp_avg"].sum().item())

clone = copy.deepcopy(opt)
print("deepcopy", type(clone).__name__, clone.param_groups[0]["amsgrad"], sorted(clone.defaults))
calls = []
h = opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
opt.step(closure_for(opt, w, b))
h.remove()
opt.step(closure_for(opt, w, b))
print("hooks", calls, w.sum().item())
