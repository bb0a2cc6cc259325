"""The BSDS boundary benchmark: thinning, seg2bdry, pixel correspondence, counts, summary."""

from ._seg2bdry import seg2bdry

__all__ = ["seg2bdry"]
