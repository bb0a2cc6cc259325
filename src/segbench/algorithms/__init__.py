"""Baseline detectors and segmenters used by the demo and as references.

Their folder runners (a detector over a folder of images, NMS or OWT-UCM over a folder
of soft maps: ``segbench detect``, ``nms``, ``ucm``) are :func:`segbench.detect_folder`,
:func:`segbench.nms_folder` and :func:`segbench.ucm_folder`, in :mod:`segbench.engine`:
they run on the engine's executor, a layer above this one.
"""

from ._gpb import EIGENSOLVERS, MULTIGRID_ABOVE, eigensolver_for, gpb, gpb_file, gpb_owt_ucm
from ._nms import NMS_FORMATS, edge_nms, edge_orientation, nms_file
from ._owt_ucm import looks_thinned, owt_ucm, ucm_file, ucm_sigmoid, write_ucm2
from ._pb import (
    DETECTORS,
    WEIGHTED,
    brightness_gradient,
    color_gradient,
    detect,
    detect_file,
    fit_parab,
    histogram_gradient,
    pb_2mm,
    pb_bg,
    pb_bgtg,
    pb_cg,
    pb_cgtg,
    pb_cues,
    pb_nonmax,
    pb_tg,
    pb_weights,
    read_weight_file,
    texton_map,
    texture_gradient,
)
from ._pb_textons import assign_textons, filter_bank, filter_responses
from ._se_detect import se, se_file, se_orientation
from ._se_export import export_opencv
from ._se_forest import (
    BSDSTrainingSet,
    SEForest,
    SEForestOptions,
    forest_options,
    load_forest,
    train_forest,
    train_tree,
)
from .edges import canny_soft, gradient_magnitude, hysteresis_levels
from .segmenters import (
    SEGMENTERS,
    FolderSegmenter,
    get_segmenter,
    kmeans_segmenter,
    ncut_2001,
    ncut_segmenter,
)
from .superpixels import (
    SUPERPIXEL_ALGORITHMS,
    felzenszwalb,
    quickshift,
    slic,
    superpixels,
    watershed,
)

__all__ = [
    "SEGMENTERS",
    "FolderSegmenter",
    "get_segmenter",
    "kmeans_segmenter",
    "ncut_segmenter",
    "ncut_2001",
    "SUPERPIXEL_ALGORITHMS",
    "NMS_FORMATS",
    "canny_soft",
    "edge_nms",
    "edge_orientation",
    "felzenszwalb",
    "gradient_magnitude",
    "hysteresis_levels",
    "nms_file",
    "quickshift",
    "slic",
    "superpixels",
    "watershed",
    "DETECTORS",
    "WEIGHTED",
    "assign_textons",
    "brightness_gradient",
    "color_gradient",
    "detect",
    "detect_file",
    "filter_bank",
    "filter_responses",
    "fit_parab",
    "histogram_gradient",
    "pb_2mm",
    "pb_bg",
    "pb_bgtg",
    "pb_cg",
    "pb_cgtg",
    "pb_cues",
    "pb_nonmax",
    "pb_tg",
    "pb_weights",
    "read_weight_file",
    "texton_map",
    "texture_gradient",
    "looks_thinned",
    "owt_ucm",
    "ucm_file",
    "ucm_sigmoid",
    "write_ucm2",
    "gpb",
    "gpb_file",
    "gpb_owt_ucm",
    "EIGENSOLVERS",
    "MULTIGRID_ABOVE",
    "eigensolver_for",
    "se",
    "se_file",
    "se_orientation",
    "export_opencv",
    "BSDSTrainingSet",
    "SEForest",
    "SEForestOptions",
    "forest_options",
    "load_forest",
    "train_forest",
    "train_tree",
]
