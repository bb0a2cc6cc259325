"""Export of a structured edge forest to OpenCV's model format, so that
``cv2.ximgproc.createStructuredEdgeDetection(path)`` runs a model trained by segbench.

OpenCV's reader (opencv_contrib ``modules/ximgproc/src/structured_edge_detection.cpp``,
the ``StructuredEdgeDetectionImpl`` constructor) opens the file with ``cv::FileStorage``
(YAML, XML or JSON, chosen by the file name; ``.gz`` appended: gzipped) and reads:

- ``options``: a map of twelve integers, ``numberOfTrees``,
  ``numberOfTreesToEvaluate``, ``selfsimilarityGridSize``, ``stride``,
  ``shrinkNumber``, ``patchSize``, ``patchInnerSize``,
  ``numberOfGradientOrientations``, ``gradientSmoothingRadius``,
  ``regFeatureSmoothingRadius``, ``ssFeatureSmoothingRadius``,
  ``gradientNormalizationRadius`` (the toolbox's ``nTrees``, ``nTreesEval``,
  ``nCells``, ``stride``, ``shrink``, ``imWidth``, ``gtWidth``, ``nOrients``,
  ``grdSmooth``, ``chnSmooth``, ``simSmooth``, ``normRad``; the smoothing radii in image
  pixels, divided by ``shrink`` and rounded by the reader);
- ``childs``, ``featureIds``, ``thresholds``: sequences of integer (float for the
  thresholds) sequences, concatenated in order into one array each; every tree has the
  same number of nodes (the reader divides the total by ``numberOfTrees``), so the
  trees are padded with leaves, as the toolbox's model matrices are. ``childs`` is the
  1-based index of the left child within the tree (0 at a leaf): a sample goes to node
  ``childs - 1`` (0-based) when its feature is ``< threshold``, else to ``childs``;
  ``featureIds`` are the toolbox's 0-based feature ids (channel-major, column-major
  patch pixels; self-similarity features after the ``(imWidth/shrink)^2 * nChannels``
  regular ones);
- ``edgeBoundaries``, ``edgeBins``: the toolbox's ``eBnds`` (cumulative, ``nBnds`` per
  node of every padded tree, tree-major, plus the final total) and ``eBins``
  (column-major pixel indices ``c * patchInnerSize + r`` of each leaf's edge pixels,
  band by band); the reader derives ``nBnds = (len(edgeBoundaries) - 1) / (nodes *
  trees)`` and uses band 0 only (it has no sharpening).

It reads nothing else: not the leaf segmentations (``segs``, ``nSegs``) that the
toolbox's sharpening needs, nor the remaining training options. The file we write
mirrors the layout of the conversion script OpenCV documents
(``modules/ximgproc/tutorials/scripts/modelConvert.m``): one row per tree for
``childs``/``featureIds``/``thresholds``, rows of 1000 values for the edge arrays. One
difference: that script prints the thresholds with MATLAB's ``%d``, which for a
non-integer falls back to ``%e`` (7 significant digits), while we write each float32
threshold with 9 (``%.9g``), which reads back to the same float32: OpenCV then takes
exactly our tree decisions (checked: ``benchmarks/se_opencv_parity.py``'s replay).

The edge bins are those our detection uses (``SEForest.detection_tables``: leaves'
segments of <= 5 px merged, edges of the merged segmentation, ``sharpen + 1`` bands by
default as the toolbox's ``mergeTrees`` stores them).

Sources read (never copied): opencv_contrib's ``structured_edge_detection.cpp`` and
``modelConvert.m``; the edges toolbox's ``edgesTrain.m`` (``mergeTrees``) for eBins and
eBnds.
"""

from __future__ import annotations

import gzip
import io
from os import PathLike
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import atomic_write_bytes
from ._se_forest import SEForest, load_forest

__all__ = ["OPENCV_OPTION_NAMES", "export_opencv", "opencv_model_arrays"]

#: OpenCV's option names (the ``options`` map its reader reads), in the order
#: ``modelConvert.m`` writes them, and the segbench option each comes from.
OPENCV_OPTION_NAMES = {
    "numberOfTrees": "n_trees",
    "numberOfTreesToEvaluate": "n_trees_eval",
    "selfsimilarityGridSize": "n_cells",
    "stride": "stride",
    "shrinkNumber": "shrink",
    "patchSize": "image_width",
    "patchInnerSize": "gt_width",
    "numberOfGradientOrientations": "n_orients",
    "gradientSmoothingRadius": "grd_smooth",
    "regFeatureSmoothingRadius": "chn_smooth",
    "ssFeatureSmoothingRadius": "sim_smooth",
    "gradientNormalizationRadius": "norm_rad",
}

_SUFFIXES = (".yml", ".yaml", ".yml.gz", ".yaml.gz")
_ROW = 1000  # values per row of the edge arrays (modelConvert.m's N)


def _forest(forest) -> SEForest:
    if isinstance(forest, SEForest):
        return forest
    if isinstance(forest, (str, PathLike)):
        return load_forest(forest)
    raise InputError(
        f"forest must be an SEForest or the path of a saved one, not {type(forest).__name__}"
    )


def opencv_model_arrays(forest, *, n_trees_eval: int | None = None, n_bands=None):
    """The options and arrays of OpenCV's model for ``forest``.

    Parameters
    ----------
    forest : SEForest or str or PathLike
        A complete forest (or the path of a saved one).
    n_trees_eval : int, optional
        ``numberOfTreesToEvaluate`` (default the forest's ``n_trees_eval``; at most
        ``n_trees``).
    n_bands : int, optional
        Edge bands per node (the toolbox's ``nBnds``; default ``sharpen + 1`` of the
        forest's options). OpenCV reads band 0 only.

    Returns
    -------
    options : dict
        OpenCV's option name -> int.
    arrays : dict
        ``childs``, ``featureIds`` (n_trees, n_nodes) int32, ``thresholds`` (n_trees,
        n_nodes) float32, ``edgeBoundaries`` (n_trees * n_nodes * n_bands + 1,)
        int64, ``edgeBins`` (k,) uint16; ``n_nodes`` is the largest tree's node count.

    Raises
    ------
    InputError
        An incomplete forest; a non-integer smoothing or normalisation radius (OpenCV's
        are integers).
    """
    f = _forest(forest)
    opts = f.options
    if not f.complete:
        f.detection_tables(1)  # raises, naming the missing trees
    n_eval = opts.n_trees_eval if n_trees_eval is None else int(n_trees_eval)
    if not 1 <= n_eval <= opts.n_trees:
        raise InputError(f"n_trees_eval must be in 1..{opts.n_trees}, got {n_eval}")
    values = {}
    for cv_name, ours in OPENCV_OPTION_NAMES.items():
        v = n_eval if ours == "n_trees_eval" else getattr(opts, ours)
        if isinstance(v, float):
            if not v.is_integer():
                raise InputError(
                    f"OpenCV's model holds an integer {cv_name}; this forest's {ours} "
                    f"is {v}"
                )
            v = int(v)
        values[cv_name] = int(v)
    n_bands = opts.sharpen + 1 if n_bands is None else int(n_bands)
    if n_bands < 1:
        raise InputError(f"n_bands must be >= 1, got {n_bands}")
    tabs = f.detection_tables(n_bands)
    trees = [f.trees[i] for i in range(opts.n_trees)]
    n_nodes = max(t.n_nodes for t in trees)
    childs = np.zeros((len(trees), n_nodes), np.int32)
    fids = np.zeros((len(trees), n_nodes), np.int32)
    thrs = np.zeros((len(trees), n_nodes), np.float32)
    counts = np.zeros((len(trees), n_nodes, n_bands), np.int64)
    per_leaf = np.diff(tabs["bnds"]).reshape(-1, n_bands)
    leaf = 0
    for i, t in enumerate(trees):
        k = t.n_nodes
        internal = t.child > 0
        childs[i, :k][internal] = t.child[internal] + 1
        fids[i, :k][internal] = t.fids[internal]
        thrs[i, :k][internal] = t.thrs[internal]
        leaves = np.nonzero(~internal)[0]
        counts[i, leaves] = per_leaf[leaf : leaf + leaves.size]
        leaf += leaves.size
    bnds = np.concatenate([[0], np.cumsum(counts.ravel())]).astype(np.int64)
    bins = np.asarray(tabs["bins"], np.uint16)
    if bnds[-1] != bins.size:  # leaves are numbered tree by tree, in node order
        raise AssertionError("edge bins out of step with the leaves")
    arrays = dict(
        childs=childs,
        featureIds=fids,
        thresholds=thrs,
        edgeBoundaries=bnds,
        edgeBins=bins,
    )
    return values, arrays


def _ints(a) -> str:
    return ",".join(map(str, np.asarray(a).tolist()))


def _floats(a) -> str:
    # %.9g: every float32 reads back (strtod, then float) to itself
    return ",".join(f"{v:.9g}" for v in np.asarray(a, np.float32).tolist())


def _yaml(options: dict, arrays: dict) -> bytes:
    out = io.StringIO()
    out.write("%YAML:1.0\n---\n")
    out.write("options:\n")
    for name, v in options.items():
        out.write(f"   {name}: {v}\n")
    for name in ("childs", "featureIds", "thresholds"):
        fmt = _floats if name == "thresholds" else _ints
        out.write(f"{name}:\n")
        for row in arrays[name]:
            out.write(f"   - [{fmt(row)}]\n")
    for name in ("edgeBoundaries", "edgeBins"):
        a = arrays[name]
        out.write(f"{name}:\n")
        if a.size == 0:
            out.write("   - []\n")
        for s in range(0, a.size, _ROW):
            out.write(f"   - [{_ints(a[s : s + _ROW])}]\n")
    return out.getvalue().encode("ascii")


def export_opencv(forest, path: str | PathLike, *, n_trees_eval: int | None = None) -> Path:
    """Write ``forest`` as an OpenCV ``StructuredEdgeDetection`` model.

    Parameters
    ----------
    forest : SEForest or str or PathLike
        A complete forest, or the path of one saved by ``SEForest.save``.
    path : str or PathLike
        Ends with ``.yml``, ``.yaml`` (YAML) or ``.yml.gz``, ``.yaml.gz`` (gzipped, as
        OpenCV's own ``model.yml.gz``); written atomically. The bytes depend on the
        forest only (gzip header without time).
    n_trees_eval : int, optional
        Trees OpenCV evaluates per location (default the forest's ``n_trees_eval``).

    Returns
    -------
    Path
        ``path``. Use it as ``cv2.ximgproc.createStructuredEdgeDetection(str(path))
        .detectEdges(rgb)`` with ``rgb`` (H, W, 3) float32 in [0, 1], red first
        (OpenCV's colour conversion takes channel 0 as red: convert ``cv2.imread``'s
        BGR first).

    Raises
    ------
    InputError
        Another file suffix; an incomplete forest; options OpenCV cannot hold (see
        :func:`opencv_model_arrays`).

    Notes
    -----
    OpenCV's detector is not the toolbox's (module ``_se_detect``'s docstring and
    the research note list the differences: its channels, 8 px reflected padding, tree
    selection, no sharpening, no multiscale), so its maps differ from ``se()``'s on the
    same model; ``benchmarks/se_opencv_parity.py`` measures by how much.
    """
    path = Path(path)
    name = path.name.lower()
    if not name.endswith(_SUFFIXES):
        raise InputError(
            "an OpenCV model file must end with .yml, .yaml, .yml.gz or .yaml.gz", path
        )
    options, arrays = opencv_model_arrays(forest, n_trees_eval=n_trees_eval)
    data = _yaml(options, arrays)
    if name.endswith(".gz"):
        data = gzip.compress(data, compresslevel=6, mtime=0)
    atomic_write_bytes(path, data)
    return path
