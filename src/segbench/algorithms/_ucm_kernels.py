"""Compiled kernels of the oriented watershed transform (OWT) and the ultrametric contour
map (UCM) of Arbelaez, Maire, Fowlkes and Malik (PAMI 2011).

Grid conventions (those of BSR's ``contours2ucm.m`` and ``ucm_mean_pb``): an H x W
contour map becomes a (2H + 1) x (2W + 1) cell grid in which the image's pixel (i, j)
sits at cell (2i, 2j), the cells between two pixels at (2i, 2j + 1) and (2i + 1, 2j),
and the corners at (2i + 1, 2j + 1). Regions are made of corner cells; a boundary cell
between two corners is a cell with one odd and one even coordinate. Linear cell indices
are column-major, as MATLAB's, wherever an order decides a result (sums, ties).

Sources read (never copied): BSR ``grouping/lib/contours2ucm.m`` (watershed,
``super_contour_4c``, ``clean_watersheds``, ``normalize_output``) and ``ucm_mean_pb.cpp``
(the greedy merge by mean boundary strength and its tie order). The arcs and their
orientations (``fit_contour``) are in :mod:`._owt_contours_kernels`.
"""

from __future__ import annotations

import heapq

import numba
import numpy as np
from numba import types
from numba.typed import Dict, List

from ..compilation import prepare_kernels
from ..primitives import find_root as _find
from ..primitives import union_lower as _union

prepare_kernels()

__all__ = []

_DY = np.array([-1, -1, -1, 0, 0, 1, 1, 1], dtype=np.int64)
_DX = np.array([-1, 0, 1, -1, 1, -1, 0, 1], dtype=np.int64)


@numba.njit(cache=True)
def _super_grid(wt):
    """``super_contour_4c`` then ``clean_watersheds`` then the one-cell padding of
    ``contours2ucm.m``: the (2H + 1) x (2W + 1) grid of boundary strengths. A cell
    between two pixels holds the smaller of their strengths; corners hold 0."""
    h, w = wt.shape
    g = np.zeros((2 * h, 2 * w), np.float64)
    for i in range(h):
        for j in range(w):
            g[2 * i, 2 * j] = wt[i, j]
            if j < w - 1:
                g[2 * i, 2 * j + 1] = min(wt[i, j], wt[i, j + 1])
            if i < h - 1:
                g[2 * i + 1, 2 * j] = min(wt[i, j], wt[i + 1, j])
    for j in range(2 * w):
        g[2 * h - 1, j] = g[2 * h - 2, j]
    for i in range(2 * h):
        g[i, 2 * w - 1] = max(g[i, 2 * w - 1], g[i, 2 * w - 2])
    _clean_watersheds(g)
    out = np.zeros((2 * h + 1, 2 * w + 1), np.float64)
    out[: 2 * h, : 2 * w] = g
    out[2 * h, : 2 * w] = g[2 * h - 1, :]
    for i in range(2 * h + 1):
        out[i, 2 * w] = out[i, 2 * w - 1]
    return out


@numba.njit(cache=True, inline="always")
def _at(g, r, c):
    """A grid value, +inf outside (an out-of-grid quadrant is never chosen)."""
    if r < 0 or c < 0 or r >= g.shape[0] or c >= g.shape[1]:
        return np.inf
    return g[r, c]


@numba.njit(cache=True, inline="always")
def _set(g, r, c, v):
    if 0 <= r < g.shape[0] and 0 <= c < g.shape[1]:
        g[r, c] = v


@numba.njit(cache=True)
def _clean_watersheds(g):
    """Open each isolated zero cell (the centre of a 2 x 2 block of line pixels,
    which would be a one-cell region) towards its weakest diagonal quadrant, as
    ``clean_watersheds`` does; cells visited in column-major order."""
    n0, n1 = g.shape
    isolated = np.zeros((n0, n1), np.bool_)
    for r in range(n0):
        for c in range(n1):
            if g[r, c] != 0.0:
                continue
            alone = True
            for k in range(8):
                rr = r + _DY[k]
                cc = c + _DX[k]
                if 0 <= rr < n0 and 0 <= cc < n1 and g[rr, cc] == 0.0:
                    alone = False
                    break
            isolated[r, c] = alone
    for c in range(n1):
        for r in range(n0):
            if not isolated[r, c]:
                continue
            sr = (-1, 1, 1, -1)
            sc = (-1, -1, 1, 1)
            best = np.inf
            q = -1
            for k in range(4):
                v = max(_at(g, r + 2 * sr[k], c + sc[k]), _at(g, r + sr[k], c + 2 * sc[k]))
                if v < best:
                    best = v
                    q = k
            if q < 0:
                continue
            dr = sr[q]
            dc = sc[q]
            if _at(g, r + 2 * dr, c + dc) < _at(g, r + dr, c + 2 * dc):
                _set(g, r, c + dc, 0.0)
                _set(g, r + dr, c, best)
            else:
                _set(g, r, c + dc, best)
                _set(g, r + dr, c, 0.0)
            _set(g, r + dr, c + dc, best)


@numba.njit(cache=True)
def _fill_unlabelled(sp):
    """Give a corner that lies on a boundary (label -1: only possible on the last,
    copied row or column) the label of a labelled corner beside it. BSR's MEX would
    index its region array at -1 there."""
    h, w = sp.shape
    changed = True
    while changed:
        changed = False
        for j in range(w):
            for i in range(h):
                if sp[i, j] >= 0:
                    continue
                if i > 0 and sp[i - 1, j] >= 0:
                    sp[i, j] = sp[i - 1, j]
                elif j > 0 and sp[i, j - 1] >= 0:
                    sp[i, j] = sp[i, j - 1]
                elif i + 1 < h and sp[i + 1, j] >= 0:
                    sp[i, j] = sp[i + 1, j]
                elif j + 1 < w and sp[i, j + 1] >= 0:
                    sp[i, j] = sp[i, j + 1]
                else:
                    continue
                changed = True


@numba.njit(cache=True)
def _pair_key(a, b, n):
    if a < b:
        return a * n + b
    return b * n + a


@numba.njit(cache=True)
def _ucm_mean(grid, sp, nreg):
    """The ultrametric contour map by mean boundary strength (``ucm_mean_pb``).

    ``grid`` is the (2H + 1) x (2W + 1) boundary-strength grid, ``sp`` the H x W
    labels (0 .. nreg - 1) of its corner cells. Two adjacent regions' dissimilarity is
    the mean of ``grid`` over the cells between their corners; the pair with the
    smallest one is merged (ties: the smaller first region id, then the second, as
    pushed), the larger id absorbing the smaller, and every boundary cell takes the
    dissimilarity at which its two sides merge. Sums run in ``ucm_mean_pb``'s order
    (by neighbour, then by column-major cell index). Returns the raw map, vertices
    completed by the max of their four neighbours.
    """
    h, w = sp.shape
    gh = 2 * h + 1
    gw = 2 * w + 1
    # boundary elements seen from the smaller label: (a, b, cell)
    m = 0
    for j in range(w):
        for i in range(h):
            if i + 1 < h and sp[i + 1, j] != sp[i, j]:
                m += 1
            if j + 1 < w and sp[i, j + 1] != sp[i, j]:
                m += 1
    ea = np.empty(m, np.int64)
    eb = np.empty(m, np.int64)
    ec = np.empty(m, np.int64)
    m = 0
    for j in range(w):
        for i in range(h):
            p = sp[i, j]
            for d in range(2):
                ii = i + 1 if d == 0 else i
                jj = j if d == 0 else j + 1
                if ii >= h or jj >= w:
                    continue
                q = sp[ii, jj]
                if q == p:
                    continue
                ea[m] = min(p, q)
                eb[m] = max(p, q)
                ec[m] = (i + ii + 1) + (j + jj + 1) * gh
                m += 1
    ncell = gh * gw
    order = np.argsort((ea * nreg + eb) * ncell + ec)
    # pairs, their sums in that order
    npair = 0
    for t in range(m):
        k = order[t]
        if t == 0 or ea[k] != ea[order[t - 1]] or eb[k] != eb[order[t - 1]]:
            npair += 1
    pa = np.empty(npair, np.int64)
    pb = np.empty(npair, np.int64)
    total = np.zeros(npair, np.float64)
    length = np.zeros(npair, np.float64)
    elem_pair = np.empty(m, np.int64)
    p_id = -1
    for t in range(m):
        k = order[t]
        if t == 0 or ea[k] != ea[order[t - 1]] or eb[k] != eb[order[t - 1]]:
            p_id += 1
            pa[p_id] = ea[k]
            pb[p_id] = eb[k]
        total[p_id] += grid[ec[k] % gh, ec[k] // gh]
        length[p_id] += 1.0
        elem_pair[k] = p_id
    energy = total / length
    level = np.zeros(npair, np.float64)
    parent = np.arange(npair, dtype=np.int64)
    dead = np.zeros(npair, np.bool_)
    active = np.ones(nreg, np.bool_)
    pair_of = Dict.empty(key_type=types.int64, value_type=types.int64)
    adj = List()
    for _ in range(nreg):
        lst = List.empty_list(types.int64)
        adj.append(lst)
    heap = [(0.0, np.int64(0), np.int64(0))]
    heap.pop()
    for k in range(npair):
        pair_of[pa[k] * nreg + pb[k]] = k
        adj[pa[k]].append(k)
        adj[pb[k]].append(k)
        heap.append((energy[k], pa[k], pb[k]))
    heapq.heapify(heap)
    while len(heap) > 0:
        e, r1, r2 = heapq.heappop(heap)
        if not active[r1] or not active[r2]:
            continue
        key = _pair_key(r1, r2, nreg)
        if key not in pair_of:
            continue
        k = pair_of[key]
        if energy[k] != e:
            continue
        son = min(r1, r2)
        father = max(r1, r2)
        level[k] = total[k] / length[k]
        dead[k] = True
        del pair_of[key]
        active[son] = False
        for q in adj[son]:
            if dead[q]:
                continue
            x = pb[q] if pa[q] == son else pa[q]
            del pair_of[_pair_key(son, x, nreg)]
            k2 = _pair_key(father, x, nreg)
            if k2 in pair_of:
                into = pair_of[k2]
                total[into] += total[q]
                length[into] += length[q]
                parent[q] = into
                dead[q] = True
            else:
                if pa[q] == son:
                    pa[q] = father
                else:
                    pb[q] = father
                pair_of[k2] = q
                adj[father].append(q)
        adj[son] = List.empty_list(types.int64)
        kept = List.empty_list(types.int64)
        for q in adj[father]:
            if dead[q]:
                continue
            kept.append(q)
            x = pb[q] if pa[q] == father else pa[q]
            energy[q] = total[q] / length[q]
            heapq.heappush(heap, (energy[q], x, father))
        adj[father] = kept
    ucm = np.zeros((gh, gw), np.float64)
    for t in range(m):
        r = _find(parent, elem_pair[t])
        c = ec[t]
        ucm[c % gh, c // gh] = level[r]
    for x in range(0, gh, 2):
        for y in range(0, gw, 2):
            best = 0.0
            if x + 1 < gh and ucm[x + 1, y] > best:
                best = ucm[x + 1, y]
            if x > 0 and ucm[x - 1, y] > best:
                best = ucm[x - 1, y]
            if y + 1 < gw and ucm[x, y + 1] > best:
                best = ucm[x, y + 1]
            if y > 0 and ucm[x, y - 1] > best:
                best = ucm[x, y - 1]
            ucm[x, y] = best
    return ucm


@numba.njit(cache=True)
def _heap_push(hv, hc, hi, n, v, c, i):
    """Push (v, c, i) on a binary min-heap of n items ordered by (v, c)."""
    k = n
    hv[k] = v
    hc[k] = c
    hi[k] = i
    while k > 0:
        p = (k - 1) >> 1
        if hv[p] < hv[k] or (hv[p] == hv[k] and hc[p] < hc[k]):
            break
        hv[p], hv[k] = hv[k], hv[p]
        hc[p], hc[k] = hc[k], hc[p]
        hi[p], hi[k] = hi[k], hi[p]
        k = p
    return n + 1


@numba.njit(cache=True)
def _heap_pop(hv, hc, hi, n):
    """Pop the smallest item; returns (index, n - 1)."""
    top = hi[0]
    n -= 1
    hv[0] = hv[n]
    hc[0] = hc[n]
    hi[0] = hi[n]
    k = 0
    while True:
        a = 2 * k + 1
        if a >= n:
            break
        b = a + 1
        m = a
        if b < n and (hv[b] < hv[a] or (hv[b] == hv[a] and hc[b] < hc[a])):
            m = b
        if hv[k] < hv[m] or (hv[k] == hv[m] and hc[k] < hc[m]):
            break
        hv[m], hv[k] = hv[k], hv[m]
        hc[m], hc[k] = hc[k], hc[m]
        hi[m], hi[k] = hi[k], hi[m]
        k = m
    return top, n


@numba.njit(cache=True, inline="always")
def _queue_neighbours(i, h, w, flat, queued, hv, hc, hi, size, counter):
    """Push the 8-neighbours of pixel i not yet queued, in arrival order."""
    y = i // w
    x = i - y * w
    for k in range(8):
        yy = y + _DY[k]
        xx = x + _DX[k]
        if yy < 0 or yy >= h or xx < 0 or xx >= w:
            continue
        j = yy * w + xx
        if not queued[j]:
            queued[j] = True
            size = _heap_push(hv, hc, hi, size, flat[j], counter, j)
            counter += 1
    return size, counter


@numba.njit(cache=True)
def _watershed(img):
    """Watershed of ``img`` by flooding from its regional minima (Meyer's algorithm,
    as MATLAB's ``watershed`` with 8-connectivity): basins are numbered 1.. in
    row-major order of their minimum; a pixel reached by two basins is a line pixel
    (0), so no two basins are 8-adjacent. Pixels of equal value flood in the order
    they were reached (first in, first out)."""
    h, w = img.shape
    n = h * w
    flat = img.ravel()
    # regional minima: 8-connected plateaus with no lower neighbour
    parent = np.arange(n, dtype=np.int64)
    lower = np.zeros(n, np.bool_)
    for y in range(h):
        for x in range(w):
            i = y * w + x
            v = flat[i]
            for k in range(8):
                yy = y + _DY[k]
                xx = x + _DX[k]
                if yy < 0 or yy >= h or xx < 0 or xx >= w:
                    continue
                j = yy * w + xx
                if flat[j] < v:
                    lower[i] = True
                elif flat[j] == v and j < i:
                    _union(parent, i, j)
    not_min = np.zeros(n, np.bool_)
    for i in range(n):
        if lower[i]:
            not_min[_find(parent, i)] = True
    labels = np.zeros(n, np.int32)
    root_label = np.zeros(n, np.int32)
    nlab = 0
    for i in range(n):
        r = _find(parent, i)
        if not_min[r]:
            continue
        if root_label[r] == 0:
            nlab += 1
            root_label[r] = nlab
        labels[i] = root_label[r]
    # flooding
    LINE = -1
    queued = np.zeros(n, np.bool_)
    hv = np.empty(n, np.float64)
    hc = np.empty(n, np.int64)
    hi = np.empty(n, np.int64)
    size = 0
    counter = 0
    for i in range(n):
        if labels[i] > 0:
            queued[i] = True
    for i in range(n):
        if labels[i] <= 0:
            continue
        size, counter = _queue_neighbours(i, h, w, flat, queued, hv, hc, hi, size, counter)
    while size > 0:
        i, size = _heap_pop(hv, hc, hi, size)
        y = i // w
        x = i - y * w
        lab = 0
        for k in range(8):
            yy = y + _DY[k]
            xx = x + _DX[k]
            if yy < 0 or yy >= h or xx < 0 or xx >= w:
                continue
            other = labels[yy * w + xx]
            if other > 0:
                if lab == 0:
                    lab = other
                elif other != lab:
                    lab = LINE
                    break
        if lab == LINE or lab == 0:
            labels[i] = LINE
            continue
        labels[i] = lab
        size, counter = _queue_neighbours(i, h, w, flat, queued, hv, hc, hi, size, counter)
    for i in range(n):
        if labels[i] < 0:
            labels[i] = 0
    return labels.reshape(h, w)
