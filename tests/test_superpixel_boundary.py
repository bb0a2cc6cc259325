"""Boundary recall and precision of superpixels: windows, boundary definitions, matching."""

from __future__ import annotations

import math

import numpy as np
import pytest

from segbench.boundary import correspond_pixels, seg2bdry
from segbench.errors import InputError
from segbench.superpixel import (BoundaryScorer, boundary_counts, boundary_map,
                                 boundary_pixels, boundary_precision, boundary_recall,
                                 mean_distance_to_edge)
from segbench.superpixel._boundary import window_offsets


def _stripes(cut, shape=(6, 12)):
    """Two vertical regions split before column ``cut``."""
    row = [0] * cut + [1] * (shape[1] - cut)
    return np.repeat([row], shape[0], axis=0)


def _naive_found(src, dst, tol, square=False):
    """Pixels of ``src`` with a ``dst`` pixel within ``tol`` (brute force)."""
    ys, xs = np.nonzero(dst)
    out = 0
    for y, x in zip(*np.nonzero(src)):
        if square:
            d = np.maximum(np.abs(ys - y), np.abs(xs - x)) <= math.floor(tol)
        else:
            d = (ys - y) ** 2 + (xs - x) ** 2 <= tol * tol
        out += bool(d.any())
    return out


@pytest.mark.parametrize("seed", range(6))
def test_bsds_boundary_equals_seg2bdry(seed):
    rng = np.random.default_rng(seed)
    for shape in ((1, 1), (1, 7), (7, 1), (2, 2), (9, 13), (30, 17)):
        lab = rng.integers(0, 4, shape)
        # the compiled imageSize path against the doubled grid it samples
        ref = seg2bdry(lab, "doubleSize")[2::2, 2::2]
        for other in (lab > 1, lab[:, ::-1], lab.astype(float)):   # bool, strided
            np.testing.assert_array_equal(seg2bdry(other, "imageSize"),
                                          seg2bdry(other, "doubleSize")[2::2, 2::2])
        np.testing.assert_array_equal(seg2bdry(lab), ref)
        np.testing.assert_array_equal(boundary_map(lab), ref)
        np.testing.assert_array_equal(boundary_pixels(lab), np.flatnonzero(ref))


def test_two_sided_boundary():
    lab = _stripes(4, (3, 8))
    b = boundary_map(lab, boundary="two-sided")
    assert b[:, 3].all() and b[:, 4].all() and b.sum() == 6     # both sides, no border
    assert boundary_map(np.zeros((4, 4), int), boundary="two-sided").sum() == 0
    with pytest.raises(InputError):
        boundary_map(lab, boundary="thick")


def test_window_offsets():
    dy, dx = window_offsets(2.0, "euclidean")
    assert len(dy) == 13                                  # the disc: d <= 2 inclusive
    assert len(window_offsets(1.5, "euclidean")[0]) == 9  # the recipe's d < 2
    assert len(window_offsets(1.0, "square")[0]) == 9
    assert len(window_offsets(2.0, "square")[0]) == 25
    assert len(window_offsets(0.0, "euclidean")[0]) == 1
    with pytest.raises(InputError):
        window_offsets(-1, "euclidean")
    with pytest.raises(InputError):
        window_offsets(2, "diamond")


def test_tolerance_is_inclusive_at_two_pixels():
    gt = _stripes(4)                                      # boundary column 3
    assert boundary_recall(_stripes(6), gt) == 1.0        # column 5: 2 px away
    assert boundary_recall(_stripes(7), gt) == 0.0        # 3 px
    assert boundary_recall(_stripes(6), gt, tolerance=1.5) == 0.0
    assert boundary_recall(_stripes(6), gt, window="square", tolerance=2) == 1.0
    assert boundary_recall(_stripes(6), gt, window="square", tolerance=1) == 0.0


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("window,tol", [("euclidean", 2.0), ("euclidean", 1.5),
                                        ("euclidean", 3.2), ("square", 1), ("square", 2)])
def test_counts_against_brute_force(seed, window, tol):
    rng = np.random.default_rng(seed)
    sp = np.repeat(np.repeat(rng.integers(0, 9, (5, 6)), 4, 0), 3, 1)
    gt = np.repeat(np.repeat(rng.integers(0, 3, (4, 3)), 5, 0), 6, 1)
    for boundary in ("bsds", "two-sided"):
        c = boundary_counts(sp, gt, tolerance=tol, window=window, boundary=boundary)
        sb, gb = boundary_map(sp, boundary=boundary), boundary_map(gt, boundary=boundary)
        sq = window == "square"
        assert c.gt_pixels == gb.sum() and c.sp_pixels == sb.sum()
        assert c.gt_found == _naive_found(gb, sb, tol, sq)
        assert c.sp_found == _naive_found(sb, gb, tol, sq)


def test_recall_one_when_superpixels_refine_the_ground_truth():
    rng = np.random.default_rng(4)
    gt = np.repeat(np.repeat(rng.integers(0, 4, (5, 5)), 6, 0), 6, 1)
    sp = gt * 50 + np.repeat(np.repeat(rng.integers(0, 5, (10, 10)), 3, 0), 3, 1)
    for boundary in ("bsds", "two-sided"):
        # boundary maps are monotone: a refinement's boundary contains the coarser one
        assert not (boundary_map(gt, boundary=boundary)
                    & ~boundary_map(sp, boundary=boundary)).any()
        for window in ("euclidean", "square", "matched"):
            assert boundary_recall(sp, gt, tolerance=0 if window != "matched" else 1,
                                   window=window, boundary=boundary) == 1.0
    assert boundary_precision(gt, gt) == 1.0


def test_extremes():
    gt = _stripes(5)
    single = np.zeros_like(gt)
    c = boundary_counts(single, gt)
    assert c.recall == 0.0 and c.sp_pixels == 0 and math.isnan(c.precision)
    assert c.stutz_precision == 0.0
    grid = np.arange(gt.size).reshape(gt.shape)        # every pixel a superpixel
    assert boundary_recall(grid, gt, tolerance=0) == 1.0
    assert math.isnan(boundary_recall(grid, np.zeros_like(gt)))


def test_matched_is_one_to_one():
    gt = _stripes(4)                                    # one GT contour, 6 px
    sp = _stripes(5)                                    # one contour 1 px away
    c = boundary_counts(sp, gt, window="matched")
    assert (c.gt_found, c.sp_found) == (6, 6)
    # a double contour: both near the GT one, but only one can be matched to it
    sp2 = np.repeat([[0, 0, 0, 1, 2, 2, 2, 2, 2, 2, 2, 2]], 6, 0)
    e = boundary_counts(sp2, gt)
    m = boundary_counts(sp2, gt, window="matched")
    assert e.sp_found == 12 and m.sp_found == 6 and m.gt_found == 6
    assert m.recall <= e.recall and m.precision <= e.precision


def test_matched_uses_the_boundary_benchmark_correspondence():
    rng = np.random.default_rng(7)
    sp = np.repeat(np.repeat(rng.integers(0, 20, (8, 10)), 4, 0), 4, 1)
    gt = np.repeat(np.repeat(rng.integers(0, 3, (4, 5)), 8, 0), 8, 1)
    c = boundary_counts(sp, gt, window="matched", tolerance=2)
    diag = math.hypot(*gt.shape)
    m_gt, m_sp = correspond_pixels(seg2bdry(gt), seg2bdry(sp), (2 + 1e-9) / diag)
    assert (c.gt_found, c.sp_found) == (m_gt.sum(), m_sp.sum())


def test_scorer_reuse_and_stored_boundaries():
    rng = np.random.default_rng(1)
    sp = rng.integers(0, 5, (12, 12))
    gts = [rng.integers(0, 3, (12, 12)) for _ in range(3)]
    s = BoundaryScorer(sp)
    for g in gts:
        assert s.counts(g) == boundary_counts(sp, g)
        assert s.counts(gt_boundary=seg2bdry(g)) == boundary_counts(sp, g)
    with pytest.raises(InputError):
        s.counts(np.zeros((3, 3), int))
    with pytest.raises(InputError):
        BoundaryScorer(sp, window="matched", tolerance=0)


def test_mean_distance_to_edge():
    gt = _stripes(4, (8, 12))                           # GT boundary column 3
    sp = _stripes(7, (8, 12))                           # SP boundary column 6
    assert mean_distance_to_edge(sp, gt) == pytest.approx(3.0)
    # OpenCV's 3x3 chamfer: 3 horizontal steps of 0.955
    assert mean_distance_to_edge(sp, gt, distance="chamfer") == pytest.approx(
        3 * round(0.955 * 65536) / 65536)
    single = np.zeros_like(gt)
    assert math.isnan(mean_distance_to_edge(single, gt))
    assert mean_distance_to_edge(single, gt, distance="chamfer") == \
        pytest.approx(8192, rel=1e-6)
    with pytest.raises(InputError):
        mean_distance_to_edge(sp, gt, distance="manhattan")


@pytest.mark.parametrize("window", ["euclidean", "square"])
def test_wide_windows_spread_by_distance_transform_as_by_scattering(window):
    """Windows wider than _SCATTER_OFFSETS take a distance transform: the same pixels
    as scattering the offsets (checked here against the scatter itself)."""
    from segbench.superpixel import _boundary as B
    rng = np.random.default_rng(5)
    for _ in range(12):
        h, w = (int(v) for v in rng.integers(5, 50, 2))
        pix = np.flatnonzero(rng.random(h * w) < rng.choice([0.01, 0.1])).astype(np.int64)
        for tol in (5.5, 7, 13.2, 30):
            dy, dx = B.window_offsets(tol, window)
            assert np.array_equal(B._near(pix, (h, w), tol, window),
                                  B._spread(pix, h, w, dy, dx)), (h, w, tol)


def test_a_tolerance_wider_than_the_image_counts_every_pixel_at_once():
    """A tolerance of 1e5 px on a 12 x 16 map: every boundary pixel found (it asked
    for 596 GiB, and 1e4 ran for minutes)."""
    from segbench.superpixel import boundary_counts
    gt = np.zeros((12, 16), np.int32)
    gt[:, 8:] = 1
    sp = np.zeros((12, 16), np.int32)
    sp[:, 5:10], sp[:, 10:] = 1, 2
    for window in ("euclidean", "square"):
        c = boundary_counts(sp, gt, tolerance=1e5, window=window)
        assert c.gt_found == c.gt_pixels and c.sp_found == c.sp_pixels
    # one to one: as many matched as the smaller side has
    c = boundary_counts(sp, gt, tolerance=1e5, window="matched")
    assert c.gt_found == c.sp_found == min(c.gt_pixels, c.sp_pixels)
