import numpy as np, torch, torch.nn as nn
from torch.optim.swa_utils import AveragedModel, SWALR, get_ema_multi_avg_fn
rng = np.random.default_rng(13)
class M(nn.Module):
    def __init__(s):
        super().__init__(); s.p = nn.ParameterDict({"a": nn.Parameter(torch.ones(3)), "b": nn.Parameter(torch.zeros(2))}); s.lin = nn.Linear(3, 2)
    def forward(s, x): return s.lin(x * s.p["a"]) + s.p["b"]
m = M()
with torch.no_grad():
    for p in m.parameters(): p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
opt = torch.optim.SGD([{"params": m.lin.parameters()}], lr=0.1, momentum=0.9)
opt.add_param_group({"params": list(m.p.parameters()), "lr": 0.01})
warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=3)
cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)
sched = torch.optim.lr_scheduler.SequentialLR(opt, [warm, cos], milestones=[3])
ema = AveragedModel(m, multi_avg_fn=get_ema_multi_avg_fn(0.9))
x = torch.from_numpy(rng.standard_normal((8, 3)).astype(np.float32)); y = torch.from_numpy(rng.standard_normal((8, 2)).astype(np.float32))
accum = 2
for step in range(8):
    for k in range(accum):
        loss = ((m(x[k * 4:(k + 1) * 4]) - y[k * 4:(k + 1) * 4]) ** 2).mean() / accum
        loss.backward()
    tn = nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    opt.step(); opt.zero_grad(); sched.step(); ema.update_parameters(m)
    print(step, f"{loss.item():.6f} {tn.item():.6f}", [f"{g['lr']:.6f}" for g in opt.param_groups])
sd = opt.state_dict(); print(sorted(sd.keys()), len(sd["state"]), sd["param_groups"][1]["lr"])
opt2 = torch.optim.SGD([{"params": m.lin.parameters()}, {"params": list(m.p.parameters())}], lr=0.5, momentum=0.9); opt2.load_state_dict(sd)
print(opt2.param_groups[0]["lr"], opt2.state[m.lin.weight]["momentum_buffer"].shape)
print(ema.module.lin.weight.detach(), ema.n_averaged.item())
print([k for k in m.state_dict()], m.p["a"].detach())
ch = torch.optim.lr_scheduler.ChainedScheduler([torch.optim.lr_scheduler.ExponentialLR(opt2, 0.9), torch.optim.lr_scheduler.StepLR(opt2, 2, 0.5)])
for _ in range(4): opt2.step(); ch.step()
print([round(g["lr"], 6) for g in opt2.param_groups])
swa = SWALR(opt2, swa_lr=0.05, anneal_epochs=2)
for _ in range(3): opt2.step(); swa.step()
print([round(g["lr"], 6) for g in opt2.param_groups])
