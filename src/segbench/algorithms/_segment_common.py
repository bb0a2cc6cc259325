"""Pieces shared by the segmenters (:mod:`.segmenters`, :mod:`._ncut2001`): input checks,
RGB scaling, canonical label numbering and a deterministic weighted k-means."""

from __future__ import annotations

import numpy as np
from scipy.cluster.vq import vq

from ..errors import InputError

__all__ = []


def _check(image, k) -> tuple[np.ndarray, int]:
    img = np.asarray(image)
    if (
        img.ndim not in (2, 3)
        or (img.ndim == 3 and img.shape[2] not in (1, 3, 4))
        or img.size == 0
    ):
        raise InputError(f"image must be (H, W) or (H, W, 3), got shape {img.shape}")
    if isinstance(k, (bool, np.bool_)) or int(k) != k or k < 1:
        raise InputError(f"the number of segments k must be a positive integer, got {k!r}")
    return img, int(k)


def _rgb01(image: np.ndarray) -> np.ndarray:
    """(H, W, 3) float64 RGB in [0, 1] (grey repeated, alpha dropped)."""
    img = np.asarray(image)
    if img.dtype == np.uint8:
        img = img / 255.0
    elif img.dtype == np.uint16:
        img = img / 65535.0
    else:
        img = img.astype(np.float64)
    if img.ndim == 2:
        img = img[..., None]
    img = img[..., :3]
    if img.shape[2] == 1:
        img = np.repeat(img, 3, axis=2)
    return img


def _canonical(labels: np.ndarray) -> np.ndarray:
    """Renumber labels 0..K-1 in order of first occurrence in raster order (int32)."""
    flat = labels.ravel()
    _, first, inv = np.unique(flat, return_index=True, return_inverse=True)
    rank = np.empty(first.size, np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inv.ravel()].reshape(labels.shape).astype(np.int32)


def _kmeans(
    x: np.ndarray,
    k: int,
    *,
    weights: np.ndarray | None = None,
    seed: int = 0,
    n_iter: int = 30,
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted Lloyd k-means with k-means++ seeding; no cluster is left empty.

    Deterministic: the seeding draws from ``np.random.default_rng(seed)``; assignment is
    scipy's compiled ``vq`` (no BLAS, so no dependence on thread counts); centres are
    weighted means by ``np.bincount``. Returns ``(labels, centres)``; fewer than ``k``
    clusters only when ``x`` has fewer than ``k`` distinct rows.
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    n = x.shape[0]
    w = np.ones(n) if weights is None else np.asarray(weights, np.float64)
    rng = np.random.default_rng(seed)
    # k-means++ seeding (Arthur and Vassilvitskii 2007), weighted
    centres = [x[rng.choice(n, p=w / w.sum())]]
    d2 = ((x - centres[0]) ** 2).sum(axis=1)
    for _ in range(1, k):
        p = w * d2
        if p.sum() <= 0:  # fewer distinct points than clusters
            break
        c = x[rng.choice(n, p=p / p.sum())]
        centres.append(c)
        d2 = np.minimum(d2, ((x - c) ** 2).sum(axis=1))
    c = np.array(centres)
    kk = len(c)
    labels = vq(x, c, check_finite=False)[0]
    for _ in range(n_iter):
        mass = np.bincount(labels, weights=w, minlength=kk)
        empty = np.flatnonzero(mass == 0)
        if empty.size:
            # move each empty centre onto the point farthest from its own centre
            _fill_empty(x, labels, c, empty, move_centres=True)
            mass = np.bincount(labels, weights=w, minlength=kk)
        new: np.ndarray = np.stack(  # float64: bincount with weights
            [
                np.bincount(labels, weights=w * x[:, j], minlength=kk)
                for j in range(x.shape[1])
            ],
            axis=1,
        )
        keep = mass > 0
        new[keep] /= mass[keep, None]
        new[~keep] = c[~keep]
        c = new
        nxt = vq(x, c, check_finite=False)[0]
        if np.array_equal(nxt, labels):
            break
        labels = nxt
    # a final guarantee: every centre owns a point (duplicate-free data)
    empty = np.flatnonzero(np.bincount(labels, minlength=kk) == 0)
    if empty.size:
        _fill_empty(x, labels, c, empty, move_centres=False)
    return labels, c


def _fill_empty(
    x: np.ndarray,
    labels: np.ndarray,
    c: np.ndarray,
    empty: np.ndarray,
    *,
    move_centres: bool,
) -> None:
    """Give each empty cluster (in order) the point farthest from its own centre.

    Only points of clusters with more than one point move; stops when none is left.
    ``labels`` (and with ``move_centres`` the centres ``c``) are updated in place.
    """
    dist = ((x - c[labels]) ** 2).sum(axis=1)
    counts = np.bincount(labels, minlength=len(c))
    for e in empty:
        cand = np.where(counts[labels] > 1, dist, -1.0)
        far = int(np.argmax(cand))
        if cand[far] <= 0:
            break
        counts[labels[far]] -= 1
        counts[e] += 1
        labels[far] = e
        if move_centres:
            c[e] = x[far]
        dist[far] = 0.0
