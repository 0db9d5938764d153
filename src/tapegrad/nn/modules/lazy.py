# ruff: noqa: A001, A002 - torch's argument name (input)
"""Lazy modules: ``nn.LazyLinear(out_features)`` and friends learn their input size from the first batch.

Until then their weights are ``UninitializedParameter``s (no shape). The first forward calls
``initialize_parameters(input)``: it materializes each placeholder with the inferred shape, runs the usual
``reset_parameters`` and turns the module into its eager class (``LazyLinear`` becomes ``Linear``), as torch's
``LazyModuleMixin`` does. Loading a state_dict into a lazy module materializes the placeholders with the saved
shapes. The placeholders keep their identity, so an optimizer may be built before the first forward.

>>> net = tapegrad.nn.Sequential(tapegrad.nn.LazyLinear(8), tapegrad.nn.ReLU(), tapegrad.nn.LazyLinear(2))
>>> net(tapegrad.randn(5, 3)).shape
tapegrad.Size([5, 2])
>>> net[0]
Linear(in_features=3, out_features=8, bias=True)
"""

from __future__ import annotations

import itertools

from ... import no_grad
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, _ConvTransposeNd
from .linear import Linear
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,
                            _BatchNorm, _InstanceNorm)

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """Put before a module class: parameters are inferred from the first input. A subclass sets
    ``cls_to_become`` and defines ``initialize_parameters(*args, **kwargs)``, which materializes every
    uninitialized parameter and buffer."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self.register_load_state_dict_pre_hook(_lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters, with_kwargs=True)

    def has_uninitialized_params(self):
        """Whether any parameter or buffer is still a placeholder."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # (a placeholder is saved as itself, not detached: it has no data to detach)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()


def _lazy_load_hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
    """Materialize each placeholder that the state_dict has a real tensor for, with that tensor's shape."""
    for name, t in itertools.chain(module._parameters.items(), module._buffers.items()):
        key = prefix + name
        if t is not None and key in state_dict and is_lazy(t) and not is_lazy(state_dict[key]):
            with no_grad():
                t.materialize(state_dict[key].shape)


def _infer_parameters(module, args, kwargs=None):
    """The forward pre-hook of a lazy module: initialize from this input, then become the eager class."""
    module.initialize_parameters(*args, **(kwargs or {}))
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    module._load_hook.remove()
    del module._initialize_hook, module._load_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class _LazySized(LazyModuleMixin):
    """The built-in lazy layers: a weight and an optional bias start as placeholders, and the size attribute named
    by ``_size`` (0 until the first input) says whether ``reset_parameters`` has anything to fill."""

    _size = ""

    def _placeholders(self, bias, dtype):
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and getattr(self, self._size) != 0:
            super().reset_parameters()


class LazyLinear(_LazySized, Linear):
    """A ``Linear`` whose ``in_features`` is the last dimension of its first input.

    >>> lin = tapegrad.nn.LazyLinear(3)
    >>> lin
    LazyLinear(in_features=0, out_features=3, bias=True)
    """

    cls_to_become = Linear
    _size = "in_features"

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.out_features = out_features
        self._placeholders(bias, dtype)

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:           # (materialized by load_state_dict: take in_features from the weight)
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                                     f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


class _LazyConvXdMixin(_LazySized):
    """Conv and transposed conv: ``in_channels`` from the first input's channel dimension. A subclass names its
    eager class as its last base; it becomes that class, and takes its arguments less ``in_channels``."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        eager = cls.__bases__[-1]
        if not issubclass(eager, LazyModuleMixin):      # (a subclass of a lazy conv keeps what it inherits)
            cls.cls_to_become = eager
            cls.__init__ = _lazy_conv_init(issubclass(eager, _ConvTransposeNd))

    _size = "in_channels"

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with no_grad():
                if self.transposed:
                    self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
                else:
                    self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input):
        batched = self._n + 2
        if input.dim() not in (batched - 1, batched):
            raise RuntimeError(f"Expected {batched - 1}D (unbatched) or {batched}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == batched else input.shape[0]


def _lazy_conv_init(transposed):
    """The constructor of a lazy conv class: the eager class's arguments, less ``in_channels``."""
    if transposed:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode="zeros", device=None, dtype=None):
            LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False,
                                     dilation, padding_mode, dtype=dtype)
            self.out_channels = out_channels
            self._placeholders(bias, dtype)
    else:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                                     dtype=dtype)
            self.out_channels = out_channels
            self._placeholders(bias, dtype)
    return __init__


class _LazyNormBase(_LazySized):
    """Batch and instance norm: ``num_features`` from the first input's channel dimension. A subclass names its
    eager class (``eager=BatchNorm2d``): it becomes that class, and checks its input as that class does."""

    def __init_subclass__(cls, eager=None, **kwargs):
        super().__init_subclass__(**kwargs)
        if eager is not None:                       # (a subclass of a lazy norm keeps what it inherits)
            cls.cls_to_become = eager
            cls._check_input_dim = eager._check_input_dim
            if hasattr(eager, "_ndim"):
                cls._ndim = eager._ndim

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True):
        super().__init__(0, eps, momentum, False, False, dtype=dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self._placeholders(bias, dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            from ... import _dtype, creation
            self.num_batches_tracked = creation.tensor(0, dtype=_dtype.long)

    _size = "num_features"

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with no_grad():
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    if self.bias is not None:
                        self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    """A ``Conv1d`` whose ``in_channels`` comes from its first input."""


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    """A ``Conv2d`` whose ``in_channels`` comes from its first input.

    >>> conv = tapegrad.nn.LazyConv2d(4, 3)
    >>> conv(tapegrad.randn(1, 2, 5, 5)).shape, conv.weight.shape
    (tapegrad.Size([1, 4, 3, 3]), tapegrad.Size([4, 2, 3, 3]))
    """


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    """A ``Conv3d`` whose ``in_channels`` comes from its first input."""


class LazyConvTranspose1d(_LazyConvXdMixin, ConvTranspose1d):
    """A ``ConvTranspose1d`` whose ``in_channels`` comes from its first input."""


class LazyConvTranspose2d(_LazyConvXdMixin, ConvTranspose2d):
    """A ``ConvTranspose2d`` whose ``in_channels`` comes from its first input."""


class LazyConvTranspose3d(_LazyConvXdMixin, ConvTranspose3d):
    """A ``ConvTranspose3d`` whose ``in_channels`` comes from its first input."""


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm, eager=BatchNorm1d):
    """A ``BatchNorm1d`` whose ``num_features`` comes from its first input."""


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm, eager=BatchNorm2d):
    """A ``BatchNorm2d`` whose ``num_features`` comes from its first input.

    >>> bn = tapegrad.nn.LazyBatchNorm2d()
    >>> bn(tapegrad.randn(4, 3, 2, 2)).shape, bn.running_mean.shape
    (tapegrad.Size([4, 3, 2, 2]), tapegrad.Size([3]))
    """


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm, eager=BatchNorm3d):
    """A ``BatchNorm3d`` whose ``num_features`` comes from its first input."""


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm, eager=InstanceNorm1d):
    """An ``InstanceNorm1d`` whose ``num_features`` comes from its first input."""


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm, eager=InstanceNorm2d):
    """An ``InstanceNorm2d`` whose ``num_features`` comes from its first input."""


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm, eager=InstanceNorm3d):
    """An ``InstanceNorm3d`` whose ``num_features`` comes from its first input."""
