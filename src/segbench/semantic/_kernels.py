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
by d at each end). The band counts are the valid pixels minus what those few interior
intervals hold, so the per-pixel work is the confusion count's.

The band kernel's rows are mostly distinct and each holds only a dozen runs, so there a
mispredicted branch at every run end was the main cost: it lists runs branch-free
instead (marks packed 64 to a bit word, eight positions written per word whatever its
count) and finds the run of any column from the packed marks in constant time.

Conventions: loop indices are unsigned (``np.uint64``) so that Numba emits no
negative-index wraparound and the loops vectorize; labels are read as int64 whatever
the input dtype; ``reduce_zero_label`` is applied to the ground truth on the fly (mmseg's
rule), so no map is ever copied. Counts go to int64 arrays owned by the caller.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros
from numba.extending import intrinsic

from ..compilation import prepare_kernels

prepare_kernels()

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_ONES = np.uint64(0x0101010101010101)
_PACK = np.uint64(0x0102040810204080)  # (w * _PACK) >> 56: bit j = byte j of 0/1 bytes
_S56 = np.uint64(56)
_BLOCK = 1 << 14  # pixels per mark buffer in the flat kernel (stays in L1/L2)
_DENSE = 8  # per pixel from one change in this many pixels, else run walk
_AHEAD = 8  # rows the band kernel asks the CPU to fetch before it reads them


@njit(cache=True, nogil=True, inline="always")
def _mark_buffer(n):
    """Zeroed bytes for ``n`` marks plus a sentinel, padded to whole 8-byte words."""
    return np.zeros(8 * (n // 8 + 1), np.uint8)


@njit(cache=True, nogil=True, inline="always")
def _position_buffer(w):
    """Room for the positions of up to w + 1 marks of a row, plus the 8 spare entries
    that ``_list_bits`` may write past the last one."""
    return np.zeros(w + 10, np.int64)


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
def count_pairs(gt, pred, num_classes, ign, rzl, conf, byte_pairs):
    """Add one pair's pixel counts to ``conf`` (flat C*C, row = gt class).

    ``gt`` and ``pred`` are flat, of one length. Returns the flat index of the first
    pixel with an out-of-range label, after which ``conf`` is partial and must be
    discarded, or -1. ``byte_pairs`` is a zeroed int32 table of 65536 cells that two
    byte maps are counted in, handed back zeroed (the caller keeps one per thread:
    clearing a fresh one cost a tenth of counting a random 512x512 pair), or an empty
    array (one is made when needed).

    Each block of pixels is counted by runs or, where runs are short (at least one
    change in ``_DENSE`` pixels: noisy or random maps, where a run walk mispredicts a
    branch at nearly every pixel), by one table look-up and increment per pixel
    (``_count_dense``), or for two byte maps by one increment per pixel into the table
    of byte pairs (``_count_raw``, added to ``conf`` once per call by ``_fold_raw``).
    """
    n = gt.size
    nc = np.int64(num_classes)
    ch = _mark_buffer(_BLOCK)
    words = ch.view(np.uint64)
    # the per-pixel path's tables and counts, made on first use
    gmap = np.zeros(0, np.int64)
    pmap = np.zeros(0, np.int64)
    dense = np.zeros(0, np.int32)
    in_dense = 0
    bad_dense = False
    # two byte maps: counts by the raw byte pair (256 x 256), added to ``conf`` over
    # the byte values seen (one increment a pixel, no look-up)
    byte_pair = gt.itemsize == 1 and pred.itemsize == 1  # uint8: no signed byte type
    raw = byte_pairs
    gmax = np.uint64(0)
    pmax = np.uint64(0)
    for b0 in range(0, n, _BLOCK):
        m = min(_BLOCK, n - b0)
        g = gt[b0 : b0 + m]
        p = pred[b0 : b0 + m]
        # the first _SAMPLE pixels decide (a whole-block look would cost a sixth of
        # the per-pixel path's time)
        k = min(m, _SAMPLE)
        _changes(g[:k], p[:k], ch)
        if _DENSE * _n_marks(ch, k) >= k and ign >= -1:
            if in_dense + m >= _INT32_MAX:  # int32 cells: flush before they could wrap
                if byte_pair:
                    bad_dense |= _fold_raw(raw, gmax, pmax, nc, ign, rzl, conf)
                else:
                    bad_dense |= _flush_dense(dense, nc, conf)
                in_dense = 0
            if byte_pair:
                if raw.size == 0:
                    raw = np.zeros(65536, np.int32)
                gmax = max(gmax, _byte_max(g))
                pmax = max(pmax, _byte_max(p))
                _count_raw(g, p, raw)
            else:
                if dense.size == 0:
                    gmap, pmap = _dense_tables(nc, ign, rzl)
                    dense = np.zeros((nc + 2) * (nc + 1), np.int32)
                _count_dense(g, p, gmap, pmap, dense)
            in_dense += m
            continue
        if k < m:
            _changes(g, p, ch)
        ch[m + 1 : 8 * (m // 8 + 1)] = 0
        bad = _count_row(g, p, ch, words, m, nc, ign, rzl, conf)
        if bad >= 0:
            bad_dense = True
            break
    if in_dense:
        if byte_pair:
            bad_dense |= _fold_raw(raw, gmax, pmax, nc, ign, rzl, conf)
        else:
            bad_dense |= _flush_dense(dense, nc, conf)
    if bad_dense:  # the first bad pixel may lie in a block counted per pixel
        return first_bad_pixel(gt, pred, nc, ign, rzl)[0]
    return -1


_INT32_MAX = 2**31 - 1
_SAMPLE = 2048


@njit(cache=True, nogil=True, inline="always")
def _n_marks(ch, m):
    """Number of set marks among ch[0:m] (a vectorized byte sum)."""
    total = 0
    for c in range(_U0, np.uint64(m)):
        total += np.int64(ch[c])
    return total


@njit(cache=True, nogil=True)
def _dense_tables(nc, ign, rzl):
    """Look-up tables of ``_count_dense``, for (C + 2) x (C + 1) counts:
    ``gmap[min(g, L - 1)]`` is the first cell of ground-truth value g's row (row C:
    ignored, row C + 1: out of range), ``pmap[min(p, M - 1)]`` the column of prediction
    p (column C: out of range). Both have at least 256 entries, so that bytes index them
    as they are. Values are read as unsigned, so a negative one is clamped onto the
    out-of-range entries too; hence an ignore index of -1 is taken through the run
    walk instead."""
    top = max(nc + np.int64(rzl), ign + 1) + 1
    gmap = np.empty(max(top, 256), np.int64)
    for v in range(gmap.size):
        gl = _gt_label(v, ign, rzl)
        row = nc + 1
        if v >= top - 1:
            row = nc + 1
        elif gl == ign:
            row = nc
        elif 0 <= gl < nc:
            row = gl
        gmap[v] = row * (nc + 1)
    pmap = np.minimum(np.arange(max(nc + 1, 256)), nc)
    return gmap, pmap


@njit(cache=True, nogil=True, inline="always")
def _count_dense(g, p, gmap, pmap, dense):
    """One table look-up and increment per pixel: no branch depends on the labels."""
    if g.itemsize == 1 and p.itemsize == 1:
        # bytes index the tables as they are (both: a wider prediction beside uint8
        # ground truth read past pmap)
        for c in range(_U0, np.uint64(g.size)):
            dense[np.uint64(gmap[g[c]] + pmap[p[c]])] += 1
        return
    gtop = np.uint64(gmap.size - 1)
    ptop = np.uint64(pmap.size - 1)
    for c in range(_U0, np.uint64(g.size)):
        gi = min(np.uint64(np.int64(g[c])), gtop)
        pi = min(np.uint64(np.int64(p[c])), ptop)
        dense[np.uint64(gmap[gi] + pmap[pi])] += 1


@njit(cache=True, nogil=True, inline="always")
def _byte_max(x):
    """The largest byte of x (a vectorized max)."""
    m = np.uint8(0)
    for c in range(_U0, np.uint64(x.size)):
        m = max(m, x[c])
    return np.uint64(m)


@njit(cache=True, nogil=True, inline="always")
def _count_raw(g, p, raw):
    """``raw[256 g + p] += 1`` a pixel: two bytes make the cell, no table look-up."""
    s8 = np.uint64(8)
    for c in range(_U0, np.uint64(g.size)):
        raw[(np.uint64(g[c]) << s8) | np.uint64(p[c])] += 1


@njit(cache=True, nogil=True)
def _fold_raw(raw, gmax, pmax, nc, ign, rzl, conf):
    """Add the byte-pair counts ``raw`` (values up to gmax, pmax) to ``conf`` and zero
    them; returns whether any pixel was out of range: a prediction byte >= C anywhere
    (ignored pixels included), a ground-truth byte that is neither a class nor ignored
    (as ``_count_dense`` and ``first_bad_pixel`` judge them)."""
    bad = 0
    width = pmax + _U1
    cols = min(width, np.uint64(nc))
    for v in range(gmax + _U1):
        base = v << np.uint64(8)
        gl = _gt_label(v, ign, rzl)
        if gl != ign:
            if 0 <= gl < nc:
                row = np.uint64(gl * nc)
                for u in range(cols):  # zeros too: vectorized
                    conf[row + u] += raw[base + u]
            else:
                for u in range(cols):
                    bad += raw[base + u]
        for u in range(cols, width):
            bad += raw[base + u]
        for u in range(width):
            raw[base + u] = 0
    return bad > 0


@njit(cache=True, nogil=True)
def _flush_dense(dense, nc, conf):
    """Add the valid cells of the dense counts to ``conf`` and zero them; returns
    whether any pixel was out of range (column C, or row C + 1)."""
    w = nc + 1
    bad = 0
    for r in range(nc + 2):
        bad += dense[r * w + nc]
    for c in range(nc):
        bad += dense[(nc + 1) * w + c]
    for r in range(nc):
        for c in range(nc):
            conf[r * nc + c] += dense[r * w + c]
    dense[:] = 0
    return bad > 0


# --- boundary band -------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _marks_map(x, lc, thr, full):
    """full[c] = column c of map x unchanged since row ``thr`` and equal to its left
    neighbour in the current row ``x``."""
    full[0] = 0
    for c in range(_U1, np.uint64(x.size)):
        full[c] = (x[c] == x[c - _U1]) & (lc[c] <= thr)


@njit(cache=True, nogil=True, inline="always")
def _changes(g, p, ch):
    """ch[c] = either map changes at column c (ch[0] set)."""
    ch[0] = 1
    for c in range(_U1, np.uint64(g.size)):
        ch[c] = (g[c] != g[c - _U1]) | (p[c] != p[c - _U1])


@njit(cache=True, nogil=True, inline="always")
def _interval(a, j, lc, thr, d, iv, n):
    """Store the interior of a run a..j-1 of set ``full`` as interval n; returns the
    new count. Pixel c is interior when full[c-d+1 .. c+d] are all set and column c-d
    is complete too (lc[c-d] <= thr)."""
    s = a + d - np.int64(lc[a - 1] <= thr)
    t = j - d
    iv[2 * n] = s  # written even when empty (not counted): no branch to mispredict
    iv[2 * n + 1] = t
    return n + np.int64(s < t)


@intrinsic
def _popcount(typingctx, src):
    """Set bits of an integer (LLVM ctpop: one instruction)."""

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return src(src), codegen


@intrinsic
def _prefetch(typingctx, arr, index):
    """Hint the CPU to bring arr[index] into cache (LLVM's prefetch: read, keep). A hint
    only: no effect on any result, a no-op where the target has no such instruction."""

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(
            context, builder, aryty, ary, [args[1]], wraparound=False
        )
        vp = context.get_value_type(types.voidptr)
        i32 = ir.IntType(32)
        name = "llvm.prefetch.p0" if str(vp) == "ptr" else "llvm.prefetch.p0i8"
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [vp, i32, i32, i32]), name
        )
        builder.call(fn, [builder.bitcast(ptr, vp), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(arr, index), codegen


@njit(cache=True, nogil=True, inline="always")
def _prefetch_row(x):
    """Prefetch every 64-byte line of the 1-D array x."""
    step = max(1, 64 // x.itemsize)
    for c in range(0, x.size, step):
        _prefetch(x, c)
    _prefetch(x, x.size - 1)


@njit(cache=True, nogil=True, inline="always")
def _bit_word(words, q, nwd):
    """Bytes 8q .. 8q+63 of a 0/1 mark buffer (its 8-byte ``words``, ``nwd`` of them)
    as one bit word: bit j is byte 8q + j."""
    b = _U0
    for j in range(8):
        if q + j < nwd:
            b |= ((words[q + j] * _PACK) >> _S56) << np.uint64(8 * j)
    return b


@njit(cache=True, nogil=True, inline="always")
def _list_bits(b, base, pos, n):
    """Append base + (index of each set bit of ``b``) to pos[n:]; returns the new n.

    Eight slots are written whatever the count (pos needs 8 spare entries): the run
    walks this replaces mispredicted a branch at nearly every run end.
    """
    cnt = np.int64(_popcount(b))
    for u in range(8):
        pos[n + u] = base + trailing_zeros(b)
        b &= b - _U1
    u = n + 8
    while b:  # more than eight in 64 marks: rare in label maps
        pos[u] = base + trailing_zeros(b)
        b &= b - _U1
        u += 1
    return n + cnt


@njit(cache=True, nogil=True, inline="always")
def _set_runs(buf, runs):
    """Runs of set (0/1) bytes of the mark buffer ``buf``: run i is bytes runs[2i] ..
    runs[2i+1]-1. Returns their number. ``buf`` starts and ends with a zero byte, so
    its runs open and close inside it; ``runs`` needs 8 spare entries."""
    words = buf.view(np.uint64)
    nwd = words.size
    n = 0
    carry = _U0
    for q in range(0, nwd, 8):
        b = _bit_word(words, q, nwd)
        n = _list_bits(
            b ^ ((b << _U1) | carry), 8 * q, runs, n
        )  # where a run opens or closes
        carry = b >> np.uint64(63)
    return n // 2


@njit(cache=True, nogil=True, inline="always")
def _byte_runs(buf, runs):
    """``_set_runs`` by a walk over the changes, eight bytes at a time: faster where
    runs are short and many (``full`` of small maps: ~30% faster than ``_set_runs`` on
    240x320 maps at d = 4), slower where they are few (it mispredicts a branch at
    every run end)."""
    words = buf.view(np.uint64)
    cur = 0
    n = 0
    for k in range(words.size):
        wv = words[k]
        x = wv ^ (_ONES if cur else _U0)  # bytes that differ from the current state
        while x:
            j = 8 * k + (trailing_zeros(x) >> 3)
            runs[2 * n + cur] = j
            n += cur  # a run closed
            cur ^= 1
            shift = np.uint64(8 * (j - 8 * k) + 8)  # look above j, against the new state
            if shift == 64:
                break
            x = (wv ^ (_ONES if cur else _U0)) >> shift << shift
    return n


@njit(cache=True, nogil=True, inline="always")
def _interior(full, lc, thr, d, iv):
    """Interior intervals [iv[2i], iv[2i+1]) of a row; returns their number.

    ``full`` is zero at column 0 and past the row, so every run of it opens after column
    0 and closes in the buffer. The runs are listed in ``iv`` itself: interval i is
    written after run i was read.
    """
    n = 0
    for r in range(_byte_runs(full, iv)):
        n = _interval(iv[2 * r], iv[2 * r + 1], lc, thr, d, iv, n)
    return n


@njit(cache=True, nogil=True, inline="always")
def _interior_wide(full, lc, thr, d, iv, wflag):
    """``_interior`` for d >= 8, visiting runs of all-set words, not changes of ``full``.

    An interval needs a run of at least 2d >= 16 set bytes in ``full``, and such a run
    covers at least one whole aligned word: so only runs of all-set words are followed,
    extended into the partial words on either side. Near slanted boundaries ``full``
    flickers every few columns; those short runs cost nothing. The all-set words are
    flagged in one vectorized pass into ``wflag`` (a zero-padded mark buffer of
    ``full.size // 8`` bytes), whose runs are listed in ``iv`` as in ``_interior``.
    """
    words = full.view(np.uint64)
    for k in range(_U0, np.uint64(words.size)):
        wflag[k] = words[k] == _ONES  # the last word holds full's padding: never set
    n = 0
    for r in range(_set_runs(wflag, iv)):
        k1 = iv[2 * r]  # words k1 .. k-1 all set; full[0] = 0, so k1 >= 1
        k = iv[2 * r + 1]
        zeros = ~words[k1 - 1] & _ONES
        a = 8 * k1 - 7 + ((63 - leading_zeros(zeros)) >> 3)
        j = 8 * k + (trailing_zeros(~words[k] & _ONES) >> 3)
        n = _interval(a, j, lc, thr, d, iv, n)
    return n


@njit(cache=True, nogil=True, inline="always")
def _find_interior(x, lc, thr, d, full, iv, wflag):
    """Interior intervals of the current row ``x`` of one map; returns their number."""
    _marks_map(x, lc, thr, full)
    if d >= 8:
        return _interior_wide(full, lc, thr, d, iv, wflag)
    return _interior(full, lc, thr, d, iv)


@njit(cache=True, nogil=True, inline="always")
def _advance_map(x, xprev, lc, r):
    """Move one map's change rows to row r; returns whether row r equals row r-1 (then
    ``lc`` needs no update, which is most rows of most label maps)."""
    diff = (
        False  # a bool reduction vectorizes at byte width; ``x ^ y`` would widen to int64
    )
    for c in range(_U0, np.uint64(x.size)):
        diff |= x[c] != xprev[c]
    if not diff:
        return True
    for c in range(_U0, np.uint64(x.size)):
        if x[c] != xprev[c]:
            lc[c] = r
    return False


@njit(cache=True, nogil=True)
def band_map(labels, d):
    """uint8 map: 1 where a pixel is in its own label's band of radius ``d``.

    The band of ``count_pairs_band`` for one map: same change rows, same interior
    routines, no repeated-row shortcut.
    """
    h, w = labels.shape
    out = np.ones((h, w), np.uint8)
    lc = np.zeros(w, np.int32)
    full = _mark_buffer(w)
    wflag = _mark_buffer(full.size // 8)
    iv = _position_buffer(w)
    for r in range(1, h):
        _advance_map(labels[r], labels[r - 1], lc, np.int32(r))
        o = r - d
        if o >= d:  # rows nearer the top than d have no interior
            n = _find_interior(labels[o], lc, np.int32(o - d), d, full, iv, wflag)
            for i in range(n):
                out[o, iv[2 * i] : iv[2 * i + 1]] = 0
    return out


@njit(cache=True, nogil=True)
def count_pairs_band(
    gt, pred, num_classes, ign, rzl, d, row0, row1, conf, gt_band, pred_band, band_inter
):
    """Confusion and band counts of output rows ``row0 .. row1-1`` of one (H, W) pair.

    Ignored ground-truth pixels shape both bands (they are "another label" to their
    neighbours) but are counted nowhere. ``gt_band[c]`` / ``pred_band[c]`` count valid
    pixels in class c's band of each map, ``band_inter[c]`` those in both bands with
    both labels c. Up to d rows either side of the range are read, not counted, so
    disjoint row ranges may run on separate threads and be summed. Returns the flat index
    of the first out-of-range label met (the counts are then partial), or -1.

    The band is the complement of the interior, and the interior of a row is a few
    intervals, each inside one label run of its map. So every valid pixel is first
    counted as if in both bands (with the confusion counts, per label run), and each
    interval then takes back what it holds: its length from the ground-truth band (or,
    for the prediction's, its valid pixels), and the pixels where both labels are its
    label from the intersection, read off running counts of the row's label runs; where
    a ground-truth and a prediction interval of one label overlap, the overlap was
    taken back twice and is given back once.

    Repeated rows: the confusion counts of row o are those of row o-1 when both maps
    repeat their previous row. The band of row o is a function of the set of distinct
    rows in its window (o-d .. o+d): it is unchanged when the rows entering (o+d) and
    leaving (o-d-1) the window repeat their neighbour inside it, or when both windows
    reach past an image edge (no interior at all). Neither is recomputed then: the
    last computed row is counted once with a multiplicity. Where only one map's band
    is unchanged, that map's intervals are kept.
    """
    h, w = gt.shape
    # last change row of each column; a column "changed" at the first row read, as
    # windows may not reach above it. int16 where rows fit: the per-row compares then
    # run twice as wide.
    r_start = max(0, row0 - d)
    if h < 32767:
        lc16 = np.full(w, r_start, np.int16)
        return _count_band_rows(
            gt,
            pred,
            num_classes,
            ign,
            rzl,
            d,
            row0,
            row1,
            conf,
            gt_band,
            pred_band,
            band_inter,
            lc16,
            lc16.copy(),
        )
    lc32 = np.full(w, r_start, np.int32)
    return _count_band_rows(
        gt,
        pred,
        num_classes,
        ign,
        rzl,
        d,
        row0,
        row1,
        conf,
        gt_band,
        pred_band,
        band_inter,
        lc32,
        lc32.copy(),
    )


@njit(cache=True, nogil=True)
def _count_band_rows(
    gt,
    pred,
    num_classes,
    ign,
    rzl,
    d,
    row0,
    row1,
    conf,
    gt_band,
    pred_band,
    band_inter,
    lcg,
    lcp,
):
    """Body of ``count_pairs_band``; ``lcg`` / ``lcp`` hold the change rows."""
    h, w = gt.shape
    nc = np.int64(num_classes)
    full = _mark_buffer(w)
    ch = _mark_buffer(w)
    wflag = _mark_buffer(full.size // 8)
    runs = _runs_state(w)  # label runs of the latest distinct row
    n_runs = -1
    # interior intervals of the pending band row, and what each takes back
    ivg = _position_buffer(w)
    ivp = _position_buffer(w)
    lab_g = np.zeros(w // 2 + 1, np.int64)  # class of each gt interval
    both_g = np.zeros(w // 2 + 1, np.int64)  # its pixels with pred == class
    ov_g = np.zeros(w // 2 + 1, np.int64)  # of those, the ones in a pred interval too
    lab_p = np.zeros(w // 2 + 1, np.int64)  # class of each pred interval
    valid_p = np.zeros(w // 2 + 1, np.int64)  # its pixels with a valid gt
    both_p = np.zeros(w // 2 + 1, np.int64)  # its pixels with gt == class
    ng = 0
    np_ = 0
    eqg = np.zeros(h + 1, np.bool_)  # eqX[r]: row r equals row r-1 (read rows only)
    eqp = np.zeros(h + 1, np.bool_)
    r_start = max(0, row0 - d)
    thr_box = lcg[:1].copy()
    r_next = r_start
    c_mult = 0  # rows the pending runs stand for
    b_row = -1  # row whose band take-backs are pending, and the rows it stands for
    b_mult = 0
    for o in range(row0, row1):
        r_end = min(h - 1, o + d)
        while r_next <= r_end:
            # the band work between row reads left the hardware prefetcher behind:
            # asking for rows ahead measured 9% faster on ADE-size maps
            if r_next + _AHEAD < h:
                _prefetch_row(gt[r_next + _AHEAD])
                _prefetch_row(pred[r_next + _AHEAD])
            if r_next > r_start:
                eqg[r_next] = _advance_map(
                    gt[r_next], gt[r_next - 1], lcg, np.int32(r_next)
                )
                eqp[r_next] = _advance_map(
                    pred[r_next], pred[r_next - 1], lcp, np.int32(r_next)
                )
            r_next += 1
        rows_same = eqg[o] and eqp[o]
        if n_runs >= 0 and rows_same:
            c_mult += 1
        else:
            if n_runs >= 0:
                _add_runs(
                    runs, n_runs, nc, ign, c_mult, conf, gt_band, pred_band, band_inter
                )
            n_runs = _row_runs(gt[o], pred[o], ch, w, nc, ign, rzl, runs)
            if n_runs < 0:
                return o * w - 1 - n_runs
            c_mult = 1
        edge = o - d < 0 or o + d >= h
        # is the band of each map that of row o-1 (held in ivX)?
        same_g = False
        same_p = False
        if b_row >= 0:
            if edge:
                same_g = same_p = o - 1 - d < 0 or o - 1 + d >= h
            elif o - 1 - d >= 0:
                same_g = eqg[o + d] and eqg[o - d]
                same_p = eqp[o + d] and eqp[o - d]
            if same_g and same_p and rows_same:
                b_mult += 1
                continue
            _take_back(
                ivg,
                lab_g,
                both_g,
                ov_g,
                ng,
                ivp,
                lab_p,
                valid_p,
                both_p,
                np_,
                ign,
                b_mult,
                gt_band,
                pred_band,
                band_inter,
            )
        g = gt[o]
        p = pred[o]
        thr_box[0] = o - d
        thr = thr_box[0]  # of the change rows' dtype, so the compares stay narrow
        if edge:
            ng = 0
            np_ = 0
        else:
            if not same_g:
                ng = _find_interior(g, lcg, thr, d, full, ivg, wflag)
            if not same_p:
                np_ = _find_interior(p, lcp, thr, d, full, ivp, wflag)
        # what each interval takes back; kept where neither its map's band nor the
        # other map's row changed
        if ng and not (same_g and eqp[o]):
            for i in range(ng):
                s, t = ivg[2 * i], ivg[2 * i + 1]
                lab_g[i] = _gt_label(g[s], ign, rzl)
                # the interval lies in one gt run: its agreeing pixels are those with
                # pred == its class (none if that class is the ignore index)
                both_g[i] = _between(runs, ign, s, t)[0]
        if np_ and not (same_p and eqg[o]):
            for i in range(np_):
                s, t = ivp[2 * i], ivp[2 * i + 1]
                lab_p[i] = np.int64(p[s])
                agree, ignored = _between(runs, ign, s, t)
                valid_p[i] = t - s - ignored
                both_p[i] = agree
        # pixels in a gt and a pred interval of one class were taken back twice (kept
        # while neither map's intervals changed)
        if not (same_g and same_p):
            ov_g[:ng] = 0
            i = 0
            k = 0
            while i < ng and k < np_:  # a branch-free merge of the two sorted lists
                ge = ivg[2 * i + 1]
                pe = ivp[2 * k + 1]
                ov = min(ge, pe) - max(ivg[2 * i], ivp[2 * k])
                hit = (ov > 0) & (lab_g[i] == lab_p[k]) & (lab_g[i] != ign)
                ov_g[i] += ov * hit
                g_first = ge < pe
                i += g_first
                k += 1 - g_first
        b_row = o
        b_mult = 1
    if n_runs >= 0:
        _add_runs(runs, n_runs, nc, ign, c_mult, conf, gt_band, pred_band, band_inter)
    if b_row >= 0:
        _take_back(
            ivg,
            lab_g,
            both_g,
            ov_g,
            ng,
            ivp,
            lab_p,
            valid_p,
            both_p,
            np_,
            ign,
            b_mult,
            gt_band,
            pred_band,
            band_inter,
        )
    return -1


@njit(cache=True, nogil=True, inline="always")
def _take_back(
    ivg,
    lab_g,
    both_g,
    ov_g,
    ng,
    ivp,
    lab_p,
    valid_p,
    both_p,
    np_,
    ign,
    mult,
    gt_band,
    pred_band,
    band_inter,
):
    """Remove the interior pixels of one row (standing for ``mult`` rows) from the band
    counts, which counted every valid pixel."""
    for i in range(ng):
        lab = lab_g[i]
        if lab != ign:
            gt_band[lab] -= (ivg[2 * i + 1] - ivg[2 * i]) * mult
            band_inter[lab] -= (both_g[i] - ov_g[i]) * mult
    for i in range(np_):
        lab = lab_p[i]
        pred_band[lab] -= valid_p[i] * mult
        band_inter[lab] -= both_p[i] * mult


@njit(cache=True, nogil=True, inline="always")
def _count_row(g, p, ch, words, w, nc, ign, rzl, conf):
    """Add the runs of one stretch marked in ``ch`` (ch[0] set; ch[w] is set here) to
    ``conf``. Returns the column of the first out-of-range label, or -1.

    Plain counting keeps this walk: most of its 8-byte words hold no change and are
    skipped by one well-predicted branch. Listing the runs first (as ``_row_runs`` does,
    branch-free) measured 45% slower here."""
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
                conf[np.uint64(gl * nc + pl)] += j - start
            start = j
    return -1


@njit(cache=True, nogil=True, inline="always")
def _runs_state(w):
    """Buffers of ``_row_runs``: (starts, gt classes, predicted classes, change bit
    words, marks before each bit word, agreeing pixels before each run, ignored pixels
    before each run)."""
    nbw = w // 64 + 2
    return (
        _position_buffer(w),
        np.zeros(w + 1, np.int64),
        np.zeros(w + 1, np.int64),
        np.zeros(nbw, np.uint64),
        np.zeros(nbw, np.int64),
        np.zeros(w + 1, np.int64),
        np.zeros(w + 1, np.int64),
    )


@njit(cache=True, nogil=True, inline="always")
def _row_runs(g, p, ch, w, nc, ign, rzl, runs):
    """The label runs of one row pair, into ``runs`` (see ``_runs_state``): run i covers
    columns rs[i] .. rs[i+1]-1, with ground-truth class rg[i] (after reduce_zero_label;
    the ignore index as is) and predicted class rp[i]. Returns their number, or -1 - the
    column of the first out-of-range label.

    The run starts are listed branch-free from the change marks packed into bit words,
    which are kept (with running counts) so that ``_run_at`` finds the run of any column
    in constant time; ``apre`` / ``ipre`` count the agreeing (gt valid and equal to the
    prediction) and the ignored pixels before each run.
    """
    rs, rg, rp, bits, before, apre, ipre = runs
    _changes(g, p, ch)
    ch[w] = 1
    words = ch.view(np.uint64)
    nwd = words.size
    m = 0
    for q in range(0, nwd, 8):
        b = _bit_word(words, q, nwd)
        bits[q >> 3] = b
        before[q >> 3] = m
        m = _list_bits(b, 8 * q, rs, m)  # rs[0] = 0, ..., rs[m-1] = w
    unc = np.uint64(nc)
    agree = 0
    ignored = 0
    for i in range(m - 1):
        start = rs[i]
        pl = np.int64(p[start])
        gl = _gt_label(g[start], ign, rzl)
        if np.uint64(pl) >= unc or (gl != ign and np.uint64(gl) >= unc):
            return -1 - start
        rg[i] = gl
        rp[i] = pl
        apre[i] = agree
        ipre[i] = ignored
        length = rs[i + 1] - start
        agree += length * np.int64((gl == pl) & (gl != ign))
        ignored += length * np.int64(gl == ign)
    return m - 1


@njit(cache=True, nogil=True, inline="always")
def _run_at(runs, x):
    """Index of the run that holds column x (0 <= x < w) of the last ``_row_runs``."""
    bits, before = runs[3], runs[4]
    q = x >> 6
    upto = (_U1 << np.uint64(x & 63) << _U1) - _U1  # bits 0 .. x & 63
    return before[q] + np.int64(_popcount(bits[q] & upto)) - 1


@njit(cache=True, nogil=True, inline="always")
def _before(runs, ign, x):
    """(agreeing, ignored) pixels of columns < x: agreeing = gt valid and equal to the
    prediction, ignored = gt ignored."""
    rs, rg, rp, apre, ipre = runs[0], runs[1], runs[2], runs[5], runs[6]
    k = _run_at(runs, x)
    into = x - rs[k]
    gk = rg[k]
    return (
        apre[k] + into * np.int64((gk == rp[k]) & (gk != ign)),
        ipre[k] + into * np.int64(gk == ign),
    )


@njit(cache=True, nogil=True, inline="always")
def _between(runs, ign, s, t):
    """(agreeing, ignored) pixels of columns s .. t-1 (see ``_before``)."""
    a_t, i_t = _before(runs, ign, t)
    a_s, i_s = _before(runs, ign, s)
    return a_t - a_s, i_t - i_s


@njit(cache=True, nogil=True, inline="always")
def _add_runs(runs, n, nc, ign, mult, conf, gt_total, pred_total, diag_total):
    """Count every valid pixel of a row's runs (standing for ``mult`` rows) in the
    confusion matrix, in the class totals of each map and, where both agree, in
    ``diag_total``."""
    rs, rg, rp = runs[0], runs[1], runs[2]
    for i in range(n):
        gl = rg[i]
        if gl != ign:
            m = (rs[i + 1] - rs[i]) * mult
            pl = rp[i]
            conf[np.uint64(gl * nc + pl)] += m
            gt_total[gl] += m
            pred_total[pl] += m
            diag_total[gl] += m * np.int64(gl == pl)


# --- per-image areas of sparse records ------------------------------------------------------


@njit(cache=True, nogil=True)
def record_areas(nz, w, c, k, tp, gt_area, pred_area, conf):
    """Add one image's class areas to row k of ``tp`` / ``gt_area`` / ``pred_area``
    ((images, c) int64): its confusion cells are the flat indices ``nz`` (row = ground
    truth) holding counts ``w``. Its cells are added to ``conf`` (flat c*c) too unless
    that is empty: a split's total in the same pass over the records (a map without
    runs has a record of c*c cells, and reading them again cost as much).

    Compiled, one image at a time: a map without runs fills nearly all c*c cells, and
    numpy's gathers over every image's cells at once took seconds for a few hundred
    images. The cells of a record are increasing, so the row is followed, not divided
    for."""
    row0 = 0  # first cell of row g
    g = 0
    for i in range(nz.size):
        cell = nz[i]
        if cell < row0 or cell >= row0 + c:
            g = cell // c
            row0 = g * c
        p = cell - row0
        v = w[i]
        if conf.size:
            conf[cell] += v
        gt_area[k, g] += v
        pred_area[k, p] += v
        if g == p:
            tp[k, g] += v


def take_cells(conf):
    """(flat indices, counts) of the cells of ``conf`` that are not zero, in increasing
    order, and those cells set back to zero. Both int32 where they fit (every cell
    index of fewer than 46341 classes, every count of fewer than 2**31 pixels): a map
    without runs fills nearly all c*c cells, and its record is half the memory."""
    n, top = _cells_in_use(conf)
    nz = np.empty(n, np.int32 if conf.size <= _INT32_MAX else np.int64)
    vals = np.empty(n, np.int32 if top <= _INT32_MAX else np.int64)
    _take_cells(conf, nz, vals)
    return nz, vals


@njit(cache=True, nogil=True)
def _cells_in_use(conf):
    """(number of cells that are not zero, largest cell)."""
    n = 0
    top = 0
    for i in range(conf.size):
        n += conf[i] != 0
        top = max(top, conf[i])
    return n, top


@njit(cache=True, nogil=True)
def _take_cells(conf, nz, vals):
    """Copy the cells of ``conf`` that are not zero (index, count) into ``nz``, ``vals``
    (of that length) and set them back to zero: one pass where numpy takes three."""
    k = 0
    for i in range(conf.size):
        v = conf[i]
        if v != 0:
            nz[k] = i
            vals[k] = v
            conf[i] = 0
            k += 1
