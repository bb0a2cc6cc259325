"""Baseline detectors and segmenters used by the demo and as references."""

from ._nms import NMS_FORMATS, edge_nms, edge_orientation, nms_file
from .edges import canny_soft, gradient_magnitude, hysteresis_levels
from .segmenters import (SEGMENTERS, FolderSegmenter, get_segmenter, kmeans_segmenter,
                         ncut_segmenter)
from .superpixels import (SUPERPIXEL_ALGORITHMS, felzenszwalb, quickshift, slic,
                          superpixels, watershed)

__all__ = ["SEGMENTERS", "FolderSegmenter", "get_segmenter", "kmeans_segmenter",
           "ncut_segmenter", "SUPERPIXEL_ALGORITHMS", "NMS_FORMATS", "canny_soft",
           "edge_nms", "edge_orientation", "felzenszwalb", "gradient_magnitude",
           "hysteresis_levels", "nms_file", "quickshift", "slic", "superpixels",
           "watershed"]
