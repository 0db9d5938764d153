"""A separable 2-D wavelet transform by strided grouped convolutions, image filters and colour conversions in
the style of a differentiable computer-vision library, an Otsu threshold, and an Euler-Maruyama SDE solver
with a learned drift fitted through the sampled paths. Seeded with torch.manual_seed alone."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


# --- wavelets: analysis and synthesis filter banks along one dimension at a time --------------------------------
def haar_filters(dtype=torch.float32):
    s = 1 / math.sqrt(2)
    lo = torch.tensor([s, s], dtype=dtype)
    hi = torch.tensor([-s, s], dtype=dtype)
    return lo, hi


def prep_filt_afb1d(h0, h1):
    h0, h1 = h0.flip(-1).reshape(1, 1, -1), h1.flip(-1).reshape(1, 1, -1)
    return h0, h1


def afb1d(x, h0, h1, dim):
    C = x.shape[1]
    d = dim % 4
    shape = [1, 1, 1, 1]
    shape[d] = h0.numel()
    h = torch.cat([h0.reshape(*shape), h1.reshape(*shape)] * C, dim=0)
    stride = (2, 1) if d == 2 else (1, 2)
    lohi = F.conv2d(x, h, stride=stride, groups=C)
    return lohi


def dwt2(x, h0, h1):
    C = x.shape[1]
    lohi = afb1d(x, h0, h1, dim=3)
    y = afb1d(lohi, h0, h1, dim=2)
    s = y.shape
    y = y.reshape(s[0], C, 4, s[-2], s[-1])
    return y[:, :, 0].contiguous(), y[:, :, 1:].contiguous()


def idwt2(low, highs, g0, g1):
    B, C, H, W = low.shape
    coeffs = torch.cat([low.unsqueeze(2), highs], dim=2).reshape(B, C * 4, H, W)
    g0c, g1c = g0.reshape(1, 1, -1, 1), g1.reshape(1, 1, -1, 1)
    gcol = torch.cat([g0c, g1c] * (2 * C), dim=0)
    y = F.conv_transpose2d(coeffs, gcol, stride=(2, 1), groups=2 * C)
    g0r, g1r = g0.reshape(1, 1, 1, -1), g1.reshape(1, 1, 1, -1)
    grow = torch.cat([g0r, g1r] * C, dim=0)
    return F.conv_transpose2d(y, grow, stride=(1, 2), groups=C)


x = torch.rand(2, 3, 8, 8)
lo, hi = haar_filters()
h0, h1 = prep_filt_afb1d(lo, hi)
yl, yh = dwt2(x, h0, h1)
print("dwt shapes", tuple(yl.shape), tuple(yh.shape))
print("low band", [round(v, 5) for v in yl[0, 0, 0].tolist()])
print("energy", round(x.pow(2).sum().item(), 4), round(yl.pow(2).sum().item() + yh.pow(2).sum().item(), 4))
rec = idwt2(yl, yh, h0.reshape(-1), h1.reshape(-1))   # (the adjoint: the same flipped filters)
print("reconstruction error below 1e-5:", (rec - x).abs().max().item() < 1e-5)


# --- filters: gaussian kernels, separable blur with reflect padding, sobel gradients ------------------------------
def gaussian(window_size, sigma):
    xs = torch.arange(window_size, dtype=sigma.dtype) - window_size // 2
    if window_size % 2 == 0:
        xs = xs + 0.5
    g = torch.exp(-xs.pow(2.0) / (2 * sigma.pow(2.0)))
    return g / g.sum(-1, keepdim=True)


def filter2d(img, kernel, border_type="reflect"):
    b, c, h, w = img.shape
    kh, kw = kernel.shape[-2:]
    pad = [(kw - 1) // 2, kw // 2, (kh - 1) // 2, kh // 2]
    tmp = kernel.unsqueeze(1).expand(-1, c, -1, -1).reshape(-1, 1, kh, kw)
    out = F.conv2d(F.pad(img, pad, mode=border_type), tmp, groups=c)
    return out.view(b, c, h, w)


def gaussian_blur2d(img, ksize, sigma):
    ky = gaussian(ksize[0], sigma[0]).unsqueeze(0)
    kx = gaussian(ksize[1], sigma[1]).unsqueeze(0)
    out = filter2d(img, ky[:, None, :].transpose(-1, -2))
    return filter2d(out, kx[:, None, :])


def spatial_gradient(img):
    kx = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]) / 8
    kernel = torch.stack([kx, kx.t()])
    b, c, h, w = img.shape
    padded = F.pad(img.reshape(b * c, 1, h, w), [1, 1, 1, 1], mode="replicate")
    return F.conv2d(padded, kernel.unsqueeze(1)).view(b, c, 2, h, w)


def rgb_to_hsv(image, eps=1e-8):
    maxc, _ = image.max(-3)
    maxc_mask = image == maxc.unsqueeze(-3)
    _, max_indices = ((maxc_mask.cumsum(-3) == 1) & maxc_mask).max(-3)
    minc = image.min(-3)[0]
    v = maxc
    deltac = maxc - minc
    s = deltac / (v + eps)
    deltac = torch.where(deltac == 0, torch.ones_like(deltac), deltac)
    maxc_tmp = maxc.unsqueeze(-3) - image
    rc, gc, bc = maxc_tmp[..., 0, :, :], maxc_tmp[..., 1, :, :], maxc_tmp[..., 2, :, :]
    h = torch.stack([bc - gc, 2.0 * deltac + rc - bc, 4.0 * deltac + gc - rc], dim=-3)
    h = torch.gather(h, dim=-3, index=max_indices[..., None, :, :]).squeeze(-3) / deltac
    h = (h / 6.0) % 1.0 * 2 * math.pi
    return torch.stack([h, s, v], dim=-3)


def rgb_to_grayscale(image):
    r, g, b = image.unbind(dim=-3)
    return (0.299 * r + 0.587 * g + 0.114 * b).unsqueeze(-3)


img = torch.rand(1, 3, 10, 10, requires_grad=True)
blur = gaussian_blur2d(img, (5, 5), torch.tensor([1.5, 1.5]))
grad = spatial_gradient(blur)
mag = torch.sqrt(grad.pow(2).sum(2) + 1e-6)
hsv = rgb_to_hsv(blur)
loss = mag.mean() + hsv[:, 1].mean() + rgb_to_grayscale(blur).std()
loss.backward()
print("filters loss", round(loss.item(), 6), "grad norm", round(img.grad.norm().item(), 6))
print("hue row", [round(v, 4) for v in hsv[0, 0, 0, :5].tolist()])


# --- Otsu threshold from a histogram ------------------------------------------------------------------------------
def otsu(x, nbins=16):
    lo_v, hi_v = x.min().item(), x.max().item()
    hist = torch.histc(x.flatten(), bins=nbins, min=lo_v, max=hi_v)
    hist = hist / hist.sum()
    edges = torch.linspace(lo_v, hi_v, nbins + 1)
    centers = (edges[:-1] + edges[1:]) / 2
    w0 = torch.cumsum(hist, 0)
    m0 = torch.cumsum(hist * centers, 0)
    mt = m0[-1]
    var = (mt * w0 - m0) ** 2 / (w0 * (1 - w0)).clamp_min(1e-12)
    k = torch.argmax(var)
    return edges[k + 1], (x > edges[k + 1])


gray = rgb_to_grayscale(blur.detach())
t, m = otsu(gray)
print("otsu threshold", round(t.item(), 6), "foreground", int(m.sum().item()))


# --- an SDE with a learned drift, integrated by Euler-Maruyama ----------------------------------------------------
class SDE(nn.Module):
    noise_type, sde_type = "diagonal", "ito"

    def __init__(self):
        super().__init__()
        self.drift = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
        self.log_sigma = nn.Parameter(torch.tensor(-1.0))

    def f(self, t, y):
        return self.drift(torch.cat([y, t.expand_as(y)], dim=1))

    def g(self, t, y):
        return self.log_sigma.exp().expand_as(y)


def sdeint_euler(sde, y0, ts, dt, bm):
    ys, y, t = [y0], y0, ts[0]
    n = int(round(((ts[-1] - ts[0]) / dt).item()))
    for i in range(n):
        dW = bm[i]
        y = y + sde.f(t, y) * dt + sde.g(t, y) * dW
        t = t + dt
        if (i + 1) % (n // (len(ts) - 1)) == 0:
            ys.append(y)
    return torch.stack(ys)


sde = SDE()
opt = torch.optim.Adam(sde.parameters(), lr=2e-2)
ts = torch.linspace(0, 1, 5)
dt = 0.05
y0 = torch.full((32, 1), 0.5)
target = 0.5 * torch.exp(-2 * ts)[:, None, None]
for it in range(12):
    bm = torch.randn(20, 32, 1) * math.sqrt(dt)
    ys = sdeint_euler(sde, y0, ts, dt, bm)
    loss = (ys.mean(1, keepdim=True) - target).pow(2).mean() + 0.1 * (ys.var(1).mean() - 0.01).abs()
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(sde.parameters(), 1.0)
    opt.step()
    if it % 3 == 0 or it == 11:
        print(f"sde iter {it}: loss {loss.item():.6f} sigma {sde.log_sigma.exp().item():.6f} "
              f"terminal mean {ys[-1].mean().item():.6f}")
