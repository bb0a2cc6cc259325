"""Compiled kernels of gPb's local cues (mPb): BSR's 16-slice histogram gradient and
the nearest-centre assignment and centre update of the per-image texton k-means.

The Python side (:mod:`._gpb_cues`) builds the slice tables and calls one kernel per
cue and scale, never per pixel.

Sources read (never copied): BSR ``lib_image.cc`` (``hist_gradient_2D``,
``compute_hist_gradient_2D``, ``orientation_slice_map``, ``weight_matrix_disc``,
``conv_in_place_1D``), ``matrix_distance_functors.hh`` (chi-squared) and the k-means
``basic_clusterer.hh``.
"""

from __future__ import annotations

import numba
import numpy as np

from ..compilation import prepare_kernels

prepare_kernels()

__all__ = []

# reassociation lets LLVM vectorise the per-bin sums; the results move by rounding only
_FAST = {"reassoc", "contract", "nsz"}


@numba.njit(cache=True, fastmath=_FAST, inline="always")
def _smooth(src, taps, dst, nbins):
    """``dst[b] = sum_j taps[j] src[b + j]`` for b < nbins: BSR's 'same' convolution of
    a histogram whose bin b sits at ``src[b + t]`` between t zero guards on each side.
    The taps are symmetric (a Gaussian), so correlation and convolution agree."""
    dst[:nbins] = 0.0
    for j in range(taps.shape[0]):
        tj = taps[j]
        for b in range(nbins):
            dst[b] += tj * src[b + j]


@numba.njit(cache=True, fastmath=_FAST)
def _slice_gradient(labels, h, w, border, nbins, taps, mass, tab, out):
    """BSR's oriented histogram gradient of a label map, 8 orientations, H x W interior.

    ``labels`` is the padded (h + 2 border, w + 2 border) int32 map, labels in
    0..nbins-1; output pixel (y, x) is centred on ``labels[border + y, border + x]``,
    and ``border`` is at least the disc radius, so no offset leaves the map.

    ``tab`` (see :func:`._gpb_cues._slice_tables`): ``full[fptr[s]:fptr[s+1]]`` are the
    linear offsets (into the flattened padded map) of slice s's disc pixels (s = 0..15);
    ``toff``, ``tfrom``, ``tto`` list the pixels whose slice changes when the centre
    moves one column right: offset from the new centre, the slice left and the slice
    entered (16, a scratch row, for outside the disc), ordered so that neighbouring
    entries touch different slices (no store-to-load stalls). ``ssize[s]`` is slice s's
    pixel count. ``taps`` is the histogram smoothing kernel (2t + 1 taps; ``[1.0]`` for
    none) and ``mass[b]`` the sum of its taps that land inside 0..nbins-1 when centred
    on bin b, so a slice's smoothed total is ``sum_b n[b] mass[b]``.

    State: the integer label counts ``n[s, b]`` of every slice, updated exactly as the
    disc slides along a row (each row starts from a full count). Per pixel, with
    ``w_s = n_s / Z_s`` (``Z_s`` the smoothed total; 0 for an empty slice) and K the
    smoothing: the smoothed, normalised halves sum to ``K T`` with ``T = sum_s w_s`` at
    every orientation; their difference is ``K D_o`` with ``D_0 = sum_{s<8} w_s -
    sum_{s>=8} w_s`` and ``D_{o+1} = D_o - 2 (w_o - w_{o+8})``. So smoothing is
    linear and done 9 times per pixel, not 16, and ``chi2_o = 0.5 sum_b (K D_o)[b]^2 /
    (K T)[b]`` over the bins with ``(K T)[b] > 0`` (``l_b = r_b`` gives a 0 term, as
    BSR's skip). BSR's orientation o (split line at o pi/8 from +row towards +col) is
    written to our channel ``(4 - o) mod 8`` (the tangent's angle from +x).

    ``out``: (8, h, w) float64, filled.
    """
    full, fptr, toff, tfrom, tto, ssize = tab
    wp = labels.shape[1]
    flat = labels.ravel()
    nt = taps.shape[0]
    t = (nt - 1) // 2
    smooth = nt > 1
    # bins padded to a multiple of 8 (the vector width) so that no loop has a scalar
    # tail; the padding bins hold no counts and get chi-squared weight 0
    nbp = (nbins + 7) // 8 * 8
    nb = nbp + 2 * t
    ntr = toff.shape[0]
    n = np.zeros((17, nbp), np.float64)
    z = np.zeros(16, np.float64)
    iz = np.zeros(16, np.float64)
    praw = np.zeros((8, nb), np.float64)   # w_o - w_{o+8}, between zero guards
    traw = np.zeros(nb, np.float64)
    draw = np.zeros(nb, np.float64)
    ks = np.zeros((8, nbp), np.float64)  # K (w_o - w_{o+8})
    kt = np.zeros(nbp, np.float64)
    kd = np.zeros(nbp, np.float64)
    winv = np.zeros(nbp, np.float64)
    mp = np.zeros(nbp, np.float64)
    mp[:nbins] = mass
    for y in range(h):
        for x in range(w):
            c = (y + border) * wp + x + border
            if x == 0:
                n[:, :] = 0.0
                for s in range(16):
                    row = n[s]
                    for k in range(fptr[s], fptr[s + 1]):
                        row[flat[c + full[k]]] += 1.0
            else:
                for k in range(ntr):
                    b = flat[c + toff[k]]
                    n[tfrom[k], b] -= 1.0
                    n[tto[k], b] += 1.0
            for s in range(16):
                if smooth:
                    acc = 0.0
                    row = n[s]
                    for b in range(nbp):
                        acc += row[b] * mp[b]
                    z[s] = acc
                else:
                    z[s] = ssize[s]
                iz[s] = 1.0 / z[s] if z[s] > 0.0 else 0.0
            traw[:] = 0.0
            draw[:] = 0.0
            for s in range(8):
                a0 = iz[s]
                a1 = iz[s + 8]
                r0 = n[s]
                r1 = n[s + 8]
                pd = praw[s, t:t + nbp]
                tr = traw[t:t + nbp]
                dr = draw[t:t + nbp]
                for b in range(nbp):
                    p = r0[b] * a0
                    q = r1[b] * a1
                    pd[b] = p - q
                    tr[b] += p + q
                    dr[b] += p - q
            if smooth:
                _smooth(traw, taps, kt, nbp)
                _smooth(draw, taps, kd, nbp)
                for o in range(7):
                    _smooth(praw[o], taps, ks[o], nbp)
            else:
                kt[:] = traw
                kd[:] = draw
                ks[:7, :] = praw[:7]
            _chi2_tail(kt, kd, ks, winv, nbins, nbp, out, y, x)
    return out


@numba.njit(cache=True, fastmath=_FAST)
def _slice_gradient_sparse(labels, h, w, border, nbins, taps, mass, tab, out):
    """:func:`_slice_gradient` for small discs with histogram smoothing: each pixel's
    slice histograms are smoothed as they are counted (one kernel per disc pixel, read
    afresh at every centre), which for the 29 pixels of r = 3 costs less than
    smoothing the 9 dense sums per pixel (:func:`._gpb_cues.slice_gradient` uses it
    for r = 3). Same arguments, same values to rounding."""
    full, fptr, toff, tfrom, tto, ssize = tab
    wp = labels.shape[1]
    flat = labels.ravel()
    nt = taps.shape[0]
    t = (nt - 1) // 2
    nbp = (nbins + 7) // 8 * 8
    nb = nbp + 2 * t
    kn = np.zeros((16, nb), np.float64)   # smoothed counts, bin b at b + t
    z = np.zeros(16, np.float64)
    iz = np.zeros(16, np.float64)
    ks = np.zeros((8, nbp), np.float64)
    kt = np.zeros(nbp, np.float64)
    kd = np.zeros(nbp, np.float64)
    winv = np.zeros(nbp, np.float64)
    for y in range(h):
        for x in range(w):
            c = (y + border) * wp + x + border
            kn[:, :] = 0.0
            for s in range(16):
                row = kn[s]
                acc = 0.0
                for k in range(fptr[s], fptr[s + 1]):
                    b = flat[c + full[k]]
                    for j in range(nt):
                        row[b + j] += taps[j]
                    acc += mass[b]
                z[s] = acc
                iz[s] = 1.0 / acc if acc > 0.0 else 0.0
            kt[:] = 0.0
            kd[:] = 0.0
            for s in range(8):
                a0 = iz[s]
                a1 = iz[s + 8]
                r0 = kn[s, t:t + nbp]
                r1 = kn[s + 8, t:t + nbp]
                pd = ks[s]
                for b in range(nbp):
                    p = r0[b] * a0
                    q = r1[b] * a1
                    pd[b] = p - q
                    kt[b] += p + q
                    kd[b] += p - q
            _chi2_tail(kt, kd, ks, winv, nbins, nbp, out, y, x)
    return out


@numba.njit(cache=True, fastmath=_FAST, inline="always")
def _chi2_tail(kt, kd, ks, winv, nbins, nbp, out, y, x):
    """The 8 chi-squared values of one pixel from the smoothed sum ``kt`` of both
    halves, the smoothed difference ``kd`` at orientation 0 and the smoothed slice
    differences ``ks[o]`` (``kd -= 2 ks[o]`` turns the split by pi/8); bins of
    ``kt = 0`` and the padding bins are skipped. Writes ``out[:, y, x]``."""
    for b in range(nbins):
        winv[b] = 1.0 / kt[b] if kt[b] > 0.0 else 0.0
    for b in range(nbins, nbp):
        winv[b] = 0.0
    for o in range(8):
        acc = 0.0
        for b in range(nbp):
            acc += kd[b] * kd[b] * winv[b]
        out[(12 - o) % 8, y, x] = 0.5 * acc
        if o < 7:
            ko = ks[o]
            for b in range(nbp):
                kd[b] -= 2.0 * ko[b]


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
