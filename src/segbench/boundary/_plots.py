"""Precision-recall plots in the style of the BSDS benchmark figures, drawn with matplotlib.

The figure is one fixed chart: axes on [0, 1]², iso-F contours, the curves, their ODS
points, the human point and a legend with each ODS F. matplotlib (Agg, no pyplot, no
display) is imported inside :func:`plot_pr` only, so ``segbench --help`` and
``--no-plot`` runs never load it.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from ..io import atomic_write_bytes

__all__ = ["MIN_DRAWN_RECALL", "drawn_points", "plot_pr"]

# Names under which the pieces of a curve may be found, in order of preference.
_NAME = ("name", "label", "algorithm")
_RECALL = ("recall", "r", "R")
_PRECISION = ("precision", "p", "P")
_ODS = ("ods", "ODS", "ods_point")
_F = ("f", "F", "f_measure", "fmeasure", "f1")


def _get(obj: Any, keys: Sequence[str], what: str, *, required: bool = True):
    """Field of a mapping, dataclass or plain object under the first name it has."""
    for key in keys:
        if isinstance(obj, Mapping):
            if key in obj:
                return obj[key]
        elif hasattr(obj, key):
            return getattr(obj, key)
    if required:
        raise ValueError(f"{what}: expected one of the fields {', '.join(keys)}")
    return None


def _point(obj: Any, what: str) -> tuple[float, float, float]:
    """(recall, precision, F) from a sequence or an object with those fields.

    Sequences are (recall, precision), (recall, precision, F), or (threshold, recall,
    precision, F) as ``BoundarySummary.ods``. F is computed when not given."""
    if obj is None:
        raise ValueError(f"{what}: missing")
    if isinstance(obj, Mapping) or not isinstance(obj, (Sequence, np.ndarray)):
        r = float(_get(obj, _RECALL, what))
        p = float(_get(obj, _PRECISION, what))
        f = _get(obj, _F, what, required=False)
    else:
        vals = [float(v) for v in obj]
        if len(vals) == 4:
            vals = vals[1:]  # (threshold, recall, precision, F)
        if len(vals) not in (2, 3):
            raise ValueError(
                f"{what}: expected (recall, precision[, F]), got {len(vals)} values"
            )
        r, p = vals[:2]
        f = vals[2] if len(vals) == 3 else None
    if f is None:
        f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return r, p, float(f)


#: matplotlib's default colour cycle (tab10) and the markers of the ODS points, in order
_COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
_MARKERS = "osD^v<>phP"
_SIDE_INCHES = 5.6
_ISO_GREY, _ISO_LABEL_GREY, _GRID_GREY, _FRAME_GREY = (
    "#d1d1d1",
    "#8c8c8c",
    "#ededed",
    "#d9d9d9",
)


def axes_box(title: bool) -> tuple[float, float, float]:
    """Where :func:`plot_pr` puts its square axes.

    Parameters
    ----------
    title : bool
        Whether the plot has a title (16 pt more room above).

    Returns
    -------
    (left, top, side) : tuple of float
        In points from the figure's top-left corner (pixels: times ``dpi / 72``).

    Notes
    -----
    A fixed box rather than a layout engine: the axes sit at the same pixels whatever
    the names, so plots of several runs line up (and tests can find a point). Margins:
    50 pt left for the tick labels and axis name, 18 right, 40 below, 14 above (30 with
    a title).
    """
    full = _SIDE_INCHES * 72
    left, right, bottom, top = 50.0, 18.0, 40.0, 30.0 if title else 14.0
    side = min(full - left - right, full - top - bottom)
    return (
        left + (full - left - right - side) / 2,
        top + (full - top - bottom - side) / 2,
        side,
    )


def _plain(text: str) -> str:
    """``text`` shown as written: matplotlib reads ``$...$`` as mathtext (an unbalanced
    ``$`` raises), a backslash before each ``$`` keeps it a dollar sign."""
    return str(text).replace("$", r"\$")


def _iso_f(ax) -> None:
    """Iso-F contours F = 0.1 ... 0.9 (P = F R / (2R - F) on R in (F/2, 1]), labelled
    just above where they meet the diagonal R = P = F."""
    for f in np.round(np.arange(0.1, 0.95, 0.1), 1):
        r = np.linspace(f / 2 + 1e-3, 1.0, 400)
        p = f * r / (2 * r - f)
        keep = p <= 1.0
        ax.plot(r[keep], p[keep], color=_ISO_GREY, lw=0.8, zorder=1)
        ax.annotate(
            f"{f:.1f}",
            (f, f),
            xytext=(2, 2),
            textcoords="offset points",
            fontsize=7,
            color=_ISO_LABEL_GREY,
            zorder=1,
        )


#: Points of a curve below this recall are not drawn, as BSR's ``plot_eval.m``
#: (``f = find(prvals(:,2) >= 0.01)``): thresholds above every value of a map detect
#: nothing, R = P = 0, and drawing them adds a vertical segment down the R = 0 axis.
MIN_DRAWN_RECALL = 0.01


def drawn_points(recall, precision) -> np.ndarray:
    """Which points of a PR curve :func:`plot_pr` draws, as BSR's ``plot_eval.m``.

    Parameters
    ----------
    recall, precision : (T,) array_like
        A curve, one point per threshold.

    Returns
    -------
    (T,) ndarray of bool
        True where recall >= :data:`MIN_DRAWN_RECALL` (0.01) and both values are finite.

    Notes
    -----
    ``plot_eval.m`` (BSR ``bench/benchmarks``) keeps the rows of ``eval_bdry_thr.txt``
    with recall >= 0.01 and draws them as a line when more than one is left, else only
    the ODS point. Only the drawing follows it; the scores use every threshold.
    """
    r = np.asarray(recall, dtype=float)
    p = np.asarray(precision, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.isfinite(r) & np.isfinite(p) & (r >= MIN_DRAWN_RECALL)


def _draw(drawn, human_point, title, dpi: int) -> bytes:
    """The PNG bytes of the figure (matplotlib imported here: only a plot needs it)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    fig = Figure(figsize=(_SIDE_INCHES, _SIDE_INCHES), dpi=dpi)
    FigureCanvasAgg(fig)
    full = _SIDE_INCHES * 72
    left, top, side = axes_box(bool(title))
    ax = fig.add_axes((left / full, 1 - (top + side) / full, side / full, side / full))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ticks = np.linspace(0, 1, 6)
    ax.set_xticks(ticks, [f"{t:.1f}" for t in ticks])
    ax.set_yticks(ticks, [f"{t:.1f}" for t in ticks])
    ax.tick_params(labelsize=10, width=0.8, length=3.5)
    for name in ("top", "right"):
        ax.spines[name].set_visible(False)
    for name in ("left", "bottom"):
        ax.spines[name].set_linewidth(0.8)
    ax.grid(True, color=_GRID_GREY, lw=0.6, zorder=0)
    ax.set_axisbelow(True)
    ax.set_xlabel("Recall", fontsize=10)
    ax.set_ylabel("Precision", fontsize=10)
    if title:
        ax.set_title(_plain(title), fontsize=12)
    _iso_f(ax)

    handles = []
    for i, (name, r, p, ods) in enumerate(drawn):
        colour, marker = _COLOURS[i % len(_COLOURS)], _MARKERS[i % len(_MARKERS)]
        keep = drawn_points(r, p)
        if keep.sum() > 1:  # one point left: plot_eval.m shows the ODS point only
            # unclipped: a curve along P = 1 or R = 1 shows its whole width
            ax.plot(r[keep], p[keep], color=colour, lw=1.8, zorder=2, clip_on=False)
        label = name if ods is None else f"{name} [F = {ods[2]:.3f}]"
        handles.append(
            Line2D(
                [],
                [],
                color=colour,
                lw=1.8,
                label=_plain(label),
                marker=None if ods is None else marker,
                ms=7,
                mec="white",
                mew=0.8,
            )
        )
    for i, (_name, _r, _p, ods) in enumerate(drawn):  # ODS points above every curve
        if ods is not None:
            ax.plot(
                [ods[0]],
                [ods[1]],
                ls="none",
                marker=_MARKERS[i % len(_MARKERS)],
                ms=7,
                color=_COLOURS[i % len(_COLOURS)],
                mec="white",
                mew=0.8,
                zorder=3,
                clip_on=False,
            )
    if human_point is not None:
        ax.plot(
            [human_point[0]],
            [human_point[1]],
            ls="none",
            marker="*",
            ms=14,
            color="black",
            mec="white",
            mew=0.8,
            zorder=4,
            clip_on=False,
        )
        handles.append(
            Line2D(
                [],
                [],
                ls="none",
                marker="*",
                ms=12,
                color="black",
                mec="white",
                mew=0.8,
                label=f"Human [F = {human_point[2]:.3f}]",
            )
        )
    if handles:
        legend = ax.legend(
            handles=handles,
            loc="lower left",
            fontsize=8,
            frameon=True,
            fancybox=True,
            framealpha=1.0,
            edgecolor=_FRAME_GREY,
        )
        legend.get_frame().set_linewidth(0.8)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        # a run named in a script the font lacks (CJK) is drawn as boxes; matplotlib
        # says so once per glyph, which is no news about the benchmark
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from")
        # no "Software" entry (the matplotlib version): the same plot, the same bytes
        fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


def plot_pr(
    curves, path: str | PathLike, *, human=None, title: str | None = None, dpi: int = 150
) -> Path:
    """Draw precision-recall curves with their ODS points and iso-F contours; save a PNG.

    Parameters
    ----------
    curves : sequence of curves, one curve, or mapping of name to curve
        A curve is a mapping or object with ``name`` (str), ``recall`` and
        ``precision`` (1-D arrays over thresholds) and optionally ``ods`` (the ODS
        point). A point is a sequence ``(recall, precision[, F])`` or
        ``(threshold, recall, precision, F)``, or anything with fields ``recall``,
        ``precision`` and optionally ``f``/``F``. With a mapping of names to curves the
        curves need no ``name``, so ``{"Canny": summary}`` works for a
        :class:`segbench.boundary.BoundarySummary`.
    path : str or PathLike
        Output PNG file; parent folders are created.
    human : point, optional
        The human consistency (recall, precision, F), drawn as a distinct marker.
    title : str, optional
        Axes title.
    dpi : int, default 150
        Resolution of the PNG.

    Returns
    -------
    Path
        ``path``.

    Notes
    -----
    Iso-F contours (F = 0.1 ... 0.9) are light grey and labelled where they cross the
    diagonal. Curves and legend entries are ordered as given; each legend entry shows
    the algorithm's ODS F-measure, as in the BSDS figures ``[F = .xx]``. Names and the
    title are plain text. Points with non-finite recall or precision are skipped, and
    so are points of recall below 0.01, as BSR's ``plot_eval.m`` drops them
    (:func:`drawn_points`): thresholds that detect nothing give R = P = 0, which would
    draw a vertical segment down the R = 0 axis. Drawn with matplotlib's Agg backend
    (no display, no pyplot state); the axes sit at :func:`axes_box`. The PNG is
    ``5.6 * dpi`` pixels square and is written atomically.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> r = np.linspace(0.95, 0.3, 20); p = np.linspace(0.3, 0.95, 20)
    >>> curve = {"name": "edges", "recall": r, "precision": p, "ods": (0.62, 0.63, 0.625)}
    >>> out = plot_pr([curve], os.path.join(tempfile.mkdtemp(), "pr.png"),
    ...               human=(0.8, 0.9, 0.847))
    >>> out.stat().st_size > 0
    True
    """
    named: list[tuple[str | None, Any]]
    if isinstance(curves, Mapping) and _get(curves, _RECALL, "", required=False) is None:
        named = [(str(k), v) for k, v in curves.items()]
    elif isinstance(curves, Mapping) or not isinstance(curves, Sequence):
        named = [(None, curves)]
    else:
        named = [(None, c) for c in curves]
    drawn = []  # validated first: a bad curve writes no file
    for i, (name, c) in enumerate(named):
        if name is None:
            name = str(_get(c, _NAME, f"curve {i}"))
        r = np.asarray(_get(c, _RECALL, name), dtype=float).ravel()
        p = np.asarray(_get(c, _PRECISION, name), dtype=float).ravel()
        if r.shape != p.shape:
            raise ValueError(f"{name}: recall has {r.size} values, precision {p.size}")
        ods = _get(c, _ODS, name, required=False)
        drawn.append((name, r, p, None if ods is None else _point(ods, f"{name} ODS")))
    human_point = None if human is None else _point(human, "human")

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, _draw(drawn, human_point, title, dpi))
    return path
