"""Precision-recall plots in the style of the BSDS benchmark figures, drawn with Pillow.

The figure is one fixed chart (axes on [0, 1]², iso-F contours, curves, ODS markers, the
human point and a legend), so it is drawn directly with Pillow's ImageDraw at three
times the output resolution and box-filtered down (anti-aliasing), with matplotlib's
DejaVu Sans font. matplotlib itself takes 0.4-0.6 CPU-s to import on the development
machine, more than the rest of a one-image ``segbench boundary`` run; this takes about
0.05 s. The look follows matplotlib's defaults (tab10 colours, 10 pt tick labels).
"""

from __future__ import annotations

import importlib.util
import io
import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
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
            raise ValueError(f"{what}: expected (recall, precision[, F]), got {len(vals)} values")
        r, p = vals[:2]
        f = vals[2] if len(vals) == 3 else None
    if f is None:
        f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return r, p, float(f)


#: matplotlib's default colour cycle (tab10) and the markers of the ODS points, in order
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
            "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
_MARKERS = "osD^v<>phP"
_SUPERSAMPLE = 3        # drawn at 3x the output size, then box-filtered: anti-aliased
_SIDE_INCHES = 5.6
_ISO_GREY, _ISO_LABEL_GREY, _GRID_GREY, _FRAME_GREY = "#d1d1d1", "#8c8c8c", "#ededed", "#d9d9d9"


@lru_cache(maxsize=32)
def _font(size_px: int):
    """DejaVu Sans (matplotlib's default font, from its package data, found without
    importing matplotlib) at ``size_px``; Pillow's default font if that file is gone."""
    from PIL import ImageFont
    spec = importlib.util.find_spec("matplotlib")
    if spec is not None and spec.submodule_search_locations:
        ttf = (Path(list(spec.submodule_search_locations)[0]) / "mpl-data" / "fonts"
               / "ttf" / "DejaVuSans.ttf")
        if ttf.is_file():
            return ImageFont.truetype(str(ttf), size_px)
    return ImageFont.load_default(size_px)


def _polygon(marker: str, cx: float, cy: float, r: float) -> list[tuple[float, float]]:
    """Vertices of a marker of radius ``r`` (pixels) centred on (cx, cy); y grows down."""
    def ring(n, start_deg, radii=(1.0,)):
        k = n * len(radii)
        return [(cx + r * radii[i % len(radii)] * math.cos(math.radians(start_deg + 360 * i / k)),
                 cy - r * radii[i % len(radii)] * math.sin(math.radians(start_deg + 360 * i / k)))
                for i in range(k)]
    if marker == "s":
        return ring(4, 45, (0.85,))
    if marker == "D":
        return ring(4, 90, (0.95,))
    if marker in "^<v>":
        return ring(3, 90 + 90 * "^<v>".index(marker))
    if marker == "p":
        return ring(5, 90)
    if marker == "h":
        return ring(6, 90)
    if marker == "*":
        return ring(5, 90, (1.0, 0.42))
    if marker == "P":                      # a filled plus
        a, b = 0.33 * r, r
        pts = [(a, b), (a, a), (b, a), (b, -a), (a, -a), (a, -b), (-a, -b), (-a, -a),
               (-b, -a), (-b, a), (-a, a), (-a, b)]
        return [(cx + x, cy - y) for x, y in pts]
    raise ValueError(f"unknown marker {marker!r}")


class _Canvas:
    """A square figure with one square axes on [0, 1]², in supersampled pixels."""

    def __init__(self, dpi: int, title: str | None) -> None:
        from PIL import Image, ImageDraw     # here: a run without a plot never needs them
        self.pt = dpi / 72 * _SUPERSAMPLE                    # pixels per point
        side = round(_SIDE_INCHES * dpi) * _SUPERSAMPLE
        self.image = Image.new("RGB", (side, side), "white")
        self.draw = ImageDraw.Draw(self.image)
        left, right, bottom, top = 50 * self.pt, 18 * self.pt, 40 * self.pt, \
            (30 if title else 14) * self.pt
        self.side = min(side - left - right, side - top - bottom)
        self.x0 = left + (side - left - right - self.side) / 2
        self.y0 = top + (side - top - bottom - self.side) / 2

    def xy(self, r, p):
        return self.x0 + np.asarray(r) * self.side, self.y0 + (1 - np.asarray(p)) * self.side

    def width(self, points: float) -> int:
        return max(1, round(points * self.pt))

    def line(self, r, p, colour, points: float) -> None:
        x, y = self.xy(r, p)
        if x.size > 1:
            self.draw.line(list(zip(x.tolist(), y.tolist())), fill=colour,
                           width=self.width(points), joint="curve")

    def marker(self, marker, x, y, size_points, colour, edge_points=0.8) -> None:
        """A marker ``size_points`` across with a white edge (as matplotlib draws one)."""
        r, e = size_points * self.pt / 2, edge_points * self.pt
        for radius, fill in ((r + e / 2, "white"), (r - e / 2, colour)):
            if marker == "o":
                self.draw.ellipse([x - radius, y - radius, x + radius, y + radius], fill=fill)
            else:
                self.draw.polygon(_polygon(marker, x, y, radius), fill=fill)

    def text(self, x, y, text, points, colour="black", anchor="la") -> None:
        self.draw.text((x, y), text, font=_font(round(points * self.pt)), fill=colour,
                       anchor=anchor)

    def text_up(self, x, y, text, points, colour="black") -> None:
        """Text turned 90 degrees counter-clockwise, centred on (x, y)."""
        from PIL import Image, ImageDraw
        font = _font(round(points * self.pt))
        left, top, right, bottom = font.getbbox(text)
        tile = Image.new("L", (right - left + 2, bottom - top + 2), 0)
        ImageDraw.Draw(tile).text((1 - left, 1 - top), text, font=font, fill=255)
        tile = tile.rotate(90, expand=True)
        self.image.paste(Image.new("RGB", tile.size, colour),
                         (round(x - tile.width / 2), round(y - tile.height / 2)), tile)

    def grid(self) -> None:
        """Light grid lines at 0, 0.2, ..., 1."""
        ticks = np.linspace(0, 1, 6)
        x1, y1 = self.x0 + self.side, self.y0 + self.side
        for t in ticks:
            x, y = self.xy(t, t)
            self.draw.line([(x, self.y0), (x, y1)], fill=_GRID_GREY, width=self.width(0.6))
            self.draw.line([(self.x0, y), (x1, y)], fill=_GRID_GREY, width=self.width(0.6))

    def frame(self) -> None:
        """Left and bottom spines, ticks at 0, 0.2, ..., 1, their labels, axis names."""
        ticks = np.linspace(0, 1, 6)
        x1, y1 = self.x0 + self.side, self.y0 + self.side
        w, tick = self.width(0.8), 3.5 * self.pt
        self.draw.line([(self.x0, self.y0), (self.x0, y1), (x1, y1)], fill="black", width=w)
        for t in ticks:
            x, y = self.xy(t, t)
            self.draw.line([(x, y1), (x, y1 + tick)], fill="black", width=w)
            self.draw.line([(self.x0 - tick, y), (self.x0, y)], fill="black", width=w)
            self.text(x, y1 + tick + 3.5 * self.pt, f"{t:.1f}", 10, anchor="mt")
            self.text(self.x0 - tick - 3.5 * self.pt, y, f"{t:.1f}", 10, anchor="rm")
        self.text(self.x0 + self.side / 2, y1 + tick + 18 * self.pt, "Recall", 10,
                  anchor="mt")
        self.text_up(self.x0 - tick - 34 * self.pt, self.y0 + self.side / 2, "Precision", 10)

    def legend(self, entries) -> None:
        """Lower-left legend: entries of (label, colour, marker or None, line drawn,
        marker size in points)."""
        font_pt, pad, handle, gap, row = 8, 5 * self.pt, 16 * self.pt, 6 * self.pt, \
            12 * self.pt
        font = _font(round(font_pt * self.pt))
        text_w = max(self.draw.textlength(e[0], font=font) for e in entries)
        x0, y1 = self.x0 + 6 * self.pt, self.y0 + self.side - 6 * self.pt
        y0 = y1 - 2 * pad - row * len(entries)
        self.draw.rounded_rectangle([x0, y0, x0 + 2 * pad + handle + gap + text_w, y1],
                                    radius=2 * self.pt, fill="white", outline=_FRAME_GREY,
                                    width=self.width(0.8))
        for i, (label, colour, marker, with_line, size) in enumerate(entries):
            yc = y0 + pad + (i + 0.5) * row
            if with_line:
                self.draw.line([(x0 + pad, yc), (x0 + pad + handle, yc)], fill=colour,
                               width=self.width(1.8))
            if marker is not None:
                self.marker(marker, x0 + pad + handle / 2, yc, min(size, 10), colour)
            self.text(x0 + pad + handle + gap, yc, label, font_pt, anchor="lm")

    def save(self, path: Path) -> None:
        buf = io.BytesIO()
        self.image.reduce(_SUPERSAMPLE).save(buf, format="PNG")
        atomic_write_bytes(path, buf.getvalue())


def _iso_f(canvas: _Canvas) -> None:
    """Iso-F contours F = 0.1 ... 0.9 (P = F R / (2R - F) on R in (F/2, 1]), labelled
    just above where they meet the diagonal R = P = F."""
    for f in np.round(np.arange(0.1, 0.95, 0.1), 1):
        r = np.linspace(f / 2 + 1e-3, 1.0, 400)
        p = f * r / (2 * r - f)
        keep = p <= 1.0
        canvas.line(r[keep], p[keep], _ISO_GREY, 0.8)
        x, y = canvas.xy(f, f)
        canvas.text(x + 2 * canvas.pt, y - 2 * canvas.pt, f"{f:.1f}", 7, _ISO_LABEL_GREY,
                    anchor="lb")


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
    title are plain text. Points with non-finite recall or precision are skipped, and
    so are points of recall below 0.01, as BSR's ``plot_eval.m`` drops them
    (:func:`drawn_points`): thresholds that detect nothing give R = P = 0, which would
    draw a vertical segment down the R = 0 axis. Drawn with Pillow (see the module's docstring): no
    display, no matplotlib import. The PNG is ``5.6 * dpi`` pixels square and is
    written atomically.

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
    drawn = []                         # validated first: a bad curve writes no file
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

    canvas = _Canvas(dpi, title)
    canvas.grid()
    _iso_f(canvas)
    legend = []
    for i, (name, r, p, ods) in enumerate(drawn):
        colour, marker = _COLOURS[i % len(_COLOURS)], _MARKERS[i % len(_MARKERS)]
        keep = drawn_points(r, p)
        if keep.sum() > 1:           # one point left: plot_eval.m shows the ODS point only
            canvas.line(r[keep], p[keep], colour, 1.8)
        if ods is not None:
            legend.append((f"{name} [F = {ods[2]:.3f}]", colour, marker, True, 7))
        else:
            legend.append((name, colour, None, True, 7))
    for i, (name, r, p, ods) in enumerate(drawn):     # ODS points above every curve
        if ods is not None:
            x, y = canvas.xy(ods[0], ods[1])
            canvas.marker(_MARKERS[i % len(_MARKERS)], x, y, 7, _COLOURS[i % len(_COLOURS)])
    if human_point is not None:
        x, y = canvas.xy(human_point[0], human_point[1])
        canvas.marker("*", x, y, 14, "black")
        legend.append((f"Human [F = {human_point[2]:.3f}]", "black", "*", False, 14))
    canvas.frame()
    if title:
        canvas.text(canvas.x0 + canvas.side / 2, canvas.y0 - 8 * canvas.pt, str(title), 12,
                    anchor="ms")
    if legend:
        canvas.legend(legend)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    canvas.save(path)
    return path
