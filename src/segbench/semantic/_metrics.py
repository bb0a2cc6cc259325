"""The IoU family as pure functions of a summed confusion matrix, and boundary IoU of
summed band counts. No pixels here: everything reads a (C, C) count matrix (row = ground
truth, column = prediction) or per-class band counts.

Rules (mmsegmentation's ``IoUMetric``, v1.2.2):

- a class with ``tp + fp + fn == 0`` (no pixel on either side) has no IoU and no Dice and
  is left out of mIoU and mDice; a class with no ground-truth pixel has no accuracy and
  is left out of mAcc. "No value" is ``nan``, never 0.
- a class predicted somewhere but absent from every ground truth has IoU 0 and Dice 0
  and counts toward mIoU and mDice (mmseg and torchmetrics; detectron2 drops it).
"""

from __future__ import annotations

import numpy as np

METRIC_NAMES = ("mIoU", "fwIoU", "mAcc", "aAcc", "mDice", "mBIoU")
CLASS_METRICS = ("IoU", "Acc", "Dice", "BIoU")


def _matrix(confusion) -> np.ndarray:
    m = np.asarray(confusion)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] == 0:
        raise ValueError(
            f"confusion must be a non-empty square (C, C) matrix, got shape {m.shape}"
        )
    if m.dtype.kind not in "iuf":
        raise ValueError(f"confusion must hold counts, got dtype {m.dtype}")
    return m.astype(np.float64)


def _ratio(num, den) -> np.ndarray:
    out = np.full(np.shape(num), np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _nanmean(values) -> float:
    values = np.asarray(values, dtype=np.float64)
    if np.isnan(values).all():
        return float("nan")
    return float(np.nanmean(values))


def class_areas(confusion) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-class ``tp`` (diagonal), ``gt_area`` (row sums, tp + fn) and ``pred_area``
    (column sums, tp + fp), as float64."""
    m = _matrix(confusion)
    return np.diag(m).copy(), m.sum(axis=1), m.sum(axis=0)


# the metrics of the areas class_areas returns: tp, gt (tp + fn), pred (tp + fp)


def _iou(tp, gt, pred) -> np.ndarray:
    return _ratio(tp, gt + pred - tp)


def _acc(tp, gt, _pred) -> np.ndarray:
    return _ratio(tp, gt)


def _dice(tp, gt, pred) -> np.ndarray:
    return _ratio(2 * tp, gt + pred)


def _aacc(tp, gt, _pred) -> float:
    total = gt.sum()
    return float(tp.sum() / total) if total > 0 else float("nan")


def _fwiou(tp, gt, pred) -> float:
    total = gt.sum()
    if total == 0:
        return float("nan")
    has = gt > 0
    return float(np.sum(tp[has] / (gt + pred - tp)[has] * (gt[has] / total)))


def iou_per_class(confusion) -> np.ndarray:
    """IoU_c = tp / (tp + fp + fn); ``nan`` for a class absent on both sides.

    Examples
    --------
    >>> iou_per_class([[3, 1], [0, 0]])
    array([0.75, 0.  ])
    """
    return _iou(*class_areas(confusion))


def accuracy_per_class(confusion) -> np.ndarray:
    """Acc_c = tp / (tp + fn), the recall of the class's pixels; ``nan`` without
    ground truth."""
    return _acc(*class_areas(confusion))


def dice_per_class(confusion) -> np.ndarray:
    """Dice_c = 2 tp / (2 tp + fp + fn), the F1 of the class's pixels; ``nan`` for a class
    absent on both sides."""
    return _dice(*class_areas(confusion))


def mean_iou(confusion) -> float:
    """Mean of the per-class IoU over the classes that have one (mmseg's mIoU).

    Examples
    --------
    >>> mean_iou([[3, 1], [0, 0]])   # class 1 predicted, never in the ground truth
    0.375
    """
    return _nanmean(iou_per_class(confusion))


def mean_accuracy(confusion) -> float:
    """Mean of the per-class accuracy over the classes with ground truth (mAcc)."""
    return _nanmean(accuracy_per_class(confusion))


def mean_dice(confusion) -> float:
    """Mean of the per-class Dice over the classes that have one (mmseg's mDice)."""
    return _nanmean(dice_per_class(confusion))


def pixel_accuracy(confusion) -> float:
    """aAcc = sum tp / number of counted pixels; ``nan`` when nothing was counted."""
    return _aacc(*class_areas(confusion))


def frequency_weighted_iou(confusion) -> float:
    """fwIoU = sum_c IoU_c * gt_c / sum_c gt_c (detectron2's definition; mmseg has none).

    Classes without ground truth weigh 0; ``nan`` when nothing was counted.
    """
    return _fwiou(*class_areas(confusion))


def confusion_metrics(confusion) -> dict:
    """Every matrix metric at once.

    Returns
    -------
    dict
        ``IoU``, ``Acc``, ``Dice`` (per-class float64 arrays, ``nan`` = not computed) and
        ``mIoU``, ``fwIoU``, ``mAcc``, ``aAcc``, ``mDice`` (floats).

    Notes
    -----
    mIoU, mAcc, mDice, aAcc and the per-class values follow mmsegmentation's
    ``IoUMetric`` (v1.2.2), which computes in float32; these are float64, so they agree
    to about 1e-7 relative. fwIoU follows detectron2's ``SemSegEvaluator``.
    """
    areas = class_areas(confusion)  # the one float conversion of the matrix
    iou, acc, dice = _iou(*areas), _acc(*areas), _dice(*areas)
    return {
        "IoU": iou,
        "Acc": acc,
        "Dice": dice,
        "mIoU": _nanmean(iou),
        "fwIoU": _fwiou(*areas),
        "mAcc": _nanmean(acc),
        "aAcc": _aacc(*areas),
        "mDice": _nanmean(dice),
    }


def boundary_iou(intersection, union) -> tuple[np.ndarray, float]:
    """Per-class boundary IoU and its mean from band counts summed over a split.

    Parameters
    ----------
    intersection, union : (C,) array of int
        Per class, sum over images of |B(G_c) & B(P_c)| and |B(G_c) | B(P_c)| (see
        :func:`segbench.semantic.boundary_counts`).

    Returns
    -------
    biou : (C,) float64 array
        ``nan`` where the union is empty.
    mbiou : float
        Mean over the classes with a non-empty union (``nan`` if none).
    """
    inter = np.asarray(intersection, dtype=np.float64)
    uni = np.asarray(union, dtype=np.float64)
    if inter.shape != uni.shape or inter.ndim != 1:
        raise ValueError("intersection and union must be (C,) arrays of one length")
    biou = _ratio(inter, uni)
    return biou, _nanmean(biou)
