"""The official region files with segbench's records: :mod:`segbench.io`'s formats,
read back into :class:`~segbench.region.RegionRecord`."""

from __future__ import annotations

from pathlib import Path

from ..io import (
    format_ev2,
    format_ev3,
    format_ev4,
    read_eval_cover,
    read_eval_ri_voi,
    read_region_tables,
    write_eval_region,
    write_texts,
)
from ..region import RegionRecord

__all__ = [
    "format_ev2",
    "format_ev3",
    "format_ev4",
    "read_eval_cover",
    "read_eval_ri_voi",
    "read_region_image_files",
    "write_eval_region",
    "write_region_image_files",
]


def write_region_image_files(out_dir, iid: str, record: RegionRecord) -> list[Path]:
    """Write ``<iid>_ev2.txt``, ``_ev3.txt``, ``_ev4.txt`` as evaluation_reg_image.m."""
    return write_texts(
        out_dir,
        (
            (f"{iid}_{suffix}.txt", fmt(record))
            for suffix, fmt in (
                ("ev2", format_ev2),
                ("ev3", format_ev3),
                ("ev4", format_ev4),
            )
        ),
    )


def read_region_image_files(out_dir, iid: str) -> RegionRecord:
    """Read one image's ``_ev2/_ev3/_ev4.txt`` (ours or the official code's)."""
    return RegionRecord.from_tables(*read_region_tables(out_dir, iid))
