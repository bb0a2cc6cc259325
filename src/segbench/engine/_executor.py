"""Where per-item work runs: in this process, in worker processes, or on any
``concurrent.futures``-style executor (a Dask cluster through ``--scheduler``)."""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..errors import ClusterLostError, InputError, WorkerDiedError

if TYPE_CHECKING:
    from concurrent.futures import Executor
# multiprocessing and concurrent.futures are imported where several workers start:
# 25 ms that a one-process run never needs


def execution(
    workers: int = 1, scheduler: str | None = None, executor=None, progress: bool = True
) -> dict:
    """The keywords of :func:`segbench.engine.run` that say where and how visibly the
    work runs (they change no number), gathered once for the runners that pass them
    through."""
    return {
        "workers": workers,
        "scheduler": scheduler,
        "executor": executor,
        "progress": progress,
    }


def check_workers(workers) -> int:
    """``workers`` as an int of at least 1; InputError naming the keyword and the option
    otherwise (a string, a float, a bool, 0)."""
    import numbers

    if (
        isinstance(workers, bool)
        or not isinstance(workers, numbers.Integral)
        or workers < 1
    ):
        raise InputError(
            f"workers (--workers) must be an integer of at least 1, got {workers!r}"
        )
    return int(workers)


@contextmanager
def open_executor(workers: int = 1, scheduler: str | None = None):
    """The executor for ``workers`` local processes or a Dask ``scheduler`` address.

    Yields None for one local worker (work runs in this process), a
    :class:`~concurrent.futures.ProcessPoolExecutor` for several, or the executor of a
    ``dask.distributed`` client connected to ``scheduler`` (``tcp://host:port`` or a
    scheduler file). Closed on exit.
    """
    if scheduler:
        with _dask_client(scheduler) as client:
            yield client.get_executor(pure=False)
        return
    workers = check_workers(workers)
    if workers == 1:
        yield None
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=ctx,
        initializer=_ignore_ctrl_c,
        initargs=(os.getpid(),),
    )
    try:
        _start_workers(pool)
        yield pool
    except BaseException:
        _stop(pool)
        raise
    pool.shutdown(wait=True)


def _start_workers(pool) -> None:
    """Start the workers with Ctrl-C held back: one arriving during a fork would be
    raised in the at-fork hooks, which only print it (a traceback, and the parent runs
    on). It is delivered here once the workers exist (they ignore it)."""
    import signal

    if not hasattr(signal, "pthread_sigmask"):
        pool.submit(int)
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pool.submit(int)  # a fork pool starts every worker on its first item
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _ignore_ctrl_c(parent: int | None = None) -> None:
    """Worker start-up: Ctrl-C reaches the terminal's whole process group, but only the
    parent reports it (once) and stops the workers (:func:`_stop`)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's, if forked
    if hasattr(signal, "pthread_sigmask"):  # held back by _start_workers
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if parent is not None:
        _end_with_parent(parent)


def _end_with_parent(parent: int) -> None:
    """On Linux, a worker is sent SIGTERM when its parent dies, even by SIGKILL (no
    clean-up ran there): without it the workers were left asleep for ever."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request: end now
        os.kill(os.getpid(), signal.SIGTERM)


def _stop(pool) -> None:
    """End a pool at once (an interrupt, an error, a dead worker): the items in flight
    are not waited for (their maps and records are written whole or not at all), and
    no worker outlives the run."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    for proc in processes:
        proc.join(timeout=5)


#: Seconds to wait for a scheduler to answer: an unreachable one is reported well
#: within 20 s (Dask's own retries add a little).
CONNECT_TIMEOUT = 10
#: Address schemes of ``dask.distributed`` (inproc: a scheduler in this process).
_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")
_ADDRESS = re.compile(
    r"(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://)?"
    r"(?P<host>\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]]+):(?P<port>[^/\s]*)/?"
)


def scheduler_address(value: str) -> str:
    """The scheduler address that ``--scheduler value`` names, checked before any
    connection: ``[scheme://]host:port`` or the ``.json`` file a scheduler writes with
    ``--scheduler-file``. InputError at once (naming the value or file) if it is
    neither, the file is missing, or it holds no address."""
    from pathlib import Path

    text = str(value).strip()
    path = Path(text)
    if text.lower().endswith(".json") or path.is_file():
        if not path.is_file():
            raise InputError(
                "--scheduler: no such scheduler file (the scheduler writes "
                "it when it starts with --scheduler-file)",
                path,
            )
        try:
            address = json.loads(path.read_text(encoding="utf-8"))["address"]
            if not isinstance(address, str):
                raise TypeError
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
            raise InputError(
                "--scheduler: not a Dask scheduler file (JSON with an 'address')", path
            ) from None
        return scheduler_address_text(address, f"{path}: its address")
    return scheduler_address_text(text, "--scheduler")


def scheduler_address_text(text: str, what: str) -> str:
    """``text`` if it is a well-formed ``[scheme://]host:port`` address, else
    InputError naming ``what``."""
    if text.startswith("inproc://"):
        return text
    m = _ADDRESS.fullmatch(text)
    hint = "; give tcp://host:port or the scheduler's .json file"
    if m is None:
        raise InputError(f"{what} {text!r} is not a scheduler address (host:port)" + hint)
    scheme = (m["scheme"] or "tcp").lower()
    if scheme not in _SCHEMES:
        raise InputError(
            f"{what} {text!r}: unknown scheme {scheme}:// (Dask speaks "
            f"{', '.join(s + '://' for s in _SCHEMES)})" + hint
        )
    port = m["port"]
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(
            f"{what} {text!r}: the port must be a number 1-65535, not {port!r}" + hint
        )
    return text


@contextmanager
def _quiet_dask():
    """Dask's client logs each reconnection attempt, with tracebacks, and tornado's
    event loop logs the futures a lost scheduler leaves failed (``tornado.application``);
    the run reports the outcome in one line instead."""
    names = [
        "distributed",
        "tornado.application",
        *(n for n in logging.Logger.manager.loggerDict if n.startswith("distributed.")),
    ]
    logs = [logging.getLogger(n) for n in names]  # Dask sets levels on some children
    levels = [log.level for log in logs]
    for log in logs:
        log.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for log, level in zip(logs, levels):
            log.setLevel(level)


@contextmanager
def _dask_client(scheduler: str):
    """A ``dask.distributed`` client of the scheduler ``scheduler`` names, closed on
    exit; InputError in bounded time when it cannot be reached."""
    address = scheduler_address(scheduler)
    try:
        from dask.distributed import Client
    except ImportError:
        raise InputError(
            "--scheduler needs dask.distributed: pip install 'segbench[distributed]'"
        ) from None
    with _quiet_dask():
        try:
            client = Client(address, timeout=f"{CONNECT_TIMEOUT}s")
        except Exception as exc:  # noqa: BLE001 - whatever Dask raises: one line
            why = str(exc) or type(exc).__name__
            raise InputError(
                f"cannot reach the Dask scheduler at {scheduler} within "
                f"{CONNECT_TIMEOUT} s (is it running?): {why}"
            ) from None
        try:
            yield client
        finally:
            try:
                client.close(timeout=CONNECT_TIMEOUT)
            except Exception:  # noqa: BLE001 - a cluster already gone
                pass


def _slots(executor: Executor) -> int:
    n = getattr(executor, "_max_workers", None)
    if n is None:  # a Dask executor: as many as it has threads
        client = getattr(executor, "_client", None)
        n = 4  # a safe default: no client, or any failure asking it
        if client is not None:
            try:
                n = sum(
                    w.get("nthreads", 1)
                    for w in client.scheduler_info()["workers"].values()
                )
            except Exception:  # noqa: BLE001 - any failure: the safe default
                n = 4
    return max(1, int(n))


class _NoBar:
    """What a progress bar does when none is shown (tqdm is then never imported)."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int, desc: str, unit: str = "img"):
    from tqdm.auto import tqdm

    # a terminal clears a finished bar; a log keeps the last state drawn, which must be
    # the final count, not the 0 % of a bar whose work ended before its first redraw
    tty = getattr(sys.stderr, "isatty", lambda: False)()
    return tqdm(
        total=total,
        desc=desc,
        file=sys.stderr,
        unit=unit,
        dynamic_ncols=True,
        leave=not tty,
    )


def map_items(
    fn: Callable,
    items: Iterable,
    *,
    workers: int = 1,
    executor: Executor | None = None,
    progress: bool = True,
    desc: str = "",
    unit: str = "img",
) -> Iterator:
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
    desc, unit : str
        The bar's label and the name of one item on it.

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
    # no bar for no work (a run resumed whole): it would show an empty "0img" line
    bar = _progress_bar(len(items), desc, unit) if progress and items else _NoBar()
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


def _cluster_failure(exc: BaseException) -> bool:
    """Whether ``exc`` says the cluster, not the item, failed: a future cancelled under
    us (the scheduler went away) or one of Dask's own errors (workers lost, a closed
    connection). An item's own error (InputError, ...) is not."""
    from concurrent.futures import CancelledError

    if isinstance(exc, CancelledError):
        return True
    return any(t.__module__.split(".")[0] == "distributed" for t in type(exc).__mro__)


def _on_executor(fn, items, executor, bar):
    from concurrent.futures import FIRST_COMPLETED, wait

    it = iter(items)
    total, done = len(items), 0
    dask = getattr(executor, "_client", None) is not None
    pending = set()
    try:
        limit = 2 * _slots(executor)
        for item in it:
            pending.add(executor.submit(fn, item))
            if len(pending) >= limit:
                break
        while pending:
            done_now, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done_now:
                exc = fut.exception()
                if exc is not None:
                    raise exc
                yield fut.result()
                done += 1
                bar.update()
                nxt = next(it, None)
                if nxt is not None:
                    pending.add(executor.submit(fn, nxt))
    except Exception as exc:
        from concurrent.futures.process import BrokenProcessPool

        if isinstance(exc, BrokenProcessPool):  # killed (OOM killer, kill -9)
            raise WorkerDiedError(done, total) from None
        if dask and _cluster_failure(exc):
            raise ClusterLostError(done, total) from None
        if dask and isinstance(exc, RuntimeError) and "closed" in str(exc).lower():
            raise ClusterLostError(done, total) from None  # submit on a closed client
        raise
    finally:
        for other in pending:
            other.cancel()
