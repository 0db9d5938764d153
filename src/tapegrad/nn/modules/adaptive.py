# ruff: noqa: A001, A002 - torch's argument name (input)
"""``AdaptiveLogSoftmaxWithLoss``: Grave et al.'s efficient softmax for large vocabularies. The frequent classes
(below ``cutoffs[0]``) and one entry per tail cluster share the head; each cluster has its own smaller projection
(``in_features // div_value ** (i + 1)``), so rare classes cost less."""

from __future__ import annotations

from collections import namedtuple

from ... import creation
from .. import functional as F
from ..module import Module
from .container import ModuleList, Sequential
from .linear import Linear

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """``forward(input (N, in_features), target (N,))`` -> ``(output, loss)``: each target's log-probability and
    the mean negative log-likelihood. ``log_prob(input)`` gives the full ``(N, n_classes)`` distribution,
    ``predict(input)`` its argmax.

    >>> asm = tapegrad.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8])
    >>> out, loss = asm(tapegrad.randn(3, 8), tapegrad.tensor([0, 5, 9]))
    >>> out.shape, asm.log_prob(tapegrad.randn(3, 8)).exp().sum(1).allclose(tapegrad.ones(3))
    (tapegrad.Size([3]), True)
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, dtype=dtype),
                                        Linear(hidden, size, bias=False, dtype=dtype)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        tdim = target_.dim()
        if tdim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        elif tdim == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = tdim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        n = target.size(0)
        t = target._array
        output = creation.zeros(n, dtype=input.dtype)
        head_index = t.copy()                # the head's column each row reads: its class, or its cluster's entry
        used = 0
        bounds = [0] + self.cutoffs
        for i in range(len(bounds) - 1):
            rows = ((t >= bounds[i]) & (t < bounds[i + 1])).nonzero()[0]
            if rows.size == 0:
                continue
            if i > 0:
                head_index[rows] = self.shortlist_size + i - 1
                rows_t = creation.tensor(rows)
                logp = F.log_softmax(self.tail[i - 1](input.index_select(0, rows_t)), dim=1)
                local = creation.tensor((t[rows] - bounds[i])[:, None])
                output = output.index_copy(0, rows_t, logp.gather(1, local).squeeze(1))
            used += rows.size
        if used != n:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min().item()}, {target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, creation.tensor(head_index[:, None])).squeeze()
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        from ... import cat
        return cat(parts, 1)

    def log_prob(self, input):
        """The log-probability of every class, ``(N, n_classes)``."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class of each row (the head's argmax when it is a frequent class)."""
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        outside = output >= self.shortlist_size
        if not bool(outside.any()):
            return output
        if bool(outside.all()):
            return self._get_full_log_prob(input, head_output).argmax(dim=1)
        log_prob = self._get_full_log_prob(input[outside], head_output[outside])
        output[outside] = log_prob.argmax(dim=1)
        return output

