import numpy as np, torch, torch.nn as nn, torch.nn.functional as F, tempfile, os
rng = np.random.default_rng(5)
class Net(nn.Module):
    def __init__(s):
        super().__init__()
        s.conv = nn.Conv1d(3, 8, 3, padding=1); s.bn = nn.BatchNorm1d(8); s.pool = nn.AdaptiveAvgPool1d(1)
        s.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(2)]); s.heads = nn.ModuleDict({"a": nn.Linear(8, 2), "b": nn.Linear(8, 1)})
        s.scale = nn.Parameter(torch.ones(1)); s.plist = nn.ParameterList([nn.Parameter(torch.zeros(8))])
    def forward(s, x):
        h = self_pool = s.pool(F.gelu(s.bn(s.conv(x)))).squeeze(-1)
        for b in s.blocks: h = h + F.silu(b(h)) + s.plist[0]
        return s.heads["a"](h) * s.scale, s.heads["b"](h)
def init(m):
    if isinstance(m, (nn.Linear, nn.Conv1d)):
        nn.init.xavier_uniform_(m.weight); nn.init.zeros_(m.bias)
torch.manual_seed(0)
net = Net(); net.apply(init)
with torch.no_grad():
    for p in net.parameters(): p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
x = torch.from_numpy(rng.standard_normal((10, 3, 12)).astype(np.float32)); y = torch.from_numpy(rng.integers(0, 2, 10)); t = torch.randn(10, 1) * 0
opt = torch.optim.SGD([{"params": net.conv.parameters(), "lr": 0.01}, {"params": [p for n, p in net.named_parameters() if not n.startswith("conv")]}], lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10)
plateau = None
for step in range(4):
    a, b = net(x)
    loss = F.cross_entropy(a, y) + F.mse_loss(b, t) + F.smooth_l1_loss(b, t, beta=0.5) + F.huber_loss(b, t)
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step(); sched.step()
    print(step, f"{loss.item():.5f}", [f"{g['lr']:.5f}" for g in opt.param_groups])
d = tempfile.mkdtemp(); path = os.path.join(d, "ck.pt")
torch.save({"model": net.state_dict(), "opt": opt.state_dict(), "epoch": 3}, path)
ck = torch.load(path, weights_only=True)
net2 = Net(); net2.load_state_dict(ck["model"]); opt2 = torch.optim.SGD(net2.parameters(), lr=0.05, momentum=0.9)
print(ck["epoch"], sorted(ck["opt"].keys()), net2.bn.running_mean)
net2.eval(); net.eval()
with torch.no_grad(): print(torch.allclose(net(x)[0], net2(x)[0]), net2(x)[0][:2])
for n, mod in net.named_modules():
    if isinstance(mod, nn.Linear): mod.requires_grad_(False)
print([n for n, p in net.named_parameters() if p.requires_grad])
print(net.bn.num_batches_tracked, net.bn.momentum, net.conv.weight.shape, net.conv.stride)
tot = 0
for i in range(3):
    out = (net(x)[0] ** 2).mean()
    tot += out.item()
print(round(tot, 5))
rp = ReduceLROnPlateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt2, patience=0, factor=0.5)
for v in (1.0, 1.0, 1.0): rp.step(v)
print(opt2.param_groups[0]["lr"])
print(torch.get_default_dtype())
