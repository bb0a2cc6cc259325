"""Per-image boundary counts at every threshold, as ``evaluation_bdry_image.m``."""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from ..compilation import is_cached
from ..errors import InputError
from ._correspond import DEFAULT_MAX_DIST, frame_events_of, shared_matcher
from ._seg2bdry import seg2bdry
from ._solver import _match_sequence, covered_counts, positions_in
from ._thin import thin as thin_map
from ._thin import thin_frames


@dataclass(frozen=True)
class BoundaryCounts:
    """Matched and total pixel counts of one image, one entry per threshold.

    Attributes
    ----------
    thresholds : (T,) float64
        The thresholds (for a list of segmentations: 1, 2, ..., T).
    cnt_r : (T,) int64
        Human boundary pixels matched, summed over annotators (recall numerator).
    sum_r : (T,) int64
        Human boundary pixels, summed over annotators (recall denominator).
    cnt_p : (T,) int64
        Detected pixels matched to at least one annotator (precision numerator).
    sum_p : (T,) int64
        Detected pixels after thresholding and thinning (precision denominator).
    """

    thresholds: np.ndarray
    cnt_r: np.ndarray
    sum_r: np.ndarray
    cnt_p: np.ndarray
    sum_p: np.ndarray

    def as_table(self) -> np.ndarray:
        """``(T, 5)`` array of threshold, cntR, sumR, cntP, sumP (the ``_ev1.txt`` rows)."""
        return np.column_stack(
            [self.thresholds, self.cnt_r, self.sum_r, self.cnt_p, self.sum_p]
        )

    def to_json(self) -> dict:
        """Plain-JSON form; :meth:`from_json` restores it exactly."""
        return {
            "thresholds": self.thresholds.tolist(),
            **{k: getattr(self, k).tolist() for k in ("cnt_r", "sum_r", "cnt_p", "sum_p")},
        }

    @classmethod
    def from_json(cls, d: dict) -> BoundaryCounts:
        """Inverse of :meth:`to_json`.

        Raises
        ------
        ValueError
            On a payload that cannot be a record: lists of unequal length, thresholds
            that are not finite and increasing, counts that are not non-negative
            integers, more pixels matched than there are (cntR > sumR, cntP > sumP),
            or a human pixel count (sumR) that changes with the threshold.
        """
        ths = np.asarray(d["thresholds"], dtype=np.float64)
        cols = [
            np.asarray(d[k], dtype=np.float64) for k in ("cnt_r", "sum_r", "cnt_p", "sum_p")
        ]
        if ths.ndim != 1 or ths.size == 0 or any(c.shape != ths.shape for c in cols):
            raise ValueError("counts are not equal-length lists, one entry per threshold")
        if not np.isfinite(ths).all() or (np.diff(ths) <= 0).any():
            raise ValueError("thresholds must be finite and increasing")
        if not all(np.isfinite(c).all() for c in cols):
            raise ValueError("counts must be finite")
        ints = [c.astype(np.int64) for c in cols]
        if any((c != i).any() or (i < 0).any() for c, i in zip(cols, ints)):
            raise ValueError("counts must be non-negative integers")
        cnt_r, sum_r, cnt_p, sum_p = ints
        if (cnt_r > sum_r).any() or (cnt_p > sum_p).any():
            raise ValueError(
                "more pixels matched than there are (cntR > sumR or cntP > sumP)"
            )
        if (sum_r != sum_r[0]).any():
            raise ValueError("the human pixel count (sumR) differs between thresholds")
        return cls(ths, *ints)

    @classmethod
    def from_table(cls, table) -> BoundaryCounts:
        """Inverse of :meth:`as_table`; InputError on a table whose counts cannot be
        (not finite, negative, more pixels matched than there are)."""
        t = np.asarray(table, dtype=np.float64)
        if t.ndim != 2 or t.shape[1] != 5:
            raise InputError(f"a counts table has 5 columns, got shape {t.shape}")
        if not np.isfinite(t).all():
            raise InputError("a counts table holds values that are not finite")
        ints = [np.rint(t[:, k]).astype(np.int64) for k in range(1, 5)]
        if (
            any((c < 0).any() for c in ints)
            or (ints[0] > ints[1]).any()
            or (ints[2] > ints[3]).any()
        ):
            raise InputError(
                "a counts table has negative counts or more pixels matched "
                "than there are (cntR > sumR or cntP > sumP)"
            )
        return cls(t[:, 0].copy(), *ints)


def default_thresholds(nthresh: int = 99) -> np.ndarray:
    """The benchmark's thresholds: ``linspace(1/(n+1), 1 - 1/(n+1), n)``.

    With the default ``n = 99`` these are 0.01, 0.02, ..., 0.99.
    """
    if int(nthresh) != nthresh or nthresh < 1:
        raise InputError(f"nthresh must be a positive integer, got {nthresh}")
    n = int(nthresh)
    return np.linspace(1.0 / (n + 1), 1.0 - 1.0 / (n + 1), n)


def threshold_list(values) -> list[float]:
    """An explicit list of thresholds in its one stored form: sorted, distinct floats,
    each in [0, 1] (InputError otherwise). A map is cut at ``pb >= t``: 0 takes every
    pixel (the extra first row of EDTER's and SAUGE's count files)."""
    try:
        out = sorted({float(v) for v in np.atleast_1d(np.asarray(values, dtype=object))})
    except (TypeError, ValueError):
        raise InputError(f"thresholds must be numbers in (0, 1), got {values!r}") from None
    if not out:
        raise InputError("the list of thresholds is empty")
    bad = [t for t in out if not 0 <= t <= 1]
    if bad:
        raise InputError(
            f"thresholds must lie in [0, 1] (a map is cut at pb >= t), got "
            f"{', '.join(repr(t) for t in bad)}"
        )
    return out


def check_thresholds(thresholds, nthresh: int) -> None:
    """ValueError unless a record's thresholds are those its parameters give.

    Parameters
    ----------
    thresholds : (T,) array_like
        The thresholds of a record read back (boundary or region).
    nthresh : int
        The ``nthresh`` of the record's key.

    Notes
    -----
    A soft map or ucm2 is cut at :func:`default_thresholds` ``(nthresh)``; a list of
    T segmentations (or one label map) has "thresholds" 1, 2, ..., T whatever
    ``nthresh``. JSON keeps every float exactly, so the comparison is exact.
    """
    t = np.asarray(thresholds, dtype=np.float64).ravel()
    if np.array_equal(t, np.arange(1, t.size + 1, dtype=np.float64)):
        return
    if t.size != nthresh or not np.array_equal(t, default_thresholds(nthresh)):
        raise ValueError(
            f"{t.size} thresholds, not the {nthresh} of nthresh = {nthresh} "
            f"(nor 1..T of a list of segmentations)"
        )


def as_boundary_list(gt_boundaries, shape=None) -> list[np.ndarray]:
    maps = [np.asarray(getattr(g, "boundaries", g)) for g in gt_boundaries]
    if not maps:
        raise InputError("no human boundary maps given")
    for k, m in enumerate(maps):
        if m.ndim != 2:
            raise InputError(f"human boundary map {k} is not 2-D (shape {m.shape})")
        if m.shape != maps[0].shape:
            raise InputError(
                f"human boundary maps differ in shape: {maps[0].shape} and {m.shape}"
            )
    if shape is not None and maps[0].shape != tuple(shape):
        raise InputError(
            f"prediction has shape {tuple(shape)} but the ground truth has "
            f"shape {maps[0].shape}"
        )
    return [
        m if m.dtype == np.bool_ and m.flags.c_contiguous else np.ascontiguousarray(m != 0)
        for m in maps
    ]


def _thinned(maps: list[np.ndarray]) -> list[np.ndarray]:
    """Each map thinned (``bwmorph(.., 'thin', Inf)``), as C-contiguous bool arrays."""
    return [np.ascontiguousarray(thin_map(m), dtype=np.bool_) for m in maps]


def _detector(pred):
    """(shape, t -> unthinned detected bool map) of a prediction.

    Soft maps (a ``Prediction`` of kind 'soft'/'ucm2', or an array) give ``pb >= t``;
    segmentations (kind 'segs', or a list of label maps) give the ``seg2bdry``
    boundaries of segmentation number ``t`` (1-based, rounded, clamped to the list)."""
    kind = getattr(pred, "kind", None)
    if kind == "segs" or (kind is None and isinstance(pred, (list, tuple))):
        segs = pred.segs if kind == "segs" else list(pred)
        if not segs:
            raise InputError("the list of segmentations is empty")

        def at(t):
            idx = min(max(int(round(t)) - 1, 0), len(segs) - 1)
            return seg2bdry(np.asarray(segs[idx]), "imageSize")

        return np.shape(segs[0]), at
    pb = np.asarray(pred.pb if kind in ("soft", "ucm2") else pred, dtype=np.float64)
    if pb.ndim != 2:
        raise InputError(f"a soft boundary map must be 2-D, got shape {pb.shape}")
    if not np.all(np.isfinite(pb)):
        raise InputError("the soft boundary map contains NaN or infinite values")
    return pb.shape, lambda t: pb >= t


def detected_map(pred, t: float) -> np.ndarray:
    """The detected boundary map of ``pred`` at threshold ``t``, before thinning.

    Soft maps: ``pb >= t``. Segmentations: the boundaries of segmentation number ``t``
    (1-based; rounded and clamped to the list), as :func:`evaluate_image` scores them.
    """
    return _detector(pred)[1](t)


#: The environment setting that gives :func:`evaluate_image` its default number of
#: threads (``segbench.api.evaluate`` sets it for a run, so that worker processes see
#: it too: the cores not used by the worker processes).
THREADS_ENV = "SEGBENCH_THREADS"


#: Per-thread override of :func:`default_threads` (:func:`threads_in_this_thread`).
_LOCAL = threading.local()


@contextmanager
def threads_in_this_thread(threads: int):
    """Make :func:`default_threads` give ``threads`` in the calling thread only.

    A pool that evaluates several images at once (the streaming evaluators' worker
    threads) gives each image its share of the cores without touching
    ``$SEGBENCH_THREADS``, which is global to the process. The counts do not depend
    on it.
    """
    before = getattr(_LOCAL, "threads", None)
    _LOCAL.threads = _check_threads(threads)
    try:
        yield
    finally:
        _LOCAL.threads = before


def default_threads() -> int:
    """Threads :func:`evaluate_image` uses by default: the calling thread's
    :func:`threads_in_this_thread` setting, else ``$SEGBENCH_THREADS`` when set (a
    positive integer), else every core (``os.cpu_count()``)."""
    local = getattr(_LOCAL, "threads", None)
    if local is not None:
        return local
    text = os.environ.get(THREADS_ENV, "").strip()
    if text:
        try:
            n = int(text)
        except ValueError:
            n = 0
        if n < 1:
            raise InputError(f"{THREADS_ENV} must be a positive integer, not {text!r}")
        return n
    return os.cpu_count() or 1


def _check_threads(threads) -> int:
    if threads is None:
        return default_threads()
    if (
        isinstance(threads, bool)
        or not isinstance(threads, (int, np.integer))
        or threads < 1
    ):
        raise InputError(f"threads must be a positive integer, not {threads!r}")
    return int(threads)


def _frames(pred, thresholds, thin: bool, threads: int = 1):
    """Detected boundary maps as sorted linear pixel lists, one per threshold."""
    shape, at = _detector(pred)
    kind = getattr(pred, "kind", None)
    if kind in ("soft", "ucm2") or (kind is None and not isinstance(pred, (list, tuple))):
        pb = pred.pb if kind else pred  # checked by _detector
        return shape, thin_frames(pb, thresholds, None if thin else 0, threads=threads)
    frames = []
    for t in thresholds:
        m = at(t)
        if thin:
            m = thin_map(m)
        frames.append(np.flatnonzero(m))
    return shape, frames


def evaluate_image(
    pred,
    gt_boundaries,
    *,
    nthresh: int = 99,
    max_dist: float = DEFAULT_MAX_DIST,
    thin: bool = True,
    thresholds=None,
    thin_gt: bool = False,
    threads: int | None = None,
) -> BoundaryCounts:
    """Boundary counts of one image at every threshold, as ``evaluation_bdry_image.m``.

    Parameters
    ----------
    pred : Prediction, (H, W) array_like of float, or list of (H, W) label maps
        A soft boundary map with values in [0, 1] (a ``Prediction`` of kind 'soft' or
        'ucm2' uses its ``pb``), or a list of segmentations (kind 'segs'), each giving
        one "threshold" through its ``seg2bdry`` boundaries.
    gt_boundaries : sequence of (H, W) bool arrays, or objects with ``.boundaries``
        One boundary map per annotator, used as stored (not thinned), as BSR does.
    nthresh : int, default 99
        Number of thresholds for soft maps (``default_thresholds``); ignored for segs.
    max_dist : float, default 0.0075
        Matching tolerance as a fraction of the image diagonal.
    thin : bool, default True
        Thin each thresholded map (MATLAB ``bwmorph(.., 'thin', Inf)``) before matching.
    thresholds : array_like, optional
        Explicit thresholds for soft maps, overriding ``nthresh``.
    thin_gt : bool, default False
        Thin each human map (``bwmorph(.., 'thin', Inf)``) before matching, as the
        BSDS300 ``boundaryPR.m`` does (lines 37-40); False uses them as stored, as BSR.
        On the official BSDS500 ``Boundaries`` (already thin) both give the same counts.
    threads : int, optional
        Threads for this one image: the thresholds are thinned in that many ranges at
        once and that many annotators are matched at once (the compiled kernels release
        the GIL). The counts are identical for any number. Default
        :func:`default_threads`: ``$SEGBENCH_THREADS`` if set (``segbench.evaluate``
        and ``--threads`` set it to the cores the worker processes leave), else every
        core.

    Returns
    -------
    BoundaryCounts

    Notes
    -----
    A detected pixel is a true positive if it is matched to any annotator; recall pools
    the matched pixels of every annotator. Matching is exact (see
    :func:`correspond_pixels`), so ``cnt_r`` may exceed the official randomized
    matcher's by a few pixels and is never lower on the official fixtures. ``cnt_p``
    (pixels matched to *any* annotator) depends on which of several equally good
    matchings each annotator gets, so it can differ from an official run by a few
    pixels either way (within 1% on the fixtures; two official runs differ as much);
    with several annotators the thresholds are walked from the dense end, which
    spreads each annotator's matches as the official random choice does.
    ``sum_r`` and ``sum_p`` are identical to the official. Each annotator is matched against
    the maps of all thresholds in sequence, repairing the previous optimum instead of
    solving each threshold from scratch; every threshold's matching is still an exact
    optimum.
    """
    kind = getattr(pred, "kind", None)
    is_segs = kind == "segs" or (kind is None and isinstance(pred, (list, tuple)))
    if is_segs:
        n = len(pred.segs if kind == "segs" else pred)
        if n == 0:
            raise InputError("the list of segmentations is empty")
        ths = np.arange(1, n + 1, dtype=np.float64)
    elif thresholds is not None:
        ths = np.asarray(thresholds, dtype=np.float64).ravel()
    else:
        ths = default_thresholds(nthresh)
    threads = _check_threads(threads)
    shape, frames = _frames(pred, ths, thin, threads)
    humans = as_boundary_list(gt_boundaries, shape)
    if thin_gt:
        humans = _thinned(humans)
    n_t = len(frames)
    cnt_r = np.zeros(n_t, np.int64)
    sum_r = np.full(n_t, sum(np.count_nonzero(h) for h in humans), np.int64)
    # several annotators: cntP is a union, walked as the official solver spreads it
    runs, pool = frame_events_of(
        humans, frames, shape, max_dist, threads=threads, departing=len(humans) > 1
    )
    for ev in runs:
        cnt_r += ev.n_matched
    ev_ptr = np.zeros(len(runs) + 1, np.int64)
    ev_ptr[1:] = np.cumsum([ev.frame.size for ev in runs])
    union = pool[6]  # every frame's pixels: events index into them
    where = positions_in(union, np.concatenate([ev.pixel for ev in runs]), shape[1])
    cnt_p = covered_counts(
        runs[0].walk,
        ev_ptr,
        np.concatenate([ev.frame for ev in runs]),
        where,
        np.concatenate([ev.sign for ev in runs]),
        union.size,
    )
    sum_p = np.array([len(f) for f in frames], np.int64)
    return BoundaryCounts(ths, cnt_r, sum_r, cnt_p, sum_p)


def matcher_cached() -> bool:
    """Whether the matcher's solver is in Numba's disk cache, i.e. not a first run
    (:func:`segbench.compilation.is_cached`)."""
    return is_cached(_match_sequence)


def tiny_pair() -> tuple[np.ndarray, np.ndarray]:
    """An 8 x 8 soft map and a human map one row off it: the smallest input that runs
    every boundary kernel (the warm-ups compile on it)."""
    pb = np.zeros((8, 8))
    pb[4, 1:7] = 0.7
    gt = np.zeros((8, 8), bool)
    gt[3, 1:7] = True
    return pb, gt


def warm_up_kernels() -> None:
    """Compile (or load from the cache) the kernels :func:`evaluate_image` calls except
    the matcher's, on an 8 x 8 map; :func:`warm_up_matcher` compiles the matcher (the
    two can run in two processes: :func:`segbench.compilation.compile_ahead`)."""
    pb, gt = tiny_pair()
    _, frames = _frames(pb, default_thresholds(3), True, 1)
    empty = np.zeros(0, np.int64)
    covered_counts(
        np.arange(len(frames), dtype=np.int64),
        np.zeros(2, np.int64),
        empty,
        empty,
        np.zeros(0, np.int8),
        1,
    )


def warm_up_matcher() -> None:
    """Compile (or load from the cache) the matcher alone: one pair of 8 x 8 maps."""
    pb, gt = tiny_pair()
    shared_matcher(gt.shape).match(gt, pb > 0)


def human_counts(
    gt_boundaries,
    *,
    max_dist: float = DEFAULT_MAX_DIST,
    per_annotator: bool = False,
    thin_gt: bool = False,
    lone: str = "skip",
) -> np.ndarray:
    """Counts of each annotator scored against the others (leave one out), pooled.

    Every annotator's map is treated as a detection and matched against each of the
    other annotators of the image, with the benchmark's rules (a detected pixel counts
    if it matches any other annotator; recall pools the others' pixels), as
    ``boundaryBenchHuman.m`` of the BSDS300 code. Each unordered pair is solved once
    and serves both directions (:meth:`Matcher.match` is the same matching either way
    round unless the two maps have as many pixels): K(K-1)/2 solves, not K(K-1).

    Parameters
    ----------
    per_annotator : bool, default False
        Return one row per annotator instead of their sum.
    thin_gt : bool, default False
        Thin every map first (as BSDS300's ``boundaryPR.m`` thins both the human maps,
        lines 37-40, and the map scored, line 53). A no-op on maps that are already
        thin, such as the BSDS500 ``Boundaries``.
    lone : {'skip', 'count'}, default 'skip'
        An image with a single annotator: 'skip' gives zeros; 'count' gives
        ``(0, 0, 0, pixels)``, as ``boundaryBenchHuman.m``, which scores a lone map
        against no one (``boundaryPR`` with an empty list), so its pixels join the
        precision denominator unmatched.

    Returns
    -------
    (4,) or (K, 4) int64
        cntR, sumR, cntP, sumP, summed over annotators (or per annotator). An image with
        fewer than two annotators contributes zeros (with ``lone='count'``, one
        annotator contributes its pixel count to sumP).
    """
    if lone not in ("skip", "count"):
        raise InputError(f"lone must be 'skip' or 'count', not {lone!r}")
    humans = as_boundary_list(gt_boundaries)
    if thin_gt:
        humans = _thinned(humans)
    rows = np.zeros((len(humans), 4), np.int64)
    if len(humans) >= 2:
        matcher = shared_matcher(humans[0].shape, max_dist)
        sizes = [int(np.count_nonzero(h)) for h in humans]
        acc = [np.zeros(h.shape, bool) for h in humans]
        for j, k in combinations(range(len(humans)), 2):
            mj, mk = matcher.match(humans[j], humans[k])
            # Matcher.match takes the smaller map as its rows whichever comes first,
            # so match(hk, hj) is the same matching, swapped: one solve serves both
            # directions (only maps of equal size are solved again, as bmap1 leads)
            kj = matcher.match(humans[k], humans[j]) if sizes[j] == sizes[k] else (mk, mj)
            acc[j] |= mj
            rows[j, 0] += int(mk.sum())
            rows[j, 1] += sizes[k]
            acc[k] |= kj[0]
            rows[k, 0] += int(kj[1].sum())
            rows[k, 1] += sizes[j]
        for j in range(len(humans)):
            rows[j, 2] = int(acc[j].sum())
            rows[j, 3] = sizes[j]
    elif lone == "count":
        rows[0, 3] = int(np.count_nonzero(humans[0]))
    return rows if per_annotator else rows.sum(axis=0)
