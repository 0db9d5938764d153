"""A full training checkpoint (model, optimizer, scheduler, RNG, step) resumes bit for bit:
10 steps + save + load + 10 steps == 20 steps."""

import numpy as np

import tapegrad as torch
from tapegrad import nn
from tapegrad.utils.data import DataLoader, TensorDataset


def make():
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 3))


def data():
    rng = np.random.default_rng(0)
    return TensorDataset(torch.tensor(rng.standard_normal((80, 6)).astype(np.float32)),
                         torch.tensor(rng.integers(0, 3, 80)))


def batches(loader):
    while True:
        yield from loader


def run(model, opt, sched, stream, steps):
    for _ in range(steps):
        x, y = next(stream)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        sched.step()


def test_resume_is_bit_for_bit(tmp_path):
    torch.manual_seed(0)
    model = make()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=20)
    stream = batches(DataLoader(data(), batch_size=8, shuffle=True))
    run(model, opt, sched, stream, 20)
    reference = {k: v.numpy().tobytes() for k, v in model.state_dict().items()}

    torch.manual_seed(0)
    model = make()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=20)
    stream = batches(DataLoader(data(), batch_size=8, shuffle=True))
    run(model, opt, sched, stream, 10)
    path = tmp_path / "ckpt.pt"
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                "rng": torch.get_rng_state(), "step": 10}, path)
    del model, opt, sched

    ckpt = torch.load(path)
    model = make()
    model.load_state_dict(ckpt["model"])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    opt.load_state_dict(ckpt["optimizer"])
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=20)
    sched.load_state_dict(ckpt["scheduler"])
    torch.set_rng_state(ckpt["rng"])
    assert ckpt["step"] == 10
    # a fresh process would make a fresh loader: 80 samples / batch 8 = one epoch per 10 steps, and the restored
    # RNG gives the next epoch the same shuffle (and dropout the same masks) as the uninterrupted run
    stream = batches(DataLoader(data(), batch_size=8, shuffle=True))
    run(model, opt, sched, stream, 10)
    resumed = {k: v.numpy().tobytes() for k, v in model.state_dict().items()}
    assert resumed == reference


def test_load_state_dict_from_real_torch(torch):
    real = torch
    import tapegrad as torch
    real.manual_seed(0)
    theirs = real.nn.Sequential(real.nn.Linear(4, 5), real.nn.BatchNorm1d(5), real.nn.Linear(5, 2))
    theirs.train()
    theirs(real.randn(8, 4))
    theirs.eval()
    ours = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.BatchNorm1d(5), torch.nn.Linear(5, 2)).eval()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(ours(torch.tensor(x)).detach().numpy(), theirs(real.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
