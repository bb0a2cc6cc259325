"""Prediction inputs of the benchmarks: soft boundary maps, ucm2 and segmentations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, cast

import numpy as np

from ..errors import InputError, unmasked
from ._atomic import atomic_write_bytes
from ._files import require_file
from ._images import _GRAY_SCALE, open_image, single_channel
from ._mat import cell_elements, describe_variables, integer_array, load_mat, write_mat

KINDS = ("soft", "ucm2", "segs")
_IMAGE_EXTS = (".png", ".bmp")


def _hw(shape: tuple[int, ...]) -> str:
    return "x".join(str(n) for n in shape)


def _soft_map(arr: object, path, what: str = "boundary map") -> np.ndarray:
    """Validate and scale a soft boundary map to float64 in [0, 1].

    bool -> 0/1, uint8 -> /255, uint16 -> /65535 (as the PNG readers do), floats as they
    are; other integer types are refused because their full scale is unknown.
    """
    if not isinstance(arr, np.ndarray):
        raise InputError(f"{what} must be a numpy array, got {type(arr).__name__}", path)
    if arr.dtype.kind in "USO":  # before the shape: a .mat string reads as shape (1,)
        held = {"O": "objects (a MATLAB cell or struct?)"}.get(arr.dtype.kind, "text")
        raise InputError(
            f"{what} holds {held}, not numbers; expected floats in [0, 1]", path
        )
    if arr.ndim != 2:
        hint = " (drop the singleton axis with .squeeze())" if 1 in arr.shape else ""
        raise InputError(
            f"{what} must be a 2-D (H, W) array, got shape {arr.shape}{hint}", path
        )
    if arr.size == 0:
        raise InputError(f"{what} is empty (shape {arr.shape})", path)
    return soft_values(arr, path, what)


def soft_values(arr: np.ndarray, path=None, what: str = "boundary map") -> np.ndarray:
    """Boundary strengths of any shape as float64 in [0, 1], by the rule of the map
    readers: bool -> 0/1, uint8 -> /255, uint16 -> /65535 (either byte order), floats
    as they are (finite, in [0, 1]); other integer types are refused (their full scale
    is unknown), and so is any other dtype (str, complex, object).

    Raises
    ------
    InputError
        Naming ``what`` (and ``path``, when given) and the problem.
    """
    if not arr.dtype.isnative:  # big-endian data: the same numbers, native order
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if arr.dtype == bool:
        return arr.astype(np.float64)
    if arr.dtype == np.uint8:
        return arr / 255.0
    if arr.dtype == np.uint16:
        return arr / 65535.0
    if np.issubdtype(arr.dtype, np.integer):
        raise InputError(
            f"{what} is an integer array of {arr.dtype}, whose scale is ambiguous; give "
            "floats in [0, 1], or uint8 (read as /255) or uint16 (read as /65535)",
            path,
        )
    if not np.issubdtype(arr.dtype, np.floating):
        raise InputError(
            f"{what} has unsupported type {arr.dtype}; expected floats in [0, 1]", path
        )
    arr = np.asarray(arr, dtype=np.float64)
    finite = np.isfinite(arr)
    if not finite.all():
        n = int((~finite).sum())
        raise InputError(f"{what} contains {n} NaN or infinite value(s)", path)
    lo, hi = float(arr.min()), float(arr.max())
    if lo < 0.0 or hi > 1.0:
        if lo >= 0.0 and hi <= 255.0:
            hint = "rescale, e.g. divide by 255 if these are 8-bit values"
        elif lo < 0.0:  # logits or a map centred on 0: /255 would not help
            hint = "a network's logits need a sigmoid; other maps a rescaling to [0, 1]"
        else:
            hint = "rescale them to [0, 1]"
        raise InputError(
            f"{what} has values in [{lo:g}, {hi:g}]; boundary strengths "
            f"must lie in [0, 1] ({hint})",
            path,
        )
    return np.ascontiguousarray(arr)


def _ucm2(arr: object, path) -> np.ndarray:
    arr = _soft_map(arr, path, "ucm2")
    h2, w2 = arr.shape
    if h2 % 2 == 0 or w2 % 2 == 0 or h2 < 3 or w2 < 3:
        raise InputError(
            f"ucm2 is {_hw(arr.shape)}, but a doubleSize ucm2 of an HxW image is "
            "(2H+1)x(2W+1), odd in both dimensions",
            path,
        )
    return arr


def _mat_ucm2(value, path):
    """A ``.mat`` file's ucm2 as the official benchmark reads it: MATLAB compares its
    values raw with thresholds in (0, 1), so a logical ucm2 (read as uint8 0/1) is
    boundaries of strength 1, not 1/255 as an 8-bit image would be; an integer ucm2
    of other values is refused (raw, every nonzero value would be a boundary at every
    threshold; as 8-bit levels it would need a scale the file does not state)."""
    arr = np.asarray(value)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer) or arr.size == 0:
        return arr
    if int(arr.min()) >= 0 and int(arr.max()) <= 1:
        return arr.astype(bool)
    raise InputError(
        f"ucm2 is an integer array ({arr.dtype}, values up to {int(arr.max())}): the "
        "official benchmark compares a .mat's ucm2 raw with thresholds in (0, 1), so "
        "every nonzero value would be a boundary at every level; save it as double in "
        "[0, 1] (ucm2 / 255 for 8-bit levels)",
        path,
    )


def _segs(items: Sequence[object], path) -> list[np.ndarray]:
    items = list(items)
    if not items:
        raise InputError("segs is empty: no segmentations", path)
    segs: list[np.ndarray] = []
    for k, item in enumerate(items, start=1):
        seg = integer_array(np.asarray(item), f"segs{{{k}}}", path)
        if segs and seg.shape != segs[0].shape:
            raise InputError(
                f"segs{{{k}}} is {_hw(seg.shape)} but segs{{1}} is "
                f"{_hw(segs[0].shape)}: all segmentations must have the "
                "image's size",
                path,
            )
        segs.append(seg)
    return segs


@dataclass(frozen=True, eq=False)
class Prediction:
    """An algorithm's output for one image, validated and in a canonical form.

    Attributes
    ----------
    kind : {'soft', 'ucm2', 'segs'}
        'soft': a boundary-strength map (thresholded by the benchmark); 'ucm2': an
        ultrametric contour map in doubleSize; 'segs': a list of segmentations (one
        "threshold" each).
    pb : (H, W) ndarray of float64 or None
        Boundary strength in [0, 1] for 'soft' and 'ucm2' (for 'ucm2':
        ``ucm2[2::2, 2::2]``, as the official benchmark samples it); None for 'segs'.
    ucm2 : (2H+1, 2W+1) ndarray of float64 or None
        The full doubleSize map, kept for the region benchmark; 'ucm2' kind only.
    segs : list of (H, W) ndarray of int32 or None
        Label maps (any labels; only equality matters); 'segs' kind only.
    source : str or None
        File the prediction came from, used in error messages.

    Notes
    -----
    The constructor validates and normalizes its input (see :func:`as_prediction`), so a
    Prediction is always well formed; ``pb`` need not be given for 'ucm2'.
    """

    kind: str
    pb: np.ndarray | None = None
    ucm2: np.ndarray | None = None
    segs: list[np.ndarray] | None = None
    source: str | None = None

    def __post_init__(self):
        src = None if self.source is None else str(self.source)
        object.__setattr__(self, "source", src)
        if self.kind not in KINDS:
            raise InputError(
                f"Prediction kind must be one of {KINDS}, not {self.kind!r}", src
            )
        given = [name for name in ("pb", "ucm2", "segs") if getattr(self, name) is not None]
        if self.kind == "soft":
            if given != ["pb"]:
                raise InputError(
                    f"a 'soft' Prediction needs pb and nothing else, got {given}", src
                )
            object.__setattr__(self, "pb", _soft_map(self.pb, src))
        elif self.kind == "ucm2":
            if "ucm2" not in given or "segs" in given:
                raise InputError(f"a 'ucm2' Prediction needs ucm2, got {given}", src)
            ucm2 = _ucm2(self.ucm2, src)
            pb = np.ascontiguousarray(ucm2[2::2, 2::2])
            if self.pb is not None and not np.array_equal(np.asarray(self.pb), pb):
                raise InputError("pb given with a ucm2 must equal ucm2[2::2, 2::2]", src)
            object.__setattr__(self, "ucm2", ucm2)
            object.__setattr__(self, "pb", pb)
        else:
            if given != ["segs"]:
                raise InputError(
                    f"a 'segs' Prediction needs segs and nothing else, got {given}", src
                )
            object.__setattr__(self, "segs", _segs(self.segs, src))

    @property
    def shape(self) -> tuple[int, int]:
        """(H, W) of the image in pixels (not of the doubleSize ucm2)."""
        if self.pb is not None:
            return self.pb.shape
        assert self.segs is not None  # a 'segs' Prediction, the only kind without pb
        return self.segs[0].shape

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Prediction):
            return NotImplemented

        def same(a, b):
            if a is None or b is None:
                return a is b
            return np.array_equal(a, b)

        return (
            self.kind == other.kind
            and self.source == other.source
            and same(self.pb, other.pb)
            and same(self.ucm2, other.ucm2)
            and (
                self.segs is other.segs is None
                or (
                    self.segs is not None
                    and other.segs is not None
                    and len(self.segs) == len(other.segs)
                    and all(map(np.array_equal, self.segs, other.segs))
                )
            )
        )

    __hash__ = None  # type: ignore[assignment]  # unhashable; typeshed allows no None


def _image_soft_map(path: Path) -> np.ndarray:
    pixels, mode, sixteen = open_image(path)
    what = "soft boundary map"
    if mode == "P" or mode == "PA":
        raise InputError(
            f"{what} is a palette (indexed-colour) image: its values are palette indices, "
            "not boundary strengths. Save it as 8- or 16-bit grayscale",
            path,
        )
    if mode in _GRAY_SCALE or (mode == "I" and sixteen):
        scale = 65535 if sixteen else _GRAY_SCALE[mode]
        return np.asarray(pixels, np.float64) / scale
    if mode in ("LA", "RGB", "RGBA", "RGBX", "La", "RGBa"):
        channel = single_channel(pixels, mode, path, what)
        return channel / float(np.iinfo(channel.dtype).max)
    raise InputError(
        f"{what} has unsupported image mode {mode}; save it as 8- or 16-bit grayscale PNG",
        path,
    )


def _npy_shape(path: Path) -> tuple | None:
    """The array shape a .npy header declares (None if it cannot be read: np.load
    then says what is wrong)."""
    try:
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape = np.lib.format.read_array_header_1_0(f)[0]
            else:
                shape = np.lib.format.read_array_header_2_0(f)[0]
        return tuple(int(n) for n in shape)
    except (OSError, ValueError, EOFError, TypeError):
        return None


def check_numpy_file(path: str | PathLike) -> None:
    """InputError unless ``path`` starts as a NumPy file does: an ``.npy`` array's
    header, or an ``.npz`` (zip) archive's. NumPy reads any other file as a pickle and
    refuses it with advice to unpickle it, which no user should follow for a map.

    Parameters
    ----------
    path : path
        The file (read: its first 6 bytes).
    """
    try:
        with open(path, "rb") as f:
            head = f.read(6)
    except FileNotFoundError:
        raise InputError("file not found", path) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path) from None
    if not head:
        raise InputError("an empty file, not a NumPy .npy array", path)
    if head != b"\x93NUMPY" and not head.startswith(b"PK\x03\x04"):
        raise InputError("not a NumPy .npy file (another format under an .npy name?)", path)


def _load_npy(path: Path) -> np.ndarray:
    from ._images import MAX_PIXELS

    shape = _npy_shape(path)
    if shape is not None and len(shape) >= 2 and shape[-1] * shape[-2] > MAX_PIXELS:
        raise InputError(
            f"the .npy array is {' x '.join(map(str, shape))}: above the limit of "
            f"{MAX_PIXELS / 1e6:.0f} megapixels a map; not read",
            path,
        )
    check_numpy_file(path)
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise InputError(
                "the .npy file holds Python objects (pickled); save a plain numeric array",
                path,
            ) from None
        raise InputError(f"corrupt or not a .npy file: {exc}", path) from None
    except (OSError, EOFError) as exc:
        raise InputError(f"corrupt or truncated .npy file: {exc}", path) from None


def read_prediction(path: str | PathLike, *, kind: str | None = None) -> Prediction:
    """Read an algorithm's output for one image.

    Parameters
    ----------
    path : str or PathLike
        One of

        - ``.png``: 8-bit grayscale (value / 255), 16-bit grayscale (value / 65535) or
          1-bit (0/1) soft boundary map;
        - ``.bmp``: 8-bit grayscale soft map (value / 255);
        - ``.npy``: a 2-D soft map; floats must be finite and within [0, 1]; uint8 and
          uint16 are scaled like the images (/255, /65535), bool is 0/1, other integer
          types are refused;
        - ``.mat``: variable ``ucm2`` (doubleSize float map, (2H+1)x(2W+1)) or ``segs``
          (cell of label maps of one size; a bare 2-D array counts as one map).
    kind : {'soft', 'ucm2', 'segs'}, optional
        Expected kind; required only to choose between ``ucm2`` and ``segs`` in a .mat
        holding both. A file of another kind is an error.

    Returns
    -------
    Prediction

    Raises
    ------
    InputError
        Missing, corrupt or unsupported file; palette image; colour image whose channels
        differ (an RGB(A) image with identical R, G, B and opaque alpha is read as
        gray); NaN or out-of-range values; wrong .mat variable; bad ucm2 shape;
        segmentations of different sizes.
    """
    path = require_file(path)
    if kind is not None and kind not in KINDS:
        raise InputError(f"kind must be one of {KINDS}, not {kind!r}", path)
    ext = path.suffix.lower()
    if ext in _IMAGE_EXTS or ext == ".npy":
        if kind not in (None, "soft"):
            raise InputError(
                f"a {ext} file holds a soft boundary map, not {kind!r}; "
                "ucm2 and segs are read from .mat files",
                path,
            )
        pb = (
            _image_soft_map(path)
            if ext in _IMAGE_EXTS
            else _soft_map(_load_npy(path), path, "soft boundary map")
        )
        return Prediction("soft", pb=pb, source=str(path))
    if ext == ".mat":
        variables = load_mat(path)
        if kind is None:
            present = [name for name in ("ucm2", "segs") if name in variables]
            if len(present) == 2:
                raise InputError(
                    "holds both 'ucm2' and 'segs', so which one to score is a guess: "
                    "keep one of them in the file (in Python, read_prediction's "
                    "kind='ucm2' or kind='segs' chooses)",
                    path,
                )
            if not present:
                raise InputError(
                    "no variable 'ucm2' or 'segs' (the official benchmark "
                    f"reads one of them); found {describe_variables(variables)}",
                    path,
                )
            kind = present[0]
        if kind == "soft":
            raise InputError(
                "soft boundary maps are read from .png, .bmp or .npy files, not .mat", path
            )
        if kind not in variables:
            raise InputError(
                f"no variable {kind!r}; found {describe_variables(variables)}", path
            )
        if kind == "ucm2":
            # raw values from the file: Prediction validates and converts them
            return Prediction(
                "ucm2", ucm2=cast(Any, _mat_ucm2(variables["ucm2"], path)), source=str(path)
            )
        segs = cell_elements(variables["segs"])
        return Prediction("segs", segs=cast(Any, segs), source=str(path))
    if ext in (".jpg", ".jpeg"):
        raise InputError(
            "JPEG is lossy and would change boundary strengths; save the "
            "map as grayscale PNG",
            path,
        )
    raise InputError(
        f"unsupported prediction file type {path.suffix!r}; expected .png, "
        ".bmp, .npy or .mat",
        path,
    )


def as_prediction(
    obj: object, *, kind: str | None = None, source: str | PathLike | None = None
) -> Prediction:
    """Turn an in-memory prediction into a validated :class:`Prediction`.

    Parameters
    ----------
    obj : Prediction, ndarray, or list/tuple of ndarray
        - Prediction: returned as is (it was validated when built);
        - 2-D ndarray: a soft map (float in [0, 1]; uint8 as /255, uint16 as /65535; bool
          as 0/1), or a doubleSize ucm2 with ``kind='ucm2'``;
        - list/tuple of 2-D integer arrays, object array (a MATLAB cell), or with
          ``kind='segs'`` a 3-D (K, H, W) integer array: segmentations.
    kind : {'soft', 'ucm2', 'segs'}, optional
        Interpretation; by default inferred as above (a 2-D array is 'soft').
    source : str or PathLike, optional
        Name used in error messages (e.g. where the array came from).

    Raises
    ------
    InputError
        On the same conditions as :func:`read_prediction`, or if ``kind`` contradicts
        ``obj``.
    """
    src = None if source is None else str(source)
    if kind is not None and kind not in KINDS:
        raise InputError(f"kind must be one of {KINDS}, not {kind!r}", src)
    if isinstance(obj, Prediction):
        if kind is not None and obj.kind != kind:
            raise InputError(
                f"expected a {kind!r} prediction, got {obj.kind!r}", src or obj.source
            )
        return obj
    obj = unmasked(obj, f"{src}: prediction" if src else "prediction")
    # a 3-D array is a stack of label maps only when asked: by default it is far more
    # likely an RGB image passed by mistake, which the 2-D check reports
    if isinstance(obj, (list, tuple)) or (
        isinstance(obj, np.ndarray)
        and (obj.dtype == object or (obj.ndim == 3 and kind == "segs"))
    ):
        if kind not in (None, "segs"):
            raise InputError(
                f"a list of label maps is a 'segs' prediction, not {kind!r}", src
            )
        items = (
            cell_elements(obj)
            if isinstance(obj, np.ndarray) and obj.dtype == object
            else list(obj)
        )
        # Prediction validates and converts the items
        return Prediction("segs", segs=cast(Any, items), source=src)
    if isinstance(obj, np.ndarray):
        if kind == "segs":
            return Prediction("segs", segs=[obj], source=src)
        if kind == "ucm2":
            return Prediction("ucm2", ucm2=obj, source=src)
        return Prediction("soft", pb=obj, source=src)
    raise InputError(
        f"cannot make a prediction from a {type(obj).__name__}; give a "
        "numpy array, a list of label maps or a Prediction",
        src,
    )


def check_same_shape(
    prediction: Prediction | np.ndarray | tuple[int, int],
    gt_shape: tuple[int, int],
    path: str | PathLike | None = None,
) -> None:
    """Raise InputError unless a prediction has the ground truth's (H, W).

    Parameters
    ----------
    prediction : Prediction, ndarray or (H, W) tuple
    gt_shape : (H, W)
        Size of the image / ground truth in pixels.
    path : str or PathLike, optional
        File named in the message; defaults to ``prediction.source``.

    Notes
    -----
    BSDS images are 481x321 (portrait) or 321x481 (landscape), so the common mistakes
    get their own message: a transposed map, a ucm2 saved at image size instead of
    doubleSize, and a doubleSize map given as a soft map.
    """
    given: tuple[int, ...]
    if isinstance(prediction, Prediction):
        given = prediction.shape
        path = prediction.source if path is None else path
    elif isinstance(prediction, np.ndarray):
        given = prediction.shape
    else:
        given = tuple(prediction)
    shape, gt = tuple(int(n) for n in given), tuple(int(n) for n in gt_shape)
    if shape == gt:
        return
    h, w = gt
    got = f"prediction is {_hw(shape)} (HxW) but the image and ground truth are {_hw(gt)}"
    ucm2 = getattr(prediction, "ucm2", None) if isinstance(prediction, Prediction) else None
    if ucm2 is not None and ucm2.shape != gt:  # as given, not at the image size it means
        got = (
            f"the ucm2 is {_hw(ucm2.shape)} (HxW), the doubleSize of {_hw(shape)}, but the "
            f"image and ground truth are {_hw(gt)} (its ucm2 {2 * h + 1}x{2 * w + 1})"
        )
    if (
        isinstance(prediction, Prediction)
        and prediction.kind == "ucm2"
        and prediction.ucm2 is not None  # always, for a 'ucm2' Prediction
        and prediction.ucm2.shape == gt
    ):
        raise InputError(
            f"the ucm2 is {_hw(gt)}, the image size; the benchmark "
            f"needs the doubleSize ucm2, {2 * h + 1}x{2 * w + 1}",
            path,
        )
    if shape == (w, h):
        raise InputError(
            f"{got}: it looks transposed (rows and columns swapped, e.g. a "
            "portrait image saved as landscape); transpose it back",
            path,
        )
    if shape == (2 * h + 1, 2 * w + 1):
        raise InputError(
            f"{got}: it looks like a doubleSize ucm2; "
            + (
                "save it as variable 'ucm2' in a .mat file, or take ucm2[2::2, 2::2]"
                if path is not None and Path(str(path)).is_file()
                else "give it as floats in [0, 1] (an integer array is read as a "
                "label map)"
                + (
                    ""  # a label map's pixels are not the ucm2's cells: no slice of it
                    if isinstance(prediction, Prediction) and prediction.kind == "segs"
                    else ", or take ucm2[2::2, 2::2]"
                )
            ),
            path,
        )
    raise InputError(got, path)


def write_soft_map(path: str | PathLike, pb, *, bits: int = 16) -> Path:
    """Write a soft boundary map with values in [0, 1], atomically.

    ``.png`` stores a greyscale image of ``bits`` bits: 16 (``round(65535 * pb)``,
    read back as ``/65535``) or 8 (``round(255 * pb)``, read back as ``/255``, as the
    MATLAB scripts of CNN detectors save their maps); ``.npy`` stores the float64 array
    exactly (``bits`` is ignored).
    """
    import io

    path = Path(path)
    if bits not in (8, 16):
        raise InputError(f"bits must be 8 or 16, not {bits!r}", path)
    arr = _soft_map(np.asarray(pb), path)
    ext = path.suffix.lower()
    if ext not in (".npy", ".png"):
        raise InputError("soft maps are written as .png (16- or 8-bit) or .npy", path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    if ext == ".npy":
        np.save(buf, arr)
    else:
        from PIL import Image

        if bits == 16:
            Image.fromarray(np.rint(arr * 65535).astype(np.uint16)).save(buf, "PNG")
        else:
            Image.fromarray(np.rint(arr * 255).astype(np.uint8)).save(buf, "PNG")
    atomic_write_bytes(path, buf.getvalue())
    return path


def write_segs(path: str | PathLike, segs) -> Path:
    """Write a list of segmentations as a ``segs`` .mat prediction (a 1xK cell array).

    Each (H, W) label map is stored as given (the BSDS convention is labels ``1..N``)
    as uint16, or uint32 where a label exceeds 65535; :func:`read_prediction` reads the
    file back as kind 'segs'.
    """
    path = Path(path)
    checked = _segs(list(segs), path)
    cell = np.empty((1, len(checked)), dtype=object)
    for k, seg in enumerate(checked):
        if seg.size and seg.min() < 0:
            raise InputError(f"segs{{{k + 1}}} has negative labels", path)
        dtype = np.uint16 if seg.size == 0 or seg.max() <= 65535 else np.uint32
        cell[0, k] = seg.astype(dtype)
    return write_mat(path, {"segs": cell})
