# The loops of yunjey/pytorch-tutorial and karpathy/makemore, condensed: a Dataset of (image, label) tuples, `iter`
# and `next` on the loader (its iterator's len), a batch that collates to a list, an RNN classifier, an infinite
# loader over RandomSampler(replacement=True, num_samples=int(1e10)), a captioning collate_fn with padded captions
# packed for the loss. Weights and data from NumPy.
import numpy as np, torch, torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence
from torch.utils.data import DataLoader, Dataset, RandomSampler
rng = np.random.default_rng(7)
class Digits(Dataset):
    def __init__(self, n):
        self.x = rng.integers(0, 256, size=(n, 8, 8)).astype(np.uint8); self.y = rng.integers(0, 4, size=n).tolist()
    def __len__(self): return len(self.y)
    def __getitem__(self, i): return torch.from_numpy(self.x[i]).float().div(255), self.y[i]
class RNN(nn.Module):
    def __init__(self):
        super().__init__(); self.lstm = nn.LSTM(8, 12, 2, batch_first=True); self.fc = nn.Linear(12, 4)
    def forward(self, x):
        h0 = torch.zeros(2, x.size(0), 12); c0 = torch.zeros(2, x.size(0), 12)
        out, _ = self.lstm(x, (h0, c0)); return self.fc(out[:, -1, :])
model = RNN()
with torch.no_grad():
    for p in model.parameters(): p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)) * 0.3))
loader = DataLoader(Digits(24), batch_size=10)
data_iter = iter(loader)
images, labels = next(data_iter)
print(len(data_iter), type(next(iter(loader))).__name__ == "list", images.shape, labels.dtype == torch.int64)
opt = torch.optim.Adam(model.parameters(), lr=0.01); crit = nn.CrossEntropyLoss()
for epoch in range(2):
    for i, (images, labels) in enumerate(loader):
        loss = crit(model(images.reshape(-1, 8, 8)), labels)
        opt.zero_grad(); loss.backward(); opt.step()
        print("Epoch [{}/2], Step [{}/{}], Loss: {:.6f}".format(epoch + 1, i + 1, len(loader), loss.item()))
with torch.no_grad():
    correct = sum((model(x).argmax(1) == y).sum().item() for x, y in loader)
print("accuracy", 100 * correct / 24)
sampler = RandomSampler(Digits(5), replacement=True, num_samples=int(1e10))
batch = next(iter(DataLoader(Digits(5), sampler=sampler, batch_size=3)))
print(len(sampler), batch[0].shape, len(batch[1]), all(0 <= v < 4 for v in batch[1].tolist()))
def collate_fn(data):
    data.sort(key=lambda x: len(x[1]), reverse=True)
    images, captions = zip(*data)
    lengths = [len(cap) for cap in captions]
    targets = torch.zeros(len(captions), max(lengths)).long()
    for i, cap in enumerate(captions): targets[i, :lengths[i]] = cap[:lengths[i]]
    return torch.stack(images, 0), targets, lengths
caps = [(torch.ones(3), torch.Tensor(rng.integers(1, 9, size=k).tolist())) for k in (3, 6, 4)]
images, captions, lengths = DataLoader(caps, batch_size=3, collate_fn=collate_fn).__iter__().__next__()
emb = nn.Embedding(9, 5)
with torch.no_grad(): emb.weight.copy_(torch.from_numpy(rng.standard_normal((9, 5))))
packed = pack_padded_sequence(emb(captions), lengths, batch_first=True)
print(lengths, captions.tolist(), packed.batch_sizes.tolist(), packed.data.sum().item())
