"""Every torch code block of the course lessons (../shared/seeds) runs with ``import tapegrad as torch`` and
prints what real PyTorch prints (object addresses masked), plus the values the lessons' comments state."""

import contextlib
import io
import re
import warnings

import pytest

import tapegrad

# Seed 000 ("Autograd 自动微分"): the first PyTorch block, verbatim.
SEED0_GRAPH = """
import torch
a = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(-3.0, requires_grad=True)
c = torch.tensor(10.0, requires_grad=True)
L = a * b + c
print(L.grad_fn)            # 大致形如 <AddBackward0 object ...>
print(L.grad_fn.next_functions)  # 指向 MulBackward 和 c 的 AccumulateGrad（叶子梯度累加器）
print(a.is_leaf, L.is_leaf)      # True False
L.backward()
print(a.grad, b.grad, c.grad)    # 大致形如 tensor(-3.) tensor(2.) tensor(1.)
"""

# Seed 000: retain_graph (made runnable: the lesson's `loss` is any scalar with a graph that saved tensors).
SEED0_RETAIN = """
import torch
w = torch.tensor([1.0, 2.0], requires_grad=True)
loss = (w * w).sum()
loss.backward(retain_graph=True)   # 保留图，准备再反传一次
loss.backward()                    # 第二次（默认会顺手释放）
print(w.grad)
try:
    loss.backward()
except RuntimeError as e:
    print(str(e).split(" (or")[0])
"""

# Seed 001 §2.1-2.4, verbatim apart from the imports.
SEED1_MUL = """
import torch
a = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(5.0, requires_grad=False)
c = a * b
c.backward()
print(a.grad)   # tensor(5.0)
print(b.grad)   # None (未要求梯度)
print(c.grad)   # None (非叶子张量默认不保留梯度)
"""

SEED1_ACCUMULATE = """
import torch
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = (x ** 2).sum()
y.backward()
print(x.grad)   # [2., 4., 6.]

y2 = (x ** 2).sum()
y2.backward()
print(x.grad)   # [4., 8., 12.]  ← 累加了！

x.grad.zero_()   # 清零
(x ** 2).sum().backward()
print(x.grad)   # [2., 4., 6.]

with torch.no_grad():
    pred = x * 2          # pred.requires_grad == False
print(pred.requires_grad)

z = (x * 3).detach()     # z.requires_grad == False
print(z.requires_grad, z)
"""

# Seed 003: the bookkeeping-and-accountability example, verbatim.
SEED3 = """
import torch

# 1. 准备数据和参数 (原料)
# x 是输入数据，不需要梯度
x = torch.tensor(2.0)
# y_true 是真实标签
y_true = torch.tensor(5.0)

# w 和 b 是模型参数，需要计算梯度来优化它们
w = torch.tensor(1.0, requires_grad=True)
b = torch.tensor(1.0, requires_grad=True)

print(f"w.grad: {w.grad}") # -> None, 因为还没开始追责
print(f"b.grad: {b.grad}") # -> None

# 2. 前向传播 (烘焙蛋糕), 动态构建计算图
# y_pred = w * x + b
y_pred = w * x + b

# 打印 y_pred 的 grad_fn，可以看到它是由一个加法操作创建的
print(f"y_pred.grad_fn: {y_pred.grad_fn}") # -> <AddBackward0 object>

# 3. 计算损失 (评价蛋糕)
loss = (y_pred - y_true)**2
print(f"loss.grad_fn: {loss.grad_fn}") # -> <PowBackward0 object>

# 4. 反向传播 (开始追责)
loss.backward()

# 5. 查看梯度 (追责结果)
print(f"w.grad: {w.grad}") # -> tensor(-8.)
print(f"b.grad: {b.grad}") # -> tensor(-4.)

# x 不需要梯度，所以 x.grad 仍然是 None
print(f"x.grad: {x.grad}") # -> None

# 6. 使用梯度进行优化 (决定下次怎么做蛋糕)
with torch.no_grad(): # 在优化步骤中，我们不希望构建计算图
    w -= 0.01 * w.grad
    b -= 0.01 * b.grad

# 清空梯度，为下一次迭代做准备
w.grad.zero_()
b.grad.zero_()

print(f"Updated w: {w}")
print(f"Updated b: {b}")
"""

BLOCKS = {"seed0_graph": SEED0_GRAPH, "seed0_retain": SEED0_RETAIN, "seed1_mul": SEED1_MUL,
          "seed1_accumulate": SEED1_ACCUMULATE, "seed3_bookkeeping": SEED3}


def run_block(src, module):
    src = src.replace("import torch\n", "")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(src, "<seed>", "exec"), {"torch": module, "__name__": "__seed__"})
    return out.getvalue()


def normalise(text):
    text = re.sub(r" at 0x[0-9a-f]+", " at 0x?", text)
    text = text.replace("torch::autograd::AccumulateGrad", "AccumulateGrad")
    return text.replace("tapegrad.", "torch.")


@pytest.mark.parametrize("name", list(BLOCKS))
def test_seed_block_prints_what_torch_prints(torch, name):
    assert normalise(run_block(BLOCKS[name], tapegrad)) == normalise(run_block(BLOCKS[name], torch))


def test_seed_values_stated_in_the_lessons():
    out = run_block(SEED0_GRAPH, tapegrad)
    assert "tensor(-3.) tensor(2.) tensor(1.)" in out and "True False" in out
    assert "<AddBackward0 object at 0x" in out and "MulBackward0" in out and "AccumulateGrad" in out
    out = run_block(SEED1_ACCUMULATE, tapegrad).splitlines()
    assert out[:3] == ["tensor([2., 4., 6.])", "tensor([ 4.,  8., 12.])", "tensor([2., 4., 6.])"]
    out = run_block(SEED3, tapegrad)
    assert "w.grad: -8.0" in out and "b.grad: -4.0" in out and "x.grad: None" in out
    assert "Updated w: 1.0800000429153442" in out   # torch formats a 0-d tensor in an f-string as a number
    assert "tensor(5.)" in run_block(SEED1_MUL, tapegrad)
