"""The columns of the C++ superpixel benchmark, from segbench's named measures.

Stutz, Hermans and Leibe's benchmark (github.com/davidstutz/superpixel-benchmark,
``eval_summary_cli``) writes one row per (image, annotator) with columns ``ue, oe, rec,
pre, ue_np, ue_levin, asa, sse_rgb, sse_xy, co, ev, mde, icv, cd, reg, sp, sp_size,
sp_size_variation``. :func:`stutz_columns` computes that row; each column is the named
segbench measure given in :data:`STUTZ_COLUMNS`, with the benchmark's conventions where
they differ from the measure's own definition (label-range denominators, the square
window, 2-px boundaries, OpenCV's chamfer distance, a regularity formula that uses the
height twice). It exists to compare with numbers produced by that code; new
evaluations should use :func:`evaluate_image`.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from ._boundary import BoundaryScorer, boundary_map
from ._image import (
    _colour_stats,
    _colours,
    _compactness,
    _coordinates,
    _edge_distance,
    _explained_variation,
    _mean_at,
    _shape_pass,
)
from ._measures import table_measures
from ._table import superpixel_tables

#: Column of the C++ benchmark -> the segbench measure it is, and the difference.
STUTZ_COLUMNS = {
    "ue": "corrected_ue (CUE, van den Bergh et al.) = 1 - asa; not Neubert-Protzel's "
    "error, as the benchmark's documentation says",
    "oe": "oversegmentation_error",
    "rec": "boundary_recall(window='square', tolerance=round(0.0025 * diagonal), "
    "boundary='two-sided')",
    "pre": "BoundaryCounts.stutz_precision at the same setting (not boundary precision)",
    "ue_np": "neubert_protzel_ue",
    "ue_levin": "levinshtein_ue x (segments present) / (largest label + 1)",
    "asa": "achievable_segmentation_accuracy",
    "sse_rgb": "sum_squared_error(sp, image)",
    "sse_xy": "sum_squared_error(sp)",
    "co": "compactness",
    "ev": "explained_variation",
    "mde": "mean_distance_to_edge(boundary='two-sided', distance='chamfer')",
    "icv": "intra_cluster_variation x (superpixels present) / (largest label + 1)",
    "cd": "contour_density(boundary='two-sided')",
    "reg": "the benchmark's regularity, reproduced with its use of the height as width",
    "sp": "number of superpixels",
    "sp_size": "mean superpixel size",
    "sp_size_variation": "standard deviation of the superpixel sizes",
}

#: The benchmark's default boundary tolerance, as a fraction of the image diagonal.
STUTZ_TOLERANCE = 0.0025


def stutz_radius(shape) -> int:
    """The benchmark's window radius: ``round(0.0025 * diagonal)`` (1 on BSDS)."""
    h, w = shape
    return int(math.floor(STUTZ_TOLERANCE * math.sqrt(h * h + w * w) + 0.5))


def _regularity(sp: np.ndarray, n_boundary: int) -> float:
    """The benchmark's ``reg``, as its code computes it (width taken as the height)."""
    h = sp.shape[0]
    w = sp.shape[0]  # sic: the benchmark uses rows for both
    n_labels = int(sp.max()) + 1
    region = int(math.sqrt((sp.shape[0] * sp.shape[1]) // n_labels))
    if region == 0:
        return float("nan")
    nh, nw = h // region, w // region
    grid = nh * w + nw * h - nh * nw
    return grid / n_boundary if n_boundary else float("inf")


def stutz_columns(sp, gt, image=None) -> dict:
    """One row of the C++ superpixel benchmark's ``results.csv``.

    Parameters
    ----------
    sp : (H, W) array of int
        Superpixel labels, non-negative (as the benchmark's CSV files).
    gt : (H, W) array of int
        One annotator, non-negative; the benchmark relabels BSDS ground truth to
        0..K-1, and ``ue_levin`` depends on that (see :data:`STUTZ_COLUMNS`).
    image : (H, W, 3) array, optional
        The colour image; without it the colour columns are NaN.

    Returns
    -------
    dict
        Column name -> value (float64; the benchmark computes in float32, so
        differences of ~1e-7 relative on counts and ~1e-3 on colour sums are expected).
    """
    return stutz_rows(sp, [gt], image)[0]


def stutz_rows(sp, gts, image=None) -> list[dict]:
    """:func:`stutz_columns` against every annotator of one image.

    The columns of the superpixels alone (sizes, colour, shape, contour density,
    regularity, the superpixel boundary and its distance map) are computed once; each
    annotator then costs its table measures, boundary counts and distance to edge.
    """
    sp, gs = _check_labels(sp, gts)
    tables, compact, n_sp = superpixel_tables(sp, gs)
    return _stutz_rows(sp, gs, image, tables, compact, n_sp)


def _check_labels(sp, gts) -> tuple[np.ndarray, list[np.ndarray]]:
    sp = np.asarray(sp)
    gs = [np.asarray(getattr(g, "segmentation", g)) for g in gts]
    for what, a in (("superpixels", sp), *(("ground truth", g) for g in gs)):
        if a.ndim != 2 or not np.issubdtype(a.dtype, np.integer) or a.min() < 0:
            raise InputError(f"the benchmark's {what} are 2-D non-negative integer labels")
    return sp, gs


def _stutz_rows(sp, gs, image, tables, compact, n_sp) -> list[dict]:
    """The rows, from the tables and compact map of :func:`superpixel_tables` (as
    :func:`evaluate_image` builds them with ``void=None``)."""
    lab = np.ascontiguousarray(compact)
    nan = float("nan")
    # -------- the superpixels alone (and the image): once per image
    colour = image is not None
    xy = _coordinates(lab.shape)
    x = np.hstack([_colours(image, lab.shape).astype(np.float64), xy]) if colour else xy
    count, s, ss = _colour_stats(lab, n_sp, x)
    c = x.shape[1] - 2  # colour channels, then (row, col)

    def part(a, cols):
        return np.ascontiguousarray(a[:, cols])

    def sse(cols):
        s_, ss_ = part(s, cols), part(ss, cols)
        return float((ss_ - s_ * s_ / count[:, None]).sum() / lab.size)

    size = count.astype(np.float64)
    sp_max = int(sp.max()) + 1
    row = {"sse_xy": sse(slice(c, c + 2))}
    if colour:
        sc, ssc = part(s, slice(0, c)), part(ss, slice(0, c))
        var = (ssc - sc * sc / count[:, None]).sum(axis=1) / count
        row.update(
            sse_rgb=sse(slice(0, c)),
            ev=_explained_variation(count, sc, ssc),
            icv=float(np.sqrt(np.maximum(var, 0)).mean()) * n_sp / sp_max,
        )
    else:
        row.update(sse_rgb=nan, ev=nan, icv=nan)
    area, sides = _shape_pass(lab, n_sp)
    scorer = BoundaryScorer(
        lab, tolerance=stutz_radius(sp.shape), window="square", boundary="two-sided"
    )
    sp_b = scorer.sp_boundary
    dist = _edge_distance(sp_b, "chamfer")
    row.update(
        co=_compactness(area[1:], sides[1:]),
        cd=float(sp_b.mean()),
        reg=_regularity(sp, int(sp_b.sum())),
        sp=float(n_sp),
        sp_size=float(size.mean()),
        sp_size_variation=float(size.std()),
    )
    # -------- against each annotator
    rows = []
    for t, g in zip(tables, gs):
        t = np.ascontiguousarray(t)
        tm = table_measures(t)
        n_gt = int((t[:, 1:].sum(axis=0) > 0).sum())
        gb = boundary_map(g, boundary="two-sided")
        bc = scorer.counts(gt_boundary=gb)
        r = {
            "ue": tm["cue"],
            "oe": tm["oe"],
            "rec": bc.recall if bc.gt_pixels else 0.0,
            "pre": bc.stutz_precision,
            "ue_np": tm["ue_np"],
            "ue_levin": tm["ue_levinshtein"] * n_gt / (int(g.max()) + 1),
            "asa": tm["asa"],
            "mde": _mean_at(dist, gb),
            **row,
        }
        rows.append({k: r[k] for k in STUTZ_COLUMNS})
    return rows
