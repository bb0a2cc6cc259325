"""The BSDS boundary benchmark.

Pipeline: threshold a soft map, :func:`thin` it, match it with each human map
(:func:`correspond_pixels`), count (:func:`evaluate_image`), pool over images and
summarize (:func:`summarize`: ODS, OIS, AP, R50, the PR curve).
"""

from ._agreement import (AGREEMENT, AgreementRecord, agreement_histogram, agreement_levels,
                         agreement_map, agreement_threshold, check_unit, strong_boundaries)
from ..primitives import (DEFAULT_MAX_DIST, BoundaryCounts, Matcher, check_thresholds,
                          correspond_pixels, default_thresholds, detected_map,
                          evaluate_image, human_counts, matcher_cached, shared_matcher,
                          threads_in_this_thread, tolerance_px, warm_up_kernels,
                          warm_up_matcher)
from ._crispness import CRISPNESS, CrispRecord, crispness
from ._family import BOUNDARY, HUMAN_BOUNDARY, PRED_EXTS
from ._granularity import best_of_granularities
from ._half import (RESOLUTIONS, half_human_maps, half_shape, halve_image, halve_soft_map,
                    max_dist_from_px)
from ..primitives import NMS_FORMATS, edge_nms, edge_orientation, nms_file
from ._plots import plot_pr
from ._protocols import (PROTOCOLS, SubjectCounts, by_presentation, pool_subjects, protocol,
                         seg2bmap, shrink_bmap, shrink_cells, subject_counts,
                         upsample_nearest)
from ..primitives import seg2bdry
from ..primitives import (BoundarySummary, average_precision, bsr_ratio, calibration_index,
                          check_alpha, f_measure, max_f, recall_at_precision, resampler,
                          summarize_human)
from ..primitives import summarize_boundary as summarize
from ..primitives import thin, thin_frames

__all__ = [
    "AGREEMENT", "AgreementRecord", "agreement_histogram", "agreement_levels",
    "agreement_map", "agreement_threshold", "check_unit", "strong_boundaries",
    "BOUNDARY",
    "CRISPNESS", "CrispRecord", "crispness", "best_of_granularities",
    "HUMAN_BOUNDARY",
    "PROTOCOLS", "SubjectCounts", "by_presentation", "pool_subjects", "protocol",
    "seg2bmap", "shrink_bmap", "shrink_cells", "subject_counts", "upsample_nearest",
    "RESOLUTIONS", "half_human_maps", "half_shape", "halve_image", "halve_soft_map",
    "max_dist_from_px",
    "PRED_EXTS",
    "NMS_FORMATS", "edge_nms", "edge_orientation", "nms_file",
    "DEFAULT_MAX_DIST",
    "BoundaryCounts",
    "BoundarySummary",
    "average_precision",
    "bsr_ratio",
    "detected_map",
    "calibration_index",
    "check_alpha",
    "f_measure",
    "resampler",
    "max_f",
    "plot_pr",
    "recall_at_precision",
    "summarize",
    "summarize_human",
    "Matcher",
    "correspond_pixels",
    "check_thresholds",
    "default_thresholds",
    "evaluate_image",
    "human_counts",
    "matcher_cached",
    "seg2bdry",
    "shared_matcher",
    "thin",
    "thin_frames",
    "threads_in_this_thread",
    "warm_up_kernels",
    "warm_up_matcher",
    "tolerance_px",
]
