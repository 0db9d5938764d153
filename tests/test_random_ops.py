"""Randomness against torch: the in-place fills, multinomial, normal/bernoulli/poisson, Generator objects,
generator=/device=/layout=/pin_memory= on every function torch takes them, the RNG state, fork_rng.

The numbers are NumPy's, not torch's (documented): what is compared with torch is everything else — dtypes,
shapes, supports, argument checks and their errors, autograd nodes; the distributions are checked by their
moments on large samples, and reproducibility by seeds and generators."""

import numpy as np
import pytest

import tapegrad
from pairs import cases, same

CASES = cases("""
# supports, dtypes, shapes
x = torch.empty(10000).uniform_() ;; (x.min().item() >= 0, x.max().item() < 1, x.dtype)
x = torch.empty(10000).uniform_(2, 5) ;; (x.min().item() >= 2, x.max().item() < 5)
x = torch.empty(10000, dtype=torch.float64).uniform_(-1, 1) ;; (x.dtype, x.abs().max().item() <= 1)
x = torch.empty(100, dtype=torch.float16).uniform_() ;; x.dtype
x = torch.empty(10000).bernoulli_(0.3) ;; (sorted(set(x.tolist())), x.dtype)
x = torch.empty(1000, dtype=torch.long).bernoulli_(0.3) ;; (sorted(set(x.tolist())), x.dtype)
x = torch.empty(1000, dtype=torch.bool).bernoulli_(0.3) ;; (sorted(set(x.tolist())), x.dtype)
x = torch.empty(1000).bernoulli_(torch.tensor(0.5)) ;; sorted(set(x.tolist()))
x = torch.empty(1000).bernoulli_(0) ;; x.sum().item()
x = torch.empty(1000).bernoulli_(1) ;; x.sum().item()
x = torch.empty(10000).exponential_() ;; x.min().item() >= 0
x = torch.empty(10000).random_(10) ;; (x.min().item(), x.max().item(), x.dtype)
x = torch.empty(10000).random_(3, 10) ;; (x.min().item(), x.max().item())
x = torch.empty(10000, dtype=torch.long).random_(3, 10) ;; (x.min().item(), x.max().item(), x.dtype)
x = torch.empty(10000, dtype=torch.uint8).random_() ;; (x.min().item(), x.max().item())
x = torch.empty(10000, dtype=torch.int8).random_() ;; (x.min().item(), x.max().item())
x = torch.empty(1000, dtype=torch.bool).random_() ;; (x.min().item(), x.max().item())
x = torch.empty(10000, dtype=torch.int16).random_(-5, 5) ;; (x.min().item(), x.max().item())
x = torch.empty(10000).random_(to=5) ;; (x.min().item(), x.max().item())
x = torch.empty(10000).random_(2, None) ;; (x.min().item() >= 2, x.max().item() <= 2**24, x.max().item() > 2**22)
x = torch.empty(10000).random_() ;; (x.min().item() >= 0, x.max().item() <= 2**24, x.max().item() > 2**22)
x = torch.empty(10000, dtype=torch.float16).random_() ;; (x.min().item() >= 0, x.max().item() <= 2048)
x = torch.empty(10000, dtype=torch.long).geometric_(0.5) ;; (x.min().item(), x.dtype)
x = torch.empty(10000).geometric_(0.25) ;; x.min().item()
x = torch.empty(10000, dtype=torch.int8).geometric_(0.9) ;; x.min().item()
x = torch.empty(10000).log_normal_() ;; x.min().item() > 0
x = torch.empty(3, 4) ;; (x.normal_().shape, x.uniform_().shape, x.cauchy_().shape, x.exponential_().shape)
x = torch.empty(3) ;; x.uniform_() is x
x = torch.empty(3); v = x._version; x.normal_() ;; x._version - v
x = torch.zeros(2, 3); x[0].uniform_(5, 6) ;; ((x[0] >= 5).all().item(), (x[1] == 0).all().item())
x = torch.zeros(4); x[::2].bernoulli_(1) ;; x
# argument checks: torch's errors
x = torch.empty(3, dtype=torch.long) ;; x.uniform_()
x = torch.empty(3, dtype=torch.bool) ;; x.uniform_()
x = torch.empty(3) ;; x.uniform_(5, 2)
x = torch.empty(3) ;; x.uniform_(5., 2.5)
x = torch.empty(3) ;; x.normal_(0, -1)
x = torch.empty(3) ;; x.normal_(0, -0.5)
x = torch.empty(3, dtype=torch.long) ;; x.normal_()
x = torch.empty(3) ;; x.bernoulli_(1.5)
x = torch.empty(3) ;; x.bernoulli_(-0.1)
x = torch.empty(3) ;; x.bernoulli_(torch.tensor([0.5, 2., 0.5]))
x = torch.empty(3) ;; x.exponential_(-1)
x = torch.empty(3) ;; x.exponential_(0)
x = torch.empty(3, dtype=torch.long) ;; x.exponential_()
x = torch.empty(3, dtype=torch.int8) ;; x.exponential_()
x = torch.empty(3) ;; x.random_(5, 2)
x = torch.empty(3) ;; x.random_(0)
x = torch.empty(3, dtype=torch.uint8) ;; x.random_(0, 300)
x = torch.empty(3, dtype=torch.int8) ;; x.random_(0, 200)
x = torch.empty(3, dtype=torch.int8) ;; x.random_(-300, 1)
x = torch.empty(3, dtype=torch.int16) ;; x.random_(0, 2**16)
x = torch.empty(3, dtype=torch.int32) ;; x.random_(0, 2**32)
x = torch.empty(3, dtype=torch.bool) ;; x.random_(3)
x = torch.empty(3, dtype=torch.uint8) ;; x.random_(-1, 5)
x = torch.empty(3) ;; x.cauchy_(0, -1)
x = torch.empty(3, dtype=torch.long) ;; x.cauchy_()
x = torch.empty(3, dtype=torch.bool) ;; x.cauchy_()
x = torch.empty(3) ;; x.log_normal_(0, -1)
x = torch.empty(3) ;; x.log_normal_(0, 0)
x = torch.empty(3, dtype=torch.long) ;; x.log_normal_()
x = torch.empty(3) ;; x.geometric_(0)
x = torch.empty(3) ;; x.geometric_(1)
x = torch.empty(3) ;; x.geometric_(1.5)
x = torch.empty(3, dtype=torch.bool) ;; x.geometric_(0.5)
# autograd: the nodes torch makes, zero gradients, the leaf error
x = torch.ones(3, requires_grad=True) ;; x.uniform_()
x = torch.ones(3, requires_grad=True) ;; (x * 1).uniform_().grad_fn.name()
x = torch.ones(3, requires_grad=True) ;; (x * 1).normal_().grad_fn.name()
x = torch.ones(3, requires_grad=True) ;; (x * 1).bernoulli_(0.5).grad_fn.name()
x = torch.ones(3, requires_grad=True) ;; (x * 1).bernoulli_(torch.full((3,), 0.5)).grad_fn.name()
x = torch.ones(3, requires_grad=True) ;; (x * 1).exponential_().grad_fn.name()
x = torch.ones(3, requires_grad=True) ;; (x * 1).random_().grad_fn.name()
x = torch.ones(3, requires_grad=True) ;; (x * 1).random_(5).grad_fn.name()
x = torch.ones(3, requires_grad=True) ;; (x * 1).random_(2, 5).grad_fn.name()
x = torch.ones(3, requires_grad=True) ;; (x * 1).cauchy_().grad_fn.name()
x = torch.ones(3, requires_grad=True) ;; (x * 1).log_normal_().grad_fn.name()
x = torch.ones(3, requires_grad=True) ;; (x * 1).geometric_(0.5).grad_fn.name()
x = torch.ones(3, requires_grad=True); y = (x * 2).normal_(); y.sum().backward() ;; x.grad
x = torch.ones(3, requires_grad=True) ;; torch.normal(x, 1.).grad_fn.name()
x = torch.ones(3, requires_grad=True) ;; torch.normal(0., x).grad_fn.name()
x = torch.ones(3, requires_grad=True) ;; torch.normal(x, x).grad_fn.name()
x = torch.ones(3, requires_grad=True); torch.normal(x, x).sum().backward() ;; x.grad
x = torch.ones(3, requires_grad=True) ;; torch.bernoulli(x * 0.5).grad_fn.name()
x = torch.ones(3, requires_grad=True) ;; torch.poisson(x).grad_fn.name()
x = torch.ones(3, requires_grad=True) ;; torch.multinomial(x, 1).requires_grad
torch.randn(2, requires_grad=True).requires_grad
torch.rand(2, requires_grad=True).is_leaf
# multinomial
torch.multinomial(torch.tensor([0., 1., 0.]), 2, replacement=True)
torch.multinomial(torch.tensor([0., 1., 0.]), 1)
torch.multinomial(torch.tensor([[0., 1.], [1., 0.]]), 1)
torch.multinomial(torch.tensor([1., 0., 1.]), 2).sort().values
torch.multinomial(torch.tensor([1., 1., 1.]), 3).sort().values
torch.multinomial(torch.tensor([0., 1., 0.]), 2)[0]
torch.multinomial(torch.tensor([1., 1.], dtype=torch.float64), 1).dtype
torch.multinomial(torch.ones(2, 5), 3).shape
torch.multinomial(torch.tensor([0.5, -1., 0.]), 1)
torch.multinomial(torch.tensor([0., 0.]), 1)
torch.multinomial(torch.tensor([[1., 1.], [0., 0.]]), 1)
torch.multinomial(torch.tensor([1., 1.]), 3)
torch.multinomial(torch.tensor([1., float('nan')]), 1)
torch.multinomial(torch.tensor([1., float('inf')]), 1)
torch.multinomial(torch.tensor([1, 1]), 1)
torch.multinomial(torch.tensor(1.), 1)
torch.multinomial(torch.ones(2, 2, 2), 1)
torch.multinomial(torch.tensor([1., 1.]), 0)
torch.multinomial(torch.tensor([1., 1.]), -1)
torch.ones(3).multinomial(2).shape
torch.multinomial(torch.empty(0, 3), 2)
torch.multinomial(torch.empty(0, 3), 2, True)
torch.multinomial(torch.empty(2, 0), 1, True)
torch.multinomial(torch.empty(2, 0), 2, True)
torch.multinomial(torch.tensor([[0., 0.], [1., float('nan')]]), 2, True)
torch.multinomial(torch.tensor([[1., float('nan')], [0., 0.]]), 2, True)
torch.multinomial(torch.tensor([[0., 0.], [1., -1.]]), 1, True)
torch.multinomial(torch.tensor([1., float('inf')]), 1, True)
torch.multinomial(torch.tensor([[1., 1.], [0., 0.]]), 1, True)
# normal, bernoulli, poisson
torch.normal(torch.zeros(2), torch.ones(2)).shape
torch.normal(torch.zeros(2, 1), torch.ones(3)).shape
torch.normal(0., 1., size=(2,)).dtype
torch.normal(0., 1., (2, 3)).shape
torch.normal(0, 1, (2,)).dtype
torch.normal(torch.zeros(2, dtype=torch.float64), 1.).dtype
torch.normal(0., torch.ones(2)).shape
torch.normal(torch.zeros(2), -1.)
torch.normal(torch.zeros(2), torch.tensor([1., -1.]))
torch.normal(torch.zeros(2), torch.ones(2), out=torch.empty(2)).shape
torch.normal(0., 1., (2,), dtype=torch.float64).dtype
torch.bernoulli(torch.tensor([0.5, 1.5]))
torch.bernoulli(torch.tensor([0., 1.]))
torch.bernoulli(torch.ones(3), 0.5).shape
torch.bernoulli(torch.ones(3, dtype=torch.float64)).dtype
torch.bernoulli(torch.ones(3, dtype=torch.long))
torch.ones(3).bernoulli().shape
torch.poisson(torch.ones(3) * 4).dtype
torch.poisson(torch.zeros(3))
torch.poisson(torch.tensor([-1.]))
torch.poisson(torch.ones(3, dtype=torch.float64)).dtype
# creation functions: dtypes, shapes, errors
torch.randint(5, (3,)).dtype
torch.randint(5, (3,), dtype=torch.float32).dtype
torch.randint(0, 5, size=(3,)).shape
torch.randint(high=5, size=(3,)).shape
torch.randint(5, size=(3,)).shape
torch.randint(5, size=[2, 2], dtype=torch.int32).dtype
torch.randint(2, high=5, size=(3,)).shape
torch.randint(5, size=torch.Size([2])).shape
torch.randint(2, 5)
torch.randint(5, size=3)
torch.randint(size=(3,))
torch.randint(5, 3, (3,))
torch.randint(3, 3, (3,))
torch.randperm(4, dtype=torch.float32).dtype
torch.randperm(5).sort().values
torch.randperm(0)
torch.rand(2, 3, dtype=torch.long)
torch.randn(2, dtype=torch.long)
torch.randn((2, 3)).shape
torch.rand(size=(2, 3)).shape
torch.randn(size=[4]).shape
torch.rand(2, out=torch.empty(5)).shape
torch.rand_like(torch.ones(2, dtype=torch.float64)).dtype
torch.randint_like(torch.ones(2), 5).dtype
torch.randint_like(torch.ones(2, dtype=torch.long), 1, 5).dtype
torch.rand(2, generator=3)
""")


@pytest.mark.parametrize("setup,expr", CASES, ids=[e for _, e in CASES])
def test_random_vs_torch(torch, setup, expr):
    # the TypeErrors of torch's overload parser (normal(2., 3.), generator=3) name its signatures: class only
    same(torch, setup, expr, words="generator=3" not in expr and expr != "torch.randint(size=(3,))")


GEN_CALLS = [
    "torch.rand(3, generator=g)", "torch.randn(3, generator=g)", "torch.randint(0, 5, (3,), generator=g)",
    "torch.randperm(5, generator=g)", "torch.rand_like(torch.ones(3), generator=g)",
    "torch.randn_like(torch.ones(3), generator=g)", "torch.randint_like(torch.ones(3), 5, generator=g)",
    "torch.normal(0., 1., (3,), generator=g)", "torch.normal(torch.zeros(3), 1., generator=g)",
    "torch.bernoulli(torch.ones(3) * 0.5, generator=g)", "torch.poisson(torch.ones(3), generator=g)",
    "torch.multinomial(torch.ones(3), 3, generator=g)", "torch.empty(3).uniform_(generator=g)",
    "torch.empty(3).normal_(generator=g)", "torch.empty(3).bernoulli_(0.5, generator=g)",
    "torch.empty(3).exponential_(generator=g)", "torch.empty(3).random_(generator=g)",
    "torch.empty(3).random_(7, generator=g)", "torch.empty(3).random_(2, 9, generator=g)",
    "torch.empty(3).cauchy_(generator=g)", "torch.empty(3).log_normal_(generator=g)",
    "torch.empty(3).geometric_(0.3, generator=g)",
    "torch.utils.data.random_split(range(10), [3, 7], generator=g)[0].indices",
    "list(torch.utils.data.RandomSampler(range(5), generator=g))",
    "list(torch.utils.data.SubsetRandomSampler(range(5), generator=g))",
    "list(torch.utils.data.WeightedRandomSampler([1., 2., 3.], 4, generator=g))",
    "[b.tolist() for b in torch.utils.data.DataLoader(range(6), batch_size=2, shuffle=True, generator=g)]",
]


@pytest.mark.parametrize("call", GEN_CALLS)
def test_generator_everywhere_torch_takes_one(torch, call):
    """Each call takes generator= (as torch does) and is reproducible by it, independently of the global one."""
    same(torch, "g = torch.Generator().manual_seed(1)", f"type({call}).__name__")

    def draw(global_seed):
        tapegrad.manual_seed(global_seed)
        g = tapegrad.Generator().manual_seed(5)
        out = eval(call, {"torch": tapegrad, "g": g})
        return out.tolist() if isinstance(out, tapegrad.Tensor) else out
    assert draw(0) == draw(1)            # the generator decides, not the global state


DEVICE_CALLS = {
    "zeros": "torch.zeros(2, **kw)", "ones": "torch.ones(2, **kw)", "empty": "torch.empty(2, **kw).shape",
    "full": "torch.full((2,), 1., **kw)", "rand": "torch.rand(2, **kw).shape", "randn": "torch.randn(2, **kw).shape",
    "randint": "torch.randint(3, (2,), **kw).shape", "randperm": "torch.randperm(3, **kw).sort().values",
    "arange": "torch.arange(3, **kw)", "linspace": "torch.linspace(0, 1, 3, **kw)",
    "logspace": "torch.logspace(0, 1, 3, **kw)", "eye": "torch.eye(2, **kw)", "zeros_like": "torch.zeros_like(t, **kw)",
    "ones_like": "torch.ones_like(t, **kw)", "empty_like": "torch.empty_like(t, **kw).shape",
    "full_like": "torch.full_like(t, 1., **kw)", "rand_like": "torch.rand_like(t, **kw).shape",
    "randn_like": "torch.randn_like(t, **kw).shape", "randint_like": "torch.randint_like(t, 3, **kw).shape",
    "tensor": "torch.tensor([1.], **kw)", "as_tensor": "torch.as_tensor([1.], **kw)",
    "scalar_tensor": "torch.scalar_tensor(1., **kw)", "normal": "torch.normal(0., 1., (2,), **kw).shape",
    "new_zeros": "t.new_zeros(2, **kw)", "new_ones": "t.new_ones(2, **kw)", "new_full": "t.new_full((2,), 1., **kw)",
    "new_empty": "t.new_empty(2, **kw).shape", "new_tensor": "t.new_tensor([1.], **kw)",
}
KWARGS = {"device": "'cpu'", "layout": "torch.strided", "pin_memory": "False", "requires_grad": "False"}


@pytest.mark.parametrize("name", sorted(DEVICE_CALLS))
@pytest.mark.parametrize("key", sorted(KWARGS))
def test_device_layout_pin_memory(torch, name, key):
    """device=/layout=/pin_memory=/requires_grad= are taken wherever torch takes them (CPU, strided only)."""
    ok = {}
    for m in (torch, tapegrad):
        env = {"torch": m, "t": m.ones(2), "kw": {key: eval(KWARGS[key], {"torch": m})}}
        try:
            eval(DEVICE_CALLS[name], env)
            ok[m] = True
        except TypeError:
            ok[m] = False
    if ok[torch]:
        assert ok[tapegrad], f"{name}({key}=...): torch takes it, tapegrad does not"
    same(torch, "t = torch.ones(2)", DEVICE_CALLS[name].replace("**kw", f"{key}={KWARGS[key]}")) if ok[torch] else None


def test_other_devices_and_layouts_are_refused_clearly():
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        tapegrad.zeros(2, device="cuda")
    with pytest.raises(RuntimeError, match="dense tensors only"):
        tapegrad.zeros(2, layout=tapegrad.sparse_coo)
    with pytest.raises(RuntimeError, match="CPU only"):
        tapegrad.Generator(device="cuda")
    assert tapegrad.ones(2).layout is tapegrad.strided and repr(tapegrad.strided) == "tapegrad.strided"


# --- distributions: moments of large samples (tolerances ~6 standard errors) ----------------------------------
N = 200_000


def _moments(x):
    a = np.asarray(x.tolist() if isinstance(x, tapegrad.Tensor) else x, np.float64)
    return a.mean(), a.var()


@pytest.mark.parametrize("fill,mean,var", [
    ("uniform_()", 0.5, 1 / 12), ("uniform_(-2, 4)", 1.0, 3.0), ("normal_()", 0.0, 1.0), ("normal_(3, 2)", 3.0, 4.0),
    ("normal_(mean=-1, std=0.5)", -1.0, 0.25), ("bernoulli_(0.3)", 0.3, 0.21), ("bernoulli_()", 0.5, 0.25),
    ("exponential_()", 1.0, 1.0), ("exponential_(4.0)", 0.25, 1 / 16), ("exponential_(lambd=0.5)", 2.0, 4.0),
    ("random_(10)", 4.5, 99 / 12), ("random_(3, 7)", 4.5, 15 / 12), ("geometric_(0.25)", 4.0, 12.0),
    ("geometric_(0.8)", 1.25, 0.3125),
])
def test_fill_moments(fill, mean, var):
    for dtype in (tapegrad.float32, tapegrad.float64):
        x = eval(f"t.{fill}", {"t": tapegrad.empty(N, dtype=dtype)})
        m, v = _moments(x)
        assert abs(m - mean) < 6 * np.sqrt(var / N), (fill, dtype, m)
        assert abs(v - var) < 0.05 * var, (fill, dtype, v)


def test_heavy_tailed_and_log_normal_fills():
    x = tapegrad.empty(N, dtype=tapegrad.float64).cauchy_(1.0, 2.0).numpy()
    assert abs(np.median(x) - 1.0) < 0.05 and abs(np.percentile(x, 75) - 3.0) < 0.1     # quartiles median ± sigma
    y = np.log(tapegrad.empty(N, dtype=tapegrad.float64).log_normal_(1.0, 0.5).numpy())
    assert abs(y.mean() - 1.0) < 0.01 and abs(y.std() - 0.5) < 0.01


def test_bernoulli_tensor_probabilities_broadcast():
    x = tapegrad.empty(2, N // 2).bernoulli_(tapegrad.tensor([[0.2], [0.8]]))
    m = x.mean(1).tolist()
    assert abs(m[0] - 0.2) < 0.01 and abs(m[1] - 0.8) < 0.01
    p = tapegrad.tensor([0.1, 0.5, 0.9]).expand(N, 3)
    assert np.allclose(tapegrad.bernoulli(p).mean(0).tolist(), [0.1, 0.5, 0.9], atol=0.01)


def test_normal_poisson_and_multinomial_distributions():
    s = tapegrad.normal(tapegrad.full((N,), 2.0), tapegrad.full((N,), 3.0))
    assert abs(s.mean().item() - 2.0) < 0.05 and abs(s.std().item() - 3.0) < 0.05
    p = tapegrad.poisson(tapegrad.full((N,), 4.0))
    assert abs(p.mean().item() - 4.0) < 0.05 and abs(p.var().item() - 4.0) < 0.1
    w = tapegrad.tensor([1.0, 2.0, 7.0])
    draws = tapegrad.multinomial(w, N, replacement=True).numpy()
    assert np.allclose(np.bincount(draws, minlength=3) / N, [0.1, 0.2, 0.7], atol=0.01)
    first = np.array([tapegrad.multinomial(w, 2).tolist() for _ in range(4000)])     # without replacement
    assert np.allclose(np.bincount(first[:, 0], minlength=3) / 4000, [0.1, 0.2, 0.7], atol=0.03)
    assert (first[:, 0] != first[:, 1]).all()
    rows = tapegrad.multinomial(tapegrad.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]), 5, True)
    assert rows.tolist() == [[0] * 5, [2] * 5]


# --- reproducibility: seeds, generators, states --------------------------------------------------------------
def _sample():
    x = tapegrad.empty(4)
    return [tapegrad.rand(3).tolist(), x.normal_().tolist(), x.uniform_(-1, 1).tolist(), x.random_(100).tolist(),
            tapegrad.multinomial(tapegrad.ones(5), 3).tolist(), tapegrad.randperm(6).tolist()]


def test_manual_seed_repeats_every_random_op():
    tapegrad.manual_seed(123)
    a = _sample()
    tapegrad.manual_seed(123)
    assert _sample() == a
    tapegrad.manual_seed(124)
    assert _sample() != a


def test_generator_objects(torch):
    g = tapegrad.Generator().manual_seed(3)
    assert g.initial_seed() == 3 and str(g.device) == "cpu"
    assert tapegrad.Generator(device="cpu").device == tapegrad.device("cpu")
    assert torch.Generator(device="cpu").device != "cpu" and tapegrad.Generator(device="cpu").device != "cpu"
    state = g.get_state()
    assert state.dtype is tapegrad.uint8 and state.dim() == 1
    a = tapegrad.rand(5, generator=g)
    g.set_state(state)
    assert tapegrad.equal(tapegrad.rand(5, generator=g), a)
    assert isinstance(g.seed(), int) and g.initial_seed() != 3
    same(torch, "g = torch.Generator()", "g.initial_seed()")
    same(torch, "", "torch.Generator().manual_seed(-1).initial_seed()")
    same(torch, "g = torch.Generator()", "g.set_state(torch.zeros(3))")
    same(torch, "g = torch.Generator()", "g.set_state(torch.zeros(3, dtype=torch.uint8))")
    same(torch, "g = torch.Generator()\ns = g.get_state()\ns[8:12] = 0", "g.set_state(s)")


def test_rng_state_and_fork_rng(torch):
    same(torch, "", "(torch.get_rng_state().dtype, torch.get_rng_state().dim())")
    state = tapegrad.get_rng_state()
    a = tapegrad.rand(3)
    tapegrad.set_rng_state(state)
    assert tapegrad.equal(tapegrad.rand(3), a)
    for setup in ("with torch.random.fork_rng():\n    torch.rand(5)",
                  "with torch.random.fork_rng(devices=[], enabled=True):\n    torch.rand(5)",
                  "with torch.random.fork_rng(enabled=False):\n    torch.rand(5)"):
        same(torch, f"torch.manual_seed(1)\n{setup}\na = torch.rand(2)\ntorch.manual_seed(1)\nb = torch.rand(2)",
             "torch.equal(a, b)")
    same(torch, "", "torch.random.manual_seed(3).initial_seed()")
    same(torch, "", "torch.random.initial_seed() == torch.initial_seed()")
    same(torch, "", "isinstance(torch.random.seed(), int)")
    assert tapegrad.random.default_generator is tapegrad.default_generator


def test_saved_rng_state_round_trips(tmp_path):
    tapegrad.manual_seed(7)
    tapegrad.save({"rng": tapegrad.get_rng_state()}, tmp_path / "s.pt")
    a = tapegrad.rand(4)
    tapegrad.set_rng_state(tapegrad.load(tmp_path / "s.pt")["rng"])
    assert tapegrad.equal(tapegrad.rand(4), a)
