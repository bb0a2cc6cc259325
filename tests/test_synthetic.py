"""The synthetic dataset: reproducible, BSDS-shaped, with annotators who mostly agree."""

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from segbench.datasets.synthetic import (SyntheticItem, _draw, _Shape, _Style, _styles,
                                         make_synthetic_dataset, write_synthetic_dataset)


@pytest.fixture(scope="module")
def items():
    return make_synthetic_dataset()


def _same(a: SyntheticItem, b: SyntheticItem) -> bool:
    return (a.iid == b.iid and np.array_equal(a.image, b.image)
            and np.array_equal(a.truth, b.truth)
            and len(a.segmentations) == len(b.segmentations)
            and all(np.array_equal(x, y) for x, y in zip(a.segmentations, b.segmentations)))


def _matched_agreement(s1: np.ndarray, s2: np.ndarray) -> float:
    """Fraction of pixels with the same label after the best one-to-one relabelling."""
    _, a = np.unique(s1, return_inverse=True)
    _, b = np.unique(s2, return_inverse=True)
    table = np.zeros((a.max() + 1, b.max() + 1), np.int64)
    np.add.at(table, (a.ravel(), b.ravel()), 1)
    r, c = linear_sum_assignment(-table)
    return table[r, c].sum() / s1.size


def test_shapes_dtypes_and_labels(items):
    assert len(items) == 8
    assert len({it.iid for it in items}) == 8
    for it in items:
        assert it.image.shape == (160, 240, 3) and it.image.dtype == np.uint8
        assert len(it.segmentations) == 5
        for seg in [*it.segmentations, it.truth]:
            assert seg.shape == (160, 240) and seg.dtype == np.int32
            labels = np.unique(seg)
            assert np.array_equal(labels, np.arange(1, labels[-1] + 1))  # 1..N, no gaps
            assert labels[-1] >= 2


def test_other_shape_and_annotator_count():
    (it,) = make_synthetic_dataset(1, shape=(90, 130), n_annotators=3, seed=5)
    assert it.image.shape == (90, 130, 3)
    assert [s.shape for s in it.segmentations] == [(90, 130)] * 3


def test_deterministic_and_seed_dependent():
    a = make_synthetic_dataset(2, seed=3)
    b = make_synthetic_dataset(2, seed=3)
    c = make_synthetic_dataset(2, seed=4)
    assert all(_same(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0].image, c[0].image)
    assert not np.array_equal(a[0].segmentations[0], c[0].segmentations[0])


def test_images_independent_of_counts():
    few = make_synthetic_dataset(2, n_annotators=3, seed=1)
    many = make_synthetic_dataset(3, n_annotators=5, seed=1)
    for x, y in zip(few, many):
        assert np.array_equal(x.image, y.image) and np.array_equal(x.truth, y.truth)
        for s, t in zip(x.segmentations, y.segmentations):
            assert np.array_equal(s, t)
    assert _styles(7, 3) == _styles(7, 6)[:3]


def test_annotators_differ_but_mostly_agree(items):
    agreements = []
    for it in items:
        segs = it.segmentations
        for i in range(len(segs)):
            for j in range(i + 1, len(segs)):
                assert not np.array_equal(segs[i], segs[j])  # own position noise at least
                agreements.append(_matched_agreement(segs[i], segs[j]))
    agreements = np.array(agreements)
    assert agreements.mean() > 0.9
    assert agreements.min() > 0.6
    assert agreements.mean() < 0.995  # not copies of each other


def test_annotators_range_from_lumpers_to_splitters(items):
    # Against the scene's own regions, some drawings lose regions (skipped faint objects,
    # unsplit parts) and some keep every one (splitters who missed nothing).
    fewer = np.zeros(5, int)
    complete = np.zeros(5, int)
    for it in items:
        n_truth = it.truth.max()
        for k, seg in enumerate(it.segmentations):
            assert seg.max() <= n_truth
            fewer[k] += seg.max() < n_truth
            complete[k] += seg.max() == n_truth
    assert (fewer > 0).sum() >= 3
    assert (complete > 0).sum() >= 2
    # a real lumper: the style most likely to skip faint objects (every scene has one)
    # falls short more often than the most detailed one, on about p_skip_faint of them
    from segbench.datasets.synthetic import _styles
    styles = _styles(0, len(fewer))
    lumper = max(range(len(fewer)), key=lambda k: styles[k].p_skip_faint)
    splitter = max(range(len(fewer)), key=lambda k: styles[k].p_split)
    assert fewer[lumper] > fewer[splitter]
    assert fewer[lumper] >= len(items) * styles[lumper].p_skip_faint / 2


def _toy_scene():
    """Background, a two-part disk and a faint box."""
    return [None,
            _Shape("disk", 40.0, 40.0, 20.0, part=(0.0, 0.0)),
            _Shape("box", 40.0, 100.0, 12.0, aspect=0.8, faint=True)]


def test_lumper_skips_faint_and_splitter_splits():
    shapes = _toy_scene()
    lumper = _Style(jitter_px=0.5, p_skip_faint=1.0, p_split=0.0)
    splitter = _Style(jitter_px=0.5, p_skip_faint=0.0, p_split=1.0)
    lab_l = _draw(np.random.default_rng(0), lumper, shapes, 80, 140)
    lab_s = _draw(np.random.default_rng(0), splitter, shapes, 80, 140)
    assert lab_l.max() == 2  # background + whole disk, no box
    assert lab_s.max() == 4  # background + two halves + box
    # The box is background for the lumper, its own region for the splitter.
    assert lab_l[40, 100] == lab_l[5, 5]
    assert lab_s[40, 100] != lab_s[5, 5]
    # The split runs through the disk's centre, vertically (part line normal along x).
    assert lab_s[40, 30] != lab_s[40, 50] and lab_l[40, 30] == lab_l[40, 50]


def test_jitter_is_subpixel_on_average():
    shapes = _toy_scene()[:2]
    style = _Style(jitter_px=0.7, p_skip_faint=0.0, p_split=0.0)
    ideal = np.pi * 20.0**2
    areas = [np.count_nonzero(_draw(np.random.default_rng(s), style, shapes, 80, 80) == 2)
             for s in range(10)]
    # A radius error of ~0.5 px changes the area by ~2 pi r * 0.5 = 63 px.
    assert abs(np.mean(areas) - ideal) < 40
    assert np.std(areas) > 5  # but annotators do differ


def test_write_bsds500_layout(tmp_path):
    io = pytest.importorskip("segbench.io")
    from PIL import Image

    items = make_synthetic_dataset(2, n_annotators=3)
    root = write_synthetic_dataset(tmp_path / "synth", items, split="val")
    for it in items:
        img = np.asarray(Image.open(root / "images" / "val" / f"{it.iid}.png"))
        assert np.array_equal(img, it.image)
        gt = io.read_ground_truth(root / "groundTruth" / "val" / f"{it.iid}.mat")
        assert len(gt) == 3
        for h, seg in zip(gt, it.segmentations):
            assert np.array_equal(h.segmentation, seg)
            assert h.boundaries.any()


def test_fast_enough():
    import time

    make_synthetic_dataset(1)
    t = time.perf_counter()
    make_synthetic_dataset(8)
    # ~0.2 s on a laptop core; the bound only catches a pathological slowdown (a
    # loaded CI machine must not fail it)
    assert time.perf_counter() - t < 30.0
