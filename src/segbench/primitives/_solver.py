"""Compiled kernels of the exact pixel matcher (see :mod:`._correspond`).

An incremental Hungarian method over a sequence of frames: per-frame slots for the
present pixels, presence bitmaps for neighbourhood scans, shortest augmenting paths for
waiting rows (:func:`_augment`), backward repairs for columns that arrive or are
released (:func:`_repair_column`), runs of frames handed over with rows and columns
swapped (:func:`_walk_frames`), and the frame side's matched state reported as change
events. The hot kernels allocate nothing and run without reference counting
(``_nrt=False``); :func:`_solver_state` allocates what they use, once per matcher, and
:func:`_fit_lists` enlarges the candidate lists when a call needs more.

Candidate lists are compact: a pixel's list has room for exactly the pixels of the
other map (over every frame of the call) within the tolerance, counted beforehand
(:func:`_layout`), so the lists of a thin curve take a few r entries per pixel, not a
disc of pi r^2. Their entries, and the order in which entries are added and removed,
are those of a list per pixel as wide as the disc: the solver's choices between equally
cheap matchings do not depend on where the lists are kept.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from typing import Any, TypeVar

import numba as nb
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.core.dispatcher import Dispatcher
from numba.extending import intrinsic

from ..compilation import prepare_kernels

prepare_kernels()

#: Compile options. Kernels called only from other kernels get no Python wrapper: a
#: wrapper boxes and unboxes every array of the nested state tuples, and it and the C
#: wrapper (never used) were a third of the first run's compile time. The kernels
#: called from Python (:mod:`._correspond`, tests) keep theirs.
_INTERNAL = {"cache": True, "no_cpython_wrapper": True, "no_cfunc_wrapper": True}
_PUBLIC = {"cache": True, "no_cfunc_wrapper": True}

_F = TypeVar("_F", bound=Callable[..., object])


def _kernel(**options: Any) -> Callable[[_F], Dispatcher[_F]]:
    """``nb.njit(**options)``. Numba takes every compiler flag as a keyword, but its
    stubs list only the documented ones, not ``no_cpython_wrapper``,
    ``no_cfunc_wrapper`` or ``_nrt``; options typed as Any pass them through."""
    return nb.njit(**options)


_INF = np.iinfo(np.int64).max // 8
_U1 = np.uint64(1)

#: The solver's arrays indexed by slot (:func:`_solver_state`). Rows (slots 0..R-1):
#: potential ``u``, column slot ``r_col`` (-2: waiting for augmentation), the column a
#: repair would move it to (``via``), pixel, and its candidate list: where it starts in
#: :class:`Lists` (``nb_at``) and its length. Columns and outliers (slots 0..C-1 are
#: pixels, C + s is row slot s's outlier): potential ``v``, row slot ``c_row`` (-1:
#: free), pixel (columns only), the search labels ``lab`` (repairs) and ``shortest``
#: (augmentations), the search's predecessor ``path``, and the column's list of nearby
#: rows (start ``cn_at``, length ``cn_len``; kept only when the rows are fixed).
Slots = namedtuple(
    "Slots",
    [
        "u",
        "r_col",
        "via",
        "r_pix",
        "nb_at",
        "nb_len",
        "v",
        "c_row",
        "c_pix",
        "lab",
        "shortest",
        "path",
        "cn_at",
        "cn_len",
    ],
)
#: The candidate lists, compact (see :func:`_layout`): row slot s's present columns and
#: their costs are ``nb_col[nb_at[s]:nb_at[s] + nb_len[s]]`` and ``nb_cost[...]`` (int32:
#: half the bytes per expansion), a column's rows likewise in ``cn_row``/``cn_cost``; and
#: the searches' heap, as large as the lists can be (one entry per edge relaxed, plus
#: the outliers).
Lists = namedtuple("Lists", ["nb_col", "nb_cost", "cn_row", "cn_cost", "heap"])
#: The searches' priority queue (:func:`_heap_push`, :func:`_heap_pop`): a radix heap
#: of int64 entries in ``val`` (one per push in a search), each bucket a list linked
#: through ``nxt`` from ``head[b]``; ``meta`` holds the last entry popped, the mask of
#: non-empty buckets and the entries pushed in this search.
RadixHeap = namedtuple("RadixHeap", ["val", "nxt", "head", "meta"])
#: Work buffers of :func:`_frame_step` (:func:`_solver_state` gives their sizes).
Scratch = namedtuple(
    "Scratch",
    [
        "free_rows",
        "gone",
        "came",
        "rows_came",
        "touched",
        "rows_seen",
        "seen",
        "released",
        "row_spare",
        "col_spare",
        "reported",
        "is_dirty",
        "dirty",
        "nbr_slot",
        "nbr_cost",
    ],
)
#: Where one side's pixels are, without an image-sized array of slots: ``bits``, the
#: presence bitmap (bit ``x % 64`` of word ``x // 64`` of image row ``y``); ``kbits``,
#: the same bitmap of the side's keys (the pixels that can take a slot in the call);
#: ``rank[y, w]``, how many keys come before word ``w`` of row ``y``; ``slot``, each
#: key's slot (-1: absent). Key ``k`` of pixel ``p`` is its position among the sorted
#: keys (:func:`_key_of`): one popcount away from its bitmap word.
Side = namedtuple("Side", ["bits", "kbits", "rank", "slot"])


@intrinsic
def _clz(typingctx, src):
    """Leading zero bits of a 64-bit word, 64 for zero (LLVM ctlz: one instruction)."""

    def codegen(context, builder, signature, args):
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.int64(src), codegen


@_kernel(**_INTERNAL)
def _rh_link(heap, node, x, last):
    """Put ``node`` (value ``x``) in the bucket of the bits it differs from ``last`` in."""
    b = 64 - _clz(np.uint64(x ^ last))
    bit = np.int64(1) << b
    meta = heap.meta
    heap.nxt[node] = heap.head[b] if meta[1] & bit else -1
    heap.head[b] = node
    meta[1] |= bit


@_kernel(**_INTERNAL)
def _heap_reset(heap):
    """Empty the heap for a new search (the smallest value popped so far: 0)."""
    meta = heap.meta
    meta[0] = 0
    meta[1] = 0
    meta[2] = 0


@_kernel(**_INTERNAL)
def _heap_push(heap, size, key, val, shift):
    """Push ``(key, val)`` as the int64 entry ``key << shift | val`` (``key >= 0``,
    ``0 <= val < 2**shift``: one comparison orders by key, then val) on a radix heap:
    a monotone priority queue, so the entry must not be smaller than the last one
    popped (Dijkstra's labels only grow). Returns the new size."""
    meta = heap.meta
    node = meta[2]
    meta[2] = node + 1
    x = (key << shift) | val
    heap.val[node] = x
    _rh_link(heap, node, x, meta[0])
    return size + 1


@_kernel(**_INTERNAL)
def _heap_min(heap):
    """The smallest entry (the heap must not be empty), moved to bucket 0.

    A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan) keeps entry ``x`` in bucket
    ``b`` = the bit length of ``x ^ last``, ``last`` being the smallest entry taken
    out so far; every entry of bucket ``b`` is smaller than every entry of a higher
    bucket. When bucket 0 is empty, the lowest non-empty bucket is scanned for its
    smallest entry, which becomes ``last``, and its entries move to lower buckets: each
    entry moves down a few times in all, instead of a binary heap's sift through
    log2(n) levels on every pop. Entries are distinct, so they come out in the order of
    their values, as from any priority queue.
    """
    meta = heap.meta
    if meta[1] & 1:
        return heap.val[heap.head[0]]
    i = _ctz(np.uint64(meta[1]))
    node = heap.head[i]
    m = heap.val[node]
    t = heap.nxt[node]
    while t >= 0:
        if heap.val[t] < m:
            m = heap.val[t]
        t = heap.nxt[t]
    meta[0] = m
    meta[1] &= ~(np.int64(1) << i)
    while node >= 0:
        t = heap.nxt[node]
        _rh_link(heap, node, heap.val[node], m)
        node = t
    return m


@_kernel(**_INTERNAL)
def _heap_pop(heap, size, shift):
    """Pop the smallest entry of :func:`_heap_push`'s heap: (key, val, new size)."""
    top = _heap_min(heap)
    heap.meta[1] &= ~np.int64(1)  # bucket 0 held only it (entries are distinct)
    return top >> shift, top & ((1 << shift) - 1), size - 1


@intrinsic
def _ctz(typingctx, src):
    """Trailing zero bits of a non-zero 64-bit word (LLVM cttz: one instruction)."""

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

    return types.int64(src), codegen


@intrinsic
def _popcount(typingctx, src):
    """Set bits of a 64-bit word (LLVM ctpop: one instruction)."""

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.int64(src), codegen


@_kernel(**_INTERNAL)
def _set_bit(bits, p, width, on):
    """Mark pixel ``p`` present (``on``) or absent in a presence bitmap: bit ``x % 64`` of
    word ``x // 64`` of image row ``y``."""
    y = p // width
    x = p - y * width
    b = _U1 << np.uint64(x & 63)
    if on:
        bits[y, x >> 6] |= b
    else:
        bits[y, x >> 6] &= ~b


@_kernel(**_INTERNAL)
def _key_of(p, side, width):
    """Position of key pixel ``p`` among its side's sorted keys (see :class:`Side`)."""
    y = p // width
    x = p - y * width
    w = x >> 6
    below = side.kbits[y, w] & ((_U1 << np.uint64(x & 63)) - _U1)
    return side.rank[y, w] + _popcount(below)


@_kernel(**_INTERNAL)
def _near(p, side, width, height, half, cost_tab, out_slot, out_cost):
    """The present pixels of a side within the tolerance of pixel ``p``, as slots.

    Row ``dy`` of the disc spans ``|dx| <= half[dy + reach]``; its pixels are read from
    the presence bitmap 64 at a time and only the set bits are visited, so a sparse
    map costs a few word operations per row instead of a test per offset; each pixel
    found is a key, whose slot is read through its rank (:class:`Side`). Writes the
    slots (in the pixels' raster order) and the costs (``cost_tab[dy + reach, dx +
    reach]``) to ``out_slot``/``out_cost``; returns their number.
    """
    bits, kbits, rank, slot = side
    reach = half.shape[0] // 2
    y = p // width
    x = p - y * width
    n = 0
    for dy in range(-reach, reach + 1):
        yy = y + dy
        hw = half[dy + reach]
        if yy < 0 or yy >= height or hw < 0:
            continue
        lo = max(x - hw, 0)
        hi = min(x + hw, width - 1)
        while lo <= hi:
            top = min(hi, lo + 63)
            sh = np.uint64(lo & 63)
            m = bits[yy, lo >> 6] >> sh
            if sh != 0:
                m |= bits[yy, (lo >> 6) + 1] << (np.uint64(64) - sh)
            if top - lo < 63:
                m &= (_U1 << np.uint64(top - lo + 1)) - _U1
            while m != 0:
                xx = lo + _ctz(m)
                m &= m - _U1
                w = xx >> 6
                below = kbits[yy, w] & ((_U1 << np.uint64(xx & 63)) - _U1)
                k = rank[yy, w] + _popcount(below)
                out_slot[n] = slot[k]
                out_cost[n] = cost_tab[dy + reach, xx - x + reach]
                n += 1
            lo = top + 1
    return n


@_kernel(**_INTERNAL)
def _count_near(p, bits, width, height, half):
    """How many present pixels of a bitmap lie within the tolerance of pixel ``p``: the
    count :func:`_near` would list, from the same 64-bit windows, by popcount."""
    reach = half.shape[0] // 2
    y = p // width
    x = p - y * width
    n = 0
    for dy in range(-reach, reach + 1):
        yy = y + dy
        hw = half[dy + reach]
        if yy < 0 or yy >= height or hw < 0:
            continue
        lo = max(x - hw, 0)
        hi = min(x + hw, width - 1)
        while lo <= hi:
            top = min(hi, lo + 63)
            sh = np.uint64(lo & 63)
            m = bits[yy, lo >> 6] >> sh
            if sh != 0:
                m |= bits[yy, (lo >> 6) + 1] << (np.uint64(64) - sh)
            if top - lo < 63:
                m &= (_U1 << np.uint64(top - lo + 1)) - _U1
            n += _popcount(m)
            lo = top + 1
    return n


@_kernel(**_PUBLIC, nogil=True)  # called by each matching thread
def _layout(keys, others, height, width, half, bits):
    """Where each pixel's candidate list starts: ``off[i]:off[i + 1]`` is room for
    every pixel of ``others`` within the tolerance of ``keys[i]``.

    ``keys`` and ``others`` are sorted linear pixel indices; ``off`` (int64, one entry
    more than ``keys``) is the running sum of those counts, so the lists of all keys
    together take as many entries as there are candidate pairs. A key's list can never
    hold more: its entries are present pixels of ``others`` within the tolerance.
    ``bits`` is an empty presence bitmap of the image (a workspace's), left empty.
    """
    for t in range(others.shape[0]):
        _set_bit(bits, others[t], width, True)
    off = np.zeros(keys.shape[0] + 1, np.int64)
    for i in range(keys.shape[0]):
        off[i + 1] = off[i] + _count_near(keys[i], bits, width, height, half)
    for t in range(others.shape[0]):
        _set_bit(bits, others[t], width, False)
    return off


@_kernel(**_INTERNAL)
def _side(keys, bits, kbits, rank, width):
    """The :class:`Side` of sorted ``keys`` on workspace bitmaps (``bits`` and ``kbits``
    empty): the keys marked in ``kbits``, the ranks counted, every slot -1. Undone by
    :func:`_keys_off`."""
    for t in range(keys.shape[0]):
        _set_bit(kbits, keys[t], width, True)
    n = 0
    for y in range(kbits.shape[0]):
        for w in range(kbits.shape[1]):
            rank[y, w] = n
            n += _popcount(kbits[y, w])
    return Side(bits, kbits, rank, np.full(keys.shape[0], -1, np.int64))


@_kernel(**_INTERNAL)
def _keys_off(keys, side, width):
    """Clear the keys from their bitmap (the workspace is left empty)."""
    for t in range(keys.shape[0]):
        _set_bit(side.kbits, keys[t], width, False)


@_kernel(**_INTERNAL, _nrt=False)
def _repair_column(
    j0,
    u,
    r_col,
    via,
    v,
    c_row,
    c_pix,
    lab,
    cn_row,
    cn_cost,
    cn_at,
    cn_len,
    listed,
    rows,
    width,
    height,
    half,
    cost_tab,
    nbr_slot,
    nbr_cost,
    seen,
    heap,
    shift,
    level,
):
    """Restore optimality after column slot ``j0`` became free with a negative potential.

    In the residual graph of the assignment (as a min-cost flow to a sink T) a free
    column's arc to T has reduced cost ``v[j0] < 0``. Either some cycle through that arc
    is negative, and cancelling the cheapest one (rows shift along an alternating path
    so that ``j0`` is matched and another column, or a row's outlier, is released) gives
    the new optimum; or none is, and re-weighting the potentials by the shortest
    distances makes every reduced cost non-negative again. Both come from one Dijkstra
    search backwards from ``j0``, bounded by ``-v[j0]``: no row is freed, so the repair
    stays local. Only assigned rows take part (rows waiting for augmentation do not).

    The search runs over columns only: an assigned row is entered only from a column
    it could move to and left only through its own column, at no cost, so a column's
    distance is its row's (``via[s]`` keeps where row ``s`` would move). T is not
    queued: the cheapest release ``distance - v[j]`` of a settled column ``j`` bounds
    the search instead. Columns reached at the current distance are settled from the
    ``level`` stack, without heap operations. Returns the released column (or outlier),
    -1 if none. The arrays are the solver's state (see :func:`_match_sequence`); a
    column's nearby rows are read from its list (``cn_*``, :class:`Lists`) when
    ``listed``, else from the rows' bitmap (``rows``, a :class:`Side`). ``heap`` holds
    one entry per edge relaxed (at most the lists' size), ``seen`` and ``level`` one
    per column or outlier.
    """
    n_real = c_pix.shape[0]
    k_stop = -v[j0]  # the bound, then the cheapest way through T found
    t_col = -1  # the column T releases on that way
    lab[j0] = 0
    seen[0] = j0
    n_seen = 1
    hsize = 0
    _heap_reset(heap)
    key = 0
    level[0] = j0  # columns at the current distance, then the heap
    n_level = 1
    while True:
        if n_level > 0:
            n_level -= 1
            j = level[n_level]
        elif hsize > 0:
            key, j, hsize = _heap_pop(heap, hsize, shift)
            if key != lab[j]:
                continue  # stale heap entry
        else:
            break
        if key >= k_stop:
            break
        if j != j0 and key - v[j] < k_stop:  # matched (v <= 0): T can release it
            k_stop = key - v[j]
            t_col = j
        if j >= n_real:
            continue  # an outlier: no other row reaches it
        own = c_row[j]
        base = key - v[j]
        if listed:
            n_near = cn_len[j]
            at = cn_at[j]
        else:
            n_near = _near(
                c_pix[j], rows, width, height, half, cost_tab, nbr_slot, nbr_cost
            )
            at = 0
        for e in range(n_near):
            if listed:
                k = np.uint64(at + e)  # (unsigned indices: no test for negative ones)
                s = np.int64(cn_row[k])
                cost = np.int64(cn_cost[k])
            else:
                s = np.int64(nbr_slot[np.uint64(e)])
                cost = nbr_cost[np.uint64(e)]
            us = np.uint64(s)
            if s == own or r_col[us] < 0:
                continue
            p = r_col[us]
            up = np.uint64(p)
            lq = base + cost - u[us]
            if lq < lab[up]:
                if lab[up] == _INF:
                    seen[np.uint64(n_seen)] = p
                    n_seen += 1
                lab[up] = lq
                via[us] = j
                if lq == key:
                    level[n_level] = p
                    n_level += 1
                else:
                    hsize = _heap_push(heap, hsize, lq, p, shift)
    # re-weight: columns closer than k_stop move by (k_stop - distance), and their rows
    for t in range(n_seen):
        j = seen[t]
        if lab[j] < k_stop:
            v[j] += k_stop - lab[j]
            if j != j0:
                u[c_row[j]] -= k_stop - lab[j]
        lab[j] = _INF
    if t_col >= 0:  # cancel the cycle T -> ... -> j0 -> T
        s = c_row[t_col]
        c_row[t_col] = -1
        while True:
            nc = via[s]
            displaced = c_row[nc]
            c_row[nc] = s
            r_col[s] = nc
            if nc == j0:
                break
            s = displaced
    return t_col


@_kernel(**_INTERNAL)
def _diff_sorted(old, new, out_gone, out_came):
    """Elements only in ``old`` and only in ``new`` (both sorted); returns the counts."""
    a = 0
    b = 0
    n_gone = 0
    n_came = 0
    while a < old.shape[0] or b < new.shape[0]:
        if b >= new.shape[0] or (a < old.shape[0] and old[a] < new[b]):
            out_gone[n_gone] = old[a]
            n_gone += 1
            a += 1
        elif a >= old.shape[0] or new[b] < old[a]:
            out_came[n_came] = new[b]
            n_came += 1
            b += 1
        else:
            a += 1
            b += 1
    return n_gone, n_came


@_kernel(**_PUBLIC)
def _frame_diffs(ptr, pix):
    """Pixels leaving and arriving between consecutive frames of a sequence.

    Frame k is ``pix[ptr[k]:ptr[k + 1]]`` (sorted). Entry k >= 1 of the result lists the
    pixels of frame k-1 not in frame k (``gone``) and of frame k not in frame k-1
    (``came``), as ``gone_pix[gone_ptr[k]:gone_ptr[k + 1]]`` and likewise; entry 0 is
    empty. Returns (gone_ptr, gone_pix, came_ptr, came_pix).
    """
    n = ptr.shape[0] - 1
    gone_ptr = np.zeros(n + 1, np.int64)
    came_ptr = np.zeros(n + 1, np.int64)
    # each frame leaves at most its own pixels, each arrives with at most its own
    gone_pix = np.empty(pix.shape[0], np.int64)
    came_pix = np.empty(pix.shape[0], np.int64)
    n_g = 0
    n_c = 0
    for k in range(1, n):
        a = pix[ptr[k - 1] : ptr[k]]
        b = pix[ptr[k] : ptr[k + 1]]
        dg, dc = _diff_sorted(a, b, gone_pix[n_g:], came_pix[n_c:])
        n_g += dg
        n_c += dc
        gone_ptr[k + 1] = n_g
        came_ptr[k + 1] = n_c
    return gone_ptr, gone_pix[:n_g], came_ptr, came_pix[:n_c]


@_kernel(**_INTERNAL)
def _side_diff(same, f, side, diffs, prev, cur, gone, came):
    """Pixels of one side (0 rows, 1 columns) leaving and arriving at frame ``f``, into
    ``gone`` / ``came``; returns their counts. Read from ``diffs`` (side, first entry,
    step, gone_ptr, gone_pix, came_ptr, came_pix; see ``_frame_diffs``) when they are
    this side's, else merged from the sorted lists."""
    if same:
        return 0, 0
    d_side, entry0, step, gone_ptr, gone_pix, came_ptr, came_pix = diffs
    if f == 0 or d_side != side:
        return _diff_sorted(prev, cur, gone, came)
    e = entry0 + step * f
    n_gone = gone_ptr[e + 1] - gone_ptr[e]
    n_came = came_ptr[e + 1] - came_ptr[e]
    for t in range(n_gone):  # (a loop: no slice copies without NRT)
        gone[t] = gone_pix[gone_ptr[e] + t]
    for t in range(n_came):
        came[t] = came_pix[came_ptr[e] + t]
    return n_gone, n_came


def _transposed(rows, cols, end, outlier):
    """The optimum a run ended with, as a start with rows and columns swapped.

    Both orientations minimize the same objective (each pair saves ``outlier - cost``
    over leaving both unmatched), so the matching carries over; the potentials are
    mapped through the symmetric dual (a_row, b_col >= 0, a + b >= outlier - cost,
    equality on pairs, zero on unmatched pixels): a = max(0, outlier - u) and
    b = max(0, -v), then the new rows get ``outlier - b`` and the new columns ``-a``.
    """
    end_u, end_partner, end_v = end
    matched = end_partner >= 0
    partner = np.full(cols.size, -1, np.int64)
    partner[end_partner[matched]] = rows[matched]
    new_u = outlier - np.maximum(0, -end_v)
    new_v = -np.maximum(0, outlier - end_u)
    return cols, rows, partner, new_u, new_v


@_kernel(**_INTERNAL)
def _relax(
    j,
    r,
    i,
    v,
    c_row,
    shortest,
    path,
    touched,
    n_touched,
    heap,
    hsize,
    shift,
    best,
    sink,
    level,
    n_level,
    min_val,
):
    """One edge of _augment's search: column ``j`` at distance ``r`` from row ``i``.

    A free column (or outlier) is never expanded: it only offers a way to T, at its
    distance plus its (non-negative) potential, so it is scored here rather than
    queued. Matched columns at or beyond the best way to T found so far can never be
    expanded either: not queued. An expanded column is never lowered again (its
    distance is at most the current one, and reduced costs are >= 0), so no flag is
    needed for it. A column reached at the current distance ``min_val`` (a tight edge)
    goes on the ``level`` stack instead of the heap: nothing can come before it, so
    it is expanded next without heap operations. Returns the updated (n_touched,
    hsize, best, sink, n_level).
    """
    uj = np.uint64(j)  # (an unsigned index: no test for negative ones)
    if r >= shortest[uj]:
        return n_touched, hsize, best, sink, n_level
    free = c_row[uj] < 0
    if r >= best and not free:
        return n_touched, hsize, best, sink, n_level
    if shortest[uj] == _INF:
        touched[np.uint64(n_touched)] = j
        n_touched += 1
    shortest[uj] = r
    path[uj] = i
    if free:
        if r + v[uj] < best:
            best = r + v[uj]
            sink = j
    elif r == min_val:
        level[n_level] = j
        n_level += 1
    else:
        hsize = _heap_push(heap, hsize, r, j, shift)
    return n_touched, hsize, best, sink, n_level


@_kernel(**_INTERNAL, _nrt=False)
def _augment(
    cur,
    u,
    r_col,
    v,
    c_row,
    nb_col,
    nb_cost,
    nb_at,
    nb_len,
    outlier,
    n_real,
    shortest,
    path,
    touched,
    rows_seen,
    heap,
    shift,
    level,
):
    """Match the waiting row slot ``cur`` along a shortest augmenting path.

    Dijkstra on reduced costs from ``cur`` over the rows' candidate lists, stopped as
    soon as no queued column can beat the cheapest way found to a free column or an
    outlier; then the potentials are updated so that reduced costs stay >= 0 and the
    path is tight, and the path is flipped. Returns the column (or outlier) that was
    free and is now matched: only it, and ``cur``, changed their matched state (an
    outlier's row leaves the real columns). No arrays are allocated, so this runs
    without reference counting (``_nrt=False``): it is the benchmark's hottest loop.
    Row slot ``i``'s candidates are ``nb_col[nb_at[i] + e]``, ``e < nb_len[i]``
    (:class:`Lists`); ``touched`` holds one entry per column or outlier, ``heap`` one
    per edge relaxed, ``level`` and ``rows_seen`` one per row.
    """
    best = outlier - v[n_real + cur]
    j_best = n_real + cur
    a0 = nb_at[cur]
    for e in range(nb_len[cur]):
        rc = nb_cost[a0 + e] - v[nb_col[a0 + e]]
        if rc < best:
            best = rc
            j_best = nb_col[a0 + e]
    u[cur] = best
    if c_row[j_best] < 0 and v[j_best] == 0:
        # the cheapest edge reaches a free column at potential 0: a zero-length
        # augmenting path, the one Dijkstra would find (most rows of a first solve)
        c_row[j_best] = cur
        r_col[cur] = j_best
        return j_best
    n_touched = 0
    n_seen = 0
    hsize = 0
    _heap_reset(heap)
    n_level = 0
    min_val = 0
    i = cur
    sink = -1
    best = _INF  # cheapest way found to the sink T (via a free column)
    while True:
        rows_seen[n_seen] = i
        n_seen += 1
        base = min_val - u[i]
        a = nb_at[i]
        for e in range(nb_len[i]):
            k = np.uint64(a + e)
            j = np.int64(nb_col[k])
            n_touched, hsize, best, sink, n_level = _relax(
                j,
                base + nb_cost[k] - v[np.uint64(j)],
                i,
                v,
                c_row,
                shortest,
                path,
                touched,
                n_touched,
                heap,
                hsize,
                shift,
                best,
                sink,
                level,
                n_level,
                min_val,
            )
        j = n_real + i  # the row's own outlier
        n_touched, hsize, best, sink, n_level = _relax(
            j,
            base + outlier - v[j],
            i,
            v,
            c_row,
            shortest,
            path,
            touched,
            n_touched,
            heap,
            hsize,
            shift,
            best,
            sink,
            level,
            n_level,
            min_val,
        )
        # next matched column to expand: one at the current distance, else from the
        # heap (an entry whose key is not its column's distance is stale: the column
        # was reached cheaper, or already expanded)
        i = -1
        if n_level > 0 and min_val < best:
            n_level -= 1
            i = c_row[level[n_level]]
            continue
        n_level = 0
        while hsize > 0 and (_heap_min(heap) >> shift) < best:
            key, j, hsize = _heap_pop(heap, hsize, shift)
            if key == shortest[j]:
                min_val = key
                i = c_row[j]
                break
        if i < 0:
            break
    min_val = best
    # dual update: reduced costs stay >= 0, the new path is tight. The expanded columns
    # are those of the rows seen after the first; free columns reached closer than the
    # path move too.
    u[cur] += min_val
    for k in range(1, n_seen):
        r_i = rows_seen[k]
        j = r_col[r_i]
        u[r_i] += min_val - shortest[j]
        v[j] -= min_val - shortest[j]
    for k in range(n_touched):
        j = touched[k]
        if c_row[j] < 0 and shortest[j] < min_val:
            v[j] -= min_val - shortest[j]
        shortest[j] = _INF
    j = sink
    while True:  # flip the path
        i = path[j]
        c_row[j] = i
        prev = r_col[i]
        r_col[i] = j
        if i == cur:
            break
        j = prev
    return sink


@_kernel(**_INTERNAL)
def _mark(s, is_dirty, dirty, n_dirty):
    """List slot ``s`` as possibly changed (once); returns the new list length."""
    if not is_dirty[s]:
        is_dirty[s] = True
        dirty[n_dirty] = s
        n_dirty += 1
    return n_dirty


@_kernel(**_INTERNAL)
def _repaired(frame_side, j0, t_col, n_real, is_dirty, dirty, n_dirty):
    """List what a repair of column ``j0`` that released ``t_col`` may have changed
    on the frame side: columns ``j0`` (now matched) and ``t_col``; or, for rows, the
    row whose outlier was released (now matched). Other rows and columns on the
    cycle only changed partners."""
    if t_col < 0:
        return n_dirty
    if frame_side == 1:
        n_dirty = _mark(j0, is_dirty, dirty, n_dirty)
        if t_col < n_real:
            n_dirty = _mark(t_col, is_dirty, dirty, n_dirty)
    elif t_col >= n_real:
        n_dirty = _mark(t_col - n_real, is_dirty, dirty, n_dirty)
    return n_dirty


@_kernel(**_INTERNAL)
def _event(ev_frame, ev_pix, ev_sign, n_ev, f, pix, sign):
    """Record that ``pix`` became matched (+1) or not (-1) at frame ``f``."""
    ev_frame[n_ev] = f
    ev_pix[n_ev] = pix
    ev_sign[n_ev] = sign
    return n_ev + 1


@_kernel(**_INTERNAL)
def _grown(ev_frame, ev_pix, ev_sign, need):
    """The event arrays copied into ones of at least ``need`` (doubling) entries."""
    size = max(need, 2 * ev_frame.shape[0])
    f2 = np.empty(size, np.int64)
    p2 = np.empty(size, np.int64)
    s2 = np.empty(size, np.int8)
    for k in range(ev_frame.shape[0]):  # a loop: slice assignment compiles the
        f2[k] = ev_frame[k]  # formatting of its shape-mismatch error
        p2[k] = ev_pix[k]
        s2[k] = ev_sign[k]
    return f2, p2, s2


@_kernel(**_INTERNAL)
def _occupy(
    q,
    k,
    spare,
    n_spare,
    side,
    pixels,
    width,
    frame_side,
    reported,
    is_dirty,
    dirty,
    n_dirty,
):
    """Pixel ``q`` (key ``k`` of its side) arrives: it takes a spare slot of its side
    (slot of the key, pixel, bitmap) and, on the frame side, is listed as changed (not
    yet reported matched). Returns (its slot, n_spare, n_dirty)."""
    n_spare -= 1
    s = spare[n_spare]
    side.slot[k] = s
    pixels[s] = q
    _set_bit(side.bits, q, width, True)
    if frame_side:
        reported[s] = False
        n_dirty = _mark(s, is_dirty, dirty, n_dirty)
    return s, n_spare, n_dirty


@_kernel(**_INTERNAL)
def _vacate(
    q, side, width, frame_side, reported, ev_frame, ev_pix, ev_sign, n_ev, f, m_now
):
    """Pixel ``q`` leaves: off its side's slots and bitmap, and reported if it leaves
    matched from the frame side. Returns (its slot, n_ev, m_now)."""
    k = _key_of(q, side, width)
    s = side.slot[k]
    side.slot[k] = -1
    _set_bit(side.bits, q, width, False)
    if frame_side and reported[s]:
        n_ev = _event(ev_frame, ev_pix, ev_sign, n_ev, f, q, -1)
        reported[s] = False
        m_now -= 1
    return s, n_ev, m_now


@_kernel(**_INTERNAL)
def _unlist(lst, cost, at, length, a, b):
    """Remove ``b`` from the list of ``a`` (entries ``at[a]`` on): the last entry takes
    its place."""
    base = at[a]
    last = length[a] - 1
    for k in range(last + 1):
        if lst[base + k] == b:
            lst[base + k] = lst[base + last]
            cost[base + k] = cost[base + last]
            break
    length[a] = last


@_kernel(**_INTERNAL)
def _list_row(
    s,
    q,
    cols,
    width,
    height,
    half,
    cost_tab,
    nbr_slot,
    nbr_cost,
    nb_col,
    nb_cost,
    nb_at,
    nb_len,
    cn_row,
    cn_cost,
    cn_at,
    cn_len,
    listed,
):
    """List row slot ``s``'s (pixel ``q``) present columns (``cols``, a :class:`Side`),
    from ``nb_at[s]`` on; and, when the columns keep lists too (``listed``), the row at
    the end of theirs."""
    n = _near(q, cols, width, height, half, cost_tab, nbr_slot, nbr_cost)
    nb_len[s] = n
    a = nb_at[s]
    for e in range(n):
        j = nbr_slot[e]
        nb_col[a + e] = j
        nb_cost[a + e] = nbr_cost[e]
        if listed:
            k = cn_at[j] + cn_len[j]
            cn_row[k] = s
            cn_cost[k] = nbr_cost[e]
            cn_len[j] += 1


@_kernel(**_INTERNAL, _nrt=False)
def _frame_step(
    f,
    rows,
    cols,
    same_rows,
    same_cols,
    diffs,
    prev_rows,
    prev_cols,
    geo,
    sol,
    buf,
    lists,
    layout,
    maps,
    ev,
    st,
):
    """Move the optimum of the previous frame to frame ``f`` (see _match_sequence).

    All arrays are allocated by the caller, so this runs without reference counting
    (``_nrt=False``); ``st`` holds the counters it updates: spare row slots, spare
    column slots, present rows, dirty slots, events, matched pixels. A pixel taking a
    slot gets its list's place from ``layout`` (:func:`_layout`); ``maps`` are the
    rows' and the columns' :class:`Side`.
    """
    height, width, half, cost_tab, outlier, n_real, shift, frame_side = geo
    (
        u,
        r_col,
        via,
        r_pix,
        nb_at,
        nb_len,
        v,
        c_row,
        c_pix,
        lab,
        shortest,
        path,
        cn_at,
        cn_len,
    ) = sol
    nb_col, nb_cost, cn_row, cn_cost, heap = lists
    (
        free_rows,
        gone,
        came,
        rows_came,
        touched,
        rows_seen,
        seen,
        released,
        row_spare,
        col_spare,
        reported,
        is_dirty,
        dirty,
        nbr_slot,
        nbr_cost,
    ) = buf
    row_off, col_off = layout[1], layout[3]
    rside, cside = maps
    ev_frame, ev_pix, ev_sign = ev
    # columns list their nearby rows only when the columns are the frames (the rows,
    # fixed, then never change those lists); else a column's rows come from the bitmap
    listed = frame_side == 1
    n_row_spare, n_col_spare, n_rows_present, n_dirty, n_ev, m_now = (
        st[0],
        st[1],
        st[2],
        st[3],
        st[4],
        st[5],
    )
    n_free = 0
    # --- rows that left: their columns are released, then repaired ----------------------
    n_gone, n_came = _side_diff(same_rows, f, 0, diffs, prev_rows, rows, gone, came)
    n_released = 0
    n_rows_present -= n_gone
    for t in range(n_gone):
        s, n_ev, m_now = _vacate(
            gone[t],
            rside,
            width,
            frame_side == 0,
            reported,
            ev_frame,
            ev_pix,
            ev_sign,
            n_ev,
            f,
            m_now,
        )
        if listed:
            for e in range(nb_len[s]):
                _unlist(cn_row, cn_cost, cn_at, cn_len, nb_col[nb_at[s] + e], s)
        j = r_col[s]
        r_col[s] = -2
        if j >= 0:
            c_row[j] = -1
            if j < n_real:
                released[n_released] = j
                n_released += 1
        v[n_real + s] = 0
        c_row[n_real + s] = -1
        row_spare[n_row_spare] = s
        n_row_spare += 1
    for t in range(n_released):
        j = released[t]
        if v[j] < 0 and c_row[j] < 0:
            t_col = _repair_column(
                j,
                u,
                r_col,
                via,
                v,
                c_row,
                c_pix,
                lab,
                cn_row,
                cn_cost,
                cn_at,
                cn_len,
                listed,
                rside,
                width,
                height,
                half,
                cost_tab,
                nbr_slot,
                nbr_cost,
                seen,
                heap,
                shift,
                touched,
            )
            n_dirty = _repaired(frame_side, j, t_col, n_real, is_dirty, dirty, n_dirty)
    for t in range(n_came):
        rows_came[t] = came[t]
    n_rows_came = n_came
    # --- columns that left: their rows lose their partner -------------------------------
    n_gone, n_came = _side_diff(same_cols, f, 1, diffs, prev_cols, cols, gone, came)
    for t in range(n_gone):
        c = gone[t]
        j, n_ev, m_now = _vacate(
            c,
            cside,
            width,
            frame_side == 1,
            reported,
            ev_frame,
            ev_pix,
            ev_sign,
            n_ev,
            f,
            m_now,
        )
        if listed:
            for e in range(cn_len[j]):
                _unlist(nb_col, nb_cost, nb_at, nb_len, cn_row[cn_at[j] + e], j)
        else:
            n_near = _near(c, rside, width, height, half, cost_tab, nbr_slot, nbr_cost)
            for e in range(n_near):
                _unlist(nb_col, nb_cost, nb_at, nb_len, nbr_slot[e], j)
        s = c_row[j]
        if s >= 0:
            c_row[j] = -1
            r_col[s] = -2
            free_rows[n_free] = s
            n_free += 1
        v[j] = 0
        col_spare[n_col_spare] = j
        n_col_spare += 1
    # --- columns that arrived: a potential that keeps every row's edge feasible, then a
    #     repair if that potential is negative (some row prefers the column) -------------
    for t in range(n_came):
        c = came[t]
        key = _key_of(c, cside, width)
        j, n_col_spare, n_dirty = _occupy(
            c,
            key,
            col_spare,
            n_col_spare,
            cside,
            c_pix,
            width,
            frame_side == 1,
            reported,
            is_dirty,
            dirty,
            n_dirty,
        )
        c_row[j] = -1
        vc = 0
        cn_len[j] = 0
        if listed:
            cn_at[j] = col_off[key]
        if n_rows_present > 0:  # (none in a first frame: rows come next)
            n_near = _near(c, rside, width, height, half, cost_tab, nbr_slot, nbr_cost)
            cn_len[j] = n_near
            for e in range(n_near):
                s = nbr_slot[e]
                if listed:
                    cn_row[cn_at[j] + e] = s
                    cn_cost[cn_at[j] + e] = nbr_cost[e]
                k = nb_at[s] + nb_len[s]
                nb_col[k] = j
                nb_cost[k] = nbr_cost[e]
                nb_len[s] += 1
                if r_col[s] >= 0 and nbr_cost[e] - u[s] < vc:
                    vc = nbr_cost[e] - u[s]
        v[j] = vc
        if vc < 0:
            t_col = _repair_column(
                j,
                u,
                r_col,
                via,
                v,
                c_row,
                c_pix,
                lab,
                cn_row,
                cn_cost,
                cn_at,
                cn_len,
                listed,
                rside,
                width,
                height,
                half,
                cost_tab,
                nbr_slot,
                nbr_cost,
                seen,
                heap,
                shift,
                touched,
            )
            n_dirty = _repaired(frame_side, j, t_col, n_real, is_dirty, dirty, n_dirty)
    # --- rows that arrived ---------------------------------------------------------------
    n_rows_present += n_rows_came
    for t in range(n_rows_came):
        q = rows_came[t]
        key = _key_of(q, rside, width)
        s, n_row_spare, n_dirty = _occupy(
            q,
            key,
            row_spare,
            n_row_spare,
            rside,
            r_pix,
            width,
            frame_side == 0,
            reported,
            is_dirty,
            dirty,
            n_dirty,
        )
        nb_at[s] = row_off[key]
        _list_row(
            s,
            q,
            cside,
            width,
            height,
            half,
            cost_tab,
            nbr_slot,
            nbr_cost,
            nb_col,
            nb_cost,
            nb_at,
            nb_len,
            cn_row,
            cn_cost,
            cn_at,
            cn_len,
            listed,
        )
        v[n_real + s] = 0
        c_row[n_real + s] = -1
        r_col[s] = -2
        free_rows[n_free] = s
        n_free += 1
    # --- waiting rows: shortest augmenting paths, in a scrambled but fixed order (in
    #     raster order neighbouring rows compete for the same columns one after another,
    #     which makes long augmenting chains): stride through the list by a prime ----------
    stride = 7919 if n_free % 7919 != 0 else 7907
    for k in range(n_free):
        cur = free_rows[(k * stride) % n_free]
        if r_col[cur] != -2:
            continue  # listed twice
        sink = _augment(
            cur,
            u,
            r_col,
            v,
            c_row,
            nb_col,
            nb_cost,
            nb_at,
            nb_len,
            outlier,
            n_real,
            shortest,
            path,
            touched,
            rows_seen,
            heap,
            shift,
            seen,
        )
        if frame_side == 0:
            n_dirty = _mark(cur, is_dirty, dirty, n_dirty)
            if sink >= n_real:  # that row went to its outlier
                n_dirty = _mark(sink - n_real, is_dirty, dirty, n_dirty)
        elif sink < n_real:  # a free column is now matched
            n_dirty = _mark(sink, is_dirty, dirty, n_dirty)
    # --- report what changed: rows matched or not (frame side rows: the waiting rows and
    #     a row sent to its outlier), columns matched or not (frame side columns:
    #     arrivals, repaired ones, augmentation sinks) ------------------------------------
    for t in range(n_dirty):
        s = dirty[t]
        is_dirty[s] = False
        if frame_side == 0:
            pix = r_pix[s]
            if rside.slot[_key_of(pix, rside, width)] != s:
                continue  # left since (already reported)
            now = r_col[s] < n_real
        else:
            pix = c_pix[s]
            if cside.slot[_key_of(pix, cside, width)] != s:
                continue
            now = c_row[s] >= 0
        if now != reported[s]:
            n_ev = _event(ev_frame, ev_pix, ev_sign, n_ev, f, pix, 1 if now else -1)
            reported[s] = now
            m_now += 1 if now else -1
    st[0], st[1], st[2], st[3], st[4], st[5] = (
        n_row_spare,
        n_col_spare,
        n_rows_present,
        0,
        n_ev,
        m_now,
    )


@_kernel(**_INTERNAL, _nrt=False)
def _load_start(start, geo, sol, buf, lists, layout, maps, st):
    """Install ``start`` (see _match_sequence) in the solver state; no allocation, so
    no reference counting (``_nrt=False``)."""
    s_rows, s_cols, s_partner, s_u, s_v = start
    height, width, half, cost_tab, outlier, n_real, shift, frame_side = geo
    u, r_col, r_pix = sol.u, sol.r_col, sol.r_pix
    v, c_row, c_pix = sol.v, sol.c_row, sol.c_pix
    nb_at, nb_len, cn_at, cn_len = sol.nb_at, sol.nb_len, sol.cn_at, sol.cn_len
    nb_col, nb_cost, cn_row, cn_cost = lists[:4]
    row_spare, col_spare, reported = buf.row_spare, buf.col_spare, buf.reported
    is_dirty, dirty = buf.is_dirty, buf.dirty
    nbr_slot, nbr_cost = buf.nbr_slot, buf.nbr_cost
    row_off, col_off = layout[1], layout[3]
    rside, cside = maps
    listed = frame_side == 1  # as in _frame_step
    # (taken as in _frame_step, but not listed as changed: the start is reported as is)
    for t in range(s_cols.shape[0]):
        c = s_cols[t]
        key = _key_of(c, cside, width)
        j, st[1], _ = _occupy(
            c,
            key,
            col_spare,
            st[1],
            cside,
            c_pix,
            width,
            False,
            reported,
            is_dirty,
            dirty,
            0,
        )
        v[j] = s_v[t]
        c_row[j] = -1
        cn_len[j] = 0
        if listed:
            cn_at[j] = col_off[key]
    for t in range(s_rows.shape[0]):
        q = s_rows[t]
        key = _key_of(q, rside, width)
        s, st[0], _ = _occupy(
            q,
            key,
            row_spare,
            st[0],
            rside,
            r_pix,
            width,
            False,
            reported,
            is_dirty,
            dirty,
            0,
        )
        nb_at[s] = row_off[key]
        _list_row(
            s,
            q,
            cside,
            width,
            height,
            half,
            cost_tab,
            nbr_slot,
            nbr_cost,
            nb_col,
            nb_cost,
            nb_at,
            nb_len,
            cn_row,
            cn_cost,
            cn_at,
            cn_len,
            listed,
        )
        u[s] = s_u[t]
        v[n_real + s] = 0
        c_row[n_real + s] = -1
        if s_partner[t] < 0:  # at its outlier: that edge is tight
            j = n_real + s
            v[j] = outlier - u[s]
        else:
            j = cside.slot[_key_of(s_partner[t], cside, width)]
            st[5] += 1
            reported[s if frame_side == 0 else j] = True
        r_col[s] = j
        c_row[j] = s


@_kernel(**_INTERNAL, _nrt=False)
def _unload(rows, cols, geo, sol, maps, row_flags, col_flags, end_u, end_partner, end_v):
    """Read off the last frame (``rows``, ``cols``): matched flags and the optimum
    (see _match_sequence), and clear the presence bitmaps of its pixels."""
    width, n_real = geo[1], geo[5]
    u, r_col, v, c_row, position = sol.u, sol.r_col, sol.v, sol.c_row, sol.path
    rside, cside = maps
    for t in range(cols.shape[0]):
        c = cols[t]
        k = _key_of(c, cside, width)
        j = cside.slot[k]
        col_flags[t] = c_row[j] >= 0
        end_v[t] = v[j]
        position[j] = t  # (the search scratch: free now)
        cside.slot[k] = -1
        _set_bit(cside.bits, c, width, False)
    for t in range(rows.shape[0]):
        q = rows[t]
        k = _key_of(q, rside, width)
        s = rside.slot[k]
        row_flags[t] = r_col[s] < n_real
        end_u[t] = u[s]
        end_partner[t] = position[r_col[s]] if r_col[s] < n_real else -1
        rside.slot[k] = -1
        _set_bit(rside.bits, q, width, False)


def _solver_state(n_rows_cap, n_real, n_disc):
    """Arrays of :func:`_match_sequence` for up to ``n_rows_cap`` rows and ``n_real``
    columns present at once: (:class:`Slots`, :class:`Scratch`, event arrays,
    :class:`Lists`). The lists start empty; :func:`_fit_lists` sizes them for a call.
    ``n_disc`` is the number of offsets within the tolerance (a neighbourhood's most
    pixels).

    Plain Python: it only allocates, and built here the tuples have the types the
    kernels would give them (compiling it cost 2 s on a first run, mostly boxing)."""
    n_nodes = n_real + n_rows_cap
    n_side = max(n_rows_cap, n_real)
    # what a search reads of one row or one column sits in one 64-byte line: a row's
    # potential, column, repair move, list start and length, pixel; a column's
    # potential, row, labels, predecessor, pixel, list start and length
    row = np.zeros((n_rows_cap, 8), np.int64)
    row[:, 1] = -2
    col = np.zeros((n_nodes, 8), np.int64)
    col[:, 1] = -1
    col[:, 2] = _INF
    col[:, 4] = _INF
    sol = Slots(
        row[:, 0],
        row[:, 1],
        row[:, 2],
        row[:, 5],
        row[:, 3],
        row[:, 4],
        col[:, 0],
        col[:, 1],
        col[:n_real, 5],
        col[:, 4],
        col[:, 2],
        col[:, 3],
        col[:n_real, 6],
        col[:n_real, 7],
    )
    n_buf = max(n_rows_cap, n_real)
    # touched columns: distinct in a search (augmentation), or settled at one distance
    # (a repair's level stack): at most every column and outlier once
    buf = Scratch(
        np.empty(2 * n_rows_cap + 1, np.int64),
        np.empty(n_buf, np.int64),
        np.empty(n_buf, np.int64),
        np.empty(n_buf, np.int64),
        np.empty(n_nodes + 2, np.int64),
        np.empty(n_rows_cap + 1, np.int64),
        np.empty(n_rows_cap + 2, np.int64),
        np.empty(n_rows_cap + 1, np.int64),
        np.empty(n_rows_cap, np.int64),
        np.empty(n_real, np.int64),
        np.zeros(n_side, np.bool_),
        np.zeros(n_side, np.bool_),
        np.empty(n_side, np.int64),
        np.empty(n_disc, np.int64),
        np.empty(n_disc, np.int64),
    )
    ev = (
        np.empty(4 * n_side + 16, np.int64),
        np.empty(4 * n_side + 16, np.int64),
        np.empty(4 * n_side + 16, np.int8),
    )
    return sol, buf, ev, _new_lists(0, n_nodes)


def _new_lists(n_entries, n_nodes):
    """:class:`Lists` with room for ``n_entries`` candidate pairs listed from each side.

    The heap gets one entry per pair and per node: a search expands each node at most
    once, so it relaxes each pair (and each row's own outlier) at most once, and only
    a relaxation that lowers a label pushes an entry."""
    n_heap = n_entries + n_nodes + 2
    return Lists(
        np.empty(n_entries, np.int32),
        np.empty(n_entries, np.int32),
        np.empty(n_entries, np.int32),
        np.empty(n_entries, np.int32),
        RadixHeap(
            np.empty(n_heap, np.int64),
            np.empty(n_heap, np.int64),
            np.full(64, -1, np.int64),
            np.zeros(4, np.int64),
        ),
    )


def _fit_lists(state, n_entries):
    """``state`` with lists for at least ``n_entries`` pairs (the last offset of a
    :func:`_layout`): the same state when they fit, else with new lists (a quarter
    larger than before at least, so that growing image by image stays rare)."""
    sol, buf, ev, lists = state
    n_nodes = sol.v.shape[0]
    have = lists.nb_col.shape[0]
    if have >= n_entries and lists.heap.val.shape[0] >= n_entries + n_nodes + 2:
        return state
    return sol, buf, ev, _new_lists(max(n_entries, have + have // 4), n_nodes)


@_kernel(**_PUBLIC, nogil=True)
def _match_sequence(
    height,
    width,
    row_lo,
    row_hi,
    row_pix,
    col_lo,
    col_hi,
    col_pix,
    half,
    cost_tab,
    outlier,
    ws,
    state,
    diffs,
    start,
    frame_side,
    layout,
):
    """Exact matchings for a sequence of (row set, column set) pairs of pixel maps.

    Frame ``f`` matches the rows ``row_pix[row_lo[f]:row_hi[f]]`` with the columns
    ``col_pix[col_lo[f]:col_hi[f]]`` (sorted linear pixel indices; frames may share a
    slice, e.g. a fixed human map). A row is matched to a distinct column within the
    tolerance (the disc of :func:`_near`, ``half`` and ``cost_tab``) or to its private
    outlier at cost ``outlier``; columns may stay unmatched; the total cost is
    minimized exactly.

    Hungarian method with dual potentials (a min-cost flow to a sink T): rows are added
    one at a time along shortest augmenting paths (Dijkstra on reduced costs). Between
    frames the previous optimum is repaired, not rebuilt: rows whose partner left and
    new rows are re-augmented; a column that arrives, or is released with a negative
    potential, is repaired by :func:`_repair_column`. The invariants (assigned edges
    tight, reduced costs >= 0, matched columns at potential <= 0, free columns >= 0)
    make every frame's matching an exact optimum. Repairs stay local when the rows are
    the scarcer side, so callers pick the smaller map as rows.

    Present pixels get slots: the solver's state lives in arrays as long as a frame,
    not as the image, so a search reads memory that stays in cache. Rows have slots
    0..R-1; column slots 0..C-1 are pixels, C + s is row slot s's outlier. Which pixels
    are present is also kept as bitmaps, which :func:`_near` reads; a pixel's slot is
    found through its rank among the keys of its side (:class:`Side`), so nothing the
    solver keeps is as large as the image but bitmaps.

    ``diffs`` gives the pixels leaving and arriving at each frame on the side that
    changes, when the caller knows them (see :func:`_side_diff`; side -1 when not):
    then they are not merged again for every map matched against the same frames.

    ``start`` is an optimum to begin from instead of nothing (five empty arrays): (rows,
    columns, each row's column or -1 for its outlier, row potentials, column
    potentials), the rows and columns sorted, the potentials satisfying the invariants;
    see :func:`_transposed`. Frame 0 is then reached by the diffs from it.

    ``frame_side`` (0 rows, 1 columns) is the side whose matched pixels are reported
    frame by frame, as changes: an event (frame, pixel, +1 or -1) whenever a pixel of
    that side becomes matched or stops being matched (or leaves while matched). Only
    pixels a frame touched are looked at, not every pixel of every frame.

    ``state`` holds the solver's arrays (:func:`_solver_state`), reused from call to
    call: each entry is set when its slot is taken, and search labels are reset after
    each search, so nothing needs clearing in between.

    ``layout`` places the candidate lists (:class:`Lists`) and names the keys
    (:class:`Side`): (row keys, row offsets, column keys, column offsets), each keys
    array the sorted pixels that can take a slot on that side in this call (every
    frame's and the start's; any other pixel must not appear) and its offsets
    from :func:`_layout` against the other side's keys; the lists must have room for
    the last offsets (:func:`_fit_lists`). Column offsets are read only when the
    columns keep lists (``frame_side`` 1).

    Returns the matched-row count per frame; the events ((frame, pixel, sign arrays),
    count: the first ``count`` entries, in frame order; the arrays are ``state``'s,
    grown if needed); whether each row and each column of the last frame is matched
    (aligned with its slices); and the last frame's optimum as (row potentials, each
    row's column as its position in the frame's column list or -1, column potentials),
    aligned with that frame's rows and columns.
    """
    n_frames = row_lo.shape[0]
    s_rows, s_cols, s_partner, s_u, s_v = start
    sol, buf, ev, lists = state
    n_rows_cap = sol.u.shape[0]
    n_real = sol.c_pix.shape[0]
    n_nodes = n_real + n_rows_cap
    row_off, col_off = layout[1], layout[3]
    n_lists = max(row_off[-1], col_off[-1] if frame_side == 1 else 0)
    if (
        lists.nb_col.shape[0] < n_lists
        or lists.heap.val.shape[0] < row_off[-1] + n_nodes + 2
    ):
        raise ValueError("candidate lists too small for this layout")
    need_rows = s_rows.shape[0]
    need_cols = s_cols.shape[0]
    for f in range(n_frames):
        need_rows = max(need_rows, row_hi[f] - row_lo[f])
        need_cols = max(need_cols, col_hi[f] - col_lo[f])
    if need_rows > n_rows_cap or need_cols > n_real:
        raise ValueError("solver state too small for these frames")
    # presence and key bitmaps from a reusable workspace (_workspace), empty between
    # calls: what this call sets is cleared on return
    row_bits, col_bits, row_kbits, col_kbits, row_rank, col_rank = ws
    rside = _side(layout[0], row_bits, row_kbits, row_rank, width)
    cside = _side(layout[2], col_bits, col_kbits, col_rank, width)
    row_spare, col_spare, reported = buf.row_spare, buf.col_spare, buf.reported
    for t in range(n_rows_cap):  # every slot spare, lowest on top
        row_spare[t] = n_rows_cap - 1 - t
    for t in range(n_real):
        col_spare[t] = n_real - 1 - t
    reported[:] = False
    n_side = n_rows_cap if frame_side == 0 else n_real
    shift = 1  # heap entries: key << shift | slot (see _heap_push)
    while (1 << shift) <= n_nodes:
        shift += 1
    geo = (height, width, half, cost_tab, outlier, n_real, shift, frame_side)
    maps = (rside, cside)
    # counters of _frame_step: spare row slots, spare column slots, present rows, dirty
    # slots, events, matched pixels
    st = np.array([n_rows_cap, n_real, s_rows.shape[0], 0, 0, 0], np.int64)
    # --- the start: an optimum of the previous frame (empty if none) ---------------------
    _load_start(start, geo, sol, buf, lists, layout, maps, st)
    prev_rows = s_rows
    prev_cols = s_cols
    n_matched = np.zeros(n_frames, np.int64)
    for f in range(n_frames):
        if st[4] + 2 * n_side + 2 > ev[0].shape[0]:  # room for this frame's events
            ev = _grown(ev[0], ev[1], ev[2], st[4] + 2 * n_side + 2)
        rows = row_pix[row_lo[f] : row_hi[f]]
        cols = col_pix[col_lo[f] : col_hi[f]]
        # a side that repeats the previous frame's slice (a fixed map) has not changed
        same_rows = f > 0 and row_lo[f] == row_lo[f - 1] and row_hi[f] == row_hi[f - 1]
        same_cols = f > 0 and col_lo[f] == col_lo[f - 1] and col_hi[f] == col_hi[f - 1]
        _frame_step(
            f,
            rows,
            cols,
            same_rows,
            same_cols,
            diffs,
            prev_rows,
            prev_cols,
            geo,
            sol,
            buf,
            lists,
            layout,
            maps,
            ev,
            st,
        )
        n_matched[f] = st[5]
        prev_rows = rows
        prev_cols = cols
    # the last frame's matched pixels (both sides) and its optimum; clear the workspace
    row_flags = np.zeros(prev_rows.shape[0], np.bool_)
    col_flags = np.zeros(prev_cols.shape[0], np.bool_)
    end_u = np.empty(prev_rows.shape[0], np.int64)
    end_partner = np.empty(prev_rows.shape[0], np.int64)
    end_v = np.empty(prev_cols.shape[0], np.int64)
    _unload(
        prev_rows,
        prev_cols,
        geo,
        sol,
        maps,
        row_flags,
        col_flags,
        end_u,
        end_partner,
        end_v,
    )
    _keys_off(layout[0], rside, width)
    _keys_off(layout[2], cside, width)
    return n_matched, (ev, st[4]), row_flags, col_flags, (end_u, end_partner, end_v)


def _walk_frames(
    height,
    width,
    fixed_pix,
    pool,
    half,
    cost_tab,
    outlier,
    ws,
    state,
    departing: bool = False,
):
    """Match the fixed map (``fixed_pix``) against every frame of ``pool`` (ptr, pix,
    gone_ptr, gone_pix, came_ptr, came_pix, and the sorted pixels of all frames: see
    :meth:`Matcher._frame_pool`).

    Frames are walked from the end with the smaller frame, so that along the walk
    pixels mostly arrive: arriving rows only need augmenting, while departing rows
    release columns that must be repaired (for thresholds: high to low). With
    ``departing``, from the end with the larger frame instead (low to high), about 15%
    slower: a repaired optimum keeps the matches it has while equally cheap ones arrive,
    so walking up from the sparse end keeps the strongest pixels matched for every
    annotator alike; walking down from the dense end spreads the matches of several
    annotators over more pixels, as the official solver's random choice does (the
    union of matched pixels, cntP, is then as large as the official's on average). Consecutive
    frames are solved in runs with the scarcer side as rows (repairs then stay local,
    see _match_sequence); each run starts from the previous run's optimum, transposed,
    so no frame but the first is solved from nothing. ``state`` must hold as many
    pixels as the largest frame and the fixed map (:func:`_solver_state`); its
    candidate lists are enlarged here if they are too small (:func:`_fit_lists`).

    Returns the matched count per frame, the walk, the events (frame, pixel, sign; see
    :class:`FrameEvents`), the state (its event arrays and lists may have grown) and
    the last run's rows, columns and end (for tests: see _match_sequence).

    Python around the compiled :func:`_match_sequence`: it loops over runs (one to a
    few per map), and compiling the loop as well cost 6 s on a first run.
    """
    ptr, pix, gone_ptr, gone_pix, came_ptr, came_pix, union = pool
    n_frames = ptr.shape[0] - 1
    n_fixed = fixed_pix.shape[0]
    sizes = np.diff(ptr)
    # the candidate lists of every run: a frame pixel has room for the fixed pixels
    # near it, a fixed pixel for the pixels of any frame near it (the same pairs)
    off_union = _layout(union, fixed_pix, height, width, half, ws[0])
    off_fixed = _layout(fixed_pix, union, height, width, half, ws[0])
    state = _fit_lists(state, max(int(off_union[-1]), int(off_fixed[-1])))
    n_matched = np.zeros(n_frames, np.int64)
    forward = (n_frames == 0 or sizes[0] <= sizes[n_frames - 1]) != bool(departing)
    walk = np.arange(n_frames) if forward else np.arange(n_frames)[::-1].copy()
    events: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
    empty = np.zeros(0, np.int64)
    start = (empty, empty, empty, empty, empty)
    last_rows, last_cols = empty, empty
    last_end = (empty, empty, empty)
    pos = 0
    while pos < n_frames:
        fixed_rows = bool(sizes[walk[pos]] >= n_fixed)
        stop = pos + 1
        while stop < n_frames and bool(sizes[walk[stop]] >= n_fixed) == fixed_rows:
            stop += 1
        order = walk[pos:stop]
        m = stop - pos
        side = 1 if fixed_rows else 0
        if forward:
            diffs = (side, int(order[0]), 1, gone_ptr, gone_pix, came_ptr, came_pix)
        else:  # frame f of the run is frame order[0] - f: the diffs read backwards
            diffs = (side, int(order[0]) + 1, -1, came_ptr, came_pix, gone_ptr, gone_pix)
        whole_lo = np.zeros(m, np.int64)
        whole_hi = np.full(m, n_fixed, np.int64)
        sliced_lo = ptr[order]
        sliced_hi = ptr[order + 1]
        last = pix[ptr[order[m - 1]] : ptr[order[m - 1] + 1]]
        if fixed_rows:
            n, (ev, n_ev), _, _, end = _match_sequence(
                height,
                width,
                whole_lo,
                whole_hi,
                fixed_pix,
                sliced_lo,
                sliced_hi,
                pix,
                half,
                cost_tab,
                outlier,
                ws,
                state,
                diffs,
                start,
                side,
                (fixed_pix, off_fixed, union, off_union),
            )
            last_rows, last_cols = fixed_pix, last
        else:
            n, (ev, n_ev), _, _, end = _match_sequence(
                height,
                width,
                sliced_lo,
                sliced_hi,
                pix,
                whole_lo,
                whole_hi,
                fixed_pix,
                half,
                cost_tab,
                outlier,
                ws,
                state,
                diffs,
                start,
                side,
                (union, off_union, fixed_pix, off_fixed),
            )
            last_rows, last_cols = last, fixed_pix
        state = (state[0], state[1], ev, state[3])
        n_matched[order] = n
        events[0].append(order[ev[0][:n_ev]])  # copies: the arrays are reused
        events[1].append(ev[1][:n_ev].copy())
        events[2].append(ev[2][:n_ev].copy())
        last_end = end
        if stop < n_frames:  # the next run starts from this optimum
            start = _transposed(last_rows, last_cols, end, outlier)
        pos = stop
    out = tuple(
        np.concatenate(e) if e else np.zeros(0, t)
        for e, t in zip(events, (np.int64, np.int64, np.int8))
    )
    return n_matched, walk, out, state, (last_rows, last_cols, last_end)


@_kernel(**_PUBLIC)
def _replay_flags(walk, ptr, pix, ev_frame, ev_pix, ev_sign, n_pix):
    """Whether each pixel of each frame (aligned with ``pix``) is matched, from the
    events of :meth:`Matcher.frame_events`."""
    state = np.zeros(n_pix, np.bool_)
    out = np.zeros(pix.shape[0], np.bool_)
    e = 0
    for w in range(walk.shape[0]):
        k = walk[w]
        while e < ev_frame.shape[0] and ev_frame[e] == k:
            state[ev_pix[e]] = ev_sign[e] > 0
            e += 1
        for t in range(ptr[k], ptr[k + 1]):
            out[t] = state[pix[t]]
    return out


@_kernel(**_PUBLIC)
def covered_counts(walk, ev_ptr, ev_frame, ev_pix, ev_sign, n_pix):
    """Frame pixels matched by at least one of several maps, per frame.

    Parameters
    ----------
    walk : (n_frames,) int64
        The walk order shared by every map's events (:attr:`FrameEvents.walk`).
    ev_ptr : (n_maps + 1,) int64
        Map ``a``'s events are entries ``ev_ptr[a]:ev_ptr[a + 1]`` of the event arrays.
    ev_frame, ev_pix, ev_sign : (n_events,) arrays
        The maps' events (:class:`FrameEvents`), concatenated.
    n_pix : int
        A bound on the pixel indices: the pixels in the image, or, when the events'
        pixels are given as positions among every frame's pixels (as
        :func:`evaluate_image` does, so that the counters are as many as those, not
        as the image's pixels), their number.

    Returns
    -------
    (n_frames,) int64
        For each frame, its pixels matched by any map (the benchmark's cntP).
    """
    n_maps = ev_ptr.shape[0] - 1
    cover = np.zeros(n_pix, np.int32)
    nxt = ev_ptr[:-1].copy()
    out = np.zeros(walk.shape[0], np.int64)
    n_covered = 0
    for w in range(walk.shape[0]):
        k = walk[w]
        for a in range(n_maps):
            e = nxt[a]
            while e < ev_ptr[a + 1] and ev_frame[e] == k:
                p = ev_pix[e]
                if ev_sign[e] > 0:
                    n_covered += cover[p] == 0
                    cover[p] += 1
                else:
                    cover[p] -= 1
                    n_covered -= cover[p] == 0
                e += 1
            nxt[a] = e
        out[k] = n_covered
    return out


@_kernel(**_PUBLIC)
def sorted_union(a, b):
    """The distinct values of ``a`` and ``b`` (int64, any order), ascending:
    ``np.union1d(a, b)``, a few times faster on the frame lists of one image (one sort
    of both, then the repeats dropped; memory as the inputs, not as the image)."""
    c = np.empty(a.shape[0] + b.shape[0], np.int64)
    c[: a.shape[0]] = a
    c[a.shape[0] :] = b
    c.sort()
    k = 0
    for i in range(c.shape[0]):
        if i == 0 or c[i] != c[i - 1]:
            c[k] = c[i]
            k += 1
    return c[:k].copy()


@_kernel(**_PUBLIC)
def positions_in(union, pixels, width):
    """Each of ``pixels`` (linear indices of an image ``width`` wide, every one in
    ``union``) as its position in the sorted, distinct ``union``:
    ``np.searchsorted(union, pixels)``, through where each image row starts in
    ``union`` (a table as long as the image has rows) and a short search within the
    row, instead of a binary search through all of ``union`` each (about twice as
    fast on the events of a BSDS image)."""
    n = union.shape[0]
    n_rows = union[n - 1] // width + 1 if n else 0
    row_at = np.zeros(n_rows + 1, np.int64)  # union[row_at[y]:row_at[y + 1]]: row y
    for i in range(n):
        row_at[union[i] // width + 1] += 1
    for y in range(n_rows):
        row_at[y + 1] += row_at[y]
    out = np.empty(pixels.shape[0], np.int64)
    for e in range(pixels.shape[0]):
        p = pixels[e]
        lo = row_at[p // width]
        hi = row_at[p // width + 1]
        while lo < hi:
            mid = (lo + hi) >> 1
            if union[mid] < p:
                lo = mid + 1
            else:
                hi = mid
        out[e] = lo
    return out
