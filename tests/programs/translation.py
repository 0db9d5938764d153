# pytorch/examples language_translation: src/model.py's Translator (nn.Transformer, sinusoidal positions, a bool
# src mask with a float causal tgt mask and bool padding masks), src/data.py's masks, main.py's train/validate
# steps and greedy_decode (encode once, decode step by step); synthetic token batches instead of Multi30k
import math, warnings, numpy as np, torch
from torch import nn
warnings.filterwarnings("ignore")     # (both warn about the mixed mask types and nested tensors)
class PositionalEncoding(nn.Module):
    def __init__(self, emb_size, dropout, maxlen=64):
        super(PositionalEncoding, self).__init__()
        den = torch.exp(- torch.arange(0, emb_size, 2)* math.log(10000) / emb_size)
        pos = torch.arange(0, maxlen).reshape(maxlen, 1)
        pos_embedding = torch.zeros((maxlen, emb_size))
        pos_embedding[:, 0::2] = torch.sin(pos * den)
        pos_embedding[:, 1::2] = torch.cos(pos * den)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer('pos_embedding', pos_embedding.unsqueeze(-2))
    def forward(self, token_embedding):
        return self.dropout(token_embedding + self.pos_embedding[:token_embedding.size(0), :])
class Translator(nn.Module):
    def __init__(self, layers, embed_size, num_heads, src_vocab_size, tgt_vocab_size, dim_feedforward, dropout):
        super(Translator, self).__init__()
        self.src_embedding = nn.Embedding(src_vocab_size, embed_size)
        self.tgt_embedding = nn.Embedding(tgt_vocab_size, embed_size)
        self.pos_enc = PositionalEncoding(embed_size, dropout)
        self.transformer = nn.Transformer(d_model=embed_size, nhead=num_heads, num_encoder_layers=layers,
                                          num_decoder_layers=layers, dim_feedforward=dim_feedforward, dropout=dropout)
        self.ff = nn.Linear(embed_size, tgt_vocab_size)
    def forward(self, src, trg, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask, memory_key_padding_mask):
        outs = self.transformer(self.pos_enc(self.src_embedding(src)), self.pos_enc(self.tgt_embedding(trg)), src_mask,
                                tgt_mask, None, src_padding_mask, tgt_padding_mask, memory_key_padding_mask)
        return self.ff(outs)
    def encode(self, src, src_mask):
        return self.transformer.encoder(self.pos_enc(self.src_embedding(src)), src_mask)
    def decode(self, tgt, memory, tgt_mask):
        return self.transformer.decoder(self.pos_enc(self.tgt_embedding(tgt)), memory, tgt_mask)
def generate_square_subsequent_mask(size):
    mask = (torch.triu(torch.ones((size, size))) == 1).transpose(0, 1)
    return mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))
def create_mask(src, tgt, pad_idx):
    tgt_mask = generate_square_subsequent_mask(tgt.shape[0])
    src_mask = torch.zeros((src.shape[0], src.shape[0])).type(torch.bool)
    return src_mask, tgt_mask, (src == pad_idx).transpose(0, 1), (tgt == pad_idx).transpose(0, 1)
def greedy_decode(model, src, src_mask, max_len, start_symbol, end_symbol):
    memory = model.encode(src, src_mask)
    ys = torch.ones(1, 1).fill_(start_symbol).type(torch.long)
    for _ in range(max_len-1):
        tgt_mask = (generate_square_subsequent_mask(ys.size(0)).type(torch.bool))
        out = model.decode(ys, memory, tgt_mask).transpose(0, 1)
        prob = model.ff(out[:, -1])
        _, next_word = torch.max(prob, dim=1)
        next_word = next_word.item()
        ys = torch.cat([ys, torch.ones(1, 1).type_as(src.data).fill_(next_word)], dim=0)
        if next_word == end_symbol:
            break
    return ys
rng = np.random.default_rng(24)
def batch(n, slen=7, tlen=8, vocab=16):
    src, tgt = np.full((slen, n), 1), np.full((tlen, n), 1)
    for j in range(n):
        a, b = rng.integers(3, slen - 1), rng.integers(3, tlen - 1)
        src[0, j] = tgt[0, j] = 2
        src[1:a, j] = rng.integers(4, vocab, a - 1); tgt[1:b, j] = rng.integers(4, vocab, b - 1)
        src[a, j] = tgt[b, j] = 3
    return torch.from_numpy(src), torch.from_numpy(tgt)
model = Translator(1, 16, 2, 16, 16, 32, 0.0)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
loss_fn = torch.nn.CrossEntropyLoss(ignore_index=1)
optim = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
train_dl, valid_dl = [batch(4) for _ in range(2)], [batch(3)]
for epoch in range(3):
    model.train()
    for src, tgt in train_dl:
        tgt_input = tgt[:-1, :]
        src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input, 1)
        logits = model(src, tgt_input, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask, src_padding_mask)
        optim.zero_grad()
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt[1:, :].reshape(-1))
        loss.backward()
        optim.step()
    model.eval()
    with torch.no_grad():
        src, tgt = valid_dl[0]
        src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt[:-1, :], 1)
        logits = model(src, tgt[:-1, :], src_mask, tgt_mask, src_padding_mask, tgt_padding_mask, src_padding_mask)
        val = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt[1:, :].reshape(-1))
    print(f"Epoch: {epoch} Train loss: {loss.item():.5f} Val loss: {val.item():.5f}", logits[0, 0, :3])
src = train_dl[0][0][:, :1]
with torch.no_grad():
    print(greedy_decode(model, src, torch.zeros(7, 7).type(torch.bool), 10, 2, 3).flatten().tolist())
