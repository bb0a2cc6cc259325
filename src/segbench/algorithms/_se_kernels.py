"""Compiled kernels of the structured edge forests' channel features (Dollár and
Zitnick): CIE L*u*v* conversion, triangle smoothing, gradient magnitude and orientation,
orientation histograms.

Every kernel works on float32 planes as the MATLAB toolbox's mex files do (its channels
are ``single``), one call per image or per channel plane, never per pixel. The Python
side (:mod:`._se_channels`) builds the tables and owns the order of the stages.

Sources read (never copied): P. Dollár's toolbox, ``channels/private/rgbConvertMex.cpp``,
``convConst.cpp``, ``gradientMex.cpp``; the edges toolbox's ``edgesChns.m``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ..compilation import prepare_kernels

prepare_kernels()

__all__ = []


@numba.njit(cache=True, fastmath=False, inline="always")
def _sym(i, n):
    """Index ``i`` folded into ``0..n-1`` by symmetric padding with the edge sample
    repeated (``... b a | a b c ... | c b``), periodic in ``2n`` for wide pads, as
    MATLAB's ``padarray(..., 'symmetric')`` and the toolbox's ``imPad``."""
    p = 2 * n
    i = i % p
    if i < 0:
        i += p
    if i >= n:
        i = p - 1 - i
    return i


@numba.njit(cache=True, fastmath=False)
def rgb2luv(rgb, mat, ltable, l_scale, minu, minv, un13, vn13, out):
    """``rgbConvert(I, 'luv')`` of a (3, H, W) float32 image into ``out`` (3, H, W).

    ``mat`` (3, 3) maps (r, g, b) to (X, Y, Z) with the input normalisation (1/255 for
    uint8) already folded in, as rgbConvertMex.cpp's ``mr, mg, mb``. ``ltable`` is the
    padded Y -> L/270 table indexed by ``int(Y * 1024)`` (truncation, so L is quantised
    to Y steps of 1/1024). u, v use the exact reciprocal of the scalar mex path
    (the SSE path's ``rcp`` approximation is not reproduced). All arithmetic float32.
    """
    _, h, w = rgb.shape
    eps = np.float32(1e-35)
    c15 = np.float32(15.0)
    c3 = np.float32(3.0)
    c52 = np.float32(52.0)
    c117 = np.float32(117.0)
    one = np.float32(1.0)
    nt = ltable.shape[0]
    for y in range(h):
        for x in range(w):
            r = rgb[0, y, x]
            g = rgb[1, y, x]
            b = rgb[2, y, x]
            xx = mat[0, 0] * r + mat[0, 1] * g + mat[0, 2] * b
            yy = mat[1, 0] * r + mat[1, 1] * g + mat[1, 2] * b
            zz = mat[2, 0] * r + mat[2, 1] * g + mat[2, 2] * b
            k = int(yy * l_scale)
            if k < 0:
                k = 0
            elif k >= nt:
                k = nt - 1
            ll = ltable[k]
            zr = one / (xx + c15 * yy + c3 * zz + eps)
            out[0, y, x] = ll
            out[1, y, x] = ll * (c52 * xx * zr - un13) - minu
            out[2, y, x] = ll * (c117 * yy * zr - vn13) - minv


@numba.njit(cache=True, fastmath=False)
def conv_sep(img, taps, out):
    """Separable convolution of each (H, W) plane of ``img`` (C, H, W) float32 by the
    symmetric 1-D filter ``taps`` (length 2r+1) along rows, then columns, with symmetric
    padding (edge repeated): ``convTri``'s definition (convTri.m: padarray symmetric, two
    ``convn(..., 'valid')``). Sums in float64, taps in order, stored float32 (the mex's
    float32 running sums differ from this by rounding only). Each row is padded into a
    buffer once, and the column pass accumulates whole rows, so the inner loops run over
    contiguous memory."""
    c, h, w = img.shape
    r = (taps.shape[0] - 1) // 2
    nt = taps.shape[0]
    tmp = np.empty((h, w), np.float64)
    buf = np.empty(w + 2 * r, np.float64)
    acc = np.empty(w, np.float64)
    for ch in range(c):
        # along x (columns) first, within each row
        for y in range(h):
            for x in range(w + 2 * r):
                buf[x] = img[ch, y, _sym(x - r, w)]
            for x in range(w):
                s = 0.0
                for k in range(nt):
                    s += taps[k] * buf[x + k]
                tmp[y, x] = s
        # then along y, a row at a time
        for y in range(h):
            for x in range(w):
                acc[x] = 0.0
            for k in range(nt):
                t = taps[k]
                yy = _sym(y + k - r, h)
                for x in range(w):
                    acc[x] += t * tmp[yy, x]
            for x in range(w):
                out[ch, y, x] = acc[x]


@numba.njit(cache=True, fastmath=False, inline="always")
def _grad_taps(i, n):
    """The two samples and weight of the derivative at ``i`` of ``n``: central
    ``(I[i+1] - I[i-1]) / 2`` inside, one-sided with weight 1 at either end, 0 on a
    single sample (gradientMex.cpp ``grad1``)."""
    if n == 1:
        return 0, 0, np.float32(0.0)
    if i == 0:
        return 0, 1, np.float32(1.0)
    if i == n - 1:
        return n - 2, n - 1, np.float32(1.0)
    return i - 1, i + 1, np.float32(0.5)


@numba.njit(cache=True, fastmath=False)
def grad_mag(img, acos_table, mag, ori):
    """``gradientMag(I, 0)`` of a (C, H, W) float32 image: ``mag`` and ``ori`` (H, W).

    Gradients are central differences ``(I[x+1] - I[x-1]) / 2``, one-sided
    ``I[1] - I[0]`` (weight 1) on the first and last row/column (gradientMex.cpp
    ``grad1``). At each pixel the channel with the largest squared magnitude wins, the
    first on ties (strict ``>``). ``mag = max(sqrt(Gx^2 + Gy^2), 1e-10)`` exactly (the
    mex's ``rcp(min(rsqrt(M2), 1e10))`` with SSE approximations). ``ori`` is the
    gradient's orientation mod pi in [0, pi): ``acos_table[int(1e4 Gx/M sign(Gy)) + 1e4]``
    as the mex's lookup (cosine truncated to 1e-4; zero gradient -> pi/2).
    """
    c, h, w = img.shape
    tiny = np.float32(1e-10)
    mult = np.float32(10000.0)
    n = (acos_table.shape[0] - 1) // 2
    for y in range(h):
        y0, y1, ry = _grad_taps(y, h)
        for x in range(w):
            x0, x1, rx = _grad_taps(x, w)
            best = np.float32(-1.0)
            bgx = np.float32(0.0)
            bgy = np.float32(0.0)
            for ch in range(c):
                gx = (img[ch, y, x1] - img[ch, y, x0]) * rx
                gy = (img[ch, y1, x] - img[ch, y0, x]) * ry
                m2 = gx * gx + gy * gy
                if ch == 0 or m2 > best:
                    best = m2
                    bgx = gx
                    bgy = gy
            m = max(np.float32(math.sqrt(best)), tiny)
            mag[y, x] = m
            v = bgx / m * mult
            # the mex flips the sign of Gx by the sign bit of Gy (so -0.0 counts too)
            if bgy < 0 or (bgy == 0 and math.copysign(1.0, bgy) < 0):
                v = -v
            k = int(v)  # truncation toward zero, as the mex's (int) cast
            if k < -n:
                k = -n
            elif k > n:
                k = n
            ori[y, x] = acos_table[k + n]


@numba.njit(cache=True, fastmath=False)
def grad_mag_norm(mag, smooth, norm_const):
    """``gradientMagNorm``: ``mag /= smooth + norm_const`` in place, float32, exact
    division (the mex's SSE ``rcp`` is approximate)."""
    h, w = mag.shape
    nc = np.float32(norm_const)
    for y in range(h):
        for x in range(w):
            mag[y, x] = mag[y, x] / (smooth[y, x] + nc)


@numba.njit(cache=True, fastmath=False)
def grad_hist(mag, ori, bin_size, n_orients, o_mult, norm, out):
    """``gradientHist(M, O, bin, nOrients, 0)``: ``out`` (nOrients, H//bin, W//bin)
    float32, zeroed by the caller.

    softBin = 0: linear interpolation between the two nearest orientation bins only,
    no spatial interpolation (gradientMex.cpp ``gradQuantize`` with ``interpolate`` and
    the ``softBin%2==0`` branch of ``gradHist``): ``o = O * o_mult``, ``o0 = trunc(o)``
    (wrapping ``nOrients`` to 0), weight ``1 - (o - o0)`` to ``o0`` and ``o - o0`` to
    ``o0 + 1`` (wrapped), magnitude scaled by ``norm = 1/bin^2`` and summed over each
    bin x bin block; trailing rows/columns beyond a whole block are ignored. Summed in
    float32 in the mex's order (column by column, each pixel's two bins in turn).
    """
    h, w = mag.shape
    hb = h // bin_size
    wb = w // bin_size
    h0 = hb * bin_size
    w0 = wb * bin_size
    for x in range(w0):
        xb = x // bin_size
        for y in range(h0):
            o = ori[y, x] * o_mult
            o0 = int(o)
            od = o - np.float32(o0)
            if o0 >= n_orients:
                o0 = 0
            o1 = o0 + 1
            if o1 >= n_orients:
                o1 = 0
            m = mag[y, x] * norm
            m1 = od * m
            m0 = m - m1
            yb = y // bin_size
            out[o0, yb, xb] += m0
            out[o1, yb, xb] += m1


@numba.njit(cache=True, fastmath=False)
def resample_x(img, idx, wts, out):
    """``out[c, y, v] = sum_j wts[v, j] img[c, y, idx[v, j]]`` (float64 sums in the
    order of j, stored float32): one axis of imResample's weights, applied sparsely."""
    c, h, _ = img.shape
    nb, k = idx.shape
    for ch in range(c):
        for y in range(h):
            for v in range(nb):
                s = 0.0
                for j in range(k):
                    s += wts[v, j] * img[ch, y, idx[v, j]]
                out[ch, y, v] = s


@numba.njit(cache=True, fastmath=False)
def resample_y(img, idx, wts, out):
    """``out[c, u, x] = sum_j wts[u, j] img[c, idx[u, j], x]`` (float64 sums in the
    order of j, stored float32), a whole row at a time."""
    c, _, w = img.shape
    nb, k = idx.shape
    acc = np.empty(w, np.float64)
    for ch in range(c):
        for u in range(nb):
            for x in range(w):
                acc[x] = 0.0
            for j in range(k):
                t = wts[u, j]
                src = idx[u, j]
                for x in range(w):
                    acc[x] += t * img[ch, src, x]
            for x in range(w):
                out[ch, u, x] = acc[x]
