"""A PyTorch script exercising Module's bookkeeping; run with torch and with tapegrad, its printout must agree."""

import copy
import io
import warnings
from contextlib import redirect_stdout


def run(lib):
    """Everything the script prints, as one string."""
    buf = io.StringIO()
    with redirect_stdout(buf), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _script(lib)
    return buf.getvalue()


def _script(lib):  # noqa: C901
    nn = lib.nn
    lib.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2))
            self.head = nn.ModuleDict({"a": nn.Linear(2, 3), "b": nn.Identity()})
            self.blocks = nn.ModuleList([nn.Linear(3, 3) for _ in range(3)] + [nn.Tanh()])
            self.register_buffer("steps", lib.zeros(1))
            self.register_buffer("tmp", lib.zeros(2), persistent=False)
            self.scale = nn.Parameter(lib.ones(1))
            self.plist = nn.ParameterList([nn.Parameter(lib.zeros(2)), lib.ones(3)])
            self.pdict = nn.ParameterDict({"x": nn.Parameter(lib.zeros(2, 2))})

        def forward(self, x):
            return x

    m = Net()
    print(m)
    print(list(m.state_dict().keys()))
    print([n for n, _ in m.named_modules()])
    print([n for n, _ in m.named_children()])
    print([n for n, _ in m.named_parameters(prefix="net", recurse=True)])
    print([n for n, _ in m.named_parameters(recurse=False)])
    print([n for n, _ in m.named_buffers()])
    print(m.get_submodule("blocks.1"), m.get_parameter("head.a.bias").shape)
    for bad in ["blocks.9", "head.c", "scale.x"]:
        try:
            m.get_submodule(bad)
        except Exception as e:
            print(type(e).__name__, e)
    try:
        m.get_parameter("steps")
    except Exception as e:
        print(type(e).__name__, e)
    for f in [
        lambda: setattr(m, "scale", lib.ones(1)),
        lambda: setattr(m, "head", 3),
        lambda: m.register_buffer("scale", lib.ones(1)),
        lambda: m.register_parameter("a.b", None),
        lambda: m.add_module("", nn.ReLU()),
        lambda: m.register_buffer("zz", 3),
        lambda: m.register_parameter("qq", lib.ones(1)),
        lambda: m.nothere,
        lambda: nn.Linear(2, 2)(lib.zeros(2, 3)),
        lambda: setattr(m, "steps", 5),
    ]:
        try:
            f()
            print("ok")
        except Exception as e:
            print(type(e).__name__, e)
    lin = nn.Linear(2, 3)
    print(lin.weight.shape, type(lin.weight).__name__)
    print(nn.Parameter(lib.tensor([1.0, 2.0]), requires_grad=False))
    for sd in [
        {},
        {"weight": lib.zeros(3, 2), "bias": lib.zeros(3), "extra": lib.zeros(1)},
        {"weight": lib.zeros(2, 2), "bias": lib.zeros(3)},
    ]:
        try:
            print(lin.load_state_dict(sd))
        except Exception as e:
            print(type(e).__name__, repr(str(e)))
    print(lin.load_state_dict({"weight": lib.zeros(3, 2)}, strict=False))
    print(lin.load_state_dict({"weight": lib.zeros(3, 2), "bias": lib.ones(3)}))
    print(lin.bias)
    # hooks
    calls = []
    h1 = lin.register_forward_pre_hook(lambda mod, args: calls.append(("pre", len(args))))
    h2 = lin.register_forward_hook(lambda mod, args, out: out * 2)
    h3 = lin.register_full_backward_hook(
        lambda mod, gi, go: calls.append(
            ("bw", [None if g is None else tuple(g.shape) for g in gi], [tuple(g.shape) for g in go])
        )
    )
    h4 = lin.register_full_backward_pre_hook(lambda mod, go: calls.append(("bwpre", len(go))))
    x = lib.ones(4, 2, requires_grad=True)
    y = lin(x)
    print(y.sum().item(), y.grad_fn.name())
    y.sum().backward()
    print(calls, x.grad.sum().item())
    for h in (h1, h2, h3, h4):
        h.remove()
    calls.clear()
    lin(x).sum().backward()
    print(calls)
    # backward hook replacing grad_input
    lin.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0,))
    x.grad = None
    lin(x).sum().backward()
    print(x.grad.sum().item())
    # hook when input doesn't require grad
    lin2 = nn.Linear(2, 1)
    lin2.register_full_backward_hook(lambda mod, gi, go: calls.append(("nog", gi, len(go))))
    calls.clear()
    lin2(lib.ones(1, 2)).sum().backward()
    print(calls)
    # freeze
    net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
    net[0].requires_grad_(False)
    net(lib.ones(3, 2)).sum().backward()
    print([p.grad is None for p in net.parameters()])
    net.zero_grad()
    print([p.grad for p in net.parameters()])
    net(lib.ones(3, 2)).sum().backward()
    net.zero_grad(set_to_none=False)
    print([None if p.grad is None else p.grad.sum().item() for p in net.parameters()])
    print(
        net.double()[0].weight.dtype,
        net.float()[1].bias.dtype,
        net.to(lib.float64)[0].weight.dtype,
        net.half()[0].weight.dtype,
    )
    print(net.train().training, net.eval().training, net[1].training)
    print(len(net), net[-1], net[0:1], len(net + net))
    net.append(nn.ReLU())
    net.insert(0, nn.Tanh())
    print(net)
    del net[1]
    print(net)
    print(m.apply(lambda mod: None) is m)
    m2 = copy.deepcopy(m)
    print(m2.scale is m.scale, (m2.scale.detach().numpy() == m.scale.detach().numpy()).all(), type(m2.scale).__name__)
    print(nn.Sequential(*[nn.Linear(2, 2) for _ in range(2)]))
    print(nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU()]))
    print(
        nn.ParameterList([nn.Parameter(lib.zeros(2, 3))]),
        nn.ParameterDict({"b": nn.Parameter(lib.zeros(2)), "a": lib.ones(1)}),
    )
    print(nn.Module())
    sd = m.state_dict()
    print(
        type(sd).__name__,
        sd["steps"].requires_grad,
        m.state_dict(keep_vars=True)["scale"].requires_grad,
        list(m.state_dict(prefix="p.").keys())[:2],
    )
    del m.scale
    print("scale" in dict(m.named_parameters()))
    print(sorted(set(dir(m)) & {"features", "scale", "steps", "forward"}))
