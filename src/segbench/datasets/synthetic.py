"""A rendered dataset with simulated annotators: the embedded default of ``segbench demo``.

Each image is a scene of a few opaque shapes (disks, ellipses, rotated boxes, convex
polygons, wobbly blobs) over a background that may be split by a wavy horizon. Shapes carry
textures and smooth shading; some are *faint* (barely different from what lies beneath),
and some have two *parts* with a subtle change of shade along a line. Small spots that no
annotator outlines are scattered on top, as the details people ignore in photographs. The
picture then gets a random contrast, a little optical blur and sensor noise.

Simulated annotators redraw the same geometry, each with a personal style that holds for
every image:

* position noise: a smooth random displacement field of a fraction of a pixel to about a
  pixel, plus small per-object shifts of centre and size, so outlines jitter at sub-pixel
  scale the way traced outlines do;
* *lumpers* often leave out faint objects (they merge into whatever lies beneath);
* *splitters* often split two-part objects along their part line (refinement).

Everything is drawn from :class:`numpy.random.Generator` streams keyed by
``(seed, image index[, annotator])``, so an image does not depend on how many images or
annotators are requested, and all arrays are reproducible bit for bit.

The continuous geometry is kept as signed distances (positive inside, in pixels), which
gives anti-aliased rendering and sub-pixel annotator jitter for free.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from ._ground_truth import write_ground_truth

__all__ = ["SyntheticItem", "make_synthetic_dataset", "write_synthetic_dataset"]

# Stream tags: keep the random streams of scenes, annotator styles and drawings apart.
_SCENE, _STYLE, _DRAW = 0, 1, 2
_GOLDEN = 0.6180339887498949


@dataclass(frozen=True, eq=False)
class SyntheticItem:
    """One rendered image with its simulated human segmentations.

    Attributes
    ----------
    iid : str
        Image id, used as the file stem when written to disk.
    image : (H, W, 3) ndarray of uint8
        The rendered RGB photograph.
    segmentations : list of (H, W) ndarray of int32
        One label map per annotator, labels ``1..N`` as in the BSDS500 ground truth.
    truth : (H, W) ndarray of int32
        The scene's own regions, labels ``1..N``: every object, faint or not, with every
        part split (the small unannotated spots are not regions). Not part of the BSDS
        layout; handy for tests and illustrations.
    """

    iid: str
    image: np.ndarray
    segmentations: list[np.ndarray]
    truth: np.ndarray | None = None


@dataclass(frozen=True)
class _Shape:
    """Continuous geometry of one scene object; sizes and positions in pixels."""

    kind: str  # 'disk', 'ellipse', 'box', 'polygon', 'blob' or 'ground'
    cy: float
    cx: float
    size: float  # radius, half-extent or (for 'ground') horizon height
    aspect: float = 1.0  # minor/major ratio for ellipses and boxes
    angle: float = 0.0
    params: tuple = ()  # kind-specific: polygon vertex angles, blob harmonics, horizon waves
    faint: bool = False
    part: tuple[float, float] | None = None  # (normal angle, offset) of the part line


@dataclass(frozen=True)
class _Style:
    """How one simulated annotator draws, fixed across all images."""

    jitter_px: float  # std of the outline displacement
    p_skip_faint: float
    p_split: float


@dataclass
class _Paint:
    """Appearance of one object: base colour, texture and shading."""

    colour: np.ndarray | None  # None for faint objects: set from what lies beneath
    texture: str
    tex_params: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------------------
# geometry


def _rotate(y, x, cy, cx, angle):
    """Coordinates relative to (cy, cx) in a frame rotated by ``angle``."""
    dy, dx = y - cy, x - cx
    c, s = np.cos(angle), np.sin(angle)
    return c * dx + s * dy, -s * dx + c * dy


def _sdf(shape: _Shape, y, x) -> np.ndarray:
    """Signed distance in pixels, positive inside; exact or a first-order approximation
    near the outline, which is all that anti-aliasing and the inside test need."""
    k = shape.kind
    if k == "disk":
        return shape.size - np.hypot(y - shape.cy, x - shape.cx)
    if k == "ellipse":
        u, v = _rotate(y, x, shape.cy, shape.cx, shape.angle)
        a, b = shape.size, shape.size * shape.aspect
        q = np.hypot(u / a, v / b)
        g = np.hypot(u / a**2, v / b**2)  # |grad q| * q
        # (1 - q) / |grad q|: first-order distance to the level set q = 1
        with np.errstate(invalid="ignore", divide="ignore"):
            d = (1.0 - q) * q / g
        return np.where(g > 0, d, b)
    if k == "box":
        u, v = _rotate(y, x, shape.cy, shape.cx, shape.angle)
        qx = np.abs(u) - shape.size
        qy = np.abs(v) - shape.size * shape.aspect
        outside = np.hypot(np.maximum(qx, 0), np.maximum(qy, 0))
        return -(outside + np.minimum(np.maximum(qx, qy), 0))
    if k == "polygon":
        # Convex polygon inscribed in a circle: the intersection of its edges' half-planes.
        verts = np.asarray(shape.params) + shape.angle
        half = (np.roll(verts, -1) - verts) % (2 * np.pi) / 2  # half the angle of each edge
        mids = verts + half  # direction of each edge's outward normal
        apothem = shape.size * np.cos(half)
        dy, dx = y - shape.cy, x - shape.cx
        d = apothem[:, None, None] - (
            np.cos(mids)[:, None, None] * dx + np.sin(mids)[:, None, None] * dy
        )
        return d.min(axis=0)
    if k == "blob":
        dy, dx = y - shape.cy, x - shape.cx
        phi = np.arctan2(dy, dx)
        r = np.full_like(phi, shape.size)
        for order, amp, phase in shape.params:
            r += shape.size * amp * np.cos(order * (phi - shape.angle) + phase)
        return r - np.hypot(dy, dx)
    if k == "ground":
        # Region below a wavy horizon; the vertical distance is close enough for gentle slopes.
        slope, waves = shape.params[0], shape.params[1:]
        h = shape.size + slope * (x - shape.cx)
        for amp, period, phase in waves:
            h = h + amp * np.sin(2 * np.pi * x / period + phase)
        return y - h
    raise ValueError(f"unknown shape kind {k!r}")


def _window(shape: _Shape, h: int, w: int, margin: float = 6.0):
    """Slices of the image that hold the whole shape plus ``margin`` pixels: evaluating
    distances only there keeps generation fast, since most objects are small."""
    if shape.kind == "ground":
        return slice(0, h), slice(0, w)
    reach = shape.size
    if shape.kind == "box":
        reach *= np.hypot(1.0, shape.aspect)
    elif shape.kind == "blob":
        reach *= 1.0 + sum(abs(a) for _, a, _ in shape.params)
    reach += margin
    y0, y1 = (
        int(max(np.floor(shape.cy - reach), 0)),
        int(min(np.ceil(shape.cy + reach) + 1, h)),
    )
    x0, x1 = (
        int(max(np.floor(shape.cx - reach), 0)),
        int(min(np.ceil(shape.cx + reach) + 1, w)),
    )
    return slice(y0, max(y0, y1)), slice(x0, max(x0, x1))


def _part_side(shape: _Shape, y, x) -> np.ndarray:
    """Signed distance to the part line of ``shape``, positive on the second part."""
    assert shape.part is not None  # called only for shapes with a part line
    angle, offset = shape.part
    return (np.cos(angle) * (x - shape.cx) + np.sin(angle) * (y - shape.cy)) - offset


# ---------------------------------------------------------------------------------------
# scenes


def _random_shape(rng: np.random.Generator, h: int, w: int) -> _Shape:
    s = min(h, w)
    kind = rng.choice(["disk", "ellipse", "box", "polygon", "blob"])
    size = s * rng.uniform(0.09, 0.2)
    cy = rng.uniform(0.15 * h, 0.85 * h)
    cx = rng.uniform(0.12 * w, 0.88 * w)
    angle = rng.uniform(0, np.pi)
    aspect = rng.uniform(0.45, 0.85)
    params: tuple = ()
    if kind == "polygon":
        n = int(rng.integers(3, 7))
        base = np.linspace(0, 2 * np.pi, n, endpoint=False)
        params = tuple(base + rng.uniform(-0.35, 0.35, n) * np.pi / n)
        size *= 1.15
    elif kind == "blob":
        params = tuple(
            (order, rng.uniform(0.03, 0.12), rng.uniform(0, 2 * np.pi))
            for order in (2, 3, 4)
        )
    elif kind == "box":
        size *= 1.1
    return _Shape(kind, cy, cx, size, aspect, angle, params)


_LUMA = np.array([0.299, 0.587, 0.114])


def _random_colour(
    rng: np.random.Generator,
    avoid: list[np.ndarray],
    min_dist: float,
    min_luma: float = 0.18,
):
    """A colour at least ``min_dist`` (RGB, 0..1) from every colour in ``avoid`` and at
    least ``min_luma`` from each in luminance: in photographs most boundaries show in
    brightness, so a grey-level detector should not be blind here."""
    cands = rng.uniform(0.05, 0.95, size=(64, 3))
    if not avoid:
        return cands[0]
    av = np.asarray(avoid)
    d = np.linalg.norm(cands[:, None, :] - av[None], axis=2).min(axis=1)
    dl = np.abs(cands @ _LUMA - (av @ _LUMA)[None, :].T).min(axis=0)
    score = np.minimum(d / min_dist, dl / min_luma)
    ok = np.flatnonzero(score >= 1)
    return cands[ok[0]] if len(ok) else cands[np.argmax(score)]


def _texture(paint: _Paint, y, x, win) -> np.ndarray:
    """Additive (..., 3) colour texture of an object over the window ``win`` of the image
    (``y`` and ``x`` are the window's coordinates)."""
    if paint.texture == "none":
        return np.zeros(y.shape + (3,))
    return _pattern(paint, y, x, win)[..., None] * paint.tex_params["tint"]


def _pattern(paint: _Paint, y, x, win) -> np.ndarray:
    p = paint.tex_params
    if paint.texture == "stripes":
        return p["amp"] * np.sin(
            2 * np.pi * (np.cos(p["dir"]) * x + np.sin(p["dir"]) * y) / p["period"]
            + p["phase"]
        )
    if paint.texture == "checker":
        u = np.cos(p["dir"]) * x + np.sin(p["dir"]) * y
        v = -np.sin(p["dir"]) * x + np.cos(p["dir"]) * y
        return p["amp"] * np.sign(
            np.sin(np.pi * u / p["period"]) * np.sin(np.pi * v / p["period"])
        )
    if paint.texture == "mottle":
        return p["amp"] * p["field"][win]
    raise ValueError(f"unknown texture {paint.texture!r}")


def _smooth_noise(
    rng: np.random.Generator, shape: tuple[int, int], cell: float
) -> np.ndarray:
    """Zero-mean, unit-std random field smooth on the scale of ``cell`` pixels."""
    from scipy import ndimage

    f = ndimage.gaussian_filter(rng.normal(size=shape), cell, mode="wrap")
    return f / max(f.std(), 1e-12)


def _make_scene(rng: np.random.Generator, h: int, w: int):
    """Shapes in painting order (index 0, the background, is None), their paint, and
    the unannotated details as (shape, colour) pairs."""
    shapes: list[_Shape | None] = [None]
    bg_colour = rng.uniform(0.15, 0.85, 3)
    bg = _Paint(
        bg_colour,
        "mottle",
        {
            "amp": rng.uniform(0.01, 0.06),
            "field": _smooth_noise(rng, (h, w), 3.0),
            "tint": 1.0 + 0.3 * rng.normal(size=3),
        },
    )
    paints = [bg]
    colours = [bg_colour]
    if rng.random() < 0.6:  # a horizon splits the background into sky and ground
        waves = tuple(
            (rng.uniform(1, 5), rng.uniform(0.6, 1.5) * w, rng.uniform(0, 2 * np.pi))
            for _ in range(2)
        )
        ground = _Shape(
            "ground",
            0.0,
            w / 2,
            h * rng.uniform(0.55, 0.8),
            params=(rng.uniform(-0.12, 0.12),) + waves,
        )
        shapes.append(ground)
        col = _random_colour(rng, colours, 0.3)
        colours.append(col)
        paints.append(
            _Paint(
                col,
                "mottle",
                {
                    "amp": rng.uniform(0.02, 0.08),
                    "field": _smooth_noise(rng, (h, w), 1.5),
                    "tint": 1.0 + 0.3 * rng.normal(size=3),
                },
            )
        )
    n_obj = int(rng.integers(3, 6))
    faint = set(
        rng.choice(n_obj, size=1 + int(rng.random() < 0.35), replace=False).tolist()
    )
    for i in range(n_obj):
        shape = _random_shape(rng, h, w)
        if i in faint:
            shape = replace(shape, faint=True)
        elif rng.random() < 0.5:
            shape = replace(
                shape, part=(rng.uniform(0, 2 * np.pi), rng.uniform(-0.3, 0.3) * shape.size)
            )
        shapes.append(shape)
        texture = rng.choice(
            ["none", "stripes", "checker", "mottle"], p=[0.25, 0.3, 0.15, 0.3]
        )
        tp: dict[str, Any] = {
            "amp": rng.uniform(0.04, 0.2),
            "dir": rng.uniform(0, np.pi),
            "period": rng.uniform(3.0, 9.0),
            "phase": rng.uniform(0, 2 * np.pi),
            "tint": 1.0 + 0.6 * rng.normal(size=3),
        }
        if texture == "mottle":
            tp["field"] = _smooth_noise(rng, (h, w), rng.uniform(1.0, 2.5))
        if shape.faint:
            colour = None  # decided at render time from what lies beneath
            tp["amp"] *= 0.3
        else:
            colour = _random_colour(rng, colours, 0.3)
            colours.append(colour)
        paints.append(_Paint(colour, str(texture), tp))
    # Small details (spots, pebbles, specks) that no annotator outlines, as in photographs
    # where people ignore what is too small to matter: edges that are not boundaries.
    details = []
    for _ in range(int(rng.integers(3, 13))):
        r = rng.uniform(1.2, 4.0)
        spot = _Shape(
            "ellipse",
            rng.uniform(0, h),
            rng.uniform(0, w),
            r,
            aspect=rng.uniform(0.4, 1.0),
            angle=rng.uniform(0, np.pi),
        )
        details.append((spot, rng.uniform(0.05, 0.95, 3)))
    return shapes, paints, details


def _render(rng: np.random.Generator, shapes, paints, details, h: int, w: int):
    """Paint the scene; returns the uint8 image and the true label map."""
    y, x = np.mgrid[:h, :w].astype(np.float64)
    theta = rng.uniform(0, 2 * np.pi)
    ramp = (np.cos(theta) * (x - w / 2) + np.sin(theta) * (y - h / 2)) / np.hypot(h, w)
    light = 1.0 + rng.uniform(0.2, 0.6) * ramp  # smooth global illumination

    full = (slice(0, h), slice(0, w))
    img = paints[0].colour * np.ones((h, w, 3)) + _texture(paints[0], y, x, full)
    truth = np.zeros((h, w), np.int32)
    top = 0  # label of the latest region
    region_colour = {0: paints[0].colour}
    for shape, paint in zip(shapes[1:], paints[1:]):
        win = _window(shape, h, w)
        yw, xw = y[win], x[win]
        d = _sdf(shape, yw, xw)
        alpha = np.clip(d + 0.5, 0.0, 1.0)[
            ..., None
        ]  # pixel coverage: anti-aliased outline
        colour = paint.colour
        if colour is None:
            # Faint: the colour of whatever lies under the centre, nudged a little.
            iy, ix = int(np.clip(shape.cy, 0, h - 1)), int(np.clip(shape.cx, 0, w - 1))
            step = rng.normal(size=3)
            colour = np.clip(
                region_colour[int(truth[iy, ix])]
                + rng.uniform(0.05, 0.08) * step / np.linalg.norm(step),
                0,
                1,
            )
        gdir = rng.uniform(0, 2 * np.pi)
        shade = 1.0 + rng.uniform(0.05, 0.2) * (
            np.cos(gdir) * (xw - shape.cx) + np.sin(gdir) * (yw - shape.cy)
        ) / max(shape.size, 1.0)
        fill = colour * shade[..., None] + _texture(paint, yw, xw, win)
        inside = d >= 0
        top += 1
        truth[win][inside] = top
        region_colour[top] = colour
        if shape.part is not None:
            side = _part_side(shape, yw, xw)
            delta = rng.choice([-1.0, 1.0]) * rng.uniform(0.07, 0.14)
            fill += delta * np.clip(side + 0.5, 0, 1)[..., None]
            top += 1
            truth[win][inside & (side >= 0)] = top
            region_colour[top] = colour
        img[win] = img[win] * (1 - alpha) + fill * alpha
    for spot, colour in details:
        win = _window(spot, h, w, margin=2.0)
        alpha = np.clip(_sdf(spot, y[win], x[win]) + 0.5, 0.0, 1.0)[..., None]
        img[win] = img[win] * (1 - alpha) + colour * alpha

    img *= light[..., None]
    from scipy import ndimage

    img = ndimage.gaussian_filter(img, (0.6, 0.6, 0))  # lens blur
    contrast = rng.uniform(0.25, 1.0)  # photographs differ in contrast
    mean = img.mean(axis=(0, 1))
    img = (
        mean + contrast * (img - mean) + rng.normal(0, rng.uniform(0.01, 0.035), img.shape)
    )
    image = np.clip(np.rint(img * 255), 0, 255).astype(np.uint8)
    return image, _relabel(truth)


# ---------------------------------------------------------------------------------------
# annotators


def _styles(seed: int, n: int) -> list[_Style]:
    """Annotator styles; annotator k's style does not depend on ``n``.

    A detail level in [0, 1) per annotator comes from a golden-ratio sequence with a seeded
    start, so any number of annotators spreads from lumpers to splitters.
    """
    start = np.random.default_rng([seed, _STYLE]).random()
    out = []
    for k in range(n):
        rng = np.random.default_rng([seed, _STYLE, k])
        detail = (start + k * _GOLDEN) % 1.0
        out.append(
            _Style(
                jitter_px=rng.uniform(0.35, 0.9),
                p_skip_faint=float(np.clip(1.0 - 1.4 * detail, 0.05, 0.9)),
                p_split=float(np.clip(1.4 * detail - 0.4, 0.0, 0.9)),
            )
        )
    return out


def _draw(rng: np.random.Generator, style: _Style, shapes, h: int, w: int) -> np.ndarray:
    """One annotator's label map of the scene."""
    y, x = np.mgrid[:h, :w].astype(np.float64)
    # A smooth displacement field: the hand's slow wobble along every outline.
    basis_y, basis_x = _smooth_basis(h, 5), _smooth_basis(w, 7)
    y = y + style.jitter_px * (basis_y @ rng.normal(size=(5, 7)) @ basis_x.T)
    x = x + style.jitter_px * (basis_y @ rng.normal(size=(5, 7)) @ basis_x.T)

    lab = np.zeros((h, w), np.int32)
    top = 0
    s = 0.5 * style.jitter_px
    for shape in shapes[1:]:
        # Draw every random number whether or not it is used, so one decision does not
        # shift the stream behind it.
        skip = rng.random() < style.p_skip_faint
        split = rng.random() < style.p_split
        shift = rng.normal(0, s, 3)
        part_shift = rng.normal(0, s)
        has_part = shape.part is not None
        top += 1 + has_part  # the same labels as the truth, before relabelling
        if shape.faint and skip:
            continue
        jit = replace(
            shape,
            cy=shape.cy + shift[0],
            cx=shape.cx + shift[1],
            size=shape.size + shift[2],
        )
        win = _window(jit, h, w)
        inside = np.zeros((h, w), bool)
        inside[win] = _sdf(jit, y[win], x[win]) >= 0
        lab[inside] = top - has_part
        if has_part and split:
            jit = replace(jit, part=(shape.part[0], shape.part[1] + part_shift))
            lab[inside & (_part_side(jit, y, x) >= 0)] = top
    return _relabel(lab)


def _smooth_basis(n: int, k: int) -> np.ndarray:
    """(n, k) Gaussian bumps at k evenly spaced knots, rows scaled so that a field built
    from unit normal weights has unit variance (a separable, cheap smooth random field)."""
    knots = np.linspace(0, n - 1, k)
    width = (n - 1) / (k - 1)
    b = np.exp(-0.5 * ((np.arange(n)[:, None] - knots[None]) / width) ** 2)
    return b / np.linalg.norm(b, axis=1, keepdims=True)


def _relabel(lab: np.ndarray) -> np.ndarray:
    """Labels 1..N in order of first appearance in raster order, as int32."""
    _, first, inv = np.unique(lab, return_index=True, return_inverse=True)
    rank = np.empty(len(first), np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return (rank[inv.reshape(lab.shape)] + 1).astype(np.int32)


# ---------------------------------------------------------------------------------------
# public API


def make_synthetic_dataset(
    n_images: int = 8,
    *,
    shape: tuple[int, int] = (160, 240),
    n_annotators: int = 5,
    seed: int = 0,
) -> list[SyntheticItem]:
    """Render scenes and simulated human segmentations of them.

    Parameters
    ----------
    n_images : int, default 8
        Number of images. Image ``i`` is the same whatever ``n_images`` is.
    shape : (int, int), default (160, 240)
        Image height and width in pixels; object sizes scale with the smaller side.
    n_annotators : int, default 5
        Segmentations per image. Annotator ``k`` keeps one style (position noise, habit
        of skipping faint objects, habit of splitting objects into parts) over all
        images, and that style does not depend on ``n_annotators``.
    seed : int, default 0
        Seed of every random stream; equal seeds give identical arrays.

    Returns
    -------
    list of SyntheticItem
        Ids ``synth000``, ``synth001``, ...; RGB uint8 images; int32 label maps with
        labels ``1..N``.

    Notes
    -----
    The scenes are built so that the benchmark has something to measure: a random
    contrast per image (so one threshold cannot suit all images and ODS < OIS), textured
    objects (edges that are not boundaries), faint objects and part lines (boundaries
    that only some annotators draw), and sub-pixel disagreement between annotators
    (so the human F-measure is below 1).

    Examples
    --------
    >>> items = make_synthetic_dataset(2, n_annotators=3)
    >>> items[0].image.shape, len(items[0].segmentations)
    ((160, 240, 3), 3)
    """
    h, w = (int(v) for v in shape)
    if n_images < 0 or n_annotators < 1 or h < 16 or w < 16:
        raise ValueError(
            "need n_images >= 0, n_annotators >= 1 and a shape of at least 16x16"
        )
    styles = _styles(seed, n_annotators)
    items = []
    for i in range(n_images):
        rng = np.random.default_rng([seed, _SCENE, i])
        shapes, paints, details = _make_scene(rng, h, w)
        image, truth = _render(rng, shapes, paints, details, h, w)
        segs = [
            _draw(np.random.default_rng([seed, _DRAW, i, k]), style, shapes, h, w)
            for k, style in enumerate(styles)
        ]
        items.append(SyntheticItem(f"synth{i:03d}", image, segs, truth))
    return items


def write_synthetic_dataset(
    root: str | PathLike, items: list[SyntheticItem], *, split: str = "test"
) -> Path:
    """Write items in the BSDS500 layout.

    Parameters
    ----------
    root : str or PathLike
        Dataset root; created if missing.
    items : list of SyntheticItem
        As returned by :func:`make_synthetic_dataset`.
    split : str, default 'test'
        Split folder name.

    Returns
    -------
    Path
        ``root``. It then holds ``images/<split>/<iid>.png`` and
        ``groundTruth/<split>/<iid>.mat`` (``Segmentation`` and ``Boundaries`` per
        annotator, as the official files).
    """
    from ..io import write_image

    root = Path(root)
    img_dir = root / "images" / split
    gt_dir = root / "groundTruth" / split
    img_dir.mkdir(parents=True, exist_ok=True)
    gt_dir.mkdir(parents=True, exist_ok=True)
    for item in items:
        write_image(img_dir / f"{item.iid}.png", item.image)
        write_ground_truth(gt_dir / f"{item.iid}.mat", item.segmentations)
    return root
