# pytorch/examples super_resolution: the sub-pixel CNN (PixelShuffle), Adam on MSE, PSNR, the whole model saved and
# loaded back with torch.serialization.safe_globals, as super_resolve.py does; synthetic images instead of BSDS300
import io, numpy as np, torch, torch.nn as nn, torch.optim as optim
from math import log10
from torch.utils.data import DataLoader, TensorDataset
class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(16, 16, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(16, 8, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(8, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        return self.pixel_shuffle(self.conv4(x))
rng = np.random.default_rng(21)
def images(n, f=2, size=12):
    target = rng.random((n, 1, size, size), dtype=np.float32)
    inp = target.reshape(n, 1, size // f, f, size // f, f).mean((3, 5))
    return TensorDataset(torch.from_numpy(np.ascontiguousarray(inp)), torch.from_numpy(target))
model = Net(upscale_factor=2)
with torch.no_grad():
    for p in model.parameters():   # (orthogonal_ draws from the generator: seeded from NumPy instead)
        p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.2))
train_loader = DataLoader(images(8), batch_size=4, shuffle=False)
test_loader = DataLoader(images(4), batch_size=2)
criterion = nn.MSELoss()
optimizer = optim.Adam(model.parameters(), lr=0.01)
for epoch in range(1, 3):
    epoch_loss = 0
    for iteration, (input, target) in enumerate(train_loader, 1):
        optimizer.zero_grad()
        loss = criterion(model(input), target)
        epoch_loss += loss.item()
        loss.backward()
        optimizer.step()
        print("===> Epoch[{}]({}/{}): Loss: {:.6f}".format(epoch, iteration, len(train_loader), loss.item()))
    avg_psnr = 0
    with torch.no_grad():
        for input, target in test_loader:
            avg_psnr += 10 * log10(1 / criterion(model(input), target).item())
    print("===> Epoch {} Avg. Loss: {:.6f} Avg. PSNR: {:.5f} dB".format(epoch, epoch_loss / 2, avg_psnr / 2))
buf = io.BytesIO()
torch.save(model, buf)
buf.seek(0)
with torch.serialization.safe_globals([Net, nn.modules.activation.ReLU, nn.modules.conv.Conv2d,
                                       nn.modules.pixelshuffle.PixelShuffle]):
    loaded = torch.load(buf)
y = torch.from_numpy(rng.random((1, 1, 5, 7), dtype=np.float32))
out = loaded(y).detach()
img = (out[0].numpy() * 255.0).clip(0, 255)
print(tuple(out.shape), np.uint8(img[0]).sum(), round(float(img.mean()), 3), type(loaded).__name__)
