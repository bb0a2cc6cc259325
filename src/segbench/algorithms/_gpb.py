"""gPb, the globalized probability of boundary of Arbelaez, Maire, Fowlkes and Malik
(PAMI 2011), and gPb-owt-ucm, the BSDS500's own hierarchical segmenter.

``gPb = sum_i w_i cue_i + w_s sPb`` per orientation, where the twelve cues are the
half-disc histogram gradients of brightness (radii 3, 5, 10 px), colour a, colour b
and texture (5, 10, 20 px) after their parabola fit (:mod:`._gpb_cues`), and sPb the
oriented derivatives of the first generalized eigenvectors of the affinity built on
the thinned multiscale mPb (:mod:`._gpb_spectral`). The weights are BSR's
(``globalPb.m``, ``multiscalePb.m``). gPb-owt-ucm is :func:`segbench.algorithms.owt_ucm`
of gPb's eight orientations.

Orientation convention (all of segbench): channel k of an oriented stack holds the
boundary whose tangent points at ``k pi / 8`` radians from +x (the column) towards +y
(the row, down). BSR's channel j (0-based) is our channel ``(4 - j) mod 8``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import read_image, write_soft_map
from ..memory import reuse_freed_memory
from ._gpb_cues import local_cue_sums, local_cues
from ._gpb_multigrid import multigrid_eigs
from ._gpb_spectral import imresize_bicubic, spectral_pb
from ._owt_ucm import owt_ucm, write_ucm2

__all__ = [
    "EIGENSOLVERS",
    "MULTIGRID_ABOVE",
    "eigensolver_for",
    "gpb",
    "gpb_owt_ucm",
    "mpb",
    "gpb_file",
    "GPB_WEIGHTS",
    "MPB_WEIGHTS",
    "GPB_MAX_PIXELS",
]

NORIENT = 8

#: ``multiscalePb.m``'s weights of the 12 smoothed cues (bg r3, r5, r10; cga r5, r10,
#: r20; cgb r5, r10, r20; tg r5, r10, r20), colour and greyscale images.
MPB_WEIGHTS = {
    "color": (
        0.0146,
        0.0145,
        0.0163,
        0.0210,
        0.0243,
        0.0287,
        0.0166,
        0.0185,
        0.0204,
        0.0101,
        0.0111,
        0.0141,
    ),
    "gray": (0.0245, 0.0220, 0.0233, 0, 0, 0, 0, 0, 0, 0.0208, 0.0210, 0.0229),
}

#: ``globalPb.m``'s weights of the same 12 cues and of sPb (the 13th).
GPB_WEIGHTS = {
    "color": (
        0,
        0,
        0.0039,
        0.0050,
        0.0058,
        0.0069,
        0.0040,
        0.0044,
        0.0049,
        0.0024,
        0.0027,
        0.0170,
        0.0074,
    ),
    "gray": (0, 0, 0.0054, 0, 0, 0, 0, 0, 0, 0.0048, 0.0049, 0.0264, 0.0090),
}

#: Largest photograph gPb takes (about 2 000 x 1 500 pixels): the affinity matrix holds
#: 81 entries a pixel, about 2 kB a pixel at the eigen-solver's peak.
GPB_MAX_PIXELS = 3_000_000

#: The thinned mPb is the max over orientations, non-max suppressed with this
#: orientation tolerance, times 1.2, clipped to [0, 1] (``multiscalePb.m``).
_NONMAX_TOL = np.pi / 8
_MPB_GAIN = 1.2


def _photograph(image) -> tuple[np.ndarray, str]:
    """(H, W, 3) uint8 and 'color' or 'gray' (a grey image is replicated, as BSR)."""
    img = np.asarray(image)
    if img.dtype != np.uint8:
        raise InputError(
            f"gPb takes an 8-bit photograph (uint8), got {img.dtype}; BSR "
            "reads images as uint8 / 255"
        )
    if img.ndim == 3 and img.shape[2] == 4:
        img = img[..., :3]
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[..., 0]
    if img.ndim == 2:
        return np.repeat(img[..., None], 3, axis=2), "gray"
    if img.ndim != 3 or img.shape[2] != 3:
        raise InputError(f"a photograph is (H, W) or (H, W, 3), got shape {img.shape}")
    grey = bool(
        np.array_equal(img[..., 0], img[..., 1])
        and np.array_equal(img[..., 0], img[..., 2])
    )
    return np.ascontiguousarray(img), "gray" if grey else "color"


def _check_size(img: np.ndarray) -> None:
    h, w = img.shape[:2]
    if h < 31 or w < 31:
        raise InputError(
            f"gPb needs at least 31 x 31 pixels (its cues mirror a 30-pixel "
            f"border), got {h} x {w}"
        )
    if h * w > GPB_MAX_PIXELS:
        raise InputError(
            f"the image has {h} x {w} pixels, over gPb's limit of "
            f"{GPB_MAX_PIXELS:,} (its affinity matrix would not fit); "
            "downsample it first"
        )


#: Eigenvectors spectral_pb computes (the trivial one included): the grid the
#: eigenproblem is solved on needs more pixels than that, and 2 on a side.
_NVEC = 17


def _eig_grid(h: int, w: int, rsz: float) -> tuple[int, int]:
    """The grid the eigenproblem is solved on: ``imresize(., rsz)``'s output size."""
    if rsz == 1:
        return h, w
    return int(np.ceil(rsz * h)), int(np.ceil(rsz * w))


def smallest_rsz(h: int, w: int) -> float:
    """The smallest ``rsz`` (rounded up to 3 significant digits) whose eigenproblem grid
    is usable for an h x w image: 2 pixels on a side and more than 17 in all."""
    best = 1.0
    for a in range(2, _NVEC // 2 + 2):  # rows of the grid; columns the fewest that fit
        b = max(2, -(-(_NVEC + 1) // a))
        best = min(best, max((a - 1) / h, (b - 1) / w))  # ceil(r h) >= a iff r h > a - 1
    digits = 2 - int(np.floor(np.log10(best)))
    r = float(np.ceil(best * 10**digits) / 10**digits)
    while not _usable(*_eig_grid(h, w, r)):  # the bound itself (r h = a - 1) falls short
        r = float(np.round(r + 10.0**-digits, digits))
    return min(r, 1.0)


def _usable(a: int, b: int) -> bool:
    return min(a, b) >= 2 and a * b > _NVEC


def check_rsz(rsz, shape=None) -> float:
    """``rsz`` as a float, checked: in (0, 1] and, given the image ``shape`` (H, W),
    large enough to leave the eigenproblem a usable grid (an rsz near 0 would
    otherwise build resize kernels of 4 / rsz taps: 298 GiB at 1e-10).

    Raises
    ------
    InputError
        One line naming the value and, for an image, the smallest usable rsz.
    """
    if isinstance(rsz, bool):
        raise InputError(f"rsz must be a number in (0, 1], got {rsz!r}")
    try:
        value = float(rsz)
    except (TypeError, ValueError):
        raise InputError(f"rsz must be a number in (0, 1], got {rsz!r}") from None
    if not 0 < value <= 1:
        raise InputError(f"rsz must be in (0, 1], got {rsz!r}")
    if shape is not None:
        h, w = int(shape[0]), int(shape[1])
        a, b = _eig_grid(h, w, value)
        if not _usable(a, b):
            raise InputError(
                f"rsz={value:g} leaves gPb's eigenproblem {a} x {b} pixels of "
                f"this {h} x {w} image (it needs 2 on a side and "
                f"{_NVEC + 1} in all); the smallest usable rsz here is "
                f"{smallest_rsz(h, w):g}"
            )
    return value


def _weighted(cues: np.ndarray, weights) -> np.ndarray:
    """sum_i w_i cues[i] over the first axis: (8, H, W)."""
    out = np.zeros(cues.shape[1:], np.float64)
    for w, c in zip(weights, cues):
        if w:
            out += w * c
    return out


@lru_cache(maxsize=1)
def nonmax_tables():
    """Per BSR channel j: the octant case and interpolation weight of
    ``nonmax_oriented_2D``, and the 8 x 8 orientation factors ``cos(max(0, |dori| -
    pi/8))``, computed as the original computes them.

    The original mixes doubles with long-double constants (``M_PIl``) on an x87 unit
    whose precision MATLAB and Octave set to 53 bits: each operation rounds to a
    double, comparisons see the full constants. So channel 4 (a vertical normal)
    lands exactly on the axis case (its neighbours along the row, the left and right
    borders kept) while channel 0 takes an octant case with a weight of 6e-17 (the
    top and bottom borders suppressed): the reference maps under Octave show both.
    Such tiny weights decide which pixel of a plateau survives.
    """
    ld = np.longdouble
    pi_l = ld("3.141592653589793238462643383279502884")
    pi2_l, pi4_l = pi_l / 2, pi_l / 4

    def op(x):  # one x87 operation at 53-bit precision: exact, then rounded
        return ld(np.float64(x))

    ori = np.array([j / NORIENT * np.pi for j in range(NORIENT)])  # (0:7)/8*pi
    branch = np.zeros(NORIENT, np.int64)
    dist = np.zeros(NORIENT, np.float64)
    for j in range(NORIENT):
        t = op(ld(ori[j]) + pi2_l)
        t = op(t - op(np.floor(op(t / pi_l)) * pi_l))
        if t == 0:
            branch[j] = 0
        elif t < pi4_l:
            branch[j], dist[j] = 1, np.tan(np.float64(t))
        elif t < pi2_l:
            branch[j], dist[j] = 2, np.tan(np.float64(op(pi2_l - t)))
        elif t == pi2_l:
            branch[j] = 3
        elif t < 3 * pi4_l:
            branch[j], dist[j] = 4, np.tan(np.float64(op(t - pi2_l)))
        else:
            branch[j], dist[j] = 5, np.tan(np.float64(op(pi_l - t)))
    cosf = np.zeros((NORIENT, NORIENT), np.float64)
    two_pi = op(2 * pi_l)
    for j in range(NORIENT):
        for k in range(NORIENT):
            d = ld(ori[k] - ori[j])
            d = op(d - op(np.floor(op(d / two_pi)) * two_pi))
            if d >= pi_l:
                d = op(two_pi - d)
            if d >= pi2_l:
                d = op(pi_l - d)
            d = np.float64(d)
            d = 0.0 if d <= _NONMAX_TOL else d - _NONMAX_TOL
            cosf[j, k] = np.cos(d)
    return branch, dist, cosf


def nonmax_channels(stack: np.ndarray) -> np.ndarray:
    """``nonmax_channels.m``: the max over orientations (negatives as 0), thinned
    across the orientation of its channel (ties: BSR's first channel).

    Parameters
    ----------
    stack : (8, H, W) array
        Oriented signal in segbench's channel convention.

    Returns
    -------
    (H, W) ndarray of float64
    """
    from . import _gpb_kernels as _k

    bsr = np.stack([stack[(4 - j) % NORIENT] for j in range(NORIENT)])
    j = np.argmax(bsr, axis=0)  # first maximum, as MATLAB's max
    y = np.maximum(np.take_along_axis(bsr, j[None], 0)[0], 0.0)
    branch, dist, cosf = nonmax_tables()
    return _k._nonmax_oriented(
        np.ascontiguousarray(y), j.astype(np.int64), branch, dist, cosf
    )


def mpb(image):
    """The multiscale local cues and mPb of a photograph.

    Parameters
    ----------
    image : (H, W, 3) or (H, W) uint8
        An 8-bit photograph, at least 31 x 31 pixels.

    Returns
    -------
    cues : (12, 8, H, W) ndarray of float64
        The smoothed cues (bg r3, r5, r10; cga r5, r10, r20; cgb r5, r10, r20; tg r5,
        r10, r20), segbench's channel convention.
    mpb_all : (8, H, W) ndarray of float64
        Their weighted sum (``multiscalePb.m``'s weights for colour or grey images).
    mpb_thin : (H, W) ndarray of float64
        ``clip(1.2 * nonmax_channels(mpb_all), 0, 1)``, the input of the affinity.
    kind : {'color', 'gray'}
        Which weights were used (a grey image, or colour with three equal channels).
    """

    img, kind = _photograph(image)
    _check_size(img)
    cues, _ = local_cues(img)
    mpb_all = _weighted(cues, MPB_WEIGHTS[kind])
    thin = np.clip(_MPB_GAIN * nonmax_channels(mpb_all), 0.0, 1.0)
    return cues, mpb_all, thin, kind


#: Eigensolvers of :func:`gpb`: ``'exact'`` (ARPACK, BSR's result), ``'multigrid'``
#: (coarse to fine, linear in the pixels, approximate), ``'auto'`` (exact up to
#: :data:`MULTIGRID_ABOVE` pixels solved, multigrid above).
EIGENSOLVERS = ("auto", "exact", "multigrid")
#: Above this many pixels in the eigenproblem, ``eigensolver='auto'`` uses the multigrid
#: solver: the exact one costs about 2 kB a pixel at its peak (1 GB here) and grows as
#: the pixels to the power 1.4-1.5 (a 962 x 642 image: about 8x a 481 x 321 one).
MULTIGRID_ABOVE = 500_000


def eigensolver_for(eigensolver: str, shape) -> str:
    """``'exact'`` or ``'multigrid'``: what ``eigensolver`` means for an eigenproblem on
    ``shape`` (h, w) pixels (``'auto'``: multigrid above :data:`MULTIGRID_ABOVE`)."""
    if eigensolver not in EIGENSOLVERS:
        raise InputError(
            f"eigensolver must be one of {', '.join(EIGENSOLVERS)}, got {eigensolver!r}"
        )
    if eigensolver != "auto":
        return eigensolver
    return "multigrid" if int(shape[0]) * int(shape[1]) > MULTIGRID_ABOVE else "exact"


def gpb(
    image,
    *,
    rsz: float = 1.0,
    eigensolver: str = "auto",
    timings: dict | None = None,
):
    """gPb of a photograph: oriented boundary strength, its max and its orientation.

    Parameters
    ----------
    image : (H, W, 3) or (H, W) uint8
        An 8-bit photograph (as BSR reads it, /255), at least 31 x 31 and at most
        :data:`GPB_MAX_PIXELS` pixels. A grey image (or three equal channels) uses
        BSR's greyscale weights.
    rsz : float in (0, 1], default 1.0
        BSR's ``rsz``: the eigenproblem is solved on the weighted cues resized by this
        factor (MATLAB's bicubic ``imresize``, then thinned), its eigenvectors resized
        back. 1.0 is BSR's default and the setting of its published results; 0.5
        makes the eigen-solve about 12 times cheaper at some cost in sPb (see
        docs/detectors.md). BSR's rsz < 1 cannot be checked under Octave, whose
        ``imresize`` differs from MATLAB's; we follow MATLAB's documented algorithm.
    eigensolver : {'auto', 'exact', 'multigrid'}, default 'auto'
        'exact': the eigenproblem solved to ARPACK's accuracy (BSR's result);
        'multigrid': coarse to fine (MCG's square-and-decimate, Maire and Yu's
        progressive refinement: :mod:`._gpb_multigrid`), linear in the pixels and
        approximate (sPb correlation about 0.9997 with the exact solve); 'auto':
        exact up to :data:`MULTIGRID_ABOVE` pixels solved (every BSDS image), multigrid
        above (:func:`eigensolver_for`).
    timings : dict, optional
        Filled with the CPU seconds of each stage ('mPb', 'W', 'eigenvectors', 'sPb').

    Returns
    -------
    gpb_orient : (H, W, 8) ndarray of float64
        ``sum_i w_i cue_i + w_s sPb`` per orientation (``globalPb.m``'s weights);
        channel k is the boundary whose tangent points at ``k pi / 8`` from +x towards
        +y (down). Not clipped: a few values lie slightly outside [0, 1], as in BSR.
    gpb : (H, W) ndarray of float64
        The max over orientations, clipped to [0, 1]: a soft boundary map.
    theta : (H, W) ndarray of float64
        The tangent of the maximal channel, radians in [0, pi).

    Notes
    -----
    The textons (per-image k-means) are BSR's, label for label: its MT19937-64 stream,
    randperm, sample and coarse-to-fine k-means (:func:`._gpb_cues.textons`). Where we
    differ from the released code: the eigen-solver is scipy's (see
    :mod:`._gpb_spectral`).
    """
    rsz = check_rsz(rsz)
    eigensolver_for(eigensolver, (0, 0))  # its name checked before any work
    img, kind = _photograph(image)
    _check_size(img)
    rsz = check_rsz(rsz, img.shape[:2])  # before mPb, the costly part
    with reuse_freed_memory():  # gigabytes of temporaries: no fresh pages for each
        return _gpb(img, kind, rsz, eigensolver, timings)


def _gpb(img, kind, rsz, eigensolver, timings):
    import time

    t0 = time.process_time()
    # mPb's and gPb's weighted sums of the cues, formed cue by cue: the 12 cues
    # together are 12 times an (8, H, W) stack (1.9 GB at 1924 x 1284)
    weights = GPB_WEIGHTS[kind]
    mpb_all, local = local_cue_sums(img, (MPB_WEIGHTS[kind], weights[:12]))
    thin = np.clip(_MPB_GAIN * nonmax_channels(mpb_all), 0.0, 1.0)
    h, w = thin.shape
    if rsz < 1:  # multiscalePb.m: the weighted cues resized, then thinned
        small = np.stack([imresize_bicubic(ch, scale=rsz) for ch in mpb_all])
        thin = np.clip(_MPB_GAIN * nonmax_channels(small), 0.0, 1.0)
    del mpb_all
    t1 = time.process_time()
    stage: dict[str, float] = {}  # CPU seconds by stage
    found, t_multigrid = None, 0.0
    if eigensolver_for(eigensolver, thin.shape) == "multigrid":
        t = time.process_time()
        found = multigrid_eigs(thin)  # builds W at every level itself
        t_multigrid = time.process_time() - t
    spb, _, _ = spectral_pb(thin, out_shape=(h, w), eigenpairs=found, timings=stage)
    stage["eigenvectors"] += t_multigrid
    t2 = time.process_time()
    orient = local + weights[12] * spb
    if timings is not None:
        timings["mPb"] = t1 - t0
        timings.update(stage)
        timings.setdefault("sPb", t2 - t1 - sum(stage.values()))
    k = np.argmax(orient, axis=0)
    soft = np.clip(np.take_along_axis(orient, k[None], 0)[0], 0.0, 1.0)
    return np.moveaxis(orient, 0, -1).copy(), soft, k * (np.pi / NORIENT)


def gpb_owt_ucm(
    image,
    *,
    rsz: float = 1.0,
    eigensolver: str = "auto",
    fmt: str = "doubleSize",
    timings: dict | None = None,
):
    """gPb-owt-ucm: the ultrametric contour map of a photograph's gPb.

    Parameters
    ----------
    image : (H, W, 3) or (H, W) uint8
        As :func:`gpb`.
    rsz : float in (0, 1], default 1.0
        As :func:`gpb`.
    eigensolver : {'auto', 'exact', 'multigrid'}, default 'auto'
        As :func:`gpb`.
    fmt : {'doubleSize', 'imageSize'}
        As :func:`segbench.algorithms.owt_ucm`; 'doubleSize' is the ``ucm2`` of the
        BSDS500's released results.
    timings : dict, optional
        As :func:`gpb`, plus 'OWT-UCM'.

    Returns
    -------
    ndarray of float64
        The ultrametric contour map in [0, 1].
    """
    import time

    with reuse_freed_memory():
        orient, _, _ = gpb(image, rsz=rsz, eigensolver=eigensolver, timings=timings)
        t = time.process_time()
        ucm = owt_ucm(orient, fmt=fmt)
    if timings is not None:
        timings["OWT-UCM"] = time.process_time() - t
    return ucm


def gpb_file(
    src,
    dst,
    *,
    output: str = "soft",
    rsz: float = 1.0,
    eigensolver: str = "auto",
    ucm_dst=None,
) -> Path:
    """Read a photograph, run gPb, write ``dst``.

    Parameters
    ----------
    src : path
        A photograph (:func:`segbench.io.read_image`: 8-bit colour or grey).
    dst : path
        ``output='soft'``: a 16-bit PNG of gPb (the max over orientations, in [0, 1]),
        for ``segbench boundary`` (with ``--nms`` to thin it); ``output='ucm'``: a
        ``.mat`` holding ``ucm2`` (gPb-owt-ucm, doubleSize) for ``segbench region``.
    rsz : float in (0, 1], default 1.0
        As :func:`gpb`.
    eigensolver : {'auto', 'exact', 'multigrid'}, default 'auto'
        As :func:`gpb`.
    ucm_dst : path, optional
        With ``output='soft'``: also write gPb-owt-ucm there, from the same gPb (one
        gPb, about 15 CPU-s of a 481 x 321 image, for both files).

    Returns
    -------
    Path
        ``dst``.
    """

    if output not in ("soft", "ucm"):
        raise InputError(f"output must be 'soft' or 'ucm', got {output!r}")
    if ucm_dst is not None and output != "soft":
        raise InputError("ucm_dst goes with output='soft' (the ucm2 is then dst itself)")
    img = read_image(src)  # a grey photograph comes as three equal channels
    try:
        orient, soft, _ = gpb(img, rsz=rsz, eigensolver=eigensolver)
        if output == "ucm":
            return write_ucm2(dst, owt_ucm(orient))
        if ucm_dst is not None:
            write_ucm2(ucm_dst, owt_ucm(orient))
        return write_soft_map(dst, soft, bits=16)
    except InputError as e:
        if e.path is None:
            raise InputError(e.problem, src) from None
        raise
