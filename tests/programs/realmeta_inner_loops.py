"""Meta-learning inner loops of the kinds higher, learn2learn, hypertorch and the classic MAML ports write: a
network kept as an explicit list of fast weights (conv with one input channel, ``F.batch_norm`` in training mode on
running buffers, ``F.linear``) adapted by ``autograd.grad(create_graph=True)``; a monkeypatched copy whose
differentiable Adam step is written with addcdiv-style arithmetic; a per-parameter learned learning rate trained by
the hypergradient through one step; iMAML's implicit hypergradient by conjugate gradient on Hessian-vector products
flattened with ``view(-1)``; and the ``torch.optim._functional`` rules driving an outer loop on parameter lists.
Seeded with ``torch.manual_seed`` alone."""

import torch
import torch.nn.functional as F
from torch.optim import _functional as OF

torch.manual_seed(0)


def make_vars(ways):
    w1 = torch.empty(6, 1, 3, 3)
    torch.nn.init.kaiming_normal_(w1)
    w2 = torch.empty(ways, 6 * 4)
    torch.nn.init.kaiming_normal_(w2)
    vs = [w1, torch.ones(6), torch.zeros(6), w2, torch.zeros(ways)]     # no conv bias: batch norm follows
    return [torch.nn.Parameter(v) for v in vs]


running = [torch.zeros(6), torch.ones(6)]


def forward(x, vs, bn_training=True):
    w1, g, beta, w2, b2 = vs
    x = F.conv2d(x, w1, None, stride=2)
    x = F.batch_norm(x, running[0], running[1], weight=g, bias=beta, training=bn_training)
    x = F.max_pool2d(F.relu(x), 2)
    return F.linear(x.view(x.size(0), -1), w2, b2)


def task(n_way=3, shots=2):
    protos = torch.rand(n_way, 1, 11, 11)
    y = torch.arange(n_way).repeat_interleave(shots)
    return protos[y] + 0.3 * torch.randn(len(y), 1, 11, 11), y


meta_vars = make_vars(3)
meta_opt = torch.optim.Adam(meta_vars, lr=1e-2)
for step in range(3):
    meta_opt.zero_grad()
    losses, accs = [], []
    for t in range(2):
        (xs, ys), (xq, yq) = task(), task()
        fast = list(meta_vars)
        for _ in range(2):
            loss = F.cross_entropy(forward(xs, fast), ys)
            grads = torch.autograd.grad(loss, fast, create_graph=True)
            fast = [w - 0.4 * g for w, g in zip(fast, grads)]
        logits = forward(xq, fast)
        lq = F.cross_entropy(logits, yq)
        losses.append(lq)
        accs.append(torch.eq(F.softmax(logits, dim=1).argmax(dim=1), yq).sum().item() / len(yq))
    total = torch.stack(losses).mean()
    total.backward()
    meta_opt.step()
    print(f"maml step {step}: loss {total.item():.6f} acc {sum(accs) / len(accs):.4f} "
          f"grad {meta_vars[0].grad.norm().item():.6f} running {running[0].sum().item():.6f}")

# a monkeypatched functional copy stepped by a differentiable Adam (higher's update arithmetic)
net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
x, y = torch.randn(10, 4), torch.randint(0, 2, (10,))
params = list(net.parameters())
m = [torch.zeros_like(p) for p in params]
v = [torch.zeros_like(p) for p in params]
for k in range(1, 4):
    out = torch.func.functional_call(net, dict(zip([n for n, _ in net.named_parameters()], params)), (x,))
    grads = torch.autograd.grad(F.cross_entropy(out, y), params, create_graph=True)
    m = [mi.mul(0.9) + 0.1 * g for mi, g in zip(m, grads)]
    v = [vi.mul(0.999) + 0.001 * g * g for vi, g in zip(v, grads)]
    denom = [(vi / (1 - 0.999 ** k)).sqrt() + 1e-8 for vi in v]
    params = [p + (-0.05 / (1 - 0.9 ** k)) * (mi / d) for p, mi, d in zip(params, m, denom)]
final = F.cross_entropy(torch.func.functional_call(net, dict(zip([n for n, _ in net.named_parameters()], params)),
                                                   (x,)), y)
hyper = torch.autograd.grad(final, list(net.parameters()))
print("diff adam", round(final.item(), 6), [round(h.norm().item(), 6) for h in hyper])

# learned per-parameter learning rates (a LearnableOptimizer-style transform), trained through one step
lrs = [torch.nn.Parameter(torch.full_like(p, 0.1)) for p in net.parameters()]
lr_opt = torch.optim.SGD(lrs, lr=0.5)
for it in range(3):
    grads = torch.autograd.grad(F.cross_entropy(net(x), y), list(net.parameters()), create_graph=True)
    new = [p - lr * g for p, lr, g in zip(net.parameters(), lrs, grads)]
    names = [n for n, _ in net.named_parameters()]
    after = F.cross_entropy(torch.func.functional_call(net, dict(zip(names, new)), (x,)), y)
    lr_opt.zero_grad()
    after.backward()
    lr_opt.step()
    with torch.no_grad():
        for p, q in zip(net.parameters(), new):
            p.copy_(q)
    print(f"hypergrad lr {it}: {after.item():.6f} {torch.cat([lr.view(-1) for lr in lrs]).mean().item():.6f}")

# iMAML: implicit hypergradient by conjugate gradient on the Hessian of the regularised inner loss
meta = make_vars(3)
xs, ys = task()
xq, yq = task()
reg = 2.0


def inner_loss(ws, hs):
    return F.cross_entropy(forward(xs, ws), ys) + 0.5 * reg * sum(((w - h) ** 2).sum() for w, h in zip(ws, hs))


ws = [p.detach().clone().requires_grad_(True) for p in meta]
for _ in range(3):
    g = torch.autograd.grad(inner_loss(ws, meta), ws)
    ws = [(w - 0.1 * gi).detach().requires_grad_(True) for w, gi in zip(ws, g)]
outer = F.cross_entropy(forward(xq, ws), yq)
b = torch.autograd.grad(outer, ws)
flat = torch.cat([t.view(-1) for t in b])
grad_w = torch.autograd.grad(inner_loss(ws, [h.detach() for h in meta]), ws, create_graph=True)


def hvp(vec):
    parts, k = [], 0
    for w in ws:
        parts.append(vec[k:k + w.numel()].view_as(w))
        k += w.numel()
    return torch.cat([h.view(-1) for h in torch.autograd.grad(grad_w, ws, parts, retain_graph=True)])


xk, r = torch.zeros_like(flat), flat.clone()
p = r.clone()
for _ in range(4):
    Ap = hvp(p)
    alpha = r.dot(r) / p.dot(Ap)
    xk, r_new = xk + alpha * p, r - alpha * Ap
    p, r = r_new + (r_new.dot(r_new) / r.dot(r)) * p, r_new
print("imaml cg", round(outer.item(), 6), round(xk.norm().item(), 5), round(r.norm().item(), 6))
meta_grad = reg * xk      # d outer / d meta through the implicit function, as hypertorch's CG assigns it
k = 0
for w in meta:
    w.grad = meta_grad[k:k + w.numel()].view_as(w).clone()
    k += w.numel()
print("meta grads", [round(w.grad.abs().sum().item(), 5) for w in meta])

# the functional optimizer rules on parameter lists (as functional-optimizer wrappers call them)
ps = [w.detach().clone() for w in meta]
gs = [w.grad for w in meta]
steps = [torch.tensor(0.0) for _ in ps]
sums = [torch.zeros_like(q) for q in ps]
OF.adagrad(ps, gs, sums, steps, lr=0.1, weight_decay=0.0, lr_decay=0.0, eps=1e-10, maximize=False)
sq, ga, buf = [torch.zeros_like(q) for q in ps], [torch.zeros_like(q) for q in ps], [torch.zeros_like(q) for q in ps]
OF.rmsprop(ps, gs, sq, ga, buf, [torch.tensor(0.0) for _ in ps], lr=0.01, alpha=0.9, eps=1e-8, weight_decay=0.0,
           momentum=0.5, centered=True, maximize=False)
m1, u1 = [torch.zeros_like(q) for q in ps], [torch.zeros_like(q) for q in ps]
OF.adamax(ps, gs, m1, u1, [torch.tensor(0.0) for _ in ps], eps=1e-8, beta1=0.9, beta2=0.999, lr=0.01,
          weight_decay=0.0)
m2, v2, mp = [torch.zeros_like(q) for q in ps], [torch.zeros_like(q) for q in ps], [torch.ones(()) for _ in ps]
OF.nadam(ps, gs, m2, v2, mp, [torch.tensor(0.0) for _ in ps], beta1=0.9, beta2=0.999, lr=0.01, weight_decay=0.0,
         momentum_decay=4e-3, eps=1e-8)
OF.radam(ps, gs, [torch.zeros_like(q) for q in ps], [torch.zeros_like(q) for q in ps],
         [torch.tensor(0.0) for _ in ps], beta1=0.9, beta2=0.999, lr=0.01, weight_decay=0.0, eps=1e-8)
prev, sizes = [torch.zeros_like(q) for q in ps], [torch.full_like(q, 0.01) for q in ps]
OF.rprop(ps, gs, prev, sizes, [torch.tensor(0.0) for _ in ps], step_size_min=1e-6, step_size_max=50.0,
         etaminus=0.5, etaplus=1.2)
print("functional rules", [round(q.sum().item(), 5) for q in ps], steps[0].item(), round(mp[0].item(), 6))
