"""Region measures against brute-force references, and the 2001 paper's GCE/LCE properties."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.ndimage as ndi

from segbench.errors import InputError
from segbench.region import (compact_labels, contingency_table, covering, gce, lce,
                             local_refinement_error, probabilistic_rand_index, rand_index,
                             refinement_error, region_scores, ucm_levels, ucm_segmentation,
                             variation_of_information)

RNG = np.random.default_rng(20240611)


def _random_seg(shape, k, rng=RNG):
    """Blocky random segmentation with up to k regions, labels 1..k."""
    h, w = shape
    coarse = rng.integers(1, k + 1, size=(max(1, h // 3), max(1, w // 3)))
    seg = np.kron(coarse, np.ones((3, 3), int))[:h, :w]
    pad = np.zeros(shape, int)
    pad[:seg.shape[0], :seg.shape[1]] = seg
    pad[pad == 0] = 1
    return pad


def _refine(seg, rng=RNG):
    """A refinement: every region split by an extra random partition."""
    extra = _random_seg(seg.shape, 3, rng)
    return seg * 10 + extra


# --------------------------------------------------------------- brute-force references

def _bf_refinement(a, b):
    """E(S1, S2, p) per pixel by counting regions directly."""
    a, b = a.ravel(), b.ravel()
    out = np.empty(a.size)
    for p in range(a.size):
        r1 = a == a[p]
        r2 = b == b[p]
        out[p] = (r1 & ~r2).sum() / r1.sum()
    return out


def _bf_rand(a, b):
    a, b = a.ravel(), b.ravel()
    agree = sum((a[i] == a[j]) == (b[i] == b[j])
                for i, j in itertools.combinations(range(a.size), 2))
    return agree / math.comb(a.size, 2)


def _bf_covering(seg, gt):
    """C(seg -> gt) from the definition (no void)."""
    n = gt.size
    total = 0.0
    for g in np.unique(gt):
        rg = gt == g
        best = max((rg & (seg == s)).sum() / (rg | (seg == s)).sum() for s in np.unique(seg))
        total += rg.sum() * best
    return total / n


# --------------------------------------------------------------- table

def test_contingency_table_counts_and_void():
    a = np.array([[0, 1, 1], [2, 2, 7]])
    b = np.array([[1, 1, 0], [3, 3, 3]])
    t = contingency_table(a, b)
    assert t.shape == (4, 3)            # a: void + {1, 2, 7}; b: void + {1, 3}
    assert t.sum() == a.size
    assert t[0, 1] == 1                 # a void, b=1
    assert t[1, 0] == 1                 # a=1, b void
    t2 = contingency_table(a, b, void=None)
    assert t2[0].sum() == 0 and t2[:, 0].sum() == 0 and t2.sum() == a.size


def test_compact_labels_large_negative_and_void_none():
    lab = np.array([[-5, 10 ** 9], [0, -5]])
    c, k = compact_labels(lab)
    assert k == 2 and c[1, 0] == 0 and c[0, 0] == c[1, 1] != 0
    c, k = compact_labels(lab, void=None)
    assert k == 3 and c.min() == 1
    c, k = compact_labels(np.array([[2.0, 0.0], [5.0, 2.0]]))     # MATLAB doubles
    assert k == 2 and c.tolist() == [[1, 0], [2, 1]]


def test_bad_inputs():
    with pytest.raises(InputError):
        contingency_table(np.zeros((2, 2), int), np.zeros((3, 2), int))
    with pytest.raises(InputError):
        contingency_table(np.full((2, 2), 0.5), np.zeros((2, 2), int))
    with pytest.raises(InputError):
        rand_index()


# --------------------------------------------------------------- covering, RI, VI

@pytest.mark.parametrize("seed", range(4))
def test_measures_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    a = _random_seg((7, 8), 4, rng)
    b = _random_seg((7, 8), 3, rng)
    assert rand_index(a, b) == pytest.approx(_bf_rand(a, b), abs=1e-12)
    assert covering(a, b) == pytest.approx(_bf_covering(a, b), abs=1e-12)
    assert covering(b, a) == pytest.approx(_bf_covering(b, a), abs=1e-12)
    # VI against scikit-image's two conditional entropies (bits), whose sum it is
    from skimage.metrics import variation_of_information as sk_vi
    h = sk_vi(a, b)
    assert variation_of_information(a, b) == pytest.approx(h.sum(), abs=1e-10)
    t = contingency_table(a, b)
    assert rand_index(table=t) == rand_index(a, b)


def test_identical_segmentations_score_perfectly():
    a = _random_seg((12, 9), 5)
    s = region_scores(a, [a, a])
    assert (s.covering, s.covering_seg, s.pri, s.vi) == (1.0, 1.0, 1.0, 0.0)
    assert probabilistic_rand_index(a, [a, a]) == 1.0


def test_void_pixels_enlarge_unions_as_official():
    """match_segmentations.m: pixels void in seg still count in the ground-truth area."""
    seg = np.array([[1, 1, 0, 0]])
    gt = np.array([[1, 1, 1, 1]])
    assert covering(seg, gt) == pytest.approx(0.5)
    # match_segmentations2.m drops void pixels entirely
    assert rand_index(seg, gt) == 1.0 and variation_of_information(seg, gt) == 0.0


# --------------------------------------------------------------- GCE / LCE (2001 paper)

@pytest.mark.parametrize("seed", range(5))
def test_gce_lce_against_per_pixel_definition(seed):
    rng = np.random.default_rng(100 + seed)
    a = _random_seg((6, 9), 4, rng)
    b = _random_seg((6, 9), 4, rng)
    e12 = _bf_refinement(a, b)
    e21 = _bf_refinement(b, a)
    n = a.size
    assert gce(a, b) == pytest.approx(min(e12.sum(), e21.sum()) / n, abs=1e-12)
    assert lce(a, b) == pytest.approx(np.minimum(e12, e21).sum() / n, abs=1e-12)
    assert refinement_error(a, b) == pytest.approx(e12.mean(), abs=1e-12)
    assert refinement_error(b, a) == pytest.approx(e21.mean(), abs=1e-12)
    np.testing.assert_allclose(local_refinement_error(a, b).ravel(), e12, atol=1e-12)
    np.testing.assert_allclose(local_refinement_error(b, a).ravel(), e21, atol=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_zero_for_refinements_in_either_order(seed):
    rng = np.random.default_rng(200 + seed)
    coarse = _random_seg((15, 12), 4, rng)
    fine = _refine(coarse, rng)
    for x, y in ((coarse, fine), (fine, coarse)):
        assert gce(x, y) == 0.0
        assert lce(x, y) == 0.0
    assert refinement_error(fine, coarse) == 0.0        # fine lies inside coarse
    if len(np.unique(fine)) > len(np.unique(coarse)):
        assert refinement_error(coarse, fine) > 0.0     # the other direction is not free


def test_zero_for_trivial_segmentations():
    a = _random_seg((10, 11), 6)
    one_region = np.ones_like(a)
    one_per_pixel = np.arange(a.size).reshape(a.shape) + 1
    for trivial in (one_region, one_per_pixel):
        assert gce(a, trivial) == 0.0 and gce(trivial, a) == 0.0
        assert lce(a, trivial) == 0.0 and lce(trivial, a) == 0.0


def test_mutual_refinement_is_free_for_lce_only():
    """Figure 3 of the paper: each refines the other in a different place."""
    base = np.array([[1, 1, 2, 2]] * 4)
    left_split = base.copy()
    left_split[2:, :2] = 3                  # splits region 1
    right_split = base.copy()
    right_split[2:, 2:] = 4                 # splits region 2
    assert lce(left_split, right_split) == 0.0
    assert gce(left_split, right_split) > 0.0


@pytest.mark.parametrize("seed", range(20))
def test_lce_at_most_gce_symmetric_and_bounded(seed):
    rng = np.random.default_rng(300 + seed)
    a = _random_seg((9, 13), int(rng.integers(1, 8)), rng)
    b = _random_seg((9, 13), int(rng.integers(1, 8)), rng)
    g, l_ = gce(a, b), lce(a, b)
    assert 0.0 <= l_ <= g + 1e-15 < 1.0
    assert gce(b, a) == pytest.approx(g, abs=1e-15)
    assert lce(b, a) == pytest.approx(l_, abs=1e-15)
    t = contingency_table(a, b)
    assert gce(table=t) == g and lce(table=t) == l_


def test_gce_lce_leave_void_pixels_out():
    a = np.array([[1, 1, 2, 0]])
    b = np.array([[1, 1, 2, 5]])
    assert gce(a, b, void=0) == 0.0 and lce(a, b, void=0) == 0.0
    assert gce(a, b) == 0.0                     # the default: no void label
    assert np.isnan(local_refinement_error(a, b, void=0)[0, 3])
    assert not np.isnan(local_refinement_error(a, b)).any()


# --------------------------------------------------------------- ucm2 levels

def _boxed_pixel(u, i, j, value):
    """Enclose pixel (i, j) by its four edge cells only, leaving the corner cells at 0."""
    u[2 * i, 2 * j + 1] = u[2 * i + 2, 2 * j + 1] = value
    u[2 * i + 1, 2 * j] = u[2 * i + 1, 2 * j + 2] = value


def _synthetic_ucm(h=12, w=14, rng=RNG):
    """A ucm2 with contour lines and pixels boxed by edge cells without their corners,
    where 4- and 8-connectivity differ (real ucm2s close their junctions)."""
    u = np.zeros((2 * h + 1, 2 * w + 1))
    u[:, 2 * (w // 2)] = 0.6                     # a vertical contour
    u[2 * (h // 2), : w] = 0.3                   # a horizontal one, on the left only
    for i, j in ((2, 2), (9, 3), (3, 10), (10, 11)):
        _boxed_pixel(u, i, j, float(rng.uniform(0.2, 0.8)))
    return u


@pytest.mark.parametrize("connectivity", [8, 4])
def test_ucm_levels_are_bwlabel_components_sampled_at_pixels(connectivity):
    u = _synthetic_ucm()
    ths = np.linspace(0.01, 0.99, 99)
    struct = np.ones((3, 3)) if connectivity == 8 else None
    for t, (lab, k, _) in zip(ths, ucm_levels(u, ths, connectivity=connectivity)):
        ref, _ = ndi.label(u <= t, structure=struct)
        ref = ref[1::2, 1::2]
        # same partition: a bijection between the labels
        pairs = set(zip(ref.ravel().tolist(), lab.ravel().tolist()))
        assert len(pairs) == len(np.unique(ref)) == len(np.unique(lab))
        assert k == len(np.unique(lab[lab > 0]))


def test_connectivity_matters_on_open_junctions():
    u = np.zeros((9, 9))
    _boxed_pixel(u, 1, 1, 0.5)
    l8 = ucm_segmentation(u, 0.4)
    l4 = ucm_segmentation(u, 0.4, connectivity=4)
    assert len(np.unique(l8)) == 1                   # bwlabel's 8-connectivity leaks
    assert len(np.unique(l4)) == 2                   # through the open corners


def test_ucm_segmentation_marks_pixels_above_threshold_void():
    u = np.zeros((5, 5))
    u[1, 1] = 0.9                                   # a pixel cell itself above t
    lab = ucm_segmentation(u, 0.5)
    assert lab[0, 0] == 0 and (lab[lab > 0] == lab[1, 1]).all()


def test_bad_ucm_shape():
    with pytest.raises(InputError):
        ucm_segmentation(np.zeros((4, 5)), 0.5)
