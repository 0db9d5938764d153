"""Specs of the linear algebra ops: the matmul family, einsum/tensordot, norms, and ``tapegrad.linalg``.

Matrices are well-conditioned (SPD ``A A^T + n I``, or ``2 I + noise``), so inverses and decompositions are
stable and, for eigh/svd, eigen/singular values are distinct. Eigenvectors and singular vectors are only defined
up to sign (a phase when complex), so those specs compare normalised outputs (first row made real and positive)
on both sides.
Symmetric-input ops (eigh, cholesky) are called on ``x + x^H`` so that gradcheck perturbs symmetrically (Hermitian
for the complex samples).
"""

import math

import numpy as np

from ops.op_db import OpSpec, S, noncontig, randn


def spd(r, *shape):
    """Symmetric positive-definite (..., n, n)."""
    a = r.standard_normal(shape)
    n = shape[-1]
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def wc(r, *shape):
    """Well-conditioned square (..., n, n): 2 I + noise."""
    return 2 * np.eye(shape[-1]) + 0.5 * r.standard_normal(shape)


def _pos_rows(v, rows=None):
    """Make each column's first entry real and positive (eigen/singular vectors are defined up to a sign, or a
    phase for complex ones)."""
    head = v[..., :1, :]
    return v * (head.conj() / head.abs())


def _svd_fix(res):
    u, s, vh = res
    k = s.shape[-1]
    u = u[..., :k]
    vh = vh[..., :k, :]
    head = u[..., :1, :]
    sg = head.conj() / head.abs()
    return u * sg, s, vh * sg.conj().transpose(-1, -2)


def _tsvd_fix(res):
    u, s, v = res
    return _svd_fix((u, s, v.mH))


def _sym(x):
    return x + x.mH        # (symmetric for real x, Hermitian for complex x)


SPECS = [
    # --- products --------------------------------------------------------------------------------------------
    OpSpec("linalg.matmul", lambda m, x, y: m.linalg.matmul(x, y), lambda r: [
        S(randn(r, 2, 3), randn(r, 3, 4)), S(randn(r, 2, 1, 2, 3), randn(r, 3, 3, 2), name="bcast"),
        S(randn(r, 3), randn(r, 2, 3, 2), name="vec_batched"), S(randn(r, 2, 2, 3), randn(r, 3), name="batched_vec"),
        S(noncontig(randn(r, 3, 3)), randn(r, 3, 0), name="empty")]),
    OpSpec("matmul_operator", lambda m, x, y: x @ y, lambda r: [S(randn(r, 2, 3), randn(r, 3, 4))]),
    OpSpec("mm", lambda m, x, y: m.mm(x, y), lambda r: [
        S(randn(r, 2, 3), randn(r, 3, 4)), S(noncontig(randn(r, 3, 3)), randn(r, 3, 2), name="noncontig"),
        S(randn(r, 0, 3), randn(r, 3, 2), name="empty")]),
    OpSpec("bmm", lambda m, x, y: m.bmm(x, y), lambda r: [S(randn(r, 2, 2, 3), randn(r, 2, 3, 4))]),
    OpSpec("mv", lambda m, x, y: m.mv(x, y), lambda r: [S(randn(r, 2, 3), randn(r, 3)),
                                                       S(noncontig(randn(r, 3, 3)), randn(r, 3), name="noncontig")]),
    OpSpec("dot", lambda m, x, y: m.dot(x, y), lambda r: [S(randn(r, 3), randn(r, 3)),
                                                         S(randn(r, 0), randn(r, 0), name="empty")]),
    OpSpec("vdot", lambda m, x, y: m.vdot(x, y), lambda r: [S(randn(r, 4), randn(r, 4))]),
    OpSpec("inner", lambda m, x, y: m.inner(x, y), lambda r: [
        S(randn(r, 3), randn(r, 3)), S(randn(r, 2, 3), randn(r, 4, 3), name="mat"),
        S(randn(r, 2, 2, 3), randn(r, 3), name="batch_vec"), S(randn(r), randn(r, 2), name="0d")]),
    OpSpec("outer", lambda m, x, y: m.outer(x, y), lambda r: [S(randn(r, 3), randn(r, 4))]),
    OpSpec("ger", lambda m, x, y: m.ger(x, y), lambda r: [S(randn(r, 2), randn(r, 3))]),
    OpSpec("addmm", lambda m, i, x, y, **kw: m.addmm(i, x, y, **kw), lambda r: [
        S(randn(r, 2, 4), randn(r, 2, 3), randn(r, 3, 4)), S(randn(r, 4), randn(r, 2, 3), randn(r, 3, 4), name="bcast"),
        S(randn(r, 2, 4), randn(r, 2, 3), randn(r, 3, 4), beta=0.5, alpha=2.0, name="beta_alpha"),
        S(randn(r, 2, 4), randn(r, 2, 3), randn(r, 3, 4), beta=0, name="beta0")],
        inplace=lambda x, a, b, **kw: x.addmm_(a, b, **kw)),
    OpSpec("addmv", lambda m, i, x, y, **kw: m.addmv(i, x, y, **kw), lambda r: [
        S(randn(r, 2), randn(r, 2, 3), randn(r, 3)), S(randn(r), randn(r, 2, 3), randn(r, 3), alpha=-1.5, name="0d")],
        inplace=lambda x, a, b, **kw: x.addmv_(a, b, **kw)),
    OpSpec("addr", lambda m, i, x, y, **kw: m.addr(i, x, y, **kw), lambda r: [
        S(randn(r, 2, 3), randn(r, 2), randn(r, 3)), S(randn(r, 3), randn(r, 2), randn(r, 3), beta=2.0, name="bcast")],
        inplace=lambda x, a, b, **kw: x.addr_(a, b, **kw)),
    OpSpec("baddbmm", lambda m, i, x, y, **kw: m.baddbmm(i, x, y, **kw), lambda r: [
        S(randn(r, 2, 2, 4), randn(r, 2, 2, 3), randn(r, 2, 3, 4)),
        S(randn(r, 1, 4), randn(r, 2, 2, 3), randn(r, 2, 3, 4), beta=0.5, alpha=0.25, name="bcast")],
        inplace=lambda x, a, b, **kw: x.baddbmm_(a, b, **kw)),
    OpSpec("addbmm", lambda m, i, x, y, **kw: m.addbmm(i, x, y, **kw), lambda r: [
        S(randn(r, 2, 4), randn(r, 3, 2, 3), randn(r, 3, 3, 4)),
        S(randn(r, 4), randn(r, 3, 2, 3), randn(r, 3, 3, 4), alpha=3.0, name="bcast")],
        inplace=lambda x, a, b, **kw: x.addbmm_(a, b, **kw)),
    OpSpec("einsum", lambda m, eq, *xs: m.einsum(eq, *xs), lambda r: [
        S("ij,jk->ik", randn(r, 2, 3), randn(r, 3, 4), name="mm"), S("ij,jk", randn(r, 2, 3), randn(r, 3, 2),
                                                                     name="implicit"),
        S("i,j->ij", randn(r, 3), randn(r, 2), name="outer"), S("ij->ji", randn(r, 2, 3), name="transpose"),
        S("ij->i", randn(r, 2, 3), name="rowsum"), S("ii->i", randn(r, 3, 3), name="diag"),
        S("ii", randn(r, 3, 3), name="trace"), S("bii->b", randn(r, 2, 3, 3), name="batch_trace"),
        S("...ij,...jk->...ik", randn(r, 2, 2, 3), randn(r, 3, 2), name="ellipsis_bcast"),
        S("bij,bjk->bik", randn(r, 2, 2, 3), randn(r, 1, 3, 2), name="size1_bcast"),
        S("ij,ij->i", randn(r, 2, 3), randn(r, 2, 3), name="rowdot"), S("i,i", randn(r, 3), randn(r, 3), name="dot"),
        S("ij,jk,kl->il", randn(r, 2, 3), randn(r, 3, 2), randn(r, 2, 2), name="chain"),
        S("ijk->", randn(r, 2, 1, 3), name="sum_all"), S("i,jk->ijk", randn(r, 2), randn(r, 2, 3), name="no_contract"),
        S("iij->j", randn(r, 2, 2, 3), name="diag_sum"), S("ij,j->ij", randn(r, 2, 3), randn(r, 3), name="scale"),
        S("ij->", randn(r, 0, 3), name="empty"), S("ii,i->i", randn(r, 3, 3), randn(r, 3), name="diag_mul"),
        S("...ii->...", randn(r, 2, 3, 3), name="ellipsis_trace"), S("bi,bj->bij", randn(r, 2, 3), randn(r, 1, 2),
                                                                     name="batch_outer_bcast")]),
    OpSpec("einsum_list", lambda m, eq, x, y: m.einsum(eq, [x, y]), lambda r: [
        S("bn,anm->bam", randn(r, 2, 3), randn(r, 2, 3, 2))]),
    OpSpec("einsum_sublist", lambda m, x, y: m.einsum(x, [0, 1], y, [1, 2], [0, 2]), lambda r: [
        S(randn(r, 2, 3), randn(r, 3, 4))]),
    OpSpec("tensordot", lambda m, x, y, **kw: m.tensordot(x, y, **kw), lambda r: [
        S(randn(r, 2, 3, 4), randn(r, 3, 4, 2)), S(randn(r, 2, 3), randn(r, 3, 2), dims=1, name="int1"),
        S(randn(r, 2, 3, 4), randn(r, 4, 2, 3), dims=([1, 2], [2, 0]), name="lists"),
        S(randn(r, 2), randn(r, 3), dims=0, name="outer")]),
    OpSpec("kron", lambda m, x, y: m.kron(x, y), lambda r: [
        S(randn(r, 2, 3), randn(r, 2, 2)), S(randn(r, 3), randn(r, 2), name="1d"),
        S(randn(r, 2, 2), randn(r, 3), name="mixed"), S(randn(r, 2, 1, 2), randn(r, 2, 2), name="3d")]),
    OpSpec("cross", lambda m, x, y, **kw: m.cross(x, y, **kw), lambda r: [
        S(randn(r, 2, 3), randn(r, 2, 3), dim=1), S(randn(r, 3, 2), randn(r, 3, 2), dim=0, name="dim0"),
        S(randn(r, 3, 3), randn(r, 3, 3), dim=-1, name="neg")], aliases=("axis",)),
    OpSpec("linalg.cross", lambda m, x, y, **kw: m.linalg.cross(x, y, **kw), lambda r: [
        S(randn(r, 2, 3), randn(r, 1, 3)), S(randn(r, 3, 2), randn(r, 3, 2), dim=0, name="dim0"),
        S(randn(r, 3), randn(r, 3), name="1d")], aliases=("axis",)),
    OpSpec("trace", lambda m, x: m.trace(x), lambda r: [S(randn(r, 3, 3)), S(randn(r, 2, 4), name="rect"),
                                                       S(noncontig(randn(r, 3, 3)), name="noncontig")]),
    OpSpec("chain_matmul", lambda m, *xs: m.chain_matmul(*xs), lambda r: [
        S(randn(r, 2, 3), randn(r, 3, 4), randn(r, 4, 2)), S(randn(r, 2, 3), randn(r, 3, 2), name="two")],
        torch_warns="torch.chain_matmul is deprecated"),       # tapegrad does not (yet) give the deprecation
    OpSpec("linalg.multi_dot", lambda m, xs: m.linalg.multi_dot(xs), lambda r: [
        S([randn(r, 2, 3), randn(r, 3, 4), randn(r, 4, 2)]), S([randn(r, 3), randn(r, 3, 2), randn(r, 2)], name="vecs"),
        S([randn(r, 2, 3), randn(r, 3)], name="mat_vec")]),
    OpSpec("cdist", lambda m, x, y, **kw: m.cdist(x, y, **kw), lambda r: [
        S(randn(r, 3, 2), randn(r, 4, 2)), S(randn(r, 2, 3, 2), randn(r, 1, 4, 2), name="batched"),
        S(randn(r, 3, 2), randn(r, 4, 2), p=1.0, name="p1"), S(randn(r, 3, 2), randn(r, 2, 2), p=3.0, name="p3"),
        S(randn(r, 3, 2), randn(r, 2, 2), p=math.inf, name="pinf")],
        gradgrad=False, notes="torch: 'the derivative for _cdist_backward is not implemented' (no double backward)"),
    # --- norms ------------------------------------------------------------------------------------------------
    OpSpec("norm", lambda m, x, *a, **kw: m.norm(x, *a, **kw), lambda r: [
        S(randn(r, 2, 3)), S(randn(r, 2, 3), dim=1, name="dim"), S(randn(r, 2, 3), p=1, dim=0, keepdim=True, name="p1"),
        S(randn(r, 4), p=math.inf, name="inf"), S(randn(r, 4), p=-math.inf, name="-inf"),
        S(randn(r, 4), p=3, name="p3"), S(randn(r, 4, positive=True), p=0.5, name="p0.5"),
        S(randn(r, 4), p=0, name="p0"), S(randn(r, 3, 3), p="nuc", name="nuc"),
        S(randn(r, 2, 3, 3), p="fro", dim=(1, 2), name="fro_dims"), S(randn(r), name="0d"),
        S(noncontig(randn(r, 3, 3)), p=2, dim=-1, name="noncontig")]),
    OpSpec("linalg.vector_norm", lambda m, x, *a, **kw: m.linalg.vector_norm(x, *a, **kw), lambda r: [
        S(randn(r, 2, 3)), S(randn(r, 2, 3), 1, -1, name="ord1"), S(randn(r, 2, 3), math.inf, (0, 1), True, name="inf"),
        S(randn(r, 2, 3, 2), 2.5, (0, 2), name="p2.5"), S(randn(r, 0, 3), 2, 0, name="empty")]),
    OpSpec("linalg.matrix_norm", lambda m, x, *a, **kw: m.linalg.matrix_norm(x, *a, **kw), lambda r: [
        S(randn(r, 3, 3)), S(randn(r, 2, 3, 3), "nuc", name="nuc"), S(randn(r, 3, 4), 2, name="ord2"),
        S(randn(r, 3, 4), -2, name="ord-2"), S(randn(r, 2, 3, 3), 1, name="ord1"),
        S(randn(r, 3, 3), -1, keepdim=True, name="ord-1"), S(randn(r, 3, 4), math.inf, name="inf"),
        S(randn(r, 3, 4), -math.inf, dim=(1, 0), name="-inf_dims"), S(randn(r, 3, 2, 3), "fro", (0, 2), True,
                                                                     name="fro_keep")], aliases=("axis", "keepdims")),
    OpSpec("linalg.norm", lambda m, x, *a, **kw: m.linalg.norm(x, *a, **kw), lambda r: [
        S(randn(r, 2, 3)), S(randn(r, 4), 1, name="vec1"), S(randn(r, 3, 3), 2, name="mat2"),
        S(randn(r, 3, 3), "nuc", name="nuc"), S(randn(r, 2, 3, 3), dim=(1, 2), name="dims"),
        S(randn(r, 2, 3), 3, dim=1, name="dim_int"), S(randn(r, 3, 3), math.inf, name="inf")], aliases=("axis",)),
    # --- inverses and determinants -----------------------------------------------------------------------------
    OpSpec("linalg.inv", lambda m, x: m.linalg.inv(x), lambda r: [
        S(wc(r, 3, 3)), S(wc(r, 2, 3, 3), name="batched"), S(noncontig(wc(r, 3, 3)), name="noncontig"),
        S(randn(r, 0, 0), name="empty")]),
    OpSpec("inverse", lambda m, x: m.inverse(x), lambda r: [S(wc(r, 3, 3))]),
    OpSpec("linalg.inv_ex", lambda m, x: m.linalg.inv_ex(x), lambda r: [S(wc(r, 2, 3, 3))]),
    OpSpec("linalg.det", lambda m, x: m.linalg.det(x), lambda r: [
        S(wc(r, 3, 3)), S(wc(r, 2, 3, 3), name="batched"), S(wc(r, 1, 1), name="1x1")]),
    OpSpec("det", lambda m, x: m.det(x), lambda r: [S(wc(r, 3, 3))]),
    OpSpec("linalg.slogdet", lambda m, x: m.linalg.slogdet(x), lambda r: [
        S(wc(r, 3, 3)), S(-wc(r, 2, 3, 3), name="batched_neg")]),
    OpSpec("slogdet", lambda m, x: m.slogdet(x), lambda r: [S(wc(r, 3, 3))]),
    OpSpec("logdet", lambda m, x: m.logdet(x), lambda r: [S(spd(r, 3, 3)), S(spd(r, 2, 3, 3), name="batched")]),
    OpSpec("linalg.solve", lambda m, a, b, **kw: m.linalg.solve(a, b, **kw), lambda r: [
        S(wc(r, 3, 3), randn(r, 3, 2)), S(wc(r, 3, 3), randn(r, 3), name="vec"),
        S(wc(r, 2, 3, 3), randn(r, 2, 3), name="batch_vec"), S(wc(r, 2, 3, 3), randn(r, 3, 2), name="bcast_B"),
        S(wc(r, 3, 3), randn(r, 2, 3), left=False, name="right")]),
    OpSpec("linalg.matrix_power", lambda m, x, n: m.linalg.matrix_power(x, n), lambda r: [
        S(wc(r, 3, 3), 2), S(wc(r, 3, 3), 3, name="3"), S(wc(r, 2, 3, 3), 5, name="batched5"),
        S(wc(r, 3, 3), -1, name="-1"), S(wc(r, 3, 3), -2, name="-2"), S(wc(r, 3, 3), 1, name="1"),
        S(wc(r, 3, 3), 0, name="0")]),
    OpSpec("matrix_power", lambda m, x, n: m.matrix_power(x, n), lambda r: [S(wc(r, 3, 3), 4)]),
    OpSpec("linalg.pinv", lambda m, x, **kw: m.linalg.pinv(x, **kw), lambda r: [
        S(randn(r, 3, 4)), S(randn(r, 4, 3), name="tall"), S(randn(r, 2, 2, 3), name="batched")]),
    OpSpec("linalg.pinv_hermitian", lambda m, x: m.linalg.pinv(_sym(x), hermitian=True), lambda r: [
        S(spd(r, 3, 3)), S(spd(r, 2, 3, 3), name="batched")]),
    OpSpec("pinverse", lambda m, x: m.pinverse(x), lambda r: [S(randn(r, 3, 2))]),
    OpSpec("linalg.lstsq", lambda m, a, b, **kw: m.linalg.lstsq(a, b, **kw), lambda r: [
        S(wc(r, 3, 3), randn(r, 3, 2)), S(randn(r, 5, 3), randn(r, 5, 2), name="tall"),
        S(randn(r, 5, 3), randn(r, 5, 2), driver="gelsd", name="gelsd"), S(randn(r, 2, 4, 3), randn(r, 2, 4),
                                                                            name="batch_vec")],
        output_process=lambda res: (res[0], res[1], res[2])),
    OpSpec("linalg.matrix_rank", lambda m, x, **kw: m.linalg.matrix_rank(x, **kw), lambda r: [
        S(randn(r, 3, 4)), S(np.outer([1.0, 2.0, 3.0], [1.0, 0.5]), name="rank1"), S(spd(r, 2, 3, 3), hermitian=True,
                                                                                      name="hermitian"),
        S(randn(r, 3, 3), atol=1.0, rtol=0.0, name="atol")], grad=False, notes="integer result: not differentiable"),
    OpSpec("linalg.cond", lambda m, x, *a: m.linalg.cond(x, *a), lambda r: [
        S(wc(r, 3, 3)), S(randn(r, 3, 4), -2, name="-2"), S(wc(r, 3, 3), 2, name="2")]),
    OpSpec("linalg.cond_p", lambda m, x, *a: m.linalg.cond(x, *a), lambda r: [
        S(wc(r, 3, 3), 1), S(wc(r, 3, 3), "fro", name="fro"), S(wc(r, 2, 3, 3), -math.inf, name="-inf")],
        grad=False,
        notes="torch's own backward of cond(A, p) for these p raises (an in-place modification of linalg_inv_ex's "
              "output), so there is no gradient oracle; values are compared"),
    OpSpec("linalg.solve_ex", lambda m, a, b: m.linalg.solve_ex(a, b), lambda r: [S(wc(r, 3, 3), randn(r, 3, 2))]),
    OpSpec("linalg.diagonal", lambda m, x, **kw: m.linalg.diagonal(x, **kw), lambda r: [
        S(randn(r, 2, 3, 3)), S(randn(r, 3, 4), offset=1, name="offset"), S(randn(r, 3, 2, 3), dim1=0, dim2=2,
                                                                            name="dims")]),
    OpSpec("svd_no_uv", lambda m, x: m.svd(x, compute_uv=False), lambda r: [S(randn(r, 3, 2))],
           output_process=lambda res: (res[1], res[0].abs().sum() + res[2].abs().sum())),
    OpSpec("linalg.solve_triangular", lambda m, a, b, **kw: m.linalg.solve_triangular(a, b, **kw), lambda r: [
        S(wc(r, 3, 3), randn(r, 3, 2), upper=True), S(wc(r, 3, 3), randn(r, 3, 2), upper=False, name="lower"),
        S(wc(r, 2, 3, 3), randn(r, 2, 3), upper=False, left=False, name="right"),
        S(wc(r, 3, 3), randn(r, 2, 3, 1), upper=True, unitriangular=True, name="unit_bcast")]),
    OpSpec("cholesky_solve", lambda m, b, l, *a: m.cholesky_solve(b, l, *a), lambda r: [
        S(randn(r, 3, 2), np.linalg.cholesky(spd(r, 3, 3))), S(randn(r, 2, 3, 1), np.linalg.cholesky(spd(r, 3, 3)).T,
                                                                True, name="upper_bcast")]),
    OpSpec("cholesky_inverse", lambda m, l, *a: m.cholesky_inverse(l, *a), lambda r: [
        S(np.linalg.cholesky(spd(r, 3, 3))), S(np.linalg.cholesky(spd(r, 3, 3)).T, True, name="upper")],
           extra={"fwd_torch": "torch 2.13's forward AD uses the tangent's other triangle, which the op never reads "
                               "(its reverse mode does not): ours is the transpose of the vjp, as finite differences"}),
    OpSpec("linalg.matrix_exp", lambda m, x: m.linalg.matrix_exp(x), lambda r: [
        S(randn(r, 3, 3)), S(randn(r, 2, 2, 2), name="batched"), S(3 * randn(r, 3, 3), name="large")]),
    OpSpec("matrix_exp", lambda m, x: m.matrix_exp(x), lambda r: [S(randn(r, 2, 2))]),
    OpSpec("linalg.vecdot", lambda m, x, y, **kw: m.linalg.vecdot(x, y, **kw), lambda r: [
        S(randn(r, 2, 3), randn(r, 3)), S(randn(r, 3, 2), randn(r, 3, 2), dim=0, name="dim0")], aliases=("axis",)),
    # --- factorisations -----------------------------------------------------------------------------------------
    OpSpec("linalg.cholesky", lambda m, x, **kw: m.linalg.cholesky(_sym(x), **kw), lambda r: [
        S(spd(r, 3, 3) / 2), S(spd(r, 2, 3, 3) / 2, name="batched"), S(spd(r, 3, 3) / 2, upper=True, name="upper")]),
    OpSpec("linalg.cholesky_ex", lambda m, x: m.linalg.cholesky_ex(_sym(x)), lambda r: [S(spd(r, 3, 3) / 2)]),
    OpSpec("cholesky", lambda m, x, *a: m.cholesky(_sym(x), *a), lambda r: [
        S(spd(r, 3, 3) / 2), S(spd(r, 3, 3) / 2, True, name="upper")],
        torch_warns="torch.cholesky is deprecated"),           # tapegrad does not (yet) give the deprecation
    OpSpec("linalg.qr", lambda m, x, *a: m.linalg.qr(x, *a), lambda r: [
        S(randn(r, 3, 3)), S(randn(r, 4, 3), name="tall"), S(randn(r, 3, 5), name="wide"),
        S(randn(r, 2, 4, 3), name="batched"), S(randn(r, 3, 4), "complete", name="complete_wide")]),
    OpSpec("linalg.qr_r", lambda m, x: m.linalg.qr(x, "r"), lambda r: [S(randn(r, 4, 3))],
           output_process=lambda res: (res[1],), grad=False, notes="mode='r' is not differentiable (torch raises)"),
    OpSpec("qr", lambda m, x, *a: m.qr(x, *a), lambda r: [S(randn(r, 4, 3)), S(randn(r, 3, 3), False, name="complete")],
           torch_warns="torch.qr is deprecated"),                 # tapegrad does not (yet) give the deprecation
    OpSpec("linalg.eigh", lambda m, x, *a: m.linalg.eigh(_sym(x), *a), lambda r: [
        S(randn(r, 3, 3)), S(randn(r, 2, 3, 3), name="batched"), S(randn(r, 4, 4), "U", name="upper")],
        output_process=lambda res: (res[0], _pos_rows(res[1]))),
    OpSpec("linalg.eigvalsh", lambda m, x: m.linalg.eigvalsh(_sym(x)), lambda r: [S(randn(r, 3, 3))]),
    OpSpec("linalg.svd", lambda m, x, *a: m.linalg.svd(x, *a), lambda r: [
        S(randn(r, 3, 3), False), S(randn(r, 4, 3), False, name="tall"), S(randn(r, 3, 4), False, name="wide"),
        S(randn(r, 2, 4, 3), name="batched_full"), S(randn(r, 3, 4), True, name="wide_full")],
        output_process=_svd_fix),
    OpSpec("linalg.svdvals", lambda m, x: m.linalg.svdvals(x), lambda r: [
        S(randn(r, 3, 4)), S(randn(r, 2, 3, 2), name="batched")]),
    OpSpec("svd", lambda m, x, *a: m.svd(x, *a), lambda r: [S(randn(r, 4, 3)), S(randn(r, 3, 4), False, name="full")],
           output_process=_tsvd_fix),
]
