"""Compiled kernels of the contour fit of :mod:`segbench.algorithms._owt_contours`.

Coordinates follow Maire's ``lib_image::contour_set`` (read, never copied): a pixel is
``(x, y)`` with ``x`` the row and ``y`` the column of the (H, W) mask, linear index
``x * W + y``. Its neighbours are named as there: ``n = (x, y + 1)``,
``s = (x, y - 1)``, ``e = (x + 1, y)``, ``w = (x - 1, y)``, ``ne = (x + 1, y + 1)``,
``nw = (x - 1, y + 1)``, ``se = (x + 1, y - 1)``, ``sw = (x - 1, y - 1)``; the order
in which they are tried decides which way an edge is traced, so it is kept.

The contour set lives in flat arrays: vertices ``vx, vy`` (ids in creation order),
edges ``es, ee`` (start and end vertex), and each edge's interior pixels, in tracing
order, as the slice ``bx[eo : eo + el], by[...]`` of one pixel buffer (splitting an edge
cuts its slice in two, so no pixel list is ever copied).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ..compilation import prepare_kernels
from ..primitives import find_root as _find  # the union-find of the OWT's watershed
from ..primitives import union_lower as _union

prepare_kernels()

__all__ = []

# neighbour offsets (dx = row step, dy = column step) in lib_image's n, s, e, w,
# ne, nw, se, sw order
_NX = np.array([0, 0, 1, -1, 1, -1, 1, -1], dtype=np.int64)
_NY = np.array([1, -1, 0, 0, 1, 1, -1, -1], dtype=np.int64)


@numba.njit(cache=True)
def _components(mask):
    """8-connected components of ``mask``, numbered 1.. in row-major order of their
    first pixel (``lib_image::connected_components``); 0 off the mask."""
    h, w = mask.shape
    parent = np.arange(h * w, dtype=np.int64)
    for x in range(h):
        for y in range(w):
            if not mask[x, y]:
                continue
            i = x * w + y
            for dx, dy in ((-1, -1), (-1, 0), (-1, 1), (0, -1)):
                xx = x + dx
                yy = y + dy
                if xx < 0 or yy < 0 or yy >= w or not mask[xx, yy]:
                    continue
                _union(parent, i, xx * w + yy)
    lab = np.zeros((h, w), np.int64)
    ids = np.zeros(h * w, np.int64)
    n = 0
    for x in range(h):
        for y in range(w):
            if not mask[x, y]:
                continue
            r = _find(parent, x * w + y)
            if ids[r] == 0:
                n += 1
                ids[r] = n
            lab[x, y] = ids[r]
    return lab, n


@numba.njit(cache=True)
def _is_vertex(n, s, e, w, ne, nw, se, sw):
    """Whether a pixel must be a contour vertex given which of its 8 neighbours are on
    its contour (the rules of ``is_vertex_2D``: end points, blocks of four, junctions;
    not the middle of a line or of an H)."""
    n_adj = int(n) + int(s) + int(e) + int(w)
    n_diag = int(ne) + int(nw) + int(se) + int(sw)
    nn = n_adj + n_diag
    if nn <= 1:
        return True
    if nn == 2:
        return (
            (n and (ne or nw))
            or (s and (se or sw))
            or (e and (ne or se))
            or (w and (nw or sw))
        )
    if nn == 3 or nn == 4:
        if (nw and n and w) or (n and ne and e) or (w and sw and s) or (e and s and se):
            return True
        if (nw and n and ne) or (sw and s and se) or (nw and w and sw) or (ne and e and se):
            return nn == 3
        if n_adj >= 3 or n_diag >= 3:
            return True
        if (n and se and sw) or (s and ne and nw) or (w and se and ne) or (e and nw and sw):
            return True
        if (nw and s and e) or (ne and s and w) or (sw and n and e) or (se and n and w):
            return True
        return False
    return not (n_adj == 2 and ((n and s) or (e and w)))


@numba.njit(cache=True, inline="always")
def _same(lab, x, y, label):
    return 0 <= x < lab.shape[0] and 0 <= y < lab.shape[1] and lab[x, y] == label


@numba.njit(cache=True)
def _trace(lab, isv, ise, asg, v, x, y, vx, vy, nv, es, ee, eo, el, ne, bx, by, nb):
    """Trace an edge from vertex ``v`` through its neighbour (x, y) until it reaches a
    vertex or a dead end (which becomes a new vertex); ``trace_edge``. Returns the new
    vertex and edge counts and the buffer fill."""
    hh, ww = lab.shape
    label = lab[vx[v], vy[v]]
    ise[vx[v], vy[v]] = True  # the start vertex cannot close its own edge
    start = nb
    new_vertex = False
    while True:
        bx[nb] = x
        by[nb] = y
        nb += 1
        ise[x, y] = True
        asg[x, y] = ne
        avail = np.zeros(8, np.bool_)
        for k in range(8):
            xx = x + _NX[k]
            yy = y + _NY[k]
            avail[k] = (
                0 <= xx < hh and 0 <= yy < ww and lab[xx, yy] == label and not ise[xx, yy]
            )
        step = -1
        stop = False
        for k in range(4):  # adjacent non-vertex
            if avail[k] and not isv[x + _NX[k], y + _NY[k]]:
                step = k
                break
        if step < 0:
            for k in range(4):  # adjacent vertex
                if avail[k]:
                    step = k
                    stop = True
                    break
        if step < 0:
            for k in range(4, 8):  # diagonal non-vertex
                if avail[k] and not isv[x + _NX[k], y + _NY[k]]:
                    step = k
                    break
        if step < 0:
            for k in range(4, 8):  # diagonal vertex
                if avail[k]:
                    step = k
                    stop = True
                    break
        if step < 0:
            new_vertex = True
            ise[x, y] = False
            break
        x += _NX[step]
        y += _NY[step]
        if stop:
            break
    ise[vx[v], vy[v]] = False
    if new_vertex:
        vx[nv] = x
        vy[nv] = y
        asg[x, y] = nv
        isv[x, y] = True
        nv += 1
        nb -= 1  # the dead end is the vertex
    es[ne] = v
    ee[ne] = asg[x, y]
    eo[ne] = start
    el[ne] = nb - start
    ne += 1
    return nv, ne, nb


@numba.njit(cache=True)
def _contour_set(mask):
    """Vertices and edges of the thin contours of ``mask`` (the ``contour_set``
    constructor): vertices where ``_is_vertex`` says so (row-major ids), then one
    arbitrary vertex per closed loop (its last pixel in row-major order), then every
    vertex's unvisited neighbours traced into edges, two adjacent vertices joined by an
    edge without interior pixels; vertices left without an edge (one-pixel islands)
    dropped and the others renumbered in order."""
    h, w = mask.shape
    lab, nlab = _components(mask)
    npix = 0
    for x in range(h):
        for y in range(w):
            if mask[x, y]:
                npix += 1
    cap_v = npix + 1
    cap_e = 6 * npix + 8
    vx = np.empty(cap_v, np.int64)
    vy = np.empty(cap_v, np.int64)
    es = np.empty(cap_e, np.int64)
    ee = np.empty(cap_e, np.int64)
    eo = np.empty(cap_e, np.int64)
    el = np.empty(cap_e, np.int64)
    bx = np.empty(npix + 1, np.int64)
    by = np.empty(npix + 1, np.int64)
    isv = np.zeros((h, w), np.bool_)
    ise = np.zeros((h, w), np.bool_)
    asg = np.zeros((h, w), np.int64)
    has_v = np.zeros(nlab + 1, np.bool_)
    last_x = np.zeros(nlab + 1, np.int64)
    last_y = np.zeros(nlab + 1, np.int64)
    nv = 0
    for x in range(h):
        for y in range(w):
            label = lab[x, y]
            if label == 0:
                continue
            f = np.empty(8, np.bool_)
            for k in range(8):
                f[k] = _same(lab, x + _NX[k], y + _NY[k], label)
            if _is_vertex(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]):
                vx[nv] = x
                vy[nv] = y
                asg[x, y] = nv
                isv[x, y] = True
                nv += 1
                has_v[label] = True
            last_x[label] = x
            last_y[label] = y
    for label in range(1, nlab + 1):
        if not has_v[label]:
            x = last_x[label]
            y = last_y[label]
            vx[nv] = x
            vy[nv] = y
            asg[x, y] = nv
            isv[x, y] = True
            nv += 1
    ne = 0
    nb = 0
    qx = np.empty(8, np.int64)
    qy = np.empty(8, np.int64)
    v = 0
    while v < nv:
        x0 = vx[v]
        y0 = vy[v]
        label = lab[x0, y0]
        nq = 0
        # adjacent neighbours: x - 1, x + 1, then y - 1, y + 1
        for dx in (-1, 1):
            if _same(lab, x0 + dx, y0, label):
                qx[nq] = x0 + dx
                qy[nq] = y0
                nq += 1
        for dy in (-1, 1):
            if _same(lab, x0, y0 + dy, label):
                qx[nq] = x0
                qy[nq] = y0 + dy
                nq += 1
        # diagonal neighbours not reachable through an adjacent one
        for dx in (-1, 1):
            for dy in (-1, 1):
                if (
                    _same(lab, x0 + dx, y0 + dy, label)
                    and not _same(lab, x0, y0 + dy, label)
                    and not _same(lab, x0 + dx, y0, label)
                ):
                    qx[nq] = x0 + dx
                    qy[nq] = y0 + dy
                    nq += 1
        for k in range(nq):
            xx = qx[k]
            yy = qy[k]
            if isv[xx, yy]:
                if asg[xx, yy] > v:
                    es[ne] = v
                    ee[ne] = asg[xx, yy]
                    eo[ne] = nb
                    el[ne] = 0
                    ne += 1
            elif not ise[xx, yy]:
                nv, ne, nb = _trace(
                    lab,
                    isv,
                    ise,
                    asg,
                    v,
                    xx,
                    yy,
                    vx,
                    vy,
                    nv,
                    es,
                    ee,
                    eo,
                    el,
                    ne,
                    bx,
                    by,
                    nb,
                )
        v += 1
    # drop vertices without edges
    used = np.zeros(nv, np.bool_)
    for e in range(ne):
        used[es[e]] = True
        used[ee[e]] = True
    new_id = np.full(nv, -1, np.int64)
    m = 0
    for v in range(nv):
        if used[v]:
            new_id[v] = m
            vx[m] = vx[v]
            vy[m] = vy[v]
            m += 1
        else:
            isv[vx[v], vy[v]] = False
    for e in range(ne):
        es[e] = new_id[es[e]]
        ee[e] = new_id[ee[e]]
    return vx, vy, m, es, ee, eo, el, ne, bx, by, isv


@numba.njit(cache=True, inline="always")
def _dist_segment(px, py, ax, ay, bx, by):
    """Distance from (px, py) to the segment from a to b (``distance_to_segment``,
    same operations so the same rounding)."""
    xa = bx - ax
    ya = by - ay
    xb = px - ax
    yb = py - ay
    xc = px - bx
    yc = py - by
    if xa * xc + ya * yc >= 0:
        return math.sqrt(xc * xc + yc * yc)
    if -xa * xb - ya * yb >= 0:
        return math.sqrt(xb * xb + yb * yb)
    return abs(xa * yb - ya * xb) / math.sqrt(xa * xa + ya * ya)


@numba.njit(cache=True)
def _split(e, p, vx, vy, nv, es, ee, eo, el, ne, bx, by, isv):
    """Split edge ``e`` at its interior pixel ``p`` (``split_edge``): the pixel
    becomes vertex ``nv``, ``e`` keeps the pixels before it and the new edge ``ne``
    the pixels after it."""
    k = eo[e] + p
    vx[nv] = bx[k]
    vy[nv] = by[k]
    isv[bx[k], by[k]] = True
    es[ne] = nv
    ee[ne] = ee[e]
    eo[ne] = k + 1
    el[ne] = el[e] - p - 1
    ee[e] = nv
    el[e] = p
    return nv + 1, ne + 1


@numba.njit(cache=True)
def _subdivide_local(
    vx, vy, nv, es, ee, eo, el, ne, bx, by, isv, max_angle, max_dev, tol_dist
):
    """Split every edge until it is nearly straight (``subdivide_local`` with both
    criteria on): an edge is split at its pixel farthest from its chord when some pixel
    lies farther than both ``max_dev`` times the chord length and ``tol_dist`` from
    the chord, or sees the chord from an end at more than ``max_angle``. Edges are
    processed first in, first out (both halves of a split edge queued again)."""
    q = np.empty(ne + 2 * bx.shape[0] + 8, np.int64)
    head = 0
    tail = 0
    for e in range(ne):
        q[tail] = e
        tail += 1
    while head < tail:
        e = q[head]
        head += 1
        ax = float(vx[es[e]])
        ay = float(vy[es[e]])
        cx = float(vx[ee[e]])
        cy = float(vy[ee[e]])
        rx = cx - ax
        ry = cy - ay
        length = math.sqrt(rx * rx + ry * ry)
        max_dist = max_dev * length
        pos = 0
        best = 0.0
        split = False
        for n in range(el[e]):
            px = float(bx[eo[e] + n])
            py = float(by[eo[e] + n])
            d = _dist_segment(px, py, ax, ay, cx, cy)
            if d > best:
                best = d
                pos = n
            if not split:
                split = d > max_dist and d > tol_dist
            if not split:
                sx = px - ax
                sy = py - ay
                tx = px - cx
                ty = py - cy
                a0 = math.acos(
                    (sx * rx + sy * ry) / (math.sqrt(sx * sx + sy * sy) * length)
                )
                a1 = math.acos(
                    (tx * (-rx) + ty * (-ry)) / (math.sqrt(tx * tx + ty * ty) * length)
                )
                ang = a0 if a0 > a1 else a1
                split = ang > max_angle
        if split:
            nv, ne = _split(e, pos, vx, vy, nv, es, ee, eo, el, ne, bx, by, isv)
            q[tail] = e
            q[tail + 1] = ne - 1
            tail += 2
    return nv, ne


@numba.njit(cache=True, inline="always")
def _orient(ax, ay, bx, by, cx, cy):
    """Sign of the turn a -> b -> c (exact on integers)."""
    d = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
    if d > 0:
        return 1
    if d < 0:
        return -1
    return 0


@numba.njit(cache=True)
def _gcd(a, b):
    a = abs(a)
    b = abs(b)
    while b:
        a, b = b, a % b
    return a


@numba.njit(cache=True)
def _closest(ea, eb, vx, vy, es, ee, eo, el, bx, by):
    """Distance from edge ``ea``'s pixels to edge ``eb``'s chord (the minimum)."""
    ax = float(vx[es[eb]])
    ay = float(vy[es[eb]])
    cx = float(vx[ee[eb]])
    cy = float(vy[ee[eb]])
    best = _dist_segment(float(bx[eo[ea]]), float(by[eo[ea]]), ax, ay, cx, cy)
    for n in range(1, el[ea]):
        d = _dist_segment(float(bx[eo[ea] + n]), float(by[eo[ea] + n]), ax, ay, cx, cy)
        if d < best:
            best = d
    return best


@numba.njit(cache=True)
def _mark_crossings(vx, vy, es, ee, eo, el, ne, bx, by, isv, mark, cell):
    """Mark the edges whose chords must be split so that chords meet only at vertices
    (one round of ``subdivide_global``). A chord with a vertex inside it is marked
    (an endpoint of another chord or a collinear overlap); where chords cross at a
    point that is no vertex, the chords through it, in order of direction, are
    compared in turn and the one whose pixels come closer to the other's chord is
    kept, the other marked (the first one on a tie). Returns whether any chord has a
    point of another inside it."""
    h, w = isv.shape
    found = False
    # vertices inside chords: the lattice points strictly inside each chord
    for e in range(ne):
        x0 = vx[es[e]]
        y0 = vy[es[e]]
        dx = vx[ee[e]] - x0
        dy = vy[ee[e]] - y0
        g = _gcd(dx, dy)
        for k in range(1, g):
            if isv[x0 + k * dx // g, y0 + k * dy // g]:
                mark[e] = True
                found = True
                break
    # proper crossings, found through a grid of buckets over the chords' boxes
    ncx = (h + cell - 1) // cell
    ncy = (w + cell - 1) // cell
    count = np.zeros(ncx * ncy + 1, np.int64)
    for e in range(ne):
        x0 = min(vx[es[e]], vx[ee[e]]) // cell
        x1 = max(vx[es[e]], vx[ee[e]]) // cell
        y0 = min(vy[es[e]], vy[ee[e]]) // cell
        y1 = max(vy[es[e]], vy[ee[e]]) // cell
        for cx in range(x0, x1 + 1):
            for cy in range(y0, y1 + 1):
                count[cx * ncy + cy + 1] += 1
    for c in range(ncx * ncy):
        count[c + 1] += count[c]
    fill = count[:-1].copy()
    members = np.empty(count[-1], np.int64)
    for e in range(ne):
        x0 = min(vx[es[e]], vx[ee[e]]) // cell
        x1 = max(vx[es[e]], vx[ee[e]]) // cell
        y0 = min(vy[es[e]], vy[ee[e]]) // cell
        y1 = max(vy[es[e]], vy[ee[e]]) // cell
        for cx in range(x0, x1 + 1):
            for cy in range(y0, y1 + 1):
                members[fill[cx * ncy + cy]] = e
                fill[cx * ncy + cy] += 1
    cap = 64
    ev_a = np.empty(cap, np.int64)
    ev_b = np.empty(cap, np.int64)
    ev_x = np.empty(cap, np.int64)
    ev_y = np.empty(cap, np.int64)
    ev_d = np.empty(cap, np.int64)
    nev = 0
    for c in range(ncx * ncy):
        ccx = c // ncy
        ccy = c - ccx * ncy
        for i in range(count[c], count[c + 1]):
            a = members[i]
            ax = vx[es[a]]
            ay = vy[es[a]]
            bx_ = vx[ee[a]]
            by_ = vy[ee[a]]
            for j in range(i + 1, count[c + 1]):
                b = members[j]
                cx = vx[es[b]]
                cy = vy[es[b]]
                dx = vx[ee[b]]
                dy = vy[ee[b]]
                if (
                    max(ax, bx_) < min(cx, dx)
                    or max(cx, dx) < min(ax, bx_)
                    or max(ay, by_) < min(cy, dy)
                    or max(cy, dy) < min(ay, by_)
                ):
                    continue
                o1 = _orient(ax, ay, bx_, by_, cx, cy)
                o2 = _orient(ax, ay, bx_, by_, dx, dy)
                if o1 * o2 >= 0:
                    continue
                o3 = _orient(cx, cy, dx, dy, ax, ay)
                o4 = _orient(cx, cy, dx, dy, bx_, by_)
                if o3 * o4 >= 0:
                    continue
                # the crossing a + t (b - a), t = tn / den, as a reduced fraction
                den = (bx_ - ax) * (dy - cy) - (by_ - ay) * (dx - cx)
                tn = (cx - ax) * (dy - cy) - (cy - ay) * (dx - cx)
                if den < 0:
                    den = -den
                    tn = -tn
                px = ax * den + tn * (bx_ - ax)
                py = ay * den + tn * (by_ - ay)
                g = _gcd(_gcd(px, py), den)
                px //= g
                py //= g
                den //= g
                if (px // den) // cell != ccx or (py // den) // cell != ccy:
                    continue  # counted in the bucket that holds the point
                if den == 1 and isv[px, py]:
                    continue  # a vertex inside both chords: marked above
                if nev == cap:
                    cap *= 2
                    ev_a = _grow(ev_a, cap)
                    ev_b = _grow(ev_b, cap)
                    ev_x = _grow(ev_x, cap)
                    ev_y = _grow(ev_y, cap)
                    ev_d = _grow(ev_d, cap)
                ev_a[nev] = a
                ev_b[nev] = b
                ev_x[nev] = px
                ev_y[nev] = py
                ev_d[nev] = den
                nev += 1
    if nev == 0:
        return found
    found = True
    # group the crossings by point (exact), each group's chords in direction order
    key = np.empty(nev, np.float64)
    for t in range(nev):
        key[t] = ev_x[t] / ev_d[t] * (w + 1.0) + ev_y[t] / ev_d[t]
    order = np.argsort(key, kind="mergesort")
    segs = np.empty(2 * nev, np.int64)
    angs = np.empty(2 * nev, np.float64)
    t = 0
    while t < nev:
        u = t + 1
        while u < nev and _same_point(ev_x, ev_y, ev_d, order[t], order[u]):
            u += 1
        # a point may be reported by two buckets' neighbours only once; chords unique
        m = 0
        for r in range(t, u):
            for s in (ev_a[order[r]], ev_b[order[r]]):
                dup = False
                for q in range(m):
                    if segs[q] == s:
                        dup = True
                        break
                if not dup:
                    segs[m] = s
                    angs[m] = _direction(s, vx, vy, es, ee)
                    m += 1
        # insertion sort by direction, ties by id
        for r in range(1, m):
            sv = segs[r]
            av = angs[r]
            q = r - 1
            while q >= 0 and (angs[q] > av or (angs[q] == av and segs[q] > sv)):
                segs[q + 1] = segs[q]
                angs[q + 1] = angs[q]
                q -= 1
            segs[q + 1] = sv
            angs[q + 1] = av
        ea = segs[0]
        for r in range(1, m):
            eb = segs[r]
            if el[ea] == 0:
                mark[eb] = True
                continue
            if el[eb] == 0:
                mark[ea] = True
                ea = eb
                continue
            da = _closest(ea, eb, vx, vy, es, ee, eo, el, bx, by)
            db = _closest(eb, ea, vx, vy, es, ee, eo, el, bx, by)
            if da < db:
                mark[eb] = True
            else:
                mark[ea] = True
                ea = eb
        t = u
    return found


@numba.njit(cache=True)
def _same_point(ev_x, ev_y, ev_d, i, j):
    return ev_x[i] * ev_d[j] == ev_x[j] * ev_d[i] and ev_y[i] * ev_d[j] == ev_y[j] * ev_d[i]


@numba.njit(cache=True)
def _grow(arr, cap):
    out = np.empty(cap, arr.dtype)
    out[: arr.shape[0]] = arr
    return out


@numba.njit(cache=True)
def _direction(e, vx, vy, es, ee):
    """The sweep's order of chords through a point: the angle, from -y through +x
    to +y, of the chord from its lexicographically smaller end to the larger."""
    x0 = vx[es[e]]
    y0 = vy[es[e]]
    x1 = vx[ee[e]]
    y1 = vy[ee[e]]
    if x1 < x0 or (x1 == x0 and y1 < y0):
        x0, x1 = x1, x0
        y0, y1 = y1, y0
    return math.atan2(float(x1 - x0), float(y0 - y1))


@numba.njit(cache=True)
def _quicksort(key):
    """Indices of ``key`` in the order ``lang::array::sort_subarray`` leaves them:
    quicksort, Hoare partition around the middle element (whose position is followed
    through the swaps), halves ``[low, j]`` and ``[j + 1, high]``. The order of equal
    keys (two edges joining the same vertices) decides which one is split on a tie."""
    n = key.shape[0]
    idx = np.arange(n, dtype=np.int64)
    stack = np.empty(2 * n + 2, np.int64)
    top = 0
    if n > 1:
        stack[0] = 0
        stack[1] = n - 1
        top = 2
    while top > 0:
        top -= 2
        low = stack[top]
        high = stack[top + 1]
        if low >= high:
            continue
        pivot = (low + high) // 2
        i = low
        j = high
        while True:
            while key[idx[i]] < key[idx[pivot]]:
                i += 1
            while key[idx[j]] > key[idx[pivot]]:
                j -= 1
            if i < j:
                t = idx[i]
                idx[i] = idx[j]
                idx[j] = t
                if pivot == i:
                    pivot = j
                elif pivot == j:
                    pivot = i
                i += 1
                j -= 1
            else:
                break
        stack[top] = j + 1
        stack[top + 1] = high
        stack[top + 2] = low
        stack[top + 3] = j
        top += 4
    return idx


@numba.njit(cache=True)
def _subdivide_global(vx, vy, nv, es, ee, eo, el, ne, bx, by, isv, cell):
    """Split edges until chords meet only at their ends (``subdivide_global``): first,
    of two edges joining the same two vertices, the less straight one (whose pixel
    lies farther from the common chord; on a tie the later one in
    :func:`_quicksort`'s order), then rounds of :func:`_mark_crossings`, each marked
    edge split at its pixel farthest from its chord. Returns the counts and whether a
    needed split was impossible (an edge without interior pixels: BSR throws)."""
    # edges sharing both vertices, in the order lib_image's sort leaves them
    key = np.empty(ne, np.int64)
    for e in range(ne):
        key[e] = min(es[e], ee[e]) * nv + max(es[e], ee[e])
    srt = _quicksort(key)
    n0 = ne
    prev = 0
    failed = False
    for curr in range(1, n0):
        ep = srt[prev]
        ec = srt[curr]
        if min(es[ep], ee[ep]) == min(es[ec], ee[ec]) and max(es[ep], ee[ep]) == max(
            es[ec], ee[ec]
        ):
            can_p = el[ep] > 0
            can_c = el[ec] > 0
            split_prev = False
            if can_p and can_c:
                _, dp = _farthest_from(ep, ep, vx, vy, es, ee, eo, el, bx, by)
                _, dc = _farthest_from(ec, ep, vx, vy, es, ee, eo, el, bx, by)
                split_prev = dp > dc
            elif can_p:
                split_prev = True
            elif not can_c:
                failed = True
                continue
            e = ep if split_prev else ec
            # split at the pixel farthest from the common chord (ep's ends)
            pos, _ = _farthest_from(e, ep, vx, vy, es, ee, eo, el, bx, by)
            nv, ne = _split(e, pos, vx, vy, nv, es, ee, eo, el, ne, bx, by, isv)
            if split_prev:
                prev = curr
        else:
            prev = curr
    while True:
        mark = np.zeros(ne, np.bool_)
        if not _mark_crossings(vx, vy, es, ee, eo, el, ne, bx, by, isv, mark, cell):
            break
        n_now = ne
        did = False
        for e in range(n_now):
            if not mark[e]:
                continue
            if el[e] == 0:
                failed = True
                continue
            pos, _ = _farthest_from(e, e, vx, vy, es, ee, eo, el, bx, by)
            nv, ne = _split(e, pos, vx, vy, nv, es, ee, eo, el, ne, bx, by, isv)
            did = True
        if not did:
            failed = True
            break
    return nv, ne, failed


@numba.njit(cache=True)
def _farthest_from(e, ref, vx, vy, es, ee, eo, el, bx, by):
    """Position and distance of edge ``e``'s pixel farthest from edge ``ref``'s chord
    (first one on ties)."""
    ax = float(vx[es[ref]])
    ay = float(vy[es[ref]])
    cx = float(vx[ee[ref]])
    cy = float(vy[ee[ref]])
    pos = 0
    best = 0.0
    for n in range(el[e]):
        d = _dist_segment(float(bx[eo[e] + n]), float(by[eo[e] + n]), ax, ay, cx, cy)
        if d > best:
            best = d
            pos = n
    return pos, best


@numba.njit(cache=True)
def _chord_degrees(e, vx, vy, es, ee):
    """The chord's direction as ``contours2ucm.m`` computes it: ``atan`` of the row
    step over the column step, in degrees from the column axis towards the row axis
    (-90, 90]; 90 when both ends share a column."""
    dx = vx[es[e]] - vx[ee[e]]
    dy = vy[es[e]] - vy[ee[e]]
    if dy == 0:
        return 90.0
    return math.atan(dx / dy) * 180.0 / math.pi


@numba.njit(cache=True)
def _bin(deg, k):
    """The channel of ``k`` (directions ``j 180 / k`` degrees) whose bin
    ``[(j - 1/2) 180 / k, (j + 1/2) 180 / k)`` holds ``deg`` (BSR's thresholds for 8)."""
    step = 180.0 / k
    j = int(math.floor(deg / step + 0.5))
    if deg < (j - 0.5) * step:
        j -= 1
    elif deg >= (j + 0.5) * step:
        j += 1
    return j % k


@numba.njit(cache=True)
def _transfer(h, w, vx, vy, es, ee, eo, el, ne, bx, by, stack, pb, theta, nbins, single):
    """Each edge's pixels and both its vertices take the largest, over the edges they
    lie on, of the oriented signal at the edge's chord direction: the stack's channel
    whose bin holds it, or ``pb |cos(theta - phi)|`` for a single map (``phi`` the
    chord direction rounded to ``nbins`` directions, or itself when ``nbins`` is 0).
    Pixels on no edge keep 0."""
    out = np.zeros((h, w), np.float64)
    for e in range(ne):
        deg = _chord_degrees(e, vx, vy, es, ee)
        phi = 0.0
        ch = 0
        if single:
            if nbins > 0:
                phi = _bin(deg, nbins) * math.pi / nbins
            else:
                phi = deg * math.pi / 180.0
        else:
            ch = _bin(deg, stack.shape[2])
        for n in range(-2, el[e]):
            if n == -2:
                x = vx[es[e]]
                y = vy[es[e]]
            elif n == -1:
                x = vx[ee[e]]
                y = vy[ee[e]]
            else:
                x = bx[eo[e] + n]
                y = by[eo[e] + n]
            if single:
                v = pb[x, y] * abs(math.cos(theta[x, y] - phi))
            else:
                v = stack[x, y, ch]
            if v > out[x, y]:
                out[x, y] = v
    return out
