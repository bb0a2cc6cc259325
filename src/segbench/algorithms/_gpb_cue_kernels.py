"""Compiled kernels of gPb's local cues (mPb): BSR's texton step (its MT19937-64 stream,
direct convolution, sampled coarse-to-fine k-means and nearest-centre assignment), the
earlier variant's k-means kernels, and the row-wise filter of ``fitparab``. (BSR's
16-slice histogram gradient is the kernel shared with Pb, :mod:`._half_disc_kernels`.)

Sources read (never copied), BSR ``grouping/source/gpb_src``: ``lib_image.cc``
(``weight_matrix_disc``, ``conv_in_place_1D``, ``textons``), ``savgol_border.cpp``,
``matrix.hh`` (``compute_conv_2D``), ``mersenne_twister_64.cc``, ``rand_source.cc``,
``randperm.cc``, the k-means ``basic_clusterer.hh``, ``metric_clusterer.hh``,
``sample_clusterer.hh``, ``matrix_metrics.hh`` and ``matrix_distance_functors.hh``.
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
            src = z[y + dv[k], x0 + du[k] : x1 + du[k]]
            for i in range(n):
                acc[i] += wk * src[i]
        out[y, x0:x1] = acc
    return out


# ---------------------------------------------------------------------------------------
# BSR's texton k-means, reproduced operation for operation (no fastmath: the rounding of
# every sum must be BSR's so that near-ties between centres fall the same way)

_MT_NN = 312
_MT_MM = 156


@numba.njit(cache=True)
def _mt64_stream(key, n):
    """The first ``n`` outputs of MT19937-64 seeded by ``init_by_array64(key)`` (uint64).

    Matsumoto and Nishimura's 2004 generator, as BSR's ``mersenne_twister_64.cc``; BSR
    seeds it with the key (0x12345, 0x23456, 0x34567, 0x45678) when given none, the key
    of the authors' own test output.
    """
    nn = _MT_NN
    mm = _MT_MM
    mat_a = np.uint64(0xB5026F5AA96619E9)
    um = np.uint64(0xFFFFFFFF80000000)
    lm = np.uint64(0x7FFFFFFF)
    one = np.uint64(1)
    mt = np.empty(nn, np.uint64)
    mt[0] = np.uint64(19650218)
    for i in range(1, nn):
        prev = mt[i - 1]
        mt[i] = np.uint64(6364136223846793005) * (
            prev ^ (prev >> np.uint64(62))
        ) + np.uint64(i)
    ks = key.shape[0]
    i = 1
    j = 0
    for _ in range(max(nn, ks)):
        prev = mt[i - 1]
        mt[i] = (
            (mt[i] ^ ((prev ^ (prev >> np.uint64(62))) * np.uint64(3935559000370003845)))
            + key[j]
            + np.uint64(j)
        )
        i += 1
        j += 1
        if i >= nn:
            mt[0] = mt[nn - 1]
            i = 1
        if j >= ks:
            j = 0
    for _ in range(nn - 1):
        prev = mt[i - 1]
        mt[i] = (
            mt[i] ^ ((prev ^ (prev >> np.uint64(62))) * np.uint64(2862933555777941757))
        ) - np.uint64(i)
        i += 1
        if i >= nn:
            mt[0] = mt[nn - 1]
            i = 1
    mt[0] = one << np.uint64(63)
    out = np.empty(n, np.uint64)
    cur = nn
    for t in range(n):
        if cur >= nn:
            for q in range(nn):
                x = (mt[q] & um) | (mt[(q + 1) % nn] & lm)
                y = mt[(q + mm) % nn] ^ (x >> one)
                if x & one:
                    y ^= mat_a
                mt[q] = y
            cur = 0
        x = mt[cur]
        cur += 1
        x ^= (x >> np.uint64(29)) & np.uint64(0x5555555555555555)
        x ^= (x << np.uint64(17)) & np.uint64(0x71D67FFFEDA60000)
        x ^= (x << np.uint64(37)) & np.uint64(0xFFF7EEE000000000)
        x ^= x >> np.uint64(43)
        out[t] = x
    return out


@numba.njit(cache=True)
def _responses_direct(img, filters, sizes, out):
    """BSR's ``conv_crop`` (2-D convolution cropped to the image, zero outside) of
    ``img`` with each filter, summed in BSR's order: for each output pixel, filter
    rows ascending, then filter columns ascending, one running sum from 0.

    ``filters[i, :sizes[i], :sizes[i]]`` is filter i (odd, square); ``out`` is
    (h * w, nfilters), row p the responses of pixel p in row-major order. Vectorised
    across a row of pixels, which keeps each pixel's own order (no fastmath: a fused
    multiply-add would round differently). Out-of-image terms add a signed zero, which
    leaves every sum unchanged (BSR skips them). The filters run image row by image
    row, so each output row block (w * nfilters values) is written while it is in
    cache: filter by filter over the whole image, every column write would miss.
    """
    h, w = img.shape
    nf = filters.shape[0]
    big = filters.shape[1] // 2  # the largest filter's half size: the padding
    pad = np.zeros((h + 2 * big, w + 2 * big), np.float64)
    pad[big : big + h, big : big + w] = img
    acc = np.empty(w, np.float64)
    for x in range(h):
        for i in range(nf):
            fs = sizes[i]
            c = fs // 2 + big  # the filter's centre in the padding's coordinates
            f = filters[i]
            acc[:] = 0.0
            for ox in range(fs):
                prow = pad[x + c - ox]  # image row x + fs // 2 - ox
                for oy in range(fs):
                    wt = f[ox, oy]
                    lo = c - oy
                    # a slice and a range index: no wraparound check, so LLVM
                    # vectorises
                    src = prow[lo : lo + w]
                    for y in range(w):
                        acc[y] += src[y] * wt
            base = x * w
            for y in range(w):
                out[base + y, i] = acc[y]
    return out


@numba.njit(cache=True)
def _l2_to(items, lo, hi, centres, ids, nid, dist, cols):
    """BSR's matrix_L2_distance of items lo..hi-1 to the centres ``ids[:nid]``, into
    ``dist[i, cols[q]]``: sqrt of the sum, in dimension order, of (centre - item)^2.

    Vectorised across the centres (a transposed copy), which keeps every pair's own
    order of terms.
    """
    d = items.shape[1]
    ct = np.empty((d, nid), np.float64)
    for q in range(nid):
        for m in range(d):
            ct[m, q] = centres[ids[q], m]
    s = np.empty(nid, np.float64)
    for i in range(lo, hi):
        s[:] = 0.0
        for m in range(d):
            xm = items[i, m]
            row = ct[m]
            for q in range(nid):
                diff = row[q] - xm
                s[q] += diff * diff
        for q in range(nid):
            dist[i, cols[q]] = np.sqrt(s[q])


@numba.njit(cache=True)
def _nearest_l2(items, centres, out):
    """BSR's ``assign_cluster``: the first centre at the least L2 distance."""
    n = items.shape[0]
    k = centres.shape[0]
    ids = np.arange(k)
    block = 1024
    dist = np.empty((block, k), np.float64)
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        _l2_to(items[lo:hi], 0, hi - lo, centres, ids, k, dist, ids)
        for i in range(hi - lo):
            best = dist[i, 0]
            arg = 0
            for j in range(1, k):
                if dist[i, j] < best:
                    best = dist[i, j]
                    arg = j
            out[lo + i] = arg
    return out


@numba.njit(cache=True)
def _centroid_sums(items, assign, cur, k):
    """Per cluster, the sum of its members in item order (BSR's matrix_L2_metric
    centroid before the division; unit weights make ``1.0 * x`` exact)."""
    d = items.shape[1]
    sums = np.zeros((k, d), np.float64)
    for i in range(cur):
        a = assign[i]
        for m in range(d):
            sums[a, m] += items[i, m]
    return sums


@numba.njit(cache=True)
def _kmeans_bsr(items, k, max_iter, sizes):
    """BSR's ``kmeans::basic_clusterer::cluster`` on items already in its random order.

    ``sizes``: the coarse-to-fine problem sizes, ascending (the last is all items).
    Returns (assign, centres, nonempty): the cluster of every item and the centres
    before empty clusters are dropped, and which clusters are non-empty.

    Followed step for step: the first k items are the initial centres (each its own
    cluster, but no item is assigned yet); each problem first computes the new items'
    distances to the clusters unchanged since the last update, refills empty clusters
    with the problem's first new items (in cluster order), then iterates at most
    ``max_iter`` times: distances to changed clusters, assignment (an item whose
    cluster changed, or which has none, takes the first nearest of all; any other
    moves only to a changed cluster strictly nearer), the clusters whose membership
    changed are recomputed (empty ones keep their old centre), stopping when nothing
    moved. The last iteration's assignment is the one returned even when the centres
    were updated after it, as in BSR.
    """
    n, d = items.shape
    centres = np.empty((k, d), np.float64)
    for j in range(k):
        for m in range(d):
            centres[j, m] = items[j, m]
    members = np.zeros(k, np.int64)
    for j in range(k):
        members[j] = 1
    assign = np.full(n, k, np.int64)
    old = np.empty(n, np.int64)
    dist = np.zeros((n, k), np.float64)
    changed = np.zeros(k + 1, np.bool_)
    changed[k] = True
    ids = np.empty(k, np.int64)
    prev = 0
    for cur in sizes:
        nun = 0
        for j in range(k):
            if not changed[j]:
                ids[nun] = j
                nun += 1
        _l2_to(items, prev, cur, centres, ids, nun, dist, ids)
        nxt = prev
        for j in range(k):
            if nxt >= cur:
                break
            if members[j] == 0:
                members[j] = 1
                for m in range(d):
                    centres[j, m] = items[nxt, m]
                changed[j] = True
                nxt += 1
        nid = 0
        for j in range(k):
            if changed[j]:
                ids[nid] = j
                nid += 1
        it = 0
        while it < max_iter or max_iter == 0:
            it += 1
            for i in range(cur):
                old[i] = assign[i]
            _l2_to(items, 0, cur, centres, ids, nid, dist, ids)
            for i in range(cur):
                a = assign[i]
                if changed[a]:
                    a = 0
                    best = dist[i, 0]
                    for j in range(1, k):
                        if dist[i, j] < best:
                            best = dist[i, j]
                            a = j
                else:
                    best = dist[i, a]
                    for q in range(nid):
                        j = ids[q]
                        if dist[i, j] < best:
                            best = dist[i, j]
                            a = j
                assign[i] = a
            for j in range(k):
                changed[j] = False
            for i in range(cur):
                if assign[i] != old[i]:
                    changed[assign[i]] = True
                    changed[old[i]] = True
            nid = 0
            for j in range(k):
                if changed[j]:
                    ids[nid] = j
                    nid += 1
            if nid == 0:
                break
            members[:] = 0
            for i in range(cur):
                members[assign[i]] += 1
            sums = _centroid_sums(items, assign, cur, k)
            for q in range(nid):
                j = ids[q]
                if members[j] > 0:  # an emptied cluster keeps its centre
                    cnt = float(members[j])
                    for m in range(d):
                        centres[j, m] = sums[j, m] / cnt
        prev = cur
    return assign, centres, members > 0
