"""Module bookkeeping vs torch: registration, traversal, state dicts, hooks, freezing, conversions, containers,
printing and error messages."""

import numpy as np
import pytest

import tapegrad
from tapegrad import nn
from nn.module_script import run


def test_module_script_prints_what_torch_prints(torch):
    """The same script (nested model with every container, buffers, hooks, state dicts, errors) prints the same
    lines under torch and tapegrad (``torch.`` reads ``tapegrad.``)."""
    expected = run(torch).replace("torch.", "tapegrad.").replace("torch Tensor", "tapegrad Tensor").splitlines()
    got = run(tapegrad).splitlines()
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g == e


def test_load_state_dict_messages(torch):
    for sd in [{}, {"weight": np.zeros((3, 2)), "bias": np.zeros(3), "extra": np.zeros(1)},
               {"weight": np.zeros((2, 2)), "bias": np.zeros(3)}]:
        with pytest.raises(RuntimeError) as te:
            torch.nn.Linear(2, 3).load_state_dict({k: torch.tensor(v, dtype=torch.float32) for k, v in sd.items()})
        with pytest.raises(RuntimeError) as ge:
            nn.Linear(2, 3).load_state_dict(sd)
        assert str(ge.value) == str(te.value).replace("torch.", "tapegrad.")
    assert str(nn.Linear(2, 3).load_state_dict({"weight": np.zeros((3, 2))}, strict=False)) == \
        "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])"
    assert repr(nn.Linear(2, 3).load_state_dict(nn.Linear(2, 3).state_dict())) == "<All keys matched successfully>"


def test_load_state_dict_from_torch_checkpoint(torch):
    t = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.Flatten(),
                            torch.nn.Linear(8, 3))
    t(torch.randn(4, 1, 4, 4))   # moves the running statistics
    g = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Flatten(), nn.Linear(8, 3))
    g.load_state_dict({k: v.numpy() for k, v in t.state_dict().items()})
    for (k, a), (_, b) in zip(g.state_dict().items(), t.state_dict().items()):
        assert a.dtype.__repr__().split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32)
    t.eval()
    g.eval()
    np.testing.assert_allclose(g(tapegrad.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)


def test_state_dict_tensors_are_detached_and_shared():
    lin = nn.Linear(2, 2)
    sd = lin.state_dict()
    assert not sd["weight"].requires_grad and sd["weight"].grad_fn is None
    with tapegrad.no_grad():
        lin.weight.mul_(0)
    assert float(sd["weight"].abs().sum()) == 0.0        # same memory, as torch
    assert lin.state_dict(keep_vars=True)["weight"] is lin.weight


def test_freezing_leaves_grad_none_and_optimizer_sees_only_trainable():
    backbone = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
    head = nn.Linear(4, 2)
    model = nn.Sequential(backbone, head)
    backbone.requires_grad_(False)
    model(tapegrad.randn(5, 3)).sum().backward()
    assert all(p.grad is None for p in backbone.parameters())
    assert all(p.grad is not None for p in head.parameters())
    assert [n for n, p in model.named_parameters() if p.requires_grad] == ["1.weight", "1.bias"]


def test_backward_hooks_match_torch(torch):
    def trace(lib):
        lib.manual_seed(0)
        lin = lib.nn.Linear(3, 2).double()
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(np.arange(6.).reshape(2, 3) / 10))
            lin.bias.copy_(lib.tensor([0.5, -0.25]))
        seen = []

        def pre(mod, gout):
            seen.append(("pre", [g.detach().numpy().copy() for g in gout]))
            return (gout[0] * 3,)

        def post(mod, gin, gout):
            seen.append(("post", [g.detach().numpy().copy() for g in gin], [g.detach().numpy().copy() for g in gout]))
            return (gin[0] + 1,)
        lin.register_full_backward_pre_hook(pre)
        lin.register_full_backward_hook(post)
        x = lib.tensor(np.ones((2, 3)), requires_grad=True)
        (lin(x) ** 2).sum().backward()
        return seen, x.grad.numpy(), lin.weight.grad.numpy()

    (s1, xg1, wg1), (s2, xg2, wg2) = trace(torch), trace(tapegrad)
    np.testing.assert_allclose(xg2, xg1)
    np.testing.assert_allclose(wg2, wg1)
    assert [e[0] for e in s1] == [e[0] for e in s2]
    for a, b in zip(s1, s2):
        for x, y in zip(a[1:], b[1:]):
            for u, v in zip(x, y):
                np.testing.assert_allclose(v, u)


def test_forward_hooks_with_kwargs_and_always_call():
    lin = nn.Linear(2, 2)
    log = []
    lin.register_forward_pre_hook(lambda m, args, kwargs: ((args[0] * 0,), kwargs), with_kwargs=True)
    lin.register_forward_hook(lambda m, args, kwargs, out: log.append(float(args[0].abs().sum())),
                              with_kwargs=True)
    out = lin(tapegrad.ones(1, 2))
    assert log == [0.0]
    np.testing.assert_allclose(out.detach().numpy(), lin.bias.detach().numpy()[None])


def test_global_forward_hook():
    from tapegrad.nn.module import register_module_forward_hook
    names = []
    h = register_module_forward_hook(lambda m, a, o: names.append(type(m).__name__))
    try:
        nn.Sequential(nn.Linear(2, 2), nn.ReLU())(tapegrad.ones(1, 2))
    finally:
        h.remove()
    nn.ReLU()(tapegrad.ones(1))
    assert names == ["Linear", "ReLU", "Sequential"]


def test_to_dtype_keeps_parameter_identity_and_int_buffers():
    bn = nn.BatchNorm1d(3)
    w = bn.weight
    bn.to(tapegrad.float64)
    assert bn.weight is w and w.dtype is tapegrad.float64 and isinstance(w, nn.Parameter)
    assert bn.running_mean.dtype is tapegrad.float64 and bn.num_batches_tracked.dtype is tapegrad.int64
    with pytest.raises(TypeError, match="floating point or complex dtypes"):
        bn.to(tapegrad.int32)
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        bn.to("cuda")
    assert bn.to("cpu") is bn and bn.cpu() is bn


def test_parameter_basics(torch):
    p = nn.Parameter(tapegrad.tensor([1.0, 2.0]))
    assert p.requires_grad and p.is_leaf and isinstance(p, tapegrad.Tensor)
    assert repr(p) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))
    q = nn.Parameter(tapegrad.tensor([1.0]), requires_grad=False)
    assert not q.requires_grad
    import copy
    c = copy.deepcopy(p)
    assert isinstance(c, nn.Parameter) and c is not p and c.requires_grad
    assert np.shares_memory(p.numpy(force=True), nn.Parameter(p).numpy(force=True))   # (as torch's: no copy)
    assert (p * 2).__class__ is tapegrad.Tensor
    assert nn.Parameter().shape == (0,)


@pytest.mark.parametrize("data", [np.ones(2, np.float32), 3.0, [1.0, 2.0], "w"], ids=["array", "float", "list", "str"])
def test_parameter_and_buffer_of_a_non_tensor_fail_as_torch(torch, data):
    """torch detaches what it wraps, so a number, list or array (or lstm-crf-pytorch's uncalled ``randn`` lambda)
    raises Python's AttributeError there; tapegrad used to wrap it, or fail later with another error."""
    for ctor in ("Parameter", "Buffer"):
        with pytest.raises(AttributeError) as te:
            getattr(torch.nn, ctor)(data)
        with pytest.raises(AttributeError) as ge:
            getattr(nn, ctor)(data)
        assert str(ge.value) == str(te.value)


def test_parameter_list_keeps_non_tensors_as_torch(torch):
    for lib in (torch, tapegrad):
        pl = lib.nn.ParameterList([lib.zeros(1), "tag", 2.5])
        assert [type(v).__name__ for v in pl] == ["Parameter", "str", "float"]


def test_buffer_marker_and_non_persistent():
    m = nn.Module()
    m.count = nn.Buffer(tapegrad.zeros(1))
    m.scratch = nn.Buffer(tapegrad.zeros(1), persistent=False)
    assert list(m.state_dict()) == ["count"]
    assert [n for n, _ in m.named_buffers()] == ["count", "scratch"]


def test_forward_missing_error(torch):
    with pytest.raises(NotImplementedError) as te:
        torch.nn.Module()()
    with pytest.raises(NotImplementedError) as ge:
        nn.Module()()
    assert str(ge.value) == str(te.value)


def test_sequential_and_modulelist_ops(torch):
    for lib in (torch, tapegrad):
        seq = lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Tanh())
        seq.extend(lib.nn.Sequential(lib.nn.Sigmoid()))
        assert [type(m).__name__ for m in seq] == ["ReLU", "Tanh", "Sigmoid"]
        assert type(seq.pop(1)).__name__ == "Tanh" and list(seq._modules) == ["0", "1"]
        seq[0] = lib.nn.GELU()
        assert type(seq[0]).__name__ == "GELU"
        assert len(seq * 2) == 4
        ml = lib.nn.ModuleList([lib.nn.ReLU()])
        ml += [lib.nn.Tanh()]
        ml.insert(0, lib.nn.Sigmoid())
        assert [type(m).__name__ for m in ml] == ["Sigmoid", "ReLU", "Tanh"]
        assert [type(m).__name__ for m in ml[1:]] == ["ReLU", "Tanh"]
        del ml[0]
        assert list(ml._modules) == ["0", "1"]
        md = lib.nn.ModuleDict([("a", lib.nn.ReLU())])
        md.update({"b": lib.nn.Tanh()})
        assert list(md.keys()) == ["a", "b"] and "a" in md and type(md.pop("a")).__name__ == "ReLU"
        pl = lib.nn.ParameterList([lib.zeros(2)])
        pl.append(lib.ones(1))
        assert all(isinstance(p, lib.nn.Parameter) for p in pl) and len(pl) == 2
        assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
        pd = lib.nn.ParameterDict({"b": lib.zeros(1), "a": lib.ones(1)})
        assert list(pd.keys()) == ["a", "b"] and isinstance(pd["a"], lib.nn.Parameter)
        assert [n for n, _ in pd.named_parameters()] == ["a", "b"]


def test_shared_parameters_listed_once():
    lin = nn.Linear(2, 2)
    net = nn.Sequential(lin, lin)
    assert len(list(net.parameters())) == 2
    assert len(list(net.named_parameters(remove_duplicate=False))) == 4
    assert [n for n, _ in net.named_modules()] == ["", "0"]
    assert list(net.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]


def test_nested_repr_matches_torch(torch):
    def build(nn_):
        return nn_.Sequential(
            nn_.Conv2d(1, 8, 3, padding=1), nn_.BatchNorm2d(8), nn_.ReLU(inplace=True), nn_.MaxPool2d(2),
            nn_.Dropout2d(0.25), nn_.Flatten(), nn_.Linear(8 * 14 * 14, 10, bias=False), nn_.LogSoftmax(dim=1),
            nn_.Sequential(nn_.LSTM(4, 8, num_layers=2, batch_first=True, dropout=0.1), nn_.GRU(2, 3, bias=False)),
            nn_.TransformerEncoder(nn_.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2,
                                   enable_nested_tensor=False),
            nn_.Embedding(5, 3, padding_idx=1, max_norm=1.0), nn_.ConvTranspose2d(2, 2, 2, stride=2, groups=2),
            nn_.GroupNorm(2, 4), nn_.PReLU(3), nn_.Softplus(), nn_.Hardtanh(), nn_.CrossEntropyLoss(),
            nn_.Upsample(scale_factor=2, mode="bilinear"), nn_.AdaptiveAvgPool2d((1, None)),
            nn_.Conv1d(2, 2, 3, padding="same", padding_mode="circular"),
            nn_.MultiheadAttention(4, 2, kdim=3, vdim=3), nn_.ParameterList([nn_.Parameter(tapegrad_or(nn_, 2))]))
    assert repr(build(nn)) == repr(build(torch.nn)).replace("torch.", "tapegrad.")


def tapegrad_or(nn_, n):
    import sys
    return sys.modules[nn_.__name__.split(".")[0]].zeros(n, 3)


def _linear_variants(T):
    """Linear modules whose weight/bias are found elsewhere than _parameters: each forward must use what
    ``self.weight`` / ``self.bias`` give, as torch's Linear does."""
    out = []
    torch_like = T.nn.Linear(3, 2)
    with T.no_grad():
        torch_like.weight.copy_(T.arange(6.).reshape(2, 3))
        torch_like.bias.fill_(0.5)
    out.append(torch_like)

    class Doubled(T.nn.Linear):                 # a property over the parameter, put in as parametrize does it
        @property
        def weight(self):
            return self._parameters["weight"] * 2
    d = T.nn.Linear(3, 2)
    d.__class__ = Doubled
    with T.no_grad():
        d._parameters["weight"].copy_(T.arange(6.).reshape(2, 3))
        d.bias.fill_(0.5)
    out.append(d)

    plain = T.nn.Linear(3, 2)
    del plain.weight                            # no parameter any more: a plain tensor attribute in its place
    plain.weight = T.ones(2, 3)
    with T.no_grad():
        plain.bias.fill_(0.5)
    out.append(plain)

    buf = T.nn.Linear(3, 2, bias=False)
    del buf.bias
    buf.register_buffer("bias", T.full((2,), 2.0))   # a buffer named bias
    with T.no_grad():
        buf.weight.fill_(1.0)
    out.append(buf)

    none = T.nn.Linear(3, 2)
    none.bias = None                            # a parameter slot set to None: no bias
    with T.no_grad():
        none.weight.fill_(1.0)
    out.append(none)
    return out


def test_linear_uses_whatever_self_weight_and_self_bias_are(torch):
    x = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    for ours, theirs in zip(_linear_variants(tapegrad), _linear_variants(torch)):
        np.testing.assert_array_equal(ours(tapegrad.tensor(x)).detach().numpy(),
                                      theirs(torch.tensor(x)).detach().numpy())


def test_repr_of_child_with_blank_extra_repr_lines_matches_torch(torch):
    # an extra_repr ending in "\n" (MAML's hand-written Learner) leaves a blank line: a nested repr keeps it empty
    def build(nn_):
        class Learner(nn_.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn_.Linear(2, 2)

            def extra_repr(self):
                return "conv2d:(ch_in:1)\n\nlinear:(in:2)\n"

        outer = nn_.Module()
        outer.net = Learner()
        outer.seq = nn_.Sequential(Learner(), Learner())
        return outer
    assert repr(build(nn)) == repr(build(torch.nn))
