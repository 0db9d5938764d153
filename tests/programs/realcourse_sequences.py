"""Sequence models of English course repositories, condensed: names classified by a bidirectional GRU over a batch
sorted by length and packed from a NumPy array of lengths, the hidden state's last layer into a Linear; one-hot
temporal-order sequences (pre-padded in NumPy) through an RNN with ReLU and an LSTM under RMSprop, reading the
last step; a word-level LSTM language model with truncated BPTT (states detached), `clip_grad_norm_`, multinomial
sampling and `input.fill_`; a sine-to-cosine RNN regressor carrying `h_state.data` between steps; a captioning
decoder whose targets are the packed captions' `[0]`; and a script-generation LSTM whose hidden state comes from
`weight.new(...).zero_()`, sampled by top-k. Seeded with `torch.manual_seed` and NumPy."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import clip_grad_norm_
from torch.nn.utils.rnn import pack_padded_sequence

torch.manual_seed(11)
rng = np.random.RandomState(11)

# ---- names -> origin, a packed bidirectional GRU
origins = {"A": "aeioukm", "B": "rstvlno", "C": "xzqwyhg"}
names, tags = [], []
for _ in range(96):
    tag = "ABC"[rng.randint(3)]
    names.append("".join(rng.choice(list(origins[tag] + "bd"), size=rng.randint(2, 8))))
    tags.append(tag)


def batchify(batch_names, batch_tags):
    codes = [[ord(c) for c in n] for n in batch_names]
    lengths = torch.LongTensor([len(c) for c in codes])
    seq = torch.zeros((len(codes), lengths.max())).long()
    for i, (c, n) in enumerate(zip(codes, lengths)):
        seq[i, :n] = torch.LongTensor(c)
    lengths, order = lengths.sort(0, descending=True)
    target = torch.LongTensor(["ABC".index(t) for t in batch_tags])
    return seq[order], lengths, target[order] if len(batch_tags) else target


class NameGRU(nn.Module):
    def __init__(self, n_chars, hidden, n_out, layers=2):
        super().__init__()
        self.layers, self.hidden = layers, hidden
        self.embedding = nn.Embedding(n_chars, hidden)
        self.gru = nn.GRU(hidden, hidden, layers, bidirectional=True)
        self.fc = nn.Linear(hidden, n_out)

    def forward(self, seq, lengths):
        seq = seq.t()
        h0 = torch.zeros(self.layers * 2, seq.size(1), self.hidden)
        packed = pack_padded_sequence(self.embedding(seq), lengths.data.cpu().numpy())
        self.gru.flatten_parameters()
        _, h = self.gru(packed, h0)
        return self.fc(h[-1])


clf = NameGRU(128, 12, 3)
opt = torch.optim.Adam(clf.parameters(), lr=0.01)
for epoch in range(2):
    total = 0
    for b in range(0, 96, 32):
        seq, lengths, target = batchify(names[b:b + 32], tags[b:b + 32])
        loss = F.cross_entropy(clf(seq, lengths), target)
        total += loss.item()
        clf.zero_grad()
        loss.backward()
        opt.step()
    print("names epoch {} loss {:.4f}".format(epoch, total / 3))  # noqa: UP032
seq, lengths, _ = batchify(["kamio", "zyx"], [])
out = clf(seq, lengths)
print(out.data.max(1, keepdim=True)[1].flatten(), F.softmax(out, dim=1))

# ---- temporal order: is X before Y?  One-hot, pre-padded, last step read
symbols = "XYabcdBE"


def make_batch(n=16):
    xs, ys = [], []
    for _ in range(n):
        length = rng.randint(6, 9)
        s = list(rng.choice(list("abcd"), size=length))
        s[0], s[-1] = "B", "E"
        cls = rng.randint(4)
        s[1], s[4] = "XY"[cls // 2], "XY"[cls % 2]
        onehot = np.zeros((9, len(symbols)), dtype="float32")
        onehot[9 - length:][np.arange(length), [symbols.index(c) for c in s]] = 1   # (padding in front)
        xs.append(onehot)
        ys.append(np.eye(4, dtype="float32")[cls])
    return np.stack(xs), np.stack(ys)


class LastStep(nn.Module):
    def __init__(self, cell, hidden):
        super().__init__()
        self.rnn = cell
        self.linear = nn.Linear(hidden, 4)

    def forward(self, x):
        return self.linear(self.rnn(x)[0])


for model in (LastStep(nn.RNN(8, 6, nonlinearity="relu", batch_first=True), 6),
              LastStep(nn.LSTM(8, 6, batch_first=True), 6)):
    opt = torch.optim.RMSprop(model.parameters(), lr=0.01)
    for step in range(6):
        data, target = make_batch()
        data, target = torch.from_numpy(data).float(), torch.from_numpy(target).long()
        opt.zero_grad()
        output = model(data)[:, -1, :]
        target = target.argmax(dim=1)
        loss = nn.CrossEntropyLoss()(output, target)
        loss.backward()
        opt.step()
    print(type(model.rnn).__name__, round(loss.item(), 5), (output.argmax(dim=1) == target).sum().item())

# ---- word LM: truncated BPTT, clipping, sampling
vocab, batch, bptt = 20, 4, 6
ids = torch.from_numpy(rng.randint(0, vocab, size=(batch, 40)))


class WordLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, 8)
        self.lstm = nn.LSTM(8, 16, 1, batch_first=True)
        self.linear = nn.Linear(16, vocab)

    def forward(self, x, h):
        out, (h, c) = self.lstm(self.embed(x), h)
        return self.linear(out.reshape(out.size(0) * out.size(1), out.size(2))), (h, c)


lm = WordLM()
opt = torch.optim.Adam(lm.parameters(), lr=0.01)
states = (torch.zeros(1, batch, 16), torch.zeros(1, batch, 16))
for i in range(0, ids.size(1) - bptt, bptt):
    states = [s.detach() for s in states]
    outputs, states = lm(ids[:, i:i + bptt], states)
    loss = nn.CrossEntropyLoss()(outputs, ids[:, i + 1:i + 1 + bptt].reshape(-1))
    opt.zero_grad()
    loss.backward()
    norm = clip_grad_norm_(lm.parameters(), 0.5)
    opt.step()
print("lm loss {:.4f} ppl {:5.2f} norm {:.4f}".format(loss.item(), np.exp(loss.item()), norm))  # noqa: UP032
with torch.no_grad():
    state = (torch.zeros(1, 1, 16), torch.zeros(1, 1, 16))
    word = torch.multinomial(torch.ones(vocab), num_samples=1).unsqueeze(1)
    sampled = []
    for _ in range(12):
        output, state = lm(word, state)
        wid = torch.multinomial(output.exp(), num_samples=1).item()
        word.fill_(wid)
        sampled.append(wid)
print(sampled)

# ---- sine -> cosine, the hidden state carried as .data
reg = nn.RNN(input_size=1, hidden_size=16, num_layers=1, batch_first=True)
head = nn.Linear(16, 1)
opt = torch.optim.Adam(list(reg.parameters()) + list(head.parameters()), lr=0.02)
h_state = None
for step in range(8):
    steps = np.linspace(step * np.pi, (step + 1) * np.pi, 10, dtype=np.float32)
    x = torch.from_numpy(np.sin(steps)[np.newaxis, :, np.newaxis])
    y = torch.from_numpy(np.cos(steps)[np.newaxis, :, np.newaxis])
    r_out, h_state = reg(x, h_state)
    h_state = h_state.data
    pred = torch.stack([head(r_out[:, t, :]) for t in range(r_out.size(1))], dim=1)
    loss = nn.MSELoss()(pred, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("regressor", loss.item(), pred.data.numpy().flatten()[:3].tolist())

# ---- captions: packed targets, greedy sampling with stack
embed, lstm, proj = nn.Embedding(15, 8), nn.LSTM(8, 12, 1, batch_first=True), nn.Linear(12, 15)
caps = [torch.tensor([1] + rng.randint(3, 15, size=n).tolist() + [2]) for n in (5, 3, 4)]
caps.sort(key=len, reverse=True)
lengths = [len(c) + 1 for c in caps]
padded = torch.zeros(3, max(len(c) for c in caps)).long()
for i, c in enumerate(caps):
    padded[i, :len(c)] = c
features = torch.randn(3, 8)
opt = torch.optim.Adam(list(embed.parameters()) + list(lstm.parameters()) + list(proj.parameters()), lr=0.01)
for step in range(5):
    inputs = torch.cat((features.unsqueeze(1), embed(padded)), 1)
    hiddens, _ = lstm(pack_padded_sequence(inputs, lengths, batch_first=True))
    targets = pack_padded_sequence(torch.cat((padded, torch.zeros(3, 1).long()), 1), lengths, batch_first=True)[0]
    loss = nn.CrossEntropyLoss()(proj(hiddens[0]), targets)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("captions", loss.item(), targets.shape)
with torch.no_grad():
    ids_out, inputs, st = [], features.unsqueeze(1), None
    for _ in range(6):
        h, st = lstm(inputs, st)
        pred = proj(h.squeeze(1)).max(1)[1]
        ids_out.append(pred)
        inputs = embed(pred).unsqueeze(1)
    print(torch.stack(ids_out, 1))


# ---- script generation: init_hidden from weight.new, top-k sampling
class ScriptRNN(nn.Module):
    def __init__(self, vocab_size, emb, hidden, layers):
        super().__init__()
        self.hidden_dim, self.layers, self.vocab_size = hidden, layers, vocab_size
        self.embedding = nn.Embedding(vocab_size, emb)
        self.lstm = nn.LSTM(emb, hidden, layers, dropout=0.3, batch_first=True)
        self.fc = nn.Linear(hidden, vocab_size)

    def forward(self, x, hidden):
        out, hidden = self.lstm(self.embedding(x), hidden)
        out = self.fc(out.contiguous().view(-1, self.hidden_dim)).view(x.size(0), -1, self.vocab_size)
        return out[:, -1], hidden

    def init_hidden(self, n):
        weight = next(self.parameters()).data
        return (weight.new(self.layers, n, self.hidden_dim).zero_(), weight.new(self.layers, n, self.hidden_dim).zero_())


net = ScriptRNN(vocab, 8, 10, 2)
opt = torch.optim.Adam(net.parameters(), lr=0.005)
hidden = net.init_hidden(8)
words = rng.randint(0, vocab, size=200)
for b in range(4):
    x = torch.from_numpy(np.stack([words[b * 8 + k: b * 8 + k + 5] for k in range(8)]))
    y = torch.from_numpy(words[b * 8 + 5: b * 8 + 13])
    hidden = tuple(h.data for h in hidden)
    net.zero_grad()
    out, hidden = net(x, hidden)
    loss = nn.CrossEntropyLoss()(out, y)
    loss.backward()
    nn.utils.clip_grad_norm_(net.parameters(), 5)
    opt.step()
net.eval()
seq, gen = np.full((1, 5), 0), []
for _ in range(8):
    cur = torch.LongTensor(seq)
    out, _ = net(cur, net.init_hidden(cur.size(0)))
    p, top = F.softmax(out, dim=1).data.topk(4)
    p, top = p.numpy().squeeze(), top.numpy().squeeze()
    w = rng.choice(top, p=p / p.sum())
    gen.append(int(w))
    seq = np.roll(seq, -1, 1)
    seq[-1][-1] = w
print("script", round(loss.item(), 5), gen)
