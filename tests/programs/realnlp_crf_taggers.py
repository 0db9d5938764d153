# Sequence taggers as the BiLSTM-CRF repositories write them: a linear-chain CRF layer (start/end/transition scores,
# the forward algorithm by logsumexp, Viterbi with back-pointers, sum/mean/token_mean reductions) that steps its
# alpha with torch.where on a uint8 mask, as older libraries still do; a character CNN whose max-pool width comes from
# a 0-d length tensor; a BiGRU over a packed, unsorted batch; and the hand-rolled variant that keeps a [C, C]
# transition matrix with -10000 walls around <SOS>/<EOS>/<PAD> and gathers gold scores per step. Seeded with
# torch.manual_seed alone.
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import PackedSequence, invert_permutation, pack_padded_sequence, pad_packed_sequence

warnings.filterwarnings("ignore", message="where received a uint8 condition")
torch.manual_seed(7)

PAD, SOS, EOS = 0, 1, 2
CHARS, WORDS, TAGS = 20, 30, 6


class ChainCRF(nn.Module):
    def __init__(self, num_tags):
        super().__init__()
        self.num_tags = num_tags
        self.start = nn.Parameter(torch.empty(num_tags).uniform_(-0.1, 0.1))
        self.end = nn.Parameter(torch.empty(num_tags).uniform_(-0.1, 0.1))
        self.trans = nn.Parameter(torch.empty(num_tags, num_tags).uniform_(-0.1, 0.1))

    def forward(self, emissions, tags, mask, reduction="mean"):
        # emissions (B, T, C), tags (B, T), mask (B, T) uint8 with the first step on
        em, tg, mk = emissions.transpose(0, 1), tags.transpose(0, 1), mask.transpose(0, 1)
        gold = self._gold(em, tg, mk)
        log_z = self._partition(em, mk)
        llh = gold - log_z
        if reduction == "none":
            return llh
        if reduction == "sum":
            return llh.sum()
        if reduction == "mean":
            return llh.mean()
        return llh.sum() / mk.float().sum()

    def _gold(self, em, tg, mk):
        T, B = tg.shape
        batch = torch.arange(B)
        score = self.start[tg[0]] + em[0, batch, tg[0]]
        for t in range(1, T):
            step = self.trans[tg[t - 1], tg[t]] + em[t, batch, tg[t]]
            score = score + step * mk[t].float()
        last = mk.long().sum(0) - 1
        return score + self.end[tg.gather(0, last.unsqueeze(0)).squeeze(0)]

    def _partition(self, em, mk):
        alpha = self.start + em[0]
        for t in range(1, em.size(0)):
            nxt = torch.logsumexp(alpha.unsqueeze(2) + self.trans + em[t].unsqueeze(1), dim=1)
            alpha = torch.where(mk[t].unsqueeze(1), nxt, alpha)
        return torch.logsumexp(alpha + self.end, dim=1)

    def decode(self, emissions, mask):
        em, mk = emissions.transpose(0, 1), mask.transpose(0, 1)
        score = self.start + em[0]
        history = []
        for t in range(1, em.size(0)):
            best, idx = (score.unsqueeze(2) + self.trans + em[t].unsqueeze(1)).max(dim=1)
            score = torch.where(mk[t].unsqueeze(1), best, score)
            history.append(idx)
        score = score + self.end
        ends = mk.long().sum(0) - 1
        paths = []
        for b in range(em.size(1)):
            tag = score[b].argmax().item()
            path = [tag]
            for hist in reversed(history[:ends[b]]):
                tag = hist[b][path[-1]].item()
                path.append(tag)
            paths.append(path[::-1])
        return paths


class CharCNN(nn.Module):
    def __init__(self, dim=8, maps=6):
        super().__init__()
        self.embed = nn.Embedding(CHARS, dim, padding_idx=PAD)
        self.conv = nn.Conv1d(dim, maps, 3, padding=1)

    def forward(self, chars):                       # (B, T, L) -> (B, T, maps)
        B, T, L = chars.shape
        x = self.embed(chars.view(B * T, L)).transpose(1, 2)
        width = (chars != PAD).sum(-1).max()        # a 0-d tensor as the pool width
        h = F.max_pool1d(torch.relu(self.conv(x))[:, :, :L], torch.clamp(width, min=1))
        return F.adaptive_max_pool1d(h, torch.tensor(1)).view(B, T, -1)


class Tagger(nn.Module):
    def __init__(self, hidden=10):
        super().__init__()
        self.chars = CharCNN()
        self.words = nn.Embedding(WORDS, 12, padding_idx=PAD)
        self.rnn = nn.GRU(18, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, TAGS)
        self.crf = ChainCRF(TAGS)

    def emissions(self, words, chars, lengths):
        x = torch.cat([self.words(words), self.chars(chars)], -1)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        rebuilt = PackedSequence(packed.data, packed.batch_sizes, packed.sorted_indices)
        assert torch.equal(rebuilt.unsorted_indices, invert_permutation(packed.sorted_indices))
        h, _ = self.rnn(rebuilt)
        h, _ = pad_packed_sequence(h, batch_first=True, total_length=words.size(1))
        return self.out(h)


def batch(n, T=7, L=5):
    lengths = torch.randint(2, T + 1, (n,))
    lengths[0] = T
    words = torch.randint(3, WORDS, (n, T))
    chars = torch.randint(1, CHARS, (n, T, L))
    mask = (torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)).to(torch.uint8)
    words = words * mask
    chars = chars * mask.unsqueeze(-1)
    tags = (words % (TAGS - 1) + 1) * mask
    return words, chars, lengths, mask, tags


model = Tagger()
opt = torch.optim.Adam(model.parameters(), lr=0.02)
data = [batch(6) for _ in range(3)]
for epoch in range(4):
    total = 0.0
    for words, chars, lengths, mask, tags in data:
        em = model.emissions(words, chars, lengths)
        loss = -model.crf(em, tags, mask, reduction="token_mean")
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        total += loss.item()
    print(f"epoch {epoch} loss {total / len(data):.6f}")

words, chars, lengths, mask, tags = data[0]
with torch.no_grad():
    em = model.emissions(words, chars, lengths)
    for red in ("none", "sum", "mean", "token_mean"):
        print(red, model.crf(em, tags, mask, reduction=red))
    paths = model.crf.decode(em, mask)
print("lengths", lengths.tolist(), [len(p) for p in paths])
print("viterbi", paths[:3])
right = sum(int(p == t) for path, row, n in zip(paths, tags.tolist(), lengths.tolist()) for p, t in zip(path, row[:n]))
print("token accuracy", right / lengths.sum().item())

# brute force check of the partition function on one short sentence
em1, m1 = em[:1, :3], torch.ones(1, 3, dtype=torch.uint8)
scores = []
for a in range(TAGS):
    for b in range(TAGS):
        for c in range(TAGS):
            scores.append(model.crf(em1, torch.tensor([[a, b, c]]), m1, reduction="sum"))
print("probabilities sum to", torch.stack(scores).exp().sum())


# the hand-rolled variant: scores as [next, previous], walls of -10000, a float mask
class WalledCRF(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.trans = nn.Parameter(torch.randn(n, n))
        self.trans.data[SOS, :] = -10000
        self.trans.data[:, EOS] = -10000
        self.trans.data[:, PAD] = -10000
        self.trans.data[PAD, :] = -10000
        self.trans.data[PAD, EOS] = 0
        self.trans.data[PAD, PAD] = 0

    def score(self, h, y0, mask):                   # h (T, B, C), y0 (T + 1, B) starting with SOS
        S = torch.FloatTensor(h.size(1)).fill_(0.0)
        trans = self.trans.unsqueeze(2)
        for t, (ht, mt) in enumerate(zip(h.unsqueeze(3), mask)):
            emit = torch.cat([e[y] for e, y in zip(ht, y0[t + 1])])
            tr = torch.cat([trans[x] for x in zip(y0[t + 1], y0[t])])
            S = S + (emit + tr) * mt
        last = y0.gather(0, mask.sum(0).long().unsqueeze(0)).squeeze(0)
        return S + self.trans[EOS, last]

    def partition(self, h, mask):
        Z = torch.FloatTensor(h.size(1), self.trans.size(0)).fill_(-10000)
        Z[:, SOS] = 0.0
        for ht, mt in zip(h, mask):
            mt = mt.unsqueeze(1)
            nz = Z.unsqueeze(1) + ht.unsqueeze(2) + self.trans.unsqueeze(0)
            m = nz.max(-1)[0]
            nz = m + (nz - m.unsqueeze(-1)).exp().sum(-1).log()
            Z = nz * mt + Z * (1 - mt)
        return torch.logsumexp(Z + self.trans[EOS], 1)


walled = WalledCRF(TAGS)
opt2 = torch.optim.SGD(walled.parameters(), lr=0.1, momentum=0.9)
h = torch.randn(5, 3, TAGS)
fmask = torch.tensor([[1, 1, 1], [1, 1, 1], [1, 1, 0], [1, 0, 0], [1, 0, 0]], dtype=torch.float)
y0 = torch.cat([torch.full((1, 3), SOS), torch.randint(3, TAGS, (5, 3)) * fmask.long()], 0)
for step in range(3):
    nll = (walled.partition(h, fmask) - walled.score(h, y0, fmask)).mean()
    walled.zero_grad()
    nll.backward()
    opt2.step()
    print(f"walled step {step} nll {nll.item():.6f} grad {walled.trans.grad.abs().sum().item():.6f}")

try:
    nn.Parameter([0.5, 0.25])
except AttributeError as e:
    print("Parameter of a list:", e)
