"""The compile and performance recipes in one script: torch.compile on a function, on a module and on the
repeated blocks of a model (regional compilation, first call wrapped in fresh_inductor_cache), a branch on data
that compiled code must follow, a training step compiled whole, the profiler with record_function and a
schedule, and torch.utils.benchmark's Timer (only what does not depend on the clock is printed)."""

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule
from torch.utils.benchmark import Timer

torch.manual_seed(3)


def wave(x, y):
    return torch.sin(x) * torch.cos(y) + 0.5 * x


compiled_wave = torch.compile(wave)
x, y = torch.randn(4, 5), torch.randn(4, 5)
print("function", compiled_wave(x, y))
print("same as eager", torch.allclose(compiled_wave(x, y), wave(x, y)))


def flip_if_negative(a, b):
    if a.sum() < 0:
        return -b
    return b * 2


compiled_flip = torch.compile(flip_if_negative)
for sign in (1, -1):
    print("branch", sign, compiled_flip(sign * x.abs(), y).sum())


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.up = nn.Linear(width, 2 * width)
        self.down = nn.Linear(2 * width, width)

    def forward(self, h):
        return h + self.down(torch.sigmoid(self.up(h)))


class Stack(nn.Module):
    def __init__(self, width, depth, regional):
        super().__init__()
        self.embed = nn.Linear(3, width)
        blocks = [Block(width) for _ in range(depth)]
        self.blocks = nn.ModuleList([torch.compile(b) for b in blocks] if regional else blocks)

    def forward(self, inp):
        h = self.embed(inp)
        for block in self.blocks:
            h = block(h)
        return h.mean(dim=1)


torch.manual_seed(0)
whole = torch.compile(Stack(6, 4, regional=False))
torch.manual_seed(0)
regional = Stack(6, 4, regional=True)
inp = torch.randn(5, 3)
torch.compiler.reset()
with torch._inductor.utils.fresh_inductor_cache():
    print("whole model", whole(inp))
    print("regional", regional(inp))
print("compiled block keeps its weights", list(regional.state_dict())[2])

# a whole training step compiled
model = Stack(6, 2, regional=False)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
target = torch.randn(5)


def train_step(batch):
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.mse_loss(model(batch), target)
    loss.backward()
    opt.step()
    return loss


step = torch.compile(train_step)
for i in range(3):
    print("step", i, step(inp).item())

# the profiler: labelled regions and a wait/warmup/active schedule
plan = schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=1)
print("actions", [str(plan(i)).split(".")[-1] for i in range(7)])
ready = []
with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=2),
             on_trace_ready=lambda p: ready.append(p.step_num)) as prof:
    for i in range(5):
        with record_function("forward_pass"):
            out = model(inp)
        prof.step()
print("trace ready at steps", ready, "last output", out.sum())
with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    with record_function("inference"):
        model(inp)
names = {e.key for e in prof.key_averages()}
print("labelled region recorded", "inference" in names, [e.count for e in prof.key_averages() if e.key ==
                                                          "inference"])

# Timer: statement, setup and the measurement's bookkeeping
m = Timer("a * b", setup="a = torch.ones(64); b = torch.ones(1)", globals={"torch": torch}).timeit(20)
print("timer", m.stmt, m.number_per_run, len(m.times), m.task_spec.num_threads)
