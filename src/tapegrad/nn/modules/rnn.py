# ruff: noqa: A001, A002 - torch's argument name (input)
"""Recurrent layers ``RNN LSTM GRU`` (multi-layer, bidirectional, ``batch_first``, dropout between layers) and
the cells ``RNNCell LSTMCell GRUCell``, with torch's parameter names, gate order and initialisation.

Each layer projects the whole input sequence with one matmul, then steps through time with ``h @ W_hh^T``; every
step is recorded by autograd (backpropagation through time).
"""

from __future__ import annotations

import math
import numbers
import warnings

from ... import creation
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _cat(tensors, dim):
    from ... import cat
    return cat(tensors, dim)


def _stack(tensors, dim=0):
    from ...ops.shape import stack
    return stack(tensors, dim)


_MKLDNN_LAYER = []


def _mkldnn_stack(steps):
    """The steps of torch's oneDNN LSTM layer stacked: the same values and gradient as ``stack``, under the name
    of torch's node (``MkldnnRnnLayerBackward0``, what ``print(lstm_out)`` shows for a CPU float32 LSTM)."""
    if not _MKLDNN_LAYER:
        from ...ops.shape.split_join import Stack
        _MKLDNN_LAYER.append(type("MkldnnRnnLayer", (Stack,), {"node_name": "MkldnnRnnLayerBackward0",
                                                               "__module__": __name__,
                                                               "__doc__": _mkldnn_stack.__doc__}))
    return _MKLDNN_LAYER[0].apply(0, *steps)


def _where(cond, a, b):
    from ... import where
    return where(cond, a, b)


def _sigmoid(x):
    from ...ops.elementwise import sigmoid
    return sigmoid(x)


def _tanh(x):
    from ...ops.elementwise import tanh
    return tanh(x)


def _relu(x):
    from ...ops.elementwise import relu
    return relu(x)


def _is_packed(x):
    from ..utils.rnn import PackedSequence
    return isinstance(x, PackedSequence)


def _proj(x, w, b):
    """``x @ w.T + b`` (b may be None)."""
    y = x.matmul(w.t())
    return y if b is None else y + b


def _cell_step(mode, gi, h, c, w_hh, b_hh, w_hr=None):
    """One time step given the input projection ``gi`` (already ``x @ W_ih^T + b_ih``). Returns (h, c)."""
    gh = _proj(h, w_hh, b_hh)
    if mode == "LSTM":
        H = gi.shape[-1] // 4
        i = _sigmoid(gi[..., 0:H] + gh[..., 0:H])
        f = _sigmoid(gi[..., H:2 * H] + gh[..., H:2 * H])
        g = _tanh(gi[..., 2 * H:3 * H] + gh[..., 2 * H:3 * H])
        o = _sigmoid(gi[..., 3 * H:] + gh[..., 3 * H:])
        c = f * c + i * g
        h = o * _tanh(c)
        if w_hr is not None:
            h = h.matmul(w_hr.t())
        return h, c
    if mode == "GRU":
        H = gi.shape[-1] // 3
        r = _sigmoid(gi[..., 0:H] + gh[..., 0:H])
        z = _sigmoid(gi[..., H:2 * H] + gh[..., H:2 * H])
        n = _tanh(gi[..., 2 * H:] + r * gh[..., 2 * H:])
        return (1 - z) * n + z * h, None
    pre = gi + gh
    return (_tanh(pre) if mode == "RNN_TANH" else _relu(pre)), None


class RNNBase(Module):
    """Shared parameters and forward of RNN, LSTM and GRU."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        gate_size = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}[mode] * hidden_size
        if mode not in ("LSTM", "GRU", "RNN_TANH", "RNN_RELU"):
            raise ValueError("Unrecognized RNN mode: " + mode)
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                real_hidden_size = proj_size if proj_size > 0 else hidden_size
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                w_ih = Parameter(creation.empty((gate_size, layer_input_size), dtype=dtype))
                w_hh = Parameter(creation.empty((gate_size, real_hidden_size), dtype=dtype))
                b_ih = Parameter(creation.empty(gate_size, dtype=dtype))
                b_hh = Parameter(creation.empty(gate_size, dtype=dtype))
                if proj_size == 0:
                    layer_params = (w_ih, w_hh, b_ih, b_hh) if bias else (w_ih, w_hh)
                else:
                    w_hr = Parameter(creation.empty((proj_size, hidden_size), dtype=dtype))
                    layer_params = (w_ih, w_hh, b_ih, b_hh, w_hr) if bias else (w_ih, w_hh, w_hr)
                suffix = "_reverse" if direction == 1 else ""
                param_names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    param_names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    param_names += ["weight_hr_l{}{}"]
                param_names = [x.format(layer, suffix) for x in param_names]
                for name, param in zip(param_names, layer_params):
                    setattr(self, name, param)
                self._flat_weights_names.extend(param_names)
                self._all_weights.append(param_names)
        self.reset_parameters()

    def flatten_parameters(self):
        """A no-op (there is no cuDNN weight buffer to compact)."""

    @property
    def _flat_weights(self):
        return [getattr(self, wn) for wn in self._flat_weights_names]

    def __getstate__(self):
        # torch's RNNBase keeps this list as an attribute and its __setstate__ reads it: a whole module pickled
        # here loads in torch
        state = self.__dict__.copy()
        state["_flat_weights"] = self._flat_weights
        return state

    def __setstate__(self, state):
        # (torch's pickles carry the list; here it is the property above)
        super().__setstate__({k: v for k, v in state.items() if k not in ("_flat_weights", "_flat_weight_refs")})

    @property
    def all_weights(self):
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # --- checks (torch's messages) ----------------------------------------------------------------------
    def check_input(self, input, batch_sizes=None):
        w = getattr(self, self._flat_weights_names[0]) if self._flat_weights_names else None
        if w is not None and input.dtype != w.dtype:
            from ...amp import is_autocast_enabled
            if not is_autocast_enabled("cpu"):
                raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). Convert "
                                 f"input: input.to({w.dtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes=None):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        h = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, h)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if hx.size() != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        """torch's argument checks of ``forward`` (input dims and size, the hidden state's shape)."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        """``hx`` with its batch dim reordered by ``permutation`` (a packed sequence's sorting), or as is."""
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    # --- forward -------------------------------------------------------------------------------------------
    def _layer_params(self, layer, direction):
        suffix = "_reverse" if direction == 1 else ""
        g = lambda n: getattr(self, f"{n}_l{layer}{suffix}")
        b_ih = g("bias_ih") if self.bias else None
        b_hh = g("bias_hh") if self.bias else None
        w_hr = g("weight_hr") if self.proj_size > 0 else None
        return g("weight_ih"), g("weight_hh"), b_ih, b_hh, w_hr

    def _run(self, x, h0, c0, lengths=None):
        """x: (T, B, I); h0, c0: (L*D, B, H). Returns output (T, B, D*H), h_n, c_n.

        With ``lengths`` (packed input), sequence b only steps while ``t < lengths[b]``: its state is carried
        unchanged through the padding (the reverse direction starts at its last real step)."""
        num_directions = 2 if self.bidirectional else 1
        T = x.shape[0]
        h_n, c_n = [], []
        layer_input = x
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                k = layer * num_directions + direction
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_params(layer, direction)
                gi_all = _proj(layer_input, w_ih, b_ih)
                h = h0[k]
                c = c0[k] if c0 is not None else None
                steps = [None] * T
                order = range(T - 1, -1, -1) if direction == 1 else range(T)
                for t in order:
                    h_new, c_new = _cell_step(self.mode, gi_all[t], h, c, w_hh, b_hh, w_hr)
                    if lengths is None:
                        h, c = h_new, c_new
                    else:
                        live = Tensor._make((t < lengths)[:, None])
                        h = _where(live, h_new, h)
                        c = _where(live, c_new, c) if c is not None else None
                    steps[t] = h
                if not T:
                    outs.append(layer_input.new_zeros((0,) + tuple(h.shape)))
                else:
                    outs.append(_mkldnn_stack(steps) if self._mkldnn_layer(x, lengths) else _stack(steps, 0))
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            layer_output = outs[0] if num_directions == 1 else _cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_output = (F.dropout(layer_output, self.dropout, True) if lengths is None
                                else self._dropout_packed(layer_output, lengths))
            layer_input = layer_output
        return layer_input, _stack(h_n, 0), (_stack(c_n, 0) if c_n else None)

    def _dropout_packed(self, out, lengths):
        """Dropout between the layers of a packed run, drawn as torch draws it: on the packed data (the real steps
        only, ``(sum(lengths), H)``), so that the same random numbers fall on the same elements."""
        from ..utils.rnn import PackedSequence, _pack_time_major, _unpack_time_major
        data, batch_sizes = _pack_time_major(out, lengths)
        data = F.dropout(data, self.dropout, True)
        return _unpack_time_major(PackedSequence(data, Tensor._make(batch_sizes)), 0.0, out.shape[0])[0]

    def _mkldnn_layer(self, x, lengths):
        """Whether torch runs this layer with oneDNN on CPU (its ``use_mkldnn``): an LSTM without projections on
        a float32 or bfloat16 (Half without grad mode) input that is not empty nor packed, oneDNN enabled."""
        from ... import _dtype, backends, is_grad_enabled
        return (self.mode == "LSTM" and self.proj_size == 0 and lengths is None and x.numel() > 0
                and backends.mkldnn.enabled
                and (x.dtype in (_dtype.float32, _dtype.bfloat16)
                     or (x.dtype == _dtype.float16 and not is_grad_enabled())))

    def _forward_packed(self, packed, hx, cx=None):
        """Run on a PackedSequence: unpack (sorted order), run with lengths, pack the output again."""
        from ..utils.rnn import PackedSequence, _pack_time_major, _unpack_time_major
        x, lengths = _unpack_time_major(packed, 0.0)
        self.check_input(packed.data, packed.batch_sizes)
        si, ui = packed.sorted_indices, packed.unsorted_indices
        B = x.shape[1]
        num_directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        shape_h = (self.num_layers * num_directions, B, real_hidden)
        if hx is None:
            hx = creation.zeros(shape_h, dtype=x.dtype, device=x.device)
        elif si is not None:
            hx = hx.index_select(1, si)
        self.check_hidden_size(hx, shape_h, "Expected hidden size {}, got {}" if self.mode != "LSTM"
                               else "Expected hidden[0] size {}, got {}")
        if self.mode == "LSTM":
            shape_c = (self.num_layers * num_directions, B, self.hidden_size)
            if cx is None:
                cx = creation.zeros(shape_c, dtype=x.dtype, device=x.device)
            elif si is not None:
                cx = cx.index_select(1, si)
            self.check_hidden_size(cx, shape_c, "Expected hidden[1] size {}, got {}")
        out, h_n, c_n = self._run(x, hx, cx, lengths)
        data, _ = _pack_time_major(out, lengths)
        if ui is not None:
            h_n = h_n.index_select(1, ui)
            c_n = c_n.index_select(1, ui) if c_n is not None else None
        return PackedSequence(data, packed.batch_sizes, si, ui), h_n, c_n

    def _prepare(self, input, hx, name):
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D tensor instead")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        return input, is_batched, batch_dim

    def _zeros_hidden(self, input, size):
        num_directions = 2 if self.bidirectional else 1
        max_batch = input.size(0) if self.batch_first else input.size(1)
        return creation.zeros((self.num_layers * num_directions, max_batch, size), dtype=input.dtype,
                              device=input.device)


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu).

    >>> rnn = tapegrad.nn.RNN(2, 3, batch_first=True)
    >>> out, h = rnn(tapegrad.zeros(4, 5, 2))
    >>> out.shape, h.shape
    (tapegrad.Size([4, 5, 3]), tapegrad.Size([1, 4, 3]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if _is_packed(input):
            out, h_n, _ = self._forward_packed(input, hx)
            return out, h_n
        input, is_batched, _ = self._prepare(input, hx, "RNN")
        if hx is not None:
            if not is_batched:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
            elif hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        else:
            hx = self._zeros_hidden(input, self.hidden_size)
        self.check_input(input)
        self.check_hidden_size(hx, self.get_expected_hidden_size(input))
        x = input.transpose(0, 1) if self.batch_first else input
        out, h_n, _ = self._run(x, hx, None)
        if self.batch_first:
            out = out.transpose_(0, 1)      # (in place as torch's RNN/GRU: its node is TransposeBackward1)
        if not is_batched:
            out = out.squeeze(0 if self.batch_first else 1)      # (the batch dim _prepare added)
            h_n = h_n.squeeze(1)
        return out, h_n


class LSTM(RNNBase):
    """Long short-term memory (gates i, f, g, o in that order in ``weight_ih_l0``); returns
    ``output, (h_n, c_n)``.

    >>> lstm = tapegrad.nn.LSTM(2, 3, num_layers=2)
    >>> out, (h, c) = lstm(tapegrad.zeros(5, 4, 2))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)

    def get_expected_cell_size(self, input, batch_sizes=None):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input, hx=None):
        if _is_packed(input):
            out, h_n, c_n = self._forward_packed(input, *(hx if hx is not None else (None, None)))
            return out, (h_n, c_n)
        input, is_batched, _ = self._prepare(input, hx, "LSTM")
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            h0 = self._zeros_hidden(input, real_hidden_size)
            c0 = self._zeros_hidden(input, self.hidden_size)
        else:
            h0, c0 = hx
            if is_batched:
                if h0.dim() != 3 or c0.dim() != 3:
                    raise RuntimeError(f"For batched 3-D input, hx and cx should also be 3-D but got ({h0.dim()}-D, "
                                       f"{c0.dim()}-D) tensors")
            else:
                if h0.dim() != 2 or c0.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be 2-D but got "
                                       f"({h0.dim()}-D, {c0.dim()}-D) tensors")
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
        self.check_input(input)
        self.check_hidden_size(h0, self.get_expected_hidden_size(input), "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(c0, self.get_expected_cell_size(input), "Expected hidden[1] size {}, got {}")
        x = input.transpose(0, 1) if self.batch_first else input
        out, h_n, c_n = self._run(x, h0, c0)
        if self.batch_first:
            out = out.transpose(0, 1)
        if not is_batched:
            out = out.squeeze(0 if self.batch_first else 1)      # (the batch dim _prepare added)
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return out, (h_n, c_n)


class GRU(RNNBase):
    """Gated recurrent unit (gates r, z, n in that order); returns ``output, h_n``.

    >>> gru = tapegrad.nn.GRU(2, 3, bidirectional=True)
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)

    forward = RNN.forward

    def _prepare(self, input, hx, name):
        return super()._prepare(input, hx, "GRU")


class RNNCellBase(Module):
    """Shared parameters of the single-step cells."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(creation.empty((num_chunks * hidden_size, input_size), dtype=dtype))
        self.weight_hh = Parameter(creation.empty((num_chunks * hidden_size, hidden_size), dtype=dtype))
        if bias:
            self.bias_ih = Parameter(creation.empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(creation.empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, input, hx, name):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = creation.zeros((input.size(0), self.hidden_size), dtype=input.dtype)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        self._check_step(input, (hx,))
        return input, hx, is_batched

    def _check_step(self, input, hiddens):
        """torch's checks of a cell step (its kernel's), in its order and words."""
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        for k, h in enumerate(hiddens):
            if input.size(0) != h.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{k} batch size "
                                   f"{h.size(0)}")
            if h.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {h.size(1)}, expected "
                                   f"{self.hidden_size}")


class RNNCell(RNNCellBase):
    """One Elman RNN step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batched(input, hx, "RNNCell")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret, _ = _cell_step(mode, _proj(input, self.weight_ih, self.bias_ih), hx, None, self.weight_hh,
                            self.bias_hh)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; returns ``(h', c')``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = creation.zeros((input.size(0), self.hidden_size), dtype=input.dtype)
            hx = (zeros, zeros)
        else:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0)) if not is_batched else hx
        self._check_step(input, hx)
        h, c = _cell_step("LSTM", _proj(input, self.weight_ih, self.bias_ih), hx[0], hx[1], self.weight_hh,
                          self.bias_hh)
        if not is_batched:
            h, c = h.squeeze(0), c.squeeze(0)
        return h, c


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._batched(input, hx, "GRUCell")
        ret, _ = _cell_step("GRU", _proj(input, self.weight_ih, self.bias_ih), hx, None, self.weight_hh,
                            self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
