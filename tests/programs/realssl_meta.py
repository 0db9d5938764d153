"""Meta-learning surface, condensed: second-order MAML through hand-held fast weights (a config-driven learner
with an extra_repr), MAML through torch.func.functional_call, a learn2learn-style clone whose parameters are
rebound to differentiable updates, Meta-SGD's learned per-parameter step sizes, and a Reptile outer step."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(3)


def sine_task(n=10):
    amp, phase = torch.empty(1).uniform_(0.5, 3.0), torch.empty(1).uniform_(0.0, 3.1)
    x = torch.empty(2 * n, 1).uniform_(-4.0, 4.0)
    return x[:n], amp * torch.sin(x[:n] - phase), x[n:], amp * torch.sin(x[n:] - phase)


class Learner(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.vars = nn.ParameterList()
        for name, shape in config:
            if name == "linear":
                w = nn.Parameter(torch.ones(*shape))
                nn.init.kaiming_normal_(w)
                self.vars.extend([w, nn.Parameter(torch.zeros(shape[0]))])

    def extra_repr(self):
        return "".join(f"{name}:{tuple(shape)}\n" for name, shape in self.config)

    def forward(self, x, vars=None):
        vars = self.vars if vars is None else vars
        i = 0
        for name, _ in self.config:
            if name == "linear":
                x = F.linear(x, vars[i], vars[i + 1])
                i += 2
            else:
                x = F.relu(x)
        return x

    def parameters(self):
        return self.vars


net = Learner([("linear", [16, 1]), ("relu", []), ("linear", [16, 16]), ("relu", []), ("linear", [1, 16])])
print(net)
meta_opt = torch.optim.Adam(net.parameters(), lr=3e-3)
for it in range(4):
    outer = 0.0
    for _ in range(3):
        xs, ys, xq, yq = sine_task()
        fast = list(net.parameters())
        for _ in range(2):
            grads = torch.autograd.grad(F.mse_loss(net(xs, fast), ys), fast, create_graph=True)
            fast = [w - 0.01 * g for g, w in zip(grads, fast)]
        outer = outer + F.mse_loss(net(xq, fast), yq)
    meta_opt.zero_grad()
    (outer / 3).backward()
    gn = torch.nn.utils.clip_grad_norm_(net.parameters(), 10.0)
    meta_opt.step()
    print("maml", it, round(outer.item() / 3, 5), round(gn.item(), 5))

# torch.func.functional_call over a module's named parameters
model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for it in range(3):
    xs, ys, xq, yq = sine_task()
    params = dict(model.named_parameters())
    inner = F.mse_loss(functional_call(model, params, (xs,)), ys)
    grads = torch.autograd.grad(inner, list(params.values()), create_graph=True)
    adapted = {k: v - 0.05 * g for (k, v), g in zip(params.items(), grads)}
    outer = F.mse_loss(functional_call(model, adapted, (xq,)), yq)
    opt.zero_grad()
    outer.backward()
    opt.step()
    print("func", it, round(inner.item(), 5), round(outer.item(), 5), round(model[0].weight.grad.norm().item(), 5))


def clone_module(module):
    """learn2learn-style: a shallow copy whose parameters are `.clone()`s, still in the original's graph."""
    clone = copy.copy(module)
    clone._parameters = {k: (p.clone() if p is not None else None) for k, p in module._parameters.items()}
    clone._modules = {k: clone_module(m) for k, m in module._modules.items()}
    return clone


def update_module(module, updates):
    for (name, p), u in zip(list(module._parameters.items()), updates[:len(module._parameters)]):
        module._parameters[name] = p + u
    updates = updates[len(module._parameters):]
    for m in module._modules.values():
        updates = update_module(m, updates)
    return updates


base = nn.Sequential(nn.Linear(1, 12), nn.ReLU(), nn.Linear(12, 1))
log_lrs = nn.ParameterList([nn.Parameter(torch.full_like(p, -3.0)) for p in base.parameters()])  # Meta-SGD
opt = torch.optim.Adam(list(base.parameters()) + list(log_lrs.parameters()), lr=1e-3)
for it in range(3):
    xs, ys, xq, yq = sine_task()
    learner = clone_module(base)
    loss = F.mse_loss(learner(xs), ys)
    grads = torch.autograd.grad(loss, list(learner.parameters()), create_graph=True, allow_unused=True)
    update_module(learner, [-lr.exp() * g for lr, g in zip(log_lrs, grads)])
    q = F.mse_loss(learner(xq), yq)
    opt.zero_grad()
    q.backward()
    opt.step()
    print("metasgd", it, round(loss.item(), 5), round(q.item(), 5), round(log_lrs[0].grad.sum().item(), 6),
          learner[0].weight.grad_fn is not None, base[0].weight.grad.shape)

# Reptile: adapt a deep copy with plain SGD, then move the initialisation toward it
meta = nn.Sequential(nn.Linear(1, 12), nn.ReLU(), nn.Linear(12, 1))
for it in range(3):
    xs, ys, _, _ = sine_task()
    fast = copy.deepcopy(meta)
    inner = torch.optim.SGD(fast.parameters(), lr=0.02)
    for _ in range(3):
        inner.zero_grad()
        F.mse_loss(fast(xs), ys).backward()
        inner.step()
    with torch.no_grad():
        for p, q in zip(meta.parameters(), fast.parameters()):
            p.add_(q - p, alpha=0.5)
    print("reptile", it, round(sum(p.sum() for p in meta.parameters()).item(), 5))
