"""Channel features of the structured edge forests (Dollár and Zitnick, ICCV 2013 /
TPAMI 2015), as the edges toolbox's ``edgesChns.m`` computes them.

For an RGB image (H, W, 3), 13 channels at 1/``shrink`` of the resolution, in this order:

- 3 colour channels: CIE L*u*v* (``rgbConvert(I, 'luv')``: L/270, (u+88)/270,
  (v+134)/270), downsampled by ``shrink``;
- for each of two scales (the image, and the image at 1/2): the normalised gradient
  magnitude (``gradientMag(I, 0, normRad, .01)``), then ``nOrients`` orientation
  histograms of it (``gradientHist(M, O, max(1, shrink/s), nOrients, 0)``), all
  resampled to 1/``shrink``.

These channels are then smoothed twice by a triangle filter (``convTri``): radius
``chnSmooth/shrink`` for the regular (patch pixel) features, ``simSmooth/shrink`` for the
self-similarity (pairwise difference) features. A grey (H, W) image gives 1 + 2
(nOrients + 1) = 11 channels.

Which reference we follow: Dollár's MATLAB toolbox (``edgesChns.m`` and the mex files of
``rgbConvert``, ``convTri``, ``gradientMag``, ``gradientHist``, ``imResample``), not
OpenCV's port (``cv::ximgproc::RFFeatureGetter``), which differs in six ways: its
gradients are twice Dollár's in the interior (``Sobel`` with kernel [-1 0 1], no 1/2), its
orientation histograms bin to the nearest orientation instead of interpolating linearly
between the two nearest, its smoothing reflects at the border without repeating the edge
sample (``BORDER_REFLECT_101``), its L table stops one entry short (white, Y >= 1, gets
L(1023/1024)), its shrinking omits imResample's factor 1/(1 + 1e-6), and its orientation
uses ``fastAtan2``. With those put back, our stages reproduce OpenCV's channels to about
1e-6 (``tests/test_se_channels.py``). Where Dollár's mex files use SSE approximations of
a reciprocal or a square root (``_mm_rcp_ps``, ``_mm_rsqrt_ps``: relative error up to
1.5 * 2^-12, CPU dependent) we compute exactly, as his scalar code paths do; everything
else (float32 arithmetic, the Y -> L lookup table, the 1e-4 acos table of the orientation,
truncations) follows the mex. As in the mex, a uint8 image has 1/255 folded into the
colour matrix, so it can differ from the same image given as floats / 255 where Y falls
on a step of the L table.

Sources read (never copied): the edges toolbox (``edgesChns.m``, ``edgesTrain.m``),
the MATLAB toolbox's ``channels/`` (``rgbConvert.m``, ``rgbConvertMex.cpp``,
``gradientMag.m``, ``gradientHist.m``, ``gradientMex.cpp``, ``convTri.m``,
``convConst.cpp``, ``imResample.m``, ``imResampleMex.cpp``), and OpenCV contrib's
``ximgproc/src/structured_edge_detection.cpp`` for the differences above.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields

import numpy as np

from ..errors import InputError
from . import _se_kernels as _k

__all__ = [
    "SEChannelOptions",
    "conv_tri",
    "gradient_hist",
    "gradient_mag",
    "im_resample",
    "rgb_to_luv",
    "se_channels",
    "se_raw_channels",
]

_F32 = np.float32
_PI_F = _F32(3.14159265)  # gradientMex.cpp's PI, a float


@dataclass(frozen=True)
class SEChannelOptions:
    """The channel options of a structured edge model (``edgesTrain.m`` defaults).

    Attributes
    ----------
    shrink : int
        Channel downsampling factor (``shrink``, 2).
    n_orients : int
        Orientation histograms per gradient scale (``nOrients``, 4).
    grd_smooth : float
        ``convTri`` radius applied to the image before its gradients, in pixels of
        that scale (``grdSmooth``, 0).
    chn_smooth : float
        ``convTri`` radius of the regular channels in full-resolution pixels, divided by
        ``shrink`` (``chnSmooth``, 2).
    sim_smooth : float
        The same for the self-similarity channels (``simSmooth``, 8).
    norm_rad : float
        ``convTri`` radius of the gradient magnitude normalisation (``normRad``, 4).
    """

    shrink: int = 2
    n_orients: int = 4
    grd_smooth: float = 0.0
    chn_smooth: float = 2.0
    sim_smooth: float = 8.0
    norm_rad: float = 4.0

    @property
    def n_channels(self) -> int:
        """Channels of an RGB image: 3 colour + 2 scales x (1 + ``n_orients``)."""
        return 3 + 2 * (self.n_orients + 1)


# Dollár's option names (edgesTrain.m) -> ours, so a model's options carry over.
_MATLAB_NAMES = {
    "shrink": "shrink",
    "nOrients": "n_orients",
    "grdSmooth": "grd_smooth",
    "chnSmooth": "chn_smooth",
    "simSmooth": "sim_smooth",
    "normRad": "norm_rad",
}


def _options(options) -> SEChannelOptions:
    if options is None:
        return SEChannelOptions()
    if isinstance(options, SEChannelOptions):
        opts = options
    elif isinstance(options, Mapping):
        ours = {f.name for f in fields(SEChannelOptions)}
        kw = {}
        # other keys of a model's options (nTrees, stride, ...) are not the channels'
        for key, value in options.items():
            name = _MATLAB_NAMES.get(key, key)
            if name in ours:
                kw[name] = value
        opts = SEChannelOptions(**kw)
    else:
        raise InputError(
            f"options must be SEChannelOptions or a mapping, not {type(options).__name__}"
        )
    # a model file read from MATLAB stores integers as doubles
    ints = {}
    for name in ("shrink", "n_orients"):
        v = getattr(opts, name)
        if isinstance(v, (float, np.floating)) and float(v).is_integer():
            ints[name] = int(v)
    if ints:
        opts = SEChannelOptions(**{**opts.__dict__, **ints})
    if not (isinstance(opts.shrink, (int, np.integer)) and opts.shrink >= 1):
        raise InputError(f"shrink must be a positive integer, got {opts.shrink!r}")
    if not (isinstance(opts.n_orients, (int, np.integer)) and opts.n_orients >= 0):
        raise InputError(
            f"n_orients must be a non-negative integer, got {opts.n_orients!r}"
        )
    for name in ("grd_smooth", "chn_smooth", "sim_smooth", "norm_rad"):
        v = getattr(opts, name)
        if not (
            isinstance(v, (int, float, np.integer, np.floating))
            and math.isfinite(v)
            and v >= 0
        ):
            raise InputError(f"{name} must be a finite number >= 0, got {v!r}")
    return opts


# ---------------------------------------------------------------------------------------
# images


def _image_planes(image) -> tuple[np.ndarray, float]:
    """(C, H, W) float32 planes of the raw values and the factor taking them to [0, 1]
    (1/255 for uint8, folded into the colour conversion as rgbConvertMex does)."""
    img = np.asarray(image)
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[..., 0]
    if img.ndim not in (2, 3) or (img.ndim == 3 and img.shape[2] != 3):
        raise InputError(f"image must be (H, W) or (H, W, 3), got shape {img.shape}")
    if min(img.shape[:2]) < 2:
        raise InputError(f"image must be at least 2x2, got {img.shape[:2]}")
    if img.dtype == np.uint8:
        nrm = 1.0 / 255.0
    elif np.issubdtype(img.dtype, np.floating):
        if not np.all(np.isfinite(img)) or img.min() < 0 or img.max() > 1:
            raise InputError("float image values must be finite and in [0, 1]")
        nrm = 1.0
    else:
        raise InputError(
            f"image has unsupported type {img.dtype}; give uint8 or floats in [0, 1]"
        )
    planes = img[None] if img.ndim == 2 else np.moveaxis(img, 2, 0)
    return np.ascontiguousarray(planes, dtype=_F32), nrm


def _planes(x: np.ndarray) -> np.ndarray:
    """(H, W) or (H, W, C) -> contiguous (C, H, W) float32."""
    x = np.asarray(x, dtype=_F32)
    if x.ndim == 2:
        x = x[None]
    elif x.ndim == 3:
        x = np.moveaxis(x, 2, 0)
    else:
        raise InputError(f"expected an (H, W) or (H, W, C) array, got shape {x.shape}")
    return np.ascontiguousarray(x)


def _unplanes(x: np.ndarray, like_ndim: int) -> np.ndarray:
    return x[0] if like_ndim == 2 else np.ascontiguousarray(np.moveaxis(x, 0, 2))


# ---------------------------------------------------------------------------------------
# rgbConvert 'luv'


def _luv_tables(nrm: float):
    f = _F32
    z = f(1.0) / f(255.0) if nrm != 1.0 else f(1.0)
    # rows X, Y, Z of the sRGB (D65) -> XYZ matrix, rgbConvertMex.cpp's mr/mg/mb
    m = np.array(
        [
            [0.430574, 0.341550, 0.178325],
            [0.222015, 0.706655, 0.071330],
            [0.020183, 0.129553, 0.939180],
        ]
    )
    mat = (m.astype(_F32) * z).astype(_F32)
    maxi = f(1.0) / f(270.0)
    y0 = f((6.0 / 29) ** 3)
    a = f((29.0 / 3) ** 3)
    ys = (np.arange(1025) / 1024.0).astype(_F32)
    cube = np.cbrt(ys.astype(np.float64)).astype(_F32)
    lv = np.where(ys > y0, f(116) * cube - f(16), ys * a).astype(_F32)
    table = np.empty(1064, _F32)
    table[:1025] = lv * maxi
    table[1025:] = table[1024]  # padded with the last entry, as the mex's table
    minu = f(-88) * maxi
    minv = f(-134) * maxi
    return mat, table, minu, minv, f(13) * f(0.197833), f(13) * f(0.468331)


def rgb_to_luv(image) -> np.ndarray:
    """``rgbConvert(I, 'luv')``: CIE L*u*v* normalised to about [0, 1].

    Parameters
    ----------
    image : array_like
        (H, W, 3) RGB, uint8 or floats in [0, 1].

    Returns
    -------
    ndarray
        (H, W, 3) float32: L/270, (u + 88)/270, (v + 134)/270 (L in [0, 100]), with L
        read from the toolbox's 1/1024-step table of Y.
    """
    planes, nrm = _image_planes(image)
    if planes.shape[0] != 3:
        raise InputError("rgb_to_luv needs an (H, W, 3) colour image")
    return _unplanes(_luv(planes, nrm), 3)


def _luv(planes: np.ndarray, nrm: float) -> np.ndarray:
    mat, table, minu, minv, un13, vn13 = _luv_tables(nrm)
    out = np.empty_like(planes)
    _k.rgb2luv(planes, mat, table, _F32(1024.0), minu, minv, un13, vn13, out)
    return out


# ---------------------------------------------------------------------------------------
# convTri


def _tri_taps(r: float) -> np.ndarray | None:
    """convTri.m's 1-D filter of radius ``r``; None for the identity (r = 0)."""
    if r <= 0:
        return None
    if r <= 1:
        p = 12.0 / r / (r + 2) - 2
        return np.array([1.0, p, 1.0]) / (2.0 + p)
    ri = int(r)  # the mex reads the radius as an int
    f = np.concatenate([np.arange(1, ri + 1), [ri + 1], np.arange(ri, 0, -1)])
    return f.astype(np.float64) / (ri + 1) ** 2


def _conv_tri_planes(planes: np.ndarray, r: float) -> np.ndarray:
    taps = _tri_taps(r)
    if taps is None:
        return planes.copy()
    out = np.empty_like(planes)
    _k.conv_sep(planes, taps, out)
    return out


def conv_tri(image, r: float) -> np.ndarray:
    """``convTri(I, r)``: separable triangle smoothing with symmetric padding.

    Parameters
    ----------
    image : array_like
        (H, W) or (H, W, C); computed in float32.
    r : float
        Radius in pixels. 0 is the identity; 0 < r <= 1 uses the filter
        [1 p 1]/(2 + p) with p = 12/r/(r + 2) - 2 (r = 1: [1 2 1]/4); r > 1 is truncated
        to an integer (as the mex) and uses [1 .. r, r+1, r .. 1]/(r + 1)^2.

    Returns
    -------
    ndarray
        float32, the shape of ``image``. Borders are padded symmetrically with the edge
        sample repeated (MATLAB ``padarray(..., 'symmetric')``).
    """
    if not (
        isinstance(r, (int, float, np.integer, np.floating)) and math.isfinite(r) and r >= 0
    ):
        raise InputError(f"convTri radius must be a finite number >= 0, got {r!r}")
    x = np.asarray(image)
    return _unplanes(_conv_tri_planes(_planes(x), float(r)), x.ndim)


# ---------------------------------------------------------------------------------------
# gradientMag, gradientHist


def _acos_table() -> np.ndarray:
    """gradientMex.cpp's table: acos(i/1e4) as float32 for i = -1e4 .. 1e4 (i = 1e4
    gives 0), kept below PI - 1e-6."""
    n = 10000
    i = np.arange(-n, n + 1)
    t = np.arccos((i[:-1].astype(_F32) / _F32(n)).astype(np.float64)).astype(_F32)
    t = np.append(t, _F32(0.0))
    cap = _PI_F - _F32(1e-6)
    t[(i < n // 10) & (t > cap)] = cap
    return t


_ACOS = None


def _grad_mag_planes(planes: np.ndarray, norm_rad: float, norm_const: float):
    global _ACOS
    if _ACOS is None:
        _ACOS = _acos_table()
    _, h, w = planes.shape
    mag = np.empty((h, w), _F32)
    ori = np.empty((h, w), _F32)
    _k.grad_mag(planes, _ACOS, mag, ori)
    if norm_rad > 0:
        s = _conv_tri_planes(mag[None], norm_rad)[0]
        _k.grad_mag_norm(mag, s, _F32(norm_const))
    return mag, ori


def gradient_mag(image, norm_rad: float = 0.0, norm_const: float = 0.005):
    """``gradientMag(I, 0, normRad, normConst)``: gradient magnitude and orientation.

    Parameters
    ----------
    image : array_like
        (H, W) or (H, W, C), at least 2x2, computed in float32. With several channels
        each pixel takes the gradient of the channel with the largest magnitude.
    norm_rad : float
        If > 0, the magnitude is divided by ``conv_tri(M, norm_rad) + norm_const``.
    norm_const : float
        The normalisation constant (the toolbox's default .005; ``edgesChns`` uses .01).

    Returns
    -------
    M : ndarray
        (H, W) float32 magnitude of (Gx, Gy), central differences ``(I[x+1] -
        I[x-1])/2`` (one-sided at the borders), in channel units per pixel; at least
        1e-10 before normalisation.
    O : ndarray
        (H, W) float32 orientation of the gradient modulo pi, radians in [0, pi):
        0 along +x (columns), pi/2 along +y (rows, down); from the toolbox's acos table
        (cosine truncated to 1e-4). A zero gradient gives pi/2.
    """
    planes = _planes(image)
    if min(planes.shape[1:]) < 2:
        raise InputError(
            f"gradient_mag needs an image of at least 2x2, got {planes.shape[1:]}"
        )
    return _grad_mag_planes(planes, float(norm_rad), float(norm_const))


def _grad_hist(mag: np.ndarray, ori: np.ndarray, bin_size: int, n_orients: int):
    h, w = mag.shape
    out = np.zeros((n_orients, h // bin_size, w // bin_size), _F32)
    if n_orients == 0:
        return out
    o_mult = _F32(n_orients) / _PI_F
    s = _F32(bin_size)
    norm = _F32(1.0) / s / s
    _k.grad_hist(
        np.ascontiguousarray(mag, _F32),
        np.ascontiguousarray(ori, _F32),
        bin_size,
        n_orients,
        o_mult,
        norm,
        out,
    )
    return out


def gradient_hist(mag, ori, bin_size: int, n_orients: int) -> np.ndarray:
    """``gradientHist(M, O, binSize, nOrients, 0)``: orientation histograms.

    Parameters
    ----------
    mag, ori : array_like
        (H, W) magnitude and orientation in [0, pi) as :func:`gradient_mag` returns.
    bin_size : int
        Spatial block size in pixels.
    n_orients : int
        Orientation bins; bin k is centred on k pi / n_orients.

    Returns
    -------
    ndarray
        (H // bin_size, W // bin_size, n_orients) float32: per block, the mean over its
        pixels of the magnitude shared linearly between the two nearest orientation
        bins (softBin = 0: no spatial interpolation); trailing rows and columns that do
        not fill a block are ignored.
    """
    m = np.asarray(mag, _F32)
    o = np.asarray(ori, _F32)
    if m.ndim != 2 or m.shape != o.shape:
        raise InputError(
            f"mag and ori must be 2-D arrays of one shape, got {m.shape} and {o.shape}"
        )
    if int(bin_size) < 1 or int(n_orients) < 0:
        raise InputError(
            f"bin_size must be >= 1 and n_orients >= 0, got {bin_size}, {n_orients}"
        )
    return _unplanes(_grad_hist(m, o, int(bin_size), int(n_orients)), 3)


# ---------------------------------------------------------------------------------------
# imResample (bilinear)


def _mround(x: float) -> int:
    """MATLAB's round: halves away from zero (sizes are positive)."""
    return math.floor(x + 0.5)


def _coef_matrix(na: int, nb: int) -> np.ndarray:
    """imResampleMex.cpp's ``resampleCoef`` as a dense (nb, na) matrix of weights:
    box-filter weights for shrinking, bilinear with half-pixel centres (clamped at the
    ends) for enlarging. Computed in float32 like the mex's single path."""
    f = _F32
    s = f(nb) / f(na)
    s_inv = f(1) / s
    wmat = np.zeros((nb, na), np.float64)
    if na > nb:
        wt0 = f(1e-3) * s
        for yb in range(nb):
            ya0f = f(yb) * s_inv
            ya1f = ya0f + s_inv
            ya0 = math.ceil(ya0f)
            ya1 = int(ya1f)
            entries = []
            for ya in range(ya0 - 1, ya1 + 1):
                wt = s
                if ya == ya0 - 1:
                    wt = (f(ya0) - ya0f) * s
                elif ya == ya1:
                    wt = (ya1f - f(ya1)) * s
                if wt > wt0 and ya >= 0:
                    entries.append((ya, wt))
            total = sum(float(wt) for _, wt in entries)
            for ya, wt in entries:
                wt = f(wt / f(total)) if total > 1 else wt
                if ya < na:  # the mex reads zeros past the end
                    wmat[yb, ya] += float(wt)
    else:
        for yb in range(nb):
            yaf = (f(0.5) + f(yb)) * s_inv - f(0.5)
            ya = math.floor(yaf)
            if 0 <= ya < na - 1:
                wt = f(1) - (yaf - f(ya))
                wmat[yb, ya] = wt
                wmat[yb, ya + 1] = f(1) - wt
            else:
                wmat[yb, min(max(ya, 0), na - 1)] = 1.0
    return wmat


def _resample_planes(planes: np.ndarray, hb: int, wb: int, norm: float = 1.0):
    _, ha, wa = planes.shape
    if ha == hb and wa == wb and norm == 1.0:
        return planes.copy()
    f = _F32
    r = f(norm)
    kx = next((k for k in (2, 3, 4) if wa == k * wb), 0)
    ky = next((k for k in (2, 3, 4) if ha == k * hb), 0)
    if kx:
        r = r / f(kx)
    r = r / f(1 + 1e-6)
    # along x: plain sums of kx columns (the mex's float32 adds, in order) or weights
    if kx:
        cx = planes[:, :, 0::kx][:, :, :wb].copy()
        for j in range(1, kx):
            cx = cx + planes[:, :, j::kx][:, :, :wb]
    else:
        idx, wts = _sparse_coefs(_coef_matrix(wa, wb))
        cx = np.empty((planes.shape[0], ha, wb), _F32)
        _k.resample_x(planes, idx, wts, cx)
    # along y
    if ky:
        acc = cx[:, 0::ky][:, :hb].copy()
        for j in range(1, ky):
            acc = acc + cx[:, j::ky][:, :hb]
        return (acc * (r / f(ky))).astype(_F32)
    idx, wts = _sparse_coefs(_coef_matrix(ha, hb) * float(r))
    out = np.empty((cx.shape[0], hb, cx.shape[2]), _F32)
    _k.resample_y(np.ascontiguousarray(cx), idx, wts, out)
    return out


def _sparse_coefs(wmat: np.ndarray):
    """The nonzero weights of each row of a dense (nb, na) coefficient matrix, as
    (nb, k) source indices and weights (increasing source index; unused slots weight 0
    on index 0)."""
    nb = wmat.shape[0]
    nz = wmat != 0
    k = max(int(nz.sum(axis=1).max()), 1)
    idx = np.zeros((nb, k), np.int64)
    wts = np.zeros((nb, k), np.float64)
    for i in range(nb):  # once per output row/column of a resampling, not per pixel
        cols = np.nonzero(nz[i])[0]
        idx[i, : cols.size] = cols
        wts[i, : cols.size] = wmat[i, cols]
    return idx, wts


def im_resample(image, scale) -> np.ndarray:
    """``imResample(I, scale)`` (bilinear): the toolbox's resampling.

    Parameters
    ----------
    image : array_like
        (H, W) or (H, W, C), computed in float32.
    scale : float or (int, int)
        A factor (target size ``round(scale H) x round(scale W)``, halves rounded up) or
        the target (height, width).

    Returns
    -------
    ndarray
        float32. Shrinking by an integer factor 2, 3 or 4 along an axis sums whole
        blocks; shrinking otherwise averages with box weights over each target pixel's
        footprint; enlarging interpolates bilinearly between pixel centres (clamped at
        the ends). Every result carries the mex's factor 1/(1 + 1e-6). A scale of 1
        returns the input.
    """
    x = np.asarray(image)
    planes = _planes(x)
    _, h, w = planes.shape
    if np.ndim(scale) == 0:
        s = float(scale)
        if not (math.isfinite(s) and s > 0):
            raise InputError(f"scale must be a positive number, got {scale!r}")
        if s == 1.0:
            return _unplanes(planes.copy(), x.ndim)
        hb, wb = _mround(s * h), _mround(s * w)
    else:
        hb, wb = (int(v) for v in scale)
    if hb < 1 or wb < 1:
        raise InputError(f"resampling {h}x{w} by {scale!r} leaves no pixels")
    return _unplanes(_resample_planes(planes, hb, wb), x.ndim)


# ---------------------------------------------------------------------------------------
# edgesChns


def _resample_by(planes: np.ndarray, scale: float) -> np.ndarray:
    if scale == 1.0:
        return planes
    _, h, w = planes.shape
    return _resample_planes(planes, _mround(scale * h), _mround(scale * w))


def se_raw_channels(image, options=None) -> np.ndarray:
    """The channels of ``edgesChns.m`` before their two smoothings.

    Parameters
    ----------
    image : array_like
        (H, W, 3) RGB or (H, W) grey, uint8 or floats in [0, 1]. The toolbox pads
        images (symmetrically) to a multiple of 4 before this; other sizes go through
        imResample's general (non block) path.
    options : SEChannelOptions or mapping, optional
        Channel options (our names or the toolbox's: ``shrink``, ``nOrients``,
        ``grdSmooth``, ``normRad``; others ignored). Default: the toolbox's defaults.

    Returns
    -------
    ndarray
        (round(H/shrink), round(W/shrink), n) float32: L, u, v (or grey), then for the
        image at scales 1 and 1/2 the normalised gradient magnitude and its
        ``n_orients`` orientation histograms. This is what OpenCV's
        ``RFFeatureGetter.getFeatures`` returns (up to the differences the module
        docstring lists).
    """
    opts = _options(options)
    planes, nrm = _image_planes(image)
    return _unplanes(_raw_channels(planes, nrm, opts), 3)


def _raw_channels(planes: np.ndarray, nrm: float, opts: SEChannelOptions) -> np.ndarray:
    shrink = int(opts.shrink)
    if planes.shape[0] == 3:
        img = _luv(planes, nrm)
    else:
        img = (planes * _F32(nrm)).astype(_F32) if nrm != 1.0 else planes
    img_shrink = _resample_by(img, 1.0 / shrink)
    chns = [img_shrink]
    for i in range(2):
        s = 2**i
        img1 = img_shrink if s == shrink else _resample_by(img, 1.0 / s)
        img1 = _conv_tri_planes(img1, float(opts.grd_smooth))
        if min(img1.shape[1:]) < 2:
            raise InputError(
                f"image too small for the structured edge channels: "
                f"{planes.shape[1]}x{planes.shape[2]}"
            )
        mag, ori = _grad_mag_planes(img1, float(opts.norm_rad), 0.01)
        hist = _grad_hist(mag, ori, max(1, int(shrink / s)), int(opts.n_orients))
        chns.append(_resample_by(mag[None], s / shrink))
        chns.append(_resample_by(hist, max(1.0, s / shrink)))
    shapes = {c.shape[1:] for c in chns}
    if len(shapes) != 1:
        raise InputError(
            f"channel sizes differ ({sorted(shapes)}) for an image of "
            f"{planes.shape[1]}x{planes.shape[2]}; pad it to a multiple of "
            f"{2 * shrink}"
        )
    return np.concatenate(chns, axis=0)


def _smooth_radius(r: float, shrink: int) -> float:
    r = r / shrink
    return float(_mround(r)) if r > 1 else r


def se_channels(image, options=None) -> tuple[np.ndarray, np.ndarray]:
    """Structured edge channel features, as ``[chnsReg, chnsSim] = edgesChns(I, opts)``.

    Parameters
    ----------
    image : array_like
        (H, W, 3) RGB or (H, W) grey image, uint8 or floats in [0, 1]. As in the
        toolbox, pad it first (symmetrically, to a multiple of 4; detection also pads by
        half a patch) if its size should not go through imResample's general path.
    options : SEChannelOptions or mapping, optional
        Channel options; a model's option mapping with the toolbox's names
        (``shrink``, ``nOrients``, ``grdSmooth``, ``chnSmooth``, ``simSmooth``,
        ``normRad``) is accepted and its other keys ignored. Default: ``edgesTrain.m``'s
        defaults (shrink 2, 4 orientations, smoothing 0 / 2 / 8, normRad 4).

    Returns
    -------
    chns_reg : ndarray
        (H/shrink, W/shrink, n) float32, the channels of :func:`se_raw_channels`
        smoothed by ``conv_tri`` of radius ``chn_smooth/shrink`` (rounded when > 1;
        default 1): the regular features read at each patch pixel.
    chns_sim : ndarray
        The same smoothed with radius ``sim_smooth/shrink`` (default 4): the channels
        the self-similarity features difference at grid cells.

    Notes
    -----
    n = 13 for RGB (L, u, v; magnitude and ``n_orients`` histograms at scale 1; the same
    at scale 1/2), 11 for grey. L, u, v are in about [0, 1] (L/270, (u+88)/270,
    (v+134)/270); the magnitudes are gradients of those per pixel divided by their
    local mean (``conv_tri(M, norm_rad) + 0.01``); histogram channels are block means
    of that magnitude. We follow Dollár's MATLAB code; see the module docstring for
    where OpenCV's port differs and where we compute exactly what his mex approximates.
    """
    opts = _options(options)
    planes, nrm = _image_planes(image)
    chns = _raw_channels(planes, nrm, opts)
    shrink = int(opts.shrink)
    reg = _conv_tri_planes(chns, _smooth_radius(float(opts.chn_smooth), shrink))
    sim = _conv_tri_planes(chns, _smooth_radius(float(opts.sim_smooth), shrink))
    return _unplanes(reg, 3), _unplanes(sim, 3)
