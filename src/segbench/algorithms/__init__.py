"""Baseline detectors and segmenters used by the demo and as references."""

from .edges import canny_soft, gradient_magnitude, hysteresis_levels
from .segmenters import (SEGMENTERS, FolderSegmenter, get_segmenter, kmeans_segmenter,
                         ncut_segmenter)
from .superpixels import (SUPERPIXEL_ALGORITHMS, felzenszwalb, quickshift, slic,
                          superpixels, watershed)

__all__ = ["SEGMENTERS", "FolderSegmenter", "get_segmenter", "kmeans_segmenter",
           "ncut_segmenter", "SUPERPIXEL_ALGORITHMS", "canny_soft", "felzenszwalb", "gradient_magnitude",
           "hysteresis_levels", "quickshift", "slic", "superpixels", "watershed"]
