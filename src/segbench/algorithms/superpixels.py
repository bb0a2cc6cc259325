"""Baseline superpixel algorithms (scikit-image) driven by a target number of superpixels K.

* :func:`slic`: SLIC (Achanta et al. 2012), ``n_segments=K``.
* :func:`watershed`: compact watershed (Neubert and Protzel 2014) on the Sobel gradient,
  ``markers=K`` seeds on a grid.
* :func:`felzenszwalb`: Felzenszwalb-Huttenlocher graph segmentation (2004), whose
  number of segments is set through ``min_size``.
* :func:`quickshift`: Quick shift (Vedaldi and Soatto 2008), whose number of segments
  is set through ``kernel_size``.
* :func:`seeds`: SEEDS (Van den Bergh et al. 2012/2015) through OpenCV's contrib module
  (``cv2.ximgproc``, the authors' code merged into OpenCV): the optional extra
  ``segbench[superpixels]`` (``opencv-contrib-python-headless``).

None of them hits K exactly; the benchmark records the number actually produced and
plots metrics against it, as the superpixel literature does. For the two algorithms
without a K parameter, the controlling parameter is found by a short deterministic
search: start from a calibrated guess, then take secant steps on log(count) vs
log(parameter) and keep the run whose count is closest to K. Every function is
deterministic (no clock, no unseeded randomness) and returns labels ``0..n-1`` as int32.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..errors import InputError
from ..primitives import compact_labels

__all__ = [
    "SUPERPIXEL_ALGORITHMS",
    "check_available",
    "felzenszwalb",
    "quickshift",
    "seeds",
    "seeds_count",
    "slic",
    "superpixels",
    "watershed",
]


def _image(image) -> np.ndarray:
    img = np.asarray(image)
    if img.ndim == 2:
        img = np.repeat(img[..., None], 3, axis=2)
    if img.ndim != 3 or img.shape[2] not in (3, 4):
        raise InputError(f"image must be (H, W) or (H, W, 3), got shape {img.shape}")
    return img[..., :3]


def _k(k, image) -> int:
    if int(k) != k or k < 1:
        raise InputError(f"the number of superpixels must be a positive integer, got {k}")
    return int(min(int(k), image.shape[0] * image.shape[1]))


def _sequential(labels) -> np.ndarray:
    """Labels renumbered 0..n-1 in increasing order, int32."""
    return compact_labels(labels, void=None)[0] - np.int32(1)


def _fit(
    run: Callable[[float], np.ndarray],
    k: int,
    guess: float,
    exponent: float,
    lo: float,
    hi: float,
    max_runs: int,
) -> np.ndarray:
    """Labels of the run whose superpixel count is closest to ``k``.

    ``count(p)`` is modelled locally as ``c * p ** exponent``; the first step uses the
    calibrated ``exponent``, later steps the secant through the last two runs.
    """
    p = float(min(max(guess, lo), hi))
    tried: list[tuple[float, int, np.ndarray]] = []
    for _ in range(max(1, max_runs)):
        labels = run(p)
        n = int(labels.max()) + 1
        tried.append((p, n, labels))
        if n == k:
            break
        slope = exponent
        if len(tried) >= 2:
            (p0, n0, _), (p1, n1, _) = tried[-2], tried[-1]
            if p0 != p1 and n0 != n1:
                slope = math.log(n1 / n0) / math.log(p1 / p0)
                if not exponent * 4 <= slope <= exponent / 4:  # same sign, sane size
                    slope = exponent
        nxt = float(min(max(p * (k / n) ** (1.0 / slope), lo), hi))
        if any(abs(nxt - q) <= 1e-9 * max(1.0, q) for q, _, _ in tried):
            break
        p = nxt
    best = min(tried, key=lambda t: (abs(math.log(t[1] / k)), t[0]))
    return best[2]


def slic(
    image, k: int, *, compactness: float = 10.0, sigma: float = 0.0, **kwargs
) -> np.ndarray:
    """SLIC superpixels: ``skimage.segmentation.slic(image, n_segments=k, ...)``.

    Parameters
    ----------
    image : (H, W, 3) array
        RGB (SLIC clusters in CIELAB, converted by scikit-image).
    k : int
        Target number of superpixels (the grid SLIC starts from; connectivity
        enforcement usually leaves fewer).
    compactness : float, default 10
        scikit-image's default balance of colour and space.
    sigma : float, default 0
        Gaussian pre-smoothing.
    **kwargs
        Passed to scikit-image.

    Returns
    -------
    (H, W) int32 labels 0..n-1.

    Notes
    -----
    With the defaults this is exactly the ``slic200`` call of the superpixel fixtures
    (``slic(img, n_segments=200, compactness=10, start_label=0)``) for k = 200.
    """
    from skimage.segmentation import slic as _slic

    img = _image(image)
    return _sequential(
        _slic(
            img,
            n_segments=_k(k, img),
            compactness=compactness,
            sigma=sigma,
            start_label=0,
            **kwargs,
        )
    )


def watershed(image, k: int, *, compactness: float = 1e-3) -> np.ndarray:
    """Compact watershed superpixels from ``k`` grid seeds on the Sobel gradient.

    ``skimage.segmentation.watershed(sobel(gray), markers=k, compactness=...)``; the
    gradient is of the grey image (``rgb2gray``).

    References
    ----------
    .. [1] P. Neubert, P. Protzel, "Compact watershed and preemptive SLIC", ICPR 2014.
    """
    from skimage.color import rgb2gray
    from skimage.filters import sobel
    from skimage.segmentation import watershed as _ws

    img = _image(image)
    grad = sobel(rgb2gray(img))
    return _sequential(_ws(grad, markers=_k(k, img), compactness=compactness))


def felzenszwalb(
    image, k: int, *, scale: float = 1.0, sigma: float = 0.5, max_runs: int = 4
) -> np.ndarray:
    """Felzenszwalb-Huttenlocher segments, ``min_size`` searched to give about ``k``.

    With a small ``scale`` the number of segments is governed by ``min_size``, roughly
    ``0.25 N / min_size`` on BSDS images; the search starts there and takes at most
    ``max_runs`` runs.

    References
    ----------
    .. [1] P. F. Felzenszwalb, D. P. Huttenlocher, "Efficient graph-based image
       segmentation", IJCV 59(2), 2004.
    """
    from skimage.segmentation import felzenszwalb as _fh

    img = _image(image)
    k = _k(k, img)
    n = img.shape[0] * img.shape[1]

    def run(min_size: float) -> np.ndarray:
        return _sequential(
            _fh(img, scale=scale, sigma=sigma, min_size=max(1, int(round(min_size))))
        )

    return _fit(run, k, 0.25 * n / k, -1.0, 1.0, float(n), max_runs)


def quickshift(
    image, k: int, *, ratio: float = 0.5, max_runs: int = 3, random_seed: int = 42
) -> np.ndarray:
    """Quick shift segments, ``kernel_size`` searched to give about ``k``.

    ``max_dist`` is tied to ``2 * kernel_size``. The count falls roughly as
    ``kernel_size ** -2.8`` on BSDS images; the search starts from that calibration and
    takes at most ``max_runs`` runs (quick shift is the slowest baseline). The seed of
    scikit-image's tie-breaking noise is fixed.

    References
    ----------
    .. [1] A. Vedaldi, S. Soatto, "Quick shift and kernel methods for mode seeking",
       ECCV 2008.
    """
    import inspect

    from skimage.segmentation import quickshift as _qs

    img = _image(image)
    k = _k(k, img)
    n = img.shape[0] * img.shape[1]
    # scikit-image >= 0.22 calls the seed `rng`, earlier versions `random_seed`
    seed = {
        "rng" if "rng" in inspect.signature(_qs).parameters else "random_seed": random_seed
    }

    def run(kernel: float) -> np.ndarray:
        return _sequential(
            _qs(img, ratio=ratio, kernel_size=kernel, max_dist=2 * kernel, **seed)
        )

    guess = (0.1245 * n / k) ** (1 / 2.8)
    return _fit(run, k, guess, -2.8, 0.5, 50.0, max_runs)


_SEEDS_MISSING = (
    "SEEDS needs OpenCV's contrib module (cv2.ximgproc), which is not "
    "installed: pip install 'segbench[superpixels]' "
    "(opencv-contrib-python-headless)"
)


def _ximgproc():
    """``cv2.ximgproc``, or InputError naming the extra that brings it."""
    try:
        import cv2
    except ImportError:
        raise InputError(_SEEDS_MISSING) from None
    module = getattr(cv2, "ximgproc", None)
    if module is None or not hasattr(module, "createSuperpixelSEEDS"):
        raise InputError(_SEEDS_MISSING + " (this OpenCV has no contrib module)")
    return module


#: SEEDS colour spaces: OpenCV conversion codes from RGB, by name (None: as given).
_SEEDS_COLORS = {"lab": "COLOR_RGB2Lab", "hsv": "COLOR_RGB2HSV", "rgb": None}


def seeds_count(shape, k: int, num_levels: int) -> int:
    """The number of superpixels of OpenCV's SEEDS grid for an (H, W) image asked for
    ``k`` with ``num_levels`` block levels (``getNumberOfSuperpixels()``, no iteration):
    at most ``k``, as the library documents."""
    h, w = int(shape[0]), int(shape[1])
    return int(
        _ximgproc()
        .createSuperpixelSEEDS(w, h, 3, int(k), int(num_levels))
        .getNumberOfSuperpixels()
    )


def seeds(
    image,
    k: int,
    *,
    num_levels: int | None = None,
    prior: int = 2,
    histogram_bins: int = 5,
    double_step: bool = False,
    iterations: int = 4,
    color: str = "lab",
) -> np.ndarray:
    """SEEDS superpixels (OpenCV ``cv2.ximgproc.createSuperpixelSEEDS``).

    Parameters
    ----------
    image : (H, W, 3) array
        RGB, uint8 (other dtypes are scaled from [0, 1] and rounded).
    k : int
        Requested number of superpixels, passed as ``num_superpixels``. OpenCV starts
        from a grid of blocks that divides the image; its count is at most ``k``
        ("the actual number may be smaller", OpenCV's documentation) and is what
        :func:`seeds_count` returns.
    num_levels : int, optional
        Block levels. Default: of 4, 3 and 2, the one whose grid count is closest to
        ``k`` (in ratio; ties to more levels, the more accurate): with 4 levels the
        grid of a 481 x 321 image allows 150, 260 or 600 superpixels between K = 200
        and 1200, with 2 levels 150, 294, 442, 660, 748, 1040.
    prior, histogram_bins, double_step, iterations
        OpenCV's shape prior (0-5), histogram bins per channel, two passes per level,
        and the iterations of ``iterate`` (4, the defaults of OpenCV's sample).
    color : {'lab', 'hsv', 'rgb'}, default 'lab'
        Colour space the histograms are taken in (converted by OpenCV from RGB).

    Returns
    -------
    (H, W) int32 labels 0..n-1 (n <= the grid count; OpenCV's labels renumbered in
    increasing order).

    Notes
    -----
    Deterministic: OpenCV's SEEDS draws no random numbers (the same image and
    parameters give the same labels; tested).

    References
    ----------
    .. [1] M. Van den Bergh, X. Boix, G. Roig, B. de Capitani, L. Van Gool, "SEEDS:
       Superpixels extracted via energy-driven sampling", ECCV 2012; IJCV 111(3), 2015.
    """
    xip = _ximgproc()
    import cv2

    img = _image(image)
    k = _k(k, img)
    if img.dtype != np.uint8:
        img = np.clip(np.rint(np.asarray(img, np.float64) * 255), 0, 255).astype(np.uint8)
    img = np.ascontiguousarray(img)
    if color not in _SEEDS_COLORS:
        raise InputError(
            f"SEEDS colour space must be one of {', '.join(_SEEDS_COLORS)}, not {color!r}"
        )
    conversion = _SEEDS_COLORS[color]
    if conversion is not None:
        img = cv2.cvtColor(img, getattr(cv2, conversion))
    h, w = img.shape[:2]
    if num_levels is None:
        counts = {lv: seeds_count((h, w), k, lv) for lv in (4, 3, 2)}
        num_levels = min(
            counts, key=lambda lv: (abs(math.log(max(counts[lv], 1) / k)), -lv)
        )
    if not 0 <= int(prior) <= 5:
        raise InputError(f"SEEDS prior must be in 0..5, got {prior}")
    sp = xip.createSuperpixelSEEDS(
        w, h, 3, k, int(num_levels), int(prior), int(histogram_bins), bool(double_step)
    )
    sp.iterate(img, int(iterations))
    return _sequential(sp.getLabels())


#: name -> function(image, k, **params)
SUPERPIXEL_ALGORITHMS: dict[str, Callable[..., np.ndarray]] = {
    "slic": slic,
    "felzenszwalb": felzenszwalb,
    "watershed": watershed,
    "quickshift": quickshift,
    "seeds": seeds,
}


def check_available(algorithm: str) -> None:
    """InputError (one line naming what to install) if ``algorithm`` needs an optional
    package that is absent; nothing otherwise. SEEDS needs ``segbench[superpixels]``."""
    if algorithm == "seeds":
        _ximgproc()


def superpixels(image, k: int, algorithm: str = "slic", **params) -> np.ndarray:
    """Run a baseline by name (:data:`SUPERPIXEL_ALGORITHMS`) with target count ``k``."""
    if algorithm not in SUPERPIXEL_ALGORITHMS:
        raise InputError(
            f"unknown superpixel algorithm {algorithm!r}; choose from "
            f"{', '.join(SUPERPIXEL_ALGORITHMS)}"
        )
    return SUPERPIXEL_ALGORITHMS[algorithm](image, k, **params)
