"""Training of structured edge forests (Dollár and Zitnick, ICCV 2013 / TPAMI 2015), as
the edges toolbox's ``edgesTrain.m`` (with the MATLAB toolbox's ``forestTrain.m`` and
``forestFindThr.cpp``) does it.

One tree (:func:`train_tree`):

1. **Features.** The tree draws ``round(n_tot_ftrs * frac_ftrs)`` of the model's
   features (1807 of 7228 by default): regular features (a channel pixel of the 16 x 16
   x 13 patch of ``se_channels``' regular channels) and self-similarity features (the
   difference of two cells of a 5 x 5 grid of the self-similarity channels).
2. **Patches.** Per training image (padded bottom/right to a multiple of 4), per
   annotator: up to ``ceil(n_pos / n_images / n_annotators)`` random locations within
   ``gt_width / 2`` px (Euclidean) of that annotator's boundaries and up to
   ``ceil(n_neg / ...)`` farther away, on the grid of multiples of ``shrink`` (1-based),
   ``image_width / 2`` px inside the border; each location's label is the 16 x 16 patch
   of the same annotator's segmentation (relabelled 1..k). Every annotator contributes
   its share, as the toolbox's code does (each patch carries one annotator's labels).
   Collection stops when ``n_pos + n_neg`` patches are gathered. What is stored per
   tree: the channel planes of the images (regular and self-similarity, ~4 MB a BSDS
   image), each patch's position in them and its labels; a node's candidate features
   are computed from the planes when the node is split (bit-identical to reading them
   from a features x patches matrix, which would take 1807 x 1e6 float32 = 7.2 GB at
   the default size: the toolbox's "8 GB per tree"). Peak memory of a default tree:
   ~1.5 GB.
3. **Growing.** Breadth-first, nodes numbered in creation order. At each node the
   structured labels are discretised (:func:`discretize_patches`: 256 random pixel
   pairs -> binary code "same segment?", centred, PCA, class = sign pattern of the
   first ``floor(log2 n_classes)`` components); a node that is pure, has at most
   ``max(min_count, min_child)`` samples or is deeper than ``max_depth`` is a leaf;
   otherwise ``round(sqrt(F))`` random features are searched for the Gini-best
   threshold (:func:`best_gini_split`) and the split kept if its gain exceeds 1e-10 and
   both children have ``min_child`` samples.
4. **Leaves** keep the representative segmentation of their samples: the one whose
   centred code is closest to the mean code (the toolbox's choice, a medoid-like
   sample), labels 0..k-1.

The forest (:class:`SEForest`) holds trees by index; :func:`train_forest` trains the
missing ones and saves after each (resumable). For detection, small segments (<= 5 px)
of the leaves are merged into a neighbour and the edge pixels of each leaf patch
computed (``mergeTrees``), on first use.

Randomness: each tree draws from its own ``numpy.random.Generator`` seeded with
``(seed, tree_index)``. The toolbox's MATLAB ``mrg32k3a`` stream (substream
``treeIndex``) is not reproduced, so locations, feature subsets and pixel pairs, and
therefore the trees, differ in detail from a toolbox model trained with the same
options; the same seed gives the same trees here.

Deviations from the toolbox: only ``discretize = 'pca'`` and ``split = 'gini'`` (the
defaults); uniform sample weights, as edgesTrain uses; the Gini sums are exact integer
counts (the toolbox sums float weights in double).

Sources read (never copied): the edges toolbox (``edgesTrain.m``, ``edgesChns.m``,
``edgesDetect.m``, ``private/edgesDetectMex.cpp``), the MATLAB toolbox
(``classify/forestTrain.m``, ``classify/private/forestFindThr.cpp``, ``classify/pca.m``).
"""

from __future__ import annotations

import io
import json
import math
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from os import PathLike
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import atomic_write_bytes, list_files, read_ground_truth, read_image
from . import _se_forest_kernels as _fk
from ._se_channels import (
    SEChannelOptions,
    _conv_tri_planes,
    _image_planes,
    _mround,
    _raw_channels,
    _smooth_radius,
)
from ._se_channels import (
    _options as _channel_options,
)

__all__ = [
    "FOREST_FORMAT_VERSION",
    "BSDSTrainingSet",
    "SEForest",
    "SEForestOptions",
    "SETree",
    "best_gini_split",
    "channel_planes",
    "discretize_patches",
    "feature_offsets",
    "forest_options",
    "load_forest",
    "train_forest",
    "train_tree",
]

#: Version of the ``.npz`` model layout written by :meth:`SEForest.save`.
FOREST_FORMAT_VERSION = 1
_FORMAT_NAME = "segbench.se_forest"
_F32 = np.float32


# ---------------------------------------------------------------------------------------
# options


@dataclass(frozen=True)
class SEForestOptions:
    """Options of a structured edge model (``edgesTrain.m``'s defaults).

    Attributes
    ----------
    image_width, gt_width : int
        Image patch width (32) and label/output patch width (16), pixels. The image
        width is rounded to a multiple of ``2 * shrink`` (at least ``gt_width``).
    n_pos, n_neg : int
        Positive / negative patches per tree (5e5 each).
    n_images : int or None
        At most this many training images (None: all).
    n_trees : int
        Trees of the forest (8).
    frac_ftrs : float
        Fraction of the features each tree may use (1/4).
    min_count, min_child, max_depth : int
        A node with at most ``max(min_count, min_child)`` samples (1, 8) or deeper than
        ``max_depth`` (64) is a leaf; each child of a split has ``min_child`` samples.
    n_samples : int
        Pixel pairs of the structured-label code (256).
    n_classes : int
        Classes of the discretised label (2): ``floor(log2 n_classes)`` principal
        components (at most 5) are thresholded at 0.
    n_orients, grd_smooth, chn_smooth, sim_smooth, norm_rad, shrink : number
        Channel options (see :class:`~._se_channels.SEChannelOptions`): 4, 0, 2, 8, 4, 2.
    n_cells : int
        Self-similarity grid (5 x 5 cells).
    stride : int
        Detection stride in pixels (2; at least ``shrink``).
    sharpen : int
        Default sharpening of detection (2).
    n_trees_eval : int
        Trees evaluated per location in detection (4; at most ``n_trees``).
    seed : int
        Seed of the trees' random generators (1).
    """

    image_width: int = 32
    gt_width: int = 16
    n_pos: int = 500_000
    n_neg: int = 500_000
    n_images: int | None = None
    n_trees: int = 8
    frac_ftrs: float = 0.25
    min_count: int = 1
    min_child: int = 8
    max_depth: int = 64
    n_samples: int = 256
    n_classes: int = 2
    n_orients: int = 4
    grd_smooth: float = 0.0
    chn_smooth: float = 2.0
    sim_smooth: float = 8.0
    norm_rad: float = 4.0
    shrink: int = 2
    n_cells: int = 5
    stride: int = 2
    sharpen: int = 2
    n_trees_eval: int = 4
    seed: int = 1

    # derived constants (edgesTrain.m)
    @property
    def channel_options(self) -> SEChannelOptions:
        """The options of :func:`~._se_channels.se_channels`."""
        return SEChannelOptions(
            shrink=self.shrink,
            n_orients=self.n_orients,
            grd_smooth=self.grd_smooth,
            chn_smooth=self.chn_smooth,
            sim_smooth=self.sim_smooth,
            norm_rad=self.norm_rad,
        )

    @property
    def n_channels(self) -> int:
        """Channels of an RGB image: 3 + 2 (n_orients + 1) = 13."""
        return 3 + 2 * (self.n_orients + 1)

    @property
    def patch_channel_width(self) -> int:
        """Patch width in channel pixels (image_width / shrink = 16)."""
        return self.image_width // self.shrink

    @property
    def n_chn_ftrs(self) -> int:
        """Regular features: (image_width / shrink)^2 * n_channels = 3328."""
        return self.patch_channel_width**2 * self.n_channels

    @property
    def n_sim_ftrs(self) -> int:
        """Self-similarity features: n_cells^2 (n_cells^2 - 1) / 2 * n_channels = 3900."""
        c = self.n_cells * self.n_cells
        return c * (c - 1) // 2 * self.n_channels

    @property
    def n_tot_ftrs(self) -> int:
        """All features of the model (7228)."""
        return self.n_chn_ftrs + self.n_sim_ftrs

    def training_fields(self) -> dict:
        """The options that shape the trees (all but stride, sharpen, n_trees_eval,
        which detection may change, as in the toolbox)."""
        d = asdict(self)
        for k in ("stride", "sharpen", "n_trees_eval"):
            d.pop(k)
        return d


_MATLAB_NAMES = {
    "imWidth": "image_width",
    "gtWidth": "gt_width",
    "nPos": "n_pos",
    "nNeg": "n_neg",
    "nImgs": "n_images",
    "nTrees": "n_trees",
    "fracFtrs": "frac_ftrs",
    "minCount": "min_count",
    "minChild": "min_child",
    "maxDepth": "max_depth",
    "nSamples": "n_samples",
    "nClasses": "n_classes",
    "nOrients": "n_orients",
    "grdSmooth": "grd_smooth",
    "chnSmooth": "chn_smooth",
    "simSmooth": "sim_smooth",
    "normRad": "norm_rad",
    "nCells": "n_cells",
    "nTreesEval": "n_trees_eval",
}
_INT_FIELDS = (
    "image_width",
    "gt_width",
    "n_pos",
    "n_neg",
    "n_trees",
    "min_count",
    "min_child",
    "max_depth",
    "n_samples",
    "n_classes",
    "n_orients",
    "shrink",
    "n_cells",
    "stride",
    "sharpen",
    "n_trees_eval",
    "seed",
)


def forest_options(options=None) -> SEForestOptions:
    """Checked model options, with ``edgesTrain.m``'s derived adjustments.

    Parameters
    ----------
    options : SEForestOptions or mapping, optional
        Our names or the toolbox's (``nPos``, ``imWidth``, ``nImgs`` = inf, ...);
        integers given as floats (a MATLAB model's) are accepted. Default: the
        toolbox's defaults.

    Returns
    -------
    SEForestOptions
        With ``image_width = round(max(gt_width, image_width) / shrink / 2) * shrink
        * 2``, ``stride = max(stride, shrink)``, ``n_trees_eval = min(n_trees_eval,
        n_trees)``.

    Raises
    ------
    InputError
        An unknown key, a value of the wrong type or range (one line naming it).
    """
    if options is None:
        opts = SEForestOptions()
    elif isinstance(options, SEForestOptions):
        opts = options
    elif isinstance(options, Mapping):
        ours = {f.name for f in fields(SEForestOptions)}
        kw = {}
        for key, value in options.items():
            name = _MATLAB_NAMES.get(key, key)
            if name not in ours:
                raise InputError(f"unknown structured edge option {key!r}")
            kw[name] = value
        opts = SEForestOptions(**kw)
    else:
        raise InputError(
            f"options must be SEForestOptions or a mapping, not {type(options).__name__}"
        )
    kw = asdict(opts)
    for name in _INT_FIELDS:
        v = kw[name]
        if (
            isinstance(v, (float, np.floating))
            and math.isfinite(v)
            and float(v).is_integer()
        ):
            v = int(v)
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise InputError(f"{name} must be an integer, got {v!r}")
        kw[name] = int(v)
    if kw["n_images"] is not None:
        v = kw["n_images"]
        if isinstance(v, float) and math.isinf(v):
            kw["n_images"] = None
        elif isinstance(v, (int, np.integer, float)) and float(v).is_integer() and v >= 1:
            kw["n_images"] = int(v)
        else:
            raise InputError(f"n_images must be a positive integer or None, got {v!r}")
    for name in ("shrink", "gt_width", "n_trees", "n_samples", "n_trees_eval"):
        if kw[name] < 1:
            raise InputError(f"{name} must be >= 1, got {kw[name]}")
    for name in ("n_pos", "n_neg", "min_count", "min_child", "n_cells", "sharpen", "seed"):
        if kw[name] < 0:
            raise InputError(f"{name} must be >= 0, got {kw[name]}")
    if kw["n_classes"] < 2:
        raise InputError(f"n_classes must be >= 2, got {kw['n_classes']}")
    if kw["n_pos"] + kw["n_neg"] < 1:
        raise InputError("n_pos + n_neg must be at least 1")
    if not (0 < float(kw["frac_ftrs"]) <= 1):
        raise InputError(f"frac_ftrs must be in (0, 1], got {kw['frac_ftrs']!r}")
    if kw["gt_width"] > 255 or kw["gt_width"] % 2:
        raise InputError(f"gt_width must be even and < 256, got {kw['gt_width']}")
    s = kw["shrink"]
    kw["image_width"] = _mround(max(kw["gt_width"], kw["image_width"]) / s / 2) * s * 2
    kw["stride"] = max(kw["stride"], s)
    if kw["stride"] % s:
        raise InputError(f"stride must be a multiple of shrink, got {kw['stride']}")
    kw["n_trees_eval"] = min(kw["n_trees_eval"], kw["n_trees"])
    if kw["n_cells"] > kw["image_width"] // s:
        raise InputError("n_cells must not exceed the patch width in channel pixels")
    kw["frac_ftrs"] = float(kw["frac_ftrs"])
    for name in ("grd_smooth", "chn_smooth", "sim_smooth", "norm_rad"):
        kw[name] = float(kw[name])
    out = SEForestOptions(**kw)
    _channel_options(out.channel_options)  # the channel options' own checks
    return out


# ---------------------------------------------------------------------------------------
# feature layout (shared with detection)


def _cell_locations(w: int, n: int) -> np.ndarray:
    """The self-similarity grid positions (0-based) of a w-pixel patch with n cells:
    ``int((i+1)(w + 2s - 1)/(n+1) - s + .5)``, ``s = int(w/n/2 + .5)`` (the mex)."""
    s = int(w / n / 2.0 + 0.5)
    return np.array(
        [int((i + 1) * (w + 2 * s - 1) / (n + 1.0) - s + 0.5) for i in range(n)]
    )


def feature_offsets(opts: SEForestOptions, hc: int, wc: int):
    """Where each feature of a patch lies in (C, hc, wc) channel planes.

    Parameters
    ----------
    opts : SEForestOptions
        The model options (patch width, channels, ``n_cells``).
    hc, wc : int
        Height and width of the channel planes.

    Returns
    -------
    cids : (n_chn_ftrs,) ndarray of int64
        Flat offset, from the patch's top-left channel pixel, of regular feature
        ``f = z w^2 + c w + r`` (channel z, patch column c, row r; the toolbox's
        column-major layout, w = image_width / shrink).
    cids1, cids2 : (n_sim_ftrs,) ndarray of int64
        Self-similarity feature ``k`` (id ``n_chn_ftrs + k``) is ``sim[cids1[k]] -
        sim[cids2[k]]``: per channel z (outermost), the pairs i < j of the n x n grid
        cells numbered column-major, cell positions ``int((i+1)(w + 2s - 1)/(n+1) - s +
        .5)`` with ``s = int(w/n/2 + .5)`` (edgesDetectMex.cpp; [1, 4, 8, 11, 14] by
        default).
    """
    w = opts.patch_channel_width
    nch = opts.n_channels
    z, c, r = np.meshgrid(np.arange(nch), np.arange(w), np.arange(w), indexing="ij")
    cids = (z * hc * wc + r * wc + c).ravel().astype(np.int64)
    n = opts.n_cells
    if n == 0:
        e = np.zeros(0, np.int64)
        return cids, e, e
    locs = _cell_locations(w, n)
    cell = np.arange(n * n)
    cr, cc = locs[cell % n], locs[cell // n]
    i, j = np.triu_indices(n * n, 1)
    zz = np.repeat(np.arange(nch), len(i))
    base = zz * hc * wc
    cids1 = base + np.tile(cr[i] * wc + cc[i], nch)
    cids2 = base + np.tile(cr[j] * wc + cc[j], nch)
    return cids, cids1.astype(np.int64), cids2.astype(np.int64)


def channel_planes(planes: np.ndarray, nrm: float, opts: SEForestOptions):
    """The regular and self-similarity channels of an image, as planes.

    Parameters
    ----------
    planes : (3, H, W) or (1, H, W) ndarray of float32
        Raw image values (0..255 for a uint8 image, then ``nrm = 1/255``).
    nrm : float
        Factor to [0, 1], folded into the colour conversion as rgbConvertMex does.
    opts : SEForestOptions
        Channel options.

    Returns
    -------
    reg, sim : (C, H/shrink, W/shrink) ndarray of float32
        C-contiguous; the two outputs of :func:`~._se_channels.se_channels` as planes.
    """
    copts = opts.channel_options
    chns = _raw_channels(planes, nrm, copts)
    reg = _conv_tri_planes(chns, _smooth_radius(copts.chn_smooth, copts.shrink))
    sim = _conv_tri_planes(chns, _smooth_radius(copts.sim_smooth, copts.shrink))
    return np.ascontiguousarray(reg), np.ascontiguousarray(sim)


# ---------------------------------------------------------------------------------------
# training data


_PHOTO_EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff")


class BSDSTrainingSet(Sequence):
    """The images and human segmentations of a BSDS500 split, read on demand.

    Parameters
    ----------
    root : str or PathLike
        A folder holding ``images/<split>/<id>.jpg`` (or .png, .bmp, .tif) and
        ``groundTruth/<split>/<id>.mat`` (BSDS500's ``data`` folder); the ids with
        both are used.
    split : str
        ``'train'`` (the toolbox trains on it), ``'val'`` or ``'test'``.
    n_images : int, optional
        Only the first ``n_images`` ids (sorted, as the toolbox's ``dir`` listing).

    Item ``i`` is ``(image, annotators)``: (H, W, 3) uint8 RGB and a list of
    :class:`~segbench.io.HumanSegmentation`.
    """

    def __init__(self, root: str | PathLike, split: str = "train", n_images=None):
        root = Path(root)
        img_dir = root / "images" / split
        gt_dir = root / "groundTruth" / split
        for d in (img_dir, gt_dir):
            if not d.is_dir():
                raise InputError("no such folder (expected a BSDS500 data folder)", d)
        photos = list_files(img_dir, _PHOTO_EXTS)
        truths = list_files(gt_dir, "mat")
        ids = [iid for iid in photos if iid in truths]  # sorted, as the toolbox's dir
        if not ids:
            raise InputError(
                f"no image ({', '.join(_PHOTO_EXTS)}) with a ground truth .mat in {gt_dir}",
                img_dir,
            )
        if n_images is not None:
            ids = ids[: int(n_images)]
        self.ids = ids
        self._photos = {iid: photos[iid] for iid in ids}
        self._truths = {iid: truths[iid] for iid in ids}

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i):
        iid = self.ids[i]
        image = read_image(self._photos[iid])
        gts = read_ground_truth(self._truths[iid])
        return image, gts


def _annotator(a, path_hint: str):
    if hasattr(a, "segmentation") and hasattr(a, "boundaries"):
        seg, bdry = a.segmentation, a.boundaries
    else:
        try:
            seg, bdry = a
        except (TypeError, ValueError):
            raise InputError(
                f"{path_hint}: an annotator must be a HumanSegmentation or a "
                f"(segmentation, boundaries) pair"
            ) from None
    seg = np.asarray(seg)
    bdry = np.asarray(bdry) != 0
    if seg.ndim != 2 or seg.shape != bdry.shape:
        raise InputError(f"{path_hint}: segmentation and boundaries must be 2-D, one shape")
    return np.ascontiguousarray(seg, dtype=np.int64), bdry


def _pad_to_multiple(planes: np.ndarray, m: int = 4) -> np.ndarray:
    _, h, w = planes.shape
    ph, pw = (m - h % m) % m, (m - w % m) % m
    if ph or pw:
        planes = np.pad(planes, ((0, 0), (0, ph), (0, pw)), mode="symmetric")
    return np.ascontiguousarray(planes)


def _grid_positions(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of ``mask`` in MATLAB's ``find`` (column-major) order."""
    cols, rows = np.nonzero(mask.T)
    return rows, cols


@dataclass(eq=False)
class _Patches:
    """A tree's training patches, features computed on demand (not stored).

    ``src`` = (chn, base, tab, offa, offb) as the kernels' ``gather_feature`` reads
    it: the regular and self-similarity channel planes of the images that gave patches
    (one flat float32 array, about 4 MB per BSDS image), each patch's flat offset in it
    and its image's plane-size table, and per table the offsets of the tree's features.
    ``labels`` (N, g, g) uint8. Memory: ~0.8 GB for 200 BSDS images plus 268 bytes a
    patch (and, while a node is split, 4 bytes per candidate feature and sample of the
    node: 172 MB at the root of a default tree), where a feature matrix would take 4
    bytes x 1807 features a patch (7.2 GB for the default 1e6 patches).
    """

    src: tuple
    labels: np.ndarray

    @property
    def n(self) -> int:
        return int(self.labels.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.src[3].shape[1])

    def feature(self, j: int, idx: np.ndarray) -> np.ndarray:
        """Feature ``j`` (column of the tree's list) of the samples ``idx``, float32."""
        out = np.empty(idx.shape[0], _F32)
        _fk.gather_feature(self.src, idx, np.int64(j), out)
        return out

    def matrix(self) -> np.ndarray:
        """All features (F, N) float32 (small cases and checks only)."""
        idx = np.arange(self.n, dtype=np.int64)
        return np.stack([self.feature(j, idx) for j in range(self.n_features)])


def _feature_table(opts: SEForestOptions, fids: np.ndarray, hc: int, wc: int):
    """(offa, offb) (F,) int64 of the features ``fids`` for (C, hc, wc) planes stored
    as [regular planes | self-similarity planes]: offsets from a patch's top-left
    regular-channel pixel; offb = -1 for a regular feature."""
    cids, cids1, cids2 = feature_offsets(opts, hc, wc)
    n_chn = opts.n_chn_ftrs
    sim0 = opts.n_channels * hc * wc
    reg = fids < n_chn
    offa = np.empty(fids.shape[0], np.int64)
    offb = np.full(fids.shape[0], -1, np.int64)
    offa[reg] = cids[fids[reg]]
    k = fids[~reg] - n_chn
    offa[~reg] = sim0 + cids1[k]
    offb[~reg] = sim0 + cids2[k]
    return offa, offb


def _collect(items, opts: SEForestOptions, fids: np.ndarray, rng) -> _Patches:
    """Sample patches: their images' channel planes, locations and labels."""
    from scipy.ndimage import distance_transform_edt

    n_items = len(items)
    n_imgs = n_items if opts.n_images is None else min(n_items, opts.n_images)
    if n_imgs < 1:
        raise InputError("no training images")
    total = opts.n_pos + opts.n_neg
    g = opts.gt_width
    s = opts.shrink
    ri = opts.image_width // 2 // s  # half patch, channel pixels
    r_im = opts.image_width // 2
    rg = g // 2
    base = np.empty(total, np.int64)
    tab = np.empty(total, np.int32)
    labels = np.empty((total, g, g), np.uint8)
    # the channels of the images that gave patches, [reg | sim] flat per image, in one
    # array sized for n_imgs images like the first (np.empty: pages not written are
    # never resident), grown if later images are larger
    chn = np.empty(0, _F32)
    n_stored = 0
    k = 0
    tables: dict[tuple[int, int], int] = {}
    for i in range(n_imgs):
        image, annotators = items[i]
        where = f"training image {i}"
        planes, nrm = _image_planes(image)
        if planes.shape[0] != 3:
            planes = np.repeat(planes, 3, axis=0)
        h, w = planes.shape[1:]
        anns = [_annotator(a, where) for a in annotators]
        if not anns:
            raise InputError(f"{where}: no human segmentations")
        for seg, _ in anns:
            if seg.shape != (h, w):
                raise InputError(
                    f"{where}: ground truth is {seg.shape[0]}x{seg.shape[1]}, "
                    f"the image {h}x{w}"
                )
        reg, sim = channel_planes(_pad_to_multiple(planes), nrm, opts)
        hc, wc = reg.shape[1:]
        t = tables.setdefault((hc, wc), len(tables))
        # the sampling grid: 1-based multiples of shrink, r_im px inside the border
        grid = np.zeros((h, w), bool)
        grid[s - 1 :: s, s - 1 :: s] = True
        grid[:r_im] = False
        grid[max(h - r_im - 1, 0) :] = False
        grid[:, :r_im] = False
        grid[:, max(w - r_im - 1, 0) :] = False
        n_gt = len(anns)
        per_pos = math.ceil(opts.n_pos / n_imgs / n_gt)
        per_neg = math.ceil(opts.n_neg / n_imgs / n_gt)
        picks = []
        for j, (_, bdry) in enumerate(anns):
            if bdry.any():
                near = distance_transform_edt(~bdry) < rg
            else:
                near = np.zeros_like(bdry)
            for mask, quota in ((near & grid, per_pos), (~near & grid, per_neg)):
                ys, xs = _grid_positions(mask)
                k2 = min(len(ys), quota)
                sel = rng.choice(len(ys), k2, replace=False) if k2 else np.zeros(0, int)
                picks.append((j, ys[sel], xs[sel]))
        room = total - k
        k_image = k
        for j, ys, xs in picks:
            if room <= 0:
                break
            ys, xs = ys[:room], xs[:room]
            n1 = len(ys)
            if n1 == 0:
                continue
            crow = ((ys + 1) // s - ri).astype(np.int64)
            ccol = ((xs + 1) // s - ri).astype(np.int64)
            base[k : k + n1] = n_stored + crow * wc + ccol
            tab[k : k + n1] = t
            seg = anns[j][0]
            _fk.patch_labels(
                seg,
                (ys + 1 - rg).astype(np.int64),
                (xs + 1 - rg).astype(np.int64),
                g,
                labels,
                k,
            )
            k += n1
            room -= n1
        if k > k_image:
            size = reg.size + sim.size
            if n_stored + size > chn.size:
                grown = np.empty(max(n_stored + size, size * n_imgs), _F32)
                grown[:n_stored] = chn[:n_stored]
                chn = grown
            chn[n_stored : n_stored + reg.size] = reg.ravel()
            chn[n_stored + reg.size : n_stored + size] = sim.ravel()
            n_stored += size
        if k >= total:
            break
    if k == 0:
        raise InputError("no training patches: the images are too small for the patches")
    offa = np.empty((len(tables), fids.shape[0]), np.int64)
    offb = np.empty((len(tables), fids.shape[0]), np.int64)
    for (hc, wc), t in tables.items():
        offa[t], offb[t] = _feature_table(opts, fids, hc, wc)
    if k < total:
        base, tab, labels = base[:k].copy(), tab[:k].copy(), labels[:k].copy()
    return _Patches(src=(chn, base, tab, offa, offb), labels=labels)


# ---------------------------------------------------------------------------------------
# discretisation of structured labels


_PAIRS: dict[int, np.ndarray] = {}


def _all_pairs(g: int) -> np.ndarray:
    """All pixel pairs (p1 < p2) of a g x g patch, flat (row-major) indices."""
    if g not in _PAIRS:
        i, j = np.triu_indices(g * g, 1)
        _PAIRS[g] = np.stack([i, j], axis=1).astype(np.int64)
    return _PAIRS[g]


#: Subspace iteration of the principal components: tolerance on the unit eigenvectors
#: (max norm) and step limit, after which LAPACK's eigh decides (rarely needed).
_EIG_TOL = 1e-10
_EIG_MAX_STEPS = 3000
#: Diagnostics only (read by benchmarks/se_forest_speed.py's users): calls, steps, and
#: LAPACK fallbacks of the subspace iteration in this process.
_EIG_STATS = {"calls": 0, "steps": 0, "fallbacks": 0}


def _top_eigvecs(mat: np.ndarray, d: int):
    """Eigenvalues (descending) and eigenvectors of the d largest eigenvalues of the
    symmetric PSD ``mat``: compiled subspace iteration (BLAS-free: on small matrices
    OpenBLAS's threads cost more CPU than they save), LAPACK if it does not converge."""
    vals, vecs, steps = _fk.top_eigenvectors(mat, d, _EIG_TOL, _EIG_MAX_STEPS)
    _EIG_STATS["calls"] += 1
    if steps >= 0:
        _EIG_STATS["steps"] += steps
        return vals, vecs
    _EIG_STATS["fallbacks"] += 1
    from scipy.linalg import eigh

    k = mat.shape[0]
    d = min(d, k)
    vals, vecs = eigh(mat, subset_by_index=[k - d, k - 1], driver="evr")
    return vals[::-1], np.ascontiguousarray(vecs[:, ::-1])


def _discretize(labels, idx, p1, p2, n_classes: int, need_classes: bool):
    """(classes or None, representative position in idx) of the samples idx, for the
    pixel pairs (p1, p2); classes are None when the node is pure."""
    n = idx.shape[0]
    d_max = min(5, int(math.floor(math.log2(n_classes))))
    m = p1.shape[0]
    if n <= m:
        z = _fk.pair_codes(labels, idx, p1, p2)
        sums = z.sum(axis=0)
        keep = (sums > 0) & (sums < n)
        if not keep.any():
            return None, 0
        zc = np.ascontiguousarray(z[:, keep] - sums[keep] / n)
        rep = int(np.argmin(np.einsum("ij,ij->i", zc, zc)))
        if not need_classes:
            return None, rep
        if zc.shape[1] > n:  # pca.m's branch for more dimensions than samples
            gram = _fk.cross_product(zc, True) / (n - 1)
            vals, vecs = _top_eigvecs(gram, d_max)
            # scores Zc U = Zc Zc' V diag(1/sqrt(vars)): the sign of gram @ v
            proj = _fk.project(gram, np.ascontiguousarray(vecs[:, vals > 1e-30]))
        else:
            cov = _fk.cross_product(zc, False) / (n - 1)
            vals, vecs = _top_eigvecs(cov, d_max)
            proj = _fk.project(zc, np.ascontiguousarray(vecs[:, vals > 1e-30]))
    else:
        bits, sums = _fk.pair_columns(labels, idx, p1, p2)
        keep = np.nonzero((sums > 0) & (sums < n))[0]
        if keep.size == 0:
            return None, 0
        mu = sums[keep] / n
        wts = np.empty((keep.size, 1 + (d_max if need_classes else 0)))
        wts[:, 0] = 1.0 - 2.0 * mu  # ||z - mu||^2 = z.(1 - 2 mu) + const
        if need_classes:
            cooc = _fk.pair_cooccurrence(bits, keep).astype(np.float64)
            cov = (cooc - np.outer(sums[keep], sums[keep]) / n) / (n - 1)
            vals, vecs = _top_eigvecs(cov, d_max)
            vecs = vecs[:, vals > 1e-30]
            wts = np.ascontiguousarray(wts[:, : 1 + vecs.shape[1]])
            wts[:, 1:] = vecs
        out = _fk.pair_project(labels, idx, p1[keep], p2[keep], wts)
        rep = int(np.argmin(out[:, 0]))
        if not need_classes:
            return None, rep
        proj = out[:, 1:] - mu @ wts[:, 1:]
    if proj.ndim != 2 or proj.shape[1] == 0:
        return None, rep
    code = np.zeros(n, np.int64)
    for i in range(proj.shape[1]):
        code += (proj[:, i] < 0).astype(np.int64) << i
    classes = np.unique(code, return_inverse=True)[1].astype(np.int32)
    if classes.max() == 0:
        return None, rep
    return classes, rep


def discretize_patches(
    patches, n_samples: int = 256, n_classes: int = 2, *, rng=None, pairs=None
):
    """Discretise structured labels as ``edgesTrain.m``'s ``discretize`` ('pca').

    Parameters
    ----------
    patches : array_like
        (n, g, g) integer label patches (values < 256).
    n_samples : int
        Number m of pixel pairs, drawn without replacement from all pairs p1 < p2
        (flat row-major pixel indices) when ``pairs`` is not given.
    n_classes : int
        ``floor(log2 n_classes)`` (at most 5) principal components are thresholded.
    rng : numpy.random.Generator, optional
        Draws the pairs (default: ``default_rng(0)``).
    pairs : (m, 2) array_like, optional
        The pixel pairs to use instead of drawing them.

    Returns
    -------
    classes : (n,) ndarray of int32
        0 .. k-1: per sample, the bit pattern of ``[score_i < 0]`` over the principal
        components of the centred binary codes ``z_a = [seg(p1_a) == seg(p2_a)]``
        (with eigenvalue > 1e-30), renumbered in increasing order of the pattern. All 0
        when every code column is constant (the node is pure). The sign of a principal
        axis is arbitrary, so class numbers may swap between implementations.
    representative : int
        Index of the sample whose centred code has the smallest norm (first on ties):
        the segmentation a leaf stores.
    """
    patches = np.asarray(patches)
    if patches.ndim != 3 or patches.shape[1] != patches.shape[2] or len(patches) < 1:
        raise InputError(f"patches must be (n, g, g), got shape {patches.shape}")
    if patches.min() < 0 or patches.max() > 255:
        raise InputError("patch labels must be in 0..255")
    labels = np.ascontiguousarray(patches, np.uint8)
    g = labels.shape[1]
    if pairs is None:
        allp = _all_pairs(g)
        rng = np.random.default_rng(0) if rng is None else rng
        sel = rng.choice(len(allp), min(int(n_samples), len(allp)), replace=False)
        pairs = allp[sel]
    pairs = np.asarray(pairs, np.int64)
    idx = np.arange(len(labels), dtype=np.int64)
    classes, rep = _discretize(
        labels, idx, pairs[:, 0].copy(), pairs[:, 1].copy(), int(n_classes), True
    )
    if classes is None:
        classes = np.zeros(len(labels), np.int32)
    return classes, rep


def best_gini_split(features, classes, n_classes: int | None = None):
    """The Gini-best single-feature threshold split (``forestFindThr.cpp``).

    Parameters
    ----------
    features : (F, n) array_like
        Candidate features (rows) of the n samples; computed as float32.
    classes : (n,) array_like of int
        Classes 0 .. n_classes-1.
    n_classes : int, optional
        Default ``max(classes) + 1``.

    Returns
    -------
    feature : int
        Row of the best split (0 if no split improves on the unsplit node).
    threshold : float
        float32 midpoint of the two consecutive sorted values the cut falls between;
        samples with ``value < threshold`` go left.
    gain : float
        ``gini(node) - sum_side n_side/n gini(side)`` with ``gini = 1 - sum_h p_h^2``;
        0 when nothing improves. Cuts between values closer than 1e-6 are not
        considered; the first strictly best (feature order, then increasing value)
        wins.
    """
    data = np.ascontiguousarray(features, _F32)
    hs = np.ascontiguousarray(classes, np.int32)
    if data.ndim != 2 or hs.ndim != 1 or data.shape[1] != hs.shape[0] or hs.size < 1:
        raise InputError("features must be (F, n) and classes (n,)")
    if hs.min() < 0:
        raise InputError("classes must be >= 0")
    h = int(hs.max()) + 1 if n_classes is None else int(n_classes)
    idx = np.arange(hs.size, dtype=np.int64)
    feats = np.arange(data.shape[0], dtype=np.int64)
    f, thr, gain = _fk.best_split(data, idx, feats, hs, h)
    return int(f), float(thr), float(gain)


# ---------------------------------------------------------------------------------------
# trees


@dataclass(eq=False)
class SETree:
    """One trained tree as plain arrays, nodes in breadth-first creation order.

    Attributes
    ----------
    fids : (K,) int32
        Feature id tested at each internal node (model-wide ids, the toolbox's layout);
        0 at leaves.
    thrs : (K,) float32
        Threshold: a sample goes to the left child when its feature is ``< thr``.
    child : (K,) int32
        0-based index of the left child (the right one follows it); 0 for a leaf.
        (The toolbox stores the 1-based index, i.e. the right child's 0-based one.)
    count, depth : (K,) int32
        Training samples reaching each node; depth (root 0).
    segs : (L, g, g) uint8
        The representative segmentation (labels 0..k-1) of each leaf, leaves in node
        order.
    n_samples : int
        Training patches of the tree.
    """

    fids: np.ndarray
    thrs: np.ndarray
    child: np.ndarray
    count: np.ndarray
    depth: np.ndarray
    segs: np.ndarray
    n_samples: int = 0

    @property
    def n_nodes(self) -> int:
        return int(self.fids.shape[0])

    @property
    def n_leaves(self) -> int:
        return int(self.segs.shape[0])


def _grow(patches: _Patches, opts: SEForestOptions, rng, fids, progress=None) -> SETree:
    labels = patches.labels
    n_total = patches.n
    n_f = patches.n_features
    f1 = min(n_f, max(1, _mround(math.sqrt(n_f))))
    min_child = max(1, opts.min_child)
    min_count = max(1, opts.min_count, min_child)
    cap = 2 * n_total - 1
    t_fids = np.zeros(cap, np.int32)
    t_thrs = np.zeros(cap, _F32)
    t_child = np.zeros(cap, np.int32)
    t_count = np.zeros(cap, np.int32)
    t_depth = np.zeros(cap, np.int32)
    t_rep = np.zeros(cap, np.int64)
    allp = _all_pairs(opts.gt_width)
    n_pairs = min(opts.n_samples, len(allp))
    queue = {0: np.arange(n_total, dtype=np.int64)}
    k, nk = 0, 1
    while k < nk:
        idx = queue.pop(k)
        n = idx.shape[0]
        t_count[k] = n
        sel = rng.choice(len(allp), n_pairs, replace=False)
        p1 = np.ascontiguousarray(allp[sel, 0])
        p2 = np.ascontiguousarray(allp[sel, 1])
        can_split = n > min_count and t_depth[k] <= opts.max_depth
        classes, rep = _discretize(labels, idx, p1, p2, opts.n_classes, can_split)
        t_rep[k] = idx[rep]
        if can_split and classes is not None:
            feats = rng.choice(n_f, f1, replace=False).astype(np.int64)
            fpos, thr, gain = _fk.best_split_stored(
                patches.src, idx, feats, classes, opts.n_classes
            )
            f = int(feats[fpos])
            left = patches.feature(f, idx) < thr
            n_left = int(np.count_nonzero(left))
            if gain > 1e-10 and n_left >= min_child and n - n_left >= min_child:
                t_child[k] = nk
                t_fids[k] = fids[f]
                t_thrs[k] = thr
                queue[nk] = idx[left]
                queue[nk + 1] = idx[~left]
                t_depth[nk] = t_depth[nk + 1] = t_depth[k] + 1
                nk += 2
        k += 1
        if progress is not None and k % 1000 == 0:
            progress(k, nk)
    leaves = np.nonzero(t_child[:nk] == 0)[0]
    segs = (labels[t_rep[leaves]] - 1).astype(np.uint8)
    return SETree(
        fids=t_fids[:nk].copy(),
        thrs=t_thrs[:nk].copy(),
        child=t_child[:nk].copy(),
        count=t_count[:nk].copy(),
        depth=t_depth[:nk].copy(),
        segs=np.ascontiguousarray(segs),
        n_samples=int(n_total),
    )


def train_tree(
    items: Sequence,
    options=None,
    *,
    tree_index: int = 0,
    progress: Callable[[str], None] | None = None,
) -> SETree:
    """Train one tree of a structured edge forest (``edgesTrain.m``'s ``trainTree``).

    Parameters
    ----------
    items : sequence
        Training images: item ``i`` is ``(image, annotators)`` with ``image`` (H, W, 3)
        uint8 RGB (or floats in [0, 1]; grey is repeated to RGB) and ``annotators`` a
        list of :class:`~segbench.io.HumanSegmentation` or ``(segmentation,
        boundaries)`` pairs of (H, W) arrays. E.g. :class:`BSDSTrainingSet`. Read in
        order; the first ``n_images`` are used.
    options : SEForestOptions or mapping, optional
        Model options (our names or the toolbox's); default the toolbox's defaults.
    tree_index : int
        Which tree (0-based): selects the random stream ``(seed, tree_index)``.
    progress : callable, optional
        Called with a one-line status now and then.

    Returns
    -------
    SETree
        Deterministic for (options, tree_index, items). Not the toolbox's tree for the
        same seed: its MATLAB mrg32k3a stream is not reproduced (module docstring).
    """
    opts = forest_options(options)
    if int(tree_index) < 0:
        raise InputError(f"tree_index must be >= 0, got {tree_index}")
    rng = np.random.default_rng([opts.seed, int(tree_index)])
    n_use = _mround(opts.n_tot_ftrs * opts.frac_ftrs)
    n_use = min(max(n_use, 1), opts.n_tot_ftrs)
    fids = np.sort(rng.choice(opts.n_tot_ftrs, n_use, replace=False)).astype(np.int64)
    t0 = time.process_time()
    patches = _collect(items, opts, fids, rng)
    if progress is not None:
        progress(
            f"tree {tree_index}: {patches.n} patches, {len(fids)} features "
            f"({time.process_time() - t0:.1f} CPU-s)"
        )
    report = None
    if progress is not None:

        def report(k, nk):
            progress(f"tree {tree_index}: node {k} of {nk} so far")

    tree = _grow(patches, opts, rng, fids, report)
    del patches
    if progress is not None:
        progress(
            f"tree {tree_index}: {tree.n_nodes} nodes, {tree.n_leaves} leaves, depth "
            f"{int(tree.depth.max())} ({time.process_time() - t0:.1f} CPU-s)"
        )
    return tree


# ---------------------------------------------------------------------------------------
# the forest


class SEForest:
    """A structured edge forest: options and the trees trained so far.

    Parameters
    ----------
    options : SEForestOptions or mapping, optional
        Model options.
    trees : mapping of int to SETree, optional
        Trained trees by 0-based index (< ``options.n_trees``).
    training : mapping of str to str, optional
        What the trees were trained on (:attr:`training`); saved with the model.

    Detection (:func:`~._se_detect.se`) needs every tree (:attr:`complete`). The leaf
    tables it uses (small segments removed, edge pixels per band) are computed from the
    trees on first use and cached.
    """

    def __init__(
        self,
        options=None,
        trees: Mapping[int, SETree] | None = None,
        training: Mapping[str, str] | None = None,
    ):
        self.options = forest_options(options)
        #: What the trees were trained on (``split``, ``ids``: a digest of the image
        #: ids), as ``segbench train`` records it: a resumed training must draw from
        #: the same images. None for a forest made otherwise.
        self.training = None if training is None else dict(training)
        self.trees: dict[int, SETree] = {}
        for i, t in (trees or {}).items():
            self.add_tree(i, t)
        self._cache: dict = {}

    def add_tree(self, index: int, tree: SETree) -> None:
        """Store tree ``index`` (0-based), replacing any tree of that index."""
        index = int(index)
        if not 0 <= index < self.options.n_trees:
            raise InputError(f"tree index {index} outside 0..{self.options.n_trees - 1}")
        _check_tree(tree, self.options, f"tree {index}")
        self.trees[index] = tree
        self._cache = {}

    @property
    def missing(self) -> list[int]:
        """Indices of the trees not trained yet."""
        return [i for i in range(self.options.n_trees) if i not in self.trees]

    @property
    def complete(self) -> bool:
        return not self.missing

    def __repr__(self) -> str:
        nodes = sum(t.n_nodes for t in self.trees.values())
        return f"SEForest({len(self.trees)} of {self.options.n_trees} trees, {nodes} nodes)"

    # -- saving ---------------------------------------------------------------------

    def save(self, path: str | PathLike) -> Path:
        """Write the forest to ``path`` (``.npz``, compressed, atomically).

        The bytes depend on the forest only (zip entries dated 1980-01-01, as
        ``np.savez_compressed`` writes them otherwise with the time of writing): the same
        options, seed and data give the same file.

        Layout (format version :data:`FOREST_FORMAT_VERSION`): ``format``, ``version``,
        ``options`` (JSON), ``tree_index`` (k,), ``node_offsets``/``leaf_offsets``
        (k+1,), and the trees' arrays concatenated: ``fids``, ``thrs``, ``child``,
        ``count``, ``depth``, ``segs``, ``n_samples``; and, when :attr:`training` is
        set, ``training`` (JSON).
        """
        path = Path(path)
        order = sorted(self.trees)
        ts = [self.trees[i] for i in order]
        g = self.options.gt_width

        def cat(name, dtype, empty_shape=(0,)):
            parts = [getattr(t, name) for t in ts]
            return (
                np.concatenate(parts).astype(dtype)
                if parts
                else np.zeros(empty_shape, dtype)
            )

        arrays = {
            "format": np.array(_FORMAT_NAME),
            "version": np.array(FOREST_FORMAT_VERSION, np.int64),
            "options": np.array(json.dumps(asdict(self.options), sort_keys=True)),
            "tree_index": np.array(order, np.int64),
            "node_offsets": np.cumsum([0] + [t.n_nodes for t in ts]).astype(np.int64),
            "leaf_offsets": np.cumsum([0] + [t.n_leaves for t in ts]).astype(np.int64),
            "n_samples": np.array([t.n_samples for t in ts], np.int64),
            "fids": cat("fids", np.int32),
            "thrs": cat("thrs", np.float32),
            "child": cat("child", np.int32),
            "count": cat("count", np.int32),
            "depth": cat("depth", np.int32),
            "segs": cat("segs", np.uint8, (0, g, g)),
        }
        if self.training is not None:
            arrays["training"] = np.array(json.dumps(self.training, sort_keys=True))
        atomic_write_bytes(path, _npz_bytes(arrays))
        return path

    @classmethod
    def load(cls, path: str | PathLike) -> SEForest:
        """Read a forest written by :meth:`save`; see :func:`load_forest`."""
        return load_forest(path)

    # -- detection tables -----------------------------------------------------------

    def detection_tables(self, n_bands: int) -> dict:
        """Packed arrays for detection, cached: ``nodes`` (n_trees, max nodes, 3) int32
        (left child or 0, feature id or, at a leaf, global leaf id, float32 threshold
        bits), leaf ``segs`` with small segments (<= 5 px) merged,
        ``nsegs``, and the edge pixels ``bins``/``bnds`` of ``n_bands`` bands (band 0 the
        edges, band b their b-th 3x3 dilation ring), as the toolbox's mergeTrees."""
        if not self.complete:
            raise InputError(
                f"the forest has {len(self.trees)} of {self.options.n_trees} trees; "
                f"train the missing ones ({self.missing}) first (train_forest resumes)"
            )
        n_bands = int(n_bands)
        if "packed" not in self._cache:
            ts = [self.trees[i] for i in range(self.options.n_trees)]
            nmax = max(t.n_nodes for t in ts)
            nodes = np.zeros((len(ts), nmax, 3), np.int32)
            off = 0
            for i, t in enumerate(ts):
                k = t.n_nodes
                is_leaf = t.child == 0
                nodes[i, :k, 0] = t.child
                nodes[i, :k, 1] = t.fids
                nodes[i, :k, 1][is_leaf] = off + np.arange(np.count_nonzero(is_leaf))
                nodes[i, :k, 2] = t.thrs.view(np.int32)
                off += np.count_nonzero(is_leaf)
            segs = np.ascontiguousarray(np.concatenate([t.segs for t in ts]))
            nsegs = _fk.clean_segments(segs, 5)
            self._cache["packed"] = dict(nodes=nodes, segs=segs, nsegs=nsegs)
        packed = self._cache["packed"]
        key = ("bands", n_bands)
        if key not in self._cache:
            bins, bnds = _fk.edge_bands(packed["segs"], packed["nsegs"], n_bands)
            self._cache[key] = (bins, bnds)
        bins, bnds = self._cache[key]
        return dict(packed, bins=bins, bnds=bnds, n_bands=n_bands)


def _npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """An ``.npz`` (deflated, as ``np.savez_compressed``) whose bytes depend on the
    arrays only: every entry carries the same fixed date."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
        for name, arr in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o600 << 16
            with zf.open(info, "w", force_zip64=True) as f:
                np.lib.format.write_array(f, np.asanyarray(arr), allow_pickle=False)
    return buf.getvalue()


def _check_tree(tree: SETree, opts: SEForestOptions, what: str) -> None:
    """Raise InputError (message naming ``what``) unless ``tree`` is consistent."""
    if not isinstance(tree, SETree):
        raise InputError(f"{what}: not an SETree")
    arrs = {
        "fids": np.int32,
        "thrs": np.float32,
        "child": np.int32,
        "count": np.int32,
        "depth": np.int32,
    }
    k = tree.fids.shape[0] if isinstance(tree.fids, np.ndarray) else -1
    if k < 1:
        raise InputError(f"{what}: no nodes")
    for name, dt in arrs.items():
        a = getattr(tree, name)
        if not isinstance(a, np.ndarray) or a.dtype != dt or a.shape != (k,):
            raise InputError(f"{what}: {name} must be ({k},) {np.dtype(dt).name}")
    g = opts.gt_width
    child = tree.child.astype(np.int64)
    internal = np.nonzero(child)[0]
    n_leaves = k - internal.size
    segs = tree.segs
    if (
        not isinstance(segs, np.ndarray)
        or segs.dtype != np.uint8
        or segs.shape != (n_leaves, g, g)
    ):
        raise InputError(f"{what}: segs must be ({n_leaves}, {g}, {g}) uint8")
    # children: after their parent, within the tree, each node the child of one parent
    lefts = child[internal]
    if internal.size and (
        np.any(lefts <= internal) or np.any(lefts + 1 >= k) or np.any(lefts % 2 == 0)
    ):
        raise InputError(f"{what}: child indices do not form a tree")
    if internal.size and (
        np.unique(lefts).size != lefts.size or 2 * internal.size + 1 != k
    ):
        raise InputError(f"{what}: child indices do not form a tree")
    f = tree.fids[internal]
    if f.size and (f.min() < 0 or f.max() >= opts.n_tot_ftrs):
        raise InputError(f"{what}: feature ids outside 0..{opts.n_tot_ftrs - 1}")
    if not np.all(np.isfinite(tree.thrs[internal])):
        raise InputError(f"{what}: thresholds must be finite")


_ARRAY_SPECS = {
    "format": "U",
    "version": "i",
    "options": "U",
    "tree_index": "i",
    "node_offsets": "i",
    "leaf_offsets": "i",
    "n_samples": "i",
    "fids": np.int32,
    "thrs": np.float32,
    "child": np.int32,
    "count": np.int32,
    "depth": np.int32,
    "segs": np.uint8,
}


def load_forest(path: str | PathLike) -> SEForest:
    """Read a structured edge forest written by :meth:`SEForest.save`.

    Parameters
    ----------
    path : str or PathLike
        The ``.npz`` file.

    Returns
    -------
    SEForest

    Raises
    ------
    InputError
        One line naming the file when it is missing, not a zip/npz archive, damaged
        (truncated, bad checksum), not a segbench structured edge forest, of another
        format version, or inconsistent (array types, shapes, tree structure, options).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("no such structured edge model file", path)
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise InputError(
            f"cannot read the model file: {exc.strerror or exc}", path
        ) from None
    if magic != b"PK\x03\x04":  # every .npz is a zip archive
        what = "an empty file" if not magic else "not an .npz archive"
        raise InputError(f"{what}, not a segbench structured edge model", path)
    try:
        with np.load(path, allow_pickle=False) as z:
            names = set(z.files)
            if "format" not in names or "version" not in names:
                raise InputError("not a segbench structured edge forest (.npz)", path)
            fmt = z["format"]
            if (
                not isinstance(fmt, np.ndarray)
                or fmt.dtype.kind != "U"
                or fmt.shape != ()
                or str(fmt) != _FORMAT_NAME
            ):
                raise InputError("not a segbench structured edge forest (.npz)", path)
            ver = z["version"]
            if (
                not isinstance(ver, np.ndarray)
                or ver.dtype.kind not in "iu"
                or ver.shape != ()
            ):
                raise InputError("model format version is not an integer", path)
            if int(ver) != FOREST_FORMAT_VERSION:
                raise InputError(
                    f"structured edge model format version {int(ver)}; this segbench "
                    f"reads version {FOREST_FORMAT_VERSION} (retrain or convert it)",
                    path,
                )
            lacking = sorted(set(_ARRAY_SPECS) - names)
            if lacking:
                raise InputError(f"damaged model: no {', '.join(lacking)}", path)
            a = {name: z[name] for name in _ARRAY_SPECS}
            training_text = str(z["training"]) if "training" in names else None
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure of the zip/npy decoders
        # (zipfile, zlib, npy header parsing raise a dozen types on damaged bytes)
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"damaged or not an .npz model file ({reason})", path) from None
    for name, spec in _ARRAY_SPECS.items():
        arr = a[name]
        if not isinstance(arr, np.ndarray):
            raise InputError(f"damaged model: {name} is not an array", path)
        ok = arr.dtype.kind in spec if isinstance(spec, str) else arr.dtype == spec
        if not ok:
            raise InputError(f"damaged model: {name} has type {arr.dtype}", path)
    try:
        raw = json.loads(str(a["options"]))
        if not isinstance(raw, dict):
            raise ValueError("not an object")
        opts = forest_options(raw)
    except (ValueError, TypeError, InputError) as exc:
        msg = exc.problem if isinstance(exc, InputError) else str(exc)
        raise InputError(f"damaged model: options ({msg})", path) from None
    idx = a["tree_index"]
    no, lo, ns = a["node_offsets"], a["leaf_offsets"], a["n_samples"]
    k = idx.shape[0]
    g = opts.gt_width
    if (
        idx.ndim != 1
        or no.shape != (k + 1,)
        or lo.shape != (k + 1,)
        or ns.shape != (k,)
        or (k and (no[0] != 0 or lo[0] != 0))
        or np.any(np.diff(no) < 1)
        or np.any(np.diff(lo) < 1)
        or a["fids"].shape != (int(no[-1]),)
        or a["segs"].shape != (int(lo[-1]), g, g)
        or np.unique(idx).size != k
    ):
        raise InputError("damaged model: tree array sizes disagree", path)
    for name in ("thrs", "child", "count", "depth"):
        if a[name].shape != a["fids"].shape:
            raise InputError("damaged model: tree array sizes disagree", path)
    trees = {}
    for j in range(k):
        s0, s1 = int(no[j]), int(no[j + 1])
        l0, l1 = int(lo[j]), int(lo[j + 1])
        tree = SETree(
            fids=a["fids"][s0:s1].copy(),
            thrs=a["thrs"][s0:s1].copy(),
            child=a["child"][s0:s1].copy(),
            count=a["count"][s0:s1].copy(),
            depth=a["depth"][s0:s1].copy(),
            segs=np.ascontiguousarray(a["segs"][l0:l1]),
            n_samples=int(ns[j]),
        )
        if not 0 <= int(idx[j]) < opts.n_trees:
            raise InputError(f"damaged model: tree index {int(idx[j])}", path)
        try:
            _check_tree(tree, opts, f"tree {int(idx[j])}")
        except InputError as exc:
            raise InputError(f"damaged model: {exc.problem}", path) from None
        trees[int(idx[j])] = tree
    training = None
    if training_text is not None:
        try:
            training = json.loads(training_text)
            if not isinstance(training, dict) or not all(
                isinstance(v, str) for v in training.values()
            ):
                raise ValueError("not an object of strings")
        except ValueError as exc:
            raise InputError(f"damaged model: training ({exc})", path) from None
    return SEForest(opts, trees, training)


def train_forest(
    items: Sequence,
    options=None,
    *,
    path: str | PathLike | None = None,
    progress: Callable[[str], None] | None = None,
) -> SEForest:
    """Train (or finish training) a structured edge forest, tree by tree.

    Parameters
    ----------
    items : sequence
        Training images and annotators, as :func:`train_tree` takes them.
    options : SEForestOptions or mapping, optional
        Model options. When ``path`` holds a partly trained forest, its training options
        must equal these (detection options may differ; the file's are kept).
    path : str or PathLike, optional
        The ``.npz`` model: loaded if it exists, and rewritten after each new tree, so an
        interrupted training resumes where it stopped.
    progress : callable, optional
        Called with one-line status messages.

    Returns
    -------
    SEForest
        Complete: trees 0 .. n_trees-1, tree i trained by ``train_tree(items, options,
        tree_index=i)``.
    """
    opts = forest_options(options)
    if path is not None and Path(path).exists():
        forest = load_forest(path)
        if forest.options.training_fields() != opts.training_fields():
            diff = sorted(
                k
                for k, v in opts.training_fields().items()
                if forest.options.training_fields()[k] != v
            )
            raise InputError(
                f"holds a forest trained with other options ({', '.join(diff)}); "
                f"give another path or the same options",
                path,
            )
    else:
        forest = SEForest(opts)
    for i in forest.missing:
        forest.add_tree(i, train_tree(items, opts, tree_index=i, progress=progress))
        if path is not None:
            forest.save(path)
    return forest
