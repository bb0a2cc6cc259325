"""Semantic segmentation: confusion matrix, IoU family, Dice, boundary IoU, the evaluator.

Pure functions (arrays in, numbers out) and a streaming evaluator built on them, so the
two cannot disagree:

- counting: :func:`pixel_confusion` (one pair or a batch), :func:`boundary_counts`
  (per-class band counts), :func:`boundary_band` (the band itself);
- reading a summed matrix: :func:`mean_iou`, :func:`mean_accuracy`, :func:`mean_dice`,
  :func:`pixel_accuracy`, :func:`frequency_weighted_iou`, the per-class
  :func:`iou_per_class`, :func:`accuracy_per_class`, :func:`dice_per_class`, all at once
  with :func:`confusion_metrics`; :func:`boundary_iou` from summed band counts;
- :class:`SemanticEval`: update from arrays, PNG files or two folders, merge, pickle,
  report, confusion, summarize; a subclass of the streaming base every evaluator of
  segbench shares (:class:`segbench.streaming.StreamEvalBase`), its state one sum of
  counts;
- :func:`native_available`: whether the C extension (``_native``, decoding and counting
  8-bit PNG pairs without Numba) is built and in use;
- :data:`SEMANTIC`: the benchmark as an engine family (per-pair records, saved and
  resumed, on worker processes or a Dask cluster), which
  ``segbench.evaluate("semantic", ...)`` and ``segbench semantic`` run.
  Pairing two folders by file-name suffix is :func:`segbench.datasets.pair_folders`.

Numbers follow mmsegmentation's ``IoUMetric`` (1.2.2) for the IoU family, detectron2 for
fwIoU and the authors' ``mask_to_boundary`` for boundary IoU; see ``docs/semantic.md``.
"""

from ._core import (
    LabelError,
    boundary_band,
    boundary_counts,
    dilation_pixels,
    native_available,
    pixel_confusion,
)
from ._evaluator import SemanticEval
from ._family import SEMANTIC
from ._metrics import (
    CLASS_METRICS,
    METRIC_NAMES,
    accuracy_per_class,
    boundary_iou,
    class_areas,
    confusion_metrics,
    dice_per_class,
    frequency_weighted_iou,
    iou_per_class,
    mean_accuracy,
    mean_dice,
    mean_iou,
    pixel_accuracy,
)

__all__ = [
    "CLASS_METRICS",
    "LabelError",
    "METRIC_NAMES",
    "SEMANTIC",
    "SemanticEval",
    "accuracy_per_class",
    "boundary_band",
    "boundary_counts",
    "boundary_iou",
    "class_areas",
    "confusion_metrics",
    "dice_per_class",
    "dilation_pixels",
    "frequency_weighted_iou",
    "iou_per_class",
    "mean_accuracy",
    "mean_dice",
    "mean_iou",
    "native_available",
    "pixel_accuracy",
    "pixel_confusion",
]
