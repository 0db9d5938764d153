# The training utilities of the Chinese "Dive into Deep Learning" PyTorch port and its chapters, condensed and
# rewritten: a shuffled minibatch iterator, linear regression and softmax regression from scratch (gather for the
# picked log-probabilities, sgd on param.data), an accuracy evaluator that flips eval/train, FlattenLayer and
# a LeNet trained by Adam on a DataLoader, corr2d learning an edge kernel, a global-average-pool NiN head, a char
# RNN from scratch (one-hot inputs, random and consecutive sampling, detach between batches, gradient clipping by
# the global norm, perplexity) and nn.RNN's version, the optimisation chapter's hand-written momentum/AdaGrad/
# RMSProp/Adam states against torch.optim, and MultiBoxPrior anchors with their IoU. Seeded with torch.manual_seed,
# random.seed and np.random.seed, as the book's notebooks are.
import math
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.data as Data

torch.manual_seed(0)
random.seed(0)
np.random.seed(0)


def data_iter(batch_size, features, labels):
    idx = list(range(len(features)))
    random.shuffle(idx)
    for i in range(0, len(idx), batch_size):
        j = torch.LongTensor(idx[i: min(i + batch_size, len(idx))])
        yield features.index_select(0, j), labels.index_select(0, j)


def sgd(params, lr, batch_size):
    for p in params:
        p.data -= lr * p.grad / batch_size


# --- linear regression from scratch -------------------------------------------------------------------------
true_w, true_b = [2, -3.4], 4.2
features = torch.randn(200, 2, dtype=torch.float32)
labels = true_w[0] * features[:, 0] + true_w[1] * features[:, 1] + true_b
labels += torch.tensor(np.random.normal(0, 0.01, size=labels.size()), dtype=torch.float32)
w = torch.tensor(np.random.normal(0, 0.01, (2, 1)), dtype=torch.float32, requires_grad=True)
b = torch.zeros(1, dtype=torch.float32, requires_grad=True)
for epoch in range(3):
    for X, y in data_iter(10, features, labels):
        loss = ((torch.mm(X, w) + b - y.view(-1, 1)) ** 2 / 2).sum()
        loss.backward()
        sgd([w, b], 0.03, 10)
        w.grad.data.zero_()
        b.grad.data.zero_()
    train_l = ((torch.mm(features, w) + b - labels.view(-1, 1)) ** 2 / 2).mean()
    print(f"epoch {epoch + 1}, loss {train_l.item():f}", w.view(-1).tolist(), b.item())

# --- softmax regression from scratch and a concise MLP --------------------------------------------------------
n_cls, n_in = 5, 16
centres = torch.randn(n_cls, n_in) * 2
ys = torch.randint(0, n_cls, (300,))
xs = centres[ys] + torch.randn(300, n_in)
train_iter = Data.DataLoader(Data.TensorDataset(xs[:240], ys[:240]), batch_size=32, shuffle=True)
test_iter = Data.DataLoader(Data.TensorDataset(xs[240:], ys[240:]), batch_size=32)


def softmax(X):
    X_exp = X.exp()
    return X_exp / X_exp.sum(dim=1, keepdim=True)


def cross_entropy(y_hat, y):
    return -torch.log(y_hat.gather(1, y.view(-1, 1)))


def evaluate_accuracy(data_iter, net):
    acc_sum, n = 0.0, 0
    with torch.no_grad():
        for X, y in data_iter:
            if isinstance(net, nn.Module):
                net.eval()
                acc_sum += (net(X).argmax(dim=1) == y).float().sum().item()
                net.train()
            else:
                acc_sum += (net(X).argmax(dim=1) == y).float().sum().item()
            n += y.shape[0]
    return acc_sum / n


W = torch.tensor(np.random.normal(0, 0.01, (n_in, n_cls)), dtype=torch.float)
bb = torch.zeros(n_cls, dtype=torch.float)
W.requires_grad_(requires_grad=True)
bb.requires_grad_(requires_grad=True)


def net_scratch(X):
    return softmax(torch.mm(X.view((-1, n_in)), W) + bb)


for epoch in range(2):
    l_sum, acc, n = 0.0, 0.0, 0
    for X, y in train_iter:
        l = cross_entropy(net_scratch(X), y).sum()
        l.backward()
        sgd([W, bb], 0.1, X.shape[0])
        W.grad.data.zero_()
        bb.grad.data.zero_()
        l_sum += l.item()
        acc += (net_scratch(X).argmax(dim=1) == y).sum().item()
        n += y.shape[0]
    print(f"softmax epoch {epoch + 1}, loss {l_sum / n:.4f}, train acc {acc / n:.3f}, "
          f"test acc {evaluate_accuracy(test_iter, net_scratch):.3f}")


class FlattenLayer(nn.Module):
    def forward(self, x):
        return x.view(x.shape[0], -1)


mlp = nn.Sequential(FlattenLayer(), nn.Linear(n_in, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, n_cls))
for p in mlp.parameters():
    nn.init.normal_(p, mean=0, std=0.01)
opt = torch.optim.SGD(mlp.parameters(), lr=0.5, weight_decay=1e-4)
for epoch in range(2):
    for X, y in train_iter:
        l = nn.CrossEntropyLoss()(mlp(X), y)
        opt.zero_grad()
        l.backward()
        opt.step()
    print(f"mlp epoch {epoch + 1} loss {l.item():.5f} test acc {evaluate_accuracy(test_iter, mlp):.3f}")

# --- convolutions: corr2d, learning a kernel, LeNet, a NiN-style head ------------------------------------------


def corr2d(X, K):
    h, w = K.shape
    Y = torch.zeros((X.shape[0] - h + 1, X.shape[1] - w + 1))
    for i in range(Y.shape[0]):
        for j in range(Y.shape[1]):
            Y[i, j] = (X[i: i + h, j: j + w] * K).sum()
    return Y


img = torch.ones(6, 8)
img[:, 2:6] = 0
edge = corr2d(img, torch.tensor([[1, -1]]))
weight, bias_c = nn.Parameter(torch.randn(1, 2)), nn.Parameter(torch.randn(1))
for i in range(12):
    l = ((corr2d(img, weight) + bias_c - edge) ** 2).sum()
    l.backward()
    weight.data -= 0.01 * weight.grad
    bias_c.data -= 0.01 * bias_c.grad
    weight.grad.fill_(0)
    bias_c.grad.fill_(0)
print("corr2d kernel", weight.data.tolist(), bias_c.item(), l.item())

images = torch.rand(64, 1, 28, 28)
img_labels = (images.mean(dim=(1, 2, 3)) * 20).long() % 10
loader = Data.DataLoader(Data.TensorDataset(images, img_labels), batch_size=16, shuffle=True)
lenet = nn.Sequential(nn.Conv2d(1, 6, 5), nn.Sigmoid(), nn.MaxPool2d(2, 2), nn.Conv2d(6, 16, 5), nn.Sigmoid(),
                      nn.MaxPool2d(2, 2), FlattenLayer(), nn.Linear(16 * 4 * 4, 120), nn.Sigmoid(),
                      nn.Linear(120, 84), nn.Sigmoid(), nn.Linear(84, 10))
opt = torch.optim.Adam(lenet.parameters(), lr=0.001)
for X, y in loader:
    l = F.cross_entropy(lenet(X), y)
    opt.zero_grad()
    l.backward()
    opt.step()
print(f"lenet loss {l.item():.5f} acc {evaluate_accuracy(loader, lenet):.3f}")


class GlobalAvgPool2d(nn.Module):
    def forward(self, x):
        return F.avg_pool2d(x, kernel_size=x.size()[2:])


nin_head = nn.Sequential(nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4), nn.ReLU(), GlobalAvgPool2d(), FlattenLayer())
feat = torch.randn(2, 3, 5, 5)
print(nin_head(feat), nn.AdaptiveAvgPool2d(1)(feat[0]).view(-1))

# --- a char RNN from scratch, then nn.RNN --------------------------------------------------------------------
corpus = "想要有直升机想要和你飞到宇宙去想要和你融化在一起融化在宇宙里" * 4
idx_to_char = sorted(set(corpus))
char_to_idx = {c: i for i, c in enumerate(idx_to_char)}
corpus_indices = [char_to_idx[c] for c in corpus]
vocab_size, num_hiddens = len(idx_to_char), 32


def data_iter_random(corpus_indices, batch_size, num_steps):
    num_examples = (len(corpus_indices) - 1) // num_steps
    example_indices = list(range(num_examples))
    random.shuffle(example_indices)
    for i in range(num_examples // batch_size):
        batch = example_indices[i * batch_size: (i + 1) * batch_size]
        X = [corpus_indices[j * num_steps: j * num_steps + num_steps] for j in batch]
        Y = [corpus_indices[j * num_steps + 1: j * num_steps + 1 + num_steps] for j in batch]
        yield torch.tensor(X, dtype=torch.float32), torch.tensor(Y, dtype=torch.float32)


def data_iter_consecutive(corpus_indices, batch_size, num_steps):
    corpus_indices = torch.tensor(corpus_indices, dtype=torch.float32)
    batch_len = len(corpus_indices) // batch_size
    indices = corpus_indices[0: batch_size * batch_len].view(batch_size, batch_len)
    for i in range((batch_len - 1) // num_steps):
        j = i * num_steps
        yield indices[:, j: j + num_steps], indices[:, j + 1: j + num_steps + 1]


def to_onehot(X, n_class):
    return [F.one_hot(X[:, i].long(), n_class).float() for i in range(X.shape[1])]


def get_params():
    def _one(shape):
        return nn.Parameter(torch.tensor(np.random.normal(0, 0.01, size=shape), dtype=torch.float32))
    return nn.ParameterList([_one((vocab_size, num_hiddens)), _one((num_hiddens, num_hiddens)),
                             nn.Parameter(torch.zeros(num_hiddens)), _one((num_hiddens, vocab_size)),
                             nn.Parameter(torch.zeros(vocab_size))])


def rnn(inputs, state, params):
    W_xh, W_hh, b_h, W_hq, b_q = params
    H, = state
    outputs = []
    for X in inputs:
        H = torch.tanh(torch.matmul(X, W_xh) + torch.matmul(H, W_hh) + b_h)
        outputs.append(torch.matmul(H, W_hq) + b_q)
    return outputs, (H,)


def grad_clipping(params, theta):
    norm = torch.tensor([0.0])
    for p in params:
        norm += (p.grad.data ** 2).sum()
    norm = norm.sqrt().item()
    if norm > theta:
        for p in params:
            p.grad.data *= (theta / norm)


params = get_params()
for epoch, sampler in enumerate([data_iter_random, data_iter_consecutive] * 2):
    state = (torch.zeros(4, num_hiddens),)
    l_sum, n = 0.0, 0
    for X, Y in sampler(corpus_indices, 4, 6):
        if sampler is data_iter_random:
            state = (torch.zeros(4, num_hiddens),)
        else:
            state = tuple(s.detach() for s in state)
        outputs, state = rnn(to_onehot(X, vocab_size), state, params)
        y = torch.transpose(Y, 0, 1).contiguous().view(-1)
        l = F.cross_entropy(torch.cat(outputs, dim=0), y.long())
        if params[0].grad is not None:
            for p in params:
                p.grad.data.zero_()
        l.backward()
        grad_clipping(params, 0.01)
        sgd(params, 100, 1)
        l_sum += l.item() * y.shape[0]
        n += y.shape[0]
    print(f"rnn epoch {epoch + 1} ({sampler.__name__}), perplexity {math.exp(l_sum / n):f}")

rnn_layer = nn.RNN(input_size=vocab_size, hidden_size=num_hiddens)
dense = nn.Linear(num_hiddens, vocab_size)
opt = torch.optim.Adam(list(rnn_layer.parameters()) + list(dense.parameters()), lr=1e-2)
state = None
for X, Y in data_iter_consecutive(corpus_indices, 4, 6):
    if state is not None:
        state = state.detach()
    Ys, state = rnn_layer(torch.stack(to_onehot(X, vocab_size)), state)
    out = dense(Ys.view(-1, Ys.shape[-1]))
    l = F.cross_entropy(out, torch.transpose(Y, 0, 1).contiguous().view(-1).long())
    opt.zero_grad()
    l.backward()
    nn.utils.clip_grad_norm_(list(rnn_layer.parameters()) + list(dense.parameters()), 0.01)
    opt.step()
print("nn.RNN loss", l.item(), state.shape)

# --- the optimisation chapter: states by hand against torch.optim ----------------------------------------------
feat7 = torch.randn(100, 5, dtype=torch.float64)
lab7 = feat7 @ torch.tensor([1.0, -2.0, 0.5, 3.0, -1.0], dtype=torch.float64) + 0.1 * torch.randn(100,
                                                                                           dtype=torch.float64)


def run_by_hand(kind):
    w7 = torch.zeros(5, 1, dtype=torch.float64, requires_grad=True)
    states = [torch.zeros_like(w7.data), torch.zeros_like(w7.data)]
    t = 0
    for i in range(0, 100, 10):
        l = ((feat7[i:i + 10] @ w7 - lab7[i:i + 10].view(-1, 1)) ** 2 / 2).mean()
        l.backward()
        g = w7.grad.data
        t += 1
        if kind == "momentum":
            states[0].data = 0.5 * states[0].data + g
            w7.data -= 0.02 * states[0].data
        elif kind == "adagrad":
            states[0].data += g ** 2
            w7.data -= 0.1 * g / torch.sqrt(states[0] + 1e-10)
        elif kind == "rmsprop":
            states[0].data = 0.9 * states[0].data + 0.1 * g ** 2
            w7.data -= 0.01 * g / torch.sqrt(states[0] + 1e-8)
        else:
            states[0].data = 0.9 * states[0].data + 0.1 * g
            states[1].data = 0.999 * states[1].data + 0.001 * g ** 2
            v_hat, s_hat = states[0] / (1 - 0.9 ** t), states[1] / (1 - 0.999 ** t)
            w7.data -= 0.01 * v_hat / (torch.sqrt(s_hat) + 1e-8)
        w7.grad.data.zero_()
    return w7.detach().view(-1)


def run_torch_optim(make):
    w7 = torch.zeros(5, 1, dtype=torch.float64, requires_grad=True)
    opt7 = make([w7])
    for i in range(0, 100, 10):
        l = ((feat7[i:i + 10] @ w7 - lab7[i:i + 10].view(-1, 1)) ** 2 / 2).mean()
        opt7.zero_grad()
        l.backward()
        opt7.step()
    return w7.detach().view(-1)


for kind, make in [("momentum", lambda p: torch.optim.SGD(p, lr=0.02, momentum=0.5)),
                   ("adagrad", lambda p: torch.optim.Adagrad(p, lr=0.1, eps=1e-10)),
                   ("rmsprop", lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.9, eps=1e-8)),
                   ("adam", lambda p: torch.optim.Adam(p, lr=0.01))]:
    print(kind, run_by_hand(kind).tolist(), run_torch_optim(make).tolist())

# --- anchors: MultiBoxPrior and IoU --------------------------------------------------------------------------


def multibox_prior(feature_map, sizes=(0.75, 0.5, 0.25), ratios=(1, 2, 0.5)):
    pairs = [[sizes[0], math.sqrt(r)] for r in ratios] + [[s, math.sqrt(ratios[0])] for s in sizes[1:]]
    pairs = np.array(pairs)
    ss1 = pairs[:, 0] * pairs[:, 1]
    ss2 = pairs[:, 0] / pairs[:, 1]
    base = np.stack([-ss1, -ss2, ss1, ss2], axis=1) / 2
    h, w = feature_map.shape[-2:]
    shifts_x = np.arange(0, w) / w
    shifts_y = np.arange(0, h) / h
    sx, sy = np.meshgrid(shifts_x, shifts_y)
    shifts = np.stack((sx.reshape(-1), sy.reshape(-1), sx.reshape(-1), sy.reshape(-1)), axis=1)
    anchors = shifts.reshape((-1, 1, 4)) + base.reshape((1, -1, 4))
    return torch.tensor(anchors, dtype=torch.float32).view(1, -1, 4)


def box_iou(set_1, set_2):
    lower = torch.max(set_1[:, :2].unsqueeze(1), set_2[:, :2].unsqueeze(0))
    upper = torch.min(set_1[:, 2:].unsqueeze(1), set_2[:, 2:].unsqueeze(0))
    inter = torch.clamp(upper - lower, min=0)
    inter = inter[:, :, 0] * inter[:, :, 1]
    area = lambda b: (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])  # noqa: E731
    return inter / (area(set_1).unsqueeze(1) + area(set_2).unsqueeze(0) - inter)


anchors = multibox_prior(torch.zeros(1, 3, 4, 5))
truth = torch.tensor([[0.1, 0.08, 0.52, 0.92], [0.55, 0.2, 0.9, 0.88]])
iou = box_iou(anchors[0], truth)
best, which = iou.max(dim=0)
print(anchors.shape, anchors[0, :3], best, which, (iou > 0.5).sum().item())
