# The training half of a PyTorch course, condensed: a Dataset of small grey images with its own transforms (to a
# float tensor, normalised, labels one-hot through scatter_), DataLoaders, an MLP and a LeNet-style CNN, the
# train/test loops with accuracy, checkpoints (state_dict, whole model, a general checkpoint, warm starting with
# strict=False), module hooks, DataParallel on the CPU, and the nn/optim rewrites of a polynomial fit.
# Seeded with torch.manual_seed (and random.seed): tapegrad draws torch's numbers.
import os
import random
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset

torch.manual_seed(3)
random.seed(3)


class Shapes(Dataset):
    """Grey 16x16 images of three noisy prototypes, held as uint8 arrays as an image library would give them."""

    def __init__(self, n, seed, transform=None, target_transform=None):
        rs = np.random.RandomState(seed)
        protos = (np.random.RandomState(99).rand(3, 16, 16) > 0.6) * 200.0
        self.labels = rs.randint(0, 3, n)
        self.images = np.clip(protos[self.labels] + rs.randint(0, 90, (n, 16, 16)), 0, 255).astype(np.uint8)
        self.transform, self.target_transform = transform, target_transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        img, label = self.images[i], int(self.labels[i])
        if self.transform:
            img = self.transform(img)
        if self.target_transform:
            label = self.target_transform(label)
        return img, label


def to_tensor(img):
    return torch.from_numpy(img).unsqueeze(0).float().div(255)


def normalize(t, mean=(0.5,), std=(0.5,)):
    return (t - torch.as_tensor(mean).view(-1, 1, 1)) / torch.as_tensor(std).view(-1, 1, 1)


def one_hot(y):
    return torch.zeros(3, dtype=torch.float).scatter_(0, torch.tensor(y), value=1)


train_ds = Shapes(240, 0, transform=lambda im: normalize(to_tensor(im)))
test_ds = Shapes(60, 1, transform=lambda im: normalize(to_tensor(im)))
img, lab = Shapes(4, 2, transform=to_tensor, target_transform=one_hot)[1]
print(img.shape, img.dtype, img.min(), img.max(), lab)
train_dl = DataLoader(train_ds, batch_size=32, shuffle=True)
test_dl = DataLoader(test_ds, batch_size=32)
feats, labels = next(iter(train_dl))
print(f"batch {feats.size()} {labels.size()} {labels.dtype}", labels[:8], len(train_dl))
picks = [torch.randint(len(train_ds), size=(1,)).item() for _ in range(4)]
print(picks, [train_ds[i][1] for i in picks])


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.stack = nn.Sequential(nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 3))

    def forward(self, x):
        return self.stack(self.flatten(x))


class LeNetish(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = F.max_pool2d(F.relu(self.conv2(x)), (2, 2))
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


def train_loop(dl, model, loss_fn, opt):
    model.train()
    for batch, (X, y) in enumerate(dl):
        loss = loss_fn(model(X), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if batch % 4 == 0:
            print(f"loss: {loss.item():>7f}  [{batch * dl.batch_size + len(X):>4d}/{len(dl.dataset):>4d}]")


def test_loop(dl, model, loss_fn):
    model.eval()
    total, correct = 0.0, 0
    with torch.no_grad():
        for X, y in dl:
            pred = model(X)
            total += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    print(f"Accuracy: {100 * correct / len(dl.dataset):>0.1f}%, Avg loss: {total / len(dl):>8f}")


loss_fn = nn.CrossEntropyLoss()
mlp = MLP()
print(mlp)
probs = nn.Softmax(dim=1)(mlp(torch.rand(2, 16, 16)))
print(probs, probs.argmax(1))
for name, param in list(mlp.named_parameters())[:2]:
    print(f"{name} | {param.size()} | {param.view(-1)[:4]}")
opt = torch.optim.SGD(mlp.parameters(), lr=0.05)
for epoch in range(2):
    print(f"Epoch {epoch + 1}")
    train_loop(train_dl, mlp, loss_fn, opt)
    test_loop(test_dl, mlp, loss_fn)

net = LeNetish()
opt = torch.optim.SGD(net.parameters(), lr=0.02, momentum=0.9)
for epoch in range(2):
    running = 0.0
    for i, (inputs, targets) in enumerate(train_dl, 0):
        opt.zero_grad()
        loss = loss_fn(net(inputs), targets)
        loss.backward()
        opt.step()
        running += loss.item()
        if i % 4 == 3:
            print(f"[{epoch + 1}, {i + 1:3d}] loss: {running / 4:.4f}")
            running = 0.0
images, truth = next(iter(test_dl))
_, predicted = torch.max(net(images), 1)
per_class = {c: [0, 0] for c in range(3)}
with torch.no_grad():
    for X, y in test_dl:
        _, guess = torch.max(net(X).data, 1)
        for t, g in zip(y, guess):
            per_class[t.item()][0] += int(t == g)
            per_class[t.item()][1] += 1
print(predicted[:8], truth[:8], {c: round(100 * a / n, 1) for c, (a, n) in per_class.items()})

# --- checkpoints --------------------------------------------------------------------------------------------------
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "net.pth")
    torch.save(net.state_dict(), path)
    back = LeNetish()
    print(back.load_state_dict(torch.load(path, weights_only=True)))
    back.eval()
    print(torch.equal(back(images), net(images)), back(images)[0])
    torch.save(net, path)
    whole = torch.load(path, weights_only=False)
    print(type(whole).__name__, whole.fc2.bias)
    torch.save({"epoch": 2, "model_state_dict": net.state_dict(), "optimizer_state_dict": opt.state_dict(),
                "loss": loss}, path)
    ckpt = torch.load(path, weights_only=True)
    fresh = LeNetish()
    fresh_opt = torch.optim.SGD(fresh.parameters(), lr=0.02, momentum=0.9)
    fresh.load_state_dict(ckpt["model_state_dict"])
    fresh_opt.load_state_dict(ckpt["optimizer_state_dict"])
    print(ckpt["epoch"], ckpt["loss"], fresh_opt.state_dict()["state"][0]["momentum_buffer"].sum(),
          fresh_opt.param_groups[0]["momentum"])
    torch.save(mlp.state_dict(), path)
    warm = nn.Sequential()
    warm.flatten = nn.Flatten()
    warm.stack = nn.Sequential(nn.Linear(256, 64), nn.Tanh())
    print(warm.load_state_dict(torch.load(path, map_location=torch.device("cpu"), weights_only=True),
                               strict=False))
    print(torch.equal(warm.stack[0].weight, mlp.stack[0].weight))


# --- hooks and DataParallel -----------------------------------------------------------------------------------------
def show_forward(module, inp, out):
    print(f"{module.__class__.__name__} forward: in {tuple(inp[0].size())} out {tuple(out.size())} "
          f"norm {out.data.norm():.4f}")


def show_backward(module, grad_in, grad_out):
    print(f"{module.__class__.__name__} backward: grad_out {grad_out[0].norm():.4f} "
          f"grad_in {grad_in[0].norm():.4f}")


h1 = net.conv2.register_forward_hook(show_forward)
h2 = net.conv2.register_full_backward_hook(show_backward)
loss_fn(net(images[:2]), truth[:2]).backward()
h1.remove()
h2.remove()
dp = nn.DataParallel(net)
print(dp(images[:3]).sum(), dp.module is net, torch.cuda.device_count() > 1)

# --- the polynomial fit, with nn and optim ----------------------------------------------------------------------------
xs = torch.linspace(-1, 1, 500)
ys = torch.exp(xs)
xx = xs.unsqueeze(-1).pow(torch.tensor([1, 2, 3]))
poly = nn.Sequential(nn.Linear(3, 1), nn.Flatten(0, 1))
mse = nn.MSELoss(reduction="sum")
opt = torch.optim.RMSprop(poly.parameters(), lr=1e-2)
for t in range(150):
    loss = mse(poly(xx), ys)
    if t % 50 == 49:
        print(t, round(loss.item(), 4))
    opt.zero_grad()
    loss.backward()
    opt.step()
lin = poly[0]
print(f"y = {lin.bias.item():.4f} + {lin.weight[:, 0].item():.4f} x + {lin.weight[:, 1].item():.4f} x^2 "
      f"+ {lin.weight[:, 2].item():.4f} x^3")


class Wobbly(nn.Module):
    """A cubic whose degree-4/5 terms are switched in at random and share one weight."""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.c, self.d, self.e = (nn.Parameter(torch.randn(())) for _ in range(5))

    def forward(self, x):
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for k in range(4, random.randint(4, 6)):
            y = y + self.e * x ** k
        return y


wob = Wobbly()
opt = torch.optim.SGD(wob.parameters(), lr=1e-4, momentum=0.9)
data = TensorDataset(xs, ys)
for t in range(60):
    loss = mse(wob(xs), ys)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(round(loss.item(), 4), [round(p.item(), 4) for p in wob.parameters()], len(data), data[3])
