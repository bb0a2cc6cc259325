"""gPb's spectral cue sPb (Arbelaez, Maire, Fowlkes, Malik, PAMI 2011, section 3.2), as
BSR's ``spectralPb.m`` computes it.

Three stages:

1. **Affinity.** W over the pixels from the intervening contour on the thinned mPb
   (``buildW``, Fowlkes' BSE code): for pixels p, q at most 5 px apart, ``maxpb`` is
   the strongest mPb crossed by the Bresenham line from p to q (a step down or right
   crosses the upper or left pixel's value; a diagonal step the max over its 2x2 block
   without the bottom-right pixel), ``pss = C_IC_SS(maxpb)``, a logistic, and
   ``W_pq = exp(-(1 - pss) / 0.1)``; ``W_pp = 1``; W is then symmetrised by averaging.
   W equals BSR's to the last bit on the BSDS images we checked.
2. **Eigenvectors.** ``(D - W) v = lambda D v`` with ``D = diag(W 1)``: the ``nvec``
   smallest, the first (constant, lambda = 0) dropped.
3. **Oriented filtering.** Each eigenvector min-max normalised to [0, 1] and divided by
   ``sqrt(lambda)``; filtered by the first derivative of an oriented Gaussian (sigma
   1 px, 7 x 7, ``oeFilter.m``'s supersampled construction) at 8 orientations, after a
   3 px mirror padding; the absolute responses summed over the vectors.

Orientation convention: the output stack is (8, H, W); channel k holds the boundary
whose tangent points at ``k pi / 8`` radians from +x (the column, right) towards +y (the
row, down). BSR's channel j (1-based) is our channel k with ``j - 1 = (4 - k) mod 8``.

Sources read (never copied): BSR ``grouping/lib/{spectralPb.m, oeFilter.m,
applyFilter.m, fbRun.m, padReflect.m}``, ``grouping/source/buildW/{buildW.cpp, ic.cc,
affinity.cc, smatrix.cc}``.
"""

from __future__ import annotations

import functools
import time

import numpy as np
import scipy.sparse as sparse

from ..errors import InputError
from . import _gpb_spectral_kernels as _k

__all__ = [
    "spectral_pb",
    "affinity_matrix",
    "spectral_eigs",
    "oe_filter",
    "oriented_response",
    "imresize_bicubic",
    "SOLVERS",
    "NORIENT",
]

NORIENT = 8
_RADIUS = 5  # buildW.cpp: dthresh, the affinity's radius in px
_SIGMA = 0.1  # buildW.cpp: the affinity's scale
_IC_THRESH = 1.0  # buildW.cpp: the walk's stop threshold (never reached for mPb <= 1)
_SEED = 0  # the start vector of the iterative solvers
_TOL = 1e-6  # default eigensolver accuracy (see spectral_eigs)
_NCV = 60  # Lanczos basis size (ARPACK ncv)
_DENSE_MIN = 100  # below max(this, 4 nvec) pixels the eigenproblem is solved densely
# 'auto' takes 'chebyshev' from this many pixels: on smaller grids the wanted eigenvalues
# lie above the cuts (a 48 x 72 grid: the 12th at 0.04), so it would retry and fall back
# (10 CPU-s against Lanczos's 0.05)
_CHEB_MIN = 20000
_CHEB_CUTS = (0.99, 0.96, 0.84)  # tried in turn: the wanted mu must lie above the cut
_CHEB_DEGREE = 12  # of the polynomial: 8-16 cost the same within 2 % on BSDS images
_CHEB_NCV = 40  # its Lanczos basis
_FLOOR_STEPS = 20  # Lanczos steps of the estimate of A's lowest eigenvalue

#: Eigensolvers of :func:`spectral_eigs`.
SOLVERS = ("auto", "chebyshev", "lanczos", "dense")


def _check_mpb(mpb) -> np.ndarray:
    a = np.asarray(mpb)
    if a.ndim != 2:
        raise InputError(f"mpb must be a 2-D (H, W) array, got shape {a.shape}")
    if a.dtype == bool or not (
        np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)
    ):
        raise InputError(f"mpb has unsupported type {a.dtype}; give floats in [0, 1]")
    a = a.astype(np.float64)
    if a.shape[0] < 2 or a.shape[1] < 2:
        raise InputError(f"mpb must be at least 2 x 2, got {a.shape}")
    if not np.isfinite(a).all() or a.min() < 0 or a.max() > 1:
        raise InputError("mpb values must be finite and in [0, 1]")
    return a


def affinity_matrix(mpb, *, radius: int = _RADIUS, sigma: float = _SIGMA):
    """The intervening-contour affinity W of BSR's ``buildW``.

    Parameters
    ----------
    mpb : (H, W) array_like of float in [0, 1]
        The thinned (non-max suppressed) boundary strength, BSR's ``mPb_nmax``.
    radius : int, optional
        Pixels p, q are connected when ``|p - q| <= radius`` px (Euclidean, integer
        offsets; 5 in BSR). The IC lines run to the (2 radius + 1)^2 box around p.
    sigma : float, optional
        ``W_pq = exp(-(1 - pss) / sigma)`` (0.1 in BSR).

    Returns
    -------
    scipy.sparse.csr_matrix
        (H W, H W) float64, pixel ``row * W + col``, symmetric, unit diagonal, every
        pair within ``radius`` stored (none is 0), sorted indices.

    Notes
    -----
    ``maxpb`` of q seen from p is the running max of the crossed lattice edges along
    the Bresenham line from p to the box-boundary pixel whose line best approximates
    the direction of q (ic.cc's exact integer test), so it is direction dependent;
    W is symmetrised by averaging ``W_pq`` and ``W_qp``, as smatrix.cc does. Pixels the
    walk records for no line count as crossing a contour of 1. Two quirks of ic.cc
    are kept: from a pixel in the last column, the pixels one row below and 1-4
    columns to its left are never recorded (IC = 1 that way); and an image corner
    seen from its two 4-neighbours gets ``maxpb = 0`` whatever it crosses. The logistic
    ``C_IC_SS(t) = 1 / (1 + exp(-(1.8682 - 1.3113 t / 0.3130)))`` and W are computed
    in float32 as the C++ does, so the values match BSR's bit for bit.
    """
    a = _check_mpb(mpb)
    radius = int(radius)
    if radius < 1:
        raise InputError(f"radius must be at least 1, got {radius}")
    h, w = a.shape
    hl, vl = _dual_lattice(a)
    counts = _k.row_counts(h, w, radius, radius * radius)
    n = h * w
    nnz = int(counts.sum())
    itype = np.int32 if max(nnz, n) < 2**31 else np.int64
    indptr = np.zeros(n + 1, itype)
    np.cumsum(counts, out=indptr[1:])
    indices = np.empty(nnz, itype)
    data = np.empty(nnz, np.float64)
    overflow = _k.affinity_rows(
        hl,
        vl,
        h,
        w,
        radius,
        radius * radius,
        np.float32(sigma),
        np.float32(_IC_THRESH),
        _interior_program(radius, float(sigma)),
        indptr,
        indices,
        data,
    )
    if overflow:  # cannot happen for ic.cc's walk; a guard for a changed kernel
        raise RuntimeError(f"intervening contour: {overflow} support maps overflowed")
    _k.symmetrize(indptr, indices, data)
    mat = sparse.csr_matrix((data, indices, indptr), shape=(n, n), copy=False)
    mat.has_sorted_indices = True
    return mat


def _dual_lattice(a):
    """buildW's crossed-edge maps of the mPb, in float32: ``hl[y, x]`` the edge above
    pixel (y, x), ``vl[y, x]`` the edge left of it (0 on the image border)."""
    h, w = a.shape
    m32 = a.astype(np.float32)
    hl = np.zeros((h + 1, w), np.float32)
    hl[1:] = m32
    vl = np.zeros((h, w + 1), np.float32)
    vl[:, 1:] = m32
    return hl, vl


@functools.lru_cache(maxsize=4)
def _interior_program(radius: int, sigma: float):
    return _k.interior_program(
        radius, radius * radius, np.float32(sigma), np.float32(_IC_THRESH)
    )


def _affinity_stencil(a, radius: int = _RADIUS, sigma: float = _SIGMA):
    """:func:`affinity_matrix` of a checked mPb ``a`` in the eigensolver's half-stencil
    form ``(half, diag, ody, odx)`` (the offsets of ``_k.forward_offsets``), the same
    values, without building the CSR matrix."""
    h, w = a.shape
    hl, vl = _dual_lattice(a)
    ody, odx = _k.forward_offsets(radius)
    program = _interior_program(radius, float(sigma))
    half, diag, overflow = _k.affinity_half(
        hl,
        vl,
        h,
        w,
        radius,
        radius * radius,
        np.float32(sigma),
        np.float32(_IC_THRESH),
        ody,
        odx,
        program,
    )
    if overflow:  # as in affinity_matrix
        raise RuntimeError(f"intervening contour: {overflow} support maps overflowed")
    return half, diag, ody, odx


def spectral_eigs(
    W,
    nvec: int = 17,
    *,
    solver: str = "auto",
    tol: float = _TOL,
    shape=None,
    radius: int = _RADIUS,
):
    """The ``nvec`` smallest generalized eigenpairs of ``(D - W) v = lambda D v``.

    Parameters
    ----------
    W : scipy.sparse matrix
        Symmetric non-negative affinity (n, n) with positive degrees.
    nvec : int, optional
        How many eigenpairs, the trivial one (lambda = 0, v constant) included.
    solver : {'auto', 'chebyshev', 'lanczos', 'dense'}, optional
        All solve for the largest eigenvalues ``mu`` of the normalised affinity
        ``A = D^-1/2 W D^-1/2``, so ``lambda = 1 - mu`` and ``v = D^-1/2 u`` (no
        factorisation of the singular ``D - W``), from a fixed start vector.
        ``'lanczos'``: ARPACK (``scipy.sparse.linalg.eigsh``) on A. ``'chebyshev'``:
        ARPACK on ``T_d((A - c) / e)``, a Chebyshev polynomial that is at most 1 in
        magnitude on ``[a, 0.99]`` and grows fast above (``a`` a little below the
        lowest eigenvalue, estimated by 20 Lanczos steps; -1 if the estimate proves
        too high), so the wanted eigenvalues
        (``mu > 0.99``: lambda < 0.01) are well separated and ARPACK restarts and
        re-orthogonalises far less; W is applied in its stencil form (needs ``shape``,
        the pixel grid, W coupling pixels at most ``radius`` apart) with float32
        weights. If fewer than ``nvec`` eigenvalues lie above the cut, the cut is
        lowered (0.96, 0.84), then ARPACK on A is used. ``'dense'``:
        ``scipy.linalg.eigh`` (small problems only; below ``max(100, 4 nvec)`` pixels
        always). ``'auto'``: ``'chebyshev'`` when ``shape`` is given and the grid
        has at least 20,000 pixels, else ``'lanczos'``.
    tol : float, optional
        ARPACK's relative accuracy of the eigenvalues it iterates on (``mu``, or the
        polynomial's values); 0 is machine precision, as MATLAB's ``eigs`` in BSR.
        The default 1e-6 gives BSR's sPb to a relative 3e-5 with either solver;
        1e-4 or looser can miss an eigenpair near the 17th (seen on BSDS 101087 with
        ``'lanczos'``), so it saves little and risks much.
    shape : (height, width), optional
        The pixel grid of W (pixel ``row * width + col``); enables ``'chebyshev'``.
    radius : int, optional
        W's coupling radius in px (buildW's 5), for the stencil form.

    Returns
    -------
    eigenvalues : (nvec,) float64
        Ascending.
    eigenvectors : (n, nvec) float64
        Column i D-normalised (``v' D v = 1``) with its largest-magnitude entry
        positive, so the result does not depend on the solver's sign choices.

    Notes
    -----
    The wanted eigenvalues of a 481 x 321 BSDS image are 5e-5 .. 2e-3 against a
    spectrum of width about 1, so Krylov methods need about a thousand products
    with W (12.4 M entries). ``'lanczos'`` makes 1,040 of them but spends twice as
    long re-orthogonalising its 60-vector basis (29 CPU-s single-threaded; BSR's
    ``eigs`` under Octave: 57); ``'chebyshev'`` makes about 2,000 products of about
    2 ms each (the stencil form, each polynomial in one sweep down the rows:
    ``_k.chebyshev_filter``) and few re-orthogonalisations: 5-7 CPU-s, with
    eigenvalues within a relative 1e-7 of ``'lanczos'`` (the float32 weights: W is
    computed in float32 as BSR does; its symmetrising average can need one more
    bit). LOBPCG with a pyamg smoothed-aggregation preconditioner on an
    8-neighbour surrogate of W converges in 30-45 iterations but its dense
    Rayleigh-Ritz steps alone cost more (``benchmarks/gpb_eigen.py``). Solving at
    reduced size (BSR's ``rsz``, ``spectral_pb(..., out_shape=)``) is cheaper still.
    """
    if solver not in SOLVERS:
        raise InputError(f"solver must be one of {SOLVERS}, got {solver!r}")
    n = W.shape[0]
    nvec = int(nvec)
    if not 2 <= nvec < n:
        raise InputError(f"nvec must be in [2, {n - 1}] for {n} pixels, got {nvec}")
    if shape is not None and int(shape[0]) * int(shape[1]) != n:
        raise InputError(f"shape {tuple(shape)} does not hold W's {n} pixels")
    if solver == "chebyshev" and shape is None:
        raise InputError("solver 'chebyshev' needs the pixel grid: pass shape=(h, w)")
    small = n < max(_DENSE_MIN, 4 * nvec)
    if solver == "auto":
        solver = "chebyshev" if shape is not None and n >= _CHEB_MIN else "lanczos"
    if solver == "chebyshev" and not small:
        found = _chebyshev_eigs(W, nvec, (int(shape[0]), int(shape[1])), int(radius), tol)
        if found is not None:
            return found
    deg = np.asarray(W.sum(axis=0)).ravel()
    if not (deg > 0).all():
        raise InputError("every pixel needs a positive degree")
    s = 1.0 / np.sqrt(deg)
    A = sparse.csr_matrix(W, copy=True)
    # D^-1/2 W D^-1/2 on the CSR arrays: row i scaled by s_i, column j by s_j
    A.data *= np.repeat(s, np.diff(A.indptr)) * s[A.indices]
    if solver == "dense" or small:
        import scipy.linalg

        mu, U = scipy.linalg.eigh(A.toarray(), subset_by_index=(n - nvec, n - 1))
    else:
        from scipy.sparse.linalg import eigsh

        v0 = np.random.default_rng(_SEED).standard_normal(n)
        # a longer Lanczos basis than ARPACK's default 2 nvec + 1 restarts less:
        # 60 vectors cost 15 % less CPU than 35 on BSDS images, 24 three times more
        ncv = min(n - 1, max(2 * nvec + 1, _NCV))
        with _one_blas_thread():
            mu, U = eigsh(A, k=nvec, which="LA", tol=tol, v0=v0, ncv=ncv)
    order = np.argsort(-mu, kind="stable")
    lam = 1.0 - mu[order]
    V = U[:, order] * s[:, None]
    return lam, _fix_vectors(V, deg)


def _chebyshev_eigs(W, nvec, shape, radius, tol):
    """``'chebyshev'`` of :func:`spectral_eigs`; None when it cannot be used (W not a
    radius stencil on ``shape``, or fewer than ``nvec`` eigenvalues above every cut)."""
    h, w = shape
    W = sparse.csr_matrix(W)
    ody, odx = _k.forward_offsets(radius)
    half, diag, outside = _k.half_stencil(
        W.indptr, W.indices, W.data, h, w, radius, ody, odx
    )
    if outside:
        return None
    return _chebyshev_stencil_eigs(half, diag, ody, odx, nvec, tol)


def _chebyshev_stencil_eigs(half, diag, ody, odx, nvec, tol):
    """:func:`_chebyshev_eigs` of W in half-stencil form (``_k.half_stencil``)."""
    from scipy.sparse.linalg import LinearOperator, eigsh

    h, _, w = half.shape
    n = h * w
    # the degrees of the float32 weights, so that the constant vector stays exact
    deg = np.empty((h, w))
    _k.stencil_product(half, diag, ody, odx, np.ones((h, w)), deg)
    if not (deg > 0).all():
        raise InputError("every pixel needs a positive degree")
    scale = 1.0 / np.sqrt(deg)
    filtered = np.empty((h, w))
    v0 = np.random.default_rng(_SEED).standard_normal(n)
    ncv = min(n - 1, max(2 * nvec + 1, _CHEB_NCV))
    zero = np.zeros((h, w))
    au = np.empty((h, w))
    scratch = np.empty((h, w))

    def product(u):  # A u, A = D^-1/2 W D^-1/2
        _k.chebyshev_step(half, diag, ody, odx, scale, u, zero, au, scratch, 1.0, 0.0, 0.0)
        return au

    # the polynomial need only be small over A's spectrum: below 0.99 it runs from
    # about -0.15 (BSDS images), not -1, so an interval from an estimate of the lowest
    # eigenvalue turns the same degree into a sharper filter (114 and 136 polynomials
    # instead of 136 and 172 on val 101087 and 101085); [-1, cut] if it proves wrong
    with _one_blas_thread():  # (its BLAS sums: the same bits at any thread count)
        floor = _spectrum_floor(product, (h, w))
    for lower in (floor, -1.0) if floor > -1.0 else (-1.0,):
        for cut in _CHEB_CUTS:
            # T_d((mu - c) / e) maps [lower, cut] into [-1, 1]
            e, c = (cut - lower) / 2, (cut + lower) / 2

            def poly(x, e=e, c=c):
                return _k.chebyshev_filter(
                    half,
                    diag,
                    ody,
                    odx,
                    scale,
                    x.reshape(h, w),
                    1.0 / e,
                    -c / e,
                    2.0 / e,
                    -2.0 * c / e,
                    _CHEB_DEGREE,
                    filtered,
                ).ravel()

            op = LinearOperator((n, n), matvec=poly, dtype=np.float64)
            with _one_blas_thread():
                theta, U = eigsh(op, k=nvec, which="LA", tol=tol, v0=v0, ncv=ncv)
            if theta.min() > 1.0:  # every one of them above the cut
                break
        else:
            continue  # (with lower = -1: no cut left, return None below)
        mu = np.empty(nvec)
        with _one_blas_thread():  # (BLAS's dot sums by thread)
            for i in range(nvec):  # Rayleigh quotients in A itself
                u = np.ascontiguousarray(U[:, i]).reshape(h, w)
                mu[i] = float(np.dot(u.ravel(), product(u).ravel()))
        # an eigenvalue below ``lower`` would be lifted above the cut by the filter
        # and show here with its own low mu (impossible with lower = -1)
        if lower == -1.0 or mu.min() > cut:
            break
    else:
        return None
    order = np.argsort(-mu, kind="stable")
    V = U[:, order] * scale.reshape(-1)[:, None]
    return 1.0 - mu[order], _fix_vectors(V, deg.reshape(-1))


def _spectrum_floor(product, shape) -> float:
    """An estimate from below of the smallest eigenvalue of the operator ``product``
    (symmetric, spectrum in [-1, 1]), for the Chebyshev filter's interval:
    :data:`_FLOOR_STEPS` Lanczos steps (fully re-orthogonalised) from a fixed random
    vector; the smallest Ritz value, which lies above the true one, less twice its
    residual and a margin of 0.05, clipped to [-1, 0]. Not a guaranteed bound: the
    caller checks its result and falls back to -1. About 0.1 CPU-s on 481 x 321."""
    n = shape[0] * shape[1]
    m = min(_FLOOR_STEPS, n - 1)
    q = np.random.default_rng(_SEED + 1).standard_normal(n)
    q /= np.linalg.norm(q)
    basis = np.empty((m, n))
    alpha = np.empty(m)
    beta = np.empty(m)
    for j in range(m):
        basis[j] = q
        r = product(q.reshape(shape)).ravel().copy()
        alpha[j] = float(q @ r)
        r -= basis[: j + 1].T @ (basis[: j + 1] @ r)
        beta[j] = float(np.linalg.norm(r))
        if beta[j] <= 1e-12:  # an invariant subspace: its Ritz values are exact
            m = j + 1
            break
        q = r / beta[j]
    t = np.diag(alpha[:m]) + np.diag(beta[: m - 1], 1) + np.diag(beta[: m - 1], -1)
    theta, s = np.linalg.eigh(t)
    residual = abs(beta[m - 1] * s[-1, 0])
    return float(np.clip(theta[0] - 2.0 * residual - 0.05, -1.0, 0.0))


def _one_blas_thread():
    """BLAS and LAPACK on one thread while the block runs (threadpoolctl).

    OpenBLAS's threaded reductions (a dot product, ARPACK's orthogonalisation) sum in
    an order that depends on the thread count, so eigenvalues and eigenvectors would
    change in their last bits with ``OPENBLAS_NUM_THREADS`` (measured: the sPb and
    eigenvalues of val 101085 differed between 1 and 2 threads); at one thread they
    are the same bytes on every run. Two threads also cost twice the CPU-s (78 against
    35 CPU-s on a 481 x 321 image) for little wall time.
    """
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _fix_vectors(V, deg):
    """D-normalise the columns and make each one's largest-magnitude entry positive, in
    place (no temporary as large as V: at 1924 x 1284 it is 340 MB)."""
    V /= np.sqrt(np.einsum("ij,i,ij->j", V, deg, V))[None, :]
    cols = np.arange(V.shape[1])
    big = np.array([np.argmax(np.abs(V[:, j])) for j in cols], np.int64)
    V *= np.sign(V[big, cols])[None, :]
    return V


def _matlab_round(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def oe_filter(
    sigma: float = 1.0, support: float = 3.0, theta: float = 0.0, deriv: int = 1
) -> np.ndarray:
    """BSR's ``oeFilter`` (D. Martin): an oriented Gaussian derivative, supersampled.

    Parameters
    ----------
    sigma : float, optional
        Gaussian scale in px (both axes).
    support : float, optional
        Half-size in sigmas: the filter is ``2 ceil(support sigma) + 1`` px square.
    theta : float, optional
        Orientation in radians, oeFilter's own convention: the derivative runs along
        (row, col) = (cos theta, -sin theta), i.e. it responds to a boundary whose
        tangent is at ``theta`` from +x towards +y (ours, mod pi).
    deriv : {0, 1, 2}, optional
        Order of the derivative across the boundary.

    Returns
    -------
    (s, s) float64
        Zero mean (deriv > 0) and unit L1 norm, for use as a true convolution
        (``conv2``). Built as oeFilter.m builds it: 10 x 10 sub-samples per pixel
        (70 x 70 on a 7 x 7 filter), each evaluated by nearest-neighbour lookup on a
        ten times finer 1-D grid, summed into their pixel; the first sampling axis
        (MATLAB meshgrid's x) is the filter's row axis.
    """
    if deriv not in (0, 1, 2):
        raise InputError(f"deriv must be 0, 1 or 2, got {deriv}")
    hsz = int(np.ceil(support * sigma))
    sz = 2 * hsz + 1
    rate = min(10, max(1, 1000 // sz))
    r = sz // 2 + 0.5 * (1 - 1 / rate)
    dom = np.linspace(-r, r, sz * rate)
    sx, sy = np.meshgrid(dom, dom)
    rows = (_matlab_round(sx) + hsz).astype(np.int64)  # oeFilter's membership:
    cols = (_matlab_round(sy) + hsz).astype(np.int64)  # sx is the row index
    su = sx * np.sin(theta) + sy * np.cos(theta)
    sv = sx * np.cos(theta) - sy * np.sin(theta)
    big_r = r * np.sqrt(2) * 1.01
    nf = int(np.ceil(big_r * rate * 10))
    nf += (nf + 1) % 2
    fdom = np.linspace(-big_r, big_r, nf)
    gap = 2 * big_r / (nf - 1)
    fx = np.exp(-(fdom**2) / (2 * sigma**2))
    fy = np.exp(-(fdom**2) / (2 * sigma**2))
    if deriv == 1:
        fy = fy * (-fdom / sigma**2)
    elif deriv == 2:
        fy = fy * (fdom**2 / sigma**2 - 1)
    xi = (_matlab_round(su / gap) + nf // 2).astype(np.int64)
    yi = (_matlab_round(sv / gap) + nf // 2).astype(np.int64)
    vals = fx[xi] * fy[yi]
    f = np.zeros((sz, sz))
    # MATLAB's isum accumulates in column-major order of the grid
    np.add.at(f, (rows.ravel(order="F"), cols.ravel(order="F")), vals.ravel(order="F"))
    if deriv > 0:
        f -= f.mean()
    total = np.abs(f).sum()
    if total > 0:
        f /= total
    return f


def _cubic(x):
    """Keys' cubic convolution kernel with a = -0.5 (MATLAB imresize's 'bicubic')."""
    ax = np.abs(x)
    ax2, ax3 = ax * ax, ax * ax * ax
    return (1.5 * ax3 - 2.5 * ax2 + 1) * (ax <= 1) + (
        -0.5 * ax3 + 2.5 * ax2 - 4 * ax + 2
    ) * ((ax > 1) & (ax <= 2))


def _resize_weights(n_in: int, n_out: int, scale: float | None = None) -> np.ndarray:
    """(n_out, n_in) interpolation matrix of MATLAB's ``imresize(., 'bicubic')`` along
    one axis: output pixel x (1-based) samples ``u = x / s + (1 - 1 / s) / 2`` with
    s = n_out / n_in (or the scale factor MATLAB was given), the kernel widened by
    1 / s when shrinking (antialiasing), the weights normalised to sum 1, indices past
    the ends mirrored."""
    if scale is None:
        scale = n_out / n_in
    width = 4.0
    kern = _cubic
    if scale < 1:
        width = 4.0 / scale
        kern = lambda t: scale * _cubic(scale * t)  # noqa: E731
    x = np.arange(1, n_out + 1, dtype=np.float64)
    u = x / scale + 0.5 * (1 - 1 / scale)
    left = np.floor(u - width / 2)
    taps = int(np.ceil(width)) + 2
    ind = left[:, None] + np.arange(taps)[None, :]
    wts = kern(u[:, None] - ind)
    wts /= wts.sum(axis=1, keepdims=True)
    mirror = np.concatenate([np.arange(n_in), np.arange(n_in)[::-1]])
    ind = mirror[np.mod(ind.astype(np.int64) - 1, 2 * n_in)]
    out = np.zeros((n_out, n_in))
    np.add.at(out, (np.repeat(np.arange(n_out), taps), ind.ravel()), wts.ravel())
    return out


def imresize_bicubic(
    img: np.ndarray, shape=None, *, scale: float | None = None
) -> np.ndarray:
    """MATLAB's ``imresize(img, shape)`` or ``imresize(img, scale)`` (bicubic,
    antialiased when shrinking) of a 2-D float64 image, the axis with the smaller
    scale first as MATLAB does.

    BSR resizes with it when the eigenproblem is solved at reduced size (``rsz < 1``):
    the weighted cues by the factor rsz (the output ``ceil(rsz * size)``, the kernel
    at exactly rsz, as MATLAB does for a scale factor), and the eigenvectors back to
    the original size. Octave's image package resizes differently; we follow MATLAB's
    documented algorithm.
    """
    img = np.asarray(img, np.float64)
    h, w = img.shape
    if scale is not None:
        ho, wo = int(np.ceil(scale * h)), int(np.ceil(scale * w))
        rows, cols = _resize_weights(h, ho, scale), _resize_weights(w, wo, scale)
        sy = sx = scale
    else:
        ho, wo = int(shape[0]), int(shape[1])
        rows, cols = _resize_weights(h, ho), _resize_weights(w, wo)
        sy, sx = ho / h, wo / w
    if sy <= sx:
        return (rows @ img) @ cols.T
    return rows @ (img @ cols.T)


def _channel_filters() -> np.ndarray:
    """(8, 7, 7) correlation kernels, ours channel k: oeFilter at theta = k pi / 8
    (theta = pi for k = 0, as BSR's o = 8), turned by 180 degrees for conv2."""
    out = np.empty((NORIENT, 7, 7))
    for k in range(NORIENT):
        o = k if k else NORIENT
        out[k] = oe_filter(1.0, 3.0, o * np.pi / NORIENT, 1)[::-1, ::-1]
    return out


def oriented_response(vectors: np.ndarray) -> np.ndarray:
    """sPb's filtering: ``sum_v |f_k (x) vec_v|`` for the 8 channel filters.

    Parameters
    ----------
    vectors : (nv, H, W) float64
        The weighted eigenvector images (``vec / sqrt(lambda)``).

    Returns
    -------
    (8, H, W) float64, our channel order.
    """
    nv, h, w = vectors.shape
    pad = np.pad(vectors, ((0, 0), (3, 3), (3, 3)), mode="symmetric")  # padReflect
    out = np.zeros((NORIENT, h, w))
    _k.oriented_energy(np.ascontiguousarray(pad), _channel_filters(), out)
    return out


def spectral_pb(
    mpb,
    *,
    nvec: int = 17,
    out_shape=None,
    solver: str = "auto",
    tol: float = _TOL,
    eigenpairs=None,
    timings: dict | None = None,
):
    """gPb's spectral boundary cue sPb, as BSR's ``spectralPb.m``.

    Parameters
    ----------
    mpb : (h, w) array_like of float in [0, 1]
        The thinned mPb (BSR's ``mPb_nmax``: non-max suppressed, x1.2, clipped), at
        the size the eigenproblem is solved at.
    nvec : int, optional
        Eigenvectors computed, the trivial one included; ``nvec - 1`` are used (16).
    out_shape : (H, W), optional
        The size of sPb; default ``mpb``'s. BSR's ``rsz < 1``: ``mpb`` is
        ``mPb_nmax_rsz`` (the weighted cues resized by rsz, then thinned) and the
        eigenvectors are resized to (H, W) by MATLAB's bicubic ``imresize``.
    solver : str, optional
        See :func:`spectral_eigs`.
    tol : float, optional
        The eigensolver's relative accuracy, see :func:`spectral_eigs`.
    eigenpairs : (eigenvalues, eigenvectors), optional
        Solved already, as :func:`spectral_eigs` returns them (e.g. by the
        coarse-to-fine :func:`._gpb_multigrid.multigrid_eigs`): no solve here.
    timings : dict, optional
        Filled with the CPU seconds (``time.process_time``) of the stages: ``'W'``
        (the affinity), ``'eigenvectors'`` (the eigensolver) and ``'sPb'`` (the
        resizing, normalisation and oriented filtering).

    Returns
    -------
    spb : (8, H, W) float64
        The oriented spectral signal, unnormalised; channel k is the boundary whose
        tangent is at ``k pi / 8`` from +x (right) towards +y (down).
    eigenvalues : (nvec - 1,) float64
        The generalized eigenvalues used, ascending (the trivial 0 dropped).
    eigenvectors : (nvec - 1, h, w) float64
        The generalized eigenvectors at the solved size, D-normalised,
        largest-magnitude entry positive (before resizing and sPb's min-max).

    Notes
    -----
    Each eigenvector (resized to (H, W) if asked) is min-max normalised to [0, 1]
    and divided by ``sqrt(lambda)``; a vector whose lambda is not positive
    (numerical noise) is skipped, as in BSR. Sign and scale of the eigenvectors
    therefore do not matter. Deterministic: a fixed start vector, so one image gives
    the same bytes on every run on one machine, at any BLAS thread count (the
    solver's BLAS runs on one thread).
    """
    a = _check_mpb(mpb)
    h, w = a.shape
    H, W_ = (h, w) if out_shape is None else (int(out_shape[0]), int(out_shape[1]))
    if H < 1 or W_ < 1:
        raise InputError(f"out_shape must be positive, got {out_shape}")
    if not 2 <= int(nvec) < h * w:
        raise InputError(
            f"nvec must be in [2, {h * w - 1}] for mpb of {h} x {w}, got {nvec}"
        )
    clock = time.process_time
    t_w = t_eig = 0.0
    found = None
    tried_stencil = False
    if eigenpairs is not None:
        found = eigenpairs
    elif solver not in SOLVERS:
        raise InputError(f"solver must be one of {SOLVERS}, got {solver!r}")
    small = h * w < max(_DENSE_MIN, 4 * int(nvec))
    if (
        found is None
        and not small
        and (solver == "chebyshev" or (solver == "auto" and h * w >= _CHEB_MIN))
    ):
        # the solver's own form of W, straight from the mPb (no CSR matrix)
        t = clock()
        half, diag, ody, odx = _affinity_stencil(a)
        t_w += clock() - t
        t = clock()
        found = _chebyshev_stencil_eigs(half, diag, ody, odx, int(nvec), tol)
        tried_stencil = True
        del half, diag
        t_eig += clock() - t
    if found is None:  # a small grid, another solver, or every cut failed
        t = clock()
        W = affinity_matrix(a)
        t_w += clock() - t
        t = clock()
        # the cuts failed: Lanczos, as spectral_eigs would do next (not Chebyshev again)
        again = "lanczos" if tried_stencil else solver
        found = spectral_eigs(W, nvec, solver=again, tol=tol, shape=(h, w))
        del W
        t_eig += clock() - t
    lam, V = found
    t2 = clock()
    lam, V = lam[1:], V[:, 1:]
    vecs = np.ascontiguousarray(V.T).reshape(-1, h, w)
    keep = np.flatnonzero(lam > 0)
    work = np.empty((keep.size, H, W_))
    for i, v in enumerate(keep):
        img = vecs[v] if (H, W_) == (h, w) else imresize_bicubic(vecs[v], (H, W_))
        lo, hi = img.min(), img.max()
        # a constant vector (never, for a connected W) stays 0 rather than 0/0
        work[i] = (img - lo) / ((hi - lo) if hi > lo else 1.0) / np.sqrt(lam[v])
    spb = oriented_response(work)
    if timings is not None:
        timings.update({"W": t_w, "eigenvectors": t_eig, "sPb": clock() - t2})
    return spb, lam, vecs
