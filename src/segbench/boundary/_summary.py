"""Dataset scores from per-image counts, as ``collect_eval_bdry.m``."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError


def bsr_ratio(num, den):
    """``num / den`` with 0 where ``den == 0``, as the BSR code's ``x ./ (y + (y==0))``."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    return num / (den + (den == 0))


def f_measure(recall, precision):
    """Harmonic mean ``2PR / (P + R)``, 0 where ``P + R == 0`` (BSR's ``fmeasure``)."""
    r = np.asarray(recall, dtype=np.float64)
    p = np.asarray(precision, dtype=np.float64)
    s = p + r
    return 2 * p * r / (s + (s == 0))


def max_f(thresholds, recall, precision):
    """Best F along a PR curve, interpolating between neighbouring thresholds.

    As ``maxF`` in ``collect_eval_bdry.m``: besides the sampled points, 100 evenly
    spaced points (``linspace(0, 1)``) between each pair of neighbouring thresholds
    are tried, with threshold, recall and precision interpolated linearly; the first
    strict maximum wins.

    Returns
    -------
    (threshold, recall, precision, f) : tuple of float
    """
    t = np.asarray(thresholds, dtype=np.float64)
    r = np.asarray(recall, dtype=np.float64)
    p = np.asarray(precision, dtype=np.float64)
    best = (t[0], r[0], p[0], float(f_measure(r[0], p[0])))
    if t.size < 2:
        return best
    d = np.linspace(0.0, 1.0, 100)
    # rows: segment i (between i and i+1); columns: the 100 interpolation points
    ti = t[1:, None] * d + t[:-1, None] * (1 - d)
    ri = r[1:, None] * d + r[:-1, None] * (1 - d)
    pi = p[1:, None] * d + p[:-1, None] * (1 - d)
    fi = f_measure(ri, pi)
    k = int(np.argmax(fi))  # first maximum in MATLAB's loop order (segment, then d)
    if fi.flat[k] > best[3]:
        best = (ti.flat[k], ri.flat[k], pi.flat[k], float(fi.flat[k]))
    return tuple(float(x) for x in best)


def average_precision(recall, precision, *, corrected: bool = False,
                      unique_keep: str = "first") -> float:
    """Area under the PR curve as ``collect_eval_bdry.m`` computes it.

    Precision is taken at the unique recall values, interpolated linearly at recall
    0, 0.01, ..., 1; samples outside the measured recall range count as 0; the 101
    samples are summed and multiplied by 0.01.

    Parameters
    ----------
    recall, precision : (T,) array_like
        The dataset PR curve, one point per threshold.
    corrected : bool, default False
        Divide the 101-sample sum by 101 instead of 100. The BSR code (and therefore
        every published BSDS AP) divides by 100, which overestimates AP by 1%; Dollár
        and Zitnick note the error. False reproduces the published numbers.
    unique_keep : {'first', 'last'}
        Which point MATLAB's ``unique`` keeps among equal recall values: 'first' since
        MATLAB R2013a (and in Octave), 'last' before.

    Returns
    -------
    float
        0 when fewer than two distinct recall values exist, as the BSR code.
    """
    r = np.asarray(recall, dtype=np.float64)
    p = np.asarray(precision, dtype=np.float64)
    if unique_keep == "first":
        ru, idx = np.unique(r, return_index=True)
    elif unique_keep == "last":
        ru, idx_rev = np.unique(r[::-1], return_index=True)
        idx = r.size - 1 - idx_rev
    else:
        raise InputError(f"unique_keep must be 'first' or 'last', not {unique_keep!r}")
    if ru.size < 2:
        return 0.0
    grid = np.linspace(0.0, 1.0, 101)
    pi = np.interp(grid, ru, p[idx], left=np.nan, right=np.nan)
    total = float(np.nansum(pi))
    return total / 101 if corrected else total * 0.01


def recall_at_precision(recall, precision, target: float = 0.5) -> float:
    """Recall at 50% precision (R50), as Dollár's ``edgesEvalDir``.

    Recall is interpolated linearly as a function of precision (over the unique
    precision values) at ``max(min precision, target)``; NaN when the curve never
    reaches the target precision.
    """
    r = np.asarray(recall, dtype=np.float64)
    p = np.asarray(precision, dtype=np.float64)
    pu, idx = np.unique(p, return_index=True)
    at = max(pu[0], target)
    if pu.size == 1:
        return float(r[idx[0]]) if at == pu[0] else float("nan")
    return float(np.interp(at, pu, r[idx], left=np.nan, right=np.nan))


@dataclass(frozen=True)
class BoundarySummary:
    """Dataset-level boundary scores (the content of ``eval_bdry*.txt``).

    Attributes
    ----------
    ods : (threshold, recall, precision, f)
        Optimal dataset scale: counts pooled over images at each threshold, best F with
        interpolation between thresholds.
    ois : (recall, precision, f)
        Optimal image scale: each image at its first best sampled threshold, counts
        pooled, one F.
    ap : float
        Area under the PR curve as the BSR code computes it (101 samples / 100).
    ap_corrected : float
        The same sum divided by 101.
    r50 : float
        Recall at 50% precision (Dollár's toolbox); NaN if never reached.
    thresholds, recall, precision, f : (T,) arrays
        The dataset PR curve.
    per_image : (N, 4) array
        Each image's best threshold, recall, precision, F (interpolated, as ODS).
    ids : list of str
        Image ids, in the order of ``per_image``.
    """

    ods: tuple
    ois: tuple
    ap: float
    ap_corrected: float
    r50: float
    thresholds: np.ndarray
    recall: np.ndarray
    precision: np.ndarray
    f: np.ndarray
    per_image: np.ndarray
    ids: list = field(default_factory=list)

    def metrics(self) -> dict:
        """The headline numbers as a flat dict of floats."""
        return {
            "ODS": self.ods[3], "ODS_threshold": self.ods[0],
            "ODS_recall": self.ods[1], "ODS_precision": self.ods[2],
            "OIS": self.ois[2], "OIS_recall": self.ois[0], "OIS_precision": self.ois[1],
            "AP": self.ap, "AP_corrected": self.ap_corrected, "R50": self.r50,
        }


def summarize(records, ids=None, *, unique_keep: str = "first") -> BoundarySummary:
    """Pool per-image counts into ODS, OIS, AP and R50, as ``collect_eval_bdry.m``.

    Parameters
    ----------
    records : sequence of BoundaryCounts
        One per image, all with the same thresholds.
    ids : sequence of str, optional
        Image ids for the per-image table.
    unique_keep : {'first', 'last'}
        Passed to :func:`average_precision`.

    Returns
    -------
    BoundarySummary

    Notes
    -----
    Follows the BSR code rather than the papers: ODS and OIS choose their thresholds
    on the evaluated images; OIS takes each image's first best *sampled* threshold
    (no interpolation) and pools the counts there; AP is the BSR sum over 101 recall
    samples divided by 100 (``ap``), with the /101 value alongside (``ap_corrected``).
    ``ap`` is the default headline because it is the number every paper reports.
    """
    records = list(records)
    if not records:
        raise InputError("no per-image records to summarize")
    thresholds = records[0].thresholds
    for rec in records[1:]:
        if rec.thresholds.shape != thresholds.shape or not np.allclose(
                rec.thresholds, thresholds):
            raise InputError("per-image records were computed at different thresholds")
    cnt = np.stack([np.column_stack([r.cnt_r, r.sum_r, r.cnt_p, r.sum_p])
                    for r in records])                     # (N, T, 4)
    per_image = np.zeros((len(records), 4))
    best_rows = np.zeros((len(records), 4))
    for i, c in enumerate(cnt):
        r = bsr_ratio(c[:, 0], c[:, 1])
        p = bsr_ratio(c[:, 2], c[:, 3])
        per_image[i] = max_f(thresholds, r, p)
        best_rows[i] = c[int(np.argmax(f_measure(r, p)))]  # first best sampled threshold
    total = cnt.sum(axis=0)
    recall = bsr_ratio(total[:, 0], total[:, 1])
    precision = bsr_ratio(total[:, 2], total[:, 3])
    f = f_measure(recall, precision)
    ods = max_f(thresholds, recall, precision)
    pooled = best_rows.sum(axis=0)
    r_max = float(bsr_ratio(pooled[0], pooled[1]))
    p_max = float(bsr_ratio(pooled[2], pooled[3]))
    ois = (r_max, p_max, float(f_measure(r_max, p_max)))
    return BoundarySummary(
        ods=ods, ois=ois,
        ap=average_precision(recall, precision, unique_keep=unique_keep),
        ap_corrected=average_precision(recall, precision, corrected=True,
                                       unique_keep=unique_keep),
        r50=recall_at_precision(recall, precision),
        thresholds=np.asarray(thresholds, dtype=np.float64), recall=recall,
        precision=precision, f=f, per_image=per_image,
        ids=list(ids) if ids is not None else [str(i + 1) for i in range(len(records))],
    )


def summarize_human(counts) -> tuple[float, float, float]:
    """Recall, precision and F of pooled human counts (see :func:`human_counts`)."""
    c = np.asarray(counts, dtype=np.float64).reshape(-1, 4).sum(axis=0)
    r = float(bsr_ratio(c[0], c[1]))
    p = float(bsr_ratio(c[2], c[3]))
    return r, p, float(f_measure(r, p))
