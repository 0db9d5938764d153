"""PyTorch's "Build the Neural Network" + "Optimizing Model Parameters" tutorials, as a plain PyTorch script.

It is written for real PyTorch (``import torch``); check that tapegrad gives the same loss curve with

    python -m tapegrad.parity examples/pytorch_tutorial_mlp.py

Two changes from the tutorial so that both frameworks start from the same numbers: the FashionMNIST download is
replaced by a synthetic 28x28 "fashion" set drawn with NumPy (ten class templates plus noise), and the weights are
initialised from a NumPy generator instead of torch's random stream (torch and tapegrad draw different numbers).
"""

import argparse

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser(description="PyTorch's \"Build the Neural Network\" and \"Optimizing Model "
                                             "Parameters\" tutorials as a plain PyTorch script, on synthetic "
                                             "FashionMNIST-like data.")
parser.add_argument("--fast", action="store_true", help="A small run of a few seconds, as the test suite makes.")
parser.add_argument("--epochs", type=int, default=None, help="Training epochs (default: 10, or 2 with --fast).")
opts = parser.parse_args()


# --- data: a synthetic FashionMNIST stand-in, the same numbers for both frameworks -------------------------------
class SyntheticFashion(Dataset):
    """Ten classes of 28x28 greyscale images: a fixed random template per class, shifted and noised per image."""

    def __init__(self, n, seed):
        rng = np.random.default_rng(1234)
        templates = (rng.random((10, 28, 28)) > 0.6).astype(np.float32)
        rng = np.random.default_rng(seed)
        self.labels = rng.integers(0, 10, n)
        noise = rng.normal(0.0, 0.9, (n, 28, 28)).astype(np.float32)
        self.images = np.clip(templates[self.labels] + noise, 0.0, 1.0).astype(np.float32)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        image = torch.from_numpy(self.images[idx][None])      # (1, 28, 28), as ToTensor() gives
        return image, int(self.labels[idx])


n_train, n_test = (640, 256) if opts.fast else (6000, 1000)
training_data = SyntheticFashion(n_train, seed=0)
test_data = SyntheticFashion(n_test, seed=1)


# --- Build the Neural Network ------------------------------------------------------------------------------------
class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28 * 28, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork()
print(model)

# the same starting point in both frameworks: torch's default (kaiming-uniform) bounds, NumPy's numbers
rng = np.random.default_rng(0)
with torch.no_grad():
    for name, param in model.named_parameters():
        fan_in = param.shape[1] if param.dim() > 1 else model.state_dict()[name.replace("bias", "weight")].shape[1]
        bound = 1.0 / np.sqrt(fan_in)
        param.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(param.shape)).astype(np.float32)))

X = torch.from_numpy(training_data.images[:3][:, None])
logits = model(X)
pred_probab = nn.Softmax(dim=1)(logits)
y_pred = pred_probab.argmax(1)
print(f"Predicted class: {y_pred}")
for name, param in model.named_parameters():
    print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2].flatten()[:4]} \n")

# --- Optimizing Model Parameters ---------------------------------------------------------------------------------
learning_rate = 1e-3
batch_size = 64
epochs = opts.epochs or (2 if opts.fast else 10)

train_dataloader = DataLoader(training_data, batch_size=batch_size)
test_dataloader = DataLoader(test_data, batch_size=batch_size)


def train_loop(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    # Set the model to training mode - important for batch normalization and dropout layers
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        # Compute prediction and loss
        pred = model(X)
        loss = loss_fn(pred, y)

        # Backpropagation
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        if batch % 5 == 0:
            loss, current = loss.item(), batch * batch_size + len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test_loop(dataloader, model, loss_fn):
    # Set the model to evaluation mode - important for batch normalization and dropout layers
    model.eval()
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    test_loss, correct = 0, 0

    # Evaluating the model with torch.no_grad() ensures that no gradients are computed during test mode
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()

    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")


loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)

for t in range(epochs):
    print(f"Epoch {t+1}\n-------------------------------")
    train_loop(train_dataloader, model, loss_fn, optimizer)
    test_loop(test_dataloader, model, loss_fn)
print("Done!")
