"""seg2bdry == BSR seg2bdry.m; thin(seg2bdry(Segmentation)) == Boundaries on BSDS500."""

import numpy as np
import pytest

from segbench.boundary import seg2bdry
from segbench.primitives._thin import thin
from segbench.errors import InputError

from conftest import DATA, require

GT_VAL = DATA / "bsds500" / "groundTruth" / "val"


def test_thinned_seg2bdry_is_official_boundaries():
    import scipy.io

    files = sorted(require(GT_VAL).glob("*.mat"))[:40]
    assert len(files) == 40
    n = 0
    for f in files:
        gt = scipy.io.loadmat(f)["groundTruth"]
        for k in range(gt.shape[1]):
            seg = gt[0, k]["Segmentation"][0, 0]
            want = gt[0, k]["Boundaries"][0, 0].astype(bool)
            got = thin(seg2bdry(seg))
            assert got.shape == seg.shape
            n_diff = np.count_nonzero(got != want)
            assert n_diff == 0, f"{f.name} annotator {k}: {n_diff} pixels differ"
            n += 1
    assert n >= 40


def test_double_size_shape_and_sampling():
    rng = np.random.default_rng(0)
    seg = rng.integers(0, 4, size=(7, 11))
    d = seg2bdry(seg, "doubleSize")
    assert d.shape == (15, 23) and d.dtype == np.bool_
    np.testing.assert_array_equal(seg2bdry(seg, "imageSize"), d[2::2, 2::2])
    np.testing.assert_array_equal(seg2bdry(seg), d[2::2, 2::2])  # default imageSize


def test_vertical_split():
    seg = np.zeros((4, 6), np.int32)
    seg[:, 3:] = 1
    b = seg2bdry(seg)
    want = np.zeros((4, 6), bool)
    want[:, 2] = True  # label differs from the pixel to the right
    np.testing.assert_array_equal(b, want)
    d = seg2bdry(seg, "doubleSize")
    want_d = np.zeros((9, 13), bool)
    want_d[:, 6] = True  # edge between cells 2 and 3, full height incl. copied border rows
    np.testing.assert_array_equal(d, want_d)
    np.testing.assert_array_equal(thin(b), b)


def test_horizontal_split():
    seg = np.zeros((5, 4), np.uint16)
    seg[2:] = 7
    want = np.zeros((5, 4), bool)
    want[1, :] = True
    np.testing.assert_array_equal(seg2bdry(seg), want)
    d = seg2bdry(seg, "doubleSize")
    assert d[4].all() and d.sum() == d.shape[1]


def test_constant_labels_no_boundary():
    for seg in [np.zeros((6, 9), int), np.full((3, 3), 5, np.uint8), np.ones((1, 1), int)]:
        assert not seg2bdry(seg).any()
        assert not seg2bdry(seg, "doubleSize").any()


def test_invalid_input():
    with pytest.raises(InputError, match="fmt"):
        seg2bdry(np.zeros((3, 3), int), "halfSize")
    with pytest.raises(ValueError, match="fmt"):
        seg2bdry(np.zeros((3, 3), int), "imagesize")
    with pytest.raises(InputError, match="2-D"):
        seg2bdry(np.zeros((3, 3, 2), int))
