"""torch's memory-overlap rules for in-place ops, against torch: a written-to tensor with repeated elements
(expanded) is refused, an input overlapping the written-to tensor partly is refused, the same memory with the same
layout (x.add_(x), a view of the same shape) and layouts with gaps (torch cannot tell) are allowed."""

import pytest

import tapegrad
from pairs import cases, same

CASES = cases("""
b = torch.arange(5.) ;; b[1:].mul_(b[:-1])
b = torch.arange(5.) ;; b[:-1].add_(b[1:])
b = torch.arange(6.) ;; b[:4].copy_(b[2:])
b = torch.arange(6.) ;; b.add_(b)
b = torch.arange(6.) ;; b.view(2, 3).mul_(b.view(2, 3))
b = torch.arange(6.) ;; b[::2].copy_(b[1::2])
b = torch.arange(12.).reshape(3, 4) ;; b.t().add_(b.t())
b = torch.arange(12.).reshape(3, 4) ;; b[:, :2].add_(b[:, 2:])
b = torch.arange(12.).reshape(3, 4) ;; b[1:].sub_(b[:2])
e = torch.zeros(4).expand(2, 4) ;; e.add_(1)
e = torch.zeros(4).expand(2, 4) ;; e.copy_(torch.ones(2, 4))
e = torch.zeros(1, 4).expand(3, 4) ;; e.mul_(2)
e = torch.zeros(4).expand(2, 4) ;; e.clamp_(0, 1)
b = torch.arange(5.) ;; b[1:].clamp_(min=b[:-1])
b = torch.arange(5.) ;; torch.add(b[1:], b[:-1], out=b[1:])
""")


@pytest.mark.parametrize("setup,expr", CASES, ids=[f"{s} ;; {e}"[:70] for s, e in CASES])
def test_overlap_rules_vs_torch(torch, setup, expr):
    same(torch, setup, expr + " if True else None")


def test_overlap_with_gaps_reads_the_inputs_as_they_were():
    # (torch cannot tell whether such layouts overlap and runs its kernel over the shared memory, so its result
    #  depends on the kernel's order; tapegrad reads every input before it writes)
    b = tapegrad.arange(6.)
    b[::2].add_(b[:3])
    assert b.tolist() == [0.0, 1.0, 3.0, 3.0, 6.0, 5.0]


def test_writing_a_row_of_an_expanded_tensor_writes_the_shared_memory():
    # (as torch: expand's read-only NumPy view is written through an alias; tests/autograd/test_view_semantics.py)
    base = tapegrad.zeros(4)
    e = base.expand(2, 4)
    e[0].add_(1)
    assert base.tolist() == [1.0] * 4 and e.tolist() == [[1.0] * 4] * 2
