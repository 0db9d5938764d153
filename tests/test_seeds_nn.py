"""The remaining torch code blocks of lesson 000 ("Autograd 自动微分"), verbatim: the training-loop triple,
the no_grad / detach / freezing block, and the two ``total_loss`` loops. Each runs with ``import tapegrad as torch``
against the minimal objects the lesson assumes (a model with a ``.backbone``, a DataLoader, an MSE criterion, an
optimizer ...), built from the same NumPy numbers for both frameworks, and prints what real torch prints (numbers to
1e-5, the text around them exactly). The leaking loop keeps every iteration's graph alive (the accumulated total's
``grad_fn`` chain grows with the iterations); the ``.item()`` loop keeps none."""

import contextlib
import gc
import io
import textwrap
import warnings
import weakref

import pytest

import tapegrad
from tapegrad import parity

# --- the lesson's blocks, verbatim -----------------------------------------------------------------------------
TRIPLE = """
# 训练循环里的标准三连（第6课会完整讲）
optimizer.zero_grad()   # 清空所有参数的 .grad（否则累加）
loss.backward()         # 反向：把梯度累加进 .grad
optimizer.step()        # 用 .grad 更新参数
"""

NO_GRAD_DETACH_FREEZE = """
# 1) 推理省显存：整块不建图
with torch.no_grad():
    preds = model(x_val)            # 不会保存中间激活

# 2) detach 切断图：y_target 不参与梯度
loss = mse(pred, target.detach())

# 3) 冻结骨干，只训分类头
for p in model.backbone.parameters():
    p.requires_grad = False        # 这些参数 .grad 永远是 None
"""

LEAKING_TOTAL = """
# 错误：total 拖着 N 张计算图，显存爆炸
total_loss = 0
for x, y in loader:
    loss = criterion(model(x), y)
    total_loss += loss              # loss 带 grad_fn，整张图被挂住
"""

ITEM_TOTAL = """
# 正确：要记录就取标量值（三连顺序与上一节一致：先清零）
total_loss = 0.0
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()                 # 这一步才需要图
    optimizer.step()
    total_loss += loss.item()       # 只取数值，图可被释放
"""

# --- the objects the blocks assume (the same NumPy numbers for torch and tapegrad) -----------------------------
SETUP = """
import numpy as np
nn = torch.nn
from_np = lambda a: torch.from_numpy(np.asarray(a, dtype=np.float32))

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 4), nn.ReLU())
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(self.backbone(x))

rng = np.random.default_rng(0)
model = Net()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(from_np(rng.uniform(-0.6, 0.6, tuple(p.shape))))
X, Y = from_np(rng.normal(size=(N_SAMPLES, 3))), from_np(rng.normal(size=(N_SAMPLES, 1)))
x_val = from_np(rng.normal(size=(3, 3)))
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y), batch_size=2)
criterion = mse = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

outputs = []                      # weak references to every forward's output: alive = its graph is kept
model.register_forward_hook(lambda module, inputs, out: outputs.append(weakref.ref(out)))
def alive():
    gc.collect()
    return sum(r() is not None for r in outputs)

def graph_nodes(fn, name):
    # how many nodes called `name` are reachable from `fn`
    seen, stack, count = set(), [fn], 0
    while stack:
        f = stack.pop()
        if f is None or id(f) in seen:
            continue
        seen.add(id(f))
        count += type(f).__name__ == name
        stack.extend(g for g, _ in f.next_functions)
    return count

def add_chain(total):
    # the length of the AddBackward0 chain behind the accumulated total
    depth, fn = 0, total.grad_fn
    while fn is not None and type(fn).__name__ == "AddBackward0":
        depth, fn = depth + 1, fn.next_functions[0][0]
    return depth
"""


def run(module, *parts, n_samples=8):
    """Run SETUP then `parts` with `torch` bound to `module`; returns (stdout, namespace)."""
    ns = {"torch": module, "__name__": "__seed__", "gc": gc, "weakref": weakref, "N_SAMPLES": n_samples}
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for code in (SETUP, *parts):
            exec(compile(textwrap.dedent(code), "<seed>", "exec"), ns)
    return out.getvalue(), ns


def assert_prints_like_torch(torch, *parts, **kw):
    ours, ns = run(tapegrad, *parts, **kw)
    theirs, _ = run(torch, *parts, **kw)
    div, n, lines, _ = parity.compare(parity.RunOutput("torch", theirs, "", 0),
                                      parity.RunOutput("tapegrad", ours, "", 0), rtol=1e-5, compare_text=True)
    assert div is None, f"{div.message}\n torch   : {div.torch_line}\n tapegrad: {div.tapegrad_line}"
    assert n > 0 and ours.count("\n") == theirs.count("\n")
    return ours, ns


def test_seed_blocks_are_verbatim():
    """The blocks above are the lesson's text. The lessons are not part of the repository: TAPEGRAD_LESSONS names
    the folder that holds them (000_*.txt); the project's workplace keeps them next to the checkout."""
    import glob
    import os
    folder = os.environ.get("TAPEGRAD_LESSONS") or os.path.join(os.path.dirname(__file__), "..", "..", "shared",
                                                                "seeds")
    seeds = glob.glob(os.path.join(folder, "000_*.txt"))
    if not seeds:
        pytest.skip("the course's lesson texts are not part of the repository: set TAPEGRAD_LESSONS to their folder "
                    "to check these blocks against them")
    text = open(seeds[0], encoding="utf-8").read()
    for block in (TRIPLE, NO_GRAD_DETACH_FREEZE, LEAKING_TOTAL, ITEM_TOTAL):
        assert block.strip() in text


# --- the training-loop triple ----------------------------------------------------------------------------------
BEFORE_TRIPLE = """
model(X).sum().backward()              # stale gradients: zero_grad must clear them
loss = criterion(model(X), Y)
fresh = torch.autograd.grad(criterion(model(X), Y), list(model.parameters()))
before = [p.detach().clone() for p in model.parameters()]
"""
AFTER_TRIPLE = """
print("loss", loss)
for (name, p), g in zip(model.named_parameters(), fresh):
    print(name, "grad", p.grad)
    print(name, "grad is the fresh one:", torch.allclose(p.grad, g))
for (name, p), b in zip(model.named_parameters(), before):
    print(name, "moved to", p.data, "step = -lr * grad:", torch.allclose(p.detach(), b - 0.1 * p.grad))
print("loss after the step", criterion(model(X), Y))
"""


def test_training_loop_triple_prints_like_torch(torch):
    out, _ = assert_prints_like_torch(torch, BEFORE_TRIPLE, TRIPLE, AFTER_TRIPLE)
    assert out.count("grad is the fresh one: True") == 6            # zero_grad cleared the stale sums
    assert out.count("step = -lr * grad: True") == 6                 # first momentum step is plain SGD
    first = float(out.split("loss tensor(")[1].split(",")[0])
    after = float(out.split("loss after the step tensor(")[1].split(",")[0])
    assert after < first


# --- no_grad, detach, freezing ---------------------------------------------------------------------------------
BEFORE_FREEZE = """
scale = torch.tensor(1.5, requires_grad=True)
pred = model(X)                     # built while the backbone still learns
target = Y * scale                  # a target with a graph of its own
"""
AFTER_FREEZE = """
print("preds", preds.requires_grad, preds.grad_fn, preds.is_leaf)
print("loss", loss, loss.grad_fn)
print("target.detach():", target.detach().requires_grad, target.detach().grad_fn, target.requires_grad)
loss.backward()
print("scale.grad after backward:", scale.grad)
# `pred`'s graph was recorded before the freeze: its backward still reaches the backbone (as in torch)
print("backbone grads from the earlier graph:", [p.grad for p in model.backbone.parameters()][1])
print("frozen:", [(n, p.requires_grad) for n, p in model.named_parameters()])

model.zero_grad(set_to_none=True)
frozen_before = [p.detach().clone() for p in model.backbone.parameters()]
head_before = [p.detach().clone() for p in model.head.parameters()]
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad()
    step_loss = mse(model(X), Y)
    step_loss.backward()
    opt.step()
print("backbone grads:", [p.grad for p in model.backbone.parameters()])
print("head grads:", [p.grad for p in model.head.parameters()])
print("backbone unchanged:", all(torch.equal(a, b) for a, b in zip(frozen_before, model.backbone.parameters())))
print("head changed:", not all(torch.equal(a, b) for a, b in zip(head_before, model.head.parameters())))
print("features need no graph:", model.backbone(x_val).requires_grad, model(x_val).requires_grad)
print("loss now", step_loss)
"""


def test_no_grad_detach_freeze_prints_like_torch(torch):
    out, ns = assert_prints_like_torch(torch, BEFORE_FREEZE, NO_GRAD_DETACH_FREEZE, AFTER_FREEZE)
    assert "preds False None True" in out
    assert "scale.grad after backward: None" in out                  # detach cut the target's graph
    assert "backbone grads from the earlier graph: None" in out       # frozen leaves take no gradient, even late
    assert "backbone grads: [None, None, None, None]" in out
    assert "backbone unchanged: True" in out and "head changed: True" in out
    assert "features need no graph: False True" in out
    assert all(not p.requires_grad for p in ns["model"].backbone.parameters())
    assert all(p.requires_grad for p in ns["model"].head.parameters())


# --- total_loss: the leak and the fix --------------------------------------------------------------------------
AFTER_LEAK = """
print("total_loss", total_loss)
print("add chain", add_chain(total_loss), "batches", len(loader))
print("MseLossBackward0 nodes kept", graph_nodes(total_loss.grad_fn, "MseLossBackward0"))
print("forward outputs alive", alive(), "of", len(outputs))
"""
AFTER_ITEM = """
print("total_loss", total_loss, type(total_loss).__name__)
print("forward outputs alive", alive(), "of", len(outputs))
print("last loss", loss)
"""


@pytest.mark.parametrize("n_samples", [4, 8, 16])
def test_leaking_total_keeps_every_graph(torch, n_samples):
    out, ns = assert_prints_like_torch(torch, LEAKING_TOTAL, AFTER_LEAK, n_samples=n_samples)
    batches = n_samples // 2
    assert f"add chain {batches} batches {batches}" in out          # grows with the iterations
    assert f"MseLossBackward0 nodes kept {batches}" in out
    assert f"forward outputs alive {batches} of {batches}" in out   # every iteration's activations still held
    assert "grad_fn=<AddBackward0>" in out.splitlines()[0]
    # and the whole chain is still differentiable: its gradient is the sum of the per-batch gradients
    total = ns["total_loss"]
    total.backward()
    assert all(p.grad is not None for p in ns["model"].parameters())


@pytest.mark.parametrize("n_samples", [4, 16])
def test_item_total_keeps_no_graph(torch, n_samples):
    out, ns = assert_prints_like_torch(torch, ITEM_TOTAL, AFTER_ITEM, n_samples=n_samples)
    assert isinstance(ns["total_loss"], float) and " float" in out.splitlines()[0]
    assert f"forward outputs alive 0 of {n_samples // 2}" in out      # every graph was released
    # the last loss still names its graph, but backward already freed what it saved
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        ns["loss"].backward()
    _, theirs = run(torch, ITEM_TOTAL, n_samples=n_samples)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        theirs["loss"].backward()
