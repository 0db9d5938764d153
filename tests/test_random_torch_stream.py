"""tapegrad's random numbers are torch's: after ``manual_seed(s)`` (or ``Generator().manual_seed(s)``) the same
random ops give the same values as torch 2.13's CPU build, bitwise (float32 normals of the 16-at-a-time path
too: tapegrad reproduces the vectorised log/sin/cos torch computes them with). Only values that other code
computes from the draws (LAPACK's QR, a float32 log) are compared with a tolerance.

Each case runs the same function with ``T`` = torch and ``T`` = tapegrad from the same seed and compares all the
tensors it returns."""

import numpy as np
import pytest

import tapegrad

SEEDS = (0, 1, 2 ** 40 + 3)
SIZES = (0, 1, 15, 16, 17, 33, 1000)


def _arrays(out):
    out = out if isinstance(out, (list, tuple)) else [out]
    res = []
    for t in out:
        t = t.detach() if hasattr(t, "detach") else t
        if hasattr(t, "is_complex") and t.is_complex():
            t = t.resolve_conj() if hasattr(t, "resolve_conj") else t
        res.append(np.asarray(t.numpy() if hasattr(t, "numpy") else t))
    return res


def run(torch, fn, seed=0):
    """fn(torch) and fn(tapegrad), each after its own manual_seed(seed): the lists of arrays."""
    torch.manual_seed(seed)
    expected = _arrays(fn(torch))
    tapegrad.manual_seed(seed)
    got = _arrays(fn(tapegrad))
    assert len(expected) == len(got)
    return expected, got


def same(torch, fn, seed=0, atol=None):
    """Bitwise, or (``atol``: values computed from the draws by other code, LAPACK's QR, a float32 log) within
    ``atol`` plus 1e-5 relative."""
    expected, got = run(torch, fn, seed)
    for e, g in zip(expected, got):
        assert e.shape == g.shape and e.dtype == g.dtype, (e.shape, g.shape, e.dtype, g.dtype)
        if atol is not None:
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=atol)
        else:
            np.testing.assert_array_equal(g, e)


# --- the generator ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS + (-1, 2 ** 64 - 5))
def test_state_is_torchs(torch, seed):
    """After seeding, and after draws that leave a cached normal, the state tensor is torch's byte for byte."""
    def states(T):
        T.manual_seed(seed)
        out = [T.get_rng_state()]
        T.rand(5)
        out.append(T.get_rng_state())
        T.randn(3, dtype=T.float64)        # three normals of the element path: the fourth waits on the generator
        out.append(T.get_rng_state())
        T.randperm(700)                    # past the twister's 624 words
        out.append(T.get_rng_state())
        return out
    same(torch, states)


def test_states_move_between_torch_and_tapegrad(torch):
    torch.manual_seed(3)
    torch.randn(5, dtype=torch.float64)
    tapegrad.set_rng_state(tapegrad.tensor(torch.get_rng_state().numpy()))
    np.testing.assert_array_equal(tapegrad.randn(7, dtype=tapegrad.float64).numpy(),
                                  torch.randn(7, dtype=torch.float64).numpy())
    tapegrad.manual_seed(9)
    tapegrad.rand(11)
    torch.set_rng_state(torch.tensor(tapegrad.get_rng_state().numpy()))
    np.testing.assert_array_equal(tapegrad.rand(40).numpy(), torch.rand(40).numpy())


def test_generator_objects_are_independent_streams(torch):
    def draws(T):
        g = T.Generator().manual_seed(5)
        h = T.Generator()                  # unseeded: torch's default seed of a new Generator
        return [T.rand(4, generator=g), T.randn(20), T.randn(3, generator=g, dtype=T.float64), T.rand(3),
                T.randint(0, 7, (5,), generator=h), T.randperm(9, generator=g), T.randn(2, generator=g),
                T.empty(30).normal_(generator=h), T.empty(6).uniform_(-1, 2, generator=g)]
    same(torch, draws)
    assert tapegrad.Generator().initial_seed() == torch.Generator().initial_seed()


# --- uniform ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64", "complex128"])
def test_rand(torch, seed, dtype):
    same(torch, lambda T: [T.rand(n, dtype=getattr(T, dtype)) for n in SIZES] + [T.rand(3, 5, 2)], seed)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("bounds", [(-0.37, 1.9), (1.0, 1.001), (0.1, 0.1000001), (-1e-3, 7.7), (-5.0, -4.0)])
def test_uniform_(torch, dtype, bounds):
    """The bounds and their difference in the tensor's dtype, float64 fused multiply-add, and a result that
    rounds to the upper bound turned into the lower one."""
    same(torch, lambda T: T.empty(5000, dtype=getattr(T, dtype)).uniform_(*bounds))


# --- normal ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_randn_float64(torch, seed):
    same(torch, lambda T: [T.randn(n, dtype=T.float64) for n in SIZES] + [T.randn(4, 8, dtype=T.float64)], seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_randn_float32(torch, seed):
    """Both paths: element by element (fewer than 16) and torch's vectorised kernel (16 or more, 100003 for many
    blocks and a redone tail)."""
    same(torch, lambda T: [T.randn(n) for n in SIZES + (100003,)] + [T.randn(5, 7)], seed)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_mean_std_and_views(torch, dtype):
    """normal_'s mean and std (a fused multiply-add in float64); non-contiguous tensors draw element by element in
    memory order."""
    def draws(T):
        d = getattr(T, dtype)
        return [T.empty(40, dtype=d).normal_(0.3, 0.02), T.empty(7, dtype=d).normal_(-2.0, 3.0),
                T.empty(6, 5, dtype=d).t().normal_(), T.empty(6, 5, dtype=d)[:, :3].normal_(1.0, 2.0),
                T.empty(4, 9, dtype=d).t().uniform_(-2, 2), T.randn(5, dtype=d)]
    same(torch, draws)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("n", [3, 20, 33])
def test_complex_normal_and_uniform_fill_both_parts(torch, dtype, n):
    """normal_ on a complex tensor draws each part with std / sqrt(2) around the mean (torch's view_as_real
    draw); uniform_ draws both parts in [from, to); a transposed tensor fills in memory order."""
    same(torch, lambda T: T.empty(n, dtype=getattr(T, dtype)).normal_(2, 3))
    same(torch, lambda T: T.empty(n, dtype=getattr(T, dtype)).uniform_(1, 2))
    same(torch, lambda T: T.zeros(4, n, dtype=getattr(T, dtype)).t().normal_())


@pytest.mark.parametrize("make", ["t", "permute", "slice"])
def test_random_like_ops_keep_the_input_layout_and_draw_in_memory_order(torch, make):
    """rand_like / randn_like / randint_like are empty_like (the input's strides) filled in memory order, as in
    torch: a transposed input gives a transposed result with torch's numbers."""
    def base(T):
        x = T.zeros(4, 3, 5)
        return {"t": x[0].t(), "permute": x.permute(2, 0, 1), "slice": x[:, ::2]}[make]

    def draws(T):
        x = base(T)
        out = [T.rand_like(x), T.randn_like(x), T.randint_like(x, 3, 9), T.randn_like(x, dtype=T.float64),
               T.rand_like(x, memory_format=T.contiguous_format)]
        return out + [T.tensor([list(o.stride()) for o in out])]
    same(torch, draws)


def test_normal_with_tensors(torch):
    def draws(T):
        return [T.normal(T.arange(20.0), T.ones(20) * 0.3), T.normal(T.arange(5.0, dtype=T.float64), 2.0),
                T.normal(1.5, T.full((30,), 0.5, dtype=T.float64)), T.normal(0.0, 1.0, size=(3, 2)),
                T.normal(T.zeros(4, 5, dtype=T.float64), T.ones(5, dtype=T.float64))]
    same(torch, draws)


def test_interleaved_draws_share_the_cached_normal(torch):
    """The element path's second normal waits on the generator: calls of odd sizes use it next time, whatever
    comes between (other draws do not clear it; manual_seed does)."""
    def draws(T):
        out = [T.randn(3, dtype=T.float64), T.rand(2), T.randn(1, dtype=T.float64), T.randn(5),
               T.randint(0, 5, (3,)), T.randn(1), T.randn(16, dtype=T.float64), T.randn(2, dtype=T.float64)]
        T.randn(1)
        T.manual_seed(4)
        return out + [T.randn(2, dtype=T.float64)]
    same(torch, draws)


# --- integers --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_randint_and_random_(torch, seed):
    def draws(T):
        return [T.randint(3, 1000, (20,)), T.randint(0, 2 ** 40, (9,)), T.randint(-5, 5, (3, 4), dtype=T.int32),
                T.randint(10, (0,)), T.randint(2 ** 32, (4,)), T.randint(-2 ** 63, 2 ** 63 - 1, (3,)),
                T.empty(9, dtype=T.int32).random_(-5, 100), T.empty(9).random_(10),
                T.empty(7, 3, dtype=T.int64).t().random_(0, 50), T.empty(4, dtype=T.int64).random_(-3, None),
                T.empty(4, dtype=T.int8).random_(5, None), T.empty(4).random_(5, None)]
    same(torch, draws, seed)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool", "float32", "float64",
                                   "float16"])
def test_random_full_range(torch, dtype):
    same(torch, lambda T: T.empty(50, dtype=getattr(T, dtype)).random_())


@pytest.mark.parametrize("seed", SEEDS)
def test_randperm(torch, seed):
    same(torch, lambda T: [T.randperm(n) for n in (0, 1, 2, 10, 1000)] + [T.randperm(7, dtype=T.int32)], seed)


# --- Bernoulli and dropout ------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_bernoulli(torch, seed):
    def draws(T):
        return [T.empty(300).bernoulli_(0.3), T.empty(40, dtype=T.float64).bernoulli_(0.8),
                T.empty(20, dtype=T.int64).bernoulli_(0.5), T.empty(20, dtype=T.bool).bernoulli_(0.5),
                T.bernoulli(T.rand(40)), T.bernoulli(T.rand(40, dtype=T.float64)),
                T.empty(30).bernoulli_(T.rand(30)), T.empty(30, dtype=T.float64).bernoulli_(T.rand(30)),
                T.empty(30).bernoulli_(T.rand(30, dtype=T.float64)),
                T.bernoulli(T.ones(5), 0.25), T.empty(6, 4).t().bernoulli_(0.5)]
    same(torch, draws, seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_dropouts(torch, seed):
    def draws(T):
        F = T.nn.functional
        x = T.arange(60.0).reshape(2, 3, 10) / 7
        return [F.dropout(x, 0.3), F.dropout(x, 0.5, training=True), F.alpha_dropout(x, 0.2, True),
                F.dropout1d(x, 0.4), F.dropout2d(x.reshape(2, 3, 2, 5), 0.4),
                F.dropout3d(x.reshape(2, 3, 1, 2, 5), 0.4), F.feature_alpha_dropout(x, 0.3, True),
                T.nn.Dropout(0.1)(x.double()), F.dropout(x.clone(), 0.6, inplace=True)]
    same(torch, draws, seed)


@pytest.mark.parametrize("make", ["t", "permute", "slice"])
def test_dropout_masks_follow_a_strided_input_and_bernoulli_results_are_contiguous(torch, make):
    """torch's dropout draws its mask into empty_like(input) (the input's strides, memory order), so a transposed
    input gets torch's mask only when drawn in memory order; torch.bernoulli(x) / bernoulli(x, p) make a fresh
    contiguous result whose draws go in index order whatever x's layout. Strides compared too."""
    def base(T):
        x = T.arange(120.0).reshape(4, 6, 5) / 50 + 0.1
        return {"t": x[0].t(), "permute": x.permute(2, 0, 1), "slice": x[:, ::2]}[make]

    def draws(T):
        F = T.nn.functional
        x = base(T)
        out = [F.dropout(x, 0.3), F.alpha_dropout(x, 0.2, True), F.dropout(x.clone(), 0.4, inplace=True),
               F.dropout1d(x, 0.5), F.feature_alpha_dropout(x, 0.3, True), T.bernoulli(x.clamp(0, 1)),
               T.bernoulli(x, 0.3), x.bernoulli(0.6)]
        strided = out[:3] + out[5:]       # (feature noise is broadcast: the product's layout is the binary ops')
        return out + [T.tensor([list(o.stride()) for o in strided])]
    same(torch, draws)


# --- other samplers -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_continuous_fills(torch, dtype):
    def draws(T):
        d = getattr(T, dtype)
        return [T.empty(200, dtype=d).exponential_(2.5), T.empty(5, 7, dtype=d).t().exponential_(),
                T.empty(200, dtype=d).cauchy_(0.5, 2.0), T.empty(200, dtype=d).log_normal_(0.5, 0.3),
                T.empty(200, dtype=d).geometric_(0.3), T.empty(20, dtype=T.int64).geometric_(0.7)]
    same(torch, draws)


def test_poisson_and_binomial_then_more_draws(torch):
    """Element-by-element samplers leave the generator just after the words they used."""
    rs = np.random.RandomState(3)
    rates, counts, probs = rs.rand(200) * 30, np.floor(rs.rand(300) * 300), rs.rand(300)
    probs[:3] = (0.0, 1.0, 0.5)
    same(torch, lambda T: [T.poisson(T.tensor(rates)), T.poisson(T.tensor(rates, dtype=T.float32)), T.rand(5),
                           T.binomial(T.tensor(counts), T.tensor(probs)), T.randn(3, dtype=T.float64),
                           T.binomial(T.tensor(counts, dtype=T.float32), T.tensor(probs, dtype=T.float32))])


def test_multinomial(torch):
    w = np.random.RandomState(1).rand(4, 30).astype(np.float32)
    w[:, 3] = 0

    def draws(T):
        x = T.tensor(w)
        return [T.multinomial(x, 1), T.multinomial(x, 5), T.multinomial(x, 30, True), T.multinomial(x[0], 3, True),
                T.multinomial(x[1].double(), 4), T.multinomial(x.double(), 7, replacement=True)]
    same(torch, draws)


def test_multinomial_one_sample_with_replacement(torch):
    """One sample with replacement is torch's fast path (w / E, E exponential, drawn in the input's memory order),
    not the inverse CDF of several samples; Categorical.sample() draws it, as a policy picking an action does."""
    w = np.random.RandomState(4).rand(5, 6) ** 3
    w[2, 1] = 0

    def draws(T):
        x = T.tensor(w, dtype=T.float32)
        p = T.softmax(T.tensor(w[0, :2], dtype=T.float32), 0)
        return [T.multinomial(x, 1, True), T.multinomial(x.t(), 1, replacement=True), T.multinomial(x[0], 1, True),
                T.multinomial(x.double(), 1, True), T.multinomial(x.half(), 1, True), T.multinomial(x.t(), 4),
                T.multinomial(x.half(), 5, True), T.multinomial(x.bfloat16(), 5, True),
                T.stack([T.distributions.Categorical(p).sample() for _ in range(30)]),
                T.distributions.Categorical(logits=x).sample(), T.distributions.Categorical(probs=x).sample((3,))]
    for seed in SEEDS:
        same(torch, draws, seed)


def test_rrelu_and_gumbel_softmax(torch):
    x = np.random.RandomState(2).randn(6, 10)

    def draws(T):
        F = T.nn.functional
        return [F.rrelu(T.tensor(x, dtype=T.float32), training=True), F.rrelu(T.tensor(x), 0.1, 0.2, True)]
    same(torch, draws)
    same(torch, lambda T: T.nn.functional.gumbel_softmax(T.tensor(x, dtype=T.float32), tau=0.5), atol=0)


@pytest.mark.parametrize("name, args", [
    ("Normal", ([0.5, 1.0], [2.0, 0.1])), ("Uniform", ([0.0, 1.0], [2.0, 1.5])), ("Bernoulli", ([0.3, 0.9],)),
    ("Categorical", ([[0.2, 0.3, 0.5], [0.9, 0.05, 0.05]],)), ("Cauchy", ([0.5, 1.0], [2.0, 0.1])),
    ("Exponential", ([0.5, 2.0],)), ("Geometric", ([0.3, 0.6],)),
    ("MultivariateNormal", ([0.0, 1.0], [[1.0, 0.3], [0.3, 2.0]]))])
def test_distribution_samples(torch, name, args):
    same(torch, lambda T: getattr(T.distributions, name)(*[T.tensor(a) for a in args]).sample((5,)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, args", [
    ("Gamma", ([3.0, 0.5, 0.01], [1.0, 2.0, 1.0])), ("Chi2", ([3.0, 0.5],)), ("StudentT", ([3.0, 5.0],)),
    ("FisherSnedecor", ([3.0, 5.0], [2.0, 7.0])), ("Dirichlet", ([[0.5, 2.0, 3.0]],)),
    ("Poisson", ([0.0, 0.5, 9.9, 10.0, 250.0],)), ("NegativeBinomial", ([3.0, 20.0], [0.3, 0.6])),
    ("Binomial", ([10.0, 50.0, 3.0], [0.3, 0.9, 0.05])),
    ("VonMises", ([0.5, -1.0, 2.0, 0.0], [0.3, 4.0, 50.0, 1e-6])),
    ("Beta", ([0.5, 2.0], [3.0, 0.7]))])
def test_gamma_poisson_binomial_samples(torch, dtype, name, args):
    """torch's gamma sampler (Marsaglia-Tsang, alpha < 1 boosted), Poisson sampler (PTRS from a rate of 10, a
    product of uniforms below) and binomial sampler (BTRS or geometric inversion), element by element; Dirichlet and Beta
    normalise float64 gammas in float64 in torch, in the dtype in tapegrad (a float32 ulp apart)."""
    normalised = name in ("Dirichlet", "Beta") and dtype == "float32"
    same(torch, lambda T: getattr(T.distributions, name)(*[T.tensor(a, dtype=getattr(T, dtype)) for a in args])
         .sample((40,)), atol=1e-7 if normalised else None)


def test_data_order(torch):
    """DataLoader's shuffle (RandomSampler seeded from the global generator), SubsetRandomSampler, random_split,
    WeightedRandomSampler."""
    def orders(T):
        data = T.utils.data
        g = T.Generator().manual_seed(3)
        return [np.concatenate([b.numpy() for b in data.DataLoader(T.arange(50), batch_size=8, shuffle=True)]),
                np.array(list(data.RandomSampler(range(20), replacement=True, num_samples=40))),
                np.array(list(data.RandomSampler(range(7), num_samples=17))),
                np.array(list(data.SubsetRandomSampler([5, 6, 7, 8, 9], generator=g))),
                np.array(data.random_split(range(12), [0.5, 0.5], generator=g)[0].indices),
                np.array(list(data.WeightedRandomSampler([0.1, 0.5, 2.0, 0.0, 1.0], 10))),
                np.array(list(data.WeightedRandomSampler([0.1, 0.5, 2.0, 0.0, 1.0], 3, replacement=False)))]
    same(torch, orders)


# --- nn.init and modules ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", ["xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
                                  "orthogonal_", "trunc_normal_", "uniform_", "normal_", "sparse_"])
def test_init_functions(torch, seed, name):
    extra = {"sparse_": (0.3,)}.get(name, ())
    same(torch, lambda T: [getattr(T.nn.init, name)(T.empty(20, 30), *extra),
                           getattr(T.nn.init, name)(T.empty(3, 5, dtype=T.float64), *extra)], seed,
         atol=1e-6 if name == "orthogonal_" else None)   # (QR: LAPACK's rounding)


@pytest.mark.parametrize("args", [(0.0, 1.0, -2.0, 2.0), (0.5, 0.2, 0.0, 0.1), (0.0, 1.0, 1.0, 3.0)])
def test_trunc_normal_both_samplers(torch, args):
    """Rejection by whole normal redraws (wide intervals) or uniform candidates (narrow ones), as torch."""
    same(torch, lambda T: [T.nn.init.trunc_normal_(T.empty(n), *args) for n in (6, 40, 1000)])


MODULES = [("Linear", (7, 5)), ("Linear", (3, 4, False)), ("Conv1d", (2, 3, 5)), ("Conv2d", (3, 4, 3)),
           ("Conv3d", (2, 2, 2)), ("ConvTranspose2d", (3, 2, 3)), ("Embedding", (10, 6)), ("EmbeddingBag", (10, 3)),
           ("LSTM", (4, 6)), ("GRU", (3, 4, 2)), ("RNN", (3, 5)), ("LSTMCell", (3, 4)), ("LayerNorm", (5,)),
           ("BatchNorm1d", (4,)), ("Bilinear", (3, 4, 5)), ("MultiheadAttention", (8, 2)), ("PReLU", ()),
           ("TransformerEncoderLayer", (8, 2, 16))]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name, args", MODULES)
def test_module_default_init(torch, seed, name, args):
    """Built after the same manual_seed, a module's parameters are torch's."""
    same(torch, lambda T: [p for _, p in sorted(getattr(T.nn, name)(*args).state_dict().items())], seed,
         )


def test_seeded_training_loop_prints_torchs_losses(torch):
    """Linear + Dropout + SGD from torch.manual_seed: the printed losses are torch's."""
    def losses(T):
        model = T.nn.Sequential(T.nn.Linear(6, 16), T.nn.ReLU(), T.nn.Dropout(0.2), T.nn.Linear(16, 1))
        opt = T.optim.SGD(model.parameters(), lr=0.1)
        x, y = T.rand(32, 6), T.rand(32, 1)
        out = []
        for _ in range(20):
            opt.zero_grad()
            loss = T.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            out.append(f"{loss.item():.6f}")
        return [np.array(out)]
    expected, got = run(torch, losses, seed=42)
    assert list(got[0]) == list(expected[0])


def test_lowrank_factorisations_draw_torchs_random_matrix(torch):
    """svd_lowrank/pca_lowrank of a full-rank matrix (the result depends on the random matrix) are torch's."""
    a = np.random.RandomState(0).randn(30, 20)

    def factors(T):
        out = []
        for x in (T.tensor(a), T.tensor(a.T), T.tensor(a, dtype=T.float32)):
            U, S, V = T.svd_lowrank(x, q=4)
            out += [S, U @ T.diag(S) @ V.mT]
        return out + [T.pca_lowrank(T.tensor(a), q=3)[1]]
    same(torch, factors, atol=1e-5)


def test_vmap_randomness_draws_torchs_numbers(torch):
    """randomness="different" draws one batch-shaped sample, "same" one sample for all: torch's numbers."""
    def draws(T):
        vmap = T.func.vmap
        return [vmap(lambda x: x + T.rand(3), randomness="different")(T.ones(4, 3)),
                vmap(lambda x: x * T.randn(20), randomness="same")(T.ones(2, 20)),
                vmap(lambda x: T.nn.functional.dropout(x, 0.5), randomness="different")(T.ones(3, 5)),
                vmap(lambda x: x + T.randn(3, dtype=T.float64), randomness="different")(T.ones(4, 3))]
    same(torch, draws)


def test_vmap_randomness_error_leaves_the_state(torch):
    """randomness="error" (the default) refuses a draw and leaves the generator as it was, as torch's."""
    def states(T):
        T.manual_seed(2)
        T.randn(3, dtype=T.float64)                   # (a cached normal is part of the state)
        before = T.get_rng_state()
        with pytest.raises(RuntimeError):
            T.func.vmap(lambda x: x + T.rand(3))(T.ones(4, 3))
        with pytest.raises(RuntimeError):
            T.func.vmap(lambda x: T.func.vmap(lambda y: y * T.randn(()))(x))(T.ones(2, 3))
        return [before, T.get_rng_state(), T.randn(5, dtype=T.float64)]
    same(torch, states)
