"""nn.utils.rnn (padding and packing) and the recurrent layers on packed sequences, vs torch (float64)."""

import numpy as np
import pytest

import tapegrad
from nn._oracle import flat, np_of


def _seqs(lib, lengths, feat=3, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((n, feat)) for n in lengths]
    return [lib.tensor(a, requires_grad=True) for a in arrays]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(torch, batch_first, side):
    t, g = _seqs(torch, [2, 4, 1]), _seqs(tapegrad, [2, 4, 1])
    tp = torch.nn.utils.rnn.pad_sequence(t, batch_first=batch_first, padding_value=-1.0, padding_side=side)
    gp = tapegrad.nn.utils.rnn.pad_sequence(g, batch_first=batch_first, padding_value=-1.0, padding_side=side)
    np.testing.assert_array_equal(np_of(gp), np_of(tp))
    w = np.arange(tp.numel(), dtype=np.float64).reshape(tuple(tp.shape))
    (tp * torch.tensor(w)).sum().backward()
    (gp * tapegrad.tensor(w)).sum().backward()
    for a, b in zip(g, t):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


@pytest.mark.parametrize("lengths,enforce_sorted", [([4, 2, 2, 1], True), ([2, 4, 1, 4], False)])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_and_unpack(torch, lengths, enforce_sorted, batch_first):
    T = torch.nn.utils.rnn
    G = tapegrad.nn.utils.rnn
    t, g = _seqs(torch, lengths), _seqs(tapegrad, lengths)
    tpk = T.pack_padded_sequence(T.pad_sequence(t, batch_first), torch.tensor(lengths), batch_first, enforce_sorted)
    gpk = G.pack_padded_sequence(G.pad_sequence(g, batch_first), lengths, batch_first, enforce_sorted)
    for a, b in zip(gpk, tpk):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_array_equal(np_of(a), np_of(b))
    tpad, tlen = T.pad_packed_sequence(tpk, batch_first, padding_value=0.5, total_length=5)
    gpad, glen = G.pad_packed_sequence(gpk, batch_first, padding_value=0.5, total_length=5)
    np.testing.assert_array_equal(np_of(gpad), np_of(tpad))
    np.testing.assert_array_equal(glen.numpy(), tlen.numpy())
    assert [tuple(x.shape) for x in G.unpack_sequence(gpk)] == [tuple(x.shape) for x in T.unpack_sequence(tpk)]
    gs = G.pack_sequence(g, enforce_sorted=enforce_sorted)
    np.testing.assert_array_equal(gs.batch_sizes.numpy(), tpk.batch_sizes.numpy())


def test_pack_errors(torch):
    for lib in (torch, tapegrad):
        with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
            lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(3, 2, 1), lib.tensor([1, 3]))


@pytest.mark.parametrize("make,states", [
    (lambda nn: nn.GRU(3, 4), None),
    (lambda nn: nn.RNN(3, 4, num_layers=2, bidirectional=True), None),
    (lambda nn: nn.LSTM(3, 4, num_layers=2, bidirectional=True), None),
    (lambda nn: nn.LSTM(3, 4), "lstm"),
    (lambda nn: nn.GRU(3, 4, bidirectional=True), "h"),
])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_rnn_on_packed_sequences(torch, make, states, enforce_sorted):
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    results = []
    ref_state = {}
    for lib in (torch, tapegrad):
        lib.manual_seed(0)
        m = make(lib.nn).double()
        if lib is tapegrad:
            m.load_state_dict({k: v.detach().numpy() for k, v in ref_state.items()})
        else:
            ref_state.update(m.state_dict())
        seqs = _seqs(lib, lengths)
        R = lib.nn.utils.rnn
        packed = R.pack_padded_sequence(R.pad_sequence(seqs), lengths, enforce_sorted=enforce_sorted)
        nd = 2 if m.bidirectional else 1
        rng = np.random.default_rng(7)
        h0 = lib.tensor(rng.standard_normal((m.num_layers * nd, 4, 4)), requires_grad=True)
        c0 = lib.tensor(rng.standard_normal((m.num_layers * nd, 4, 4)), requires_grad=True)
        hx = (h0, c0) if states == "lstm" else h0 if states == "h" else None
        out, hn = m(packed, hx)
        padded, _ = R.pad_packed_sequence(out, batch_first=True)
        outs = [padded] + flat(hn)
        loss = sum((o * lib.tensor(np.cos(np.arange(o.numel())).reshape(tuple(o.shape)))).sum() for o in outs)
        loss.backward()
        grads = [s.grad for s in seqs] + ([h0.grad] if states else []) + ([c0.grad] if states == "lstm" else [])
        results.append((outs, grads, [p.grad for _, p in m.named_parameters()], out))
    (to, tg_, tpg, tpk), (go, gg, gpg, gpk) = results
    for a, b in zip(go + gg + gpg, to + tg_ + tpg):
        np.testing.assert_allclose(np_of(a), np_of(b), rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(gpk.batch_sizes.numpy(), tpk.batch_sizes.numpy())


@pytest.mark.parametrize("perm", [[2, 0, 1], [0], [3, 1, 0, 2], []])
def test_invert_permutation(torch, perm):
    t = torch.nn.utils.rnn.invert_permutation(torch.tensor(perm, dtype=torch.int64))
    g = tapegrad.nn.utils.rnn.invert_permutation(tapegrad.tensor(perm, dtype=tapegrad.int64))
    assert g.dtype == tapegrad.int64 and g.tolist() == t.tolist()
    assert tapegrad.nn.utils.rnn.invert_permutation(None) is None
    assert "invert_permutation" in tapegrad.nn.utils.rnn.__all__


def test_invert_permutation_out_of_range_fails_as_torch(torch):
    with pytest.raises(RuntimeError) as te:
        torch.nn.utils.rnn.invert_permutation(torch.tensor([3, 0, 1]))
    with pytest.raises(RuntimeError) as ge:
        tapegrad.nn.utils.rnn.invert_permutation(tapegrad.tensor([3, 0, 1]))
    assert str(ge.value) == str(te.value)


def test_packed_sequence_constructors_and_conversions(torch):
    """The forms torch accepts: ``(data, batch_sizes, sorted_indices)`` fills ``unsorted_indices``,
    ``((data, batch_sizes))`` as one tuple; the dtype methods convert ``data`` only."""
    out = []
    for lib in (torch, tapegrad):
        R = lib.nn.utils.rnn
        p = R.pack_sequence([lib.ones(2, 2), lib.ones(3, 2), lib.ones(1, 2)], enforce_sorted=False)
        q = R.PackedSequence(p.data, p.batch_sizes, p.sorted_indices)
        r = R.PackedSequence((p.data, p.batch_sizes))
        conv = [str(getattr(p, m)().data.dtype).split(".")[1] for m in
                ("double", "float", "half", "long", "int", "short", "char", "byte")]
        out.append((q.unsorted_indices.tolist(), r.batch_sizes.tolist(), r.sorted_indices, conv,
                    p.cpu() is p, p.to(lib.float32) is p, p.long().sorted_indices.tolist(), p.is_cuda, p.is_pinned()))
        with pytest.raises(AssertionError, match="Expected data to be a list or tuple of length 2"):
            R.PackedSequence(p.data)
    assert out[0] == out[1]
