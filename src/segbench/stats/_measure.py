"""Per-segmentation measurement: sample pixels, score every pair, measure the regions.

The per-item stage of the pipeline: arrays in, a small :class:`SegmentationRecord` of
integer counts out. Everything dataset-wide (normalisation, bins, means, fits) happens
in :mod:`._summary`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ..compilation import prepare_kernels
from ..errors import InputError
from ._regions import region_shapes

prepare_kernels()

#: Grey levels (the annotators' 8-bit display): differences 0..255.
GRAY_LEVELS = 256
#: CIELAB differences are counted in unit bins 0..COLOR_CAP-1; larger ones in the last.
COLOR_CAP = 256
#: Texture differences are counted in bins of TEXTURE_STEP up to TEXTURE_CAP (last: more).
TEXTURE_STEP = 0.25
TEXTURE_CAP = 64.0
#: Texture descriptor: filter scale and energy window (pixels), see texture_features.
TEXTURE_SIGMA = 1.5
TEXTURE_WINDOW = 4.0

CUES = ("gray", "color", "texture")


@dataclass(frozen=True, eq=False)
class Item:
    """One human segmentation of one image, as the statistics consume it.

    Attributes
    ----------
    image : (H, W, 3) uint8 RGB array, or None
        The photograph. Needed only for the similarity statistics; None skips them
        for this item.
    segmentation : (H, W) integer array
        Region labels; every distinct value is one region (0 included).
    id : str, optional
        A stable name (e.g. ``'100007/2'``). It seeds this item's pixel sample, so the
        sample does not depend on the order or grouping of the items. Items without an
        id are named by their position in the iterable.
    image_id : str, optional
        The image the segmentation belongs to: the unit of the bootstrap. Defaults to
        ``id`` up to its last ``'/'``.
    gray : bool or None
        True when the annotator saw the image in greyscale, False in colour, None when
        not recorded (BSDS500 .mat files do not record it).
    """

    image: np.ndarray | None
    segmentation: np.ndarray
    id: str | None = None
    image_id: str | None = None
    gray: bool | None = None


@dataclass(frozen=True, eq=False)
class SegmentationRecord:
    """What one segmentation contributes: pair counts per bin and per-region shapes.

    Counts are (bins, 2) int64 arrays: column 0 all pairs in the bin, column 1 the
    pairs whose two pixels share a segment. Cue counts are None when the item had no
    image.
    """

    key: str
    image_id: str
    gray: bool | None
    shape: tuple[int, int]
    n_segments: int
    proximity: np.ndarray
    cues: dict = field(default_factory=dict)
    areas: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    convexity: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def group(self) -> str:
        """'gray', 'color' or 'unknown': how the annotator saw the image."""
        return "unknown" if self.gray is None else ("gray" if self.gray else "color")


def item_seed(seed: int, key: str) -> np.random.SeedSequence:
    """The SeedSequence of one item: (seed, SHA-256 of its key), independent of order."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    words = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    return np.random.SeedSequence(entropy=int(seed), spawn_key=words)


def max_scaled_distance(shape: tuple[int, int], n_segments: int) -> float:
    """Largest pixel distance of an image (corner centres) times sqrt(segments / area)."""
    h, w = shape
    return float(np.hypot(h - 1, w - 1) * np.sqrt(n_segments / (h * w)))


def gray_levels(image: np.ndarray) -> np.ndarray:
    """8-bit grey image as shown to the annotators: round(0.299 R + 0.587 G + 0.114 B).

    The ITU-R BT.601 luma of MATLAB's ``rgb2gray`` and Pillow's ``convert('L')``; the
    BSDS tool's own conversion is not recorded. A 2-D input is taken as grey already.
    """
    image = np.asarray(image)
    if image.ndim == 2:
        return np.clip(np.rint(image), 0, 255).astype(np.int16)
    rgb = image[..., :3].astype(np.float64)
    g = rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114
    return np.clip(np.rint(g), 0, 255).astype(np.int16)


def lab_colors(image: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of an 8-bit sRGB image, (H, W, 3) float32 (skimage.color.rgb2lab)."""
    from skimage.color import rgb2lab

    image = np.asarray(image)
    if image.ndim == 2:
        image = np.repeat(image[..., None], 3, axis=2)
    return rgb2lab(image[..., :3].astype(np.float64) / 255.0).astype(np.float32)


def texture_features(
    gray: np.ndarray, *, sigma: float = TEXTURE_SIGMA, window: float = TEXTURE_WINDOW
) -> np.ndarray:
    """Local filter-bank energies, (H, W, 4) float32, in grey levels.

    Four filters on the grey image at scale ``sigma``: the Gaussian derivatives along
    rows and along columns, and the Laplacian of Gaussian at ``sigma`` and ``2 sigma``
    (scale-normalised, times sigma^2). Each response is squared, averaged with a
    Gaussian window of ``window`` pixels and square-rooted: the local RMS response.
    Flat areas give 0 in every channel; stripes give energy in the derivative across
    them; fine dots in the LoG channels. The texture difference of two pixels is the
    Euclidean distance between their vectors.
    """
    from scipy import ndimage as ndi

    g = np.asarray(gray, np.float32)
    responses = [
        ndi.gaussian_filter(g, sigma, order=(1, 0)),
        ndi.gaussian_filter(g, sigma, order=(0, 1)),
        ndi.gaussian_laplace(g, sigma) * sigma**2,
        ndi.gaussian_laplace(g, 2 * sigma) * (2 * sigma) ** 2,
    ]
    energy = [np.sqrt(ndi.gaussian_filter(r * r, window)) for r in responses]
    return np.stack(energy, axis=-1).astype(np.float32)


@dataclass(frozen=True, eq=False)
class ImageCues:
    """What the similarity cues need of one image, computed once for all its annotators.

    Grey level and CIELAB are per-pixel functions, so they are computed only at the
    sampled pixels; the texture descriptor needs neighbourhoods and is filtered over the
    whole image.
    """

    rgb: np.ndarray  # (H*W, 3) uint8
    texture: np.ndarray  # (H*W, 4) float32

    @classmethod
    def of(cls, image: np.ndarray) -> ImageCues:
        image = np.asarray(image)
        if image.ndim == 2:
            image = np.repeat(image[..., None], 3, axis=2)
        if image.ndim != 3 or image.shape[2] < 3:
            raise InputError(f"expected an (H, W, 3) RGB image, got shape {image.shape}")
        rgb = np.ascontiguousarray(image[..., :3], dtype=np.uint8)
        tex = texture_features(gray_levels(rgb))
        return cls(rgb.reshape(-1, 3), tex.reshape(rgb.shape[0] * rgb.shape[1], -1))

    @property
    def n_pixels(self) -> int:
        return self.rgb.shape[0]


N_TEXTURE_BINS = int(round(TEXTURE_CAP / TEXTURE_STEP))


@njit(cache=True, nogil=True)
def _score_pairs(r, c, lab, factor, nbins, gray, color, tex, with_cues):
    """Every pair i < j of the samples, counted into the proximity and cue bins.

    Returns (nbins, 2), (256, 2), (COLOR_CAP, 2) and (texture bins, 2) int64 counts:
    column 0 all pairs, column 1 the pairs inside one segment. A compiled double loop
    over the ~500,000 pairs: no pair arrays are materialised.
    """
    n = r.shape[0]
    prox = np.zeros((nbins, 2), np.int64)
    ng = GRAY_LEVELS if with_cues else 1
    nc = COLOR_CAP if with_cues else 1
    nt = N_TEXTURE_BINS if with_cues else 1
    gcount = np.zeros((ng, 2), np.int64)
    ccount = np.zeros((nc, 2), np.int64)
    tcount = np.zeros((nt, 2), np.int64)
    ntex = tex.shape[1]
    for i in range(n):
        for j in range(i + 1, n):
            s = 1 if lab[i] == lab[j] else 0
            dr = float(r[i] - r[j])
            dc = float(c[i] - c[j])
            b = int(np.sqrt(dr * dr + dc * dc) * factor)
            if b >= nbins:
                b = nbins - 1
            prox[b, 0] += 1
            prox[b, 1] += s
            if with_cues:
                gb = abs(gray[i] - gray[j])
                gcount[gb, 0] += 1
                gcount[gb, 1] += s
                d = 0.0
                for k in range(3):
                    e = color[i, k] - color[j, k]
                    d += e * e
                cb = int(np.sqrt(d))
                if cb >= nc:
                    cb = nc - 1
                ccount[cb, 0] += 1
                ccount[cb, 1] += s
                d = 0.0
                for k in range(ntex):
                    e = tex[i, k] - tex[j, k]
                    d += e * e
                tb = int(np.sqrt(d) / TEXTURE_STEP)
                if tb >= nt:
                    tb = nt - 1
                tcount[tb, 0] += 1
                tcount[tb, 1] += s
    return prox, gcount, ccount, tcount


def sample_pixels(
    shape: tuple[int, int], samples: int, rng: np.random.Generator
) -> np.ndarray:
    """Flat indices of ``samples`` distinct pixels, uniformly; all pixels if fewer."""
    n = shape[0] * shape[1]
    if samples >= n:
        return np.arange(n)
    return np.sort(rng.choice(n, size=samples, replace=False))


def check_segmentation(segmentation, key: str) -> np.ndarray:
    """The label map as an array, or InputError naming the item."""
    seg = np.asarray(segmentation)
    if seg.ndim != 2 or seg.size == 0:
        raise InputError(
            f"item {key}: segmentation must be a nonempty 2-D array, got shape {seg.shape}"
        )
    if not np.issubdtype(seg.dtype, np.integer):
        raise InputError(
            f"item {key}: segmentation must hold integer labels, got {seg.dtype}"
        )
    return seg


def measure(
    segmentation: np.ndarray,
    *,
    key: str,
    scale: float | None,
    image_id: str | None = None,
    gray: bool | None = None,
    cues: ImageCues | None = None,
    samples: int = 1000,
    seed: int = 0,
    proximity_bins: int = 20,
) -> SegmentationRecord:
    """Score one segmentation: the per-item function of every statistic.

    Parameters
    ----------
    segmentation : (H, W) integer array
    key : str
        Names the item and, with ``seed``, seeds its pixel sample.
    scale : float or None
        The dataset's largest scaled distance (:func:`max_scaled_distance`): a pair at
        pixel distance d falls at d * sqrt(segments / area) / scale, in [0, 1]. None
        uses this segmentation's own largest one, i.e. d / diagonal.
    image_id, gray
        Carried into the record (see :class:`Item`).
    cues : ImageCues, optional
        The image's cue inputs; None skips the similarity counts.
    samples : int
        Pixels drawn without replacement; all samples*(samples-1)/2 pairs are scored.
    seed : int
    proximity_bins : int
        Equal bins of the normalised distance over [0, 1].
    """
    seg = check_segmentation(segmentation, key)
    h, w = seg.shape
    areas, convexity = region_shapes(seg)
    n_seg = int(areas.size)
    rng = np.random.default_rng(item_seed(seed, key))
    idx = sample_pixels((h, w), int(samples), rng)
    r, c = np.divmod(idx, w)
    lab = seg.ravel()[idx].astype(np.int64)
    if scale is None:
        scale = max_scaled_distance((h, w), n_seg)
    factor = np.sqrt(n_seg / (h * w)) / max(scale, 1e-300) * proximity_bins
    if cues is not None:
        if cues.n_pixels != h * w:
            raise InputError(
                f"item {key}: the image has {cues.n_pixels} pixels but the "
                f"segmentation is {h}x{w}"
            )
        rgb = cues.rgb[idx]
        gray_s = gray_levels(rgb[:, None, :])[:, 0].astype(np.int64)
        color_s = lab_colors(rgb[:, None, :])[:, 0, :].astype(np.float64)
        tex_s = cues.texture[idx].astype(np.float64)
    else:
        gray_s = np.zeros(idx.size, np.int64)
        color_s = np.zeros((idx.size, 3))
        tex_s = np.zeros((idx.size, 1))
    prox, gc, cc, tc = _score_pairs(
        r.astype(np.int64),
        c.astype(np.int64),
        lab,
        float(factor),
        int(proximity_bins),
        gray_s,
        color_s,
        tex_s,
        cues is not None,
    )
    out = {} if cues is None else {"gray": gc, "color": cc, "texture": tc}
    if image_id is None:
        image_id = key.rsplit("/", 1)[0] if "/" in key else key
    return SegmentationRecord(
        key=key,
        image_id=image_id,
        gray=gray,
        shape=(h, w),
        n_segments=n_seg,
        proximity=prox,
        cues=out,
        areas=areas,
        convexity=convexity,
    )
