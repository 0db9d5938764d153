import numpy as np, torch, torch.nn as nn, torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import Dataset, DataLoader
rng = np.random.default_rng(4)
seqs = [torch.from_numpy(rng.standard_normal((n, 5)).astype(np.float32)) for n in (7, 3, 5, 6, 2, 4)]
labels = torch.tensor([0, 1, 0, 1, 1, 0])
class DS(Dataset):
    def __len__(s): return len(seqs)
    def __getitem__(s, i): return seqs[i], labels[i]
def collate(batch):
    xs, ys = zip(*batch)
    lens = torch.tensor([len(x) for x in xs])
    return pad_sequence(xs, batch_first=True), lens, torch.stack(ys)
dl = DataLoader(DS(), batch_size=3, shuffle=False, collate_fn=collate)
class M(nn.Module):
    def __init__(s):
        super().__init__()
        s.gru = nn.GRU(5, 8, num_layers=2, batch_first=True, bidirectional=True)
        s.lstm = nn.LSTM(16, 6, batch_first=True)
        s.fc = nn.Linear(6, 2)
    def forward(s, x, lens):
        p = pack_padded_sequence(x, lens, batch_first=True, enforce_sorted=False)
        o, h = s.gru(p)
        o, _ = pad_packed_sequence(o, batch_first=True)
        o2, (h2, c2) = s.lstm(o)
        return s.fc(h2[-1]), o.shape
m = M()
with torch.no_grad():
    for p in m.parameters(): p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.2))
opt = torch.optim.RMSprop(m.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
for ep in range(3):
    for x, lens, y in dl:
        out, shp = m(x, lens)
        loss = F.cross_entropy(out, y)
        opt.zero_grad(); loss.backward(); opt.step()
        print(ep, tuple(shp), f"{loss.item():.5f}")
    sched.step()
cell = nn.LSTMCell(5, 4); h = torch.zeros(1, 4); c = torch.zeros(1, 4)
with torch.no_grad():
    for p in cell.parameters(): p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.2))
for t in range(3): h, c = cell(seqs[0][t:t+1], (h, c))
print(h)
