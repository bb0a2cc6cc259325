"""A coarse-to-fine (multigrid) eigensolver for gPb's spectral step: approximate, and
linear in the pixels.

:func:`multigrid_eigs` returns what :func:`._gpb_spectral.spectral_eigs` returns for the
intervening-contour affinity W of a thinned mPb (the ``nvec`` smallest generalized
eigenpairs of ``(D - W) v = lambda D v``), approximately, at a cost linear in the pixels.

The scheme
----------
1. **Coarsening: square and decimate** (MCG's "DNCuts", Arbelaez, Pont-Tuset, Barron,
   Marques, Malik, "Multiscale Combinatorial Grouping", CVPR 2014 / TPAMI 2017; their
   ``ncuts_downsample``). Keep the pixels of even row and column (a quarter); with
   ``d_k = sum_I W_kI`` over the kept pixels I, the coarse affinity is
   ``W_c(I, J) = sum_k W_Ik W_kJ / d_k``, the two-step walk through any fine pixel k
   between kept pixels. Two kept pixels 2 o apart (fine px) meet through k only if
   both are within the radius R of k, so W_c couples coarse pixels at most R coarse
   px apart: the same half-stencil form as W (``_k.forward_offsets(R)``), computed by
   a compiled kernel straight from W's stencil. Repeated ``levels`` times.
2. **Coarsest solve**: the exact solver of :mod:`._gpb_spectral` (ARPACK on a
   Chebyshev-filtered normalised affinity) for ``nvec + guard`` eigenpairs.
3. **Interpolation** (MCG's upsampling matrix ``B``): the fine value at pixel k is the
   affinity-weighted mean of the coarse values within R, ``v_k = sum_I W_kI v_I / d_k``
   (two stencil products), so eigenvectors keep their jumps at contours.
4. **Refinement at every finer level** (Maire and Yu, "Progressive multigrid
   eigensolvers for multiscale spectral segmentation", ICCV 2013: the coarse solution
   initialises an iterative solver at the next finer level; they use LOBPCG, we use
   Chebyshev-filtered subspace iteration, Zhou and Saad, J. Comput. Phys. 2007): the
   block of ``nvec + guard`` interpolated vectors (``u = D^1/2 v``) is filtered by
   ``T_d`` of the normalised affinity ``A = D^-1/2 W D^-1/2`` that damps
   ``[-1, theta_m]`` (theta_m the block's smallest Ritz value), orthonormalised
   (Cholesky QR, twice) and Rayleigh-Ritz projected; until every wanted Ritz value
   ``lambda_i = 1 - theta_i`` moved less than ``tol`` (relative) in the last
   iteration, at most ``maxiter`` iterations per level. Residual norms follow from
   small Gram matrices, so no third n x m block is stored.

W at each level is applied to the whole block at once (:mod:`._gpb_block_kernels`: each
weight read once multiplies the m values of a pixel), the filter runs in place and the
Rayleigh-Ritz products are formed band by band, so a level's refinement holds one
(n, m) block of float64 besides W: 435 MB at 1924 x 1284 with m = 22. The block
kernels give the single-vector kernels' bits, so the results are those of the first
version (eigenvalues within 6e-12 relative on BSDS 101085).

Accuracy: the interpolated block is accurate in its high-frequency part after a few
filtered iterations; its error in the smooth directions just beyond the wanted ones
(eigenvalues a few times lambda_17) decays slowly (the filter cannot separate them
cheaply: that is why the exact solve is superlinear), so the result is an
approximation whose quality ``benchmarks/gpb_multigrid.py`` measures.

Sources read (never copied): MCG ``full/src/ucms/spectralPb_fast.m`` and
``dncuts/dncuts.m`` (github jponttuset/mcg).
"""

from __future__ import annotations

import functools

import numba
import numpy as np
import scipy.linalg

from ..errors import InputError
from . import _gpb_block_kernels as _b
from . import _gpb_spectral_kernels as _k
from ._gpb_spectral import (
    _CHEB_MIN,
    _RADIUS,
    _affinity_stencil,
    _chebyshev_stencil_eigs,
    _check_mpb,
    _fix_vectors,
    _one_blas_thread,
)

__all__ = ["multigrid_eigs"]

_COARSE_PIXELS = 15_000  # default levels: halve until at most this many pixels remain
_GUARD = 5  # extra vectors carried in the block beyond nvec
_DEGREE = 8  # of the refinement's Chebyshev filter
_MAXITER = 3  # refinement iterations per level, at most
_TOL = 1e-3  # relative change of the wanted Ritz values that ends a level's refinement
_COARSE_TOL = 1e-6  # the coarsest exact solve's ARPACK tolerance


@functools.lru_cache(maxsize=4)
def _pair_tables(radius: int):
    """For a fine pixel k of each parity class (row, column parity: 0..3), its kept
    neighbours (even row and column) within ``radius``: offsets ``(ay, ax)``
    (``start`` delimits the classes), and every pair (i, j) of them, i <= j, with where
    ``W_k,i W_k,j`` lands in W_c: ``code`` +(o + 1) at coarse pixel i and forward
    offset o, -(o + 1) at pixel j and forward offset o, 0 on i's diagonal."""
    ody, odx = _k.forward_offsets(radius)
    fwd = {(dy, dx): o for o, (dy, dx) in enumerate(zip(ody.tolist(), odx.tolist()))}
    r2 = radius * radius
    box = range(-radius, radius + 1)
    start, pstart = [0], [0]
    ay: list[int] = []
    ax: list[int] = []
    pi: list[int] = []
    pj: list[int] = []
    code: list[int] = []
    for py in (0, 1):
        for px in (0, 1):
            base = len(ay)
            nb = [
                (a, b)
                for a in box
                for b in box
                if a * a + b * b <= r2 and (py + a) % 2 == 0 and (px + b) % 2 == 0
            ]
            for a, b in nb:
                ay.append(a)
                ax.append(b)
            start.append(len(ay))
            for i, (a1, b1) in enumerate(nb):
                for j in range(i, len(nb)):
                    a2, b2 = nb[j]
                    dy, dx = (a2 - a1) // 2, (b2 - b1) // 2
                    pi.append(base + i)
                    pj.append(base + j)
                    if dy == 0 and dx == 0:
                        code.append(0)
                    elif (dy, dx) in fwd:
                        code.append(fwd[(dy, dx)] + 1)
                    else:
                        code.append(-(fwd[(-dy, -dx)] + 1))
            pstart.append(len(pi))
    lut = np.zeros((2 * radius + 1, 2 * radius + 1), np.int64)
    for (dy, dx), o in fwd.items():
        lut[radius + dy, radius + dx] = o + 1
        lut[radius - dy, radius - dx] = -(o + 1)
    as64 = functools.partial(np.array, dtype=np.int64)
    return tuple(map(as64, (start, ay, ax, pstart, pi, pj, code))) + (lut,)


@numba.njit(cache=True, inline="always")
def _w_at(half, diag, lut, radius, y, x, ay, ax):
    """W between pixel (y, x) and (y + ay, x + ax) (both in the image)."""
    width = half.shape[2]
    code = lut[radius + ay, radius + ax]
    if code == 0:
        return diag[y * width + x]
    if code > 0:
        return np.float64(half[y, code - 1, x])
    return np.float64(half[y + ay, -code - 1, x + ax])


@numba.njit(cache=True)
def _square_decimate(half, diag, lut, radius, invd, tables, hc, wc):
    """``W_c(I, J) = sum_k W_Ik W_kJ invd_k`` over the even-row, even-column pixels I,
    J, in half-stencil form (float32 ``half``, float64 ``diag``): each fine pixel k
    adds its kept neighbours' products pairwise (:func:`_pair_tables`)."""
    start, ay, ax, pstart, pi, pj, code = tables
    height, nk, width = half.shape
    acc = np.zeros((hc, nk, wc))
    diag_c = np.zeros(hc * wc)
    wk = np.zeros(ay.shape[0])
    cyy = np.zeros(ay.shape[0], np.int64)
    cxx = np.zeros(ay.shape[0], np.int64)
    for ky in range(height):
        for kx in range(width):
            cls = (ky % 2) * 2 + kx % 2
            for t in range(start[cls], start[cls + 1]):
                y = ky + ay[t]
                x = kx + ax[t]
                if y < 0 or y >= height or x < 0 or x >= width:
                    wk[t] = 0.0
                else:
                    wk[t] = _w_at(half, diag, lut, radius, ky, kx, ay[t], ax[t])
                cyy[t] = y // 2
                cxx[t] = x // 2
            s = invd[ky * width + kx]
            for p in range(pstart[cls], pstart[cls + 1]):
                i = pi[p]
                j = pj[p]
                v = wk[i] * wk[j]
                if v == 0.0:
                    continue
                c = code[p]
                if c == 0:
                    diag_c[cyy[i] * wc + cxx[i]] += v * s
                elif c > 0:
                    acc[cyy[i], c - 1, cxx[i]] += v * s
                else:
                    acc[cyy[j], -c - 1, cxx[j]] += v * s
    return acc.astype(np.float32), diag_c


def _kept_mask(h, w):
    m = np.zeros((h, w))
    m[::2, ::2] = 1.0
    return m


def _coarsen(half, diag, ody, odx, radius):
    """One square-and-decimate step: (half_c, diag_c, d) with d the fine pixels'
    affinity to the kept ones (the interpolation's denominators)."""
    h, _, w = half.shape
    d = np.empty((h, w))
    _k.stencil_product(half, diag, ody, odx, _kept_mask(h, w), d)
    if not (d > 0).all():
        raise InputError("a pixel has no affinity to the coarse grid")
    *tables, lut = _pair_tables(radius)
    hc, wc = (h + 1) // 2, (w + 1) // 2
    half_c, diag_c = _square_decimate(
        half, diag, lut, radius, 1.0 / d.ravel(), tuple(tables), hc, wc
    )
    return half_c, diag_c, d


def _interpolate(half, diag, ody, odx, d, coarse):
    """(hc * wc, m) coarse vectors to (h * w, m): ``v_k = sum_I W_kI v_I / d_k``."""
    h, _, w = half.shape
    hc, wc = (h + 1) // 2, (w + 1) // 2
    m = coarse.shape[1]
    fine = np.empty((h, w, m))
    _b.block_interpolate(half, diag, ody, odx, coarse.reshape(hc, wc, m), d, fine)
    return fine.reshape(h * w, m)


def _degrees(half, diag, ody, odx):
    h, _, w = half.shape
    deg = np.empty((h, w))
    _k.stencil_product(half, diag, ody, odx, np.ones((h, w)), deg)
    if not (deg > 0).all():
        raise InputError("every pixel needs a positive degree")
    return deg


def _rayleigh(half, diag, ody, odx, scale, U):
    """``H = U' A U`` and ``G2 = (A U)' (A U)`` for an (n, m) block U, ``A = S W S``,
    band by band: ``A U`` is never held whole (it would be a third block)."""
    h, _, w = half.shape
    m = U.shape[1]
    block = U.reshape(h, w, m)
    band = max(1, _CHUNK // w)
    H = np.zeros((m, m))
    G2 = np.zeros((m, m))
    out = np.empty((band, w, m))
    for y0 in range(0, h, band):
        y1 = min(h, y0 + band)
        au = _b.block_normalized_band(half, diag, ody, odx, scale, block, y0, y1, out)
        au = au[: y1 - y0].reshape(-1, m)
        H += U[y0 * w : y1 * w].T @ au
        G2 += au.T @ au
    return H, G2


_CHUNK = 1 << 16  # rows per in-place block update (keeps the temporary small)


def _times_small(U, M):
    """``U = U @ M`` in place for a tall (n, m) U and a small (m, m) M."""
    for s in range(0, U.shape[0], _CHUNK):
        U[s : s + _CHUNK] = U[s : s + _CHUNK] @ M


def _orthonormalize(U):
    """Columns of U orthonormalised in place by Cholesky QR, twice."""
    for _ in range(2):
        G = U.T @ U
        try:
            L = np.linalg.cholesky(G)
        except np.linalg.LinAlgError:  # nearly dependent columns: a small shift
            shift = 1e-13 * np.trace(G)
            L = np.linalg.cholesky(G + shift * np.eye(G.shape[0]))
        eye = np.eye(L.shape[0])
        _times_small(U, scipy.linalg.solve_triangular(L, eye, lower=True).T)
    return U


def _refine(half, diag, ody, odx, V, nvec, degree, maxiter, tol, log):
    """Chebyshev-filtered subspace iteration on A from the (n, m) block V (v-space), in
    place: one block lives (the filter and the Rayleigh-Ritz step need no second).
    Returns (lambda (m,), V (n, m) v-space, iterations)."""
    h, _, w = half.shape
    deg = _degrees(half, diag, ody, odx)
    scale = 1.0 / np.sqrt(deg)
    sq = np.sqrt(deg).reshape(-1, 1)
    U = V  # scaled in place: the caller's interpolated block is not used again
    U *= sq
    prev = None
    it = 0
    while True:
        _orthonormalize(U)
        H, G2 = _rayleigh(half, diag, ody, odx, scale, U)
        H = 0.5 * (H + H.T)
        theta, Z = np.linalg.eigh(H)
        theta, Z = theta[::-1], Z[:, ::-1]
        # ||A q z - theta q z||^2 = z' G2 z - theta^2 (Q orthonormal)
        res = np.sqrt(np.maximum(np.einsum("ij,ik,kj->j", Z, G2, Z) - theta**2, 0.0))
        lam = 1.0 - theta
        _times_small(U, np.ascontiguousarray(Z))
        if log is not None:
            log.append((h, w, it, lam[:nvec].copy(), res[:nvec].copy()))
        if prev is not None:
            change = np.abs(lam[1:nvec] - prev[1:nvec]) / np.abs(lam[1:nvec])
            if change.max() < tol:
                break
        if it >= maxiter:
            break
        prev = lam
        it += 1
        cut = theta[-1]  # damp [-1, cut]: T_d((mu - c) / e)
        e, c = (cut + 1.0) / 2, (cut - 1.0) / 2
        block = U.reshape(h, w, -1)
        # in place (degree >= 3): the filter writes a row after its last read
        _b.block_chebyshev_filter(
            half, diag, ody, odx, scale, block,
            1.0 / e, -c / e, 2.0 / e, -2.0 * c / e, degree, block,
        )  # fmt: skip
        U /= np.sqrt(np.einsum("ij,ij->j", U, U))[None, :]  # no temporary block
    U /= sq
    return lam, U, it


def default_levels(h: int, w: int) -> int:
    """Halvings until at most ``_COARSE_PIXELS`` pixels (0 for small images)."""
    levels = 0
    while h * w > _COARSE_PIXELS and min(h, w) >= 40:
        h, w = (h + 1) // 2, (w + 1) // 2
        levels += 1
    return levels


def multigrid_eigs(
    mpb,
    nvec: int = 17,
    *,
    levels: int | None = None,
    tol: float = _TOL,
    guard: int = _GUARD,
    degree: int = _DEGREE,
    maxiter: int = _MAXITER,
    log: list | None = None,
):
    """The ``nvec`` smallest generalized eigenpairs of gPb's affinity, coarse to fine.

    Parameters
    ----------
    mpb : (h, w) array_like of float in [0, 1]
        The thinned mPb (input of :func:`._gpb_spectral.affinity_matrix`).
    nvec : int, optional
        Eigenpairs, the trivial one included.
    levels : int, optional
        Square-and-decimate steps (each keeps a quarter of the pixels); default: until
        at most 15,000 pixels remain. 0 is the exact solve.
    tol : float, optional
        A level's refinement stops when no wanted eigenvalue changed by more than this
        relative amount in its last iteration (or after ``maxiter`` iterations).
    guard : int, optional
        Extra vectors in the block (they speed up the wanted ones' convergence).
    degree : int, optional
        Of the refinement's Chebyshev filter, at least 3 (the filter then runs in
        place).
    maxiter : int, optional
        Refinement iterations per level, at most.
    log : list, optional
        Appended with ``(h, w, iteration, lambdas, residual norms)`` per Rayleigh-Ritz.

    Returns
    -------
    eigenvalues : (nvec,) float64
        Ascending, the first (about 0) the trivial one.
    eigenvectors : (h * w, nvec) float64
        D-normalised, largest-magnitude entry positive (as ``spectral_eigs``).
    """
    a = _check_mpb(mpb)
    h, w = a.shape
    nvec = int(nvec)
    if not 2 <= nvec < h * w:
        raise InputError(f"nvec must be in [2, {h * w - 1}], got {nvec}")
    if levels is None:
        levels = default_levels(h, w)
    levels = int(levels)
    if levels < 0:
        raise InputError(f"levels must be >= 0, got {levels}")
    if int(degree) < 3:
        raise InputError(f"degree must be >= 3, got {degree}")
    m = nvec + int(guard)
    radius = _RADIUS
    half, diag, ody, odx = _affinity_stencil(a)
    stack = []  # (half, diag, d) of each finer level
    for _ in range(levels):
        hh, _, ww = half.shape
        if (hh + 1) // 2 * ((ww + 1) // 2) < 4 * m:
            break
        half_c, diag_c, d = _coarsen(half, diag, ody, odx, radius)
        stack.append((half, diag, d))
        half, diag = half_c, diag_c
    hc, _, wc = half.shape
    found = None
    if hc * wc >= _CHEB_MIN:  # as spectral_eigs's 'auto'
        found = _chebyshev_stencil_eigs(half, diag, ody, odx, m, _COARSE_TOL)
    if found is None:  # a small grid, or the cuts failed: a dense or Lanczos solve
        found = _lanczos_stencil(half, diag, ody, odx, m)
    lam, V = found  # V (n, m)
    if log is not None:
        log.append((hc, wc, -1, lam[:nvec].copy(), None))
    for half_f, diag_f, d in reversed(stack):
        V = _interpolate(half_f, diag_f, ody, odx, d, V)
        del half, diag
        half, diag = half_f, diag_f
        with _one_blas_thread():
            lam, V, _ = _refine(half, diag, ody, odx, V, nvec, degree, maxiter, tol, log)
    stack.clear()
    deg = _degrees(half, diag, ody, odx).ravel()
    del half, diag
    order = np.argsort(lam, kind="stable")[:nvec]
    wanted = V[:, order]
    del V
    return lam[order], _fix_vectors(wanted, deg)


def _lanczos_stencil(half, diag, ody, odx, m):
    """ARPACK (or dense, on tiny grids) on A in stencil form."""
    from scipy.sparse.linalg import LinearOperator, eigsh

    h, _, w = half.shape
    n = h * w
    deg = _degrees(half, diag, ody, odx)
    scale = 1.0 / np.sqrt(deg)
    if n <= 2000:
        eye = np.eye(n).reshape(h, w, n)
        A = _b.block_normalized_band(
            half, diag, ody, odx, scale, eye, 0, h, np.empty((h, w, n))
        ).reshape(n, n)
        mu, U = np.linalg.eigh(0.5 * (A + A.T))
        mu, U = mu[n - m :], U[:, n - m :]
    else:
        zero = np.zeros((h, w))
        scratch = np.empty((h, w))

        def matvec(x):  # one vector: the single-vector kernel (the block one is for m > 1)
            out = np.empty((h, w))
            _k.chebyshev_step(
                half, diag, ody, odx, scale, x.reshape(h, w), zero, out, scratch,
                1.0, 0.0, 0.0,
            )  # fmt: skip
            return out.ravel()

        op = LinearOperator((n, n), matvec=matvec, dtype=np.float64)
        v0 = np.random.default_rng(0).standard_normal(n)
        with _one_blas_thread():
            mu, U = eigsh(op, k=m, which="LA", tol=_COARSE_TOL, v0=v0, ncv=min(n - 1, 60))
    order = np.argsort(-mu, kind="stable")
    V = U[:, order] * scale.reshape(-1)[:, None]
    return 1.0 - mu[order], _fix_vectors(V, deg.reshape(-1))
