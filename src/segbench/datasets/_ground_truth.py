"""Writing a ground-truth file, below both the layouts (:mod:`.bsds`) and the synthetic
dataset (:mod:`.synthetic`), which each write one."""

from __future__ import annotations

from os import PathLike

import numpy as np

__all__ = ["write_ground_truth"]


def write_ground_truth(path: str | PathLike, segmentations, *, boundaries=None) -> None:
    """Write human segmentations as a BSDS500 ground-truth .mat file.

    :func:`segbench.io.write_ground_truth`, with each annotator's boundary map computed,
    when ``boundaries`` is None, exactly as the official files relate to their
    segmentations: ``thin(seg2bdry(seg))``.
    """
    from ..io import write_ground_truth as write_mat

    if boundaries is None:
        from ..primitives import seg2bdry, thin

        boundaries = [
            np.asarray(thin(seg2bdry(np.asarray(seg))), bool) for seg in segmentations
        ]
    write_mat(path, segmentations, boundaries=boundaries)
