"""Deprecated for one release: see :data:`segbench.runners.MOVED`."""

from .runners import moved

__getattr__ = moved(__name__)
