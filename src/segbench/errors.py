"""Exceptions raised on bad input.

Every error about a file names the file, so a failure deep inside a long run can be
traced to its input without a debugger.
"""

from __future__ import annotations

from os import PathLike


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
