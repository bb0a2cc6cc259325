"""The official boundary files with segbench's records: :mod:`segbench.io`'s formats,
read back into :class:`~segbench.boundary.BoundaryCounts`."""

from __future__ import annotations

from ..boundary import BoundaryCounts
from ..io import (
    atomic_write_text,
    format_ev1,
    read_ev1_table,
    read_eval_bdry,
    write_eval_bdry,
    write_texts,
)

__all__ = [
    "format_ev1",
    "read_ev1",
    "read_eval_bdry",
    "write_eval_bdry",
    "write_ev1",
    "write_texts",
]


def write_ev1(path, counts: BoundaryCounts) -> None:
    """Write a per-image counts file as ``evaluation_bdry_image.m`` does."""
    atomic_write_text(path, format_ev1(counts))


def read_ev1(path) -> BoundaryCounts:
    """Read a per-image counts file (ours or the official code's)."""
    return BoundaryCounts.from_table(read_ev1_table(path))
