"""Specs of the core ops that came with the engine (the op library extends the other spec files)."""

from ops.op_db import OpSpec, S, noncontig, randn

SPECS = [
    OpSpec("add", lambda m, x, y, **kw: m.add(x, y, **kw), lambda r: [
        S(randn(r, 3), randn(r, 3)), S(randn(r, 2, 3), randn(r, 3), name="broadcast"), S(randn(r), randn(r), name="0d"),
        S(randn(r, 3), 2.5, name="scalar"), S(randn(r, 2, 3), randn(r, 3), alpha=2.0, name="alpha"),
        S(noncontig(randn(r, 3, 2)), randn(r, 3, 1), name="noncontig"), S(randn(r, 0, 3), randn(r, 3), name="empty")],
        inplace=lambda x, y, **kw: x.add_(y, **kw)),
    OpSpec("sub", lambda m, x, y: m.sub(x, y), lambda r: [S(randn(r, 2, 3), randn(r, 1, 3)), S(randn(r, 3), 1.5)],
           inplace=lambda x, y: x.sub_(y)),
    OpSpec("rsub_operator", lambda m, x: 2.0 - x, lambda r: [S(randn(r, 3))]),
    OpSpec("mul", lambda m, x, y: m.mul(x, y), lambda r: [
        S(randn(r, 2, 3), randn(r, 3)), S(randn(r, 3), 3.0, name="scalar"), S(randn(r), randn(r, 2), name="0d")],
        inplace=lambda x, y: x.mul_(y)),
    OpSpec("mul_self", lambda m, x: x * x, lambda r: [S(randn(r, 3))]),
    OpSpec("div", lambda m, x, y: m.div(x, y), lambda r: [
        S(randn(r, 2, 3), randn(r, 3, positive=True)), S(randn(r, 3), 2.0, name="scalar")],
        inplace=lambda x, y: x.div_(y)),
    OpSpec("rdiv_operator", lambda m, x: 2.0 / x, lambda r: [S(randn(r, 3, positive=True))]),
    OpSpec("neg", lambda m, x: -x, lambda r: [S(randn(r, 2, 3)), S(randn(r), name="0d")]),
    OpSpec("pow_scalar", lambda m, x, e: m.pow(x, e), lambda r: [
        S(randn(r, 3, positive=True), 2), S(randn(r, 3, positive=True), 0.5, name="sqrt"),
        S(randn(r, 3), 3, name="cube"), S(randn(r, 3, positive=True), -1.5, name="neg")],
        inplace=lambda x, e: x.pow_(e)),
    OpSpec("pow_tensor", lambda m, x, y: x ** y, lambda r: [S(randn(r, 3, positive=True), randn(r, 3))]),
    OpSpec("rpow_operator", lambda m, x: 2.0 ** x, lambda r: [S(randn(r, 3))]),
    OpSpec("exp", lambda m, x: m.exp(x), lambda r: [S(randn(r, 2, 3)), S(randn(r), name="0d")],
           inplace=lambda x: x.exp_()),
    OpSpec("log", lambda m, x: m.log(x), lambda r: [S(randn(r, 2, 3, positive=True))], inplace=lambda x: x.log_()),
    OpSpec("sqrt", lambda m, x: m.sqrt(x), lambda r: [S(randn(r, 2, 3, positive=True))],
           inplace=lambda x: x.sqrt_()),
    OpSpec("tanh", lambda m, x: m.tanh(x), lambda r: [S(randn(r, 2, 3))], inplace=lambda x: x.tanh_()),
    OpSpec("sigmoid", lambda m, x: m.sigmoid(x), lambda r: [S(randn(r, 2, 3)),
                                                            S(randn(r, 4, low=-30, high=30), name="wide")],
           inplace=lambda x: x.sigmoid_()),
    OpSpec("relu", lambda m, x: m.relu(x), lambda r: [S(randn(r, 2, 3))], inplace=lambda x: x.relu_(),
           gradgrad=True),
    OpSpec("abs", lambda m, x: m.abs(x), lambda r: [S(randn(r, 2, 3))], inplace=lambda x: x.abs_()),
    OpSpec("sum", lambda m, x, **kw: m.sum(x, **kw), lambda r: [
        S(randn(r, 2, 3)), S(randn(r, 2, 3), dim=0, name="dim0"), S(randn(r, 2, 3), dim=-1, keepdim=True, name="keep"),
        S(randn(r, 2, 3, 4), dim=(0, 2), name="tuple"), S(randn(r), name="0d"), S(randn(r, 0, 3), dim=0, name="empty")],
        aliases=("axis", "keepdims")),
    OpSpec("mean", lambda m, x, **kw: m.mean(x, **kw), lambda r: [
        S(randn(r, 2, 3)), S(randn(r, 2, 3), dim=1, name="dim1"), S(randn(r, 2, 3, 4), dim=(-1, 0), keepdim=True,
                                                                   name="tuple")], aliases=("axis", "keepdims")),
    OpSpec("matmul", lambda m, x, y: m.matmul(x, y), lambda r: [
        S(randn(r, 2, 3), randn(r, 3, 4), name="mm"), S(randn(r, 3), randn(r, 3), name="dot"),
        S(randn(r, 2, 3), randn(r, 3), name="mv"), S(randn(r, 3), randn(r, 3, 2), name="vm"),
        S(randn(r, 2, 2, 3), randn(r, 3, 2), name="batched"), S(randn(r, 2, 1, 2, 3), randn(r, 3, 3, 2), name="bcast")]),
    OpSpec("reshape", lambda m, x, s: x.reshape(s), lambda r: [S(randn(r, 2, 3), (3, 2)), S(randn(r, 2, 3), (-1,))]),
    OpSpec("view", lambda m, x, s: x.view(s), lambda r: [S(randn(r, 2, 3), (6, 1))]),
    OpSpec("transpose", lambda m, x: x.transpose(0, 1), lambda r: [S(randn(r, 2, 3))]),
    OpSpec("permute", lambda m, x: x.permute(2, 0, 1), lambda r: [S(randn(r, 2, 3, 4))]),
    OpSpec("T", lambda m, x: x.T, lambda r: [S(randn(r, 2, 3))]),
    OpSpec("t", lambda m, x: x.t(), lambda r: [S(randn(r, 2, 3))]),
    OpSpec("unsqueeze", lambda m, x: x.unsqueeze(-1), lambda r: [S(randn(r, 2, 3))]),
    OpSpec("squeeze", lambda m, x: x.squeeze(), lambda r: [S(randn(r, 2, 1, 3))]),
    OpSpec("squeeze_dim", lambda m, x: x.squeeze(1), lambda r: [S(randn(r, 2, 1, 3))]),
    OpSpec("expand", lambda m, x: x.expand(2, 3, 4), lambda r: [S(randn(r, 3, 1))]),
    OpSpec("getitem_int", lambda m, x: x[1], lambda r: [S(randn(r, 3, 4))]),
    OpSpec("getitem_slice", lambda m, x: x[1:, ::2], lambda r: [S(randn(r, 3, 4))]),
    OpSpec("getitem_none_ellipsis", lambda m, x: x[None, ..., 0], lambda r: [S(randn(r, 3, 4))]),
    OpSpec("getitem_advanced", lambda m, x: x[[0, 2, 0]], lambda r: [S(randn(r, 3, 4))]),
    OpSpec("getitem_mask", lambda m, x: x[x > 0], lambda r: [S(randn(r, 3, 4))]),
    OpSpec("clone", lambda m, x: x.clone(), lambda r: [S(randn(r, 3))]),
]
