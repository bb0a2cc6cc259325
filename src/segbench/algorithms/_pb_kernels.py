"""Compiled kernels of the Pb detectors: half-disc histogram gradients, the oriented
parabola fit (``fitparab``/``savgol``) and Martin's 8-case non-maximum suppression.

Every kernel takes arrays of one dtype each (int32 labels, float64 values, int64
offsets), so each compiles once. The Python side (:mod:`._pb`) builds the offset tables
and calls one kernel per cue or per orientation, never per pixel.

Sources read (never copied): the BSDS300 segbench MATLAB code by D. Martin,
``Gradients/tgso.m`` (half-disc masks, chi-squared), ``cgmo.m`` (the colour similarity
form), ``fitparab.m`` and ``savgol.m`` (the parabola fit), ``nonmax.m``.
"""

from __future__ import annotations

import numba
import numpy as np

from ..compilation import prepare_kernels

prepare_kernels()

__all__ = []


@numba.njit(cache=True, inline="always")
def _distance(hl, hr, nbins, count, sim, use_sim, nz, dv):
    """Distance between the two half-disc histograms (integer counts).

    ``use_sim == 0``: chi-squared of the normalized histograms ``l = 2 L / count``,
    ``0.5 sum (l - r)^2 / (l + r)`` = ``sum (L - R)^2 / (L + R) / count``, empty bins
    skipped (tgso.m adds eps to the denominator instead: the same to 1e-16).
    ``use_sim == 1``: ``d' S d`` with ``d = |l - r|`` and a symmetric bin similarity
    ``S`` with zero diagonal (cgmo.m's), as ``2 sum_{i<j} S_ij d_i d_j`` over the bins
    where ``d != 0`` only, so smooth regions, whose pixels fill few bins, cost little.
    """
    if use_sim == 0:
        acc = 0.0
        for b in range(nbins):
            t = hl[b] + hr[b]
            if t > 0:
                d = np.float64(hl[b] - hr[b])
                acc += d * d / t
        return acc / count
    n = 0
    for b in range(nbins):
        diff = hl[b] - hr[b]
        if diff != 0:
            nz[n] = b
            dv[n] = abs(diff)
            n += 1
    acc = 0.0
    for i in range(1, n):
        srow = sim[nz[i]]
        row = 0.0
        for j in range(i):
            row += srow[nz[j]] * dv[j]
        acc += dv[i] * row
    scale = 2.0 / count
    return 2.0 * acc * scale * scale


@numba.njit(cache=True)
def _half_disc_gradient(padded, h, w, wr, nbins, offs, ptr, count, sim, use_sim):
    """Oriented half-disc histogram gradient of a label map, all orientations.

    ``padded`` is the (h + 2 wr, w + 2 wr) label map (0..nbins-1) padded with the label
    ``nbins``, an extra bin that the distance ignores, so pixels outside the image
    count in neither half (as conv2's zero padding in tgso.m).

    ``offs`` holds linear offsets into the flattened padded map; row ``ptr[0]`` gives
    the whole disc (``offs[ptr[0, 0]:ptr[0, 1]]``), the pixels that enter it when the
    centre moves one column right (``ptr[0, 1]:ptr[0, 2]``, relative to the new
    centre) and those that leave it (``ptr[0, 2]:ptr[0, 3]``); row ``1 + o`` the same
    for the left half disc of orientation ``o``. The right half's histogram is the
    disc's minus the left's, so each orientation updates one half only.

    Invariant: after each move the histograms equal those counted from scratch (they
    are integer counts, so running updates are exact); each row starts from a full
    count. Returns (norient, h, w) float64.
    """
    norient = ptr.shape[0] - 1
    pw = w + 2 * wr
    flat = padded.ravel()
    out = np.empty((norient, h, w), np.float64)
    disc = np.zeros(nbins + 1, np.int64)
    hl = np.zeros((norient, nbins + 1), np.int64)
    hr = np.zeros(nbins + 1, np.int64)
    nz = np.empty(nbins, np.int64)
    dv = np.empty(nbins, np.float64)
    for y in range(h):
        base = (y + wr) * pw + wr
        for x in range(w):
            for r in range(norient + 1):
                p = ptr[r]
                hist = disc if r == 0 else hl[r - 1]
                if x == 0:
                    hist[:] = 0
                    for k in range(p[0], p[1]):
                        hist[flat[base + offs[k]]] += 1
                else:
                    for k in range(p[1], p[2]):
                        hist[flat[base + offs[k]]] += 1
                    for k in range(p[2], p[3]):
                        hist[flat[base + offs[k]]] -= 1
                if r > 0:
                    for bb in range(nbins):
                        hr[bb] = disc[bb] - hist[bb]
                    out[r - 1, y, x] = _distance(hist, hr, nbins, count, sim, use_sim,
                                                 nz, dv)
            base += 1
    return out


@numba.njit(cache=True)
def _fit_parab(z, du, dv, dist, wts, wr):
    """Constant term of the least-squares parabola ``a + b d + c d^2`` fitted over an
    elliptical neighbourhood of every pixel (fitparab.m).

    ``du``, ``dv`` (column, row offsets) list the support, ``dist`` each point's
    signed distance ``d`` along the fit direction, ``wts`` the fit's weights for a
    support wholly inside the image (savgol.m's filter). Pixels closer than ``wr`` to
    the border are fitted over the support points inside the image only, solving the
    3x3 normal equations by cofactors with ``+ eps`` on the determinant, as fitparab.m
    recomputes them.
    """
    h, w = z.shape
    out = np.zeros((h, w), np.float64)
    n = du.shape[0]
    # interior: the filter; four neighbouring outputs share each tap's weight and
    # index (each output sums its taps in the same order, so the blocking does not
    # change a bit)
    flat = z.ravel()
    x1 = w - wr
    for y in range(wr, h - wr):
        x = wr
        while x + 4 <= x1:
            a0 = a1 = a2 = a3 = 0.0
            for k in range(n):
                i = (y + dv[k]) * w + x + du[k]
                wk = wts[k]
                a0 += wk * flat[i]
                a1 += wk * flat[i + 1]
                a2 += wk * flat[i + 2]
                a3 += wk * flat[i + 3]
            out[y, x] = a0
            out[y, x + 1] = a1
            out[y, x + 2] = a2
            out[y, x + 3] = a3
            x += 4
        while x < x1:
            a0 = 0.0
            for k in range(n):
                a0 += wts[k] * flat[(y + dv[k]) * w + x + du[k]]
            out[y, x] = a0
            x += 1
    # the border band: four rectangles fitted over the points inside the image
    top = min(wr, h)
    bottom = max(h - wr, top)
    left = min(wr, w)
    right = max(w - wr, left)
    _fit_region(z, du, dv, dist, 0, top, 0, w, out)
    _fit_region(z, du, dv, dist, bottom, h, 0, w, out)
    _fit_region(z, du, dv, dist, top, bottom, 0, left, out)
    _fit_region(z, du, dv, dist, top, bottom, right, w, out)
    return out


@numba.njit(cache=True)
def _fit_region(z, du, dv, dist, y0, y1, x0, x1, out):
    """fitparab.m's border fit on the rectangle [y0, y1) x [x0, x1): the moments of
    ``d`` and ``z`` over the support points inside the image, accumulated one support
    point at a time over contiguous runs, then the 3x3 normal equations solved by
    cofactors with ``+ eps`` on the determinant, as fitparab.m does."""
    h, w = z.shape
    ny, nx = y1 - y0, x1 - x0
    if ny <= 0 or nx <= 0:
        return
    mom = np.zeros((8, ny, nx), np.float64)
    for k in range(du.shape[0]):
        d = dist[k]
        d2 = d * d
        xa = max(x0, -du[k])
        xb = min(x1, w - du[k])
        for y in range(max(y0, -dv[k]), min(y1, h - dv[k])):
            src = z[y + dv[k]]
            i = y - y0
            for x in range(xa, xb):
                j = x - x0
                zi = src[x + du[k]]
                mom[0, i, j] += 1.0
                mom[1, i, j] += d
                mom[2, i, j] += d2
                mom[3, i, j] += d * d2
                mom[4, i, j] += d2 * d2
                mom[5, i, j] += zi
                mom[6, i, j] += zi * d
                mom[7, i, j] += zi * d2
    eps = 2.220446049250313e-16
    for i in range(ny):
        for j in range(nx):
            d0, d1, d2, d3, d4 = (mom[0, i, j], mom[1, i, j], mom[2, i, j],
                                  mom[3, i, j], mom[4, i, j])
            v0, v1, v2 = mom[5, i, j], mom[6, i, j], mom[7, i, j]
            det = (-d2 * d2 * d2 + 2.0 * d1 * d2 * d3 - d0 * d3 * d3 - d1 * d1 * d4
                   + d0 * d2 * d4)
            out[y0 + i, x0 + j] = ((-d3 * d3 + d2 * d4) * v0 + (d2 * d3 - d1 * d4) * v1
                                   + (-d2 * d2 + d1 * d3) * v2) / (det + eps)


@numba.njit(cache=True, inline="always")
def _tan_case(phi):
    """nonmax.m's case (0..3 for the 45-degree blocks of the normal angle) and the
    interpolation weight ``d`` in [0, 1]."""
    q = np.pi / 4.0
    if phi < q:
        return 0, np.tan(phi)
    if phi < 2.0 * q:
        return 1, np.tan(np.pi / 2.0 - phi)
    if phi < 3.0 * q:
        return 2, np.tan(phi - np.pi / 2.0)
    return 3, np.tan(np.pi - phi)


@numba.njit(cache=True)
def _nonmax(im, theta):
    """Martin's non-maximum suppression (nonmax.m) across the orientation ``theta``.

    ``theta`` (per pixel, radians) is the boundary's tangent, measured from +x (the
    column) towards +y (the row, down); the normal is ``phi = mod(theta + pi/2, pi)``.
    In each direction along the normal the value is interpolated linearly between the
    two 8-neighbours that bracket it; a pixel below either interpolated value is
    zeroed. A direction whose two neighbours are not both inside the image is skipped.
    Reads only ``im``, so the result does not depend on the visiting order.
    """
    h, w = im.shape
    out = im.copy()
    for y in range(h):
        for x in range(w):
            v = im[y, x]
            phi = np.mod(theta[y, x] + np.pi / 2.0, np.pi)
            case, d = _tan_case(phi)
            # (ax, ay), (bx, by): neighbours A and B in the forward direction;
            # the backward direction uses their point reflections
            if case == 0:
                ax, ay, bx, by = 1, 0, 1, 1
            elif case == 1:
                ax, ay, bx, by = 0, 1, 1, 1
            elif case == 2:
                ax, ay, bx, by = 0, 1, -1, 1
            else:
                ax, ay, bx, by = -1, 0, -1, 1
            for sgn in (1, -1):
                xa, ya = x + sgn * ax, y + sgn * ay
                xb, yb = x + sgn * bx, y + sgn * by
                if (xa < 0 or xa >= w or ya < 0 or ya >= h or xb < 0 or xb >= w
                        or yb < 0 or yb >= h):
                    continue
                if v < im[ya, xa] * (1.0 - d) + im[yb, xb] * d:
                    out[y, x] = 0.0
                    break
    return out
