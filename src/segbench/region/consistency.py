"""The 2001 protocol (Martin, Fowlkes, Tal and Malik, ICCV 2001): human consistency under
GCE and LCE, and the matched-granularity evaluation of a segmenter.

Human consistency (§3.2, Figures 4-6)
    :func:`segbench.runners.human_consistency` scores every pair of human
    segmentations of the same image and a seeded sample of pairs of segmentations of
    different images with GCE and LCE
    (:func:`pair_errors`, built on :func:`~segbench.region.contingency_table`,
    :func:`~segbench.region.gce` and :func:`~segbench.region.lce`), and reports the means
    and the fraction of pairs on the wrong side of the best separating threshold
    (:func:`separation`). :func:`plot_consistency` draws Figure 4 (histograms) and
    Figure 6 (GCE against LCE); ``segbench.evaluate("consistency", ...)`` does all
    of it and writes the files.

Matched granularity (§4, Figure 8)
    :func:`segbench.runners.evaluate_granularity` runs a segmenter
    ``(image, k) -> labels`` with the number of segments ``k`` of each human
    segmentation and scores the result against that
    person (:func:`granularity_image`); the summary is the mean GCE and LCE over images.
    Baselines: :mod:`segbench.algorithms.segmenters`.
    :func:`segbench.runners.run_granularity` writes the files.

The runs themselves are engine families (:mod:`segbench.region._gce_family`); this
module holds the measures, the sampling, the reports and the figures.

Different-image pairs
    BSDS images are 481 x 321 or 321 x 481. GCE and LCE compare two label maps pixel by
    pixel, so only images of *equal shape* are paired (``shape`` the (H, W) array shape:
    portrait images are paired with portrait images). This keeps the measure exactly the
    paper's: no pixel is resampled, dropped or invented. Resizing would blur region
    boundaries and change region areas; cropping would drop up to a third of one image;
    rotating a portrait image into landscape would pair regions by an arbitrary rotation
    of the scene. With equal shapes the comparison is what the paper computed on its
    images, which all had one size.

Sampling
    The population is every unordered pair of distinct images of equal shape. ``pairs``
    image pairs are drawn without replacement from it with
    ``numpy.random.default_rng(seed)`` (all of them when ``pairs`` reaches the population)
    and *every* pair of their annotators is scored. Each different-image segmentation pair
    is therefore included with the same probability, so sample means estimate the
    all-pairs means of the paper without bias. The sample depends only on ``seed`` and on
    the ids and shapes of the images, and results are sorted by (image, annotator) before
    anything is summed, so they are identical for any number of workers.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TypedDict

import numpy as np

from ..errors import InputError
from ..primitives import as_labels as _as_labels
from ..primitives import (
    compact_labels,
    contingency_table,
    prepare_ground_truth,
    split_tables,
    stacked_tables,
)
from ..result import Result, provenance
from ._measures import gce, lce

__all__ = [
    "PAPER",
    "ConsistencyReport",
    "GranularityReport",
    "granularity_image",
    "pair_errors",
    "plot_consistency",
    "plot_granularity",
    "same_image_errors",
    "cross_image_errors",
    "sample_image_pairs",
    "separation",
    "wrong_side",
]


#: The paper's figures (§3.2 and §4; 50 grayscale images, 150 segmentations).
class _PaperFigures(TypedDict):
    human_same: dict[str, float]
    human_different: dict[str, float]
    wrong_side: dict[str, tuple[float, float]]  # (threshold, fraction wrong)
    ncuts: dict[str, float]


PAPER: _PaperFigures = {
    "human_same": {"GCE": 0.11, "LCE": 0.07},
    "human_different": {"GCE": 0.39, "LCE": 0.30},
    "wrong_side": {"GCE": (0.16, 0.059), "LCE": (0.12, 0.059)},
    "ncuts": {"GCE": 0.28, "LCE": 0.22},
}

#: Images per block of the different-image pass: a task loads at most two blocks.
BLOCK = 16


# ---------------------------------------------------------------------------------------
# pure pieces: pairs of segmentations


def _errors(table: np.ndarray) -> tuple[float, float]:
    return gce(table=table), lce(table=table)


def pair_errors(seg1, seg2, *, void=None) -> tuple[float, float]:
    """GCE and LCE of two segmentations of the same shape, from one contingency table.

    Parameters
    ----------
    seg1, seg2 : (H, W) label maps
    void : int or None, default None
        Label of unlabelled pixels, left out (BSDS labels regions 1..K).

    Returns
    -------
    (float, float)
        ``(gce, lce)``, both in [0, 1), ``lce <= gce``.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[1, 1, 2, 2]]); b = np.array([[1, 2, 2, 2]])
    >>> pair_errors(a, a), pair_errors(a, b)
    ((0.0, 0.0), (0.25, 0.125))
    """
    return _errors(contingency_table(seg1, seg2, void=void))


def _against(flat_a: np.ndarray, n_a: int, flat_bs: np.ndarray, n_bs) -> list[tuple]:
    """(gce, lce) of one compact map against several, sharing one pass over the pixels."""
    tables = split_tables(stacked_tables(flat_a, n_a, flat_bs, n_bs), n_bs)
    return [_errors(t) for t in tables]


def same_image_errors(gts, *, void=None) -> np.ndarray:
    """GCE and LCE of every pair of human segmentations of one image.

    Parameters
    ----------
    gts : sequence of (H, W) label maps or HumanSegmentation
    void : int or None, default None

    Returns
    -------
    (P, 4) ndarray of float64
        Rows ``(i, j, gce, lce)`` for annotators ``i < j`` (0-based), in that order;
        ``P = K (K - 1) / 2``.
    """
    return _same_image_rows(*prepare_ground_truth(gts, void=void))


def _same_image_rows(flat: np.ndarray, counts) -> np.ndarray:
    """:func:`same_image_errors` of prepared ground truth."""
    rows = []
    for i in range(len(counts) - 1):
        others = list(range(i + 1, len(counts)))
        errs = _against(flat[i], counts[i], flat[others], [counts[j] for j in others])
        rows += [(i, j, g, e) for j, (g, e) in zip(others, errs)]
    return np.asarray(rows, dtype=np.float64).reshape(-1, 4)


def cross_image_errors(gts_a, gts_b, *, void=None, prepared: bool = False) -> np.ndarray:
    """GCE and LCE of every segmentation of one image against every one of another.

    Both images must have the same shape (see the module notes).

    Parameters
    ----------
    gts_a, gts_b : sequence of (H, W) label maps (or objects with ``.segmentation``)
    void : int, optional
        A label of unlabelled pixels (none by default).
    prepared : bool, default False
        ``gts_a`` and ``gts_b`` are already :func:`segbench.region.prepare_ground_truth`
        ``(flat, counts)`` pairs (made with this ``void``): a caller pairing each image
        with many others compacts each one once.

    Returns
    -------
    (Ka * Kb, 4) ndarray of float64
        Rows ``(i, j, gce, lce)``: annotator ``i`` of the first image, ``j`` of the second.
    """
    if prepared:
        return _cross(*gts_a, *gts_b)
    sa = np.shape(getattr(gts_a[0], "segmentation", gts_a[0]))
    sb = np.shape(getattr(gts_b[0], "segmentation", gts_b[0]))
    if sa != sb:
        raise InputError(
            f"the images differ in shape ({sa} and {sb}); only images of "
            "equal shape are paired"
        )
    fa, ca = prepare_ground_truth(gts_a, void=void)
    fb, cb = prepare_ground_truth(gts_b, void=void)
    return _cross(fa, ca, fb, cb)


def _cross(fa, ca, fb, cb) -> np.ndarray:
    if fa.shape[1] != fb.shape[1]:
        raise InputError(
            f"images differ in size ({fa.shape[1]} and {fb.shape[1]} pixels); "
            "only images of equal shape are paired"
        )
    rows = []
    fb32 = np.asarray(fb, np.int32)
    for i in range(len(ca)):
        errs = _against(np.asarray(fa[i], np.int32), ca[i], fb32, cb)
        rows += [(i, j, g, e) for j, (g, e) in enumerate(errs)]
    return np.asarray(rows, dtype=np.float64).reshape(-1, 4)


def separation(same, different, *, diff_weight: float = 1.0) -> dict:
    """The threshold that best separates same-image from different-image errors.

    Same-image pairs should lie below the threshold and different-image pairs above it;
    the fraction on the wrong side is the paper's summary of how well the measure tells
    them apart (§3.2: 5.9% for LCE at 0.12 and for GCE at 0.16).

    Parameters
    ----------
    same, different : 1-D arrays of errors
    diff_weight : float, default 1.0
        Weight of each different-image pair. 1 is the paper's pooled fraction over all
        pairs (right when ``different`` holds all of them). When the different-image pairs
        are a uniform sample, pass population / sample size to estimate the same pooled
        fraction; ``len(same) / len(different)`` gives the balanced error, the mean of the
        two classes' error rates, which does not depend on how many pairs were sampled.

    Returns
    -------
    dict
        ``threshold``, ``wrong`` (weighted fraction of pairs on the wrong side, in [0, 1]),
        ``wrong_same`` (fraction of same-image pairs above), ``wrong_different``
        (fraction of different-image pairs below). NaN when either set is empty.

    Notes
    -----
    Candidate thresholds are the midpoints between consecutive distinct observed values
    (plus one below and one above all of them), so no pair ever sits on the threshold;
    among equally good thresholds the lowest is returned.

    Examples
    --------
    >>> r = separation([0.0, 0.1, 0.3], [0.2, 0.4, 0.5, 0.6])
    >>> round(r["threshold"], 3), round(r["wrong"], 4)
    (0.15, 0.1429)
    """
    s = np.sort(np.asarray(same, dtype=np.float64).ravel())
    d = np.sort(np.asarray(different, dtype=np.float64).ravel())
    nan = float("nan")
    if s.size == 0 or d.size == 0 or not np.isfinite(diff_weight) or diff_weight <= 0:
        return {"threshold": nan, "wrong": nan, "wrong_same": nan, "wrong_different": nan}
    vals = np.unique(np.concatenate([s, d]))
    cands = np.concatenate(
        [[vals[0] - 0.01], (vals[:-1] + vals[1:]) / 2, [vals[-1] + 0.01]]
    )
    above_same = s.size - np.searchsorted(s, cands, side="right")
    below_diff = np.searchsorted(d, cands, side="left")
    wrong = above_same + diff_weight * below_diff
    best = int(np.argmin(wrong))
    return {
        "threshold": float(cands[best]),
        "wrong": float(wrong[best] / (s.size + diff_weight * d.size)),
        "wrong_same": float(above_same[best] / s.size),
        "wrong_different": float(below_diff[best] / d.size),
    }


def wrong_side(same, different, threshold: float, *, diff_weight: float = 1.0) -> float:
    """Weighted fraction of pairs on the wrong side of a given threshold.

    Same-image pairs above ``threshold`` and different-image pairs below it are wrong
    (pairs exactly at it are wrong too); weights as :func:`separation`. NaN when a set is
    empty.

    Examples
    --------
    >>> wrong_side([0.0, 0.1, 0.3], [0.2, 0.4, 0.5, 0.6], 0.12)   # only 0.3 is wrong
    0.14285714285714285
    """
    s = np.asarray(same, dtype=np.float64).ravel()
    d = np.asarray(different, dtype=np.float64).ravel()
    if s.size == 0 or d.size == 0 or not np.isfinite(diff_weight) or diff_weight <= 0:
        return float("nan")
    wrong = (s >= threshold).sum() + diff_weight * (d <= threshold).sum()
    return float(wrong / (s.size + diff_weight * d.size))


# ---------------------------------------------------------------------------------------
# human consistency over a folder


@dataclass
class ConsistencyReport:
    """Every scored pair of the human-consistency protocol, and its summary.

    Attributes
    ----------
    ids : list of str
        Image ids, sorted; images are referred to by their index in this list.
    shapes : list of (int, int)
        (H, W) of each image.
    n_segments : list of list of int
        Segments of each annotator of each image.
    same : (P, 5) ndarray
        Same-image pairs: ``(image, i, j, gce, lce)``, annotators 0-based, ``i < j``.
    different : (Q, 6) ndarray
        Different-image pairs: ``(image_a, image_b, i, j, gce, lce)``, ``a < b``.
    n_image_pairs : int
        Different-image *image* pairs sampled.
    n_image_pairs_total : int
        All unordered pairs of distinct images of equal shape (the population).
    seed : int
    params : dict
        The inputs, for provenance.
    """

    ids: list
    shapes: list
    n_segments: list
    same: np.ndarray
    different: np.ndarray
    n_image_pairs: int
    n_image_pairs_total: int
    seed: int
    params: dict = field(default_factory=dict)

    @property
    def diff_weight(self) -> float:
        """How many population pairs each sampled different-image pair stands for."""
        if self.n_image_pairs == 0:
            return float("nan")
        return self.n_image_pairs_total / self.n_image_pairs

    def metrics(self) -> dict:
        """Means, separating thresholds and wrong-side fractions (NaN where undefined)."""
        nan = float("nan")

        def mean(a):
            return float(np.mean(a)) if len(a) else nan

        m: dict[str, float] = {  # counts, means and fractions (and one bool)
            "n_images": len(self.ids),
            "n_segmentations": int(sum(len(k) for k in self.n_segments)),
            "n_same_pairs": int(len(self.same)),
            "n_different_pairs": int(len(self.different)),
            "n_image_pairs": int(self.n_image_pairs),
            "n_image_pairs_total": int(self.n_image_pairs_total),
            "seed": int(self.seed),
        }
        for col, name in ((-2, "GCE"), (-1, "LCE")):
            s, d = self.same[:, col], self.different[:, col]
            m[f"{name}_same"] = mean(s)
            m[f"{name}_different"] = mean(d)
            pooled = separation(s, d, diff_weight=self.diff_weight)
            bal = separation(s, d, diff_weight=(len(s) / len(d)) if len(d) else nan)
            m[f"{name}_threshold"] = pooled["threshold"]
            m[f"{name}_wrong_side"] = pooled["wrong"]
            m[f"{name}_wrong_same"] = pooled["wrong_same"]
            m[f"{name}_wrong_different"] = pooled["wrong_different"]
            m[f"{name}_threshold_balanced"] = bal["threshold"]
            m[f"{name}_wrong_side_balanced"] = bal["wrong"]
            t_paper = PAPER["wrong_side"][name][0]
            m[f"{name}_wrong_side_at_paper_threshold"] = wrong_side(
                s, d, t_paper, diff_weight=self.diff_weight
            )
        m["LCE_le_GCE"] = bool(
            (self.same[:, -1] <= self.same[:, -2] + 1e-12).all()
            and (self.different[:, -1] <= self.different[:, -2] + 1e-12).all()
        )
        return m

    def per_image(self) -> list[dict]:
        """One row per image: shape, annotators' segment counts, same-image means."""
        rows = []
        img = self.same[:, 0].astype(np.int64) if len(self.same) else np.zeros(0, np.int64)
        for n, iid in enumerate(self.ids):
            sel = self.same[img == n]
            rows.append(
                {
                    "id": iid,
                    "shape": list(self.shapes[n]),
                    "n_annotators": len(self.n_segments[n]),
                    "segments": list(self.n_segments[n]),
                    "n_pairs": int(len(sel)),
                    "GCE": float(sel[:, 3].mean()) if len(sel) else float("nan"),
                    "LCE": float(sel[:, 4].mean()) if len(sel) else float("nan"),
                }
            )
        return rows

    def histograms(self, bins: int = 50) -> dict:
        """Histogram counts on [0, 1] (``bins`` equal bins) of each measure and pair kind."""
        edges = np.linspace(0.0, 1.0, bins + 1)
        out = {"bin_edges": edges}
        for col, name in ((-2, "GCE"), (-1, "LCE")):
            out[f"{name}_same"] = np.histogram(self.same[:, col], edges)[0]
            out[f"{name}_different"] = np.histogram(self.different[:, col], edges)[0]
        return out

    def to_result(self):
        """The common :class:`segbench.result.Result` shape (family 'consistency')."""
        return Result(
            "consistency",
            self.metrics(),
            self.per_image(),
            self.histograms(),
            provenance(**self.params),
        )

    def write_pairs_csv(self, path) -> Path:
        """Every scored pair: kind, image ids, annotators (1-based, as ``groundTruth{k}``),
        their segment counts, GCE and LCE."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(
                [
                    "kind",
                    "iid_a",
                    "annotator_a",
                    "iid_b",
                    "annotator_b",
                    "segments_a",
                    "segments_b",
                    "GCE",
                    "LCE",
                ]
            )
            for a, i, j, g, e in self.same:
                a, i, j = int(a), int(i), int(j)
                w.writerow(
                    [
                        "same",
                        self.ids[a],
                        i + 1,
                        self.ids[a],
                        j + 1,
                        self.n_segments[a][i],
                        self.n_segments[a][j],
                        f"{g:.6f}",
                        f"{e:.6f}",
                    ]
                )
            for a, b, i, j, g, e in self.different:
                a, b, i, j = int(a), int(b), int(i), int(j)
                w.writerow(
                    [
                        "different",
                        self.ids[a],
                        i + 1,
                        self.ids[b],
                        j + 1,
                        self.n_segments[a][i],
                        self.n_segments[b][j],
                        f"{g:.6f}",
                        f"{e:.6f}",
                    ]
                )
        return path


def _pair_from_index(t: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Unordered pair (a < b) of 0..n-1 with lexicographic rank t."""
    starts = np.arange(n) * n - np.arange(n) * (np.arange(n) + 1) // 2  # rank of (a, a+1)
    a = np.searchsorted(starts, t, side="right") - 1
    b = t - starts[a] + a + 1
    return a, b


def sample_image_pairs(shapes: Sequence, pairs: int, seed: int) -> tuple[np.ndarray, int]:
    """The seeded sample of unordered pairs of distinct images of equal shape.

    Parameters
    ----------
    shapes : sequence of (H, W)
        One per image, in the order of the image list.
    pairs : int
        Image pairs to draw without replacement (all of them when at least the population).
    seed : int

    Returns
    -------
    pairs : (N, 2) ndarray of int64
        ``(a, b)`` image indices, ``a < b``, sorted.
    total : int
        The population size.
    """
    if int(pairs) != pairs or pairs < 0:
        raise InputError(f"pairs must be a non-negative integer, got {pairs!r}")
    groups: dict = {}
    for n, s in enumerate(shapes):
        groups.setdefault(tuple(s), []).append(n)
    keys = sorted(groups)
    sizes = np.array([len(groups[k]) * (len(groups[k]) - 1) // 2 for k in keys], np.int64)
    total = int(sizes.sum())
    if total == 0 or pairs == 0:
        return np.zeros((0, 2), np.int64), total
    rng = np.random.default_rng(seed)
    if pairs >= total:
        ranks = np.arange(total, dtype=np.int64)
    else:
        ranks = np.sort(rng.choice(total, size=int(pairs), replace=False))
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    out = []
    for g, key in enumerate(keys):
        sel = ranks[(ranks >= offsets[g]) & (ranks < offsets[g + 1])] - offsets[g]
        if sel.size == 0:
            continue
        members = np.array(groups[key], np.int64)
        a, b = _pair_from_index(sel, len(members))
        out.append(np.column_stack([members[a], members[b]]))
    res = np.concatenate(out)
    res = res[np.lexsort((res[:, 1], res[:, 0]))]
    return res, total


# ---------------------------------------------------------------------------------------
# figures


def _new_figure(size):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig


def _tidy(ax):
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.grid(True, color="0.93", lw=0.6, zorder=-1)


def plot_consistency(
    report: ConsistencyReport, out_dir, *, bins: int = 50, dpi: int = 110
) -> list[Path]:
    """Figure 4 and Figure 6 of the 2001 paper for a :class:`ConsistencyReport`.

    Writes ``consistency_hist.png`` (distributions of LCE and GCE for same-image pairs,
    top, and different-image pairs, bottom, as percentages of pairs, with the mean and
    the best separating thresholds, pooled and balanced: see :func:`separation`) and
    ``consistency_gce_lce.png`` (GCE against LCE for every pair: all points lie on or
    above the diagonal). matplotlib's Agg canvas, no
    display and no pyplot state.

    Returns
    -------
    list of Path
        The two files.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    m = report.metrics()
    edges = np.linspace(0.0, 1.0, bins + 1)
    fig = _new_figure((8.0, 6.0))
    kinds = (
        ("same", report.same, "C0", "same image"),
        ("different", report.different, "C3", "different images"),
    )
    for r, (kind, arr, colour, label) in enumerate(kinds):
        for c, (col, name) in enumerate(((-1, "LCE"), (-2, "GCE"))):
            ax = fig.add_subplot(2, 2, 2 * r + c + 1)
            vals = arr[:, col] if len(arr) else np.zeros(0)
            if len(vals):
                ax.hist(
                    vals,
                    edges,
                    weights=np.full(len(vals), 100.0 / len(vals)),
                    color=colour,
                    alpha=0.85,
                    zorder=2,
                )
                ax.axvline(
                    m[f"{name}_{kind}"],
                    color="black",
                    ls="--",
                    lw=1,
                    label=f"mean {m[f'{name}_{kind}']:.3f}",
                )
                for key, ls, what in (
                    ("threshold", ":", "pooled"),
                    ("threshold_balanced", "-.", "balanced"),
                ):
                    t = m[f"{name}_{key}"]
                    if np.isfinite(t):
                        ax.axvline(
                            t,
                            color="0.45",
                            ls=ls,
                            lw=1.2,
                            label=f"threshold ({what}) {t:.3f}",
                        )
                ax.legend(
                    fontsize=7,
                    loc="upper right",
                    frameon=True,
                    framealpha=0.9,
                    edgecolor="0.85",
                )
            ax.set_xlim(0, 1)
            ax.set_title(f"{name}, {label} (n = {len(vals)})", fontsize=9)
            ax.set_xlabel(f"{name}", fontsize=8)
            ax.set_ylabel("% of pairs", fontsize=8)
            ax.tick_params(labelsize=7)
            _tidy(ax)
    fig.suptitle(
        f"Human segmentations: {m['n_images']} images, "
        f"{m['n_segmentations']} segmentations",
        fontsize=10,
    )
    fig.tight_layout()
    p1 = out / "consistency_hist.png"
    fig.savefig(p1, dpi=dpi, format="png")

    fig = _new_figure((5.2, 5.2))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot([0, 1], [0, 1], color="0.6", lw=0.8, zorder=1)
    for _kind, arr, colour, label in kinds[::-1]:
        if len(arr):
            ax.scatter(
                arr[:, -1],
                arr[:, -2],
                s=2,
                color=colour,
                alpha=0.35,
                lw=0,
                label=f"{label} ({len(arr)})",
                rasterized=True,
                zorder=2,
            )
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("LCE")
    ax.set_ylabel("GCE")
    ax.set_title("GCE against LCE for every pair", fontsize=10)
    if len(report.same) or len(report.different):
        ax.legend(loc="lower right", fontsize=8, markerscale=4)
    _tidy(ax)
    fig.tight_layout()
    p2 = out / "consistency_gce_lce.png"
    fig.savefig(p2, dpi=dpi, format="png")
    return [p1, p2]


# ---------------------------------------------------------------------------------------
# matched granularity


def granularity_image(
    image, gts, segmenter: Callable, *, void=None, cache: dict | None = None
) -> np.ndarray:
    """Score a segmenter against each person of one image at that person's granularity.

    For each human segmentation with ``k`` segments, ``segmenter(image, k)`` is run
    (once per distinct ``k``) and compared with that segmentation.

    Parameters
    ----------
    image : array or None
        Passed to the segmenter as is (None is fine for precomputed segmentations).
    gts : sequence of (H, W) label maps or HumanSegmentation
    segmenter : callable ``(image, k) -> (H, W) labels``
        Every label of its output is a region (0 included).
    void : int or None, default None
        Void label of the human segmentations.
    cache : dict, optional
        Receives the segmentation for each ``k`` (for saving).

    Returns
    -------
    (K, 5) ndarray of float64
        Per annotator: ``(k, k_machine, gce, lce, annotator)`` with ``k_machine`` the
        labels the segmenter actually returned.
    """
    flat, counts = prepare_ground_truth(gts, void=void)
    shape = np.asarray(getattr(gts[0], "segmentation", gts[0])).shape
    return _granularity_rows(
        image, flat, counts, shape, segmenter, {} if cache is None else cache, {}
    )


def _prepared(segmenter, image) -> Callable:
    """``k -> labels`` of one image; the segmenter's ``prepare(image)`` when it has one
    (it shares the k-independent work between the ``k``), else ``segmenter(image, k)``."""
    prepare, options = getattr(segmenter, "prepare", None), {}
    if isinstance(segmenter, partial) and not segmenter.args:
        prepare, options = getattr(segmenter.func, "prepare", None), segmenter.keywords
    if image is not None and callable(prepare):
        return prepare(image, **options)
    return lambda k: segmenter(image, k)


def _file_of(segmenter, k: int):
    """The file a precomputed segmenter (``FolderSegmenter.for_image(iid)``) read for
    ``k`` segments, so that an error names it rather than the photograph; else None."""
    owner = getattr(getattr(segmenter, "func", None), "__self__", None)
    args = getattr(segmenter, "args", ())
    if owner is None or not args or not callable(getattr(owner, "path", None)):
        return None
    try:
        return owner.path(args[0], k)
    except InputError:
        return None


def _granularity_rows(
    image, flat, counts, shape, segmenter, segs: dict, compact: dict
) -> np.ndarray:
    """:func:`granularity_image` of prepared ground truth; ``segs`` receives each k's
    segmentation and ``compact`` its ``compact_labels(.., void=None)``."""
    run = None
    rows = []
    for a, k in enumerate(counts):
        if k not in segs:
            run = run or _prepared(segmenter, image)
            lab = _as_labels(run(int(k)), "segmenter output")
            if lab.shape != shape:
                raise InputError(
                    f"segmenter returned a {lab.shape[0]}x{lab.shape[1]} "
                    f"(HxW) label map for a {shape[0]}x{shape[1]} image",
                    _file_of(segmenter, int(k)),
                )
            segs[k] = lab
        if k not in compact:
            compact[k] = compact_labels(segs[k], void=None)
        cm, km = compact[k]
        ((g, e),) = _against(cm.ravel(), km, flat[a : a + 1], [k])
        rows.append((k, km, g, e, a))
    return np.asarray(rows, dtype=np.float64).reshape(-1, 5)


@dataclass
class GranularityReport:
    """Matched-granularity scores of a segmenter, per (image, annotator).

    Attributes
    ----------
    ids : list of str
    rows : list of (K, 5) ndarray
        Per image, as :func:`granularity_image`: ``(k, k_machine, gce, lce, annotator)``.
    human : list of (P, 4) ndarray
        Per image, the same-image human pairs (:func:`same_image_errors`) for comparison.
    segmenter : str
    params : dict
    """

    ids: list
    rows: list
    human: list
    segmenter: str
    params: dict = field(default_factory=dict)

    def metrics(self) -> dict:
        """GCE and LCE as the paper summarizes them (mean over images of each image's mean
        over its annotators), the means over all (image, annotator) pairs, and the human
        same-image means on the same images."""
        nan = float("nan")
        allrows = np.concatenate(self.rows) if self.rows else np.zeros((0, 5))
        hum = np.concatenate(self.human) if self.human else np.zeros((0, 4))
        per_img = [(r[:, 2].mean(), r[:, 3].mean()) for r in self.rows if len(r)]

        def mean(a):
            return float(np.mean(a)) if len(a) else nan

        return {
            "segmenter": self.segmenter,
            "GCE": mean([p[0] for p in per_img]),
            "LCE": mean([p[1] for p in per_img]),
            "GCE_pairs": mean(allrows[:, 2]),
            "LCE_pairs": mean(allrows[:, 3]),
            "human_GCE_same": mean(hum[:, 2]),
            "human_LCE_same": mean(hum[:, 3]),
            "n_images": len(self.ids),
            "n_pairs": int(len(allrows)),
            "n_human_pairs": int(len(hum)),
            "n_k_mismatch": int((allrows[:, 0] != allrows[:, 1]).sum()),
        }

    def per_image(self) -> list[dict]:
        out = []
        for iid, r, h in zip(self.ids, self.rows, self.human):
            out.append(
                {
                    "id": iid,
                    "k": r[:, 0].astype(int).tolist(),
                    "k_machine": r[:, 1].astype(int).tolist(),
                    "GCE_each": r[:, 2].tolist(),
                    "LCE_each": r[:, 3].tolist(),
                    "GCE": float(r[:, 2].mean()) if len(r) else float("nan"),
                    "LCE": float(r[:, 3].mean()) if len(r) else float("nan"),
                    "human_GCE": float(h[:, 2].mean()) if len(h) else float("nan"),
                    "human_LCE": float(h[:, 3].mean()) if len(h) else float("nan"),
                }
            )
        return out

    def to_result(self):
        """The common :class:`segbench.result.Result` shape (family 'granularity')."""
        edges = np.linspace(0.0, 1.0, 51)
        allrows = np.concatenate(self.rows) if self.rows else np.zeros((0, 5))
        hum = np.concatenate(self.human) if self.human else np.zeros((0, 4))
        curves = {
            "bin_edges": edges,
            "GCE_machine": np.histogram(allrows[:, 2], edges)[0],
            "LCE_machine": np.histogram(allrows[:, 3], edges)[0],
            "GCE_human": np.histogram(hum[:, 2], edges)[0],
            "LCE_human": np.histogram(hum[:, 3], edges)[0],
        }
        return Result(
            "granularity",
            self.metrics(),
            self.per_image(),
            curves,
            provenance(**self.params),
        )


def plot_granularity(
    report: GranularityReport, path, *, bins: int = 50, dpi: int = 110
) -> Path:
    """Figure 8 of the 2001 paper: distributions of the segmenter-vs-human errors beside
    the human-vs-human (same image) errors on the same images, LCE left, GCE right."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    allrows = np.concatenate(report.rows) if report.rows else np.zeros((0, 5))
    hum = np.concatenate(report.human) if report.human else np.zeros((0, 4))
    edges = np.linspace(0.0, 1.0, bins + 1)
    fig = _new_figure((8.0, 3.4))
    for c, (mcol, hcol, name) in enumerate(((3, 3, "LCE"), (2, 2, "GCE"))):
        ax = fig.add_subplot(1, 2, c + 1)
        for vals, colour, label in (
            (hum[:, hcol], "C0", "human vs human"),
            (allrows[:, mcol], "C1", f"{report.segmenter} vs human"),
        ):
            if len(vals):
                ax.hist(
                    vals,
                    edges,
                    weights=np.full(len(vals), 100.0 / len(vals)),
                    color=colour,
                    alpha=0.55,
                    zorder=2,
                    label=f"{label}: mean {vals.mean():.3f}",
                )
        ax.set_xlim(0, 1)
        ax.set_xlabel(name, fontsize=8)
        ax.set_ylabel("% of pairs", fontsize=8)
        ax.tick_params(labelsize=7)
        if len(hum) or len(allrows):
            ax.legend(fontsize=7, frameon=False)
        _tidy(ax)
    fig.suptitle(f"Matched granularity, {len(report.ids)} images", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi, format="png")
    return path
