"""Baseline segmenters of the 2001 protocol: label counts, determinism, shapes, folder maps."""

from __future__ import annotations

import functools
import pickle

import numpy as np
import pytest

from segbench.algorithms.segmenters import (SEGMENTERS, FolderSegmenter, get_segmenter,
                                            kmeans_segmenter, ncut_2001, ncut_segmenter)
from segbench.datasets.synthetic import make_synthetic_dataset
from segbench.errors import InputError
from segbench.io import write_label_map

BASELINES = [kmeans_segmenter, ncut_segmenter, ncut_2001]


@pytest.fixture(scope="module")
def image():
    return make_synthetic_dataset(1, shape=(96, 144), seed=3)[0].image


@pytest.mark.parametrize("seg", BASELINES)
@pytest.mark.parametrize("k", [1, 2, 5, 17, 40])
def test_exactly_k_labels(seg, k, image):
    lab = seg(image, k)
    assert lab.shape == image.shape[:2] and lab.dtype == np.int32
    assert np.unique(lab).tolist() == list(range(k))      # exactly k, numbered 0..k-1


@pytest.mark.parametrize("seg", BASELINES)
def test_deterministic_and_canonical(seg, image):
    a = seg(image, 7)
    b = seg(image.copy(), 7)
    np.testing.assert_array_equal(a, b)
    # labels numbered by first occurrence in raster order
    first = [int(v) for v in dict.fromkeys(a.ravel().tolist())]
    assert first == list(range(7))


@pytest.mark.parametrize("seg", BASELINES)
def test_grey_float_and_portrait_inputs(seg, image):
    grey = image[..., 0]
    assert np.unique(seg(grey, 4)).size == 4
    assert np.unique(seg(image / 255.0, 4)).size == 4
    tall = np.ascontiguousarray(image.transpose(1, 0, 2))
    lab = seg(tall, 6)
    assert lab.shape == tall.shape[:2] and np.unique(lab).size == 6


@pytest.mark.parametrize("seg", BASELINES)
def test_two_flat_halves_are_found(seg):
    img = np.zeros((40, 60, 3), np.uint8)
    img[:, 30:] = (220, 40, 40)
    lab = seg(img, 2)
    band = 2 if seg is ncut_2001 else 0     # solved at half size: the cut to 2 px
    assert (lab[:, :30 - band] == lab[0, 0]).all()
    assert (lab[:, 30 + band:] != lab[0, 0]).all()


def test_kmeans_at_most_distinct_features():
    """A 2x2 image has 4 pixels: k = 10 cannot be met, k labels never exceeded."""
    img = np.array([[[0, 0, 0], [255, 255, 255]], [[0, 0, 0], [255, 255, 255]]], np.uint8)
    lab = kmeans_segmenter(img, 10, step=1)
    assert 1 <= np.unique(lab).size <= 4


@pytest.mark.parametrize("seg", BASELINES)
def test_bad_k_and_image(seg, image):
    for k in (0, -1, 2.5, True):
        with pytest.raises(InputError):
            seg(image, k)
    with pytest.raises(InputError):
        seg(np.zeros((4, 4, 2)), 2)


def test_options_change_the_result(image):
    a = kmeans_segmenter(image, 6)
    b = kmeans_segmenter(image, 6, spatial_weight=0.0)
    assert not np.array_equal(a, b)
    c = kmeans_segmenter(image, 6, seed=5)
    assert np.unique(c).size == 6


def test_picklable_for_workers():
    f = pickle.loads(pickle.dumps(functools.partial(ncut_segmenter, n_superpixels=200)))
    assert f.func is ncut_segmenter
    assert pickle.loads(pickle.dumps(kmeans_segmenter)) is kmeans_segmenter


def test_folder_segmenter(tmp_path, image):
    lab = kmeans_segmenter(image, 3)
    write_label_map(tmp_path / "im1_3.png", lab)
    fs = FolderSegmenter(tmp_path)
    got = fs.for_image("im1")(image, 3)
    np.testing.assert_array_equal(got, lab)
    np.testing.assert_array_equal(fs.for_image("im1")(None, 3), lab)   # image optional
    with pytest.raises(InputError, match="im1_4"):
        fs.for_image("im1")(image, 4)
    with pytest.raises(InputError, match="im1_3.png"):
        fs.for_image("im1")(image[:50], 3)                              # wrong shape
    with pytest.raises(InputError):
        fs(image, 3)                                                    # needs the id
    fs2 = pickle.loads(pickle.dumps(fs))
    np.testing.assert_array_equal(fs2.for_image("im1")(image, 3), lab)
    with pytest.raises(InputError):
        FolderSegmenter(tmp_path / "absent")


def test_get_segmenter(tmp_path):
    assert get_segmenter("kmeans") is SEGMENTERS["kmeans"] is kmeans_segmenter
    assert get_segmenter("ncut") is ncut_segmenter                  # the old name
    assert get_segmenter("ncut-superpixel") is ncut_segmenter
    assert get_segmenter("ncut-2001") is SEGMENTERS["ncut-2001"] is ncut_2001
    assert isinstance(get_segmenter("folder", seg_dir=tmp_path), FolderSegmenter)
    with pytest.raises(InputError):
        get_segmenter("folder")
    with pytest.raises(InputError):
        get_segmenter("watershed")
