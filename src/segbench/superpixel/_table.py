"""Overlap tables of a superpixel map with ground-truth segmentations.

The tables are :mod:`segbench.region`'s contingency tables (one compiled pass over the
pixels, row and column 0 for void pixels); this module only fixes the superpixel-side
conventions: a superpixel map has no void label (every label, 0 included, is a
superpixel), and the ground truth may have one.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..primitives import compact_labels, prepare_ground_truth, split_tables, stacked_tables


def compact_superpixels(sp) -> tuple[np.ndarray, int]:
    """Superpixel labels renumbered ``1..S`` (every label is a superpixel, 0 included)."""
    return compact_labels(sp, void=None)


def superpixel_table(sp, gt, *, void=None) -> np.ndarray:
    """Overlap counts of a superpixel map with one ground-truth segmentation.

    Parameters
    ----------
    sp : (H, W) array_like of int
        Superpixel labels. Every label is a superpixel, 0 included.
    gt : (H, W) array_like of int
        One annotator's segmentation.
    void : int or None, default None
        Label of unlabelled ground-truth pixels. None: every label is a segment (the
        BSDS500 ground truth has no unlabelled pixels; 0-based relabelled maps use 0 as
        an ordinary segment).

    Returns
    -------
    (S + 1, G + 1) ndarray of int64
        ``table[s, g]`` = pixels in superpixel s and segment g, both numbered from 1 in
        increasing label order; column 0 counts each superpixel's void ground-truth
        pixels; row 0 is empty (superpixels have no void).

    Examples
    --------
    >>> import numpy as np
    >>> superpixel_table(np.array([[0, 0, 1]]), np.array([[5, 7, 7]]))
    array([[0, 0, 0],
           [0, 1, 1],
           [0, 0, 1]])
    """
    s = np.asarray(sp)
    g = np.asarray(getattr(gt, "segmentation", gt))
    if s.shape != g.shape:
        raise InputError(
            f"superpixels are {_hw(s.shape)} but the ground truth is {_hw(g.shape)}"
        )
    cs, ns = compact_superpixels(s)
    cg, ng = compact_labels(g, void=void)
    return stacked_tables(cs, ns, [cg], [ng])


def superpixel_tables(sp, gts, *, void=None) -> tuple[list[np.ndarray], np.ndarray, int]:
    """Tables of one superpixel map against every annotator, in one pass over the pixels.

    Returns
    -------
    tables : list of (S + 1, G_k + 1) int64 arrays
        One per annotator (views into one stacked table), as :func:`superpixel_table`.
    compact : (H, W) int32
        The superpixel labels renumbered 1..S (reused by the other measures).
    n_superpixels : int
    """
    s = np.asarray(sp)
    gflat, n_gts = prepare_ground_truth(gts, void=void)
    shape = np.asarray(getattr(gts[0], "segmentation", gts[0])).shape
    if s.shape != shape:
        raise InputError(
            f"superpixels are {_hw(s.shape)} but the ground truth is {_hw(shape)}"
        )
    cs, ns = compact_superpixels(s)
    stacked = stacked_tables(cs, ns, gflat, n_gts)
    return split_tables(stacked, n_gts), cs, ns


def _hw(shape) -> str:
    return "x".join(str(n) for n in shape) + " (HxW)"
