"""Compiled kernels of the Pb detectors: the oriented parabola fit
(``fitparab``/``savgol``) and Martin's 8-case non-maximum suppression. (The half-disc
histogram gradients are the kernel shared with gPb's cues, :mod:`._half_disc_kernels`.)

Every kernel takes arrays of one dtype each (float64 values, int64 offsets), so each
compiles once. The Python side (:mod:`._pb`) builds the tables and calls one kernel per
cue or per orientation, never per pixel.

Sources read (never copied): the BSDS300 segbench MATLAB code by D. Martin,
``fitparab.m`` and ``savgol.m`` (the parabola fit), ``nonmax.m``.
"""

from __future__ import annotations

import numba
import numpy as np

from ..compilation import prepare_kernels

prepare_kernels()

__all__ = []


# strict floating point, stated (Numba hands a fastmath caller's flags to a callee that
# sets none)
@numba.njit(cache=True, fastmath=False)
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
    # interior: the filter, one tap at a time over a whole output row, so the inner
    # loop is a contiguous multiply-add that vectorises; each output still sums its
    # taps in order k = 0, 1, ..., in strict floating point (no fused multiply-add),
    # so the values are those of the per-pixel sum to the bit
    x0, x1 = wr, w - wr
    nx = x1 - x0
    if nx > 0:
        acc = np.zeros(nx, np.float64)
        for y in range(wr, h - wr):
            acc[:] = 0.0
            for k in range(du.shape[0]):
                wk = wts[k]
                src = z[y + dv[k], x0 + du[k] : x1 + du[k]]
                for i in range(nx):
                    acc[i] += wk * src[i]
            out[y, x0:x1] = acc
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


@numba.njit(cache=True, fastmath=False)
def _edge_classes(a0, a1, n, wr):
    """Along one axis, for positions a0..a1-1 of n: the class of each position (which
    offsets -wr..wr stay inside 0..n-1 decides it; positions of one class are
    consecutive) and each class's lowest and highest offset inside."""
    m = a1 - a0
    cls = np.empty(m, np.int64)
    lo = np.empty(m, np.int64)
    hi = np.empty(m, np.int64)
    nc = 0
    for i in range(m):
        a = a0 + i
        lo_i, hi_i = max(-a, -wr), min(n - 1 - a, wr)
        if nc == 0 or lo_i != lo[nc - 1] or hi_i != hi[nc - 1]:
            lo[nc] = lo_i
            hi[nc] = hi_i
            nc += 1
        cls[i] = nc - 1
    return cls, lo[:nc], hi[:nc]


@numba.njit(cache=True, fastmath=False)
def _fit_region(z, du, dv, dist, y0, y1, x0, x1, out):
    """fitparab.m's border fit on the rectangle [y0, y1) x [x0, x1): the moments of
    ``d`` and ``z`` over the support points inside the image, accumulated one support
    point at a time in support order, then the 3x3 normal equations solved by
    cofactors with ``+ eps`` on the determinant, as fitparab.m does.

    The moments of ``d`` alone depend only on which support points are inside, which
    is the same for all pixels of a row class and column class (the distance to each
    edge, up to the support's reach): they are accumulated once per pair of classes,
    in the same order, so they are the per-pixel sums to the bit."""
    h, w = z.shape
    ny, nx = y1 - y0, x1 - x0
    if ny <= 0 or nx <= 0:
        return
    wr = 0
    for k in range(du.shape[0]):
        wr = max(wr, abs(du[k]), abs(dv[k]))
    cy, ylo, yhi = _edge_classes(y0, y1, h, wr)
    cx, xlo, xhi = _edge_classes(x0, x1, w, wr)
    geo = np.zeros((5, ylo.shape[0], xlo.shape[0]), np.float64)
    for k in range(du.shape[0]):
        d = dist[k]
        d2 = d * d
        for i in range(ylo.shape[0]):
            if dv[k] < ylo[i] or dv[k] > yhi[i]:
                continue
            for j in range(xlo.shape[0]):
                if du[k] < xlo[j] or du[k] > xhi[j]:
                    continue
                geo[0, i, j] += 1.0
                geo[1, i, j] += d
                geo[2, i, j] += d2
                geo[3, i, j] += d * d2
                geo[4, i, j] += d2 * d2
    mom = np.zeros((3, ny, nx), np.float64)
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
                mom[0, i, j] += zi
                mom[1, i, j] += zi * d
                mom[2, i, j] += zi * d2
    eps = 2.220446049250313e-16
    for i in range(ny):
        gi = cy[i]
        for j in range(nx):
            gj = cx[j]
            d0, d1, d2, d3, d4 = (
                geo[0, gi, gj],
                geo[1, gi, gj],
                geo[2, gi, gj],
                geo[3, gi, gj],
                geo[4, gi, gj],
            )
            v0, v1, v2 = mom[0, i, j], mom[1, i, j], mom[2, i, j]
            det = (
                -d2 * d2 * d2
                + 2.0 * d1 * d2 * d3
                - d0 * d3 * d3
                - d1 * d1 * d4
                + d0 * d2 * d4
            )
            out[y0 + i, x0 + j] = (
                (-d3 * d3 + d2 * d4) * v0
                + (d2 * d3 - d1 * d4) * v1
                + (-d2 * d2 + d1 * d3) * v2
            ) / (det + eps)


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
                if (
                    xa < 0
                    or xa >= w
                    or ya < 0
                    or ya >= h
                    or xb < 0
                    or xb >= w
                    or yb < 0
                    or yb >= h
                ):
                    continue
                if v < im[ya, xa] * (1.0 - d) + im[yb, xb] * d:
                    out[y, x] = 0.0
                    break
    return out
