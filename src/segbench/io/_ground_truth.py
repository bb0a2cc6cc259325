"""BSDS500 ground truth: ``groundTruth`` .mat files, both directions."""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from pathlib import Path

import numpy as np

from ..errors import InputError
from ._mat import (
    cell_elements,
    describe_variables,
    integer_array,
    load_mat,
    struct_field,
    struct_fieldnames,
    write_mat,
)


class HumanSegmentation:
    """One annotator's segmentation of an image, as stored in a BSDS500 .mat file.

    Attributes
    ----------
    segmentation : (H, W) ndarray of int32
        Region labels as stored (BSDS500: 1..N; ``.seg`` files store the same map minus 1).
    boundaries : (H, W) ndarray of bool
        The annotator's boundary map; in the official files this is
        ``thin(seg2bdry(segmentation))``. The boundary benchmark uses it as stored.
    """

    __slots__ = ("_segmentation", "_stored", "_absent", "boundaries")

    def __init__(self, segmentation: np.ndarray, boundaries: np.ndarray):
        self._segmentation: np.ndarray | None = segmentation
        self._stored: np.ndarray | None = None
        self._absent: InputError | None = None
        self.boundaries = boundaries

    @classmethod
    def _boundaries_only(
        cls, boundaries: np.ndarray, absent: InputError
    ) -> HumanSegmentation:
        """An annotator stored without ``Segmentation`` (NYUDv2's test files: Dollar's
        and BSR's boundary evaluations read only ``Boundaries``); reading its
        segmentation raises ``absent``."""
        obj = cls(None, boundaries)  # type: ignore[arg-type]
        obj._absent = absent
        return obj

    @classmethod
    def _from_stored(cls, stored: np.ndarray, boundaries: np.ndarray) -> HumanSegmentation:
        """Labels kept as read (a small unsigned type, MATLAB's column order) and made
        the int32 (H, W) array on first use: the boundary benchmark never needs them."""
        obj = cls(stored, boundaries)
        obj._segmentation = None
        obj._stored = stored
        return obj

    @property
    def has_segmentation(self) -> bool:
        """False for an annotator stored with ``Boundaries`` alone (NYUDv2's test
        files): no regions to draw or compare, as an edge map."""
        return self._absent is None

    @property
    def segmentation(self) -> np.ndarray:
        if self._absent is not None:
            raise self._absent
        if self._segmentation is None:
            self._segmentation = np.ascontiguousarray(self._stored, dtype=np.int32)
            self._stored = None
        return self._segmentation

    @property
    def shape(self) -> tuple[int, int]:
        """(H, W) in pixels."""
        return self.boundaries.shape

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HumanSegmentation):
            return NotImplemented
        if (self._absent is None) != (other._absent is None):
            return False
        same = self._absent is not None or np.array_equal(
            self.segmentation, other.segmentation
        )
        return same and np.array_equal(self.boundaries, other.boundaries)

    # mutable arrays inside: not hashable
    __hash__ = None  # type: ignore[assignment]  # unhashable; typeshed allows no None

    def __repr__(self) -> str:
        return f"HumanSegmentation(shape={self.shape})"


def _boundary_array(value: object, what: str, path: Path) -> np.ndarray:
    arr = value
    if isinstance(arr, np.ndarray) and arr.dtype.kind in "iuf" and arr.size:
        top = arr.max()
        if top > 1:
            raise InputError(
                f"{what} must hold only 0 and 1, found values up to {top}", path
            )
        if arr.dtype.kind == "u" and arr.ndim == 2:  # the official files: uint8, 0/1
            return np.not_equal(arr, 0, order="C")  # C order in one pass
    return integer_array(arr, what, path, dtype=np.uint8, min_value=0) != 0


def read_ground_truth(path: str | PathLike) -> list[HumanSegmentation]:
    """Read the human segmentations of one image from a BSDS500 ground-truth .mat file.

    Parameters
    ----------
    path : str or PathLike
        A file holding the variable ``groundTruth``: a 1xK cell (any K >= 1) of structs
        with fields ``Segmentation`` (labels, uint16 in the official files) and
        ``Boundaries`` (0/1, uint8). A Kx1 cell, a 1xK struct array or a single struct
        are accepted too. Structs of ``Boundaries`` alone (NYUDv2's test files, which
        BSR's and Dollar's boundary evaluations read so) give annotators whose
        ``segmentation`` raises InputError: the boundary benchmark needs none.

    Returns
    -------
    list of HumanSegmentation
        In the stored order (BSDS500: ascending annotator user id).

    Raises
    ------
    InputError
        If the file is missing or unreadable, has no ``groundTruth`` variable, an
        annotator lacks a field, or the maps are not 2-D, empty, non-integer, negative,
        not 0/1 (Boundaries) or of different shapes.
    """
    path = Path(path)
    variables = load_mat(path)
    if "groundTruth" not in variables:
        raise InputError(
            "no variable 'groundTruth' (a BSDS500 ground-truth file has one); "
            f"found {describe_variables(variables)}",
            path,
        )
    cells = cell_elements(variables["groundTruth"])
    if not cells:
        raise InputError("'groundTruth' is empty: no human segmentations", path)
    result: list[HumanSegmentation] = []
    for k, cell in enumerate(cells, start=1):
        fields = {}
        for name in ("Segmentation", "Boundaries"):
            found, value = struct_field(cell, name)
            if found:
                fields[name] = value
        missing = [name for name in ("Segmentation", "Boundaries") if name not in fields]
        # Boundaries alone (NYUDv2's test files): every annotator so, or none
        alone = missing == ["Segmentation"] and (
            not result or result[0]._absent is not None
        )
        if missing and not alone:
            have = struct_fieldnames(cell)
            raise InputError(
                f"groundTruth{{{k}}} has no field {missing[0]!r} "
                f"(fields: {', '.join(have) if have else 'none; not a struct'})",
                path,
            )
        if result and not alone and result[0]._absent is not None:
            raise InputError(
                f"groundTruth{{1}} has no Segmentation but groundTruth{{{k}}} has one: "
                "give every annotator both fields, or Boundaries alone",
                path,
            )
        if alone:
            bdry = _boundary_array(
                fields["Boundaries"], f"groundTruth{{{k}}}.Boundaries", path
            )
            if result and bdry.shape != result[0].shape:
                raise InputError(
                    f"annotators disagree on the image size: groundTruth{{1}} is "
                    f"{_hw(result[0].shape)}, groundTruth{{{k}}} is {_hw(bdry.shape)}",
                    path,
                )
            absent = InputError(
                f"groundTruth{{{k}}} has Boundaries but no Segmentation (as NYUDv2's "
                "test files): the boundary benchmark reads it, the region measures "
                "cannot",
                path,
            )
            result.append(HumanSegmentation._boundaries_only(bdry, absent))
            continue
        raw = fields["Segmentation"]
        if (
            isinstance(raw, np.ndarray)
            and raw.ndim == 2
            and raw.size
            and raw.dtype.kind == "u"
            and raw.dtype.itemsize <= 2
        ):
            seg = raw  # valid as it is (the official files: uint16); converted on use
        else:
            seg = integer_array(raw, f"groundTruth{{{k}}}.Segmentation", path, min_value=0)
        bdry = _boundary_array(fields["Boundaries"], f"groundTruth{{{k}}}.Boundaries", path)
        if bdry.shape != seg.shape:
            raise InputError(
                f"groundTruth{{{k}}}: Boundaries is {_hw(bdry.shape)} but "
                f"Segmentation is {_hw(seg.shape)}",
                path,
            )
        if result and seg.shape != result[0].shape:
            raise InputError(
                f"annotators disagree on the image size: groundTruth{{1}} is "
                f"{_hw(result[0].shape)}, groundTruth{{{k}}} is "
                f"{_hw(seg.shape)}",
                path,
            )
        result.append(
            HumanSegmentation._from_stored(seg, bdry)
            if seg is raw
            else HumanSegmentation(seg, bdry)
        )
    return result


def _hw(shape: tuple[int, ...]) -> str:
    return "x".join(str(n) for n in shape) + " (HxW)"


def write_ground_truth(
    path: str | PathLike,
    segmentations: Sequence[np.ndarray],
    *,
    boundaries: Sequence[np.ndarray],
) -> None:
    """Write human segmentations as a BSDS500 ground-truth .mat file.

    The layout is the official one (``groundTruth``: 1xK cell of structs with
    ``Segmentation`` uint16 and ``Boundaries`` uint8, MAT v5, compressed), readable by
    MATLAB, Octave and :func:`read_ground_truth`.

    Parameters
    ----------
    path : str or PathLike
        Output file; overwritten if present.
    segmentations : sequence of (H, W) integer arrays
        One label map per annotator, all the same shape, values in 0..65535 (BSDS
        convention: 1..N). Written as given, without relabelling.
    boundaries : sequence of (H, W) arrays
        One 0/1 map per annotator. :func:`segbench.datasets.write_ground_truth` computes
        them as the official files relate to their segmentations,
        ``thin(seg2bdry(seg))`` (io computes no measure).

    Raises
    ------
    InputError
        On an empty list, non-2-D or mismatched shapes, labels outside 0..65535, or a
        boundaries list of the wrong length.
    """
    path = Path(path)
    segs = list(segmentations)
    if not segs:
        raise InputError("write_ground_truth needs at least one segmentation", path)
    checked: list[np.ndarray] = []
    for k, seg in enumerate(segs, start=1):
        seg = integer_array(np.asarray(seg), f"segmentation {k}", path, dtype=np.uint16)
        if checked and seg.shape != checked[0].shape:
            raise InputError(
                f"segmentation {k} is {_hw(seg.shape)} but segmentation 1 is "
                f"{_hw(checked[0].shape)}",
                path,
            )
        checked.append(seg)
    bdrys = list(boundaries)
    if len(bdrys) != len(checked):
        raise InputError(
            f"{len(bdrys)} boundary maps for {len(checked)} segmentations", path
        )
    bdrys = [
        _boundary_array(np.asarray(b), f"boundaries {k}", path)
        for k, b in enumerate(bdrys, start=1)
    ]
    for k, b in enumerate(bdrys, start=1):
        if b.shape != checked[0].shape:
            raise InputError(
                f"boundaries {k} is {_hw(b.shape)} but the "
                f"segmentations are {_hw(checked[0].shape)}",
                path,
            )
    cell = np.empty((1, len(checked)), dtype=object)
    record = np.dtype([("Segmentation", object), ("Boundaries", object)])
    for k, (seg, bdry) in enumerate(zip(checked, bdrys)):
        struct = np.empty((1, 1), dtype=record)
        struct[0, 0] = (seg, bdry.astype(np.uint8))
        cell[0, k] = struct
    write_mat(path, {"groundTruth": cell}, oned_as="column")
