"""Figures 5, 7 and 9 of the 2001 paper (Martin, Fowlkes, Tal and Malik, ICCV 2001).

Every figure is drawn from records the consistency and granularity families computed
(:mod:`segbench.region._gce_family`): nothing here scores a pair of segmentations.

Figure 5 (``fig5_gce.png``, ``fig5_lce.png``)
    The error of every pair of human segmentations of a set of images, as a matrix with
    one row and one column per segmentation, sorted by image (and by annotator within an
    image), so the pairs of one image form blocks along the diagonal. A segmentation
    that every other one refines (a coarse, "degenerate" one) has a low error against
    the segmentations of *other* images too and shows as a dark horizontal and vertical
    band. The paper's figure is on its whole first dataset, 150 segmentations of 50
    images; :func:`matrix_images` draws a seeded subset of that size from a larger
    dataset (all of BSDS300 is about 1,600 segmentations, 2.6 million pairs). Only images
    of equal shape are compared (see :mod:`segbench.region.consistency`): the images are
    grouped by shape, and the pairs across groups are left blank.
Figure 7 (``fig7_ncuts.png``)
    A segmenter's output beside the human segmentations of four images, at the number of
    segments of the human segmentation it is compared with.
Figure 9 (``fig9_gce_boxplot.png``)
    Per image (those with at least three human segmentations), box plots of the GCE of
    the human segmentations against each other and of the segmenter against each human.

matplotlib is imported inside the drawing functions only (Agg canvas, no pyplot).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

import numpy as np

from ..result import Result, provenance

__all__ = [
    "MatrixReport",
    "FIGURE_NAMES",
    "matrix_images",
    "matrix_report",
    "pick_examples",
    "plot_error_matrices",
    "plot_examples",
    "plot_gce_boxplots",
]


class _FigureNames(TypedDict):
    fig5: tuple[str, str]  # (GCE, LCE)
    fig7: str
    fig9: str


#: The files, named as the paper numbers its figures.
FIGURE_NAMES: _FigureNames = {
    "fig5": ("fig5_gce.png", "fig5_lce.png"),
    "fig7": "fig7_ncuts.png",
    "fig9": "fig9_gce_boxplot.png",
}

#: The paper's Figure 5 is on 150 segmentations of 50 images.
PAPER_IMAGES = 50


def matrix_images(ids, n: int, seed: int = 0) -> list:
    """The images of Figure 5: ``n`` of ``ids`` drawn without replacement with
    ``numpy.random.default_rng(seed)`` (all of them when ``n`` is 0 or at least their
    number), in sorted order. Depends on the ids, ``n`` and ``seed`` only."""
    ids = sorted(ids)
    if n <= 0 or n >= len(ids):
        return ids
    pick = np.sort(np.random.default_rng(seed).choice(len(ids), size=int(n), replace=False))
    return [ids[i] for i in pick]


def _shape_order(ids, shapes) -> list[int]:
    """Indices of ``ids`` grouped by shape (largest group first, then by shape), by id
    within a group."""
    size: dict = {}
    for s in shapes:
        size[tuple(s)] = size.get(tuple(s), 0) + 1
    return sorted(
        range(len(ids)), key=lambda n: (-size[tuple(shapes[n])], tuple(shapes[n]), ids[n])
    )


@dataclass
class MatrixReport:
    """Figure 5's data: the GCE and LCE of every pair of segmentations of some images.

    Attributes
    ----------
    ids : list of str
        The images, grouped by shape, by id within a shape.
    shapes : list of (int, int)
    n_segments : list of list of int
        Segments of each annotator of each image.
    owner, annotator : (S,) ndarray of int
        Image index (into ``ids``) and annotator (0-based) of each segmentation, in the
        matrix order.
    gce, lce : (S, S) ndarray of float64
        Symmetric, 0 on the diagonal, NaN for pairs of images of different shape.
    n_images_total : int
        Images of the dataset the subset was drawn from.
    seed : int
    """

    ids: list
    shapes: list
    n_segments: list
    owner: np.ndarray
    annotator: np.ndarray
    gce: np.ndarray
    lce: np.ndarray
    n_images_total: int
    seed: int
    params: dict = field(default_factory=dict)

    @property
    def segments(self) -> np.ndarray:
        """Segments of each segmentation, in the matrix order."""
        return np.array(
            [self.n_segments[o][a] for o, a in zip(self.owner, self.annotator)], np.int64
        )

    def metrics(self) -> dict:
        nan = float("nan")
        same = self.owner[:, None] == self.owner[None, :]
        upper = np.triu(np.ones_like(same), 1)
        compared = upper & np.isfinite(self.gce)
        m: dict[str, float] = {  # counts, then means
            "n_images": len(self.ids),
            "n_images_total": int(self.n_images_total),
            "n_segmentations": int(len(self.owner)),
            "seed": int(self.seed),
            "n_pairs": int(compared.sum()),
            "n_pairs_not_compared": int((upper & ~np.isfinite(self.gce)).sum()),
        }
        for name, mat in (("GCE", self.gce), ("LCE", self.lce)):
            s, d = mat[compared & same], mat[compared & ~same]
            m[f"{name}_same"] = float(s.mean()) if s.size else nan
            m[f"{name}_different"] = float(d.mean()) if d.size else nan
        return m

    def per_image(self) -> list[dict]:
        return [
            {"id": iid, "shape": list(s), "n_annotators": len(k), "segments": list(k)}
            for iid, s, k in zip(self.ids, self.shapes, self.n_segments)
        ]

    def to_result(self):
        """The common :class:`segbench.result.Result` (family 'consistency_matrix'); the
        matrices themselves are in ``fig5_errors.npz`` (:meth:`write_npz`)."""
        return Result(
            "consistency_matrix",
            self.metrics(),
            self.per_image(),
            {},
            provenance(**self.params),
        )

    def write_npz(self, path) -> Path:
        """The matrices with their row labels: ``ids``, ``owner``, ``annotator`` (1-based,
        as ``groundTruth{k}``), ``segments``, ``gce``, ``lce``."""
        path = Path(path)
        np.savez_compressed(
            path,
            ids=np.array(self.ids),
            owner=self.owner,
            annotator=self.annotator + 1,
            segments=self.segments,
            gce=self.gce,
            lce=self.lce,
        )
        return path


def matrix_report(
    ids,
    shapes,
    counts,
    same_rows,
    cross_rows,
    *,
    n_images_total: int,
    seed: int,
    params: dict | None = None,
) -> MatrixReport:
    """Assemble Figure 5's matrices from the families' rows.

    Parameters
    ----------
    ids, shapes, counts : lists, one entry per image of the subset (any order)
    same_rows : list of (P, 4) arrays
        Per image, its same-image pairs ``(i, j, gce, lce)``.
    cross_rows : mapping of (image index a, image index b) to (Ka * Kb, 4) arrays
        Rows ``(i, j, gce, lce)`` of annotator ``i`` of ``a`` and ``j`` of ``b``.
    """
    order = _shape_order(ids, shapes)
    pos = {n: p for p, n in enumerate(order)}
    start = np.concatenate([[0], np.cumsum([len(counts[n]) for n in order])]).astype(int)
    size = int(start[-1])
    owner = np.repeat(np.arange(len(order)), [len(counts[n]) for n in order])
    annot = (
        np.concatenate([np.arange(len(counts[n])) for n in order])
        if order
        else np.zeros(0, int)
    )
    mats = [np.full((size, size), np.nan), np.full((size, size), np.nan)]
    for m in mats:
        np.fill_diagonal(m, 0.0)

    def put(a, b, rows):
        if len(rows) == 0:
            return
        r = start[pos[a]] + rows[:, 0].astype(int)
        c = start[pos[b]] + rows[:, 1].astype(int)
        for m, col in zip(mats, (2, 3)):
            m[r, c] = rows[:, col]
            m[c, r] = rows[:, col]

    for n, rows in enumerate(same_rows):
        put(n, n, np.asarray(rows).reshape(-1, 4))
    for (a, b), rows in cross_rows.items():
        put(a, b, np.asarray(rows).reshape(-1, 4))
    return MatrixReport(
        [ids[n] for n in order],
        [tuple(shapes[n]) for n in order],
        [list(counts[n]) for n in order],
        owner,
        annot,
        mats[0],
        mats[1],
        int(n_images_total),
        int(seed),
        dict(params or {}),
    )


# ---------------------------------------------------------------------------------------
# drawing


def _new_figure(size):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig


def plot_error_matrices(
    report: MatrixReport, out_dir, *, vmax: float = 0.6, dpi: int = 130
) -> list[Path]:
    """Figure 5: ``fig5_gce.png`` and ``fig5_lce.png`` in ``out_dir``.

    Each is the matrix of one measure (dark: low error) with, beside it, the number of
    segments of each segmentation (log scale), so the bands of coarse segmentations can
    be traced to them. Pairs of images of different shape are white; thin lines separate
    the shape groups. Above about 640 segmentations the resolution grows so that each
    segmentation keeps at least one pixel.
    """
    from matplotlib import colormaps
    from matplotlib.colors import LogNorm
    from mpl_toolkits.axes_grid1 import make_axes_locatable

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    segs = report.segments
    size = len(segs)
    shp = [tuple(report.shapes[o]) for o in report.owner]
    bounds = [n + 0.5 for n in range(size - 1) if shp[n] != shp[n + 1]]
    m = report.metrics()
    paths = []
    sub = (
        f"{m['n_images']} of {m['n_images_total']} images (seeded sample, seed {m['seed']})"
        if m["n_images"] < m["n_images_total"]
        else f"all {m['n_images']} images"
    )
    for name, mat, fname in (
        ("GCE", report.gce, FIGURE_NAMES["fig5"][0]),
        ("LCE", report.lce, FIGURE_NAMES["fig5"][1]),
    ):
        fig = _new_figure((7.2, 6.6))
        ax = fig.add_axes((0.09, 0.04, 0.77, 0.82))
        cmap = colormaps["magma"].with_extremes(bad="white")
        im = ax.imshow(
            np.ma.masked_invalid(mat),
            cmap=cmap,
            vmin=0.0,
            vmax=vmax,
            interpolation="nearest",
            aspect="equal",
        )
        for b in bounds:
            ax.axhline(b, color="0.5", lw=0.6)
            ax.axvline(b, color="0.5", lw=0.6)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_xlabel("segmentation (sorted by image)", fontsize=8)
        divider = make_axes_locatable(ax)
        norm = LogNorm(
            vmin=max(1, segs.min()) if size else 1, vmax=max(2, segs.max()) if size else 2
        )
        for side, strip in (("left", segs[:, None]), ("top", segs[None, :])):
            sax = divider.append_axes(side, size="3%", pad=0.04)
            sax.imshow(
                strip, cmap="Greens_r", norm=norm, interpolation="nearest", aspect="auto"
            )
            sax.set_xticks([])
            sax.set_yticks([])
            if side == "left":
                sax.set_ylabel("segmentation (sorted by image)", fontsize=8)
        cax = divider.append_axes("right", size="3.5%", pad=0.12)
        cb = fig.colorbar(im, cax=cax, extend="max")
        cb.set_label(name, fontsize=8)
        cb.ax.tick_params(labelsize=7)
        fig.suptitle(
            f"Fig. 5: {name} of every pair of human segmentations, sorted by "
            f"image\n{sub}, {m['n_segmentations']} segmentations; "
            f"mean same image {m[f'{name}_same']:.3f}, different images "
            f"{m[f'{name}_different']:.3f}",
            fontsize=9,
        )
        fig.text(
            0.5,
            0.9,
            "strips: segments of each segmentation (log scale, dark "
            "green: few); white: images of different shape, not compared",
            fontsize=7,
            color="0.3",
            ha="center",
        )
        p = out / fname
        # at least one pixel per segmentation (the matrix is about 4.9 inches wide)
        fig.savefig(p, dpi=max(dpi, int(np.ceil(size / 4.9))), format="png")
        paths.append(p)
    return paths


def pick_examples(scores: dict, shapes: dict, n: int = 4) -> list:
    """Figure 7's images: among the images of the commonest shape, those at evenly
    spaced ranks of the segmenter's mean GCE (best to worst; ties by id)."""
    if not scores:
        return []
    size: dict = {}
    for s in shapes.values():
        size[tuple(s)] = size.get(tuple(s), 0) + 1
    common = min(size, key=lambda s: (-size[s], s))
    ranked = sorted((v, i) for i, v in scores.items() if tuple(shapes[i]) == common)
    if len(ranked) <= n:
        return [i for _, i in ranked]
    at = np.unique(np.round(np.linspace(0, len(ranked) - 1, n)).astype(int))
    return [ranked[k][1] for k in at]


def _boundaries(labels: np.ndarray) -> np.ndarray:
    b = np.zeros(labels.shape, bool)
    b[:, :-1] |= labels[:, :-1] != labels[:, 1:]
    b[:-1, :] |= labels[:-1, :] != labels[1:, :]
    return b


def _region_picture(image: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each region filled with its mean colour, boundaries black."""
    img = np.asarray(image, np.float64)
    if img.ndim == 2:
        img = np.repeat(img[..., None], 3, axis=2)
    img = img[..., :3] / (255.0 if img.max() > 1.0 else 1.0)
    _, inv = np.unique(labels, return_inverse=True)
    inv = inv.ravel()
    area = np.bincount(inv)
    mean = np.stack(
        [np.bincount(inv, weights=img[..., c].ravel()) / area for c in range(3)], axis=1
    )
    pic = mean[inv].reshape(img.shape)
    pic[_boundaries(labels)] = 0.0
    return pic


def plot_examples(
    examples: list[dict], path, *, segmenter: str = "ncut-2001", dpi: int = 110
) -> Path:
    """Figure 7: one row per image: the photograph, then for two of its human
    segmentations (the fewest and the most segments) the human's and the segmenter's
    segmentation with that number of segments, regions filled with their mean colour.

    Parameters
    ----------
    examples : list of dict
        Per image: ``id``, ``image`` (H, W, 3), ``pairs``: a list of
        ``(annotator, k, human labels, machine labels or None, gce, lce)``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = _examples_figure(examples, segmenter)
    fig.savefig(path, dpi=dpi, format="png")
    return path


def _examples_figure(examples: list[dict], segmenter: str):
    """The figure of :func:`plot_examples`, not yet saved."""
    cols = 1 + 2 * max((len(e["pairs"]) for e in examples), default=1)
    rows = max(1, len(examples))
    # each row: 1.75 in of picture and 0.35 in above it for the titles (tight_layout
    # packed the rows so close that a row's titles lay on the pictures above it)
    cell, title, head = 1.75, 0.35, 0.4
    height = rows * (cell + title) + head
    fig = _new_figure((2.3 * cols, height))
    for r, ex in enumerate(examples):
        ax = fig.add_subplot(len(examples), cols, r * cols + 1)
        ax.imshow(ex["image"], interpolation="lanczos")
        ax.set_title(f"{ex['id']}", fontsize=8)
        ax.set_axis_off()
        for c, (ann, k, human, machine, g, e) in enumerate(ex["pairs"]):
            ax = fig.add_subplot(len(examples), cols, r * cols + 2 + 2 * c)
            ax.imshow(_region_picture(ex["image"], human), interpolation="nearest")
            ax.set_title(f"human {ann + 1}: {k} segments", fontsize=7)
            ax.set_axis_off()
            ax = fig.add_subplot(len(examples), cols, r * cols + 3 + 2 * c)
            if machine is not None:
                ax.imshow(_region_picture(ex["image"], machine), interpolation="nearest")
                ax.set_title(f"{segmenter}, k = {k}: GCE {g:.2f}, LCE {e:.2f}", fontsize=7)
            else:
                ax.set_title(f"{segmenter}, k = {k}: not saved", fontsize=7)
            ax.set_axis_off()
    fig.suptitle(
        f"Fig. 7: {segmenter} beside the human segmentations, at each "
        "person's number of segments (rows: best to worst mean GCE)",
        fontsize=9,
    )
    fig.subplots_adjust(
        left=0.01,
        right=0.99,
        bottom=0.02,
        top=1 - (head + title) / height,
        wspace=0.04,
        hspace=title / cell,
    )
    return fig


def _id_key(iid: str):
    """Numeric ids in numeric order, then the others."""
    return (0, int(iid), iid) if iid.isdigit() else (1, 0, iid)


def plot_gce_boxplots(
    ids,
    human: list,
    machine: list,
    path,
    *,
    segmenter: str = "ncut-2001",
    min_segmentations: int = 3,
    dpi: int = 110,
) -> Path:
    """Figure 9: per image with at least ``min_segmentations`` human segmentations, a
    box plot of the human-vs-human GCE (grey) and one of the segmenter-vs-human GCE
    (white), in image-id order (numeric ids numerically).

    Parameters
    ----------
    ids : list of str
    human : list of 1-D arrays
        Per image, the GCE of every pair of its human segmentations.
    machine : list of 1-D arrays
        Per image, the segmenter's GCE against each human segmentation (one per
        annotator, so its length is the number of segmentations).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    keep = sorted(
        (
            (i, np.asarray(h, float), np.asarray(m, float))
            for i, h, m in zip(ids, human, machine)
            if len(m) >= min_segmentations
        ),
        key=lambda k: _id_key(k[0]),
    )
    n = len(keep)
    fig = _new_figure((max(6.0, 0.24 * n + 1.5), 4.6))
    ax = fig.add_subplot(1, 1, 1)
    if n:
        x = np.arange(n)
        style = dict(
            widths=0.34,
            patch_artist=True,
            manage_ticks=False,
            medianprops={"color": "black", "lw": 1},
            flierprops={"markersize": 2.5, "markeredgewidth": 0.5},
        )
        bh = ax.boxplot([k[1] for k in keep], positions=x - 0.19, **style)
        bm = ax.boxplot([k[2] for k in keep], positions=x + 0.19, **style)
        for b in bh["boxes"]:
            b.set(facecolor="0.6", edgecolor="black", lw=0.7)
        for b in bm["boxes"]:
            b.set(facecolor="white", edgecolor="black", lw=0.7)
        ax.set_xticks(x)
        ax.set_xticklabels([k[0] for k in keep], rotation=90, fontsize=6)
        ax.set_xlim(-0.7, n - 0.3)
        ax.legend(
            [bh["boxes"][0], bm["boxes"][0]],
            [
                f"human vs human (mean {np.mean(np.concatenate([k[1] for k in keep])):.3f})",
                f"{segmenter} vs human (mean "
                f"{np.mean(np.concatenate([k[2] for k in keep])):.3f})",
            ],
            fontsize=7,
            loc="upper left",
            frameon=True,
            framealpha=0.9,
            edgecolor="0.85",
        )
    top = max([0.6, *(float(k[j].max()) for k in keep for j in (1, 2) if len(k[j]))])
    ax.set_ylim(0, min(1.0, top + 0.05))
    ax.set_ylabel("GCE", fontsize=8)
    ax.set_xlabel("image", fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.grid(True, axis="y", color="0.93", lw=0.6, zorder=-1)
    # two lines, wrapped to the figure: the figure's width follows the images, and
    # at 6 in (up to ~20 images) one line of title ran past both edges
    ax.set_title(
        f"Fig. 9: GCE per image, human vs human and {segmenter} vs human\n"
        f"({n} images with at least {min_segmentations} segmentations)",
        fontsize=9,
        wrap=True,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=dpi, format="png")
    return path
