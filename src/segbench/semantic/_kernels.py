"""Numba kernels: the only code in this package that visits pixels.

Everything here works on runs. A label-map pair is mostly long stretches where the
ground truth, the prediction (and, for boundary IoU, both band flags) stay the same, so
each kernel first marks, with a branch-free loop the compiler vectorizes, the pixels
where anything changes, then walks that mark buffer 8 bytes at a time and adds one run
length per stretch. The cost is a few vector operations per pixel plus one update per
run, whatever the number of classes. Labels are checked once per run (every pixel of a
run has the run's labels), so validation costs nothing on the pixels.

Boundary band (``count_pairs_band``, ``band_map``): a pixel lies in its class's band
when some pixel within Chebyshev distance d holds another label, or when it lies within
d pixels of the image edge. That is exactly ``mask - erode(pad(mask, 0), 3x3, d times)``
of the authors' ``mask_to_boundary``, for every class at once: a pixel can only be in
the band of its own label. It is decided in one top-to-bottom sweep that keeps, per
column, the last row where the label changed; row o is then interior where the columns
of a (2d+1)-wide window have not changed within d rows of o and the row itself is
constant across the window (runs of "complete and equal to the left neighbour", shrunk
by d at each end).

Conventions: loop indices are unsigned (``np.uint64``) so that Numba emits no
negative-index wraparound and the loops vectorize; labels are read as int64 whatever
the input dtype; ``reduce_zero_label`` is applied to the ground truth on the fly (mmseg's
rule), so no map is ever copied. Counts go to int64 arrays owned by the caller.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_ONES = np.uint64(0x0101010101010101)
_BLOCK = 1 << 14  # pixels per mark buffer in the flat kernel (stays in L1/L2)


@njit(cache=True, nogil=True, inline="always")
def _mark_buffer(n):
    """Zeroed bytes for ``n`` marks plus a sentinel, padded to whole 8-byte words."""
    return np.zeros(8 * (n // 8 + 1), np.uint8)


@njit(cache=True, nogil=True, inline="always")
def _gt_label(raw, ign, rzl):
    """Class of a raw ground-truth value: mmseg's reduce_zero_label maps 0 and 255 to the
    ignore index (255) and every other value v to v - 1."""
    g = np.int64(raw)
    if rzl:
        if g == 0:
            return ign
        g -= 1
        if g == 254:
            return ign
    return g


@njit(cache=True, nogil=True)
def first_bad_pixel(gt, pred, num_classes, ign, rzl):
    """(flat index, side) of the first out-of-range label, side 0 = gt, 1 = pred; (-1, 0)
    if none. Slow path, run only after a counting kernel met a bad label."""
    c = np.uint64(num_classes)
    for i in range(gt.size):
        g = _gt_label(gt[i], ign, rzl)
        if g != ign and np.uint64(g) >= c:
            return i, 0
        if np.uint64(np.int64(pred[i])) >= c:
            return i, 1
    return -1, 0


# --- confusion matrix -----------------------------------------------------------------------

@njit(cache=True, nogil=True)
def count_pairs(gt, pred, num_classes, ign, rzl, conf):
    """Add one pair's pixel counts to ``conf`` (flat C*C, row = gt class).

    ``gt`` and ``pred`` are flat, of one length. Returns the flat index of the first
    pixel with an out-of-range label, after which ``conf`` is partial and must be
    discarded, or -1.
    """
    n = gt.size
    nc = np.int64(num_classes)
    ch = _mark_buffer(_BLOCK)
    words = ch.view(np.uint64)
    none = np.empty(0, np.int64)  # band counts: not read with band=False
    for b0 in range(0, n, _BLOCK):
        m = min(_BLOCK, n - b0)
        g = gt[b0:b0 + m]
        p = pred[b0:b0 + m]
        ch[0] = 1
        for i in range(_U1, np.uint64(m)):
            ch[i] = (g[i] != g[i - _U1]) | (p[i] != p[i - _U1])
        ch[m + 1:8 * (m // 8 + 1)] = 0
        bad = _count_row(g, p, ch, ch, ch, words, m, nc, ign, rzl, 1,
                         conf, none, none, none, False)
        if bad >= 0:
            return b0 + bad
    return -1


# --- boundary band -------------------------------------------------------------------------

@njit(cache=True, nogil=True, inline="always")
def _marks(g, p, lcg, lcp, thr, fullg, fullp, ch):
    """Per row: fullX[c] = column c unchanged since row ``thr`` and equal to its left
    neighbour in map X; ch[c] = either map changes at c."""
    fullg[0] = 0
    fullp[0] = 0
    ch[0] = 1
    for c in range(_U1, np.uint64(g.size)):
        eg = g[c] == g[c - _U1]
        ep = p[c] == p[c - _U1]
        fullg[c] = eg & (lcg[c] <= thr)
        fullp[c] = ep & (lcp[c] <= thr)
        ch[c] = not (eg & ep)


@njit(cache=True, nogil=True, inline="always")
def _marks_map(x, lc, thr, full):
    """``_marks`` for one map, without change marks: full[c] = column c unchanged since
    row ``thr`` and equal to its left neighbour."""
    full[0] = 0
    for c in range(_U1, np.uint64(x.size)):
        full[c] = (x[c] == x[c - _U1]) & (lc[c] <= thr)


@njit(cache=True, nogil=True, inline="always")
def _interior(full, lc, thr, d, iv, ch):
    """Interior intervals [iv[2i], iv[2i+1]) of a row; marks their ends in ``ch``.

    Pixel c is interior when full[c-d+1 .. c+d] are all set and column c-d is complete
    too (lc[c-d] <= thr). Runs of set ``full`` are found eight bytes at a time;
    ``full`` is zero-padded past the row, so the last run closes there. Returns
    the number of intervals.
    """
    words = full.view(np.uint64)
    cur = 0
    a = 0
    n = 0
    for k in range(words.size):
        wv = words[k]
        x = wv ^ (_ONES if cur else _U0)  # bytes that differ from the current state
        while x:
            j = 8 * k + (trailing_zeros(x) >> 3)
            if cur == 0:
                a = j
                cur = 1
            else:
                s = a + d - 1 if lc[a - 1] <= thr else a + d
                t = j - d
                if s < t:
                    iv[2 * n] = s
                    iv[2 * n + 1] = t
                    n += 1
                    ch[s] = 1
                    ch[t] = 1
                cur = 0
            shift = np.uint64(8 * (j - 8 * k) + 8)  # look above j, against the new state
            if shift == 64:
                break
            x = (wv ^ (_ONES if cur else _U0)) >> shift << shift
    return n


@njit(cache=True, nogil=True, inline="always")
def _interior_wide(full, lc, thr, d, iv, ch):
    """``_interior`` for d >= 8, visiting words rather than every change of ``full``.

    An interval needs a run of at least 2d >= 16 set bytes in ``full``, and such a run
    covers at least one whole aligned word: so only runs through all-set words are
    followed, extended into the partial words on either side. Near slanted boundaries
    ``full`` flickers every few columns; those short runs now cost nothing.
    """
    words = full.view(np.uint64)
    nw = words.size
    n = 0
    k = 0
    while k < nw:
        if words[k] != _ONES:
            k += 1
            continue
        k1 = k
        while words[k] == _ONES:  # the last word holds the zero padding: never all set
            k += 1
        a = 8 * k1
        if k1 > 0:
            zeros = ~words[k1 - 1] & _ONES
            a -= 7 - ((63 - leading_zeros(zeros)) >> 3)
        j = 8 * k + (trailing_zeros(~words[k] & _ONES) >> 3)
        s = a + d - 1 if lc[a - 1] <= thr else a + d
        t = j - d
        if s < t:
            iv[2 * n] = s
            iv[2 * n + 1] = t
            n += 1
            ch[s] = 1
            ch[t] = 1
    return n


@njit(cache=True, nogil=True, inline="always")
def _advance_map(x, xprev, lc, r):
    """Move one map's change rows to row r; returns whether row r equals row r-1 (then
    ``lc`` needs no update, which is most rows of most label maps)."""
    diff = x[0] ^ xprev[0]
    for c in range(_U1, np.uint64(x.size)):
        diff |= x[c] ^ xprev[c]
    if diff == 0:
        return True
    for c in range(_U0, np.uint64(x.size)):
        lc[c] = lc[c] if x[c] == xprev[c] else r
    return False


@njit(cache=True, nogil=True)
def band_map(labels, d):
    """uint8 map: 1 where a pixel is in its own label's band of radius ``d``.

    The band of ``count_pairs_band`` for one map: same change rows, same interior
    routines (``_interior_wide`` for d >= 8), no repeated-row shortcut.
    """
    h, w = labels.shape
    out = np.ones((h, w), np.uint8)
    lc = np.zeros(w, np.int32)
    full = _mark_buffer(w)
    ch = _mark_buffer(w)  # interval ends, written by the interior routines; unused
    iv = np.zeros(w + 2, np.int64)
    for r in range(1, h):
        _advance_map(labels[r], labels[r - 1], lc, np.int32(r))
        o = r - d
        if o >= 0:
            thr = np.int32(o - d)
            _marks_map(labels[o], lc, thr, full)
            n = (_interior_wide(full, lc, thr, d, iv, ch) if d >= 8
                 else _interior(full, lc, thr, d, iv, ch))
            for i in range(n):
                out[o, iv[2 * i]:iv[2 * i + 1]] = 0
    return out


@njit(cache=True, nogil=True)
def count_pairs_band(gt, pred, num_classes, ign, rzl, d, row0, row1,
                     conf, gt_band, pred_band, band_inter):
    """Confusion and band counts of output rows ``row0 .. row1-1`` of one (H, W) pair.

    Ignored ground-truth pixels shape both bands (they are "another label" to their
    neighbours) but are counted nowhere. ``gt_band[c]`` / ``pred_band[c]`` count valid
    pixels in class c's band of each map, ``band_inter[c]`` those in both bands with
    both labels c. Up to d rows either side of the range are read, not counted, so
    disjoint row ranges may run on separate threads and be summed. Returns the flat index
    of the first out-of-range label met (the counts are then partial), or -1.

    Repeated rows: row o contributes exactly what row o-1 did when both maps repeat
    their previous row at o and both bands are unchanged. The band of row o is a
    function of the set of distinct rows in its window (o-d .. o+d): it is unchanged
    when the rows entering (o+d) and leaving (o-d-1) the window repeat their neighbour
    inside it, or when both windows reach past an image edge (no interior at all). Such
    rows are not recomputed: the last computed row is counted once with a multiplicity.
    Where only one map's band is unchanged, that map's interior is kept, not rebuilt.
    """
    h, w = gt.shape
    nc = np.int64(num_classes)
    fullg = _mark_buffer(w)
    fullp = _mark_buffer(w)
    ch = _mark_buffer(w)
    words = ch.view(np.uint64)
    ivg = np.zeros(w + 2, np.int64)
    ivp = np.zeros(w + 2, np.int64)
    bg = np.ones(w, np.uint8)  # band flags of the pending row
    bp = np.ones(w, np.uint8)
    ng = 0
    np_ = 0
    eqg = np.zeros(h + 1, np.bool_)  # eqX[r]: row r equals row r-1 (read rows only)
    eqp = np.zeros(h + 1, np.bool_)
    r_start = max(0, row0 - d)
    # a column "changed" at r_start: windows may not reach above the rows we read
    lcg = np.full(w, r_start, np.int32)
    lcp = np.full(w, r_start, np.int32)
    r_next = r_start
    pend = -1   # last computed output row, not yet counted
    mult = 0    # rows it stands for
    for o in range(row0, row1):
        r_end = min(h - 1, o + d)
        while r_next <= r_end:
            if r_next > r_start:
                eqg[r_next] = _advance_map(gt[r_next], gt[r_next - 1], lcg, np.int32(r_next))
                eqp[r_next] = _advance_map(pred[r_next], pred[r_next - 1], lcp,
                                           np.int32(r_next))
            r_next += 1
        edge = o - d < 0 or o + d >= h
        # is the band of each map that of row o-1 (held in ivX / bX)?
        same_g = False
        same_p = False
        if pend >= 0:
            if edge:
                same_g = same_p = o - 1 - d < 0 or o - 1 + d >= h
            elif o - 1 - d >= 0:
                same_g = eqg[o + d] and eqg[o - d]
                same_p = eqp[o + d] and eqp[o - d]
            if same_g and same_p and eqg[o] and eqp[o]:
                mult += 1
                continue
            bad = _count_row(gt[pend], pred[pend], bg, bp, ch, words, w, nc,
                             ign, rzl, mult, conf, gt_band, pred_band, band_inter, True)
            if bad >= 0:
                return pend * w + bad
        thr = np.int32(-1 if edge else o - d)
        _marks(gt[o], pred[o], lcg, lcp, thr, fullg, fullp, ch)
        if same_g:  # keep the intervals; their ends still split the runs
            for i in range(ng):
                ch[ivg[2 * i]] = 1
                ch[ivg[2 * i + 1]] = 1
        else:
            bg[:] = 1
            ng = 0
            if not edge:
                ng = (_interior_wide(fullg, lcg, thr, d, ivg, ch) if d >= 8
                      else _interior(fullg, lcg, thr, d, ivg, ch))
                for i in range(ng):
                    bg[ivg[2 * i]:ivg[2 * i + 1]] = 0
        if same_p:
            for i in range(np_):
                ch[ivp[2 * i]] = 1
                ch[ivp[2 * i + 1]] = 1
        else:
            bp[:] = 1
            np_ = 0
            if not edge:
                np_ = (_interior_wide(fullp, lcp, thr, d, ivp, ch) if d >= 8
                       else _interior(fullp, lcp, thr, d, ivp, ch))
                for i in range(np_):
                    bp[ivp[2 * i]:ivp[2 * i + 1]] = 0
        pend = o
        mult = 1
    if pend >= 0:
        bad = _count_row(gt[pend], pred[pend], bg, bp, ch, words, w, nc,
                         ign, rzl, mult, conf, gt_band, pred_band, band_inter, True)
        if bad >= 0:
            return pend * w + bad
    return -1


@njit(cache=True, nogil=True, inline="always")
def _count_row(g, p, bg, bp, ch, words, w, nc, ign, rzl, mult,
               conf, gt_band, pred_band, band_inter, band):
    """Add the runs of one row marked in ``ch`` (ch[0] set; ch[w] is set here).

    ``bg`` / ``bp`` hold 1 where a pixel is in the band of the ground truth / the
    prediction. A run never straddles an interior interval's end (those are marked in
    ``ch`` too), so the band flags of a run are those of its first pixel; the band
    counts are added without branches (adding zero where a run is outside a band).
    Every count is added ``mult`` times (the row stands for that many equal rows).
    With ``band`` False (a constant at each call site, so the compiler drops the band
    code) only ``conf`` is counted and the band arguments are not read: this is the
    run walk of ``count_pairs`` too. Returns the column of the first out-of-range
    label, or -1.
    """
    ch[w] = 1
    unc = np.uint64(nc)
    start = 0
    for k in range(w // 8 + 1):
        wv = words[k]
        while wv:
            j = 8 * k + (trailing_zeros(wv) >> 3)
            wv &= wv - _U1
            if j == 0:
                continue
            pl = np.int64(p[start])
            gl = _gt_label(g[start], ign, rzl)
            if np.uint64(pl) >= unc or (gl != ign and np.uint64(gl) >= unc):
                return start
            if gl != ign:
                n = (j - start) * mult
                conf[np.uint64(gl * nc + pl)] += n
                if band:
                    ng = n * np.int64(bg[start])
                    npb = n * np.int64(bp[start])
                    gt_band[gl] += ng
                    pred_band[pl] += npb
                    band_inter[gl] += npb * np.int64(bg[start]) * np.int64(gl == pl)
            start = j
    return -1
