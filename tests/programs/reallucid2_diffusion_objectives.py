"""Gaussian diffusion in the style of the denoising-diffusion libraries, at 8x8: a cosine schedule computed in float64
and stored as float32 buffers, `extract` by `gather` and reshape, a small U-Net (channel RMSNorm by `F.normalize`
over dim 1, scale-shift from a sinusoidal time MLP, linear attention with softmax over two different dims, full
attention at the bottom, pixel-unshuffle downsampling via einops, nearest upsampling), self-conditioning drawn from
Python's `random`, the pred_noise/pred_x0/pred_v objectives with min-SNR loss weighting and offset noise, and
sampling by DDPM, DDIM (eta > 0) and a Karras-sigma Heun sampler. Seeded with torch.manual_seed and random.seed."""

import math
import random

import torch
import torch.nn.functional as F
from einops import rearrange, reduce
from einops.layers.torch import Rearrange
from torch import nn

torch.manual_seed(0)
random.seed(0)


def cosine_beta_schedule(timesteps, s=0.008):
    t = torch.linspace(0, timesteps, timesteps + 1, dtype=torch.float64) / timesteps
    alphas_cumprod = torch.cos((t + s) / (1 + s) * math.pi * 0.5) ** 2
    alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    return torch.clip(1 - alphas_cumprod[1:] / alphas_cumprod[:-1], 0, 0.999)


def extract(a, t, x_shape):
    b = t.shape[0]
    return a.gather(-1, t).reshape(b, *((1,) * (len(x_shape) - 1)))


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.g = nn.Parameter(torch.ones(1, dim, 1, 1))

    def forward(self, x):
        return F.normalize(x, dim=1) * self.g * x.shape[1] ** 0.5


class SinusoidalPosEmb(nn.Module):
    def __init__(self, dim, theta=10000):
        super().__init__()
        self.dim, self.theta = dim, theta

    def forward(self, x):
        half = self.dim // 2
        emb = torch.exp(torch.arange(half) * -(math.log(self.theta) / (half - 1)))
        emb = x[:, None] * emb[None, :]
        return torch.cat((emb.sin(), emb.cos()), dim=-1)


class ResnetBlock(nn.Module):
    def __init__(self, dim, dim_out, time_dim):
        super().__init__()
        self.mlp = nn.Sequential(nn.SiLU(), nn.Linear(time_dim, dim_out * 2))
        self.block1 = nn.Sequential(nn.Conv2d(dim, dim_out, 3, padding=1), RMSNorm(dim_out))
        self.block2 = nn.Sequential(nn.Conv2d(dim_out, dim_out, 3, padding=1), RMSNorm(dim_out), nn.SiLU())
        self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()

    def forward(self, x, time_emb):
        scale, shift = rearrange(self.mlp(time_emb), "b c -> b c 1 1").chunk(2, dim=1)
        h = F.silu(self.block1(x) * (scale + 1) + shift)
        return self.block2(h) + self.res_conv(x)


class LinearAttention(nn.Module):
    def __init__(self, dim, heads=2, dim_head=4):
        super().__init__()
        self.heads, self.scale = heads, dim_head ** -0.5
        self.norm = RMSNorm(dim)
        self.to_qkv = nn.Conv2d(dim, heads * dim_head * 3, 1, bias=False)
        self.to_out = nn.Sequential(nn.Conv2d(heads * dim_head, dim, 1), RMSNorm(dim))

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = (rearrange(t, "b (h c) x y -> b h c (x y)", h=self.heads)
                   for t in self.to_qkv(self.norm(x)).chunk(3, dim=1))
        q, k = q.softmax(dim=-2) * self.scale, k.softmax(dim=-1)
        context = torch.einsum("b h d n, b h e n -> b h d e", k, v)
        out = torch.einsum("b h d e, b h d n -> b h e n", context, q)
        return self.to_out(rearrange(out, "b h c (x y) -> b (h c) x y", x=h, y=w)) + x


class Attention(nn.Module):
    def __init__(self, dim, heads=2, dim_head=4):
        super().__init__()
        self.heads = heads
        self.norm = RMSNorm(dim)
        self.to_qkv = nn.Conv2d(dim, heads * dim_head * 3, 1, bias=False)
        self.to_out = nn.Conv2d(heads * dim_head, dim, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = (rearrange(t, "b (h d) x y -> b h (x y) d", h=self.heads)
                   for t in self.to_qkv(self.norm(x)).chunk(3, dim=1))
        out = F.scaled_dot_product_attention(q, k, v)
        return self.to_out(rearrange(out, "b h (x y) d -> b (h d) x y", x=h)) + x


class Unet(nn.Module):
    def __init__(self, dim=8, channels=3, self_condition=True):
        super().__init__()
        self.channels, self.self_condition = channels, self_condition
        time_dim = dim * 4
        self.init_conv = nn.Conv2d(channels * (2 if self_condition else 1), dim, 7, padding=3)
        self.time_mlp = nn.Sequential(SinusoidalPosEmb(dim), nn.Linear(dim, time_dim), nn.GELU(),
                                      nn.Linear(time_dim, time_dim))
        self.down = ResnetBlock(dim, dim, time_dim)
        self.down_attn = LinearAttention(dim)
        self.downsample = nn.Sequential(Rearrange("b c (h p1) (w p2) -> b (c p1 p2) h w", p1=2, p2=2),
                                        nn.Conv2d(dim * 4, dim * 2, 1))
        self.mid = ResnetBlock(dim * 2, dim * 2, time_dim)
        self.mid_attn = Attention(dim * 2)
        self.upsample = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(dim * 2, dim, 3, padding=1))
        self.up = ResnetBlock(dim * 2, dim, time_dim)
        self.final = nn.Conv2d(dim, channels, 1)

    def forward(self, x, time, x_self_cond=None):
        if self.self_condition:
            x_self_cond = x_self_cond if x_self_cond is not None else torch.zeros_like(x)
            x = torch.cat((x_self_cond, x), dim=1)
        x = self.init_conv(x)
        t = self.time_mlp(time)
        h = self.down_attn(self.down(x, t))
        m = self.mid_attn(self.mid(self.downsample(h), t))
        u = self.up(torch.cat((self.upsample(m), h), dim=1), t)
        return self.final(u)


class GaussianDiffusion(nn.Module):
    def __init__(self, model, timesteps=6, objective="pred_v", min_snr_gamma=5, offset_noise=0.1):
        super().__init__()
        self.model, self.objective, self.num_timesteps, self.offset_noise = model, objective, timesteps, offset_noise
        betas = cosine_beta_schedule(timesteps)
        alphas_cumprod = torch.cumprod(1. - betas, dim=0)
        alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.)

        def buf(name, val):
            self.register_buffer(name, val.to(torch.float32))
        buf("betas", betas)
        buf("alphas_cumprod", alphas_cumprod)
        buf("sqrt_alphas_cumprod", alphas_cumprod.sqrt())
        buf("sqrt_one_minus_alphas_cumprod", (1. - alphas_cumprod).sqrt())
        buf("sqrt_recip_alphas_cumprod", (1. / alphas_cumprod).sqrt())
        buf("sqrt_recipm1_alphas_cumprod", (1. / alphas_cumprod - 1).sqrt())
        posterior_variance = betas * (1. - alphas_cumprod_prev) / (1. - alphas_cumprod)
        buf("posterior_log_variance_clipped", posterior_variance.clamp(min=1e-20).log())
        buf("posterior_mean_coef1", betas * alphas_cumprod_prev.sqrt() / (1. - alphas_cumprod))
        buf("posterior_mean_coef2", (1. - alphas_cumprod_prev) * (1. - betas).sqrt() / (1. - alphas_cumprod))
        snr = alphas_cumprod / (1 - alphas_cumprod)
        clipped = snr.clone().clamp_(max=min_snr_gamma)
        weight = {"pred_noise": clipped / snr, "pred_x0": clipped, "pred_v": clipped / (snr + 1)}[objective]
        buf("loss_weight", weight)

    def predict_start_from_noise(self, x_t, t, noise):
        return extract(self.sqrt_recip_alphas_cumprod, t, x_t.shape) * x_t - \
            extract(self.sqrt_recipm1_alphas_cumprod, t, x_t.shape) * noise

    def predict_noise_from_start(self, x_t, t, x0):
        return (extract(self.sqrt_recip_alphas_cumprod, t, x_t.shape) * x_t - x0) / \
            extract(self.sqrt_recipm1_alphas_cumprod, t, x_t.shape)

    def predict_v(self, x_start, t, noise):
        return extract(self.sqrt_alphas_cumprod, t, x_start.shape) * noise - \
            extract(self.sqrt_one_minus_alphas_cumprod, t, x_start.shape) * x_start

    def predict_start_from_v(self, x_t, t, v):
        return extract(self.sqrt_alphas_cumprod, t, x_t.shape) * x_t - \
            extract(self.sqrt_one_minus_alphas_cumprod, t, x_t.shape) * v

    def model_predictions(self, x, t, x_self_cond=None):
        out = self.model(x, t.float(), x_self_cond)
        if self.objective == "pred_noise":
            noise = out
            x_start = self.predict_start_from_noise(x, t, noise).clamp(-1., 1.)
        elif self.objective == "pred_x0":
            x_start = out.clamp(-1., 1.)
            noise = self.predict_noise_from_start(x, t, x_start)
        else:
            x_start = self.predict_start_from_v(x, t, out).clamp(-1., 1.)
            noise = self.predict_noise_from_start(x, t, x_start)
        return noise, x_start

    def q_sample(self, x_start, t, noise):
        return extract(self.sqrt_alphas_cumprod, t, x_start.shape) * x_start + \
            extract(self.sqrt_one_minus_alphas_cumprod, t, x_start.shape) * noise

    def forward(self, img):
        b = img.shape[0]
        img = img * 2 - 1
        t = torch.randint(0, self.num_timesteps, (b,)).long()
        noise = torch.randn_like(img) + self.offset_noise * rearrange(torch.randn(img.shape[:2]), "b c -> b c 1 1")
        x = self.q_sample(img, t, noise)
        x_self_cond = None
        if self.model.self_condition and random.random() < 0.5:
            with torch.no_grad():
                x_self_cond = self.model_predictions(x, t)[1].detach_()
        out = self.model(x, t.float(), x_self_cond)
        target = {"pred_noise": noise, "pred_x0": img, "pred_v": self.predict_v(img, t, noise)}[self.objective]
        loss = reduce(F.mse_loss(out, target, reduction="none"), "b ... -> b", "mean")
        return (loss * extract(self.loss_weight, t, loss.shape)).mean()

    @torch.no_grad()
    def ddpm_sample(self, shape):
        img, x_start = torch.randn(shape), None
        for i in reversed(range(self.num_timesteps)):
            t = torch.full((shape[0],), i, dtype=torch.long)
            _, x_start = self.model_predictions(img, t, x_start)
            mean = extract(self.posterior_mean_coef1, t, img.shape) * x_start + \
                extract(self.posterior_mean_coef2, t, img.shape) * img
            noise = torch.randn_like(img) if i > 0 else 0.
            img = mean + (0.5 * extract(self.posterior_log_variance_clipped, t, img.shape)).exp() * noise
        return (img + 1) * 0.5

    @torch.no_grad()
    def ddim_sample(self, shape, steps=3, eta=0.5):
        times = list(reversed(torch.linspace(-1, self.num_timesteps - 1, steps=steps + 1).int().tolist()))
        img, x_start = torch.randn(shape), None
        for time, time_next in zip(times[:-1], times[1:]):
            t = torch.full((shape[0],), time, dtype=torch.long)
            pred_noise, x_start = self.model_predictions(img, t, x_start)
            if time_next < 0:
                img = x_start
                continue
            alpha, alpha_next = self.alphas_cumprod[time], self.alphas_cumprod[time_next]
            sigma = eta * ((1 - alpha / alpha_next) * (1 - alpha_next) / (1 - alpha)).sqrt()
            c = (1 - alpha_next - sigma ** 2).sqrt()
            img = x_start * alpha_next.sqrt() + c * pred_noise + sigma * torch.randn_like(img)
        return (img + 1) * 0.5


def karras_heun(denoise, shape, steps=3, sigma_min=0.02, sigma_max=2., rho=7.):
    inv_rho = 1 / rho
    idx = torch.arange(steps, dtype=torch.float32)
    sigmas = (sigma_max ** inv_rho + idx / (steps - 1) * (sigma_min ** inv_rho - sigma_max ** inv_rho)) ** rho
    sigmas = F.pad(sigmas, (0, 1), value=0.)
    x = sigmas[0] * torch.randn(shape)
    for sigma, sigma_next in zip(sigmas[:-1].tolist(), sigmas[1:].tolist()):
        d = (x - denoise(x, sigma)) / sigma
        x_next = x + (sigma_next - sigma) * d
        if sigma_next != 0:
            d_next = (x_next - denoise(x_next, sigma_next)) / sigma_next
            x_next = x + 0.5 * (sigma_next - sigma) * (d + d_next)
        x = x_next
    return x.clamp(-1., 1.)


data = torch.rand(4, 3, 8, 8)
for objective in ("pred_noise", "pred_x0", "pred_v"):
    torch.manual_seed(1)
    diffusion = GaussianDiffusion(Unet(), objective=objective)
    opt = torch.optim.Adam(diffusion.parameters(), lr=2e-3, betas=(0.9, 0.99))
    for step in range(2):
        loss = diffusion(data)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"{objective} step {step} loss {loss.item():.6f}")
    diffusion.eval()
    s = diffusion.ddpm_sample((2, 3, 8, 8))
    d = diffusion.ddim_sample((2, 3, 8, 8))
    print(f"{objective} ddpm {s.mean().item():.6f} {s.std().item():.6f} ddim {d.mean().item():.6f} "
          f"{d.pow(2).sum().item():.6f}")

with torch.no_grad():
    net = diffusion.model

    def denoise(x, sigma):
        c_in = 1 / math.sqrt(sigma ** 2 + 0.25)
        return net(x * c_in, torch.full((x.shape[0],), math.log(sigma + 1e-3) / 4)) * 0.5 + x / (1 + sigma ** 2)
    k = karras_heun(denoise, (2, 3, 8, 8))
    print("karras heun", k.pow(2).sum().item(), k.abs().mean().item())
