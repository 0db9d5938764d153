import torch, torch.nn as nn
torch.set_printoptions(precision=3)
print(torch.tensor([1e-5, 1.0, 1e5]), torch.tensor([[1, 2], [3, 4]]), torch.tensor([True, False]))
print(torch.arange(2000).reshape(40, 50).float())
print(torch.tensor([1.5 + 2j, -1j]), torch.tensor(3.14159), torch.zeros(2, 0), torch.tensor([float("nan"), float("inf")]))
torch.set_printoptions(sci_mode=False, precision=4); print(torch.tensor([1e-5, 123456.789]))
torch.set_printoptions(profile="default")
class Block(nn.Module):
    def __init__(s, n):
        super().__init__(); s.lin = nn.Linear(n, n); s.act = nn.GELU(approximate="tanh"); s.n = n
    def extra_repr(s): return f"n={s.n}"
    def forward(s, x): return s.act(s.lin(x))
m = nn.Sequential(Block(4), nn.LayerNorm(4), nn.ModuleList([nn.Identity(), nn.Dropout(0.1)]), nn.Conv2d(3, 8, (3, 5), stride=2, padding=(1, 2), bias=False), nn.LSTM(4, 8, 2, dropout=0.2), nn.MultiheadAttention(8, 2), nn.Embedding(10, 3, max_norm=1.0), nn.BatchNorm1d(4, momentum=None))
print(m)
print([n for n, _ in m.named_children()], list(m.state_dict().keys())[:6])
x = torch.ones(2, 3, requires_grad=True); y = (x * 2).sum()
print(y, y.grad_fn, y.grad_fn.next_functions, x.dtype, x.shape, x.size(1), x.ndim, x.is_leaf)
print(torch.nn.Parameter(torch.zeros(2)), torch.Size([2, 3]), torch.float16, torch.device("cpu"))
print(torch.randn(3).new_tensor([1, 2]).dtype, torch.tensor([1, 2]).float().mean())
