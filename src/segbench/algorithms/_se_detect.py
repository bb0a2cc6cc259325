"""Structured edge detection with a trained forest (Dollár and Zitnick, ICCV 2013 /
TPAMI 2015), as the edges toolbox's ``edgesDetect.m`` and ``edgesDetectMex.cpp`` do it.

Per scale: the image is padded symmetrically by ``image_width / 2`` px (bottom and right
a little more, to a multiple of 4), its channels computed (``se_channels``), and at
every ``stride``-th pixel the ``image_width``-wide patch is classified by
``n_trees_eval`` trees, alternating between two sets of trees in a checkerboard
(location (r, c) evaluates trees ``((r + c) % 2 * n_trees_eval + t) % n_trees``). Each
leaf adds its stored edge pixels to the ``gt_width``-wide output patch at the centre;
the sum is scaled by ``stride^2 / gt_width^2 / n_trees_eval`` times 2 (1.8 for sharpen
1, 1.66 for sharpen >= 2), cropped to the image and smoothed by ``convTri(E, 1)``.

Which reference we follow where the toolbox and OpenCV's port
(``cv::ximgproc::StructuredEdgeDetection``) differ: the toolbox's, in every case -
its channels (see :mod:`._se_channels`), its 16 px symmetric padding (OpenCV pads 8 px,
``BORDER_REFLECT``), its tree checkerboard (OpenCV selects ``((i + j) % (2 n_eval) + k)
% n_trees``), its sharpening and multiscale options (OpenCV has neither) and its
orientation map (OpenCV computes none in ``detectEdges``).

Sources read (never copied): the edges toolbox's ``edgesDetect.m``,
``private/edgesDetectMex.cpp``, ``edgesTrain.m`` (``mergeTrees``); OpenCV contrib's
``ximgproc/src/structured_edge_detection.cpp`` for the differences above.
"""

from __future__ import annotations

import math
from os import PathLike
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import read_image, write_soft_map
from . import _se_forest_kernels as _fk
from ._se_channels import _conv_tri_planes, _image_planes, _mround, _resample_planes
from ._se_forest import SEForest, channel_planes, feature_offsets, load_forest

__all__ = ["se", "se_file", "se_orientation"]

_F32 = np.float32


def _model(model) -> SEForest:
    if isinstance(model, SEForest):
        return model
    if isinstance(model, (str, PathLike)):
        return load_forest(model)
    raise InputError(
        f"model must be an SEForest or the path of a saved one, not {type(model).__name__}"
    )


def _detect_planes(planes: np.ndarray, nrm: float, forest: SEForest, sharpen: int, n_eval):
    """Soft edges (H, W) float32 of raw (3, H, W) planes at one scale, before the final
    clipping; the toolbox's single-scale edgesDetect."""
    opts = forest.options
    _, h, w = planes.shape
    r = opts.image_width // 2
    ph = (4 - (h + 2 * r) % 4) % 4
    pw = (4 - (w + 2 * r) % 4) % 4
    padded = np.ascontiguousarray(
        np.pad(planes, ((0, 0), (r, r + ph), (r, r + pw)), mode="symmetric")
    )
    reg, sim = channel_planes(padded, nrm, opts)
    hp, wp = padded.shape[1:]
    stride, g = opts.stride, opts.gt_width
    h1 = math.ceil((hp - opts.image_width) / stride)
    w1 = math.ceil((wp - opts.image_width) / stride)
    cids, cids1, cids2 = feature_offsets(opts, reg.shape[1], reg.shape[2])
    tabs = forest.detection_tables(max(sharpen, 0) + 1)
    ind = _fk.apply_forest(
        reg,
        sim,
        h1,
        w1,
        stride // opts.shrink,
        tabs["nodes"],
        n_eval,
        opts.n_chn_ftrs,
        cids,
        cids1,
        cids2,
    )
    out = np.zeros((h1 * stride + g, w1 * stride + g), _F32)
    if sharpen == 0:
        _fk.accumulate_edges(
            ind, tabs["bins"], tabs["bnds"], tabs["n_bands"], stride, g, out
        )
    else:
        rgb = padded * _F32(nrm) if nrm != 1.0 else padded
        rgb = _conv_tri_planes(np.ascontiguousarray(rgb, _F32), 1.0)
        _fk.accumulate_sharpened(
            ind,
            tabs["segs"],
            tabs["nsegs"],
            tabs["bins"],
            tabs["bnds"],
            tabs["n_bands"],
            sharpen,
            rgb,
            (opts.image_width - g) // 2,
            stride,
            out,
        )
    t = stride**2 / g**2 / n_eval * (2.0 if sharpen == 0 else 1.8 if sharpen == 1 else 1.66)
    e = out[g // 2 : g // 2 + h, g // 2 : g // 2 + w] * _F32(t)
    return _conv_tri_planes(np.ascontiguousarray(e[None], _F32), 1.0)[0]


def se_orientation(edges) -> np.ndarray:
    """The toolbox's edge orientation (``edgesDetect.m``) from a soft edge map.

    Parameters
    ----------
    edges : array_like
        (H, W) soft edge map, at least 2 x 2.

    Returns
    -------
    ndarray
        (H, W) float32 radians in [0, pi): with ``S = convTri(E, 4)`` and ``gradient2``
        derivatives (central differences, one-sided at the border), ``mod(atan(Syy
        sign(-Sxy) / (Sxx + 1e-5)), pi)``, x along columns, y along rows (down): the
        edge normal's angle from the x axis towards +y, the convention of the toolbox's
        ``edgesNmsMex``. The formula is the toolbox's, approximation included: for a
        ridge with normal angle phi it gives atan(tan^2 phi) in phi's quadrant, exact
        at multiples of 45 degrees and pulled towards 0 or pi/2 in between; an exactly
        horizontal edge (Sxy = 0) gets 0. (A tiny negative angle, which float32
        ``mod`` would round up to pi, is stored as 0.)
    """
    e = np.asarray(edges, _F32)
    if e.ndim != 2 or min(e.shape) < 2:
        raise InputError(f"edges must be a 2-D map of at least 2x2, got shape {e.shape}")
    s = _conv_tri_planes(np.ascontiguousarray(e[None]), 4.0)[0]
    oy, ox = np.gradient(s)
    oxx = np.gradient(ox, axis=1)
    oxy = np.gradient(oy, axis=1)
    oyy = np.gradient(oy, axis=0)
    o = np.mod(np.arctan(oyy * np.sign(-oxy) / (oxx + _F32(1e-5))), _F32(np.pi))
    # a tiny negative angle plus pi rounds to pi in float32: that is 0
    o[o >= _F32(np.pi)] = 0
    return o.astype(_F32)


def _resample_image(planes: np.ndarray, nrm: float, scale: float) -> np.ndarray:
    """imResample(I, scale) of raw planes; uint8 images (nrm != 1) are rounded back to
    integers as the mex does (``(uchar)(x + .5)``)."""
    _, h, w = planes.shape
    out = _resample_planes(planes, _mround(scale * h), _mround(scale * w))
    if nrm != 1.0:
        out = np.floor(out + _F32(0.5)).clip(0, 255).astype(_F32)
    return np.ascontiguousarray(out)


def se(image, model, *, multiscale: bool = False, sharpen: int = 2, n_trees_eval: int = 4):
    """Structured edge detection (``[E, O] = edgesDetect(I, model)``).

    Parameters
    ----------
    image : array_like
        (H, W, 3) RGB, uint8 or floats in [0, 1]; (H, W) grey is repeated to RGB. At
        least 2 x 2 (at 1/2 scale too with ``multiscale``).
    model : SEForest or str or PathLike
        A complete trained forest, or the path of one saved by ``SEForest.save``.
    multiscale : bool
        Average the edges detected on the image resampled by 1/2, 1 and 2
        (``imResample``), each resampled back to (H, W).
    sharpen : int
        0: each leaf adds its stored edge pixels. s > 0: the leaf's segments are first
        re-fitted to the image's colours (``convTri(I, 1)``) over the pixels within s
        px of its edges (edgesDetectMex.cpp); the toolbox's default and its demo use 2.
        Any s >= 0 works (the bands are computed from the leaves on demand; the toolbox
        caps s at the model's training ``sharpen``).
    n_trees_eval : int
        Trees evaluated per location, at most the forest's size (4 of 8 by default).

    Returns
    -------
    E : ndarray
        (H, W) float32 soft edge map in [0, 1]. The toolbox does not clip; its
        normalisation allows values up to 2 where all evaluated leaves agree on an edge
        pixel, which happens rarely: we clip at 1.
    O : ndarray
        (H, W) float32 edge orientation in [0, pi) (:func:`se_orientation`), computed
        from the unclipped map as the toolbox does.

    Notes
    -----
    We follow Dollár's toolbox, not OpenCV's port: see the module docstring. Stride,
    patch sizes and channel options are the model's (``model.options``).
    """
    forest = _model(model)
    if not forest.complete:
        forest.detection_tables(1)  # raises the error naming the missing trees
    if (
        isinstance(sharpen, bool)
        or not isinstance(sharpen, (int, np.integer))
        or sharpen < 0
    ):
        raise InputError(f"sharpen must be an integer >= 0, got {sharpen!r}")
    if (
        isinstance(n_trees_eval, bool)
        or not isinstance(n_trees_eval, (int, np.integer))
        or n_trees_eval < 1
    ):
        raise InputError(f"n_trees_eval must be an integer >= 1, got {n_trees_eval!r}")
    n_eval = min(int(n_trees_eval), forest.options.n_trees)
    planes, nrm = _image_planes(image)
    if planes.shape[0] == 1:
        planes = np.ascontiguousarray(np.repeat(planes, 3, axis=0))
    _, h, w = planes.shape
    if multiscale:
        if min(_mround(0.5 * h), _mround(0.5 * w)) < 2:
            raise InputError(
                f"image too small for multiscale detection: {h}x{w} (its half-size "
                "copy needs at least 2x2 pixels: 3x3 or more, or detect at one scale)"
            )
        acc = np.zeros((h, w), np.float64)
        for s in (0.5, 1.0, 2.0):
            p1 = planes if s == 1.0 else _resample_image(planes, nrm, s)
            e1 = _detect_planes(p1, nrm, forest, int(sharpen), n_eval)
            if s != 1.0:
                e1 = _resample_planes(e1[None], h, w)[0]
            acc += e1
        e = (acc / 3).astype(_F32)
    else:
        e = _detect_planes(planes, nrm, forest, int(sharpen), n_eval)
    o = se_orientation(e)
    return np.clip(e, 0.0, 1.0).astype(_F32), o


#: The forest of the last model file :func:`se_file` read, by (path, size, mtime): a
#: worker process detecting a folder loads its model once.
_LOADED: dict[tuple, SEForest] = {}


def _forest_of_file(path) -> SEForest:
    p = Path(path)
    try:
        st = p.stat()
        key: tuple = (str(p.resolve()), st.st_size, st.st_mtime_ns)
    except OSError:
        return load_forest(p)  # names the problem
    forest = _LOADED.get(key)
    if forest is None:
        _LOADED.clear()
        forest = _LOADED[key] = load_forest(p)
    return forest


def se_file(
    src,
    dst,
    model,
    *,
    multiscale: bool = False,
    sharpen: int = 2,
    n_trees_eval: int = 4,
    output: str = "edges",
):
    """Read a photograph, detect its structured edges, write them as a 16-bit PNG (or
    their orientation as ``.npy``).

    Parameters
    ----------
    src : path
        A photograph (:func:`segbench.io.read_image`: 8-bit colour or grey).
    dst : path
        The soft edge map ``E`` of :func:`se`, ``round(65535 E)`` in a 16-bit PNG,
        unthinned (score it after edge NMS without a second convTri, as the toolbox).
    model : SEForest or path
        The forest; a path is loaded once per process and reused while the file is
        unchanged.
    multiscale, sharpen, n_trees_eval
        As :func:`se`.
    output : {'edges', 'orientation'}
        'edges': ``E`` as above; 'orientation': the toolbox's orientation ``O`` of
        :func:`se` (float32 radians in [0, pi), computed from the unclipped map) as an
        ``.npy`` file.

    Returns
    -------
    Path
        ``dst``. Errors name ``src`` (or the model file).
    """
    if output not in ("edges", "orientation"):
        raise InputError(f"output must be 'edges' or 'orientation', got {output!r}")
    forest = model if isinstance(model, SEForest) else _forest_of_file(model)
    image = read_image(src)
    try:
        edges, orientation = se(
            image, forest, multiscale=multiscale, sharpen=sharpen, n_trees_eval=n_trees_eval
        )
    except InputError as e:
        if e.path is None:
            raise InputError(e.problem, src) from None
        raise
    if output == "orientation":
        import io

        from ..io import atomic_write_bytes

        buffer = io.BytesIO()
        np.save(buffer, orientation.astype(np.float32), allow_pickle=False)
        atomic_write_bytes(dst, buffer.getvalue())
        return Path(dst)
    return write_soft_map(dst, edges, bits=16)
