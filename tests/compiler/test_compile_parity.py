"""A user's script with ``torch.compile(model)`` runs unchanged on tapegrad (the parity runner puts tapegrad in
torch's place) and prints torch's numbers."""

from __future__ import annotations

import textwrap

from tapegrad import parity

SCRIPT = textwrap.dedent('''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
    with torch.no_grad():                       # the same weights in both runs (the generators differ)
        for i, p in enumerate(net.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) / 3)
    model = torch.compile(net, backend="aot_eager")
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.linspace(-1, 1, 48).reshape(8, 6)
    y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    for step in range(5):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.6f} grad {net[0].weight.grad.abs().sum().item():.6f}")
    model.eval()
    with torch.no_grad():
        print("eval", model(x).sum().item())
''')


def test_compiled_model_script_agrees_with_torch(tmp_path, torch):
    script = tmp_path / "compiled_mlp.py"
    script.write_text(SCRIPT)
    r = parity.run(str(script), [], timeout=600, warm=True)
    assert r.torch_available and r.agree, r.report()
    assert r.numbers_compared >= 15
