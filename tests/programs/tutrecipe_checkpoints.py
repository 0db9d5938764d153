"""Checkpoint recipes in one script: a model's and an optimizer's state_dict, a general checkpoint resumed,
several models in one file, warm-starting a differently shaped model with strict=False, a pickled whole module
(refused by the weights-only default, loaded with weights_only=False), swapping a parameter in place so that the
optimizer keeps seeing it, and the default-device helpers."""

import os
import pickle
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(7)
workdir = tempfile.mkdtemp()


class SmallConvNet(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(3 * 3 * 3, classes)

    def forward(self, x):
        x = self.pool(F.relu(self.conv(x)))
        return self.head(torch.flatten(x, 1))


net = SmallConvNet()
opt = optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
images, labels = torch.randn(6, 1, 8, 8), torch.tensor([0, 1, 2, 3, 1, 0])

for name, value in net.state_dict().items():
    print(name, tuple(value.size()), round(value.sum().item(), 5))


def train_steps(model, optimizer, n):
    for _ in range(n):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
    return loss.item()


print("loss after 3 steps", train_steps(net, opt, 3))
print("optimizer groups", opt.state_dict()["param_groups"])
print("momentum of head.bias", opt.state_dict()["state"][3]["momentum_buffer"])

# a general checkpoint: resume both model and optimizer, then training continues identically
ckpt = os.path.join(workdir, "general.tar")
torch.save({"epoch": 3, "model_state_dict": net.state_dict(), "optimizer_state_dict": opt.state_dict(),
            "loss": 0.25}, ckpt)
resumed = SmallConvNet()
resumed_opt = optim.SGD(resumed.parameters(), lr=0.05, momentum=0.9)
state = torch.load(ckpt)
resumed.load_state_dict(state["model_state_dict"])
resumed_opt.load_state_dict(state["optimizer_state_dict"])
print("epoch", state["epoch"], "loss", state["loss"])
print("continued", train_steps(net, opt, 2), train_steps(resumed, resumed_opt, 2))

# two models and their optimizers in one file
a, b = SmallConvNet(), SmallConvNet(classes=2)
pair = os.path.join(workdir, "pair.pt")
torch.save({"a": a.state_dict(), "b": b.state_dict()}, pair)
both = torch.load(pair)
a2, b2 = SmallConvNet(), SmallConvNet(classes=2)
print(a2.load_state_dict(both["a"]), b2.load_state_dict(both["b"]))
print("b's head", b2.head.weight.sum().item(), b2.eval().training, b2.train().training)

# warm start: the head does not fit, so drop it and load the rest non-strictly
donor = {k: v for k, v in net.state_dict().items() if not k.startswith("head")}
donor["extra.scale"] = torch.ones(1)
result = b2.load_state_dict(donor, strict=False)
print("missing", result.missing_keys, "unexpected", result.unexpected_keys)
print("conv copied", torch.equal(b2.conv.weight, net.conv.weight))
try:
    b2.load_state_dict(net.state_dict())
except RuntimeError as err:
    print("strict load refused:", "size mismatch for head.weight" in str(err))

# a whole pickled module: refused by default, loaded when trusted
whole = os.path.join(workdir, "whole.pt")
torch.save(net, whole)
try:
    torch.load(whole)
except pickle.UnpicklingError:
    print("weights_only refused the module")
clone = torch.load(whole, weights_only=False)
print("clone output", clone(images[:2]))

# swapping a parameter's contents: the optimizer still holds the same object
lin = nn.Linear(2, 2)
sgd = optim.SGD(lin.parameters(), lr=0.1)
replacement = nn.Parameter(torch.full((2, 2), 0.5))
torch.utils.swap_tensors(lin.weight, replacement)
print("optimizer sees swapped weight", sgd.param_groups[0]["params"][0] is lin.weight, lin.weight)
lin(torch.ones(1, 2)).sum().backward()
sgd.step()
print("after step", lin.weight)

# default device helpers (cpu in both runs)
with torch.device("cpu"):
    made = nn.Linear(3, 1)
print(made.weight.device, torch.get_default_device(), made(torch.ones(2, 3)).sum())

import shutil  # noqa: E402

shutil.rmtree(workdir)
