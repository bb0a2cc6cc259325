"""SemanticEval: the streaming, mergeable evaluator over the pure functions, on the
streaming base every evaluator of segbench shares (:class:`StreamEvalBase`)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from os import PathLike

import numpy as np

from .. import hooks
from ..errors import InputError
from ..result import Result, provenance
from ..result import json_ready as _plain
from ..streaming import StreamEvalBase
from . import _core
from ._core import (
    DEFAULT_DILATION,
    DEFAULT_IGNORE,
    Counts,
    LabelError,
    as_label_stack,
    check_options,
    check_pair,
    kernel_ignore,
    label_error,
    plan,
    run_task,
)
from ._metrics import (
    CLASS_METRICS,
    METRIC_NAMES,
    boundary_iou,
    class_areas,
    confusion_metrics,
)

REFERENCES = {
    "IoU, Acc, Dice, mIoU, mAcc, mDice, aAcc": "mmsegmentation IoUMetric 1.2.2",
    "fwIoU": "detectron2 SemSegEvaluator",
    "BIoU, mBIoU": "boundary-iou-api mask_to_boundary (37d2558), summed per class",
}


#: Most classes an evaluator takes: labels of a 16-bit PNG are 0..65535. The counts are
#: a classes x classes table (8 bytes a cell), so this many already need 34 GB.
MAX_CLASSES = 65536


def _physical_memory() -> int | None:
    """This machine's memory in bytes, where the system says (not on Windows)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def _check_class_count(n: int) -> None:
    if n > MAX_CLASSES:
        raise InputError(
            f"{n} classes: at most {MAX_CLASSES} (a 16-bit PNG label map holds labels "
            f"0..65535, and the confusion table of {n} classes would need "
            f"{8 * n * n / 1e9:,.0f} GB)"
        )
    # the table and a float copy of it for the metrics (8000 classes: 1.2 GB at the
    # peak for a 0.5 GB table): refused before any work rather than by a MemoryError
    need, have = 16 * n * n, _physical_memory()
    if have is not None and need > have:
        raise InputError(
            f"{n} classes need a {n} x {n} confusion table and a copy of it, about "
            f"{need / 1e9:,.1f} GB, more than this machine's {have / 1e9:,.1f} GB of memory"
        )


def class_names(classes) -> list[str]:
    """The class names of ``classes``: a count (``class_0``, ``class_1``, ...) or a list
    of distinct names.

    Raises
    ------
    InputError
        (a ValueError) for a count below 1 or above :data:`MAX_CLASSES`, no or
        duplicated names, or anything else.
    """
    if isinstance(classes, (int, np.integer)) and not isinstance(classes, bool):
        if classes < 1:
            raise InputError(f"classes must be at least 1, got {classes}")
        _check_class_count(int(classes))
        return [f"class_{i}" for i in range(int(classes))]
    if classes is None:
        raise InputError("classes is required: the number of classes or their names")
    if isinstance(classes, Sequence) and not isinstance(classes, (str, bytes)):
        names = [str(n) for n in classes]
        if not names:
            raise InputError("classes: the list of names is empty")
        dup = sorted(n for n, k in Counter(names).items() if k > 1)
        if dup:
            raise InputError(f"classes: duplicated names {dup}")
        _check_class_count(len(names))
        return names
    raise InputError(f"classes must be a count or a list of names, got {classes!r}")


class SemanticEval(StreamEvalBase):
    """Semantic segmentation evaluation: IoU family, Dice and boundary IoU.

    Feed it label-map pairs (in memory, PNG files or two folders), then read
    :meth:`report`, :meth:`results`, :meth:`confusion` or :meth:`summarize`. The whole
    state is integer counts (one confusion matrix and three per-class band counts), so
    evaluators pickle, and evaluators fed disjoint shards :meth:`merge` into exactly the
    single-process result.

    It is a streaming evaluator as :class:`segbench.BoundaryEval` is, on the same base
    (:class:`StreamEvalBase`): an update counts all of its pairs or none, :meth:`merge`
    takes another evaluator or its :meth:`state_dict` (plain arrays), :meth:`reset`,
    :meth:`close` and ``with`` blocks work alike, and :meth:`compute` gives the result.
    Its state is a sum, not a record per image: every number it reports is a function
    of summed counts, so memory stays one C x C matrix however many images are counted.

    Parameters
    ----------
    classes : int or sequence of str
        Number of classes, or their names (``per_class`` is then keyed by name).
    ignore_index : int or None, keyword-only
        Ground-truth value left out on both sides (default 255, as mmseg, Cityscapes and
        VOC). ``None``: every pixel counts.
    reduce_zero_label : bool, keyword-only
        mmseg's rule for datasets whose files put "other" at 0 (ADE20K): ground-truth 0
        becomes 255 and every other label drops by one; predictions are already in the
        reduced space. Requires ``ignore_index=255``.
    boundary_dilation : float or None, keyword-only
        Boundary-IoU band width as a fraction of each image's diagonal (default 0.02);
        ``None`` skips boundary IoU (mBIoU is then ``nan``).
    workers : int, keyword-only
        Threads used by :meth:`update` on large inputs (default 1). Results do not depend
        on it.

    Notes
    -----
    Per-class IoU, Acc, Dice and mIoU, mAcc, mDice, aAcc follow mmsegmentation's
    ``IoUMetric`` 1.2.2: a class with no pixel on either side has no IoU/Dice, one without
    ground truth has no Acc, and both are left out of the means; a class predicted but
    never in the ground truth scores IoU 0 and counts toward mIoU (detectron2 would drop
    it). fwIoU is detectron2's. Boundary IoU sums, per class over the split, the band
    intersection and union of the authors' ``mask_to_boundary`` on ``gt == c`` and
    ``pred == c`` with ignored ground-truth pixels removed from both bands (the
    prediction at those pixels still shapes its band). "Not computed" is ``nan``.

    Examples
    --------
    >>> import numpy as np
    >>> ev = SemanticEval(["sky", "road"])
    >>> ev.update(np.array([[0, 0], [1, 255]]), np.array([[0, 1], [1, 1]]))
    >>> round(ev.report()["metrics"]["mIoU"], 4)
    0.5
    >>> ev.confusion()
    array([[1, 1],
           [0, 1]], dtype=uint64)
    """

    def __init__(
        self,
        classes: int | Sequence[str],
        *,
        ignore_index: int | None = DEFAULT_IGNORE,
        reduce_zero_label: bool = False,
        boundary_dilation: float | None = DEFAULT_DILATION,
        workers: int = 1,
    ):
        if isinstance(classes, (int, np.integer)) and not isinstance(classes, bool):
            check_options(classes, ignore_index, reduce_zero_label, boundary_dilation)
        names = class_names(classes)
        check_options(len(names), ignore_index, reduce_zero_label, boundary_dilation)
        if (
            isinstance(workers, bool)
            or not isinstance(workers, (int, np.integer))
            or workers < 1
        ):
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        self._names = names
        self._ignore = None if ignore_index is None else int(ignore_index)
        self._rzl = bool(reduce_zero_label)
        self._dilation = None if boundary_dilation is None else float(boundary_dilation)
        super().__init__(int(workers))

    def _reset_state(self) -> None:
        self._counts = Counts.zeros(len(self._names))  # the whole state, with _n_images
        self._n_images = 0

    # --- properties --------------------------------------------------------------------

    @property
    def class_names(self) -> list[str]:
        return list(self._names)

    @property
    def num_classes(self) -> int:
        return len(self._names)

    @property
    def ignore_index(self) -> int | None:
        return self._ignore

    @property
    def reduce_zero_label(self) -> bool:
        return self._rzl

    @property
    def boundary_dilation(self) -> float | None:
        return self._dilation

    @property
    def n_images(self) -> int:
        """Number of label-map pairs counted."""
        return self._n_images

    @property
    def n_pixels(self) -> int:
        """Number of pixels counted (ground truth not ignored)."""
        return int(self._total().conf.sum())

    @property
    def stats(self) -> list[float]:
        """The six means in :data:`METRIC_NAMES` order (``nan`` = not computed)."""
        m = self.report()["metrics"]
        return [m[k] for k in METRIC_NAMES]

    # --- feeding -----------------------------------------------------------------------

    def update(self, gt, pred) -> None:
        """Count one pair (H, W) or a batch (N, H, W), any integer dtype.

        Anything with ``__array__`` works (a CPU torch tensor, without importing torch).

        Raises
        ------
        ValueError (:class:`segbench.errors.InputError`)
            Shapes that differ, non-integer data, or a label outside [0, C) other than a
            ground-truth pixel equal to ``ignore_index``; the message names the pixel and
            nothing from the call is counted.
        """
        g = as_label_stack(gt, "ground truth")
        p = as_label_stack(pred, "prediction")
        check_pair(g, p)
        self._count(g, p)
        self._n_images += g.shape[0]

    def update_png(self, gt: str | PathLike, pred: str | PathLike) -> None:
        """Count one pair of label-map files (8/16-bit gray or palette PNG, .npy, .mat).

        Errors (unreadable or RGB file, shapes, labels) are
        :class:`segbench.errors.InputError` naming the file.
        """
        read_and_count((gt, pred), self._settings(), self._counts)
        self._n_images += 1

    def update_folders(
        self,
        gt_dir: str | PathLike,
        pred_dir: str | PathLike,
        *,
        recursive: bool = False,
        gt_suffix: str = ".png",
        pred_suffix: str = ".png",
        workers: int | None = None,
        progress: bool = False,
    ) -> int:
        """Count every pair of two folders: ``segbench.evaluate("semantic", ...)``
        (the engine's folder run, what ``segbench semantic`` runs), its summed counts
        added to this evaluator.

        Files are paired by key: the file name without ``gt_suffix`` / ``pred_suffix``
        (mmseg's ``seg_map_suffix`` / ``img_suffix`` rule, see
        :func:`segbench.datasets.pair_folders`). ``recursive`` walks the subfolders of
        both sides, and a prediction is found wherever it sits, so nested ground truth
        (Cityscapes) pairs with flat predictions.

        Parameters
        ----------
        gt_dir, pred_dir : path
        recursive : bool, keyword-only
        gt_suffix, pred_suffix : str, keyword-only
            What ends every file name on each side (default ``.png``); other files are
            not considered.
        workers : int, keyword-only
            Local worker processes (default 1); the counts are the same for any
            number. Saved records, a Dask cluster and per-image rows are
            ``segbench.evaluate("semantic", ...)``'s.
        progress : bool, keyword-only
            Show a progress bar on stderr.

        Returns
        -------
        int
            Number of pairs counted.

        Raises
        ------
        InputError
            A ground-truth key without prediction, a key found twice on one side (both
            list the keys), no ground truth, or any per-file problem (naming the file).
            Nothing is counted unless every pair succeeds.
        """
        # The folder run is the registry's and the engine's, which sit above this
        # family and import it: this class cannot import them without a cycle, and a
        # second folder loop here could disagree with theirs. So it calls the one
        # way in, segbench.evaluate, through the slot segbench/__init__.py (the
        # composition root) fills: this layer owns the need ("run a benchmark by its
        # name"), the top owns the answer, as for Result.compare.
        if hooks.evaluate is None:  # pragma: no cover - segbench/__init__ always sets it
            raise RuntimeError("segbench.hooks.evaluate is not set: import segbench")
        run = hooks.evaluate(
            "semantic",
            gt_dir,
            pred_dir,
            None,
            classes=self._names,
            ignore_index=self._ignore,
            reduce_zero_label=self._rzl,
            boundary_dilation=self._dilation,
            recursive=recursive,
            gt_suffix=gt_suffix,
            pred_suffix=pred_suffix,
            workers=workers or 1,
            progress=progress,
        )
        counted = run.detail
        self._absorb((counted._total(), counted._n_images))
        return counted._n_images

    def merge(self, other) -> None:
        """Add another evaluator's counts (a disjoint shard of the split) to this one,
        or those of its :meth:`state_dict`.

        Raises
        ------
        ValueError
            If the two differ in classes, ignore_index, reduce_zero_label or
            boundary_dilation, or if this evaluator holds ``other``'s counts already
            (the same evaluator or state merged twice).
        TypeError
            ``other`` is neither a SemanticEval nor a mapping.
        """
        super().merge(other)

    def state_dict(self) -> dict:
        """The whole state as plain data (numpy arrays and JSON values, no object of
        segbench's), for :meth:`merge` or :meth:`load_state_dict` in another process.

        Keys: the settings (``classes``, ``num_classes``, ``ignore_index``,
        ``reduce_zero_label``, ``boundary_dilation``), ``layout`` (of this dict),
        ``family`` ("semantic"), ``n_images``, ``shards`` (tokens of the evaluators
        whose counts it holds, so that one merged twice is refused), and the counts
        as int64 arrays:
        ``conf`` (C*C, the confusion matrix row by row, row = ground truth),
        ``gt_band``, ``pred_band``, ``band_inter`` (C each).
        """
        return super().state_dict()

    # --- reading -----------------------------------------------------------------------

    def confusion(self) -> np.ndarray:
        """The (C, C) uint64 confusion matrix; row = ground-truth class, column = predicted."""
        c = self.num_classes
        return self._total().conf.reshape(c, c).astype(np.uint64)

    def results(self) -> dict:
        """Everything, per class with counts: the means, ``per_class`` (a list of dicts with
        name, IoU, Acc, Dice, BIoU, tp, gt_area, pred_area, band_intersection,
        band_union), ``n_images``, ``n_pixels`` and the settings."""
        total = self._total()
        conf = total.conf.reshape(self.num_classes, self.num_classes)
        m = confusion_metrics(conf)
        inter, union, biou, mbiou = self._boundary(total)
        tp, gt_area, pred_area = class_areas(conf)  # float64, exact below 2**53 pixels
        rows = []
        for i, name in enumerate(self._names):
            rows.append(
                {
                    "name": name,
                    "IoU": float(m["IoU"][i]),
                    "Acc": float(m["Acc"][i]),
                    "Dice": float(m["Dice"][i]),
                    "BIoU": float(biou[i]),
                    "tp": int(tp[i]),
                    "gt_area": int(gt_area[i]),
                    "pred_area": int(pred_area[i]),
                    "band_intersection": None if inter is None else int(inter[i]),
                    "band_union": None if union is None else int(union[i]),
                }
            )
        out = {k: m[k] for k in ("mIoU", "fwIoU", "mAcc", "aAcc", "mDice")}
        out["mBIoU"] = mbiou
        out.update(
            per_class=rows,
            n_images=self._n_images,
            n_pixels=int(conf.sum()),
            **self._config(),
        )
        return out

    def report(self) -> dict:
        """The report in segbench's result shape, plus ``per_class``.

        Keys: ``family`` ("semantic"), ``metrics`` (mIoU, fwIoU, mAcc, aAcc, mDice, mBIoU
        as fractions), ``per_class`` ({name: {IoU, Acc, Dice, BIoU}}), ``per_item`` (empty:
        the evaluator keeps sums, not images), ``curves`` (empty) and ``provenance``
        (versions, time, settings, and the references each number is verified against).
        ``nan`` = not computed; :meth:`to_json` writes it as null.
        """
        return self._result().report()

    def to_json(self, path: str | PathLike | None = None, *, indent: int = 1) -> str:
        """:meth:`report` as JSON text (``nan`` as null); written to ``path`` when given."""
        return self._result().to_json(path, indent=indent)

    def summary_lines(self) -> list[str]:
        """The per-class table and the means, as :meth:`summarize` prints them."""
        res = self.results()
        cols = ["IoU", "Acc", "Dice"] + (["BIoU"] if self._dilation is not None else [])
        width = max(5, *(len(r["name"]) for r in res["per_class"]))

        def pct(v):
            return "-" if v is None or np.isnan(v) else f"{100 * v:.2f}"

        head = f"{'Class':<{width}} |" + "".join(f"{c:>7}" for c in cols)
        rule = "-" * len(head)
        lines = [head, rule]
        for r in res["per_class"]:
            lines.append(
                f"{r['name']:<{width}} |" + "".join(f"{pct(r[c]):>7}" for c in cols)
            )
        means = [k for k in METRIC_NAMES if k != "mBIoU" or self._dilation is not None]
        lines += [
            rule,
            "  ".join(f"{k} {pct(res[k])}" for k in means)
            + f"   ({res['n_images']} images, {res['n_pixels']} pixels)",
        ]
        return lines

    def summarize(self) -> str:
        """Print the per-class table and the means (percent); returns the text."""
        text = "\n".join(self.summary_lines())
        print(text)
        return text

    def compute(self) -> Result:
        """The :class:`~segbench.result.Result` :meth:`report` renders: ``metrics``,
        ``per_class``, ``provenance`` (no per-item rows: the state is a sum)."""
        return self._result()

    def __repr__(self) -> str:
        return (
            f"SemanticEval({self.num_classes} classes, ignore_index={self._ignore}, "
            f"reduce_zero_label={self._rzl}, boundary_dilation={self._dilation}, "
            f"{self._n_images} images)"
        )

    # --- the streaming base's state ----------------------------------------------------

    def _state_fields(self) -> dict:
        c = self._counts
        return {
            "family": "semantic",
            "n_images": self._n_images,
            "conf": c.conf.copy(),
            "gt_band": c.gt_band.copy(),
            "pred_band": c.pred_band.copy(),
            "band_inter": c.band_inter.copy(),
        }

    def _is_state(self, state) -> bool:
        return isinstance(state, Mapping) and state.get("family") == "semantic"

    def _not_a_state(self, state) -> Exception:
        if not isinstance(state, Mapping):
            return self._foreign(state)
        return InputError("not a SemanticEval state_dict (no family 'semantic')")

    def _mergeable(self, other) -> bool:
        return isinstance(other, SemanticEval)

    def _foreign(self, other) -> Exception:
        return TypeError(f"can only merge a SemanticEval, got {type(other).__name__}")

    def _other_settings(self, differ) -> Exception:
        return ValueError(
            "cannot merge evaluators with different settings: "
            + ", ".join(f"{k} {mine!r} vs {theirs!r}" for k, mine, theirs in differ)
        )

    def _read_state(self, state) -> tuple[Counts, int]:
        c = self.num_classes
        n = state.get("n_images")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise InputError(f"state_dict: n_images {n!r} is not a count")
        counts = []
        for key, size in (
            ("conf", c * c),
            ("gt_band", c),
            ("pred_band", c),
            ("band_inter", c),
        ):
            arr = np.asarray(state.get(key, np.zeros(0)))
            if arr.shape != (size,) or arr.dtype.kind not in "iu":
                raise InputError(
                    f"state_dict: {key!r} is not {size} integer counts "
                    f"(shape {arr.shape}, dtype {arr.dtype})"
                )
            if (arr < 0).any():
                raise InputError(f"state_dict: {key!r} has a negative count")
            counts.append(arr.astype(np.int64))
        part = Counts(*counts)
        if (part.band_inter > np.minimum(part.gt_band, part.pred_band)).any():
            raise InputError("state_dict: a band intersection exceeds its bands")
        return part, int(n)

    def _absorb(self, part: tuple[Counts, int]) -> None:
        counts, n = part
        self._add(counts)
        self._n_images += n

    # --- internals ---------------------------------------------------------------------

    def _result(self) -> _SemanticResult:
        res = self.results()
        prov = provenance(
            **self._config(), n_images=res["n_images"], n_pixels=res["n_pixels"]
        )
        prov["status"] = "parity_verified"
        prov["references"] = dict(REFERENCES)
        return _SemanticResult(
            "semantic",
            {k: res[k] for k in METRIC_NAMES},
            provenance=prov,
            per_class={
                row["name"]: {k: row[k] for k in CLASS_METRICS} for row in res["per_class"]
            },
        )

    def _config(self) -> dict:
        return {
            "classes": list(self._names),
            "num_classes": self.num_classes,
            "ignore_index": self._ignore,
            "reduce_zero_label": self._rzl,
            "boundary_dilation": self._dilation,
        }

    def _settings(self) -> tuple:
        return (self.num_classes, self._ignore, self._rzl, self._dilation)

    def _total(self) -> Counts:
        return self._counts

    def _add(self, counts: Counts) -> None:
        self._counts.add(counts)

    def _boundary(self, total: Counts):
        if self._dilation is None:
            nan = np.full(self.num_classes, np.nan)
            return None, None, nan, float("nan")
        union = total.gt_band + total.pred_band - total.band_inter
        biou, mbiou = boundary_iou(total.band_inter, union)
        return total.band_inter, union, biou, mbiou

    def _count(self, g: np.ndarray, p: np.ndarray) -> None:
        """Count a checked stack, all or nothing: each slot of the plan counts into fresh
        counts, added to the state only when every slot succeeded."""
        c = self.num_classes
        ign = kernel_ignore(self._ignore)
        slots = plan(g.shape, self._workers, self._dilation is not None)
        if len(slots) == 1:  # into the state itself, which an error leaves as it was
            _core.count_stack(
                g, p, c, self._ignore, self._rzl, self._dilation, self._counts
            )
            return
        args = (g, p, c, ign, self._rzl, self._dilation)

        def run(tasks):
            counts = Counts.zeros(c)
            for task in tasks:
                if run_task(task, *args, counts) >= 0:
                    return None
            return counts

        # the calling thread counts the first slot, the pool the others (one hand-off
        # fewer than a map over every slot: for one ADE-size image cut in two, 190 us
        # instead of 205, and 225 uncut); each into fresh counts, added when all are
        parts = self._run_whole([partial(run, slot) for slot in slots], self._workers - 1)
        if any(part is None for part in parts):
            raise label_error(g, p, c, ign, self._rzl)
        for part in parts:
            self._add(part)


@dataclass
class _SemanticResult(Result):
    """segbench's result shape plus ``per_class`` ({name: {IoU, Acc, Dice, BIoU}}).

    ``notes`` holds provenance entries added when the result is read or written: the
    engine sets its own ``provenance`` after the family's summary, and this keeps the
    references, the status and the evaluator's settings (class names, ``n_pixels``)
    that :meth:`SemanticEval.to_json` reports.
    """

    per_class: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict, repr=False, compare=False)

    def report(self) -> dict:
        """The report dict, ``nan`` kept (``to_dict`` / ``to_json`` make it null)."""
        return {
            "family": self.family,
            "metrics": self.metrics,
            "per_class": self.per_class,
            "per_item": self.per_item,
            "curves": self.curves,
            "provenance": self._provenance(),
        }

    def to_dict(self) -> dict:
        out = self.report()
        if self.name:  # a run's result is named; an evaluator's report is not
            out = {"family": out.pop("family"), "name": self.name, **out}
        return _plain(out)

    def _provenance(self) -> dict:
        if not self.notes:
            return self.provenance
        prov = {**self.provenance, **{k: v for k, v in self.notes.items() if k != "params"}}
        prov["params"] = {
            **self.provenance.get("params", {}),
            **self.notes.get("params", {}),
        }
        return prov


# --- per-file work (module level, so worker processes can run it) --------------------------


def count_pair(
    gt: np.ndarray,
    pred: np.ndarray,
    gt_path,
    pred_path,
    settings,
    into: Counts | None = None,
) -> Counts:
    """Count one pair of label maps read from ``gt_path`` and ``pred_path`` (added to
    ``into`` when given, which an error leaves as it was).

    Errors (shapes, labels) are :class:`~segbench.errors.InputError` naming the file.
    """
    num_classes, ignore, rzl, dilation = settings
    if gt.shape != pred.shape:
        raise InputError(
            f"prediction is {pred.shape[0]}x{pred.shape[1]} but its ground "
            f"truth {gt_path} is {gt.shape[0]}x{gt.shape[1]}",
            pred_path,
        )
    try:
        return _core.count_stack(
            gt[None], pred[None], num_classes, ignore, rzl, dilation, into
        )
    except LabelError as exc:
        raise InputError(
            exc.problem, gt_path if exc.side == "ground truth" else pred_path
        ) from None


def read_and_count(paths, settings, into: Counts | None = None) -> Counts:
    """Read one pair of label-map files and count it (into ``into`` when given);
    InputError names the file."""
    from ..io import read_stored_label_pair  # uint8 maps stay uint8

    gt_path, pred_path = paths
    gt, pred = read_stored_label_pair(gt_path, pred_path)
    return count_pair(gt, pred, gt_path, pred_path, settings, into)
