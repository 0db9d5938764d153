# Sequence-to-sequence training and decoding as the "attention is all you need" re-implementations and the CRNN
# text recognisers do it: pad and subsequent masks (triu), label smoothing both ways (a KLDivLoss on a scattered
# target distribution, and a one-hot mix with log_softmax and masked_select), the Noam rate through LambdaLR and
# through a hand-written optimizer wrapper, greedy decoding and a beam search with topk over k^2 candidates and a
# length penalty from masked_fill(...).min(1); then a conv + BiLSTM recogniser trained with CTCLoss and decoded
# greedily. Seeded with torch.manual_seed alone.
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import LambdaLR

PAD, BOS, EOS, V = 0, 1, 2, 10


def subsequent_mask(size):
    return torch.triu(torch.ones((1, size, size)), diagonal=1).type(torch.uint8) == 0


def get_pad_mask(seq, pad_idx):
    return (seq != pad_idx).unsqueeze(-2)


def attention(query, key, value, mask=None, dropout=None):
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


class MultiHeaded(nn.Module):
    def __init__(self, h, d_model, dropout=0.1):
        super().__init__()
        self.d_k, self.h = d_model // h, h
        self.linears = nn.ModuleList([copy.deepcopy(nn.Linear(d_model, d_model)) for _ in range(4)])
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, query, key, value, mask=None):
        if mask is not None:
            mask = mask.unsqueeze(1)
        nb = query.size(0)
        query, key, value = [lin(x).view(nb, -1, self.h, self.d_k).transpose(1, 2)
                             for lin, x in zip(self.linears, (query, key, value))]
        x, self.attn = attention(query, key, value, mask=mask, dropout=self.dropout)
        x = x.transpose(1, 2).contiguous().view(nb, -1, self.h * self.d_k)
        del query, key, value
        return self.linears[-1](x)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return x + self.pe[:, : x.size(1)].requires_grad_(False)


class Layer(nn.Module):
    def __init__(self, d, cross):
        super().__init__()
        self.self_attn = MultiHeaded(2, d, 0.0)
        self.src_attn = MultiHeaded(2, d, 0.0) if cross else None
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))
        self.norms = nn.ModuleList([nn.LayerNorm(d, eps=1e-6) for _ in range(3)])

    def forward(self, x, mask, memory=None, src_mask=None):
        y = self.norms[0](x)
        x = x + self.self_attn(y, y, y, mask)
        if self.src_attn is not None:
            y = self.norms[1](x)
            x = x + self.src_attn(y, memory, memory, src_mask)
        return x + self.ff(self.norms[2](x))


class Seq2Seq(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.emb = nn.Embedding(V, d, padding_idx=PAD)
        self.pos = PositionalEncoding(d)
        self.enc = Layer(d, False)
        self.dec = Layer(d, True)
        self.proj = nn.Linear(d, V, bias=False)
        self.proj.weight = self.emb.weight
        self.d = d
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def encode(self, src, src_mask):
        return self.enc(self.pos(self.emb(src) * math.sqrt(self.d)), src_mask)

    def decode(self, memory, src_mask, tgt, tgt_mask):
        return self.dec(self.pos(self.emb(tgt) * math.sqrt(self.d)), tgt_mask, memory, src_mask)

    def forward(self, src, tgt):
        src_mask = get_pad_mask(src, PAD)
        tgt_mask = get_pad_mask(tgt, PAD) & subsequent_mask(tgt.size(-1)).type_as(src_mask.data)
        return self.proj(self.decode(self.encode(src, src_mask), src_mask, tgt, tgt_mask))


class LabelSmoothing(nn.Module):
    def __init__(self, size, padding_idx, smoothing=0.0):
        super().__init__()
        self.criterion = nn.KLDivLoss(reduction="sum")
        self.padding_idx, self.confidence, self.smoothing, self.size = padding_idx, 1.0 - smoothing, smoothing, size

    def forward(self, x, target):
        true_dist = x.data.clone()
        true_dist.fill_(self.smoothing / (self.size - 2))
        true_dist.scatter_(1, target.data.unsqueeze(1), self.confidence)
        true_dist[:, self.padding_idx] = 0
        mask = torch.nonzero(target.data == self.padding_idx)
        if mask.dim() > 0:
            true_dist.index_fill_(0, mask.squeeze(), 0.0)
        return self.criterion(x, true_dist.clone().detach())


def smoothed_loss(pred, gold, eps=0.1):
    one_hot = torch.zeros_like(pred).scatter(1, gold.view(-1, 1), 1)
    one_hot = one_hot * (1 - eps) + (1 - one_hot) * eps / (pred.size(1) - 1)
    loss = -(one_hot * F.log_softmax(pred, dim=1)).sum(dim=1)
    return loss.masked_select(gold.ne(PAD)).sum()


def rate(step, model_size, factor, warmup):
    step = 1 if step == 0 else step
    return factor * (model_size ** (-0.5) * min(step ** (-0.5), step * warmup ** (-1.5)))


def reverse_batch(bs):
    body = torch.randint(3, V, (bs, 5))
    lens = torch.randint(2, 6, (bs,))
    src = torch.full((bs, 6), PAD, dtype=torch.long)
    tgt = torch.full((bs, 7), PAD, dtype=torch.long)
    for i, k in enumerate(lens.tolist()):
        src[i, :k], src[i, k] = body[i, :k], EOS
        tgt[i, 0], tgt[i, 1:k + 1], tgt[i, k + 1] = BOS, body[i, :k].flip(0), EOS
    return src, tgt


torch.manual_seed(0)
model = Seq2Seq()
crit = LabelSmoothing(V, PAD, smoothing=0.1)
optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
sched = LambdaLR(optimizer, lr_lambda=lambda step: rate(step, 16, 1.0, 20))
for step in range(6):
    src, tgt = reverse_batch(8)
    out = model(src, tgt[:, :-1])
    gold = tgt[:, 1:].contiguous().view(-1)
    logp = out.log_softmax(-1).contiguous().view(-1, V)
    ntok = (gold != PAD).data.sum()
    loss = crit(logp, gold) / ntok
    other = smoothed_loss(out.view(-1, V), gold) / ntok
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    sched.step()
    n_correct = out.view(-1, V).max(1)[1].eq(gold).masked_select(gold.ne(PAD)).sum().item()
    print(step, round(loss.item(), 5), round(other.item(), 5), n_correct, "%.3e" % optimizer.param_groups[0]["lr"])


@torch.no_grad()
def greedy_decode(model, src, max_len):
    src_mask = get_pad_mask(src, PAD)
    memory = model.encode(src, src_mask)
    ys = torch.zeros(1, 1).fill_(BOS).type_as(src.data)
    for _ in range(max_len - 1):
        out = model.decode(memory, src_mask, ys, subsequent_mask(ys.size(1)).type_as(src_mask.data))
        _, next_word = torch.max(model.proj(out[:, -1]), dim=1)
        ys = torch.cat([ys, torch.zeros(1, 1).type_as(src.data).fill_(next_word.data[0])], dim=1)
    return ys


@torch.no_grad()
def beam_search(model, src, beam_size=3, max_len=8, alpha=0.7):
    src_mask = get_pad_mask(src, PAD)
    memory = model.encode(src, src_mask)
    len_map = torch.arange(1, max_len + 1, dtype=torch.long).unsqueeze(0)
    gen = torch.full((beam_size, max_len), PAD, dtype=torch.long)
    gen[:, 0] = BOS
    probs = F.softmax(model.proj(model.decode(memory, src_mask, gen[:1, :1], subsequent_mask(1))), dim=-1)
    best_p, best_i = probs[:, -1, :].topk(beam_size)
    scores = torch.log(best_p).view(beam_size)
    gen[:, 1] = best_i[0]
    memory = memory.repeat(beam_size, 1, 1)
    ans = 0
    for step in range(2, max_len):
        dec = F.softmax(model.proj(model.decode(memory, src_mask, gen[:, :step], subsequent_mask(step))), dim=-1)
        k2_p, k2_i = dec[:, -1, :].topk(beam_size)
        scores = torch.log(k2_p).view(beam_size, -1) + scores.view(beam_size, 1)
        scores, best_in_k2 = scores.view(-1).topk(beam_size)
        r, c = best_in_k2 // beam_size, best_in_k2 % beam_size
        gen[:, :step] = gen[r, :step]
        gen[:, step] = k2_i[r, c]
        eos = gen == EOS
        seq_lens, _ = len_map.masked_fill(~eos, max_len).min(1)
        if (eos.sum(1) > 0).sum(0).item() == beam_size:
            _, ans = scores.div(seq_lens.float() ** alpha).max(0)
            ans = ans.item()
            break
    return gen[ans][:seq_lens[ans]].tolist(), [round(s, 4) for s in scores.tolist()]


model.eval()
src, _ = reverse_batch(2)
print(greedy_decode(model, src[:1], 7).tolist())
print(beam_search(model, src[1:2]))
print(subsequent_mask(3).int().tolist(), get_pad_mask(src, PAD).shape)


class Recogniser(nn.Module):
    def __init__(self, n_class, height=8):
        super().__init__()
        self.cnn = nn.Sequential(nn.Conv2d(1, 4, 3, 1, 1, bias=False), nn.BatchNorm2d(4), nn.LeakyReLU(0.2, inplace=True),
                                 nn.MaxPool2d(kernel_size=(2, 1)))
        self.map_to_seq = nn.Linear(4 * height // 2, 8)
        self.rnn = nn.LSTM(8, 6, bidirectional=True)
        self.dense = nn.Linear(12, n_class)

    def forward(self, images):
        conv = self.cnn(images)
        b, c, h, w = conv.size()
        seq = self.map_to_seq(conv.view(b, c * h, w).permute(2, 0, 1))
        recurrent, _ = self.rnn(seq)
        return self.dense(recurrent)


def greedy_ctc(log_probs, blank=0):
    out = []
    for row in log_probs.argmax(-1).t().tolist():
        seq, prev = [], blank
        for v in row:
            if v != blank and v != prev:
                seq.append(v)
            prev = v
        out.append(seq)
    return out


rec = Recogniser(n_class=6)
criterion = nn.CTCLoss(reduction="sum", zero_infinity=True)
rms = torch.optim.RMSprop(rec.parameters(), lr=5e-3)
images = torch.rand(4, 1, 8, 12)
targets = torch.tensor([1, 2, 3, 4, 5, 1, 2, 3])
target_lengths = torch.tensor([[2], [3], [1], [2]])
for step in range(3):
    rec.train()
    log_probs = F.log_softmax(rec(images), dim=2)
    input_lengths = torch.LongTensor([log_probs.size(0)] * images.size(0))
    loss = criterion(log_probs, targets, input_lengths, torch.flatten(target_lengths))
    rms.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(rec.parameters(), 5)
    rms.step()
    print("ctc", step, round(loss.item() / 4, 4), round(norm.item(), 4))
rec.eval()
with torch.no_grad():
    log_probs = F.log_softmax(rec(images), dim=2)
    per_sample = F.ctc_loss(log_probs, targets, [log_probs.size(0)] * 4, [2, 3, 1, 2], reduction="none")
    print([round(v, 4) for v in per_sample.tolist()], greedy_ctc(log_probs))
