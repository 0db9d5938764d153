"""Lecture-notebook surface of a character MLP, condensed: a generator-seeded init, batch norm written out step by
step, every intermediate kept with retain_grad() and its gradient derived by hand (one_hot of the max, scatter_,
keepdim sums, Bessel's n - 1), the fused cross-entropy and batch-norm backward formulas, a no_grad training loop
that applies the hand gradients through .data, histogram(density=True)/histc activation statistics, a batch-norm
calibration pass, and multinomial sampling from its own generator."""
import torch
import torch.nn.functional as F

torch.manual_seed(7)
letters = "abdeiklmnorstu"
stoi = {c: i + 1 for i, c in enumerate(letters)}
stoi["."] = 0
itos = {i: c for c, i in stoi.items()}
V, ctx_len, n_emb, n_hid = len(stoi), 3, 6, 32

g = torch.Generator().manual_seed(2024)
words = ["".join(letters[int(j)] for j in torch.randint(0, len(letters), (int(k),), generator=g))
         for k in torch.randint(3, 7, (150,), generator=g)]
xs, ys = [], []
for w in words:
    ctx = [0] * ctx_len
    for ch in w + ".":
        xs.append(ctx)
        ys.append(stoi[ch])
        ctx = ctx[1:] + [stoi[ch]]
X, Y = torch.tensor(xs), torch.tensor(ys)
print("examples", X.shape, Y.shape, "targets sum", Y.sum().item())

C = torch.randn((V, n_emb), generator=g)
W1 = torch.randn((ctx_len * n_emb, n_hid), generator=g) * (5 / 3) / (ctx_len * n_emb) ** 0.5
b1 = torch.randn(n_hid, generator=g) * 0.1
W2 = torch.randn((n_hid, V), generator=g) * 0.1
b2 = torch.randn(V, generator=g) * 0.1
gain = torch.randn((1, n_hid)) * 0.1 + 1.0
shift = torch.randn((1, n_hid)) * 0.1
params = [C, W1, b1, W2, b2, gain, shift]
for p in params:
    p.requires_grad = True
print("parameters", sum(p.nelement() for p in params))


def check(name, mine, t):
    close = torch.allclose(mine, t.grad, rtol=1e-4, atol=1e-6)
    print(f"{name:10s} shape {tuple(mine.shape)} close {close} small {(mine - t.grad).abs().max().item() < 1e-5}")


n = 24
ix = torch.randint(0, X.shape[0], (n,), generator=g)
xb, yb = X[ix], Y[ix]
emb = C[xb]
embcat = emb.view(n, -1)
pre = embcat @ W1 + b1
mean = pre.sum(0, keepdim=True) / n
diff = pre - mean
var = (diff ** 2).sum(0, keepdim=True) / (n - 1)
inv = (var + 1e-5) ** -0.5
raw = diff * inv
hpre = gain * raw + shift
h = torch.tanh(hpre)
logits = h @ W2 + b2
maxes = logits.max(1, keepdim=True).values
counts = (logits - maxes).exp()
denom_inv = counts.sum(1, keepdim=True) ** -1
probs = counts * denom_inv
logp = probs.log()
loss = -logp[range(n), yb].mean()
for t in [logp, probs, counts, denom_inv, maxes, logits, h, hpre, raw, inv, var, diff, mean, pre, embcat, emb]:
    t.retain_grad()
loss.backward()
print("loss", round(loss.item(), 5), "fused", round(F.cross_entropy(logits, yb).item(), 5))

dlogp = torch.zeros_like(logp)
dlogp[range(n), yb] = -1.0 / n
dprobs = dlogp / probs
ddenom_inv = (dprobs * counts).sum(1, keepdim=True)
dcounts = dprobs * denom_inv - counts.sum(1, keepdim=True) ** -2 * ddenom_inv
dnorm = dcounts * counts
dmaxes = -dnorm.sum(1, keepdim=True)
pick = torch.zeros_like(logits).scatter_(1, logits.argmax(1, keepdim=True), 1.0)
dlogits = dnorm + dmaxes * F.one_hot(logits.max(1).indices, num_classes=V)
dh = dlogits @ W2.T
dW2, db2 = h.T @ dlogits, dlogits.sum(0)
dhpre = (1.0 - h ** 2) * dh
dgain, dshift = (raw * dhpre).sum(0, keepdim=True), dhpre.sum(0, keepdim=True)
draw = gain * dhpre
dinv = (diff * draw).sum(0, keepdim=True)
dvar = -0.5 * (var + 1e-5) ** -1.5 * dinv
ddiff = draw * inv + 2 * diff * torch.ones_like(diff) * dvar / (n - 1)
dmean = -ddiff.sum(0, keepdim=True)
dpre = ddiff + dmean / n
dembcat = dpre @ W1.T
dW1, db1 = embcat.T @ dpre, dpre.sum(0)
demb = dembcat.view(emb.shape)
dC = torch.zeros_like(C)
dC.index_add_(0, xb.view(-1), demb.view(-1, n_emb))
print("one-hot equals scatter_", torch.equal(pick, F.one_hot(logits.argmax(1), V).float()))
for name, mine, t in [("logp", dlogp, logp), ("probs", dprobs, probs), ("denom_inv", ddenom_inv, denom_inv),
                      ("counts", dcounts, counts), ("maxes", dmaxes, maxes), ("logits", dlogits, logits),
                      ("h", dh, h), ("W2", dW2, W2), ("b2", db2, b2), ("hpre", dhpre, hpre), ("gain", dgain, gain),
                      ("shift", dshift, shift), ("raw", draw, raw), ("inv", dinv, inv), ("var", dvar, var),
                      ("diff", ddiff, diff), ("mean", dmean, mean), ("pre", dpre, pre), ("W1", dW1, W1),
                      ("b1", db1, b1), ("emb", demb, emb), ("C", dC, C)]:
    check(name, mine, t)

# one-line backward formulas
dlog2 = F.softmax(logits, 1)
dlog2[range(n), yb] -= 1
dlog2 /= n
check("xent", dlog2, logits)
dpre2 = gain * inv / n * (n * dhpre - dhpre.sum(0) - n / (n - 1) * raw * (dhpre * raw).sum(0))
check("bn", dpre2, pre)
fast = gain * (pre - pre.mean(0, keepdim=True)) / torch.sqrt(pre.var(0, keepdim=True, unbiased=True) + 1e-5) + shift
print("bn forward agrees", torch.allclose(fast, hpre, atol=1e-6))

# train with the hand-written backward only
lossi = []
with torch.no_grad():
    for step in range(60):
        ix = torch.randint(0, X.shape[0], (n,), generator=g)
        xb, yb = X[ix], Y[ix]
        emb = C[xb]
        embcat = emb.view(n, -1)
        pre = embcat @ W1 + b1
        bm, bv = pre.mean(0, keepdim=True), pre.var(0, keepdim=True, unbiased=True)
        inv = (bv + 1e-5) ** -0.5
        raw = (pre - bm) * inv
        h = torch.tanh(gain * raw + shift)
        logits = h @ W2 + b2
        loss = F.cross_entropy(logits, yb)
        dlogits = F.softmax(logits, 1)
        dlogits[range(n), yb] -= 1
        dlogits /= n
        dh = dlogits @ W2.T
        dhpre = (1.0 - h ** 2) * dh
        dpre = gain * inv / n * (n * dhpre - dhpre.sum(0) - n / (n - 1) * raw * (dhpre * raw).sum(0))
        dC = torch.zeros_like(C)
        dC.index_add_(0, xb.view(-1), (dpre @ W1.T).view(-1, n_emb))
        grads = [dC, embcat.T @ dpre, dpre.sum(0), h.T @ dlogits, dlogits.sum(0),
                 (raw * dhpre).sum(0, keepdim=True), dhpre.sum(0, keepdim=True)]
        lr = 0.2 if step < 40 else 0.05
        for p, gr in zip(params, grads):
            p.data += -lr * gr
        lossi.append(loss.log10().item())
        if step % 15 == 0:
            print(f"{step:3d} loss {loss.item():.4f}")
print("mean log10 loss", round(sum(lossi[-10:]) / 10, 4))

with torch.no_grad():
    pre = C[X].view(X.shape[0], -1) @ W1 + b1
    bnmean, bnvar = pre.mean(0, keepdim=True), pre.var(0, keepdim=True)
    hall = torch.tanh(gain * (pre - bnmean) * (bnvar + 1e-5) ** -0.5 + shift)
    hist, edges = torch.histogram(hall, density=True)
    print("hist bins", hist.shape[0], "edges", round(edges[0].item(), 4), round(edges[-1].item(), 4))
    print("saturated %", round(((hall.abs() > 0.97).float().mean() * 100).item(), 3))
    print("histc", hall.abs().histc(5, 0, 1).tolist())
    print("full loss", round(F.cross_entropy(hall @ W2 + b2, Y).item(), 4))

gs = torch.Generator().manual_seed(99)
for _ in range(4):
    out, ctx = [], [0] * ctx_len
    while True:
        with torch.no_grad():
            e = C[torch.tensor([ctx])].view(1, -1)
            hh = torch.tanh(gain * (e @ W1 + b1 - bnmean) * (bnvar + 1e-5) ** -0.5 + shift)
            pr = F.softmax(hh @ W2 + b2, dim=1)
        nxt = torch.multinomial(pr, num_samples=1, generator=gs).item()
        ctx = ctx[1:] + [nxt]
        out.append(nxt)
        if nxt == 0 or len(out) > 12:
            break
    print("sample", "".join(itos[i] for i in out), len(out))
