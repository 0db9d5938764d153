# ruff: noqa: A001, A002 - torch's argument name (input)
"""Batch normalisation: ``BatchNorm1d/2d/3d``, ``SyncBatchNorm`` and their lazy forms (torch's buffers, momentum
and cumulative averages, state_dict versions)."""

from __future__ import annotations

from ... import _dtype, creation, no_grad
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import UninitializedBuffer
from .lazy import _LazySized
from .normalization import _affine_params, _reset_affine

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d"]


class _NormBase(Module):
    """Common state of batch and instance norm: affine weight/bias, running statistics buffers."""

    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_params(self, (num_features,), affine, bias, dtype)
        if self.track_running_stats:
            self.register_buffer("running_mean", creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", creation.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", creation.tensor(0, dtype=_dtype.long))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self):
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, bias={use_bias}, "
                "track_running_stats={track_running_stats}".format(**self.__dict__, use_bias=self.bias is not None))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked is not None
                                   else creation.tensor(0, dtype=_dtype.long))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        exponential_average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                exponential_average_factor = 1.0 / float(self.num_batches_tracked)
            else:
                exponential_average_factor = self.momentum
        if self.training:
            bn_training = True
        else:
            bn_training = (self.running_mean is None) and (self.running_var is None)
        use_buffers = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_buffers else None,
                            self.running_var if use_buffers else None, self.weight, self.bias, bn_training,
                            exponential_average_factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over ``(N, C)`` or ``(N, C, L)``: batch statistics in training (running averages
    updated with ``momentum``), running statistics in eval.

    >>> tapegrad.nn.BatchNorm1d(3)
    BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over ``(N, C, H, W)``."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over ``(N, C, D, H, W)``."""

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """``BatchNorm`` over ``(N, C, *)`` synchronised across processes in torch's distributed training. tapegrad runs
    one process, so there is nothing to synchronise: it normalises with this batch's statistics, as torch does
    outside a process group; ``process_group`` is accepted and kept."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm layer replaced by a ``SyncBatchNorm`` sharing its parameters and
        buffers (the module itself when it is a BatchNorm, a new one returned)."""
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine, module.track_running_stats,
                      process_group)
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return out


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
