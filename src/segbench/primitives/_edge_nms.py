"""Edge non-maximum suppression for any soft boundary map, as Dollar's toolbox defines it.

Every evaluation of a CNN edge detector (HED, RCF, PiDiNet, ...) thins the network's
raw output with the same recipe from P. Dollar's Structured Edge Detection toolbox
before the BSDS benchmark thresholds it:

1. ``E = convTri(E, 1)``: the HED/RCF post-processing scripts smooth the raw map with
   the [1 2 1]/4 filter in each direction (``presmooth``; ``edgesDetect.m`` itself does
   not, as its forest output is smooth already);
2. the orientation from the map itself: ``[Ox, Oy] = gradient2(convTri(E, 4))``,
   ``[Oxx, ~] = gradient2(Ox)``, ``[Oxy, Oyy] = gradient2(Oy)``,
   ``O = mod(atan(Oyy .* sign(-Oxy) ./ (Oxx + 1e-5)), pi)``;
3. ``edgesNmsMex(E, O, r, s, m)``: a pixel is zeroed when ``m * E`` is below the
   bilinearly interpolated map at distance ``d = -r..r`` along the orientation; then
   the ``s`` pixels nearest the border are scaled linearly down to 0.

:func:`edge_nms` runs the three stages, :func:`edge_orientation` the second alone.
Both compute in float32, as the MEX files do, each stage with the MEX's own order of
operations where it fixes the rounding (see the Notes of :func:`edge_nms`).

Sources read (never copied): ``pdollar/edges`` ``edgesDetect.m`` (the orientation
step) and ``private/edgesNmsMex.cpp`` (the suppression); ``pdollar/toolbox``
``channels/convTri.m`` with ``private/convConst.cpp`` (the triangle filters and their
padding) and ``channels/gradient2.m`` with ``private/gradientMex.cpp`` (the gradient).
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path

import numba
import numpy as np

from ..compilation import prepare_kernels
from ..errors import InputError

prepare_kernels()

__all__ = ["edge_nms", "edge_orientation", "nms_file", "NMS_FORMATS"]

#: Output formats of :func:`nms_file`: file suffix and PNG bit depth (None: .npy).
NMS_FORMATS = {"png16": (".png", 16), "png8": (".png", 8), "npy": (".npy", None)}

_F32 = np.float32
_PI32 = _F32(np.pi)  # MATLAB's mod(x, pi) on single: pi rounded to single
_EPS32 = _F32(1e-5)  # ... and Oxx + 1e-5 likewise
_ORIENT_RADIUS = 4  # convTri(E, 4) before the derivatives (edgesDetect.m)


# ---------------------------------------------------------------------------------------
# kernels: float32 C-contiguous (H, W) arrays in and out, one specialization each


@numba.njit(cache=True)
def _conv_tri1(img):
    """``convTri(I, 1)``: the [1 2 1] filter along x then y, /16, edges replicated.

    The order of operations of ``convConst.cpp``'s ``convTri1`` (``p = 2``): along x
    ``t = nrm * ((left + p * mid) + right)`` with ``nrm = 1/16`` and the edge column
    standing in for its missing neighbour; along y ``(up + p * t) + down``, and at the
    first and last rows ``(1 + p) * t + inner``. Symmetric padding by one pixel repeats
    the edge pixel, so this is the half-sample symmetric [1 2 1]/4 filter in each
    direction; every rounding is float32, as in the MEX.
    """
    h, w = img.shape
    p = _F32(2.0)
    nrm = _F32(1.0) / ((p + _F32(2.0)) * (p + _F32(2.0)))
    p1 = _F32(1.0) + p
    tmp = np.empty((h, w), np.float32)
    for y in range(h):
        for x in range(w):
            xl = x - 1 if x > 0 else x
            xr = x + 1 if x < w - 1 else x
            tmp[y, x] = nrm * ((img[y, xl] + p * img[y, x]) + img[y, xr])
    out = np.empty((h, w), np.float32)  # h >= 2 (checked by _as_map)
    for x in range(w):
        out[0, x] = p1 * tmp[0, x] + tmp[1, x]
        out[h - 1, x] = tmp[h - 2, x] + p1 * tmp[h - 1, x]
    for y in range(1, h - 1):
        for x in range(w):
            out[y, x] = (tmp[y - 1, x] + p * tmp[y, x]) + tmp[y + 1, x]
    return out


@numba.njit(cache=True)
def _reflect_index(n, r):
    """Indices of a half-sample symmetric padding by ``r`` of a length-``n`` axis
    (MATLAB's ``padarray(..., 'symmetric')``; reflected again when ``r >= n``)."""
    idx = np.empty(n + 2 * r, np.int64)
    period = 2 * n
    for k in range(n + 2 * r):
        i = (k - r) % period
        idx[k] = i if i < n else period - 1 - i
    return idx


@numba.njit(cache=True)
def _conv_tri(img, r):
    """``convTri(I, r)`` for integer ``r > 1``: the triangle filter
    ``[1 .. r, r+1, r .. 1] / (r+1)^2`` along x then y, symmetric padding.

    Each output is the exact weighted sum of its ``(2r+1)^2`` inputs accumulated in
    float64 and rounded once to float32. (The MEX gets the same sums by running sums in
    float32, whose roundings differ from these by a few float32 ulps.)
    """
    h, w = img.shape
    ix = _reflect_index(w, r)
    iy = _reflect_index(h, r)
    nk = 2 * r + 1
    wts = np.empty(nk, np.float64)
    for k in range(nk):
        wts[k] = float(min(k + 1, nk - k))
    # along x: each row padded into a buffer, then the taps over contiguous memory
    tmp = np.empty((h, w), np.float64)
    buf = np.empty(w + 2 * r, np.float64)
    for y in range(h):
        for k in range(w + 2 * r):
            buf[k] = img[y, ix[k]]
        row = tmp[y]
        for x in range(w):
            row[x] = 0.0
        for k in range(nk):
            wk = wts[k]
            for x in range(w):
                row[x] += wk * buf[x + k]
    # along y: the padded rows are rows of tmp, chosen by index
    nrm = 1.0 / float((r + 1) ** 4)
    out = np.empty((h, w), np.float32)
    acc = np.empty(w, np.float64)
    for y in range(h):
        for x in range(w):
            acc[x] = 0.0
        for k in range(nk):
            wk = wts[k]
            src = tmp[iy[y + k]]
            for x in range(w):
                acc[x] += wk * src[x]
        for x in range(w):
            out[y, x] = np.float32(acc[x] * nrm)
    return out


@numba.njit(cache=True, inline="always")
def _grad_x_row(a, y, out):
    """Row ``y`` of ``gradient2``'s x derivative into ``out``: central difference
    * 0.5 inside, one-sided difference at the first and last columns (float32, as
    ``gradientMex.cpp``)."""
    w = a.shape[1]
    out[0] = a[y, 1] - a[y, 0]
    for x in range(1, w - 1):
        out[x] = (a[y, x + 1] - a[y, x - 1]) * _F32(0.5)
    out[w - 1] = a[y, w - 1] - a[y, w - 2]


@numba.njit(cache=True, inline="always")
def _grad_y_row(a, y, out):
    """Row ``y`` of ``gradient2``'s y derivative, as :func:`_grad_x_row` down the
    columns."""
    h, w = a.shape
    if y == 0:
        for x in range(w):
            out[x] = a[1, x] - a[0, x]
    elif y == h - 1:
        for x in range(w):
            out[x] = a[h - 1, x] - a[h - 2, x]
    else:
        for x in range(w):
            out[x] = (a[y + 1, x] - a[y - 1, x]) * _F32(0.5)


@numba.njit(cache=True, error_model="numpy")  # IEEE division: x/0 is inf, 0/0 NaN
def _orientation(smooth):
    """``O = mod(atan(Oyy .* sign(-Oxy) ./ (Oxx + 1e-5)), pi)`` from ``convTri(E, 4)``.

    x is the column, y the row (MATLAB's ``gradient2`` returns the x derivative first).
    float32 throughout, as MATLAB computes on single arrays; where the quotient is 0/0
    (``Oxx == -1e-5`` exactly and a zero numerator; the MEX would then read outside the
    map) the orientation is 0.
    """
    h, w = smooth.shape
    ox = np.empty((h, w), np.float32)
    oy = np.empty((h, w), np.float32)
    for y in range(h):
        _grad_x_row(smooth, y, ox[y])
        _grad_y_row(smooth, y, oy[y])
    out = np.empty((h, w), np.float32)
    oxx = np.empty(w, np.float32)
    oxy = np.empty(w, np.float32)
    oyy = np.empty(w, np.float32)
    q = np.empty(w, np.float32)
    zero = _F32(0.0)
    for y in range(h):
        _grad_x_row(ox, y, oxx)
        _grad_x_row(oy, y, oxy)
        _grad_y_row(oy, y, oyy)
        for x in range(w):  # Oyy .* sign(-Oxy) ./ (Oxx + 1e-5)
            b = oxy[x]
            num = -oyy[x] if b > zero else (oyy[x] if b < zero else zero * oyy[x])
            q[x] = num / (oxx[x] + _EPS32)
        for x in range(w):
            v = q[x]
            if v != v:
                out[y, x] = zero
            else:
                t = np.float32(np.arctan(v))
                out[y, x] = t + _PI32 if t < zero else t
    return out


@numba.njit(cache=True)
def _clamp_limits(n):
    """(cap, lim) for clamping a float32 coordinate to ``n - 1.001``: edgesNmsMex
    compares ``x > n - 1.001`` in double and then stores ``float(n - 1.001)``; for
    float32 ``x`` that comparison is ``x > lim`` with ``lim`` the largest float32 not
    above ``n - 1.001``."""
    bound = n - 1.001
    cap = np.float32(bound)
    lim = cap if np.float64(cap) <= bound else np.nextafter(cap, np.float32(0.0))
    return cap, lim


@numba.njit(cache=True, inline="always")
def _interp(flat, w, x, y, xcap, xlim, ycap, ylim):
    """The map (``flat``, row-major, width ``w``) at float32 (x = column, y = row) by
    bilinear interpolation, the point clamped to [0, w - 1.001] x [0, h - 1.001]:
    edgesNmsMex's ``interp``, its four terms summed left to right in float32."""
    zero = _F32(0.0)
    x = zero if x < zero else (xcap if x > xlim else x)
    y = zero if y < zero else (ycap if y > ylim else y)
    x0 = np.int64(x)
    y0 = np.int64(y)
    dx0 = x - np.float32(x0)
    dy0 = y - np.float32(y0)
    dx1 = _F32(1.0) - dx0
    dy1 = _F32(1.0) - dy0
    i = y0 * w + x0
    return (
        flat[i] * dx1 * dy1
        + flat[i + 1] * dx0 * dy1
        + flat[i + w] * dx1 * dy0
        + flat[i + w + 1] * dx0 * dy0
    )


@numba.njit(cache=True)
def _suppress(edge, orient, r, s, m):
    """edgesNmsMex: non-maximum suppression along ``orient``, then the border ramp.

    Invariants: reads only ``edge`` (never the output being written), so the result
    does not depend on the visiting order; a zero pixel stays zero; a pixel with
    ``m * e >=`` every interpolated neighbour at ``d = +-1 .. +-r`` keeps its value
    ``e`` exactly; then each of the ``s' = min(s, w // 2, h // 2)`` outermost columns
    on either side is multiplied by ``x / s'`` (x its distance to the border, so the
    border column becomes 0), after that each outermost row by ``y / s'``.

    Row by row, the candidates (nonzero pixels) are kept in a compacted list that
    each distance ``d`` filters without branching; a pixel leaves the list at its
    first failed comparison, as the MEX's ``break``, so the survivors are the MEX's.
    """
    h, w = edge.shape
    flat = edge.ravel()
    xcap, xlim = _clamp_limits(w)
    ycap, ylim = _clamp_limits(h)
    out = np.zeros((h, w), np.float32)
    idx = np.empty(w, np.int64)
    cs = np.empty(w, np.float32)
    sn = np.empty(w, np.float32)
    for y in range(h):
        fy = np.float32(y)
        row = edge[y]
        n = 0
        for x in range(w):
            idx[n] = x
            n += row[x] != _F32(0.0)
        for k in range(n):
            o = orient[y, idx[k]]
            cs[k] = np.float32(np.cos(o))
            sn[k] = np.float32(np.sin(o))
        for d in range(-r, r + 1):
            if d == 0:
                continue
            fd = np.float32(d)
            kept = 0
            for k in range(n):
                x = idx[k]
                e0 = _interp(
                    flat,
                    w,
                    np.float32(x) + fd * cs[k],
                    fy + fd * sn[k],
                    xcap,
                    xlim,
                    ycap,
                    ylim,
                )
                idx[kept] = x
                cs[kept] = cs[k]
                sn[kept] = sn[k]
                kept += not (row[x] * m < e0)
            n = kept
        for k in range(n):
            out[y, idx[k]] = row[idx[k]]
    if s > w // 2:
        s = w // 2
    if s > h // 2:
        s = h // 2
    if s > 0:
        fs = np.float32(s)
        for x in range(s):
            f = np.float32(x) / fs
            for y in range(h):
                out[y, x] *= f
                out[y, w - 1 - x] *= f
        for y in range(s):
            f = np.float32(y) / fs
            for x in range(w):
                out[y, x] *= f
                out[h - 1 - y, x] *= f
    return out


# ---------------------------------------------------------------------------------------
# public functions


def _as_map(E, what: str = "E") -> np.ndarray:
    """A finite 2-D map as a C-contiguous float32 array (uint8 /255, uint16 /65535,
    bool 0/1, floats as they are)."""
    arr = np.asarray(E)
    if arr.ndim != 2:
        raise InputError(f"{what} must be a 2-D (H, W) array, got shape {arr.shape}")
    if arr.shape[0] < 2 or arr.shape[1] < 2:
        raise InputError(
            f"{what} must be at least 2x2 (the gradient needs two pixels "
            f"along each axis), got shape {arr.shape}"
        )
    if arr.dtype == bool:
        arr = arr.astype(np.float32)
    elif arr.dtype == np.uint8:
        arr = arr / _F32(255.0)
    elif arr.dtype == np.uint16:
        arr = arr / _F32(65535.0)
    elif np.issubdtype(arr.dtype, np.integer):
        raise InputError(
            f"{what} is an integer array of {arr.dtype}, whose scale is "
            "ambiguous; give floats, uint8 (read as /255) or uint16 "
            "(read as /65535)"
        )
    elif not np.issubdtype(arr.dtype, np.floating):
        raise InputError(f"{what} has unsupported type {arr.dtype}; expected floats")
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    if not np.isfinite(arr).all():
        raise InputError(
            f"{what} contains NaN or infinite values (after conversion to float32)"
        )
    return arr


def edge_orientation(E) -> np.ndarray:
    """Edge normal orientation of a soft map from its own second derivatives.

    Parameters
    ----------
    E : (H, W) array
        Soft boundary map (floats; uint8 read as /255, uint16 as /65535), at least 2x2.
        In the HED/RCF recipe this is the map already smoothed by ``convTri(E, 1)``.

    Returns
    -------
    (H, W) ndarray of float32
        ``O = mod(atan(Oyy * sign(-Oxy) / (Oxx + 1e-5)), pi)`` in [0, pi], where
        ``[Ox, Oy] = gradient2(convTri(E, 4))``, ``Oxx`` is the x derivative of ``Ox``
        and ``Oxy``, ``Oyy`` the x and y derivatives of ``Oy``; x is the column (to
        the right), y the row (down), and the normal at angle O points along
        ``(cos O, sin O)`` in (x, y).

    Notes
    -----
    As ``edgesDetect.m`` computes it, in float32 (MATLAB single). ``convTri(E, 4)`` is
    the separable triangle filter of length 9 with half-sample symmetric padding,
    computed exactly (float64 sums rounded once) where the MEX uses float32 running
    sums; the two differ by a few float32 ulps, which moves O by about 1e-6 rad.
    ``gradient2`` is MATLAB's ``gradient``: central differences inside, one-sided at
    the borders.

    The formula is kept as defined, quirks included: where ``Oxy`` is exactly 0 (a map
    constant along x, such as a synthetic, perfectly horizontal ridge) the numerator
    is 0 and O = 0, a normal along x, so such a ridge is not thinned across y.
    """
    arr = _as_map(E)
    return _orientation(_conv_tri(arr, _ORIENT_RADIUS))


#: The largest suppression radius and border band :func:`nms_options` takes, in
#: pixels (the toolbox: 1 and 5). The cost grows with r: a larger one would run for
#: hours in a compiled loop that Ctrl-C cannot stop.
MAX_NMS_PIXELS = 1000


def nms_options(r, s, m, *, prefix: str = "") -> tuple[int, int, np.float32]:
    """``(r, s, m)`` of :func:`edge_nms` checked: r and s integers in
    [0, :data:`MAX_NMS_PIXELS`], m a finite number above 0 in float32 (returned as
    float32, as the MEX uses it); InputError otherwise, naming each as ``prefix`` +
    its name (``'--r'`` for a command's options)."""
    r = _int_option(r, prefix + "r", most=MAX_NMS_PIXELS)
    s = _int_option(s, prefix + "s", most=MAX_NMS_PIXELS)
    try:
        with np.errstate(over="ignore"):  # out of float32's range: refused below
            m32 = np.float32(m)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{prefix}m must be a number, got {m!r}") from None
    if not np.isfinite(m32) or not m32 > 0:  # m <= 0 suppresses every pixel
        raise InputError(
            f"{prefix}m must be a finite number above 0 in float32's range (the "
            f"toolbox: 1.01), got {m!r}"
        )
    return r, s, m32


def edge_nms(
    E, *, r: int = 1, s: int = 5, m: float = 1.01, presmooth: bool = True, orientation=None
) -> np.ndarray:
    """Thin a soft boundary map by Dollar's edge non-maximum suppression.

    Parameters
    ----------
    E : (H, W) array
        Soft boundary map, e.g. a CNN's raw output in [0, 1]: floats, or uint8 (read
        as /255) or uint16 (read as /65535); at least 2x2. Computed in float32.
    r : int, default 1
        Suppression radius: a pixel is compared with the map at distances
        ``d = +-1 .. +-r`` along its orientation.
    s : int, default 5
        Border band: the ``s`` outermost rows and columns are scaled linearly to 0
        (capped at half the image's width and height).
    m : float, default 1.01
        Tolerance: a pixel of value ``e`` survives while ``m * e`` is at least every
        neighbour (``m > 1`` keeps near-ties, so flat ridges are not lost). Rounded
        to float32, as the MEX takes it.
    presmooth : bool, default True
        First smooth the map with ``convTri(E, 1)`` (the [1 2 1]/4 filter along each
        axis), as the HED, RCF and PiDiNet evaluation scripts do; False for a map that
        is smooth already (``edgesDetect.m`` applies the NMS to its forest output
        without it).
    orientation : (H, W) array, optional
        Edge normal orientation in radians (x the column, y the row), e.g. from
        another detector. Default: :func:`edge_orientation` of the (smoothed) map.

    Returns
    -------
    (H, W) ndarray of float32
        The (smoothed) map where it survives, 0 elsewhere, ramped down over the border
        band. Values stay within the range of the input.

    Notes
    -----
    Dollar's ``edgesNmsMex(E, O, r, s, m)`` [1]_: each nonzero pixel ``e`` at column
    x, row y is set to 0 when, for some ``d`` in ``-r..r`` (``d != 0``),
    ``m * e < E(x + d cos O, y + d sin O)``, read by bilinear interpolation at a point
    clamped to ``[0, w - 1.001] x [0, h - 1.001]``; every read is of the input map,
    never of the partly suppressed output. Then with ``s' = min(s, w // 2, h // 2)``
    the outermost columns are multiplied by ``x / s'`` for ``x = 0 .. s'-1`` (the
    distance to the left or right border) and then the outermost rows by ``y / s'``;
    the corners get both factors.

    **float32.** Every stage computes in float32 in the MEX's order of operations:
    ``convTri1``'s ``((l + 2c) + r) / 16`` along x then y, ``gradient2``'s half
    differences, the orientation formula, float32 ``cos``/``sin`` of O, the float32
    sample point ``x + d * cos O``, the four-term interpolation summed left to right,
    ``m * e`` with ``m`` in float32, and the ramp factors ``x / float(s)``. So a tie
    decided by float32 rounding in the MEX is decided the same way here. The one stage
    not reproduced operation by operation is ``convTri(E, 4)`` inside the orientation
    (see :func:`edge_orientation`): its float32 running sums are replaced by the exact
    sum, which changes O by a few ulps and can flip a suppression only where
    ``m * e`` equals a neighbour to about 1e-7. pyEdgeEval's ``fast_nms`` [2]_
    computes in float64 instead and divides by ``Oxx`` (0 replaced by 1e-5) rather
    than by ``Oxx + 1e-5``; its maps differ from these at a small fraction of pixels
    (see ``docs/detectors.md``).

    References
    ----------
    .. [1] P. Dollar and C. L. Zitnick, "Fast edge detection using structured
       forests", IEEE TPAMI 37(8), 1558-1570, 2015; code: github.com/pdollar/edges
       (``edgesDetect.m``, ``private/edgesNmsMex.cpp``) and github.com/pdollar/toolbox
       (``channels/convTri.m``, ``channels/gradient2.m``).
    .. [2] pyEdgeEval 0.2.8, ``pyEdgeEval.preprocess.fast_nms``.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(40.0)
    >>> ridge = np.tile(np.exp(-0.5 * ((x - 20) / 3) ** 2), (40, 1))
    >>> thin = edge_nms(ridge)
    >>> [int(c) for c in np.flatnonzero(thin[20])]
    [20]
    """
    r, s, m32 = nms_options(r, s, m)
    arr = _as_map(E)
    edge = _conv_tri1(arr) if presmooth else arr
    if orientation is None:
        orient = _orientation(_conv_tri(edge, _ORIENT_RADIUS))
    else:
        orient = _as_map(orientation, "orientation")
        if orient.shape != edge.shape:
            raise InputError(
                f"orientation is {orient.shape[0]}x{orient.shape[1]} but "
                f"the map is {edge.shape[0]}x{edge.shape[1]}"
            )
    return _suppress(edge, orient, r, s, m32)


def _int_option(v, name: str, *, most: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
        raise InputError(f"{name} must be a non-negative integer, got {v!r}")
    if most is not None and v > most:
        raise InputError(f"{name} must be at most {most} pixels, got {v!r}")
    return int(v)


def nms_file(
    src: str | PathLike,
    dst: str | PathLike,
    *,
    fmt: str = "png16",
    r: int = 1,
    s: int = 5,
    m: float = 1.01,
    presmooth: bool = True,
) -> Path:
    """Read one soft map, thin it with :func:`edge_nms`, write it atomically.

    Parameters
    ----------
    src : path
        A soft map as :func:`segbench.io.read_prediction` reads it (8- or 16-bit
        grey PNG, BMP, ``.npy``).
    dst : path
        Output file; its suffix must match ``format``.
    fmt : {'png16', 'png8', 'npy'}
        16-bit PNG (``round(65535 * v)``, nothing lost to 8-bit rounding), 8-bit PNG
        (``round(255 * v)``, as the HED/RCF scripts save), or ``.npy`` (exact values,
        float64).
    r, s, m, presmooth
        As :func:`edge_nms`.

    Returns
    -------
    Path
        ``dst``.

    Raises
    ------
    InputError
        The input is not a readable soft map in [0, 1]; the message names the file.
    """
    from ..io import read_prediction, write_soft_map

    pred = read_prediction(src, kind="soft")
    try:
        thin = edge_nms(pred.pb, r=r, s=s, m=m, presmooth=presmooth)
    except InputError as exc:
        raise InputError(exc.problem, src) from None
    if fmt not in NMS_FORMATS:
        raise InputError(f"fmt must be one of {sorted(NMS_FORMATS)}, not {fmt!r}")
    suffix, bits = NMS_FORMATS[fmt]
    if Path(dst).suffix.lower() != suffix:
        raise InputError(f"a {fmt} output must end in {suffix}", dst)
    return write_soft_map(dst, thin, bits=bits or 16)
