"""The texton stage of Pb: the oriented filter bank, its responses, k-means textons
and the assignment of each pixel to its nearest texton.

Follows the BSDS300 segbench MATLAB code by D. Martin (read, never copied):
``Filters/fbCreate.m``, ``oeFilter.m``, ``csFilter.m``, ``fbRun.m``, ``padReflect.m``,
``Textons/unitex.m``, ``computeTextons.m``, ``assignTextons.m``, ``kmeansML.m``.
The texton centres shipped in ``data/pb_textons.npz`` were computed by
``tools/train_textons.py`` from the BSDS500 train images (= BSDS300 train).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import InputError

__all__ = [
    "filter_bank",
    "oe_filter",
    "cs_filter",
    "filter_responses",
    "assign_textons",
    "kmeans",
    "load_textons",
    "TEXTON_FILE",
]

#: The shipped texton centres and the parameters of the filter bank they belong to.
TEXTON_FILE = Path(__file__).with_name("data") / "pb_textons.npz"

_SUPPORT = 3  # filters extend +- 3 sigma (fbCreate.m)


def _dawson_profile2(v, sigma):
    """Hilbert transform of ``exp(-v^2 / 2 s^2) (v^2 / s^2 - 1)`` in closed form.

    The profile is ``s^2 g''`` with ``g`` the Gaussian, and the Hilbert transform
    commutes with derivatives: with ``t = v / (s sqrt 2)`` and Dawson's integral
    ``F`` (``H[exp(-t^2)] = 2 F(t) / sqrt(pi)``) it is ``((4 t^2 - 2) F(t) - 2 t) /
    sqrt(pi)``. (oeFilter.m takes the discrete ``imag(hilbert(.))`` of the sampled
    profile instead, which differs from this by its sampling and periodic wrap.)
    """
    from scipy.special import dawsn

    t = v / (sigma * np.sqrt(2.0))
    return ((4.0 * t * t - 2.0) * dawsn(t) - 2.0 * t) / np.sqrt(np.pi)


def _profile(v, sigma, deriv, hilbert):
    g = np.exp(-v * v / (2.0 * sigma * sigma))
    if hilbert:
        if deriv != 2:
            raise InputError("the Hilbert pair is implemented for deriv=2 only")
        return _dawson_profile2(v, sigma)
    if deriv == 1:
        return g * (-v / sigma**2)
    if deriv == 2:
        return g * (v * v / sigma**2 - 1.0)
    return g


def oe_filter(
    sigma,
    theta: float = 0.0,
    *,
    deriv: int = 0,
    hilbert: bool = False,
    support: float = _SUPPORT,
    rate: int | None = None,
) -> np.ndarray:
    """An oriented Gaussian (derivative) filter, as ``oeFilter.m`` defines it.

    Parameters
    ----------
    sigma : float or (2,) floats
        ``(sigma_x, sigma_y)`` in pixels: a Gaussian of ``sigma_x`` along the filter's
        long axis times, across it, a Gaussian of ``sigma_y`` or its ``deriv``-th
        derivative (optionally Hilbert transformed). A scalar means both.
    theta : float
        Orientation in radians (oeFilter's convention: at ``theta = 0`` the long axis
        runs along the rows' direction y, the derivative along x).
    deriv : {0, 1, 2}
        Derivative order across the long axis.
    hilbert : bool
        Hilbert transform of the profile across (the odd partner of ``deriv=2``).
    support : float
        Half-size in units of the larger sigma: the filter is ``2 ceil(support *
        max(sigma)) + 1`` pixels square.
    rate : int, optional
        Sub-samples per pixel along each axis; default oeFilter's
        ``min(10, max(1, 1000 // size))``.

    Returns
    -------
    (n, n) ndarray of float64
        The mean of the continuous function over ``rate x rate`` sub-pixel points of
        each pixel; zero mean if ``deriv > 0``; scaled to unit L1 norm.

    Notes
    -----
    The sub-sample points are oeFilter.m's, but the function is evaluated exactly at
    each of them (oeFilter.m reads it from a finer 1-D table by nearest neighbour) and
    the Hilbert transform is the closed form of the continuous one (see
    :func:`_dawson_profile2`). The row is y (down), the column x.
    """
    sx, sy = (float(sigma), float(sigma)) if np.ndim(sigma) == 0 else map(float, sigma)
    if deriv not in (0, 1, 2):
        raise InputError(f"deriv must be 0, 1 or 2, not {deriv!r}")
    hsz = int(np.ceil(support * max(sx, sy)))
    sz = 2 * hsz + 1
    if rate is None:
        rate = min(10, max(1, 1000 // sz))
    sub = (np.arange(rate) + 0.5) / rate - 0.5  # sub-sample offsets within a pixel
    c = np.arange(-hsz, hsz + 1, dtype=np.float64)
    pts = (c[:, None] + sub[None, :]).ravel()  # all sample coordinates along one axis
    gy, gx = np.meshgrid(pts, pts, indexing="ij")  # rows (y), columns (x)
    su = gx * np.sin(theta) + gy * np.cos(theta)  # along the long axis
    sv = gx * np.cos(theta) - gy * np.sin(theta)  # across
    f = np.exp(-su * su / (2.0 * sx * sx)) * _profile(sv, sy, deriv, hilbert)
    f = f.reshape(sz, rate, sz, rate).mean(axis=(1, 3))
    if deriv > 0 or hilbert:
        f = f - f.mean()
    s = np.abs(f).sum()
    return f / s if s > 0 else f


def cs_filter(
    sigma_inner: float, sigma_outer: float, *, support: float = _SUPPORT
) -> np.ndarray:
    """Centre-surround filter (``csFilter.m``): the difference of two unit-sum
    Gaussians of ``sigma_outer`` and ``sigma_inner`` pixels on a common square support
    (``support`` times the larger sigma), made zero mean and unit L1 norm."""
    f1 = oe_filter(sigma_inner, support=support * max(1.0, sigma_outer / sigma_inner))
    f2 = oe_filter(sigma_outer, support=support * max(1.0, sigma_inner / sigma_outer))
    f = f1 - f2
    f = f - f.mean()
    return f / np.abs(f).sum()


def filter_bank(
    n_orient: int = 6,
    start_sigma: float = 1.0,
    n_scales: int = 2,
    scaling: float = np.sqrt(2.0),
    elong: float = 2.0,
    center_surround: bool = True,
) -> list[np.ndarray]:
    """The texton filter bank of Pb (``fbCreate.m``).

    Parameters
    ----------
    n_orient, start_sigma, n_scales, scaling, elong
        For each scale ``sigma = start_sigma * scaling ** s`` and each orientation
        ``theta = i pi / n_orient``: the even filter (second derivative of a Gaussian,
        ``sigma * (elong, 1)``) and its odd Hilbert partner. Pb's defaults: 6
        orientations, sigma 1 and sqrt(2) pixels, elongation 2.
    center_surround : bool, default True
        Add one centre-surround filter per scale (``csFilter(sigma * [3 1])``).

    Returns
    -------
    list of (n, n) ndarray
        Per scale: even, odd for each orientation, then the centre-surround filter
        (26 filters with the defaults).

    Notes
    -----
    The released fbCreate.m has the centre-surround line commented out (24 filters);
    the Pb paper's filter bank and ``../shared/reference`` include it, and so does the
    default here. ``center_surround=False`` gives the released code's bank.
    """
    fb = []
    for s in range(n_scales):
        sigma = start_sigma * scaling**s
        for i in range(n_orient):
            theta = i / n_orient * np.pi
            fb.append(oe_filter((sigma * elong, sigma), theta, deriv=2))
            fb.append(oe_filter((sigma * elong, sigma), theta, deriv=2, hilbert=True))
        if center_surround:
            fb.append(cs_filter(3.0 * sigma, sigma))
    return fb


def filter_responses(grey: np.ndarray, fb) -> np.ndarray:
    """Responses of a grey image to every filter (``fbRun.m``), as (H, W, n) float64.

    The image is padded by reflection (edge pixels repeated, as padReflect.m) by half
    the largest filter, convolved (a true convolution, as conv2) through one FFT, and
    cropped back.
    """
    from scipy import fft

    img = np.asarray(grey, dtype=np.float64)
    h, w = img.shape
    r = max(f.shape[0] for f in fb) // 2
    pad = np.pad(img, r, mode="symmetric")
    ph, pw = pad.shape
    shape = (
        fft.next_fast_len(ph + 2 * r, real=True),
        fft.next_fast_len(pw + 2 * r, real=True),
    )
    spec = fft.rfft2(pad, shape)
    out = np.empty((h, w, len(fb)), np.float64)
    for i, (f, fspec) in enumerate(zip(fb, _filter_spectra(fb, shape))):
        k = f.shape[0] // 2
        full = fft.irfft2(spec * fspec, shape)
        # 'same' convolution: output (y, x) of the padded image sits at (y + k, x + k)
        out[..., i] = full[k + r : k + r + h, k + r : k + r + w]
    return out


_SPECTRA: dict = {}
_SPECTRA_KEEP = 2  # image shapes kept (BSDS: landscape and portrait), 42 MB each


def _filter_spectra(fb, shape) -> list:
    """The filters' FFTs at ``shape`` (``rfft2(f, shape)``), kept for the last two
    (bank, shape) pairs: they do not depend on the image, and computing them took a
    third of :func:`filter_responses`. The same arrays as computed afresh."""
    import hashlib

    from scipy import fft

    digest = hashlib.sha1()
    for f in fb:
        a = np.ascontiguousarray(f, dtype=np.float64)
        digest.update(repr(a.shape).encode())
        digest.update(a.tobytes())
    key = (tuple(shape), digest.hexdigest())
    hit = _SPECTRA.pop(key, None)
    if hit is None:
        hit = [fft.rfft2(f, shape) for f in fb]
        while len(_SPECTRA) >= _SPECTRA_KEEP:
            _SPECTRA.pop(next(iter(_SPECTRA)))
    _SPECTRA[key] = hit  # most recent last
    return hit


def assign_textons(responses: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Index of the nearest centre (squared Euclidean distance) of every response
    vector (``assignTextons.m``); ties go to the lower index. (H, W) int32."""
    h, w, d = responses.shape
    x = responses.reshape(-1, d)
    c = np.asarray(centres, dtype=np.float64)
    cc = 0.5 * (c * c).sum(axis=1)
    out = np.empty(x.shape[0], np.int32)
    step = 8192  # blocks that stay in cache
    for i in range(0, x.shape[0], step):
        # |x - c|^2 / 2 - |x|^2 / 2, whose argmin is the same
        out[i : i + step] = (cc - x[i : i + step] @ c.T).argmin(axis=1)
    return out.reshape(h, w)


def kmeans(
    data: np.ndarray,
    k: int,
    *,
    seed: int = 0,
    max_iter: int = 30,
    rate: int = 3,
    min_n: int = 50,
) -> np.ndarray:
    """Multi-level k-means (``kmeansML.m``): the means start from k-means of a random
    third of the data (recursively, down to fewer than ``max(k, min_n)`` points, which
    start from random points), then ``max_iter`` Lloyd iterations. An empty cluster is
    re-seeded at the point farthest from its mean (kmeansML.m re-runs instead).
    Seeded, so deterministic. Returns (k, d) centres."""
    rng = np.random.default_rng(seed)
    return _kmeans(np.asarray(data, dtype=np.float64), k, rng, max_iter, rate, min_n)


def _kmeans(data, k, rng, max_iter, rate, min_n):
    n = data.shape[0]
    perm = rng.permutation(n)
    coarse = round(n / rate)
    if coarse < k or coarse < min_n:
        means = data[perm[:k]].copy()
    else:
        means = _kmeans(data[perm[:coarse]], k, rng, max_iter, rate, min_n)
    sq = (data * data).sum(axis=1)
    for _ in range(max_iter):
        d2 = sq[:, None] - 2.0 * data @ means.T + (means * means).sum(axis=1)[None, :]
        member = d2.argmin(axis=1)
        counts = np.bincount(member, minlength=k)
        sums = np.zeros_like(means)
        np.add.at(sums, member, data)
        new = sums / np.maximum(counts, 1)[:, None]
        empty = np.flatnonzero(counts == 0)
        if empty.size:  # re-seed each at a distinct point, farthest from its centre first
            far = np.argsort(-d2[np.arange(n), member], kind="stable")[: empty.size]
            new[empty] = data[far]
        if np.array_equal(new, means):
            break
        means = new
    return means


@lru_cache(maxsize=4)
def load_textons(path: str | None = None):
    """(filter bank, centres, parameters) from the shipped texton file (or ``path``)."""
    p = Path(path) if path else TEXTON_FILE
    if not p.is_file():
        raise InputError("texton file not found; run tools/train_textons.py", p)
    with np.load(p, allow_pickle=False) as z:
        centres = z["centres"].astype(np.float64)
        params = json.loads(str(z["params"]))
    fb = filter_bank(**params["filter_bank"])
    if centres.shape[1] != len(fb):
        raise InputError(
            f"texton centres have {centres.shape[1]} dimensions but the "
            f"filter bank has {len(fb)} filters",
            p,
        )
    return fb, centres, params
