"""Agreement among annotators: how many people drew each human boundary pixel.

After Hou, Yuille and Koch (CVPR 2013), who graded every human boundary label by the
number of annotators who drew it. Our definition, in pixels: for a boundary pixel ``p``
of annotator ``k``,

    agreement(p) = 1 + #{j != k : p is matched in the correspondence of k's and j's maps}

where the correspondence is the benchmark's exact one-to-one matching
(:meth:`segbench.boundary.Matcher.match`, tolerance ``max_dist`` of the image diagonal,
0.0075 by default), solved once per unordered pair of annotators: the same matching
gives both sides' matched pixels. A pixel of agreement 1 is an *orphan* (no other
annotator drew a boundary there); agreement ``K`` (the image's number of annotators)
is *unanimous*.

Fractions are counted in *labels* by default, as Hou et al. count them: a boundary drawn
by ``l`` annotators is one label of level ``l`` (its ``l`` matched pixels, one per
annotator, count ``1/l`` each), so labels at level ``l`` = pixels at level ``l`` / ``l``.
This reproduces their figures (BSDS500 test: 30.61 % orphan, 30.25 % unanimous against
their 30.58 % and 30.15 %). ``unit="pixel"`` counts every annotator's pixel once instead
(9.87 % and 51.54 %), weighing a unanimous boundary K times.

Pure functions (:func:`agreement_levels`, :func:`agreement_histogram`,
:func:`agreement_threshold`, :func:`strong_boundaries`, :func:`agreement_map`) beside
the engine family :data:`AGREEMENT` built on them (``segbench agreement``).

References
----------
X. Hou, A. Yuille, C. Koch, "Boundary Detection Benchmarking: Beyond F-Measures",
CVPR 2013.
"""

from __future__ import annotations

import base64
import binascii
import math
import numbers
import zlib
from dataclasses import dataclass
from io import BytesIO
from itertools import combinations

import numpy as np

from ..errors import InputError
from ..io import ensure_dir, write_if_changed
from ..primitives import DEFAULT_MAX_DIST, as_boundary_list, shared_matcher
from ..result import Result
from ..spec import Family

__all__ = [
    "AGREEMENT",
    "UNITS",
    "AgreementRecord",
    "agreement_histogram",
    "agreement_levels",
    "agreement_map",
    "agreement_threshold",
    "check_unit",
    "gray_agreement_map",
    "strong_boundaries",
    "unit_counts",
]

#: Record payload version (of :meth:`AgreementRecord.to_json`).
RECORD_VERSION = 1
#: Agreement figures of Hou, Yuille and Koch (2013): percentages of boundary labels
#: drawn by one annotator (orphan) and by all (unanimous).
PAPER = {
    "BSDS300": {"orphan": 29.40, "unanimous": 28.99},
    "BSDS500 test": {"orphan": 30.58, "unanimous": 30.15},
}
#: Counting units of the summary: ``"label"`` (a boundary drawn by l annotators is one
#: label: each of its pixels counts 1/l; Hou et al.'s unit, the default) or ``"pixel"``
#: (every annotator's boundary pixel counts once).
UNITS = ("label", "pixel")
#: Largest image a record accepts (pixels), as io's ``MAX_PIXELS``.
_MAX_PIXELS = 64_000_000


def _level_dtype(k: int):
    return np.uint8 if k <= np.iinfo(np.uint8).max else np.uint16


def _check_max_dist(max_dist) -> float:
    try:
        d = float(max_dist)
    except (TypeError, ValueError):
        raise InputError(f"max_dist must be a number, got {max_dist!r}") from None
    if not 0 < d < 1:
        raise InputError(
            f"max_dist is a fraction of the image diagonal in (0, 1), got {max_dist}"
        )
    return d


def check_unit(unit) -> str:
    """``unit`` if it is one of :data:`UNITS`, else InputError naming the value."""
    if not isinstance(unit, str) or unit not in UNITS:
        raise InputError(
            f"unit must be 'label' (Hou et al.'s count) or 'pixel', got {unit!r}"
        )
    return unit


def unit_counts(histogram, unit: str = "label") -> np.ndarray:
    """Counts of one image at agreement levels 1..K in ``unit``.

    Parameters
    ----------
    histogram : (K,) array
        Boundary pixels at levels 1..K pooled over the image's annotators
        (:func:`agreement_histogram`).
    unit : {"label", "pixel"}, default "label"
        ``"pixel"``: the histogram itself. ``"label"``: entry ``l - 1`` divided by
        ``l``, the number of labels of level ``l``.

    Returns
    -------
    (K,) float64

    Notes
    -----
    A boundary that ``l`` annotators drew is matched pixel to pixel between each two of
    them, so it appears as ``l`` pixels of level ``l`` (one per annotator) and is one
    label. Where the pairwise matchings are not transitive (``a`` matched to ``b`` and
    ``b`` to ``c`` but ``a`` not to ``c``) the pixels keep their own levels and each
    counts its ``1/level`` share.
    """
    h = np.asarray(histogram, np.float64)
    check_unit(unit)
    return h / np.arange(1, h.size + 1) if unit == "label" else h


def agreement_levels(boundaries, *, max_dist: float = DEFAULT_MAX_DIST) -> list:
    """Agreement level of every boundary pixel of every annotator of one image.

    Parameters
    ----------
    boundaries : sequence of K (H, W) arrays, or objects with ``.boundaries``
        One boundary map per annotator (nonzero = boundary), e.g. the list
        :func:`segbench.io.read_ground_truth` returns; used as stored (not thinned),
        as the benchmark does.
    max_dist : float, default 0.0075
        Matching tolerance as a fraction of the image diagonal (the benchmark's).

    Returns
    -------
    list of K (H, W) uint8 arrays
        ``levels[k][r, c]`` is 0 where annotator ``k`` drew no boundary, else the
        number of annotators (``k`` included) whose maps match that pixel: 1 (orphan)
        to K (unanimous). uint16 if K > 255.

    Raises
    ------
    InputError
        On an empty list, maps that are not 2-D or differ in shape, or a bad
        ``max_dist``.

    Notes
    -----
    Each unordered pair of annotators ``(k, j)`` is matched once with the benchmark's
    exact, deterministic one-to-one correspondence (:meth:`Matcher.match`); its matched
    masks add one to the level of the matched pixels on both sides. So for every pair
    as many pixels of ``k`` as of ``j`` are credited, and summing ``level - 1`` over all
    boundary pixels of all annotators gives twice the number of matched pairs. Being
    one-to-one, a pixel may stay unmatched although another annotator's boundary lies
    within the tolerance, when that boundary's pixels are all taken (two parallel lines
    of ``k`` near one line of ``j``: only one of them is credited). K(K-1)/2 matchings
    per image (36 for 9 annotators; about 25 ms on a BSDS500 image of 5 annotators).
    """
    humans = as_boundary_list(boundaries)
    max_dist = _check_max_dist(max_dist)
    k_ann = len(humans)
    dtype = _level_dtype(k_ann)
    levels = [h.astype(dtype) for h in humans]  # 1 on every boundary pixel
    if k_ann >= 2:
        matcher = shared_matcher(humans[0].shape, max_dist)
        for a, b in combinations(range(k_ann), 2):
            if not (humans[a].any() and humans[b].any()):
                continue
            ma, mb = matcher.match(humans[a], humans[b])
            levels[a] += ma
            levels[b] += mb
    return levels


def _as_levels(levels) -> list:
    maps = [np.asarray(m) for m in levels]
    if not maps:
        raise InputError("no agreement level maps given")
    for k, m in enumerate(maps):
        if m.ndim != 2:
            raise InputError(f"agreement level map {k} is not 2-D (shape {m.shape})")
        if m.shape != maps[0].shape:
            raise InputError(
                f"agreement level maps differ in shape: {maps[0].shape} and {m.shape}"
            )
        if not (np.issubdtype(m.dtype, np.integer) or m.dtype == np.bool_):
            raise InputError(f"agreement level map {k} is not integer ({m.dtype})")
        if m.size and (m.min() < 0 or m.max() > len(maps)):
            raise InputError(
                f"agreement level map {k} has levels outside 0..{len(maps)} "
                f"(K = {len(maps)} annotators)"
            )
    return maps


def _per_annotator(levels) -> np.ndarray:
    """(K, K) int64: row ``a``, column ``l - 1``: pixels of annotator ``a`` at level l."""
    maps = _as_levels(levels)
    k_ann = len(maps)
    return np.stack(
        [np.bincount(m.ravel(), minlength=k_ann + 1)[1 : k_ann + 1] for m in maps]
    ).astype(np.int64)


def agreement_histogram(levels) -> np.ndarray:
    """Boundary pixels at each agreement level, pooled over the annotators of an image.

    Parameters
    ----------
    levels : sequence of K (H, W) integer arrays
        As :func:`agreement_levels` returns.

    Returns
    -------
    (K,) int64
        Entry ``l - 1`` is the number of (annotator, pixel) pairs at agreement ``l``
        (1..K); the entries sum to the number of boundary pixels of all annotators.
    """
    return _per_annotator(levels).sum(axis=0)


def agreement_threshold(min_agreement, k: int) -> int:
    """The smallest agreement level kept by ``min_agreement`` on an image of K annotators.

    Parameters
    ----------
    min_agreement : int, float, or str
        - an integer ``n >= 1``: at least ``n`` annotators (including the one who drew
          the pixel). Above K, no pixel of that image qualifies (use a fraction or
          ``"all"`` to adapt to each image's K);
        - a float in (0, 1]: at least that fraction of the image's annotators,
          ``ceil(fraction * K)`` (so ``1.0`` means all of them, while the integer
          ``1`` keeps every boundary pixel); products within 1e-9 of an integer
          count as that integer, so ``2/3`` of 6 is 4;
        - ``"all"``: K (unanimous pixels only);
        - a string of one of these (``"3"``, ``"0.5"``, ``"all"``), as given on a
          command line.
    k : int
        Number of annotators of the image (>= 1).

    Returns
    -------
    int
        The threshold ``t >= 1``: pixels with agreement ``>= t`` are kept.

    Raises
    ------
    InputError
        On anything else (0, negative numbers, booleans, NaN, fractions above 1 given
        as floats, unknown strings) or a bad ``k``.
    """
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral) or k < 1:
        raise InputError(f"the number of annotators must be a positive integer, got {k!r}")
    k = int(k)
    value = min_agreement
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("all", "unanimous"):
            return k
        try:
            value = int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                raise InputError(
                    f"min_agreement must be a number of annotators (>= 1), "
                    f"a fraction in (0, 1] or 'all', got {min_agreement!r}"
                ) from None
    if isinstance(value, (bool, np.bool_)):
        raise InputError(
            f"min_agreement must be a number, a fraction or 'all', not the "
            f"boolean {min_agreement!r}"
        )
    if isinstance(value, numbers.Integral):
        if value < 1:
            raise InputError(
                f"min_agreement as a number of annotators must be >= 1, got "
                f"{min_agreement!r}"
            )
        return int(value)
    if isinstance(value, numbers.Real):
        f = float(value)
        if not (math.isfinite(f) and 0 < f <= 1):
            raise InputError(
                f"min_agreement as a fraction of the annotators must be in "
                f"(0, 1], got {min_agreement!r} (give an integer for a "
                f"number of annotators)"
            )
        return max(1, math.ceil(f * k - 1e-9))
    raise InputError(
        f"min_agreement must be a number of annotators (>= 1), a fraction "
        f"in (0, 1] or 'all', got {min_agreement!r}"
    )


def strong_boundaries(boundaries, levels, min_agreement) -> list:
    """Each annotator's boundary map reduced to the pixels enough annotators agree on.

    Parameters
    ----------
    boundaries : sequence of K (H, W) arrays, or objects with ``.boundaries``
        The annotators' boundary maps, as given to :func:`agreement_levels`.
    levels : sequence of K (H, W) integer arrays
        Their agreement levels (:func:`agreement_levels` of ``boundaries``).
    min_agreement : int, float or str
        Smallest agreement kept: an integer number of annotators, a fraction of K in
        (0, 1], or ``"all"`` (see :func:`agreement_threshold`).

    Returns
    -------
    list of K (H, W) bool arrays
        ``boundaries[k] & (levels[k] >= t)`` with ``t`` = ``agreement_threshold(
        min_agreement, K)``; an annotator may be left with no pixel.

    Raises
    ------
    InputError
        On a bad ``min_agreement``, or ``levels`` that do not belong to ``boundaries``
        (another count, shape, or a nonzero level off the boundary and vice versa).

    Notes
    -----
    The strong-boundary benchmark of Hou et al. (2013) scores detectors against these
    maps with the usual protocol.
    """
    humans = as_boundary_list(boundaries)
    maps = _as_levels(levels)
    if len(maps) != len(humans):
        raise InputError(f"{len(maps)} agreement level maps for {len(humans)} annotators")
    if maps[0].shape != humans[0].shape:
        raise InputError(
            f"agreement level maps have shape {maps[0].shape} but the "
            f"boundary maps {humans[0].shape}"
        )
    t = agreement_threshold(min_agreement, len(humans))
    out = []
    for k, (h, m) in enumerate(zip(humans, maps)):
        if not np.array_equal(m > 0, h):
            raise InputError(
                f"agreement levels of annotator {k} do not match its "
                "boundary map (levels are nonzero exactly on its boundary)"
            )
        out.append(m >= t)
    return out


def agreement_map(levels) -> np.ndarray:
    """Highest agreement level of any annotator at each pixel, (H, W); 0: no boundary.

    Parameters
    ----------
    levels : sequence of K (H, W) integer arrays, as :func:`agreement_levels` returns.
    """
    maps = _as_levels(levels)
    return np.maximum.reduce([np.asarray(m, _level_dtype(len(maps))) for m in maps])


def gray_agreement_map(level_map, k: int) -> np.ndarray:
    """An agreement map as an 8-bit gray picture: ``round(255 * level / K)``.

    0 (black) where no annotator drew a boundary, 255 (white) where the pixel is
    unanimous, ``round(255 / K)`` for an orphan. The level is recovered exactly as
    ``round(gray * K / 255)`` (levels are at least 255/K >= 28 gray values apart for
    K <= 9, and distinct for any K <= 255).
    """
    m = np.asarray(level_map)
    if k < 1 or (m.size and (m.min() < 0 or m.max() > k)):
        raise InputError(f"agreement levels outside 0..{k}")
    return np.rint(m.astype(np.float64) * (255.0 / k)).astype(np.uint8)


# --- the engine family --------------------------------------------------------------


@dataclass(frozen=True)
class AgreementRecord:
    """Per-image record of :data:`AGREEMENT`.

    Attributes
    ----------
    per_annotator : (K, K) int64
        Row ``a``, column ``l - 1``: boundary pixels of annotator ``a`` (in file order)
        at agreement level ``l``.
    shape : (int, int)
        Image shape (H, W).
    map_z : bytes
        :func:`agreement_map` of the image (row-major, uint8, uint16 little-endian if
        K > 255), zlib-compressed: about 5 KB for a BSDS500 image, so that the maps can
        be drawn from the records without reading the ground truth again.
    """

    per_annotator: np.ndarray
    shape: tuple
    map_z: bytes

    @classmethod
    def from_levels(cls, levels) -> AgreementRecord:
        """The record of one image from its :func:`agreement_levels`."""
        per = _per_annotator(levels)
        amap = agreement_map(levels)
        data = amap.astype(amap.dtype.newbyteorder("<"), copy=False).tobytes()
        return cls(per, tuple(int(n) for n in amap.shape), zlib.compress(data, 6))

    @property
    def k(self) -> int:
        """Number of annotators."""
        return int(self.per_annotator.shape[0])

    @property
    def histogram(self) -> np.ndarray:
        """(K,) pixels at levels 1..K pooled over annotators (:func:`agreement_histogram`)."""
        return self.per_annotator.sum(axis=0)

    @property
    def n_pixels(self) -> int:
        """Boundary pixels of all annotators together."""
        return int(self.per_annotator.sum())

    def level_map(self) -> np.ndarray:
        """:func:`agreement_map` of the image, decoded from ``map_z``."""
        return _decode_map(self.map_z, self.shape, self.k)

    def to_json(self) -> dict:
        """Plain-JSON form (the map as base64 text); :meth:`from_json` restores it."""
        return {
            "version": RECORD_VERSION,
            "k": self.k,
            "shape": list(self.shape),
            "per_annotator": self.per_annotator.tolist(),
            "map": {
                "encoding": "zlib+base64",
                "dtype": np.dtype(_level_dtype(self.k)).newbyteorder("<").str,
                "data": base64.b64encode(self.map_z).decode("ascii"),
            },
        }

    @classmethod
    def from_json(cls, d) -> AgreementRecord:
        """Inverse of :meth:`to_json`; ValueError (or KeyError, TypeError) on a payload
        that is not a valid record, so the store recomputes it."""
        if not isinstance(d, dict) or d.get("version") != RECORD_VERSION:
            raise ValueError(f"not an agreement record of version {RECORD_VERSION}")
        per = np.asarray(d["per_annotator"])
        k = d["k"]
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError("k must be a positive integer")
        if (
            per.shape != (k, k)
            or not (np.issubdtype(per.dtype, np.integer) or per.size == 0)
            or (per < 0).any()
        ):
            raise ValueError("per_annotator must be a K x K table of non-negative integers")
        shape = d["shape"]
        if not (
            isinstance(shape, list)
            and len(shape) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in shape)
            and shape[0] * shape[1] <= _MAX_PIXELS
        ):
            raise ValueError("shape must be two positive integers")
        m = d["map"]
        if (
            not isinstance(m, dict)
            or m.get("encoding") != "zlib+base64"
            or m.get("dtype") != np.dtype(_level_dtype(k)).newbyteorder("<").str
        ):
            raise ValueError("unknown agreement map encoding")
        try:
            raw = base64.b64decode(m["data"].encode("ascii"), validate=True)
        except (AttributeError, UnicodeEncodeError, binascii.Error):
            raise ValueError("the agreement map is not base64 text") from None
        per = per.astype(np.int64)
        rec = cls(per, (shape[0], shape[1]), raw)
        amap = rec.level_map()
        top = int(np.flatnonzero(per.sum(axis=0))[-1]) + 1 if per.any() else 0
        n_union = int(np.count_nonzero(amap))
        if (
            int(amap.max(initial=0)) != top
            or n_union > per.sum()
            or n_union < per.sum(axis=1).max(initial=0)
        ):
            raise ValueError("the agreement map does not fit the level counts")
        return rec


def _decode_map(map_z: bytes, shape, k: int) -> np.ndarray:
    dtype = np.dtype(_level_dtype(k)).newbyteorder("<")
    n_bytes = shape[0] * shape[1] * dtype.itemsize
    dec = zlib.decompressobj()
    try:
        data = dec.decompress(map_z, n_bytes + 1)  # bounded: no decompression bomb
    except zlib.error as exc:
        raise ValueError(f"the agreement map does not decompress: {exc}") from None
    if len(data) != n_bytes or not dec.eof:
        raise ValueError(f"the agreement map is not {shape[0]}x{shape[1]} pixels")
    amap = np.frombuffer(data, dtype).reshape(shape).astype(_level_dtype(k))
    if amap.max(initial=0) > k:
        raise ValueError(f"the agreement map has levels above K = {k}")
    return amap


def _check(params: dict) -> None:
    _check_max_dist(params["max_dist"])


def _evaluate(sample, params: dict) -> AgreementRecord:
    return AgreementRecord.from_levels(
        agreement_levels(sample.ground_truth(), max_dist=params["max_dist"])
    )


def _fraction(num, den) -> float:
    return float(num) / float(den) if den else float("nan")


def _summarize(ids, records, params, options) -> Result:
    """Pooled and per-image agreement in ``params['unit']``; see :data:`AGREEMENT`."""
    unit = check_unit(params.get("unit", "label"))
    k_max = max((r.k for r in records), default=1)
    if records and k_max < 2:  # an error, as a --min-agreement run that leaves no image
        raise InputError(
            f"none of the {len(records)} images has two or more annotators, so there "
            "is no agreement to measure (ground truth of one annotator an image: edge "
            "maps of a detector, a single-annotator dataset?)"
        )
    pixels = np.zeros(k_max, np.int64)  # scored images, pooled by level
    counts = np.zeros(k_max, np.float64)  # the same in ``unit``
    by_k: dict[int, np.ndarray] = {}
    # pooled [level 1, level K, all] in each unit; weighted: sum of level / K
    pooled = {u: np.zeros(3) for u in UNITS}
    weighted = 0.0
    per_item, img_orphan, img_unan = [], [], []
    for iid, r in zip(ids, records):
        h = r.histogram
        c = unit_counts(h, unit)
        n = float(c.sum())
        levels = np.arange(1, r.k + 1)
        scored = r.k >= 2
        nan = float("nan")
        row = {
            "id": iid,
            "annotators": r.k,
            "boundary_pixels": int(h.sum()),
            "labels": float(unit_counts(h).sum()),
            "orphan_fraction": _fraction(c[0], n) if scored else nan,
            "unanimous_fraction": _fraction(c[-1], n) if scored else nan,
            "mean_agreement": _fraction((c * levels).sum() / r.k, n) if scored else nan,
        }
        for lv in range(1, k_max + 1):
            row[f"level_{lv}"] = _fraction(c[lv - 1], n) if scored and lv <= r.k else nan
        per_item.append(row)
        if not scored:
            continue
        pixels[: r.k] += h
        counts[: r.k] += c
        by_k.setdefault(r.k, np.zeros(r.k, np.int64))
        by_k[r.k] += h
        for u in UNITS:
            cu = unit_counts(h, u)
            pooled[u] += (cu[0], cu[-1], cu.sum())
        weighted += float((c * levels).sum()) / r.k
        if n:
            img_orphan.append(float(c[0] / n))
            img_unan.append(float(c[-1] / n))
    total = float(counts.sum())
    ks = [r.k for r in records]
    metrics = {
        "orphan_fraction": _fraction(pooled[unit][0], pooled[unit][2]),
        "unanimous_fraction": _fraction(pooled[unit][1], pooled[unit][2]),
        "orphan_fraction_image_mean": float(np.mean(img_orphan))
        if img_orphan
        else float("nan"),
        "unanimous_fraction_image_mean": float(np.mean(img_unan))
        if img_unan
        else float("nan"),
        "mean_agreement": _fraction(weighted, total),
        **{f"level_{lv}": _fraction(counts[lv - 1], total) for lv in range(1, k_max + 1)},
        **{
            f"{what}_{u}_fraction": _fraction(pooled[u][i], pooled[u][2])
            for u in UNITS
            for i, what in enumerate(("orphan", "unanimous"))
        },
        "n_boundary_pixels": int(pixels.sum()),
        "n_labels": float(pooled["label"][2]),
        "n_images": len(ids),
        "n_images_scored": sum(k >= 2 for k in ks),
        "n_annotators_min": min(ks, default=0),
        "n_annotators_max": max(ks, default=0),
        "max_dist": params["max_dist"],
    }
    labels = sum(
        (np.pad(unit_counts(v), (0, k_max - k)) for k, v in by_k.items()), np.zeros(k_max)
    )
    curves = {
        "level": list(range(1, k_max + 1)),
        "pixels": pixels.tolist(),
        "labels": labels.tolist(),
        "fraction": [_fraction(p, total) for p in counts],
        "pixels_by_annotators": {str(k): v.tolist() for k, v in sorted(by_k.items())},
    }
    return Result(
        "agreement",
        metrics,
        per_item,
        curves,
        detail={
            "by_k": dict(sorted(by_k.items())),
            "unit": unit,
            "image_orphan": img_orphan,
            "image_unanimous": img_unan,
        },
    )


def _png(gray: np.ndarray) -> bytes:
    from PIL import Image

    buf = BytesIO()
    Image.fromarray(np.ascontiguousarray(gray), mode="L").save(
        buf, format="PNG", optimize=False
    )
    return buf.getvalue()


def plot_agreement(result: Result, *, dpi: int = 150) -> bytes:
    """PNG bytes of the agreement distribution of an ``agreement`` Result.

    Left: fraction of all pooled boundary labels (or pixels: the result's ``unit``) at
    each agreement level, stacked by the images' number of annotators K (so the
    unanimous bar of each K is visible).
    Right: per-image orphan and unanimous fractions over the images. Drawn on
    matplotlib's Agg canvas (no display, no pyplot state).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    m, c = result.metrics, result.curves
    detail = result.detail or {}
    assert isinstance(detail, dict)  # as _summarize made it, or none
    by_k = detail.get("by_k") or {
        int(k): np.asarray(v) for k, v in c.get("pixels_by_annotators", {}).items()
    }
    unit = detail.get("unit") or (result.provenance or {}).get("params", {}).get(
        "unit", "label"
    )
    by_k = {k: unit_counts(h, unit) for k, h in by_k.items()}
    total = sum(float(h.sum()) for h in by_k.values()) or 1.0
    fig = Figure(figsize=(10.0, 4.2))
    FigureCanvasAgg(fig)
    ax, bx = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    for a in (ax, bx):
        a.grid(True, axis="y", color="0.92", lw=0.6, zorder=-1)
        for side in ("top", "right"):
            a.spines[side].set_visible(False)
    bottom = np.zeros(len(c.get("level", [])))
    for i, (k, h) in enumerate(sorted(by_k.items())):
        frac = np.zeros_like(bottom)
        frac[:k] = h / total
        ax.bar(
            np.arange(1, len(frac) + 1),
            frac,
            bottom=bottom,
            color=f"C{i % 10}",
            width=0.8,
            zorder=2,
            label=f"K = {k}",
        )
        bottom += frac
    ax.set_xticks(np.arange(1, len(bottom) + 1))
    ax.set_xlabel("agreement level (annotators who drew the pixel)")
    ax.set_ylabel(f"fraction of boundary {unit}s")

    def pct(v):
        return "n/a" if v is None or not math.isfinite(v) else f"{100 * v:.2f}%"

    ax.set_title(
        f"orphan {pct(m.get('orphan_fraction'))}, unanimous "
        f"{pct(m.get('unanimous_fraction'))}",
        fontsize=10,
    )
    if by_k:
        ax.legend(fontsize=8, frameon=False)
    bins = np.linspace(0, 1, 21)
    for key, colour, label in (
        ("image_orphan", "C3", "orphan (level 1)"),
        ("image_unanimous", "C0", "unanimous (level K)"),
    ):
        vals = np.asarray(detail.get(key, []), float)
        if vals.size:
            bx.hist(
                vals,
                bins=bins,  # type: ignore[arg-type]  # stubs want a Sequence; arrays work
                histtype="step",
                lw=1.6,
                color=colour,
                label=label,
                zorder=2,
            )
    bx.set_xlim(0, 1)
    bx.set_xlabel(f"fraction of the image's boundary {unit}s")
    bx.set_ylabel("images")
    bx.yaxis.set_major_locator(MaxNLocator(integer=True))
    bx.set_title(f"per image ({m.get('n_images_scored', 0)} images)", fontsize=10)
    if detail.get("image_orphan"):
        bx.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    buf = BytesIO()
    fig.savefig(buf, dpi=dpi, format="png")
    return buf.getvalue()


def _write(out, result: Result, ids, records, options) -> None:
    """``agreement.png`` (unless ``options['plot']`` is False) and ``agreement/<iid>.png``
    (unless ``options['maps']`` is False): :func:`gray_agreement_map` of each image,
    drawn from its record."""
    options = options or {}
    if options.get("plot", True):
        write_if_changed(out / "agreement.png", plot_agreement(result))
    if options.get("maps", True):
        folder = ensure_dir(out / "agreement")
        for iid, r in zip(ids, records):
            write_if_changed(
                folder / f"{iid}.png", _png(gray_agreement_map(r.level_map(), r.k))
            )


#: Annotator agreement as an engine family (``segbench agreement``).
#:
#: Record: :class:`AgreementRecord` (per-annotator level counts and the compressed
#: agreement map). Summary (``Result('agreement')``), in the summary parameter ``unit``
#: (``"label"``, the default, Hou et al.'s count: labels at level l = pixels at level l
#: / l; or ``"pixel"``; changing it recomputes no record): counts are pooled over the
#: images with at least two annotators; ``orphan_fraction`` = level 1 / all,
#: ``unanimous_fraction`` = level K *of their image* / all, so images with different K
#: pool by meaning (``level_<l>`` pools by absolute level); ``*_image_mean`` average the
#: per-image fractions instead; ``mean_agreement`` is the mean of level / K;
#: ``orphan_label_fraction``, ``orphan_pixel_fraction`` (and unanimous) give both units
#: whatever ``unit``. Per-item rows (``id``): K, boundary pixels, labels, the same
#: fractions (NaN for an image with one annotator, whose pixels are not pooled).
AGREEMENT = Family(
    name="agreement",
    version=1,
    defaults={"max_dist": DEFAULT_MAX_DIST},
    evaluate=_evaluate,
    to_json=AgreementRecord.to_json,
    from_json=AgreementRecord.from_json,
    summarize=_summarize,
    write=_write,
    check=_check,
    label="agreement",
    summary_defaults={"unit": "label"},
    per_image_files=("agreement/.png",),
)
