"""Compiled kernel of gPb's non-maximum suppression (``nonmax_channels.m``, Maire's
``lib_image::nonmax_oriented_2D``): each pixel is compared with its two neighbours
across its boundary, linearly interpolated between the two 8-neighbours that bracket
the normal, each weighted down by how far its own orientation is from the pixel's.

Sources read (never copied): BSR ``grouping/lib/nonmax_channels.m``,
``gpb_src/src/math/libraries/lib_image.cc`` (``nonmax_oriented_2D``).
"""

from __future__ import annotations

import numba
import numpy as np

from ..compilation import prepare_kernels

prepare_kernels()

__all__ = []


@numba.njit(cache=True)
def _nonmax_oriented(pb, j, branch, dist, cosf):
    """Keep ``pb`` where it exceeds both interpolated neighbours across its boundary.

    ``j`` is each pixel's BSR channel (0..7); ``branch[j]`` and ``dist[j]`` the octant
    case of ``nonmax_oriented_2D`` and its interpolation weight, ``cosf[j, j2]`` the
    factor of a neighbour of channel j2 (tables from :func:`._gpb.nonmax_tables`, which
    reproduce the original's long-double arithmetic). Cases 0 and 3 are the exact axes
    (neighbours along the row or the column only, valid off the two borders across
    them); the others need the pixel off every border.
    """
    h, w = pb.shape
    out = np.zeros((h, w), np.float64)
    for x in range(h):
        for y in range(w):
            c = j[x, y]
            b = branch[c]
            d = dist[c]
            if b == 0:
                if x == 0 or x == h - 1:
                    continue
                a0x, a0y, b0x, b0y = x - 1, y, x - 1, y
                a1x, a1y, b1x, b1y = x + 1, y, x + 1, y
            elif b == 3:
                if y == 0 or y == w - 1:
                    continue
                a0x, a0y, b0x, b0y = x, y - 1, x, y - 1
                a1x, a1y, b1x, b1y = x, y + 1, x, y + 1
            else:
                if x == 0 or y == 0 or x == h - 1 or y == w - 1:
                    continue
                if b == 1:
                    a0x, a0y, b0x, b0y = x - 1, y, x - 1, y - 1
                    a1x, a1y, b1x, b1y = x + 1, y, x + 1, y + 1
                elif b == 2:
                    a0x, a0y, b0x, b0y = x, y - 1, x - 1, y - 1
                    a1x, a1y, b1x, b1y = x, y + 1, x + 1, y + 1
                elif b == 4:
                    a0x, a0y, b0x, b0y = x, y - 1, x + 1, y - 1
                    a1x, a1y, b1x, b1y = x, y + 1, x - 1, y + 1
                else:
                    a0x, a0y, b0x, b0y = x + 1, y, x + 1, y - 1
                    a1x, a1y, b1x, b1y = x - 1, y, x - 1, y + 1
            v = pb[x, y]
            v0 = (1.0 - d) * pb[a0x, a0y] * cosf[c, j[a0x, a0y]] + d * pb[b0x, b0y] * cosf[
                c, j[b0x, b0y]
            ]
            v1 = (1.0 - d) * pb[a1x, a1y] * cosf[c, j[a1x, a1y]] + d * pb[b1x, b1y] * cosf[
                c, j[b1x, b1y]
            ]
            if v > v0 and v > v1:
                out[x, y] = v
    return out
