"""Map a per-item function over items, serially or in worker processes, with progress."""

from __future__ import annotations

import multiprocessing as mp
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

from tqdm.auto import tqdm


def map_items(fn: Callable, items: Iterable, *, workers: int = 1, progress: bool = True,
              desc: str = "") -> Iterator:
    """Yield ``fn(item)`` for every item, in completion order.

    Parameters
    ----------
    fn : callable
        A module-level (picklable) function of one item.
    items : iterable
    workers : int
        1 runs in this process; more uses that many worker processes.
    progress : bool
        Show a progress bar on stderr.

    Notes
    -----
    Results arrive as soon as each item finishes, so the caller can persist them one
    by one and a killed run loses nothing that had finished. The per-item function is
    pure, so the results do not depend on the number of workers; callers that need an
    order sort by item id. An exception in any item cancels the pending ones and is
    re-raised here.
    """
    items = list(items)
    bar = tqdm(total=len(items), desc=desc, disable=not progress, file=sys.stderr,
               unit="img", dynamic_ncols=True, leave=False)
    try:
        if workers <= 1 or len(items) <= 1:
            for item in items:
                yield fn(item)
                bar.update()
            return
        ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            # keep a bounded number of tasks in flight so memory stays flat
            it = iter(items)
            pending = set()
            for item in it:
                pending.add(pool.submit(fn, item))
                if len(pending) >= 2 * workers:
                    break
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    exc = fut.exception()
                    if exc is not None:
                        for other in pending:
                            other.cancel()
                        raise exc
                    yield fut.result()
                    bar.update()
                    nxt = next(it, None)
                    if nxt is not None:
                        pending.add(pool.submit(fn, nxt))
    finally:
        bar.close()


def cached_map(fn: Callable, tasks: Iterable, *, key, load, save, workers: int = 1,
               progress: bool = True, desc: str = "") -> dict:
    """Per-item results with a record cache: reuse what is saved, compute the rest.

    Parameters
    ----------
    fn : callable
        Module-level worker ``task -> (task, result)``.
    tasks : iterable
        Items with an ``iid`` attribute.
    key : callable
        ``task -> dict`` identifying the inputs and parameters of a record.
    load : callable
        ``(task, key) -> result or None`` (None: absent, stale or half-written).
    save : callable
        ``(task, key, result) -> None``, called as soon as each item finishes, so a
        killed run loses nothing that had finished.

    Returns
    -------
    dict
        ``iid -> result`` for every task.
    """
    results, todo, keys = {}, [], {}
    for task in tasks:
        keys[task.iid] = key(task)
        cached = load(task, keys[task.iid])
        if cached is not None:
            results[task.iid] = cached
        else:
            todo.append(task)
    for task, result in map_items(fn, todo, workers=workers, progress=progress,
                                  desc=desc):
        save(task, keys[task.iid], result)
        results[task.iid] = result
    return results
