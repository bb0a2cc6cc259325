"""Baseline boundary detectors: soft boundary maps for the demo and as references.

Both detectors return thin maps, as real detectors do after non-maximum suppression, with
values in [0, 1) that the boundary benchmark sweeps with its thresholds:

* :func:`gradient_magnitude`: Gaussian derivative colour gradient (Di Zenzo's structure
  tensor over the CIE L*a*b* channels, or over grey), non-maximum suppression, robust
  per-image scaling into [0, 1).
* :func:`canny_soft`: Canny's detector, whose hysteresis is folded into the soft value so
  that every threshold of the map gives exactly Canny's edge map at some high threshold
  ``T`` with low threshold ``low_ratio * T``: the benchmark's threshold sweep is
  Canny's own threshold sweep.
"""

from __future__ import annotations

import numba
import numpy as np
from scipy import ndimage

from ..compilation import prepare_kernels
from ..errors import InputError
from ..primitives import find_root as _find

prepare_kernels()

__all__ = ["gradient_magnitude", "canny_soft", "hysteresis_levels"]


# ---------------------------------------------------------------------------------------
# shared stages


def _channels(image, color: str) -> np.ndarray:
    """(H, W, C) float64 channels on a 0..100 scale: L*a*b*, or 100 x luminance."""
    img = np.asarray(image)
    if img.ndim not in (2, 3) or (img.ndim == 3 and img.shape[2] not in (1, 3, 4)):
        raise InputError(f"image must be (H, W) or (H, W, 3), got shape {img.shape}")
    if color not in ("lab", "grey", "gray"):
        raise InputError(f"color must be 'lab' or 'grey', not {color!r}")
    if img.dtype == np.uint8:
        img = img / 255.0
    elif img.dtype == np.uint16:
        img = img / 65535.0
    else:
        img = img.astype(np.float64, copy=False)
    if img.ndim == 3 and img.shape[2] == 4:
        img = img[..., :3]  # alpha carries no boundary information
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[..., 0]
    if img.ndim == 2:
        return 100.0 * img[..., None]
    if color == "lab":
        from skimage.color import rgb2lab

        return rgb2lab(np.clip(img, 0.0, 1.0))
    from skimage.color import rgb2gray

    return 100.0 * rgb2gray(img)[..., None]


def _gradient(ch: np.ndarray, sigma: float):
    """Colour gradient magnitude and normal direction from the structure tensor.

    Summing the outer products of the channel gradients (Di Zenzo, 1986) gives the
    direction of greatest change and its rate, sqrt of the largest eigenvalue; for one
    channel this is the ordinary gradient. Returns (magnitude, cos, sin) of the normal.
    """
    jxx = jyy = jxy = 0.0
    for c in range(ch.shape[2]):
        gy = ndimage.gaussian_filter(ch[..., c], sigma, order=(1, 0), mode="nearest")
        gx = ndimage.gaussian_filter(ch[..., c], sigma, order=(0, 1), mode="nearest")
        jxx = jxx + gx * gx
        jyy = jyy + gy * gy
        jxy = jxy + gx * gy
    half_diff = 0.5 * (jxx - jyy)
    root = np.sqrt(half_diff * half_diff + jxy * jxy)
    mag = np.sqrt(np.maximum(0.5 * (jxx + jyy) + root, 0.0))
    theta = 0.5 * np.arctan2(2.0 * jxy, jxx - jyy)  # normal angle, x to the right, y down
    return mag, np.cos(theta), np.sin(theta)


def _tangent(cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """The boundary's tangent in [0, pi) from the normal's cosine and sine."""
    return np.mod(np.arctan2(sin, cos) + np.pi / 2, np.pi)


def _nms(mag: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Non-maximum suppression across the edge.

    A pixel survives when its magnitude is at least that of both points one pixel away
    along the normal, read by bilinear interpolation (as Dollar's ``edgesNms``), so the
    result is one or at most two pixels wide. Vectorized: one ``map_coordinates`` call
    reads both neighbours of every pixel.
    """
    h, w = mag.shape
    yy, xx = np.mgrid[:h, :w].astype(np.float64)
    coords = np.stack(
        [np.concatenate([yy + sin, yy - sin]), np.concatenate([xx + cos, xx - cos])]
    )
    nb = ndimage.map_coordinates(mag, coords, order=1, mode="nearest")
    keep = (mag >= nb[:h]) & (mag >= nb[h:]) & (mag > 0)
    return np.where(keep, mag, 0.0)


def _robust_scale(mag: np.ndarray, percentile: float) -> float:
    """Half the magnitude exceeded by ``100 - percentile`` % of the pixels (at least
    tiny): that magnitude then maps to 1 - exp(-2) = 0.86 and the strongest edges, a
    little above it, to 0.9-0.99, so the map uses the whole range of thresholds."""
    s = float(np.percentile(mag, percentile))
    return 0.5 * (s if s > 1e-12 else max(float(mag.max()), 1e-12))


def _saturate(strength: np.ndarray, scale: float) -> np.ndarray:
    """Map strength in [0, inf) to [0, 1) by ``1 - exp(-strength / scale)``.

    Monotone, so every threshold of the map is a threshold of the strength, and, unlike
    clipping, it leaves no plateau of ties at 1: the benchmark's highest thresholds still
    keep only the very strongest edges, so the PR curve reaches down to low recall and
    the average precision is not cut short.
    """
    return -np.expm1(-strength / scale)


def _check(sigma: float, percentile: float, scale):
    if not sigma > 0:
        raise InputError(f"sigma must be positive, got {sigma}")
    if not 0 < percentile <= 100:
        raise InputError(f"percentile must be in (0, 100], got {percentile}")
    if scale is not None and not scale > 0:
        raise InputError(f"scale must be positive or None, got {scale}")


# ---------------------------------------------------------------------------------------
# detectors


def gradient_magnitude(
    image,
    *,
    sigma: float = 1.5,
    color: str = "lab",
    nms: bool = True,
    scale: float | None = None,
    percentile: float = 99.0,
    orientation: bool = False,
):
    """Gaussian derivative gradient magnitude with non-maximum suppression.

    Parameters
    ----------
    image : (H, W) or (H, W, 3) array
        Grey or RGB; uint8, uint16 or float in [0, 1].
    sigma : float, default 1.5
        Standard deviation of the Gaussian derivative, in pixels.
    color : {'lab', 'grey'}, default 'lab'
        'lab' measures the colour gradient over the CIE L*a*b* channels (a perceptual
        colour distance per pixel); 'grey' uses luminance only. Ignored for grey input.
    nms : bool, default True
        Thin the map by non-maximum suppression across the edge.
    scale : float, optional
        Magnitude mapped to ``1 - 1/e`` (about 0.63), in channel units per pixel
        (L*a*b* units, or 100 x luminance for 'grey'). A fixed value calibrates all
        images alike; the default None uses each image's own robust scale.
    percentile : float, default 99.0
        With ``scale=None``: the scale is half this percentile of the
        (pre-suppression) magnitude, which then maps to 0.86. A percentile rather than
        the maximum, so a few extreme pixels do not squash the rest of the map.
    orientation : bool, default False
        Also return the boundary orientation, as the Pb detectors do.

    Returns
    -------
    (H, W) ndarray of float64
        Soft boundary map ``1 - exp(-magnitude / scale)`` in [0, 1); zero off the
        suppressed ridges when ``nms``.
    theta : (H, W) ndarray of float64
        With ``orientation``: the boundary's tangent in radians in [0, pi), from +x
        (the column) towards +y (the row), the convention of
        :func:`segbench.algorithms.pb_cgtg`; the normal of the structure tensor turned
        by pi / 2.

    Notes
    -----
    The direction of the edge normal comes from the structure tensor of the channel
    gradients (Di Zenzo [1]_). Suppression compares each pixel with the bilinearly
    interpolated magnitudes one pixel away on both sides along that normal, keeping it
    when it is not smaller than either (so a ridge is one, rarely two, pixels wide).

    The saturating map keeps the order of the magnitudes, hence the PR curve, while
    spreading the strongest edges over the top thresholds instead of clipping them to 1.
    Per-image scaling removes most of an image's contrast from the output, which
    narrows the gap between ODS and OIS; pass a fixed ``scale`` to see the uncalibrated
    behaviour.

    References
    ----------
    .. [1] S. Di Zenzo, "A note on the gradient of a multi-image", Computer Vision,
       Graphics, and Image Processing 33(1), 116-125, 1986.

    Examples
    --------
    >>> import numpy as np
    >>> img = np.zeros((32, 32)); img[:, 16:] = 1.0
    >>> pb = gradient_magnitude(img)
    >>> bool(pb[:, 15:17].max(axis=1).min() > 0.5), float(pb[:, :10].max())
    (True, 0.0)
    """
    _check(sigma, percentile, scale)
    mag, cos, sin = _gradient(_channels(image, color), sigma)
    s = _robust_scale(mag, percentile) if scale is None else float(scale)
    pb = _saturate(_nms(mag, cos, sin) if nms else mag, s)
    return (pb, _tangent(cos, sin)) if orientation else pb


def canny_soft(
    image,
    *,
    sigma: float = 2.0,
    low_ratio: float = 0.4,
    color: str = "grey",
    scale: float | None = None,
    percentile: float = 99.0,
    orientation: bool = False,
):
    """Canny's detector as a soft map whose every threshold is a Canny edge map.

    Parameters
    ----------
    image : (H, W) or (H, W, 3) array
        Grey or RGB; uint8, uint16 or float in [0, 1].
    sigma : float, default 2.0
        Standard deviation of the Gaussian derivative, in pixels.
    low_ratio : float, default 0.4
        Hysteresis low threshold as a fraction of the high threshold, in (0, 1].
    color : {'grey', 'lab'}, default 'grey'
        Canny's detector is classically grey-level; 'lab' uses the colour gradient of
        :func:`gradient_magnitude`.
    scale, percentile, orientation
        Normalization of the magnitude and the orientation output, as in
        :func:`gradient_magnitude`.

    Returns
    -------
    (H, W) ndarray of float64
        Soft boundary map in [0, 1).
    theta : (H, W) ndarray of float64
        With ``orientation``: the boundary's tangent, as :func:`gradient_magnitude`.

    Notes
    -----
    Canny's detector [1]_ smooths with a Gaussian, suppresses non-maxima across the
    edge, then keeps ridge pixels at or above a low threshold that are 8-connected,
    through such pixels, to one at or above a high threshold. Here each pixel gets the
    largest high threshold ``T`` at which that hysteresis keeps it (see
    :func:`hysteresis_levels`), mapped to [0, 1) as in :func:`gradient_magnitude`. So
    ``map >= u`` is exactly Canny's output with high threshold
    ``T = -scale * log(1 - u)`` and low threshold ``low_ratio * T``, for every ``u``,
    not on a grid of levels: the benchmark's threshold sweep is Canny's own. A weak pixel
    on a strong contour scores above its own magnitude (up to magnitude / ``low_ratio``),
    which is what hysteresis is for.

    Not ``skimage.feature.canny``: that needs one call per threshold, and its Sobel
    gradient has no colour option. Here one pass, a union-find over the ridge pixels in
    decreasing magnitude (compiled with numba), gives every threshold at once.

    References
    ----------
    .. [1] J. Canny, "A computational approach to edge detection", IEEE TPAMI 8(6),
       679-698, 1986.

    Examples
    --------
    >>> import numpy as np
    >>> img = np.zeros((32, 32)); img[:, 16:] = 1.0
    >>> pb = canny_soft(img)
    >>> bool(pb[:, 15:17].max(axis=1).min() > 0.5), float(pb[:, :10].max())
    (True, 0.0)
    """
    _check(sigma, percentile, scale)
    if not 0 < low_ratio <= 1:
        raise InputError(f"low_ratio must be in (0, 1], got {low_ratio}")
    mag, cos, sin = _gradient(_channels(image, color), sigma)
    s = _robust_scale(mag, percentile) if scale is None else float(scale)
    pb = _saturate(hysteresis_levels(_nms(mag, cos, sin), low_ratio), s)
    return (pb, _tangent(cos, sin)) if orientation else pb


def hysteresis_levels(strength: np.ndarray, low_ratio: float) -> np.ndarray:
    """Largest high threshold at which hysteresis keeps each pixel.

    Parameters
    ----------
    strength : (H, W) array of float
        Non-negative edge strength; zeros are never kept.
    low_ratio : float
        Low threshold as a fraction of the high one, in (0, 1].

    Returns
    -------
    (H, W) ndarray of float64
        ``f`` with ``f >= t`` exactly where hysteresis with low ``low_ratio * t`` and
        high ``t`` keeps a pixel (``strength >= low``, 8-connected through such pixels
        to one with ``strength >= high``), for every ``t > 0``.

    Notes
    -----
    ``f(p) = max over L <= m(p) of min(L / low_ratio, M_L(p))``, where ``M_L(p)`` is the
    largest strength in the component of p among pixels of strength >= L. Adding pixels
    in decreasing strength (union-find), each pixel starts with its own strength and
    each merge at level L contributes ``min(L / low_ratio, merged maximum)`` to every
    pixel below it in the merge tree; a final pass from the root down takes the maxima.
    """
    m = np.ascontiguousarray(strength, dtype=np.float64)
    if m.ndim != 2:
        raise InputError(f"strength must be 2-D, got shape {m.shape}")
    flat = m.ravel()
    idx = np.flatnonzero(flat > 0)
    order = idx[np.argsort(-flat[idx], kind="stable")]
    out = _hysteresis_levels(flat, order, m.shape[0], m.shape[1], float(low_ratio))
    return out.reshape(m.shape)


@numba.njit(cache=True)
def _hysteresis_levels(flat, order, h, w, ratio):
    n = flat.size
    parent = np.arange(n)  # union-find over pixels
    added = np.zeros(n, np.bool_)
    comp_max = np.zeros(n)  # at each union-find root: the component's largest strength
    comp_node = np.empty(n, np.int64)  # at each root: its current merge-tree node
    # Merge-tree nodes: pixels are nodes 0..n-1, merges n, n+1, ...; value and parent.
    k = order.size
    value = np.zeros(n + k)
    tree_up = np.full(n + k, -1)
    nodes = n
    for p in order:
        level = flat[p]
        added[p] = True
        comp_max[p] = level
        comp_node[p] = p
        value[p] = level
        r, c = p // w, p % w
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                rr, cc = r + dr, c + dc
                if (dr == 0 and dc == 0) or rr < 0 or rr >= h or cc < 0 or cc >= w:
                    continue
                q = rr * w + cc
                if not added[q]:
                    continue
                a, b = _find(parent, p), _find(parent, q)
                if a == b:
                    continue
                top = max(comp_max[a], comp_max[b])
                value[nodes] = min(level / ratio, top)
                tree_up[comp_node[a]] = nodes
                tree_up[comp_node[b]] = nodes
                parent[b] = a
                comp_max[a] = top
                comp_node[a] = nodes
                nodes += 1
    # Parents are created after their children: walk nodes from the newest down.
    for node in range(nodes - 1, -1, -1):
        up = tree_up[node]
        if up >= 0 and value[up] > value[node]:
            value[node] = value[up]
    out = np.zeros(n)
    for p in order:
        out[p] = value[p]
    return out
