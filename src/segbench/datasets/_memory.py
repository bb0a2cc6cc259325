"""Inputs held in memory: predictions and ground truth given as arrays (a training loop,
a notebook) instead of files, made into the :class:`Sample` objects every family
evaluates, so an in-memory evaluation runs the very code of a folder run."""

from __future__ import annotations

from functools import partial
from os import PathLike
from pathlib import Path

import numpy as np

from ..errors import InputError, unmasked
from ._edges import _load_edge_files, sniff_file, thin_structures
from ._inputs import Sample
from .bsds import IMAGE_EXTS, Annotation, BoundaryMap, DatasetItem, _const, _load_many

__all__ = [
    "BoundaryMap",
    "memory_item",
    "memory_prediction",
    "memory_sample",
    "to_numpy",
]


def to_numpy(obj, what: str = "array") -> np.ndarray:
    """A numpy array of anything array-like, without importing any tensor library.

    Parameters
    ----------
    obj : array_like
        A numpy array (returned as is); a tensor with ``detach``, ``cpu`` and
        ``numpy`` methods (PyTorch, on any device: ``obj.detach().cpu().numpy()``);
        anything with ``__array__`` (JAX, CuPy through its own ``__array__``, xarray,
        pandas); nested lists of numbers.
    what : str
        How error messages name it (``'batch index 3'``).

    Raises
    ------
    InputError
        If it cannot be read as one rectangular numeric array.
    """
    obj = unmasked(obj, what)
    if isinstance(obj, np.ndarray):
        return obj
    if all(callable(getattr(obj, m, None)) for m in ("detach", "cpu", "numpy")):
        try:
            return np.asarray(obj.detach().cpu().numpy())
        except (TypeError, RuntimeError, ValueError) as exc:
            hint = (
                " (convert it first, e.g. .float())" if "type" in str(exc).lower() else ""
            )
            raise InputError(
                f"{what}: cannot read the tensor as a numpy array: {exc}{hint}"
            ) from None
    if isinstance(obj, (str, bytes, PathLike, dict)) or obj is None:
        raise InputError(f"{what}: expected an array, got {type(obj).__name__}")
    try:
        arr = np.asarray(obj)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what}: not one rectangular array ({exc})") from None
    if arr.dtype == object:
        raise InputError(
            f"{what}: not a numeric array (its items differ in shape or are not numbers)"
        )
    return arr


def _annotation(obj, what: str):
    """One annotator's map: an object with ``boundaries`` or ``segmentation`` as it is;
    a bool array as a boundary map, and so one of only 0 and one other value (0/1, a
    ``.mat``'s ``Boundaries``; 0/255, an edge image) whose nonzero pixels are thin
    lines (read as a file of it is, :func:`._edges.sniff_file`), and a graded uint8 or
    uint16 map of thin lines (edges at half of full scale, as its image file); other
    whole numbers,
    and two values whose nonzero pixels are regions, as a label map, every label a
    region (0 included, as a label-map image is read; a ``.mat`` path keeps BSDS's 0
    as unlabelled)."""
    if hasattr(obj, "boundaries") or hasattr(obj, "segmentation"):
        return obj
    arr = to_numpy(obj, what)
    if arr.ndim != 2 or arr.size == 0:
        raise InputError(f"{what} must be a 2-D (H, W) map, got shape {arr.shape}")
    if arr.dtype == bool:
        return BoundaryMap(arr, what)
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise InputError(
            f"{what} has type {arr.dtype}; give a bool boundary map or an integer label map"
        )
    if np.issubdtype(arr.dtype, np.floating):
        if not np.isfinite(arr).all() or (arr != np.round(arr)).any():
            raise InputError(
                f"{what} holds values that are not whole numbers (or NaN): "
                "give a bool boundary map or an integer label map"
            )
    lo, hi = arr.min(), arr.max()
    if lo == 0:
        on = arr != 0
        # 0/1 (a .mat's Boundaries) or 0 and one other value (an edge image, 0/255):
        # lines are a boundary map; regions are a label map of two segments (0-based,
        # as PyTorch datasets number them)
        if (hi <= 1 or (arr[on] == hi).all()) and thin_structures(arr):
            return BoundaryMap(on, what)
        # graded 8- or 16-bit strokes (anti-aliased edges): edges at half of full
        # scale, as the image file of them is read (sniff_file, read_edge_map)
        if arr.dtype in (np.uint8, np.uint16) and thin_structures(arr):
            from ..io import binarize_edges

            full = 255 if arr.dtype == np.uint8 else 65535
            return BoundaryMap(binarize_edges(arr, full), what)
    if lo < 0:
        raise InputError(f"{what} has negative labels")
    from ..primitives import compact_labels

    # every label a region, 0 included (numbered from 0, as PyTorch datasets do), as a
    # label-map image is read: 0 would otherwise be BSDS's "unlabelled" (void) and its
    # pixels would drop out of the region measures
    labels, _ = compact_labels(arr.astype(np.int64, copy=False), void=None)
    return Annotation(labels, source=what)


def memory_item(gt, iid: str, what: str = "ground truth") -> DatasetItem:
    """A :class:`DatasetItem` of one image's ground truth given in any form.

    Parameters
    ----------
    gt : DatasetItem, path, sequence of maps, or (K, H, W) array
        A dataset item (used as it is); a BSDS500 ``.mat`` file (its boundaries as
        stored, as ``segbench boundary`` reads it), or any other annotation file a
        folder run reads (``.seg``, a label-map image); or the annotators' maps: each
        an object with ``boundaries``/``segmentation`` (:class:`Annotation`), a bool
        boundary map, a map of 0 and one other value whose nonzero pixels are thin
        lines (0/1 as a ``.mat``'s ``Boundaries``, or an edge image saved as 0/255: a
        boundary map, as the file is read), a graded uint8/uint16 map of thin lines
        (anti-aliased edges: boundaries at half of full scale, as the file is read),
        or an integer label map (two values whose
        nonzero pixels are regions too: two segments numbered from 0); a label map is a
        segmentation, its boundaries ``thin(seg2bdry(seg))`` as in every official
        file. One 2-D map is one annotator.
    iid : str
        The id of the item.
    what : str
        How error messages name it.

    Raises
    ------
    InputError
        No annotator, maps of other shapes or types, a missing file.
    """
    if isinstance(gt, DatasetItem):
        return gt
    if isinstance(gt, (str, PathLike)):
        path = Path(gt)
        if not path.is_file():
            raise InputError("ground-truth file not found", path)
        if path.suffix.lower() == ".mat":
            return DatasetItem(iid, "memory", gt_path=path, sources=(path,))
        if path.suffix.lower() in IMAGE_EXTS and sniff_file(path) == "edges":
            # an edge-map image (BIPED, your own 0/255 PNGs): matched as it is
            return DatasetItem(
                iid,
                "memory",
                annotation_loader=partial(_load_edge_files, (path,), None, None),
                sources=(path,),
                reading="edges",
            )
        return DatasetItem(
            iid, "memory", annotation_loader=partial(_load_many, (path,)), sources=(path,)
        )
    if isinstance(gt, np.ndarray) or not isinstance(gt, (list, tuple)):
        arr = to_numpy(gt, what)
        if arr.ndim == 2:
            maps = [arr]
        elif arr.ndim == 3:
            maps = list(arr)
        else:
            raise InputError(
                f"{what}: expected a list of (H, W) maps or a (K, H, W) "
                f"array, got shape {arr.shape}"
            )
    else:
        maps = list(gt)
    if not maps:
        raise InputError(f"{what}: no annotator's map")
    anns = tuple(_annotation(m, f"{what}, annotator {k}") for k, m in enumerate(maps))
    for k, a in enumerate(anns[1:], start=1):
        if tuple(a.shape) != tuple(anns[0].shape):
            raise InputError(
                f"{what}: annotator {k} is {_hw(a.shape)} but annotator 0 "
                f"is {_hw(anns[0].shape)}"
            )
    return DatasetItem(iid, "memory", annotation_loader=partial(_const, anns))


def _hw(shape) -> str:
    return "x".join(str(n) for n in shape)


def memory_prediction(obj, benchmark: str = "boundary", source: str | None = None):
    """A validated :class:`~segbench.io.Prediction` of an in-memory prediction.

    Parameters
    ----------
    obj : Prediction, array_like, or list of label maps
        For ``'boundary'``: a soft map (floats in [0, 1]; uint8 as /255, uint16 as
        /65535; bool as 0/1) or a list of label maps (segmentations). For ``'region'``
        and ``'all'``: a doubleSize ucm2 (a float (2H+1, 2W+1) array), a list of label
        maps, or one integer label map (its labels all regions, as ``region --labels``
        reads a label-map image). A Prediction is returned as it is.
    benchmark : {'boundary', 'region', 'all'}
    source : str, optional
        How error messages name it.

    Raises
    ------
    InputError
        As :func:`segbench.io.as_prediction` (shape, type, NaN, range).
    """
    from ..io import Prediction, as_prediction

    if isinstance(obj, Prediction):
        return obj
    if isinstance(obj, (list, tuple)):
        return as_prediction(
            [to_numpy(s, f"{source}, segmentation {k}") for k, s in enumerate(obj)],
            kind="segs",
            source=source,
        )
    arr = to_numpy(obj, source or "prediction")
    if benchmark == "boundary":
        return Prediction("soft", pb=arr, source=source)
    if arr.ndim == 2 and (np.issubdtype(arr.dtype, np.integer) or arr.dtype == bool):
        from ..primitives import compact_labels

        labels, _ = compact_labels(arr, void=None)
        return as_prediction([labels], kind="segs", source=source)
    return Prediction("ucm2", ucm2=arr, source=source)


def memory_sample(item: DatasetItem, prediction=None) -> Sample:
    """The :class:`Sample` of an item and its prediction: a file (a path), a
    :class:`~segbench.io.Prediction` held in memory (named ``pred['<id>']`` in
    messages), or None."""
    from ..io import Prediction

    if isinstance(prediction, Prediction):
        return Sample(item, prediction.source or f"pred[{item.iid!r}]", value=prediction)
    return Sample(item, prediction)
