"""The half-disc histogram gradient shared by the Pb detectors (:mod:`._pb`) and gPb's
local cues (:mod:`._gpb_cues`): the slice tables and the two ways each detector calls
the one compiled kernel (:func:`._half_disc_kernels._slice_gradient`).

A disc of radius r is cut into ``2 norient`` angular slices (a *slice map*: the slice
of every offset from the centre, -1 outside the disc) so that the half disc on one
side of the line at orientation o is the ``norient`` slices ``o .. o + norient - 1``.
gPb uses BSR's 16-slice map (``orientation_slice_map``); Pb's half discs (tgso.m's
``mod(atan2(v, u) - theta, 2 pi) < pi``) are reproduced exactly by
:func:`pb_slice_map`.
"""

from __future__ import annotations

from collections import namedtuple
from functools import lru_cache

import numpy as np

from . import _half_disc_kernels as _k

__all__ = [
    "SliceTables",
    "slice_tables",
    "pb_slice_map",
    "normalised_gradient",
    "count_gradient",
]

SliceTables = namedtuple("SliceTables", "full fptr toff tfrom tto ssize dtot ddif")


def slice_tables(offmap: np.ndarray, wp: int, ns: int) -> SliceTables:
    """Linear offsets (row stride ``wp``) for the kernel from a slice map.

    Parameters
    ----------
    offmap : (2r + 1, 2r + 1) int array
        Slice 0..ns-1 (ns even) of the pixel at row offset ``i - r`` and column offset
        ``j - r`` from the centre, -1 outside the disc.
    wp : int
        Row length of the padded label map the offsets index.
    ns : int
        The number of slices (``2 norient``; a slice may be empty).

    Returns
    -------
    SliceTables
        ``full[fptr[s]:fptr[s + 1]]``: slice s's offsets; ``toff``, ``tfrom``, ``tto``:
        every pixel whose slice changes when the centre moves one column right (offset
        from the new centre, slice left, slice entered; ns for outside the disc),
        ordered round robin over the (from, to) pairs so that neighbouring entries
        touch different slices; ``ssize``: each slice's pixel count; ``dtot``,
        ``ddif``: each move's change to the disc's count (+1 entering, -1 leaving) and
        to the first-minus-second half difference at orientation 0 (slices below
        ns / 2 count +1, the others -1).
    """
    offmap = np.asarray(offmap, dtype=np.int64)
    r = offmap.shape[0] // 2
    pad = np.full((2 * r + 1, 2 * r + 3), -1, np.int64)
    pad[:, 1:-1] = offmap  # column j <-> column offset j - r - 1
    dr = np.arange(-r, r + 1)[:, None]
    dc_new = np.arange(-r - 1, r + 1)[None, :]  # offsets from the new centre
    new = pad[:, :-1]  # slice at offset (dr, dc) from the new centre
    old = pad[:, 1:]  # slice of that pixel seen from the old centre: offset dc + 1
    lin_full = dr * wp + np.arange(-r, r + 1)[None, :]
    lin_move = dr * wp + dc_new
    full = [lin_full[offmap == s] for s in range(ns)]
    ptr = np.zeros(ns + 1, np.int64)
    ptr[1:] = np.cumsum([p.size for p in full])
    moved = new != old
    src = np.where(old[moved] < 0, ns, old[moved])
    dst = np.where(new[moved] < 0, ns, new[moved])
    off = lin_move[moved]
    # round robin over the (from, to) groups: neighbours touch different slices
    key = src * (ns + 1) + dst
    rank = np.zeros(key.size, np.int64)
    for k in np.unique(key):
        rank[key == k] = np.arange(int((key == k).sum()))
    order = np.lexsort((key, rank))
    src, dst, off = src[order], dst[order], off[order]

    def side(s):
        return np.where(s >= ns, 0.0, np.where(s < ns // 2, 1.0, -1.0))

    return SliceTables(
        np.concatenate(full).astype(np.int64),
        ptr,
        off.astype(np.int64),
        src.astype(np.int64),
        dst.astype(np.int64),
        np.array([p.size for p in full], np.float64),
        (dst < ns).astype(np.float64) - (src < ns).astype(np.float64),
        side(dst) - side(src),
    )


@lru_cache(maxsize=64)
def pb_slice_map(radius_px: float, norient: int):
    """tgso.m's disc and half discs as a slice map of ``2 norient`` slices.

    The disc holds the offsets (row v, column u) with ``u^2 + v^2 <= r^2`` except the
    centre (``r = max(1, radius)``, ``wr = floor(r)``). For orientation
    ``theta_o = o pi / norient`` the "right" half has ``mod(atan2(v, u) - theta_o,
    2 pi) < pi``: as o grows a pixel is right for a first run of orientations (slice =
    run length - 1) or a last run (slice = 2 norient - 1 - run length), so the right
    half of orientation o is slices ``o .. o + norient - 1``, exactly, float for float.

    Returns
    -------
    offmap : (2 wr + 1, 2 wr + 1) ndarray of int64
        Slice of every offset, -1 outside the disc and at the centre (read-only).
    count : int
        The disc's pixel count (both halves have ``count / 2``: tgso.m's balance check).
    wr : int
    """
    r = max(1.0, float(radius_px))
    wr = int(np.floor(r))
    v, u = np.mgrid[-wr : wr + 1, -wr : wr + 1]
    gamma = np.arctan2(v, u)
    disc = u * u + v * v <= r * r
    disc[wr, wr] = False
    right = np.stack(
        [
            disc & (np.mod(gamma - o / norient * np.pi, 2 * np.pi) < np.pi)
            for o in range(norient)
        ]
    )
    for o in range(norient):
        if right[o].sum() != (disc & ~right[o]).sum():  # tgso.m's 'bug:inbalance'
            raise AssertionError("half discs of unequal size")
    runs = right.sum(axis=0)
    first = right[0]
    offmap = np.where(first, runs - 1, 2 * norient - 1 - runs)
    offmap = np.where(disc, offmap, -1).astype(np.int64)
    # the halves must be runs of slices (a pixel changes side at most once)
    orients = np.arange(norient)[:, None, None]
    again = (np.mod(offmap[None] - orients, 2 * norient) < norient) & disc[None]
    if not np.array_equal(again, right):
        raise AssertionError("half discs are not runs of slices")
    offmap.setflags(write=False)
    return offmap, int(disc.sum()), wr


def normalised_gradient(
    padded,
    tables: SliceTables,
    border: int,
    nbins: int,
    taps,
    mass,
    chan,
    *,
    sparse: bool = False,
) -> np.ndarray:
    """The kernel's ``norm = 0`` mode (gPb, BSR's ``hist_gradient_2D``): each slice
    histogram (smoothed by ``taps``) normalised to sum 1, chi-squared of the halves.
    ``padded`` int32, labels 0..nbins-1; ``chan[o]`` the output channel of orientation
    o; ``sparse``: the small-disc variant (smoothing as each pixel is counted). Returns
    (norient, H, W) float64."""
    h, w = padded.shape[0] - 2 * border, padded.shape[1] - 2 * border
    out = np.empty((len(chan), h, w), np.float64)
    if sparse:
        _k._slice_gradient_sparse(
            padded, h, w, border, nbins, taps, mass, tuple(tables), chan, out
        )
    else:
        _k._slice_gradient(
            padded,
            h,
            w,
            border,
            nbins,
            nbins,
            taps,
            mass,
            tuple(tables),
            chan,
            0,
            1.0,
            np.zeros((0, 0)),
            out,
        )
    return out


_NO_SMOOTHING = np.ones(1)


def count_gradient(
    padded, tables: SliceTables, border: int, nbins: int, count: int, similarity=None
) -> np.ndarray:
    """The kernel's ``norm = 1`` mode (Pb, tgso.m / cgmo.m): the halves' integer label
    counts divided by ``count / 2``, chi-squared (``similarity`` None) or ``d' S d``.
    ``padded`` int32 with labels 0..nbins, ``nbins`` marking pixels outside the image
    (counted in neither half). Orientation o goes to channel o. Returns (norient, H, W)
    float64."""
    h, w = padded.shape[0] - 2 * border, padded.shape[1] - 2 * border
    norient = (tables.fptr.shape[0] - 1) // 2
    out = np.empty((norient, h, w), np.float64)
    sim = np.zeros((0, 0)) if similarity is None else similarity
    _k._slice_gradient(
        padded,
        h,
        w,
        border,
        nbins,
        nbins + 1,
        _NO_SMOOTHING,
        np.ones(nbins),
        tuple(tables),
        np.arange(norient, dtype=np.int64),
        1,
        float(count),
        sim,
        out,
    )
    return out
