"""The CAM family as pytorch-grad-cam structures it, condensed: activations and gradients captured by a forward hook
that registers a tensor hook on the output, the class score's backward, then weights per method (Grad-CAM's pooled
gradients, Grad-CAM++'s alphas from squared and cubed gradients, XGrad-CAM, LayerCAM, HiResCAM, Eigen-CAM's first
principal component by NumPy SVD, Shapley-CAM's gradient minus half a Hessian-vector product); CAMs min-max scaled in
NumPy; a ROAD-style perturbation metric whose linear imputer solves a NumPy system and fills it back through
``torch.tensor(array, dtype=torch.float)`` of a Fortran-ordered solution plus ``randn_like`` noise on its transpose;
``torch.asarray`` with ``copy=``. Seeded with ``torch.manual_seed`` and NumPy."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(3)
np.random.seed(3)

model = nn.Sequential(nn.Conv2d(1, 6, 3, padding=1), nn.ReLU(), nn.Conv2d(6, 8, 3, padding=1), nn.ReLU(),
                      nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4)).eval()
target_layer = model[5]


class ActivationsAndGradients:
    def __init__(self, model, layer, detach=True):
        self.model, self.detach = model, detach
        self.activations, self.gradients = [], []
        self.handle = layer.register_forward_hook(self.save)

    def save(self, module, inputs, output):
        self.activations.append(output.detach() if self.detach else output)

        def store(grad):
            self.gradients = [(grad.detach() if self.detach else grad)] + self.gradients
        output.register_hook(store)

    def __call__(self, x):
        self.activations, self.gradients = [], []
        return self.model(x)


def scale(cam):
    out = []
    for img in cam:
        img = img - np.min(img)
        out.append(img / (1e-7 + np.max(img)))
    return np.float32(out)


def cam_for(method, x, category):
    ag = ActivationsAndGradients(model, target_layer, detach=method != "shapley")
    out = ag(x)
    score = sum(out[i, category[i]] for i in range(len(category)))
    model.zero_grad()
    score.backward(retain_graph=True, create_graph=method == "shapley")
    a, g = ag.activations[-1], ag.gradients[-1]
    if method == "shapley":
        hvp = torch.autograd.grad(outputs=g, inputs=a, grad_outputs=a, retain_graph=False, allow_unused=True)[0]
        if hvp is None:     # piecewise-linear layers: torch gives zeros here (its relu/max-pool backward reads the
            hvp = torch.zeros_like(a)   # input), tapegrad None; pytorch-grad-cam reads None as 0 as well
        w = (g - 0.5 * hvp).detach().numpy().mean(axis=(2, 3))
    ag.handle.remove()
    a, g = a.detach().numpy(), g.detach().numpy()
    if method == "gradcam":
        cam = (np.mean(g, axis=(2, 3))[:, :, None, None] * a).sum(1)
    elif method == "gradcam++":
        g2, g3 = g ** 2, g ** 3
        sum_a = np.sum(a, axis=(2, 3))
        alpha = g2 / (2 * g2 + sum_a[:, :, None, None] * g3 + 1e-7)
        alpha = np.where(g != 0, alpha, 0)
        cam = (np.sum(np.maximum(g, 0) * alpha, axis=(2, 3))[:, :, None, None] * a).sum(1)
    elif method == "xgradcam":
        sum_a = np.sum(a, axis=(2, 3))
        cam = ((g * a / (sum_a[:, :, None, None] + 1e-7)).sum(axis=(2, 3))[:, :, None, None] * a).sum(1)
    elif method == "layercam":
        cam = (np.maximum(g, 0) * a).sum(1)
    elif method == "hirescam":
        cam = (g * a).sum(1)
    elif method == "eigencam":
        cams = []
        for act in a:
            flat = act.reshape(act.shape[0], -1).T
            flat = flat - flat.mean(axis=0)
            _, _, vt = np.linalg.svd(flat, full_matrices=True)
            proj = (flat @ vt[0]).reshape(act.shape[1:])
            cams.append(proj if abs(proj.min()) <= abs(proj.max()) else -proj)
        cam = np.float32(cams)
    else:
        cam = (w[:, :, None, None] * a).sum(1)
    cam = np.maximum(cam, 0)
    up = F.interpolate(torch.from_numpy(np.float32(cam))[:, None], size=x.shape[2:], mode="bilinear",
                       align_corners=False)[:, 0]
    return scale(up.numpy()), out.detach()


x = torch.rand(2, 1, 12, 12)
with torch.no_grad():
    category = model(x).argmax(1).tolist()
print("categories", category)
cams = {}
for method in ["gradcam", "gradcam++", "xgradcam", "layercam", "hirescam", "eigencam", "shapley"]:
    cam, out = cam_for(method, x, category)
    cams[method] = cam
    print(f"{method:10s} {cam.sum():.5f} {cam[:, ::3, ::4].mean():.5f} {out.sum().item():.5f}")


def impute(img, mask, noise=0.01):
    """Fill the masked pixels with the average of their neighbours: one dense linear system (N x N) per image."""
    c, h, w = img.shape
    missing = np.argwhere(mask.reshape(-1).numpy() == 0).flatten()
    index = {int(k): i for i, k in enumerate(missing)}
    A = -np.eye(len(missing))
    b = np.zeros((len(missing), c))
    flat = img.reshape(c, -1).numpy()
    for i, k in enumerate(missing):
        r, q = divmod(int(k), w)
        nbrs = [(r + dr) * w + q + dq for dr, dq in ((0, 1), (1, 0), (0, -1), (-1, 0))
                if 0 <= r + dr < h and 0 <= q + dq < w]
        for n in nbrs:
            if n in index:
                A[i, index[n]] = 1.0 / len(nbrs)
            else:
                b[i] -= flat[:, n] / len(nbrs)
    res = torch.tensor(np.asfortranarray(np.linalg.solve(A, b)), dtype=torch.float)
    filled = img.reshape(c, -1).clone()
    filled[:, missing] = res.t() + noise * torch.randn_like(res.t())
    return filled.reshape_as(img)


def road(x, cam, category, percentile):
    with torch.no_grad():
        before = F.softmax(model(x), -1)[range(len(category)), category].numpy()
        perturbed = []
        for i in range(len(x)):
            threshold = np.percentile(cam[i], percentile)
            mask = torch.from_numpy(np.float32(torch.from_numpy(cam[i]) < threshold))
            perturbed.append(impute(x[i], mask).unsqueeze(0))
        after = F.softmax(model(torch.cat(perturbed)), -1)[range(len(category)), category].numpy()
    return np.float32(after - before)


for method in ["gradcam", "eigencam"]:
    scores = [road(x, cams[method], category, p) for p in (30, 60)]
    print("road", method, np.round(np.mean(scores, axis=0), 5).tolist())

arr = np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3))
shared = torch.asarray(arr)
copied = torch.asarray(arr, copy=True, requires_grad=True)
shared[0, 0] = 10.0
print("asarray", arr[0, 0], copied.stride(), copied.requires_grad, (copied * 2).sum().item())
try:
    torch.asarray(arr, dtype=torch.float32, copy=False)
except ValueError as e:
    print("asarray refuses:", e)
