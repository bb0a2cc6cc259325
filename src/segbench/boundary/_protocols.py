"""The boundary protocols as presets: BSR (BSDS500, 2013), BSDS300 (segbench 1.2.0) and
the 2004 Pb paper's half-resolution protocol (martin2004).

Both protocols share the matcher (``correspondPixels.cc``, ``match.cc`` and ``match.hh``
are identical in the two archives apart from line endings), the counting rule
(a detected pixel counts if it matches any annotator, recall pools the annotators) and
the interpolated best-F search (``maxF``). They differ in where the human maps come
from and whether they are thinned, in the number of thresholds, in what is reported,
and in how the human score is formed. :data:`PROTOCOLS` holds each protocol's
parameters under the boundary family's names; :data:`SOURCES` names the line of the
official code each value comes from. The pure functions below are what the BSDS300
protocol needs beyond the BSR kernels: its boundary map of a segmentation
(:func:`seg2bmap`, :func:`human_boundary_map`, drawn into a smaller grid by
:func:`shrink_bmap` for the half-resolution protocol), its upsampling of a smaller soft map
(:func:`upsample_nearest`), and each subject's counts against the other subjects of
an image (:func:`subject_counts`), which the BSDS300 site listed per image and pooled
per presentation.

Sources, as read (never copied):

- segbench 1.2.0 (``VERSION``), the BSDS300 code, in a public mirror
  (``bcmi/Image-Harmonization-Dataset-iHarmony4`` @ 0bdb51d, folder
  ``Lalonde and Efros/colorStatistics/3rd_party/segmentationBerkeley``; its
  ``lib/matlab`` copies are identical to the sources cited here).
- BSR, the BSDS500 benchmark of January 2013, in the BIDS mirror
  (``BIDS/BSDS500`` @ a04b7c6, ``bench/benchmarks`` and ``bench/source``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..primitives import DEFAULT_MAX_DIST, bsr_ratio, f_measure, human_counts, thin

__all__ = [
    "PROTOCOLS",
    "SOURCES",
    "SubjectCounts",
    "by_presentation",
    "human_boundary_map",
    "pool_subjects",
    "protocol",
    "seg2bmap",
    "shrink_bmap",
    "shrink_cells",
    "subject_counts",
    "upsample_nearest",
]

_S300 = "segbench-1.2.0 "
_BSR = "BSR "

#: Each protocol's parameters, under the boundary families' names.
#:
#: Record parameters (they change the per-image counts): ``nthresh``, ``max_dist``,
#: ``thin`` (thin each thresholded map), ``thin_gt`` (thin each human map before
#: matching), ``upsample`` (how a soft map smaller than the ground truth is brought to
#: its size: ``'nearest'`` or None to refuse it), ``lone`` (the human score of an
#: image with one annotator: ``'count'`` or ``'skip'``, see :func:`human_counts`),
#: ``resolution`` (``'full'``, or ``'half'``: human maps, soft maps and the matching at
#: half resolution, see :mod:`segbench.boundary._half`).
#: Summary parameters: ``alpha`` (F-measure weight), ``reported`` (the scores the
#: protocol's own code computes; others segbench adds are extensions), ``ranking``
#: (the score its site ranked algorithms by), ``presentations`` (the ground-truth
#: presentations scored separately, None where the ground truth has none).
PROTOCOLS: dict[str, dict] = {
    "bsr": {
        "nthresh": 99,
        "max_dist": DEFAULT_MAX_DIST,
        "thin": True,
        "thin_gt": False,
        "upsample": None,
        "lone": "skip",
        "resolution": "full",
        "nms": None,
        "alpha": 0.5,
        "reported": ("ODS", "OIS", "AP"),
        "ranking": "ODS",
        "presentations": None,
    },
    "bsds300": {
        "nthresh": 30,
        "max_dist": DEFAULT_MAX_DIST,
        "thin": True,
        "thin_gt": True,
        "upsample": "nearest",
        "lone": "count",
        "resolution": "full",
        "nms": None,
        "alpha": 0.5,
        "reported": ("ODS",),
        "ranking": "ODS",
        "presentations": ("gray", "color"),
    },
    "martin2004": {
        "nthresh": 30,
        "max_dist": 0.01,
        "thin": True,
        "thin_gt": True,
        "upsample": "nearest",
        "lone": "count",
        "resolution": "half",
        "nms": None,
        "alpha": 0.5,
        "reported": ("ODS",),
        "ranking": "ODS",
        "presentations": ("gray", "color"),
    },
}


def _edge_preset(max_dist: float, nms: dict) -> dict:
    """An edge-detection dataset's protocol: BSR's benchmark (99 thresholds, maps
    thinned, human maps as stored) at its tolerance, after the NMS its papers apply."""
    return {
        **copy.deepcopy(PROTOCOLS["bsr"]),
        "max_dist": max_dist,
        "nms": nms,
        "reported": ("ODS", "OIS", "AP"),
    }


#: Dollar's NMS as HED's ``nms_process.m`` and RINDNet's ``eval.m`` call it.
_NMS_HED = {"r": 1, "s": 5, "m": 1.01, "presmooth": True}

#: The protocols of the edge-detection datasets (the presets papers use). Each runs
#: BSR's benchmark after Dollar's NMS; they differ in the tolerance and the NMS
#: settings. Values and their sources: :data:`SOURCES`, docs/datasets.md.
PROTOCOLS.update(
    {
        "bsds500": _edge_preset(DEFAULT_MAX_DIST, _NMS_HED),
        "nyud": _edge_preset(0.011, {"r": 4, "s": 5, "m": 1.01, "presmooth": False}),
        "biped": _edge_preset(
            DEFAULT_MAX_DIST, {"r": 1, "s": 5, "m": 1.01, "presmooth": False}
        ),
        "multicue": _edge_preset(
            DEFAULT_MAX_DIST, {"r": 2, "s": 5, "m": 1.01, "presmooth": False}
        ),
        "bsds-rind": _edge_preset(DEFAULT_MAX_DIST, _NMS_HED),
    }
)

#: Where each value of :data:`PROTOCOLS` comes from (file:line in the archives above).
SOURCES: dict[str, dict[str, str]] = {
    "bsr": {
        "nthresh": _BSR + "evaluation_bdry_image.m:27 `if nargin<4, nthresh = 99`; "
        "thresholds :48 `linspace(1/(nthresh+1),1-1/(nthresh+1),"
        "nthresh)`",
        "max_dist": _BSR + "evaluation_bdry_image.m:26 `maxDist = 0.0075`, passed to "
        "correspondPixels at :83; outlier cost: correspondPixels.cc:11 "
        "`outlierCostDefault = 100`",
        "thin": _BSR + "evaluation_bdry_image.m:25 `thinpb = 1`; :72-74 "
        "`bwmorph(bmap, 'thin', inf)` after thresholding (:66)",
        "thin_gt": _BSR + "evaluation_bdry_image.m:83,87 `groundTruth{i}.Boundaries` "
        "matched and counted as stored",
        "upsample": _BSR + "correspondPixels.cc:41-44 'bmap1 and bmap2 must be the same "
        "size' (no resizing anywhere in the BSR scripts)",
        "lone": "BSR has no human script; segbench's own convention (zeros)",
        "alpha": _BSR + "collect_eval_bdry.m:124-125 `f = 2*p.*r./(p+r+((p+r)==0))`",
        "reported": _BSR + "collect_eval_bdry.m:115 eval_bdry.txt = bestT bestR bestP "
        "bestF (ODS, :73-76) R_max P_max F_max (OIS, :65-69, :94-96) "
        "Area_PR (AP, :98-108)",
        "ranking": "BSDS500 page and Arbelaez et al. 2011, Table 1 (ODS F)",
        "presentations": _BSR + "evaluation_bdry_image.m:42 `load(gtFile)`: one "
        "groundTruth cell per image, no presentation",
        "resolution": _BSR + "evaluation_bdry_image.m: maps matched at the size stored",
        "nms": _BSR + "boundaryBench.m reads the maps as given (no NMS: gPb and ucm2 "
        "are thin already)",
    },
    "bsds300": {
        "nthresh": _S300 + "Benchmark/boundaryBench.m:12 `if nargin<3, nthresh=30; "
        "end`; thresholds Benchmark/boundaryPR.m:29 "
        "`linspace(1/(nthresh+1),1-1/(nthresh+1),nthresh)` (as BSR)",
        "max_dist": _S300 + "Benchmark/boundaryPR.m:61 `correspondPixels(bmap,"
        "bmaps{i})` with the compiled defaults, "
        "Benchmark/correspondPixels.cc:10-11 `maxDistDefault = "
        "0.0075`, `outlierCostDefault = 100` (the help text, "
        "correspondPixels.m, says 0.01)",
        "thin": _S300 + "Benchmark/boundaryPR.m:51-53 threshold, then "
        "`bwmorph(bmap,'thin',inf)`, always (CHANGELOG 1.2.0: moved "
        "after thresholding)",
        "thin_gt": _S300 + "Benchmark/boundaryPR.m:32-40 `bmaps{i} = "
        "seg2bmap(segs{i},width,height)`, then "
        "`bmaps{i} .* bwmorph(bmaps{i},'thin',inf)`",
        "upsample": _S300 + "Benchmark/boundaryBench.m:37-43 `imresize(pb,"
        "size(segs{1}),'nearest')` when numel(pb) < "
        "numel(segs{1}); an error when larger",
        "lone": _S300 + "Benchmark/boundaryBenchHuman.m:34-42 leave-one-out via "
        "boundaryPR; with no other subject, boundaryPR.m:58-70 counts "
        "sumP only",
        "alpha": _S300 + "Benchmark/boundaryBench.m:105-106 `f = 2*p.*r./(p+r+((p+r)==0))`",
        "reported": _S300 + "Benchmark/boundaryBench.m:82-100 score.txt = bestT bestR "
        "bestP bestF of the pooled curve (maxF :109-127, identical "
        "to BSR's); scores.txt :55-75 per image; no OIS, no AP",
        "ranking": _S300 + "Benchmark/boundaryBenchHtml.m:65-73 algorithms sorted by "
        "score.txt column 4 (F), printed `%4.2f` (:108-115); the "
        "Humans row (:103-107) is human/score.txt column 3",
        "presentations": _S300 + "Dataset/segFilename.m:17 "
        "`human/<present>/<uid>/<iid>.seg`; "
        "Dataset/readSegs.m:10-24; boundaryBench.m:35 and "
        "boundaryBenchHuman.m:25 `readSegs(pres,iid)`; "
        "boundaryBenchHtml.m:10 "
        "`presentations = {'gray','color'}`",
        "resolution": _S300 + "Benchmark/boundaryBench.m:37-43: smaller soft maps "
        "upsampled to the segmentations' size",
        "nms": _S300 + "boundaryBench.m reads the maps as given (no NMS)",
    },
    "martin2004": {
        "nthresh": _S300 + "Benchmark/boundaryBench.m:12 `nthresh=30` (the code of the "
        "2004 paper's benchmark)",
        "max_dist": "Martin, Fowlkes, Malik, PAMI 2004, Fig. 3 and Sec. 3: d_max = 1% "
        "of the diagonal (2.88 px at 240x160)",
        "thin": _S300 + "Benchmark/boundaryPR.m:51-53, as bsds300",
        "thin_gt": _S300 + "Benchmark/boundaryPR.m:37-40 `bwmorph(bmaps{i},'thin',inf)`",
        "upsample": _S300 + "as bsds300, to the half-resolution size",
        "lone": _S300 + "as bsds300",
        "resolution": "PAMI 2004, Fig. 3: 'half-resolution' test images (240x160); "
        + _S300
        + "Benchmark/boundaryPR.m:6 'The pb image can be smaller "
        "than the segmentations', :27 `[height,width] = size(pb)`, :34 "
        "`seg2bmap(segs{i},width,height)`; lib/matlab/seg2bmap.m:49-59 the "
        "mapping `j = 1+floor((y-1)*height/h)`",
        "alpha": _S300 + "as bsds300",
        "reported": "PAMI 2004, Fig. 3: F at the best threshold of the pooled curve",
        "ranking": "PAMI 2004, Fig. 3 (ODS F)",
        "presentations": _S300 + "as bsds300",
        "nms": _S300 + "as bsds300 (no NMS)",
    },
}

_EDGES = "pdollar/edges @94260b5 "
_HED = "s9xie/hed_release-deprecated @7b9ba63 "
_RCF = "yun-liu/RCF @fc9e0f9 "
_COMMON = {
    "nthresh": _EDGES + "edgesEvalImg.m:48 `'thrs',99`; :50-51 "
    "`thrs=linspace(1/(K+1),1-1/(K+1),K)` (as BSR)",
    "thin": _EDGES + "edgesEvalImg.m:63-64 `E1 = double(E>=max(eps,thrs(k)))`, then "
    "`bwmorph(E1,'thin',inf)`",
    "thin_gt": _EDGES + "edgesEvalImg.m:55-56 `G{g}.Boundaries` as stored, never thinned",
    "upsample": "none: every script evaluates maps of the ground truth's size",
    "lone": "as bsr",
    "resolution": "full: " + _EDGES + "edgesEvalImg.m matches at the size stored",
    "alpha": _EDGES + "edgesEvalDir.m (F = 2PR/(P+R)), as BSR",
    "reported": _EDGES + "edgesEvalDir.m: ODS, OIS, AP (and R50, which segbench reports "
    "for every preset)",
    "ranking": "ODS, as every table of the edge-detection papers",
    "presentations": "one ground truth per image: no presentations",
}
SOURCES.update(
    {
        "bsds500": {
            **_COMMON,
            "max_dist": _HED + "examples/eval/EvalEdge.m:8 `maxDist 0.0075` (BSR's)",
            "nms": _HED + "examples/eval/nms_process.m:20-27 `E=convTri(single(x),1)`; "
            "`edgesNmsMex(E,O,1,5,1.01,4)` (also xwjabc/hed, PiDiNet)",
        },
        "nyud": {
            **_COMMON,
            "max_dist": "s-gupta/rgbd @e56ca4c segmentation/wrapperSegmentation.m:53 "
            "`'maxDist', 0.011`; " + _EDGES + "edgesDemoRgbd.m:24; "
            "hellozhuo/pidinet README:110 'following RCF, we increase the "
            "localization tolerance from 0.0075 to 0.011'",
            "nms": _RCF + "examples/rcf/edge_nms.m:12-20 `edgesNms(edge,O,r,5,1.01,8)` "
            "without pre-smoothing, r '4 for NYUD dataset' (CATS "
            "eval/eval_edge.m:34 uses (4,4,1.01); EDTER eval_nyud.m "
            "(2,5,1.01): override with --nms)",
        },
        "biped": {
            **_COMMON,
            "max_dist": "xavysp/DexiNed (issue 8, its evaluation driver): "
            "`edgesEvalDir_x(..., 'thrs',99, 'maxDist', 0.0075, 'thin', 1)`",
            "nms": "xavysp/DexiNed (issue 8, its evaluation driver): "
            "`edgesNmsMex(tmp_edge,O,1,5,1.01,4)` without pre-smoothing for "
            "other methods; DexiNed's own maps (1,5,1.03): --nms m=1.03",
        },
        "multicue": {
            **_COMMON,
            "max_dist": _EDGES + "edgesEvalDir.m:50 default 0.0075; no Multicue "
            "script overrides it",
            "nms": _RCF + "examples/rcf/edge_nms.m:12-20, r '2 for BSDS500 and "
            "Multi-cue datasets', without pre-smoothing",
        },
        "bsds-rind": {
            **_COMMON,
            "max_dist": "MengyangPu/RINDNet @164b0c4 eval/eval.m:45-47 `'maxDist',0.0075`",
            "nms": "MengyangPu/RINDNet @164b0c4 eval/eval.m:35-39 "
            "`E=convTri(single(x),1)`; `edgesNmsMex(E,O,1,5,1.01,4)`",
        },
    }
)


def protocol(name: str) -> dict:
    """A copy of the preset :data:`PROTOCOLS` ``[name]``; InputError if unknown."""
    try:
        return copy.deepcopy(PROTOCOLS[name])
    except KeyError:
        raise InputError(
            f"unknown protocol {name!r}; choose one of {', '.join(sorted(PROTOCOLS))}"
        ) from None


# --- human maps ------------------------------------------------------------------------


def seg2bmap(seg, shape=None) -> np.ndarray:
    """Boundary map of a segmentation, as BSDS300's ``seg2bmap.m``.

    A pixel is marked when its label differs from the pixel to the east, to the south
    or to the south-east; on the last row only the east neighbour counts, on the last
    column only the south one, and the bottom-right pixel is never marked
    (``seg2bmap.m`` lines 31-42).

    Parameters
    ----------
    seg : (H, W) array_like of int
        Label map; only the equality of labels matters.
    shape : (h, w), optional
        A smaller map to draw into, as the optional ``width, height`` arguments of
        ``seg2bmap.m`` (lines 49-59): each marked pixel ``(y, x)`` (0-based) of the
        full-size map marks ``(floor(y h / H), floor(x w / W))``, so a small pixel is
        marked when any full-size pixel of its cell is (:func:`shrink_cells`). As
        ``seg2bmap.m`` (lines 25-29), ``h <= H``, ``w <= W`` and aspect ratios within 0.01 of each
        other. Default: the full size.

    Returns
    -------
    (H, W) or (h, w) ndarray of bool

    Notes
    -----
    Equal to BSR's ``seg2bdry(seg, 'imageSize')`` (:func:`seg2bdry`) on every label
    map: where a pixel equals both its east and south neighbours, "differs from the
    south-east" is the same as BSR's "an edge meets at the lower-right corner". Hence
    ``thin(seg2bmap(s))`` equals the BSDS500 ``Boundaries`` of the same segmentation
    (checked on the real ``.seg`` files in the tests). The smaller map is how
    ``boundaryPR.m`` (lines 27 and 34) scores a soft map smaller than the segmentations:
    the human maps are drawn at the soft map's size (the 2004 half-resolution
    protocol, :data:`PROTOCOLS` ``['martin2004']``); BSDS300's ``boundaryBench.m``
    upsamples the soft map first instead, so it never uses them.
    """
    s = np.asarray(seg)
    if s.ndim != 2 or s.size == 0:
        raise InputError(f"seg must be a nonempty 2-D label map, got shape {s.shape}")
    b = np.zeros(s.shape, bool)
    b[:-1, :-1] = (
        (s[:-1, :-1] != s[:-1, 1:])
        | (s[:-1, :-1] != s[1:, :-1])
        | (s[:-1, :-1] != s[1:, 1:])
    )
    b[-1, :-1] = s[-1, :-1] != s[-1, 1:]
    b[:-1, -1] = s[:-1, -1] != s[1:, -1]
    if shape is None or tuple(shape) == s.shape:
        return b
    return shrink_bmap(b, shape)


def _check_shrink(full, small) -> tuple[int, int]:
    """``small`` as two ints, checked as ``seg2bmap.m`` lines 25-29 check it."""
    h, w = (int(n) for n in small)
    big_h, big_w = full
    if h < 1 or w < 1 or h > big_h or w > big_w or abs(w / h - big_w / big_h) > 0.01:
        raise InputError(
            f"cannot convert a {big_w}x{big_h} map to {w}x{h} (width x "
            f"height): the smaller map must fit and keep the aspect ratio "
            f"within 0.01, as seg2bmap.m"
        )
    return h, w


def shrink_cells(n_full: int, n_small: int) -> np.ndarray:
    """0-based cell of each full-size pixel along one axis: ``floor(k n_small / n_full)``.

    The mapping of ``seg2bmap.m`` lines 54-55 (``1 + floor((y-1) * height / h)``, 1-based),
    in exact integer arithmetic. Every cell holds one or more consecutive pixels.
    """
    return (np.arange(n_full, dtype=np.int64) * int(n_small)) // int(n_full)


def _cell_starts(n_full: int, n_small: int) -> np.ndarray:
    """The first full-size pixel of each cell (for ``ufunc.reduceat``)."""
    return np.searchsorted(shrink_cells(n_full, n_small), np.arange(n_small))


def shrink_bmap(bmap, shape) -> np.ndarray:
    """A boolean map drawn into a smaller grid as ``seg2bmap.m`` draws its boundaries:
    a cell (:func:`shrink_cells`) is True when any of its pixels is."""
    b = np.asarray(bmap, dtype=bool)
    if b.ndim != 2:
        raise InputError(f"expected a 2-D boundary map, got shape {b.shape}")
    h, w = _check_shrink(b.shape, shape)
    rows = np.logical_or.reduceat(b, _cell_starts(b.shape[0], h), axis=0)
    return np.logical_or.reduceat(rows, _cell_starts(b.shape[1], w), axis=1)


def human_boundary_map(seg) -> np.ndarray:
    """The human map BSDS300 matches against: ``thin(seg2bmap(seg))``.

    As ``boundaryPR.m`` lines 32-40 (``seg2bmap``, then ``bwmorph(.., 'thin', Inf)``),
    for the ground truth and, in ``boundaryBenchHuman.m``, for the subject scored.
    """
    return np.ascontiguousarray(thin(seg2bmap(seg)), dtype=np.bool_)


# --- soft maps smaller than the ground truth --------------------------------------------


def upsample_nearest(pb, shape) -> np.ndarray:
    """``imresize(pb, shape, 'nearest')``, as ``boundaryBench.m`` lines 37-43.

    Output pixel ``x`` (1-based) of each axis reads input pixel ``i`` with
    ``-0.5 <= u - i < 0.5``, ``u = x/scale + 0.5*(1 - 1/scale)``, ``scale = out/in``:
    the mapping of MATLAB's ``imresize`` (pixel centres aligned), evaluated in the
    same floating-point order.

    Parameters
    ----------
    pb : (h, w) array_like
        The soft map.
    shape : (H, W)
        The ground truth's shape.

    Returns
    -------
    (H, W) ndarray, ``pb``'s dtype; ``pb`` itself (as an array) when the shapes agree.

    Raises
    ------
    InputError
        If ``pb`` has more pixels than ``shape`` ("Cannot evaluate pb bigger than
        segmentations", line 42), as the BSDS300 code; a map with as many pixels but a
        different shape is refused too (the benchmark fails on it later).
    """
    a = np.asarray(pb)
    out = tuple(int(n) for n in shape)
    if a.ndim != 2 or len(out) != 2:
        raise InputError(
            f"upsample_nearest needs a 2-D map and a 2-D shape, got {a.shape} and {out}"
        )
    if a.shape == out:
        return a
    if a.size >= out[0] * out[1]:
        raise InputError(
            f"cannot evaluate a soft map of shape {a.shape} against ground "
            f"truth of shape {out} (the BSDS300 benchmark only upsamples)"
        )
    idx = [_nearest_indices(a.shape[k], out[k]) for k in (0, 1)]
    return a[np.ix_(idx[0], idx[1])]


def _nearest_indices(n_in: int, n_out: int) -> np.ndarray:
    """0-based source index of each output pixel (MATLAB ``imresize`` 'nearest')."""
    scale = n_out / n_in
    x = np.arange(1, n_out + 1, dtype=np.float64)
    u = x / scale + 0.5 * (1 - 1 / scale)
    left = np.floor(u - 0.5)
    idx = left.copy()
    for k in (2.0, 1.0, 0.0):  # the candidate the box kernel keeps
        c = left + k
        d = u - c
        idx = np.where((d >= -0.5) & (d < 0.5), c, idx)
    return np.clip(idx.astype(np.int64) - 1, 0, n_in - 1)


# --- the human score, subject by subject ------------------------------------------------


@dataclass(frozen=True, eq=False)
class SubjectCounts:
    """Each subject's counts against the other subjects of one image.

    Attributes
    ----------
    users : tuple of (int or None)
        The subject of each row (None where the ground truth records no subject).
    counts : (K, 4) ndarray of int64
        cntR, sumR, cntP, sumP of each subject's map scored against the others.

    Notes
    -----
    ``rpf()`` is the content of BSDS300's ``human/<iid>_pr.txt`` (R P F per subject,
    ``boundaryBenchHuman.m`` lines 50-59); ``total()`` gives the image's row of
    ``human/scores.txt`` (lines 64-71, counts summed over subjects); summing ``total()``
    over the images of one presentation gives ``human/score.txt`` (lines 83-89), the
    "Humans" score of the site's ranking.
    """

    users: tuple
    counts: np.ndarray

    def __post_init__(self):
        c = np.asarray(self.counts, dtype=np.int64).reshape(-1, 4)
        if len(self.users) != c.shape[0]:
            raise InputError(f"{len(self.users)} users for {c.shape[0]} rows of counts")
        object.__setattr__(self, "users", tuple(self.users))
        object.__setattr__(self, "counts", c)

    def __eq__(self, other) -> bool:
        if not isinstance(other, SubjectCounts):
            return NotImplemented
        return self.users == other.users and np.array_equal(self.counts, other.counts)

    __hash__ = None  # type: ignore[assignment]  # unhashable; typeshed allows no None

    def rpf(self) -> np.ndarray:
        """``(K, 3)`` recall, precision, F of each subject (``human/<iid>_pr.txt``)."""
        r = bsr_ratio(self.counts[:, 0], self.counts[:, 1])
        p = bsr_ratio(self.counts[:, 2], self.counts[:, 3])
        return np.column_stack([r, p, f_measure(r, p)])

    def total(self) -> np.ndarray:
        """``(4,)`` counts summed over the subjects (the image's human score)."""
        return self.counts.sum(axis=0)

    def to_json(self) -> dict:
        """Plain-JSON form; :meth:`from_json` restores it exactly."""
        return {"users": list(self.users), "counts": self.counts.tolist()}

    @classmethod
    def from_json(cls, d: dict) -> SubjectCounts:
        """Inverse of :meth:`to_json`; ValueError on a payload of the wrong shape or
        with counts that cannot be (not non-negative integers, cntR > sumR, cntP >
        sumP)."""
        users = d["users"]
        if not isinstance(users, list) or any(
            u is not None and (isinstance(u, bool) or not isinstance(u, int)) for u in users
        ):
            raise ValueError("users must be a list of integers or nulls")
        raw = np.asarray(d["counts"], dtype=np.float64)
        if raw.size == 0:
            raw = raw.reshape(0, 4)
        if raw.ndim != 2 or raw.shape != (len(users), 4):
            raise ValueError("counts must be one row of 4 per user")
        if not np.isfinite(raw).all():
            raise ValueError("counts must be finite")
        c = raw.astype(np.int64)
        if (c != raw).any() or (c < 0).any():
            raise ValueError("counts must be non-negative integers")
        if (c[:, 0] > c[:, 1]).any() or (c[:, 2] > c[:, 3]).any():
            raise ValueError(
                "more pixels matched than there are (cntR > sumR or cntP > sumP)"
            )
        return cls(tuple(users), c)


def subject_counts(
    annotations,
    *,
    users: Sequence | None = None,
    max_dist: float = DEFAULT_MAX_DIST,
    thin_gt: bool = True,
    lone: str = "count",
) -> SubjectCounts:
    """Each subject of one image scored against the image's other subjects.

    As ``boundaryBenchHuman.m`` (lines 34-44): subject ``j``'s boundary map is the
    detection (one threshold: a logical map, ``boundaryPR.m`` line 24), the other
    subjects are the ground truth, and the counts follow the benchmark's rules
    (:func:`human_counts`).

    Parameters
    ----------
    annotations : sequence
        One entry per subject: an object with ``.boundaries`` (a dataset annotation,
        a BSDS500 human segmentation) or an (H, W) boolean map. Give the subjects of
        one presentation only (see :func:`by_presentation`): BSDS300 scored gray
        subjects against gray ones and colour against colour.
    users : sequence, optional
        The subject ids; default each annotation's ``.user`` (None where absent).
    max_dist : float, default 0.0075
        Matching tolerance, a fraction of the image diagonal.
    thin_gt : bool, default True
        Thin every map first, as BSDS300 (``boundaryPR.m`` lines 37-40 and 53); a
        no-op on maps that are already thin (the boundaries of ``.seg`` annotations
        and of the BSDS500 files are).
    lone : {'count', 'skip'}, default 'count'
        A lone subject: 'count' as BSDS300, ``(0, 0, 0, pixels)``; 'skip' gives zeros.

    Returns
    -------
    SubjectCounts
    """
    anns = list(annotations)
    if users is None:
        users = [getattr(a, "user", None) for a in anns]
    users = tuple(users)
    if len(users) != len(anns):
        raise InputError(f"{len(users)} users for {len(anns)} annotations")
    if not anns:
        return SubjectCounts((), np.zeros((0, 4), np.int64))
    rows = human_counts(
        anns, max_dist=max_dist, per_annotator=True, thin_gt=thin_gt, lone=lone
    )
    return SubjectCounts(users, rows)


def pool_subjects(records: Iterable[SubjectCounts]) -> dict:
    """Counts of each subject summed over images: ``{user: (4,) int64}``, by user id.

    Raises InputError where a row has no user id (nothing to pool it under).
    """
    out: dict = {}
    for rec in records:
        for u, row in zip(rec.users, rec.counts):
            if u is None:
                raise InputError("a subject without a user id cannot be pooled by subject")
            out[u] = out.get(u, np.zeros(4, np.int64)) + row
    return dict(sorted(out.items()))


def by_presentation(annotations) -> dict[str, list]:
    """Annotations split by how the image was shown: ``{'gray': [...], 'color': [...]}``.

    Uses each annotation's ``.gray`` (True, False); InputError where it is unknown
    (None or absent), as for the BSDS500 ``.mat`` files, which record no presentation.
    """
    out: dict[str, list] = {"gray": [], "color": []}
    for k, a in enumerate(annotations):
        g = getattr(a, "gray", None)
        if g is None:
            raise InputError(
                f"annotation {k} does not record whether the image was "
                f"shown in gray or in colour"
            )
        out["gray" if g else "color"].append(a)
    return out
