"""Category boundaries from label maps (``mask2edge``), the kill-internal mask, the
multi-label edge encoding and nearest-neighbour rescaling.

Pure array functions: numpy and ``scipy.ndimage`` only, no loop over pixels.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..primitives import thin as thin_map

#: Bits of the multi-label RGB encoding: 8 per channel, 3 channels.
MAX_ENCODED_CLASSES = 24


def _bbox(mask: np.ndarray, pad: int) -> tuple[slice, slice] | None:
    """The bounding box of ``mask``'s pixels grown by ``pad`` (clipped), or None."""
    rows = np.flatnonzero(mask.any(axis=1))
    if rows.size == 0:
        return None
    cols = np.flatnonzero(mask.any(axis=0))
    h, w = mask.shape
    return (
        slice(max(rows[0] - pad, 0), min(rows[-1] + pad + 1, h)),
        slice(max(cols[0] - pad, 0), min(cols[-1] + pad + 1, w)),
    )


def mask2edge(mask, *, radius: float = 2, ignore=None) -> np.ndarray:
    """The two-sided boundary band of one binary region, as pyEdgeEval's ``mask2bdry``.

    Parameters
    ----------
    mask : (H, W) array_like of bool
        The region (one class, or one instance).
    radius : float, default 2
        Half-width of the band in pixels (Euclidean).
    ignore : (H, W) array_like of bool, optional
        Void pixels (Cityscapes labels 2 and 3): no boundary is drawn between the
        region and them.

    Returns
    -------
    (H, W) ndarray of bool
        A pixel is on the boundary when ``0 < inner + outer <= radius``, where
        ``inner`` is its distance to the nearest pixel in neither ``mask`` nor
        ``ignore`` (0 outside ``mask | ignore``) and ``outer`` its distance to the
        nearest ``mask`` pixel (0 inside ``mask``). So the band holds the region's
        pixels within ``radius`` of another label and the other label's pixels
        within ``radius`` of the region; a region beside void gets no boundary there.

    Notes
    -----
    Follows pyEdgeEval 0.2.8 ``utils/distance_transforms.py`` (``mask2bdry``, L10-31,
    exact Euclidean distance transforms) and so SEAL's ``seg2edge(..., 'regular')``
    on one binary mask. Pixels outside the image are neither region nor background
    (``scipy.ndimage.distance_transform_edt``): the image border is no boundary. The
    distances are taken in the region's bounding box grown by ``2 radius + 1``, which
    gives every distance up to ``radius`` that decides a pixel exactly.
    """
    m = np.asarray(mask, dtype=bool)
    g = np.zeros_like(m) if ignore is None else np.asarray(ignore, dtype=bool)
    if g.shape != m.shape:
        raise InputError(f"ignore mask {g.shape} and region {m.shape} differ in size")
    out = np.zeros(m.shape, dtype=bool)
    box = _bbox(m, 2 * int(np.ceil(radius)) + 1)
    if box is None:
        return out
    from scipy.ndimage import distance_transform_edt

    mb, gb = m[box], g[box] & ~m[box]
    inside = mb | gb
    if inside.all():  # nothing else within reach: no boundary
        return out
    inner = distance_transform_edt(inside)
    outer = distance_transform_edt(~mb)
    dist = inner + outer
    out[box] = (dist > 0) & (dist <= radius)
    return out


def class_edges(
    labels,
    label: int,
    *,
    radius: float = 2,
    ignore=None,
    instances=None,
    thin: bool = False,
) -> np.ndarray:
    """The boundary map of one category of a label map.

    Parameters
    ----------
    labels : (H, W) array_like of int
    label : int
        The category's value in ``labels``.
    radius, ignore
        As :func:`mask2edge`.
    instances : (H, W) array_like of int, optional
        Instance ids of this category's pixels (0 elsewhere): the boundaries of each
        instance are added, so two touching instances of the category are separated
        (SEAL's instance-sensitive boundaries).
    thin : bool, default False
        Thin the band to one pixel (MATLAB ``bwmorph(.., 'thin', Inf)``), as
        pyEdgeEval's "thin" ground truth (radius 1, then thinned).

    Returns
    -------
    (H, W) ndarray of bool

    Notes
    -----
    As pyEdgeEval's ``loop_mask2edge`` / ``loop_instance_mask2edge`` for one
    category (``edge_tools/mask2edge_loop.py`` L39-56, L120-143): the class band OR
    every instance band, then thinned when asked.
    """
    labels = np.asarray(labels)
    edge = mask2edge(labels == label, radius=radius, ignore=ignore)
    if instances is not None:
        inst = np.asarray(instances)
        for k in np.unique(inst[inst > 0]):
            edge |= mask2edge(inst == k, radius=radius, ignore=ignore)
    if thin and edge.any():
        edge = thin_map(edge)
    return edge


def kill_mask(gt_edges, region, max_dist: float) -> np.ndarray:
    """Pixels whose predictions are removed by ``kill_internal``: inside the category's
    region and farther than ``max_dist`` times the image diagonal from its boundary.

    Parameters
    ----------
    gt_edges : (H, W) array_like of bool
        The category's ground-truth boundary map (not empty).
    region : (H, W) array_like of bool
        The category's pixels.
    max_dist : float
        The matching tolerance, a fraction of the diagonal.

    Returns
    -------
    (H, W) ndarray of bool

    Notes
    -----
    SEISM ``kill_internal_bdries.m`` (``buffer = maxDist * diag; distmap =
    bwdist(gt_bdry); killmask = (distmap > buffer) & mask``) and pyEdgeEval 0.2.8
    ``common/multi_label/options.py`` L7-25 (``distance_transform_edt(1 - gt)``).
    """
    from scipy.ndimage import distance_transform_edt

    g = np.asarray(gt_edges, dtype=bool)
    h, w = g.shape
    buffer = max_dist * np.hypot(h, w)
    return (distance_transform_edt(~g) > buffer) & np.asarray(region, dtype=bool)


# -- the multi-label edge encoding ------------------------------------------------------


def _slot(k: int) -> tuple[int, int]:
    """(channel index in an RGB array, bit) of class ``k`` (0-based): classes 0-7 are
    the bits of B, 8-15 of G, 16-23 of R."""
    return 2 - k // 8, k % 8


def encode_multilabel(edges) -> np.ndarray:
    """Pack per-class boundary maps into one RGB image, as pyEdgeEval writes them.

    Parameters
    ----------
    edges : (C, H, W) array_like of bool, C <= 24

    Returns
    -------
    (H, W, 3) ndarray of uint8, channels in R, G, B order
        Class ``k`` (0-based) sets bit ``k`` of B for k < 8, bit ``k - 8`` of G for
        k < 16, bit ``k - 16`` of R otherwise.

    Notes
    -----
    pyEdgeEval 0.2.8 ``common/multi_label/edge_encoding.py`` (``rgb_multilabel_encoding``
    L30-62): the layout of its converted SBD and Cityscapes ground truth
    (``*_edge.png``) and of multi-label predictions in that form.
    """
    e = np.asarray(edges, dtype=bool)
    if e.ndim != 3 or not 0 < e.shape[0] <= MAX_ENCODED_CLASSES:
        raise InputError(
            f"expected (C, H, W) boundary maps with 1 <= C <= "
            f"{MAX_ENCODED_CLASSES}, got shape {e.shape}"
        )
    out = np.zeros(e.shape[1:] + (3,), dtype=np.uint8)
    for k in range(e.shape[0]):
        ch, bit = _slot(k)
        out[..., ch] |= e[k].astype(np.uint8) << bit
    return out


def decode_class(rgb, k: int) -> np.ndarray:
    """Class ``k``'s (0-based) boundary map of a multi-label RGB image
    (:func:`encode_multilabel`), as an (H, W) bool array."""
    ch, bit = _slot(int(k))
    return ((np.asarray(rgb)[..., ch] >> bit) & 1).astype(bool)


def decode_multilabel(rgb, n_classes: int) -> np.ndarray:
    """Every class's boundary map of a multi-label RGB image: (C, H, W) bool, the
    inverse of :func:`encode_multilabel` (pyEdgeEval's ``decode_png``)."""
    if not 0 < n_classes <= MAX_ENCODED_CLASSES:
        raise InputError(
            f"the RGB encoding holds 1 to {MAX_ENCODED_CLASSES} classes, not {n_classes}"
        )
    return np.stack([decode_class(rgb, k) for k in range(n_classes)])


# -- rescaling --------------------------------------------------------------------------


def scaled_shape(shape, scale: float) -> tuple[int, int]:
    """``(int(H * scale + 0.5), int(W * scale + 0.5))``: the size pyEdgeEval's
    ``load_scaled_edge`` and its Cityscapes conversion give."""
    h, w = shape[:2]
    return int(h * scale + 0.5), int(w * scale + 0.5)


def resize_nearest(arr, shape) -> np.ndarray:
    """Nearest-neighbour resampling of the first two axes to ``shape``.

    Output pixel ``i`` takes input pixel ``floor((i + 0.5) * H / H')`` (pixel
    centres), as Pillow's ``NEAREST`` (pyEdgeEval) and, for a factor of 1/2 on even
    sizes, MATLAB ``imresize(.., 0.5, 'nearest')`` (SEAL): both take the odd rows
    and columns (0-based).
    """
    a = np.asarray(arr)
    h, w = a.shape[:2]
    oh, ow = shape
    if (oh, ow) == (h, w):
        return a
    rows = np.minimum(((np.arange(oh) + 0.5) * h / oh).astype(np.int64), h - 1)
    cols = np.minimum(((np.arange(ow) + 0.5) * w / ow).astype(np.int64), w - 1)
    return a[rows[:, None], cols[None, :]]
