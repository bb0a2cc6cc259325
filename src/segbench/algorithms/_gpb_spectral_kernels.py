"""Compiled kernels of gPb's spectral cue: the intervening-contour affinity of BSR's
``buildW`` (Fowlkes' BSE code: ``ic.cc``, ``affinity.cc``, ``smatrix.cc``).

Coordinates here follow buildW, not the rest of segbench: ``x`` is the column and ``y``
the row. The mPb enters as its dual lattice, two float32 maps of crossed-edge
strengths: ``hl[y, x]`` is the edge between rows ``y - 1`` and ``y`` in column ``x``
(``mpb[y - 1, x]``, the upper pixel; 0 for ``y = 0``) and ``vl[y, x]`` the edge between
columns ``x - 1`` and ``x`` in row ``y`` (``mpb[y, x - 1]``, the left pixel; 0 for
``x = 0``). buildW stores them as float, and every step below runs in float32 where
the C++ does, so W matches the original bit for bit (checked on BSDS 101085, 101087).

Sources read (never copied): ``grouping/source/buildW/{ic.cc, affinity.cc, smatrix.cc,
buildW.cpp}`` of BSR (Arbelaez, Maire, Fowlkes, Malik 2011).
"""

from __future__ import annotations

import numba
import numpy as np

from ..compilation import prepare_kernels

prepare_kernels()

__all__ = []

_SCAN_CAP = 64  # room per scan line; BSR's own holds 2 wr + 1 (checked, never overflows)


@numba.njit(cache=True)
def _ic_walk(
    hl,
    vl,
    thresh,
    x0,
    y0,
    x1,
    y1,
    x2,
    y2,
    x3,
    y3,
    wr,
    px,
    py,
    psim,
    scan_x,
    scan_sim,
    scan_count,
):
    """Walk the Bresenham line from (x0, y0) to the box-boundary pixel (x2, y2).

    (x1, y1) and (x3, y3) are its two neighbours on the box boundary. A pixel of the
    walk is recorded (into ``scan_*``, the row ``y - y0 + wr``) only if this line is
    its best approximant among the three (an exact integer test on squared cosines),
    with ``sim = 1 - maxpb``, maxpb the running max of the crossed lattice edges.
    Recorded points go into their scan lines outward-to-inward for octants 2-5 so that
    every scan line stays in increasing x.
    """
    dx1 = np.int64(x1 - x0)
    dy1 = np.int64(y1 - y0)
    dx2 = np.int64(x2 - x0)
    dy2 = np.int64(y2 - y0)
    dx3 = np.int64(x3 - x0)
    dy3 = np.int64(y3 - y0)
    dot11 = dx1 * dx1 + dy1 * dy1
    dot22 = dx2 * dx2 + dy2 * dy2
    dot33 = dx3 * dx3 + dy3 * dy3

    dx = x2 - x0
    dy = y2 - y0
    adx = abs(dx)
    ady = abs(dy)
    # octant i covers pi/4 * [i, i + 1)
    if dx > 0 and dy >= 0:
        octant = 0 if adx > ady else 1
    elif dx <= 0 and dy > 0:
        octant = 2 if adx < ady else 3
    elif dy <= 0 and dx < 0:
        octant = 4 if adx > ady else 5
    else:
        octant = 6 if adx < ady else 7
    if octant == 0 or octant == 3 or octant == 4 or octant == 7:
        t = -adx
    else:
        t = -ady

    maxpb = np.float32(0.0)
    xi = x0
    yi = y0
    oldx = xi
    oldy = yi
    count = 0
    while xi != x2 or yi != y2:
        if octant == 0:
            xi += 1
            t += ady << 1
            if t > 0:
                yi += 1
                t -= adx << 1
        elif octant == 1:
            yi += 1
            t += adx << 1
            if t > 0:
                xi += 1
                t -= ady << 1
        elif octant == 2:
            yi += 1
            t += adx << 1
            if t > 0:
                xi -= 1
                t -= ady << 1
        elif octant == 3:
            xi -= 1
            t += ady << 1
            if t > 0:
                yi += 1
                t -= adx << 1
        elif octant == 4:
            xi -= 1
            t += ady << 1
            if t > 0:
                yi -= 1
                t -= adx << 1
        elif octant == 5:
            yi -= 1
            t += adx << 1
            if t > 0:
                xi -= 1
                t -= ady << 1
        elif octant == 6:
            yi -= 1
            t += adx << 1
            if t > 0:
                xi += 1
                t -= ady << 1
        else:
            xi += 1
            t += ady << 1
            if t > 0:
                yi -= 1
                t -= adx << 1

        dxi = np.int64(xi - x0)
        dyi = np.int64(yi - y0)
        dotii = dxi * dxi + dyi * dyi
        doti1 = dxi * dx1 + dyi * dy1
        doti2 = dxi * dx2 + dyi * dy2
        doti3 = dxi * dx3 + dyi * dy3
        good = (doti2 * doti2 == dotii * dot22) or (
            dot11 * doti2 * doti2 > dot22 * doti1 * doti1
            and dot33 * doti2 * doti2 >= dot22 * doti3 * doti3
        )

        # the lattice edges crossed by this step (hl/vl indexed [y, x])
        cross = np.float32(0.0)
        if oldx == xi:
            if yi > oldy:
                cross = hl[yi, xi]
            elif yi < oldy:
                cross = hl[oldy, oldx]
        elif oldy == yi:
            if xi > oldx:
                cross = vl[yi, xi]
            elif xi < oldx:
                cross = vl[oldy, oldx]
        else:
            if xi > oldx and yi > oldy:
                cross = max(cross, hl[yi, oldx])
                cross = max(cross, hl[yi, xi])
                cross = max(cross, vl[oldy, xi])
                cross = max(cross, vl[yi, xi])
            elif xi > oldx and yi < oldy:
                cross = max(cross, hl[oldy, oldx])
                cross = max(cross, hl[oldy, xi])
                cross = max(cross, vl[oldy, xi])
                cross = max(cross, vl[yi, xi])
            elif xi < oldx and yi > oldy:
                cross = max(cross, hl[yi, oldx])
                cross = max(cross, hl[yi, xi])
                cross = max(cross, vl[oldy, oldx])
                cross = max(cross, vl[yi, oldx])
            else:
                cross = max(cross, hl[oldy, oldx])
                cross = max(cross, hl[oldy, xi])
                cross = max(cross, vl[oldy, oldx])
                cross = max(cross, vl[yi, oldx])
        maxpb = max(maxpb, cross)
        oldx = xi
        oldy = yi
        if not good:
            continue
        if maxpb > thresh:
            break
        px[count] = xi
        py[count] = yi
        psim[count] = np.float32(1.0) - maxpb
        count += 1

    if octant == 0 or octant == 1 or octant == 6 or octant == 7:
        for i in range(count):
            _scan_put(px[i], py[i] - y0 + wr, psim[i], scan_x, scan_sim, scan_count)
    else:
        for i in range(count - 1, -1, -1):
            _scan_put(px[i], py[i] - y0 + wr, psim[i], scan_x, scan_sim, scan_count)


@numba.njit(cache=True, inline="always")
def _scan_put(x, row, sim, scan_x, scan_sim, scan_count):
    k = scan_count[row]
    if k < scan_x.shape[1]:
        scan_x[row, k] = x
        scan_sim[row, k] = sim
    scan_count[row] = k + 1  # counted even past the room, so an overflow shows


@numba.njit(cache=True)
def _intervening_contour(
    hl,
    vl,
    width,
    height,
    thresh,
    x0,
    y0,
    wr,
    px,
    py,
    psim,
    scan_x,
    scan_sim,
    scan_count,
    adj_x,
    adj_y,
    adj_sim,
):
    """The support map of pixel (x0, y0): every pixel of the (2 wr + 1)^2 box (clipped
    to the image) reached by a best-approximant Bresenham line, with ``1 - maxpb``, in
    scan-line order (``adj_*``). Returns the count, or -1 if a scan line overflowed.

    The lines go to every box-boundary pixel, clockwise from the left side over the
    top to the right side above y0, then counter-clockwise from the left side below
    y0 over the bottom to the right side; the box corners next to p0 get sim 1
    directly (ic.cc's order and corner cases, which decide which line records a pixel).
    """
    for i in range(scan_count.shape[0]):
        scan_count[i] = 0
    rxa = max(0, x0 - wr)
    rya = max(0, y0 - wr)
    rxb = min(x0 + wr, width - 1)
    ryb = min(y0 + wr, height - 1)
    one = np.float32(1.0)

    if x0 > rxa:  # left, upward
        if y0 > 0 and y0 < ryb:
            _ic_walk(
                hl,
                vl,
                thresh,
                x0,
                y0,
                rxa,
                y0 - 1,
                rxa,
                y0,
                rxa,
                y0 + 1,
                wr,
                px,
                py,
                psim,
                scan_x,
                scan_sim,
                scan_count,
            )
        for y in range(y0 - 1, rya, -1):
            _ic_walk(
                hl,
                vl,
                thresh,
                x0,
                y0,
                rxa,
                y - 1,
                rxa,
                y,
                rxa,
                y + 1,
                wr,
                px,
                py,
                psim,
                scan_x,
                scan_sim,
                scan_count,
            )
    if x0 > rxa + 1 or y0 > rya + 1 or (x0 > rxa and y0 > rya):  # top-left
        _ic_walk(
            hl,
            vl,
            thresh,
            x0,
            y0,
            rxa,
            rya + 1,
            rxa,
            rya,
            rxa + 1,
            rya,
            wr,
            px,
            py,
            psim,
            scan_x,
            scan_sim,
            scan_count,
        )
    if (x0 == rxa and y0 == rya + 1) or (x0 == rxa + 1 and y0 == rya):
        _scan_put(rxa, rya - y0 + wr, one, scan_x, scan_sim, scan_count)
    if y0 > rya:  # top
        for x in range(rxa + 1, rxb):
            _ic_walk(
                hl,
                vl,
                thresh,
                x0,
                y0,
                x - 1,
                rya,
                x,
                rya,
                x + 1,
                rya,
                wr,
                px,
                py,
                psim,
                scan_x,
                scan_sim,
                scan_count,
            )
    if y0 > rya + 1 or x0 < rxb - 1 or (y0 > rya and x0 < rxb):  # top-right
        _ic_walk(
            hl,
            vl,
            thresh,
            x0,
            y0,
            rxb - 1,
            rya,
            rxb,
            rya,
            rxb,
            rya + 1,
            wr,
            px,
            py,
            psim,
            scan_x,
            scan_sim,
            scan_count,
        )
    if (x0 == rxb - 1 and y0 == rya) or (x0 == rxb and y0 == rya + 1):
        _scan_put(rxb, rya - y0 + wr, one, scan_x, scan_sim, scan_count)
    if x0 < rxb:  # right, above y0
        for y in range(rya + 1, y0):
            _ic_walk(
                hl,
                vl,
                thresh,
                x0,
                y0,
                rxb,
                y - 1,
                rxb,
                y,
                rxb,
                y + 1,
                wr,
                px,
                py,
                psim,
                scan_x,
                scan_sim,
                scan_count,
            )

    if x0 > rxa:  # left, downward
        for y in range(y0 + 1, ryb):
            _ic_walk(
                hl,
                vl,
                thresh,
                x0,
                y0,
                rxa,
                y - 1,
                rxa,
                y,
                rxa,
                y + 1,
                wr,
                px,
                py,
                psim,
                scan_x,
                scan_sim,
                scan_count,
            )
    if x0 > rxa + 1 or y0 < ryb - 1 or (x0 > rxa and y0 < ryb):  # bottom-left
        _ic_walk(
            hl,
            vl,
            thresh,
            x0,
            y0,
            rxa,
            ryb - 1,
            rxa,
            ryb,
            rxa + 1,
            ryb,
            wr,
            px,
            py,
            psim,
            scan_x,
            scan_sim,
            scan_count,
        )
    if (x0 == rxa and y0 == ryb - 1) or (x0 == rxa + 1 and y0 == ryb):
        _scan_put(rxa, ryb - y0 + wr, one, scan_x, scan_sim, scan_count)
    if y0 < ryb:  # bottom
        for x in range(rxa + 1, rxb):
            _ic_walk(
                hl,
                vl,
                thresh,
                x0,
                y0,
                x - 1,
                ryb,
                x,
                ryb,
                x + 1,
                ryb,
                wr,
                px,
                py,
                psim,
                scan_x,
                scan_sim,
                scan_count,
            )
    if y0 < ryb - 1 or x0 < rxb - 1 or (y0 < ryb and x0 < rxb):  # bottom-right
        _ic_walk(
            hl,
            vl,
            thresh,
            x0,
            y0,
            rxb - 1,
            ryb,
            rxb,
            ryb,
            rxb,
            ryb - 1,
            wr,
            px,
            py,
            psim,
            scan_x,
            scan_sim,
            scan_count,
        )
    if (x0 == rxb - 1 and y0 == ryb) or (x0 == rxb and y0 == ryb - 1):
        _scan_put(rxb, ryb - y0 + wr, one, scan_x, scan_sim, scan_count)
    if x0 < rxb:  # right, below y0
        for y in range(ryb - 1, y0, -1):
            _ic_walk(
                hl,
                vl,
                thresh,
                x0,
                y0,
                rxb,
                y - 1,
                rxb,
                y,
                rxb,
                y + 1,
                wr,
                px,
                py,
                psim,
                scan_x,
                scan_sim,
                scan_count,
            )
        if y0 > 0 and y0 < ryb:
            _ic_walk(
                hl,
                vl,
                thresh,
                x0,
                y0,
                rxb,
                y0 - 1,
                rxb,
                y0,
                rxb,
                y0 + 1,
                wr,
                px,
                py,
                psim,
                scan_x,
                scan_sim,
                scan_count,
            )

    count = 0
    for row in range(scan_count.shape[0]):
        n = scan_count[row]
        if n > scan_x.shape[1]:
            return -1
        for i in range(n):
            adj_x[count] = scan_x[row, i]
            adj_y[count] = row + y0 - wr
            adj_sim[count] = scan_sim[row, i]
            count += 1
    return count


@numba.njit(cache=True, inline="always")
def _pss(ic):
    """affinity.cc's ``C_IC_SS``: the logistic P(same segment | intervening contour
    ``ic``), with the C++'s float/double mix (float accumulator, double constants)."""
    val = np.float32(np.float64(np.float32(1.8682)) + (np.float64(ic) / 0.3130) * -1.3113)
    post = np.float32(1.0 / (1.0 + np.float64(np.exp(-val))))
    if not np.isfinite(post):
        return np.float32(0.0)
    if post < 0:
        return np.float32(0.0)
    if post > 1:
        return np.float32(1.0)
    return post


@numba.njit(cache=True)
def row_counts(height, width, wr, r2):
    """Entries per row of W: the offsets (du, dv) with du^2 + dv^2 <= r2 that stay in
    the image, self included. int64 (height * width,)."""
    out = np.zeros(height * width, np.int64)
    for y in range(height):
        for x in range(width):
            n = 0
            for u in range(-wr, wr + 1):
                yy = y + u
                if yy < 0 or yy >= height:
                    continue
                for v in range(-wr, wr + 1):
                    xx = x + v
                    if xx < 0 or xx >= width or u * u + v * v > r2:
                        continue
                    n += 1
            out[y * width + x] = n
    return out


@numba.njit(cache=True)
def _affinity_work(wr):
    """Scratch of :func:`_affinity_values` for radius ``wr``."""
    n_box = (2 * wr + 1) * (2 * wr + 1)
    return (
        np.empty(4 * wr + 2, np.int64),
        np.empty(4 * wr + 2, np.int64),
        np.empty(4 * wr + 2, np.float32),
        np.empty((2 * wr + 1, _SCAN_CAP), np.int64),
        np.empty((2 * wr + 1, _SCAN_CAP), np.float32),
        np.zeros(2 * wr + 1, np.int64),
        np.empty(4 * n_box, np.int64),
        np.empty(4 * n_box, np.int64),
        np.empty(4 * n_box, np.float32),
    )


@numba.njit(cache=True, inline="always")
def _affinity_values(hl, vl, height, width, wr, r2, sigma, thresh, x, y, work, vals):
    """Row p = (y, x) of the unsymmetrised W: ``vals[j]`` for the j-th pixel q of
    p's disc that lies in the image, in (row offset, column offset) order, so in
    increasing column index of W. Returns False if p's support map overflowed (then
    every q counts as behind a contour of 1)."""
    px, py, psim, scan_x, scan_sim, scan_count, adj_x, adj_y, adj_sim = work
    n = _intervening_contour(
        hl,
        vl,
        width,
        height,
        thresh,
        x,
        y,
        wr,
        px,
        py,
        psim,
        scan_x,
        scan_sim,
        scan_count,
        adj_x,
        adj_y,
        adj_sim,
    )
    ok = n >= 0
    if not ok:
        n = 0
    one = np.float32(1.0)
    clear = _clear_weight(sigma)
    j = 0
    ic = 0
    for u in range(-wr, wr + 1):
        yy = y + u
        for v in range(-wr, wr + 1):
            xx = x + v
            if xx < 0 or xx >= width or yy < 0 or yy >= height:
                continue
            if u * u + v * v > r2:
                continue
            # affinity.cc's scan: x is compared without y, as there
            while ic < n and adj_y[ic] < yy:
                ic += 1
            while ic < n and adj_x[ic] < xx:
                ic += 1
            if u == 0 and v == 0:
                vals[j] = np.exp(np.float32(-(one - one) / sigma))
            else:
                icsim = np.float32(0.0)
                if ic < n and adj_x[ic] == xx and adj_y[ic] == yy:
                    icsim = adj_sim[ic]
                    ic += 1
                vals[j] = _weight(icsim, sigma, clear)
            j += 1
    return ok


@numba.njit(cache=True, inline="always")
def _clear_weight(sigma):
    """The weight of a pair whose line crosses no contour (icsim = 1)."""
    one = np.float32(1.0)
    return np.exp(np.float32(-(one - _pss(one - one)) / sigma))


@numba.njit(cache=True, inline="always")
def _weight(icsim, sigma, clear):
    """``exp(-(1 - C_IC_SS(1 - icsim)) / sigma)`` in float32; ``clear`` for icsim = 1
    (most pairs on a thinned mPb), computed once rather than per pair."""
    one = np.float32(1.0)
    if icsim == one:
        return clear
    return np.exp(np.float32(-(one - _pss(one - icsim)) / sigma))


@numba.njit(cache=True)
def _probe_values(hl, vl, wr, r2, sigma, thresh, x, y, vals):
    """:func:`_affinity_values` of one pixel (building the interior program)."""
    _affinity_values(
        hl,
        vl,
        hl.shape[0] - 1,
        hl.shape[1],
        wr,
        r2,
        sigma,
        thresh,
        x,
        y,
        _affinity_work(wr),
        vals,
    )


#: A ``program`` argument that makes every pixel take the walk (tests compare with it).
WALK_ONLY = (
    np.zeros(1, np.int64),
    np.zeros(0, np.int64),
    np.zeros(0, np.int64),
    np.zeros(0, np.int64),
    np.zeros(0, np.float32),
)


def interior_program(wr, r2, sigma, thresh):
    """What the walk computes for a pixel whose (2 wr + 1)^2 box lies inside the image:
    the same for every such pixel, up to translation, since which lines record which
    pixels (and in which order the affinity finds them) depends on offsets only.

    Found by probing :func:`_affinity_values` at the centre of a small map: one
    crossed-edge value set to 0.5 at a time, the offsets whose weight changes depend on
    that edge. Returns ``(eptr, ekind, edy, edx, const)``: offset j's maxpb is the max
    of the edges ``eptr[j]:eptr[j + 1]`` (kind 0: ``hl``, 1: ``vl``, at the pixel's
    row + edy, column + edx); an offset with no edge (the pixel itself, or a pixel no
    line records) has the fixed weight ``const[j]``. Valid while the walk never stops
    early (``thresh`` >= 1 with crossed values in [0, 1], as for every mPb).
    """
    if thresh < 1:
        raise ValueError("interior_program: the walk may stop early below thresh 1")
    side = 2 * wr + 5
    c = wr + 2
    hl = np.zeros((side + 1, side), np.float32)
    vl = np.zeros((side, side + 1), np.float32)
    nj = sum(
        1 for u in range(-wr, wr + 1) for v in range(-wr, wr + 1) if u * u + v * v <= r2
    )
    base = np.empty(nj, np.float32)
    _probe_values(hl, vl, wr, r2, sigma, thresh, c, c, base)
    deps = [[] for _ in range(nj)]
    probe = np.empty(nj, np.float32)
    for kind, arr in ((0, hl), (1, vl)):
        for yy in range(arr.shape[0]):
            for xx in range(arr.shape[1]):
                arr[yy, xx] = 0.5
                _probe_values(hl, vl, wr, r2, sigma, thresh, c, c, probe)
                arr[yy, xx] = 0.0
                for j in np.flatnonzero(probe != base):
                    deps[j].append((kind, yy - c, xx - c))
    clear = _clear_weight(np.float32(sigma))
    if any(d and base[j] != clear for j, d in enumerate(deps)):
        raise RuntimeError("interior program: a found pixel without the clear weight")
    eptr = np.zeros(nj + 1, np.int64)
    eptr[1:] = np.cumsum([len(d) for d in deps])
    flat = [e for d in deps for e in d]
    ekind = np.array([e[0] for e in flat], np.int64)
    edy = np.array([e[1] for e in flat], np.int64)
    edx = np.array([e[2] for e in flat], np.int64)
    return eptr, ekind, edy, edx, base


@numba.njit(cache=True, inline="always")
def _row_buffers(wr):
    """A row's values and its in-image offsets (rows, columns), room for the box."""
    nbox = (2 * wr + 1) * (2 * wr + 1)
    return np.empty(nbox, np.float32), np.empty(nbox, np.int64), np.empty(nbox, np.int64)


@numba.njit(cache=True, inline="always")
def _disc_in_image(height, width, wr, r2, x, y, du, dv):
    """The offsets (du[j], dv[j]) (rows, columns) of pixel (y, x)'s disc that stay in
    the image, in :func:`_affinity_values`' order; returns their count."""
    n = 0
    for u in range(-wr, wr + 1):
        yy = y + u
        for v in range(-wr, wr + 1):
            xx = x + v
            if xx < 0 or xx >= width or yy < 0 or yy >= height or u * u + v * v > r2:
                continue
            du[n] = u
            dv[n] = v
            n += 1
    return n


@numba.njit(cache=True, inline="always")
def _row_values(hl, vl, height, width, wr, r2, sigma, thresh, x, y, work, program, vals):
    """:func:`_affinity_values` of pixel (y, x), from :func:`interior_program`'s
    ``program`` where its box lies inside the image (the same values, a sixth of the
    time), else by the walk; :data:`WALK_ONLY` as ``program``: by the walk always."""
    eptr, ekind, edy, edx, const = program
    if eptr.shape[0] == 1 or not (wr <= y < height - wr and wr <= x < width - wr):
        return _affinity_values(
            hl, vl, height, width, wr, r2, sigma, thresh, x, y, work, vals
        )
    clear = _clear_weight(sigma)
    one = np.float32(1.0)
    for j in range(eptr.shape[0] - 1):
        if eptr[j] == eptr[j + 1]:
            vals[j] = const[j]
            continue
        m = np.float32(0.0)
        for e in range(eptr[j], eptr[j + 1]):
            if ekind[e] == 0:
                m = max(m, hl[y + edy[e], x + edx[e]])
            else:
                m = max(m, vl[y + edy[e], x + edx[e]])
        vals[j] = _weight(one - m, sigma, clear)
    return True


@numba.njit(cache=True, inline="always")
def _pixel_row(
    hl, vl, height, width, wr, r2, sigma, thresh, x, y, work, program, vals, du, dv
):
    """Pixel (y, x)'s row of W before symmetrising: (n, ok), its n values in ``vals``
    at the offsets (``du``, ``dv``) of its disc that lie in the image (what both layouts
    of W store), ok False where a support map's scan line overflowed."""
    ok = _row_values(
        hl, vl, height, width, wr, r2, sigma, thresh, x, y, work, program, vals
    )
    return _disc_in_image(height, width, wr, r2, x, y, du, dv), ok


@numba.njit(cache=True)
def affinity_rows(
    hl, vl, height, width, wr, r2, sigma, thresh, program, indptr, indices, data
):
    """Fill the rows of the (unsymmetrised) affinity W in CSR, pixel ``y * width + x``.

    Row p holds, in increasing column order, every q with ``|q - p|^2 <= r2`` in the
    image: ``W_pp = 1`` and ``W_pq = exp(-(1 - C_IC_SS(1 - icsim)) / sigma)`` in
    float32, ``icsim`` looked up in p's support map with affinity.cc's two-pointer scan
    (0 where q is not found: an intervening contour of 1). ``program`` is
    :func:`interior_program`'s. Returns the number of support maps whose scan line
    overflowed (0 always, in practice).
    """
    work = _affinity_work(wr)
    vals, du, dv = _row_buffers(wr)
    overflow = 0
    for y in range(height):
        for x in range(width):
            n, ok = _pixel_row(
                hl,
                vl,
                height,
                width,
                wr,
                r2,
                sigma,
                thresh,
                x,
                y,
                work,
                program,
                vals,
                du,
                dv,
            )
            overflow += not ok
            k = indptr[y * width + x]
            for j in range(n):
                data[k + j] = np.float64(vals[j])
                indices[k + j] = (y + du[j]) * width + x + dv[j]
    return overflow


@numba.njit(cache=True)
def affinity_half(hl, vl, height, width, wr, r2, sigma, thresh, ody, odx, program):
    """The symmetrised W of :func:`affinity_rows` straight in half-stencil form.

    Returns ``(half, diag, overflow)`` as :func:`half_stencil` would return for the
    CSR matrix after :func:`symmetrize` (``W_pq = (W_p->q + W_q->p) / 2`` in float64,
    then stored in float32), bit for bit, without the 150 MB CSR matrix.
    """
    nk = ody.shape[0]
    lut = np.zeros((2 * wr + 1, 2 * wr + 1), np.int64)  # (dy, dx) -> +-(k + 1), 0: self
    for k in range(nk):
        lut[wr + ody[k], wr + odx[k]] = k + 1
        lut[wr - ody[k], wr - odx[k]] = -(k + 1)
    # half[y, k, x]: W_p->q for p = (y, x), q = p + offset k, until q's row comes,
    # which averages in W_q->p (q follows p in raster order: a backward offset of q)
    half = np.zeros((height, nk, width), np.float32)
    work = _affinity_work(wr)
    vals, du, dv = _row_buffers(wr)
    overflow = 0
    for y in range(height):
        for x in range(width):
            n, ok = _pixel_row(
                hl,
                vl,
                height,
                width,
                wr,
                r2,
                sigma,
                thresh,
                x,
                y,
                work,
                program,
                vals,
                du,
                dv,
            )
            overflow += not ok
            for j in range(n):
                k = lut[wr + du[j], wr + dv[j]]
                if k > 0:
                    half[y, k - 1, x] = vals[j]
                elif k < 0:
                    yy = y + du[j]
                    xx = x + dv[j]
                    half[yy, -k - 1, xx] = np.float32(
                        0.5 * (np.float64(half[yy, -k - 1, xx]) + np.float64(vals[j]))
                    )
    return half, np.ones(height * width), overflow


@numba.njit(cache=True)
def symmetrize(indptr, indices, data):
    """``W <- (W + W^T) / 2`` in place, for a structurally symmetric CSR matrix with
    sorted rows (smatrix.cc's pass: row r's upper entries meet, in order, the next
    unused lower entry of each column's row)."""
    n = indptr.shape[0] - 1
    tail = indptr[:-1].copy()
    for r in range(n):
        for i in range(indptr[r], indptr[r + 1]):
            c = indices[i]
            if c <= r:
                continue
            j = tail[c]
            s = 0.5 * (data[i] + data[j])
            data[i] = s
            data[j] = s
            tail[c] = j + 1


@numba.njit(cache=True)
def oriented_energy(padded, kernels, out):
    """``out[k] += |padded_v (x) kernels[k]|`` summed over the vectors v.

    ``padded`` is (nv, h + 2 r, w + 2 r), each vector already mirrored by r; ``kernels``
    (nk, 2 r + 1, 2 r + 1) are correlation kernels (a convolution's filter turned by
    180 degrees), so ``out[k, i, j] += |sum_ab padded[v, i + a, j + b] kernels[k, a, b]|``,
    each sum taken in (a, b) order from 0. Row by row: the sums of a whole output row,
    for every kernel, build up tap by tap in ``acc`` (nk rows, in L1), so the inner loop
    runs along the row and vectorises; each pixel's additions keep their order, so the
    bits are those of a sum per pixel (2.7x faster than one, 16 vectors of 481 x 321).
    ``out`` is (nk, h, w) float64, accumulated in place.
    """
    nv = padded.shape[0]
    nk, ks, _ = kernels.shape
    h = out.shape[1]
    w = out.shape[2]
    acc = np.empty((nk, w))
    for v in range(nv):
        img = padded[v]
        for i in range(h):
            acc[:, :] = 0.0
            for a in range(ks):
                for b in range(ks):
                    x = img[i + a, b : b + w]
                    for k in range(nk):
                        c = kernels[k, a, b]
                        ak = acc[k]
                        for j in range(w):
                            ak[j] += x[j] * c
            for k in range(nk):
                ok = out[k, i]
                ak = acc[k]
                for j in range(w):
                    ok[j] += abs(ak[j])


# ---------------------------------------------------------------------------------
# W times a vector, in the affinity's stencil form (the eigensolver's inner loop).
#
# W is symmetric and couples pixels at most ``radius`` apart, so it is stored as its
# forward half: ``half[y, k, x]`` is W between pixel (y, x) and (y + dy_k, x + dx_k)
# for the offsets with dy > 0, or dy = 0 and dx > 0 (40 for radius 5), in float32,
# and the diagonal apart. Row y of the product then reads the half rows y (the
# forward couplings) and y - dy (the backward ones, still in cache): 25 MB of weights
# per product on a 481 x 321 image instead of the CSR matrix's 150 MB.
# ---------------------------------------------------------------------------------


def forward_offsets(radius: int):
    """(dy, dx) arrays of the forward half of the disc ``dy^2 + dx^2 <= radius^2``."""
    offs = [
        (dy, dx)
        for dy in range(radius + 1)
        for dx in range(-radius, radius + 1)
        if (dy > 0 or dx > 0) and dy * dy + dx * dx <= radius * radius
    ]
    return (
        np.array([o[0] for o in offs], np.int64),
        np.array([o[1] for o in offs], np.int64),
    )


@numba.njit(cache=True)
def half_stencil(indptr, indices, data, height, width, radius, ody, odx):
    """The forward half stencil of a symmetric CSR matrix over a height x width grid.

    Returns ``(half, diag, outside)``: ``half`` (height, K, width) float32 (0 where an
    offset leaves the image), ``diag`` (height * width,) float64 and the number of
    stored entries that no offset within ``radius`` holds (then the stencil form does
    not represent the matrix and the caller must not use it).
    """
    nk = ody.shape[0]
    lut = -np.ones((radius + 1, 2 * radius + 1), np.int64)
    for k in range(nk):
        lut[ody[k], odx[k] + radius] = k
    half = np.zeros((height, nk, width), np.float32)
    diag = np.zeros(height * width)
    outside = 0
    for p in range(height * width):
        y = p // width
        x = p - y * width
        for j in range(indptr[p], indptr[p + 1]):
            q = indices[j]
            if q < p:
                continue
            if q == p:
                diag[p] = data[j]
                continue
            qy = q // width
            dy = qy - y
            dx = q - qy * width - x
            if dy > radius or dx < -radius or dx > radius or lut[dy, dx + radius] < 0:
                outside += 1
                continue
            half[y, lut[dy, dx + radius], x] = data[j]
    return half, diag, outside


@numba.njit(cache=True, inline="always")
def _axpy(acc, a, b, n):
    for i in range(n):
        acc[i] += a[i] * b[i]


@numba.njit(cache=True, inline="always")
def _stencil_row_ring(half, diag, ody, odx, z, ring, y, acc):
    """acc = row y of W z, row r of the vector z held in ``z[r % ring]`` (``ring`` =
    height: a whole (height, width) vector)."""
    height, nk, width = half.shape
    zy = z[y % ring]
    base = y * width
    for x in range(width):
        acc[x] = diag[base + x] * zy[x]
    for k in range(nk):
        dy = ody[k]
        dx = odx[k]
        x0 = max(0, -dx)
        x1 = min(width, width - dx)
        if y + dy < height:
            _axpy(
                acc[x0:x1],
                half[y, k, x0:x1],
                z[(y + dy) % ring, x0 + dx : x1 + dx],
                x1 - x0,
            )
        if y - dy >= 0:
            _axpy(
                acc[x0 + dx : x1 + dx],
                half[y - dy, k, x0:x1],
                z[(y - dy) % ring, x0:x1],
                x1 - x0,
            )


@numba.njit(cache=True, inline="always")
def _stencil_row(half, diag, ody, odx, z, y, acc):
    """acc = row y of W z (z is (height, width) float64)."""
    _stencil_row_ring(half, diag, ody, odx, z, half.shape[0], y, acc)


@numba.njit(cache=True)
def stencil_product(half, diag, ody, odx, z, out):
    """``out = W z`` for W in half-stencil form; z and out (height, width) float64."""
    height, nk, width = half.shape
    acc = np.empty(width)
    for y in range(height):
        _stencil_row(half, diag, ody, odx, z, y, acc)
        out[y, :] = acc


@numba.njit(cache=True)
def chebyshev_step(
    half, diag, ody, odx, scale, cur, prev, out, scratch, alpha, beta, gamma
):
    """One step of a three-term recurrence in the normalised affinity:
    ``out = alpha S W S cur + beta cur + gamma prev`` with ``S = diag(scale)``.

    All arrays (height, width) float64; ``scratch`` receives ``S cur``.
    """
    height, nk, width = half.shape
    for y in range(height):
        for x in range(width):
            scratch[y, x] = scale[y, x] * cur[y, x]
    acc = np.empty(width)
    for y in range(height):
        _stencil_row(half, diag, ody, odx, scratch, y, acc)
        for x in range(width):
            out[y, x] = alpha * scale[y, x] * acc[x] + beta * cur[y, x] + gamma * prev[y, x]


@numba.njit(cache=True)
def chebyshev_filter(
    half, diag, ody, odx, scale, x0, alpha1, beta1, alpha, beta, degree, out
):
    """A whole Chebyshev recurrence in one sweep over the rows (temporal blocking).

    ``L_0 = x0``; ``L_1 = alpha1 S W S x0 + beta1 x0``; then ``L_i = alpha S W S L_(i-1)
    + beta L_(i-1) - L_(i-2)`` up to ``i = degree``, written to ``out`` (height, width)
    and returned, with ``S = diag(scale)``: the same arithmetic, row by row, as
    ``degree`` calls of :func:`chebyshev_step`, so the same bits.

    Row y of level i needs rows ``y - R .. y + R`` of level i - 1 (R the stencil's
    reach in rows), so level i runs R rows behind level i - 1 in one pass down the
    image: each weight row is then read from memory once per polynomial instead of
    once per level (the weights are 25 MB on a 481 x 321 image; the ``degree R + R``
    weight rows in flight fit in cache). A level's row is last read 2R rows after it is
    written, so the inner levels live in rings of 2R + 2 rows (0.7 MB in all, not 30).
    """
    height, nk, width = half.shape
    reach = 0
    for k in range(nk):
        reach = max(reach, ody[k])
    ring = 2 * reach + 2
    levels = np.empty((degree + 1, ring, width))  # L_1 .. L_(degree-1), and S L_i
    scaled = np.empty((degree + 1, ring, width))
    scaled0 = np.empty((height, width))
    for y in range(height):
        for x in range(width):
            scaled0[y, x] = scale[y, x] * x0[y, x]
    acc = np.empty(width)
    for t in range(height + reach * (degree - 1)):
        for i in range(1, degree + 1):
            y = t - reach * (i - 1)
            if y < 0:
                break
            if y >= height:
                continue
            if i == 1:  # a ring as tall as the image: the whole of S x0
                _stencil_row_ring(half, diag, ody, odx, scaled0, height, y, acc)
            else:
                _stencil_row_ring(half, diag, ody, odx, scaled[i - 1], ring, y, acc)
            cur = x0[y] if i == 1 else levels[i - 1, y % ring]
            row = out[y] if i == degree else levels[i, y % ring]
            if i == 1:
                for x in range(width):
                    row[x] = alpha1 * scale[y, x] * acc[x] + beta1 * cur[x] + 0.0 * 0.0
            else:
                prev = x0[y] if i == 2 else levels[i - 2, y % ring]
                for x in range(width):
                    row[x] = alpha * scale[y, x] * acc[x] + beta * cur[x] + -1.0 * prev[x]
            if i < degree:
                srow = scaled[i, y % ring]
                for x in range(width):
                    srow[x] = scale[y, x] * row[x]
    return out
