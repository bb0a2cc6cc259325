"""Dollar's edge NMS, listed with the detectors (it lives in :mod:`segbench.primitives`:
the boundary benchmark's ``--nms`` option applies it before thresholding)."""

from ..primitives import NMS_FORMATS, edge_nms, edge_orientation, nms_file

__all__ = ["NMS_FORMATS", "edge_nms", "edge_orientation", "nms_file"]
