"""Baseline detectors used by the demo and as references."""

from .edges import canny_soft, gradient_magnitude, hysteresis_levels

__all__ = ["canny_soft", "gradient_magnitude", "hysteresis_levels"]
