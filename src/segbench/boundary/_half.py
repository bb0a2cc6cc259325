"""Half resolution, as the 2004 Pb paper evaluated, and tolerances given in pixels.

Martin, Fowlkes and Malik (PAMI 2004, Fig. 3) scored detectors on the BSDS300 test
images at half resolution (240 x 160 from 481 x 321) with ``d_max`` = 1% of the
diagonal. The segbench code of that time draws the human maps at the size of a smaller
soft map: ``boundaryPR.m`` (lines 27 and 34) calls ``seg2bmap(seg, width, height)``, which
maps full-size pixel ``(y, x)`` to cell ``(floor(y h / H), floor(x w / W))`` and marks a
cell when any of its boundary pixels is (:func:`~segbench.boundary.seg2bmap`,
:func:`~segbench.boundary.shrink_bmap`); the maps are then thinned (``bwmorph thin``).
This module applies that one mapping to every full-size input, so the photograph, the
soft map and the human maps fall into the same cells:

- human maps: ``seg2bmap(seg, (h, w))`` of each annotator's segmentation (the stored
  boundaries drawn the same way where no segmentation is given);
- photographs (``segbench detect --protocol martin2004``): each cell's mean, rounded to
  8 bits (a box filter; the image-reduction step is not part of the released code);
- full-size soft maps: each cell's maximum (as ``seg2bmap`` ORs its pixels), so a
  one-pixel line stays one line at its strength.

``half_shape`` is ``(H // 2, W // 2)``: 481 x 321 gives 240 x 160, the paper's size.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from ._protocols import _cell_starts, _check_shrink, seg2bmap, shrink_bmap

__all__ = [
    "RESOLUTIONS",
    "half_human_maps",
    "half_shape",
    "halve_image",
    "halve_soft_map",
    "max_dist_from_px",
]

#: Values of the boundary benchmark's ``resolution`` parameter.
RESOLUTIONS = ("full", "half")


def half_shape(shape) -> tuple[int, int]:
    """``(H // 2, W // 2)``: the half-resolution size of an (H, W) image."""
    h, w = (int(n) for n in tuple(shape)[:2])
    if h < 2 or w < 2:
        raise InputError(f"an image of {w}x{h} pixels has no half resolution")
    return h // 2, w // 2


def half_human_maps(annotations, shape=None) -> list[np.ndarray]:
    """Each annotator's boundary map at half resolution, as ``boundaryPR.m`` draws it.

    Parameters
    ----------
    annotations : sequence
        Objects with ``.segmentation`` (dataset annotations, BSDS500 human
        segmentations, ``.seg`` files) or with ``.boundaries`` only, or (H, W) boolean
        maps.
    shape : (h, w), optional
        Default :func:`half_shape` of the annotations' size.

    Returns
    -------
    list of (h, w) bool arrays
        ``seg2bmap(segmentation, (h, w))``, or the boundaries drawn into the same cells;
        not thinned (the protocol's ``thin_gt`` thins them, as ``boundaryPR.m``).
    """
    out = []
    for a in annotations:
        seg = getattr(a, "segmentation", None)
        full = np.asarray(seg if seg is not None else getattr(a, "boundaries", a))
        small = half_shape(full.shape) if shape is None else tuple(shape)
        out.append(seg2bmap(full, small) if seg is not None else shrink_bmap(full, small))
    return out


def halve_soft_map(pb, shape=None) -> np.ndarray:
    """A full-size soft map at half resolution: the maximum of each cell (float64)."""
    a = np.asarray(pb, dtype=np.float64)
    if a.ndim != 2:
        raise InputError(f"expected a 2-D soft map, got shape {a.shape}")
    h, w = _check_shrink(a.shape, half_shape(a.shape) if shape is None else shape)
    rows = np.maximum.reduceat(a, _cell_starts(a.shape[0], h), axis=0)
    return np.maximum.reduceat(rows, _cell_starts(a.shape[1], w), axis=1)


def halve_image(image, shape=None) -> np.ndarray:
    """A photograph at half resolution: the mean of each cell, rounded to uint8.

    Parameters
    ----------
    image : (H, W) or (H, W, C) uint8 array
    shape : (h, w), optional
        Default :func:`half_shape`.

    Returns
    -------
    (h, w) or (h, w, C) uint8 array
        each cell's mean rounded half up, as MATLAB's ``round`` (cells of
        :func:`~segbench.boundary.shrink_cells`: 2 x 2 pixels; along an odd axis the
        first cell takes 3).
    """
    a = np.asarray(image)
    if a.ndim not in (2, 3) or a.dtype != np.uint8:
        raise InputError(
            f"expected an (H, W) or (H, W, C) uint8 image, got {a.dtype} of shape {a.shape}"
        )
    try:
        h, w = _check_shrink(a.shape[:2], half_shape(a.shape) if shape is None else shape)
    except InputError:
        want = half_shape(a.shape) if shape is None else shape
        raise InputError(
            f"a {a.shape[1]}x{a.shape[0]} image cannot be halved to {want[1]}x{want[0]} "
            "(width x height) under the half-resolution protocol: its ground truth is "
            "halved by seg2bmap.m, which keeps the aspect ratio within 0.01 (even sides, "
            "or BSDS's 481x321, keep it)"
        ) from None
    r0, c0 = _cell_starts(a.shape[0], h), _cell_starts(a.shape[1], w)
    sums = np.add.reduceat(np.add.reduceat(a.astype(np.float64), r0, axis=0), c0, axis=1)
    nr = np.diff(np.append(r0, a.shape[0])).astype(np.float64)
    nc = np.diff(np.append(c0, a.shape[1])).astype(np.float64)
    counts = np.outer(nr, nc)
    if a.ndim == 3:
        counts = counts[..., None]
    return np.clip(np.floor(sums / counts + 0.5), 0, 255).astype(np.uint8)  # half up


def max_dist_from_px(px: float, shape) -> float:
    """A tolerance in pixels as the fraction of an image's diagonal the matcher takes.

    ``px / hypot(H, W)``, raised by the last bits where rounding would make the
    matcher's radius (``fraction * diagonal``) fall short of ``px``: a pair exactly
    ``px`` apart (e.g. 2 px on a row) is within the tolerance, as it is at the
    fraction ``px / diagonal`` evaluated exactly.

    Parameters
    ----------
    px : float
        Tolerance in pixels, > 0.
    shape : (H, W)
        The image as matched (at half resolution under ``martin2004``).
    """
    px = float(px)
    if not (math.isfinite(px) and px > 0):
        raise InputError(f"max_dist_px is a tolerance in pixels > 0, got {px!r}")
    diag = math.sqrt(int(shape[0]) ** 2 + int(shape[1]) ** 2)
    f = px / diag
    while f * diag < px:
        f = math.nextafter(f, math.inf)
    if not f < 1:
        raise InputError(
            f"max_dist_px {px:g} is not less than the diagonal of a "
            f"{shape[1]}x{shape[0]} image ({diag:.1f} px)"
        )
    return f
