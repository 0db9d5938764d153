# Text classification and NLI as the single-file repositories write them, on a torchtext-free pipeline: a vocabulary
# built by counting, padding to a fixed length, a DataLoader with a collate_fn around pad_sequence; a TextCNN
# (Conv2d over [B, 1, T, E] with several widths, max-pooled over time), a fastText model (EmbeddingBag over word and
# hashed bigram ids with offsets) and a TextRNN with attention, each trained a few Adam steps under xavier init; then
# an ESIM-style matcher (sort by length, pack, restore with index_select, masked softmax both ways, enhancement
# [a; b; a-b; a*b], avg/max pooling) trained with clip_grad_norm_ and ReduceLROnPlateau(mode="max"), and a
# decomposable-attention step with Adagrad and an initial accumulator. Seeded with torch.manual_seed alone.
import random
from collections import Counter

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence

torch.manual_seed(11)
random.seed(11)

topics = {0: "goal match team score win league coach", 1: "stock market price bank trade share fund",
          2: "film actor movie star scene award drama"}
common = "the a of and in to is on".split()


def sentence(label):
    words = topics[label].split()
    return [random.choice(words if random.random() < 0.6 else common) for _ in range(random.randint(4, 9))]


data = [(sentence(y), y) for y in [random.randrange(3) for _ in range(60)]]
counts = Counter(w for s, _ in data for w in s)
itos = ["<pad>", "<unk>"] + [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
stoi = {w: i for i, w in enumerate(itos)}
BUCKETS = 50


def encode(words):
    return torch.tensor([stoi.get(w, 1) for w in words])


def collate(batch):
    seqs = [encode(s) for s, _ in batch]
    lengths = torch.tensor([len(s) for s in seqs])
    return pad_sequence(seqs, batch_first=True, padding_value=0), lengths, torch.tensor([y for _, y in batch])


loader = torch.utils.data.DataLoader(data, batch_size=12, shuffle=True, collate_fn=collate)


class TextCNN(nn.Module):
    def __init__(self, V, E=16, widths=(2, 3, 4), maps=8, classes=3):
        super().__init__()
        self.embedding = nn.Embedding(V, E, padding_idx=0)
        self.convs = nn.ModuleList([nn.Conv2d(1, maps, (k, E)) for k in widths])
        self.dropout = nn.Dropout(0.5)
        self.fc = nn.Linear(maps * len(widths), classes)

    def forward(self, x, lengths):
        x = F.pad(x, (0, max(0, 4 - x.size(1))))
        e = self.embedding(x).unsqueeze(1)
        pooled = []
        for conv in self.convs:
            c = F.relu(conv(e)).squeeze(3)
            pooled.append(F.max_pool1d(c, c.size(2)).squeeze(2))
        return self.fc(self.dropout(torch.cat(pooled, 1)))


class FastText(nn.Module):
    def __init__(self, V, E=16, classes=3):
        super().__init__()
        self.words = nn.EmbeddingBag(V, E, mode="mean")
        self.bigrams = nn.EmbeddingBag(BUCKETS, E, mode="sum")
        self.fc = nn.Linear(2 * E, classes)

    def forward(self, x, lengths):
        flat, offsets, grams, goffs = [], [], [], []
        for row, n in zip(x.tolist(), lengths.tolist()):
            offsets.append(len(flat))
            goffs.append(len(grams))
            flat += row[:n]
            grams += [(a * 14918087 + b) % BUCKETS for a, b in zip(row[:n - 1], row[1:n])]
        w = self.words(torch.tensor(flat), torch.tensor(offsets))
        g = self.bigrams(torch.tensor(grams), torch.tensor(goffs)) / (lengths - 1).clamp(min=1).unsqueeze(1)
        return self.fc(torch.cat([w, g], 1))


class TextRNNAtt(nn.Module):
    def __init__(self, V, E=16, H=8, classes=3):
        super().__init__()
        self.embedding = nn.Embedding(V, E, padding_idx=0)
        self.lstm = nn.LSTM(E, H, num_layers=2, bidirectional=True, batch_first=True, dropout=0.2)
        self.w = nn.Parameter(torch.zeros(2 * H))
        self.fc = nn.Linear(2 * H, classes)

    def forward(self, x, lengths):
        H, _ = self.lstm(self.embedding(x))
        scores = torch.matmul(torch.tanh(H), self.w).masked_fill(x == 0, float("-inf"))
        alpha = F.softmax(scores, dim=1).unsqueeze(-1)
        return self.fc(F.relu((H * alpha).sum(1)))


def init_network(model, exclude="embedding"):
    for name, w in model.named_parameters():
        if exclude in name or "words" in name or "bigrams" in name:
            continue
        if "weight" in name and w.dim() > 1:
            nn.init.xavier_normal_(w)
        elif "bias" in name:
            nn.init.constant_(w, 0)


for cls in (TextCNN, FastText, TextRNNAtt):
    model = cls(len(itos))
    init_network(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(3):
        model.train()
        for x, lengths, y in loader:
            loss = F.cross_entropy(model(x, lengths), y)
            model.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            x, lengths, y = collate(data)
            logits = model(x, lengths)
            acc = (torch.max(logits, 1)[1] == y).float().mean().item()
        print(f"{cls.__name__} epoch {epoch} loss {loss.item():.5f} acc {acc:.4f}")


# ---- ESIM-style matcher ----
def sort_by_lengths(batch, lengths):
    sorted_lengths, order = lengths.sort(0, descending=True)
    _, back = order.sort(0)
    return batch.index_select(0, order), sorted_lengths, lengths.new_tensor(torch.arange(len(lengths))).index_select(
        0, back)


def masked_softmax(scores, mask):
    mask = mask.unsqueeze(1).expand_as(scores).float()
    result = F.softmax(scores * mask, dim=-1) * mask
    return result / (result.sum(dim=-1, keepdim=True) + 1e-13)


class Encoder(nn.Module):
    def __init__(self, E, H):
        super().__init__()
        self.rnn = nn.LSTM(E, H, batch_first=True, bidirectional=True)

    def forward(self, x, lengths):
        xs, ls, restore = sort_by_lengths(x, lengths)
        packed = nn.utils.rnn.pack_padded_sequence(xs, ls, batch_first=True)
        out, _ = self.rnn(packed, None)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        return out.index_select(0, restore)


class ESIM(nn.Module):
    def __init__(self, V, E=12, H=8):
        super().__init__()
        self.emb = nn.Embedding(V, E, padding_idx=0)
        self.enc = Encoder(E, H)
        self.proj = nn.Sequential(nn.Linear(8 * H, H), nn.ReLU())
        self.comp = Encoder(H, H)
        self.cls = nn.Sequential(nn.Dropout(0.3), nn.Linear(8 * H, H), nn.Tanh(), nn.Linear(H, 3))

    def forward(self, a, la, b, lb):
        ma, mb = (a != 0)[:, :la.max()], (b != 0)[:, :lb.max()]
        ea, eb = self.enc(self.emb(a), la), self.enc(self.emb(b), lb)
        sim = ea.bmm(eb.transpose(2, 1).contiguous())
        att_a = masked_softmax(sim, mb).bmm(eb) * ma.unsqueeze(-1).float()
        att_b = masked_softmax(sim.transpose(1, 2).contiguous(), ma).bmm(ea) * mb.unsqueeze(-1).float()
        va = self.comp(self.proj(torch.cat([ea, att_a, ea - att_a, ea * att_a], -1)), la)
        vb = self.comp(self.proj(torch.cat([eb, att_b, eb - att_b, eb * att_b], -1)), lb)
        avg_a = (va * ma.unsqueeze(-1)).sum(1) / ma.sum(1, keepdim=True)
        avg_b = (vb * mb.unsqueeze(-1)).sum(1) / mb.sum(1, keepdim=True)
        max_a = va.masked_fill(~ma.unsqueeze(-1), -1e7).max(1)[0]
        max_b = vb.masked_fill(~mb.unsqueeze(-1), -1e7).max(1)[0]
        logits = self.cls(torch.cat([avg_a, max_a, avg_b, max_b], 1))
        return logits, F.softmax(logits, dim=-1)


pairs = []
for _ in range(32):
    s1, s2 = random.randrange(3), random.randrange(3)
    pairs.append((encode(sentence(s1)), encode(sentence(s2)), 0 if s1 == s2 else 2 if abs(s1 - s2) == 2 else 1))


def nli_batches(bs=8):
    for i in range(0, len(pairs), bs):
        chunk = pairs[i:i + bs]
        a = pad_sequence([p[0] for p in chunk], batch_first=True)
        b = pad_sequence([p[1] for p in chunk], batch_first=True)
        yield (a, torch.tensor([len(p[0]) for p in chunk]), b, torch.tensor([len(p[1]) for p in chunk]),
               torch.tensor([p[2] for p in chunk]))


esim = ESIM(len(itos))
opt = torch.optim.Adam(esim.parameters(), lr=0.004)
sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max", factor=0.5, patience=0)
for epoch in range(3):
    esim.train()
    running, correct = 0.0, 0
    for a, la, b, lb, y in nli_batches():
        opt.zero_grad()
        logits, probs = esim(a, la, b, lb)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        nn.utils.clip_grad_norm_(esim.parameters(), 10.0)
        opt.step()
        running += loss.item()
        correct += (probs.max(dim=1)[1] == y).sum().item()
    sched.step(correct / len(pairs))
    print(f"ESIM epoch {epoch} loss {running / 4:.7f} acc {correct / len(pairs):.4f} lr {opt.param_groups[0]['lr']}")


# ---- decomposable attention: attend, compare, aggregate with an Adagrad accumulator start ----
class Decomposable(nn.Module):
    def __init__(self, V, E=12, H=10):
        super().__init__()
        self.emb = nn.Embedding(V, E)
        self.inp = nn.Linear(E, H, bias=False)
        self.f = nn.Sequential(nn.Linear(H, H), nn.ReLU())
        self.g = nn.Sequential(nn.Linear(2 * H, H), nn.ReLU())
        self.h = nn.Sequential(nn.Linear(2 * H, H), nn.ReLU(), nn.Linear(H, 3), nn.LogSoftmax(dim=1))
        for m in self.modules():
            if isinstance(m, nn.Linear):
                m.weight.data.normal_(0, 0.1)
                if m.bias is not None:
                    m.bias.data.normal_(0, 0.1)

    def forward(self, a, b):
        a, b = self.inp(self.emb(a)), self.inp(self.emb(b))
        e = torch.bmm(self.f(a), self.f(b).transpose(1, 2))
        beta = torch.bmm(F.softmax(e, dim=2), b)
        alpha = torch.bmm(F.softmax(e.transpose(1, 2), dim=2), a)
        v1 = self.g(torch.cat([a, beta], 2)).sum(1)
        v2 = self.g(torch.cat([b, alpha], 2)).sum(1)
        return self.h(torch.cat([v1, v2], 1))


dec = Decomposable(len(itos))
adagrad = torch.optim.Adagrad(dec.parameters(), lr=0.05, initial_accumulator_value=0.1, weight_decay=1e-5)
for step, (a, la, b, lb, y) in enumerate(nli_batches()):
    adagrad.zero_grad()
    out = dec(a, b)
    loss = nn.NLLLoss()(out, y)
    loss.backward()
    grad_norm = sum(p.grad.norm() ** 2 for p in dec.parameters() if p.grad is not None) ** 0.5
    adagrad.step()
    print(f"decomposable step {step} loss {loss.item():.5f} grad-norm {grad_norm.item():.5f}")
