"""The base of every streaming evaluator: :class:`StreamEvalBase`.

:class:`segbench.BoundaryEval`, :class:`segbench.RegionEval` and
:class:`segbench.SemanticBoundaryEval` (``segbench.stream``) and
:class:`segbench.semantic.SemanticEval` are its subclasses; they differ only in what
their state holds. Those of ``segbench.stream`` keep each image's record, because their
summaries need every image (OIS, per-image rows, bootstrap intervals);
``SemanticEval`` keeps one sum, because every number it reports is a function of
summed counts, so its state stays one C x C matrix however many images it counts.

It sits below the families (``SemanticEval`` is one of them, and families may not
import each other or the layers above) and imports nothing of segbench but its errors,
so ``import segbench.stream`` does not load a family's compiled kernels for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor, wait

from .errors import InputError

__all__ = ["StreamEvalBase"]


class StreamEvalBase:
    """What every streaming evaluator of segbench is, whatever its state holds.

    - **Whole updates.** An update counts all of its images or, if any of them fails,
      none: the counts of a call are made apart (:meth:`_run_whole`) and added to the
      state only once all of them are made.
    - **Threads** are made on first need (:meth:`_threads`) and stopped by
      :meth:`close` or at the end of a ``with`` block; the state is kept.
    - **Merging.** :meth:`merge` adds another evaluator of the same kind and settings,
      or its :meth:`state_dict`: plain data (numpy arrays and JSON values, no object of
      segbench's), so a state passes through ``torch.distributed.all_gather_object``
      or a pickle anywhere. Shards merged give the numbers of one evaluator fed every
      image. :meth:`load_state_dict` replaces the state by one.
    - **Pickling** keeps the settings and the state, not the threads.

    A subclass says what its state is: :meth:`_reset_state` (empty),
    :meth:`_config` (the settings two evaluators must share to merge, JSON values),
    :meth:`_state_fields` (the state as plain data), :meth:`_is_state` and
    :meth:`_read_state` (a state dict's fields back, checked), :meth:`_absorb` (add
    what :meth:`_read_state` gave), and :meth:`compute` (the result).
    """

    #: Version of the :meth:`state_dict` layout; a state of another one is refused.
    _layout = 1
    #: Attributes left out of a pickle (threads, queues of work in them).
    _transient: tuple[str, ...] = ("_pool",)

    def __init__(self, workers: int) -> None:
        self._workers = workers
        self._pool: ThreadPoolExecutor | None = None
        self._reset_state()
        self._forget_shards()

    def _forget_shards(self) -> None:
        """No shard token yet; nothing merged. A token names this evaluator's own
        counts in its :meth:`state_dict` (made there, on first need), so that a shard
        merged twice is refused instead of counted twice."""
        self._token: str | None = None
        self._merged: set[str] = set()

    def _shards(self) -> set[str]:
        """The tokens of every shard whose counts this state holds."""
        if self._token is None:
            import uuid

            self._token = uuid.uuid4().hex
        return {self._token, *self._merged}

    # --- what a subclass says ---------------------------------------------------------

    def _reset_state(self) -> None:
        """Make the state empty."""
        raise NotImplementedError

    def _config(self) -> dict:
        """The settings two evaluators must share to merge (key -> JSON value)."""
        raise NotImplementedError

    def _state_fields(self) -> dict:
        """The state as plain data: the :meth:`state_dict` after the settings."""
        raise NotImplementedError

    def _is_state(self, state) -> bool:
        """Whether ``state`` has the fields of this kind's :meth:`state_dict`."""
        raise NotImplementedError

    def _read_state(self, state):
        """What a state dict (of these settings) holds, checked, for :meth:`_absorb`."""
        raise NotImplementedError

    def _absorb(self, part) -> None:
        """Add what :meth:`_read_state` gave to the state."""
        raise NotImplementedError

    def _drain(self, raise_errors: bool = True) -> None:
        """Wait for the work still running in the threads (none: an update here
        returns once its images are counted)."""

    def compute(self):
        """The :class:`~segbench.result.Result` of every image counted so far."""
        raise NotImplementedError

    # --- the messages of refusals (each evaluator keeps its own) -----------------------

    def _mergeable(self, other: StreamEvalBase) -> bool:
        return type(other) is type(self)

    def _foreign(self, other) -> Exception:
        """The error for merging an evaluator of another kind."""
        return InputError(
            f"cannot merge a {type(other).__name__} into a {type(self).__name__}"
        )

    def _not_a_state(self, state) -> Exception:
        return InputError(f"not a {type(self).__name__} state_dict")

    def _other_settings(self, differ: list[tuple[str, object, object]]) -> Exception:
        """The error for a state of other settings: ``differ`` lists (key, value here,
        value there)."""
        parts = []
        for k, mine, theirs in differ:
            if isinstance(mine, dict) and isinstance(theirs, dict):  # name the entries
                parts += [
                    f"{k}.{sub} {theirs.get(sub)!r} there, {mine.get(sub)!r} here"
                    for sub in sorted(set(mine) | set(theirs), key=str)
                    if mine.get(sub) != theirs.get(sub)
                ]
            else:
                parts.append(f"{k} {theirs!r} there, {mine!r} here")
        return InputError(
            f"cannot merge {type(self).__name__} states of other settings: "
            + "; ".join(parts)
        )

    # --- lifecycle ----------------------------------------------------------------------

    def reset(self) -> None:
        """Forget every image (waiting for those in the threads; their errors
        dropped)."""
        self._drain(raise_errors=False)
        self._reset_state()
        self._forget_shards()

    def close(self) -> None:
        """Wait for the threads and stop them (the state is kept; a later update
        starts new ones)."""
        self._drain(raise_errors=False)
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown(wait=False)

    def __getstate__(self):
        self._drain()
        state = self.__dict__.copy()
        for key in self._transient:
            state[key] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._pool = None
        self._restore()

    def _restore(self) -> None:
        """Remake, after unpickling, the transient attributes other than the pool."""

    def _threads(self, n: int) -> ThreadPoolExecutor:
        """The pool (``n`` threads), made on first need."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                max_workers=n, thread_name_prefix="segbench-stream"
            )
        return self._pool

    # --- whole updates ------------------------------------------------------------------

    def _run_whole(self, jobs: list[Callable[[], object]], threads: int) -> list:
        """The results of ``jobs`` (callables of no argument), in order, for the caller
        to add to the state together.

        With ``threads`` 0 (or one job) they run here, one after the other, and the
        first error stops them. Otherwise the first runs here and the others on the
        pool (``threads`` threads); every one that started finishes before the first
        error is raised, so none is still counting when the caller learns of it.
        """
        if threads <= 0 or len(jobs) <= 1:
            return [job() for job in jobs]
        pool = self._threads(threads)
        futures = [pool.submit(job) for job in jobs[1:]]
        try:
            first = jobs[0]()
        except BaseException:
            for future in futures:
                future.cancel()
            raise
        finally:
            wait(futures)
        return [first] + [future.result() for future in futures]

    # --- merging and state --------------------------------------------------------------

    def state_dict(self) -> dict:
        """The whole state as plain data: the settings, ``layout`` (of this dict) and
        the counts (numpy arrays and JSON values, no object of segbench's)."""
        self._drain()
        out = dict(self._config())
        out["layout"] = self._layout
        out.update(self._state_fields())
        out["shards"] = sorted(self._shards())
        return out

    @staticmethod
    def _tokens(state) -> set[str]:
        """The shard tokens of a state dict (none in one of an older segbench)."""
        tokens = state.get("shards") if isinstance(state, Mapping) else None
        if not isinstance(tokens, (list, tuple)):
            return set()
        return {t for t in tokens if isinstance(t, str)}

    def _unpack(self, state):
        """What a state dict made by :meth:`state_dict` under these settings holds;
        an error naming what differs or what is malformed."""
        if not self._is_state(state):
            raise self._not_a_state(state)
        if state.get("layout") != self._layout:
            raise InputError(
                f"state_dict layout {state.get('layout')!r}, not "
                f"{self._layout}: made by another segbench version"
            )
        differ = [
            (k, v, state.get(k)) for k, v in self._config().items() if state.get(k) != v
        ]
        if differ:
            raise self._other_settings(differ)
        return self._read_state(state)

    def load_state_dict(self, state) -> None:
        """Replace the state by one made by :meth:`state_dict` (here or in another
        process) under the same settings.

        Raises
        ------
        InputError
            Other settings (each named), or a malformed state.
        """
        part = self._unpack(state)
        self.reset()
        self._absorb(part)
        self._merged = self._tokens(state)

    def merge(self, other) -> None:
        """Add another evaluator's images (or its :meth:`state_dict`): a disjoint shard
        of the split, e.g. another rank's. The numbers after merging equal those of one
        evaluator fed every image, in any merge order.

        Raises
        ------
        InputError
            Other settings, a malformed state, this evaluator itself, or counts it
            holds already (the same evaluator or state given twice: each state names
            the shards it holds, in ``shards``).
        """
        if other is self:  # its counts would be added to themselves: doubled
            raise InputError(
                "an evaluator cannot be merged into itself: merge the evaluators of "
                "the other shards"
            )
        if isinstance(other, StreamEvalBase):
            if not self._mergeable(other):
                raise self._foreign(other)
            other = other.state_dict()
        part = self._unpack(other)
        tokens = self._tokens(other)
        if tokens & self._shards():
            raise InputError(
                "these counts are merged already (the same evaluator or state_dict "
                "given twice, or one that holds a shard merged before): merging them "
                "again would count their images twice"
            )
        self._drain()
        self._absorb(part)
        self._merged |= tokens
