"""OWT-UCM: the oriented watershed transform and the ultrametric contour map of
Arbelaez, Maire, Fowlkes and Malik (PAMI 2011), over any contour signal.

The steps of BSR's ``contours2ucm.m``:

1. the watershed of the contour strength (the max over orientations): its basins are
   the finest regions, its one-pixel lines the candidate boundaries;
2. the *oriented* transfer: every line pixel takes the contour signal at the direction
   of the arc it lies on, so that a watershed arc that runs across a strong edge (a
   watershed artefact) does not inherit the edge's strength;
3. the arcs on the doubled cell grid (``super_contour_4c``, ``clean_watersheds``);
4. the greedy merge of the two regions with the weakest mean boundary, each boundary
   cell taking the level at which its two sides merge (``ucm_mean_pb``);
5. the levels mapped to [0, 1] by the logistic fitted on BSDS (``normalize_output``).

Where we differ from the released code, and why:

- Watershed: our own compiled flooding from the regional minima (Meyer's algorithm,
  8-connected basins, one-pixel lines, as MATLAB's ``watershed``; scikit-image's
  ``watershed_line`` option differs in which pixels become lines and, in 0.26, did
  not finish on some gPb maps). Where two fronts meet on a plateau, the line can lie
  a pixel away from MATLAB's, whose order among equal values is not documented.
- Arc direction: as BSR (``fit_contour``: the lines traced into edges between
  vertices, split by Maire's ``subdivide_local``/``subdivide_global`` until nearly
  straight, each edge read at its chord's direction binned into the 8 channels; see
  :mod:`._owt_contours`). On the same watershed lines and the same oriented stack the
  transferred strengths equal BSR's ``ws_wt`` pixel for pixel (checked against the
  MEX built under Octave on BSDS500 images). The crossing test of
  ``subdivide_global`` is exact here where BSR's sweep line works in floating point.
- A corner cell on a boundary in the last, copied row or column (which BSR's MEX reads
  at index -1) takes the label of a neighbouring corner.

The merge itself (sums, tie order, who absorbs whom) follows ``ucm_mean_pb``, so given
the same boundary grid the map is the same to the last bit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import read_prediction, soft_values, write_mat
from ..primitives import edge_orientation

__all__ = [
    "owt_ucm",
    "ucm_file",
    "ucm_sigmoid",
    "write_ucm2",
    "thin_line_smoothing",
    "looks_thinned",
    "MAX_PIXELS",
]

#: Largest map ``owt_ucm`` accepts (about 8 000 x 4 000 pixels): the merge's sort key
#: and memory (about 200 bytes a pixel at the peak) stay well inside limits.
MAX_PIXELS = 32_000_000

#: ``normalize_output``'s logistic, fitted on BSDS: ``1 / (1 + exp(-(b0 + b1 u)))``,
#: then ``(p - offset) / (1 - offset)`` clipped to [0, 1].
_SIGMOID = (-2.7487, 11.1189)
_SIGMOID_OFFSET = 0.0602

_FORMATS = ("doubleSize", "imageSize")


#: Most orientations an oriented stack may have: gPb has 8; more channels than this
#: (or than the map has rows or columns) means a (K, H, W) array read as (H, W, K).
_MAX_ORIENTATIONS = 64


def ucm_sigmoid(levels) -> np.ndarray:
    """Map raw merge levels (mean boundary strengths) to [0, 1] as BSR does.

    Parameters
    ----------
    levels : array_like
        Raw ultrametric levels, the mean oriented contour strength of a boundary.

    Returns
    -------
    ndarray of float64
        ``clip((s - 0.0602) / (1 - 0.0602), 0, 1)`` with
        ``s = 1 / (1 + exp(2.7487 - 11.1189 * levels))`` (``normalize_output`` of
        ``contours2ucm.m``); 0 stays 0.
    """
    u = np.asarray(levels, dtype=np.float64)
    s = 1.0 / (1.0 + np.exp(-(_SIGMOID[0] + _SIGMOID[1] * u)))
    return np.clip((s - _SIGMOID_OFFSET) / (1.0 - _SIGMOID_OFFSET), 0.0, 1.0)


def _as_signal(pb, what: str) -> np.ndarray:
    arr = np.asarray(pb)
    if arr.dtype == np.uint8:
        arr = arr / 255.0
    elif arr.dtype == np.uint16:
        arr = arr / 65535.0
    elif arr.dtype == bool:
        arr = arr.astype(np.float64)
    elif not np.issubdtype(arr.dtype, np.floating):
        raise InputError(
            f"{what} has unsupported type {arr.dtype}; give floats, uint8 "
            "(read as /255) or uint16 (read as /65535)"
        )
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.isfinite(arr).all():
        raise InputError(f"{what} contains NaN or infinite values")
    return arr


def owt_ucm(
    pb,
    theta=None,
    *,
    orientations: int | None = 8,
    fmt: str = "doubleSize",
    radius: float = 5.0,
    raw: bool = False,
) -> np.ndarray:
    """Ultrametric contour map of a contour signal by the oriented watershed transform.

    Parameters
    ----------
    pb : (H, W) or (H, W, K) array_like
        Contour strength: a soft boundary map in [0, 1] (floats; uint8 read as /255,
        uint16 as /65535), or an oriented stack whose channel ``k`` holds the signal for
        boundaries whose tangent points at ``k pi / K`` (radians from +x, the column,
        towards +y, the row: the convention of :func:`segbench.algorithms.pb_cues`;
        BSR's ``gPb_orient`` channel ``j`` is our channel ``(K/2 - j) mod K``).
        Negative values count as 0 (contours2OWT's rule). At least 3 x 3.
    theta : (H, W) array_like, optional
        For a 2-D ``pb``: each pixel's boundary tangent in radians, same convention (the
        ``theta`` the Pb detectors return). Default: estimated from the map's own
        second derivatives (:func:`segbench.algorithms.edge_orientation`, the normal
        HED/RCF's NMS uses, turned by pi/2). Not allowed with a stack.
    orientations : int or None
        For a 2-D ``pb``: a line pixel reads ``pb |cos(theta - phi)|`` with ``phi`` the
        chord direction of its edge (the same edges as for a stack) rounded to this
        many directions (8, as BSR reads a detector's 8 channels); None reads at
        ``phi`` itself (MCG's ``contours2OWT``). Ignored for a stack, which is read at
        the channel whose bin holds ``phi`` (BSR's bins of 180/K degrees).
    fmt : {"doubleSize", "imageSize"}
        ``"doubleSize"``: the (2H + 1) x (2W + 1) ``ucm2`` of the released BSDS500
        results (regions on odd cells, ``ucm2[2::2, 2::2]`` is the boundary map the
        benchmarks read); ``"imageSize"``: that H x W boundary map.
    radius : float
        No longer used (the straight-line fit it sized gave way to BSR's contour fit);
        still accepted and checked so that existing calls and ``segbench ucm
        --radius`` keep working.
    raw : bool
        Return the raw merge levels (mean boundary strengths) instead of BSR's
        logistic mapping of them (:func:`ucm_sigmoid`).

    Returns
    -------
    ndarray of float64
        The ultrametric contour map in [0, 1]: thresholding it at any level gives the
        closed boundaries of a segmentation, and the segmentations nest as the level
        rises.

    Raises
    ------
    InputError
        On a map of the wrong shape or type, NaN or infinite values, a ``theta`` of
        another shape, or a bad ``fmt``.
    """
    from . import _ucm_kernels as _k
    from ._owt_contours import oriented_transfer

    if fmt not in _FORMATS:
        raise InputError(f"fmt must be one of {', '.join(_FORMATS)}, got {fmt!r}")
    if not (isinstance(radius, (int, float)) and np.isfinite(radius) and radius >= 1):
        raise InputError(f"radius must be a number >= 1 (pixels), got {radius!r}")
    sig = _as_signal(pb, "the contour map")
    if sig.ndim not in (2, 3):
        raise InputError(
            f"the contour map must be (H, W) or (H, W, K), got shape {sig.shape}"
        )
    h, w = sig.shape[:2]
    if h < 3 or w < 3:
        raise InputError(f"the contour map must be at least 3x3, got {h}x{w}")
    if h * w > MAX_PIXELS:
        raise InputError(
            f"the contour map has {h}x{w} pixels, over the limit of "
            f"{MAX_PIXELS:,}; downsample it first"
        )
    # a new array: sig may be the caller's own (float64 given as is) or a read-only
    # memory map of an .npy, neither to be written
    sig = np.maximum(sig, 0.0)
    single = sig.ndim == 2
    if single:
        if theta is None:
            tang = np.mod(edge_orientation(sig).astype(np.float64) + np.pi / 2, np.pi)
        else:
            tang = _as_signal(theta, "theta")
            if tang.shape != sig.shape:
                raise InputError(f"theta has shape {tang.shape}, the map {sig.shape}")
        if orientations is not None and (
            not isinstance(orientations, (int, np.integer)) or orientations < 1
        ):
            raise InputError(
                f"orientations must be a positive integer or None, got {orientations!r}"
            )
        nbins = 0 if orientations is None else int(orientations)
        strength, stack = sig, None
    else:
        if theta is not None:
            raise InputError(
                "theta is for a 2-D map; an oriented stack carries its "
                "orientations in its channels"
            )
        if sig.shape[2] < 1:
            raise InputError("the oriented stack has no channels")
        k = sig.shape[2]
        if k > _MAX_ORIENTATIONS or k > min(h, w):
            # (K, H, W) read as (H, W, K): an 8 x 321 "image" of 481 orientations
            raise InputError(
                f"the oriented stack is {h} x {w} x {k}: {k} orientations, more than "
                f"{'its rows or columns' if k > min(h, w) else _MAX_ORIENTATIONS}: a "
                "channel-first (K, H, W) array? The orientations go last, (H, W, K) "
                "(np.moveaxis(stack, 0, -1))"
            )
        strength, stack, tang, nbins = sig.max(axis=2), sig, None, 0

    ws = _k._watershed(strength)
    wt = oriented_transfer(
        ws == 0,
        stack=None if single else stack,
        pb=strength if single else None,
        theta=tang if single else None,
        nbins=nbins,
    )
    grid = _k._super_grid(wt)
    labels, sp = _corner_labels(grid)
    ucm = _k._ucm_mean(grid, sp, labels)
    if not raw:
        ucm = ucm_sigmoid(ucm)
    return ucm if fmt == "doubleSize" else ucm[2::2, 2::2].copy()


def _corner_labels(grid: np.ndarray):
    """The finest regions: 8-connected zero cells of the grid (numbered in
    column-major order of first appearance, as MATLAB's bwlabel), read at the corner
    cells and renumbered 0 .. n - 1 in that order."""
    from scipy import ndimage

    from . import _ucm_kernels as _k

    lab, _ = ndimage.label((grid == 0).T, structure=np.ones((3, 3), bool))
    sp = np.ascontiguousarray(lab.T[1::2, 1::2]).astype(np.int64) - 1
    _k._fill_unlabelled(sp)
    if (sp < 0).any():  # no corner is a region cell: one region
        sp[:] = 0
    present = np.unique(sp)
    remap = np.full(int(present[-1]) + 1, -1, np.int64)
    remap[present] = np.arange(present.size)
    return int(present.size), remap[sp]


def _read_signal(src: Path):
    """A soft map (as the benchmarks read predictions) or an ``.npy`` oriented stack."""
    if src.suffix.lower() == ".npy":
        from ..io import check_numpy_file

        check_numpy_file(src)
        try:
            arr = np.load(src, allow_pickle=False, mmap_mode="r")
        except Exception as exc:  # noqa: BLE001 - numpy's errors for bad files vary
            problem = str(exc) or type(exc).__name__
            raise InputError(f"not a readable .npy array ({problem})", src) from None
        if not isinstance(arr, np.ndarray):  # an .npz archive under an .npy name
            arr.close()
            raise InputError("an .npz archive, not an .npy array", src)
        if arr.ndim == 3 and 1 in (arr.shape[0], arr.shape[2]):
            raise InputError(
                f"got shape {arr.shape}: a 2-D map, or an (H, W, K) oriented stack "
                "(drop the singleton axis with .squeeze())",
                src,
            )
        if arr.size == 0:
            raise InputError(f"an empty array, shape {arr.shape}", src)
        if arr.ndim == 3:  # as a 2-D map is read (uint8 /255, ...), at most 1
            arr = np.asarray(arr)
            if arr.dtype.kind != "f":
                return soft_values(arr, src, "oriented stack")
            if not np.isfinite(arr).all() or arr.max() > 1:
                raise InputError(
                    f"oriented stack holds values up to {float(np.nanmax(arr)):g} (or NaN, "
                    "inf): boundary strengths are at most 1 (negatives count as 0)",
                    src,
                )
            return arr
    return read_prediction(src, kind="soft").pb


def write_ucm2(path, ucm2) -> Path:
    """Write a doubleSize ultrametric contour map as BSR saves it.

    Parameters
    ----------
    path : path
        Output ``.mat`` file (MATLAB v5, compressed), written atomically.
    ucm2 : (2H + 1, 2W + 1) array_like
        The map; stored as the double variable ``ucm2`` that ``segbench region`` and
        the official MATLAB benchmark read.

    Returns
    -------
    Path
        ``path``.
    """
    path = Path(path)
    arr = np.asarray(ucm2, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] % 2 == 0 or arr.shape[1] % 2 == 0:
        raise InputError(
            f"a doubleSize ucm2 has odd sides (2H + 1, 2W + 1), got shape {arr.shape}", path
        )
    return write_mat(path, {"ucm2": arr})  # the same bytes for the same map


def thin_line_smoothing(pb, sigma: float) -> np.ndarray:
    """Blur a thinned (NMS) soft map so that its watershed has basins again.

    Parameters
    ----------
    pb : (H, W) array
        A soft map in [0, 1] whose boundaries are one pixel wide.
    sigma : float
        Gaussian scale in pixels (0: unchanged).

    Returns
    -------
    (H, W) ndarray of float64
        The blurred map divided by the blur's peak on a one-pixel line, so a thin
        boundary keeps its height, clipped to [0, 1].

    Notes
    -----
    The watershed of a thinned map floods through every gap in its one-pixel lines, so
    almost all of the image becomes one basin (on the BSDS500 HED maps, 5 basins for
    an image); OWT-UCM needs the smooth valleys between boundaries that a raw
    detector output has. A blur of 1 pixel restores them.
    """
    from scipy import ndimage

    arr = np.asarray(pb, dtype=np.float64)
    if sigma <= 0:
        return arr
    if not sigma <= max(arr.shape):  # a blur wider than the map only costs (and NaN)
        raise InputError(
            f"the smoothing sigma ({sigma:g} px) must be at most the map's larger side "
            f"({max(arr.shape)} px)"
        )
    # the peak of a vertical line of ones blurred the same way: the column pass of the
    # separable filter gives the line the sum of the weights, the row pass its centre
    # weight times that; in one dimension, as the 2-D filter computes them (same bits)
    n = 8 * int(np.ceil(sigma)) + 9
    c = n // 2
    column = ndimage.gaussian_filter1d(np.ones(n), sigma, mode="nearest")[c]
    row = np.zeros(n)
    row[c] = column
    peak = ndimage.gaussian_filter1d(row, sigma, mode="nearest")[c]
    return np.clip(ndimage.gaussian_filter(arr, sigma, mode="nearest") / peak, 0.0, 1.0)


def looks_thinned(pb) -> bool:
    """Whether a soft map looks thinned by NMS: at most half of its pixels are nonzero
    and fewer than 60% of those lie in a 2 x 2 square of nonzero pixels.

    Dollar's NMS leaves lines one or two pixels wide, so many of their pixels have three
    nonzero 8-neighbours (a neighbour count does not tell them from a blurred map); a
    blurred or raw map's ridges are several pixels wide, nearly all their pixels in
    such squares. Measured on the BSDS500 HED NMS maps: 4.5-9% nonzero, 22-46% in
    squares; the same maps blurred (sigma 2 px): 51-96% nonzero, 100% in squares;
    segbench's own thinned gm and canny maps (val 101085, 101087): 13-23% nonzero,
    1.3-2.3% in squares (the bound was 15% nonzero before, which let them through).
    """
    on = np.asarray(pb) > 0
    if not on.any() or on.mean() > 0.5:
        return False
    square = on[:-1, :-1] & on[1:, :-1] & on[:-1, 1:] & on[1:, 1:]
    in_square = np.zeros_like(on)
    for dy in (0, 1):
        for dx in (0, 1):
            in_square[dy : dy + square.shape[0], dx : dx + square.shape[1]] |= square
    return bool(in_square[on].mean() < 0.6)


def ucm_file(
    src,
    dst,
    *,
    orientations: int | None = 8,
    radius: float = 5.0,
    smooth: float = 0.0,
    raw: bool = False,
) -> Path:
    """Read one contour signal, compute its OWT-UCM, write ``dst`` (:func:`write_ucm2`).

    Parameters
    ----------
    src : path
        A soft map (8/16-bit grey PNG, BMP, ``.npy`` in [0, 1]) or an ``.npy``
        oriented stack (H, W, K) in the convention of :func:`owt_ucm`.
    dst : path
        Output ``.mat``.
    orientations, radius, raw
        As :func:`owt_ucm`.
    smooth : float
        For a 2-D map: :func:`thin_line_smoothing` of this many pixels first (1 for
        NMS-thinned maps).

    Returns
    -------
    Path
        ``dst``.

    Raises
    ------
    InputError
        The input cannot be read or is not a valid contour signal; the message names
        the file.
    """
    src = Path(src)
    sig = _read_signal(src)
    try:
        if smooth > 0 and np.ndim(sig) == 2:
            sig = thin_line_smoothing(sig, smooth)
        ucm2 = owt_ucm(sig, orientations=orientations, radius=radius, raw=raw)
    except InputError as exc:
        raise InputError(exc.problem, src) from None
    return write_ucm2(dst, ucm2)
