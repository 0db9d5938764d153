# Structured decoders of the classic NLP repositories: a pointer network that sorts numbers (an LSTM encoder with
# a zero Parameter expanded into its initial state, a hand-written LSTM decoder step, additive attention through a
# 1x1 Conv1d, already-chosen inputs masked by indexing with -inf, the next input picked with a byte one-hot mask);
# a child-sum Tree-LSTM scoring sentence similarity with a KL-divergence target over similarity classes; and a GRU
# seq2seq with Luong "general" attention trained with teacher forcing by random.random(), decoded greedily and by a
# beam whose back-pointers come from `candidates // vocab`; ending with char-rnn sampling by torch.multinomial at a
# temperature. Seeded with torch.manual_seed and random.seed.
import math
import random
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

warnings.filterwarnings("ignore", category=UserWarning)
torch.manual_seed(3)
random.seed(3)


# ---- pointer network ----
class Pointer(nn.Module):
    def __init__(self, E=8, H=12):
        super().__init__()
        self.embed = nn.Linear(1, E)
        self.encoder = nn.LSTM(E, H, batch_first=True)
        self.h0 = nn.Parameter(torch.zeros(1), requires_grad=False)
        self.x2h = nn.Linear(E, 4 * H)
        self.h2h = nn.Linear(H, 4 * H)
        self.q = nn.Linear(H, H)
        self.ctx = nn.Conv1d(H, H, 1, 1)
        self.V = nn.Parameter(torch.FloatTensor(H))
        self.inf = nn.Parameter(torch.FloatTensor([float("-inf")]), requires_grad=False)
        self.start = nn.Parameter(torch.FloatTensor(E), requires_grad=False)
        nn.init.uniform_(self.V, -1, 1)
        nn.init.uniform_(self.start, -1, 1)
        self.H = H

    def forward(self, points):
        B, L = points.shape
        emb = self.embed(points.unsqueeze(-1))
        state = self.h0.unsqueeze(0).unsqueeze(0).repeat(1, B, self.H)
        context, (h, c) = self.encoder(emb, (state, state.clone()))
        h, c = h[-1], c[-1]
        ctx = self.ctx(context.permute(0, 2, 1))
        mask = torch.ones(B, L)
        runner = torch.arange(L).unsqueeze(0).expand(B, -1)
        x, outs, ptrs = self.start.unsqueeze(0).expand(B, -1), [], []
        for _ in range(L):
            i, f, g, o = (self.x2h(x) + self.h2h(h)).chunk(4, 1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            inp = self.q(h).unsqueeze(2).expand(-1, -1, L)
            att = torch.bmm(self.V.unsqueeze(0).expand(B, -1).unsqueeze(1), torch.tanh(inp + ctx)).squeeze(1)
            masked = torch.eq(mask, 0)
            if len(att[masked]) > 0:
                att[masked] = self.inf.expand(B, L)[masked]
            alpha = F.softmax(att, dim=1)
            h = torch.tanh(torch.bmm(ctx, alpha.unsqueeze(2)).squeeze(2) + h)
            idx = (alpha * mask).max(1)[1]
            one_hot = (runner == idx.unsqueeze(1)).float()
            mask = mask * (1 - one_hot)
            pick = one_hot.unsqueeze(2).expand(-1, -1, emb.size(2)).bool()
            x = emb[pick].view(B, -1)
            outs.append(alpha.unsqueeze(1))
            ptrs.append(idx.unsqueeze(1))
        return torch.cat(outs, 1), torch.cat(ptrs, 1)


net = Pointer()
opt = torch.optim.Adam(filter(lambda p: p.requires_grad, net.parameters()), lr=0.01)
for step in range(6):
    pts = torch.rand(8, 5)
    target = pts.argsort(1)
    probs, ptrs = net(pts)
    loss = F.nll_loss(torch.log(probs + 1e-9).reshape(-1, 5), target.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"pointer step {step} loss {loss.item():.6f} exact {(ptrs == target).all(1).float().mean().item():.3f}")
print("pointers", ptrs[:2].tolist(), "targets", target[:2].tolist())


# ---- child-sum Tree-LSTM ----
class Tree:
    def __init__(self, idx):
        self.idx, self.children = idx, []


def tree_from_parents(parents):
    nodes = {i: Tree(i - 1) for i in range(1, len(parents) + 1)}
    root = None
    for i, p in enumerate(parents, 1):
        if p == 0:
            root = nodes[i]
        else:
            nodes[p].children.append(nodes[i])
    return root


class ChildSum(nn.Module):
    def __init__(self, D, M):
        super().__init__()
        self.M = M
        self.ioux, self.iouh = nn.Linear(D, 3 * M), nn.Linear(M, 3 * M)
        self.fx, self.fh = nn.Linear(D, M), nn.Linear(M, M)

    def forward(self, tree, inputs):
        for child in tree.children:
            self.forward(child, inputs)
        if not tree.children:
            child_c = inputs[0].detach().new(1, self.M).fill_(0.0).requires_grad_()
            child_h = inputs[0].detach().new(1, self.M).fill_(0.0).requires_grad_()
        else:
            child_c, child_h = zip(*(ch.state for ch in tree.children))
            child_c, child_h = torch.cat(child_c, 0), torch.cat(child_h, 0)
        x = inputs[tree.idx].unsqueeze(0)
        iou = self.ioux(x) + self.iouh(torch.sum(child_h, 0, keepdim=True))
        i, o, u = torch.split(iou, iou.size(1) // 3, dim=1)
        f = torch.sigmoid(self.fh(child_h) + self.fx(x).repeat(len(child_h), 1))
        c = torch.sigmoid(i) * torch.tanh(u) + torch.sum(f * child_c, 0, keepdim=True)
        tree.state = (c, torch.sigmoid(o) * torch.tanh(c))
        return tree.state


class Similarity(nn.Module):
    def __init__(self, V=20, D=6, M=8, classes=5):
        super().__init__()
        self.emb = nn.Embedding(V, D, padding_idx=0)
        self.tree = ChildSum(D, M)
        self.wh, self.wp = nn.Linear(2 * M, 6), nn.Linear(6, classes)

    def forward(self, lt, ls, rt, rs):
        _, lh = self.tree(lt, self.emb(ls))
        _, rh = self.tree(rt, self.emb(rs))
        feats = torch.cat((lh * rh, torch.abs(lh - rh)), 1)
        return F.log_softmax(self.wp(torch.sigmoid(self.wh(feats))), dim=1)


def soft_target(score, classes=5):
    t = torch.zeros(1, classes)
    lo, hi = int(math.floor(score)), int(math.ceil(score))
    if lo == hi:
        t[0, lo - 1] = 1
    else:
        t[0, lo - 1], t[0, hi - 1] = hi - score, score - lo
    return t


sim = Similarity()
adagrad = torch.optim.Adagrad(sim.parameters(), lr=0.05, weight_decay=1e-4)
kl = nn.KLDivLoss(reduction="batchmean")
examples = []
for _ in range(6):
    n1, n2 = random.randint(3, 6), random.randint(3, 6)
    p1 = [0] + [random.randint(1, i) for i in range(1, n1)]
    p2 = [0] + [random.randint(1, i) for i in range(1, n2)]
    examples.append((p1, torch.randint(1, 20, (n1,)), p2, torch.randint(1, 20, (n2,)), round(random.uniform(1, 5), 1)))
for epoch in range(2):
    total = 0.0
    adagrad.zero_grad()
    for k, idx in enumerate(torch.randperm(len(examples)).tolist()):
        p1, s1, p2, s2, score = examples[idx]
        out = sim(tree_from_parents(p1), s1, tree_from_parents(p2), s2)
        loss = kl(out, soft_target(score))
        total += loss.item()
        loss.backward()
        if k % 2 == 1:
            adagrad.step()
            adagrad.zero_grad()
    with torch.no_grad():
        preds = torch.stack([torch.dot(torch.arange(1.0, 6.0), sim(tree_from_parents(p1), s1, tree_from_parents(p2),
                                                                   s2).squeeze().exp()) for p1, s1, p2, s2, _ in
                             examples])
    gold = torch.tensor([e[4] for e in examples])
    x, y = (preds - preds.mean()) / preds.std(), (gold - gold.mean()) / gold.std()
    print(f"tree epoch {epoch} loss {total / len(examples):.6f} pearson {torch.mean(x * y).item():.5f} "
          f"mse {torch.mean((preds - gold) ** 2).item():.5f}")


# ---- seq2seq with Luong attention, greedy and beam decoding ----
SOS, EOS, V = 1, 2, 10


class Seq2Seq(nn.Module):
    def __init__(self, H=16):
        super().__init__()
        self.emb_src, self.emb_tgt = nn.Embedding(V, H), nn.Embedding(V, H)
        self.enc = nn.GRU(H, H, batch_first=True)
        self.dec = nn.GRU(H, H, batch_first=True)
        self.attn = nn.Linear(H, H, bias=False)
        self.concat = nn.Linear(2 * H, H)
        self.out = nn.Linear(H, V)

    def encode(self, src):
        return self.enc(self.emb_src(src))

    def step(self, tok, hidden, memory):
        o, hidden = self.dec(self.emb_tgt(tok).unsqueeze(1), hidden)
        energy = torch.bmm(self.attn(memory), o.transpose(1, 2)).squeeze(2)
        weights = F.softmax(energy, dim=1)
        context = torch.bmm(weights.unsqueeze(1), memory)
        h = torch.tanh(self.concat(torch.cat([o, context], 2).squeeze(1)))
        return F.log_softmax(self.out(h), dim=1), hidden, weights


def make_pair():
    src = [random.randint(3, V - 1) for _ in range(4)]
    return torch.tensor(src), torch.tensor([SOS] + src[::-1] + [EOS])


s2s = Seq2Seq()
opt = torch.optim.Adam(s2s.parameters(), lr=0.02)
for it in range(12):
    pairs = [make_pair() for _ in range(8)]
    src, tgt = torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])
    memory, hidden = s2s.encode(src)
    tok, loss = tgt[:, 0], 0.0
    teacher = random.random() < 0.5
    for t in range(1, tgt.size(1)):
        logp, hidden, _ = s2s.step(tok, hidden, memory)
        loss = loss + F.nll_loss(logp, tgt[:, t])
        tok = tgt[:, t] if teacher else logp.argmax(1)
    opt.zero_grad()
    (loss / (tgt.size(1) - 1)).backward()
    nn.utils.clip_grad_norm_(s2s.parameters(), 1.0)
    opt.step()
    if it % 3 == 2:
        print(f"seq2seq iter {it} teacher {teacher} loss {loss.item() / (tgt.size(1) - 1):.6f}")

src = torch.tensor([[3, 5, 7, 9]])
with torch.no_grad():
    memory, hidden = s2s.encode(src)
    tok, greedy = torch.tensor([SOS]), []
    for _ in range(6):
        logp, hidden, w = s2s.step(tok, hidden, memory)
        tok = logp.argmax(1)
        greedy.append(tok.item())
    print("greedy", greedy, "attention", w)

    K = 3
    memory, hidden = s2s.encode(src)
    memory, hidden = memory.repeat(K, 1, 1), hidden.repeat(1, K, 1)
    scores = torch.tensor([0.0] + [float("-inf")] * (K - 1))
    tokens = torch.full((K, 1), SOS)
    for _ in range(5):
        logp, hidden, _ = s2s.step(tokens[:, -1], hidden, memory)
        cand = (scores.unsqueeze(1) + logp).view(-1)
        top, flat = cand.topk(K)
        back, word = flat // V, flat % V
        tokens = torch.cat([tokens.index_select(0, back), word.unsqueeze(1)], 1)
        hidden, scores = hidden.index_select(1, back), top
    print("beam", tokens.tolist(), scores)


# ---- char-rnn sampling at a temperature ----
chars = "abcdefgh "
rnn = nn.GRU(len(chars), 12)
head = nn.Linear(12, len(chars))
h = torch.zeros(1, 1, 12)
x, text = torch.zeros(1, 1, len(chars)), ""
with torch.no_grad():
    for _ in range(20):
        o, h = rnn(x, h)
        dist = head(o.view(-1)).div(0.8).exp()
        top = torch.multinomial(dist, 1)[0]
        text += chars[top]
        x = torch.zeros(1, 1, len(chars))
        x[0, 0, top] = 1
print("sampled", repr(text), "last", dist.sum())
