"""Word-level NLP in the style of the beginner NLP tutorials: a bag-of-words language classifier, a trigram
language model over embeddings, an LSTM part-of-speech tagger stepped by hand and run whole, and a small
BiLSTM + CRF tagger (forward algorithm in log space, Viterbi decoding). Seeded with torch.manual_seed, as the
tutorials are: the run draws torch's own random numbers."""

import torch
import torch.autograd as autograd
import torch.functional as TF
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(7)

# --- bag of words: which language is a sentence in? ------------------------------------------------------------
sentences = [("el gato come pescado".split(), "ES"), ("the cat eats fish".split(), "EN"),
             ("la casa es grande".split(), "ES"), ("the house is big".split(), "EN"),
             ("el perro duerme".split(), "ES"), ("a dog sleeps here".split(), "EN")]
held_out = [("el gato duerme".split(), "ES"), ("the dog is big".split(), "EN")]
vocab = {}
for words, _ in sentences + held_out:
    for w in words:
        vocab.setdefault(w, len(vocab))
labels = {"ES": 0, "EN": 1}


class BagOfWords(nn.Module):
    def __init__(self, n_words, n_labels):
        super().__init__()
        self.affine = nn.Linear(n_words, n_labels)

    def forward(self, counts):
        return F.log_softmax(self.affine(counts), dim=1)


def counts_of(words):
    v = torch.zeros(len(vocab))
    for w in words:
        v[vocab[w]] += 1
    return v.view(1, -1)


clf = BagOfWords(len(vocab), 2)
opt = optim.SGD(clf.parameters(), lr=0.2)
nll = nn.NLLLoss()
for epoch in range(30):
    for words, lab in sentences:
        clf.zero_grad()
        loss = nll(clf(autograd.Variable(counts_of(words))), autograd.Variable(torch.LongTensor([labels[lab]])))
        loss.backward()
        opt.step()
with torch.no_grad():
    for words, lab in held_out:
        print(lab, clf(counts_of(words)))
print("weights for 'gato':", next(clf.parameters())[:, vocab["gato"]])

# --- trigram language model -------------------------------------------------------------------------------------
text = ("the quick brown fox jumps over the lazy dog and the quick red fox runs past the lazy cat while "
        "the brown dog sleeps under the old tree").split()
trigrams = [((text[i], text[i + 1]), text[i + 2]) for i in range(len(text) - 2)]
words = sorted(set(text))
w2i = {w: i for i, w in enumerate(words)}


class Trigram(nn.Module):
    def __init__(self, n, dim, context=2):
        super().__init__()
        self.emb = nn.Embedding(n, dim)
        self.hidden = nn.Linear(context * dim, 32)
        self.out = nn.Linear(32, n)

    def forward(self, idx):
        e = self.emb(idx).view(1, -1)
        return F.log_softmax(self.out(F.relu(self.hidden(e))), dim=1)


lm = Trigram(len(words), 6)
opt = optim.SGD(lm.parameters(), lr=0.05)
history = []
for epoch in range(4):
    total = 0.0
    for (a, b), target in trigrams:
        lm.zero_grad()
        out = lm(torch.tensor([w2i[a], w2i[b]], dtype=torch.long))
        loss = nll(out, torch.tensor([w2i[target]], dtype=torch.long))
        loss.backward()
        opt.step()
        total += loss.item()
    history.append(round(total, 4))
print("trigram losses:", history)
print("embedding of 'fox':", lm.emb(torch.tensor([w2i["fox"]])))

# --- LSTM tagger --------------------------------------------------------------------------------------------------
lstm = nn.LSTM(3, 3)
steps = [torch.randn(1, 3) for _ in range(4)]
hidden = (torch.randn(1, 1, 3), torch.randn(1, 1, 3))
for s in steps:
    out, hidden = lstm(s.view(1, 1, -1), hidden)
print("stepped:", out, hidden[1])
whole, (h, c) = lstm(torch.cat(steps).view(len(steps), 1, -1), (torch.zeros(1, 1, 3), torch.zeros(1, 1, 3)))
print("whole:", whole)
print("grad_fn names:", whole.grad_fn.name(), h.grad_fn.name(), lstm.double()(whole.double())[0].grad_fn.name())
lstm.float()

tagged = [("the cat eats the fish".split(), ["DET", "NN", "V", "DET", "NN"]),
          ("a dog sees that cat".split(), ["DET", "NN", "V", "DET", "NN"])]
t2i = {"DET": 0, "NN": 1, "V": 2}
tw = {}
for ws, _ in tagged:
    for w in ws:
        tw.setdefault(w, len(tw))


class Tagger(nn.Module):
    def __init__(self, n_words, n_tags, dim=6, hid=6):
        super().__init__()
        self.emb = nn.Embedding(n_words, dim)
        self.lstm = nn.LSTM(dim, hid)
        self.to_tags = nn.Linear(hid, n_tags)

    def forward(self, sent):
        out, _ = self.lstm(self.emb(sent).view(len(sent), 1, -1))
        return F.log_softmax(self.to_tags(out.view(len(sent), -1)), dim=1)


tagger = Tagger(len(tw), 3)
opt = optim.SGD(tagger.parameters(), lr=0.1)
seq = lambda ws, m: torch.tensor([m[w] for w in ws], dtype=torch.long)   # noqa: E731
for epoch in range(40):
    for ws, tags in tagged:
        tagger.zero_grad()
        loss = nll(tagger(seq(ws, tw)), seq(tags, t2i))
        loss.backward()
        opt.step()
with torch.no_grad():
    scores = tagger(seq(tagged[0][0], tw))
print("tag scores:", scores, scores.argmax(1))

# --- BiLSTM + CRF ---------------------------------------------------------------------------------------------------
START, STOP = 3, 4


def lse(v):                       # log-sum-exp of a (1, n) row
    m = v[0, torch.max(v, 1)[1].item()]
    return m + torch.log(torch.sum(torch.exp(v - m.view(1, -1).expand(1, v.size(1)))))


class BiLSTMCRF(nn.Module):
    def __init__(self, n_words, n_tags=5, dim=5, hid=4):
        super().__init__()
        self.n = n_tags
        self.emb = nn.Embedding(n_words, dim)
        self.lstm = nn.LSTM(dim, hid // 2, bidirectional=True)
        self.to_tags = nn.Linear(hid, n_tags)
        self.trans = nn.Parameter(torch.randn(n_tags, n_tags))
        self.trans.data[START, :] = -10000
        self.trans.data[:, STOP] = -10000
        self.hid = hid

    def feats(self, sent):
        h0 = (torch.randn(2, 1, self.hid // 2), torch.randn(2, 1, self.hid // 2))
        out, _ = self.lstm(self.emb(sent).view(len(sent), 1, -1), h0)
        return self.to_tags(out.view(len(sent), self.hid))

    def partition(self, feats):
        alpha = torch.full((1, self.n), -10000.)
        alpha[0][START] = 0.
        for f in feats:
            alpha = torch.cat([lse(alpha + self.trans[k].view(1, -1) + f[k].view(1, -1).expand(1, self.n)).view(1)
                               for k in range(self.n)]).view(1, -1)
        return lse(alpha + self.trans[STOP])

    def gold(self, feats, tags):
        score = torch.zeros(1)
        tags = torch.cat([torch.tensor([START], dtype=torch.long), tags])
        for i, f in enumerate(feats):
            score = score + self.trans[tags[i + 1], tags[i]] + f[tags[i + 1]]
        return score + self.trans[STOP, tags[-1]]

    def viterbi(self, feats):
        v = torch.full((1, self.n), -10000.)
        v[0][START] = 0
        back = []
        for f in feats:
            cand = [v + self.trans[k] for k in range(self.n)]
            best = [torch.max(c, 1)[1].item() for c in cand]
            back.append(best)
            v = (torch.cat([c[0][b].view(1) for c, b in zip(cand, best)]) + f).view(1, -1)
        last = v + self.trans[STOP]
        b = torch.max(last, 1)[1].item()
        path = [b]
        for bp in reversed(back):
            b = bp[b]
            path.append(b)
        assert path.pop() == START
        return last[0][path[0]], path[::-1]


ner = [("alice met bob in paris".split(), [0, 2, 0, 2, 0]), ("bob went to rome".split(), [0, 2, 2, 0])]
nw = {}
for ws, _ in ner:
    for w in ws:
        nw.setdefault(w, len(nw))
crf = BiLSTMCRF(len(nw))
opt = optim.SGD(crf.parameters(), lr=0.01, weight_decay=1e-4)
with torch.no_grad():
    print("before:", crf.viterbi(crf.feats(seq(ner[0][0], nw))))
for epoch in range(25):
    for ws, tags in ner:
        crf.zero_grad()
        f = crf.feats(seq(ws, nw))
        loss = crf.partition(f) - crf.gold(f, torch.tensor(tags, dtype=torch.long))
        loss.backward()
        opt.step()
    if epoch % 8 == 0:
        print(epoch, loss)
with torch.no_grad():
    print("after:", crf.viterbi(crf.feats(seq(ner[0][0], nw))))
print("einsum via torch.functional:", TF.einsum("ij,ij->i", crf.trans[:2], crf.trans[2:4]))
