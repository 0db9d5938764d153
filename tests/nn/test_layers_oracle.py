"""Every layer vs torch 2.13: same parameters (copied through state_dict), same inputs, float64.

Checks state_dict keys and order, repr, outputs, dtypes, gradients w.r.t. every input and parameter (1e-8), and
buffers after forward (BatchNorm running statistics), in train and eval mode where it matters.
"""

import sys

import numpy as np
import pytest

from nn._oracle import Const, check_module

R = np.random.default_rng(1234)


def rn(*shape):
    return R.standard_normal(shape)


def pos(*shape):
    return R.uniform(0.1, 0.9, shape)


def ints(high, *shape):
    return R.integers(0, high, shape).astype(np.int64)


TE = ("train", "eval")


def probs_tnc(T, N, C):
    e = np.exp(R.standard_normal((T, N, C)))
    return e / e.sum(-1, keepdims=True)


def _nll2d(nn):
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        return nn.NLLLoss2d()


def lib_of(nn):
    """tapegrad or torch, from its nn namespace."""
    return sys.modules[nn.__name__.split(".")[0]]


def warns_nested_off(make):
    """A Transformer whose encoder layers are norm_first warns, in torch and in tapegrad, that nested tensors
    are off: checked, and kept out of the test output."""
    def build(nn):
        with pytest.warns(UserWarning, match="enable_nested_tensor is True, but self.use_nested_tensor is False "
                                             "because encoder_layer.norm_first was True"):
            return make(nn)
    return build

# (id, constructor over a module namespace, inputs, call or None, modes)
CASES = [
    ("Linear", lambda nn: nn.Linear(3, 4), [rn(2, 3)], None, TE),
    ("Linear-nobias-3d", lambda nn: nn.Linear(3, 4, bias=False), [rn(2, 5, 3)], None, TE),
    ("Linear-1d", lambda nn: nn.Linear(3, 2), [rn(3)], None, TE),
    ("Bilinear", lambda nn: nn.Bilinear(3, 2, 4), [rn(5, 3), rn(5, 2)], None, TE),
    ("Identity", lambda nn: nn.Identity(3, foo=1), [rn(2, 3)], None, TE),
    ("Flatten", lambda nn: nn.Flatten(), [rn(2, 3, 4)], None, TE),
    ("Flatten-0", lambda nn: nn.Flatten(0, 1), [rn(2, 3, 4)], None, TE),
    ("Unflatten", lambda nn: nn.Unflatten(1, (2, 3)), [rn(4, 6)], None, TE),
    ("Conv1d", lambda nn: nn.Conv1d(2, 3, 3, stride=2, padding=1), [rn(2, 2, 7)], None, TE),
    ("Conv2d", lambda nn: nn.Conv2d(2, 4, 3, padding=1), [rn(2, 2, 5, 5)], None, TE),
    ("Conv2d-same-dil", lambda nn: nn.Conv2d(2, 3, 3, padding="same", dilation=2), [rn(1, 2, 6, 6)], None, TE),
    ("Conv2d-groups", lambda nn: nn.Conv2d(4, 4, (3, 2), stride=(2, 1), groups=2, bias=False), [rn(2, 4, 6, 5)],
     None, TE),
    ("Conv2d-reflect", lambda nn: nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"), [rn(1, 2, 5, 5)], None, TE),
    ("Conv2d-circular", lambda nn: nn.Conv2d(2, 3, 3, padding=1, padding_mode="circular"), [rn(1, 2, 5, 5)], None,
     TE),
    ("Conv2d-unbatched", lambda nn: nn.Conv2d(2, 3, 3), [rn(2, 5, 5)], None, TE),
    ("Conv3d", lambda nn: nn.Conv3d(2, 2, 2), [rn(1, 2, 3, 3, 3)], None, TE),
    ("ConvTranspose1d", lambda nn: nn.ConvTranspose1d(2, 3, 3, stride=2), [rn(2, 2, 4)], None, TE),
    ("ConvTranspose2d", lambda nn: nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1),
     [rn(2, 2, 3, 3)], None, TE),
    ("ConvTranspose2d-outsize", lambda nn: nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1), [rn(1, 2, 3, 3)],
     lambda m, lib, x: m(x, output_size=[6, 6]), TE),
    ("MaxPool1d", lambda nn: nn.MaxPool1d(2), [rn(2, 3, 8)], None, TE),
    ("MaxPool2d", lambda nn: nn.MaxPool2d(2), [rn(2, 3, 6, 6)], None, TE),
    ("MaxPool2d-pad", lambda nn: nn.MaxPool2d(3, stride=2, padding=1), [rn(1, 2, 7, 7)], None, TE),
    ("MaxPool2d-indices", lambda nn: nn.MaxPool2d(2, return_indices=True), [rn(1, 2, 4, 4)], None, TE),
    ("AvgPool1d", lambda nn: nn.AvgPool1d(2), [rn(2, 3, 8)], None, TE),
    ("AvgPool2d", lambda nn: nn.AvgPool2d(2), [rn(2, 3, 6, 6)], None, TE),
    ("AvgPool2d-pad", lambda nn: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), [rn(1, 2, 7, 7)],
     None, TE),
    ("AdaptiveAvgPool1d", lambda nn: nn.AdaptiveAvgPool1d(3), [rn(2, 3, 7)], None, TE),
    ("AdaptiveAvgPool2d", lambda nn: nn.AdaptiveAvgPool2d((2, 3)), [rn(2, 3, 5, 7)], None, TE),
    ("AdaptiveAvgPool2d-1", lambda nn: nn.AdaptiveAvgPool2d(1), [rn(2, 3, 4, 4)], None, TE),
    ("AdaptiveMaxPool2d", lambda nn: nn.AdaptiveMaxPool2d(2), [rn(2, 3, 5, 5)], None, TE),
    ("Upsample-nearest", lambda nn: nn.Upsample(scale_factor=2), [rn(1, 2, 3, 3)], None, TE),
    ("Upsample-bilinear", lambda nn: nn.Upsample(size=(5, 4), mode="bilinear"), [rn(1, 2, 3, 3)], None, TE),
    ("ZeroPad2d", lambda nn: nn.ZeroPad2d((1, 2, 0, 1)), [rn(1, 2, 3, 3)], None, TE),
    ("ConstantPad2d", lambda nn: nn.ConstantPad2d(1, 0.5), [rn(1, 2, 3, 3)], None, TE),
    ("ReflectionPad2d", lambda nn: nn.ReflectionPad2d(1), [rn(1, 2, 3, 3)], None, TE),
    ("PixelShuffle", lambda nn: nn.PixelShuffle(2), [rn(1, 8, 2, 3)], None, TE),
    ("BatchNorm1d", lambda nn: nn.BatchNorm1d(3), [rn(5, 3)], None, TE),
    ("BatchNorm1d-3d", lambda nn: nn.BatchNorm1d(3), [rn(4, 3, 5)], None, TE),
    ("BatchNorm2d", lambda nn: nn.BatchNorm2d(3), [rn(4, 3, 2, 2)], None, TE),
    ("BatchNorm2d-cma", lambda nn: nn.BatchNorm2d(3, momentum=None), [rn(4, 3, 2, 2)], None, TE),
    ("BatchNorm2d-noaffine", lambda nn: nn.BatchNorm2d(3, affine=False, track_running_stats=False),
     [rn(4, 3, 2, 2)], None, TE),
    ("LayerNorm", lambda nn: nn.LayerNorm(4), [rn(3, 4)], None, TE),
    ("LayerNorm-2d", lambda nn: nn.LayerNorm((3, 4), bias=False), [rn(2, 3, 4)], None, TE),
    ("LayerNorm-noaffine", lambda nn: nn.LayerNorm(4, elementwise_affine=False), [rn(2, 4)], None, TE),
    ("GroupNorm", lambda nn: nn.GroupNorm(2, 4), [rn(3, 4, 5)], None, TE),
    ("RMSNorm", lambda nn: nn.RMSNorm(4), [rn(3, 4)], None, TE),
    ("RMSNorm-eps", lambda nn: nn.RMSNorm((2, 4), eps=1e-3), [rn(3, 2, 4)], None, TE),
    ("InstanceNorm2d", lambda nn: nn.InstanceNorm2d(3), [rn(2, 3, 4, 4)], None, TE),
    ("InstanceNorm2d-affine", lambda nn: nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
     [rn(2, 3, 4, 4)], None, TE),
    ("Dropout-p0", lambda nn: nn.Dropout(0.0), [rn(3, 4)], None, TE),
    ("Dropout-eval", lambda nn: nn.Dropout(0.5), [rn(3, 4)], None, ("eval",)),
    ("Dropout1d-eval", lambda nn: nn.Dropout1d(0.5), [rn(2, 3, 4)], None, ("eval",)),
    ("Dropout2d-eval", lambda nn: nn.Dropout2d(0.5), [rn(2, 3, 4, 4)], None, ("eval",)),
    ("AlphaDropout-eval", lambda nn: nn.AlphaDropout(0.5), [rn(3, 4)], None, ("eval",)),
    ("Embedding", lambda nn: nn.Embedding(10, 3), [ints(10, 2, 4)], None, TE),
    ("Embedding-pad", lambda nn: nn.Embedding(10, 3, padding_idx=0), [np.array([[0, 2, 0, 5]])], None, TE),
    # recurrent
    ("RNN", lambda nn: nn.RNN(3, 4), [rn(5, 2, 3)], None, TE),
    ("RNN-relu-bi-2l-bf", lambda nn: nn.RNN(3, 4, num_layers=2, nonlinearity="relu", bidirectional=True,
                                            batch_first=True), [rn(2, 5, 3)], None, TE),
    ("RNN-h0", lambda nn: nn.RNN(3, 4, num_layers=2), [rn(5, 2, 3), rn(2, 2, 4)], None, TE),
    ("RNN-unbatched", lambda nn: nn.RNN(3, 4, bias=False), [rn(5, 3), rn(1, 4)], None, TE),
    ("LSTM", lambda nn: nn.LSTM(3, 4), [rn(5, 2, 3)], None, TE),
    ("LSTM-bi-2l", lambda nn: nn.LSTM(3, 4, num_layers=2, bidirectional=True), [rn(5, 2, 3)], None, TE),
    ("LSTM-bf-states", lambda nn: nn.LSTM(3, 4, batch_first=True), [rn(2, 5, 3), rn(1, 2, 4), rn(1, 2, 4)],
     lambda m, lib, x, h, c: m(x, (h, c)), TE),
    ("LSTM-proj", lambda nn: nn.LSTM(3, 4, proj_size=2, num_layers=2), [rn(5, 2, 3)], None, TE),
    ("LSTM-unbatched", lambda nn: nn.LSTM(3, 4), [rn(5, 3)], None, TE),
    ("LSTM-dropout-eval", lambda nn: nn.LSTM(3, 4, num_layers=2, dropout=0.5), [rn(5, 2, 3)], None, ("eval",)),
    ("GRU", lambda nn: nn.GRU(3, 4), [rn(5, 2, 3)], None, TE),
    ("GRU-bi-2l-bf", lambda nn: nn.GRU(3, 4, num_layers=2, bidirectional=True, batch_first=True),
     [rn(2, 5, 3), rn(4, 2, 4)], None, TE),
    ("RNNCell", lambda nn: nn.RNNCell(3, 4), [rn(2, 3), rn(2, 4)], None, TE),
    # (an input that makes two of the four units active with seed 0's weights: a random one left all four at 0)
    ("RNNCell-relu-1d", lambda nn: nn.RNNCell(3, 4, nonlinearity="relu"), [np.array([0.5, 2.0, -1.0])], None, TE),
    ("LSTMCell", lambda nn: nn.LSTMCell(3, 4), [rn(2, 3), rn(2, 4), rn(2, 4)],
     lambda m, lib, x, h, c: m(x, (h, c)), TE),
    ("LSTMCell-nobias", lambda nn: nn.LSTMCell(3, 4, bias=False), [rn(2, 3)], None, TE),
    ("GRUCell", lambda nn: nn.GRUCell(3, 4), [rn(2, 3), rn(2, 4)], None, TE),
    # attention
    ("MHA", lambda nn: nn.MultiheadAttention(4, 2), [rn(3, 2, 4), rn(5, 2, 4), rn(5, 2, 4)], None, TE),
    ("MHA-self-bf", lambda nn: nn.MultiheadAttention(4, 2, batch_first=True), [rn(2, 3, 4)],
     lambda m, lib, x: m(x, x, x), TE),
    ("MHA-masks", lambda nn: nn.MultiheadAttention(4, 2), [rn(3, 2, 4), rn(4, 2, 4), rn(4, 2, 4)],
     lambda m, lib, q, k, v: m(q, k, v, key_padding_mask=lib.tensor([[False, False, True, False],
                                                                       [False, True, False, False]]),
                               attn_mask=lib.tensor(np.triu(np.ones((3, 4), bool), 2))), TE),
    ("MHA-floatmask-noavg", lambda nn: nn.MultiheadAttention(4, 2), [rn(3, 2, 4), rn(3, 2, 4), rn(3, 2, 4)],
     lambda m, lib, q, k, v: m(q, k, v, attn_mask=lib.tensor(np.array([[0., -1., -2.], [0.5, 0., -1.],
                                                                         [0., 0., 0.]])),
                               average_attn_weights=False), TE),
    ("MHA-noweights", lambda nn: nn.MultiheadAttention(4, 2, bias=False), [rn(3, 2, 4), rn(3, 2, 4), rn(3, 2, 4)],
     lambda m, lib, q, k, v: m(q, k, v, need_weights=False), TE),
    ("MHA-kvdim", lambda nn: nn.MultiheadAttention(4, 2, kdim=3, vdim=5), [rn(3, 2, 4), rn(4, 2, 3), rn(4, 2, 5)],
     None, TE),
    ("MHA-biaskv-zero", lambda nn: nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True),
     [rn(3, 2, 4), rn(4, 2, 4), rn(4, 2, 4)], None, TE),
    ("MHA-unbatched", lambda nn: nn.MultiheadAttention(4, 1), [rn(3, 4), rn(4, 4), rn(4, 4)], None, TE),
    ("TEL", lambda nn: nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0), [rn(3, 2, 4)], None, TE),
    ("TEL-gelu-normfirst-bf", lambda nn: nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, activation="gelu",
                                                                    norm_first=True, batch_first=True),
     [rn(2, 3, 4)], None, TE),
    ("TEL-kpm", lambda nn: nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True), [rn(2, 3, 4)],
     lambda m, lib, x: m(x, src_key_padding_mask=lib.tensor([[False, False, True], [False, False, False]])), TE),
    ("TE-causal", lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0), 2,
                                                   norm=nn.LayerNorm(4), enable_nested_tensor=False),
     [rn(3, 2, 4)],
     lambda m, lib, x: m(x, mask=lib.tensor(np.triu(np.full((3, 3), -np.inf), 1)), is_causal=True), TE),
    ("TE-bf-kpm", lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0,
                                                                              batch_first=True), 2),
     [rn(2, 3, 4)],
     lambda m, lib, x: m(x, src_key_padding_mask=lib.tensor([[False, False, True], [False, False, False]])), TE),
    ("TDL", lambda nn: nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0), [rn(3, 2, 4), rn(5, 2, 4)], None, TE),
    ("TDL-gelu-normfirst-bf", lambda nn: nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0, activation="gelu",
                                                                    norm_first=True, batch_first=True),
     [rn(2, 3, 4), rn(2, 5, 4)], None, TE),
    ("TDL-masks", lambda nn: nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0, batch_first=True),
     [rn(2, 3, 4), rn(2, 5, 4)],
     lambda m, lib, t, mem: m(t, mem, tgt_mask=lib.tensor(np.triu(np.full((3, 3), -np.inf), 1)),
                              memory_key_padding_mask=lib.tensor([[False, False, False, True, True],
                                                                  [False, False, False, False, False]]),
                              tgt_is_causal=True), TE),
    ("TDL-unbatched", lambda nn: nn.TransformerDecoderLayer(4, 1, 8, dropout=0.0), [rn(3, 4), rn(5, 4)], None, TE),
    ("TD-causal", lambda nn: nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0), 2,
                                                   norm=nn.LayerNorm(4)),
     [rn(3, 2, 4), rn(5, 2, 4)],
     lambda m, lib, t, mem: m(t, mem, tgt_mask=lib.tensor(np.triu(np.full((3, 3), -np.inf), 1))), TE),
    ("TD-memory-mask", lambda nn: nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0), 1),
     [rn(3, 2, 4), rn(5, 2, 4)],
     lambda m, lib, t, mem: m(t, mem, memory_mask=lib.tensor(np.triu(np.ones((3, 5), bool), 2))), TE),
    ("Transformer", lambda nn: nn.Transformer(4, 2, 2, 1, 8, dropout=0.0, batch_first=True),
     [rn(2, 5, 4), rn(2, 3, 4)], None, TE),
    ("Transformer-masks-normfirst", warns_nested_off(lambda nn: nn.Transformer(4, 2, 1, 2, 8, dropout=0.0,
                                                                               norm_first=True, batch_first=True)),
     [rn(2, 5, 4), rn(2, 3, 4)],
     lambda m, lib, s, t: m(s, t, tgt_mask=m.generate_square_subsequent_mask(3, dtype=lib.float64),
                            src_key_padding_mask=lib.tensor([[False] * 4 + [True], [False] * 5]),
                            memory_key_padding_mask=lib.tensor([[False] * 4 + [True], [False] * 5])), TE),
    ("Transformer-unbatched", lambda nn: nn.Transformer(4, 2, 1, 1, 8, dropout=0.0, batch_first=True),
     [rn(5, 4), rn(3, 4)], None, TE),
    ("EmbeddingBag", lambda nn: nn.EmbeddingBag(10, 3), [ints(10, 2, 4)], None, TE),
    ("EmbeddingBag-sum-offsets", lambda nn: nn.EmbeddingBag(10, 3, mode="sum"), [ints(10, 7)],
     lambda m, lib, x: m(x, lib.tensor([0, 2, 2, 5])), TE),
    ("EmbeddingBag-max-pad-last", lambda nn: nn.EmbeddingBag(10, 3, mode="max", padding_idx=-1,
                                                             include_last_offset=True),
     [np.array([1, 9, 4, 9, 2, 3])], lambda m, lib, x: m(x, lib.tensor([0, 3, 6])), TE),
    ("EmbeddingBag-psw", lambda nn: nn.EmbeddingBag(10, 3, mode="sum", max_norm=1.0, norm_type=3.0),
     [ints(10, 2, 3), rn(2, 3)], lambda m, lib, x, w: m(x, per_sample_weights=w), TE),
]

# the layers issue 17 added: pooling, padding, folding, distances, shuffles and the rest of torch.nn's list
def _pool_idx(nn, shape, k):
    """Indices of a max-pool over ``shape`` (the inputs MaxUnpool reads), from the same library."""
    lib = lib_of(nn)
    x = lib.tensor(np.arange(float(np.prod(shape))).reshape(shape) % 7)
    return x


CASES += [
    ("MaxPool3d", lambda nn: nn.MaxPool3d(2, stride=1, padding=1), [rn(1, 2, 3, 4, 3)], None, TE),
    ("AvgPool3d", lambda nn: nn.AvgPool3d((2, 1, 2), count_include_pad=False, padding=(1, 0, 1)),
     [rn(1, 2, 3, 4, 4)], None, TE),
    ("AdaptiveAvgPool3d", lambda nn: nn.AdaptiveAvgPool3d((2, None, 3)), [rn(1, 2, 3, 4, 5)], None, TE),
    ("AdaptiveMaxPool3d", lambda nn: nn.AdaptiveMaxPool3d(2), [rn(1, 2, 3, 4, 5)], None, TE),
    ("AdaptiveMaxPool3d-indices", lambda nn: nn.AdaptiveMaxPool3d((1, 2, 2), return_indices=True),
     [rn(2, 3, 4, 5)], None, TE),
    ("AdaptiveMaxPool1d", lambda nn: nn.AdaptiveMaxPool1d(3), [rn(2, 3, 7)], None, TE),
    ("MaxUnpool1d", lambda nn: nn.MaxUnpool1d(2), [rn(1, 2, 3), Const(np.array([[[1, 2, 5], [0, 3, 4]]]))],
     None, TE),
    ("MaxUnpool2d", lambda nn: nn.MaxUnpool2d(2, stride=2), [rn(1, 1, 2, 2), Const(np.array([[[[1, 7], [8, 15]]]]))],
     lambda m, lib, x, i: m(x, i, output_size=(4, 4)), TE),
    ("MaxUnpool3d", lambda nn: nn.MaxUnpool3d(2), [rn(1, 1, 1, 1, 2), Const(np.array([[[[[0, 15]]]]]))], None, TE),
    ("LPPool1d", lambda nn: nn.LPPool1d(2, 3, stride=2), [pos(2, 3, 8)], None, TE),
    ("LPPool2d", lambda nn: nn.LPPool2d(1.5, (2, 3), ceil_mode=True), [pos(1, 2, 5, 7)], None, TE),
    ("LPPool3d", lambda nn: nn.LPPool3d(3, 2), [pos(1, 2, 4, 4, 4)], None, TE),
    ("FractionalMaxPool2d", lambda nn: nn.FractionalMaxPool2d(2, output_size=(3, 4),
                                                              _random_samples=lib_of(nn).tensor(R.random((2, 3, 2)))),
     [rn(2, 3, 7, 8)], None, TE),
    ("FractionalMaxPool2d-ratio-indices", lambda nn: nn.FractionalMaxPool2d(
        3, output_ratio=0.5, return_indices=True, _random_samples=lib_of(nn).tensor(R.random((1, 2, 2)))),
     [rn(1, 2, 8, 9)], None, TE),
    ("FractionalMaxPool3d", lambda nn: nn.FractionalMaxPool3d(
        2, output_size=2, _random_samples=lib_of(nn).tensor(R.random((1, 2, 3)))), [rn(1, 2, 4, 5, 4)], None, TE),
    ("ZeroPad1d", lambda nn: nn.ZeroPad1d((2, 1)), [rn(2, 3, 4)], None, TE),
    ("ZeroPad3d", lambda nn: nn.ZeroPad3d((1, 0, 2, 1, 0, 1)), [rn(1, 2, 2, 3, 3)], None, TE),
    ("ConstantPad1d", lambda nn: nn.ConstantPad1d(2, -1.5), [rn(2, 3)], None, TE),
    ("ConstantPad3d", lambda nn: nn.ConstantPad3d(1, 0.25), [rn(1, 1, 2, 2, 2)], None, TE),
    ("ReflectionPad1d", lambda nn: nn.ReflectionPad1d((2, 1)), [rn(2, 3, 4)], None, TE),
    ("ReflectionPad3d", lambda nn: nn.ReflectionPad3d((1, 2, 0, 1, 1, 1)), [rn(1, 2, 3, 4, 3)], None, TE),
    ("ReplicationPad1d", lambda nn: nn.ReplicationPad1d(3), [rn(2, 2, 4)], None, TE),
    ("ReplicationPad2d", lambda nn: nn.ReplicationPad2d((1, 2, 2, 0)), [rn(1, 2, 3, 3)], None, TE),
    ("ReplicationPad3d", lambda nn: nn.ReplicationPad3d(1), [rn(2, 2, 2, 3)], None, TE),
    ("CircularPad1d", lambda nn: nn.CircularPad1d((1, 2)), [rn(2, 3, 4)], None, TE),
    ("CircularPad2d", lambda nn: nn.CircularPad2d(1), [rn(1, 2, 3, 3)], None, TE),
    ("CircularPad3d", lambda nn: nn.CircularPad3d((1, 0, 1, 1, 0, 2)), [rn(1, 1, 3, 3, 3)], None, TE),
    ("Fold", lambda nn: nn.Fold((4, 5), (2, 3), padding=1, stride=(1, 2)), [rn(2, 12, 15)], None, TE),
    ("Unfold", lambda nn: nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=2), [rn(2, 3, 5, 6)], None, TE),
    ("CosineSimilarity", lambda nn: nn.CosineSimilarity(dim=-1, eps=1e-6), [rn(3, 4), rn(3, 4)], None, TE),
    ("PairwiseDistance", lambda nn: nn.PairwiseDistance(p=1.5, keepdim=True), [rn(3, 4), rn(3, 4)], None, TE),
    ("ChannelShuffle", lambda nn: nn.ChannelShuffle(3), [rn(2, 6, 2, 2)], None, TE),
    ("PixelUnshuffle", lambda nn: nn.PixelUnshuffle(2), [rn(1, 2, 4, 6)], None, TE),
    ("Softmax2d", lambda nn: nn.Softmax2d(), [rn(2, 3, 2, 2)], None, TE),
    ("UpsamplingNearest2d", lambda nn: nn.UpsamplingNearest2d(scale_factor=2), [rn(1, 2, 2, 3)], None, TE),
    ("UpsamplingBilinear2d", lambda nn: nn.UpsamplingBilinear2d(size=(3, 5)), [rn(1, 2, 2, 3)], None, TE),
    ("Upsample-trilinear", lambda nn: nn.Upsample(scale_factor=(1.5, 2, 1), mode="trilinear", align_corners=False),
     [rn(1, 1, 2, 2, 3)], None, TE),
    ("Upsample-bicubic", lambda nn: nn.Upsample(size=5, mode="bicubic", align_corners=True), [rn(1, 2, 3, 3)],
     None, TE),
    ("LocalResponseNorm", lambda nn: nn.LocalResponseNorm(3, alpha=0.1, beta=0.6, k=1.5), [rn(2, 5, 3)], None, TE),
    ("CrossMapLRN2d", lambda nn: nn.CrossMapLRN2d(3, alpha=0.3, beta=0.7, k=1.5), [rn(2, 3, 2, 2)], None, TE),
    ("CrossMapLRN2d-size4", lambda nn: nn.CrossMapLRN2d(4, alpha=0.2, beta=0.75, k=2), [rn(1, 7, 2, 1)], None, TE),
    ("SyncBatchNorm", lambda nn: nn.SyncBatchNorm(3), [rn(4, 3, 2)], None, TE),
    ("SyncBatchNorm-noaffine-cma", lambda nn: nn.SyncBatchNorm(3, momentum=None, affine=False), [rn(4, 3, 2, 2)],
     None, TE),
    ("BatchNorm3d", lambda nn: nn.BatchNorm3d(2), [rn(2, 2, 2, 2, 2)], None, TE),
    ("InstanceNorm1d", lambda nn: nn.InstanceNorm1d(3, affine=True), [rn(2, 3, 5)], None, TE),
    ("InstanceNorm3d", lambda nn: nn.InstanceNorm3d(2, track_running_stats=True), [rn(2, 2, 2, 3, 2)], None, TE),
    ("DataParallel", lambda nn: nn.DataParallel(nn.Linear(3, 2)), [rn(4, 3)], None, TE),
    ("Container", lambda nn: _quiet_container(nn), [rn(2, 3)], lambda m, lib, x: m.lin(x), TE),
    ("AdaptiveLogSoftmaxWithLoss", lambda nn: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0),
     [rn(5, 8), Const(np.array([0, 4, 9, 2, 7]))], None, TE),
    ("AdaptiveLogSoftmaxWithLoss-headbias-1d", lambda nn: nn.AdaptiveLogSoftmaxWithLoss(6, 7, [2], head_bias=True),
     [rn(6), Const(np.array(5))], None, TE),
    ("AdaptiveLogSoftmaxWithLoss-log_prob", lambda nn: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0),
     [rn(4, 8)], lambda m, lib, x: m.log_prob(x), TE),
    ("AdaptiveLogSoftmaxWithLoss-predict", lambda nn: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0),
     [rn(6, 8)], lambda m, lib, x: (m.predict(x), m.log_prob(x)), TE),
    ("RNNCell-tanh-nobias", lambda nn: nn.RNNCell(3, 2, bias=False), [rn(4, 3)], None, TE),
    ("GRUCell-1d", lambda nn: nn.GRUCell(3, 2), [rn(3), rn(2)], None, TE),
    ("LSTM-proj-bi-bf", lambda nn: nn.LSTM(3, 4, proj_size=2, bidirectional=True, batch_first=True),
     [rn(2, 4, 3)], None, TE),
    ("TransformerEncoder-norm-nested-off", lambda nn: nn.TransformerEncoder(
        nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, activation="gelu", bias=False), 2, norm=nn.LayerNorm(4),
        enable_nested_tensor=False), [rn(3, 2, 4)], None, TE),
    ("TransformerDecoderLayer-callable-act", lambda nn: nn.TransformerDecoderLayer(
        4, 2, 6, dropout=0.0, activation=lib_of(nn).nn.functional.silu), [rn(3, 2, 4), rn(2, 2, 4)], None, TE),
]


def _quiet_container(nn):
    with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
        return nn.Container(lin=nn.Linear(3, 2), act=nn.ReLU())


ACTIVATIONS = [
    ("ReLU", lambda nn: nn.ReLU()), ("ReLU6", lambda nn: nn.ReLU6()), ("LeakyReLU", lambda nn: nn.LeakyReLU(0.2)),
    ("PReLU", lambda nn: nn.PReLU()), ("PReLU-3", lambda nn: nn.PReLU(3, init=0.1)), ("ELU", lambda nn: nn.ELU(0.5)),
    ("SELU", lambda nn: nn.SELU()), ("CELU", lambda nn: nn.CELU(0.7)), ("GELU", lambda nn: nn.GELU()),
    ("GELU-tanh", lambda nn: nn.GELU("tanh")), ("SiLU", lambda nn: nn.SiLU()), ("Mish", lambda nn: nn.Mish()),
    ("Tanh", lambda nn: nn.Tanh()), ("Sigmoid", lambda nn: nn.Sigmoid()), ("Softplus", lambda nn: nn.Softplus(2, 5)),
    ("Softsign", lambda nn: nn.Softsign()), ("Hardtanh", lambda nn: nn.Hardtanh(-0.5, 0.7)),
    ("Hardsigmoid", lambda nn: nn.Hardsigmoid()), ("Hardswish", lambda nn: nn.Hardswish()),
    ("LogSigmoid", lambda nn: nn.LogSigmoid()), ("Softmax", lambda nn: nn.Softmax(dim=1)),
    ("Softmin", lambda nn: nn.Softmin(dim=-1)), ("LogSoftmax", lambda nn: nn.LogSoftmax(dim=1)),
    ("GLU", lambda nn: nn.GLU(-1)), ("Threshold", lambda nn: nn.Threshold(0.1, 20.0)),
    ("Hardshrink", lambda nn: nn.Hardshrink(0.3)), ("Softshrink", lambda nn: nn.Softshrink(0.3)),
    ("Tanhshrink", lambda nn: nn.Tanhshrink()),
]
# values away from the kinks so that torch's and tapegrad's subgradient choices cannot differ
_act_x = R.uniform(0.05, 3.5, (2, 3, 4)) * R.choice([-1.0, 1.0], (2, 3, 4))
CASES += [(name, make, [_act_x], None, TE)
          for name, make in ACTIVATIONS]

LOSSES = [
    ("CrossEntropyLoss", lambda nn: nn.CrossEntropyLoss(), [rn(4, 5), ints(5, 4)]),
    ("CrossEntropyLoss-w-ls", lambda nn: nn.CrossEntropyLoss(weight=lib_of(nn).tensor([1., 2., .5, 1., 3.]),
                                                             label_smoothing=0.1, ignore_index=1),
     [rn(4, 5), ints(5, 4)]),
    ("NLLLoss-w", lambda nn: nn.NLLLoss(weight=lib_of(nn).tensor([1., 2., .5, 1., 3.])), [rn(4, 5), ints(5, 4)]),
    ("BCEWithLogitsLoss-posw", lambda nn: nn.BCEWithLogitsLoss(pos_weight=lib_of(nn).tensor([1., 2., .5, 3.])),
     [rn(3, 4), pos(3, 4)]),
    ("CrossEntropyLoss-probs", lambda nn: nn.CrossEntropyLoss(reduction="sum"), [rn(4, 5), pos(4, 5)]),
    ("CrossEntropyLoss-kd", lambda nn: nn.CrossEntropyLoss(reduction="none"), [rn(2, 5, 3), ints(5, 2, 3)]),
    ("NLLLoss", lambda nn: nn.NLLLoss(), [rn(4, 5), ints(5, 4)]),
    ("MSELoss", lambda nn: nn.MSELoss(), [rn(3, 4), rn(3, 4)]),
    ("MSELoss-sum", lambda nn: nn.MSELoss(reduction="sum"), [rn(3, 4), rn(3, 4)]),
    ("L1Loss", lambda nn: nn.L1Loss(reduction="none"), [rn(3, 4), rn(3, 4)]),
    ("SmoothL1Loss", lambda nn: nn.SmoothL1Loss(beta=0.5), [rn(3, 4), rn(3, 4)]),
    ("HuberLoss", lambda nn: nn.HuberLoss(delta=0.7), [rn(3, 4), rn(3, 4)]),
    ("BCELoss", lambda nn: nn.BCELoss(), [pos(3, 4), pos(3, 4)]),
    ("BCEWithLogitsLoss", lambda nn: nn.BCEWithLogitsLoss(), [rn(3, 4), pos(3, 4)]),
    ("KLDivLoss", lambda nn: nn.KLDivLoss(reduction="batchmean"), [np.log(pos(3, 4)), pos(3, 4)]),
    ("KLDivLoss-logt", lambda nn: nn.KLDivLoss(reduction="sum", log_target=True), [np.log(pos(3, 4)),
                                                                                   np.log(pos(3, 4))]),
    ("PoissonNLLLoss", lambda nn: nn.PoissonNLLLoss(), [rn(3, 4), pos(3, 4) * 4]),
    ("PoissonNLLLoss-full", lambda nn: nn.PoissonNLLLoss(log_input=False, full=True), [pos(3, 4), pos(3, 4) * 4]),
    ("MarginRankingLoss", lambda nn: nn.MarginRankingLoss(0.2), [rn(5), rn(5), np.array([1., -1, 1, -1, 1])]),
    ("TripletMarginLoss", lambda nn: nn.TripletMarginLoss(margin=0.5), [rn(4, 3), rn(4, 3), rn(4, 3)]),
    ("CosineEmbeddingLoss", lambda nn: nn.CosineEmbeddingLoss(0.1), [rn(4, 3), rn(4, 3), np.array([1., -1, 1, -1])]),
    ("HingeEmbeddingLoss", lambda nn: nn.HingeEmbeddingLoss(), [rn(3, 4), Const(np.sign(rn(3, 4)))]),
    ("SoftMarginLoss", lambda nn: nn.SoftMarginLoss(), [rn(3, 4), Const(np.sign(rn(3, 4)))]),
    ("MultiLabelSoftMarginLoss", lambda nn: nn.MultiLabelSoftMarginLoss(), [rn(3, 4), Const((rn(3, 4) > 0) * 1.0)]),
    ("CTCLoss", lambda nn: nn.CTCLoss(), [np.log(probs_tnc(6, 2, 4)), Const(np.array([[1, 2, 2], [3, 1, 0]])),
                                          Const(np.array([6, 5])), Const(np.array([3, 2]))]),
    ("CTCLoss-sum-blank-zi", lambda nn: nn.CTCLoss(blank=3, reduction="sum", zero_infinity=True),
     [np.log(probs_tnc(5, 3, 4)), Const(np.array([1, 2, 2, 0, 1, 1])), Const(np.array([5, 2, 4])),
      Const(np.array([3, 2, 1]))]),
    ("CTCLoss-none", lambda nn: nn.CTCLoss(reduction="none"), [np.log(probs_tnc(4, 2, 3)),
                                                               Const(np.array([[1, 1], [2, 0]])),
                                                               Const(np.array([4, 3])), Const(np.array([2, 1]))]),
    ("NLLLoss2d", lambda nn: _nll2d(nn), [rn(2, 3, 2, 2), ints(3, 2, 2, 2)]),
    ("TripletMarginWithDistanceLoss", lambda nn: nn.TripletMarginWithDistanceLoss(), [rn(4, 3), rn(4, 3), rn(4, 3)]),
    ("TripletMarginWithDistanceLoss-cos-swap", lambda nn: nn.TripletMarginWithDistanceLoss(
        distance_function=nn.CosineSimilarity(), margin=0.5, swap=True, reduction="sum"),
     [rn(4, 3), rn(4, 3), rn(4, 3)]),
    ("LinearCrossEntropyLoss", lambda nn: nn.LinearCrossEntropyLoss(4, 5), [rn(3, 4), ints(5, 3)]),
    ("LinearCrossEntropyLoss-bias-outf-ls", lambda nn: nn.LinearCrossEntropyLoss(
        4, 3, out_features=(2,), bias=True, label_smoothing=0.1, reduction="sum", ignore_index=1),
     [rn(5, 4), ints(3, 5, 2)]),
    ("MultiLabelMarginLoss", lambda nn: nn.MultiLabelMarginLoss(), [rn(2, 4), Const(np.array([[3, 0, -1, 1],
                                                                                               [1, 2, 3, -1]]))]),
    ("MultiMarginLoss-p2-w", lambda nn: nn.MultiMarginLoss(p=2, margin=0.5, weight=lib_of(nn).tensor(
        [1., 2., .5, 1.])), [rn(3, 4), ints(4, 3)]),
    ("GaussianNLLLoss", lambda nn: nn.GaussianNLLLoss(full=True), [rn(3, 4), rn(3, 4), pos(3, 4)]),
]
CASES += [(name, make, xs, None, ("train",)) for name, make, xs in LOSSES]


@pytest.mark.parametrize("name,make,inputs,call,modes", CASES,
                         ids=[c.values[0] if hasattr(c, "values") else c[0] for c in CASES])
def test_layer_matches_torch(torch, name, make, inputs, call, modes):
    check_module(torch, make, inputs, call, modes)


def test_batchnorm_running_stats_over_steps(torch):
    """Several training steps then eval: running mean/var/num_batches_tracked follow torch's."""
    check_module(torch, lambda nn: nn.BatchNorm1d(3, momentum=0.3), [rn(6, 3)], modes=("train", "eval"), steps=3)


def test_multi_head_attention_forward_out_proj_changes_width(torch):
    # CLIP's AttentionPool2d: separate q/k/v weights, a concatenated bias, and an out projection to another width
    import tapegrad
    rs = np.random.RandomState(0)
    e, out_dim, heads, tgt, src, bsz = 8, 5, 2, 1, 4, 3
    arrays = dict(query=(tgt, bsz, e), key=(src, bsz, e), value=(src, bsz, e), q_proj_weight=(e, e),
                  k_proj_weight=(e, e), v_proj_weight=(e, e), in_proj_bias=(3 * e,), out_proj_weight=(out_dim, e),
                  out_proj_bias=(out_dim,))
    arrays = {k: rs.standard_normal(s) for k, s in arrays.items()}
    results = []
    for lib in (tapegrad, torch):
        ts = {k: lib.tensor(v, requires_grad=True) for k, v in arrays.items()}
        out, w = lib.nn.functional.multi_head_attention_forward(
            ts["query"], ts["key"], ts["value"], embed_dim_to_check=e, num_heads=heads, in_proj_weight=None,
            in_proj_bias=ts["in_proj_bias"], bias_k=None, bias_v=None, add_zero_attn=False, dropout_p=0.0,
            out_proj_weight=ts["out_proj_weight"], out_proj_bias=ts["out_proj_bias"], use_separate_proj_weight=True,
            q_proj_weight=ts["q_proj_weight"], k_proj_weight=ts["k_proj_weight"], v_proj_weight=ts["v_proj_weight"],
            training=False, need_weights=True)
        (out.sin().sum() + w.square().sum()).backward()
        results.append((out.detach().numpy(), w.detach().numpy(), {k: t.grad.numpy() for k, t in ts.items()}))
    (o1, w1, g1), (o2, w2, g2) = results
    assert o1.shape == (tgt, bsz, out_dim) and w1.shape == w2.shape
    np.testing.assert_allclose(o1, o2, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w1, w2, rtol=1e-10, atol=1e-12)
    for k in g1:
        np.testing.assert_allclose(g1[k], g2[k], rtol=1e-9, atol=1e-11, err_msg=k)
