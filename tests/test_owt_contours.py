"""The contour fit of OWT-UCM (BSR's ``fit_contour`` as ``contours2ucm`` uses it).

Small line masks whose vertices, edges and subdivisions follow by hand from the rules
of ``lib_image::contour_set`` (ends and junctions are vertices; a loop gets its last
pixel in row-major order; an edge is split at its pixel farthest from its chord while
some pixel lies more than 2 px and 5% of the chord from it), and the channel each edge
reads: BSR bins the chord direction into 8 bins of 22.5 degrees, its channel ``j``
(1-based) being our ``(4 - (j - 1)) mod 8``, i.e. the tangent ``k pi / 8`` from the
column axis towards the row axis.
"""

from __future__ import annotations

import numpy as np
import pytest

from segbench.algorithms import owt_ucm
from segbench.algorithms._owt_contours import fit_contours, oriented_transfer


def _edges(c):
    """{(start, end): interior pixels} with vertices as (row, col) tuples."""
    out = {}
    for e, (a, b) in enumerate(c.edges):
        key = (tuple(int(v) for v in c.vertices[a]), tuple(int(v) for v in c.vertices[b]))
        out[key] = [tuple(int(v) for v in p) for p in c.edge_pixels(e)]
    return out


def test_a_straight_arc_is_one_edge_between_its_ends():
    m = np.zeros((12, 12), bool)
    m[2, 2:10] = True
    c = fit_contours(m)
    assert c.vertices.tolist() == [[2, 2], [2, 9]]
    assert _edges(c) == {((2, 2), (2, 9)): [(2, y) for y in range(3, 9)]}
    assert not c.failed


def test_an_l_shaped_arc_splits_at_its_corner():
    m = np.zeros((12, 12), bool)
    m[2, 2:10] = True
    m[2:10, 9] = True
    traced = fit_contours(m, subdivide=False)
    assert _edges(traced) == {((2, 2), (9, 9)): [(2, y) for y in range(3, 10)]
                              + [(x, 9) for x in range(3, 9)]}
    # the corner lies 4.9 px from the chord (over 2 px and 5% of its 9.9 px)
    c = fit_contours(m)
    assert c.vertices.tolist() == [[2, 2], [9, 9], [2, 9]]
    assert _edges(c) == {((2, 2), (2, 9)): [(2, y) for y in range(3, 9)],
                         ((2, 9), (9, 9)): [(x, 9) for x in range(3, 9)]}


def test_a_gentle_bend_within_tolerance_is_not_split():
    # a staircase of slope 1/3: every pixel within 2 px of the chord
    m = np.zeros((8, 16), bool)
    for y in range(1, 13):
        m[2 + (y - 1) // 3, y] = True
    c = fit_contours(m)
    assert c.vertices.tolist() == [[2, 1], [5, 12]]
    assert len(c.edges) == 1 and c.lengths.tolist() == [10]


def test_a_closed_loop_gets_a_vertex_and_is_cut_at_its_corners():
    m = np.zeros((12, 12), bool)
    m[2, 2:10] = m[9, 2:10] = True
    m[2:10, 2] = m[2:10, 9] = True
    traced = fit_contours(m, subdivide=False)
    # the loop's vertex is its last pixel (9, 9); the trace goes up first (x - 1) and
    # ends beside its start, at (9, 8), which becomes a vertex joined to (9, 9)
    assert traced.vertices.tolist() == [[9, 9], [9, 8]]
    assert sorted(traced.lengths.tolist()) == [0, 26]
    c = fit_contours(m)
    # split at the farthest pixel from the chord each time: (2, 2), then (2, 9) of the
    # (9, 9)-(2, 2) half (the first of two equally far corners), then (9, 2)
    assert c.vertices.tolist() == [[9, 9], [9, 8], [2, 2], [2, 9], [9, 2]]
    assert _edges(c) == {
        ((9, 9), (2, 9)): [(x, 9) for x in range(8, 2, -1)],
        ((9, 9), (9, 8)): [],
        ((2, 9), (2, 2)): [(2, y) for y in range(8, 2, -1)],
        ((2, 2), (9, 2)): [(x, 2) for x in range(3, 9)],
        ((9, 2), (9, 8)): [(9, y) for y in range(3, 8)],
    }


def test_a_t_junction_is_a_vertex_of_three_edges():
    m = np.zeros((12, 12), bool)
    m[2, 1:11] = True
    m[2:10, 5] = True
    c = fit_contours(m)
    assert c.vertices.tolist() == [[2, 1], [2, 5], [2, 10], [9, 5]]
    assert _edges(c) == {((2, 1), (2, 5)): [(2, 2), (2, 3), (2, 4)],
                         ((2, 5), (9, 5)): [(x, 5) for x in range(3, 9)],
                         ((2, 5), (2, 10)): [(2, y) for y in range(6, 10)]}


def test_one_pixel_islands_are_dropped():
    m = np.zeros((6, 6), bool)
    m[1, 1] = True
    c = fit_contours(m)
    assert len(c.vertices) == 0 and len(c.edges) == 0
    assert not oriented_transfer(m, stack=np.ones((6, 6, 8))).any()


@pytest.mark.parametrize("pixels, channel", [
    ([(4, y) for y in range(1, 11)], 0),                 # along a row
    ([(x, 4) for x in range(1, 11)], 4),                 # along a column
    ([(1 + t, 1 + t) for t in range(9)], 2),             # row grows with column
    ([(10 - t, 1 + t) for t in range(9)], 6),            # row falls as column grows
    ([(2 + (y - 1) // 3, y) for y in range(1, 13)], 1),  # atan(3/11) = 15.3 degrees
])
def test_each_edge_reads_the_channel_of_its_chord(pixels, channel):
    m = np.zeros((14, 16), bool)
    for p in pixels:
        m[p] = True
    stack = np.broadcast_to(np.arange(1, 9) / 10.0, (14, 16, 8)).copy()
    wt = oriented_transfer(m, stack=stack)
    assert np.all(wt[m] == (channel + 1) / 10.0)
    assert not wt[~m].any()


def _l_ridge(h=20, w=24):
    """A flat map with a one-pixel L-shaped ridge from the top edge down column 6 and
    along row 5 to the left edge: its watershed has two basins and the L as line."""
    ridge = np.zeros((h, w), bool)
    ridge[:6, 6] = True
    ridge[5, :7] = True
    return ridge


def test_the_corner_of_an_arc_reads_its_arms_channels():
    """On the L, both arms read their own channel (0 along the row, 4 along the
    column) and the corner the larger of the two; the diagonal channels are never
    read, so the level of the one boundary is exactly the arms' value (a local line
    fit around the corner would read a diagonal channel there)."""
    ridge = _l_ridge()
    stack = np.full(ridge.shape + (8,), 0.1)
    stack[ridge] = [0.5, 0.3, 1.0, 0.3, 0.5, 0.3, 1.0, 0.3]
    wt = oriented_transfer(ridge, stack=stack)
    assert np.all(wt[ridge] == 0.5)
    ucm2 = owt_ucm(stack, raw=True)                   # pixel (i, j) at cell (2i, 2j)
    assert set(np.unique(ucm2[:-1:2, :-1:2][ridge]).tolist()) == {0.5}
    assert set(np.unique(ucm2).tolist()) == {0.0, 0.5}
    # the single-map form reads pb |cos(theta - phi)| at the same edges
    pb = np.where(ridge, 0.8, 0.1)
    theta = np.zeros(ridge.shape)                     # every tangent along the rows
    wt1 = oriented_transfer(ridge, pb=pb, theta=theta, nbins=8)
    row_arm = ridge.copy()
    row_arm[:5] = False
    assert np.all(wt1[row_arm] == 0.8)                # the corner (5, 6) included
    assert np.all(wt1[:5, 6] < 1e-15)
