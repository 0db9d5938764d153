"""Training-utility surface, condensed: sharpness-aware minimisation as an optimizer wrapping a base optimizer (the
perturbation from the stacked per-parameter gradient norms, adaptive scaling, BatchNorm momentum bypassed on the
second pass, label-smoothed loss by ``kl_div``), a learning-rate range test (exponential and linear schedules,
smoothing, divergence stop, model and optimizer restored from deep-copied state dicts), a gradual warmup scheduler
handing over to StepLR or to ReduceLROnPlateau, cosine annealing with warmup restarts as an LRScheduler subclass,
an EMA of the weights with a warmup decay, torch.optim.swa_utils, gradient clipping and accumulation. Seeded."""
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import LRScheduler, ReduceLROnPlateau, StepLR
from torch.optim.swa_utils import SWALR, AveragedModel, update_bn
from torch.utils.data import DataLoader, TensorDataset

torch.set_default_dtype(torch.float64)
torch.manual_seed(0)
X = torch.randn(64, 2, 6, 6)
Y = (X.mean((1, 2, 3)) > 0).long() + (X[:, 0, 0, 0] > 1).long()
loader = DataLoader(TensorDataset(X, Y), batch_size=16, shuffle=True)


def net():
    torch.manual_seed(1)
    return nn.Sequential(nn.Conv2d(2, 6, 3, bias=False), nn.BatchNorm2d(6), nn.ReLU(), nn.Flatten(),
                         nn.Linear(96, 3))


def smoothed_loss(logits, target, smoothing=0.1):
    one_hot = torch.full_like(logits, smoothing / (logits.size(1) - 1))
    one_hot.scatter_(1, target.unsqueeze(1), 1.0 - smoothing)
    return F.kl_div(F.log_softmax(logits, 1), one_hot, reduction="none").sum(-1)


class SharpnessAware(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, adaptive=False, **kwargs):
        super().__init__(params, dict(rho=rho, adaptive=adaptive, **kwargs))
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups
        self.defaults.update(self.base_optimizer.defaults)

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        norm = torch.norm(torch.stack([((torch.abs(p) if g["adaptive"] else 1.0) * p.grad).norm(p=2)
                                       for g in self.param_groups for p in g["params"] if p.grad is not None]), p=2)
        for g in self.param_groups:
            scale = g["rho"] / (norm + 1e-12)
            for p in g["params"]:
                if p.grad is None:
                    continue
                self.state[p]["old_p"] = p.data.clone()
                p.add_((torch.pow(p, 2) if g["adaptive"] else 1.0) * p.grad * scale.to(p))
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is not None:
                    p.data = self.state[p]["old_p"]
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()


def bn_momentum(model, on):
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            if on and hasattr(m, "backup_momentum"):
                m.momentum = m.backup_momentum
            elif not on:
                m.backup_momentum, m.momentum = m.momentum, 0


for adaptive, rho in ((False, 0.05), (True, 0.5)):
    model = net()
    opt = SharpnessAware(model.parameters(), torch.optim.SGD, rho=rho, adaptive=adaptive, lr=0.1, momentum=0.9,
                         weight_decay=5e-4)
    for epoch in range(2):
        for xb, yb in loader:
            bn_momentum(model, True)
            loss = smoothed_loss(model(xb), yb).mean()
            loss.backward()
            opt.first_step(zero_grad=True)
            bn_momentum(model, False)
            smoothed_loss(model(xb), yb).mean().backward()
            opt.second_step(zero_grad=True)
        print("sam", adaptive, epoch, f"{loss.item():.8f}", model[1].running_mean[:3].tolist())


class RangeTest:
    def __init__(self, model, optimizer, criterion):
        self.model, self.optimizer, self.criterion = model, optimizer, criterion
        self.saved = {"model": copy.deepcopy(model.state_dict()), "opt": copy.deepcopy(optimizer.state_dict())}

    def run(self, loader, end_lr, num_iter, mode="exp", smooth=0.05, diverge=5.0):
        start = [g["lr"] for g in self.optimizer.param_groups]
        lrs, losses, best = [], [], None
        it = iter(loader)
        for i in range(num_iter):
            r = i / max(1, num_iter - 1)
            lr = [s * (end_lr / s) ** r if mode == "exp" else s + r * (end_lr - s) for s in start]
            for g, v in zip(self.optimizer.param_groups, lr):
                g["lr"] = v
            try:
                xb, yb = next(it)
            except StopIteration:
                it = iter(loader)
                xb, yb = next(it)
            self.optimizer.zero_grad()
            loss = self.criterion(self.model(xb), yb)
            loss.backward()
            self.optimizer.step()
            value = loss.item() if not losses else smooth * loss.item() + (1 - smooth) * losses[-1]
            lrs.append(lr[0])
            losses.append(value)
            best = value if best is None or value < best else best
            if value > diverge * best:
                break
        return lrs, losses

    def reset(self):
        self.model.load_state_dict(self.saved["model"])
        self.optimizer.load_state_dict(self.saved["opt"])


model = net()
finder = RangeTest(model, torch.optim.Adam(model.parameters(), lr=1e-6, weight_decay=1e-2), nn.CrossEntropyLoss())
lrs, losses = finder.run(loader, end_lr=10, num_iter=25)
grads = [(losses[i + 1] - losses[i]) / (math.log10(lrs[i + 1]) - math.log10(lrs[i])) for i in range(len(lrs) - 1)]
print("range exp", len(lrs), [f"{v:.6e}" for v in lrs[::6]], [round(v, 8) for v in losses[::4]])
print("steepest", f"{lrs[grads.index(min(grads))]:.6e}")
finder.reset()
print("reset", model[4].weight.sum().item(), finder.optimizer.param_groups[0]["lr"])
finder = RangeTest(model, torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9), nn.CrossEntropyLoss())
print("range linear", [round(v, 8) for v in finder.run(loader, end_lr=0.3, num_iter=10, mode="linear")[1]])
finder.reset()


class GradualWarmup(LRScheduler):
    def __init__(self, optimizer, multiplier, total_epoch, after=None):
        self.multiplier, self.total_epoch, self.after, self.finished = multiplier, total_epoch, after, False
        super().__init__(optimizer)

    def get_lr(self):
        if self.last_epoch > self.total_epoch:
            if self.after is not None:
                if not self.finished:
                    self.after.base_lrs = [b * self.multiplier for b in self.base_lrs]
                    self.finished = True
                return self.after.get_last_lr()
            return [b * self.multiplier for b in self.base_lrs]
        return [b * ((self.multiplier - 1.0) * self.last_epoch / self.total_epoch + 1.0) for b in self.base_lrs]

    def step(self, epoch=None, metrics=None):
        if isinstance(self.after, ReduceLROnPlateau):
            self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
            if self.last_epoch <= self.total_epoch:
                for g, b in zip(self.optimizer.param_groups, self.base_lrs):
                    g["lr"] = b * ((self.multiplier - 1.0) * self.last_epoch / self.total_epoch + 1.0)
            else:
                self.after.step(metrics)
        elif self.finished and self.after is not None:
            self.after.step()
            self.last_epoch = self.after.last_epoch + self.total_epoch + 1
            self._last_lr = self.after.get_last_lr()
        else:
            super().step()


class CosineWarmupRestarts(LRScheduler):
    def __init__(self, optimizer, first_cycle_steps, cycle_mult=1.0, max_lr=0.1, min_lr=1e-3, warmup_steps=0,
                 gamma=1.0):
        self.first_cycle_steps, self.cycle_mult, self.base_max_lr = first_cycle_steps, cycle_mult, max_lr
        self.max_lr, self.min_lr, self.warmup_steps, self.gamma = max_lr, min_lr, warmup_steps, gamma
        self.cur_cycle_steps, self.cycle, self.step_in_cycle = first_cycle_steps, 0, -1
        super().__init__(optimizer)
        for g in self.optimizer.param_groups:
            g["lr"] = self.min_lr
        self.base_lrs = [self.min_lr for _ in self.optimizer.param_groups]

    def get_lr(self):
        if self.step_in_cycle == -1:
            return self.base_lrs
        if self.step_in_cycle < self.warmup_steps:
            return [(self.max_lr - b) * self.step_in_cycle / self.warmup_steps + b for b in self.base_lrs]
        t = (self.step_in_cycle - self.warmup_steps) / (self.cur_cycle_steps - self.warmup_steps)
        return [b + (self.max_lr - b) * (1 + math.cos(math.pi * t)) / 2 for b in self.base_lrs]

    def step(self, epoch=None):
        self.step_in_cycle += 1
        if self.step_in_cycle >= self.cur_cycle_steps:
            self.cycle += 1
            self.step_in_cycle -= self.cur_cycle_steps
            self.cur_cycle_steps = int((self.cur_cycle_steps - self.warmup_steps) * self.cycle_mult) + self.warmup_steps
        self.max_lr = self.base_max_lr * self.gamma ** self.cycle
        self.last_epoch = math.floor(self.last_epoch + 1)
        for g, lr in zip(self.optimizer.param_groups, self.get_lr()):
            g["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]


def train_epoch(model, opt, accum=2, clip=1.0):
    total = 0.0
    for i, (xb, yb) in enumerate(loader):
        loss = F.cross_entropy(model(xb), yb) / accum
        loss.backward()
        total += loss.item()
        if (i + 1) % accum == 0:
            norm = nn.utils.clip_grad_norm_(model.parameters(), clip)
            opt.step()
            opt.zero_grad()
    return total, norm.item()


model = net()
opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
sched = GradualWarmup(opt, multiplier=4, total_epoch=3, after=StepLR(opt, step_size=2, gamma=0.5))
opt.zero_grad()
opt.step()
for epoch in range(1, 9):
    sched.step()
    loss, norm = train_epoch(model, opt)
    print("warmup->step", epoch, f"{opt.param_groups[0]['lr']:.8f}", f"{loss:.8f}", f"{norm:.8f}")
opt = torch.optim.SGD(model.parameters(), lr=0.02)
sched = GradualWarmup(opt, multiplier=2, total_epoch=2, after=ReduceLROnPlateau(opt, factor=0.5, patience=0))
for epoch in range(1, 7):
    loss, _ = train_epoch(model, opt)
    sched.step(metrics=loss if epoch < 4 else 10.0)
    print("warmup->plateau", epoch, opt.param_groups[0]["lr"])
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
sched = CosineWarmupRestarts(opt, first_cycle_steps=6, cycle_mult=1.5, max_lr=3e-3, min_lr=1e-5, warmup_steps=2,
                             gamma=0.5)
for epoch in range(15):
    loss, _ = train_epoch(model, opt)
    sched.step()
    print("cos-restarts", epoch, sched.cycle, sched.step_in_cycle, f"{sched.get_last_lr()[0]:.8e}", f"{loss:.8f}")


class WarmupEMA:
    def __init__(self, model, beta=0.999, power=2 / 3, update_after_step=2):
        self.ema = copy.deepcopy(model).eval().requires_grad_(False)
        self.beta, self.power, self.after, self.step = beta, power, update_after_step, 0

    def decay(self):
        epoch = max(self.step - self.after - 1, 0)
        return 0.0 if epoch <= 0 else min(self.beta, 1 - (1 + epoch) ** -self.power)

    @torch.no_grad()
    def update(self, model):
        self.step += 1
        d = self.decay()
        for e, p in zip(self.ema.parameters(), model.parameters()):
            e.lerp_(p, 1 - d)
        for e, b in zip(self.ema.buffers(), model.buffers()):
            e.copy_(b)


model = net()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
ema = WarmupEMA(model)
swa = AveragedModel(model)
ema_avg = AveragedModel(model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.9))
swa_sched = SWALR(opt, swa_lr=0.01, anneal_epochs=3, anneal_strategy="cos")
for epoch in range(6):
    loss, _ = train_epoch(model, opt, accum=1, clip=0.5)
    ema.update(model)
    ema_avg.update_parameters(model)
    if epoch >= 2:
        swa.update_parameters(model)
        swa_sched.step()
    print("avg", epoch, f"{loss:.8f}", f"{ema.decay():.8f}", opt.param_groups[0]["lr"], swa.n_averaged.item())
update_bn(loader, swa)
with torch.no_grad():
    for name, m in (("model", model), ("ema", ema.ema), ("swa", swa), ("ema_avg", ema_avg)):
        m.eval()
        print(name, f"{F.cross_entropy(m(X), Y).item():.8f}", m.module[1].running_var[:2].tolist() if hasattr(m, "module")
              else m[1].running_var[:2].tolist())
