"""Decoding raster images with Pillow into plain numpy arrays, with readable errors."""

from __future__ import annotations

from contextlib import contextmanager
from os import PathLike
from pathlib import Path

import numpy as np

from ..errors import InputError
from ._files import require_file

# Pillow modes of single-channel images and the full-scale value of each.
_GRAY_SCALE = {
    "1": 1,
    "L": 255,
    "I;16": 65535,
    "I;16L": 65535,
    "I;16B": 65535,
    "I;16N": 65535,
}


#: Largest image decoded, in pixels (64 megapixels: 400 times a BSDS image, 30 times a
#: 2048x1024 Cityscapes frame). Checked from the file header before any pixel is
#: decoded, so a small file claiming a huge size (a decompression bomb) costs nothing.
#: It is below Pillow's own warning threshold, whose guard stays on.
MAX_PIXELS = 64_000_000


def _checked_header(im, path: Path, max_pixels: int, expected_shape) -> None:
    w, h = im.size
    if expected_shape is not None and (h, w) != tuple(expected_shape):
        eh, ew = expected_shape
        raise InputError(f"image is {h}x{w} (HxW) but {eh}x{ew} is expected", path)
    if w * h > max_pixels:
        raise InputError(
            f"image claims {w}x{h} pixels ({w * h / 1e6:.0f} megapixels), "
            f"above the limit of {max_pixels / 1e6:.0f}; not decoded "
            "(a decompression bomb, or not a benchmark image)",
            path,
        )


@contextmanager
def _open(path: Path):
    """``Image.open(path)`` in segbench's words: Pillow's own limits (a warning above
    89 MP, an error above 179 MP) speak of its numbers, and segbench's limit, which its
    callers check from the header, is the one to say."""
    import warnings

    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            im = Image.open(path)
    except Image.DecompressionBombError:
        raise InputError(
            "the image claims more than twice Pillow's safe limit of pixels, above "
            f"segbench's limit of {MAX_PIXELS / 1e6:.0f} megapixels; not decoded",
            path,
        ) from None
    with im:
        yield im


def image_size(path: str | PathLike) -> tuple[int, int]:
    """(H, W) of an image file from its header alone (no pixel is decoded)."""
    from PIL import UnidentifiedImageError  # Pillow loads on first use

    path = require_file(path)
    try:
        with _open(path) as im:
            w, h = im.size
    except UnidentifiedImageError:
        raise InputError(
            "not an image Pillow can read (corrupt, or wrong extension)", path
        ) from None
    except (OSError, ValueError, SyntaxError) as exc:
        raise InputError(f"corrupt or truncated image file: {exc}", path) from None
    return h, w


def _png_bit_depth(path: Path) -> int | None:
    """The bit depth in a PNG's header (IHDR, byte 24), or None if unreadable."""
    try:
        with open(path, "rb") as f:
            head = f.read(26)
    except OSError:
        return None
    return head[24] if len(head) == 26 and head[12:16] == b"IHDR" else None


def open_image(
    path: str | PathLike, *, expected_shape=None, max_pixels: int = MAX_PIXELS
) -> tuple[np.ndarray, str, bool]:
    """Decode an image file fully, after checking its size from the header.

    Parameters
    ----------
    expected_shape : (H, W), optional
        Refuse (before decoding) an image of another size.
    max_pixels : int, default :data:`MAX_PIXELS`
        Refuse (before decoding) an image claiming more pixels.

    Returns
    -------
    pixels : ndarray
        (H, W) or (H, W, C) as Pillow decodes it; palette images give their indices.
    mode : str
        Pillow mode ('L', 'I;16', 'P', 'RGB', ...).
    sixteen_bit : bool
        True when the file stores 16 bits per sample (PNG bit depth 16), which Pillow
        may report as mode 'I' on some versions.
    """
    from PIL import UnidentifiedImageError  # Pillow loads on first use

    path = require_file(path)
    try:
        with _open(path) as im:  # reads the header only
            _checked_header(im, path, max_pixels, expected_shape)
            im.load()
            mode = im.mode
            fmt = im.format
            pixels = np.asarray(im)
    except InputError:
        raise
    except UnidentifiedImageError:
        raise InputError(
            "not an image Pillow can read (corrupt, or wrong extension)", path
        ) from None
    except (OSError, ValueError, SyntaxError) as exc:  # truncated or corrupt data
        raise InputError(f"corrupt or truncated image file: {exc}", path) from None
    if fmt == "PNG" and mode in ("RGB", "RGBA", "LA") and _png_bit_depth(path) == 16:
        # Pillow decodes these at 8 bits, dropping the low byte without a word
        raise InputError(
            f"a 16-bit {mode} PNG, which is read at 8 bits (its low byte lost); save "
            "it with 8 bits a channel, or 16-bit grey",
            path,
        )
    sixteen = mode.startswith("I;16") or (mode == "I" and fmt == "PNG")
    if mode == "I" and fmt == "PNG":
        if pixels.size and (pixels.min() < 0 or pixels.max() > 65535):
            raise InputError("32-bit integer PNG values outside 0..65535", path)
    return pixels, mode, sixteen


def single_channel(pixels: np.ndarray, mode: str, path: Path, what: str) -> np.ndarray:
    """Reduce gray+alpha / RGB(A) pixels to one channel, or explain why not.

    An image whose colour channels are all identical (a grey image saved as RGB) is
    accepted; the alpha channel, if any, must be fully opaque, since a boundary map
    stored in alpha cannot be told from a transparency mask.
    """
    if pixels.ndim == 2:
        return pixels
    channels = mode.rstrip("X")  # 'RGBX' behaves like 'RGB'
    colour = pixels[..., :3] if channels.startswith("RGB") else pixels[..., :1]
    if "A" in mode:
        alpha = pixels[..., mode.index("A")]
        if (alpha != np.iinfo(alpha.dtype).max).any():
            raise InputError(
                f"{what} must be a single-channel (grayscale) image; this {mode} image "
                "has a non-opaque alpha channel. Save the map as 8- or 16-bit grayscale",
                path,
            )
    if colour.shape[-1] > 1 and not (colour == colour[..., :1]).all():
        raise InputError(
            f"{what} must be a single-channel (grayscale) image, but this is an {mode} "
            "colour image whose channels differ. Save the boundary map as 8- or 16-bit "
            "grayscale PNG",
            path,
        )
    return colour[..., 0]


def read_image(path: str | PathLike) -> np.ndarray:
    """Read a photograph (e.g. a BSDS ``.jpg``) as an (H, W, 3) uint8 RGB array.

    Grayscale images are repeated over the three channels; alpha is dropped; palette
    images are converted to their colours. 16-bit images are refused (no BSDS image is
    one, and scaling them down silently would lose data).
    """
    from PIL import Image  # Pillow loads on first use

    path = require_file(path)
    pixels, mode, sixteen = open_image(path)
    if mode == "F" or (mode == "I" and not sixteen):
        raise InputError(
            f"a {'floating-point' if mode == 'F' else '32-bit integer'} image (Pillow "
            f"mode {mode}): the detectors take 8-bit photographs, and the scale of "
            "these values is not known; save it as 8-bit, or call the Pb detectors "
            "from Python with an array",
            path,
        )
    if sixteen:
        raise InputError(
            f"expected an 8-bit colour or gray image, got Pillow mode {mode}: the "
            "detectors take 8-bit photographs, and scaling a 16-bit one down here would "
            "lose data without a word; convert it yourself (e.g. round(v / 257)), or "
            "call the Pb detectors from Python, which take uint16 arrays",
            path,
        )
    if mode in ("RGB",):
        return np.ascontiguousarray(pixels, dtype=np.uint8)
    with Image.open(path) as im:  # rare modes: let Pillow do the colour conversion
        return np.asarray(im.convert("RGB"), dtype=np.uint8)


def write_image(path: str | PathLike, image, *, compress_level: int = 6) -> Path:
    """Write an 8-bit picture: (H, W) grey or (H, W, 3) RGB uint8.

    The format follows the suffix (``.png``, ``.jpg`` at quality 90, ``.bmp``, ...);
    PNGs are written without optimisation, so the same pixels give the same bytes, at
    zlib level ``compress_level`` (0-9; 1 is several times faster than the default 6
    for somewhat larger files).
    """
    from PIL import Image  # Pillow loads on first use

    path = Path(path)
    arr = np.asarray(image)
    if (
        arr.dtype != np.uint8
        or arr.ndim not in (2, 3)
        or (arr.ndim == 3 and arr.shape[2] != 3)
    ):
        raise InputError(
            f"expected an (H, W) or (H, W, 3) uint8 image, got {arr.dtype} "
            f"of shape {arr.shape}",
            path,
        )
    ext = path.suffix.lower()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        im = Image.fromarray(np.ascontiguousarray(arr))
        if ext in (".jpg", ".jpeg"):
            im.save(path, format="JPEG", quality=90)
        elif ext == ".png":
            im.save(path, format="PNG", optimize=False, compress_level=int(compress_level))
        else:
            im.save(path)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot write image: {exc}", path) from None
    return path
