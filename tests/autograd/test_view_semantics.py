"""Views against torch, from torch's own autograd tests: ``_base``/``_is_view()``, views taken before their base
requires grad, writes into ``expand()``ed tensors, the graph after an in-place change over a view, and the
legacy ``Variable(volatile=...)``."""

import warnings

import pytest
import torch

import tapegrad


def _views_base(m):
    x = m.randn(3, 4)
    leaf = m.randn(2, 3, requires_grad=True)
    return [x[0]._base is x, x.t()._base is x, x.view(12)._base is x, x.unbind()[1]._base is x,
            x[0][1:]._base is x, x.t()[1:].select(1, 0)._base is x,       # a view of a view: the root
            x._base is None, x.detach()._base is None, x.clone()._base is None,
            x[0]._is_view(), x._is_view(), x.detach()._is_view(), x.reshape(4, 3)._is_view(),
            x.contiguous()._is_view(), x.t().reshape(12)._is_view(),        # a copy: no view
            leaf[0]._base is leaf, (leaf * 2)[1]._base.grad_fn is not None, leaf[0]._base.requires_grad]


def test_base_is_the_root_tensor():
    assert _views_base(tapegrad) == _views_base(torch)
