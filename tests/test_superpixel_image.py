"""Measures of the superpixels alone or with the image: CO, EV, components, colour sums."""

from __future__ import annotations

import math

import numpy as np
import pytest
from skimage.measure import label as sk_label

from segbench.errors import InputError
from segbench.superpixel import (compactness, contour_density, explained_variation,
                                 intra_cluster_variation, perimeters, size_statistics,
                                 sum_squared_error, superpixel_count)


def _naive_stats(sp, x):
    """Per-label pixel values, by boolean masks."""
    return [x[sp.ravel() == v] for v in np.unique(sp)]


def test_compactness_shapes():
    assert compactness(np.zeros((10, 10), int)) == pytest.approx(math.pi / 4)
    # a 481 x 321 image as one superpixel: the C++ benchmark's 0.754139
    assert compactness(np.zeros((481, 321), int)) == pytest.approx(0.754139, abs=1e-6)
    # single pixels: 4 sides each
    assert compactness(np.arange(12).reshape(3, 4)) == pytest.approx(math.pi / 4)
    # thin stripes score low
    assert compactness(np.repeat(np.arange(10)[:, None], 40, 1)) < 0.3


def test_perimeters_count_border_and_neighbour_sides():
    sp = np.array([[0, 0, 1],
                   [0, 2, 1]])
    area, per = perimeters(sp)
    np.testing.assert_array_equal(area, [3, 2, 1])
    np.testing.assert_array_equal(per, [8, 6, 4])


@pytest.mark.parametrize("seed", range(5))
def test_components_match_scikit_image(seed):
    rng = np.random.default_rng(seed)
    sp = rng.integers(0, 4, (13, 17))
    for conn, sk in ((4, 1), (8, 2)):
        c = superpixel_count(sp, connectivity=conn)
        assert c.n_superpixels == len(np.unique(sp))
        assert c.n_components == sk_label(sp + 1, connectivity=sk, background=0).max()
        per = [sk_label(sp == v, connectivity=sk).max() for v in np.unique(sp)]
        assert c.n_split == sum(p > 1 for p in per)


def test_split_superpixel_is_reported():
    sp = np.array([[0, 1, 0],
                   [2, 2, 2]])
    c = superpixel_count(sp)
    assert (c.n_superpixels, c.n_components, c.n_split) == (3, 4, 1)
    diag = np.array([[0, 1], [1, 0]])
    assert superpixel_count(diag).n_split == 2
    assert superpixel_count(diag, connectivity=8).n_split == 0
    with pytest.raises(InputError):
        superpixel_count(sp, connectivity=6)


@pytest.mark.parametrize("seed", range(4))
def test_colour_measures_against_naive(seed):
    rng = np.random.default_rng(seed)
    sp = rng.integers(0, 6, (11, 9)) * 3
    img = rng.integers(0, 256, (11, 9, 3), dtype=np.uint8)
    x = img.reshape(-1, 3).astype(float)
    parts = _naive_stats(sp, x)
    mu = x.mean(0)
    ev = sum(len(p) * ((p.mean(0) - mu) ** 2).sum() for p in parts) / ((x - mu) ** 2).sum()
    assert explained_variation(sp, img) == pytest.approx(ev, rel=1e-12)
    icv = np.mean([math.sqrt(((p - p.mean(0)) ** 2).sum() / len(p)) for p in parts])
    assert intra_cluster_variation(sp, img) == pytest.approx(icv, rel=1e-10)
    sse = sum(((p - p.mean(0)) ** 2).sum() for p in parts) / sp.size
    assert sum_squared_error(sp, img) == pytest.approx(sse, rel=1e-10)
    xy = np.indices(sp.shape).reshape(2, -1).T.astype(float)
    sse_xy = sum(((p - p.mean(0)) ** 2).sum() for p in _naive_stats(sp, xy)) / sp.size
    assert sum_squared_error(sp) == pytest.approx(sse_xy, rel=1e-10)


def test_explained_variation_extremes():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)
    assert explained_variation(np.zeros((8, 8), int), img) == pytest.approx(0, abs=1e-12)
    assert explained_variation(np.arange(64).reshape(8, 8), img) == pytest.approx(1)
    assert math.isnan(explained_variation(np.arange(64).reshape(8, 8),
                                          np.full((8, 8, 3), 7, np.uint8)))
    grey = img[..., 0]
    assert 0 < explained_variation(np.arange(64).reshape(8, 8) // 4, grey) < 1
    with pytest.raises(InputError):
        explained_variation(np.zeros((8, 8), int), img[:4])


def test_sizes_and_contour_density():
    sp = np.repeat(np.repeat(np.arange(4).reshape(2, 2), 3, 0), [2, 4], 1)
    n, mean, std = size_statistics(sp)
    assert (n, mean, std) == (4, 9.0, 3.0)
    # columns 1, 2 and rows 2, 3 are boundary (both sides), 4 pixels in both
    assert contour_density(sp) == pytest.approx((12 + 12 - 4) / 36)
