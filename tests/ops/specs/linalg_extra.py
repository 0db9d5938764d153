"""Specs of the linear-algebra ops loaded on first use: the LU family, the general eigendecomposition, Householder
products, vander / tensorinv / tensorsolve, torch's older norms and solvers, and the randomized low-rank SVD.

Matrices are well-conditioned (``2 I + noise``), so pivots stay put under gradcheck's perturbations. Eigenvectors
are defined up to a phase each: ``linalg.eig`` compares them with the first row made real and positive (a
phase-invariant function, so its gradients are well defined, as torch's own tests do). The low-rank SVDs draw
random matrices (NumPy's stream, not torch's): their values are compared on exactly low-rank inputs, their
gradients by gradcheck in tests/ops/test_new_ops_linalg_signal.py.
"""

import numpy as np

from ops.op_db import OpSpec, S, noncontig, randn


def wc(r, *shape):
    """Well-conditioned (..., m, n): the identity's first m x n block times 2, plus noise."""
    m, n = shape[-2:]
    return 2 * np.eye(m, n) + 0.4 * r.standard_normal(shape)


def _phase_fixed(res):
    w, v = res
    head = v[..., :1, :]
    return w, v * (head.conj() / head.abs())


def _lu_samples(r):
    return [S(wc(r, 3, 3)), S(wc(r, 2, 4, 4), name="batched"), S(wc(r, 3, 5), name="wide"),
            S(wc(r, 5, 3), name="tall"), S(noncontig(wc(r, 3, 3)), name="noncontig"),
            S(np.array([[0.1, 2.0], [3.0, 0.5]]), name="pivoted")]


DEPRECATED = "deprecated"

SPECS = [
    OpSpec("linalg.lu_factor", lambda m, x: m.linalg.lu_factor(x), _lu_samples, complex=True),
    OpSpec("linalg.lu_factor_ex", lambda m, x: m.linalg.lu_factor_ex(x), _lu_samples),
    OpSpec("linalg.lu", lambda m, x: m.linalg.lu(x), _lu_samples, complex=True),
    OpSpec("linalg.lu_solve", lambda m, x, b, **k: m.linalg.lu_solve(*m.linalg.lu_factor(x), b, **k), lambda r: [
        S(wc(r, 3, 3), randn(r, 3, 2)), S(wc(r, 2, 3, 3), randn(r, 2, 3, 1), name="batched"),
        S(wc(r, 3, 3), randn(r, 2, 3), left=False, name="right"),
        S(wc(r, 3, 3), randn(r, 3, 2), adjoint=True, name="adjoint"),
        S(wc(r, 3, 3), randn(r, 2, 3), left=False, adjoint=True, name="right_adjoint")],
        check_grad_fn=False, complex=True, notes="a composition (unpack, two triangular solves): torch's node is one "
                                   "LinalgLuSolveBackward0"),
    OpSpec("lu_unpack", lambda m, x: m.lu_unpack(*m.linalg.lu_factor(x)), lambda r: [
        S(wc(r, 3, 3)), S(wc(r, 2, 3, 4), name="wide"), S(wc(r, 4, 2), name="tall")], check_grad_fn=False),
    OpSpec("lu", lambda m, x, **k: m.lu(x, **k), lambda r: [S(wc(r, 3, 3)), S(wc(r, 3, 3), get_infos=True,
                                                                              name="infos")],
           warns=DEPRECATED),
    OpSpec("lu_solve", lambda m, b, x: m.lu_solve(b, *m.linalg.lu_factor(x)), lambda r: [
        S(randn(r, 3, 2), wc(r, 3, 3))], check_grad_fn=False, warns=DEPRECATED),
    OpSpec("triangular_solve", lambda m, b, a, *k: m.triangular_solve(b, a.triu(), *k), lambda r: [
        S(randn(r, 3, 2), wc(r, 3, 3)), S(randn(r, 3, 2), wc(r, 3, 3), True, True, name="transpose"),
        S(randn(r, 2, 3, 1), wc(r, 3, 3), True, False, True, name="unit_batched")],
        check_grad_fn=False, warns=DEPRECATED,
        extra={"fwd_torch": "torch 2.13's forward AD of triangular_solve with transpose=True or unitriangular=True "
                            "disagrees with central finite differences (tapegrad's agrees)"}),
    OpSpec("linalg.ldl_factor", lambda m, x, **k: m.linalg.ldl_factor(x + x.mT, **k), lambda r: [
        S(randn(r, 4, 4)), S(randn(r, 2, 3, 3), name="batched"), S(np.array([[0.0, 1.0], [1.0, 0.0]]),
                                                                    name="two_by_two_pivot"),
        S(randn(r, 3, 3), hermitian=True, name="hermitian")], grad=False,
        notes="torch gives the LDL functions no derivative"),
    OpSpec("linalg.ldl_factor_ex", lambda m, x: m.linalg.ldl_factor_ex(x + x.mT), lambda r: [
        S(randn(r, 4, 4)), S(np.zeros((2, 2)), name="singular")], grad=False),
    OpSpec("linalg.ldl_solve", lambda m, x, b: m.linalg.ldl_solve(*m.linalg.ldl_factor(x + x.mT), b), lambda r: [
        S(randn(r, 4, 4), randn(r, 4, 2)), S(randn(r, 2, 3, 3), randn(r, 3, 1), name="batched_bcast")],
        grad=False),
    OpSpec("linalg.eig", lambda m, x: m.linalg.eig(x), lambda r: [
        S(wc(r, 3, 3)), S(wc(r, 2, 3, 3), name="batched"), S(np.array([[1.0, -2.0], [3.0, 0.5]]), name="complex_pair")],
        output_process=_phase_fixed, atol=1e-6, rtol=1e-5, complex=True),
    OpSpec("linalg.eigvals", lambda m, x: m.linalg.eigvals(x), lambda r: [
        S(wc(r, 3, 3)), S(np.array([[1.0, -2.0], [3.0, 0.5]]), name="complex_pair")], atol=1e-6, rtol=1e-5,
        complex=True),
    OpSpec("linalg.householder_product", lambda m, a, t: m.linalg.householder_product(a, t), lambda r: [
        S(randn(r, 4, 3), randn(r, 3)), S(randn(r, 4, 3), randn(r, 2), name="fewer_tau"),
        S(randn(r, 2, 3, 3), randn(r, 2, 3), name="batched")], check_grad_fn=False, complex=True),
    OpSpec("orgqr", lambda m, a, t: m.orgqr(a, t), lambda r: [S(randn(r, 4, 3), randn(r, 3))], check_grad_fn=False),
    OpSpec("ormqr", lambda m, a, t, c, *k: m.ormqr(a, t, c, *k), lambda r: [
        S(randn(r, 4, 3), randn(r, 3), randn(r, 4, 2)), S(randn(r, 4, 3), randn(r, 3), randn(r, 4, 2), True, True,
                                                         name="transpose"),
        S(randn(r, 4, 3), randn(r, 3), randn(r, 2, 4), False, False, name="right")], check_grad_fn=False),
    OpSpec("geqrf", lambda m, x: m.geqrf(x), lambda r: [S(randn(r, 4, 3)), S(randn(r, 2, 3, 4), name="wide")],
           grad=False, notes="torch gives geqrf no derivative"),
    OpSpec("linalg.vander", lambda m, x, **k: m.linalg.vander(x, **k), lambda r: [
        S(randn(r, 4)), S(randn(r, 2, 3), N=5, name="N"), S(np.array([1, 2, 3]), name="int")],
        check_grad_fn=False),
    OpSpec("linalg.tensorinv", lambda m, x, **k: m.linalg.tensorinv(x, **k), lambda r: [
        S(wc(r, 6, 6).reshape(6, 2, 3), ind=1), S(wc(r, 4, 4).reshape(2, 2, 2, 2), name="ind2")],
        check_grad_fn=False),
    OpSpec("linalg.tensorsolve", lambda m, a, b, **k: m.linalg.tensorsolve(a, b, **k), lambda r: [
        S(wc(r, 6, 6).reshape(2, 3, 6), randn(r, 2, 3)),
        S(wc(r, 6, 6).reshape(6, 2, 3), randn(r, 2, 3), dims=(0,), name="dims")], check_grad_fn=False),
    OpSpec("nuclear_norm", lambda m, x, *a: m.nuclear_norm(x, *a), lambda r: [
        S(randn(r, 3, 3)), S(randn(r, 2, 3, 4), (1, 2), True, name="dims")], check_grad_fn=False,
        warns=DEPRECATED),
    OpSpec("frobenius_norm", lambda m, x, *a: m.frobenius_norm(x, *a), lambda r: [
        S(randn(r, 3, 3), (0, 1)), S(randn(r, 2, 3, 4), 1, True, name="dim")], check_grad_fn=False,
        warns=DEPRECATED),
    OpSpec("svd_lowrank", lambda m, x, **k: m.svd_lowrank(x, **k)[1][:2], lambda r: [
        S(randn(r, 6, 2) @ randn(r, 2, 4), q=3), S(randn(r, 4, 2) @ randn(r, 2, 7), q=2, name="wide")],
        grad=False, float32=False, atol=1e-6, notes="randomized (NumPy's stream): singular values of exactly "
                                                    "low-rank inputs compared; gradients by gradcheck"),
    OpSpec("lobpcg", lambda m, a, **k: m.lobpcg(a @ a.mT + m.eye(a.shape[0], dtype=a.dtype), **k), lambda r: [
        S(randn(r, 7, 7), k=2), S(randn(r, 7, 7), k=2, largest=False, name="smallest")],
        output_process=lambda res: (res[0], res[1].abs()), check_grad_fn=False, float32=False, atol=1e-6,
        rtol=1e-5, notes="the eigenpairs LOBPCG converges to, by a dense eigendecomposition (torch's iteration "
                         "agrees to its tolerance)",
        extra={"fwd_torch": "torch 2.13's forward AD of lobpcg differentiates its iteration: tangents off by ~1e-5 "
                            "(tapegrad's agree with central finite differences)"}),
    OpSpec("pca_lowrank", lambda m, x, **k: m.pca_lowrank(x, **k)[1][:2], lambda r: [
        S(randn(r, 6, 2) @ randn(r, 2, 4), q=3)], grad=False, float32=False, atol=1e-6,
        notes="randomized: as svd_lowrank"),
]
