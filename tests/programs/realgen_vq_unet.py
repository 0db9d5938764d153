"""Two generative-vision training loops: a VQ-VAE whose codebook follows exponential moving averages (one-hot
assignment, the straight-through estimator) next to one trained through a custom autograd Function (addmm
distances, index_select codes, index_add_ codebook gradient); then a small U-Net segmenter with BatchNorm,
channels-last inputs, a cross-entropy + Dice loss, RMSprop with momentum, gradient clipping, a disabled
GradScaler/autocast, ReduceLROnPlateau on the validation Dice, and inference_mode evaluation."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(0)
rng = np.random.default_rng(0)


# --- VQ-VAE: EMA codebook ---------------------------------------------------------------------------------------
class EMAQuantize(nn.Module):
    def __init__(self, dim, n_embed, decay=0.9, eps=1e-5):
        super().__init__()
        self.dim, self.n_embed, self.decay, self.eps = dim, n_embed, decay, eps
        embed = torch.randn(dim, n_embed)
        self.register_buffer("embed", embed)
        self.register_buffer("cluster_size", torch.zeros(n_embed))
        self.register_buffer("embed_avg", embed.clone())

    def forward(self, x):
        flat = x.reshape(-1, self.dim)
        dist = flat.pow(2).sum(1, keepdim=True) - 2 * flat @ self.embed + self.embed.pow(2).sum(0, keepdim=True)
        _, ind = (-dist).max(1)
        onehot = F.one_hot(ind, self.n_embed).type(flat.dtype)
        ind = ind.view(*x.shape[:-1])
        q = F.embedding(ind, self.embed.transpose(0, 1))
        if self.training:
            self.cluster_size.data.mul_(self.decay).add_(onehot.sum(0), alpha=1 - self.decay)
            self.embed_avg.data.mul_(self.decay).add_(flat.transpose(0, 1) @ onehot, alpha=1 - self.decay)
            n = self.cluster_size.sum()
            size = (self.cluster_size + self.eps) / (n + self.n_embed * self.eps) * n
            self.embed.data.copy_(self.embed_avg / size.unsqueeze(0))
        diff = (q.detach() - x).pow(2).mean()
        return x + (q - x).detach(), diff, ind


class NearestCode(Function):
    @staticmethod
    def forward(ctx, z, codebook):
        with torch.no_grad():
            flat = z.reshape(-1, codebook.size(1))
            d = torch.addmm(torch.sum(codebook ** 2, dim=1) + torch.sum(flat ** 2, dim=1, keepdim=True),
                            flat, codebook.t(), alpha=-2.0, beta=1.0)
            _, idx = torch.min(d, dim=1)
        ctx.save_for_backward(idx, codebook)
        ctx.mark_non_differentiable(idx)
        return torch.index_select(codebook, 0, idx).view_as(z), idx

    @staticmethod
    def backward(ctx, grad_codes, grad_idx):
        idx, codebook = ctx.saved_tensors
        g_code = torch.zeros_like(codebook)
        g_code.index_add_(0, idx, grad_codes.contiguous().view(-1, codebook.size(1)))
        return grad_codes.clone() if ctx.needs_input_grad[0] else None, g_code


class VQVAE(nn.Module):
    def __init__(self, ema=True, ch=16, dim=8, k=12):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, ch, 4, 2, 1), nn.ReLU(True), nn.Conv2d(ch, dim, 3, padding=1))
        self.dec = nn.Sequential(nn.ConvTranspose2d(dim, ch, 4, 2, 1), nn.ReLU(True), nn.Conv2d(ch, 3, 3, padding=1),
                                 nn.Tanh())
        self.ema = ema
        if ema:
            self.q = EMAQuantize(dim, k)
        else:
            self.codebook = nn.Embedding(k, dim)
            self.codebook.weight.data.uniform_(-1.0 / k, 1.0 / k)

    def forward(self, x):
        z = self.enc(x)
        if self.ema:
            q, diff, ind = self.q(z.permute(0, 2, 3, 1))
            return self.dec(q.permute(0, 3, 1, 2)), diff, ind
        zq, ind = NearestCode.apply(z.permute(0, 2, 3, 1).contiguous(), self.codebook.weight)
        zq = zq.permute(0, 3, 1, 2)
        vq = F.mse_loss(zq, z.detach()) + 0.25 * F.mse_loss(z, zq.detach())
        return self.dec(zq), vq, ind


imgs = torch.from_numpy(rng.random((16, 3, 8, 8)).astype(np.float32)) * 2 - 1
for ema in (True, False):
    model = VQVAE(ema)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for step in range(4):
        out, lat, ind = model(imgs)
        rec = F.mse_loss(out, imgs)
        loss = rec + 0.25 * lat
        model.zero_grad()
        loss.backward()
        opt.step()
        print("vq", ema, step, f"{rec.item():.5f}", f"{lat.item():.5f}", ind.unique().numel())
    if ema:
        used = model.q.cluster_size > 0.5
        print("codebook", f"{model.q.cluster_size.sum().item():.4f}", int(used.sum()), f"{model.q.embed[:, used].norm().item():.4f}")
    else:
        print("codebook grad", f"{model.codebook.weight.grad.abs().sum().item():.6f}")


# --- U-Net segmentation with a Dice loss --------------------------------------------------------------------------
def dice_coeff(inp, tgt, reduce_batch_first=False, eps=1e-6):
    sum_dim = (-1, -2) if inp.dim() == 2 or not reduce_batch_first else (-1, -2, -3)
    inter = 2 * (inp * tgt).sum(dim=sum_dim)
    sets = inp.sum(dim=sum_dim) + tgt.sum(dim=sum_dim)
    sets = torch.where(sets == 0, inter, sets)
    return ((inter + eps) / (sets + eps)).mean()


def dice_loss(inp, tgt):
    return 1 - dice_coeff(inp.flatten(0, 1), tgt.flatten(0, 1), reduce_batch_first=True)


class DoubleConv(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class UNet(nn.Module):
    def __init__(self, n_classes=2):
        super().__init__()
        self.n_classes = n_classes
        self.inc, self.down = DoubleConv(3, 8), nn.Sequential(nn.MaxPool2d(2), DoubleConv(8, 16))
        self.up = nn.ConvTranspose2d(16, 8, kernel_size=2, stride=2)
        self.conv, self.outc = DoubleConv(16, 8), nn.Conv2d(8, n_classes, 1)

    def forward(self, x):
        x1 = self.inc(x)
        u = self.up(self.down(x1))
        dy, dx = x1.size()[2] - u.size()[2], x1.size()[3] - u.size()[3]
        u = F.pad(u, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
        return self.outc(self.conv(torch.cat([x1, u], dim=1)))


images = torch.from_numpy(rng.random((10, 3, 9, 9)).astype(np.float32))
masks = (images.mean(1) > 0.5).long()
train_set, val_set = random_split(TensorDataset(images, masks), [8, 2], generator=torch.Generator().manual_seed(0))
train_loader = DataLoader(train_set, batch_size=4, shuffle=True)
val_loader = DataLoader(val_set, batch_size=2, drop_last=True)
net = UNet().to(memory_format=torch.channels_last)
optimizer = torch.optim.RMSprop(net.parameters(), lr=1e-3, weight_decay=1e-8, momentum=0.9, foreach=True)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, "max", patience=0)
scaler = torch.amp.GradScaler("cpu", enabled=False)
criterion = nn.CrossEntropyLoss()


@torch.inference_mode()
def evaluate():
    net.eval()
    score = 0
    for x, m in val_loader:
        pred = net(x.to(dtype=torch.float32, memory_format=torch.channels_last))
        m1 = F.one_hot(m, net.n_classes).permute(0, 3, 1, 2).float()
        p1 = F.one_hot(pred.argmax(dim=1), net.n_classes).permute(0, 3, 1, 2).float()
        score += dice_coeff(p1[:, 1:].flatten(0, 1), m1[:, 1:].flatten(0, 1))
    net.train()
    return score / max(len(val_loader), 1)


for epoch in range(2):
    for x, m in train_loader:
        x = x.to(dtype=torch.float32, memory_format=torch.channels_last).type(torch.Tensor)
        with torch.autocast("cpu", enabled=False):
            logits = net(x)
            loss = criterion(logits, m)
            loss += dice_loss(F.softmax(logits, dim=1).float(), F.one_hot(m, 2).permute(0, 3, 1, 2).float())
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        norm = torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        print("seg", epoch, f"{loss.item():.5f}", f"{norm.item():.4f}")
    val = evaluate()
    scheduler.step(val)
    print("val", epoch, f"{float(val):.5f}", optimizer.param_groups[0]["lr"], x.is_contiguous(memory_format=torch.channels_last))
