"""A from-scratch course library's training surface, condensed: a Learner whose steps are wrapped by a
decorator that fires before_/after_/cleanup_ callbacks sorted by `order` and turns Cancel*Exception into early
exits, forward hooks recording means/stds/histc of a leaky, shifted, clamped ReLU, kaiming_normal_ through
.apply, an LSUV-style init loop, optimizers written by hand that keep their state as attributes on the
Parameters (momentum, RMSProp, bias-corrected Adam with weight decay), torch.optim.AdamW under OneCycleLR
stepped per batch with a recorder of param_groups, an LR finder on ExponentialLR, and validation run through
torch.no_grad()(fn) on a shuffled DataLoader."""
import math
from functools import partial
from operator import attrgetter

import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.optim import lr_scheduler
from torch.utils.data import DataLoader, TensorDataset


class CancelFitException(Exception): pass
class CancelEpochException(Exception): pass
class CancelBatchException(Exception): pass


class Callback:
    order = 0


def run_cbs(cbs, name, learn):
    for cb in sorted(cbs, key=attrgetter("order")):
        fn = getattr(cb, name, None)
        if fn is not None:
            fn(learn)


class callbacks_around:
    def __init__(self, stage): self.stage = stage

    def __call__(self, f):
        def wrapped(learn, *a):
            try:
                learn.callback(f"before_{self.stage}")
                f(learn, *a)
                learn.callback(f"after_{self.stage}")
            except {"fit": CancelFitException, "epoch": CancelEpochException,
                    "batch": CancelBatchException}[self.stage]:
                pass
            finally:
                learn.callback(f"cleanup_{self.stage}")
        return wrapped


class Learner:
    def __init__(self, model, dls, loss_func, lr, cbs, opt_func):
        self.model, self.dls, self.loss_func, self.lr, self.cbs, self.opt_func = model, dls, loss_func, lr, cbs, opt_func

    def callback(self, name): run_cbs(self.cbs, name, self)

    @property
    def training(self): return self.model.training

    @callbacks_around("batch")
    def one_batch(self):
        self.preds = self.model(self.batch[0])
        self.loss = self.loss_func(self.preds, self.batch[1])
        if self.training:
            self.loss.backward()
            self.opt.step()
            self.opt.zero_grad()

    @callbacks_around("epoch")
    def _epoch(self):
        for self.iter, self.batch in enumerate(self.dl):
            self.one_batch()

    def one_epoch(self, train):
        self.model.train(train)
        self.dl = self.dls[0] if train else self.dls[1]
        self._epoch()

    @callbacks_around("fit")
    def _fit(self):
        for self.epoch in range(self.n_epochs):
            self.one_epoch(True)
            torch.no_grad()(self.one_epoch)(False)

    def fit(self, n_epochs, lr=None, extra=()):
        self.cbs = list(self.cbs) + list(extra)
        self.n_epochs = n_epochs
        self.opt = self.opt_func(self.model.parameters(), lr or self.lr)
        try:
            self._fit()
        finally:
            self.cbs = self.cbs[:len(self.cbs) - len(extra)]


class Metrics(Callback):
    def before_epoch(self, learn): self.tot, self.correct, self.n = 0.0, 0, 0

    def after_batch(self, learn):
        bs = len(learn.batch[0])
        self.tot += learn.loss.item() * bs
        self.correct += (learn.preds.argmax(dim=1) == learn.batch[1]).sum().item()
        self.n += bs

    def after_epoch(self, learn):
        print(f"epoch {learn.epoch} {'train' if learn.training else 'valid'} "
              f"loss {self.tot / self.n:.4f} acc {self.correct / self.n:.4f}")


class GeneralRelu(nn.Module):
    def __init__(self, leak=None, sub=None, maxv=None):
        super().__init__()
        self.leak, self.sub, self.maxv = leak, sub, maxv

    def forward(self, x):
        x = F.leaky_relu(x, self.leak) if self.leak is not None else F.relu(x)
        if self.sub is not None:
            x -= self.sub
        if self.maxv is not None:
            x.clamp_max_(self.maxv)
        return x


class Hook:
    def __init__(self, m, f): self.handle = m.register_forward_hook(partial(f, self))
    def remove(self): self.handle.remove()


def record(hook, mod, inp, out):
    if not hasattr(hook, "stats"):
        hook.stats = ([], [], [])
    acts = out.detach().cpu()
    hook.stats[0].append(acts.mean().item())
    hook.stats[1].append(acts.std().item())
    hook.stats[2].append(acts.abs().histc(8, 0, 4))


class ActStats(Callback):
    def before_fit(self, learn):
        def on_train(hook, *args):
            if learn.training:
                record(hook, *args)
        self.hooks = [Hook(m, on_train) for m in learn.model.modules() if isinstance(m, GeneralRelu)]

    def after_fit(self, learn):
        for h in self.hooks:
            h.remove()
        for i, h in enumerate(self.hooks):
            hist = torch.stack(h.stats[2]).t().float()
            dead = (hist[0] / hist.sum(0)).mean().item()
            print(f"layer {i} mean {sum(h.stats[0]) / len(h.stats[0]):.4f} std {h.stats[1][-1]:.4f} "
                  f"near-zero {dead:.4f} log1p {hist.log1p().sum().item():.3f}")


class SchedCB(Callback):
    def __init__(self, sched): self.sched = sched
    def before_fit(self, learn): self.s = self.sched(learn.opt)

    def after_batch(self, learn):
        if learn.training:
            self.s.step()


class Recorder(Callback):
    def __init__(self, **fns): self.fns = fns
    def before_fit(self, learn): self.recs, self.pg = {k: [] for k in self.fns}, learn.opt.param_groups[0]

    def after_batch(self, learn):
        if learn.training:
            for k, f in self.fns.items():
                self.recs[k].append(f(self))


class LRFinder(Callback):
    def __init__(self, gamma=1.4, max_mult=3): self.gamma, self.max_mult = gamma, max_mult

    def before_fit(self, learn):
        self.sched, self.lrs, self.losses, self.min = lr_scheduler.ExponentialLR(learn.opt, self.gamma), [], [], math.inf

    def after_batch(self, learn):
        if not learn.training:
            raise CancelEpochException()
        self.lrs.append(learn.opt.param_groups[0]["lr"])
        loss = learn.loss.item()
        self.losses.append(loss)
        self.min = min(self.min, loss)
        if math.isnan(loss) or loss > self.min * self.max_mult:
            raise CancelFitException()
        self.sched.step()


class SGD:
    def __init__(self, params, lr, wd=0.0):
        self.params, self.lr, self.wd, self.i = list(params), lr, wd, 0

    def step(self):
        with torch.no_grad():
            for p in self.params:
                if self.wd:
                    p *= 1 - self.lr * self.wd
                self.opt_step(p)
        self.i += 1

    def opt_step(self, p): p -= p.grad * self.lr

    def zero_grad(self):
        for p in self.params:
            p.grad.data.zero_()


class Momentum(SGD):
    def __init__(self, params, lr, wd=0.0, mom=0.9):
        super().__init__(params, lr, wd)
        self.mom = mom

    def opt_step(self, p):
        if not hasattr(p, "grad_avg"):
            p.grad_avg = torch.zeros_like(p.grad)
        p.grad_avg = p.grad_avg * self.mom + p.grad * (1 - self.mom)
        p -= self.lr * p.grad_avg


class RMSProp(SGD):
    def __init__(self, params, lr, wd=0.0, sqr_mom=0.99, eps=1e-5):
        super().__init__(params, lr, wd)
        self.sqr_mom, self.eps = sqr_mom, eps

    def opt_step(self, p):
        if not hasattr(p, "sqr_avg"):
            p.sqr_avg = p.grad ** 2
        p.sqr_avg = p.sqr_avg * self.sqr_mom + p.grad ** 2 * (1 - self.sqr_mom)
        p -= self.lr * p.grad / (p.sqr_avg.sqrt() + self.eps)


class Adam(SGD):
    def __init__(self, params, lr, wd=1e-4, beta1=0.9, beta2=0.99, eps=1e-5):
        super().__init__(params, lr, wd)
        self.beta1, self.beta2, self.eps = beta1, beta2, eps

    def opt_step(self, p):
        if not hasattr(p, "avg"):
            p.avg, p.sqr_avg = torch.zeros_like(p.grad.data), torch.zeros_like(p.grad.data)
        p.avg = self.beta1 * p.avg + (1 - self.beta1) * p.grad
        p.sqr_avg = self.beta2 * p.sqr_avg + (1 - self.beta2) * p.grad ** 2
        unbiased = p.avg / (1 - self.beta1 ** (self.i + 1))
        p -= self.lr * unbiased / (p.sqr_avg / (1 - self.beta2 ** (self.i + 1)) + self.eps).sqrt()


def conv(ni, nf, act=True, norm=None):
    layers = [nn.Conv2d(ni, nf, 3, stride=2, padding=1, bias=norm is None)]
    if norm:
        layers.append(norm(nf))
    if act:
        layers.append(GeneralRelu(leak=0.1, sub=0.4, maxv=6.0))
    return nn.Sequential(*layers)


def get_model(norm=None):
    return nn.Sequential(conv(1, 4, norm=norm), conv(4, 8, norm=norm), conv(8, 10, act=False), nn.Flatten())


def init_weights(m, leaky=0.1):
    if isinstance(m, (nn.Conv1d, nn.Conv2d)):
        nn.init.kaiming_normal_(m.weight, a=leaky)


torch.manual_seed(42)
N = 160
ys = torch.randint(0, 10, (N,))
xs = torch.randn(N, 1, 8, 8) * 0.5
xs[torch.arange(N), 0, ys % 8, :] += 1.5
xs[torch.arange(N), 0, :, ys // 2] += 0.8
xmean, xstd = xs.mean(), xs.std()
xs = (xs - xmean) / xstd
dls = (DataLoader(TensorDataset(xs[:128], ys[:128]), batch_size=32, shuffle=True),
       DataLoader(TensorDataset(xs[128:], ys[128:]), batch_size=64))
print("data", xs.shape, f"{xs.mean().item():.4f} {xs.std().item():.4f}")

# LSUV-style init on the first layer: rescale until its activations are standardised
torch.manual_seed(1)
model = get_model().apply(init_weights)
first, act = model[0][0], model[0][1]
stats = {}
handle = act.register_forward_hook(lambda m, i, o: stats.update(mean=o.mean(), std=o.std()))
xb = next(iter(dls[0]))[0]
with torch.no_grad():
    for it in range(10):
        model(xb)
        if abs(stats["std"] - 1) < 1e-3 and abs(stats["mean"]) < 1e-3:
            break
        first.bias -= stats["mean"]
        first.weight.data /= stats["std"]
handle.remove()
print(f"lsuv iterations {it} mean {stats['mean'].item():.4f} std {stats['std'].item():.4f}")

for name, opt_func, lr in [("sgd", SGD, 0.2), ("momentum", Momentum, 0.2), ("rmsprop", RMSProp, 3e-3),
                           ("adam", Adam, 5e-3)]:
    torch.manual_seed(42)
    model = get_model(norm=nn.BatchNorm2d).apply(init_weights)
    learn = Learner(model, dls, F.cross_entropy, lr, [Metrics()], opt_func)
    print(name)
    learn.fit(2, extra=[ActStats()] if name == "momentum" else ())
    w = model[0][0].weight
    print(f"{name} state {sorted(k for k in ('grad_avg', 'sqr_avg', 'avg') if hasattr(w, k))} "
          f"weight norm {w.norm().item():.4f}")

torch.manual_seed(42)
model = get_model(norm=nn.BatchNorm2d).apply(init_weights)
rec = Recorder(lr=lambda cb: cb.pg["lr"], mom=lambda cb: cb.pg["betas"][0])
tmax = 3 * len(dls[0])
learn = Learner(model, dls, F.cross_entropy, 2e-2, [Metrics()], optim.AdamW)
learn.fit(3, extra=[SchedCB(partial(lr_scheduler.OneCycleLR, max_lr=2e-2, total_steps=tmax)), rec])
print("lr trace", [round(v, 6) for v in rec.recs["lr"][::3]])
print("beta1 trace", [round(v, 5) for v in rec.recs["mom"][::3]])
print("AdamW state keys", sorted(learn.opt.state[next(model.parameters())].keys()))

torch.manual_seed(42)
finder = LRFinder()
learn = Learner(get_model().apply(init_weights), dls, F.cross_entropy, 1e-4, [], optim.SGD)
learn.fit(6, extra=[finder])
print("lr finder steps", len(finder.lrs), "lrs", [f"{v:.3e}" for v in finder.lrs[:5]],
      "losses", [round(v, 4) for v in finder.losses[:5]])
