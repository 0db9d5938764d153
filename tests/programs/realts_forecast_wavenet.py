# Time-series and speech sequence models in the style of single-file forecasting scripts, Informer-like encoders,
# WaveNet re-implementations and small DeepSpeech clones: sliding windows from a min-max scaled NumPy series, an
# LSTM and a GRU forecaster with a multi-step head, a Transformer encoder forecaster fed by a circular-padded Conv1d
# token embedding that is transposed before its dropout (the mask follows the transposed layout), a distilling
# Conv1d/BatchNorm/ELU/MaxPool layer, ProbSparse-style query sampling with randint and topk, a mu-law WaveNet with
# dilated causal convolutions, tanh*sigmoid gates and skip sums, an LSTM autoencoder whose reconstruction error
# sets an anomaly threshold by quantile, and a bidirectional GRU acoustic model trained with CTC and decoded greedily.
# Seeded with torch.manual_seed and NumPy.
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
np.random.seed(0)

# --- data: a noisy seasonal series, min-max scaled, cut into windows ----------------------------------------------
t = np.arange(360)
series = np.sin(2 * np.pi * t / 24) + 0.5 * np.sin(2 * np.pi * t / 7) + 0.1 * np.random.randn(360) + 0.002 * t
lo, hi = series.min(), series.max()
scaled = (series - lo) / (hi - lo)


def windows(data, n_in, n_out):
    xs, ys = [], []
    for i in range(len(data) - n_in - n_out + 1):
        xs.append(data[i:i + n_in])
        ys.append(data[i + n_in:i + n_in + n_out])
    return np.array(xs), np.array(ys)


X, Y = windows(scaled, 24, 4)
X = torch.from_numpy(X).float().unsqueeze(-1)
Y = torch.from_numpy(Y).float()
n_train = int(len(X) * 0.8)
train_ds = torch.utils.data.TensorDataset(X[:n_train], Y[:n_train])
loader = torch.utils.data.DataLoader(train_ds, batch_size=64, shuffle=True, drop_last=True)
print("windows", tuple(X.shape), tuple(Y.shape), len(loader))


class RNNForecaster(nn.Module):
    def __init__(self, cell, hidden=16, layers=2, horizon=4):
        super().__init__()
        self.rnn = cell(1, hidden, num_layers=layers, batch_first=True, dropout=0.1)
        self.head = nn.Linear(hidden, horizon)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1, :])


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        pe = torch.zeros(max_len, d_model).float()
        position = torch.arange(0, max_len).float().unsqueeze(1)
        div_term = (torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model)).exp()
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return self.pe[:, :x.size(1)]


class DistilLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv1d(c, c, kernel_size=3, padding=1, padding_mode="circular", bias=False)
        self.norm = nn.BatchNorm1d(c)
        self.pool = nn.MaxPool1d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(F.elu(self.norm(self.conv(x.permute(0, 2, 1))))).transpose(1, 2)


class TransformerForecaster(nn.Module):
    def __init__(self, d_model=16, horizon=4):
        super().__init__()
        self.token = nn.Conv1d(1, d_model, kernel_size=3, padding=1, padding_mode="circular", bias=False)
        nn.init.kaiming_normal_(self.token.weight, mode="fan_in", nonlinearity="leaky_relu")
        self.pos = PositionalEncoding(d_model)
        self.drop = nn.Dropout(0.1)
        # (no biases: a key bias has no gradient but float32 round-off, which Adam would blow up to lr-sized steps)
        layer = nn.TransformerEncoderLayer(d_model, 2, 32, dropout=0.1, activation="gelu", batch_first=True,
                                           bias=False)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
        self.distil = DistilLayer(d_model)
        self.head = nn.Linear(d_model, horizon)

    def forward(self, x):
        tok = self.token(x.permute(0, 2, 1)).transpose(1, 2)
        h = self.drop(tok) + self.pos(x)
        h = self.distil(self.encoder(h))
        return self.head(h.mean(1))


def prob_sparse_top(q, k, factor=2):
    """Informer's query selection: score each query against a random sample of keys, keep the top u queries."""
    L_K, L_Q = k.shape[-2], q.shape[-2]
    u = min(factor * int(np.ceil(np.log(L_Q))), L_Q)
    idx = torch.randint(L_K, (L_Q, u))
    k_sample = k.unsqueeze(-3).expand(*k.shape[:-2], L_Q, L_K, k.shape[-1])[..., torch.arange(L_Q).unsqueeze(1), idx, :]
    qk = torch.matmul(q.unsqueeze(-2), k_sample.transpose(-2, -1)).squeeze(-2)
    m = qk.max(-1)[0] - torch.div(qk.sum(-1), L_K)
    return m.topk(u, sorted=False)[1]


q = torch.randn(2, 2, 12, 8)
print("prob top", prob_sparse_top(q, torch.randn(2, 2, 12, 8)).sort(-1)[0][0, 0])

for name, model in (("lstm", RNNForecaster(nn.LSTM)), ("gru", RNNForecaster(nn.GRU)),
                    ("transformer", TransformerForecaster())):
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for epoch in range(3):
        model.train()
        losses = []
        for xb, yb in loader:
            opt.zero_grad()
            loss = F.mse_loss(model(xb), yb)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            losses.append(loss.item())
        sched.step()
        model.eval()
        with torch.no_grad():
            pred = model(X[n_train:])
            mae = (pred - Y[n_train:]).abs().mean().item()
        print(name, epoch, round(float(np.mean(losses)), 6), round(mae, 6), sched.get_last_lr())
    print(name, "forecast", (pred[-1] * (hi - lo) + lo).numpy().round(4))


# --- WaveNet: mu-law, dilated causal convolutions, gated units, skip connections --------------------------------
def mu_law_encode(x, mu=15):
    mag = torch.log1p(mu * torch.abs(x)) / math.log1p(mu)
    return ((torch.sign(x) * mag + 1) / 2 * mu + 0.5).long()


class CausalConv(nn.Module):
    def __init__(self, cin, cout, k, dilation):
        super().__init__()
        self.pad = (k - 1) * dilation
        self.conv = nn.Conv1d(cin, cout, k, dilation=dilation)

    def forward(self, x):
        return self.conv(F.pad(x, (self.pad, 0)))


class GatedBlock(nn.Module):
    def __init__(self, res, skip, dilation):
        super().__init__()
        self.filt, self.gate = CausalConv(res, res, 2, dilation), CausalConv(res, res, 2, dilation)
        self.res, self.skip = nn.Conv1d(res, res, 1), nn.Conv1d(res, skip, 1)

    def forward(self, x):
        z = torch.tanh(self.filt(x)) * torch.sigmoid(self.gate(x))
        return self.res(z) + x, self.skip(z)


class WaveNet(nn.Module):
    def __init__(self, classes=16, res=8, skip=12, layers=3, stacks=2):
        super().__init__()
        self.inp = CausalConv(classes, res, 2, 1)
        self.blocks = nn.ModuleList([GatedBlock(res, skip, 2 ** i) for _ in range(stacks) for i in range(layers)])
        self.out = nn.Sequential(nn.ReLU(), nn.Conv1d(skip, skip, 1), nn.ReLU(), nn.Conv1d(skip, classes, 1))
        self.receptive = sum(2 ** i for i in range(layers)) * stacks + 1

    def forward(self, onehot):
        x = self.inp(onehot)
        skips = 0
        for b in self.blocks:
            x, s = b(x)
            skips = skips + s
        return self.out(skips)


audio = torch.sin(torch.arange(400.0) * 0.21) * 0.6 + 0.05 * torch.randn(400)
codes = mu_law_encode(audio)
onehot = F.one_hot(codes, 16).float().t().unsqueeze(0)
wn = WaveNet()
opt = torch.optim.Adam(wn.parameters(), lr=1e-2)
for step in range(6):
    logits = wn(onehot[:, :, :-1])[:, :, wn.receptive:]
    loss = F.cross_entropy(logits, codes[1:].unsqueeze(0)[:, wn.receptive:])
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("wavenet", step, round(loss.item(), 5))
with torch.no_grad():
    gen = codes[:wn.receptive].tolist()
    for _ in range(8):
        ctx = F.one_hot(torch.tensor(gen[-wn.receptive:]), 16).float().t().unsqueeze(0)
        gen.append(torch.multinomial(F.softmax(wn(ctx)[0, :, -1], 0), 1).item())
print("generated", gen[-8:])

# --- anomaly detection: an LSTM autoencoder and a quantile threshold --------------------------------------------
class LSTMAE(nn.Module):
    def __init__(self, seq_len, hidden=8):
        super().__init__()
        self.seq_len = seq_len
        self.enc = nn.LSTM(1, hidden, batch_first=True)
        self.dec = nn.LSTM(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        _, (h, _) = self.enc(x)
        z = h[-1].unsqueeze(1).repeat(1, self.seq_len, 1)
        y, _ = self.dec(z)
        return self.out(y)


normal = X[:n_train, :16]
ae = LSTMAE(16)
opt = torch.optim.Adam(ae.parameters(), lr=1e-2)
for epoch in range(12):
    rec = ae(normal)
    loss = F.l1_loss(rec, normal, reduction="mean")
    opt.zero_grad()
    loss.backward()
    opt.step()
ae.eval()
with torch.no_grad():
    err = (ae(normal) - normal).abs().mean(dim=(1, 2))
    thr = torch.quantile(err, 0.95)
    odd = X[n_train:, :16].clone()
    odd[::5, 4:9] += 0.8
    test_err = (ae(odd) - odd).abs().mean(dim=(1, 2))
print("ae", round(loss.item(), 6), thr.item(), (test_err > thr).sum().item(), test_err[:5])

# --- a DeepSpeech-like acoustic model trained with CTC --------------------------------------------------------------
B, T, C, VOCAB = 4, 30, 10, 6
feats = torch.randn(B, T, C)
targets = torch.randint(1, VOCAB, (B, 6))
in_lens = torch.tensor([30, 28, 25, 30])
tgt_lens = torch.tensor([6, 5, 4, 6])


class SpeechNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, (3, 3), stride=(1, 2), padding=(1, 1))
        self.bn = nn.BatchNorm2d(4)
        self.rnn = nn.GRU(4 * 5, 12, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(24, VOCAB)

    def forward(self, x, lens):
        x = F.hardtanh(self.bn(self.conv(x.unsqueeze(1))), 0, 20)
        x = x.permute(0, 2, 1, 3).reshape(x.shape[0], x.shape[2], -1)
        packed = nn.utils.rnn.pack_padded_sequence(x, lens, batch_first=True, enforce_sorted=False)
        out, _ = self.rnn(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        return self.fc(out).log_softmax(-1)


sn = SpeechNet()
ctc = nn.CTCLoss(blank=0, zero_infinity=True)
opt = torch.optim.SGD(sn.parameters(), lr=0.05, momentum=0.9, nesterov=True)
for step in range(6):
    logp = sn(feats, in_lens)
    loss = ctc(logp.transpose(0, 1), targets, in_lens, tgt_lens)
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(sn.parameters(), 400)
    opt.step()
    print("ctc", step, round(loss.item(), 5))
best = logp.argmax(-1)
decoded = [[c for j, c in enumerate(row[:n].tolist()) if c != 0 and (j == 0 or c != row[j - 1].item())]
           for row, n in zip(best, in_lens)]
print("greedy", decoded)
