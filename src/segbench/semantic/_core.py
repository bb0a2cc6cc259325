"""Arrays in, integer counts out: input checks, the counting plan, and the functional forms
(``pixel_confusion``, ``boundary_counts``, ``boundary_band``) the evaluator is built on."""

from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass
from types import ModuleType, SimpleNamespace

import numpy as np

from ..errors import InputError, unmasked


def kernels() -> ModuleType:
    """The Numba counting kernels (``_kernels``), imported on first use: a folder run
    that the C extension counts (:func:`native`) never loads Numba."""
    from . import _kernels

    return _kernels


_NATIVE: list = []


def native() -> SimpleNamespace | None:
    """The C extension ``segbench.semantic._native`` (decodes a PNG pair and counts its
    confusion cells without Numba), or None when it was not built or
    ``SEGBENCH_NATIVE=0`` is set: the Numba kernels then count, the same numbers."""
    if not _NATIVE:
        mod = None
        if os.environ.get("SEGBENCH_NATIVE", "") != "0":
            try:
                from ._native import (  # type: ignore[import-not-found]
                    count_png_pair,
                    record_areas,
                )
            except ImportError:
                pass
            else:
                mod = SimpleNamespace(
                    count_png_pair=count_png_pair, record_areas=record_areas
                )
        _NATIVE.append(mod)
    return _NATIVE[0]


def native_available() -> bool:
    """Whether segbench's C extension is built and in use: folder runs of 8-bit PNG
    label maps without boundary IoU then decode and count without loading Numba (the
    fixed cost of ``segbench semantic``: about 0.2 CPU-s instead of 0.6). False when it
    was not built (no C compiler at install) or ``SEGBENCH_NATIVE=0`` is set: the
    Numba kernels count instead, the same numbers."""
    return native() is not None


DEFAULT_DILATION = 0.02
DEFAULT_IGNORE = 255
_NO_IGNORE = np.iinfo(np.int64).min  # stands for ignore_index=None inside the kernels
_KERNEL_DTYPES = (np.uint8, np.uint16, np.int32, np.int64)


class LabelError(InputError):
    """A label outside the class range; names the image, the pixel and the value.

    ``side`` is the map holding it: ``"ground truth"`` or ``"prediction"``.
    """

    def __init__(self, message: str, side: str | None = None):
        super().__init__(message)
        self.side = side


def dilation_pixels(shape, ratio: float) -> int:
    """Band width in pixels for an (H, W) map: ``round(ratio * diagonal)``, at least 1.

    Rounding is Python's ``round`` (half to even), as in the authors' ``mask_to_boundary``.
    """
    h, w = int(shape[-2]), int(shape[-1])
    return max(1, int(round(ratio * math.sqrt(h * h + w * w))))


def check_options(num_classes, ignore_index, reduce_zero_label, dilation_ratio) -> None:
    if (
        isinstance(num_classes, bool)
        or not isinstance(num_classes, (int, np.integer))
        or num_classes < 1
    ):
        raise ValueError(f"num_classes must be a positive integer, got {num_classes!r}")
    if ignore_index is not None and (
        isinstance(ignore_index, bool) or not isinstance(ignore_index, (int, np.integer))
    ):
        raise ValueError(f"ignore_index must be an integer or None, got {ignore_index!r}")
    if reduce_zero_label and ignore_index != 255:
        raise ValueError(
            "reduce_zero_label maps ground-truth 0 to 255 and needs ignore_index=255 (mmseg "
            f"hardcodes that value); got ignore_index={ignore_index!r}"
        )
    if dilation_ratio is not None:
        if (
            isinstance(dilation_ratio, bool)
            or not isinstance(dilation_ratio, (int, float))
            or not (0 < dilation_ratio < 1)
        ):
            raise ValueError(
                "boundary_dilation must be a fraction of the image diagonal in "
                f"(0, 1), or None to skip boundary IoU; got {dilation_ratio!r}"
            )


def as_label_stack(x, what: str) -> np.ndarray:
    """An (N, H, W) C-contiguous integer array in a dtype the kernels take.

    Accepts (H, W) or (N, H, W), any integer or bool dtype, and anything with
    ``__array__`` (a CPU torch tensor is read through it, without importing torch).
    """
    x = unmasked(x, what)
    try:
        arr = np.asarray(x)
    except Exception as exc:  # a CUDA tensor, for example
        if isinstance(x, (list, tuple)) and "inhomogeneous" in str(exc):
            raise InputError(
                f"{what} is a batch of maps of different sizes: one update takes maps "
                "of one size (update each map alone)"
            ) from None
        raise InputError(
            f"{what} cannot be read as an array ({exc}); move it to the CPU first"
        ) from None
    if arr.dtype == bool:
        arr = arr.view(np.uint8)
    if arr.dtype.kind not in "iu":
        raise InputError(f"{what} must hold integer class ids, got dtype {arr.dtype}")
    if arr.ndim == 2:
        arr = arr[None]
    elif arr.ndim != 3:
        raise InputError(f"{what} must be (H, W) or (N, H, W), got shape {arr.shape}")
    elif arr.shape[2] == 1:  # (H, W, 1) would count as H images of W x 1 px
        raise InputError(
            f"{what} has shape {arr.shape}, a channel axis last: (N, H, W) would read "
            f"it as {arr.shape[0]} images of {arr.shape[1]} x 1 px; pass (H, W) "
            "(arr[..., 0]) for one map"
        )
    if arr.size == 0:
        raise InputError(f"{what} is empty (shape {arr.shape})")
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8:
        # int64 would wrap labels of 2**63 and above: name the first one as it is
        huge = np.flatnonzero(arr.reshape(-1) > np.iinfo(np.int64).max)
        if huge.size:
            i, rest = divmod(int(huge[0]), arr.shape[1] * arr.shape[2])
            row, col = divmod(rest, arr.shape[2])
            where = f"image {i}, " if arr.shape[0] > 1 else ""
            raise LabelError(
                f"{what} pixel ({where}row {row}, col {col}) has label "
                f"{int(arr.reshape(-1)[huge[0]])}, more than any number of classes. "
                "Nothing from this pair was counted",
                what,
            )
    if arr.dtype.type not in _KERNEL_DTYPES or not arr.dtype.isnative:
        wide = np.int64 if arr.dtype.itemsize >= 4 else np.int32
        arr = arr.astype(wide)
    return np.ascontiguousarray(arr)


def check_pair(gt: np.ndarray, pred: np.ndarray) -> None:
    if gt.shape != pred.shape:
        raise InputError(
            f"ground truth and prediction differ in shape: {gt.shape[1:]} vs "
            f"{pred.shape[1:]}"
            + (
                f" (batches of {gt.shape[0]} and {pred.shape[0]})"
                if gt.shape[0] > 1 or pred.shape[0] > 1
                else ""
            )
        )


# --- counts -------------------------------------------------------------------------------


@dataclass
class Counts:
    """Integer state of a split: the flat confusion matrix and the band counts."""

    conf: np.ndarray  # (C*C,) int64, row = gt
    gt_band: np.ndarray  # (C,) int64
    pred_band: np.ndarray  # (C,) int64
    band_inter: np.ndarray  # (C,) int64

    @classmethod
    def zeros(cls, num_classes: int) -> Counts:
        c = num_classes
        try:
            conf = np.zeros(c * c, np.int64)
        except MemoryError:
            raise InputError(
                f"not enough memory for the {c} x {c} confusion table of {c} classes "
                f"({8 * c * c / 1e9:,.1f} GB)"
            ) from None
        band = [np.zeros(c, np.int64) for _ in range(3)]
        return cls(conf, *band)

    def arrays(self):
        return self.conf, self.gt_band, self.pred_band, self.band_inter

    def add(self, other: Counts) -> None:
        for mine, theirs in zip(self.arrays(), other.arrays()):
            mine += theirs


@dataclass(frozen=True)
class Task:
    """Part of one image: rows ``a..b-1`` (band kernel) or flat pixels ``a..b-1``."""

    image: int
    a: int
    b: int


def plan(shape, n_slots: int, band: bool, min_pixels: int = 1 << 18) -> list[list[Task]]:
    """Split a (N, H, W) stack into per-slot task lists of similar size.

    One slot when there is little work (a thread hand-off and each slot's own counts
    cost ~70 us: cutting one image in two pays from about half a megapixel, measured
    for both passes; a 512x683 band pass gained nothing);
    whole images round-robin when there are at least as many images as slots; otherwise
    each image cut into one piece per slot.
    """
    n, h, w = shape
    if n_slots <= 1 or n * h * w < 2 * min_pixels:
        return [[Task(i, 0, h if band else h * w) for i in range(n)]]
    if n >= n_slots:
        slots: list[list[Task]] = [[] for _ in range(n_slots)]
        for i in range(n):
            slots[i % n_slots].append(Task(i, 0, h if band else h * w))
        return slots
    extent = h if band else h * w
    cuts = [round(extent * k / n_slots) for k in range(n_slots + 1)]
    return [
        [Task(i, cuts[k], cuts[k + 1]) for i in range(n) if cuts[k] < cuts[k + 1]]
        for k in range(n_slots)
    ]


_WORK = threading.local()


def _byte_pairs() -> np.ndarray:
    """This thread's zeroed 256 x 256 int32 table for ``_kernels.count_pairs`` (which hands it
    back zeroed)."""
    table = getattr(_WORK, "byte_pairs", None)
    if table is None:
        table = _WORK.byte_pairs = np.zeros(65536, np.int32)
    return table


def run_task(task: Task, gt, pred, num_classes, ign, rzl, dilation, counts: Counts) -> int:
    """Count one task into ``counts``; the flat in-image index of a bad label, or -1."""
    g, p = gt[task.image], pred[task.image]
    if dilation is None:
        bad = kernels().count_pairs(
            g.reshape(-1)[task.a : task.b],
            p.reshape(-1)[task.a : task.b],
            num_classes,
            ign,
            rzl,
            counts.conf,
            _byte_pairs(),
        )
        return -1 if bad < 0 else task.a + bad
    d = dilation_pixels(g.shape, dilation)
    return kernels().count_pairs_band(
        g,
        p,
        num_classes,
        ign,
        rzl,
        d,
        task.a,
        task.b,
        counts.conf,
        counts.gt_band,
        counts.pred_band,
        counts.band_inter,
    )


def label_error(gt, pred, num_classes, ign, rzl) -> LabelError:
    """The error for the first out-of-range label of a stack (slow path)."""
    for i in range(gt.shape[0]):
        idx, side = kernels().first_bad_pixel(
            gt[i].reshape(-1), pred[i].reshape(-1), num_classes, ign, rzl
        )
        if idx < 0:
            continue
        row, col = divmod(int(idx), gt.shape[2])
        raw = int((gt if side == 0 else pred)[i].reshape(-1)[idx])
        where = f"image {i}, " if gt.shape[0] > 1 else ""
        if side == 0:
            rule = (
                f"below num_classes ({num_classes}) or equal to the ignore index "
                f"({'none' if ign == _NO_IGNORE else ign})"
            )
            shown = f"label {raw}" + (
                f" (class {raw - 1} after reduce_zero_label)" if rzl else ""
            )
        else:
            rule = f"below num_classes ({num_classes}) everywhere, ignored pixels included"
            shown = f"label {raw}"
            if raw == ign:  # the ignore label in the prediction: given in gt's place?
                rule += (
                    " (the ignore index in a prediction: were the two swapped? "
                    "SemanticEval.update takes (gt, pred), ground truth first)"
                )
        name = ("ground truth", "prediction")[side]
        return LabelError(
            f"{name} pixel ({where}row {row}, col {col}) has {shown}; "
            f"labels must be {rule}. Nothing from this pair was counted",
            name,
        )
    return LabelError("a label is out of range")  # pragma: no cover - kernels agree


def kernel_ignore(ignore_index) -> int:
    return _NO_IGNORE if ignore_index is None else int(ignore_index)


def count_stack(
    gt,
    pred,
    num_classes,
    ignore_index,
    reduce_zero_label,
    dilation,
    into: Counts | None = None,
) -> Counts:
    """Counts of a whole (N, H, W) stack, serially; raises LabelError (nothing counted).

    With ``into``, the counts are added to it (and it is returned): no C x C arrays are
    made and added per call, which cost more than counting a small image. On a bad label
    the same tasks are counted again into fresh counts, which the kernels fill exactly
    as before they stopped, and those are taken back, so ``into`` is left as it was.
    """
    counts = Counts.zeros(num_classes) if into is None else into
    ign = kernel_ignore(ignore_index)
    tasks = plan(gt.shape, 1, dilation is not None)[0]
    for task in tasks:
        if (
            run_task(task, gt, pred, num_classes, ign, reduce_zero_label, dilation, counts)
            >= 0
        ):
            if into is not None:
                partial = Counts.zeros(num_classes)
                for again in tasks:
                    if (
                        run_task(
                            again,
                            gt,
                            pred,
                            num_classes,
                            ign,
                            reduce_zero_label,
                            dilation,
                            partial,
                        )
                        >= 0
                    ):
                        break
                for mine, extra in zip(into.arrays(), partial.arrays()):
                    mine -= extra
            raise label_error(gt, pred, num_classes, ign, reduce_zero_label)
    return counts


# --- functional forms ----------------------------------------------------------------------


def pixel_confusion(
    gt,
    pred,
    num_classes: int,
    *,
    ignore_index: int | None = DEFAULT_IGNORE,
    reduce_zero_label: bool = False,
) -> np.ndarray:
    """The (C, C) pixel confusion matrix of one pair or a batch; row = ground truth.

    Parameters
    ----------
    gt, pred : (H, W) or (N, H, W) array_like of int
        Class ids, any integer dtype (or anything with ``__array__``).
    num_classes : int
    ignore_index : int or None, keyword-only
        Ground-truth value left out on both sides (default 255). ``None``: none.
    reduce_zero_label : bool, keyword-only
        mmseg's rule for datasets with "other" at 0: ground-truth 0 (and 255) become the
        ignore index, every other label drops by one. Needs ``ignore_index=255``.

    Returns
    -------
    (C, C) ndarray of uint64

    Raises
    ------
    ValueError
        A label outside [0, C) (except a ground-truth pixel equal to ``ignore_index``),
        naming the pixel; shapes that differ.

    Examples
    --------
    >>> import numpy as np
    >>> pixel_confusion(np.array([[0, 1], [1, 255]]), np.array([[0, 0], [1, 1]]), 2)
    array([[1, 0],
           [1, 1]], dtype=uint64)
    """
    check_options(num_classes, ignore_index, reduce_zero_label, None)
    g = as_label_stack(gt, "ground truth")
    p = as_label_stack(pred, "prediction")
    check_pair(g, p)
    counts = count_stack(g, p, int(num_classes), ignore_index, reduce_zero_label, None)
    return counts.conf.reshape(num_classes, num_classes).astype(np.uint64)


def boundary_counts(
    gt,
    pred,
    num_classes: int,
    *,
    ignore_index: int | None = DEFAULT_IGNORE,
    reduce_zero_label: bool = False,
    dilation_ratio: float = DEFAULT_DILATION,
) -> dict:
    """Per-class boundary-band counts of one pair or a batch (summed over the batch).

    For each class c and image, B(G_c) is the band of the ground-truth mask ``gt == c``
    and B(P_c) that of ``pred == c``: the mask's pixels within d of a pixel outside it or
    of the image edge, d = ``round(dilation_ratio * diagonal)`` (at least 1), Chebyshev
    distance, exactly the authors' ``mask_to_boundary``. Ignored ground-truth pixels are
    then removed from both bands (before that, they are outside every ground-truth mask,
    and the prediction there shapes the prediction's band).

    Returns
    -------
    dict of (C,) int64 arrays
        ``intersection`` |B(G_c) & B(P_c)|, ``union`` |B(G_c) | B(P_c)|, ``gt_band``,
        ``pred_band``.

    See Also
    --------
    boundary_iou : the ratio and its mean from these sums.
    """
    check_options(num_classes, ignore_index, reduce_zero_label, dilation_ratio)
    g = as_label_stack(gt, "ground truth")
    p = as_label_stack(pred, "prediction")
    check_pair(g, p)
    c = count_stack(
        g, p, int(num_classes), ignore_index, reduce_zero_label, float(dilation_ratio)
    )
    return {
        "intersection": c.band_inter.copy(),
        "union": c.gt_band + c.pred_band - c.band_inter,
        "gt_band": c.gt_band.copy(),
        "pred_band": c.pred_band.copy(),
    }


def boundary_band(
    labels, *, dilation_ratio: float = DEFAULT_DILATION, dilation_px: int | None = None
) -> np.ndarray:
    """Pixels in the boundary band of their own label, as a boolean (H, W) map.

    The band of class c's mask is ``boundary_band(labels) & (labels == c)``; for a binary
    mask ``m`` this equals the authors' ``mask_to_boundary(m)`` where ``m`` is set.

    Parameters
    ----------
    labels : (H, W) array_like of int
    dilation_ratio : float, keyword-only
        Band width as a fraction of the image diagonal (rounded, at least 1 pixel).
    dilation_px : int, keyword-only
        Band width in pixels; overrides ``dilation_ratio``.
    """
    arr = as_label_stack(labels, "labels")
    if arr.shape[0] != 1:
        raise InputError(f"labels must be one (H, W) map, got shape {arr.shape}")
    if dilation_px is None:
        check_options(1, None, False, dilation_ratio)
        d = dilation_pixels(arr.shape, dilation_ratio)
    else:
        d = int(dilation_px)
        if d < 1:
            raise ValueError(f"dilation_px must be >= 1, got {dilation_px!r}")
    return kernels().band_map(arr[0], d).astype(bool)
