"""Self-supervised and training-trick surface, condensed: an NT-Xent loss with the diagonal masked out, a MoCo-style
key queue and momentum encoder, a BYOL-style target network updated with lerp_ (and torch._foreach_lerp_), a
Barlow Twins cross-correlation loss under a LARS-style custom optimizer, knowledge distillation with a
temperature, mixup and cutmix, label smoothing, gradient accumulation and clipping, EMA/SWA averaging, warmup +
cosine schedules (get_lr between steps), activation checkpointing, early stopping."""
import copy
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
from torch.utils._pytree import tree_flatten, tree_unflatten
from torch.utils.checkpoint import checkpoint

torch.manual_seed(7)
np.random.seed(7)


class Encoder(nn.Module):
    def __init__(self, d_in=12, d_hid=24, d_out=8):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, d_hid, bias=False), nn.BatchNorm1d(d_hid), nn.ReLU(inplace=True))
        self.head = nn.Linear(d_hid, d_out)

    def forward(self, x, use_ckpt=False):
        h = checkpoint(self.body, x, use_reentrant=False) if use_ckpt else self.body(x)
        return self.head(h)


def nt_xent(z, batch, temperature):
    labels = torch.cat([torch.arange(batch) for _ in range(2)])
    labels = (labels[None, :] == labels[:, None]).float()
    z = F.normalize(z, dim=1)
    sim = z @ z.T
    mask = torch.eye(labels.shape[0], dtype=torch.bool)
    labels = labels[~mask].view(labels.shape[0], -1)
    sim = sim[~mask].view(sim.shape[0], -1)
    pos = sim[labels.bool()].view(labels.shape[0], -1)
    neg = sim[~labels.bool()].view(sim.shape[0], -1)
    logits = torch.cat([pos, neg], dim=1) / temperature
    return F.cross_entropy(logits, torch.zeros(logits.shape[0], dtype=torch.long)), logits


def topk_acc(output, target, ks=(1, 3)):
    with torch.no_grad():
        _, pred = output.topk(max(ks), 1, True, True)
        correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
        return [correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / target.size(0)) for k in ks]


x_all = torch.randn(32, 12)
y_all = torch.randint(0, 4, (32,))

# --- SimCLR-style NT-Xent with warmup then cosine, accumulation and clipping
enc = Encoder()
opt = torch.optim.AdamW(enc.parameters(), lr=3e-3, weight_decay=1e-2)
warm = torch.optim.lr_scheduler.LambdaLR(opt, lambda e: min(1.0, (e + 1) / 3))
cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6, eta_min=1e-4)
for step in range(6):
    for k in range(2):
        xb = x_all[k * 8:(k + 1) * 8]
        views = torch.cat([xb + 0.1 * torch.randn_like(xb), xb.flip(1) * 0.9], dim=0)
        loss, logits = nt_xent(enc(views, use_ckpt=(k == 1)), 8, 0.5)
        (loss / 2).backward()
    norm = nn.utils.clip_grad_norm_(enc.parameters(), max_norm=1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    top1, top3 = topk_acc(logits, torch.zeros(16, dtype=torch.long))
    print("simclr", step, round(loss.item(), 5), round(norm.item(), 5), top1.item(), top3.item(),
          [round(v, 7) for v in cos.get_lr()], round(opt.param_groups[0]["lr"], 7))
    (warm if step < 3 else cos).step()

# --- MoCo: momentum key encoder, a queue of negatives, einsum logits
K, m, T = 16, 0.9, 0.2
enc_q = Encoder()
enc_k = copy.deepcopy(enc_q)
for p in enc_k.parameters():
    p.requires_grad = False
queue = F.normalize(torch.randn(8, K), dim=0)
ptr = torch.zeros(1, dtype=torch.long)
opt = torch.optim.SGD(enc_q.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
for step in range(4):
    xb = x_all[step * 8:(step + 1) * 8]
    with torch.no_grad():
        for pq, pk in zip(enc_q.parameters(), enc_k.parameters()):
            pk.mul_(m).add_(pq.detach(), alpha=1 - m)
    q = F.normalize(enc_q(xb + 0.05 * torch.randn_like(xb)), dim=1)
    with torch.no_grad():
        idx = torch.randperm(8)
        k = F.normalize(enc_k(xb[idx]), dim=1)[torch.argsort(idx)]
    l_pos = torch.einsum("nc,nc->n", [q, k]).unsqueeze(-1)
    l_neg = torch.einsum("nc,ck->nk", [q, queue.clone().detach()])
    logits = torch.cat([l_pos, l_neg], dim=1)
    logits /= T
    loss = nn.CrossEntropyLoss()(logits, torch.zeros(8, dtype=torch.long))
    opt.zero_grad()
    loss.backward()
    opt.step()
    p0 = int(ptr)
    queue[:, p0:p0 + 8] = k.t()
    ptr[0] = (p0 + 8) % K
    print("moco", step, round(loss.item(), 5), int(ptr), round(queue.sum().item(), 5))

# --- BYOL: predictor on the online net, target net is an EMA (lerp_) of it
online, predictor = Encoder(), nn.Sequential(nn.Linear(8, 16, bias=False), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 8))
target = copy.deepcopy(online).requires_grad_(False)
opt = torch.optim.Adam(list(online.parameters()) + list(predictor.parameters()), lr=1e-3)
for step in range(3):
    a, b = x_all[:8] + 0.1 * torch.randn(8, 12), x_all[:8] * 1.1
    pa, pb = predictor(online(a)), predictor(online(b))
    with torch.no_grad():
        ta, tb = target(a), target(b)
    loss = sum((2 - 2 * (F.normalize(p, dim=-1, p=2) * F.normalize(t, dim=-1, p=2)).sum(dim=-1)).mean()
               for p, t in ((pa, tb), (pb, ta)))
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        if step % 2 == 0:
            for po, pt in zip(online.parameters(), target.parameters()):
                pt.lerp_(po, 0.01)
        else:  # the same update as one list op, and the buffers through torch's pytree helpers
            torch._foreach_lerp_(list(target.parameters()), list(online.parameters()), 0.01)
        flat, spec = tree_flatten({"b": list(online.buffers()), "meta": (step, None)})
        torch._foreach_copy_([b for b in target.buffers()], [t for t in flat if torch.is_tensor(t)])
        assert tree_unflatten(flat, spec)["meta"] == (step, None)
    print("byol", step, round(loss.item(), 5), round(sum(p.sum() for p in target.parameters()).item(), 5))

# --- Barlow Twins: a cross-correlation loss (off-diagonal through a flatten/view trick) and a LARS-style optimizer
class TrustRatioSGD(torch.optim.Optimizer):
    def __init__(self, params, lr, weight_decay=1e-4, momentum=0.9, eta=0.02):
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, eta=eta))

    @torch.no_grad()
    def step(self):
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                d = p.grad if p.ndim == 1 else p.grad.add(p, alpha=g["weight_decay"])
                if p.ndim > 1:
                    pn, dn = torch.norm(p), torch.norm(d)
                    one = torch.ones_like(pn)
                    d = d.mul(torch.where(pn > 0.0, torch.where(dn > 0, g["eta"] * pn / dn, one), one))
                buf = self.state[p].setdefault("mu", torch.zeros_like(p))
                buf.mul_(g["momentum"]).add_(d)
                p.add_(buf, alpha=-g["lr"])


def off_diag(c):
    n = c.shape[0]
    return c.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()


twin = Encoder()
norm = nn.BatchNorm1d(8, affine=False)
opt = TrustRatioSGD([{"params": [p for p in twin.parameters() if p.ndim > 1]},
                     {"params": [p for p in twin.parameters() if p.ndim == 1]}], lr=0.5)
for step in range(3):
    z1, z2 = twin(x_all[:16] + 0.1 * torch.randn(16, 12)), twin(x_all[:16].roll(1, dims=1))
    c = norm(z1).T @ norm(z2)
    c.div_(16)
    loss = torch.diagonal(c).add_(-1).pow_(2).sum() + 0.01 * off_diag(c).pow_(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("barlow", step, round(loss.item(), 5), len(opt.state), round(twin.head.weight.norm().item(), 5))

# --- distillation, label smoothing, mixup and cutmix on a small classifier, with EMA and SWA copies
teacher = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 4)).eval()
student = nn.Sequential(nn.Linear(12, 16, bias=False), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 4))
ema = AveragedModel(student, multi_avg_fn=get_ema_multi_avg_fn(0.9))
swa = AveragedModel(student)
opt = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9, nesterov=True)
onecycle = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.2, total_steps=8)
swa_sched = SWALR(opt, swa_lr=0.05, anneal_epochs=2, anneal_strategy="cos")
smooth = nn.CrossEntropyLoss(label_smoothing=0.1)
for step in range(8):
    xb, yb = x_all[(step % 4) * 8:(step % 4 + 1) * 8], y_all[(step % 4) * 8:(step % 4 + 1) * 8]
    lam = float(np.random.beta(1.0, 1.0))
    perm = torch.randperm(8)
    if step % 2 == 0:
        xm = lam * xb + (1 - lam) * xb[perm, :]
    else:  # cutmix on the feature axis: a random window copied from the partner sample
        cut = int(12 * math.sqrt(1 - lam))
        lo = int(np.random.randint(0, 12 - cut + 1))
        xm = xb.clone()
        xm[:, lo:lo + cut] = xb[perm, lo:lo + cut]
        lam = 1 - cut / 12
    out = student(xm)
    with torch.no_grad():
        t_out = teacher(xm)
    Tmp, alpha = 4.0, 0.7
    kd = nn.KLDivLoss(reduction="batchmean")(F.log_softmax(out / Tmp, dim=1), F.softmax(t_out / Tmp, dim=1))
    ce = lam * smooth(out, yb) + (1 - lam) * smooth(out, yb[perm])
    loss = kd * (alpha * Tmp * Tmp) + ce * (1 - alpha)
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_value_(student.parameters(), 0.5)
    opt.step()
    ema.update_parameters(student)
    if step < 6:
        onecycle.step()
    else:
        swa.update_parameters(student)
        swa_sched.step()
    print("kd", step, round(lam, 5), round(kd.item(), 5), round(ce.item(), 5), round(opt.param_groups[0]["lr"], 6),
          round(opt.param_groups[0]["momentum"], 5))
update_bn([(x_all[i:i + 8],) for i in range(0, 32, 8)], swa)
swa.eval()
ema.eval()
print("averaged", int(swa.n_averaged), round(swa(x_all).sum().item(), 4), round(ema(x_all).sum().item(), 4),
      round(swa.module[1].running_mean.sum().item(), 5))

# --- activation checkpointing in a training loop, and early stopping on a validation loss
net = nn.Sequential(nn.Linear(12, 24), nn.GELU(), nn.Linear(24, 4))
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
best, bad, patience, best_state = None, 0, 2, None
for epoch in range(8):
    net.train()
    h = checkpoint(net[:2], x_all[:24], use_reentrant=False)
    out = net[2](h)
    loss = F.cross_entropy(out, y_all[:24])
    print("ckpt", epoch, out.dtype, round(loss.item(), 5))
    opt.zero_grad()
    loss.backward()
    opt.step()
    net.eval()
    with torch.no_grad():
        val = F.cross_entropy(net(x_all[24:]), y_all[24:]).item()
    if best is None or val < best - 1e-3:
        best, bad, best_state = val, 0, copy.deepcopy(net.state_dict())
    else:
        bad += 1
        print("EarlyStopping counter:", bad, "out of", patience)
        if bad >= patience:
            print("early stop at epoch", epoch)
            break
net.load_state_dict(best_state)
print("best", round(best, 5), sorted(best_state)[:3])
