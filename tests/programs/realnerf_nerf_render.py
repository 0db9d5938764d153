"""A tiny NeRF, in the style of the single-file NeRF ports: a positional-encoding embedder, an MLP with a skip
connection and a view-direction branch, rays from a pinhole camera, volume rendering with an exclusive cumprod,
hierarchical (coarse + fine) sampling by inverse-transform sampling of the weights' pdf, and a few Adam steps
with an exponentially decaying learning rate. Seeded with torch.manual_seed alone."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)     # (a few Adam steps: float64 keeps both runs' summation noise apart)

to_mse = lambda a, b: torch.mean((a - b) ** 2)
to_psnr = lambda m: -10. * torch.log(m) / torch.log(torch.Tensor([10.]))


class Encoder:
    def __init__(self, n_freqs, log_sampling=True):
        top = n_freqs - 1
        self.freqs = 2. ** torch.linspace(0., top, steps=n_freqs) if log_sampling else \
            torch.linspace(2. ** 0., 2. ** top, steps=n_freqs)
        self.fns = [lambda x: x]
        for f in self.freqs:
            for p in (torch.sin, torch.cos):
                self.fns.append(lambda x, p=p, f=f: p(x * f))
        self.out_dim = 3 * len(self.fns)

    def __call__(self, x):
        return torch.cat([fn(x) for fn in self.fns], -1)


class TinyField(nn.Module):
    def __init__(self, depth=4, width=32, in_pts=27, in_views=15, skips=(2,)):
        super().__init__()
        self.in_pts, self.in_views, self.skips = in_pts, in_views, skips
        self.pts = nn.ModuleList([nn.Linear(in_pts, width)] + [
            nn.Linear(width + in_pts if i in skips else width, width) for i in range(1, depth)])
        self.feature = nn.Linear(width, width)
        self.alpha = nn.Linear(width, 1)
        self.views = nn.ModuleList([nn.Linear(in_views + width, width // 2)])
        self.rgb = nn.Linear(width // 2, 3)

    def forward(self, x):
        pts, views = torch.split(x, [self.in_pts, self.in_views], dim=-1)
        h = pts
        for i, layer in enumerate(self.pts):
            if i in self.skips:
                h = torch.cat([pts, h], -1)
            h = F.relu(layer(h))
        alpha = self.alpha(h)
        h = torch.cat([self.feature(h), views], -1)
        for layer in self.views:
            h = F.relu(layer(h))
        return torch.cat([self.rgb(h), alpha], -1)


def camera_rays(H, W, focal, c2w):
    i, j = torch.meshgrid(torch.linspace(0, W - 1, W), torch.linspace(0, H - 1, H), indexing='ij')
    i, j = i.t(), j.t()
    dirs = torch.stack([(i - W * .5) / focal, -(j - H * .5) / focal, -torch.ones_like(i)], -1)
    rays_d = torch.sum(dirs[..., np.newaxis, :] * c2w[:3, :3], -1)
    return c2w[:3, -1].expand(rays_d.shape), rays_d


def composite(raw, z, rays_d, noise_std=0., white=False):
    dists = z[..., 1:] - z[..., :-1]
    dists = torch.cat([dists, torch.Tensor([1e10]).expand(dists[..., :1].shape)], -1)
    dists = dists * torch.norm(rays_d[..., None, :], dim=-1)
    rgb = torch.sigmoid(raw[..., :3])
    noise = torch.randn(raw[..., 3].shape) * noise_std if noise_std > 0 else 0.
    alpha = 1. - torch.exp(-F.relu(raw[..., 3] + noise) * dists)
    trans = torch.cumprod(torch.cat([torch.ones((alpha.shape[0], 1)), 1. - alpha + 1e-10], -1), -1)[:, :-1]
    weights = alpha * trans
    rgb_map = torch.sum(weights[..., None] * rgb, -2)
    depth = torch.sum(weights * z, -1)
    acc = torch.sum(weights, -1)
    disp = 1. / torch.max(1e-10 * torch.ones_like(depth), depth / acc)
    if white:
        rgb_map = rgb_map + (1. - acc[..., None])
    return rgb_map, disp, acc, weights, depth


def pdf_samples(bins, weights, n, det=False):
    weights = weights + 1e-5
    pdf = weights / torch.sum(weights, -1, keepdim=True)
    cdf = torch.cat([torch.zeros_like(pdf[..., :1]), torch.cumsum(pdf, -1)], -1)
    if det:
        u = torch.linspace(0., 1., steps=n).expand(list(cdf.shape[:-1]) + [n])
    else:
        u = torch.rand(list(cdf.shape[:-1]) + [n])
    u = u.contiguous()
    idx = torch.searchsorted(cdf, u, right=True)
    below = torch.max(torch.zeros_like(idx - 1), idx - 1)
    above = torch.min((cdf.shape[-1] - 1) * torch.ones_like(idx), idx)
    g = torch.stack([below, above], -1)
    shape = [g.shape[0], g.shape[1], cdf.shape[-1]]
    cdf_g = torch.gather(cdf.unsqueeze(1).expand(shape), 2, g)
    bins_g = torch.gather(bins.unsqueeze(1).expand(shape), 2, g)
    denom = cdf_g[..., 1] - cdf_g[..., 0]
    denom = torch.where(denom < 1e-5, torch.ones_like(denom), denom)
    t = (u - cdf_g[..., 0]) / denom
    return bins_g[..., 0] + t * (bins_g[..., 1] - bins_g[..., 0])


def render(rays_o, rays_d, coarse, fine, pe, pe_dir, near=2., far=6., n_c=12, n_f=8, perturb=1., noise=0.):
    viewdirs = rays_d / torch.norm(rays_d, dim=-1, keepdim=True)
    t = torch.linspace(0., 1., steps=n_c)
    z = (near * (1. - t) + far * t).expand([rays_o.shape[0], n_c])
    if perturb > 0.:
        mids = .5 * (z[..., 1:] + z[..., :-1])
        upper, lower = torch.cat([mids, z[..., -1:]], -1), torch.cat([z[..., :1], mids], -1)
        z = lower + (upper - lower) * torch.rand(z.shape)

    def query(net, z):
        pts = rays_o[..., None, :] + rays_d[..., None, :] * z[..., :, None]
        flat = torch.reshape(pts, [-1, 3])
        dirs = torch.reshape(viewdirs[:, None].expand(pts.shape), [-1, 3])
        out = net(torch.cat([pe(flat), pe_dir(dirs)], -1))
        return torch.reshape(out, list(pts.shape[:-1]) + [out.shape[-1]])

    rgb0, disp0, acc0, w, _ = composite(query(coarse, z), z, rays_d, noise, white=True)
    mids = .5 * (z[..., 1:] + z[..., :-1])
    extra = pdf_samples(mids, w[..., 1:-1], n_f, det=(perturb == 0.)).detach()
    z_all, _ = torch.sort(torch.cat([z, extra], -1), -1)
    rgb, disp, acc, _, depth = composite(query(fine, z_all), z_all, rays_d, noise, white=True)
    return {'rgb': rgb, 'rgb0': rgb0, 'disp': disp, 'acc': acc, 'depth': depth, 'z_std': torch.std(extra, dim=-1)}


def orbit_pose(theta, phi, radius):
    c2w = torch.Tensor([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, radius], [0, 0, 0, 1]])
    c = lambda a: float(np.cos(a))
    s = lambda a: float(np.sin(a))
    p, t = phi / 180. * np.pi, theta / 180. * np.pi
    c2w = torch.tensor([[1, 0, 0, 0], [0, c(p), -s(p), 0], [0, s(p), c(p), 0], [0, 0, 0, 1]]) @ c2w
    c2w = torch.tensor([[c(t), 0, -s(t), 0], [0, 1, 0, 0], [s(t), 0, c(t), 0], [0, 0, 0, 1]]) @ c2w
    return torch.tensor([[-1., 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 1]]) @ c2w


pe, pe_dir = Encoder(4), Encoder(2)
print('embed dims', pe.out_dim, pe_dir.out_dim, Encoder(3, log_sampling=False).freqs.tolist())
coarse, fine = TinyField(), TinyField()
params = list(coarse.parameters()) + list(fine.parameters())
opt = torch.optim.Adam(params, lr=5e-3, betas=(0.9, 0.999))
H = W = 6
focal = .5 * W / np.tan(.5 * 0.69)
poses = torch.stack([orbit_pose(a, -30., 4.) for a in np.linspace(-180, 180, 4)[:-1]], 0)
target = torch.rand(3, H, W, 3)
for step in range(5):
    k = step % 3
    rays_o, rays_d = camera_rays(H, W, focal, poses[k, :3, :4])
    coords = torch.stack(torch.meshgrid(torch.linspace(0, H - 1, H), torch.linspace(0, W - 1, W),
                                        indexing='ij'), -1).reshape(-1, 2)
    sel = torch.randperm(coords.shape[0])[:16]
    c = coords[sel].long()
    rays_o, rays_d = rays_o[c[:, 0], c[:, 1]], rays_d[c[:, 0], c[:, 1]]
    tgt = target[k][c[:, 0], c[:, 1]]
    out = render(rays_o, rays_d, coarse, fine, pe, pe_dir, noise=1.)
    loss = to_mse(out['rgb'], tgt) + to_mse(out['rgb0'], tgt)
    opt.zero_grad()
    loss.backward()
    opt.step()
    for g in opt.param_groups:
        g['lr'] = 5e-3 * (0.1 ** ((step + 1) / 250))
    print(f"step {step} loss {loss.item():.8f} psnr {to_psnr(to_mse(out['rgb'], tgt)).item():.6f} "
          f"depth {out['depth'].mean().item():.6f} zstd {out['z_std'].mean().item():.6f}")

with torch.no_grad():
    rays_o, rays_d = camera_rays(H, W, focal, poses[0, :3, :4])
    out = render(rays_o.reshape(-1, 3), rays_d.reshape(-1, 3), coarse, fine, pe, pe_dir, perturb=0.)
    img = out['rgb'].reshape(H, W, 3)
    print('test render', img.shape, img.sum().item(), out['disp'].mean().item(), out['acc'].mean().item())
    to8b = (255 * np.clip(img.numpy(), 0, 1)).astype(np.uint8)
    print('to8b', int(to8b.sum()), to8b.dtype)
