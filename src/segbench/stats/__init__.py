"""Ecological statistics of human segmentations (Martin et al., ICCV 2001, section 5).

The human segmentations as measurements of the Gestalt grouping cues in natural images:
how the probability that two pixels share a segment depends on their distance
(:func:`proximity`, Fig. 10) and on their difference in grey level, colour or texture
(:func:`similarity`, Fig. 11 and its extensions), how convex the regions are
(:func:`convexity`, Fig. 12), and how their areas are distributed (:func:`region_area`,
Fig. 13, a power law).

Each statistic is a public function over an iterable of :class:`Item` (or plain
``(image, segmentation)`` pairs). Underneath is the usual pipeline: :func:`measure`
scores one segmentation into a :class:`SegmentationRecord` of integer counts (seeded
by the item's id, so the numbers do not depend on order or worker count);
:func:`summarize` pools records into curves, histograms and fits, split by whether the
annotator saw the image in grey or in colour where that is recorded;
``segbench.evaluate("stats", ...)`` does it for a dataset of any layout through the
engine (``STATS_SCALE`` then ``STATS``) and writes ``result_stats.json`` and the figures
(:func:`plot_stats`).
"""

from ._api import (
    NORMALIZE,
    EcologicalStatistics,
    convexity,
    count_segments,
    ecological_statistics,
    proximity,
    region_area,
    similarity,
    summarize,
)
from ._family import STATS, STATS_SCALE, segmentations
from ._measure import (
    CUES,
    ImageCues,
    Item,
    SegmentationRecord,
    gray_levels,
    item_seed,
    lab_colors,
    max_scaled_distance,
    measure,
    texture_features,
)
from ._plots import plot_stats
from ._regions import region_shapes
from ._summary import (
    Curve,
    GroupStatistics,
    Histogram,
    PowerLaw,
    curve_from_counts,
    fit_power_law,
    plateau,
)

__all__ = [
    "CUES",
    "NORMALIZE",
    "STATS",
    "STATS_SCALE",
    "Curve",
    "EcologicalStatistics",
    "GroupStatistics",
    "Histogram",
    "ImageCues",
    "Item",
    "PowerLaw",
    "SegmentationRecord",
    "convexity",
    "count_segments",
    "curve_from_counts",
    "ecological_statistics",
    "fit_power_law",
    "gray_levels",
    "item_seed",
    "lab_colors",
    "max_scaled_distance",
    "measure",
    "plateau",
    "plot_stats",
    "proximity",
    "region_area",
    "region_shapes",
    "segmentations",
    "similarity",
    "summarize",
    "texture_features",
]
