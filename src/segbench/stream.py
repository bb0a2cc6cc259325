"""Streaming evaluators: the boundary and region benchmarks fed arrays, one batch at a
time, in a training loop or a notebook.

:class:`BoundaryEval` and :class:`RegionEval` are thin stateful shells over the family
specs that ``segbench boundary`` and ``segbench region`` run
(:data:`segbench.boundary.BOUNDARY`, :data:`segbench.region.REGION`): ``update``
makes each image a :class:`~segbench.datasets.Sample` and calls the family's own
``evaluate`` (the same matcher and counts); ``compute`` calls the same summary and
result code as the engine (:func:`segbench.engine.summarize_records`). The two cannot
disagree with a folder run. Their state is the per-image records (counts per
threshold, a few KB an image), never the maps, and it merges: ranks of a distributed
job gather :meth:`~BoundaryEval.state_dict` and :meth:`~BoundaryEval.merge` them.

They and :class:`segbench.semantic.SemanticEval` are built on one base,
:class:`StreamEvalBase` (whole updates, threads, merging, state dicts, pickling);
``SemanticEval``'s state is a sum of counts rather than per-image records.

:func:`human_scores` scores the annotators of a split against each other once, for
the human point on a plot.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from os import PathLike

import numpy as np

from .errors import InputError
from .result import Result
from .streaming import StreamEvalBase

__all__ = ["BoundaryEval", "HumanScores", "RegionEval", "human_scores"]

#: Version of the :meth:`state_dict` layout.
STATE_VERSION = 1


def _evaluate_in_thread(family, sample, params, threads):
    """Pool task: one image's record, with ``threads`` threads for its kernels."""
    from .boundary import threads_in_this_thread

    try:
        with threads_in_this_thread(threads):
            return family.evaluate(sample, params)
    finally:
        sample.release()


def _nested_numbers(value) -> bool:
    """Whether ``value`` is a map written as nested lists of numbers (``arr.tolist()``):
    one array, not a batch of its rows."""
    import numbers

    first = value[0] if len(value) else None
    return (
        isinstance(first, (list, tuple))
        and bool(first)
        and isinstance(first[0], numbers.Number)
    )


def _check_workers(workers) -> int:
    if (
        isinstance(workers, bool)
        or not isinstance(workers, (int, np.integer))
        or workers < 0
    ):
        raise InputError(
            f"workers must be a non-negative integer (0: evaluate in "
            f"update), not {workers!r}"
        )
    return int(workers)


def _thresholds_param(thresholds, owner: str, *, lists: bool) -> dict:
    """``thresholds=``: a count (as ``nthresh``) or, where the family takes one, an
    explicit list normalised as the CLI's ``--thresholds`` and ``segbench.evaluate``."""
    from .primitives import threshold_list

    if isinstance(thresholds, (int, np.integer)) and not isinstance(thresholds, bool):
        return {"nthresh": int(thresholds)}
    if not lists:
        raise InputError(
            f"{owner}: thresholds is a count of ucm2 thresholds (the region "
            f"benchmark takes no explicit list), got {thresholds!r}"
        )
    if isinstance(thresholds, bool):
        raise InputError(
            f"{owner}: thresholds is a count or a list of numbers in [0, 1], "
            f"not {thresholds!r}"
        )
    return {"thresholds": threshold_list(thresholds)}


def _labels(n: int, batch: bool, ids) -> list[str]:
    if not batch:
        return ["pred" if ids[0] is None else f"pred (id {ids[0]!r})"]
    return [
        f"batch index {i}" + ("" if iid is None else f" (id {iid!r})")
        for i, iid in enumerate(ids)
    ]


class _StreamEval(StreamEvalBase):
    """What :class:`BoundaryEval`, :class:`RegionEval` and :class:`SemanticBoundaryEval`
    share on the streaming base: a family spec's per-image records as the state (ids
    and records, in update order), counted in update or by background threads, and
    the engine's summary of them."""

    _benchmark = ""
    _layout = STATE_VERSION
    _transient = ("_pool", "_pending")

    def __init__(self, family, params: dict, workers: int, name: str, bits=None):
        self._family = family
        self._params = family.resolve(params)
        self._summary = family.resolve_summary(params)
        workers = _check_workers(workers)
        if bits not in (None, 8, 16):
            raise InputError(f"bits must be None, 8 or 16, not {bits!r}")
        self._bits = bits
        self.name = str(name)
        super().__init__(workers)

    # --- state --------------------------------------------------------------------------

    def _reset_state(self) -> None:
        self._ids: list = []  # str, or None for an image given no id
        self._records: list = []  # record, or None while its task runs
        self._pending: deque = deque()  # (index, future, label), oldest first
        self._named: set = set()
        self._call_of: list = []  # the update each slot came from (0: merged)
        self._calls = 0
        # an earlier update's error found while a later one is added: raised once
        # that one is counted, so a loop that catches it loses no batch of its own
        self._late: InputError | None = None

    def _restore(self) -> None:
        self._pending = deque()

    def __len__(self) -> int:
        """Images counted (those still in the pool included)."""
        return sum(i is not False for i in self._ids)

    @property
    def params(self) -> dict:
        """The family's record and summary parameters (as a folder run records them)."""
        return {**self._params, **self._summary}

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.name!r}, {len(self)} images, "
            f"workers={self._workers})"
        )

    # --- feeding ------------------------------------------------------------------------

    def _split_pred(self, pred) -> tuple[list, bool]:
        """(one raw prediction per image, whether ``pred`` was a batch): a list or
        tuple, a Prediction, an (H, W) map, an (N, H, W) or (N, 1, H, W) batch."""
        from .datasets import to_numpy
        from .io import Prediction

        if isinstance(pred, (list, tuple)) and not _nested_numbers(pred):
            return list(pred), True
        if isinstance(pred, Prediction):
            return [pred], False
        arr = to_numpy(pred, "pred")
        if arr.ndim == 2:
            return [arr], False
        if arr.ndim == 3 and arr.shape[2] in (1, 3, 4) and arr.shape[1] >= 8:
            # channels last (H, W, 1) or an RGB(A) image: as (N, H, W) it would be H
            # maps a few px wide, and the error would blame the ground truth
            raise InputError(
                f"pred has shape {arr.shape}, channels last: one map is (H, W) (pass "
                f"arr[..., 0] for a single channel), a batch (N, H, W) or (N, 1, H, W)"
            )
        if arr.ndim == 3:
            return list(arr), True
        if arr.ndim == 4 and arr.shape[1] == 1:
            return list(arr[:, 0]), True
        raise InputError(self._bad_shape(arr.shape))

    def _bad_shape(self, shape) -> str:
        """The message for a ``pred`` of no accepted shape."""
        raise NotImplementedError

    def _prediction(self, raw, label: str):
        raise NotImplementedError

    def update(self, pred, gt, ids=None) -> None:
        """Count one image or a batch.

        Parameters
        ----------
        pred
            One image's prediction or a batch (see the class); numpy arrays, anything
            with ``__array__``, or tensors (read through ``.detach().cpu().numpy()``;
            torch is never imported).
        gt
            For one image: its ground truth, as :func:`segbench.datasets.memory_item`
            reads it: a list of the annotators' 2-D maps (bool boundary maps, 0/1 or
            0/255 maps of thin lines, or integer label maps), a (K, H, W) array, a
            BSDS500 ``.mat`` path, or a dataset item. For a batch: a sequence of
            those, one per image.
        ids : str or sequence of str, optional
            The images' ids (the per-item rows' ``id``). Default: a dataset item's id
            or a ``.mat`` file's stem, else none (rows numbered ``#1``, ``#2``, ... in
            :meth:`compute`). Given ids must be unique across updates and merges.

        Raises
        ------
        InputError
            A prediction or ground truth of the wrong shape or type, NaN or inf, values
            outside the valid range, a batch and a ground-truth list of other lengths,
            a repeated id: one line naming the batch index. Nothing of the call is
            counted. With ``workers``, an error found in the pool (e.g. a ``.mat``
            file of another image size) is raised by the next ``update`` or by
            :meth:`compute`, naming the update and batch index.
        """
        from .datasets import memory_item, memory_sample
        from .io import check_same_shape

        self._harvest()
        raws, batch = self._split_pred(pred)
        n = len(raws)
        if batch:
            if (
                isinstance(gt, (str, PathLike))
                or not isinstance(gt, (Sequence, np.ndarray))
                or len(gt) != n
            ):
                got = (
                    f"{len(gt)} entries"
                    if isinstance(gt, (Sequence, np.ndarray))
                    and not isinstance(gt, (str, PathLike))
                    else f"a {type(gt).__name__}"
                )
                raise InputError(
                    f"gt: a batch of {n} predictions needs a sequence of {n} "
                    f"ground truths, one per image; got {got}"
                )
            gts = list(gt)
        else:
            gts = [gt]
        wanted = self._ids_of(ids, gts, n)
        labels = _labels(n, batch, wanted)
        samples = []
        for k in range(n):  # every image checked before any is counted
            p = self._prediction(raws[k], labels[k])
            item = memory_item(
                gts[k],
                wanted[k] or f"#{len(self._ids) + k + 1}",
                f"gt of {labels[k]}" if batch else "gt",
            )
            if item.gt_path is None and not item.sources:  # in memory: check now
                check_same_shape(p, item.annotations[0].shape, labels[k])
            samples.append(memory_sample(item, p))
        self._add_call(samples, wanted, labels)
        self._raise_late()

    def _ids_of(self, ids, gts, n: int) -> list:
        from .datasets import DatasetItem

        out: list[str | None]
        if ids is None:
            out = []
            for g in gts:
                if isinstance(g, DatasetItem):
                    out.append(g.iid)
                elif isinstance(g, (str, PathLike)):
                    out.append(os.path.splitext(os.path.basename(os.fspath(g)))[0])
                else:
                    out.append(None)
        else:
            given = [ids] if isinstance(ids, (str, int, np.integer)) else list(ids)
            if len(given) != n:
                raise InputError(f"ids: {len(given)} ids for {n} images")
            out = [str(i) for i in given]
            if any(not i for i in out):
                raise InputError("ids: an id is empty")
        named = [i for i in out if i is not None]
        again = sorted({i for i in named if i in self._named or named.count(i) > 1})
        if again and self._pending and any(i in self._named for i in again):
            self._drain()  # a failed batch in the pool frees its ids once raised
            again = sorted({i for i in named if i in self._named or named.count(i) > 1})
        if again:
            raise InputError(
                f"ids: image {', '.join(map(repr, again[:10]))} is counted "
                "twice (ids must be unique; pass ids= to name the images)"
            )
        return out

    def _add_call(self, samples, ids, labels) -> None:
        """Count one update's images whole or not at all: whatever fails (a .mat read
        late, an interrupt, an older batch's error raised here) leaves none of them."""
        self._calls += 1
        call, start = self._calls, len(self._ids)
        if self._workers == 0:
            evaluate, params = self._family.evaluate, self._params
            try:
                records = self._run_whole(
                    [partial(evaluate, s, params) for s in samples], 0
                )
            finally:
                for s in samples:
                    s.release()
            self._extend(ids, records, call)
            return
        try:
            for sample, iid, label in zip(samples, ids, labels):
                self._add(sample, iid, f"update {call}, {label}", call)
        except BaseException:
            self._rollback(start)
            raise

    def _rollback(self, start: int) -> None:
        """Forget the slots from ``start`` on (the call being added)."""
        while self._pending and self._pending[-1][0] >= start:
            self._pending.pop()[1].cancel()
        for iid in self._ids[start:]:
            if iid:
                self._named.discard(iid)
        del self._ids[start:], self._records[start:], self._call_of[start:]

    def _add(self, sample, iid, label, call) -> None:
        index = len(self._ids)
        if iid is not None:
            self._named.add(iid)
        self._ids.append(iid)
        self._call_of.append(call)
        pool = self._threads(self._workers)
        threads = max(1, (os.cpu_count() or 1) // self._workers)
        self._records.append(None)
        future = pool.submit(
            _evaluate_in_thread, self._family, sample, self._params, threads
        )
        self._pending.append((index, future, label, sample.prediction))
        # a bounded queue: a loop faster than the pool waits here rather than holding
        # every map it produced
        while len(self._pending) > max(16, 8 * self._workers):
            self._settle(self._pending[0][0], block=True, current=call)

    def _settle(
        self, index: int, *, block: bool, raise_errors: bool = True, current=None
    ) -> bool:
        """Move the oldest pending task's record into the state (if done, or waiting
        with ``block``); True if it was settled. While update ``current`` is added
        (0: one about to be), an earlier update's error is kept for
        :meth:`_raise_late` instead of raised."""
        idx, future, label, source = self._pending[0]
        if not block and not future.done():
            return False
        self._pending.popleft()
        try:
            self._records[idx] = future.result()
        except InputError as exc:
            call = self._drop_call(idx)
            if raise_errors:  # the update and index; a file only if one is to blame
                err = InputError(
                    f"{label}: {exc.problem} (nothing of update {call} is "
                    "counted; correct it and send it again)",
                    None if exc.path == source else exc.path,
                )
                if current is not None and call != current:
                    self._late = self._late or err
                    return True
                raise err from None
        except BaseException:
            self._drop_call(idx)
            if raise_errors:
                raise
        return True

    def _drop_call(self, idx: int) -> int:
        """A failed image: its whole update left out (those of its images still in
        the pool dropped, those counted forgotten), its ids free again; the update."""
        call = self._call_of[idx]
        while self._pending and self._call_of[self._pending[0][0]] == call:
            self._pending.popleft()[1].cancel()
        for k, c in enumerate(self._call_of):
            if c == call:
                self._forget(k)
        return call

    def _forget(self, idx: int) -> None:
        """An image whose evaluation failed: left out (its slot stays, uncounted)."""
        if self._ids[idx]:
            self._named.discard(self._ids[idx])
        self._ids[idx] = False  # marks a failed slot, dropped by _items

    def _harvest(self) -> None:
        """Settle the tasks done, before an update is added (their errors kept)."""
        while self._pending and self._settle(self._pending[0][0], block=False, current=0):
            pass

    def _raise_late(self, counted: bool = True) -> None:
        """Raise the error of an earlier update found while a later one was added:
        once that one is counted (``counted``: the message says so), or as it is."""
        late, self._late = self._late, None
        if late is not None and counted:
            raise InputError(
                f"{late.problem}; the update that raised this, update {self._calls}, "
                "is counted",
                late.path,
            )
        if late is not None:
            raise late

    def _drain(self, raise_errors: bool = True) -> None:
        if raise_errors:
            self._raise_late(counted=False)
        else:
            self._late = None
        first = None
        while self._pending:
            try:
                self._settle(self._pending[0][0], block=True, raise_errors=raise_errors)
            except BaseException as exc:  # settle them all, then raise the first
                first = first or exc
        if first is not None:
            raise first

    def _items(self) -> tuple[list, list]:
        """(ids, records) of every counted image, in update order (None: no id)."""
        self._drain()
        keep = [k for k, i in enumerate(self._ids) if i is not False]
        if len(keep) != len(self._ids):
            self._ids = [self._ids[k] for k in keep]
            self._records = [self._records[k] for k in keep]
            self._call_of = [self._call_of[k] for k in keep]
        return list(self._ids), list(self._records)

    # --- merging and state --------------------------------------------------------------

    def _config(self) -> dict:
        return {
            "family": self._family.name,
            "version": self._family.version,
            "params": self._params,
            "summary": self._summary,
            **({} if self._bits is None else {"bits": self._bits}),
        }

    def _unpack(self, state):
        # bits is in the settings only when set: a state of rounded maps (bits) and
        # one of unrounded maps (no bits, as states before it was kept) count otherwise
        if self._is_state(state) and state.get("bits") != self._bits:
            raise self._other_settings([("bits", self._bits, state.get("bits"))])
        return super()._unpack(state)

    def state_dict(self) -> dict:
        """The whole state as plain data: numpy arrays and JSON values, no object of
        segbench's (it pickles anywhere, e.g. through
        ``torch.distributed.all_gather_object``).

        Keys: ``family``, ``version`` (of the family's records), ``params`` and
        ``summary`` (the settings), ``layout`` (of this dict), ``ids`` ((N,) str, ``''``
        for an image given no id), ``lengths`` ((N,) int64: thresholds of each image),
        ``fields`` (the names below), and each record field: the per-threshold fields
        concatenated over images (``sum(lengths)`` values), the per-image ones as (N,)
        arrays.
        """
        return super().state_dict()

    def _state_fields(self) -> dict:
        ids, records = self._items()
        out: dict = {"ids": np.array(["" if i is None else i for i in ids], dtype=str)}
        jsons = [self._family.to_json(r) for r in records]
        lengths = np.array([len(d["thresholds"]) for d in jsons], np.int64)
        out["lengths"] = lengths
        per_t, per_image = self._fields
        out["fields"] = {"per_threshold": list(per_t), "per_image": list(per_image)}
        for key in per_t:
            out[key] = (
                np.asarray(np.concatenate([d[key] for d in jsons]))
                if jsons
                else np.zeros(0)
            )
        for key in per_image:
            out[key] = np.asarray([d[key] for d in jsons]) if jsons else np.zeros(0)
        return out

    #: The record fields: (one value per threshold, one value per image).
    _fields: tuple = ((), ())

    def _is_state(self, state) -> bool:
        return isinstance(state, Mapping) and "ids" in state and "lengths" in state

    def _not_a_state(self, state) -> Exception:
        return InputError(f"not a {type(self).__name__} state_dict (no ids and lengths)")

    def _read_state(self, state) -> tuple[list, list]:
        """(ids, records) of a state dict of these settings."""
        ids = [str(i) for i in np.asarray(state["ids"]).tolist()]
        lengths = np.asarray(state["lengths"]).astype(np.int64)
        if lengths.shape != (len(ids),) or (lengths < 1).any():
            raise InputError("state_dict: lengths is not one positive count per id")
        ends = np.cumsum(lengths)
        total = int(ends[-1]) if len(ends) else 0
        per_t, per_image = self._fields
        arrays = {}
        for key, size in [(k, total) for k in per_t] + [(k, len(ids)) for k in per_image]:
            arr = np.asarray(state.get(key, np.zeros(0)))
            if arr.shape != (size,):
                raise InputError(
                    f"state_dict: field {key!r} has shape {arr.shape}, not ({size},)"
                )
            arrays[key] = arr
        records = []
        for n, iid in enumerate(ids):
            a, b = int(ends[n] - lengths[n]), int(ends[n])
            d = {k: arrays[k][a:b].tolist() for k in per_t}
            d.update({k: arrays[k][n].item() for k in per_image})
            try:
                rec = self._family.from_json(d)
                if self._family.validate is not None:
                    self._family.validate(rec, self._params)
            except (KeyError, TypeError, ValueError) as exc:
                raise InputError(
                    f"state_dict: the record of image {n} "
                    f"({iid or 'no id'}) is not valid: {exc}"
                ) from None
            records.append(rec)
        return [i or None for i in ids], records

    def _absorb(self, part) -> None:
        ids, records = part
        named = [i for i in ids if i is not None]
        if len(set(named)) < len(named):
            from collections import Counter

            twice = sorted(i for i, n in Counter(named).items() if n > 1)
            raise InputError(
                f"cannot merge: image {', '.join(map(repr, twice[:10]))} appears more "
                "than once in the state (ids must be unique)"
            )
        both = sorted(set(named) & self._named)
        if both:
            raise InputError(
                f"cannot merge: both hold image {', '.join(map(repr, both[:10]))}"
                " (ids must be unique across shards)"
            )
        self._extend(ids, records)

    def load_state_dict(self, state) -> None:
        """Replace the state by one made by :meth:`state_dict` (here or in another
        process) under the same settings.

        Raises
        ------
        InputError
            Other settings (each named), or a malformed state.
        """
        super().load_state_dict(state)

    def merge(self, other) -> None:
        """Add another evaluator's images (or its :meth:`state_dict`): a disjoint shard
        of the split, e.g. another rank's. The numbers after merging equal those of one
        evaluator fed every image, in any merge order (each image's counts are kept;
        the scores are sums over images).

        Raises
        ------
        InputError
            Other settings, or an id both hold.
        """
        super().merge(other)

    def _extend(self, ids, records, call: int = 0) -> None:
        for iid, rec in zip(ids, records):
            self._ids.append(iid)
            self._records.append(rec)
            self._call_of.append(call)
            if iid is not None:
                self._named.add(iid)

    # --- reading ------------------------------------------------------------------------

    def _options(self, human) -> dict:
        return {"plot": False}

    def compute(self, *, ci=None, human=None) -> Result:
        """The result of every image counted so far, as a folder run gives it.

        Waits for the pool. The evaluator keeps its state (call :meth:`reset` for the
        next epoch).

        Parameters
        ----------
        ci : bool or mapping, optional
            Bootstrap intervals over images (``Result.intervals``), as ``--ci``: True
            for 1000 resamples, a 95% level and seed 0, or a mapping with any of
            ``resamples``, ``level``, ``seed``.
        human : HumanScores, optional
            The annotators' figures (:func:`human_scores`), added to the metrics (and
            drawn by :meth:`Result.plot`).

        Returns
        -------
        Result
            Per-item rows sorted by id (images without an id after them, numbered
            ``#1``, ``#2``, ... in the order counted), the records in ``records``.

        Raises
        ------
        InputError
            No image counted, or an error found in the pool.
        """
        from .engine import scored_ids, summarize_records

        ids, records = self._items()
        if not ids:
            raise InputError(f"{type(self).__name__}: no image counted (call update first)")
        named = sorted([(i, k) for k, i in enumerate(ids) if i is not None])
        order = [k for _, k in named] + [k for k, i in enumerate(ids) if i is None]
        labels = [i for i, _ in named] + [
            f"#{n + 1}" for n in range(len(order) - len(named))
        ]
        by_id = {lab: records[k] for lab, k in zip(labels, order)}
        options = self._options(human)
        if ci:
            from .resampling import ci_settings

            options["ci"] = ci_settings(ci)
        params = {**self._params, **self._summary}
        kept, left_out = scored_ids(self._family, params, labels, by_id)
        if ci and self._family.resampler is not None:
            from .resampling import warn_if_few_resamples

            warn_if_few_resamples(options["ci"]["resamples"])
        return summarize_records(
            self._family,
            kept,
            [by_id[i] for i in kept],
            params,
            options,
            name=self.name,
            where={"source": "stream"},
            excluded=left_out,
        )


class BoundaryEval(_StreamEval):
    """The BSDS boundary benchmark fed soft boundary maps in memory.

    Each :meth:`update` counts matched and detected pixels at every threshold with the
    very code of ``segbench boundary`` (:data:`segbench.boundary.BOUNDARY`);
    :meth:`compute` summarizes them as it does: ODS, OIS, AP, R50, the PR curve, one
    row per image. The counts equal a folder run's on the same maps (written as 16-bit
    PNG and read back, give ``bits=16`` for maps not already on that grid).

    Parameters
    ----------
    thresholds : int or sequence of float, optional
        Number of thresholds (default: the protocol's, 99 for ``bsr``), or an explicit
        list in [0, 1] as ``segbench boundary --thresholds 0.1,0.5``.
    max_dist : float, optional
        Matching tolerance, a fraction of the image diagonal (default: the protocol's,
        0.0075).
    nms : bool or dict, optional
        Thin raw soft maps with Dollar's edge NMS first (``segbench boundary --nms``):
        True for Dollar's settings, a dict of settings as
        :func:`segbench.boundary.edge_nms`, False for none. Default: the protocol's
        (none for ``bsr``; the dataset presets' own, as ``--preset``).
    protocol : str, default 'bsr'
        A preset of the protocol, any of :data:`segbench.boundary.PROTOCOLS`
        (``'bsr'``, ``'bsds300'``, the edge datasets' ``'bsds500'``, ``'nyud'``, ...):
        its values fill every parameter not given.
    workers : int, default 0
        0: each image is counted in :meth:`update`. N: counted by N background threads
        (the compiled kernels release the GIL), so ``update`` returns at once and the
        loop goes on; :meth:`compute` waits for them. The numbers are the same for any
        N.
    bits : {None, 8, 16}, default None
        Round each map to the grid of an ``bits``-bit PNG first (``round(p * 65535) /
        65535``), as writing the maps with :func:`segbench.io.write_soft_map` and
        scoring the folder would. None scores the values as given (as ``.npy`` files).
    name : str, default 'model'
        The result's name (plots, comparisons).
    **params
        Other parameters of the boundary benchmark (``segbench.evaluate``):
        ``alpha``, ``min_agreement``, ``thin``, ``thin_gt``, ``upsample``.

    Notes
    -----
    ``update(pred, gt)`` takes a soft map (H, W) with values in [0, 1] (floats; uint8
    as /255, uint16 as /65535; bool as 0/1), or a batch (N, H, W) or (N, 1, H, W), or
    a list of maps (a batch of images of different sizes). Memory: the state is the
    per-image counts, about 5 KB an image at 99 thresholds; maps are dropped once
    counted.

    Examples
    --------
    >>> import numpy as np, segbench
    >>> gt = np.zeros((32, 32), bool); gt[16, 4:28] = True
    >>> pb = np.zeros((32, 32)); pb[16, 4:28] = 0.8; pb[8, 4:28] = 0.3
    >>> ev = segbench.BoundaryEval()
    >>> ev.update(pb, [gt])
    >>> res = ev.compute()
    >>> round(res.metrics["ODS"], 3), round(res.metrics["ODS_threshold"], 2)
    (1.0, 0.31)
    """

    _benchmark = "boundary"

    def __init__(
        self,
        *,
        thresholds=None,
        max_dist: float | None = None,
        nms=None,
        protocol: str = "bsr",
        workers: int = 0,
        bits=None,
        name: str = "model",
        **params,
    ):
        from .api import protocol_params
        from .boundary import BOUNDARY

        given = dict(params)
        if thresholds is not None:
            given.update(_thresholds_param(thresholds, "BoundaryEval", lists=True))
        if max_dist is not None:
            given["max_dist"] = max_dist
        if nms is not None:  # else the protocol's, as --preset without --nms
            given["nms"] = nms
        unknown = set(given) - set(BOUNDARY.defaults) - set(BOUNDARY.summary_defaults)
        if unknown:
            raise InputError(
                f"BoundaryEval: unknown parameter {', '.join(sorted(unknown))}"
            )
        calibration = sorted(
            k
            for k in ("calibrated_threshold", "calibrated_on", "calibrated_name")
            if k in given
        )
        if calibration:  # they were dropped without a word: refused instead
            raise InputError(
                f"BoundaryEval: {', '.join(calibration)} cannot be set here: a calibrated "
                "ODS comes from a run folder, segbench.evaluate(..., calibrate_on=RUN)"
            )
        if "alpha" in given:  # checked now, not after a whole epoch of updates
            from .primitives import check_alpha

            check_alpha(BOUNDARY.resolve_summary(given)["alpha"])
        super().__init__(
            BOUNDARY,
            {**protocol_params("boundary", protocol), **given},
            workers,
            name,
            bits,
        )

    _fields = (("thresholds", "cnt_r", "sum_r", "cnt_p", "sum_p"), ())

    def _bad_shape(self, shape) -> str:
        if len(shape) == 4:
            return (
                f"pred is a batch of {shape[1]}-channel maps (shape {shape}); a "
                f"boundary map has one channel: (N, 1, H, W)"
            )
        return (
            f"pred must be an (H, W) map or an (N, H, W) or (N, 1, H, W) batch, got "
            f"shape {shape}"
        )

    def _prediction(self, raw, label):
        from .datasets import memory_prediction, to_numpy
        from .io import Prediction

        if isinstance(raw, Prediction):
            pred = raw
        else:
            arr = to_numpy(raw, label)
            if arr.ndim != 2:
                raise InputError(
                    f"a soft boundary map must be 2-D (H, W), got shape {arr.shape}", label
                )
            pred = memory_prediction(arr, "boundary", label)
            if self._workers and np.shares_memory(pred.pb, arr):
                # the pool reads it later: the caller may reuse its buffer meanwhile
                pred = Prediction("soft", pb=pred.pb.copy(), source=label)
        if self._bits is not None and pred.kind == "soft":
            scale = float((1 << self._bits) - 1)
            pred = Prediction("soft", pb=np.rint(pred.pb * scale) / scale, source=label)
        return pred

    def _options(self, human) -> dict:
        out: dict = {"plot": False}
        if human is not None:
            out["human_boundary"] = _human_point(human)
        return out


class RegionEval(_StreamEval):
    """The BSDS500 region benchmark (covering, PRI, VI) fed hierarchies or
    segmentations in memory.

    Each :meth:`update` computes the per-image record with the code of ``segbench
    region`` (:data:`segbench.region.REGION`); :meth:`compute` summarizes as it does.

    Parameters
    ----------
    thresholds : int, default 99
        Number of ucm2 thresholds (segmentations have one "threshold" each).
    workers : int, default 0
        Background threads, as :class:`BoundaryEval`.
    name : str, default 'model'

    Notes
    -----
    ``update(pred, gt)``: ``pred`` one image's doubleSize ucm2 (a float (2H+1, 2W+1)
    array) or integer label map (H, W); a batch of either as an (N, ...) or
    (N, 1, ...) array; or a list with one entry per image, each a ucm2, a label map,
    or a list of label maps (that image's segmentations, one "threshold" each). The
    ground truth must be segmentations (label maps, ``.mat`` files or dataset items),
    not boundary maps.
    """

    _benchmark = "region"

    def __init__(self, *, thresholds: int = 99, workers: int = 0, name: str = "model"):
        from .region import REGION

        super().__init__(
            REGION, _thresholds_param(thresholds, "RegionEval", lists=False), workers, name
        )

    _fields = (
        ("thresholds", "cnt_r", "sum_r", "cnt_p", "sum_p", "ri", "voi", "n_regions"),
        ("cnt_r_best",),
    )

    def _bad_shape(self, shape) -> str:
        return (
            f"pred must be a ucm2 or label map, or an (N, ...) or (N, 1, ...) batch "
            f"of them, got shape {shape}"
        )

    def _prediction(self, raw, label):
        from .datasets import memory_prediction

        pred = memory_prediction(raw, "region", label)
        if self._workers and not isinstance(raw, type(pred)):
            # scored later, in the pool: the caller may reuse its buffers meanwhile
            from .io import Prediction

            if pred.ucm2 is not None and np.shares_memory(pred.ucm2, np.asarray(raw)):
                pred = Prediction("ucm2", ucm2=pred.ucm2.copy(), source=label)
            elif pred.segs is not None:
                pred = Prediction("segs", segs=[s.copy() for s in pred.segs], source=label)
        return pred

    def _options(self, human) -> dict:
        out: dict = {"plot": False}
        if human is not None:
            region = human.region if isinstance(human, HumanScores) else human
            metrics = region.metrics if isinstance(region, Result) else region
            if metrics is None:
                raise InputError(
                    "human: these human scores have no region figures "
                    "(human_scores(..., region=True))"
                )
            out["human_region"] = dict(metrics)
        return out


@dataclass(frozen=True)
class _ClassMaps:
    """One image of a :class:`SemanticBoundaryEval` update: (C, H, W) soft maps,
    ground-truth boundaries and, for kill_internal, the classes' regions."""

    pred: np.ndarray
    gt: np.ndarray
    regions: np.ndarray | None


def _semantic_boundary_in_memory(sample, params):
    """The semantic-boundary record of maps held in memory (the folder run's
    per-image function on arrays; margin cropped as there)."""
    from .semantic_boundary import evaluate_classes

    maps = sample.value
    m = params["margin"]
    crop = (lambda a: a[:, m : a.shape[1] - m, m : a.shape[2] - m]) if m else (lambda a: a)
    regions = None if maps.regions is None else crop(maps.regions)
    return evaluate_classes(
        crop(maps.pred),
        crop(maps.gt),
        regions=regions,
        nthresh=params["nthresh"],
        max_dist=params["max_dist"],
        thin=params["thin"],
        kill_internal=params["kill_internal"],
        skip_if_nonexistent=params["skip_if_nonexistent"],
        nms=params["nms"],
    )


def _record_to_state(rec) -> dict:
    import json

    d = rec.to_json()
    return {"thresholds": d["thresholds"], "record": json.dumps(d)}


def _record_from_state(d):
    import json

    from .semantic_boundary import SemanticBoundaryCounts

    return SemanticBoundaryCounts.from_json(json.loads(d["record"]) if "record" in d else d)


class SemanticBoundaryEval(_StreamEval):
    """The semantic-boundary benchmark fed per-class soft maps in memory.

    Each :meth:`update` counts every class of an image on the exact matcher with the
    per-image function of ``segbench semantic-boundary``
    (:func:`segbench.semantic_boundary.evaluate_classes`); :meth:`compute` summarizes
    as a folder run does: each class's ODS, OIS, AP, R50 and their means (MF-ODS,
    MF-OIS, MAP).

    Parameters
    ----------
    protocol : {'sbd', 'sbd-seal', 'cityscapes'}, default 'sbd-seal'
        The preset whose values fill the parameters not given
        (:data:`segbench.semantic_boundary.PROTOCOLS`).
    workers : int, default 0
        0: each image is counted in :meth:`update`; N: by N background threads.
    name : str, default 'model'
    **params
        The family's other parameters: ``nthresh``, ``max_dist``, ``thin``,
        ``kill_internal``, ``skip_if_nonexistent``, ``margin``, ``nms``, ``alpha``.
        Ground-truth settings (``gt_edges``, ``instance_sensitive``, ``scale``) do not
        apply: the boundaries are given.

    Notes
    -----
    ``update(pred, gt, regions=None)`` takes one image's (C, H, W) soft maps in [0, 1]
    and its (C, H, W) ground-truth boundary maps (bool or 0/1), or batches (N, C, H, W)
    of both, or lists of them; ``regions`` (the classes' pixels, same shapes) is
    needed by ``kill_internal``. Memory: the state is C x T counts an image.

    Examples
    --------
    >>> import numpy as np, segbench
    >>> gt = np.zeros((2, 32, 32), bool); gt[0, 16, 4:28] = True; gt[1, 4:28, 8] = True
    >>> ev = segbench.SemanticBoundaryEval(max_dist=0.0075)
    >>> ev.update(gt * 0.9, gt)
    >>> round(ev.compute().metrics["MF_ODS"], 3)
    1.0
    """

    _benchmark = "semantic_boundary"
    _fields = (("thresholds",), ("record",))

    def __init__(
        self, *, protocol: str = "sbd-seal", workers: int = 0, name: str = "model", **params
    ):
        from dataclasses import replace

        from .semantic_boundary import SEMANTIC_BOUNDARY

        unknown = (
            set(params)
            - set(SEMANTIC_BOUNDARY.defaults)
            - set(SEMANTIC_BOUNDARY.summary_defaults)
        )
        if unknown:
            raise InputError(
                f"SemanticBoundaryEval: unknown parameter {', '.join(sorted(unknown))}"
            )
        family = replace(
            SEMANTIC_BOUNDARY,
            evaluate=_semantic_boundary_in_memory,
            to_json=_record_to_state,
            from_json=_record_from_state,
            validate=None,
            input_files=None,
        )
        super().__init__(family, {"protocol": protocol, **params}, workers, name)

    def update(self, pred, gt, ids=None, regions=None) -> None:
        """Count one image's classes, or a batch (see the class).

        Raises
        ------
        InputError
            Maps of other shapes or ranks, values outside [0, 1], a batch of another
            length, a repeated id: one line naming the batch index; nothing of the
            call is counted.
        """
        from .datasets import DatasetItem, Sample, to_numpy
        from .io import soft_values

        self._harvest()
        preds, gts = self._batch(pred, "pred"), self._batch(gt, "gt")
        regs = [None] * len(preds) if regions is None else self._batch(regions, "regions")
        if not (len(preds) == len(gts) == len(regs)):
            raise InputError(
                f"pred, gt and regions hold {len(preds)}, {len(gts)} and "
                f"{len(regs)} images; give one of each per image"
            )
        batch = len(preds) > 1 or (
            not isinstance(pred, (list, tuple)) and to_numpy(pred, "pred").ndim == 4
        )
        wanted = self._ids_of(ids, [None] * len(preds), len(preds))
        labels = _labels(len(preds), batch, wanted)
        samples = []
        for k, (p, g, r) in enumerate(zip(preds, gts, regs)):
            if p.shape != g.shape or (r is not None and r.shape != g.shape):
                raise InputError(
                    f"{labels[k]}: pred {p.shape} and gt {g.shape}"
                    + ("" if r is None else f" and regions {r.shape}")
                    + " must be (C, H, W) of one shape"
                )
            p = soft_values(p, None, f"{labels[k]}: pred")
            item = DatasetItem(wanted[k] or f"#{len(self._ids) + k + 1}", "memory")
            samples.append(
                Sample(
                    item,
                    labels[k],
                    _ClassMaps(
                        p.copy(), g.astype(bool), None if r is None else r.astype(bool)
                    ),
                )
            )
        self._add_call(samples, wanted, labels)
        self._raise_late()

    @staticmethod
    def _batch(maps, what: str) -> list:
        """One (C, H, W) array per image of a map, a batch or a list."""
        from .datasets import to_numpy

        out: list | None
        if isinstance(maps, (list, tuple)):
            out = [to_numpy(m, what) for m in maps]
        else:
            arr = to_numpy(maps, what)
            out = [arr] if arr.ndim == 3 else list(arr) if arr.ndim == 4 else None
            if out is None:
                raise InputError(
                    f"{what} must be (C, H, W) or a batch (N, C, H, W), got "
                    f"shape {arr.shape}"
                )
        for m in out:
            if m.ndim != 3:
                raise InputError(f"{what}: each image is (C, H, W), got shape {m.shape}")
        return out

    def _options(self, human) -> dict:
        return {"plot": False}


def _human_point(human) -> tuple[float, float, float]:
    """(recall, precision, F) of the annotators, from :class:`HumanScores`, a
    ``human_boundary`` Result or a tuple."""
    if isinstance(human, HumanScores):
        return human.point
    if isinstance(human, Result):
        m = human.metrics
        return (float(m["recall"]), float(m["precision"]), float(m["F"]))
    what = "human: give HumanScores, a human_boundary Result or (recall, precision, F)"
    try:
        vals = () if isinstance(human, str) else tuple(float(v) for v in human)
    except (TypeError, ValueError):
        raise InputError(what) from None
    if len(vals) != 3:
        raise InputError(what)
    if not all(0 <= v <= 1 for v in vals):  # a precision of 2 is no point of a PR plot
        raise InputError(f"human: recall, precision and F lie in [0, 1], got {vals}")
    return vals


@dataclass
class HumanScores:
    """The annotators of a set of images scored against each other.

    Attributes
    ----------
    boundary : Result
        The ``human_boundary`` result (``metrics``: recall, precision, F, counts).
    region : Result or None
        The ``human_region`` result (covering, PRI, VI), when asked for.
    """

    boundary: Result
    region: Result | None = None

    @property
    def point(self) -> tuple[float, float, float]:
        """(recall, precision, F): the human point of a PR plot."""
        m = self.boundary.metrics
        return (float(m["recall"]), float(m["precision"]), float(m["F"]))

    @property
    def F(self) -> float:  # noqa: N802 - the benchmark's name
        return self.point[2]

    def __repr__(self) -> str:
        r, p, f = self.point
        text = f"<HumanScores F={f:.4f} (R={r:.4f}, P={p:.4f})"
        if self.region is not None:
            m = self.region.metrics
            text += f", covering={m['covering']:.4f}, PRI={m['PRI']:.4f}, VI={m['VI']:.4f}"
        return text + f"; {self.boundary.metrics.get('n_images')} images>"


def human_scores(
    gt,
    *,
    split: str | None = None,
    presentation: str | None = None,
    ids=None,
    region: bool = True,
    protocol: str | None = None,
    workers: int = 1,
    progress: bool = False,
) -> HumanScores:
    """The human consistency of a set of images: each annotator scored against the
    others (``segbench human``), once per split, for the human point of a plot.

    Parameters
    ----------
    gt : path, Dataset, or sequence of per-image ground truths
        Ground truth of any layout with ``split`` (as ``segbench human --gt``), or one
        entry per image in any form :meth:`BoundaryEval.update` takes.
    split, presentation, ids, workers, progress
        As :func:`segbench.evaluate` (files only).
    region : bool, default True
        Also the region measures (covering, PRI, VI).
    protocol : {'bsr', 'bsds300'}, optional
        The boundary protocol's preset.

    Returns
    -------
    HumanScores
    """
    from .api import evaluate, protocol_params

    if isinstance(gt, (str, PathLike)) or not isinstance(gt, Sequence):
        bench = "human" if region else "human_boundary"
        out = evaluate(
            bench,
            gt,
            split=split,
            presentation=presentation,
            ids=ids,
            workers=workers,
            progress=progress,
            plot=False,
            protocol=protocol,
        )
        out = out if isinstance(out, tuple) else (out,)
        return HumanScores(out[0], out[1] if region else None)
    from .boundary import HUMAN_BOUNDARY
    from .datasets import memory_item, memory_sample
    from .engine import summarize_records
    from .region import HUMAN_REGION

    params = protocol_params("human", protocol) if protocol is not None else {}
    families = [HUMAN_BOUNDARY] + ([HUMAN_REGION] if region else [])
    items = [memory_item(g, f"#{k + 1}", f"gt of image {k}") for k, g in enumerate(gt)]
    if not items:
        raise InputError("human_scores: no image")
    results = []
    for fam in families:
        p = {**fam.resolve(params), **fam.resolve_summary(params)}
        names = [it.iid for it in items]
        recs = []
        for it in items:
            sample = memory_sample(it)
            try:
                recs.append(fam.evaluate(sample, p))
            finally:
                sample.release()
        results.append(
            summarize_records(
                fam, names, recs, p, {}, name="human", where={"source": "stream"}
            )
        )
    return HumanScores(results[0], results[1] if region else None)
