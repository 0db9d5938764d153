import numpy as np, torch, torch.nn as nn, torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader, Subset, random_split, WeightedRandomSampler, ConcatDataset
rng = np.random.default_rng(7)
imgs = rng.random((40, 1, 12, 12)).astype(np.float32); labels = rng.integers(0, 3, 40)
class DS(Dataset):
    def __init__(s, flip=False): s.flip = flip
    def __len__(s): return len(imgs)
    def __getitem__(s, i):
        x = torch.from_numpy(imgs[i])
        if s.flip: x = torch.flip(x, dims=[-1])
        return {"image": (x - 0.5) / 0.25, "label": int(labels[i])}
ds = ConcatDataset([DS(), DS(flip=True)])
print(len(ds), ds[41]["image"].shape, ds[41]["label"])
sub = Subset(ds, list(range(0, 80, 2)))
dl = DataLoader(sub, batch_size=8, shuffle=False)
class Net(nn.Module):
    def __init__(s):
        super().__init__()
        s.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                                   nn.Conv2d(4, 8, 3), nn.ReLU(), nn.Dropout2d(0.0), nn.AdaptiveAvgPool2d((2, 2)))
        s.classifier = nn.Sequential(nn.Flatten(), nn.Linear(32, 3))
    def forward(s, x): return s.classifier(s.features(x))
net = Net()
with torch.no_grad():
    for p in net.parameters(): p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
opt = torch.optim.Adam(net.parameters(), lr=0.01, amsgrad=True)
crit = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5]))
for ep in range(2):
    net.train(); tot = 0.0
    for b in dl:
        out = net(b["image"]); loss = crit(out, b["label"])
        opt.zero_grad(); loss.backward(); opt.step(); tot += loss.item() * b["image"].size(0)
    net.eval(); correct = 0
    with torch.no_grad():
        for b in dl:
            pred = net(b["image"]).argmax(dim=1); correct += (pred == b["label"]).sum().item()
    print(ep, f"{tot / len(sub):.5f}", correct, f"{100.0 * correct / len(sub):.2f}%")
up = F.interpolate(torch.from_numpy(imgs[:2]), size=(6, 6), mode="bilinear", align_corners=True)
print(up.shape, up.mean().item())
print(F.avg_pool2d(torch.from_numpy(imgs[:1]), 3, stride=2).sum().item(), F.unfold(torch.from_numpy(imgs[:1]), 3).shape)
w = torch.tensor([0.1, 0.9]); s = WeightedRandomSampler(w, 10, replacement=True); print(len(list(s)))
a, b = random_split(range(10), [0.7, 0.3], generator=torch.Generator().manual_seed(0)); print(len(a), len(b))
print(net.features[0].weight.grad.abs().sum() > 0, sum(p.numel() for p in net.parameters()))
