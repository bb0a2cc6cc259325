"""Where per-item work runs: in this process, in worker processes, or on any
``concurrent.futures``-style executor (a Dask cluster through ``--scheduler``)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    from concurrent.futures import Executor
# multiprocessing and concurrent.futures are imported where several workers start:
# 25 ms that a one-process run never needs


@contextmanager
def open_executor(workers: int = 1, scheduler: str | None = None):
    """The executor for ``workers`` local processes or a Dask ``scheduler`` address.

    Yields None for one local worker (work runs in this process), a
    :class:`~concurrent.futures.ProcessPoolExecutor` for several, or the executor of a
    ``dask.distributed`` client connected to ``scheduler`` (``tcp://host:port`` or a
    scheduler file). Closed on exit.
    """
    if scheduler:
        try:
            from dask.distributed import Client
        except ImportError:
            raise InputError("--scheduler needs dask.distributed: pip install "
                             "'segbench[distributed]'") from None
        try:
            client = Client(scheduler_file=scheduler) if str(scheduler).endswith(".json") \
                else Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise InputError(f"cannot reach the Dask scheduler at {scheduler}: "
                             f"{exc}") from None
        try:
            yield client.get_executor(pure=False)
        finally:
            client.close()
        return
    if workers is None or workers < 1:
        raise InputError(f"--workers must be at least 1, got {workers}")
    if workers == 1:
        yield None
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        yield pool


def _slots(executor: Executor) -> int:
    n = getattr(executor, "_max_workers", None)
    if n is None:                       # a Dask executor: as many as it has threads
        client = getattr(executor, "_client", None)
        try:
            n = sum(w.get("nthreads", 1) for w in
                    client.scheduler_info()["workers"].values())
        except Exception:               # noqa: BLE001 - any failure: a safe default
            n = 4
    return max(1, int(n))


class _NoBar:
    """What a progress bar does when none is shown (tqdm is then never imported)."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int, desc: str):
    from tqdm.auto import tqdm
    return tqdm(total=total, desc=desc, file=sys.stderr, unit="img", dynamic_ncols=True,
                leave=False)


def map_items(fn: Callable, items: Iterable, *, workers: int = 1,
              executor: Executor | None = None, progress: bool = True,
              desc: str = "") -> Iterator:
    """Yield ``fn(item)`` for every item, in completion order.

    Parameters
    ----------
    fn : callable
        A module-level (picklable) function of one item.
    items : iterable
    workers : int
        Without ``executor``: 1 runs in this process, more in that many processes.
    executor : concurrent.futures.Executor, optional
        Run on it instead (e.g. ``dask.distributed.Client(...).get_executor()``).
    progress : bool
        Show a progress bar on stderr.

    Notes
    -----
    Results arrive as soon as each item finishes, so the caller can keep them one by
    one and a killed run loses nothing that had finished. The per-item function is
    pure, so the results do not depend on where it ran; callers that need an order sort
    by item id. An exception in any item cancels the pending ones and is re-raised.
    At most twice as many items as there are workers are in flight, so memory stays
    flat.
    """
    items = list(items)
    bar = _progress_bar(len(items), desc) if progress else _NoBar()
    try:
        if executor is None and (workers <= 1 or len(items) <= 1):
            items.reverse()
            while items:
                item = items.pop()  # nothing keeps a finished item alive
                yield fn(item)
                bar.update()
            return
        if executor is None:
            with open_executor(workers) as pool:
                yield from _on_executor(fn, items, pool, bar)
        else:
            yield from _on_executor(fn, items, executor, bar)
    finally:
        bar.close()


def _on_executor(fn, items, executor, bar):
    from concurrent.futures import FIRST_COMPLETED, wait
    it = iter(items)
    limit = 2 * _slots(executor)
    pending = set()
    for item in it:
        pending.add(executor.submit(fn, item))
        if len(pending) >= limit:
            break
    try:
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                exc = fut.exception()
                if exc is not None:
                    raise exc
                yield fut.result()
                bar.update()
                nxt = next(it, None)
                if nxt is not None:
                    pending.add(executor.submit(fn, nxt))
    finally:
        for other in pending:
            other.cancel()
