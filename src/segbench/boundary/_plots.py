"""Precision-recall plots in the style of the BSDS benchmark figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["plot_pr"]

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
            raise ValueError(f"{what}: expected (recall, precision[, F]), got {len(vals)} values")
        r, p = vals[:2]
        f = vals[2] if len(vals) == 3 else None
    if f is None:
        f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return r, p, float(f)


def _text(s: str) -> str:
    """A label as plain text: matplotlib would read ``$...$`` as mathtext."""
    return str(s).replace("$", r"\$")


def _iso_f(ax, levels) -> None:
    """Iso-F contours: for F fixed, P = F R / (2R - F) on R in (F/2, 1]."""
    for f in levels:
        r = np.linspace(f / 2 + 1e-3, 1.0, 400)
        p = f * r / (2 * r - f)
        keep = p <= 1.0
        ax.plot(r[keep], p[keep], color="0.82", lw=0.8, zorder=0)
        # Label where the contour meets the diagonal P = R (there R = P = F): uncluttered.
        ax.annotate(f"{f:.1f}", (f, f), xytext=(2, 2), textcoords="offset points",
                    fontsize=7, color="0.55", zorder=0)


def plot_pr(curves, path: str | PathLike, *, human=None, title: str | None = None,
            dpi: int = 150) -> Path:
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
    title are plain text (a ``$`` is shown, not read as mathtext). Points with
    non-finite recall or precision (thresholds that selected no pixel) are skipped.
    Uses matplotlib's Agg canvas directly, so no display and no global pyplot state.

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
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    named: list[tuple[str | None, Any]]
    if isinstance(curves, Mapping) and _get(curves, _RECALL, "", required=False) is None:
        named = [(str(k), v) for k, v in curves.items()]
    elif isinstance(curves, Mapping) or not isinstance(curves, Sequence):
        named = [(None, curves)]
    else:
        named = [(None, c) for c in curves]
    fig = Figure(figsize=(5.6, 5.6))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    _iso_f(ax, np.round(np.arange(0.1, 0.95, 0.1), 1))

    colours = [f"C{i}" for i in range(10)]
    markers = "osD^v<>phP"
    handles = []  # proxies, so each legend entry shows both the curve and its ODS marker
    for i, (name, c) in enumerate(named):
        if name is None:
            name = str(_get(c, _NAME, f"curve {i}"))
        r = np.asarray(_get(c, _RECALL, name), dtype=float).ravel()
        p = np.asarray(_get(c, _PRECISION, name), dtype=float).ravel()
        if r.shape != p.shape:
            raise ValueError(f"{name}: recall has {r.size} values, precision {p.size}")
        ok = np.isfinite(r) & np.isfinite(p)
        colour = colours[i % len(colours)]
        ods = _get(c, _ODS, name, required=False)
        style = dict(color=colour, marker=markers[i % len(markers)], ms=7,
                     markeredgecolor="white", markeredgewidth=0.8)
        ax.plot(r[ok], p[ok], color=colour, lw=1.8, zorder=2)
        label = name
        if ods is not None:
            orr, op, of = _point(ods, f"{name} ODS")
            ax.plot(orr, op, ls="none", zorder=3, **style)
            label = f"{name} [F = {of:.3f}]"
        else:
            style["marker"] = None
        handles.append(Line2D([], [], lw=1.8, label=_text(label), **style))
    if human is not None:
        hr, hp, hf = _point(human, "human")
        style = dict(marker="*", ms=14, color="black", markeredgecolor="white",
                     markeredgewidth=0.8, ls="none")
        ax.plot(hr, hp, zorder=4, **style)
        handles.append(Line2D([], [], label=f"Human [F = {hf:.3f}]", **style))

    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xticks(np.linspace(0, 1, 6))
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_xlabel("Recall")
    ax.set_ylabel("Precision")
    ax.grid(True, color="0.93", lw=0.6, zorder=-1)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if title:
        ax.set_title(_text(title))
    if handles:
        ax.legend(handles=handles, loc="lower left", fontsize=8, frameon=True, framealpha=0.9,
                  edgecolor="0.85")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, format="png")
    return path
