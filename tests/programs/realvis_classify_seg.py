"""Classic CIFAR blocks and a segmentation head, condensed: a ShuffleNet channel shuffle by view/permute/reshape,
a squeeze-and-excitation gate, a MobileNetV2 inverted residual with a depthwise conv and ReLU6, a DenseNet concat,
trained by SGD with nesterov momentum and OneCycleLR on random_split data from a seeded DataLoader; then an
ASPP/PSP head (dilated convs, adaptive pooling bins, bilinear upsampling with and without align_corners), a
multiclass focal loss via log_softmax and gather, a polynomial LR decay written as an LRScheduler subclass, and a
confusion-matrix mean IoU computed with numpy."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import LRScheduler, OneCycleLR
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(11)


class Shuffle(nn.Module):
    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, x):
        n, c, h, w = x.size()
        return x.view(n, self.groups, c // self.groups, h, w).permute(0, 2, 1, 3, 4).reshape(n, c, h, w)


class SE(nn.Module):
    def __init__(self, c, r=4):
        super().__init__()
        self.fc1, self.fc2 = nn.Conv2d(c, c // r, 1), nn.Conv2d(c // r, c, 1)

    def forward(self, x):
        w = F.avg_pool2d(x, x.size(2))
        return x * torch.sigmoid(self.fc2(F.relu(self.fc1(w))))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, expansion, stride):
        super().__init__()
        mid = cin * expansion
        self.stride = stride
        self.body = nn.Sequential(
            nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU6(inplace=True),
            nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False), nn.BatchNorm2d(mid), nn.ReLU6(inplace=True),
            nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.shortcut = nn.Sequential() if cin == cout else nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False),
                                                                           nn.BatchNorm2d(cout))

    def forward(self, x):
        out = self.body(x)
        return out + self.shortcut(x) if self.stride == 1 else out


class DenseLayer(nn.Module):
    def __init__(self, cin, growth):
        super().__init__()
        self.bn, self.conv = nn.BatchNorm2d(cin), nn.Conv2d(cin, growth, 3, padding=1, bias=False)

    def forward(self, x):
        return torch.cat([self.conv(F.relu(self.bn(x))), x], 1)


class Net(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(True))
        self.features = nn.Sequential(nn.Conv2d(8, 8, 1, groups=2, bias=False), Shuffle(2), SE(8),
                                      InvertedResidual(8, 12, 2, 1), InvertedResidual(12, 12, 2, 2),
                                      DenseLayer(12, 4), nn.AvgPool2d(2))
        self.linear = nn.Linear(16, num_classes)

    def forward(self, x):
        out = self.features(self.stem(x))
        out = F.adaptive_avg_pool2d(out, 1).view(out.size(0), -1)
        return self.linear(out)


x = torch.randn(40, 3, 12, 12)
y = (x[:, 0].mean((1, 2)) * 6).long().clamp(-2, 2) + 2
train_set, val_set = random_split(TensorDataset(x, y), [32, 8], generator=torch.Generator().manual_seed(1))
loader = DataLoader(train_set, batch_size=8, shuffle=True)
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
sched = OneCycleLR(opt, max_lr=0.1, epochs=2, steps_per_epoch=len(loader), pct_start=0.3, div_factor=10,
                   anneal_strategy="cos")
crit = nn.CrossEntropyLoss(label_smoothing=0.1)
for epoch in range(2):
    net.train()
    for inputs, targets in loader:
        inputs = F.pad(inputs, (2, 2, 2, 2))[:, :, 2:14, 1:13].flip(3)
        loss = crit(net(inputs), targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        print(epoch, "loss %.5f" % loss.item(), "lr %.6f" % sched.get_last_lr()[0])
    net.eval()
    with torch.no_grad():
        vx, vy = next(iter(DataLoader(val_set, batch_size=8)))
        _, pred = net(vx).max(1)
        print("val acc", pred.eq(vy).sum().item(), "/", vy.size(0))


class ASPP(nn.Module):
    def __init__(self, cin, cout, rates):
        super().__init__()
        self.branches = nn.ModuleList([nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout),
                                                     nn.ReLU())])
        for r in rates:
            self.branches.append(nn.Sequential(nn.Conv2d(cin, cout, 3, padding=r, dilation=r, bias=False),
                                               nn.BatchNorm2d(cout), nn.ReLU()))
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(cin, cout, 1, bias=False), nn.ReLU())
        self.psp = nn.ModuleList([nn.AdaptiveAvgPool2d(b) for b in (2, 3)])
        self.project = nn.Sequential(nn.Conv2d((len(rates) + 4) * cout, cout, 1, bias=False), nn.BatchNorm2d(cout),
                                     nn.ReLU(), nn.Dropout(0.5))

    def forward(self, x):
        outs = [b(x) for b in self.branches]
        outs.append(F.interpolate(self.pool(x), size=x.shape[-2:], mode="bilinear", align_corners=False))
        outs += [F.interpolate(p(outs[0]), x.size()[2:], mode="bilinear", align_corners=True) for p in self.psp]
        return self.project(torch.cat(outs, dim=1))


class FocalLoss(nn.Module):
    def __init__(self, gamma=2.0, alpha=None):
        super().__init__()
        self.gamma, self.alpha = gamma, None if alpha is None else torch.Tensor(alpha)

    def forward(self, input, target):
        input = input.view(input.size(0), input.size(1), -1).transpose(1, 2).contiguous().view(-1, input.size(1))
        logpt = F.log_softmax(input, dim=1).gather(1, target.view(-1, 1)).view(-1)
        pt = logpt.data.exp()
        if self.alpha is not None:
            self.alpha = self.alpha.type_as(input.data)
            logpt = logpt * self.alpha.gather(0, target.data.view(-1))
        return (-1 * (1 - pt) ** self.gamma * logpt).mean()


class PolyDecay(LRScheduler):
    def __init__(self, optimizer, max_decay_steps, end_lr=1e-4, power=0.9):
        self.max_decay_steps, self.end_lr, self.power, self.last_step = max_decay_steps, end_lr, power, 0
        super().__init__(optimizer)

    def get_lr(self):
        return [(b - self.end_lr) * (1 - self.last_step / self.max_decay_steps) ** self.power + self.end_lr
                for b in self.base_lrs]

    def step(self, step=None):
        self.last_step = (self.last_step + 1) if step is None else max(step, 1)
        if self.last_step <= self.max_decay_steps:
            for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
                group["lr"] = lr


def mean_iou(pred, label, n):
    mask = (label >= 0) & (label < n)
    hist = np.bincount(n * label[mask].astype(int) + pred[mask], minlength=n ** 2).reshape(n, n)
    iu = np.diag(hist) / (hist.sum(axis=1) + hist.sum(axis=0) - np.diag(hist))
    return np.nanmean(iu)


seg = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), ASPP(8, 6, [1, 2]), nn.Conv2d(6, 3, 1))
img = torch.rand(2, 3, 16, 16)
mask = (img[:, 0] > 0.6).long() + (img[:, 1] > 0.7).long()
opt = torch.optim.Adam(seg.parameters(), lr=3e-3)
poly = PolyDecay(opt, max_decay_steps=5)
focal = FocalLoss(gamma=2.0, alpha=[0.2, 0.3, 0.5])
for step in range(5):
    seg.train()
    out = F.interpolate(seg(img), size=img.shape[-2:], mode="bilinear", align_corners=False)
    loss = focal(out, mask)
    opt.zero_grad()
    loss.backward()
    opt.step()
    poly.step()
    print("seg", step, "focal %.6f" % loss.item(), "lr %.6f" % opt.param_groups[0]["lr"])
seg.eval()
with torch.no_grad():
    out = F.interpolate(seg(img), size=img.shape[-2:], mode="bilinear", align_corners=False)
pred = torch.argmax(out, dim=1)
print("mIoU %.5f" % mean_iou(pred.numpy().flatten(), mask.numpy().flatten(), 3), "logits %.5f" % out.sum().item())
