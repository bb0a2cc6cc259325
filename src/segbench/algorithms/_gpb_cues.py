"""gPb's local cues (mPb, Arbelaez, Maire, Fowlkes and Malik, PAMI 2011), as BSR's
``det_mPb`` / ``mex_pb_parts_final_selected`` and ``multiscalePb.m`` compute them.

Twelve oriented cue stacks: brightness (bg, L* in 25 bins) at radii 3, 5, 10 px; colour
(cga, cgb: a*, b* in 25 bins) and texture (tg: per-image textons, 64 k-means centres of
34 filter responses) at radii 5, 10, 20 px. Each is BSR's 16-slice histogram gradient:
a disc split into 16 wedges, each wedge's label histogram (Gaussian-smoothed over the
bins for bg and cg) L1-normalised on its own, the 8 wedges on either side of a line
summed, chi-squared between the two sums, for 8 lines. Then each orientation map is
smoothed by a least-squares parabola fitted across the boundary over an ellipse of the
cue's own radius (``fitparab``).

Everything is computed on the image mirrored by 30 px (edge pixel repeated), as BSR,
and cropped back to H x W.

Orientation convention (as :mod:`._pb`): an oriented stack is (8, H, W); channel k is
the boundary whose tangent points at ``k pi / 8`` radians from +x (the column, right)
towards +y (the row, down). BSR's MATLAB channel j holds our channel
``k = (4 - (j - 1)) mod 8``; see :data:`BSR_CHANNEL`.

Sources read (never copied): BSR ``grouping/lib/multiscalePb.m``, ``fitparab.m``,
``source/savgol/savgol_border.cpp``, ``source/gpb_src/src/math/libraries/lib_image.cc``
(colour conversion, quantisation, mirroring, filters, textons, ``hist_gradient_2D``),
``mex_pb_parts_final_selected.cc`` and the k-means clusterer headers.
"""

from __future__ import annotations

import math
import time
from functools import lru_cache

import numpy as np

from ..errors import InputError
from . import _gpb_cue_kernels as _k
from . import _half_disc as _hd
from . import _pb_kernels as _pbk
from ._pb import _parab_table

__all__ = [
    "CUE_NAMES",
    "CUE_RADII",
    "BSR_CHANNEL",
    "BORDER",
    "TEXTON_SEED",
    "BSR_MT64_KEY",
    "bsr_uniform",
    "bsr_randperm",
    "lab_bins",
    "texton_filters",
    "texton_responses",
    "textons",
    "slice_map",
    "slice_gradient",
    "smooth_cue",
    "local_cues",
    "local_cue_sums",
]

NORIENT = 8
BORDER = 30  # mex_pb_parts_final_selected.cc: mirrored border, px
_NBINS = 25  # bins of L*, a*, b*
_GAMMA = 2.5  # power law before RGB -> XYZ
_AB_RANGE = (-73.0, 95.0)  # a*, b* mapped from this range into [0, 1]
_SIGMA_BG = 0.1 * _NBINS  # histogram smoothing, in bins (2.5 -> 17 taps)
_SIGMA_CG = 0.05 * _NBINS  # (1.25 -> 9 taps)
_TEX_SIGMAS = (2.0, 2.0 * math.sqrt(2.0))
_NTEX = 64
_KMEANS_ITER = 10
_KMEANS_SAMPLE = 0.10
#: Default ``seed`` of :func:`textons`: None, BSR's own fixed MT19937-64 stream
#: (an integer selects the earlier numpy-drawn variant).
TEXTON_SEED = None

#: The 12 cues in BSR's (and the mPb weights') order: (cue, radius in px).
CUE_NAMES = ("bg", "bg", "bg", "cga", "cga", "cga", "cgb", "cgb", "cgb", "tg", "tg", "tg")
CUE_RADII = (3, 5, 10, 5, 10, 20, 5, 10, 20, 5, 10, 20)
#: Our channel k -> BSR's 0-based MATLAB channel j - 1 = (4 - k) mod 8 (an involution).
BSR_CHANNEL = tuple((4 - k) % NORIENT for k in range(NORIENT))
#: multiscalePb.m's ``gtheta``, 4-decimal literals of pi/2 - (j-1) pi/8, by BSR channel;
#: :func:`smooth_cue` uses them (not exact multiples of pi/8) so that the ellipse
#: supports, whose boundary points are decided by rounding, are BSR's.
_GTHETA = (1.5708, 1.1781, 0.7854, 0.3927, 0.0, 2.7489, 2.3562, 1.9635)


# ---------------------------------------------------------------------------------------
# input and colour


def _image01(image) -> np.ndarray:
    """(H, W, 3) float64 in [0, 1] from an (H, W, 3) or (H, W) uint8 image (grey is
    copied into the three channels, as multiscalePb.m does)."""
    img = np.asarray(image)
    if img.dtype != np.uint8:
        raise InputError(f"image must be uint8 (BSR divides by 255), got {img.dtype}")
    if img.ndim == 2:
        img = np.repeat(img[..., None], 3, axis=2)
    if img.ndim != 3 or img.shape[2] != 3:
        raise InputError(f"image must be (H, W, 3) or (H, W), got shape {img.shape}")
    if min(img.shape[:2]) <= BORDER:
        raise InputError(
            f"image must be at least {BORDER + 1} px on each side (the "
            f"{BORDER} px mirrored border needs it), got {img.shape[:2]}"
        )
    return img / 255.0


def _mirror(a: np.ndarray, border: int = BORDER) -> np.ndarray:
    """BSR's ``border_mirror_2D``: symmetric, the edge pixel repeated."""
    pad = ((border, border), (border, border)) + ((0, 0),) * (a.ndim - 2)
    return np.pad(a, pad, mode="symmetric")


def lab_bins(image):
    """BSR's colour quantisation and texton grey image, on the mirrored image.

    Parameters
    ----------
    image : (H, W, 3) or (H, W) uint8 array

    Returns
    -------
    L, a, b : (H + 60, W + 60) ndarray of int32
        Bins 0..24 of ``L* / 100``, ``(a* + 73) / 168`` and ``(b* + 73) / 168``, each
        clipped to [0, 1] and binned by ``floor(25 v)`` (25 -> 24). L*a*b* is that of
        ``(im / 255) ** 2.5`` (a pure power law, not the sRGB curve) taken as linear
        sRGB primaries with the D65 white ``(0.950456, 1, 1.088754)``.
    grey : (H + 60, W + 60) ndarray of float64
        ``0.29894 R + 0.58704 G + 0.11402 B`` of the image in [0, 1] *before* the
        gamma, the input of the texton filters.

    Notes
    -----
    All four are on the image mirrored by :data:`BORDER` = 30 px with the edge pixel
    repeated (``np.pad(mode='symmetric')``), as BSR pads before converting. The
    operations are BSR's, in its order (``pow(x, 1/3)``, not ``cbrt``), so the bins
    agree with BSR's to the last bit of the values they quantise.
    """
    rgb = _mirror(_image01(image))
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    grey = (0.29894 * r) + (0.58704 * g) + (0.11402 * b)
    r, g, b = np.power(r, _GAMMA), np.power(g, _GAMMA), np.power(b, _GAMMA)
    x = ((0.412453 * r) + (0.357580 * g) + (0.180423 * b)) / 0.950456
    y = ((0.212671 * r) + (0.715160 * g) + (0.072169 * b)) / 1.0
    z = ((0.019334 * r) + (0.119193 * g) + (0.950227 * b)) / 1.088754
    thr, third = 0.008856, 1.0 / 3.0

    def f(t):
        return np.where(t > thr, np.power(t, third), 7.787 * t + (16.0 / 116.0))

    fx, fy, fz = f(x), f(y), f(z)
    lum = np.where(y > thr, 116 * np.power(y, third) - 16, 903.3 * y)
    lo, hi = _AB_RANGE
    chans = (
        lum / 100.0,
        (500 * (fx - fy) - lo) / (hi - lo),
        (200 * (fy - fz) - lo) / (hi - lo),
    )
    bins = []
    for v in chans:
        q = np.floor(np.clip(v, 0.0, 1.0) * float(_NBINS)).astype(np.int32)
        q[q == _NBINS] = _NBINS - 1
        bins.append(q)
    return bins[0], bins[1], bins[2], grey


# ---------------------------------------------------------------------------------------
# textons


def _gaussian_1d(sigma: float, deriv: int, hilbert: bool, support: int) -> np.ndarray:
    """BSR's ``lib_image::gaussian``: taps at -support..support of a Gaussian (or its
    2nd derivative, or the Hilbert transform of that), zero-mean if a derivative,
    unit L1 norm."""
    big = support
    if hilbert:  # the FFT length: support rounded up to a power of two
        big, t = 1, support
        while t > 0:
            big, t = big * 2, t // 2
    x = np.arange(-big, big + 1, dtype=np.float64)
    g = np.exp(x * x * (-0.5 / (sigma * sigma)))
    if deriv == 2:
        g = g * (x * x / (sigma * sigma) - 1.0)
    elif deriv != 0:
        raise ValueError("only derivatives 0 and 2 are used")
    if hilbert:  # lib_signal::hilbert of the 2 big samples (the last one dropped)
        g = _hilbert(g[:-1])[big - support : big + support + 1]
    if deriv > 0:
        g = g - g.mean()
    return g / np.abs(g).sum()


def _hilbert(x: np.ndarray) -> np.ndarray:
    """Discrete Hilbert transform of an even-length signal, ``imag`` of the analytic
    signal (``scipy.signal.hilbert``): positive frequencies doubled, negative ones
    zeroed, DC and Nyquist kept."""
    n = x.size
    gain = np.zeros(n)
    gain[0] = gain[n // 2] = 1.0
    gain[1 : n // 2] = 2.0
    return np.imag(np.fft.ifft(np.fft.fft(x) * gain))


def _rotated_support(s: int, ori: float) -> int:
    """BSR's integer ``support_x_rotated(s, s, ori)`` (for equal supports, the y one)."""
    c, si = s * math.cos(ori), s * math.sin(ori)
    return int(math.ceil(max(abs(c - si), abs(c + si))))


def _rotate_crop(m: np.ndarray, ori: float, size: int) -> np.ndarray:
    """BSR's ``rotate_2D_crop``: a (size, size) matrix sampling ``m`` rotated by +ori
    (from +row towards +col) about its centre, bilinearly; 0 outside ``m``."""
    cos, sin = math.cos(ori), math.sin(ori)
    sx, sy = m.shape
    u = np.arange(size, dtype=np.float64)[:, None] - (size - 1) / 2
    v = np.arange(size, dtype=np.float64)[None, :] - (size - 1) / 2
    x = u * cos + v * sin + (sx - 1) / 2
    y = v * cos - u * sin + (sy - 1) / 2
    x0, x1, y0, y1 = np.floor(x), np.ceil(x), np.floor(y), np.ceil(y)
    ok = (x >= 0) & (y >= 0) & (x1 < sx) & (y1 < sy)
    x0, x1, y0, y1 = (np.where(ok, q, 0).astype(np.int64) for q in (x0, x1, y0, y1))
    dx0, dx1, dy0, dy1 = x - x0, x1 - x, y - y0, y1 - y
    # where floor == ceil the step is skipped (weights 0 and 0 would lose the value)
    t0 = np.where(x0 != x1, dx1 * m[x0, y0] + dx0 * m[x1, y0], m[x0, y0])
    t1 = np.where(x0 != x1, dx1 * m[x0, y1] + dx0 * m[x1, y1], m[x0, y1])
    out = np.where(y0 != y1, dy1 * t0 + dy0 * t1, t0)
    return np.where(ok, out, 0.0)


def _oriented_filter(sigma: float, ori: float, hilbert: bool) -> np.ndarray:
    """BSR's ``gaussian_2D(sigma, sigma / 3, ori, 2, hilbert, s, s)``, s = ceil(3 sigma):
    elongated along the rows at ori = 0 (it answers vertical edges), rotated by +ori."""
    s = int(math.ceil(3 * sigma))
    big = _rotated_support(s, -ori)
    mx = _gaussian_1d(sigma, 0, False, big)
    my = _gaussian_1d(sigma / 3.0, 2, hilbert, big)
    f = _rotate_crop(np.outer(mx, my), ori, 2 * s + 1)
    f = f - f.mean()
    return f / np.abs(f).sum()


def _centre_surround(sigma: float) -> np.ndarray:
    """BSR's ``gaussian_cs_2D(sigma, sigma, 0, sqrt 2, s, s)``: an isotropic Gaussian of
    ``sigma`` minus one of ``sigma / sqrt 2``, each of unit sum, then zero-mean and unit
    L1 norm."""
    s = int(math.ceil(3 * sigma))

    def iso(sg):
        g = _gaussian_1d(sg, 0, False, s)
        m = np.outer(g, g)
        return m / np.abs(m).sum()

    m = iso(sigma) - iso(sigma / math.sqrt(2.0))
    m = m - m.mean()
    return m / np.abs(m).sum()


@lru_cache(maxsize=1)
def texton_filters() -> tuple:
    """BSR's 34 texton filters: for sigma = 2 and 2 sqrt 2 (13 x 13 and 19 x 19), the
    8 even (Gaussian 2nd derivative across, elongation 3), the 8 odd (their Hilbert
    transforms) at orientations ``n pi / 8`` from +row towards +col, and one
    centre-surround. A tuple of read-only float64 arrays."""
    out: list[np.ndarray] = []
    for sigma in _TEX_SIGMAS:
        step, oris, o = math.pi / NORIENT, [], 0.0
        for _ in range(NORIENT):  # BSR accumulates the angle
            oris.append(o)
            o += step
        for hil in (False, True):
            out.extend(_oriented_filter(sigma, ori, hil) for ori in oris)
        out.append(_centre_surround(sigma))
    for f in out:
        f.setflags(write=False)
    return tuple(out)


_FLAT_RESPONSE = 1e-10  # below: FFT rounding noise of a flat area (see texton_responses)


def texton_responses(grey: np.ndarray) -> np.ndarray:
    """The 34 filter responses of a (mirrored) grey image: (H * W, 34) float64.

    Each is the 'same'-size 2-D convolution with zero padding (MATLAB's
    ``conv2(., 'same')``, BSR's ``conv_crop``), computed by FFT (equal to the direct sum
    to rounding). Responses below ``1e-10`` in magnitude are set to 0: the filters are
    zero-mean, so a flat area's responses are 0 up to the FFT's rounding noise (about
    1e-15, varying from pixel to pixel and from one FFT library version to the next),
    which would otherwise split the area between near-duplicate texton centres. The
    direct sum BSR computes gives every pixel of a flat area the same responses."""
    from scipy import fft

    g = np.asarray(grey, dtype=np.float64)
    h, w = g.shape
    filters = texton_filters()
    smax = max(f.shape[0] for f in filters)
    shape = (
        fft.next_fast_len(h + smax - 1, real=True),
        fft.next_fast_len(w + smax - 1, real=True),
    )
    spec = fft.rfft2(g, shape)
    out = np.empty((h * w, len(filters)), np.float64)
    for i, f in enumerate(filters):
        c = f.shape[0] // 2
        full = fft.irfft2(spec * fft.rfft2(f, shape), shape)
        out[:, i] = full[c : c + h, c : c + w].ravel()
    out[np.abs(out) < _FLAT_RESPONSE] = 0.0
    return out


def _kmeans(items: np.ndarray, k: int, rng) -> np.ndarray:
    """BSR's sampled, coarse-to-fine k-means; returns the surviving centres (m, d).

    A random ``max(ceil(0.1 n), k)`` items, in random order, are clustered; the first k
    are the initial centres. Problem sizes ``n_s, n_s / 2, n_s / 4, ...`` (down to k)
    are solved smallest first, each from the previous centres, with clusters emptied
    so far refilled by the level's next new items; at most 10 Lloyd iterations per
    level, stopping when no assignment changes. Clusters empty at the end are dropped.
    """
    n = items.shape[0]
    samp = min(n, max(int(math.ceil(_KMEANS_SAMPLE * n)), k))
    pick = rng.permutation(n)[:samp]
    data = np.ascontiguousarray(items[pick[rng.permutation(samp)]])
    k = min(k, samp)
    centres = data[:k].copy()
    alive = np.ones(k, bool)
    sizes = []
    m = samp
    while m >= k:
        sizes.append(m)
        m //= 2
    assign = np.full(samp, -1, np.int64)
    prev = k  # the first k items are the initial centres, each its own cluster
    assign[:k] = np.arange(k)
    for cur in reversed(sizes):
        nxt = prev
        for j in range(k):  # refill clusters emptied at the last level
            if not alive[j] and nxt < cur:
                centres[j] = data[nxt]
                alive[j] = True
                nxt += 1
        for it in range(_KMEANS_ITER):
            cnorm = np.where(alive, np.einsum("ij,ij->i", centres, centres), np.inf)
            changed = _k._nearest(data[:cur], centres, cnorm, assign[:cur])
            if changed == 0 and it > 0:
                break
            sums, counts = _k._centre_sums(data[:cur], assign[:cur], k)
            alive = counts > 0
            centres[alive] = sums[alive] / counts[alive, None]
        prev = cur
    return np.ascontiguousarray(centres[alive])


#: BSR's fixed MT19937-64 key: ``mersenne_twister_64.cc`` seeds every generator built
#: without a seed with it, and ``randperm`` builds a new one at each call.
BSR_MT64_KEY = (0x12345, 0x23456, 0x34567, 0x45678)


def bsr_uniform(n: int) -> np.ndarray:
    """The first ``n`` numbers of BSR's default uniform generator (``rand_gen_uniform<>``).

    Parameters
    ----------
    n : int

    Returns
    -------
    (n,) ndarray of float64
        ``(x >> 11) / (2^53 - 1)`` in [0, 1] (``rand_source::gen_uniform_closed_double``)
        for the outputs x of MT19937-64 seeded by ``init_by_array64`` with
        :data:`BSR_MT64_KEY` (numpy has only the 32-bit MT19937, a different stream).
    """
    x = _k._mt64_stream(np.array(BSR_MT64_KEY, np.uint64), int(n))
    return (x >> np.uint64(11)).astype(np.float64) * 1.0 / float(2**53 - 1)


def bsr_randperm(n: int) -> np.ndarray:
    """BSR's ``randperm(n)``: the order that sorts :func:`bsr_uniform` (n) ascending.

    Parameters
    ----------
    n : int

    Returns
    -------
    (n,) ndarray of int64

    Notes
    -----
    Every call restarts the same stream, as BSR's does (it builds a new generator).
    Equal values would be ordered by BSR's own sort, which this does not reproduce;
    none occur among the first 2,000,000 numbers.
    """
    return np.argsort(bsr_uniform(n), kind="stable")


def _coarse_sizes(n: int, k: int) -> np.ndarray:
    """``clusterer_base::coarse_problem_sizes(n, k, 0.5)``: n, n/2, n/4, ... (floored)
    while at least k, ascending."""
    sizes, m = [], n
    while True:
        sizes.append(m)
        m = math.floor(m * 0.5)
        if m < k:
            break
    return np.array(sizes[::-1], np.int64)


def _bsr_responses(grey: np.ndarray) -> np.ndarray:
    """The 34 filter responses as BSR sums them (direct convolution, its order of
    terms): (H * W, 34) float64, rows in the image's row-major order."""
    g = np.ascontiguousarray(grey, dtype=np.float64)
    filters, sizes = _stacked_texton_filters()
    out = np.empty((g.size, filters.shape[0]), np.float64)
    return _k._responses_direct(g, filters, sizes, out)


@lru_cache(maxsize=1)
def _stacked_texton_filters():
    """:func:`texton_filters` in one (34, s, s) array (s the largest size; each filter
    at the top left) and their sizes, for :func:`._gpb_cue_kernels._responses_direct`."""
    fs = texton_filters()
    s = max(f.shape[0] for f in fs)
    stack = np.zeros((len(fs), s, s), np.float64)
    for i, f in enumerate(fs):
        stack[i, : f.shape[0], : f.shape[1]] = f
    return stack, np.array([f.shape[0] for f in fs], np.int64)


def _bsr_kmeans_labels(items: np.ndarray, k: int):
    """BSR's ``sample_clusterer(kmeans::matrix_clusterer(k, 10, L2), 0.1, k)`` on the
    rows of ``items``: (labels (n,) int64, centres (m, d)).

    A ``randperm`` of all items; its first ``max(ceil(0.1 n), k)`` are clustered by
    the coarse-to-fine k-means (:func:`._gpb_cue_kernels._kmeans_bsr`), which puts
    them in the order of a second ``randperm`` (the same stream again); empty clusters
    are dropped; those items keep their k-means cluster, the others take the first
    nearest centre.
    """
    n = items.shape[0]
    samp = min(n, max(math.ceil(_KMEANS_SAMPLE * float(n)), k))
    if samp == n:
        order = np.arange(n)
    else:
        perm = bsr_randperm(n)
        order = perm[:samp]
    inner = bsr_randperm(samp)
    data = np.ascontiguousarray(items[order[inner]])
    kk = min(k, samp)
    assign, centres, alive = _k._kmeans_bsr(data, kk, _KMEANS_ITER, _coarse_sizes(samp, kk))
    remap = np.cumsum(alive) - 1
    centres = np.ascontiguousarray(centres[alive])
    # the nearest centre of every item, read in place and in order (gathering the
    # others in their random order cost more than assigning the sample too), then the
    # sample's own k-means clusters over it
    labels = _k._nearest_l2(np.ascontiguousarray(items), centres, np.empty(n, np.int64))
    labels[order[inner]] = remap[assign]
    return labels, centres


def textons(grey: np.ndarray, *, k: int = _NTEX, seed: int | None = TEXTON_SEED):
    """Per-image textons of a mirrored grey image, as BSR's ``lib_image::textons``.

    Parameters
    ----------
    grey : (H + 60, W + 60) float64 array
        The mirrored grey image (:func:`lab_bins`).
    k : int, default 64
    seed : int or None, default None
        None: BSR's own computation, equal to it label for label (see Notes). An
        integer: the faster variant of earlier releases, whose k-means sample is drawn
        by numpy's generator with this seed (its textons are not BSR's).

    Returns
    -------
    labels : (H + 60, W + 60) ndarray of int32
        Texton ids 0..m-1 (m <= k centres survive) of the H x W interior, mirrored
        again by 30 px, as BSR re-mirrors after trimming: the map the texture
        gradient is computed on.
    centres : (m, 34) ndarray of float64

    Notes
    -----
    With ``seed=None`` every step is BSR's (``lib_image::textons`` with its defaults
    K = 64, 10 iterations, a 10 % sample): the 34 responses summed as its direct
    convolution sums them; the sample and its order drawn by two calls of its
    ``randperm``, each restarting MT19937-64 from its fixed key
    (:func:`bsr_randperm`); its coarse-to-fine k-means with its update and tie rules
    and L2 distances (:func:`._gpb_cue_kernels._kmeans_bsr`); the other pixels given
    the first nearest centre; ids as BSR numbers them (a centre may end up unused
    once the border is re-mirrored). Measured on BSDS500 val 101085: all 206,121
    labels equal those of BSR's C++ code built from the released source.

    The integer-seed variant differs in: FFT responses with values below 1e-10 set
    to 0; numpy's draw; empty clusters leaving the competition at once; every pixel
    assigned to the final centres; unused ids compacted. It is about 0.25 CPU-s faster
    on a 481 x 321 image (0.35 against 0.59; the direct convolution is the cost).
    """
    g = np.asarray(grey, dtype=np.float64)
    b = BORDER
    if seed is None:
        labels, centres = _bsr_kmeans_labels(_bsr_responses(g), int(k))
        lab = labels.reshape(g.shape).astype(np.int32)
        return _mirror(lab[b:-b, b:-b]).astype(np.int32), centres
    resp = texton_responses(g)
    centres = _kmeans(resp, k, np.random.default_rng(seed))
    assign = np.full(resp.shape[0], -1, np.int64)
    _k._nearest(resp, centres, np.einsum("ij,ij->i", centres, centres), assign)
    lab = assign.reshape(g.shape).astype(np.int32)
    used = np.unique(lab)  # compact: a centre nobody is nearest to takes no id
    if used.size < centres.shape[0]:
        lab = np.searchsorted(used, lab).astype(np.int32)
        centres = centres[used]
    return _mirror(lab[b:-b, b:-b]).astype(np.int32), centres


# ---------------------------------------------------------------------------------------
# the 16-slice histogram gradient


@lru_cache(maxsize=16)
def slice_map(radius: int) -> np.ndarray:
    """BSR's ``orientation_slice_map`` of a (2r+1) x (2r+1) window: slice 0..15 of
    element (nx, ny), ``floor(8 (atan2(ny - r - 1/2, nx - r - 1/2) + pi) / pi)``
    (the half-pixel offset puts no element on a ray), 16 clamped to 15; -1 outside
    the disc ``dx^2 + dy^2 <= r^2``. Indexed by window element, before the flip."""
    r = int(radius)
    n = 2 * r + 1
    c = np.arange(n, dtype=np.float64) - n / 2
    ori = np.arctan2(c[None, :], c[:, None]) + np.pi
    idx = np.minimum(np.floor(ori / np.pi * NORIENT).astype(np.int64), 2 * NORIENT - 1)
    d = np.arange(-r, r + 1)
    disc = d[:, None] ** 2 + d[None, :] ** 2 <= r * r
    out = np.where(disc, idx, -1)
    out.setflags(write=False)
    return out


@lru_cache(maxsize=32)
def _slice_tables(radius: int, wp: int) -> _hd.SliceTables:
    """The shared kernel's tables (:func:`._half_disc.slice_tables`, row stride
    ``wp``) for BSR's slice map of radius r.

    BSR's histogram loop is a convolution: the pixel at offset (dr, dc) from the centre
    falls in window element (r - dr, r - dc), so the offset map is the slice map
    rotated by 180 degrees.
    """
    return _hd.slice_tables(slice_map(int(radius))[::-1, ::-1], wp, 2 * NORIENT)


#: BSR's orientation o (split line at o pi/8 from +row towards +col) goes to our
#: channel (4 - o) mod 8 (the tangent's angle from +x).
_BSR_OUT = np.array([(12 - o) % NORIENT for o in range(NORIENT)], np.int64)


@lru_cache(maxsize=8)
def _smoothing(sigma, nbins: int):
    """Taps of BSR's ``gaussian(sigma)`` (support ceil(3 sigma), unit L1), or ``[1]``
    for none, and each bin's in-range kernel mass."""
    if sigma is None:
        taps = np.ones(1)
    else:
        taps = _gaussian_1d(float(sigma), 0, False, int(math.ceil(3 * sigma)))
    t = (taps.size - 1) // 2
    mass = np.array(
        [taps[max(0, t - b) : min(taps.size, nbins + t - b)].sum() for b in range(nbins)]
    )
    return taps, mass


def slice_gradient(
    labels,
    radius: int,
    *,
    sigma_bins: float | None = None,
    nbins: int | None = None,
    border: int = BORDER,
) -> np.ndarray:
    """BSR's oriented histogram gradient (``hist_gradient_2D``) of a padded label map.

    Parameters
    ----------
    labels : (H + 2 border, W + 2 border) integer array
        Labels >= 0 (bins, texton ids) of the padded image.
    radius : int
        Disc radius r in px (offsets with ``dr^2 + dc^2 <= r^2``), at most ``border``.
    sigma_bins : float, optional
        Gaussian smoothing of every slice histogram across its bins, sigma in bins
        (bg 2.5, cg 1.25); None (tg) for none.
    nbins : int, optional
        Histogram length; default ``labels.max() + 1`` over the whole padded map, as
        BSR (smoothed mass beyond the last bin is lost before normalising).
    border : int, default 30
        Width of the padding; only the interior is computed.

    Returns
    -------
    (8, H, W) ndarray of float64
        Channel k: the boundary whose tangent is at ``k pi / 8`` from +x towards +y.
        Values in [0, 8]: each of the 16 slice histograms is normalised to sum 1 (an
        empty slice stays 0), the 8 slices on each side of the line are summed, and
        ``0.5 sum_b (l_b - r_b)^2 / (l_b + r_b)`` (bins with ``l_b + r_b = 0``
        skipped) compares the two sums.

    Notes
    -----
    The slices follow :func:`slice_map` rotated by 180 degrees (BSR accumulates the
    histograms as a convolution), so which half a diagonal pixel falls in is BSR's.
    BSR smooths each slice histogram and sums; smoothing is linear, so here the
    smoothed slice histograms are kept up to date as the disc slides along a row,
    which gives the same values up to rounding.
    """
    lab = np.asarray(labels)
    if lab.ndim != 2 or not np.issubdtype(lab.dtype, np.integer):
        raise InputError("labels must be a 2-D integer array")
    r, b = int(radius), int(border)
    if not 1 <= r <= b:
        raise InputError(f"radius must be in 1..border ({b}), got {radius}")
    h, w = lab.shape[0] - 2 * b, lab.shape[1] - 2 * b
    if h < 1 or w < 1:
        raise InputError(f"labels {lab.shape} leave no interior inside a {b} px border")
    if lab.min() < 0:
        raise InputError("labels must be >= 0")
    nb = int(lab.max()) + 1 if nbins is None else int(nbins)
    if lab.max() >= nb:
        raise InputError(f"labels must be below nbins = {nb}")
    taps, mass = _smoothing(None if sigma_bins is None else float(sigma_bins), nb)
    tab = _slice_tables(r, lab.shape[1])
    # the smallest smoothed disc (bg r=3, 29 px): smoothing each pixel as counted is
    # cheaper than smoothing the 9 dense sums (measured; from r=5 on it is not)
    return _hd.normalised_gradient(
        np.ascontiguousarray(lab, dtype=np.int32),
        tab,
        b,
        nb,
        taps,
        mass,
        _BSR_OUT,
        sparse=taps.size > 1 and r <= 3,
    )


# ---------------------------------------------------------------------------------------
# smoothing and the whole stage


def smooth_cue(stack: np.ndarray, radius: float) -> np.ndarray:
    """multiscalePb.m's ``fitparab`` of every orientation of a cue stack.

    Parameters
    ----------
    stack : (8, H, W) array
        An oriented cue (our channel convention).
    radius : float
        The cue's radius R in px: the ellipse has semi-axes R across the boundary and
        ``max(1.5, R / 4)`` along it.

    Returns
    -------
    (8, H, W) ndarray of float64
        The constant term of the least-squares parabola fitted across each channel's
        tangent (:func:`segbench.algorithms.fit_parab`); within R px of the border the
        fit uses the ellipse's in-image pixels only. May be negative: BSR keeps
        negative values.

    Notes
    -----
    The angle of channel k is multiscalePb.m's 4-decimal literal of ``k pi / 8`` (e.g.
    1.5708 for pi/2), so the ellipse supports are BSR's to the pixel.
    """
    z = np.asarray(stack, dtype=np.float64)
    if z.ndim != 3 or z.shape[0] != NORIENT:
        raise InputError(f"stack must be ({NORIENT}, H, W), got {z.shape}")
    r = float(radius)
    out = np.zeros(z.shape, np.float64)
    for k in range(NORIENT):
        _fit_parab_fast(
            np.ascontiguousarray(z[k]), r, r / 4.0, _GTHETA[BSR_CHANNEL[k]], out[k]
        )
    return out


def _band_weights(dist: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """savgol_border's fit over the support points ``keep`` (those inside the image), as
    filter weights: ``a = sum_k w_k z_k`` with ``w_k = ((d2 d4 - d3^2) + (d2 d3 - d1 d4)
    d_k + (d1 d3 - d2^2) d_k^2) / det``, zero where ``keep`` is False; all zero when
    ``det <= exp(-300)``, where BSR leaves the output 0."""
    d = dist[keep]
    m = [float(np.sum(d**p)) for p in range(5)]
    d0, d1, d2, d3, d4 = m
    det = -d2 * d2 * d2 + 2 * d1 * d2 * d3 - d0 * d3 * d3 - d1 * d1 * d4 + d0 * d2 * d4
    w = np.zeros(dist.shape, np.float64)
    if det > math.exp(-300):
        w[keep] = (
            (d2 * d4 - d3 * d3) + (d2 * d3 - d1 * d4) * d + (d1 * d3 - d2 * d2) * d * d
        ) / det
    return w


@lru_cache(maxsize=128)
def _band_fits(ra: float, rb: float, theta: float):
    """Per side (top, bottom, left, right) and distance e = 0..wr-1 to that edge, the
    in-image points (indices into :func:`._pb._parab_table`'s support) and their
    fit weights (:func:`_band_weights`), for images at least 2 wr on that side."""
    du, dv, dist, _, wr = _parab_table(ra, rb, theta)
    sides = []
    for keep_of in (
        lambda e: dv >= -e,
        lambda e: dv <= e,
        lambda e: du >= -e,
        lambda e: du <= e,
    ):
        fits = []
        for e in range(wr):
            keep = keep_of(e)
            sel = np.flatnonzero(keep)
            fits.append((sel, _band_weights(dist, keep)[sel]))
        sides.append(fits)
    return sides


def _fit_parab_fast(z: np.ndarray, ra: float, rb: float, theta: float, out: np.ndarray):
    """:func:`segbench.algorithms.fit_parab` (multiscalePb.m's ``fitparab``) into
    ``out``, fast: the interior is the fixed filter; the border bands, where BSR fits
    over the in-image points of each pixel's ellipse, share one fit per row (top and
    bottom bands) or per column (left and right), because there only the distance to
    one edge decides which points are inside; the four corner squares are fitted pixel
    by pixel (:func:`segbench.algorithms._pb_kernels._fit_region`). Equal to
    ``fit_parab`` up to the order of the sums."""
    du, dv, dist, wts, wr = _parab_table(float(ra), float(rb), float(theta))
    h, w = z.shape
    top, left = min(wr, h), min(wr, w)
    bottom, right = max(h - wr, top), max(w - wr, left)
    _k._parab_rect(z, du, dv, wts, top, bottom, left, right, out)
    bands = _band_fits(float(ra), float(rb), float(theta))
    for y in list(range(0, top)) + list(range(bottom, h)):
        if h >= 2 * wr:  # only the nearer edge cuts the ellipse: a cached fit
            sel, wk = bands[0][y] if y < wr else bands[1][h - 1 - y]
        else:
            keep = (y + dv >= 0) & (y + dv < h)
            sel = np.flatnonzero(keep)
            wk = _band_weights(dist, keep)[sel]
        _k._parab_rect(z, du[sel], dv[sel], wk, y, y + 1, left, right, out)
    for x in list(range(0, left)) + list(range(right, w)):
        if w >= 2 * wr:
            sel, wk = bands[2][x] if x < wr else bands[3][w - 1 - x]
        else:
            keep = (x + du >= 0) & (x + du < w)
            sel = np.flatnonzero(keep)
            wk = _band_weights(dist, keep)[sel]
        _k._parab_rect(z, du[sel], dv[sel], wk, top, bottom, x, x + 1, out)
    for y0, y1 in ((0, top), (bottom, h)):
        for x0, x1 in ((0, left), (right, w)):
            _pbk._fit_region(z, du, dv, dist, y0, y1, x0, x1, out)


def local_cues(
    image, *, raw: bool = False, seed: int | None = TEXTON_SEED, timings: dict | None = None
):
    """gPb's 12 oriented local cues of an image (BSR's ``det_mPb`` and the smoothing
    of ``multiscalePb.m``).

    Parameters
    ----------
    image : (H, W, 3) or (H, W) uint8 array
        At least 31 px on each side. Grey is copied into three channels.
    raw : bool, default False
        Return the cues before the parabola fit.
    seed : int or None, default None
        None: BSR's textons; an integer: the earlier numpy-drawn variant (:func:`textons`).
    timings : dict, optional
        Filled with the CPU seconds (``time.process_time``) of each stage: 'colour',
        'textons', 'gradients', 'smoothing'.

    Returns
    -------
    cues : (12, 8, H, W) ndarray of float64
        bg r = 3, 5, 10; cga r = 5, 10, 20; cgb r = 5, 10, 20; tg r = 5, 10, 20
        (:data:`CUE_NAMES`, :data:`CUE_RADII`), the order of BSR's mPb weights; each
        (8, H, W) in our channel convention (channel k: tangent ``k pi / 8`` from +x
        towards +y). Raw cues are in [0, 8] (:func:`slice_gradient`); smoothed ones
        may be slightly negative.
    textons : (H, W) ndarray of int32
        The texton id of every pixel.

    Raises
    ------
    InputError
        If the image is not uint8 (H, W, 3) or (H, W), or is smaller than 31 px on a
        side.
    """
    stack = None
    tex = None
    for i, cue, inner in _each_cue(image, raw, seed, timings):
        if stack is None:
            stack = np.empty((len(CUE_NAMES),) + cue.shape, np.float64)
        stack[i] = cue
        tex = inner
    return stack, tex


def local_cue_sums(
    image, weight_sets, *, seed: int | None = TEXTON_SEED, timings: dict | None = None
):
    """Weighted sums of the 12 smoothed cues of :func:`local_cues`, without holding
    the 12 of them: ``sum_i w_i cue_i`` for each weight vector, accumulated cue by cue
    in the order of :data:`CUE_NAMES` (so each sum equals the one formed from the
    whole stack, bit for bit). A 12-megapixel photograph's stack is 9 GB; each sum is
    one twelfth of it.

    Parameters
    ----------
    image : (H, W, 3) or (H, W) uint8 array
        As :func:`local_cues`.
    weight_sets : sequence of sequences of 12 floats
        One weight per cue for each sum (a zero weight skips that cue's term).
    seed : int or None, default None
        As :func:`local_cues`.
    timings : dict, optional
        As :func:`local_cues`.

    Returns
    -------
    sums : list of (8, H, W) ndarray of float64
        One per weight vector, our channel convention.
    """
    sums = None
    for i, cue, _ in _each_cue(image, False, seed, timings):
        if sums is None:
            sums = [np.zeros(cue.shape, np.float64) for _ in weight_sets]
        for out, weights in zip(sums, weight_sets):
            if weights[i]:
                out += weights[i] * cue
    return sums


def _each_cue(image, raw, seed, timings):
    """Yield (index, cue (8, H, W), textons) for the 12 cues in turn, smoothed unless
    ``raw``; fills ``timings`` as :func:`local_cues` documents."""
    clock = time.process_time
    t0 = clock()
    lq, aq, bq, grey = lab_bins(image)
    t1 = clock()
    tex, _ = textons(grey, seed=seed)
    t2 = clock()
    maps = {
        "bg": (lq, _SIGMA_BG),
        "cga": (aq, _SIGMA_CG),
        "cgb": (bq, _SIGMA_CG),
        "tg": (tex, None),
    }
    b = BORDER
    tex_inner = np.ascontiguousarray(tex[b:-b, b:-b])
    gradients = smoothing = 0.0
    for i, (name, r) in enumerate(zip(CUE_NAMES, CUE_RADII)):
        lab, sigma = maps[name]
        t = clock()
        cue = slice_gradient(lab, r, sigma_bins=sigma)
        gradients += clock() - t
        if not raw:
            t = clock()
            cue = smooth_cue(cue, r)
            smoothing += clock() - t
        yield i, cue, tex_inner
    if timings is not None:
        timings.update(
            colour=t1 - t0, textons=t2 - t1, gradients=gradients, smoothing=smoothing
        )
