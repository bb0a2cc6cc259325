"""Semantic (category-aware) boundaries, as CASENet, SEAL and pyEdgeEval evaluate them.

Each class's soft map is matched with that class's ground-truth boundaries on the
exact matcher of the boundary benchmark; each class is summarized over the images
(ODS, OIS, AP, R50) and the classes are averaged (MF-ODS, MF-OIS, MAP). Protocols:
``sbd`` (the original SBD benchmark), ``sbd-seal`` (SEAL's MATLAB evaluation),
``cityscapes`` (SEAL's, at half resolution); :data:`SOURCES` cites each value.

Pieces: :func:`mask2edge` / :func:`class_edges` (boundaries from label maps),
:func:`kill_mask`, the multi-label RGB encoding (:func:`encode_multilabel`,
:func:`decode_multilabel`), :func:`evaluate_classes` (one image, pure),
:func:`summarize_classes`, the datasets (:func:`open_sbd`, :func:`open_cityscapes`,
:func:`open_multilabel`, :func:`class_folder_predictions`) and the engine family
:data:`SEMANTIC_BOUNDARY` (``segbench.evaluate("semantic_boundary", ...)``,
``segbench semantic-boundary``). docs/semantic-boundary.md.
"""

from ._core import (
    SemanticBoundaryCounts,
    SemanticBoundarySummary,
    evaluate_classes,
    resampler,
    summarize_classes,
)
from ._datasets import (
    SemanticBoundaryDataset,
    class_folder_predictions,
    open_cityscapes,
    open_multilabel,
    open_sbd,
)
from ._edges import (
    class_edges,
    decode_class,
    decode_multilabel,
    encode_multilabel,
    kill_mask,
    mask2edge,
    resize_nearest,
)
from ._family import PRED_EXTS, SEMANTIC_BOUNDARY, read_ground_truth
from ._protocols import (
    CITYSCAPES_CLASSES,
    CITYSCAPES_IGNORE,
    CITYSCAPES_LABEL_IDS,
    GT_EDGES,
    PROTOCOLS,
    SBD_CLASSES,
    SOURCES,
    class_names,
)
from ._readers import GroundTruth, GroundTruthSource, PredictionMaps, ground_truth_source

__all__ = [
    "CITYSCAPES_CLASSES",
    "CITYSCAPES_IGNORE",
    "CITYSCAPES_LABEL_IDS",
    "GT_EDGES",
    "GroundTruth",
    "GroundTruthSource",
    "PRED_EXTS",
    "PROTOCOLS",
    "PredictionMaps",
    "SBD_CLASSES",
    "SEMANTIC_BOUNDARY",
    "SOURCES",
    "SemanticBoundaryCounts",
    "SemanticBoundaryDataset",
    "SemanticBoundarySummary",
    "class_edges",
    "class_folder_predictions",
    "class_names",
    "decode_class",
    "decode_multilabel",
    "encode_multilabel",
    "evaluate_classes",
    "ground_truth_source",
    "kill_mask",
    "mask2edge",
    "open_cityscapes",
    "open_multilabel",
    "open_sbd",
    "read_ground_truth",
    "resampler",
    "resize_nearest",
    "summarize_classes",
]
