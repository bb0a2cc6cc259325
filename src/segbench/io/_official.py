"""The official benchmark's text files, in its exact column layout, both directions.

Existing plotting scripts (``plot_eval.m`` and friends) read these, so the formats are
MATLAB's ``fprintf`` formats verbatim: ``%10g`` columns separated by one space, ``%10d``
for image numbers. Boundary (evaluation_bdry_image.m, collect_eval_bdry.m):
``<iid>_ev1.txt``, ``eval_bdry.txt``, ``eval_bdry_img.txt``, ``eval_bdry_thr.txt``.
Region (evaluation_reg_image.m, collect_eval_reg.m): ``<iid>_ev2.txt`` (threshold, cntR,
sumR, cntP, sumP), ``_ev3.txt`` (cntR_best), ``_ev4.txt`` (threshold, RI, VOI),
``eval_cover.txt``, ``eval_cover_img.txt``, ``eval_cover_th.txt``, ``eval_RI_VOI.txt``,
``eval_RI_VOI_thr.txt``.

Writers take the records and summaries of :mod:`segbench.boundary` and
:mod:`segbench.region` by their attributes (no measure is imported here); readers return
plain arrays and dicts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from ._atomic import atomic_write_text
from ._files import require_file


def _g(x) -> str:
    return f"{float(x):10g}"


def _rows(table) -> str:
    return "".join(" ".join(_g(v) for v in row) + "\n" for row in np.atleast_2d(table))


def write_texts(out, named_texts) -> list[Path]:
    """Write each (file name, text) into folder ``out`` atomically; the paths written."""
    paths = []
    for name, text in named_texts:
        atomic_write_text(Path(out) / name, text)
        paths.append(Path(out) / name)
    return paths


# --- boundary ------------------------------------------------------------------------


def format_ev1(counts) -> str:
    """``<iid>_ev1.txt`` of a BoundaryCounts: threshold, cntR, sumR, cntP, sumP per line."""
    return "".join(" ".join(_g(v) for v in row) + "\n" for row in counts.as_table())


def read_ev1_table(path) -> np.ndarray:
    """A per-image counts file (ours or the official code's) as a (T, 5) table."""
    return np.loadtxt(path, ndmin=2)


def read_ev1(path) -> np.ndarray:
    """A per-image boundary counts file, checked: ``<iid>_ev1.txt`` as BSR's
    ``evaluation_bdry_image.m`` and Dollar's ``edgesEvalImg.m`` write it.

    Parameters
    ----------
    path : str or PathLike

    Returns
    -------
    (T, 5) ndarray of float64
        One row per threshold: threshold, cntR, sumR, cntP, sumP (the counts whole
        numbers), thresholds increasing.

    Raises
    ------
    InputError
        Naming the file: unreadable, not five numbers a row, counts negative or not
        whole, matched counts above their totals, thresholds not increasing.
    """
    path = require_file(path)
    if not path.read_bytes().strip():  # numpy would warn "no data" and give (0, 1)
        raise InputError(
            "the file is empty: no counts (threshold cntR sumR cntP sumP a row); the "
            "run that wrote it may have stopped early",
            path,
        )
    try:
        table = np.loadtxt(path, ndmin=2)
    except (OSError, ValueError) as exc:
        # numpy's own advice ("use `usecols` ...") names an option the user cannot set
        why = str(exc).split("; use `usecols`")[0]
        raise InputError(
            f"not a per-image counts file (threshold cntR sumR cntP sumP a row): {why}",
            path,
        ) from None
    if table.ndim != 2 or table.shape[1] != 5 or table.shape[0] == 0:
        raise InputError(
            f"expected rows of 5 numbers (threshold cntR sumR cntP sumP), "
            f"got a table of shape {table.shape}",
            path,
        )
    counts = table[:, 1:]
    if (
        not np.isfinite(table).all()
        or (counts < 0).any()
        or (counts != np.round(counts)).any()
    ):
        raise InputError("the counts (columns 2-5) must be whole numbers >= 0", path)
    if (table[:, 1] > table[:, 2]).any() or (table[:, 3] > table[:, 4]).any():
        raise InputError(
            "a matched count exceeds its total (cntR > sumR or cntP > sumP)", path
        )
    if table.shape[0] > 1 and not (np.diff(table[:, 0]) > 0).all():
        raise InputError("the thresholds (column 1) must increase", path)
    return table


def write_eval_bdry(out_dir, summary) -> list[Path]:
    """Write ``eval_bdry.txt``, ``eval_bdry_img.txt`` and ``eval_bdry_thr.txt`` of a
    BoundarySummary; returns the paths written.

    Images are numbered 1..N in the order of ``summary.per_image`` (sorted ids), as the
    official code numbers its file list.
    """
    img = "".join(
        f"{i + 1:10d} " + " ".join(_g(v) for v in row) + "\n"
        for i, row in enumerate(summary.per_image)
    )
    thr = "".join(
        " ".join(_g(v) for v in row) + "\n"
        for row in np.column_stack(
            [summary.thresholds, summary.recall, summary.precision, summary.f]
        )
    )
    t, r, p, f = summary.ods
    r_max, p_max, f_max = summary.ois
    main = " ".join(_g(v) for v in (t, r, p, f, r_max, p_max, f_max, summary.ap)) + "\n"
    return write_texts(
        out_dir,
        (("eval_bdry_img.txt", img), ("eval_bdry_thr.txt", thr), ("eval_bdry.txt", main)),
    )


def read_eval_bdry(path) -> dict:
    """Parse an ``eval_bdry.txt`` (8 numbers) into named fields."""
    v = np.loadtxt(path).ravel()
    names = (
        "ods_threshold",
        "ods_recall",
        "ods_precision",
        "ods_f",
        "ois_recall",
        "ois_precision",
        "ois_f",
        "ap",
    )
    return dict(zip(names, (float(x) for x in v)))


# --- region --------------------------------------------------------------------------


def format_ev2(record) -> str:
    """``<iid>_ev2.txt`` of a RegionRecord: threshold, cntR, sumR, cntP, sumP per line."""
    return _rows(record.ev2_table())


def format_ev3(record) -> str:
    """``<iid>_ev3.txt`` of a RegionRecord: cntR_best on one line."""
    return _g(record.cnt_r_best) + "\n"


def format_ev4(record) -> str:
    """``<iid>_ev4.txt`` of a RegionRecord: threshold, RI, VOI per line."""
    return _rows(record.ev4_table())


def read_region_tables(out_dir, iid: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One image's ``_ev2``, ``_ev3`` and ``_ev4.txt`` (ours or the official code's)."""
    out = Path(out_dir)
    return (
        np.loadtxt(out / f"{iid}_ev2.txt", ndmin=2),
        np.loadtxt(out / f"{iid}_ev3.txt", ndmin=1),
        np.loadtxt(out / f"{iid}_ev4.txt", ndmin=2),
    )


def write_eval_region(out_dir, summary) -> list[Path]:
    """Write the five dataset files of collect_eval_reg.m of a RegionSummary; returns
    their paths.

    Images are numbered 1..N in the order of ``summary.per_image`` (sorted ids), as the
    official code numbers its file list.
    """
    img = "".join(
        f"{i + 1:10d} " + " ".join(_g(v) for v in row) + "\n"
        for i, row in enumerate(summary.per_image)
    )
    th = _rows(np.column_stack([summary.thresholds, summary.covering]))
    cover = (
        " ".join(
            _g(v)
            for v in (*summary.covering_ods, summary.covering_ois, summary.covering_best)
        )
        + "\n"
    )
    ri_thr = _rows(np.column_stack([summary.thresholds, summary.pri, summary.vi]))
    ri = (
        " ".join(
            _g(v)
            for v in (
                summary.pri_ods[0],
                summary.pri_ods[1],
                summary.pri_ois,
                summary.vi_ods[0],
                summary.vi_ods[1],
                summary.vi_ois,
            )
        )
        + "\n"
    )
    return write_texts(
        out_dir,
        (
            ("eval_cover_img.txt", img),
            ("eval_cover_th.txt", th),
            ("eval_cover.txt", cover),
            ("eval_RI_VOI_thr.txt", ri_thr),
            ("eval_RI_VOI.txt", ri),
        ),
    )


def read_eval_cover(path) -> dict:
    """Parse an ``eval_cover.txt`` (4 numbers) into named fields."""
    v = np.loadtxt(path).ravel()
    return dict(zip(("ods_threshold", "ods", "ois", "best"), (float(x) for x in v)))


def read_eval_ri_voi(path) -> dict:
    """Parse an ``eval_RI_VOI.txt`` (6 numbers) into named fields."""
    v = np.loadtxt(path).ravel()
    names = (
        "pri_ods_threshold",
        "pri_ods",
        "pri_ois",
        "vi_ods_threshold",
        "vi_ods",
        "vi_ois",
    )
    return dict(zip(names, (float(x) for x in v)))
