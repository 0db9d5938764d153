"""Layer behaviour that an oracle comparison cannot pin down (random masks) and torch's error messages."""

import warnings

import numpy as np
import pytest

import tapegrad
from tapegrad import nn


def test_dropout_train_scales_and_eval_is_identity():
    x = tapegrad.ones(200, 300)
    d = nn.Dropout(0.3)
    y = d(x).numpy()
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-6)
    assert (d.eval()(x).numpy() == 1).all()
    y2 = nn.Dropout2d(0.5)(tapegrad.ones(50, 40, 3, 3)).numpy()
    per_channel = y2.reshape(50, 40, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all()   # whole channels dropped or scaled
    assert abs((per_channel[..., 0] == 0).mean() - 0.5) < 0.05


def test_dropout_gradient_uses_the_same_mask():
    x = tapegrad.ones(20, 30, requires_grad=True)
    y = nn.Dropout(0.5)(x)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())


def test_dropout_between_rnn_layers_only_in_training():
    tapegrad.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.9)
    x = tapegrad.randn(5, 2, 3)
    a = lstm.eval()(x)[0].detach().numpy()
    b = lstm.eval()(x)[0].detach().numpy()
    c = lstm.train()(x)[0].detach().numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def _same_error(torch, fn, exc=Exception):
    with pytest.raises(exc) as te:
        fn(torch)
    with pytest.raises(exc) as ge:
        fn(tapegrad)
    assert type(ge.value) is type(te.value)
    assert str(ge.value) == str(te.value).replace("torch.", "tapegrad.")


@pytest.mark.parametrize("fn", [
    lambda lib: lib.nn.LSTM(3, 4)(lib.zeros(5, 2, 2)),
    lambda lib: lib.nn.RNN(3, 4)(lib.zeros(5, 2, 3, 1)),
    lambda lib: lib.nn.GRU(3, 4)(lib.zeros(5, 2, 3), lib.zeros(1, 3, 4)),
    lambda lib: lib.nn.LSTM(3, 4)(lib.zeros(5, 2, 3), (lib.zeros(1, 2, 4), lib.zeros(1, 2, 5))),
    lambda lib: lib.nn.RNN(3, 4)(lib.zeros(5, 2, 3), lib.zeros(2, 4)),
    lambda lib: lib.nn.RNNCell(3, 4)(lib.zeros(5, 2, 3)),
    lambda lib: lib.nn.RNN(3, 4, nonlinearity="sigmoid"),
    lambda lib: lib.nn.BatchNorm2d(3)(lib.zeros(2, 3)),
    lambda lib: lib.nn.BatchNorm1d(3)(lib.zeros(2, 3, 4, 5)),
    lambda lib: lib.nn.Conv2d(3, 4, 3, groups=2),
    lambda lib: lib.nn.Conv2d(2, 4, 3, padding="full"),
    lambda lib: lib.nn.Conv2d(2, 4, 3, stride=2, padding="same"),
    lambda lib: lib.nn.GroupNorm(3, 4),
    lambda lib: lib.nn.Embedding(5, 2, padding_idx=7),
    lambda lib: lib.nn.Dropout(1.5),
    lambda lib: lib.nn.MultiheadAttention(5, 2),
    lambda lib: lib.nn.TransformerEncoderLayer(4, 2, 8, activation="tanh"),
    lambda lib: lib.nn.Sequential(lib.nn.ReLU())[3],
    lambda lib: lib.nn.ModuleList([lib.nn.ReLU()])[-2],
    lambda lib: lib.nn.ParameterList()(1),
    lambda lib: lib.nn.InstanceNorm2d(3, affine=True)(lib.zeros(2, 4, 3, 3)),
    lambda lib: lib.nn.ConvTranspose2d(2, 2, 3, stride=2)(lib.zeros(1, 2, 3, 3), output_size=[12, 12]),
    lambda lib: lib.nn.MultiheadAttention(4, 2)(lib.zeros(3, 2, 4), lib.zeros(3, 2, 4), lib.zeros(3, 2, 4),
                                                attn_mask=lib.zeros(2, 2)),
])
def test_errors_match_torch(torch, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same_error(torch, fn)


def test_warnings_match_torch(torch):
    for make in [lambda lib: lib.nn.LSTM(3, 4, dropout=0.5),
                 lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(4, 2, 8), 2)]:
        with pytest.warns(UserWarning) as tw:
            make(torch)
        with pytest.warns(UserWarning) as gw:
            make(tapegrad)
        assert [str(w.message) for w in gw] == [str(w.message) for w in tw]


def test_module_outputs_float32_by_default(torch):
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    tapegrad.manual_seed(0)
    g = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(4, 2))
    t = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(4, 2))
    t.load_state_dict({k: torch.tensor(v.numpy()) for k, v in g.state_dict().items()})
    out = g(tapegrad.tensor(x))
    assert out.dtype is tapegrad.float32
    np.testing.assert_allclose(out.detach().numpy(), t(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.Transformer(4, 2, 1, 1, 8, batch_first=True)(lib.zeros(2, 5, 4), lib.zeros(3, 3, 4)),
    lambda lib: lib.nn.Transformer(4, 2, 1, 1, 8)(lib.zeros(5, 2, 4), lib.zeros(3, 3, 4)),
    lambda lib: lib.nn.Transformer(4, 2, 1, 1, 8, batch_first=True)(lib.zeros(2, 5, 4), lib.zeros(2, 3, 6)),
    lambda lib: lib.nn.EmbeddingBag(5, 2, padding_idx=5),
    lambda lib: lib.nn.EmbeddingBag(5, 2, padding_idx=-6),
    lambda lib: lib.nn.EmbeddingBag(5, 2, _weight=lib.zeros(4, 2)),
    lambda lib: lib.nn.EmbeddingBag.from_pretrained(lib.zeros(3)),
    lambda lib: lib.nn.TransformerDecoderLayer(4, 2, 8, activation="tanh"),
    lambda lib: lib.nn.EmbeddingBag(5, 2)(lib.tensor([[1, 2]]), lib.tensor([0])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([[1, 2]]), lib.zeros(5, 2), [0]),
], ids=["batch-bf", "batch-sf", "d_model", "pad-high", "pad-low", "weight-shape", "pretrained-1d", "activation",
        "2d-offsets", "2d-offsets-list"])
def test_transformer_and_embedding_bag_errors_match_torch(torch, make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same_error(torch, make)


def test_transformer_init_and_causal_mask_as_torch(torch):
    tapegrad.manual_seed(0)
    model = nn.Transformer(8, 2, 2, 2, 16, batch_first=True)
    for name, p in model.named_parameters():
        if p.dim() > 1:                         # every matrix Xavier-uniform, as torch's _reset_parameters
            fan_out, fan_in = p.shape
            bound = (6 / (fan_in + fan_out)) ** 0.5
            assert 0.9 * bound < float(p.abs().max()) <= bound, name
    got = nn.Transformer.generate_square_subsequent_mask(4, dtype=tapegrad.float64)
    want = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    assert got.dtype == tapegrad.float64
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    # the decoder stack detects a causal tgt_mask and each layer gets is_causal=True, as torch's
    seen = []
    layer = model.decoder.layers[0]
    layer.register_forward_pre_hook(lambda m, args, kwargs: seen.append(kwargs["tgt_is_causal"]), with_kwargs=True)
    model(tapegrad.randn(2, 5, 8), tapegrad.randn(2, 4, 8), tgt_mask=got.float())
    assert seen == [True]


def test_embedding_bag_from_pretrained_freezes_and_trains():
    w = tapegrad.arange(12.).reshape(4, 3)
    bag = nn.EmbeddingBag.from_pretrained(w, mode="sum")
    assert not bag.weight.requires_grad
    out = bag(tapegrad.tensor([[0, 1], [2, 3]]))
    np.testing.assert_array_equal(out.numpy(), [[3, 5, 7], [15, 17, 19]])
    bag = nn.EmbeddingBag.from_pretrained(w, freeze=False, mode="max")
    bag(tapegrad.tensor([[0, 3], [1, 1]])).sum().backward()
    np.testing.assert_array_equal(bag.weight.grad.numpy(), [[0, 0, 0], [1, 1, 1], [0, 0, 0], [1, 1, 1]])
    assert repr(bag) == "EmbeddingBag(4, 3, mode='max')"


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("kw", [{}, {"num_layers": 2}, {"bidirectional": True}, {"batch_first": True},
                                {"proj_size": 2}, {"dtype": "float64"}, {"unbatched": True}, {"packed": True}])
def test_recurrent_output_nodes_are_named_as_torchs(torch, cls, kw):
    # `print(lstm_out)` shows grad_fn=<MkldnnRnnLayerBackward0> in torch (its oneDNN LSTM: CPU, float32, no
    # projections), StackBackward0 in float64; RNN/GRU turn batch-first output back in place (TransposeBackward1)
    kw = dict(kw)
    if cls != "LSTM" and "proj_size" in kw:
        pytest.skip("proj_size is the LSTM's")
    unbatched, packed, dt = kw.pop("unbatched", False), kw.pop("packed", False), kw.pop("dtype", "float32")
    names = []
    for mod in (torch, tapegrad):
        mod.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # (torch: "LSTM with projections is not supported with oneDNN")
            m = getattr(mod.nn, cls)(3, 4, **kw).to(getattr(mod, dt))
            x = mod.randn(5, 2, 3, dtype=getattr(mod, dt))
            if unbatched:
                x = x[:, 0]
            if packed:
                x = mod.nn.utils.rnn.pack_padded_sequence(x, [5, 3])
            out, h = m(x)
        out = out.data if packed else out
        hs = h if isinstance(h, tuple) else (h,)
        names.append((out.grad_fn.name(), [t.grad_fn.name() for t in hs]))
        with mod.no_grad():
            assert m(x)[0 if not packed else 0] is not None
    assert names[1] == names[0]
    if cls == "LSTM" and not kw and dt == "float32" and not unbatched and not packed:
        assert names[1][0] == "MkldnnRnnLayerBackward0"


@pytest.mark.filterwarnings("ignore:TF32 acceleration on top of oneDNN")      # (torch's, on toggling mkldnn)
def test_lstm_node_name_follows_the_mkldnn_switch(torch):
    m = nn.LSTM(3, 4)
    x = tapegrad.randn(5, 1, 3)
    with tapegrad.backends.mkldnn.flags(enabled=False):
        assert m(x)[0].grad_fn.name() == "StackBackward0"
    out = m(x)[0]
    assert out.grad_fn.name() == "MkldnnRnnLayerBackward0"
    out.sum().backward()               # the gradient flows through the renamed node as through stack
    tm = torch.nn.LSTM(3, 4)
    tm.load_state_dict({k: torch.from_numpy(v.detach().numpy()) for k, v in m.state_dict().items()})
    tm(torch.from_numpy(x.numpy()))[0].sum().backward()
    np.testing.assert_allclose(m.weight_hh_l0.grad.numpy(), tm.weight_hh_l0.grad.numpy(), rtol=1e-5, atol=1e-6)
    with torch.backends.mkldnn.flags(enabled=False):
        assert tm(torch.from_numpy(x.numpy()))[0].grad_fn.name() == "StackBackward0"


@pytest.mark.parametrize("shape", [(1, 4, 4), (4, 3, 5, 5), (2, 16, 7), (5, 4, 3, 3, 3), (8, 3), (64, 10), (7, 3, 1)])
@pytest.mark.parametrize("affine", [True, False])
def test_float32_batch_norm_is_torchs_bit_for_bit(torch, shape, affine):
    # the output (x * alpha + beta, fused), the running mean and variance, train and eval, as torch's CPU kernel;
    # an (N, C) batch's variance sum differs from torch's in the last bit now and then (torch fuses each step)
    g = np.random.default_rng(len(shape) * 7 + shape[-1])
    x = (g.standard_normal(shape) * 3 + 2).astype(np.float32)
    outs = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)          # (torch's (N, C) kernel sums per thread)
    try:
        for mod in (torch, tapegrad):
            mod.manual_seed(0)
            bn = (mod.nn.BatchNorm1d if len(shape) < 4 else mod.nn.BatchNorm2d if len(shape) == 4
                  else mod.nn.BatchNorm3d)(shape[1], affine=affine)
            if affine:
                with mod.no_grad():
                    bn.weight.copy_(mod.from_numpy(g.standard_normal(shape[1]).astype(np.float32)))
                    bn.bias.copy_(mod.from_numpy(g.standard_normal(shape[1]).astype(np.float32)))
            xt = mod.from_numpy(x.copy()).requires_grad_()
            y1 = bn(xt)
            y1.pow(2).sum().backward()
            y2 = bn(mod.from_numpy(x * 0.5))
            bn.eval()
            y3 = bn(mod.from_numpy(x))
            outs.append([a.detach().numpy().copy() for a in (y1, y2, y3, bn.running_mean, bn.running_var, xt.grad)])
            g = np.random.default_rng(len(shape) * 7 + shape[-1])
            g.standard_normal(shape)
    finally:
        torch.set_num_threads(threads)
    theirs, ours = outs
    exact = x.size != shape[0] * shape[1]
    for k, (a, b) in enumerate(zip(ours[:5], theirs[:5])):
        if exact or k == 3:
            np.testing.assert_array_equal(a, b, err_msg=str(k))
        else:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=str(k))
    np.testing.assert_allclose(ours[5], theirs[5], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cls", ["GRU", "LSTM", "RNN"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_dropout_between_layers_of_a_packed_run_draws_as_torch(torch, cls, bidirectional):
    # torch drops out the packed data (real steps only): the chatbot tutorial's 2-layer packed GRU encoder
    res = []
    for mod in (torch, tapegrad):
        mod.manual_seed(0)
        m = getattr(mod.nn, cls)(4, 5, 3, dropout=0.5, bidirectional=bidirectional)
        x = mod.randn(6, 3, 4, requires_grad=True)
        out, _ = m(mod.nn.utils.rnn.pack_padded_sequence(x, [6, 4, 2]))
        out.data.pow(2).sum().backward()
        res.append((out.data.detach().numpy(), x.grad.numpy(), mod.rand(3).numpy()))
    for a, b in zip(res[1], res[0]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
