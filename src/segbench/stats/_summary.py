"""From per-segmentation records to curves, histograms and the power-law fit."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields

import numpy as np
from scipy.special import gammaln

from ..errors import InputError
from ..resampling import check_resamples
from ._measure import (
    COLOR_CAP,
    CUES,
    GRAY_LEVELS,
    N_TEXTURE_BINS,
    TEXTURE_CAP,
    SegmentationRecord,
)

#: Full range of each cue's recorded bins (their edges are range * k / 256).
CUE_RANGE = {
    "gray": float(GRAY_LEVELS),
    "color": float(COLOR_CAP),
    "texture": float(TEXTURE_CAP),
}
CUE_LABEL = {
    "gray": "absolute grey-level difference (0-255)",
    "color": "CIELAB difference ΔE*ab (CIE 1976)",
    "texture": "texture difference (filter-bank energy, grey levels)",
}
_FINE = {"gray": GRAY_LEVELS, "color": COLOR_CAP, "texture": N_TEXTURE_BINS}


def _as_dict(obj, *derived: str) -> dict:
    """Every field of a dataclass, plus the named properties, for ``to_dict``."""
    out = {f.name: getattr(obj, f.name) for f in fields(obj)}
    out.update((name, getattr(obj, name)) for name in derived)
    return out


@dataclass(frozen=True, eq=False)
class Curve:
    """Probability that two pixels share a segment, per bin of a pair quantity.

    Attributes
    ----------
    name, x_label : str
    edges : (B+1,) float
        Bin edges; ``x`` the bin centres.
    mean, std : (B,) float
        Mean and standard deviation over segmentations of each segmentation's own
        same-segment fraction in the bin, taken over the segmentations with at least
        ``min_pairs`` pairs there; NaN where none has.
    pooled : (B,) float
        All same-segment pairs in the bin over all pairs in it (NaN if none).
    pairs : (B,) int
        Pairs in the bin, summed over segmentations.
    segmentations : (B,) int
        Segmentations that entered ``mean`` and ``std``.
    min_pairs : int
    n_items : int
        Segmentations counted (for similarity: those whose image was available).
    """

    name: str
    x_label: str
    edges: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    pooled: np.ndarray
    pairs: np.ndarray
    segmentations: np.ndarray
    min_pairs: int
    n_items: int = 0

    @property
    def x(self) -> np.ndarray:
        return (self.edges[:-1] + self.edges[1:]) / 2

    def ends(self, min_segmentations: int = 20) -> tuple[float, float]:
        """``mean`` at the first and the last bin resting on at least
        ``min_segmentations`` segmentations (fewer if the curve has fewer in all)."""
        need = min(int(min_segmentations), int(self.segmentations.max(initial=0)))
        ok = np.flatnonzero(np.isfinite(self.mean) & (self.segmentations >= max(need, 1)))
        if ok.size == 0:
            return float("nan"), float("nan")
        return float(self.mean[ok[0]]), float(self.mean[ok[-1]])

    def to_dict(self) -> dict:
        return _as_dict(self, "x")


@dataclass(frozen=True, eq=False)
class Histogram:
    """Histogram of per-region values (convexity)."""

    name: str
    x_label: str
    edges: np.ndarray
    counts: np.ndarray
    n_regions: int
    median: float
    mean: float

    @property
    def fraction(self) -> np.ndarray:
        return self.counts / self.n_regions if self.n_regions else self.counts * np.nan

    def to_dict(self) -> dict:
        return _as_dict(self, "fraction")


@dataclass(frozen=True, eq=False)
class PowerLaw:
    """Region-area histogram on logarithmic bins and the fit density = A / area^alpha.

    Attributes
    ----------
    alpha : float
        Exponent of the fitted power law (least squares of log10 density on log10 area
        over the bins in ``fitted``).
    alpha_ci : (float, float)
        Percentile bootstrap interval (``confidence``) from resampling images with
        replacement ``n_boot`` times and refitting.
    amplitude : float
        A, with density in regions per unit area per region (sums to 1 over areas).
    edges : (B+1,) float
        Bin edges in pixels; ``area`` the representative area of each bin (geometric
        mean of the integer areas it holds).
    counts : (B,) int
        Regions per bin.
    density : (B,) float
        counts / (regions * integer areas in the bin): the empirical probability of one
        area value. NaN for bins holding no integer.
    fitted : (B,) bool
        Bins used in the fit: nonempty, lower edge >= ``min_area``, upper edge <=
        ``max_fraction`` of the image area.
    cutoff : float
        ``max_fraction`` times the (median) image area, in pixels.
    """

    alpha: float
    alpha_ci: tuple[float, float]
    amplitude: float
    edges: np.ndarray
    area: np.ndarray
    counts: np.ndarray
    density: np.ndarray
    fitted: np.ndarray
    cutoff: float
    min_area: float
    max_fraction: float
    n_regions: int
    n_images: int
    n_boot: int
    confidence: float
    alpha_log_bins: float = float("nan")

    def to_dict(self) -> dict:
        return {**_as_dict(self), "alpha_ci": list(self.alpha_ci)}


@dataclass(frozen=True, eq=False)
class GroupStatistics:
    """Every statistic over one group of segmentations ('all', 'gray' or 'color')."""

    name: str
    n_segmentations: int
    n_images: int
    proximity: Curve
    similarity: dict = field(default_factory=dict)  # cue -> Curve
    convexity: Histogram | None = None
    area: PowerLaw | None = None

    def metrics(self) -> dict:
        """Headline numbers of this group."""
        p0, p1 = self.proximity.ends()
        m = {
            "n_segmentations": self.n_segmentations,
            "n_images": self.n_images,
            "proximity_first": p0,
            "proximity_last": p1,
            "proximity_plateau": plateau(self.proximity),
        }
        for cue, c in self.similarity.items():
            a, b = c.ends()
            m[f"similarity_{cue}_first"] = a
            m[f"similarity_{cue}_last"] = b
        if self.convexity is not None:
            m["convexity_median"] = self.convexity.median
            m["convexity_mean"] = self.convexity.mean
        if self.area is not None:
            m["alpha"] = self.area.alpha
            m["alpha_ci_low"], m["alpha_ci_high"] = self.area.alpha_ci
            m["alpha_log_bins"] = self.area.alpha_log_bins
        return m

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "metrics": self.metrics(),
            "proximity": self.proximity.to_dict(),
            "similarity": {k: v.to_dict() for k, v in self.similarity.items()},
            "convexity": None if self.convexity is None else self.convexity.to_dict(),
            "region_area": None if self.area is None else self.area.to_dict(),
        }


def plateau(curve: Curve, start: float = 0.5) -> float:
    """Pair-weighted mean of ``curve.mean`` over the bins with centre >= ``start``.

    For the proximity curve (x in [0, 1]) this is the level it flattens out at.
    """
    sel = (curve.x >= start) & np.isfinite(curve.mean)
    if not sel.any():
        return float("nan")
    return float(np.average(curve.mean[sel], weights=curve.pairs[sel]))


def curve_from_counts(
    counts: np.ndarray, edges: np.ndarray, *, name: str, x_label: str, min_pairs: int = 20
) -> Curve:
    """Build a :class:`Curve` from stacked (segmentations, bins, 2) pair counts."""
    counts = np.asarray(counts, np.int64)
    nb = len(edges) - 1
    if counts.ndim != 3 or counts.shape[1:] != (nb, 2):
        raise InputError(f"counts must be (segmentations, {nb}, 2), got {counts.shape}")
    pairs = counts[:, :, 0]
    same = counts[:, :, 1]
    ok = pairs >= max(int(min_pairs), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(ok, same / np.where(pairs > 0, pairs, 1), np.nan)
        n_ok = ok.sum(axis=0)
        mean = np.where(n_ok > 0, np.nansum(frac, axis=0) / np.maximum(n_ok, 1), np.nan)
        dev = np.where(ok, frac - mean, 0.0)
        std = np.where(
            n_ok > 0, np.sqrt((dev**2).sum(axis=0) / np.maximum(n_ok, 1)), np.nan
        )
        tot = pairs.sum(axis=0)
        pooled = np.where(tot > 0, same.sum(axis=0) / np.where(tot > 0, tot, 1), np.nan)
    return Curve(
        name,
        x_label,
        np.asarray(edges, float),
        mean,
        std,
        pooled,
        tot,
        n_ok,
        int(min_pairs),
        int(counts.shape[0]),
    )


def coarsen(counts: np.ndarray, bins: int) -> np.ndarray:
    """Merge the last-but-one axis of (..., fine, 2) counts into ``bins`` equal groups."""
    fine = counts.shape[-2]
    if bins < 1 or fine % bins:
        raise InputError(f"cue bins must divide {fine}, got {bins}")
    return counts.reshape(*counts.shape[:-2], bins, fine // bins, 2).sum(axis=-2)


def _log_bins(max_area: float, per_decade: int) -> np.ndarray:
    top = int(np.ceil(np.log10(max(max_area, 2.0)) * per_decade + 1e-9))
    edges = 10.0 ** (np.arange(top + 1) / per_decade)
    edges[-1] = max(edges[-1], max_area + 1)
    return edges


def _integer_span(edges: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Integers in each [lo, hi): count, first, last."""
    first = np.ceil(edges[:-1] - 1e-9)
    last = np.ceil(edges[1:] - 1e-9) - 1
    return np.maximum(last - first + 1, 0), first, last


def _slopes(x: np.ndarray, y: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Least-squares slopes of y on x per row, using only the masked columns."""
    m = mask.astype(float)
    n = m.sum(-1)
    sx, sy = (m * x).sum(-1), (m * np.where(mask, y, 0)).sum(-1)
    sxx = (m * x * x).sum(-1)
    sxy = (m * x * np.where(mask, y, 0)).sum(-1)
    den = n * sxx - sx * sx
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((n >= 2) & (den > 0), (n * sxy - sx * sy) / den, np.nan)


def fit_power_law(
    areas_per_image: Sequence[np.ndarray],
    image_area: float,
    *,
    bins_per_decade: int = 5,
    max_fraction: float = 0.25,
    min_area: float = 1000.0,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PowerLaw:
    """Log-binned histogram of region areas and the power law fitted to it.

    Parameters
    ----------
    areas_per_image : sequence of int arrays
        The areas of all regions of all segmentations of each image; images are the
        unit the bootstrap resamples.
    image_area : float
        Pixels per image (the cutoff is ``max_fraction`` of it).
    bins_per_decade : int
    max_fraction : float
        Bins reaching above this fraction of the image are left out of the fit (the
        paper: 25%, where the bins become sparse).
    min_area : float
        Bins starting below this many pixels are left out of the fit (default 1000:
        the paper's fit starts near 10^3 pixels).
    n_boot : int
        Bootstrap resamples of the images: 0 (no interval) or at least 2.
    confidence : float
    seed : int
    """
    check_resamples(n_boot, "n_boot", zero=True)
    per_image = [np.asarray(a, np.int64).ravel() for a in areas_per_image]
    all_areas = np.concatenate(per_image) if per_image else np.zeros(0, np.int64)
    if all_areas.size == 0:
        raise InputError("no regions to fit a power law to")
    edges = _log_bins(float(max(all_areas.max(), image_area)), bins_per_decade)
    width, first, last = _integer_span(edges)
    has = width > 0
    # geometric mean of the integers first..last: exp(mean log k) via log-gamma
    with np.errstate(invalid="ignore", divide="ignore"):
        area = np.where(
            has,
            np.exp((gammaln(last + 1) - gammaln(first)) / np.where(has, width, 1)),
            np.sqrt(edges[:-1] * edges[1:]),
        )
    counts_img = np.stack([np.histogram(a, edges)[0] for a in per_image])
    counts = counts_img.sum(0)
    n = int(counts.sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        density = np.where(has, counts / (n * np.where(has, width, 1)), np.nan)
    cutoff = float(max_fraction) * float(image_area)
    usable = has & (edges[:-1] >= min_area - 1e-9) & (edges[1:] <= cutoff + 1e-9)
    fitted = usable & (counts > 0)
    lx = np.log10(area)
    with np.errstate(divide="ignore"):
        ly = np.log10(np.where(fitted, density, 1.0))
    slope = float(_slopes(lx, ly, fitted))
    alpha = -slope
    amp = float("nan")
    if np.isfinite(slope):
        amp = float(10 ** np.mean(ly[fitted] - slope * lx[fitted]))
    with np.errstate(divide="ignore"):
        lc = np.log10(np.where(fitted, counts, 1.0))
    alpha_log = float(-_slopes(np.log10(area), lc, fitted))
    lo = hi = float("nan")
    if n_boot > 0 and len(per_image) > 1:
        rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(0x5A7,)))
        k = len(per_image)
        w = rng.multinomial(k, np.full(k, 1.0 / k), size=int(n_boot))
        cb = w @ counts_img  # (n_boot, bins)
        mask = usable[None, :] & (cb > 0)
        with np.errstate(divide="ignore"):
            yb = np.log10(np.where(mask, cb / np.where(has, width, 1)[None, :], 1.0))
        boots = -_slopes(np.broadcast_to(lx, cb.shape), yb, mask)
        boots = boots[np.isfinite(boots)]
        if boots.size:
            q = (1 - confidence) / 2
            lo, hi = (float(v) for v in np.quantile(boots, [q, 1 - q]))
    return PowerLaw(
        alpha,
        (lo, hi),
        amp,
        edges,
        area,
        counts,
        density,
        fitted,
        cutoff,
        float(min_area),
        float(max_fraction),
        n,
        len(per_image),
        int(n_boot),
        float(confidence),
        alpha_log,
    )


def convexity_histogram(values: np.ndarray, bins: int = 20) -> Histogram:
    """Histogram of convexity values on [0, 1] (``bins`` equal bins; 1 in the last)."""
    v = np.asarray(values, float).ravel()
    edges = np.linspace(0.0, 1.0, int(bins) + 1)
    counts = np.histogram(np.clip(v, 0, 1), edges)[0]
    med = float(np.median(v)) if v.size else float("nan")
    mean = float(v.mean()) if v.size else float("nan")
    return Histogram(
        "convexity", "region area / convex hull area", edges, counts, int(v.size), med, mean
    )


PROXIMITY_LABEL = {
    "dataset": "normalised distance  d·sqrt(segments/area) / max",
    "image": "distance / image diagonal",
}


def proximity_curve(
    records: Sequence[SegmentationRecord],
    *,
    min_pairs: int = 20,
    normalize: str = "dataset",
) -> Curve:
    """The proximity curve of records measured with the same bins (``normalize`` only
    names the axis)."""
    nb = {r.proximity.shape[0] for r in records}
    if len(nb) > 1:
        raise InputError(
            f"records were measured with different proximity bins: {sorted(nb)}"
        )
    nb_ = nb.pop() if nb else 20
    counts = (
        np.stack([r.proximity for r in records])
        if records
        else np.zeros((0, nb_, 2), np.int64)
    )
    return curve_from_counts(
        counts,
        np.linspace(0, 1, nb_ + 1),
        name="proximity",
        x_label=PROXIMITY_LABEL.get(normalize, normalize),
        min_pairs=min_pairs,
    )


def similarity_curve(
    records: Sequence[SegmentationRecord], cue: str, *, bins: int = 32, min_pairs: int = 20
) -> Curve:
    """The similarity curve of one cue ('gray', 'color', 'texture'); records without an
    image are left out."""
    if cue not in CUES:
        raise InputError(f"unknown cue {cue!r}; expected one of {', '.join(CUES)}")
    rows = [r.cues[cue] for r in records if cue in r.cues]
    counts = np.stack(rows) if rows else np.zeros((0, _FINE[cue], 2), np.int64)
    counts = coarsen(counts, bins)
    return curve_from_counts(
        counts,
        np.linspace(0, CUE_RANGE[cue], bins + 1),
        name=f"similarity_{cue}",
        x_label=CUE_LABEL[cue],
        min_pairs=min_pairs,
    )


def _areas_by_image(records: Sequence[SegmentationRecord]) -> tuple[list, float]:
    by: dict[str, list] = {}
    for r in records:
        by.setdefault(r.image_id, []).append(r.areas)
    areas = [np.concatenate(v) for _, v in sorted(by.items())]
    image_area = float(np.median([r.shape[0] * r.shape[1] for r in records]))
    return areas, image_area


def summarize_group(
    records: Sequence[SegmentationRecord],
    name: str = "all",
    *,
    cue_bins: int = 32,
    convexity_bins: int = 20,
    min_pairs: int = 20,
    bins_per_decade: int = 5,
    max_fraction: float = 0.25,
    min_area: float = 1000.0,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    normalize: str = "dataset",
) -> GroupStatistics:
    """Every statistic of one group of records (sorted by key first: order-free)."""
    records = sorted(records, key=lambda r: r.key)
    prox = proximity_curve(records, min_pairs=min_pairs, normalize=normalize)
    sim = {
        cue: similarity_curve(records, cue, bins=cue_bins, min_pairs=min_pairs)
        for cue in CUES
        if any(cue in r.cues for r in records)
    }
    conv = area = None
    if records:
        conv = convexity_histogram(
            np.concatenate([r.convexity for r in records]), convexity_bins
        )
        per_image, image_area = _areas_by_image(records)
        area = fit_power_law(
            per_image,
            image_area,
            bins_per_decade=bins_per_decade,
            max_fraction=max_fraction,
            min_area=min_area,
            n_boot=n_boot,
            confidence=confidence,
            seed=seed,
        )
    return GroupStatistics(
        name, len(records), len({r.image_id for r in records}), prox, sim, conv, area
    )


def split_groups(records: Iterable[SegmentationRecord]) -> dict[str, list]:
    """'all', plus 'gray' and 'color' when any record says how its image was shown."""
    records = list(records)
    groups = {"all": records}
    if any(r.gray is not None for r in records):
        groups["gray"] = [r for r in records if r.gray is True]
        groups["color"] = [r for r in records if r.gray is False]
    return groups
