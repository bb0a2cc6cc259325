"""Per-image superpixel record against every annotator, and the summary over images."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ._boundary import DEFAULT_TOLERANCE, BoundaryScorer
from ._image import (
    _colour_stats,
    _colours,
    _compactness,
    _count,
    _explained_variation,
    _shape_pass,
)
from ._measures import ACHANTA_MIN_OVERLAP, normalized_seeds_ue, table_measures
from ._stutz import STUTZ_COLUMNS
from ._table import superpixel_tables

#: Measures computed against each annotator, in record order.
ANNOTATOR_MEASURES = (
    "ue",
    "cue",
    "ue_levinshtein",
    "ue_np",
    "ue_achanta",
    "asa",
    "oe",
    "br",
    "bp",
)
#: Derived from those in the summaries (not stored in records): ``ue_norm``, the SEEDS
#: recipe's UE normalized to stay in [0, 1) (``UE / (1 + UE)``, :func:`normalized_seeds_ue`).
DERIVED_MEASURES = ("ue_norm",)
#: Of those, the ones where lower is better (the others: higher is better).
LOWER_IS_BETTER = frozenset(
    {"ue", "ue_norm", "cue", "ue_levinshtein", "ue_np", "ue_achanta", "oe"}
)
#: Measures of the superpixels alone (or with the image).
IMAGE_MEASURES = ("n_superpixels", "n_components", "n_split", "co", "ev")
#: Version of :meth:`SuperpixelRecord.to_json`'s layout.
RECORD_FORMAT = 1


@dataclass(frozen=True)
class SuperpixelRecord:
    """Everything the summary needs from one image.

    Attributes
    ----------
    per_annotator : dict of str -> (K,) float64
        Each of :data:`ANNOTATOR_MEASURES` against each annotator: ``ue`` (SEEDS),
        ``cue``, ``ue_levinshtein``, ``ue_np`` (Neubert-Protzel), ``ue_achanta`` (SLIC
        paper), ``asa``, ``oe``, ``br`` and ``bp`` (boundary recall and precision).
    boundary_counts : (K, 4) int64
        Per annotator: ground-truth boundary pixels, of which found; superpixel
        boundary pixels, of which found (for pooled figures).
    n_superpixels, n_components, n_split : int
        See :func:`superpixel_count`.
    co : float
        Compactness.
    ev : float
        Explained variation; NaN when no image was given.
    extra : dict of str -> float
        Other numbers of the run (the sweep's algorithm time, ``seconds``).
    stutz : tuple of dict, optional
        The C++ benchmark's ``results.csv`` row against each annotator
        (:func:`stutz_rows`), when asked for.
    """

    per_annotator: dict
    boundary_counts: np.ndarray
    n_superpixels: int
    n_components: int
    n_split: int
    co: float
    ev: float = float("nan")
    extra: dict = field(default_factory=dict)
    stutz: tuple | None = None

    @property
    def n_annotators(self) -> int:
        return int(self.boundary_counts.shape[0])

    def annotator_values(self) -> dict:
        """:attr:`per_annotator` with the :data:`DERIVED_MEASURES` after ``ue``: each
        annotator's ``ue_norm`` = ``ue / (1 + ue)``."""
        out = {}
        for m, v in self.per_annotator.items():
            out[m] = v
            if m == "ue":
                out["ue_norm"] = normalized_seeds_ue(v)
        return out

    def mean(self) -> dict:
        """Each annotator measure averaged over the annotators.

        Annotators for which a measure is undefined (NaN, e.g. recall against an
        annotator who drew a single region) are left out; NaN if it is undefined for
        all.
        """
        return {m: _nanmean(v) for m, v in self.annotator_values().items()}

    def best(self) -> dict:
        """Each annotator measure at the annotator that scores best on it.

        The minimum for the errors (:data:`LOWER_IS_BETTER`), the maximum for the
        others; chosen per measure, so the best UE and the best BR may come from
        different annotators.
        """
        out = {}
        for m, v in self.annotator_values().items():
            v = np.asarray(v, dtype=np.float64)
            ok = v[np.isfinite(v)]
            out[m] = (
                float("nan")
                if not ok.size
                else float(ok.min() if m in LOWER_IS_BETTER else ok.max())
            )
        return out

    def image_measures(self) -> dict:
        return {
            "n_superpixels": self.n_superpixels,
            "n_components": self.n_components,
            "n_split": self.n_split,
            "co": self.co,
            "ev": self.ev,
        }

    def to_json(self) -> dict:
        """Plain JSON, exact: floats as written by ``repr``, NaN as None, infinities as
        ``"inf"``/``"-inf"``; :meth:`from_json` restores the same numbers."""
        out = {
            "format": RECORD_FORMAT,
            "per_annotator": {
                k: [_enc(x) for x in np.asarray(v, np.float64)]
                for k, v in self.per_annotator.items()
            },
            "boundary_counts": np.asarray(self.boundary_counts, np.int64).tolist(),
            "n_superpixels": int(self.n_superpixels),
            "n_components": int(self.n_components),
            "n_split": int(self.n_split),
            "co": _enc(self.co),
            "ev": _enc(self.ev),
            "extra": {k: _enc(v) for k, v in self.extra.items()},
        }
        if self.stutz is not None:
            out["stutz"] = [{k: _enc(v) for k, v in row.items()} for row in self.stutz]
        return out

    @classmethod
    def from_json(cls, d: dict) -> SuperpixelRecord:
        """The record of :meth:`to_json`.

        Raises
        ------
        ValueError, KeyError, TypeError
            If ``d`` is not a whole record of this format (another version, a measure
            or an annotator missing, counts that are not non-negative integers).
        """
        if d.get("format") != RECORD_FORMAT:
            raise ValueError(f"record format {d.get('format')!r}, expected {RECORD_FORMAT}")
        counts = np.asarray(d["boundary_counts"], dtype=np.float64)
        if (
            counts.ndim != 2
            or counts.shape[1] != 4
            or counts.shape[0] < 1
            or (counts < 0).any()
            or (counts != np.round(counts)).any()
        ):
            raise ValueError("boundary_counts are (annotators, 4) non-negative integers")
        if (counts[:, 1] > counts[:, 0]).any() or (counts[:, 3] > counts[:, 2]).any():
            raise ValueError("boundary_counts find more boundary pixels than there are")
        k = counts.shape[0]
        per = d["per_annotator"]
        if sorted(per) != sorted(ANNOTATOR_MEASURES):
            raise ValueError(
                f"per_annotator holds {sorted(per)}, expected {sorted(ANNOTATOR_MEASURES)}"
            )
        arrays = {
            m: np.array([_dec(x) for x in per[m]], dtype=np.float64)
            for m in ANNOTATOR_MEASURES
        }
        if any(a.shape != (k,) for a in arrays.values()):
            raise ValueError(f"every measure needs one value per annotator ({k})")
        stutz = None
        if d.get("stutz") is not None:
            rows = d["stutz"]
            if len(rows) != k or any(sorted(r) != sorted(STUTZ_COLUMNS) for r in rows):
                raise ValueError(
                    f"stutz holds one row of {len(STUTZ_COLUMNS)} columns "
                    f"per annotator ({k})"
                )
            stutz = tuple({c: _dec(r[c]) for c in STUTZ_COLUMNS} for r in rows)
        n_superpixels, n_components, n_split = (
            _nonneg_int(d[n], n) for n in ("n_superpixels", "n_components", "n_split")
        )
        return cls(
            arrays,
            counts.astype(np.int64),
            n_superpixels,
            n_components,
            n_split,
            _dec(d["co"]),
            _dec(d["ev"]),
            {str(n): _dec(v) for n, v in d.get("extra", {}).items()},
            stutz,
        )


def _enc(x):
    """A float as JSON: itself, None for NaN, a string for an infinity (a stutz row's
    ``reg`` of one superpixel)."""
    x = float(x)
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _dec(x) -> float:
    if x is None:
        return float("nan")
    if isinstance(x, str):
        if x not in ("inf", "-inf"):
            raise ValueError(f"not a number: {x!r}")
        return float(x)
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"not a number: {x!r}")
    return float(x)


def _nonneg_int(x, name: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or x < 0:
        raise ValueError(f"{name} is a non-negative integer, got {x!r}")
    return x


def _nanmean(v) -> float:
    v = np.asarray(v, dtype=np.float64)
    ok = v[np.isfinite(v)]
    return float(ok.mean()) if ok.size else float("nan")


def evaluate_image(
    sp,
    gts,
    image=None,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    window: str = "euclidean",
    boundary: str = "bsds",
    min_overlap: float = ACHANTA_MIN_OVERLAP,
    void=None,
    connectivity: int = 4,
) -> SuperpixelRecord:
    """Every superpixel measure of one map against every annotator of its image.

    Parameters
    ----------
    sp : (H, W) array of int
        Superpixel labels (every label a superpixel, 0 included).
    gts : sequence of (H, W) label maps or HumanSegmentation
        The annotators (e.g. :func:`segbench.io.read_ground_truth`).
    image : (H, W, 3) array, optional
        The image, for the explained variation (NaN without it).
    tolerance : float, default 2
        Boundary tolerance in pixels (SEEDS: 2).
    window : {'euclidean', 'square', 'matched'}, default 'euclidean'
        How boundary pixels are found (see :func:`boundary_counts`).
    boundary : {'bsds', 'two-sided'}, default 'bsds'
        Boundary pixels of the label maps (see :func:`boundary_map`).
    min_overlap : float, default 0.05
        The SLIC paper's overlap rule for ``ue_achanta``.
    void : int or None, default None
        Unlabelled ground-truth label.
    connectivity : {4, 8}, default 4
        For counting connected components.

    Returns
    -------
    SuperpixelRecord

    Notes
    -----
    One compiled pass over the pixels builds the overlap tables against all
    annotators; the undersegmentation errors, ASA and OE are arithmetic on them. The
    superpixel boundary map is built once; each annotator then costs a scan over the
    boundary pixels.
    """
    return _evaluate_image(
        sp,
        gts,
        image,
        tolerance=tolerance,
        window=window,
        boundary=boundary,
        min_overlap=min_overlap,
        void=void,
        connectivity=connectivity,
    )[0]


def _evaluate_image(
    sp, gts, image, *, tolerance, window, boundary, min_overlap, void, connectivity
):
    """:func:`evaluate_image`, also returning what :func:`superpixel_tables` built
    (``tables, compact, n_superpixels``) for reuse."""
    if len(gts) == 0:
        raise InputError("no ground-truth segmentations given")
    tables, compact, n_sp = superpixel_tables(sp, gts, void=void)
    scorer = BoundaryScorer(compact, tolerance=tolerance, window=window, boundary=boundary)
    per = {m: np.empty(len(tables)) for m in ANNOTATOR_MEASURES}
    counts = np.zeros((len(tables), 4), np.int64)
    for k, (t, g) in enumerate(zip(tables, gts)):
        for m, v in table_measures(t, min_overlap=min_overlap).items():
            per[m][k] = v
        bc = scorer.counts(np.asarray(getattr(g, "segmentation", g)))
        per["br"][k] = bc.recall
        per["bp"][k] = bc.precision
        counts[k] = (bc.gt_pixels, bc.gt_found, bc.sp_pixels, bc.sp_found)
    lab = np.ascontiguousarray(compact)
    cnt = _count(lab, n_sp, connectivity)
    area, per_sides = _shape_pass(lab, n_sp)
    ev = (
        float("nan")
        if image is None
        else _explained_variation(*_colour_stats(lab, n_sp, _colours(image, lab.shape)))
    )
    record = SuperpixelRecord(
        per,
        counts,
        cnt.n_superpixels,
        cnt.n_components,
        cnt.n_split,
        _compactness(area[1:], per_sides[1:]),
        ev,
    )
    return record, (tables, compact, n_sp)


@dataclass(frozen=True)
class SuperpixelSummary:
    """Dataset figures: the mean over images of each per-image summary.

    Attributes
    ----------
    mean : dict
        Per annotator measure: mean over images of the mean over annotators.
    best : dict
        Per annotator measure: mean over images of the best annotator's value.
    image : dict
        Mean over images of each image measure (CO, EV, counts).
    pooled : dict
        Boundary recall and precision from the counts summed over every image and
        annotator (the BSDS boundary benchmark's pooling), for comparison.
    n_images : int
    """

    mean: dict
    best: dict
    image: dict
    pooled: dict
    n_images: int

    def metrics(self) -> dict:
        """Flat dict: ``<m>`` (mean over annotators), ``<m>_best``, image measures,
        ``br_pooled``, ``bp_pooled``."""
        out = dict(self.mean)
        out.update({f"{k}_best": v for k, v in self.best.items()})
        out.update(self.image)
        out.update(self.pooled)
        out["n_images"] = self.n_images
        return out


def summarize(records) -> SuperpixelSummary:
    """Average per-image records over images.

    Each image counts once, whatever its number of annotators (the superpixel
    literature averages per image). Images where a measure is undefined are left out
    of that measure's mean.
    """
    records = list(records)
    if not records:
        raise InputError("no images to summarize")
    means = [r.mean() for r in records]
    bests = [r.best() for r in records]
    imgs = [r.image_measures() for r in records]
    mean = {m: _nanmean([d[m] for d in means]) for m in means[0]}
    best = {m: _nanmean([d[m] for d in bests]) for m in bests[0]}
    image = {m: _nanmean([d[m] for d in imgs]) for m in imgs[0]}
    tot = np.sum([r.boundary_counts.sum(axis=0) for r in records], axis=0)
    pooled = {
        "br_pooled": tot[1] / tot[0] if tot[0] else float("nan"),
        "bp_pooled": tot[3] / tot[2] if tot[2] else float("nan"),
    }
    return SuperpixelSummary(mean, best, image, pooled, len(records))


def resampler(records):
    """The bootstrap statistic of a superpixel run: image weights -> every mean of
    :meth:`SuperpixelSummary.metrics` (``n_images`` aside) per draw.

    A mean over images becomes a weighted mean over the images where the measure is
    defined (as :func:`summarize` leaves the others out); the pooled boundary recall
    and precision become weighted sums of the counts.
    """
    records = list(records)
    if not records:
        raise InputError("no images to summarize")
    columns: dict[str, list] = {}
    for r in records:
        row = dict(r.mean())
        row.update({f"{k}_best": v for k, v in r.best().items()})
        row.update(r.image_measures())
        for k, v in row.items():
            columns.setdefault(k, []).append(v)
    names = list(columns)
    x = np.array([columns[k] for k in names], dtype=np.float64).T  # (N, M)
    defined = np.isfinite(x)
    x = np.where(defined, x, 0.0)
    tot = np.array([r.boundary_counts.sum(axis=0) for r in records], dtype=np.float64)

    def statistic(weights: np.ndarray) -> dict:
        count = weights @ defined
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(count > 0, (weights @ x) / count, np.nan)
            pooled = weights @ tot
            br = np.where(pooled[:, 0] > 0, pooled[:, 1] / pooled[:, 0], np.nan)
            bp = np.where(pooled[:, 2] > 0, pooled[:, 3] / pooled[:, 2], np.nan)
        out = {k: means[:, j] for j, k in enumerate(names)}
        out.update(br_pooled=br, bp_pooled=bp)
        return out

    return statistic
