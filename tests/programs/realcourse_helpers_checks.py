"""English course repositories' helper modules and checks, condensed: training/evaluation helpers that unwrap a
remote model's output when `isinstance(out, torch.distributed.rpc.api.RRef)`, '%'-formatting of 0-d and 1-element
loss/accuracy tensors, accumulators kept as `torch.tensor([0.0])`, a ModuleList grown by `extend` with the batch
flattened by `resize_`, accuracy through `type_as(torch.FloatTensor())`, a checkpoint dict that rebuilds the network
from its layer sizes, project unit tests that wrap the module and optimizer in `MagicMock(wraps=...)` and spy on
`torch.autograd.backward` with `patch.object`, a pre-0.4 `Function` instance refused in torch's words,
and `Variable(..., volatile=True)`. Seeded with `torch.manual_seed`."""
import os
import tempfile
import warnings
from unittest.mock import MagicMock, patch

import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd import Variable
from torch.utils.data import DataLoader, SubsetRandomSampler, TensorDataset

warnings.simplefilter("ignore")
torch.manual_seed(3)

# ---- data: 10 noisy class prototypes as 1x8x8 images
protos = torch.rand(10, 1, 8, 8)
labels = torch.randint(0, 10, (240,))
images = (protos[labels] + 0.3 * torch.randn(240, 1, 8, 8)).clamp(0, 1)
dataset = TensorDataset(images, labels)
train_loader = DataLoader(dataset, batch_size=32, drop_last=True, sampler=SubsetRandomSampler(torch.arange(0, 192)))
valid_loader = DataLoader(dataset, batch_size=32, sampler=SubsetRandomSampler(torch.arange(192, 240)))


def unwrap(out):
    # a model run through RPC hands back an RRef; a local one, the tensor
    return out.local_value() if isinstance(out, torch.distributed.rpc.api.RRef) else out


def accuracy_and_loss(model, loader):
    model.eval()
    with torch.set_grad_enabled(False):
        correct, seen, loss_sum = 0, 0, 0.
        for x, y in loader:
            logits = unwrap(model(x))
            _, pred = torch.max(logits, 1)
            seen += y.size(0)
            correct += (pred == y).sum()
            loss_sum += F.cross_entropy(logits, y, reduction="sum")
    return correct.float() / seen * 100, loss_sum / seen


class SmallCNN(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(inplace=True),
                                      nn.MaxPool2d(2), nn.Conv2d(6, 8, 3, padding=1), nn.ReLU(inplace=True),
                                      nn.AdaptiveAvgPool2d((2, 2)))
        self.classifier = nn.Sequential(nn.Dropout(0.1), nn.Linear(32, n_classes))
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_uniform_(m.weight, mode="fan_in", nonlinearity="relu")
                m.bias.detach().zero_()

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


cnn = SmallCNN(10)
opt = torch.optim.SGD(cnn.parameters(), lr=0.05, momentum=0.9)
for epoch in range(2):
    cnn.train()
    run_loss = torch.tensor([0.0])
    run_hits = torch.tensor([0.0])
    n = 0
    for i, (x, y) in enumerate(train_loader):
        logits = unwrap(cnn(x))
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            run_loss += loss.float()
            run_hits += (torch.argmax(logits, dim=1) == y).sum().float()
            n += y.shape[0]
        if i % 3 == 0:
            print("epoch %d batch %d loss %.4f" % (epoch + 1, i, loss))  # noqa: UP031 (tensors through %)
    acc, vloss = accuracy_and_loss(cnn, valid_loader)
    print("epoch %d | train loss %.4f acc %.3f | valid acc %.2f%% loss %.4f"  # noqa: UP031
          % (epoch + 1, run_loss / len(train_loader), run_hits / n, acc, vloss))


# ---- a fully connected net grown by ModuleList.extend, flattened in place, saved with its sizes
class MLP(nn.Module):
    def __init__(self, n_in, n_out, hidden, p=0.2):
        super().__init__()
        self.hidden = nn.ModuleList([nn.Linear(n_in, hidden[0])])
        self.hidden.extend([nn.Linear(a, b) for a, b in zip(hidden[:-1], hidden[1:])])
        self.out = nn.Linear(hidden[-1], n_out)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        for layer in self.hidden:
            x = self.drop(F.relu(layer(x)))
        return F.log_softmax(self.out(x), dim=1)


mlp = MLP(64, 10, [32, 24])
crit = nn.NLLLoss()
adam = torch.optim.Adam(mlp.parameters(), lr=0.003)
for x, y in train_loader:
    x = x.clone()
    x.resize_(x.size()[0], 64)
    adam.zero_grad()
    loss = crit(mlp(x), y)
    loss.backward()
    adam.step()
mlp.eval()
hits = 0
with torch.no_grad():
    for x, y in valid_loader:
        ps = torch.exp(mlp(x.clone().resize_(x.size(0), 64)))
        hits += (y.data == ps.max(1)[1]).type_as(torch.FloatTensor()).mean()
print("mlp: last loss {:.4f}, valid accuracy {:.3f}".format(loss.item(), hits / len(valid_loader)))  # noqa: UP032

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "ckpt.pth")
    torch.save({"n_in": 64, "n_out": 10, "hidden": [m.out_features for m in mlp.hidden],
                "state_dict": mlp.state_dict()}, path)
    ck = torch.load(path)
    again = MLP(ck["n_in"], ck["n_out"], ck["hidden"])
    again.load_state_dict(ck["state_dict"])
    again.eval()
    probe = images[:3].reshape(3, 64)
    print(ck["hidden"], torch.equal(again(probe), mlp(probe)), again(probe).exp().sum(dim=1))
    try:
        MLP(64, 10, [30, 24]).load_state_dict(ck["state_dict"])
    except RuntimeError as e:
        print(str(e).splitlines()[0])


# ---- project-style unit checks with mocks
class Wrapped(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 10)
        self.forward_called = False

    def forward(self, x, hidden):
        self.forward_called = True
        return self.fc(x), hidden


def one_step(net, optimizer, criterion, x, y, hidden):
    net.zero_grad()
    out, hidden = net(x, hidden)
    loss = criterion(out, y)
    loss.backward()
    nn.utils.clip_grad_norm_(net.parameters(), 5)
    optimizer.step()
    return loss.item(), hidden


mock_net = MagicMock(wraps=Wrapped())
mock_opt = MagicMock(wraps=torch.optim.Adam(mock_net.parameters(), lr=0.01))
mock_crit = MagicMock(wraps=nn.CrossEntropyLoss())
with patch.object(torch.autograd, "backward", wraps=torch.autograd.backward) as spy:
    h0 = torch.zeros(2, 32, 5)
    loss, h1 = one_step(mock_net, mock_opt, mock_crit, images[:32].reshape(32, 64), labels[:32], h0)
assert mock_net.forward_called and spy.called and mock_opt.step.called and type(loss) is float
print("mock checks", loss, spy.call_count, mock_crit.call_count, (h1 == h0).sum().item())


# ---- the pre-0.4 custom Function style is refused; Variable(volatile=True) is a plain tensor
class OldReLU(torch.autograd.Function):
    def forward(self, x):
        return x.clamp(min=0)


try:
    OldReLU()(torch.randn(3))
except RuntimeError as e:
    print(str(e)[:78])
v = Variable(torch.randn(2, 3), volatile=True)
print(v.requires_grad, v.shape, OldReLU.apply(torch.tensor([-1.0, 2.0])))

# ---- the RRef check needs no RPC group: a local output passes through, is_available answers
print(torch.distributed.rpc.is_available(), isinstance(images, torch.distributed.rpc.api.RRef),
      unwrap(cnn(images[:4])).argmax(dim=1))
