"""Figures of the ecological statistics: one PNG each, in the layout of the 2001 paper."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

import numpy as np

_COLOURS = {"all": "C0", "gray": "0.35", "color": "C3"}
_OFFSET = {"all": 0.0, "gray": -0.12, "color": 0.12}  # of a bin width: error bars apart


def _figure():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.0, 4.4))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.grid(True, color="0.92", lw=0.6, zorder=-1)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig, ax


def _save(fig, path: Path, dpi: int) -> Path:
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, format="png")
    return path


def _groups(stats):
    """The groups worth drawing: 'all', plus gray/color when both are nonempty."""
    gs = {k: g for k, g in stats.groups.items() if g.n_segmentations > 0}
    if not ("gray" in gs and "color" in gs):
        gs = {"all": gs["all"]}
    return gs


def _curve_plot(curves: dict, path: Path, *, title: str, dpi: int, xlim=None) -> Path:
    fig, ax = _figure()
    for name, (curve, n) in curves.items():
        ok = np.isfinite(curve.mean)
        width = np.diff(curve.edges)
        x = curve.x + _OFFSET.get(name, 0.0) * width
        ax.errorbar(
            x[ok],
            curve.mean[ok],
            yerr=curve.std[ok],
            color=_COLOURS.get(name, "C0"),
            marker="o",
            ms=3.5,
            lw=1.4,
            capsize=2.5,
            elinewidth=0.8,
            label=f"{name} ({n} segmentations)",
        )
    ax.set_ylim(0, 1.05)
    if xlim is not None:
        ax.set_xlim(*xlim)
    ax.set_xlabel(next(iter(curves.values()))[0].x_label)
    ax.set_ylabel("P(same segment)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, frameon=False)
    return _save(fig, path, dpi)


def plot_stats(stats, out: str | PathLike, *, dpi: int = 130) -> list[Path]:
    """Write the figures of an :class:`EcologicalStatistics` into ``out``.

    ``proximity.png`` (Fig. 10), ``similarity_gray.png`` (Fig. 11),
    ``similarity_color.png`` and ``similarity_texture.png`` (the extensions),
    ``convexity.png`` (Fig. 12) and ``region_area.png`` (Fig. 13). Curves show the mean
    over segmentations with +-1 standard deviation; with both gray and colour
    segmentations present, each group is drawn beside the pooled one.
    """
    out = Path(out)
    gs = _groups(stats)
    paths = [
        _curve_plot(
            {k: (g.proximity, g.n_segmentations) for k, g in gs.items()},
            out / "proximity.png",
            dpi=dpi,
            xlim=(0, 1),
            title="Proximity: same segment vs normalised distance",
        )
    ]
    titles = {
        "gray": "Similarity: same segment vs grey-level difference",
        "color": "Similarity: same segment vs CIELAB colour difference",
        "texture": "Similarity: same segment vs texture difference",
    }
    for cue in ("gray", "color", "texture"):
        cs = {
            k: (g.similarity[cue], g.similarity[cue].n_items)
            for k, g in gs.items()
            if cue in g.similarity
        }
        if cs:
            paths.append(
                _curve_plot(cs, out / f"similarity_{cue}.png", dpi=dpi, title=titles[cue])
            )

    fig, ax = _figure()
    for k, g in gs.items():
        h = g.convexity
        if h is None:
            continue
        w = np.diff(h.edges)
        shift = _OFFSET.get(k, 0.0) * w if len(gs) > 1 else 0.0
        ax.bar(
            h.edges[:-1] + w / 2 + shift,
            h.fraction,
            width=w / len(gs) * 0.95,
            color=_COLOURS.get(k, "C0"),
            alpha=0.85,
            label=f"{k} ({h.n_regions} regions, median {h.median:.2f})",
        )
    ax.set_xlim(0, 1)
    ax.set_xlabel("convexity = region area / convex hull area")
    ax.set_ylabel("fraction of regions")
    ax.set_title("Convexity of regions", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="upper left")
    paths.append(_save(fig, out / "convexity.png", dpi))

    fig, ax = _figure()
    for k, g in gs.items():
        a = g.area
        if a is None:
            continue
        c = _COLOURS.get(k, "C0")
        ok = np.isfinite(a.density) & (a.counts > 0)
        ax.loglog(
            a.area[ok & ~a.fitted],
            a.density[ok & ~a.fitted],
            "o",
            mfc="none",
            color=c,
            ms=4,
        )
        ax.loglog(a.area[a.fitted], a.density[a.fitted], "o", color=c, ms=4)
        xs = a.area[a.fitted]
        if xs.size and np.isfinite(a.alpha):
            xx = np.array([xs.min(), xs.max()])
            lo, hi = a.alpha_ci
            ax.loglog(
                xx,
                a.amplitude / xx**a.alpha,
                "-",
                color=c,
                lw=1.6,
                label=f"{k}: y = A / x^α,  α = {a.alpha:.3f} [{lo:.3f}, {hi:.3f}]",
            )
        else:
            ax.plot(
                [],
                [],
                " ",
                label=f"{k}: no bins in the fit range [{a.min_area:g}, {a.cutoff:g}] px",
            )
        ax.axvline(a.cutoff, color="0.6", ls="--", lw=0.8)
    ax.set_xlabel("region area (pixels)")
    ax.set_ylabel("frequency (regions per unit area, normalised)")
    ax.set_title(
        "Region area: open markers not fitted; dashed: 25% of the image", fontsize=10
    )
    ax.legend(fontsize=8, frameon=False, loc="lower left")
    paths.append(_save(fig, out / "region_area.png", dpi))
    return paths
