"""The official region benchmark's text files, in its exact column layout.

Per image (evaluation_reg_image.m): ``<iid>_ev2.txt`` (threshold, cntR, sumR, cntP,
sumP), ``<iid>_ev3.txt`` (cntR_best), ``<iid>_ev4.txt`` (threshold, RI, VOI). Per dataset
(collect_eval_reg.m): ``eval_cover.txt``, ``eval_cover_img.txt``, ``eval_cover_th.txt``,
``eval_RI_VOI.txt``, ``eval_RI_VOI_thr.txt``. Formats are MATLAB's ``fprintf`` formats
verbatim (``%10g`` columns separated by one space; ``%10d`` for image numbers).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..region import RegionRecord, RegionSummary
from ..io import atomic_write_text
from .official import write_texts


def _g(x) -> str:
    return "%10g" % float(x)


def _rows(table) -> str:
    return "".join(" ".join(_g(v) for v in row) + "\n" for row in np.atleast_2d(table))


def format_ev2(record: RegionRecord) -> str:
    """``<iid>_ev2.txt``: threshold, cntR, sumR, cntP, sumP per line."""
    return _rows(record.ev2_table())


def format_ev3(record: RegionRecord) -> str:
    """``<iid>_ev3.txt``: cntR_best on one line."""
    return _g(record.cnt_r_best) + "\n"


def format_ev4(record: RegionRecord) -> str:
    """``<iid>_ev4.txt``: threshold, RI, VOI per line."""
    return _rows(record.ev4_table())


def write_region_image_files(out_dir, iid: str, record: RegionRecord) -> list[Path]:
    """Write ``<iid>_ev2.txt``, ``_ev3.txt``, ``_ev4.txt`` as evaluation_reg_image.m."""
    out = Path(out_dir)
    paths = []
    for suffix, text in (("ev2", format_ev2(record)), ("ev3", format_ev3(record)),
                         ("ev4", format_ev4(record))):
        path = out / f"{iid}_{suffix}.txt"
        atomic_write_text(path, text)
        paths.append(path)
    return paths


def read_region_image_files(out_dir, iid: str) -> RegionRecord:
    """Read one image's ``_ev2/_ev3/_ev4.txt`` (ours or the official code's)."""
    out = Path(out_dir)
    return RegionRecord.from_tables(np.loadtxt(out / f"{iid}_ev2.txt", ndmin=2),
                                    np.loadtxt(out / f"{iid}_ev3.txt", ndmin=1),
                                    np.loadtxt(out / f"{iid}_ev4.txt", ndmin=2))


def write_eval_region(out_dir, summary: RegionSummary) -> list[Path]:
    """Write the five dataset files of collect_eval_reg.m; returns their paths.

    Images are numbered 1..N in the order of ``summary.per_image`` (sorted ids), as the
    official code numbers its file list.
    """
    out = Path(out_dir)
    img = "".join("%10d " % (i + 1) + " ".join(_g(v) for v in row) + "\n"
                  for i, row in enumerate(summary.per_image))
    th = _rows(np.column_stack([summary.thresholds, summary.covering]))
    cover = " ".join(_g(v) for v in (*summary.covering_ods, summary.covering_ois,
                                     summary.covering_best)) + "\n"
    ri_thr = _rows(np.column_stack([summary.thresholds, summary.pri, summary.vi]))
    ri = " ".join(_g(v) for v in (summary.pri_ods[0], summary.pri_ods[1], summary.pri_ois,
                                  summary.vi_ods[0], summary.vi_ods[1],
                                  summary.vi_ois)) + "\n"
    return write_texts(out, (("eval_cover_img.txt", img), ("eval_cover_th.txt", th),
                             ("eval_cover.txt", cover), ("eval_RI_VOI_thr.txt", ri_thr),
                             ("eval_RI_VOI.txt", ri)))


def read_eval_cover(path) -> dict:
    """Parse an ``eval_cover.txt`` (4 numbers) into named fields."""
    v = np.loadtxt(path).ravel()
    return dict(zip(("ods_threshold", "ods", "ois", "best"), (float(x) for x in v)))


def read_eval_ri_voi(path) -> dict:
    """Parse an ``eval_RI_VOI.txt`` (6 numbers) into named fields."""
    v = np.loadtxt(path).ravel()
    names = ("pri_ods_threshold", "pri_ods", "pri_ois", "vi_ods_threshold", "vi_ods",
             "vi_ois")
    return dict(zip(names, (float(x) for x in v)))
