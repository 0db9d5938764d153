# pytorch/examples legacy/snli: the Bottle/Linear mixin (a Linear that folds (T, B, D) into (T*B, D)), a
# bidirectional LSTM encoder with explicit (h0, c0), the 4-layer classifier, train.py's loop (accuracy, Adam,
# CrossEntropy, eval under no_grad), and the whole model pickled and loaded back; synthetic batches instead of SNLI
import io, types, numpy as np, torch, torch.nn as nn, torch.optim as O
class Bottle(nn.Module):
    def forward(self, input):
        if len(input.size()) <= 2:
            return super(Bottle, self).forward(input)
        size = input.size()[:2]
        out = super(Bottle, self).forward(input.view(size[0]*size[1], -1))
        return out.view(size[0], size[1], -1)
class Linear(Bottle, nn.Linear):
    pass
class Encoder(nn.Module):
    def __init__(self, config):
        super(Encoder, self).__init__()
        self.config = config
        input_size = config.d_proj if config.projection else config.d_embed
        dropout = 0 if config.n_layers == 1 else config.dp_ratio
        self.rnn = nn.LSTM(input_size=input_size, hidden_size=config.d_hidden,
                        num_layers=config.n_layers, dropout=dropout,
                        bidirectional=config.birnn)
    def forward(self, inputs):
        batch_size = inputs.size()[1]
        state_shape = self.config.n_cells, batch_size, self.config.d_hidden
        h0 = c0 = inputs.new_zeros(state_shape)
        outputs, (ht, ct) = self.rnn(inputs, (h0, c0))
        return ht[-1] if not self.config.birnn else ht[-2:].transpose(0, 1).contiguous().view(batch_size, -1)
class SNLIClassifier(nn.Module):
    def __init__(self, config):
        super(SNLIClassifier, self).__init__()
        self.config = config
        self.embed = nn.Embedding(config.n_embed, config.d_embed)
        self.projection = Linear(config.d_embed, config.d_proj)
        self.encoder = Encoder(config)
        self.dropout = nn.Dropout(p=config.dp_ratio)
        self.relu = nn.ReLU()
        seq_in_size = 2*config.d_hidden
        if self.config.birnn:
            seq_in_size *= 2
        lin_config = [seq_in_size]*2
        self.out = nn.Sequential(Linear(*lin_config), self.relu, self.dropout, Linear(*lin_config), self.relu,
                                 self.dropout, Linear(seq_in_size, config.d_out))
    def forward(self, batch):
        prem_embed = self.embed(batch.premise)
        hypo_embed = self.embed(batch.hypothesis)
        if self.config.fix_emb:
            prem_embed = prem_embed.detach()
            hypo_embed = hypo_embed.detach()
        if self.config.projection:
            prem_embed = self.relu(self.projection(prem_embed))
            hypo_embed = self.relu(self.projection(hypo_embed))
        premise = self.encoder(prem_embed)
        hypothesis = self.encoder(hypo_embed)
        return self.out(torch.cat([premise, hypothesis], 1))
rng = np.random.default_rng(22)
def batch(n):
    return types.SimpleNamespace(premise=torch.from_numpy(rng.integers(0, 30, (7, n))), batch_size=n,
                                 hypothesis=torch.from_numpy(rng.integers(0, 30, (5, n))),
                                 label=torch.from_numpy(rng.integers(0, 3, n)))
train_iter, dev_iter = [batch(8) for _ in range(3)], [batch(5) for _ in range(2)]
config = types.SimpleNamespace(d_embed=16, d_proj=12, d_hidden=10, n_layers=1, dp_ratio=0.0, birnn=True,
                               projection=True, fix_emb=False, n_embed=30, d_out=3, n_cells=2)
model = SNLIClassifier(config)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
criterion = nn.CrossEntropyLoss()
opt = O.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    n_correct, n_total = 0, 0
    for batch_idx, b in enumerate(train_iter):
        model.train(); opt.zero_grad()
        answer = model(b)
        n_correct += (torch.max(answer, 1)[1].view(b.label.size()) == b.label).sum().item()
        n_total += b.batch_size
        loss = criterion(answer, b.label)
        loss.backward(); opt.step()
    model.eval()
    n_dev_correct, dev_loss = 0, 0
    with torch.no_grad():
        for dev_batch in dev_iter:
            answer = model(dev_batch)
            n_dev_correct += (torch.max(answer, 1)[1].view(dev_batch.label.size()) == dev_batch.label).sum().item()
            dev_loss = criterion(answer, dev_batch.label)
    print('{:>5.0f} {:>8.6f} {:8.6f} {:12.4f} {:12.4f}'.format(epoch, loss.item(), dev_loss.item(),
                                                                100. * n_correct / n_total, 10. * n_dev_correct))
buf = io.BytesIO()
torch.save(model, buf)
buf.seek(0)
model2 = torch.load(buf, weights_only=False)
with torch.no_grad():
    print(model2(train_iter[0])[:2], model2(train_iter[0]).sub(model(train_iter[0])).abs().max().item())
