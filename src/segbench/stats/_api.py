"""The public statistics over an iterable of (image, segmentation) items."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

import numpy as np

from ..errors import InputError
from ..resampling import check_resamples
from ._family import STATS
from ._measure import (
    CUES,
    Item,
    SegmentationRecord,
    check_segmentation,
    max_scaled_distance,
)
from ._pooled import EcologicalStatistics, count_segments, summarize
from ._regions import region_shapes
from ._summary import (
    Curve,
    Histogram,
    PowerLaw,
    convexity_histogram,
    fit_power_law,
    proximity_curve,
    similarity_curve,
)


def _as_items(items: Iterable) -> list[Item]:
    out = []
    keys: list[str] = []
    for k, it in enumerate(items):
        if isinstance(it, Item):
            item = it
        elif isinstance(it, (tuple, list)) and len(it) == 2:
            item = Item(it[0], it[1])
        else:
            raise InputError(
                f"item {k}: expected a segbench.stats.Item or an (image, "
                f"segmentation) pair, got {type(it).__name__}"
            )
        key = item.id if item.id is not None else str(k)
        seg = check_segmentation(item.segmentation, key)
        out.append(Item(item.image, seg, key, item.image_id, item.gray))
        keys.append(key)
    if len(set(keys)) != len(keys):
        dup = sorted({k for k in keys if keys.count(k) > 1})[:3]
        raise InputError(
            f"item ids must be unique (they seed the samples); repeated: {', '.join(dup)}"
        )
    return out


NORMALIZE = ("dataset", "image")


def _scale(items: list[Item], normalize: str, given: float | None) -> float | None:
    """The proximity normaliser: given, the dataset's largest, or None (per image)."""
    if given is not None:
        if not given > 0:
            raise InputError(f"max_scaled_distance must be positive, got {given}")
        return float(given)
    if normalize not in NORMALIZE:
        raise InputError(
            f"normalize must be one of {', '.join(NORMALIZE)}, got {normalize!r}"
        )
    if normalize == "image":
        return None
    return max((max_scaled_distance_of(it.segmentation) for it in items), default=1.0)


def _records(
    items: list[Item],
    *,
    samples: int,
    seed: int,
    bins: int,
    scale: float | None,
    cues: bool,
) -> list[SegmentationRecord]:
    """Each item measured by the STATS family's own evaluation (a folder run's code):
    the items of one image (the same array and image id) are one in-memory dataset
    item, so its cues are filtered once; each segmentation keeps its item's id as its
    key (which seeds its pixel sample)."""
    from ..datasets import Annotation, DatasetItem, memory_sample

    groups: dict = {}
    for it in items:
        assert it.id is not None  # _as_items gives every item its id
        image_id = (
            it.image_id
            if it.image_id is not None
            else (it.id.rsplit("/", 1)[0] if "/" in it.id else it.id)
        )
        image = it.image if cues else None
        groups.setdefault((image_id, id(image)), (image, []))[1].append(
            Annotation(it.segmentation, gray=it.gray, key=it.id)
        )
    params = {"samples": samples, "seed": seed, "scale": scale, "proximity_bins": bins}
    recs = []
    for (image_id, _), (image, anns) in groups.items():
        item = DatasetItem(
            str(image_id),
            "memory",
            image_loader=None if image is None else partial(_given, image),
            annotation_loader=partial(_given, tuple(anns)),
        )
        recs.extend(STATS.evaluate(memory_sample(item), params))
    return recs


def _given(value):
    return value


def proximity(
    items: Iterable,
    *,
    samples: int = 1000,
    seed: int = 0,
    bins: int = 20,
    normalize: str = "dataset",
    max_scaled_distance: float | None = None,
    min_pairs: int = 20,
) -> Curve:
    """Probability that two pixels share a segment, against their normalised distance.

    Parameters
    ----------
    items : iterable of :class:`Item` or (image, segmentation) pairs
        The image is not used and may be None.
    samples : int, default 1000
        Pixels drawn per segmentation without replacement (seeded by ``seed`` and the
        item's id); every pair among them is scored.
    seed : int, default 0
    bins : int, default 20
        Equal bins of the normalised distance over [0, 1].
    normalize : {'dataset', 'image'}
        'dataset' (the paper's procedure, see Notes) or 'image': each distance over
        its own image's diagonal (the segment-count scaling then cancels).
    max_scaled_distance : float, optional
        A fixed normaliser instead of the dataset's (see Notes).
    min_pairs : int, default 20
        A segmentation enters a bin's mean and standard deviation only with at least
        this many pairs in the bin.

    Returns
    -------
    Curve
        ``mean`` +- ``std`` over segmentations, and the ``pooled`` fraction.

    Notes
    -----
    A pair at pixel distance d (between pixel centres) in a segmentation with n segments
    of an image of A pixels gets the scaled distance d * sqrt(n / A), as in Martin et al.
    (2001), Fig. 10: distances measured in units of a typical segment's size. The
    scaled distance is then divided by the largest one possible in the dataset,
    diag * sqrt(n / A) maximised over the segmentations (diag: the distance between
    opposite corner pixels), which maps the data onto [0, 1]. A per-segmentation
    normaliser would cancel the scaling, so it is global; pass ``max_scaled_distance``
    to compare datasets on one axis. Segmentations with few segments only reach small
    normalised distances, so the right end of the curve rests on the most finely
    segmented images.

    Examples
    --------
    >>> import numpy as np
    >>> seg = np.array([[0] * 8 + [1] * 8])     # one row, two halves: all 120 pairs
    >>> c = proximity([(None, seg)], bins=3, normalize="image")
    >>> c.pairs.tolist(), [round(float(v), 4) for v in c.pooled]  # 44/54, 12/45, 0/21
    ([54, 45, 21], [0.8148, 0.2667, 0.0])
    """
    its = _as_items(items)
    recs = _records(
        its,
        samples=samples,
        seed=seed,
        bins=bins,
        scale=_scale(its, normalize, max_scaled_distance),
        cues=False,
    )
    norm = "image" if normalize == "image" and max_scaled_distance is None else "dataset"
    return proximity_curve(recs, min_pairs=min_pairs, normalize=norm)


def similarity(
    items: Iterable,
    *,
    cue: str = "gray",
    samples: int = 1000,
    seed: int = 0,
    bins: int = 32,
    min_pairs: int = 20,
) -> Curve:
    """Probability that two pixels share a segment, against their difference in a cue.

    Parameters
    ----------
    items : iterable of :class:`Item` or (image, segmentation) pairs
        Images are (H, W, 3) uint8 RGB (or (H, W) grey); items without one are skipped.
    cue : {'gray', 'color', 'texture'}
        'gray': absolute difference of 8-bit grey levels, round(0.299 R + 0.587 G +
        0.114 B), over [0, 256) -- the paper's Fig. 11. 'color': CIELAB (D65) Euclidean
        distance (CIE76 ΔE*ab) over [0, 256). 'texture': distance between local
        filter-bank energy vectors (:func:`texture_features`) over [0, 64).
    samples, seed
        As :func:`proximity`; with the same seed and ids the same pixels are drawn, so
        proximity and similarity describe the same pairs.
    bins : int, default 32
        Equal bins over the cue's range; must divide 256.
    min_pairs : int, default 20

    Examples
    --------
    >>> import numpy as np
    >>> img = np.kron(np.indices((2, 2)).sum(0) % 2, np.ones((8, 8), int)) * 200
    >>> seg = np.zeros((16, 16), int); seg[:, 8:] = 1
    >>> c = similarity([(img.astype(np.uint8), seg)], bins=32)
    >>> round(float(c.pooled[0]), 4), float(c.pooled[25])   # 8064/16256, 8192/16384
    (0.4961, 0.5)
    """
    if cue not in CUES:
        raise InputError(f"unknown cue {cue!r}; expected one of {', '.join(CUES)}")
    its = _as_items(items)
    recs = _records(its, samples=samples, seed=seed, bins=1, scale=None, cues=True)
    return similarity_curve(recs, cue, bins=bins, min_pairs=min_pairs)


def convexity(items: Iterable, *, bins: int = 20) -> Histogram:
    """Histogram of region convexity: area over the area of the region's convex hull.

    Every distinct label of every segmentation is one region (disconnected ones too).
    The hull is that of the region's pixels taken as unit squares, so any digital
    rectangle scores exactly 1 and every region scores in (0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> seg = np.kron(np.arange(4).reshape(2, 2), np.ones((5, 5), int))
    >>> h = convexity([(None, seg)], bins=10)
    >>> int(h.counts[-1]), h.median
    (4, 1.0)
    """
    its = _as_items(items)
    vals = [region_shapes(it.segmentation)[1] for it in its]
    return convexity_histogram(np.concatenate(vals) if vals else np.zeros(0), bins)


def region_area(
    items: Iterable,
    *,
    bins_per_decade: int = 5,
    max_fraction: float = 0.25,
    min_area: float = 1000.0,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PowerLaw:
    """Histogram of region areas on log bins and the fit density = A / area^alpha.

    Parameters
    ----------
    items : iterable of :class:`Item` or (image, segmentation) pairs
    bins_per_decade : int, default 5
    max_fraction : float, default 0.25
        Bins reaching above this fraction of the image area are not fitted (the paper
        discarded the sparse bins of regions larger than 25% of the image).
    min_area : float, default 1000
        Bins starting below this area (pixels) are not fitted. The default is the
        lower end of the paper's fit, which spans about 10^3 pixels to the 25% cutoff;
        below it the BSDS500 histogram bends (stray one-pixel regions, a shallower
        stretch over 10-100 pixels), so a fit from 1 pixel gives a smaller exponent.
    n_boot : int, default 1000
        Bootstrap resamples over images for the interval of alpha: 0 (no interval) or
        at least 2.
    confidence : float, default 0.95
    seed : int, default 0

    Notes
    -----
    The fitted quantity is the density: regions per bin over the number of integer
    areas in the bin and the number of regions, so that equal-width bins (as a linear
    histogram) and log bins give the same exponent. Counts per log bin fall as
    area^(1 - alpha); that slope is reported as ``alpha_log_bins`` (= alpha - 1 for a
    pure power law). Items are grouped into images by :attr:`Item.image_id`.

    Examples
    --------
    >>> import numpy as np
    >>> seg = np.kron(np.arange(16).reshape(4, 4), np.ones((4, 4), int))
    >>> fit = region_area([(None, seg)], n_boot=0)
    >>> int(fit.counts.sum()), int(fit.counts[np.searchsorted(fit.edges, 16) - 1])
    (16, 16)
    """
    check_resamples(n_boot, "n_boot", zero=True)  # before the regions are measured
    its = _as_items(items)
    if not its:
        raise InputError("no segmentations given")
    by_image: dict[str, list] = {}
    for it in its:
        assert it.id is not None  # _as_items gives every item its id
        iid = it.image_id or (it.id.rsplit("/", 1)[0] if "/" in it.id else it.id)
        by_image.setdefault(iid, []).append(region_shapes(it.segmentation)[0])
    per_image = [np.concatenate(v) for _, v in sorted(by_image.items())]
    image_area = float(np.median([it.segmentation.size for it in its]))
    return fit_power_law(
        per_image,
        image_area,
        bins_per_decade=bins_per_decade,
        max_fraction=max_fraction,
        min_area=min_area,
        n_boot=n_boot,
        confidence=confidence,
        seed=seed,
    )


def ecological_statistics(
    items: Iterable,
    *,
    samples: int = 1000,
    seed: int = 0,
    proximity_bins: int = 20,
    normalize: str = "dataset",
    max_scaled_distance: float | None = None,
    **summary_options,
) -> EcologicalStatistics:
    """Every statistic in one pass over in-memory items (one pixel sample per item).

    ``summary_options`` go to :func:`summarize`. For folders of BSDS files, with worker
    processes and figures, use :func:`run_stats`.
    """
    if "n_boot" in summary_options:  # refused before the pixels are sampled
        check_resamples(summary_options["n_boot"], "n_boot", zero=True)
    its = _as_items(items)
    if not its:
        raise InputError("no segmentations given")
    scale = _scale(its, normalize, max_scaled_distance)
    recs = _records(
        its, samples=samples, seed=seed, bins=proximity_bins, scale=scale, cues=True
    )
    return summarize(
        recs,
        seed=seed,
        params=dict(
            samples=samples,
            seed=seed,
            proximity_bins=proximity_bins,
            normalize=normalize,
            max_scaled_distance=scale,
        ),
        **summary_options,
    )


def max_scaled_distance_of(segmentation: np.ndarray) -> float:
    """diag * sqrt(segments / area) of one segmentation (the proximity normaliser)."""
    seg = np.asarray(segmentation)
    return max_scaled_distance(seg.shape, count_segments(seg))
