"""The 2001 benchmark's Normalized Cuts (``ncut_2001``): exactly k segments, the same bytes
on every call, one clear error for impossible requests, the CLI name and its alias."""

from __future__ import annotations

import numpy as np
import pytest

from segbench.algorithms import ncut_2001
from segbench.algorithms._ncut2001 import _two_way, prepare_ncut_2001
from segbench.datasets.synthetic import make_synthetic_dataset
from segbench.errors import InputError


@pytest.fixture(scope="module")
def image():
    return make_synthetic_dataset(1, shape=(80, 120), seed=5)[0].image


@pytest.fixture(scope="module")
def run(image):
    return prepare_ncut_2001(image)


@pytest.mark.parametrize("k", [1, 2, 3, 7, 16, 33, 60])
def test_exactly_k_segments(run, image, k):
    lab = run(k)
    assert lab.shape == image.shape[:2] and lab.dtype == np.int32
    assert np.unique(lab).tolist() == list(range(k))


def test_prepared_equals_direct_and_bytes_repeat(run, image):
    a = ncut_2001(image, 6)
    b = ncut_2001(image.copy(), 6)
    assert a.tobytes() == b.tobytes()
    assert run(6).tobytes() == a.tobytes()
    assert ncut_2001(image, 6, seed=1).shape == a.shape


def test_tiny_images_reach_every_k():
    rng = np.random.default_rng(0)
    for shape in [(2, 2), (3, 5), (9, 4)]:
        img = rng.integers(0, 256, shape + (3,), dtype=np.uint8)
        n = shape[0] * shape[1]
        for k in sorted({1, 2, n // 2, n - 1, n}):
            assert np.unique(ncut_2001(img, k)).size == k, (shape, k)


def test_flat_image_still_gives_k():
    img = np.full((40, 50), 128, np.uint8)
    for k in (2, 5, 30):
        assert np.unique(ncut_2001(img, k)).size == k


def test_bad_input_one_clear_error(image):
    with pytest.raises(InputError, match="at least 2 x 2"):
        ncut_2001(np.zeros((1, 1, 3), np.uint8), 1)
    with pytest.raises(InputError, match="at least 2 x 2"):
        ncut_2001(np.zeros((1, 9), np.uint8), 2)
    for k in (0, -3, 2.5, True):
        with pytest.raises(InputError, match="positive integer"):
            ncut_2001(image, k)
    with pytest.raises(InputError, match="more than the image's 6 pixels"):
        ncut_2001(np.zeros((2, 3), np.uint8), 7)


def test_two_flat_regions_split_on_the_contour():
    img = np.zeros((48, 64, 3), np.uint8)
    img[:, 32:] = 200
    lab = ncut_2001(img, 2)
    # solved at half size: the boundary is placed to 2 px of the full-size image
    assert (lab[:, :30] == lab[0, 0]).all() and (lab[:, 34:] != lab[0, 0]).all()
    assert np.ptp((lab == lab[0, 0]).sum(axis=1)) == 0              # a straight cut


def test_two_way_cut_separates_two_cliques():
    w = np.full((6, 6), 1e-3)
    w[:3, :3] = w[3:, 3:] = 1.0
    ncut, mask = _two_way(w)
    assert sorted(np.flatnonzero(mask).tolist()) in ([0, 1, 2], [3, 4, 5])
    assert ncut < 0.01


def test_cli_names():
    from segbench.cli import build_parser
    p = build_parser()
    for name in ("ncut-2001", "ncut-superpixel", "ncut"):
        a = p.parse_args(["granularity", "--gt", "g", "--segmenter", name])
        assert a.segmenter == name
    assert "ncut-2001" in p._subparsers._group_actions[0].choices["granularity"].format_help()


def test_granularity_same_for_any_worker_count(tmp_path):
    import pickle

    from segbench.runners._consistency import evaluate_granularity
    from segbench.datasets.synthetic import write_synthetic_dataset
    assert pickle.loads(pickle.dumps(ncut_2001)) is ncut_2001
    items = make_synthetic_dataset(2, shape=(48, 64), n_annotators=3, seed=5)
    write_synthetic_dataset(tmp_path, items, split="val")
    gt, img = tmp_path / "groundTruth" / "val", tmp_path / "images" / "val"
    a = evaluate_granularity(gt, ncut_2001, images=img, progress=False)
    b = evaluate_granularity(gt, ncut_2001, images=img, workers=2, progress=False)
    for ra, rb in zip(a.rows, b.rows):
        np.testing.assert_array_equal(ra, rb)
    assert a.metrics()["n_k_mismatch"] == 0
