"""Compiled kernels of gPb's local cues (mPb): the nearest-centre assignment and centre
update of the per-image texton k-means, and the row-wise filter of ``fitparab``. (BSR's
16-slice histogram gradient is the kernel shared with Pb, :mod:`._half_disc_kernels`.)

Sources read (never copied): BSR ``lib_image.cc`` (``weight_matrix_disc``,
``conv_in_place_1D``), ``savgol_border.cpp`` and the k-means ``basic_clusterer.hh``.
"""

from __future__ import annotations

import numba
import numpy as np

from ..compilation import prepare_kernels

prepare_kernels()

__all__ = []

# reassociation lets LLVM vectorise the per-bin sums; the results move by rounding only
_FAST = {"reassoc", "contract", "nsz"}


@numba.njit(cache=True, fastmath=_FAST)
def _nearest(items, centres, cnorm, assign):
    """Index of the nearest centre (squared L2; the first at ties) of every item.

    ``items`` (n, d) and ``centres`` (k, d) float64, ``cnorm`` the centres' squared
    norms. The squared distance ``|x|^2 - 2 x.c + |c|^2`` ranks centres the same as
    ``|x - c|^2`` up to rounding; the dot product vectorises. Fills ``assign``
    (int64) and returns how many items changed centre.
    """
    n, d = items.shape
    k = centres.shape[0]
    changed = 0
    for i in range(n):
        xi = items[i]
        best = np.inf
        arg = 0
        for j in range(k):
            cj = centres[j]
            dot = 0.0
            for m in range(d):
                dot += xi[m] * cj[m]
            dist = cnorm[j] - 2.0 * dot
            if dist < best:
                best = dist
                arg = j
        if assign[i] != arg:
            changed += 1
            assign[i] = arg
    return changed


@numba.njit(cache=True)
def _centre_sums(items, assign, k):
    """Per-centre sums and counts of the items assigned to it: ((k, d), (k,))."""
    n, d = items.shape
    sums = np.zeros((k, d), np.float64)
    counts = np.zeros(k, np.int64)
    for i in range(n):
        a = assign[i]
        counts[a] += 1
        for m in range(d):
            sums[a, m] += items[i, m]
    return sums, counts


@numba.njit(cache=True, fastmath=_FAST)
def _parab_rect(z, du, dv, wts, y0, y1, x0, x1, out):
    """One fixed filter of fitparab on the rectangle [y0, y1) x [x0, x1): ``out[y, x] =
    sum_k wts[k] z[y + dv[k], x + du[k]]`` (``du``, ``dv``: column and row offsets of
    the ellipse points used; the caller guarantees they stay inside ``z``).

    One tap at a time over a whole output row, so the inner loop is a contiguous
    multiply-add that vectorises. fitparab's interior filter is symmetric under a
    180-degree turn, so this correlation is conv2's convolution; along a border band
    the caller passes the least-squares weights of the points inside the image.
    """
    if y1 <= y0 or x1 <= x0:
        return out
    n = x1 - x0
    if n < 8:  # a narrow band (one column): a dot product per pixel
        for y in range(y0, y1):
            for x in range(x0, x1):
                a = 0.0
                for k in range(du.shape[0]):
                    a += wts[k] * z[y + dv[k], x + du[k]]
                out[y, x] = a
        return out
    acc = np.zeros(n, np.float64)
    for y in range(y0, y1):
        acc[:] = 0.0
        for k in range(du.shape[0]):
            wk = wts[k]
            src = z[y + dv[k], x0 + du[k]:x1 + du[k]]
            for i in range(n):
                acc[i] += wk * src[i]
        out[y, x0:x1] = acc
    return out
