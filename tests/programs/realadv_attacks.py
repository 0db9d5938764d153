"""Adversarial attacks and adversarial training, condensed in the style of torchattacks / advertorch / the
fast-adversarial scripts: a small CNN trained on seeded data, then FGSM, PGD with a random start (Linf and L2,
per-sample norms, clamp to the image box), momentum iterative FGSM, a targeted PGD, Carlini-Wagner L2 in tanh space
with Adam and a binary search over the constant, DeepFool from a per-class Jacobian built by repeated backward
passes with retain_graph, an l1-ball projection by sort/cumsum/gather, an SPSA gradient estimate, and a few epochs of
"fast" FGSM adversarial training with tensor clamp bounds per channel and a cyclic learning rate. The sign of a
gradient decides every step, so the program runs in float64 (float32 sums may flip a near-zero sign)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
torch.manual_seed(3)
if torch.cuda.is_available():           # the usual guard; torchattacks seeds through torch.cuda.random
    torch.cuda.random.manual_seed(3)

mu = torch.tensor([0.5, 0.4, 0.3]).view(3, 1, 1)
std = torch.tensor([0.25, 0.2, 0.3]).view(3, 1, 1)
lo, hi = (0 - mu) / std, (1 - mu) / std


def clamp(x, lower, upper):
    return torch.max(torch.min(x, upper), lower)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(6, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2))
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.body(x).flatten(1))


protos = torch.rand(4, 3, 8, 8)
labels = torch.randint(0, 4, (24,))
images = (0.6 * protos[labels] + 0.4 * torch.rand(24, 3, 8, 8)).clamp(0, 1)
model = Net()
opt = torch.optim.Adam(model.parameters(), lr=0.02)
for step in range(40):
    loss = F.cross_entropy(model(images), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
model.eval()
for p in model.parameters():
    p.requires_grad_(False)
print(f"trained loss {loss.item():.6f}")
x, y = images[:8], labels[:8]


def report(name, adv, target=None):
    with torch.no_grad():
        pred = model(adv).argmax(1)
    hit = (pred == (y if target is None else target)).float().mean().item()
    d = (adv - x).flatten(1)
    print(f"{name:8s} acc={hit:.3f} linf={d.abs().max().item():.6f} l2={d.norm(dim=1).mean().item():.6f} "
          f"sum={adv.sum().item():.6f}")


def fgsm(x, y, eps):
    x = x.clone().requires_grad_(True)
    grad, = torch.autograd.grad(F.cross_entropy(model(x), y), x)
    return (x + eps * grad.sign()).clamp(0, 1).detach()


def pgd_linf(x, y, eps=0.1, alpha=0.03, steps=6, targeted=False):
    adv = (x + torch.empty_like(x).uniform_(-eps, eps)).clamp(0, 1).detach()
    for _ in range(steps):
        adv.requires_grad = True
        loss = F.cross_entropy(model(adv), y)
        grad = torch.autograd.grad(loss, adv, retain_graph=False, create_graph=False)[0]
        adv = adv.detach() + (-alpha if targeted else alpha) * grad.sign()
        delta = torch.clamp(adv - x, min=-eps, max=eps)
        adv = torch.clamp(x + delta, min=0, max=1).detach()
    return adv


def pgd_l2(x, y, eps=0.5, alpha=0.2, steps=5):
    n = x.size(0)
    delta = torch.empty_like(x).normal_()
    norms = delta.view(n, -1).norm(p=2, dim=1).view(n, 1, 1, 1)
    r = torch.zeros_like(norms).uniform_(0, 1)
    adv = torch.clamp(x + delta / norms * r * eps, 0, 1).detach()
    for _ in range(steps):
        adv.requires_grad_()
        grad = torch.autograd.grad(F.cross_entropy(model(adv), y), adv)[0]
        gnorm = torch.norm(grad.view(n, -1), p=2, dim=1) + 1e-10
        adv = adv.detach() + alpha * grad / gnorm.view(n, 1, 1, 1)
        delta = adv - x
        factor = torch.min(eps / delta.view(n, -1).norm(p=2, dim=1), torch.ones_like(gnorm))
        adv = torch.clamp(x + delta * factor.view(-1, 1, 1, 1), min=0, max=1).detach()
    return adv


def mifgsm(x, y, eps=0.1, alpha=0.02, steps=5, decay=1.0):
    momentum = torch.zeros_like(x)
    adv = x.clone()
    for _ in range(steps):
        adv.requires_grad = True
        grad = torch.autograd.grad(F.cross_entropy(model(adv), y), adv)[0]
        grad = grad / torch.mean(torch.abs(grad), dim=(1, 2, 3), keepdim=True)
        momentum = grad + momentum * decay
        adv = adv.detach() + alpha * momentum.sign()
        adv = torch.clamp(x + torch.clamp(adv - x, min=-eps, max=eps), 0, 1).detach()
    return adv


def cw_l2(x, y, c_init=0.5, kappa=0.0, steps=12, search=3, lr=0.05):
    n = x.size(0)
    lower, upper = torch.zeros(n), torch.full((n,), 1e10)
    const = torch.full((n,), c_init)
    best_l2, best_adv = torch.full((n,), 1e10), x.clone()
    onehot = torch.eye(4)[y]
    for _ in range(search):
        w = torch.atanh(torch.clamp(x * 2 - 1, -1 + 1e-6, 1 - 1e-6)).detach().requires_grad_(True)
        optimizer = torch.optim.Adam([w], lr=lr)
        for _ in range(steps):
            adv = (torch.tanh(w) + 1) / 2
            l2 = ((adv - x) ** 2).flatten(1).sum(1)
            logits = model(adv)
            real = (onehot * logits).sum(1)
            other = torch.max((1 - onehot) * logits - onehot * 1e4, dim=1)[0]
            f = torch.clamp(real - other, min=-kappa)
            loss = (l2 + const * f).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                ok = (logits.argmax(1) != y) & (l2 < best_l2)
                best_l2 = torch.where(ok, l2, best_l2)
                best_adv[ok] = adv.detach()[ok]
        success = best_l2 < 1e10
        upper = torch.where(success, torch.min(upper, const), upper)
        lower = torch.where(~success, torch.max(lower, const), lower)
        const = torch.where(upper < 1e9, (lower + upper) / 2, const * 10)
    print("cw const", [round(c, 6) for c in const.tolist()])
    return best_adv


def jacobian_rows(logits, inp):
    rows = []
    for k in range(logits.numel()):
        if inp.grad is not None:
            inp.grad.zero_()
        logits[k].backward(retain_graph=k + 1 < logits.numel())
        rows.append(inp.grad.clone().detach())
    return torch.stack(rows)


def deepfool(x, y, steps=8, overshoot=0.02):
    out = []
    for i in range(x.size(0)):
        img = x[i:i + 1].clone()
        for _ in range(steps):
            img.requires_grad_(True)
            fs = model(img)[0]
            if fs.argmax().item() != y[i].item():
                break
            ws = jacobian_rows(fs, img)
            others = [k for k in range(4) if k != y[i].item()]
            f_p, w_p = fs[others] - fs[y[i]], ws[others] - ws[y[i]]
            value = f_p.abs().detach() / w_p.flatten(1).norm(dim=1)
            j = value.argmin()
            delta = f_p[j].abs().detach() * w_p[j] / w_p[j].norm() ** 2
            img = (img.detach() + (1 + overshoot) * delta).clamp(0, 1)
        out.append(img.detach())
    return torch.cat(out)


def l1_project(v, z):
    """Project each row of v onto the l1 ball of radius z (sorting, cumulative sums, a gathered threshold)."""
    mu_, _ = v.abs().sort(1, descending=True)
    idx = torch.arange(1, v.size(1) + 1, dtype=v.dtype)
    st = (mu_.cumsum(1) - z) / idx
    u = (mu_ - st) > 0
    rho = (~u).cumsum(dim=1).eq(0).sum(1) - 1
    theta = st.gather(1, rho.unsqueeze(1)).clamp(min=0)
    proj = torch.sign(v) * torch.clamp(v.abs() - theta, min=0)
    inside = v.abs().sum(1, keepdim=True) <= z
    return torch.where(inside, v, proj)


def spsa_grad(x, y, delta=0.01, samples=8):
    xs = x.unsqueeze(0).expand(samples, *x.shape).contiguous()
    v = torch.empty_like(xs).bernoulli_().mul_(2).sub_(1)
    with torch.no_grad():
        fp = F.cross_entropy(model((xs + delta * v).flatten(0, 1)), y.repeat(samples), reduction="none")
        fm = F.cross_entropy(model((xs - delta * v).flatten(0, 1)), y.repeat(samples), reduction="none")
    diff = (fp - fm).view(samples, -1, 1, 1, 1)
    return (diff / (2 * delta) * v).mean(0)


report("clean", x)
report("fgsm", fgsm(x, y, 0.08))
report("pgd", pgd_linf(x, y))
target = (y + 1) % 4
report("pgd-tgt", pgd_linf(x, target, targeted=True), target)
report("pgd-l2", pgd_l2(x, y))
report("mifgsm", mifgsm(x, y))
report("cw", cw_l2(x, y))
report("deepfool", deepfool(x, y))
d = torch.randn(8, 3 * 8 * 8)
p = l1_project(d, 5.0)
print("l1 proj", [round(t, 6) for t in p.abs().sum(1).tolist()], f"{(p - d).norm().item():.6f}")
g = spsa_grad(x, y)
print(f"spsa sum={g.sum().item():.6f} cos={F.cosine_similarity(g.flatten(), fgsm(x, y, 1.0).sub(x).flatten(), 0).item():.6f}")

# "fast" FGSM adversarial training with a random start, in normalized space with per-channel tensor bounds
for p_ in model.parameters():
    p_.requires_grad_(True)
model.train()
xn = (images - mu) / std
eps, alpha = (8 / 255) / std, (10 / 255) / std
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
sched = torch.optim.lr_scheduler.CyclicLR(opt, base_lr=0.0, max_lr=0.05, step_size_up=3, step_size_down=3)
for epoch in range(2):
    total, correct = 0.0, 0
    for i in range(0, 24, 8):
        X, Y = xn[i:i + 8], labels[i:i + 8]
        delta = torch.zeros_like(X)
        for c in range(3):
            delta[:, c, :, :].uniform_(-eps[c][0][0].item(), eps[c][0][0].item())
        delta.data = clamp(delta, lo - X, hi - X)
        delta.requires_grad = True
        F.cross_entropy(model(X + delta), Y).backward()
        grad = delta.grad.detach()
        delta.data = clamp(delta + alpha * torch.sign(grad), -eps, eps)
        delta.data = clamp(delta, lo - X, hi - X)
        out = model(X + delta.detach())
        loss = F.cross_entropy(out, Y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        total += loss.item() * Y.size(0)
        correct += (out.max(1)[1] == Y).sum().item()
    print(f"epoch {epoch} lr={sched.get_last_lr()[0]:.6f} loss={total / 24:.6f} acc={correct / 24:.4f}")
