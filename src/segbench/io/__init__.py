"""Every on-disk format of segbench, both directions; nothing else in the package reads files.

- BSDS500 ground truth ``.mat``: :func:`read_ground_truth`, :func:`write_ground_truth`
- BSDS300 ``.seg``: :func:`read_seg`, :func:`write_seg`, :class:`SegFile`
- predictions (soft maps as PNG/BMP/.npy, ``ucm2`` and ``segs`` .mat):
  :func:`read_prediction`, :func:`as_prediction`, :class:`Prediction`,
  :func:`check_same_shape`, :func:`write_soft_map`, :func:`write_segs`
- label maps (PNG 8/16-bit and palette, .npy, .mat): :func:`read_label_map`,
  :func:`write_label_map`
- photographs and pictures: :func:`read_image`, :func:`write_image`
- folders: :func:`list_files`
- atomic writes: :func:`atomic_write_text`, :func:`atomic_write_bytes`,
  :func:`write_if_changed`, :func:`ensure_dir` (errors are
  :class:`segbench.errors.OutputError`)

Every problem with a file raises :class:`segbench.errors.InputError` naming the file.
"""

from ._atomic import atomic_write_bytes, atomic_write_text, ensure_dir, write_if_changed
from ._files import check_all_present, list_files
from ._ground_truth import HumanSegmentation, read_ground_truth, write_ground_truth
from ._images import read_image, write_image
from ._labels import read_label_map, write_label_map
from ._prediction import (Prediction, as_prediction, check_same_shape, read_prediction,
                          write_segs, write_soft_map)
from ._seg import SegFile, read_seg, write_seg

__all__ = [
    "HumanSegmentation",
    "Prediction",
    "SegFile",
    "as_prediction",
    "atomic_write_bytes",
    "atomic_write_text",
    "ensure_dir",
    "check_same_shape",
    "check_all_present",
    "list_files",
    "read_ground_truth",
    "read_image",
    "read_label_map",
    "read_prediction",
    "read_seg",
    "write_ground_truth",
    "write_image",
    "write_label_map",
    "write_seg",
    "write_segs",
    "write_if_changed",
    "write_soft_map",
]
