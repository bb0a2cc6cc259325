"""Results in a notebook: PR curves on matplotlib axes and the HTML a Result shows.

:meth:`segbench.Result.plot` and :meth:`segbench.Result._repr_html_` call these. The
figure follows the BSDS plots: iso-F contours F = 0.1 ... 0.9, each curve drawn from
recall 0.01 on (as BSR's ``plot_eval.m``), its ODS point marked and its ODS F in the
legend, the human point as a star. matplotlib is imported only here, when a plot is
drawn.
"""

from __future__ import annotations

import base64
import html
import io
import math

import numpy as np

from .errors import InputError

__all__ = ["HEADLINES", "plot_pr_axes", "result_html"]

#: The metrics a result's table shows first, by family.
HEADLINES = {
    "boundary": ("ODS", "OIS", "AP", "R50", "ODS_threshold", "ODS_calibrated"),
    "region": (
        "covering_ODS",
        "covering_OIS",
        "covering_best",
        "PRI_ODS",
        "PRI_OIS",
        "VI_ODS",
        "VI_OIS",
    ),
    "human_boundary": ("F", "recall", "precision"),
    "human_region": ("covering", "PRI", "VI"),
}

_MIN_RECALL = 0.01  # as segbench.boundary.MIN_DRAWN_RECALL (plot_eval.m)


def _human_point(human, result) -> tuple[float, float, float] | None:
    """(R, P, F) of ``human`` (HumanScores, a human_boundary Result, a tuple), else of
    the result's own ``human_*`` metrics, else None."""
    if human is None:
        m = result.metrics
        if all(
            isinstance(m.get(k), (int, float)) and math.isfinite(m[k])
            for k in ("human_recall", "human_precision", "human_F")
        ):
            return (m["human_recall"], m["human_precision"], m["human_F"])
        return None
    point = getattr(human, "point", None)
    if point is not None:
        r, p, f = (float(v) for v in point)
        return (r, p, f)
    metrics = getattr(human, "metrics", None)
    if metrics is not None:
        return (float(metrics["recall"]), float(metrics["precision"]), float(metrics["F"]))
    vals = [float(v) for v in human]
    if len(vals) == 2:
        r, p = vals
        vals.append(2 * r * p / (r + p) if r + p else 0.0)
    if len(vals) != 3:
        raise InputError(
            "human: give HumanScores, a human_boundary Result or (recall, precision[, F])"
        )
    r, p, f = vals
    return (r, p, f)


def _iso_f(ax) -> None:
    for f in np.round(np.arange(0.1, 0.95, 0.1), 1):
        r = np.linspace(f / 2 + 1e-3, 1.0, 300)
        p = f * r / (2 * r - f)
        keep = p <= 1.0
        ax.plot(r[keep], p[keep], color="0.85", lw=0.8, zorder=0)
        ax.annotate(
            f"{f:.1f}",
            (f, f),
            xytext=(2, 2),
            textcoords="offset points",
            fontsize=7,
            color="0.6",
        )


def plot_pr_axes(results, ax=None, *, human=None, label=None):
    """Draw boundary results' PR curves on matplotlib axes (several calls add to one
    axes; the iso-F contours and frame are drawn once).

    Parameters
    ----------
    results : Result or sequence of Result
        Boundary results (with ``curves`` recall and precision).
    ax : matplotlib Axes, optional
        Default: a new figure's axes (``matplotlib.pyplot.subplots``).
    human : HumanScores, human_boundary Result or (recall, precision[, F]), optional
        The human point; default the results' own ``human_*`` metrics, if any.
    label : str, optional
        The legend name of a single result (default its ``name``).

    Returns
    -------
    matplotlib Axes
    """
    if not isinstance(results, (list, tuple)):
        results = [results]
    for res in results:
        if not {"recall", "precision"} <= set(res.curves):
            raise InputError(
                f"Result.plot draws boundary PR curves; the {res.family} "
                f"result {res.name!r} has none"
            )
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(5, 5))
    if not getattr(ax, "_segbench_pr", False):
        _iso_f(ax)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.set_xlabel("Recall")
        ax.set_ylabel("Precision")
        ax.grid(True, color="0.92", lw=0.6)
        ax._segbench_pr = True
    point = None
    for res in results:
        r = np.asarray(res.curves["recall"], dtype=float)
        p = np.asarray(res.curves["precision"], dtype=float)
        with np.errstate(invalid="ignore"):
            keep = np.isfinite(r) & np.isfinite(p) & (r >= _MIN_RECALL)
        name = label if label is not None and len(results) == 1 else (res.name or "run")
        name = str(name).replace("$", r"\$")  # as written: '$...$' would be mathtext
        m = res.metrics
        text = f"{name} [F = {m['ODS']:.3f}]" if "ODS" in m else name
        (line,) = ax.plot(r[keep], p[keep], lw=1.8, label=text)
        if "ODS_recall" in m and "ODS_precision" in m:
            ax.plot(
                [m["ODS_recall"]],
                [m["ODS_precision"]],
                "o",
                ms=6,
                color=line.get_color(),
                zorder=3,
            )
        point = point or _human_point(human, res)
    if point is not None and not getattr(ax, "_segbench_human", False):
        ax.plot(
            [point[0]],
            [point[1]],
            "*",
            ms=13,
            color="black",
            zorder=4,
            label=f"Human [F = {point[2]:.3f}]",
        )
        ax._segbench_human = True
    handles, names = ax.get_legend_handles_labels()
    order = sorted(range(len(names)), key=lambda k: names[k].startswith("Human ["))
    ax.legend(
        [handles[k] for k in order],
        [names[k] for k in order],
        loc="lower left",
        fontsize=8,
        frameon=True,
    )
    return ax


def _fmt(result, key: str) -> str:
    v = result.metrics.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return html.escape(str(v))
    if not math.isfinite(v):
        return "&ndash;"
    text = f"{v:.4f}" if isinstance(v, float) else str(v)
    if key in result.intervals:
        lo, hi = result.intervals[key]
        text += f" <small>[{lo:.3f}, {hi:.3f}]</small>"
    return text


def _png(result, human=None) -> str:
    """The PR plot as a base64 PNG (an off-screen figure: no pyplot state)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3.6, 3.6), dpi=100)
    ax = fig.add_subplot()
    plot_pr_axes([result], ax, human=human)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def result_html(result) -> str:
    """A compact HTML view of a result: name, family and images; the headline metrics
    (with intervals when computed); the PR plot inline as PNG for boundary results;
    the notes."""
    keys = [k for k in HEADLINES.get(result.family, ()) if k in result.metrics]
    if not keys:
        keys = [
            k
            for k, v in result.metrics.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)
        ][:8]
    prov = result.provenance
    n = len(result.per_item) or prov.get(
        "n_images", prov.get("params", {}).get("n_images", "")
    )
    head = (
        f"<b>{html.escape(result.name or 'run')}</b> &middot; "
        f"{html.escape(result.family)} &middot; {n} image{'' if n == 1 else 's'}"
    )
    rows = "".join(
        f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
        f"<td style='text-align:right'>{_fmt(result, k)}</td></tr>"
        for k in keys
    )
    table = f"<table>{rows}</table>"
    notes = "".join(
        f"<br><small>{html.escape(k)}: {html.escape(v)}</small>"
        for k, v in result.notes.items()
    )
    plot = ""
    if {"recall", "precision"} <= set(result.curves) and len(result.curves["recall"]):
        plot = (
            f"<img style='margin-left:1em' alt='PR curve' "
            f"src='data:image/png;base64,{_png(result)}'>"
        )
    return (
        f"<div class='segbench-result'>{head}<div style='display:flex;"
        f"align-items:flex-start'>{table}{plot}</div>{notes}</div>"
    )
