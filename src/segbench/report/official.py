"""The official benchmark's text files, in its exact column layout.

Existing plotting scripts (``plot_eval.m`` and friends) read these, so the formats are
MATLAB's ``fprintf`` formats verbatim: ``%10g`` columns separated by one space.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..boundary import BoundaryCounts, BoundarySummary
from ..io import atomic_write_text


def _g(x) -> str:
    return "%10g" % float(x)


def write_texts(out, named_texts) -> list[Path]:
    """Write each (file name, text) into folder ``out`` atomically; the paths written."""
    paths = []
    for name, text in named_texts:
        atomic_write_text(Path(out) / name, text)
        paths.append(Path(out) / name)
    return paths


def format_ev1(counts: BoundaryCounts) -> str:
    """``<iid>_ev1.txt``: threshold, cntR, sumR, cntP, sumP per line."""
    return "".join(" ".join(_g(v) for v in row) + "\n" for row in counts.as_table())


def write_ev1(path, counts: BoundaryCounts) -> None:
    """Write a per-image counts file as ``evaluation_bdry_image.m`` does."""
    atomic_write_text(path, format_ev1(counts))


def read_ev1(path) -> BoundaryCounts:
    """Read a per-image counts file (ours or the official code's)."""
    return BoundaryCounts.from_table(np.loadtxt(path, ndmin=2))


def write_eval_bdry(out_dir, summary: BoundarySummary) -> list[Path]:
    """Write ``eval_bdry.txt``, ``eval_bdry_img.txt`` and ``eval_bdry_thr.txt``.

    Returns the paths written. Images are numbered 1..N in the order of
    ``summary.per_image`` (sorted ids), as the official code numbers its file list.
    """
    out = Path(out_dir)
    img = "".join("%10d " % (i + 1) + " ".join(_g(v) for v in row) + "\n"
                  for i, row in enumerate(summary.per_image))
    thr = "".join(" ".join(_g(v) for v in row) + "\n" for row in np.column_stack(
        [summary.thresholds, summary.recall, summary.precision, summary.f]))
    t, r, p, f = summary.ods
    r_max, p_max, f_max = summary.ois
    main = " ".join(_g(v) for v in (t, r, p, f, r_max, p_max, f_max, summary.ap)) + "\n"
    return write_texts(out, (("eval_bdry_img.txt", img), ("eval_bdry_thr.txt", thr),
                             ("eval_bdry.txt", main)))


def read_eval_bdry(path) -> dict:
    """Parse an ``eval_bdry.txt`` (8 numbers) into named fields."""
    v = np.loadtxt(path).ravel()
    names = ("ods_threshold", "ods_recall", "ods_precision", "ods_f",
             "ois_recall", "ois_precision", "ois_f", "ap")
    return dict(zip(names, (float(x) for x in v)))
