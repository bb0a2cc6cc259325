"""The Pb boundary detectors of Martin, Fowlkes and Malik (PAMI 2004) and the second
moment matrix baseline, as the BSDS300 segbench MATLAB code computes them.

A Pb detector has three stages:

1. **Cues.** Oriented gradient fields at ``norient = 8`` orientations
   ``theta_i = i pi / 8``: for each pixel and orientation, the distance between the
   histograms of the two halves of a disc split along ``theta_i``. Brightness (BG:
   the grey value, or L* of CIELAB) and colour (CG: a*, b*) in 32 bins compared by
   ``cgmo.m``'s colour-similarity form; texture (TG: the texton label, 64 textons)
   compared by chi-squared (``tgso.m``). Radii are fractions of the image diagonal.
   Each field is smoothed by fitting, across the orientation, a parabola over an
   elliptical neighbourhood (``fitparab(tg, r, r/4, theta)``, the 'savgol' option).
2. **Combination.** A logistic regression on ``[1, cues]`` per orientation.
3. **Localization.** The max over orientations; each orientation's map fitted by a
   parabola (r = 2.5 px) and thinned by non-maximum suppression across it (``nonmax.m``)
   where it is the maximum; clipped to [0, 1]; the one-pixel border zeroed.

Sources read (never copied): D. Martin's ``pbBG.m``, ``pbCG.m``, ``pbTG.m``,
``pbBGTG.m``, ``pbCGTG.m``, ``detBG.m``, ``detBGTG.m``, ``detCGTG.m``, ``cgmo.m``,
``tgmo.m``, ``tgso.m``, ``fitparab.m``, ``savgol.m``, ``nonmax.m``, ``RGB2Lab.m``,
``pb2MM.m``. Orientation convention throughout: ``theta`` is the boundary's tangent,
in radians in [0, pi), measured from +x (the column, to the right) towards +y (the
row, down).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from os import PathLike
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import read_image, write_soft_map
from . import _half_disc as _hd
from . import _pb_kernels as _k
from ._gpb_spectral import oe_filter
from ._pb_textons import assign_textons, filter_responses, load_textons
from .edges import canny_soft, gradient_magnitude

__all__ = [
    "brightness_gradient",
    "color_gradient",
    "texture_gradient",
    "texton_map",
    "fit_parab",
    "pb_nonmax",
    "pb_bg",
    "pb_cg",
    "pb_tg",
    "pb_bgtg",
    "pb_cgtg",
    "pb_2mm",
    "pb_weights",
    "pb_cues",
    "oriented_pb",
    "localize",
    "histogram_gradient",
    "structure_tensor_cues",
    "detect",
    "detect_file",
    "DETECTORS",
    "WEIGHTED",
    "PB_DETECTORS",
    "WEIGHT_FILES",
    "read_weight_file",
]

NORIENT = 8
_NBINS = 32  # cgmo.m: bins per colour channel
_SIGMA_SIM = 0.1  # cgmo.m: width of the colour similarity, channel in [0, 1]
_GAMMA = 2.5  # cgmo.m: im .^ 2.5 before RGB2Lab
_AB_RANGE = (-73.0, 95.0)  # cgmo.m: a*, b* scaled from this range into [0, 1]
_NTEX = 64
_PARAB_R = 2.5  # pb*.m: the localization fit of the combined map

_DATA = Path(__file__).with_name("data")
#: Weight files: ``trained`` by tools/train_pb.py on BSDS500 train; ``published`` the
#: logistic fits printed in the 2003 MATLAB code.
WEIGHT_FILES = {
    "trained": _DATA / "pb_weights.json",
    "published": _DATA / "pb_weights_published.json",
}

#: Detector name -> the cues its logistic regression combines, in order.
PB_DETECTORS = {
    "pb-bg": ("bg",),
    "pb-cg": ("a", "b"),
    "pb-tg": ("tg",),
    "pb-bgtg": ("bg", "tg"),
    "pb-cgtg": ("L", "a", "b", "tg"),
    "2mm": ("sqrt_lmax", "sqrt_lmin"),
}


# ---------------------------------------------------------------------------------------
# images


def _image01(image) -> np.ndarray:
    """(H, W) or (H, W, 3) float64 in [0, 1] (uint8 /255, uint16 /65535, floats as
    they are and checked)."""
    img = np.asarray(image)
    if img.ndim == 3 and img.shape[2] == 4:
        img = img[..., :3]
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[..., 0]
    if img.ndim not in (2, 3) or (img.ndim == 3 and img.shape[2] != 3):
        raise InputError(f"image must be (H, W) or (H, W, 3), got shape {img.shape}")
    if img.shape[0] < 3 or img.shape[1] < 3:
        raise InputError(f"image must be at least 3x3, got {img.shape[:2]}")
    if img.dtype == np.uint8:
        return img / 255.0
    if img.dtype == np.uint16:
        return img / 65535.0
    if img.dtype == bool or not np.issubdtype(img.dtype, np.floating):
        raise InputError(
            f"image has unsupported type {img.dtype}; give uint8, uint16 "
            "or floats in [0, 1]"
        )
    img = img.astype(np.float64)
    if not np.isfinite(img).all() or img.min() < 0 or img.max() > 1:
        raise InputError("float image values must be finite and in [0, 1]")
    return img


def _grey(img: np.ndarray) -> np.ndarray:
    """MATLAB's ``rgb2gray`` (ITU-R BT.601 luma weights) of a [0, 1] image."""
    if img.ndim == 2:
        return img
    return img @ np.array([0.298936021293775, 0.587043074451121, 0.114020904255103])


def _lab01(img: np.ndarray) -> np.ndarray:
    """cgmo.m's colour space: ``RGB2Lab(im .^ 2.5)`` (BT.709 primaries, D65 white,
    the input taken as linear), L* / 100 and a*, b* mapped from [-73, 95] into [0, 1]
    and clipped. (H, W, 3) float64."""
    if img.ndim == 2:
        img = np.repeat(img[..., None], 3, axis=2)
    rgb = img**_GAMMA
    mat = np.array(
        [
            [0.412453, 0.357580, 0.180423],
            [0.212671, 0.715160, 0.072169],
            [0.019334, 0.119193, 0.950227],
        ]
    )
    xyz = rgb @ mat.T
    xyz /= np.array([0.950456, 1.0, 1.088754])
    t = 0.008856
    f = np.where(xyz > t, np.cbrt(xyz), 7.787 * xyz + 16.0 / 116.0)
    y = xyz[..., 1]
    lum = np.where(y > t, 116.0 * np.cbrt(y) - 16.0, 903.3 * y)
    lo, hi = _AB_RANGE
    out = np.empty(img.shape, np.float64)
    out[..., 0] = lum / 100.0
    out[..., 1] = np.clip((500.0 * (f[..., 0] - f[..., 1]) - lo) / (hi - lo), 0, 1)
    out[..., 2] = np.clip((200.0 * (f[..., 1] - f[..., 2]) - lo) / (hi - lo), 0, 1)
    return out


def _bins(v: np.ndarray, nbins: int) -> np.ndarray:
    """cgmo.m's binning ``max(1, ceil(v * nbins))``, 0-based: int32 in 0..nbins-1."""
    return np.clip(np.ceil(v * nbins) - 1, 0, nbins - 1).astype(np.int32)


def _diag(shape) -> float:
    return float(np.hypot(shape[0], shape[1]))


# ---------------------------------------------------------------------------------------
# half-disc histogram gradients


@lru_cache(maxsize=64)
def _half_disc_tables(radius_px: float, norient: int, pw: int):
    """The shared half-disc kernel's tables for tgso.m's disc and half discs
    (:func:`._half_disc.pb_slice_map`) in a padded map of row length ``pw``:
    (tables, disc pixel count, wr)."""
    offmap, count, wr = _hd.pb_slice_map(float(radius_px), int(norient))
    return _hd.slice_tables(offmap, pw, 2 * int(norient)), count, wr


@lru_cache(maxsize=8)
def _colour_similarity(nbins: int, sigma: float) -> np.ndarray:
    """cgmo.m's ``colorsim``: ``1 - exp(-(c_i - c_j)^2 / (2 sigma^2))`` over the bin
    centres ``c = (i + 1/2) / nbins`` of a [0, 1] channel."""
    c = (np.arange(nbins) + 0.5) / nbins
    return 1.0 - np.exp(-((c[:, None] - c[None, :]) ** 2) / (2.0 * sigma**2))


def histogram_gradient(
    labels, nbins: int, radius_px: float, *, norient: int = NORIENT, similarity=None
) -> np.ndarray:
    """Raw (unsmoothed) half-disc gradient of a label map at ``norient`` orientations.

    Parameters
    ----------
    labels : (H, W) int array
        Bin of every pixel, 0..nbins-1.
    nbins : int
    radius_px : float
        Disc radius in pixels (at least 1 is used).
    norient : int
        Orientations ``theta_i = i pi / norient``.
    similarity : (nbins, nbins) array, optional
        None: chi-squared ``0.5 sum (l - r)^2 / (l + r)``. Else the form
        ``d' S d`` with ``d = |l - r|`` (cgmo.m passes the colour similarity).

    Returns
    -------
    (norient, H, W) ndarray of float64
        ``l`` and ``r`` are the label histograms of the two half discs, each divided by
        half the number of disc pixels (so they sum to 1 inside the image); pixels
        outside the image count in neither half, as tgso.m's zero-padded convolutions.
    """
    lab = np.asarray(labels)
    if lab.ndim != 2 or not np.issubdtype(lab.dtype, np.integer):
        raise InputError("labels must be a 2-D integer array")
    if lab.size and (lab.min() < 0 or lab.max() >= nbins):
        raise InputError(f"labels must be in 0..{nbins - 1}")
    if int(norient) < 1:
        raise InputError(f"norient must be a positive integer, got {norient!r}")
    h, w = lab.shape
    wr = int(np.floor(max(1.0, float(radius_px))))
    tables, count, wr = _half_disc_tables(float(radius_px), int(norient), w + 2 * wr)
    padded = np.full((h + 2 * wr, w + 2 * wr), nbins, np.int32)
    padded[wr : wr + h, wr : wr + w] = lab
    sim = None
    if similarity is not None:
        sim = np.ascontiguousarray(similarity, dtype=np.float64)
        if sim.shape != (nbins, nbins):
            raise InputError(f"similarity must be ({nbins}, {nbins})")
    # one kernel with gPb's cues (in its count mode): exact counts, strict sums
    return _hd.count_gradient(padded, tables, wr, int(nbins), count, sim)


@lru_cache(maxsize=128)
def _parab_table(ra: float, rb: float, theta: float):
    """fitparab.m's support and interior weights: (du, dv, dist, wts, wr)."""
    ra, rb = max(1.5, ra), max(1.5, rb)
    wr = int(np.floor(max(ra, rb)))
    grid_u, grid_v = np.meshgrid(
        np.arange(-wr, wr + 1), np.arange(-wr, wr + 1), indexing="ij"
    )
    u, v = grid_u.ravel(), grid_v.ravel()  # u (the column) outer, as fitparab.m loops
    d = -u * np.sin(theta) + v * np.cos(theta)  # along the fit ("major axis")
    e = u * np.cos(theta) + v * np.sin(theta)  # along theta
    inside = d * d / ra**2 + e * e / rb**2 <= 1
    u, v, d = u[inside], v[inside], d[inside]
    powers = np.vander(d, 5, increasing=True).sum(axis=0)
    a = np.array([[powers[i + j] for j in range(3)] for i in range(3)])
    wts = np.linalg.solve(a, np.vstack([np.ones_like(d), d, d * d]))[0]
    return (
        u.astype(np.int64),
        v.astype(np.int64),
        d.astype(np.float64),
        np.ascontiguousarray(wts),
        wr,
    )


def fit_parab(z, ra: float, rb: float, theta: float) -> np.ndarray:
    """Fitted value of the local parabola across ``theta`` (fitparab.m, savgol.m).

    Parameters
    ----------
    z : (H, W) array
    ra, rb : float
        Radii in pixels (at least 1.5 used) of the elliptical neighbourhood: ``ra``
        along the fit direction (across theta), ``rb`` along theta.
    theta : float
        Orientation (radians) along which the fit is constant.

    Returns
    -------
    (H, W) ndarray of float64
        ``a`` of the least-squares fit ``z ~ a + b d + c d^2`` over the neighbourhood,
        ``d = -u sin(theta) + v cos(theta)`` the signed distance across theta of the
        point at column offset u, row offset v; near the border over the points inside
        the image only.
    """
    arr = np.ascontiguousarray(z, dtype=np.float64)
    if arr.ndim != 2:
        raise InputError("z must be 2-D")
    du, dv, dist, wts, wr = _parab_table(float(ra), float(rb), float(theta))
    return _k._fit_parab(arr, du, dv, dist, wts, wr)


def pb_nonmax(im, theta) -> np.ndarray:
    """Martin's non-maximum suppression (nonmax.m) across the tangent ``theta``
    (scalar or per pixel, radians): a pixel is zeroed when below the value linearly
    interpolated between the two 8-neighbours bracketing the normal, on either side."""
    arr = np.ascontiguousarray(im, dtype=np.float64)
    th = np.broadcast_to(np.asarray(theta, dtype=np.float64), arr.shape)
    return _k._nonmax(arr, np.ascontiguousarray(th))


def _thetas(norient: int) -> np.ndarray:
    return np.arange(norient) / norient * np.pi


def _smoothed(field: np.ndarray, radius_px: float, smooth: bool) -> np.ndarray:
    """tgso.m's 'savgol' smoothing: ``max(0, fitparab(g, r, r / 4, theta))``."""
    if not smooth:
        return field
    r = max(1.0, radius_px)
    th = _thetas(field.shape[0])
    return np.stack(
        [
            np.maximum(fit_parab(field[o], r, r / 4.0, th[o]), 0.0)
            for o in range(field.shape[0])
        ]
    )


def _check_radius(radius, n: int, what: str) -> tuple:
    r = np.atleast_1d(np.asarray(radius, dtype=np.float64))
    if r.size == 1:
        r = np.repeat(r, n)
    if r.size != n or not np.all(r > 0) or not np.all(np.isfinite(r)):
        raise InputError(
            f"{what} radius must be {n} positive numbers (fractions of "
            f"the image diagonal), got {radius!r}"
        )
    return tuple(float(x) for x in r)


def brightness_gradient(
    image,
    *,
    radius: float = 0.01,
    norient: int = NORIENT,
    distance: str = "similarity",
    smooth: bool = True,
):
    """Brightness gradient BG of the grey image (detBG.m).

    Parameters
    ----------
    image : (H, W) or (H, W, 3) array
        uint8, uint16 or floats in [0, 1]; colour is converted to grey by MATLAB's
        ``rgb2gray`` weights.
    radius : float, default 0.01
        Disc radius as a fraction of the image diagonal.
    norient : int, default 8
    distance : {'similarity', 'chi2'}
        'similarity' (cgmo.m): ``d' S d`` with ``d = |l - r|`` over 32 bins and
        ``S_ij = 1 - exp(-(c_i - c_j)^2 / (2 * 0.1^2))``; 'chi2': chi-squared.
    smooth : bool, default True
        Apply the 'savgol' parabola fit (``fitparab(bg, r, r/4, theta)``, clipped at 0).

    Returns
    -------
    bg : (norient, H, W) ndarray of float64
    theta : (norient,) ndarray
        The orientations ``i pi / norient`` (boundary tangents, radians).
    """
    img = _image01(image)
    (r,) = _check_radius(radius, 1, "brightness")
    rpx = r * _diag(img.shape)
    field = _cue(_grey(img), rpx, norient, distance)
    return _smoothed(field, rpx, smooth), _thetas(norient)


def _cue(channel01: np.ndarray, rpx: float, norient: int, distance: str) -> np.ndarray:
    if distance not in ("similarity", "chi2"):
        raise InputError(f"distance must be 'similarity' or 'chi2', not {distance!r}")
    sim = _colour_similarity(_NBINS, _SIGMA_SIM) if distance == "similarity" else None
    return histogram_gradient(
        _bins(channel01, _NBINS), _NBINS, rpx, norient=norient, similarity=sim
    )


def color_gradient(
    image,
    *,
    radius=(0.01, 0.02, 0.02),
    norient: int = NORIENT,
    distance: str = "similarity",
    smooth: bool = True,
):
    """Gradients of the L*, a* and b* channels (cgmo.m on an RGB image).

    Parameters
    ----------
    image : (H, W, 3) or (H, W) array
        RGB (grey is repeated over the channels); uint8, uint16 or floats in [0, 1].
    radius : float or 3 floats, default (0.01, 0.02, 0.02)
        Disc radii for L*, a*, b* as fractions of the image diagonal (detCGTG.m's).
    norient, distance, smooth
        As :func:`brightness_gradient`.

    Returns
    -------
    cg : (3, norient, H, W) ndarray of float64
        L*, a*, b* gradients. The channels are those of cgmo.m: ``RGB2Lab(im .^ 2.5)``,
        L* / 100 and a*, b* mapped from [-73, 95] into [0, 1], 32 bins each.
    theta : (norient,) ndarray
    """
    img = _image01(image)
    radii = _check_radius(radius, 3, "colour")
    lab = _lab01(img)
    d = _diag(img.shape)
    cg = np.stack(
        [
            _smoothed(
                _cue(lab[..., c], radii[c] * d, norient, distance), radii[c] * d, smooth
            )
            for c in range(3)
        ]
    )
    return cg, _thetas(norient)


def texton_map(image, *, textons: str | None = None) -> np.ndarray:
    """Texton label (0..63) of every pixel: the filter responses of the grey image
    (26 filters, see :func:`segbench.algorithms.filter_bank`) assigned to the nearest
    shipped texton centre. ``textons``: another ``.npz`` written by
    tools/train_textons.py. (H, W) int32."""
    fb, centres, _ = load_textons(textons)
    return assign_textons(filter_responses(_grey(_image01(image)), fb), centres)


def texture_gradient(
    image,
    *,
    radius: float = 0.02,
    norient: int = NORIENT,
    smooth: bool = True,
    textons: str | None = None,
):
    """Texture gradient TG (tgmo.m on the texton map of the grey image).

    Parameters
    ----------
    image : (H, W) or (H, W, 3) array
    radius : float, default 0.02
        Disc radius as a fraction of the image diagonal.
    norient, smooth
        As :func:`brightness_gradient`.
    textons : path, optional
        Texton file; default the shipped one (64 textons).

    Returns
    -------
    tg : (norient, H, W) ndarray of float64
        Chi-squared distance between the texton histograms of the half discs.
    theta : (norient,) ndarray
    """
    img = _image01(image)
    (r,) = _check_radius(radius, 1, "texture")
    rpx = r * _diag(img.shape)
    tmap = texton_map(img, textons=textons)
    _, centres, _ = load_textons(textons)
    field = histogram_gradient(tmap, centres.shape[0], rpx, norient=norient)
    return _smoothed(field, rpx, smooth), _thetas(norient)


# ---------------------------------------------------------------------------------------
# combination and localization


@lru_cache(maxsize=4)
def _weight_table(which: str) -> dict:
    path = WEIGHT_FILES[which]
    if not path.is_file():
        raise InputError(f"{which} Pb weights not found; run tools/train_pb.py", path)
    return json.loads(path.read_text())


def read_weight_file(path, detector: str) -> np.ndarray:
    """The effective weights of ``detector`` in a weights file of tools/train_pb.py.

    Parameters
    ----------
    path : path
        A JSON file as ``tools/train_pb.py --out`` writes it: per detector, ``beta`` on
        ``[1, cue / fstd]``, ``fstd`` (``fstd[0] = 1``) and the ``cues`` fitted.
    detector : str
        A key of :data:`PB_DETECTORS`.

    Returns
    -------
    ndarray
        ``beta / fstd``, the weights on the raw cues ``[1, cues]``.

    Raises
    ------
    InputError
        Naming the file, when it is missing, not such a JSON file, has no entry for the
        detector, or the entry's cues, lengths or values do not fit it (non-finite,
        ``fstd <= 0``).
    """
    path = Path(path)
    if detector not in PB_DETECTORS:
        raise InputError(f"unknown detector {detector!r}; one of {sorted(PB_DETECTORS)}")
    cues = list(PB_DETECTORS[detector])
    if not path.is_file():
        raise InputError(
            "no such weights file (--weights takes trained, published or a "
            "file written by tools/train_pb.py)",
            path,
        )
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(
            f"not a weights file of tools/train_pb.py (JSON): {exc}", path
        ) from None
    if not isinstance(table, dict):
        raise InputError(
            "not a weights file of tools/train_pb.py (a JSON object of detectors)", path
        )
    entry = table.get(detector)
    if not isinstance(entry, dict):
        have = sorted(
            k for k, v in table.items() if k in PB_DETECTORS and isinstance(v, dict)
        )
        raise InputError(
            f"no weights for {detector} (it has: {', '.join(have) or 'none'})", path
        )
    if "cues" in entry and list(entry["cues"]) != cues:
        raise InputError(
            f"its {detector} weights are for the cues {entry['cues']}, not "
            f"{detector}'s {cues}",
            path,
        )
    try:
        beta = np.asarray(entry["beta"], dtype=np.float64)
        fstd = np.asarray(entry["fstd"], dtype=np.float64)
    except (KeyError, TypeError, ValueError):
        raise InputError(
            f"its {detector} entry needs numeric lists 'beta' and 'fstd'", path
        ) from None
    n = len(cues) + 1
    if beta.shape != (n,) or fstd.shape != (n,):
        raise InputError(
            f"{detector} needs {n} values in 'beta' and in 'fstd' (the "
            f"intercept and {', '.join(cues)}), got {beta.size} and "
            f"{fstd.size}",
            path,
        )
    if not (np.isfinite(beta).all() and np.isfinite(fstd).all() and (fstd > 0).all()):
        raise InputError(f"its {detector} weights must be finite and 'fstd' positive", path)
    return beta / fstd


def pb_weights(detector: str, weights="trained") -> np.ndarray:
    """Logistic weights ``[b0, b1, ...]`` on the raw cues ``[1, cues]`` of a detector.

    Parameters
    ----------
    detector : str
        A key of :data:`PB_DETECTORS` ('pb-bg', 'pb-cg', 'pb-tg', 'pb-bgtg',
        'pb-cgtg', '2mm').
    weights : {'trained', 'published'}, path or array
        'trained': fitted by tools/train_pb.py on BSDS500 train (shipped);
        'published': the fits printed in the 2003 MATLAB ``pb*.m`` (``beta ./ fstd``;
        pbBGTG's greyscale-presentation fit); a weights file written by
        ``tools/train_pb.py --out`` (:func:`read_weight_file`); or the weights
        themselves.
    """
    if detector not in PB_DETECTORS:
        raise InputError(f"unknown detector {detector!r}; one of {sorted(PB_DETECTORS)}")
    n = len(PB_DETECTORS[detector]) + 1
    if isinstance(weights, PathLike) or (
        isinstance(weights, str) and weights not in WEIGHT_FILES
    ):
        if (
            isinstance(weights, str)
            and not weights.lower().endswith(".json")
            and not Path(weights).is_file()
        ):
            raise InputError(
                f"weights must be 'trained', 'published', a weights file "
                f"(.json) or an array, not {weights!r}"
            )
        beta = read_weight_file(weights, detector)
    elif not isinstance(weights, str):
        beta = np.asarray(weights, dtype=np.float64).ravel()
    else:
        table = _weight_table(weights)
        if detector not in table:
            raise InputError(f"no {weights} weights for {detector}")
        entry = table[detector]
        beta = np.asarray(entry["beta"], float) / np.asarray(entry["fstd"], float)
    if beta.size != n:
        raise InputError(f"{detector} needs {n} weights, got {beta.size}")
    if not np.isfinite(beta).all():
        bad = int((~np.isfinite(beta)).sum())
        raise InputError(
            f"{detector} needs finite weights; {bad} of its {n} are NaN or inf"
        )
    return beta


def oriented_pb(features, beta) -> np.ndarray:
    """Per-orientation logistic ``1 / (1 + exp(-(b0 + sum b_k f_k)))``.

    Parameters
    ----------
    features : (n_cues, norient, H, W) array
        The cues, as :func:`pb_cues` returns them.
    beta : (n_cues + 1,) array
        Weights on ``[1, cues]`` (:func:`pb_weights`).

    Returns
    -------
    (norient, H, W) ndarray of float64
        The oriented probability of boundary, in (0, 1).
    """
    f = np.asarray(features, dtype=np.float64)
    z = beta[0] + np.tensordot(beta[1:], f, axes=(0, 0))
    return 1.0 / (1.0 + np.exp(-z))


def localize(pball: np.ndarray, thetas: np.ndarray):
    """pb*.m's localization of the per-orientation maps.

    Parameters
    ----------
    pball : (norient, H, W) array
        Oriented probability of boundary (:func:`oriented_pb`).
    thetas : (norient,) array
        The orientation of each map (radians, boundary tangents).

    Returns
    -------
    pb : (H, W) ndarray of float64
        At each pixel the orientation of the largest value wins (the first at ties);
        that orientation's map, fitted by a parabola across it over a disc of 2.5 px
        and clipped at 0, then thinned by :func:`pb_nonmax`, gives the value; clipped
        to [0, 1], the one-pixel border set to 0.
    theta : (H, W) ndarray of float64
        The winning orientation.
    """
    norient, h, w = pball.shape
    maxo = pball.argmax(axis=0)
    pb = np.zeros((h, w))
    theta = np.zeros((h, w))
    for o in range(norient):
        mask = maxo == o
        if not mask.any():
            continue
        a = fit_parab(pball[o], _PARAB_R, _PARAB_R, thetas[o])
        thin = pb_nonmax(np.maximum(a, 0.0), thetas[o])
        pb = np.where(mask, np.maximum(pb, thin), pb)
        theta[mask] = thetas[o]
    pb = np.clip(pb, 0.0, 1.0)
    pb[0, :] = pb[-1, :] = 0.0
    pb[:, 0] = pb[:, -1] = 0.0
    return pb, theta


def pb_cues(image, detector: str, *, distance: str = "similarity", textons=None):
    """The smoothed oriented cues a Pb detector combines.

    Parameters
    ----------
    image : (H, W) or (H, W, 3) array
    detector : str
        'pb-bg', 'pb-cg', 'pb-tg', 'pb-bgtg' or 'pb-cgtg'.
    distance, textons
        As the detectors take them.

    Returns
    -------
    features : (n_cues, norient, H, W) ndarray of float64
        In :data:`PB_DETECTORS` order ('bg', 'L', 'a', 'b', 'tg' as the detector
        uses them), each >= 0.
    theta : (norient,) ndarray
        The orientations.

    Notes
    -----
    For training (tools/train_pb.py) and inspection; the detectors call it, so
    ``localize(oriented_pb(features, beta), theta)`` is exactly the detector.
    """
    img = _image01(image)
    names = PB_DETECTORS.get(detector)
    if names is None or detector == "2mm":
        raise InputError(
            f"pb_cues needs a Pb detector, one of "
            f"{sorted(set(PB_DETECTORS) - {'2mm'})}; got {detector!r}"
        )
    out, theta = {}, _thetas(NORIENT)
    if "bg" in names:
        out["bg"] = brightness_gradient(img, radius=0.01, distance=distance)[0]
    if "tg" in names:
        out["tg"] = texture_gradient(img, radius=0.02, textons=textons)[0]
    if "a" in names:
        radii = (0.01, 0.02, 0.02)
        d = _diag(img.shape)
        lab = _lab01(img)
        for c, name in enumerate(("L", "a", "b")):
            if name in names:
                out[name] = _smoothed(
                    _cue(lab[..., c], radii[c] * d, NORIENT, distance), radii[c] * d, True
                )
    return np.stack([out[n] for n in names]), theta


def _pb(image, detector, weights, distance, textons):
    img = _image01(image)  # the image is checked first, then the weights
    beta = pb_weights(detector, weights)
    feats, thetas = pb_cues(img, detector, distance=distance, textons=textons)
    return localize(oriented_pb(feats, beta), thetas)


_DET_DOC = """Probability of boundary from {what} ({src}).

    Parameters
    ----------
    image : (H, W) or (H, W, 3) array
        uint8, uint16 or floats in [0, 1].{grey}
    weights : {{'trained', 'published'}} or array, default 'trained'
        Logistic weights on ``[1, {cues}]``: fitted on BSDS500 train by
        tools/train_pb.py (shipped), the fit printed in {src}, or your own
        (see :func:`pb_weights`).
    distance : {{'similarity', 'chi2'}}, default 'similarity'
        Histogram distance of the brightness and colour cues (see
        :func:`brightness_gradient`); the texture cue is always chi-squared.
    textons : path, optional
        Texton file (default: the shipped 64 textons).

    Returns
    -------
    pb : (H, W) ndarray of float64
        Thin soft boundary map in [0, 1], zero on the one-pixel border.
    theta : (H, W) ndarray of float64
        Boundary tangent orientation in radians, one of ``i pi / 8``, measured from +x
        (the column) towards +y (the row, down).

    Notes
    -----
    Cue radii (fractions of the diagonal): {radii}. See the module docstring for the
    three stages and ``docs/detectors.md`` for the scores.
    """


def pb_bg(image, *, weights="trained", distance: str = "similarity", textons=None):
    return _pb(image, "pb-bg", weights, distance, textons)


def pb_cg(image, *, weights="trained", distance: str = "similarity", textons=None):
    return _pb(image, "pb-cg", weights, distance, textons)


def pb_tg(image, *, weights="trained", distance: str = "similarity", textons=None):
    return _pb(image, "pb-tg", weights, distance, textons)


def pb_bgtg(image, *, weights="trained", distance: str = "similarity", textons=None):
    return _pb(image, "pb-bgtg", weights, distance, textons)


def pb_cgtg(image, *, weights="trained", distance: str = "similarity", textons=None):
    return _pb(image, "pb-cgtg", weights, distance, textons)


pb_bg.__doc__ = _DET_DOC.format(
    what="the brightness gradient",
    src="pbBG.m",
    grey=" Colour is converted to grey.",
    cues="bg",
    radii="BG 0.01",
)
pb_cg.__doc__ = _DET_DOC.format(
    what="the a* and b* colour gradients",
    src="pbCG.m",
    grey="",
    cues="a, b",
    radii="a* 0.02, b* 0.02",
)
pb_tg.__doc__ = _DET_DOC.format(
    what="the texture gradient",
    src="pbTG.m",
    grey=" Textons are computed on the grey image.",
    cues="tg",
    radii="TG 0.02",
)
pb_bgtg.__doc__ = _DET_DOC.format(
    what="brightness and texture gradients (greyscale Pb)",
    src="pbBGTG.m",
    grey=" Colour is converted to grey (greyscale Pb).",
    cues="bg, tg",
    radii="BG 0.01, TG 0.02; published weights: the fit to greyscale segmentations",
)
pb_cgtg.__doc__ = _DET_DOC.format(
    what="brightness, colour and texture gradients (colour Pb)",
    src="pbCGTG.m",
    grey="",
    cues="L, a, b, tg",
    radii="L* 0.01, a* 0.02, b* 0.02, TG 0.02",
)


# ---------------------------------------------------------------------------------------
# second moment matrix


def structure_tensor_cues(image, *, sigma: float = 2.0, sigma_d: float = 1.0):
    """Eigenvalues and orientation of the spatially averaged second moment matrix.

    Returns (sqrt of the larger eigenvalue, sqrt of the smaller, tangent theta), each
    (H, W) float64: the outer products of the grey image's Gaussian-derivative
    gradient (scale ``sigma_d`` px, image in [0, 1]) averaged by a Gaussian of
    ``sigma`` px; theta is perpendicular to the dominant eigenvector, in [0, pi).
    """
    from scipy import ndimage

    g = _grey(_image01(image))
    gx = ndimage.gaussian_filter(g, sigma_d, order=(0, 1), mode="reflect")
    gy = ndimage.gaussian_filter(g, sigma_d, order=(1, 0), mode="reflect")
    jxx = ndimage.gaussian_filter(gx * gx, sigma, mode="reflect")
    jyy = ndimage.gaussian_filter(gy * gy, sigma, mode="reflect")
    jxy = ndimage.gaussian_filter(gx * gy, sigma, mode="reflect")
    half = 0.5 * (jxx + jyy)
    root = np.sqrt(0.25 * (jxx - jyy) ** 2 + jxy * jxy)
    lmax = half + root
    lmin = np.maximum(half - root, 0.0)
    normal = 0.5 * np.arctan2(2.0 * jxy, jxx - jyy)
    return np.sqrt(lmax), np.sqrt(lmin), np.mod(normal + np.pi / 2.0, np.pi)


def pb_2mm(image, *, sigma: float = 2.0, weights="trained"):
    """Probability of boundary from the second moment matrix (after pb2MM.m).

    Parameters
    ----------
    image : (H, W) or (H, W, 3) array
        Converted to grey.
    sigma : float, default 2.0
        Averaging scale in pixels (the gradient is taken at 1 px).
    weights : 'trained' or array
        Logistic weights on ``[1, sqrt(l_max), sqrt(l_min)]``; 'trained' (fitted on
        BSDS500 train by tools/train_pb.py, for sigma = 2).

    Returns
    -------
    pb, theta : (H, W) ndarray of float64
        Soft map thinned by :func:`pb_nonmax` across the tangent ``theta``.

    Notes
    -----
    pb2MM.m's features come from ``det2MM.m``, which is not in the code index: the
    gradient scale and the eigenvalue order here are our own reading of "spatially
    averaged second moment matrix", so pb2MM.m's printed weights do not apply and
    ``weights='published'`` is refused.
    """
    if isinstance(weights, str) and weights == "published":
        raise InputError(
            "2mm has no published weights that fit these features "
            "(det2MM.m is not available); use weights='trained'"
        )
    if not sigma > 0:
        raise InputError(f"sigma must be positive, got {sigma}")
    a, b, theta = structure_tensor_cues(image, sigma=sigma)
    beta = pb_weights("2mm", weights)
    pb = 1.0 / (1.0 + np.exp(-(beta[0] + beta[1] * a + beta[2] * b)))
    return pb_nonmax(pb, theta), theta


#: pbGM.m's logistic fits on ``[1, m]`` (m: the gradient magnitude of the grey image in
#: [0, 1]), by derivative scale sigma in px (trainGM.m; printed in pbGM.m).
PB_GM_WEIGHTS = {
    1: (-2.6828268, 16.251270),
    2: (-2.9906198, 22.454909),
    4: (-3.2040961, 25.838634),
    8: (-2.9314518, 29.306847),
    16: (-2.4502722, 34.139686),
}


def gaussian_derivative_gradient(image, *, sigma: float = 2.0):
    """Gradient magnitude and edge orientation of the grey image (``detGM.m``).

    The x and y derivatives are the responses (``fbRun``: reflected borders, true
    convolution) to an oriented Gaussian first-derivative filter (``oeFilter``, sigma
    ``max(0.5, sigma)`` px on both axes, support 3 sigma, at theta = pi/2: a derivative
    along the columns, x) and to its transpose (y). The filter is built as oeFilter.m
    builds it (:func:`segbench.algorithms._gpb_spectral.oe_filter`, whose sampling grid
    follows MATLAB's: meshgrid's x indexes the filter's rows).

    Returns
    -------
    m, theta : (H, W) float64
        ``sqrt(dx^2 + dy^2)`` and the edge tangent ``mod(atan2(dy, dx) + pi/2, pi)``.
    """

    if not sigma > 0:
        raise InputError(f"sigma must be positive, got {sigma}")
    grey = _grey(_image01(image))
    f = oe_filter(max(0.5, float(sigma)), 3.0, np.pi / 2, 1)
    resp = filter_responses(grey, [f, np.ascontiguousarray(f.T)])
    dx, dy = resp[..., 0], resp[..., 1]
    return np.hypot(dx, dy), np.mod(np.arctan2(dy, dx) + np.pi / 2, np.pi)


def pb_gm(image, *, sigma: float = 2.0):
    """Probability of boundary from the grey image's Gaussian-derivative gradient
    magnitude: ``pbGM.m`` of the BSDS300 code, with its published logistic fit.

    This is the 2004 paper's Gaussian-derivative baseline ("GD": F 0.58 under its
    protocol, ``--protocol martin2004``), not segbench's own colour gradient ``gm``.

    Parameters
    ----------
    image : (H, W) or (H, W, 3) array
        Converted to grey (MATLAB ``rgb2gray``).
    sigma : {1, 2, 4, 8, 16}, default 2
        Derivative scale in px; pbGM.m has fitted weights for these only.

    Returns
    -------
    pb, theta : (H, W) ndarray of float64
        The logistic of the magnitude, thinned by Martin's ``nonmax`` across the
        tangent ``theta``.
    """
    if sigma not in PB_GM_WEIGHTS:
        raise InputError(
            f"pbGM has fitted weights for sigma in "
            f"{', '.join(map(str, PB_GM_WEIGHTS))} px only, not {sigma}"
        )
    m, theta = gaussian_derivative_gradient(image, sigma=sigma)
    b0, b1 = PB_GM_WEIGHTS[int(sigma)]
    pb = 1.0 / (1.0 + np.exp(-(b0 + b1 * m)))
    return pb_nonmax(pb, theta), theta


# ---------------------------------------------------------------------------------------
# one entry point for the command line

#: Detectors of ``segbench detect``: the Pb family, the second moment matrix, and the
#: two baselines of :mod:`.edges` (gradient magnitude, Canny).
DETECTORS = ("pb-cgtg", "pb-bgtg", "pb-bg", "pb-cg", "pb-tg", "2mm", "pb-gm", "gm", "canny")
#: Detectors that take ``weights`` ('trained' or 'published'; 2mm 'trained' only).
WEIGHTED = ("pb-cgtg", "pb-bgtg", "pb-bg", "pb-cg", "pb-tg", "2mm")


def detect(image, detector: str, *, weights="trained") -> np.ndarray:
    """Soft boundary map (H, W) float64 in [0, 1] of one of :data:`DETECTORS`.

    'gm' is :func:`segbench.algorithms.gradient_magnitude` and 'canny'
    :func:`segbench.algorithms.canny_soft`, with their defaults (``weights`` does not
    apply to them); the others are the functions of this module.
    """
    if detector not in DETECTORS:
        raise InputError(f"unknown detector {detector!r}; one of {', '.join(DETECTORS)}")
    if detector in ("gm", "canny"):
        return (gradient_magnitude if detector == "gm" else canny_soft)(image)
    if detector == "pb-gm":
        return pb_gm(image)[0]  # pbGM.m's published fit, no other weights
    detectors: dict[str, Callable[..., tuple]] = {
        "pb-cgtg": pb_cgtg,
        "pb-bgtg": pb_bgtg,
        "pb-bg": pb_bg,
        "pb-cg": pb_cg,
        "pb-tg": pb_tg,
        "2mm": pb_2mm,
    }
    return detectors[detector](image, weights=weights)[0]


def detect_file(src, dst, detector: str, *, weights="trained"):
    """Read an image (:func:`segbench.io.read_image`), run :func:`detect`, write the
    map as a 16-bit PNG (:func:`segbench.io.write_soft_map`); errors name ``src``."""

    img = read_image(src)
    try:
        pb = detect(img, detector, weights=weights)
    except InputError as e:
        if e.path is None:
            raise InputError(e.problem, src) from None
        raise
    return write_soft_map(dst, pb, bits=16)
