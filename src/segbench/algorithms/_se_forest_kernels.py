"""Compiled kernels of the structured edge forests (Dollár and Zitnick): feature
extraction at patch locations, structured-label codes, split search, leaf post-processing
and the forest's application to an image.

Layouts shared by training and detection (so that a feature id means the same pixel in
both, and the same one as in the edges toolbox and OpenCV's model files):

- channels are (C, Hc, Wc) float32 planes, read through their flat index;
- feature ``f < n_chn_ftrs`` is channel ``z = f // w^2`` at patch column
  ``(f % w^2) // w`` and row ``f % w`` (w = patch width in channel pixels; the toolbox's
  column-major ``z*w*w + c*w + r``); ``cids[f]`` is its flat offset from the patch's
  top-left channel pixel;
- a self-similarity feature ``n_chn_ftrs + k`` is ``sim[cids1[k]] - sim[cids2[k]]``;
- edge pixels of a ``g x g`` output patch are stored as column-major indices
  ``c*g + r`` (the toolbox's ``eBins``), in increasing order within each band.

Sources read (never copied): the edges toolbox's ``edgesTrain.m``,
``private/edgesDetectMex.cpp``; the MATLAB toolbox's ``classify/forestTrain.m`` and
``classify/private/forestFindThr.cpp``.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.extending import intrinsic

from ..compilation import prepare_kernels

prepare_kernels()

__all__ = []


@intrinsic
def _popcount(typingctx, src):
    """Set bits of an integer (LLVM ctpop)."""

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return src(src), codegen


# ---------------------------------------------------------------------------------------
# features and labels at sampled locations (training)


@numba.njit(cache=True)
def patch_features(reg, sim, rows, cols, fids, n_chn, cids, cids1, cids2, out, start):
    """Features ``fids`` of the patches whose top-left channel pixels are
    (``rows[i]``, ``cols[i]``): ``out[j, start + i]`` for feature ``fids[j]``. (The
    layout's reference: training computes the same values per node from stored
    channels, :func:`gather_features`; tests hold the two equal.)

    ``reg``, ``sim``: (C, Hc, Wc) float32 (the regular and self-similarity channels);
    ``cids``/``cids1``/``cids2``: flat offsets of each feature (module docstring).
    """
    wc = reg.shape[2]
    rf = reg.ravel()
    sf = sim.ravel()
    n = rows.shape[0]
    offs = np.empty(n, np.int64)
    for i in range(n):
        offs[i] = rows[i] * wc + cols[i]
    for j in range(fids.shape[0]):
        f = fids[j]
        dst = out[j]
        if f < n_chn:
            a = cids[f]
            for i in range(n):
                dst[start + i] = rf[a + offs[i]]
        else:
            a = cids1[f - n_chn]
            b = cids2[f - n_chn]
            for i in range(n):
                dst[start + i] = sf[a + offs[i]] - sf[b + offs[i]]


@numba.njit(cache=True)
def patch_labels(seg, rows, cols, g, out, start):
    """The ``g x g`` label patches of ``seg`` (H, W) at top-left (``rows[i]``,
    ``cols[i]``) into ``out[start + i]`` (uint8), relabelled 1..k in increasing order of
    the stored labels (``unique``), a uniform patch all 1 (``edgesTrain.m``)."""
    buf = np.empty(g * g, np.int64)
    for i in range(rows.shape[0]):
        r0 = rows[i]
        c0 = cols[i]
        n = 0
        for r in range(g):
            for c in range(g):
                buf[n] = seg[r0 + r, c0 + c]
                n += 1
        u = np.unique(buf)
        for r in range(g):
            for c in range(g):
                v = np.searchsorted(u, seg[r0 + r, c0 + c]) + 1
                out[start + i, r, c] = min(v, 255)


# ---------------------------------------------------------------------------------------
# structured labels -> discrete labels (edgesTrain.m discretize)


@numba.njit(cache=True)
def pair_columns(labels, idx, p1, p2):
    """Binary codes of the samples ``idx`` as bit columns: bit ``i`` of ``bits[a]`` is
    set when ``labels[idx[i]]`` has the same label at flat pixels ``p1[a]`` and ``p2[a]``.
    Returns (bits (m, ceil(n/64)) uint64, column sums (m,) int64)."""
    n = idx.shape[0]
    m = p1.shape[0]
    nw = (n + 63) // 64
    bits = np.zeros((m, nw), np.uint64)
    sums = np.zeros(m, np.int64)
    flat = labels.reshape(labels.shape[0], -1)
    for i in range(n):
        row = flat[idx[i]]
        w = i >> 6
        b = np.uint64(1) << np.uint64(i & 63)
        for a in range(m):
            if row[p1[a]] == row[p2[a]]:
                bits[a, w] |= b
                sums[a] += 1
    return bits, sums


@numba.njit(cache=True)
def pair_cooccurrence(bits, cols):
    """``C[a, b]`` = samples whose codes are 1 at both columns ``cols[a]`` and
    ``cols[b]``: exact integer counts of Z'Z for the binary code matrix Z."""
    k = cols.shape[0]
    nw = bits.shape[1]
    out = np.zeros((k, k), np.int64)
    for a in range(k):
        ba = bits[cols[a]]
        for b in range(a, k):
            bb = bits[cols[b]]
            s = 0
            for w in range(nw):
                s += _popcount(ba[w] & bb[w])
            out[a, b] = s
            out[b, a] = s
    return out


@numba.njit(cache=True)
def pair_codes(labels, idx, p1, p2):
    """The binary codes as an (n, m) float64 matrix (for small nodes)."""
    n = idx.shape[0]
    m = p1.shape[0]
    z = np.zeros((n, m), np.float64)
    flat = labels.reshape(labels.shape[0], -1)
    for i in range(n):
        row = flat[idx[i]]
        for a in range(m):
            if row[p1[a]] == row[p2[a]]:
                z[i, a] = 1.0
    return z


@numba.njit(cache=True)
def pair_project(labels, idx, p1, p2, wts):
    """``Z @ wts`` for the binary codes Z (n, m) of the samples and ``wts`` (m, k)
    float64, without forming Z."""
    n = idx.shape[0]
    m = p1.shape[0]
    k = wts.shape[1]
    out = np.zeros((n, k), np.float64)
    flat = labels.reshape(labels.shape[0], -1)
    for i in range(n):
        row = flat[idx[i]]
        for a in range(m):
            if row[p1[a]] == row[p2[a]]:
                for j in range(k):
                    out[i, j] += wts[a, j]
    return out


@numba.njit(cache=True)
def cross_product(zc, samples_side):
    """``zc @ zc.T`` (n, n) when ``samples_side``, else ``zc.T @ zc`` (k, k), float64,
    for a small dense (n, k) matrix (no BLAS: its threads cost more than they save on
    these sizes)."""
    n, k = zc.shape
    if samples_side:
        out = np.zeros((n, n))
        for a in range(n):
            for b in range(a, n):
                s = 0.0
                for j in range(k):
                    s += zc[a, j] * zc[b, j]
                out[a, b] = s
                out[b, a] = s
        return out
    out = np.zeros((k, k))
    for i in range(n):
        for a in range(k):
            za = zc[i, a]
            if za != 0.0:
                for b in range(a, k):
                    out[a, b] += za * zc[i, b]
    for a in range(k):
        for b in range(a):
            out[a, b] = out[b, a]
    return out


@numba.njit(cache=True)
def top_eigenvectors(mat, d, tol, max_iter):
    """The ``d`` leading eigenpairs of the symmetric positive semi-definite ``mat``
    (k, k) by orthogonal (subspace) iteration: ``V <- orth(mat V)`` (modified
    Gram-Schmidt) from the columns of ``mat`` with the largest diagonal entries, until
    every column moves by less than ``tol`` (max norm, up to sign) or ``max_iter``
    steps. Returns (Rayleigh quotients (d,), V (k, d), steps taken or -1 if not
    converged)."""
    k = mat.shape[0]
    d = min(d, k)
    v = np.zeros((k, d))
    diag = np.empty(k)
    for a in range(k):
        diag[a] = mat[a, a]
    order = np.argsort(-diag)
    for j in range(d):
        for a in range(k):
            v[a, j] = mat[a, order[j]]
    w = np.zeros((k, d))
    steps = -1
    for it in range(max_iter + 1):
        if it > 0:
            for j in range(d):
                for a in range(k):
                    s = 0.0
                    for b in range(k):
                        s += mat[a, b] * v[b, j]
                    w[a, j] = s
        else:
            w[:, :] = v
        # modified Gram-Schmidt; a column that vanishes is replaced by a unit vector
        for j in range(d):
            for q in range(j):
                s = 0.0
                for a in range(k):
                    s += w[a, q] * w[a, j]
                for a in range(k):
                    w[a, j] -= s * w[a, q]
            nrm = 0.0
            for a in range(k):
                nrm += w[a, j] * w[a, j]
            nrm = np.sqrt(nrm)
            if nrm < 1e-300:
                for a in range(k):
                    w[a, j] = 0.0
                w[(j + it) % k, j] = 1.0
                for q in range(j):
                    s = w[(j + it) % k, q]
                    for a in range(k):
                        w[a, j] -= s * w[a, q]
                nrm = 0.0
                for a in range(k):
                    nrm += w[a, j] * w[a, j]
                nrm = np.sqrt(nrm)
            for a in range(k):
                w[a, j] /= nrm
        if it > 0:
            worst = 0.0
            for j in range(d):
                dot = 0.0
                for a in range(k):
                    dot += w[a, j] * v[a, j]
                sgn = 1.0 if dot >= 0 else -1.0
                for a in range(k):
                    dev = abs(w[a, j] - sgn * v[a, j])
                    if dev > worst:
                        worst = dev
            v[:, :] = w
            if worst < tol:
                steps = it
                break
        else:
            v[:, :] = w
    vals = np.zeros(d)
    for j in range(d):
        s = 0.0
        for a in range(k):
            t = 0.0
            for b in range(k):
                t += mat[a, b] * v[b, j]
            s += v[a, j] * t
        vals[j] = s
    return vals, v, steps


@numba.njit(cache=True)
def project(zc, vecs):
    """``zc @ vecs`` for small dense matrices (no BLAS)."""
    n, k = zc.shape
    d = vecs.shape[1]
    out = np.zeros((n, d))
    for i in range(n):
        for a in range(k):
            z = zc[i, a]
            if z != 0.0:
                for j in range(d):
                    out[i, j] += z * vecs[a, j]
    return out


# ---------------------------------------------------------------------------------------
# split search (forestFindThr.cpp, split = 'gini')


@numba.njit(cache=True, inline="always")
def _order_key(bits):
    """uint32 bits of a float32 -> a uint32 that sorts as the float does."""
    if bits & np.uint32(0x80000000):
        return ~bits
    return bits | np.uint32(0x80000000)


@numba.njit(cache=True, inline="always")
def _from_key(key):
    if key & np.uint32(0x80000000):
        return key & np.uint32(0x7FFFFFFF)
    return ~key


@numba.njit(cache=True)
def _scan_cuts(col, hs, tot, g, nn, keys, vbits, cl, cr, v_best):
    """One feature's cuts (forestFindThr.cpp's inner loop): ``col`` (n,) float32 holds
    the feature of the node's samples (classes ``hs``), ``tot``/``g`` the class counts
    and the sum of their squares. Returns (True, v, thr) for the first cut whose
    ``v`` is strictly below ``v_best``'s running minimum, else (False, v_best, 0)."""
    n = col.shape[0]
    n_classes = tot.shape[0]
    colbits = col.view(np.uint32)
    for i in range(n):
        kb = np.uint64(_order_key(colbits[i]))
        keys[i] = (kb << np.uint64(32)) | np.uint64(hs[i])
    keys.sort()
    for i in range(n):
        vbits[i] = _from_key(np.uint32(keys[i] >> np.uint64(32)))
    vals = vbits.view(np.float32)
    for h in range(n_classes):
        cl[h] = 0
        cr[h] = tot[h]
    gl = 0.0
    gr = g
    found = False
    thr = np.float32(0.0)
    eps = np.float32(1e-6)
    half = np.float32(0.5)
    for j in range(n - 1):
        h = np.int64(keys[j] & np.uint64(0xFFFFFFFF))
        c = float(cl[h])
        gl += 2.0 * c + 1.0  # (c+1)^2 - c^2
        cl[h] += 1
        c = float(cr[h])
        gr -= 2.0 * c - 1.0  # c^2 - (c-1)^2
        cr[h] -= 1
        nl = float(j + 1)
        nr = nn - nl
        v = (nl - gl / nl + nr - gr / nr) / nn
        if v < v_best and vals[j + 1] - vals[j] >= eps:
            v_best = v
            found = True
            thr = half * (vals[j] + vals[j + 1])
    return found, v_best, thr


@numba.njit(cache=True)
def _node_totals(hs, n_classes):
    """Class counts of the node, the sum of their squares, v of the unsplit node."""
    n = hs.shape[0]
    tot = np.zeros(n_classes, np.int64)
    for i in range(n):
        tot[hs[i]] += 1
    g = 0.0
    for h in range(n_classes):
        g += float(tot[h]) * float(tot[h])
    nn = float(n)
    return tot, g, 1.0 - g / nn / nn


@numba.njit(cache=True)
def _gather_rows(data, idx, f, out):
    row = data[f]
    for i in range(idx.shape[0]):
        out[i] = row[idx[i]]


@numba.njit(cache=True)
def best_split(data, idx, feats, hs, n_classes):
    """The Gini-best threshold split of the samples ``idx`` over the candidate features
    ``feats`` (rows of ``data`` (F, N) float32); ``hs`` (n,) are the samples' classes
    0 .. n_classes-1.

    As forestFindThr.cpp (uniform weights): for each feature in turn, samples sorted by
    value, every cut between consecutive sorted values that differ by at least 1e-6
    (float32) scores ``v = sum_side (n_side - sum_h n_h,side^2 / n_side) / n``; the
    first strictly lowest ``v`` over features and cuts wins, starting from ``v`` of the
    unsplit node. Returns (position in ``feats`` (0 if none improves), threshold (the
    float32 midpoint of the two values), gain = v_unsplit - v_best).
    """
    tot, g, v_init = _node_totals(hs, n_classes)
    n = idx.shape[0]
    keys = np.empty(n, np.uint64)
    vbits = np.empty(n, np.uint32)
    col = np.empty(n, np.float32)
    cl = np.zeros(n_classes, np.int64)
    cr = np.zeros(n_classes, np.int64)
    v_best = v_init
    best_f = 0
    best_thr = np.float32(0.0)
    for fi in range(feats.shape[0]):
        _gather_rows(data, idx, feats[fi], col)
        found, v_best, thr = _scan_cuts(
            col, hs, tot, g, float(n), keys, vbits, cl, cr, v_best
        )
        if found:
            best_f = fi
            best_thr = thr
    return best_f, best_thr, v_init - v_best


# ---------------------------------------------------------------------------------------
# features computed on the fly from the stored channels (training)
#
# ``src`` = (chn, base, tab, offa, offb): ``chn`` float32, the regular then the
# self-similarity channel planes of every training image, one block per image, flat;
# ``base[s]`` the flat offset in ``chn`` of sample s's patch (its top-left channel pixel
# in its image's regular planes); ``tab[s]`` the row of ``offa``/``offb`` (n_tables, F)
# int64 for its image's plane size: feature j of the tree is ``chn[base + offa[t, j]]``
# (regular; ``offb`` < 0) or ``chn[base + offa[t, j]] - chn[base + offb[t, j]]``
# (self-similarity, float32 difference as patch_features computes it).


@numba.njit(cache=True)
def gather_feature(src, idx, j, out):
    """Feature ``j`` (column of the tree's feature list) of the samples ``idx`` into
    ``out`` (n,) float32, bit-identical to patch_features' value."""
    chn, base, tab, offa, offb = src
    if offb[0, j] < 0:
        for i in range(idx.shape[0]):
            s = idx[i]
            out[i] = chn[base[s] + offa[tab[s], j]]
    else:
        for i in range(idx.shape[0]):
            s = idx[i]
            o = base[s]
            t = tab[s]
            out[i] = chn[o + offa[t, j]] - chn[o + offb[t, j]]


@numba.njit(cache=True)
def gather_features(src, idx, feats, out):
    """Features ``feats`` of the samples ``idx`` into ``out`` (len(feats), n) float32,
    sample by sample: a sample's features lie in its image's channels (a few MB, in
    cache for the image's consecutive samples), where feature by feature every read
    would sweep all images' channels."""
    chn, base, tab, offa, offb = src
    nf = feats.shape[0]
    for i in range(idx.shape[0]):
        s = idx[i]
        o = base[s]
        t = tab[s]
        for q in range(nf):
            j = feats[q]
            b = offb[t, j]
            if b < 0:
                out[q, i] = chn[o + offa[t, j]]
            else:
                out[q, i] = chn[o + offa[t, j]] - chn[o + b]


@numba.njit(cache=True)
def best_split_stored(src, idx, feats, hs, n_classes):
    """:func:`best_split` with the features computed from the stored channels ``src``
    (see above) instead of read from a feature matrix: the same values, the same
    result."""
    tot, g, v_init = _node_totals(hs, n_classes)
    n = idx.shape[0]
    keys = np.empty(n, np.uint64)
    vbits = np.empty(n, np.uint32)
    cols = np.empty((feats.shape[0], n), np.float32)
    gather_features(src, idx, feats, cols)
    cl = np.zeros(n_classes, np.int64)
    cr = np.zeros(n_classes, np.int64)
    v_best = v_init
    best_f = 0
    best_thr = np.float32(0.0)
    for fi in range(feats.shape[0]):
        found, v_best, thr = _scan_cuts(
            cols[fi], hs, tot, g, float(n), keys, vbits, cl, cr, v_best
        )
        if found:
            best_f = fi
            best_thr = thr
    return best_f, best_thr, v_init - v_best


# ---------------------------------------------------------------------------------------
# leaves: small-segment removal and edge bands (edgesTrain.m mergeTrees)


@numba.njit(cache=True)
def _round_half_away(x):
    if x >= 0:
        return np.floor(x + 0.5)
    return -np.floor(-x + 0.5)


@numba.njit(cache=True)
def clean_segments(segs, max_small):
    """Remove segments of at most ``max_small`` pixels from each (g, g) patch of ``segs``
    (uint8 labels 0..m-1), in place, as mergeTrees does: for j = 0..m-1 in turn, a
    segment j of <= max_small pixels takes the median (single precision; an even count
    averages the two middle values, then rounds half away from zero as MATLAB's uint8
    conversion) of the labels under its 3x3 dilation, itself included; the labels are
    then renumbered 0.. in increasing order. Returns the segment counts (int32)."""
    L, g, _ = segs.shape
    nsegs = np.zeros(L, np.int32)
    vals = np.empty(g * g, np.float32)
    mask = np.zeros((g, g), np.bool_)
    for li in range(L):
        s = segs[li]
        m = 0
        for r in range(g):
            for c in range(g):
                if s[r, c] + 1 > m:
                    m = s[r, c] + 1
        if m == 1:
            nsegs[li] = 1
            continue
        changed = False
        for j in range(m):
            cnt = 0
            for r in range(g):
                for c in range(g):
                    if s[r, c] == j:
                        cnt += 1
            if cnt > max_small:
                continue
            changed = True
            if cnt == 0:
                continue
            # 3x3 dilation (convTri(.,1) > 0 with the edge repeated at the border)
            for r in range(g):
                for c in range(g):
                    hit = False
                    for dr in range(-1, 2):
                        rr = min(max(r + dr, 0), g - 1)
                        for dc in range(-1, 2):
                            cc = min(max(c + dc, 0), g - 1)
                            if s[rr, cc] == j:
                                hit = True
                    mask[r, c] = hit
            k = 0
            for r in range(g):
                for c in range(g):
                    if mask[r, c]:
                        vals[k] = np.float32(s[r, c])
                        k += 1
            v = np.sort(vals[:k])
            if k % 2 == 1:
                med = v[k // 2]
            else:
                med = (v[k // 2 - 1] + v[k // 2]) / np.float32(2.0)
            newv = np.uint8(min(max(_round_half_away(med), 0.0), 255.0))
            for r in range(g):
                for c in range(g):
                    if s[r, c] == j:
                        s[r, c] = newv
        if changed:
            present = np.zeros(256, np.int32)
            for r in range(g):
                for c in range(g):
                    present[s[r, c]] = 1
            newlab = np.zeros(256, np.uint8)
            k = 0
            for v in range(256):
                if present[v]:
                    newlab[v] = k
                    k += 1
            for r in range(g):
                for c in range(g):
                    s[r, c] = newlab[s[r, c]]
            m = k
        nsegs[li] = m
    return nsegs


@numba.njit(cache=True)
def edge_bands(segs, nsegs, n_bands):
    """The toolbox's ``eBins``/``eBnds`` of each (g, g) label patch: band 0 are the
    pixels where ``gradientMag`` of the labels is nonzero (central differences, one-sided
    at the border: a neighbour two apart, or one apart at the border, differs), band
    b > 0 the pixels added by the b-th 3x3 dilation (``convTri(E, 1) > .01``). Pixels as
    column-major indices ``c*g + r``, increasing within a band. A patch of one segment has
    no pixels. Returns (bins uint16, bounds int64 (L*n_bands + 1))."""
    L, g, _ = segs.shape
    cap = 0
    for li in range(L):
        if nsegs[li] > 1:
            cap += g * g
    bins = np.empty(cap, np.uint16)
    bnds = np.zeros(L * n_bands + 1, np.int64)
    cur = np.zeros((g, g), np.bool_)
    prev = np.zeros((g, g), np.bool_)
    nxt = np.zeros((g, g), np.bool_)
    k = 0
    for li in range(L):
        s = segs[li]
        if nsegs[li] <= 1:
            for b in range(n_bands):
                bnds[li * n_bands + b + 1] = k
            continue
        for r in range(g):
            r0 = r - 1 if r > 0 else 0
            r1 = r + 1 if r < g - 1 else g - 1
            for c in range(g):
                c0 = c - 1 if c > 0 else 0
                c1 = c + 1 if c < g - 1 else g - 1
                cur[r, c] = s[r, c0] != s[r, c1] or s[r0, c] != s[r1, c]
                prev[r, c] = False
        for b in range(n_bands):
            for c in range(g):
                for r in range(g):
                    if cur[r, c] and not prev[r, c]:
                        bins[k] = c * g + r
                        k += 1
            bnds[li * n_bands + b + 1] = k
            for r in range(g):
                for c in range(g):
                    prev[r, c] = cur[r, c]
                    hit = False
                    for rr in range(max(r - 1, 0), min(r + 2, g)):
                        for cc in range(max(c - 1, 0), min(c + 2, g)):
                            if cur[rr, cc]:
                                hit = True
                    nxt[r, c] = hit
            for r in range(g):
                for c in range(g):
                    cur[r, c] = nxt[r, c]
    return bins[:k].copy(), bnds


# ---------------------------------------------------------------------------------------
# detection (edgesDetectMex.cpp)


@numba.njit(cache=True)
def apply_forest(reg, sim, h1, w1, step, nodes, n_eval, n_chn, cids, cids1, cids2):
    """Leaf (global leaf id) reached by each evaluated tree at each patch location.

    Location (r, c) of the ``h1 x w1`` grid reads the patch whose top-left channel pixel
    is (r*step, c*step) (step = stride / shrink) and evaluates trees
    ``((r + c) % 2 * n_eval + t) % n_trees`` for t < n_eval (the toolbox's checkerboard).
    ``nodes`` (n_trees, n_nodes, 3) int32 packs each node in one place: the 0-based index
    of its left child (right = left + 1; 0 for a leaf), its feature id (the global leaf
    id at a leaf) and the bits of its float32 threshold; a sample goes left when its
    feature is ``< thr``. The trees of a whole grid row descend together, one level per
    sweep, so that their memory reads overlap. Returns (h1, w1, n_eval) int32.
    """
    wc = reg.shape[2]
    rf = reg.ravel()
    sf = sim.ravel()
    thr_all = nodes.view(np.float32)
    n_trees = nodes.shape[0]
    out = np.empty((h1, w1, n_eval), np.int32)
    m = w1 * n_eval
    cur = np.empty(m, np.int64)
    tree = np.empty(m, np.int64)
    offs = np.empty(m, np.int64)
    for r in range(h1):
        for c in range(w1):
            for t in range(n_eval):
                j = c * n_eval + t
                tree[j] = ((r + c) % 2 * n_eval + t) % n_trees
                cur[j] = 0
                offs[j] = (r * step) * wc + c * step
        active = m
        while active > 0:
            active = 0
            for j in range(m):
                t1 = tree[j]
                k = cur[j]
                ch = nodes[t1, k, 0]
                if ch == 0:
                    continue
                active += 1
                f = nodes[t1, k, 1]
                o = offs[j]
                if f < n_chn:
                    ftr = rf[cids[f] + o]
                else:
                    f2 = f - n_chn
                    ftr = sf[cids1[f2] + o] - sf[cids2[f2] + o]
                if ftr < thr_all[t1, k, 2]:
                    cur[j] = ch
                else:
                    cur[j] = ch + 1
        for c in range(w1):
            for t in range(n_eval):
                j = c * n_eval + t
                out[r, c, t] = nodes[tree[j], cur[j], 1]
    return out


@numba.njit(cache=True)
def accumulate_edges(ind, bins, bnds, n_bands, stride, g, out):
    """Add 1 at each band-0 edge pixel of every evaluated leaf's g x g patch, placed at
    (r*stride, c*stride) of ``out`` (the toolbox without sharpening)."""
    h1, w1, n_eval = ind.shape
    for r in range(h1):
        for c in range(w1):
            y0 = r * stride
            x0 = c * stride
            for t in range(n_eval):
                k = ind[r, c, t]
                for b in range(bnds[k * n_bands], bnds[k * n_bands + 1]):
                    i = np.int64(bins[b])
                    out[y0 + i % g, x0 + i // g] += 1.0


@numba.njit(cache=True, error_model="numpy")
def accumulate_sharpened(
    ind, segs, nsegs, bins, bnds, n_bands, sharpen, img, off, stride, out
):
    """The toolbox's sharpened accumulation (edgesDetectMex.cpp, ``sharpen > 0``).

    For each evaluated leaf with more than one segment: the mean colour of each segment
    over every other pixel (even rows and columns of the patch) of ``img`` (3, H, W)
    float32 (the padded RGB smoothed by ``convTri(., 1)``), the patch's top-left pixel
    at (r*stride + off, c*stride + off); then each pixel of bands 0 .. sharpen-1, in
    order and in place, takes the segment among its 4 neighbours' (left, right, up,
    down; itself at the border) whose mean colour is nearest its own (first strictly
    nearest); finally 1 is added at each pixel of bands 0 .. sharpen whose 4 neighbours
    do not all share its segment.
    """
    h1, w1, n_eval = ind.shape
    g = segs.shape[1]
    nz = img.shape[0]
    s_loc = np.empty((g, g), np.uint8)
    ns = np.zeros(256, np.float32)
    mus = np.zeros((256, nz), np.float32)
    vs = np.zeros(nz, np.float32)
    nbr = np.empty(4, np.int64)
    for r in range(h1):
        for c in range(w1):
            y0 = r * stride + off
            x0 = c * stride + off
            for t in range(n_eval):
                k = ind[r, c, t]
                m = nsegs[k]
                if m <= 1:
                    continue
                for rr in range(g):
                    for cc in range(g):
                        s_loc[rr, cc] = segs[k, rr, cc]
                for s in range(m):
                    ns[s] = 0.0
                    for z in range(nz):
                        mus[s, z] = 0.0
                for cc in range(0, g, 2):
                    for rr in range(0, g, 2):
                        s = s_loc[rr, cc]
                        ns[s] += 1.0
                        for z in range(nz):
                            mus[s, z] += img[z, y0 + rr, x0 + cc]
                for s in range(m):
                    for z in range(nz):
                        mus[s, z] /= ns[s]
                b0 = bnds[k * n_bands]
                b1 = bnds[k * n_bands + sharpen]
                for b in range(b0, b1):
                    i = np.int64(bins[b])
                    pr = i % g
                    pc = i // g
                    nbr[0] = s_loc[pr, pc - 1] if pc > 0 else s_loc[pr, pc]
                    nbr[1] = s_loc[pr, pc + 1] if pc < g - 1 else s_loc[pr, pc]
                    nbr[2] = s_loc[pr - 1, pc] if pr > 0 else s_loc[pr, pc]
                    nbr[3] = s_loc[pr + 1, pc] if pr < g - 1 else s_loc[pr, pc]
                    for z in range(nz):
                        vs[z] = img[z, y0 + pr, x0 + pc]
                    e_best = np.float32(1e10)
                    s_best = -1
                    for q in range(4):
                        s = nbr[q]
                        if s == s_best:
                            continue
                        e = np.float32(0.0)
                        for z in range(nz):
                            d = mus[s, z] - vs[z]
                            e += d * d
                        if e < e_best:
                            e_best = e
                            s_best = s
                    # the mex stores sBest even when every distance is NaN (-1 -> 255)
                    s_loc[pr, pc] = np.uint8(s_best & 255)
                b1 = bnds[k * n_bands + sharpen + 1]
                for b in range(b0, b1):
                    i = np.int64(bins[b])
                    pr = i % g
                    pc = i // g
                    s = s_loc[pr, pc]
                    diff = False
                    if pc > 0 and s_loc[pr, pc - 1] != s:
                        diff = True
                    if pc < g - 1 and s_loc[pr, pc + 1] != s:
                        diff = True
                    if pr > 0 and s_loc[pr - 1, pc] != s:
                        diff = True
                    if pr < g - 1 and s_loc[pr + 1, pc] != s:
                        diff = True
                    if diff:
                        out[r * stride + pr, c * stride + pc] += 1.0
