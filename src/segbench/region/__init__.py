"""The BSDS500 region benchmark and the 2001 consistency measures.

Pipeline: cut a hierarchy into segmentations (:func:`ucm_levels`, or take a list of
segmentations), compare each with every annotator through one contingency table per
pair (:func:`contingency_table`), keep per-threshold covering sums, PRI and VI
(:func:`evaluate_image` -> :class:`RegionRecord`), pool over images
(:func:`summarize`: covering ODS/OIS/Best, PRI and VI at ODS/OIS).

The measures are also public functions of two label maps or of a precomputed table:
:func:`covering`, :func:`rand_index`, :func:`probabilistic_rand_index`,
:func:`variation_of_information`, :func:`region_scores`, and the 2001 paper's
:func:`refinement_error` (both directions), :func:`local_refinement_error`,
:func:`gce`, :func:`lce`.
"""

from ..primitives import (
    checked_counts,
    compact_labels,
    contingency_table,
    prepare_ground_truth,
    split_tables,
    stacked_tables,
)
from . import consistency
from ._family import HUMAN_REGION, LABEL_EXTS, REGION, read_region_prediction
from ._gce_family import (
    CONSISTENCY,
    CONSISTENCY_MATRIX,
    granularity_family,
    needs_image,
    segmenter_name,
)
from ._image import RegionRecord, default_thresholds, evaluate_image, human_region
from ._levels import ucm_levels, ucm_segmentation
from ._measures import (
    RegionScores,
    covering,
    gce,
    lce,
    local_refinement_error,
    probabilistic_rand_index,
    rand_index,
    refinement_error,
    region_overlaps,
    region_scores,
    variation_of_information,
)
from ._summary import RegionSummary, resampler, summarize, summarize_human_region
from .consistency import *  # noqa: F403 - its __all__, re-exported below

__all__ = [
    *consistency.__all__,
    "CONSISTENCY",
    "CONSISTENCY_MATRIX",
    "granularity_family",
    "needs_image",
    "segmenter_name",
    "HUMAN_REGION",
    "LABEL_EXTS",
    "REGION",
    "read_region_prediction",
    "RegionRecord",
    "RegionScores",
    "RegionSummary",
    "checked_counts",
    "compact_labels",
    "contingency_table",
    "covering",
    "default_thresholds",
    "evaluate_image",
    "gce",
    "human_region",
    "lce",
    "local_refinement_error",
    "prepare_ground_truth",
    "probabilistic_rand_index",
    "rand_index",
    "refinement_error",
    "region_overlaps",
    "region_scores",
    "resampler",
    "split_tables",
    "stacked_tables",
    "summarize",
    "summarize_human_region",
    "ucm_levels",
    "ucm_segmentation",
    "variation_of_information",
]
