"""Compiled stencil kernels of gPb's affinity applied to a block of vectors at once.

The affinity W is held in the half-stencil form of :mod:`._gpb_spectral_kernels`
(``half`` (height, K, width) float32 forward weights, ``diag`` (height * width,)). A
block of m vectors is stored pixel-major, (height, width, m) float64, so that each
weight, read once, multiplies m contiguous values: the inner loop runs over the block
and vectorises, and W is read from memory once per block product instead of once per
vector. Per element the additions run in the order of the single-vector kernels
(diagonal, then per offset the forward and the backward term), so a block product
equals m single-vector products bit for bit.
"""

from __future__ import annotations

import numba
import numpy as np

from ..compilation import prepare_kernels

prepare_kernels()

__all__ = []


@numba.njit(cache=True, inline="always")
def _block_row(half, diag, ody, odx, z, ring, y, acc):
    """acc (width, m) = row y of W z; row r of z is ``z[r % ring]`` (ring = height for
    a whole block)."""
    height, nk, width = half.shape
    m = acc.shape[1]
    zy = z[y % ring]
    base = y * width
    for x in range(width):
        d = diag[base + x]
        for j in range(m):
            acc[x, j] = d * zy[x, j]
    for k in range(nk):
        dy = ody[k]
        dx = odx[k]
        x0 = max(0, -dx)
        x1 = min(width, width - dx)
        if y + dy < height:
            wrow = half[y, k]
            zrow = z[(y + dy) % ring]
            for x in range(x0, x1):
                wgt = np.float64(wrow[x])
                for j in range(m):
                    acc[x, j] += wgt * zrow[x + dx, j]
        if y - dy >= 0:
            wrow = half[y - dy, k]
            zrow = z[(y - dy) % ring]
            for x in range(x0, x1):
                wgt = np.float64(wrow[x])
                for j in range(m):
                    acc[x + dx, j] += wgt * zrow[x, j]


@numba.njit(cache=True)
def block_product(half, diag, ody, odx, z, out):
    """``out = W z`` for a (height, width, m) block z; out may not alias z."""
    height, nk, width = half.shape
    acc = np.empty((width, z.shape[2]))
    for y in range(height):
        _block_row(half, diag, ody, odx, z, height, y, acc)
        out[y] = acc


@numba.njit(cache=True)
def block_chebyshev_filter(
    half, diag, ody, odx, scale, x0, alpha1, beta1, alpha, beta, degree, out
):
    """The Chebyshev recurrence of ``_gpb_spectral_kernels.chebyshev_filter`` on a
    (height, width, m) block, in one sweep down the rows.

    ``L_0 = x0``; ``L_1 = alpha1 S W S x0 + beta1 x0``; ``L_i = alpha S W S L_(i-1) +
    beta L_(i-1) - L_(i-2)``; ``L_degree`` is written to ``out`` and returned.
    ``S x0`` is kept in a ring of rows like the inner levels (no whole scaled copy),
    so for ``degree >= 3`` ``out`` may be ``x0`` itself (a row is written only after
    its last read): the filter then needs no second block.
    """
    height, nk, width = half.shape
    m = x0.shape[2]
    reach = 0
    for k in range(nk):
        reach = max(reach, ody[k])
    ring = 2 * reach + 2
    levels = np.empty((degree + 1, ring, width, m))
    scaled = np.empty((degree + 1, ring, width, m))  # scaled[0]: S x0
    acc = np.empty((width, m))
    lead = min(height, reach)
    for r in range(lead):  # S x0 rows 0 .. reach - 1, before level 1 needs them
        s0 = scaled[0, r % ring]
        for x in range(width):
            sc = scale[r, x]
            for j in range(m):
                s0[x, j] = sc * x0[r, x, j]
    for t in range(height + reach * (degree - 1)):
        r = t + reach
        if r < height:  # level 1 at row t reads S x0 up to row t + reach
            s0 = scaled[0, r % ring]
            for x in range(width):
                sc = scale[r, x]
                for j in range(m):
                    s0[x, j] = sc * x0[r, x, j]
        for i in range(1, degree + 1):
            y = t - reach * (i - 1)
            if y < 0:
                break
            if y >= height:
                continue
            _block_row(half, diag, ody, odx, scaled[i - 1], ring, y, acc)
            cur = x0[y] if i == 1 else levels[i - 1, y % ring]
            row = out[y] if i == degree else levels[i, y % ring]
            if i == 1:
                for x in range(width):
                    sc = scale[y, x]
                    for j in range(m):
                        row[x, j] = alpha1 * sc * acc[x, j] + beta1 * cur[x, j] + 0.0 * 0.0
            else:
                prev = x0[y] if i == 2 else levels[i - 2, y % ring]
                for x in range(width):
                    sc = scale[y, x]
                    for j in range(m):
                        row[x, j] = (
                            alpha * sc * acc[x, j] + beta * cur[x, j] + -1.0 * prev[x, j]
                        )
            if i < degree:
                srow = scaled[i, y % ring]
                for x in range(width):
                    sc = scale[y, x]
                    for j in range(m):
                        srow[x, j] = sc * row[x, j]
    return out


@numba.njit(cache=True, inline="always")
def _spread(coarse, z, ring, r):
    """Row r of the coarse block spread on the fine grid, into ``z[r % ring]``."""
    zr = z[r % ring]
    zr[:] = 0.0
    if r % 2 == 0:
        src = coarse[r // 2]
        for x in range(0, zr.shape[0], 2):
            for j in range(zr.shape[1]):
                zr[x, j] = src[x // 2, j]


@numba.njit(cache=True)
def block_interpolate(half, diag, ody, odx, coarse, d, out):
    """``out[k] = sum_I W_kI coarse_I / d_k`` over the kept pixels I (even row and
    column; ``coarse`` (ceil(h / 2), ceil(w / 2), m)): W times the coarse block spread
    on the fine grid (0 off the kept pixels), that spread held in a ring of rows."""
    height, nk, width = half.shape
    m = coarse.shape[2]
    reach = 0
    for k in range(nk):
        reach = max(reach, ody[k])
    ring = 2 * reach + 2
    z = np.zeros((ring, width, m))
    acc = np.empty((width, m))
    for r in range(min(height, reach + 1)):
        _spread(coarse, z, ring, r)
    for y in range(height):
        if y > 0 and y + reach < height:
            _spread(coarse, z, ring, y + reach)
        _block_row(half, diag, ody, odx, z, ring, y, acc)
        row = out[y]
        for x in range(width):
            dk = d[y, x]
            for j in range(m):
                row[x, j] = acc[x, j] / dk
    return out


@numba.njit(cache=True)
def block_normalized_band(half, diag, ody, odx, scale, u, y0, y1, out):
    """Rows ``y0 .. y1 - 1`` of ``A u`` with ``A = S W S`` (``S = diag(scale)``) for a
    (height, width, m) block u, into ``out`` (y1 - y0, width, m): a band of the
    product without the whole of it (``S u`` is formed for the band's reach only)."""
    height, nk, width = half.shape
    m = u.shape[2]
    reach = 0
    for k in range(nk):
        reach = max(reach, ody[k])
    ring = (y1 - y0) + 2 * reach + 1  # rows y0 - reach .. y1 + reach - 1, no wrap
    z = np.empty((ring, width, m))
    for r in range(max(0, y0 - reach), min(height, y1 + reach)):
        zr = z[r % ring]
        for x in range(width):
            sc = scale[r, x]
            for j in range(m):
                zr[x, j] = sc * u[r, x, j]
    acc = np.empty((width, m))
    for y in range(y0, y1):
        _block_row(half, diag, ody, odx, z, ring, y, acc)
        row = out[y - y0]
        for x in range(width):
            sc = scale[y, x]
            for j in range(m):
                row[x, j] = sc * acc[x, j]
    return out
