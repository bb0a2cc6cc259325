"""The floor under the datasets and every benchmark family.

- a segmentation's boundary map (``seg2bdry``), morphological thinning (``thin``, BSR's
  ``bwmorph(..., 'thin')``) and label compaction;
- the boundary matcher (``correspond_pixels``, ``Matcher``), the per-image counts at
  every threshold (``evaluate_image``, ``BoundaryCounts``, ``default_thresholds``) and
  the precision-recall summary over images (``summarize_boundary``: ODS, OIS, AP, R50),
  which the boundary benchmark and the semantic-boundary benchmark both run;
- Dollar's edge NMS (``edge_nms``);
- contingency tables of label maps (``contingency_table``, ``stacked_tables``), which the
  region, consistency and superpixel measures share;
- union-find for compiled kernels (``find_root``, ``union_lower``).

Families build on these and never on each other; :mod:`segbench.boundary` re-exports
them under their usual names. The matcher and NMS load their compiled kernels on first
use of a name (the datasets import this package and need none of them).
"""

from ._labels import as_labels, compact_labels
from ._seg2bdry import seg2bdry
from ._thin import thin, thin_frames

#: Names of the matcher, counts, summary and NMS modules, loaded on first use.
_LAZY = {
    **dict.fromkeys(
        (
            "BoundaryCounts",
            "default_thresholds",
            "check_thresholds",
            "threshold_list",
            "as_boundary_list",
            "detected_map",
            "threads_in_this_thread",
            "default_threads",
            "evaluate_image",
            "matcher_cached",
            "tiny_pair",
            "warm_up_kernels",
            "warm_up_matcher",
            "human_counts",
            "THREADS_ENV",
        ),
        "_boundary_counts",
    ),
    **dict.fromkeys(
        (
            "Matcher",
            "correspond_pixels",
            "shared_matcher",
            "tolerance_px",
            "frame_events_of",
            "DEFAULT_MAX_DIST",
        ),
        "_correspond",
    ),
    **dict.fromkeys(
        (
            "BoundarySummary",
            "average_precision",
            "bsr_ratio",
            "calibration_index",
            "check_alpha",
            "check_same_thresholds",
            "f_measure",
            "max_f",
            "recall_at_precision",
            "resampler",
            "summarize_boundary",
            "summarize_human",
        ),
        "_pr_summary",
    ),
    **dict.fromkeys(
        ("NMS_FORMATS", "edge_nms", "edge_orientation", "nms_file", "nms_options"),
        "_edge_nms",
    ),
    **dict.fromkeys(
        (
            "block_offsets",
            "checked_counts",
            "coarser_tables",
            "contingency_table",
            "overlaps_and_indices",
            "prepare_ground_truth",
            "split_tables",
            "stacked_tables",
        ),
        "_contingency",
    ),
    **dict.fromkeys(("find_root", "union_lower"), "_union_find"),
}


def __getattr__(name):
    # imports written out, not computed, so that tests/test_architecture.py reads them
    module = _LAZY.get(name)
    if module == "_boundary_counts":
        from . import _boundary_counts as module
    elif module == "_correspond":
        from . import _correspond as module
    elif module == "_pr_summary":
        from . import _pr_summary as module

        if name == "summarize_boundary":
            return module.summarize
    elif module == "_edge_nms":
        from . import _edge_nms as module
    elif module == "_contingency":
        from . import _contingency as module
    elif module == "_union_find":
        from . import _union_find as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(module, name)


__all__ = ["as_labels", "compact_labels", "seg2bdry", "thin", "thin_frames", *_LAZY]
