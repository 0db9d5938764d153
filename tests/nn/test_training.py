"""Short training runs (manual SGD, float64) give torch's loss curve: modules, losses and autograd together."""

import numpy as np
import pytest

import tapegrad


def _cnn(nn):
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Dropout(0.0), nn.Flatten(), nn.Linear(4 * 4 * 4, 16), nn.GELU(), nn.LayerNorm(16),
                         nn.Linear(16, 3))


class _Seq:
    """An LSTM/attention classifier over token sequences (built for either library)."""

    @staticmethod
    def build(nn):
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(7, 8, padding_idx=0)
                self.lstm = nn.LSTM(8, 8, batch_first=True, bidirectional=True)
                self.enc = nn.TransformerEncoderLayer(16, 2, 16, dropout=0.0, batch_first=True)
                self.head = nn.Linear(16, 3)

            def forward(self, tokens):
                x, _ = self.lstm(self.emb(tokens))
                return self.head(self.enc(x).mean(1))
        return Net()


@pytest.mark.parametrize("kind", ["cnn", "seq"])
def test_sgd_loss_curve_matches_torch(torch, kind):
    rng = np.random.default_rng(0)
    if kind == "cnn":
        x = rng.standard_normal((8, 1, 8, 8))
        make = _cnn
    else:
        x = rng.integers(0, 7, (8, 5))
        make = _Seq.build
    y = rng.integers(0, 3, 8)
    curves = []
    state = {}
    for lib in (torch, tapegrad):
        lib.manual_seed(0)
        model = make(lib.nn).double()
        if lib is torch:
            state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
        else:
            model.load_state_dict(state)
        loss_fn = lib.nn.CrossEntropyLoss()
        xs, ys = lib.tensor(x), lib.tensor(y)
        losses = []
        for _ in range(15):
            model.zero_grad()
            loss = loss_fn(model(xs), ys)
            loss.backward()
            lib.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            with lib.no_grad():
                for p in model.parameters():
                    p -= 0.1 * p.grad
            losses.append(loss.item())
        curves.append(losses)
    np.testing.assert_allclose(curves[1], curves[0], rtol=1e-10)
    assert curves[0][-1] < curves[0][0]
