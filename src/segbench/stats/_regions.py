"""Region areas and convexity (area over convex-hull area) of a label map, in one pass."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..compilation import prepare_kernels
from ..primitives import compact_labels

prepare_kernels()


@njit(cache=True)
def _row_extents(lab, n):
    """Per region: pixel count, and per row the first and last column it occupies."""
    h, w = lab.shape
    area = np.zeros(n, np.int64)
    cmin = np.full((n, h), w, np.int64)
    cmax = np.full((n, h), -1, np.int64)
    for r in range(h):
        for c in range(w):
            k = lab[r, c]
            area[k] += 1
            if c < cmin[k, r]:
                cmin[k, r] = c
            if c > cmax[k, r]:
                cmax[k, r] = c
    return area, cmin, cmax


@njit(cache=True, inline="always")
def _cross(ox, oy, ax, ay, bx, by):
    return (ax - ox) * (by - oy) - (ay - oy) * (bx - ox)


@njit(cache=True)
def _hull_areas(cmin, cmax):
    """Twice the area of the convex hull of each region's pixels taken as unit squares.

    A region's hull is the hull of its pixels' corners; only the extreme corners of each
    grid line y matter: x from min(cmin) to max(cmax) + 1 over the rows y - 1 and y.
    Those points, ordered by (y, x), feed Andrew's monotone chain. Integer arithmetic
    throughout, so the result is exact.
    """
    n, h = cmin.shape
    out = np.zeros(n, np.int64)
    px = np.empty(2 * (h + 1), np.int64)
    py = np.empty(2 * (h + 1), np.int64)
    hx = np.empty(4 * (h + 1) + 1, np.int64)
    hy = np.empty(4 * (h + 1) + 1, np.int64)
    for k in range(n):
        m = 0
        for y in range(h + 1):
            lo = 1 << 62
            hi = -1
            if y < h and cmax[k, y] >= 0:
                lo = min(lo, cmin[k, y])
                hi = max(hi, cmax[k, y] + 1)
            if y > 0 and cmax[k, y - 1] >= 0:
                lo = min(lo, cmin[k, y - 1])
                hi = max(hi, cmax[k, y - 1] + 1)
            if hi >= 0:
                px[m] = lo
                py[m] = y
                px[m + 1] = hi
                py[m + 1] = y
                m += 2
        if m == 0:
            continue
        # monotone chain over points sorted by (y, x): lower then upper hull
        t = 0
        for i in range(m):
            while (
                t >= 2
                and _cross(hx[t - 2], hy[t - 2], hx[t - 1], hy[t - 1], px[i], py[i]) <= 0
            ):
                t -= 1
            hx[t] = px[i]
            hy[t] = py[i]
            t += 1
        lower = t + 1
        for i in range(m - 2, -1, -1):
            while (
                t >= lower
                and _cross(hx[t - 2], hy[t - 2], hx[t - 1], hy[t - 1], px[i], py[i]) <= 0
            ):
                t -= 1
            hx[t] = px[i]
            hy[t] = py[i]
            t += 1
        t -= 1  # the last point repeats the first
        a2 = 0
        for i in range(t):
            j = i + 1 if i + 1 < t else 0
            a2 += hx[i] * hy[j] - hx[j] * hy[i]
        out[k] = abs(a2)
    return out


def region_shapes(segmentation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Area and convexity of every region (distinct label) of a label map.

    Parameters
    ----------
    segmentation : (H, W) integer array
        Every distinct value is one region, whether or not it is connected.

    Returns
    -------
    areas : (N,) int64
        Pixel counts, in ascending label order.
    convexity : (N,) float64
        Area over the area of the convex hull of the region's pixels taken as unit
        squares; 1 for any digital rectangle, in (0, 1] always.
    """
    compact, n = compact_labels(segmentation, void=None)  # 1..n, increasing label order
    lab = np.ascontiguousarray(compact, dtype=np.int64) - 1
    area, cmin, cmax = _row_extents(lab, n)
    hull = _hull_areas(cmin, cmax) / 2.0
    return area, area / hull
