"""Interpretability code of the usual shapes, condensed: vanilla saliency and gradient x input, SmoothGrad,
integrated gradients with a completeness check, Grad-CAM three ways (a forward hook plus a tensor hook, a full
backward hook, and old-style register_backward_hook on every module), guided backpropagation clamping grad_in on
in-place ReLUs, occlusion sensitivity, DeepDream-style input optimisation through a forward hook, then per-example
influence: an influence function (Hessian-vector products by double backward and a LiSSA recursion) and TracIn over
SGD checkpoints, with per-sample gradients both by a loop and by torch.func.vmap(grad(functional_call))."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

torch.manual_seed(5)


def vgg_like():
    return nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                         nn.Conv2d(6, 8, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(8, 8, 3, padding=1),
                         nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(32, 5))


def stats(name, t):
    t = t.detach()
    print(f"{name:14s} shape={tuple(t.shape)} sum={t.sum().item():.6g} abs={t.abs().sum().item():.6g} "
          f"max={t.max().item():.6g}")


model = vgg_like().eval()
img = torch.rand(1, 3, 12, 12)
with torch.no_grad():
    cls = model(img).argmax(1).item()
print("class", cls)

# vanilla saliency, gradient x input
x = img.clone().requires_grad_(True)
model(x)[0, cls].backward()
stats("saliency", x.grad.abs().max(dim=1)[0])
stats("grad*input", x.grad * x.detach())

# SmoothGrad
total = torch.zeros_like(img)
sigma = 0.15 * (img.max() - img.min()).item()
for _ in range(6):
    noisy = (img + torch.randn_like(img) * sigma).requires_grad_(True)
    model(noisy)[0, cls].backward()
    total += noisy.grad
stats("smoothgrad", total / 6)

# integrated gradients (right Riemann sum from a black baseline) and its completeness gap
baseline = torch.zeros_like(img)
alphas = torch.linspace(0, 1, 17)[1:].view(-1, 1, 1, 1)
path = (baseline + alphas * (img - baseline)).requires_grad_(True)
scores = model(path)[:, cls]
grads, = torch.autograd.grad(scores.sum(), path)
ig = (img - baseline) * grads.mean(0, keepdim=True)
with torch.no_grad():
    gap = model(img)[0, cls] - model(baseline)[0, cls] - ig.sum()
stats("integrated", ig)
print(f"completeness gap {gap.item():.6f}")

# Grad-CAM 1: forward hook keeps the activation, a tensor hook its gradient
store = {}


def keep(module, inp, out):
    store["act"] = out
    out.register_hook(lambda g: store.__setitem__("grad", g))


h = model[5].register_forward_hook(keep)
out = model(img)
model.zero_grad()
one_hot = torch.zeros_like(out)
one_hot[0, cls] = 1
out.backward(gradient=one_hot, retain_graph=True)
h.remove()
weights = store["grad"].mean(dim=(2, 3), keepdim=True)
cam = F.relu((weights * store["act"]).sum(1, keepdim=True))
cam = F.interpolate(cam, size=img.shape[2:], mode="bilinear", align_corners=False)
cam = (cam - cam.min()) / (cam.max() - cam.min() + 1e-8)
stats("gradcam-hook", cam)

# Grad-CAM 2: a full backward hook on a module without in-place ops
plain = vgg_like().eval()
plain.load_state_dict(model.state_dict())
for m in plain.modules():
    if isinstance(m, nn.ReLU):
        m.inplace = False
acts, grads_out = {}, {}
plain[6].register_forward_hook(lambda m, i, o: acts.__setitem__("a", o.detach()))
plain[6].register_full_backward_hook(lambda m, gi, go: grads_out.__setitem__("g", go[0].detach()))
plain(img)[0, cls].backward()
cam2 = F.relu((grads_out["g"].mean((2, 3), keepdim=True) * acts["a"]).sum(1))
stats("gradcam-full", cam2)

# Grad-CAM 3 and guided backprop: old-style module backward hooks everywhere (in-place ReLUs)
pool = {}
handles = []
for name, m in model.named_modules():
    handles.append(m.register_backward_hook(lambda m, gi, go, n=name: pool.__setitem__(n, go[0].detach())))
    if isinstance(m, nn.ReLU):
        handles.append(m.register_backward_hook(lambda m, gi, go: (torch.clamp(gi[0], min=0.0),)))
x = img.clone().requires_grad_(True)
model.zero_grad()
model(x)[0, cls].backward()
for hd in handles:
    hd.remove()
stats("guided", x.grad)
stats("pool[3]", pool["3"])

# occlusion sensitivity: a padded image, a grey patch slid over it, one batch
patch, stride = 4, 4
padded = F.pad(img, (2, 2, 2, 2), value=0.5)
batch = []
for i in range(0, padded.shape[2] - patch + 1, stride):
    for j in range(0, padded.shape[3] - patch + 1, stride):
        o = padded.clone()
        o[..., i:i + patch, j:j + patch] = 0.5
        batch.append(o)
with torch.no_grad():
    base = model(padded)[:, cls]
    diff = model(torch.cat(batch))[:, cls] - base
stats("occlusion", diff.view(4, 4))

# DeepDream-style: maximise one channel's activation (forward hook), jitter by roll, SGD on the image
feat = {}
hook = model[3].register_forward_hook(lambda m, i, o: feat.__setitem__("o", o[0, 2]))
dream = img.clone().requires_grad_(True)
optimizer = torch.optim.SGD([dream], lr=0.5, weight_decay=1e-4)
for it in range(6):
    optimizer.zero_grad()
    shift = (it % 3 - 1, (it * 2) % 3 - 1)
    y = dream
    for k, layer in enumerate(model):
        y = layer(torch.roll(y, shifts=shift, dims=(2, 3)) if k == 0 else y)
        if k == 3:
            break
    loss = -torch.mean(feat["o"])
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        dream.clamp_(0, 1)
    print(f"dream {it} loss {loss.item():.6f}")
hook.remove()

# influence: a small classifier trained by SGD, keeping checkpoints for TracIn
torch.manual_seed(6)
X, Y = torch.randn(20, 4), torch.randint(0, 3, (20,))
xt, yt = torch.randn(2, 4), torch.tensor([0, 2])
net = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3))
opt = torch.optim.SGD(net.parameters(), lr=0.3)
ckpts = []
for epoch in range(6):
    loss = F.cross_entropy(net(X), Y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 2 == 1:
        ckpts.append(({k: v.detach().clone() for k, v in net.state_dict().items()}, 0.3))
print(f"net loss {loss.item():.6f}")
params = [p for p in net.parameters() if p.requires_grad]


def grad_z(xb, yb, create_graph=False):
    return list(torch.autograd.grad(F.cross_entropy(net(xb), yb), params, create_graph=create_graph))


def hvp(loss, v):
    first = torch.autograd.grad(loss, params, retain_graph=True, create_graph=True)
    dot = sum(torch.sum(g * e) for g, e in zip(first, v))
    return torch.autograd.grad(dot, params, create_graph=False)


v = grad_z(xt[:1], yt[:1])
h = [t.clone() for t in v]
for r in range(8):
    i = r % 20
    hv = hvp(F.cross_entropy(net(X[i:i + 1]), Y[i:i + 1]), h)
    h = [a + (1 - 0.01) * b - c / 25.0 for a, b, c in zip(v, h, hv)]
influence = torch.stack([-sum(torch.sum(a * b) for a, b in zip(grad_z(X[i:i + 1], Y[i:i + 1]), h)) / 20
                         for i in range(20)])
stats("influence", influence)
print("harmful", influence.argsort(descending=True)[:4].tolist(), "helpful", influence.argsort()[:4].tolist())


# TracIn with per-sample gradients by vmap over functional_call
def sample_loss(p, b, xs, ys):
    return F.cross_entropy(functional_call(net, (p, b), (xs.unsqueeze(0),)), ys.unsqueeze(0))


tracin = torch.zeros(20, 2)
for state, lr in ckpts:
    net.load_state_dict(state)
    p = {k: v.detach() for k, v in net.named_parameters()}
    per_train = vmap(grad(sample_loss), in_dims=(None, None, 0, 0))(p, {}, X, Y)
    per_test = vmap(grad(sample_loss), in_dims=(None, None, 0, 0))(p, {}, xt, yt)
    flat_tr = torch.cat([g.flatten(1) for g in per_train.values()], 1)
    flat_te = torch.cat([g.flatten(1) for g in per_test.values()], 1)
    loop = torch.stack([torch.cat([g.flatten() for g in grad_z(X[i:i + 1], Y[i:i + 1])]) for i in range(20)])
    print(f"vmap vs loop max diff {(loop - flat_tr).abs().max().item() < 1e-5}")
    tracin += lr * flat_tr @ flat_te.T
stats("tracin", tracin)
print("proponents", tracin[:, 0].topk(3).indices.tolist(), "opponents", (-tracin[:, 1]).topk(3).indices.tolist())
