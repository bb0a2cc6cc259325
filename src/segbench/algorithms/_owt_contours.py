"""The contour fit of BSR's ``create_finest_partition``: the watershed lines cut into
nearly straight edges, each read at its chord's direction.

``contours2ucm.m`` calls ``fit_contour`` (``mex_contour_sides``, Maire's
``lib_image::contour_set``) on the watershed lines and keeps its non-completion edges.
We reproduce (read, never copied) the steps that decide those edges:

1. the 8-connected line components; a pixel is a vertex when its neighbourhood on the
   same component makes it an end, a junction or a corner of a block of four
   (``is_vertex_2D``); a closed loop without one gets its last pixel in row-major
   order; edges are traced from each vertex in turn, neighbours tried in the order of
   the original (adjacent before diagonal, non-vertices before vertices), so that each
   edge has the same pixels, in the same order, as there; one-pixel islands dropped;
2. ``subdivide_local`` with the header's defaults: an edge is split at its pixel
   farthest from its chord while a pixel lies more than 2 px and more than 5% of the
   chord's length from it, or projects outside it (angle over pi/2);
3. ``subdivide_global``: of two edges joining the same vertices the less straight one
   is split, then, round by round, every edge whose chord has a vertex inside it and,
   where chords cross elsewhere, all but one of them (the one whose pixels come
   closer to the other's chord is kept) are split, until chords meet only at their
   ends;
4. the transfer: each edge's direction is its chord's, binned as ``contours2ucm.m``
   does (bins of 22.5 degrees centred on the 8 channels), and each of its pixels and
   its two vertices take the largest, over the edges they lie on, of the oriented
   signal in that channel. Line pixels on no edge keep 0.

Where we differ from the original: BSR finds crossing chords with a sweep line in
floating point; we test them exactly (integer arithmetic) through a grid of buckets.
BSR sorts edges with a randomized sort, so two edges joining the same two vertices
come in an unspecified order; we take them by id. Where BSR throws (a crossing that
no split can remove), we keep the edges as they are and report it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ContourSet", "fit_contours", "oriented_transfer"]

#: ``subdivide_local``'s defaults in ``lib_image.hh``: maximum deviation angle
#: (radians), maximum fractional deviation, tolerance distance (pixels).
MAX_ANGLE = np.pi / 2
MAX_DEVIATION = 0.05
TOLERANCE = 2.0

#: Bucket side (pixels) of the grid through which crossing chords are found.
_CELL = 16


@dataclass(frozen=True)
class ContourSet:
    """Thin contours cut into edges between vertices.

    Attributes
    ----------
    shape : tuple of int
        (H, W) of the line mask.
    vertices : (V, 2) ndarray of int64
        Vertex pixels as (row, column), ids in creation order.
    edges : (E, 2) ndarray of int64
        Start and end vertex id of each edge.
    offsets, lengths : (E,) ndarray of int64
        Each edge's interior pixels are ``pixels[offsets[e] : offsets[e] + lengths[e]]``,
        in tracing order from its start vertex (ends excluded).
    pixels : (N, 2) ndarray of int64
        The traced pixels as (row, column).
    failed : bool
        True when a crossing could not be removed (BSR's code throws there).
    """

    shape: tuple
    vertices: np.ndarray
    edges: np.ndarray
    offsets: np.ndarray
    lengths: np.ndarray
    pixels: np.ndarray
    failed: bool

    def edge_pixels(self, e: int) -> np.ndarray:
        """Interior pixels (row, column) of edge ``e``, start to end."""
        o = int(self.offsets[e])
        return self.pixels[o : o + int(self.lengths[e])]

    def chord_degrees(self) -> np.ndarray:
        """Each edge's chord direction in degrees, in (-90, 90], from the column axis
        towards the row axis (``contours2ucm.m``'s ``angles``; 90 for a vertical
        chord)."""
        v = self.vertices
        d_row = v[self.edges[:, 0], 0] - v[self.edges[:, 1], 0]
        d_col = v[self.edges[:, 0], 1] - v[self.edges[:, 1], 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            deg = np.arctan(d_row / d_col) * 180.0 / np.pi
        return np.where(d_col == 0, 90.0, deg)


def _raw(mask, subdivide):
    from . import _owt_contours_kernels as _k

    m = np.ascontiguousarray(mask, dtype=bool)
    vx, vy, nv, es, ee, eo, el, ne, bx, by, isv = _k._contour_set(m)
    failed = False
    if subdivide:
        nv, ne = _k._subdivide_local(
            vx, vy, nv, es, ee, eo, el, ne, bx, by, isv, MAX_ANGLE, MAX_DEVIATION, TOLERANCE
        )
        nv, ne, failed = _k._subdivide_global(
            vx, vy, nv, es, ee, eo, el, ne, bx, by, isv, _CELL
        )
    return vx, vy, nv, es, ee, eo, el, ne, bx, by, bool(failed)


def fit_contours(mask, *, subdivide: bool = True) -> ContourSet:
    """Cut the thin contours of a line mask into nearly straight edges, as BSR's
    ``fit_contour`` does (without its completion edges).

    Parameters
    ----------
    mask : (H, W) array_like of bool
        The line pixels (e.g. ``watershed == 0``), one pixel wide.
    subdivide : bool
        Split the traced edges by ``subdivide_local`` (default parameters) and
        ``subdivide_global``; False keeps the edges as traced between vertices.

    Returns
    -------
    ContourSet
    """
    vx, vy, nv, es, ee, eo, el, ne, bx, by, failed = _raw(mask, subdivide)
    n_pix = int((eo[:ne] + el[:ne]).max()) if ne else 0
    return ContourSet(
        shape=tuple(np.shape(mask)),
        vertices=np.stack([vx[:nv], vy[:nv]], axis=1),
        edges=np.stack([es[:ne], ee[:ne]], axis=1),
        offsets=eo[:ne].copy(),
        lengths=el[:ne].copy(),
        pixels=np.stack([bx[:n_pix], by[:n_pix]], axis=1),
        failed=failed,
    )


def oriented_transfer(mask, stack=None, pb=None, theta=None, nbins: int = 8):
    """Contour strength of each line pixel read at its edge's direction
    (``create_finest_partition``'s ``ws_wt``).

    Parameters
    ----------
    mask : (H, W) array_like of bool
        The watershed lines.
    stack : (H, W, K) ndarray of float64, optional
        Oriented signal, channel ``k`` for a tangent at ``k pi / K`` (from the column
        axis towards the row axis). An edge reads the channel whose bin holds its
        chord direction (BSR's bins for K = 8).
    pb, theta : (H, W) ndarray of float64, optional
        Instead of a stack: a soft map and each pixel's boundary tangent (same
        convention); an edge reads ``pb |cos(theta - phi)|`` with ``phi`` its chord
        direction.
    nbins : int
        For ``pb``: ``phi`` rounded to this many directions (bins centred on
        ``k pi / nbins``); 0 reads at the chord direction itself.

    Returns
    -------
    (H, W) ndarray of float64
        The transferred strength on edge pixels and vertices, 0 elsewhere.
    """
    from . import _owt_contours_kernels as _k

    vx, vy, nv, es, ee, eo, el, ne, bx, by, _ = _raw(mask, True)
    h, w = np.shape(mask)
    if stack is not None:
        return _k._transfer(
            h,
            w,
            vx,
            vy,
            es,
            ee,
            eo,
            el,
            ne,
            bx,
            by,
            np.ascontiguousarray(stack, dtype=np.float64),
            np.zeros((1, 1)),
            np.zeros((1, 1)),
            0,
            False,
        )
    return _k._transfer(
        h,
        w,
        vx,
        vy,
        es,
        ee,
        eo,
        el,
        ne,
        bx,
        by,
        np.zeros((1, 1, 1)),
        np.ascontiguousarray(pb, dtype=np.float64),
        np.ascontiguousarray(theta, dtype=np.float64),
        int(nbins),
        True,
    )
