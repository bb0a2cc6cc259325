"""What a benchmark family declares, so that one engine can run every family.

A family (boundary, region, human consistency, ...) is a :class:`Family`: plain
module-level functions for the four stages of the pipeline and nothing else. The engine
(:func:`segbench.engine.run`) pairs inputs, maps ``evaluate`` over them, keeps the
records, and calls ``summarize`` and ``write``; a family module never imports the
engine, and the engine names no family.

This module sits below both (it imports neither), so each family module can build its
spec here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import InputError

__all__ = ["Family", "JointTask"]


@dataclass(frozen=True)
class Family:
    """The spec of one benchmark family.

    Attributes
    ----------
    name : str
        Identifier used in record keys, record folders and result files
        (``'boundary'``, ``'region'``, ``'human_boundary'``, ...).
    version : int
        Record format version; bump it whenever a change to ``evaluate`` would make
        records saved earlier wrong, so the store recomputes them.
    defaults : mapping of str to value
        The parameters a record depends on, with their defaults. ``evaluate`` gets
        exactly these keys; they are part of every record's key.
    evaluate : callable
        ``evaluate(sample, params) -> record``. Pure: the same sample and parameters
        give the same record in any process. ``sample`` is a
        :class:`segbench.datasets.Sample` (a dataset item and its prediction file).
    to_json, from_json : callable
        ``record -> dict`` of plain JSON values, and back. ``from_json`` raises
        (``KeyError``, ``TypeError``, ``ValueError``) on a payload that is not a valid
        record (wrong shapes, non-finite numbers, counts that cannot be, such as more
        pixels matched than there are), so the store can recompute it.
    validate : callable, optional
        ``(record, params) -> None``: raises ``ValueError`` where a record read back
        does not fit the parameters of its key (e.g. one entry per threshold of
        ``nthresh``). The store calls it after ``from_json``, so no summary sees a
        record that did not validate.
    summarize : callable
        ``summarize(ids, records, params, options) -> Result``, pure; ``ids`` sorted.
    write : callable, optional
        ``write(out_dir, result, ids, records, options)`` writes the family's own files
        (the official text files, plots); the engine writes ``result.json`` and
        ``per_item.csv`` itself.
    prediction_exts : callable, optional
        ``params -> tuple of extensions`` the family reads predictions from; None for a
        family that scores the ground truth alone (human consistency).
    missing_hint : callable, optional
        ``(params, extensions found in the folder) -> str``: what to tell a user whose
        prediction folder has no usable file (e.g. soft maps given to ``region``).
    check : callable, optional
        ``params -> None``, raising :class:`~segbench.errors.InputError` on a bad value.
    check_predictions : callable, optional
        ``(predictions, params) -> None``, with ``predictions`` the paired files
        ``{id: path}`` of a prediction folder: a look at a few of them before the run,
        warning of files that look like another kind of map than ``params`` read
        (soft boundary maps given as label maps).
    label : str
        Short name for progress bars.
    input_files : callable, optional
        ``(sample, params) -> {role: [paths]}``: files a record depends on besides the
        ground truth and the prediction (a photograph, a folder's segmentations);
        their digests join the record key.
    joint_tasks : callable, optional
        ``(ids, records, params) -> list of JointTask``: work that needs several
        items at once (e.g. pairs of different images), planned from the per-item
        records. Their records reach ``summarize`` as the keyword ``joint`` (a list in
        task order).
    evaluate_joint : callable, optional
        ``(samples, payload, params) -> record``, pure; ``samples`` maps each id of the
        task to its :class:`~segbench.datasets.Sample`.
    joint_to_json, joint_from_json : callable, optional
        As ``to_json``/``from_json`` for joint records.
    summary_defaults : mapping of str to value
        Parameters of ``summarize`` only (e.g. the F-measure's ``alpha``), with their
        defaults: recorded in a result's parameters, not in record keys, so changing
        them recomputes no record. ``summarize`` gets them merged into ``params``.
    resampler : callable, optional
        ``(ids, records, params, options) -> statistic``, where ``statistic(weights)``
        maps a (B, N) array of image weights (how many times each image is drawn) to
        ``{score: (B,) array}``: the headline scores ``summarize`` gives on the drawn
        records. Used for bootstrap intervals and paired comparisons
        (:mod:`segbench.resampling`).
    item_score : str, optional
        The per-item column (higher is better) that image-by-image tests compare
        (e.g. each image's best F).
    warm_up : callable, optional
        ``params -> None``: run the family's compiled kernels once on a tiny input. The
        engine calls it in the main process before it starts local worker processes,
        so a first run compiles once (and says so once) and the workers inherit the
        compiled code instead of each compiling its own.
    excluded : callable, optional
        ``(record, params) -> str or None``: why an item cannot be scored under these
        parameters (e.g. strong boundaries asked of more annotators than an image
        has: nothing to score against), or None to keep it. The engine leaves such
        items out of the summary and the files, warns once per reason naming how many,
        records them in the result's provenance (``excluded``), and refuses a run that
        leaves no item.
    open_ground_truth : callable, optional
        ``(gt, split) -> Dataset or None``: the family's own layouts of ``--gt`` (a
        dataset tree the common readers do not know, such as SBD's or Cityscapes'),
        tried first when ``gt`` is a path; None hands it to the common readers.
    pair_predictions : callable, optional
        ``(ids, pred_dir) -> {id: file} or None``: the family's own layout of
        ``--pred`` (e.g. one folder per class); None pairs ``<id>.<ext>`` files as
        usual.
    per_image_files : tuple of str
        Endings of the per-image files ``write`` puts in the run folder
        (``<id><ending>``, e.g. ``'_ev1.txt'``; ``'<folder>/<ending>'`` for files in a
        subfolder, e.g. ``'agreement/.png'``). After ``write``, the engine removes
        those of ids this run did not score that an earlier run in the folder wrote
        (the ids with a record of this family there), so that the folder's files
        agree with its summary (BSR's collect scripts read every such file).
    """

    name: str
    version: int
    defaults: Mapping[str, Any]
    evaluate: Callable
    to_json: Callable
    from_json: Callable
    summarize: Callable
    write: Callable | None = None
    prediction_exts: Callable | None = None
    missing_hint: Callable | None = None
    check: Callable | None = None
    check_predictions: Callable | None = None
    label: str = field(default="")
    input_files: Callable | None = None
    joint_tasks: Callable | None = None
    evaluate_joint: Callable | None = None
    joint_to_json: Callable | None = None
    joint_from_json: Callable | None = None
    summary_defaults: Mapping[str, Any] = field(default_factory=dict)
    resampler: Callable | None = None
    item_score: str | None = None
    warm_up: Callable | None = None
    excluded: Callable | None = None
    validate: Callable | None = None
    open_ground_truth: Callable | None = None
    pair_predictions: Callable | None = None
    per_image_files: tuple[str, ...] = ()

    @property
    def needs_predictions(self) -> bool:
        return self.prediction_exts is not None

    def resolve(self, params: Mapping[str, Any] | None = None) -> dict:
        """This family's parameters: ``defaults`` updated by the keys of ``params`` that
        the family knows (other keys belong to other families and are ignored)."""
        out = _typed(self.defaults, params or {})
        if self.check is not None:
            self.check(out)
        return out

    def resolve_summary(self, params: Mapping[str, Any] | None = None) -> dict:
        """This family's summary parameters: ``summary_defaults`` updated by ``params``."""
        return _typed(self.summary_defaults, params or {})


def _typed(defaults: Mapping[str, Any], params: Mapping[str, Any]) -> dict:
    """``defaults`` updated by ``params``, each value of its default's JSON type."""
    out = {k: params.get(k, v) for k, v in defaults.items()}
    for k, v in defaults.items():  # keep JSON types stable in record keys
        if out[k] is None:  # None is a meaning (e.g. "no limit")
            continue
        try:
            if isinstance(v, bool):
                out[k] = bool(out[k])
            elif isinstance(v, int) and not isinstance(out[k], bool):
                if int(out[k]) != out[k]:
                    raise InputError(f"{k} must be an integer, got {out[k]!r}")
                out[k] = int(out[k])
            elif isinstance(v, float):
                out[k] = float(out[k])
        except (TypeError, ValueError) as exc:  # "x", [0.1, 0.2]: named, not a builtin's
            if isinstance(exc, InputError):
                raise
            kind = "an integer" if isinstance(v, int) else "a number"
            raise InputError(f"{k} must be {kind}, got {out[k]!r}") from None
    return out


@dataclass(frozen=True)
class JointTask:
    """Work of a family that reads several items at once.

    Attributes
    ----------
    key : str
        Stable name of the task, unique within the family (it names its record).
    ids : tuple of str
        The items it reads.
    payload : object
        Plain JSON-able data the family's ``evaluate_joint`` needs (e.g. the pairs of
        ids to score); its digest joins the record key.
    """

    key: str
    ids: tuple
    payload: Any = None


def common_exts(families: Sequence[Family], params: Mapping[str, Any]) -> tuple[str, ...]:
    """Prediction extensions every family of ``families`` reads (in the first's order)."""
    lists = [
        f.prediction_exts(f.resolve(params))
        for f in families
        if f.prediction_exts is not None  # needs_predictions, in a form mypy narrows
    ]
    if not lists:
        return ()
    return tuple(e for e in lists[0] if all(e in other for other in lists[1:]))
