"""Undersegmentation errors, achievable segmentation accuracy and their relatives.

Every measure is a function of one overlap table (:func:`superpixel_table`: rows are
superpixels, columns ground-truth segments, column 0 the void ground-truth pixels), so
all of them share one pass over the pixels. Each takes either the two label maps or
``table=``.

Notation used in the docstrings: ``M[s, g]`` = pixels of superpixel s in segment g;
``|s|`` = all pixels of s (void ground-truth pixels included); ``|g|`` = pixels of g;
``T`` = labelled ground-truth pixels (the image size N when nothing is void).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import InputError
from ..primitives import checked_counts
from ._table import superpixel_table

#: Overlap below which the SLIC paper ignores a superpixel (fraction of its area).
ACHANTA_MIN_OVERLAP = 0.05


def _table(sp, gt, table, void) -> np.ndarray:
    if table is not None:
        t = checked_counts(table, "an overlap table")
        if t[0].any():
            raise InputError(
                "row 0 of an overlap table (void superpixel pixels) must be "
                "empty: every pixel belongs to a superpixel"
            )
        return t
    if sp is None or gt is None:
        raise InputError("give a superpixel map and a ground truth, or table=")
    return superpixel_table(sp, gt, void=void)


def _parts(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(M (S, G) float64, |s| (S,), T) of a table."""
    t = np.asarray(t, dtype=np.float64)
    m = t[1:, 1:]
    return m, t[1:].sum(axis=1), float(m.sum())


def _ratio(num: float, den: float) -> float:
    return float(num / den) if den > 0 else float("nan")


def seeds_ue(sp=None, gt=None, *, table=None, void=None, normalized: bool = False) -> float:
    """Undersegmentation error as scored in the SEEDS evaluation (the package default).

    ``UE = sum over overlapping pairs (s, g) of |s - g|  /  T``: every superpixel is
    charged, for each segment it touches, with its pixels outside that segment.

    Parameters
    ----------
    sp, gt : (H, W) label maps
        Superpixels and one annotator.
    table : array, optional
        ``superpixel_table(sp, gt, void=void)`` instead of the maps.
    void : int or None, default None
        Unlabelled ground-truth label (None: none).
    normalized : bool, default False
        Divide by ``sum over overlapping pairs of |s|`` instead of ``T``: the fraction
        of the charged pairs' pixels that lie outside the pair's segment, in [0, 1).
        It equals ``UE / (1 + UE)``, so it orders maps as UE does.

    Returns
    -------
    float
        0 when every superpixel lies inside one segment; grows by ``|s|`` for every
        extra segment a superpixel touches: above 1 once the superpixels touch more
        than two segments each on average (unbounded above). ``normalized``: below 1.
        NaN if T = 0.

    Notes
    -----
    Exactly the scoring recipe of the reference (``compute_ue``). That reference also
    states a range of [0, 1], which its own recipe does not keep: a superpixel that
    touches k segments is charged ``k - 1`` times its area, and on BSDS500, whose
    annotators draw many small segments, SLIC at 200 superpixels exceeds 1 against
    several annotators (``docs/superpixel.md``). We keep the recipe, and offer
    ``normalized`` as the figure that stays in range. Summing the recipe per
    superpixel gives ``(sum_s k_s |s| - T) / T`` with k_s the segments s touches: the
    SLIC-paper error (:func:`achanta_ue`) without its 5 % overlap rule; the
    normalized form is ``(sum_s k_s |s| - T) / sum_s k_s |s|``.

    References
    ----------
    .. [1] M. Van den Bergh, X. Boix, G. Roig, B. de Capitani, L. Van Gool, "SEEDS:
       Superpixels Extracted via Energy-Driven Sampling", ECCV 2012; IJCV 111(3), 2015.

    Examples
    --------
    >>> import numpy as np
    >>> seeds_ue(np.array([[0, 0, 0, 1]]), np.array([[0, 0, 1, 1]]))
    0.75
    >>> seeds_ue(np.array([[0, 0, 0, 1]]), np.array([[0, 0, 1, 1]]), normalized=True)
    0.42857142857142855
    """
    parts = _parts(_table(sp, gt, table, void))
    return _seeds_ue_normalized(*parts) if normalized else _seeds_ue(*parts)


def _seeds_ue(m, size, total) -> float:
    return _ratio(((size[:, None] - m) * (m > 0)).sum(), total)


def _seeds_ue_normalized(m, size, total) -> float:
    touched = m > 0
    return _ratio(((size[:, None] - m) * touched).sum(), (size[:, None] * touched).sum())


def normalized_seeds_ue(ue):
    """The in-range form of SEEDS-recipe UE values: ``UE / (1 + UE)``, in [0, 1).

    The same number as ``seeds_ue(..., normalized=True)`` of each pair (the recipe's
    numerator over its upper bound ``sum over overlapping pairs of |s|``, which is the
    numerator plus ``T``), computed from stored UE values; NaN stays NaN.

    Examples
    --------
    >>> normalized_seeds_ue(0.75)
    0.42857142857142855
    """
    ue = np.asarray(ue, dtype=np.float64)
    out = ue / (1.0 + ue)
    return float(out) if out.ndim == 0 else out


def corrected_ue(sp=None, gt=None, *, table=None, void=None) -> float:
    """Corrected undersegmentation error (CUE) of van den Bergh et al.

    ``CUE = sum_s |s - g*(s)| / T`` with ``g*(s)`` the segment overlapping s most: each
    superpixel is charged once, with the pixels outside its best segment.

    Returns
    -------
    float
        In [0, 1] without void pixels, where it equals ``1 - ASA``; NaN if T = 0.

    Notes
    -----
    The C++ superpixel benchmark's column ``ue`` is this measure (its documentation
    calls it Neubert-Protzel's; see :func:`neubert_protzel_ue` for that one). With void
    ground-truth pixels, ``|s|`` still counts them, so ``CUE = N / T - ASA``.

    References
    ----------
    .. [1] M. Van den Bergh et al., "SEEDS: Superpixels Extracted via Energy-Driven
       Sampling", IJCV 111(3), 2015 (the corrected undersegmentation error).

    Examples
    --------
    >>> import numpy as np
    >>> corrected_ue(np.array([[0, 0, 0, 1]]), np.array([[0, 0, 1, 1]]))
    0.25
    """
    return _corrected_ue(*_parts(_table(sp, gt, table, void)))


def _best_per_superpixel(m) -> np.ndarray:
    return m.max(axis=1) if m.shape[1] else np.zeros(m.shape[0])


def _corrected_ue(m, size, total) -> float:
    return _ratio((size - _best_per_superpixel(m)).sum(), total)


def achievable_segmentation_accuracy(sp=None, gt=None, *, table=None, void=None) -> float:
    """Achievable segmentation accuracy (ASA) of Liu et al.

    ``ASA = sum_s max_g M[s, g] / T``: the accuracy of the best segmentation that uses
    superpixels as indivisible units (each labelled with its best segment).

    Returns
    -------
    float
        In [0, 1]; 1 when every superpixel lies inside one segment. NaN if T = 0.

    References
    ----------
    .. [1] M.-Y. Liu, O. Tuzel, S. Ramalingam, R. Chellappa, "Entropy rate superpixel
       segmentation", CVPR 2011.

    Examples
    --------
    >>> import numpy as np
    >>> achievable_segmentation_accuracy(np.array([[0, 0, 0, 1]]), np.array([[0, 0, 1, 1]]))
    0.75
    """
    return _asa(*_parts(_table(sp, gt, table, void)))


def _asa(m, size, total) -> float:
    return _ratio(_best_per_superpixel(m).sum(), total)


#: Short name of :func:`achievable_segmentation_accuracy`.
asa = achievable_segmentation_accuracy


def levinshtein_ue(sp=None, gt=None, *, table=None, void=None) -> float:
    """Undersegmentation error of Levinshtein et al. (TurboPixels).

    For each segment g, the area by which the superpixels touching it leak out of it,
    relative to its area, ``(sum_{s: M[s,g] > 0} |s| - |g|) / |g|``; averaged over the
    segments.

    Returns
    -------
    float
        0 when every superpixel lies inside one segment; unbounded above (a segment of
        a few pixels inside a big superpixel weighs as much as a large one). NaN when
        there is no segment.

    Notes
    -----
    The average runs over the segments present. The C++ superpixel benchmark
    (``ue_levin``) divides by the largest label + 1 instead, which counts absent label
    values: its number changes when the same ground truth is labelled 1..K rather than
    0..K-1 (see :func:`stutz_columns`).

    References
    ----------
    .. [1] A. Levinshtein, A. Stere, K. N. Kutulakos, D. J. Fleet, S. J. Dickinson,
       K. Siddiqi, "TurboPixels: Fast Superpixels Using Geometric Flows", TPAMI 31(12),
       2009.

    Examples
    --------
    >>> import numpy as np
    >>> levinshtein_ue(np.array([[0, 0, 0, 1]]), np.array([[0, 0, 1, 1]]))
    0.75
    """
    return _levinshtein_ue(*_parts(_table(sp, gt, table, void)))


def _levinshtein_ue(m, size, total) -> float:
    gsize = m.sum(axis=0)
    present = gsize > 0
    if not present.any():
        return float("nan")
    leak = (size[:, None] * (m > 0)).sum(axis=0) - gsize
    return float((leak[present] / gsize[present]).mean())


def neubert_protzel_ue(sp=None, gt=None, *, table=None, void=None) -> float:
    """Undersegmentation error of Neubert and Protzel.

    ``sum over (s, g) of min(M[s, g], |s| - M[s, g]) / T``: a superpixel that straddles
    a segment boundary is charged with the smaller of its two parts, so a superpixel
    that leaks a few pixels is charged a few pixels (not its whole area, as in
    :func:`achanta_ue`).

    Returns
    -------
    float
        0 when every superpixel lies inside one segment; NaN if T = 0.

    References
    ----------
    .. [1] P. Neubert, P. Protzel, "Superpixel Benchmark and Comparison", Forum
       Bildverarbeitung 2012.

    Examples
    --------
    >>> import numpy as np
    >>> neubert_protzel_ue(np.array([[0, 0, 0, 1]]), np.array([[0, 0, 1, 1]]))
    0.5
    """
    return _neubert_protzel_ue(*_parts(_table(sp, gt, table, void)))


def _neubert_protzel_ue(m, size, total) -> float:
    return _ratio(np.minimum(m, size[:, None] - m).sum(), total)


def achanta_ue(
    sp=None, gt=None, *, table=None, void=None, min_overlap: float = ACHANTA_MIN_OVERLAP
) -> float:
    """Undersegmentation error of the SLIC paper (Achanta et al.).

    ``(sum_g sum_{s: M[s, g] > B_s} |s| - T) / T`` with ``B_s = min_overlap * |s|``:
    a superpixel counts for every segment it overlaps by more than 5 % of its area.

    Parameters
    ----------
    min_overlap : float, default 0.05
        The paper's B as a fraction of the superpixel's area ("to account for small
        errors in ground truth segmentation data"). 0 gives :func:`seeds_ue`.

    Returns
    -------
    float
        0 when every superpixel lies inside one segment. Can be slightly negative in
        the degenerate case where a superpixel overlaps no segment by more than B
        (it then counts for none). NaN if T = 0.

    References
    ----------
    .. [1] R. Achanta, A. Shaji, K. Smith, A. Lucchi, P. Fua, S. Süsstrunk, "SLIC
       Superpixels Compared to State-of-the-Art Superpixel Methods", TPAMI 34(11), 2012.

    Examples
    --------
    >>> import numpy as np
    >>> sp = np.array([[0] * 20 + [1]])
    >>> gt = np.array([[0] * 19 + [1, 1]])   # superpixel 0 puts 1/20 = 5% in segment 1
    >>> achanta_ue(sp, gt), seeds_ue(sp, gt)
    (0.0, 0.9523809523809523)
    """
    if not 0 <= min_overlap < 1:
        raise InputError(f"min_overlap must lie in [0, 1), got {min_overlap}")
    return _achanta_ue(*_parts(_table(sp, gt, table, void)), min_overlap)


def _achanta_ue(m, size, total, min_overlap: float = ACHANTA_MIN_OVERLAP) -> float:
    counted = m > min_overlap * size[:, None]
    return _ratio((size[:, None] * counted).sum() - total, total)


def oversegmentation_error(sp=None, gt=None, *, table=None, void=None) -> float:
    """Oversegmentation error: the undersegmentation error with the roles swapped.

    ``sum_g min_s (|g| - M[s, g]) / T``: each segment is charged with its pixels outside
    the superpixel covering most of it. High for any superpixel method by design (a
    segment is split into many superpixels); reported for completeness.

    Notes
    -----
    The C++ superpixel benchmark's column ``oe`` (it is the dual of its ``ue``, i.e. of
    :func:`corrected_ue`).
    """
    return _oversegmentation_error(*_parts(_table(sp, gt, table, void)))


def _oversegmentation_error(m, size, total) -> float:
    gsize = m.sum(axis=0)
    best = m.max(axis=0) if m.shape[0] else np.zeros(m.shape[1])
    return _ratio((gsize - best).sum(), total)


#: Every table measure by its name in segbench's results (the keys of
#: :func:`table_measures`, in that order): its core on ``(M, |s|, T)``, its function,
#: and what it follows.
_MEASURES: dict[str, tuple[Callable[..., float], Callable[..., float], str]] = {
    "ue": (_seeds_ue, seeds_ue, "SEEDS evaluation (van den Bergh et al.)"),
    "cue": (_corrected_ue, corrected_ue, "corrected UE (van den Bergh et al.)"),
    "ue_levinshtein": (
        _levinshtein_ue,
        levinshtein_ue,
        "TurboPixels (Levinshtein et al. 2009)",
    ),
    "ue_np": (_neubert_protzel_ue, neubert_protzel_ue, "Neubert and Protzel 2012"),
    "ue_achanta": (
        _achanta_ue,
        achanta_ue,
        "SLIC paper (Achanta et al. 2012), 5% overlap rule",
    ),
    "asa": (_asa, achievable_segmentation_accuracy, "Liu et al. 2011"),
    "oe": (
        _oversegmentation_error,
        oversegmentation_error,
        "undersegmentation error with the roles swapped",
    ),
}

#: The undersegmentation errors by name: the name of each variant in segbench's
#: results, its function, and what it follows.
UE_VARIANTS = {
    k: (f, what) for k, (_, f, what) in _MEASURES.items() if k not in ("asa", "oe")
}

#: ``variant=`` of :func:`undersegmentation_error` -> the name in :data:`UE_VARIANTS`.
_VARIANT_ALIASES = {
    "seeds": "ue",
    "seeds-normalized": "ue_norm",
    "corrected": "cue",
    "cue": "cue",
    "levinshtein": "ue_levinshtein",
    "neubert-protzel": "ue_np",
    "np": "ue_np",
    "achanta": "ue_achanta",
    "slic": "ue_achanta",
}


def undersegmentation_error(
    sp=None, gt=None, *, variant: str = "seeds", table=None, void=None
) -> float:
    """Undersegmentation error under a named variant.

    Parameters
    ----------
    variant : {'seeds', 'seeds-normalized', 'corrected', 'levinshtein', \
'neubert-protzel', 'achanta'}
        :func:`seeds_ue` (default; ``'seeds-normalized'``: with ``normalized=True``),
        :func:`corrected_ue`, :func:`levinshtein_ue`, :func:`neubert_protzel_ue`,
        :func:`achanta_ue`.
    """
    if variant not in _VARIANT_ALIASES:
        raise InputError(
            f"unknown undersegmentation-error variant {variant!r}; choose "
            "seeds, seeds-normalized, corrected, levinshtein, "
            "neubert-protzel or achanta"
        )
    name = _VARIANT_ALIASES[variant]
    if name == "ue_norm":
        return seeds_ue(sp, gt, table=table, void=void, normalized=True)
    return UE_VARIANTS[name][0](sp, gt, table=table, void=void)


def table_measures(table, *, min_overlap: float = ACHANTA_MIN_OVERLAP) -> dict:
    """Every table measure of one (superpixels, annotator) pair, from one table.

    Returns a dict with keys ``ue`` (SEEDS), ``cue``, ``ue_levinshtein``, ``ue_np``,
    ``ue_achanta``, ``asa``, ``oe``; the same numbers as the individual functions
    (the same cores, on the table converted once).
    """
    m, size, total = _parts(np.asarray(table))
    return {
        k: core(m, size, total, min_overlap) if k == "ue_achanta" else core(m, size, total)
        for k, (core, _, _) in _MEASURES.items()
    }
