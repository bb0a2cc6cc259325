"""Label maps (segmentations, superpixels) as image, .npy or .mat files."""

from __future__ import annotations

import os
from os import PathLike
from pathlib import Path

import numpy as np

from ..errors import InputError
from ._files import require_file
from ._images import _GRAY_SCALE, MAX_PIXELS, open_image
from ._mat import describe_variables, integer_array, load_mat, only_2d_variable
from ._prediction import _load_npy

_PNG_MAX = 65535


def read_label_map(
    path: str | PathLike,
    *,
    variable: str | None = None,
    dtype=np.int32,
    choose: str = "pass variable=<name> (--gt-variable)",
) -> np.ndarray:
    """Read a label map (segmentation, superpixels) as an (H, W) int32 array.

    Parameters
    ----------
    path : str or PathLike
        - ``.png`` / ``.bmp`` / ``.tif``: 8- or 16-bit grayscale (the values are the
          labels), 1-, 2- or 4-bit grayscale (the stored samples, 0..1, 0..3, 0..15,
          not Pillow's rescaling to 0..255), or palette (the palette *indices* are the
          labels, the colours are ignored). Colour images are refused: their colours
          would first have to be mapped to labels, which is ambiguous, and so is JPEG
          data under any name (lossy compression invents labels at every edge).
        - ``.npy``: a 2-D integer or bool array (floats holding whole numbers accepted).
        - ``.mat``: a 2-D numeric variable holding whole numbers (MATLAB's default
          double is fine); the only such variable unless ``variable`` names one.
    variable : str, optional
        Name of the .mat variable to read.
    dtype : numpy integer type or None, keyword-only
        Type of the result (default int32). ``None`` keeps the stored type where it
        is uint8, uint16 or int32 (an 8-bit PNG gives uint8, a 16-bit one uint16;
        bool becomes uint8, anything else int32), so nothing is widened.
    choose : str, keyword-only
        How the caller picks a variable, said when a .mat file holds no 2-D variable
        or several (default: the ``variable`` argument and ``--gt-variable``).

    Returns
    -------
    (H, W) ndarray of int32 (or ``dtype``)
        The labels exactly as stored, no relabelling (0 is an ordinary label here).

    Raises
    ------
    InputError
        Missing or corrupt file, colour image, JPEG data, non-2-D or empty array, NaN or
        fractional values, values beyond int32, a .mat without exactly one candidate
        variable, or a missing ``variable``.
    """
    path = require_file(path)
    ext = path.suffix.lower()
    if ext == ".png":
        pixels = _decode_png(path)
        if pixels is not None:
            return pixels if dtype is None else pixels.astype(dtype)
    if ext in (".png", ".bmp", ".tif", ".tiff"):
        with open(path, "rb") as f:
            head = f.read(26)
        _refuse_lossy(head, path)
        pixels, mode, sixteen = open_image(path)
        if mode in _GRAY_SCALE or mode in ("P", "I", "F") or sixteen:
            if mode == "L" and ext == ".png":
                pixels = _unscaled_grey(np.asarray(pixels), head)
            return integer_array(np.asarray(pixels), "label map", path, dtype=dtype)
        raise InputError(
            f"label map is a {mode} image; expected single-channel labels (8- or 16-bit "
            "grayscale or palette PNG). Colours are not converted to labels: map each "
            "colour to an integer and save that",
            path,
        )
    if ext == ".npy":
        arr = _load_npy(path)
        return integer_array(arr, "label map", path, dtype=dtype)
    if ext == ".mat":
        variables = load_mat(path)
        if variable is None:
            variable = only_2d_variable(variables, path, choose)
        if variable not in variables:
            raise InputError(
                f"no variable {variable!r}; found {describe_variables(variables)}", path
            )
        return integer_array(
            variables[variable], f"variable {variable!r}", path, dtype=dtype
        )
    raise InputError(
        f"unsupported label-map file type {path.suffix!r}; expected .png, "
        ".bmp, .tif, .npy or .mat",
        path,
    )


#: The first bytes of JPEG data (SOI marker and the next marker's 0xFF).
_JPEG_MAGIC = b"\xff\xd8\xff"
#: PNG signature, then the IHDR chunk's length and type: the bit depth is byte 24 and the
#: colour type byte 25 of every PNG file.
_PNG_IHDR = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


def _refuse_lossy(head: bytes, path: Path) -> None:
    """Refuse JPEG data (the file's first bytes ``head``) under an image name: lossy
    compression blurs label edges into other (made-up) labels, so they would be counted
    as classes."""
    if head.startswith(_JPEG_MAGIC):
        raise InputError(
            "label map holds JPEG data (lossy: compression changes labels near every "
            "edge into other labels); save the labels as a PNG",
            path,
        )


def _unscaled_grey(pixels: np.ndarray, head: bytes) -> np.ndarray:
    """The samples of a 2- or 4-bit grayscale PNG whose file starts with ``head``
    (Pillow scales them to 0..255, x85 or x17; optipng and oxipng store maps of few
    labels so): the stored values are the labels. Other PNGs unchanged."""
    if len(head) < 26 or not head.startswith(_PNG_IHDR) or head[25] != 0:
        return pixels  # not grayscale (colour type 0)
    depth = head[24]
    if depth in (2, 4):
        return pixels // (255 // ((1 << depth) - 1))
    return pixels


def read_stored_labels(path: str | PathLike, *, buffer: str | None = None) -> np.ndarray:
    """:func:`read_label_map` with ``dtype=None``: the labels in their stored integer
    type (uint8 for an 8-bit PNG), as the semantic benchmark counts them.

    Parameters
    ----------
    path : str or PathLike
    buffer : str, optional, keyword-only
        For callers that count a map and drop it: an 8-bit PNG is decoded into this
        thread's buffer of that name, and the result is a view of it that the next read
        into the same name on the same thread overwrites (no fresh memory per file).
        Default: a new array.
    """
    if buffer is not None and Path(path).suffix.lower() == ".png":
        path = require_file(path)
        pixels = _decode_png(path, buffer)
        if pixels is not None:
            return pixels
    return read_label_map(path, dtype=None)


def read_stored_label_pair(
    gt_path: str | PathLike, pred_path: str | PathLike
) -> tuple[np.ndarray, np.ndarray]:
    """``(read_stored_labels(gt_path, buffer="gt"), read_stored_labels(pred_path,
    buffer="pred"))``, with two PNG files decoded together (faster where both are
    mostly literals: maps without runs of one label).

    The results are views of this thread's buffers ``"gt"`` and ``"pred"`` (for callers
    that count a pair and drop it): the next read into them overwrites them.

    Raises
    ------
    InputError
        As :func:`read_label_map`, naming the file.
    """
    if _is_png(gt_path) and _is_png(pred_path):
        from ._png import decode_label_png_pair, read_into_scratch

        a: tuple[np.ndarray, int] | None
        b: tuple[np.ndarray, int] | None
        try:
            a = read_into_scratch(gt_path, "gt")
            b = read_into_scratch(pred_path, "pred")
        except OSError:  # missing, a folder, unreadable: the path below names it
            a = b = None
        if a is not None:
            pair = decode_label_png_pair(a, b, MAX_PIXELS, "gt", "pred")
            if pair is not None:
                return pair
    return (
        read_stored_labels(gt_path, buffer="gt"),
        read_stored_labels(pred_path, buffer="pred"),
    )


def _is_png(path) -> bool:
    """Whether the name ends in ``.png`` (any case): checked per file of a folder run,
    where making a Path of each name measured a few percent of a pair's time."""
    return os.fspath(path)[-4:].lower() == ".png"


def _decode_png(path: Path, out: str | None = None) -> np.ndarray | None:
    """The samples of a PNG label map by segbench's own decoder (8-bit grey or palette,
    16-bit grey, not interlaced), or None: then Pillow decodes it (any other kind, an
    unreadable or malformed file: Pillow's message names the problem). ``out``: see
    :func:`._png.decode_label_png`."""
    from ._png import decode_scratch, read_into_scratch  # here: these load numba

    try:
        buf, n = read_into_scratch(path, out or "file")
    except OSError:
        return None
    return decode_scratch(buf, n, MAX_PIXELS, out)


def write_label_map(path: str | PathLike, labels: np.ndarray) -> None:
    """Write a label map as a 16-bit grayscale PNG or a .npy file (by extension).

    Parameters
    ----------
    path : str or PathLike
        ``.png`` (always 16-bit, so the same reader works for any label count) or
        ``.npy`` (int32).
    labels : (H, W) array of int
        Labels; for PNG they must lie in 0..65535.

    Raises
    ------
    InputError
        Non-integer or non-2-D labels, labels outside 0..65535 for PNG (use .npy), or an
        unsupported extension.
    """
    from PIL import Image  # Pillow loads on first use

    path = Path(path)
    ext = path.suffix.lower()
    if ext not in (".png", ".npy"):
        raise InputError(
            f"unsupported label-map file type {path.suffix!r}; expected .png or .npy", path
        )
    labels = np.asarray(labels)
    if np.issubdtype(labels.dtype, np.floating):
        raise InputError(f"labels must be integers, got {labels.dtype}", path)
    arr = integer_array(labels, "label map", path, dtype=np.int64)
    try:
        if ext == ".npy":
            if arr.min() < np.iinfo(np.int32).min or arr.max() > np.iinfo(np.int32).max:
                raise InputError("labels do not fit in int32", path)
            np.save(path, arr.astype(np.int32), allow_pickle=False)
            return
        if arr.min() < 0 or arr.max() > _PNG_MAX:
            raise InputError(
                f"labels span [{arr.min()}, {arr.max()}] but a 16-bit PNG "
                f"holds 0..{_PNG_MAX}; relabel them or write .npy",
                path,
            )
        Image.fromarray(arr.astype(np.uint16)).save(path, format="PNG")
    except OSError as exc:
        raise InputError(f"cannot write file: {exc.strerror or exc}", path) from None
