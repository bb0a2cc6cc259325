"""Every on-disk format of segbench, both directions; nothing else in the package reads files.

- BSDS500 ground truth ``.mat``: :func:`read_ground_truth`, :func:`write_ground_truth`
- edge-map ground truth (binary or graded images, arrays, ``.mat`` variables):
  :func:`read_edge_map`
- BSDS300 ``.seg``: :func:`read_seg`, :func:`write_seg`, :class:`SegFile`
- predictions (soft maps as PNG/BMP/.npy, ``ucm2`` and ``segs`` .mat):
  :func:`read_prediction`, :func:`as_prediction`, :class:`Prediction`,
  :func:`check_same_shape`, :func:`write_soft_map`, :func:`write_segs`
- label maps (PNG 8/16-bit and palette, .npy, .mat): :func:`read_label_map`,
  :func:`read_stored_labels`, :func:`read_stored_label_pair`, :func:`write_label_map`
- photographs and pictures: :func:`read_image`, :func:`write_image`
- folders: :func:`list_files`, :func:`refuse_broken_link`, :func:`refuse_folder`,
  :func:`refuse_unreadable`, and :func:`normalisation_hint` for a pairing's refusal
- the official benchmark's text files (``<iid>_ev1..4.txt``, ``eval_bdry*.txt``,
  ``eval_cover*.txt``, ``eval_RI_VOI*.txt``): :func:`format_ev1` ... :func:`format_ev4`,
  :func:`write_eval_bdry`, :func:`write_eval_region`, and their readers
- the superpixel benchmark's files (the C++ benchmark's CSV label maps and
  ``results.csv``, ``.npz`` annotators and superpixel maps): :func:`read_superpixels`,
  :func:`read_annotators`, :func:`read_npz_annotators`, :func:`read_csv_labels`,
  :func:`write_csv_labels`, :func:`list_annotator_files`, :func:`group_annotator_files`,
  :func:`read_stutz_results`, :func:`write_stutz_results`, :func:`read_opencv_matrix`,
  :data:`SUPERPIXEL_EXTS`
- atomic writes: :func:`atomic_write_text`, :func:`atomic_write_bytes`,
  :func:`write_if_changed`, :func:`ensure_dir` (errors are
  :class:`segbench.errors.OutputError`)

Every problem with a file raises :class:`segbench.errors.InputError` naming the file.
"""

from ._atomic import (
    atomic_write_bytes,
    atomic_write_text,
    claim_folder,
    copy_file,
    ensure_dir,
    hold_lock,
    release_lock,
    write_if_changed,
)
from ._edge_maps import EDGE_MAP_EXTS, binarize_edges, read_edge_map
from ._files import (
    FolderNamedLikeAFile,
    check_all_present,
    list_files,
    normalisation_hint,
    refuse_broken_link,
    refuse_folder,
    refuse_unreadable,
)
from ._ground_truth import HumanSegmentation, read_ground_truth, write_ground_truth
from ._images import MAX_PIXELS, image_size, read_image, write_image
from ._labels import (
    read_label_map,
    read_stored_label_pair,
    read_stored_labels,
    write_label_map,
)
from ._mat import write_mat
from ._official import (
    format_ev1,
    format_ev2,
    format_ev3,
    format_ev4,
    read_ev1,
    read_ev1_table,
    read_eval_bdry,
    read_eval_cover,
    read_eval_ri_voi,
    read_region_tables,
    write_eval_bdry,
    write_eval_region,
    write_texts,
)
from ._prediction import (
    Prediction,
    as_prediction,
    check_numpy_file,
    check_same_shape,
    read_prediction,
    soft_values,
    write_segs,
    write_soft_map,
)
from ._seg import SegFile, read_seg, write_seg
from ._superpixel import (
    SUPERPIXEL_EXTS,
    group_annotator_files,
    list_annotator_files,
    read_annotators,
    read_csv_labels,
    read_npz_annotators,
    read_opencv_matrix,
    read_stutz_results,
    read_superpixels,
    write_csv_labels,
    write_stutz_results,
)

__all__ = [
    "EDGE_MAP_EXTS",
    "MAX_PIXELS",
    "read_edge_map",
    "check_numpy_file",
    "hold_lock",
    "release_lock",
    "binarize_edges",
    "claim_folder",
    "copy_file",
    "image_size",
    "format_ev1",
    "format_ev2",
    "format_ev3",
    "format_ev4",
    "read_eval_bdry",
    "read_eval_cover",
    "read_eval_ri_voi",
    "read_ev1",
    "read_ev1_table",
    "read_region_tables",
    "write_eval_bdry",
    "write_eval_region",
    "write_texts",
    "HumanSegmentation",
    "Prediction",
    "SUPERPIXEL_EXTS",
    "SegFile",
    "as_prediction",
    "atomic_write_bytes",
    "atomic_write_text",
    "ensure_dir",
    "check_same_shape",
    "check_all_present",
    "group_annotator_files",
    "list_annotator_files",
    "list_files",
    "normalisation_hint",
    "refuse_broken_link",
    "FolderNamedLikeAFile",
    "refuse_folder",
    "refuse_unreadable",
    "read_annotators",
    "read_csv_labels",
    "read_ground_truth",
    "read_image",
    "read_label_map",
    "read_stored_labels",
    "read_stored_label_pair",
    "read_npz_annotators",
    "read_opencv_matrix",
    "read_prediction",
    "read_seg",
    "read_stutz_results",
    "read_superpixels",
    "write_csv_labels",
    "write_ground_truth",
    "write_image",
    "write_label_map",
    "write_seg",
    "write_segs",
    "write_if_changed",
    "soft_values",
    "write_mat",
    "write_soft_map",
    "write_stutz_results",
]
