"""Exceptions raised on bad input.

Every error about a file names the file, so a failure deep inside a long run can be
traced to its input without a debugger.
"""

from __future__ import annotations

from os import PathLike


def first_names(names, most: int = 3) -> str:
    """The first ``most`` of ``names`` for a message, `` ...`` after them when there are
    more: what a refusal that lists files shows."""
    names = [str(n) for n in names]
    return ", ".join(names[:most]) + (" ..." if len(names) > most else "")


#: What a server's reader of a connection meets when the client has gone away (a
#: browser dropping a speculative connection, a closed tab): not an error of the
#: server, so the annotation server and ``segbench serve`` print nothing for it.
CLIENT_GONE = (ConnectionResetError, ConnectionAbortedError, BrokenPipeError, TimeoutError)


def is_masked_array(obj) -> bool:
    """Whether ``obj`` is a ``numpy.ma.MaskedArray`` (or of a subclass), told by its
    classes' names: ``numpy.ma`` is not imported for the question (the semantic
    command starts without it)."""
    return any(
        c.__name__ == "MaskedArray" and c.__module__.startswith("numpy.ma")
        for c in type(obj).__mro__
    )


def unmasked(arr, what: str):
    """``arr`` as the benchmarks read it: a masked array without any pixel masked as
    its data; anything else as it is. InputError for a masked array with a pixel
    masked: every benchmark reads every pixel, so its mask would be dropped without a
    word.

    Parameters
    ----------
    arr : object
        Anything; only a ``numpy.ma.MaskedArray`` is looked at.
    what : str
        How the message names it.
    """
    if not is_masked_array(arr):
        return arr
    import numpy as np

    n = int(np.ma.count_masked(arr))
    if n:
        raise InputError(
            f"{what}: a masked array with {n} pixel(s) masked; the benchmarks read "
            "every pixel, so the mask would be ignored: fill it (np.ma.filled(x, "
            "value)), or mark ground-truth pixels to ignore with the ignore label "
            "(semantic: ignore_index)"
        )
    return np.ma.getdata(arr)


class SegbenchError(Exception):
    """Base class of segbench's own errors."""


class InputError(SegbenchError, ValueError):
    """An input (file or array) is missing, malformed or inconsistent.

    Parameters
    ----------
    message : str
        What is wrong, in words a user can act on.
    path : str or PathLike, optional
        The offending file; prefixed to the message when given.
    """

    def __init__(self, message: str, path: str | PathLike | None = None):
        self.path = None if path is None else str(path)
        self.problem = message
        super().__init__(f"{self.path}: {message}" if self.path else message)


class OutputError(SegbenchError, OSError):
    """An output file or folder cannot be written (read-only, not a folder, disk full).

    Parameters
    ----------
    path : str or PathLike
        What could not be written.
    reason : str
        The operating system's reason, e.g. ``'Permission denied'``.
    """

    def __init__(self, path: str | PathLike, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: cannot write: {reason}")

    def __str__(self) -> str:  # OSError's own __str__ would show the errno tuple
        return f"{self.path}: cannot write: {self.reason}"


class ClusterLostError(SegbenchError):
    """The Dask cluster of ``--scheduler`` went away (scheduler gone, or its workers
    lost) before every item was done. What had finished is kept.

    Parameters
    ----------
    done, total : int
        Items finished (and kept) and items of the run.
    saved : bool
        Whether finished items were saved (a run with an output folder).
    unit : str
        What the items are, plural ("images", or "trees" for a training).
    """

    def __init__(self, done: int, total: int, *, saved: bool = True, unit: str = "images"):
        self.done, self.total, self.saved = int(done), int(total), saved
        kept = (
            f"finished {unit} are saved, rerun to resume"
            if saved
            else "nothing was saved (no --out)"
        )
        super().__init__(f"{self._what} after {self.done} of {self.total} {unit}; {kept}")

    _what = "the Dask cluster went away"


class WorkerDiedError(ClusterLostError):
    """A local worker process of ``--workers`` died (killed by the OOM killer or
    ``kill -9``) before every item was done. What had finished is kept.

    Parameters
    ----------
    done, total : int
        Items finished (and kept) and items of the run.
    saved : bool
        Whether finished items were saved (a run with an output folder).
    """

    _what = "a worker process died"
