"""The compiled half-disc histogram gradient shared by the Pb detectors and gPb's local
cues: one kernel over a disc cut into ``2 norient`` angular slices, whose half discs
are runs of ``norient`` consecutive slices.

Parameterised as each detector needs (the tables and arguments are built by
:mod:`._half_disc`):

- **radius and slices**: the disc and its slice map (BSR's 16-slice map for gPb,
  :func:`._half_disc.pb_slice_map` reproducing tgso.m's half discs for Pb);
- **bins and smoothing**: the number of bins compared, a Gaussian smoothing of every
  slice histogram across its bins (gPb's bg and cg) or none;
- **normalisation and distance**: ``norm = 0`` (gPb, BSR): each slice histogram
  normalised to sum 1, chi-squared of the two halves' sums; ``norm = 1`` (Pb, tgso.m /
  cgmo.m): the halves' integer counts divided by half the disc's pixel count,
  chi-squared or the colour-similarity form ``d' S d``, computed in strict
  floating point from the exact counts.

The Python side calls one kernel per cue and scale, never per pixel.

Sources read (never copied): BSR ``lib_image.cc`` (``hist_gradient_2D``,
``compute_hist_gradient_2D``, ``orientation_slice_map``), ``matrix_distance_functors.hh``
(chi-squared); the BSDS300 segbench MATLAB code by D. Martin, ``Gradients/tgso.m``
(half-disc masks, chi-squared) and ``cgmo.m`` (the colour similarity form).
"""

from __future__ import annotations

import numba
import numpy as np

from ..compilation import prepare_kernels

prepare_kernels()

__all__ = []

# reassociation lets LLVM vectorise the per-bin sums of the normalised (gPb) mode; the
# results move by rounding only. The count (Pb) mode's distances are computed by a
# strict function (_count_distances), so its values do not depend on vectorisation.
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


# fastmath=False explicitly: Numba hands a caller's fastmath to callees that do not set it
@numba.njit(cache=True, fastmath=False)
def _count_distances(
    n, tot, dif, nbins, count, sim, use_sim, chan, nzb, tz, dm, acc, row, out, y, x
):
    """Pb's distances of one pixel, all orientations, from exact integer counts.

    ``n[s]`` are the slice counts, ``tot`` the disc's counts and ``dif`` the first
    half's minus the second's at orientation 0 (integers held in float64, so the
    recursion ``dif -= 2 (n[o] - n[o + norient])`` that turns the split is exact). The
    m bins with ``tot > 0`` are gathered once (the others have a zero difference at
    every orientation): ``dm[i, o]`` the difference of bin ``nzb[i]`` at orientation o.

    ``use_sim == 0``: chi-squared of the halves normalised by ``count / 2``,
    ``sum_b (L - R)^2 / (L + R) / count``. ``use_sim == 1``: ``d' S d`` with ``d = |l -
    r|`` as ``2 sum_{i>j} d_i (sum_{j<i} S_ij d_j)`` (``S`` symmetric with zero diagonal:
    cgmo.m's colour similarity). Every orientation's sum runs over the bins in
    ascending order in strict floating point, the orientations side by side (they
    vectorise); the bins where ``d = 0`` add exact zeros, so each value is bit for bit
    the sum over its own nonzero bins. Writes ``out[chan[o], y, x]``.
    """
    m = 0
    for b in range(nbins):
        if tot[b] > 0.0:
            nzb[m] = b
            tz[m] = tot[b]
            m += 1
    no = chan.shape[0]
    for i in range(m):
        b = nzb[i]
        di = dm[i]
        v = dif[b]
        di[0] = v
        for o in range(no - 1):
            v -= 2.0 * (n[o, b] - n[o + no, b])
            di[o + 1] = v
    acc[:no] = 0.0
    if use_sim == 0:
        for i in range(m):
            di = dm[i]
            t = tz[i]
            for o in range(no):
                acc[o] += di[o] * di[o] / t
        for o in range(no):
            out[chan[o], y, x] = acc[o] / count
        return
    for i in range(m):
        di = dm[i]
        for o in range(no):
            di[o] = abs(di[o])
    for i in range(1, m):
        srow = sim[nzb[i]]
        row[:no] = 0.0
        for j in range(i):
            sij = srow[nzb[j]]
            dj = dm[j]
            for o in range(no):
                row[o] += sij * dj[o]
        di = dm[i]
        for o in range(no):
            acc[o] += di[o] * row[o]
    scale = 2.0 / count
    for o in range(no):
        out[chan[o], y, x] = 2.0 * acc[o] * scale * scale


@numba.njit(cache=True, fastmath=_FAST)
def _slice_gradient(
    labels, h, w, border, nbins, nlab, taps, mass, tab, chan, norm, count, sim, out
):
    """Oriented half-disc histogram gradient of a label map, H x W interior.

    ``labels`` is the padded (h + 2 border, w + 2 border) int32 map, labels in
    0..nlab-1 of which 0..nbins-1 are compared (Pb pads with the label ``nbins``, an
    extra bin no distance reads, so pixels outside the image count in neither half);
    output pixel (y, x) is centred on ``labels[border + y, border + x]``, and
    ``border`` is at least the disc radius, so no offset leaves the map.

    ``tab`` (see :func:`._half_disc.slice_tables`): ``full[fptr[s]:fptr[s+1]]`` are the
    linear offsets (into the flattened padded map) of slice s's disc pixels (s =
    0..ns-1, ``ns = 2 norient``); ``toff``, ``tfrom``, ``tto`` list the pixels whose
    slice changes when the centre moves one column right: offset from the new centre,
    the slice left and the slice entered (ns, a scratch row, for outside the disc),
    ordered so that neighbouring entries touch different slices (no store-to-load
    stalls); ``dtot``, ``ddif`` the change each makes to the disc's count and to the
    first-minus-second half difference at orientation 0. ``ssize[s]`` is slice s's
    pixel count. The half disc of orientation o is slices o..o+norient-1; orientation
    o is written to channel ``chan[o]``.

    ``norm == 0`` (gPb, BSR's ``hist_gradient_2D``): ``taps`` is the histogram
    smoothing kernel (2t + 1 taps; ``[1.0]`` for none) and ``mass[b]`` the sum of its
    taps that land inside 0..nbins-1 when centred on bin b, so a slice's smoothed total
    is ``sum_b n[b] mass[b]``. Per pixel, with ``w_s = n_s / Z_s`` (``Z_s`` the
    smoothed total; 0 for an empty slice) and K the smoothing: the smoothed,
    normalised halves sum to ``K T`` with ``T = sum_s w_s`` at every orientation;
    their difference is ``K D_o`` with ``D_0 = sum_{s<no} w_s - sum_{s>=no} w_s`` and
    ``D_{o+1} = D_o - 2 (w_o - w_{o+no})``. So smoothing is linear and done
    ``no + 1`` times per pixel, not ``ns``, and ``chi2_o = 0.5 sum_b (K D_o)[b]^2 /
    (K T)[b]`` over the bins with ``(K T)[b] > 0``.

    ``norm == 1`` (Pb): no smoothing (``taps``, ``mass`` unused); the disc's counts and
    the orientation-0 difference are kept up to date with the slice counts, and
    :func:`_count_distances` gives the distances (``sim``, ``use_sim = sim.size > 0``,
    ``count`` the disc's pixel count).

    State: the integer label counts ``n[s, b]`` of every slice, updated exactly as the
    disc slides along a row (each row starts from a full count). ``out``: (norient,
    h, w) float64, filled.
    """
    full, fptr, toff, tfrom, tto, ssize, dtot, ddif = tab
    ns = fptr.shape[0] - 1
    no = ns // 2
    wp = labels.shape[1]
    flat = labels.ravel()
    nt = taps.shape[0]
    t = (nt - 1) // 2
    smooth = nt > 1
    # bins padded to a multiple of 8 (the vector width) so that no loop has a scalar
    # tail; the padding bins hold no counts and get chi-squared weight 0
    nbp = (nlab + 7) // 8 * 8
    nb = nbp + 2 * t
    ntr = toff.shape[0]
    n = np.zeros((ns + 1, nbp), np.float64)
    z = np.zeros(ns, np.float64)
    iz = np.zeros(ns, np.float64)
    praw = np.zeros((no, nb), np.float64)  # w_o - w_{o+no}, between zero guards
    traw = np.zeros(nb, np.float64)
    draw = np.zeros(nb, np.float64)
    ks = np.zeros((no, nbp), np.float64)  # K (w_o - w_{o+no})
    kt = np.zeros(nbp, np.float64)
    kd = np.zeros(nbp, np.float64)
    winv = np.zeros(nbp, np.float64)
    mp = np.zeros(nbp, np.float64)
    mp[:nbins] = mass[:nbins]
    # the count mode's state and scratch
    tot = np.zeros(nbp, np.float64)
    dif = np.zeros(nbp, np.float64)
    nzb = np.zeros(nbp, np.int64)
    tz = np.zeros(nbp, np.float64)
    dm = np.zeros((nbp, no), np.float64)
    dacc = np.zeros(no, np.float64)
    drow = np.zeros(no, np.float64)
    use_sim = 1 if sim.size > 0 else 0
    for y in range(h):
        for x in range(w):
            c = (y + border) * wp + x + border
            if x == 0:
                n[:, :] = 0.0
                for s in range(ns):
                    row = n[s]
                    for k in range(fptr[s], fptr[s + 1]):
                        row[flat[c + full[k]]] += 1.0
                if norm == 1:
                    tot[:] = 0.0
                    dif[:] = 0.0
                    for s in range(ns):
                        row = n[s]
                        sg = 1.0 if s < no else -1.0
                        for b in range(nbp):
                            tot[b] += row[b]
                            dif[b] += sg * row[b]
            elif norm == 0:
                for k in range(ntr):
                    b = flat[c + toff[k]]
                    n[tfrom[k], b] -= 1.0
                    n[tto[k], b] += 1.0
            else:
                for k in range(ntr):
                    b = flat[c + toff[k]]
                    n[tfrom[k], b] -= 1.0
                    n[tto[k], b] += 1.0
                    tot[b] += dtot[k]
                    dif[b] += ddif[k]
            if norm == 1:
                _count_distances(
                    n,
                    tot,
                    dif,
                    nbins,
                    count,
                    sim,
                    use_sim,
                    chan,
                    nzb,
                    tz,
                    dm,
                    dacc,
                    drow,
                    out,
                    y,
                    x,
                )
                continue
            for s in range(ns):
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
            for s in range(no):
                a0 = iz[s]
                a1 = iz[s + no]
                r0 = n[s]
                r1 = n[s + no]
                pd = praw[s, t : t + nbp]
                tr = traw[t : t + nbp]
                dr = draw[t : t + nbp]
                for b in range(nbp):
                    p = r0[b] * a0
                    q = r1[b] * a1
                    pd[b] = p - q
                    tr[b] += p + q
                    dr[b] += p - q
            if smooth:
                _smooth(traw, taps, kt, nbp)
                _smooth(draw, taps, kd, nbp)
                for o in range(no - 1):
                    _smooth(praw[o], taps, ks[o], nbp)
            else:
                kt[:] = traw
                kd[:] = draw
                ks[: no - 1, :] = praw[: no - 1]
            _chi2_tail(kt, kd, ks, winv, nbins, nbp, chan, out, y, x)
    return out


@numba.njit(cache=True, fastmath=_FAST)
def _slice_gradient_sparse(labels, h, w, border, nbins, taps, mass, tab, chan, out):
    """:func:`_slice_gradient`'s ``norm == 0`` mode for small discs with histogram
    smoothing: each pixel's slice histograms are smoothed as they are counted (one
    kernel per disc pixel, read afresh at every centre), which for the 29 pixels of
    r = 3 costs less than smoothing the ``norient + 1`` dense sums per pixel
    (:func:`._gpb_cues.slice_gradient` uses it for r = 3). Same arguments (labels in
    0..nbins-1), same values to rounding."""
    full, fptr, toff, tfrom, tto, ssize, dtot, ddif = tab
    ns = fptr.shape[0] - 1
    no = ns // 2
    wp = labels.shape[1]
    flat = labels.ravel()
    nt = taps.shape[0]
    t = (nt - 1) // 2
    nbp = (nbins + 7) // 8 * 8
    nb = nbp + 2 * t
    kn = np.zeros((ns, nb), np.float64)  # smoothed counts, bin b at b + t
    z = np.zeros(ns, np.float64)
    iz = np.zeros(ns, np.float64)
    ks = np.zeros((no, nbp), np.float64)
    kt = np.zeros(nbp, np.float64)
    kd = np.zeros(nbp, np.float64)
    winv = np.zeros(nbp, np.float64)
    for y in range(h):
        for x in range(w):
            c = (y + border) * wp + x + border
            kn[:, :] = 0.0
            for s in range(ns):
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
            for s in range(no):
                a0 = iz[s]
                a1 = iz[s + no]
                r0 = kn[s, t : t + nbp]
                r1 = kn[s + no, t : t + nbp]
                pd = ks[s]
                for b in range(nbp):
                    p = r0[b] * a0
                    q = r1[b] * a1
                    pd[b] = p - q
                    kt[b] += p + q
                    kd[b] += p - q
            _chi2_tail(kt, kd, ks, winv, nbins, nbp, chan, out, y, x)
    return out


@numba.njit(cache=True, fastmath=_FAST, inline="always")
def _chi2_tail(kt, kd, ks, winv, nbins, nbp, chan, out, y, x):
    """The chi-squared values of one pixel, every orientation, from the smoothed sum
    ``kt`` of both halves, the smoothed difference ``kd`` at orientation 0 and the
    smoothed slice differences ``ks[o]`` (``kd -= 2 ks[o]`` turns the split by one
    slice); bins of ``kt = 0`` and the padding bins are skipped. Writes
    ``out[chan[o], y, x]``."""
    no = chan.shape[0]
    for b in range(nbins):
        winv[b] = 1.0 / kt[b] if kt[b] > 0.0 else 0.0
    for b in range(nbins, nbp):
        winv[b] = 0.0
    for o in range(no):
        acc = 0.0
        for b in range(nbp):
            acc += kd[b] * kd[b] * winv[b]
        out[chan[o], y, x] = 0.5 * acc
        if o < no - 1:
            ko = ks[o]
            for b in range(nbp):
                kd[b] -= 2.0 * ko[b]
