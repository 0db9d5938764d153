# LLM-from-scratch and RNN language-model idioms: a GPT whose attention keeps its causal mask and a KV cache as
# buffers (register_buffer(None, persistent=False)), grouped-query attention with repeat_interleave and rotary
# embeddings, greedy generation with and without the cache, LoRA layers swapped in through named_children/setattr
# with the base weights frozen, a classification head fine-tuned on the last token; then an LSTM language model
# trained by truncated backpropagation through time (hidden states detached between windows) with locked dropout,
# embedding dropout, weight-dropped recurrent weights and activation regularisation, and a char GRU sampled from
# exp(logits / temperature). Seeded with torch.manual_seed alone.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CFG = {"vocab_size": 50, "context_length": 24, "emb_dim": 16, "n_heads": 4, "n_kv_groups": 2, "n_layers": 2,
       "drop_rate": 0.0, "qkv_bias": False}


def rope_params(head_dim, theta_base=10_000, context_length=64):
    inv_freq = 1.0 / (theta_base ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim))
    angles = torch.arange(context_length)[:, None] * inv_freq[None, :]
    angles = torch.cat([angles, angles], dim=1)
    return torch.cos(angles), torch.sin(angles)


def apply_rope(x, cos, sin, offset=0):
    _, _, seq_len, head_dim = x.shape
    x1, x2 = x[..., : head_dim // 2], x[..., head_dim // 2:]
    cos = cos[offset:offset + seq_len, :].unsqueeze(0).unsqueeze(0)
    sin = sin[offset:offset + seq_len, :].unsqueeze(0).unsqueeze(0)
    rotated = torch.cat((-x2, x1), dim=-1)
    return (x * cos + rotated * sin).to(dtype=x.dtype)


class GQA(nn.Module):
    def __init__(self, d_in, d_out, num_heads, num_kv_groups, context_length):
        super().__init__()
        self.num_heads, self.num_kv_groups = num_heads, num_kv_groups
        self.head_dim = d_out // num_heads
        self.group_size = num_heads // num_kv_groups
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=False)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=False)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1),
                             persistent=False)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)
        self.ptr = 0

    def forward(self, x, cos, sin, use_cache=False):
        b, n, _ = x.shape
        q = self.W_query(x).view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(b, n, self.num_kv_groups, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(b, n, self.num_kv_groups, self.head_dim).transpose(1, 2)
        offset = self.ptr if use_cache else 0
        q, k = apply_rope(q, cos, sin, offset), apply_rope(k, cos, sin, offset)
        if use_cache:
            if self.cache_k is None:
                self.cache_k, self.cache_v = k, v
            else:
                self.cache_k = torch.cat([self.cache_k, k], dim=2)
                self.cache_v = torch.cat([self.cache_v, v], dim=2)
            k, v = self.cache_k, self.cache_v
            self.ptr += n
        k = k.repeat_interleave(self.group_size, dim=1)
        v = v.repeat_interleave(self.group_size, dim=1)
        scores = q @ k.transpose(2, 3)
        n_k = k.shape[2]
        mask_bool = self.mask.bool()[offset:offset + n, :n_k]
        scores.masked_fill_(mask_bool, -torch.inf)
        w = torch.softmax(scores / self.head_dim ** 0.5, dim=-1)
        ctx = (w @ v).transpose(1, 2).reshape(b, n, -1)
        return self.out_proj(ctx)

    def reset_cache(self):
        self.cache_k, self.cache_v, self.ptr = None, None, 0


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["emb_dim"]
        self.att = GQA(d, d, cfg["n_heads"], cfg["n_kv_groups"], cfg["context_length"])
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))
        self.norm1, self.norm2 = nn.RMSNorm(d, eps=1e-6), nn.RMSNorm(d, eps=1e-6)

    def forward(self, x, cos, sin, use_cache):
        x = x + self.att(self.norm1(x), cos, sin, use_cache)
        return x + self.ff(self.norm2(x))


class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok_emb = nn.Embedding(cfg["vocab_size"], cfg["emb_dim"])
        self.trf_blocks = nn.ModuleList([Block(cfg) for _ in range(cfg["n_layers"])])
        self.final_norm = nn.RMSNorm(cfg["emb_dim"], eps=1e-6)
        self.out_head = nn.Linear(cfg["emb_dim"], cfg["vocab_size"], bias=False)
        cos, sin = rope_params(cfg["emb_dim"] // cfg["n_heads"], context_length=cfg["context_length"])
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, idx, use_cache=False):
        x = self.tok_emb(idx)
        for blk in self.trf_blocks:
            x = blk(x, self.cos, self.sin, use_cache)
        return self.out_head(self.final_norm(x))

    def reset_kv_cache(self):
        for blk in self.trf_blocks:
            blk.att.reset_cache()


def generate(model, idx, max_new_tokens, use_cache=True):
    model.eval()
    with torch.no_grad():
        if use_cache:
            model.reset_kv_cache()
            logits = model(idx, use_cache=True)
            for _ in range(max_new_tokens):
                next_idx = logits[:, -1].argmax(dim=-1, keepdim=True)
                idx = torch.cat([idx, next_idx], dim=1)
                logits = model(next_idx, use_cache=True)
        else:
            for _ in range(max_new_tokens):
                next_idx = model(idx[:, -CFG["context_length"]:])[:, -1].argmax(dim=-1, keepdim=True)
                idx = torch.cat([idx, next_idx], dim=1)
    return idx


torch.manual_seed(123)
gpt = GPT(CFG)
batch = torch.randint(0, CFG["vocab_size"], (4, 9))
opt = torch.optim.AdamW(gpt.parameters(), lr=4e-3, weight_decay=0.1)
for step in range(3):
    gpt.train()
    logits = gpt(batch[:, :-1])
    loss = F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("gpt", step, round(loss.item(), 5), round(math.exp(loss.item()), 4))
a, b = generate(gpt, batch[:2, :4], 8), generate(gpt, batch[:2, :4], 8, use_cache=False)
print(a[:, 4:].tolist(), torch.equal(a, b), gpt.trf_blocks[0].att.cache_k.shape, sorted(gpt.state_dict())[:3])


class LoRALayer(nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        self.A = nn.Parameter(torch.empty(in_dim, rank))
        nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha, self.rank = alpha, rank

    def forward(self, x):
        return (self.alpha / self.rank) * (x @ self.A @ self.B)


class LinearWithLoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)

    def forward(self, x):
        return self.linear(x) + self.lora(x)


def replace_linear_with_lora(model, rank, alpha):
    for name, module in model.named_children():
        if isinstance(module, nn.Linear):
            setattr(model, name, LinearWithLoRA(module, rank, alpha))
        else:
            replace_linear_with_lora(module, rank, alpha)


gpt.out_head = nn.Linear(CFG["emb_dim"], 2)
for p in gpt.parameters():
    p.requires_grad = False
replace_linear_with_lora(gpt, rank=4, alpha=8)
print("trainable", sum(p.numel() for p in gpt.parameters() if p.requires_grad), type(gpt.out_head).__name__)
labels = torch.tensor([0, 1, 1, 0])
opt = torch.optim.AdamW([p for p in gpt.parameters() if p.requires_grad], lr=1e-2, weight_decay=0.1)
for step in range(3):
    gpt.train()
    logits = gpt(batch)[:, -1, :]
    loss = F.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    acc = (torch.argmax(logits, dim=-1) == labels).float().mean().item()
    print("lora", step, round(loss.item(), 5), acc, round(gpt.out_head.lora.B.abs().sum().item(), 6))


class LockedDropout(nn.Module):
    def forward(self, x, dropout=0.5):
        if not self.training or not dropout:
            return x
        m = x.data.new(1, x.size(1), x.size(2)).bernoulli_(1 - dropout)
        mask = m.requires_grad_(False) / (1 - dropout)
        return mask.expand_as(x) * x


def embedded_dropout(embed, words, dropout=0.1):
    mask = embed.weight.data.new().resize_((embed.weight.size(0), 1)).bernoulli_(1 - dropout).expand_as(
        embed.weight) / (1 - dropout)
    return F.embedding(words, mask * embed.weight, embed.padding_idx, embed.max_norm, embed.norm_type,
                       embed.scale_grad_by_freq, embed.sparse)


class WeightDropLSTM(nn.Module):
    """An LSTM whose recurrent weight is dropped out afresh at each call (the raw weight is the parameter)."""

    def __init__(self, n_in, n_hid, p):
        super().__init__()
        self.lstm = nn.LSTM(n_in, n_hid)
        self.p = p
        w = self.lstm.weight_hh_l0
        del self.lstm._parameters["weight_hh_l0"]
        self.weight_hh_raw = nn.Parameter(w.data)

    def forward(self, x, h):
        w = F.dropout(self.weight_hh_raw, p=self.p, training=self.training)
        params = {n: p for n, p in self.lstm.named_parameters()}
        params["weight_hh_l0"] = w
        return torch.func.functional_call(self.lstm, params, (x, h))


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp=8, nhid=10):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = WeightDropLSTM(ninp, nhid, 0.3)
        self.lockdrop = LockedDropout()
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid

    def forward(self, inp, hidden):
        emb = embedded_dropout(self.encoder, inp, dropout=0.1 if self.training else 0)
        emb = self.lockdrop(emb, 0.2)
        raw, hidden = self.rnn(emb, hidden)
        out = self.lockdrop(raw, 0.2)
        return self.decoder(out), hidden, raw, out

    def init_hidden(self, bsz):
        w = next(self.parameters())
        return (w.new_zeros(1, bsz, self.nhid), w.new_zeros(1, bsz, self.nhid))


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data.narrow(0, 0, nbatch * bsz).view(bsz, -1).t().contiguous()


corpus = torch.randint(0, 20, (170,))
train = batchify(corpus, 4)
lm = RNNModel(20)
sgd = torch.optim.SGD(lm.parameters(), lr=5.0, weight_decay=1.2e-6)
hidden = lm.init_hidden(4)
lm.train()
total = 0.0
for i in range(0, train.size(0) - 1, 10):
    seq_len = min(10, train.size(0) - 1 - i)
    data, targets = train[i:i + seq_len], train[i + 1:i + 1 + seq_len].view(-1)
    hidden = repackage_hidden(hidden)
    sgd.zero_grad()
    output, hidden, raw, dropped = lm(data, hidden)
    raw_loss = F.cross_entropy(output.view(-1, 20), targets)
    loss = raw_loss + 2 * dropped.pow(2).mean() + 1 * (raw[1:] - raw[:-1]).pow(2).mean()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(lm.parameters(), 0.25)
    sgd.step()
    total += raw_loss.item()
    print("bptt", i, round(raw_loss.item(), 5), hidden[0].requires_grad, hidden[0].grad_fn is not None)
print("ppl", round(math.exp(total / len(range(0, train.size(0) - 1, 10))), 4))


class CharRNN(nn.Module):
    def __init__(self, n, hidden=12):
        super().__init__()
        self.encoder = nn.Embedding(n, hidden)
        self.rnn = nn.GRU(hidden, hidden, 2)
        self.decoder = nn.Linear(hidden, n)
        self.hidden_size = hidden

    def forward(self, inp, hidden):
        output, hidden = self.rnn(self.encoder(inp).view(1, inp.size(0), -1), hidden)
        return self.decoder(output.view(inp.size(0), -1)), hidden

    def init_hidden(self, bsz):
        return torch.zeros(2, bsz, self.hidden_size)


chars = "abcdefgh "
char_rnn = CharRNN(len(chars))
adam = torch.optim.Adam(char_rnn.parameters(), lr=0.01)
inp = torch.randint(0, len(chars), (3, 8))
target = torch.randint(0, len(chars), (3, 8))
for epoch in range(2):
    hidden = char_rnn.init_hidden(3)
    char_rnn.zero_grad()
    loss = 0
    for c in range(8):
        output, hidden = char_rnn(inp[:, c], hidden)
        loss += nn.CrossEntropyLoss()(output.view(3, -1), target[:, c])
    loss.backward()
    adam.step()
    print("char", epoch, round(loss.item() / 8, 5))
hidden = char_rnn.init_hidden(1)
x, text = torch.tensor([0]), "a"
for _ in range(10):
    output, hidden = char_rnn(x, hidden)
    top_i = torch.multinomial(output.data.view(-1).div(0.8).exp(), 1)[0]
    text += chars[top_i]
    x = torch.tensor([chars.index(chars[top_i])])
print(text)
