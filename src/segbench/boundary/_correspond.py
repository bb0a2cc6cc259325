"""One-to-one correspondence of boundary pixels, solved exactly.

The official ``correspondPixels`` (BSR ``match.cc`` + Goldberg's CSA) builds a
min-cost perfect matching problem: every pixel of either map is matched either to a
pixel of the other map within the tolerance (cost = distance) or to an outlier node
(cost = ``outlier_cost * max_dist``); outlier nodes left over pair with each other at the
same cost. Relative to matching nothing, each real pair therefore changes the total by
``distance - outlier``, so the problem is a min-cost (not necessarily perfect)
bipartite matching with those pair costs. The official code approximates the complete
outlier graph with a few random edges per node (seeded from the clock), so its answer
varies between calls and is sometimes sub-optimal. We solve the same integer objective
exactly with shortest augmenting paths, which is deterministic.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..errors import InputError

#: Distances are scaled by this factor and rounded to integers, as in match.cc.
COST_MULTIPLIER = 100
#: Default tolerance, as a fraction of the image diagonal (the BSR benchmark setting).
DEFAULT_MAX_DIST = 0.0075
#: Default outlier cost, as a multiple of the tolerance (correspondPixels' default).
DEFAULT_OUTLIER_COST = 100.0

_INF = np.iinfo(np.int64).max // 8


def tolerance_px(shape: tuple[int, int], max_dist: float) -> float:
    """Matching radius in pixels: ``max_dist`` times the image diagonal.

    Parameters
    ----------
    shape : (int, int)
        Image shape (rows, cols).
    max_dist : float
        Tolerance as a fraction of the diagonal (0.0075 in the BSR benchmark).
    """
    return float(max_dist) * math.sqrt(shape[0] ** 2 + shape[1] ** 2)


def _offsets(radius: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Integer offsets within ``radius`` px and their integer costs, cheapest first.

    Pixel pairs at squared distance ``d2 <= radius**2`` are candidates, as in match.cc;
    the cost of a pair is ``rint(100 * sqrt(d2))``.
    """
    r = int(math.ceil(radius))
    dv, du = np.mgrid[-r:r + 1, -r:r + 1]
    d2 = (du * du + dv * dv).astype(np.float64)
    keep = d2 <= radius * radius
    dv, du, d2 = dv[keep], du[keep], d2[keep]
    cost = np.rint(np.sqrt(d2) * COST_MULTIPLIER).astype(np.int64)
    order = np.lexsort((du, dv, cost))  # deterministic: by cost, then row, then column
    return dv[order].astype(np.int64), du[order].astype(np.int64), cost[order]


@nb.njit(cache=True)
def _pixel_index(bmap):
    """Row-major list of foreground pixels and a map from pixel to its index (-1 if none)."""
    h, w = bmap.shape
    index = np.full((h, w), -1, np.int64)
    n = 0
    for y in range(h):
        for x in range(w):
            if bmap[y, x]:
                index[y, x] = n
                n += 1
    ys = np.empty(n, np.int64)
    xs = np.empty(n, np.int64)
    k = 0
    for y in range(h):
        for x in range(w):
            if bmap[y, x]:
                ys[k] = y
                xs[k] = x
                k += 1
    return ys, xs, index


@nb.njit(cache=True)
def _heap_push(keys, vals, size, key, val):
    i = size
    keys[i] = key
    vals[i] = val
    while i > 0:
        parent = (i - 1) >> 1
        if keys[parent] < keys[i] or (keys[parent] == keys[i] and vals[parent] <= vals[i]):
            break
        keys[parent], keys[i] = keys[i], keys[parent]
        vals[parent], vals[i] = vals[i], vals[parent]
        i = parent
    return size + 1


@nb.njit(cache=True)
def _heap_pop(keys, vals, size):
    key = keys[0]
    val = vals[0]
    size -= 1
    keys[0] = keys[size]
    vals[0] = vals[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        child = left
        right = left + 1
        if right < size and (keys[right] < keys[left]
                             or (keys[right] == keys[left] and vals[right] < vals[left])):
            child = right
        if keys[i] < keys[child] or (keys[i] == keys[child] and vals[i] <= vals[child]):
            break
        keys[child], keys[i] = keys[i], keys[child]
        vals[child], vals[i] = vals[i], vals[child]
        i = child
    return key, val, size


@nb.njit(cache=True)
def _free_row(i, col_of_row, row_of_col, v, u, row_index, free_rows, n_free, stack,
              dv, du, costs, n_pix):
    """Unassign row ``i`` and every row whose assignment that makes non-optimal.

    A column that becomes free must carry potential 0 (complementary slackness); raising
    its potential can make the edge of another assigned row to it violate dual
    feasibility, and that row is freed in turn. Each row is freed at most once.
    """
    height, width = row_index.shape
    top = 0
    r = i
    while True:
        c = col_of_row[r]
        col_of_row[r] = -2
        free_rows[n_free] = r
        n_free += 1
        if c >= 0:
            row_of_col[c] = -1
            if v[c] < 0:
                v[c] = 0
                if c < n_pix:
                    stack[top] = c
                    top += 1
        # next row to free: one whose edge to a re-zeroed column is now infeasible
        r = -1
        while r < 0 and top > 0:
            c = stack[top - 1]
            cy = c // width
            cx = c - cy * width
            for k in range(dv.shape[0]):
                y = cy + dv[k]
                x = cx + du[k]
                if 0 <= y < height and 0 <= x < width:
                    r2 = row_index[y, x]
                    if r2 >= 0 and col_of_row[r2] != -2 and costs[k] - u[r2] < 0:
                        r = r2
                        break
            if r < 0:
                top -= 1                         # column settled
        if r < 0:
            return n_free


@nb.njit(cache=True)
def _match_frames(row_ys, row_xs, row_index, frame_ptr, frame_pix, dv, du, costs,
                  outlier):
    """Exact matching of one fixed pixel set (rows) against a sequence of maps (frames).

    Rows are the pixels ``(row_ys, row_xs)``; frame ``f`` is the sorted list of linear
    pixel indices ``frame_pix[frame_ptr[f]:frame_ptr[f + 1]]``. Each row is matched to a
    distinct frame pixel within the tolerance (offsets ``dv, du`` at integer ``costs``)
    or to its private outlier at cost ``outlier``; the total cost is minimized.

    The Hungarian method with dual potentials adds rows one at a time along shortest
    augmenting paths (Dijkstra on reduced costs). Between consecutive frames the
    optimal solution is repaired rather than rebuilt: rows whose partner disappeared,
    or whose assignment a new pixel makes non-optimal (a reduced cost turns negative),
    are freed, and only those are re-augmented. The invariant (assigned edges tight,
    all reduced costs >= 0, free columns at potential 0) makes each frame's answer an
    exact optimum, the same cost as solving it from scratch.

    Returns the number of matched rows per frame, whether each frame pixel is matched
    (aligned with ``frame_pix``), and which rows are matched in the last frame.
    """
    height, width = row_index.shape
    n_pix = height * width
    n_rows = row_ys.shape[0]
    n_frames = frame_ptr.shape[0] - 1
    n_off = dv.shape[0]
    n_all = n_pix + n_rows                      # row i's outlier column is n_pix + i
    present = np.zeros(n_pix, np.bool_)
    # Each row's present candidate columns and their costs, kept up to date as pixels
    # come and go, so a row visit touches its few real neighbours, not every offset.
    nb_col = np.empty((n_rows, n_off), np.int64)
    nb_cost = np.empty((n_rows, n_off), np.int64)
    nb_len = np.zeros(n_rows, np.int64)
    u = np.zeros(n_rows, np.int64)
    v = np.zeros(n_all, np.int64)
    row_of_col = np.full(n_all, -1, np.int64)
    col_of_row = np.full(n_rows, -2, np.int64)  # -2 = free (to be augmented)
    free_rows = np.empty(n_rows, np.int64)
    stack = np.empty(n_rows + 1, np.int64)
    shortest = np.full(n_all, _INF, np.int64)
    path = np.full(n_all, -1, np.int64)
    scanned = np.zeros(n_all, np.bool_)
    touched = np.empty(n_all, np.int64)
    rows_seen = np.empty(n_rows, np.int64)
    heap_cap = n_rows * (n_off + 1) + 1
    hkeys = np.empty(heap_cap, np.int64)
    hvals = np.empty(heap_cap, np.int64)
    # A scrambled but fixed augmentation order: in raster order neighbouring rows compete
    # for the same columns one after another (long augmenting chains); scattering them
    # cuts the search work about threefold on real boundary maps.
    rank = np.argsort((np.arange(n_rows, dtype=np.uint64) * np.uint64(2654435761))
                      & np.uint64(0xFFFFFFFF))
    priority = np.empty(n_rows, np.int64)
    priority[rank] = np.arange(n_rows)

    matched_rows = np.zeros(n_frames, np.int64)
    matched_pix = np.zeros(frame_pix.shape[0], np.bool_)
    for i in range(n_rows):
        free_rows[i] = i
    n_free = n_rows
    prev_lo = 0
    prev_hi = 0
    for f in range(n_frames):
        lo = frame_ptr[f]
        hi = frame_ptr[f + 1]
        # --- pixels that left: their rows lose their partner ---------------------------
        a = prev_lo
        b = lo
        while a < prev_hi:
            p = frame_pix[a]
            while b < hi and frame_pix[b] < p:
                b += 1
            if b < hi and frame_pix[b] == p:
                a += 1
                continue
            present[p] = False
            py = p // width
            px = p - py * width
            for k in range(n_off):
                y = py + dv[k]
                x = px + du[k]
                if 0 <= y < height and 0 <= x < width:
                    r = row_index[y, x]
                    if r >= 0:
                        n = nb_len[r] - 1
                        for e in range(n + 1):
                            if nb_col[r, e] == p:
                                nb_col[r, e] = nb_col[r, n]
                                nb_cost[r, e] = nb_cost[r, n]
                                break
                        nb_len[r] = n
            r = row_of_col[p]
            if r >= 0:
                row_of_col[p] = -1
                col_of_row[r] = -2
                free_rows[n_free] = r
                n_free += 1
            v[p] = 0
            a += 1
        # --- pixels that arrived: rows that now prefer them are freed ------------------
        a = prev_lo
        for b in range(lo, hi):
            p = frame_pix[b]
            while a < prev_hi and frame_pix[a] < p:
                a += 1
            if a < prev_hi and frame_pix[a] == p:
                continue
            present[p] = True
            v[p] = 0
            row_of_col[p] = -1
            py = p // width
            px = p - py * width
            for k in range(n_off):
                y = py + dv[k]
                x = px + du[k]
                if 0 <= y < height and 0 <= x < width:
                    r = row_index[y, x]
                    if r < 0:
                        continue
                    nb_col[r, nb_len[r]] = p
                    nb_cost[r, nb_len[r]] = costs[k]
                    nb_len[r] += 1
                    if col_of_row[r] != -2 and costs[k] - u[r] < 0:
                        n_free = _free_row(r, col_of_row, row_of_col, v, u, row_index,
                                           free_rows, n_free, stack, dv, du, costs,
                                           n_pix)
        prev_lo = lo
        prev_hi = hi
        # --- free rows: feasible potentials, then shortest augmenting paths ----------
        todo = free_rows[:n_free].copy()
        todo = todo[np.argsort(priority[todo])]
        n_free = 0
        for cur in todo:
            if col_of_row[cur] != -2:
                continue                         # listed twice
            best = outlier - v[n_pix + cur]
            for e in range(nb_len[cur]):
                rc = nb_cost[cur, e] - v[nb_col[cur, e]]
                if rc < best:
                    best = rc
            u[cur] = best
            n_touched = 0
            n_seen = 0
            hsize = 0
            min_val = 0
            i = cur
            sink = -1
            while sink < 0:
                rows_seen[n_seen] = i
                n_seen += 1
                base = min_val - u[i]
                for e in range(nb_len[i]):
                    j = nb_col[i, e]
                    if scanned[j]:
                        continue
                    r = base + nb_cost[i, e] - v[j]
                    if r < shortest[j]:
                        if shortest[j] == _INF:
                            touched[n_touched] = j
                            n_touched += 1
                        shortest[j] = r
                        path[j] = i
                        # among equal distances free columns first: ends the search sooner
                        hsize = _heap_push(hkeys, hvals, hsize,
                                           2 * r + (row_of_col[j] >= 0), j)
                j = n_pix + i
                if not scanned[j]:
                    r = base + outlier - v[j]
                    if r < shortest[j]:
                        if shortest[j] == _INF:
                            touched[n_touched] = j
                            n_touched += 1
                        shortest[j] = r
                        path[j] = i
                        hsize = _heap_push(hkeys, hvals, hsize, 2 * r, j)
                while True:                      # lazy deletion of stale heap entries
                    key, j, hsize = _heap_pop(hkeys, hvals, hsize)
                    if not scanned[j] and key >> 1 == shortest[j]:
                        break
                scanned[j] = True
                min_val = key >> 1
                if row_of_col[j] < 0:
                    sink = j
                else:
                    i = row_of_col[j]
            # dual update: reduced costs stay >= 0, the new path is tight
            u[cur] += min_val
            for k in range(1, n_seen):
                r_i = rows_seen[k]
                u[r_i] += min_val - shortest[col_of_row[r_i]]
            for k in range(n_touched):
                j = touched[k]
                if scanned[j]:
                    v[j] -= min_val - shortest[j]
                shortest[j] = _INF
                scanned[j] = False
            j = sink
            while True:                          # augment
                i = path[j]
                row_of_col[j] = i
                prev = col_of_row[i]
                col_of_row[i] = j
                if i == cur:
                    break
                j = prev
        # --- read off the frame's result ---------------------------------------------
        m = 0
        for i in range(n_rows):
            if 0 <= col_of_row[i] < n_pix:
                m += 1
        matched_rows[f] = m
        for b in range(lo, hi):
            matched_pix[b] = row_of_col[frame_pix[b]] >= 0
    rows_matched = np.zeros(n_rows, np.bool_)
    for i in range(n_rows):
        rows_matched[i] = 0 <= col_of_row[i] < n_pix
    return matched_rows, matched_pix, rows_matched

class Matcher:
    """Exact pixel correspondence at a fixed image shape and tolerance.

    Precomputes the candidate offsets and integer costs once; ``match_frames`` matches
    one fixed map (a human's boundaries) against a sequence of maps (a detector's map
    thinned at increasing thresholds), reusing each solution as the start of the next.

    Parameters
    ----------
    shape : (int, int)
        Image shape (rows, cols); the tolerance is relative to its diagonal.
    max_dist : float
        Tolerance as a fraction of the image diagonal.
    outlier_cost : float
        Cost of leaving a pixel unmatched, as a multiple of the tolerance.
    """

    def __init__(self, shape, max_dist: float = DEFAULT_MAX_DIST,
                 outlier_cost: float = DEFAULT_OUTLIER_COST):
        if not max_dist > 0:
            raise InputError(f"max_dist must be positive, got {max_dist}")
        if not outlier_cost > 1:
            raise InputError(f"outlier_cost must exceed 1, got {outlier_cost}")
        self.shape = tuple(int(s) for s in shape)
        self.radius = tolerance_px(self.shape, max_dist)
        self.dv, self.du, self.costs = _offsets(self.radius)
        self.outlier = int(np.rint(outlier_cost * self.radius * COST_MULTIPLIER))

    def _check(self, bmap) -> np.ndarray:
        bmap = np.asarray(bmap)
        if bmap.shape != self.shape:
            raise InputError(f"boundary map of shape {bmap.shape} does not match the "
                             f"matcher's shape {self.shape}")
        return np.ascontiguousarray(bmap != 0)

    def match_frames(self, fixed, frames):
        """Match ``fixed`` against every map of ``frames``.

        Parameters
        ----------
        fixed : (H, W) array_like of bool
            The map matched against every frame (a human boundary map).
        frames : sequence of 1-D int64 arrays
            Each frame as the sorted linear indices (row-major) of its boundary pixels.
            Consecutive frames that share most pixels are solved fastest.

        Returns
        -------
        matched_fixed : (n_frames,) int64
            Number of matched pixels of ``fixed`` per frame.
        matched_frame : list of bool arrays
            For each frame, whether each of its listed pixels is matched.
        """
        fixed = self._check(fixed)
        ys, xs, index = _pixel_index(fixed)
        ptr = np.zeros(len(frames) + 1, np.int64)
        ptr[1:] = np.cumsum([len(f) for f in frames])
        pix = (np.concatenate(frames).astype(np.int64, copy=False) if len(frames)
               else np.zeros(0, np.int64))
        n_matched, flags, _ = _match_frames(ys, xs, index, ptr, pix, self.dv, self.du,
                                         self.costs, self.outlier)
        return n_matched, [flags[ptr[f]:ptr[f + 1]] for f in range(len(frames))]

    def match(self, bmap1, bmap2) -> tuple[np.ndarray, np.ndarray]:
        """Matched pixels of ``bmap1`` and of ``bmap2`` (boolean maps)."""
        b1 = self._check(bmap1)
        b2 = self._check(bmap2)
        # The smaller map as the augmented side keeps the search trees small.
        swap = np.count_nonzero(b1) < np.count_nonzero(b2)
        fixed, moving = (b1, b2) if swap else (b2, b1)
        frame = np.flatnonzero(moving)
        ys, xs, index = _pixel_index(fixed)
        _, flags, rows_matched = _match_frames(
            ys, xs, index, np.array([0, frame.size], np.int64),
                                 frame.astype(np.int64), self.dv, self.du, self.costs,
                                 self.outlier)
        moved = np.zeros(moving.size, bool)
        moved[frame[flags]] = True
        moved = moved.reshape(self.shape)
        fixed_matched = np.zeros(self.shape, bool)
        fixed_matched[ys[rows_matched], xs[rows_matched]] = True
        return (fixed_matched, moved) if swap else (moved, fixed_matched)


def correspond_pixels(bmap1, bmap2, max_dist: float = DEFAULT_MAX_DIST, *,
                      outlier_cost: float = DEFAULT_OUTLIER_COST):
    """Match the boundary pixels of two binary maps one-to-one, exactly.

    The objective is that of the official ``correspondPixels``: a pixel of ``bmap1``
    may be paired with a pixel of ``bmap2`` at Euclidean distance at most
    ``max_dist`` times the image diagonal; a pair costs ``rint(100 * distance)``, every
    unmatched pixel costs ``rint(100 * outlier_cost * max_dist * diagonal)``; the total
    cost is minimized.

    Parameters
    ----------
    bmap1, bmap2 : (H, W) array_like
        Binary boundary maps (nonzero = boundary pixel), same shape.
    max_dist : float, default 0.0075
        Tolerance as a fraction of the image diagonal (4.34 px on a 481x321 image).
    outlier_cost : float, default 100
        Cost of an unmatched pixel, as a multiple of the tolerance.

    Returns
    -------
    match1, match2 : (H, W) ndarray of bool
        Pixels of ``bmap1`` (``bmap2``) that were matched.

    Notes
    -----
    The official solver (Goldberg's CSA on a sparse graph whose outlier edges are drawn
    at random, with a high-cost safety net) is neither exact nor deterministic: matching
    a map with itself can leave a few pixels unmatched, and the matched count varies by
    a few pixels between calls. We minimize the same integer objective exactly with
    shortest augmenting paths (Hungarian method with potentials on the sparse candidate
    graph), so our total cost is never higher than the official one, and in practice
    our matched count is never lower. Ties between equally cheap matchings are broken
    deterministically.

    The official function returns, for each matched pixel, the index of its partner;
    the benchmark only uses whether a pixel is matched, which is what we return.

    References
    ----------
    .. [1] D. Martin, C. Fowlkes, J. Malik, "Learning to detect natural image boundaries
       using local brightness, color, and texture cues", TPAMI 26(5), 2004, App. B.
    """
    b1 = np.asarray(bmap1)
    b2 = np.asarray(bmap2)
    if b1.shape != b2.shape:
        raise InputError(f"boundary maps differ in shape: {b1.shape} vs {b2.shape}")
    return Matcher(b1.shape, max_dist, outlier_cost).match(b1, b2)
