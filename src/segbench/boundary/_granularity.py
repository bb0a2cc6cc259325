"""Best of several granularities: per image and per threshold, the counts of the
granularity whose F is highest (the "best-of-K" rule of MuGE and SAUGE)."""

from __future__ import annotations

import sys

import numpy as np

from ..errors import InputError
from ..primitives import BoundaryCounts

#: ``sys.float_info.epsilon``, the floor of SAUGE's ``computeRPF`` denominators.
_EPS = sys.float_info.epsilon


def _image_f(cnt: np.ndarray) -> np.ndarray:
    """Per-entry F of ``(..., 4)`` counts cntR, sumR, cntP, sumP, as SAUGE's
    ``computeRPF`` (``eval_result/utils_ois.py`` L27-33)."""
    r = cnt[..., 0] / np.maximum(cnt[..., 1], _EPS)
    p = cnt[..., 2] / np.maximum(cnt[..., 3], _EPS)
    return (2 * p * r) / np.maximum(p + r, _EPS)


def _stack(records) -> tuple[list[list[BoundaryCounts]], np.ndarray]:
    """The records as lists, and their counts as a ``(K, N, T, 4)`` int64 array;
    InputError on anything :func:`best_of_granularities` cannot compare."""
    try:
        groups = [list(g) for g in records]
    except TypeError as exc:
        raise InputError(
            "records must be a sequence of lists of BoundaryCounts, one "
            "list per granularity"
        ) from exc
    if not groups:
        raise InputError(
            "no granularities given: records needs at least one list of "
            "per-image counts (K >= 1)"
        )
    n = len(groups[0])
    for k, g in enumerate(groups):
        if len(g) != n:
            raise InputError(
                f"granularity {k} has {len(g)} images but granularity 0 has "
                f"{n}: every granularity needs the same images, in the same "
                "order"
            )
    if n == 0:
        raise InputError("no images: every granularity's list of counts is empty")
    for k, g in enumerate(groups):
        for i, rec in enumerate(g):
            if not all(
                hasattr(rec, a) for a in ("thresholds", "cnt_r", "sum_r", "cnt_p", "sum_p")
            ):
                raise InputError(
                    f"granularity {k}, image {i}: not a BoundaryCounts "
                    f"({type(rec).__name__})"
                )
    ref = np.asarray(groups[0][0].thresholds, dtype=np.float64)
    if ref.ndim != 1 or ref.size == 0:
        raise InputError(
            f"granularity 0, image 0: thresholds must be a non-empty 1-D "
            f"array, got shape {ref.shape}"
        )
    for k, g in enumerate(groups):
        for i, rec in enumerate(g):
            t = np.asarray(rec.thresholds, dtype=np.float64)
            if t.shape != ref.shape or not np.allclose(t, ref, rtol=0, atol=1e-9):
                raise InputError(
                    f"granularity {k}, image {i} has thresholds different from those of "
                    f"granularity 0, image 0 ({t.size} values from {t.min():.6g} to "
                    f"{t.max():.6g}, not {ref.size} from {ref[0]:.6g} to {ref[-1]:.6g}): "
                    "every granularity must be evaluated at the same thresholds"
                )
            for name in ("cnt_r", "sum_r", "cnt_p", "sum_p"):
                if np.shape(getattr(rec, name)) != ref.shape:
                    raise InputError(
                        f"granularity {k}, image {i}: {name} has shape "
                        f"{np.shape(getattr(rec, name))}, not one entry per "
                        f"threshold {ref.shape}"
                    )
    cnt = np.stack(
        [
            np.stack([np.column_stack([r.cnt_r, r.sum_r, r.cnt_p, r.sum_p]) for r in g])
            for g in groups
        ]
    ).astype(np.int64)
    # sumR (human pixels, summed over annotators) belongs to the image, not to the
    # prediction: a difference means the lists are not of the same images in one order
    bad = np.argwhere((cnt[:, :, :, 1] != cnt[:1, :, :, 1]).any(axis=2))
    if bad.size:
        k, i = (int(x) for x in bad[0])
        raise InputError(
            f"image {i}: granularity {k} counts {cnt[k, i, 0, 1]} human "
            f"boundary pixels (sumR) but granularity 0 counts "
            f"{cnt[0, i, 0, 1]}: the lists must hold the same images in the "
            "same order"
        )
    return groups, cnt


def best_of_granularities(records) -> tuple[list[BoundaryCounts], np.ndarray]:
    """Per image and per threshold, the counts of the granularity with the best F.

    The "best-of-K" rule with which MuGE and SAUGE score a multi-granularity edge
    detector: an oracle chooses, for every image and every threshold separately, the
    granularity whose own F is highest there, and keeps that granularity's counts.

    Parameters
    ----------
    records : sequence of K sequences of BoundaryCounts
        One list per granularity (K >= 1), each with one record per image: the same
        images in the same order, all at the same thresholds (equal within 1e-9).

    Returns
    -------
    combined : list of BoundaryCounts
        One record per image, at the thresholds of ``records[0]``: at threshold ``t``,
        the cntR, sumR, cntP, sumP of granularity ``choice[i, t]``.
    choice : (N, T) int64 array
        The granularity (index into ``records``) chosen for each image and threshold.

    Raises
    ------
    InputError
        No granularity (K = 0) or no image; granularities with different numbers of
        images; an entry that is not a BoundaryCounts, or whose counts are not one per
        threshold; thresholds that differ between any two records; or an image whose
        human pixel count (sumR) differs between granularities (the lists are then not
        of the same images in the same order).

    Notes
    -----
    The rule is SAUGE's ``eval_result/best_ods_ois.py`` (github.com/Star-xing1/SAUGE,
    commit 63a2581), itself based on MuGE's script of the same name:

    1. per image and granularity, F at every threshold row with ``computeRPF``
       (``best_ods_ois.py`` L42-58; ``utils_ois.py`` L27-33):
       ``R = cntR / max(sumR, eps)``, ``P = cntP / max(sumP, eps)``,
       ``F = 2 P R / max(P + R, eps)`` with ``eps`` the float64 machine epsilon; for
       counts that is ``2PR / (P + R)`` with 0 where ``P + R == 0``;
    2. per threshold, ``g*(t) = argmax_g F[g, t]`` (L60);
    3. that granularity's counts at ``t`` (``index_select``, L19-24, L76).

    Ties: the first granularity (lowest index) with the highest F wins, as
    ``np.argmax`` in SAUGE's L60. Only the record line of SAUGE's script breaks on
    ties: L66, ``np.where(model_F == np.max(model_F))[0].item()``, raises when an
    image's highest F over all (granularity, threshold) pairs is reached more than
    once; this function has no such case.

    ODS, OIS and AP of ``combined`` are then segbench's usual summary
    (:func:`segbench.boundary.summarize`, BSR's ``collect_eval_bdry.m``):

    - OIS is what SAUGE computes (L62-64, L73-74): each image's counts at its first
      threshold of highest combined F, i.e. at the first (threshold, then
      granularity) pair of highest F over all (g, t), pooled over images.
    - ODS pools ``combined`` over images at every threshold (SAUGE L79) and takes the
      best F on the curve interpolated linearly between neighbouring thresholds,
      100 points per segment. SAUGE's ``findBestRPF`` (``utils_ois.py`` L5-25) does
      the same interpolation with the same arithmetic, but loops
      ``j = 0 .. len(T) - 1`` over ``T = 0.01 .. 0.99`` (99 labels for the 100 rows of
      thresholds 0 .. 0.99) and interpolates rows ``j - 1`` to ``j``. So it:

      * reports ``bestT = T[j - 1]``, which for ``j >= 1`` is row ``j``'s sampled
        threshold ``j / 100`` (the segment's upper end), where segbench reports the
        interpolated threshold at which the best F lies (e.g. 0.68 against
        0.678182); the ``T[j]`` labels are one row high, but only the unused ``Tj``
        uses them;
      * for ``j = 0`` interpolates row -1, i.e. the last row (threshold 0.99), to
        row 0 (threshold 0), a chord BSR does not have, and would report 0.99;
      * never tries the segment between the last two rows (0.98 to 0.99), which BSR
        does;
      * skips a whole segment when one of its ends has P + R = 0 (its F is NaN and
        ``np.max`` returns NaN), where BSR counts F = 0 there;

      the best R, P and F are otherwise the same numbers. On SAUGE's released counts
      the best lies inside the curve, so only the reported threshold differs.

    Examples
    --------
    >>> import numpy as np
    >>> from segbench.boundary import BoundaryCounts
    >>> t = np.array([0.25, 0.75])
    >>> a = BoundaryCounts(t, np.array([8, 4]), np.array([10, 10]),
    ...                    np.array([4, 4]), np.array([10, 5]))
    >>> b = BoundaryCounts(t, np.array([6, 2]), np.array([10, 10]),
    ...                    np.array([6, 2]), np.array([10, 2]))
    >>> combined, choice = best_of_granularities([[a], [b]])
    >>> choice.tolist()
    [[1, 0]]
    >>> combined[0].cnt_p.tolist()
    [6, 4]
    """
    groups, cnt = _stack(records)
    choice = np.argmax(_image_f(cnt.astype(np.float64)), axis=0)  # (N, T), first max
    best = np.take_along_axis(cnt, choice[None, :, :, None], axis=0)[0]  # (N, T, 4)
    thresholds = np.asarray(groups[0][0].thresholds, dtype=np.float64)
    combined = [
        BoundaryCounts(thresholds.copy(), *(best[i, :, c].copy() for c in range(4)))
        for i in range(best.shape[0])
    ]
    return combined, choice.astype(np.int64)
