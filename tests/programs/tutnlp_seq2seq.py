"""A sequence-to-sequence reply model in the style of the chatbot tutorial (a packed, bidirectional two-layer GRU
encoder with dropout between its layers, a Luong-attention GRU decoder fed one step at a time, a masked NLL over
padded targets, teacher forcing and greedy decoding, gradient clipping, two Adam optimizers), then a word-vector
projection in the style of the TensorBoard tutorial (a BatchNorm1d feature head and SummaryWriter.add_embedding,
its files read back). Seeded with torch.manual_seed and random.seed."""

import itertools
import os
import random
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.utils.tensorboard import SummaryWriter

random.seed(3)
torch.manual_seed(3)
PAD, SOS, EOS = 0, 1, 2

words = "hi hello how are you fine thanks what is your name my bot good day night see later bye".split()
itow = ["PAD", "SOS", "EOS"] + words
wtoi = {w: i for i, w in enumerate(itow)}
rng = random.Random(11)
pairs = []
for _ in range(40):
    q = [rng.choice(words) for _ in range(rng.randint(2, 6))]
    pairs.append((q, [words[(words.index(w) + 2) % len(words)] for w in q[::-1]]))


def batch(pairs_):
    pairs_ = sorted(pairs_, key=lambda p: len(p[0]), reverse=True)
    src = [[wtoi[w] for w in q] + [EOS] for q, _ in pairs_]
    tgt = [[wtoi[w] for w in a] + [EOS] for _, a in pairs_]
    lengths = torch.tensor([len(s) for s in src])
    src = torch.LongTensor(list(itertools.zip_longest(*src, fillvalue=PAD)))
    tgt_pad = list(itertools.zip_longest(*tgt, fillvalue=PAD))
    mask = torch.BoolTensor([[t != PAD for t in row] for row in tgt_pad])
    return src, lengths, torch.LongTensor(tgt_pad), mask, max(len(t) for t in tgt)


class Encoder(nn.Module):
    def __init__(self, hidden, emb, layers=2, dropout=0.2):
        super().__init__()
        self.hidden, self.emb = hidden, emb
        self.gru = nn.GRU(hidden, hidden, layers, dropout=dropout, bidirectional=True)

    def forward(self, seq, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(self.emb(seq), lengths)
        out, h = self.gru(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out)
        return out[:, :, :self.hidden] + out[:, :, self.hidden:], h


class Decoder(nn.Module):
    def __init__(self, hidden, emb, n_words, layers=2, dropout=0.2):
        super().__init__()
        self.layers, self.emb = layers, emb
        self.drop = nn.Dropout(dropout)
        self.gru = nn.GRU(hidden, hidden, layers, dropout=dropout)
        self.score = nn.Linear(hidden, hidden)              # Luong's "general" score
        self.concat = nn.Linear(2 * hidden, hidden)
        self.out = nn.Linear(hidden, n_words)

    def forward(self, step, hidden, enc):
        rnn_out, hidden = self.gru(self.drop(self.emb(step)), hidden)
        energies = torch.sum(rnn_out * self.score(enc), dim=2).t()
        attn = F.softmax(energies, dim=1).unsqueeze(1)
        context = attn.bmm(enc.transpose(0, 1)).squeeze(1)
        mixed = torch.tanh(self.concat(torch.cat((rnn_out.squeeze(0), context), 1)))
        return F.softmax(self.out(mixed), dim=1), hidden


def masked_nll(probs, target, mask):
    ce = -torch.log(torch.gather(probs, 1, target.view(-1, 1)))
    return ce.masked_select(mask.view(-1, 1)).mean(), mask.sum().item()


hidden = 16
emb = nn.Embedding(len(itow), hidden)
enc, dec = Encoder(hidden, emb), Decoder(hidden, emb, len(itow))
enc_opt = optim.Adam(enc.parameters(), lr=1e-3)
dec_opt = optim.Adam(dec.parameters(), lr=5e-3)


def train_step(src, lengths, tgt, mask, max_len, teacher):
    enc_opt.zero_grad()
    dec_opt.zero_grad()
    enc_out, enc_h = enc(src, lengths)
    step = torch.LongTensor([[SOS] * src.size(1)])
    h = enc_h[:dec.layers]
    loss, totals, shown = 0, 0, 0.0
    for t in range(max_len):
        probs, h = dec(step, h, enc_out)
        if teacher:
            step = tgt[t].view(1, -1)
        else:
            _, top = probs.topk(1)
            step = torch.LongTensor([[top[i][0] for i in range(src.size(1))]])
        l, n = masked_nll(probs, tgt[t], mask[t])
        loss += l
        shown += l.item() * n
        totals += n
    loss.backward()
    norms = (nn.utils.clip_grad_norm_(enc.parameters(), 5.0), nn.utils.clip_grad_norm_(dec.parameters(), 5.0))
    enc_opt.step()
    dec_opt.step()
    return shown / totals, norms


enc.train()
dec.train()
for it in range(1, 9):
    b = batch([random.choice(pairs) for _ in range(6)])
    loss, norms = train_step(*b, teacher=random.random() < 0.7)
    print(f"iteration {it}: loss {loss:.5f}, grad norms {norms[0].item():.5f} {norms[1].item():.5f}")

enc.eval()
dec.eval()
with torch.no_grad():
    q = pairs[0][0]
    seq = torch.LongTensor([[wtoi[w] for w in q] + [EOS]]).transpose(0, 1)
    enc_out, enc_h = enc(seq, torch.tensor([seq.size(0)]))
    h, step = enc_h[:dec.layers], torch.ones(1, 1, dtype=torch.long) * SOS
    tokens, scores = torch.zeros([0], dtype=torch.long), torch.zeros([0])
    for _ in range(6):
        probs, h = dec(step, h, enc_out)
        best, step = torch.max(probs, dim=1)
        tokens, scores = torch.cat((tokens, step)), torch.cat((scores, best))
        step = torch.unsqueeze(step, 0)
    print(" ".join(q), "->", " ".join(itow[t.item()] for t in tokens), scores)

# --- the word vectors through a batch-normalised head, and the projector's files --------------------------------
head = nn.Sequential(nn.Linear(hidden, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
vectors = emb.weight.detach()[3:]
head.train()
for _ in range(3):
    out = head(vectors)
print("batch-norm running stats:", head[1].running_mean, head[1].running_var)
head.eval()
print("head (eval):", head(vectors[:4]))
with tempfile.TemporaryDirectory() as d:
    w = SummaryWriter(d)
    w.add_embedding(vectors[:6], metadata=words[:6], tag="words")
    w.close()
    with open(os.path.join(d, "00000", "words", "tensors.tsv")) as f:
        rows = [[float(v) for v in line.split("\t")] for line in f.read().splitlines()]
    with open(os.path.join(d, "projector_config.pbtxt")) as f:
        config = f.read()
print("projected rows:", len(rows), [round(sum(r), 5) for r in rows], "tensor_path" in config)
