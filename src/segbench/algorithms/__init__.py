"""Baseline detectors and segmenters used by the demo and as references."""

from .edges import canny_soft, gradient_magnitude, hysteresis_levels
from .superpixels import (SUPERPIXEL_ALGORITHMS, felzenszwalb, quickshift, slic,
                          superpixels, watershed)

__all__ = ["SUPERPIXEL_ALGORITHMS", "canny_soft", "felzenszwalb", "gradient_magnitude",
           "hysteresis_levels", "quickshift", "slic", "superpixels", "watershed"]
