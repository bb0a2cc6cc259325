"""Counting on maps with no runs (every pixel its own label): the per-pixel path gives
numpy's bincount, honours the ignore index and reduce_zero_label, and names the first
out-of-range pixel as the run walk does."""

from __future__ import annotations

import numpy as np
import pytest

from segbench.errors import InputError
from segbench.semantic import SemanticEval, pixel_confusion


def _reference(gt, pred, c, ignore, rzl):
    gt = gt.astype(np.int64)
    if rzl:
        gt = np.where(gt == 0, 255, gt - 1)
        gt[gt == 254] = 255
    keep = gt != ignore if ignore is not None else np.ones(gt.shape, bool)
    return np.bincount(gt[keep] * c + pred.astype(np.int64)[keep],
                       minlength=c * c).reshape(c, c)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int32, np.int64])
@pytest.mark.parametrize("ignore,rzl", [(255, False), (255, True), (None, False),
                                        (-1, False), (7, False)])
def test_random_maps_count_as_bincount(dtype, ignore, rzl):
    rng = np.random.default_rng(3)
    c = 150
    gt = rng.integers(0, c, (300, 257)).astype(dtype)
    pred = rng.integers(0, c, (300, 257)).astype(dtype)
    if ignore is not None and ignore < 0 and np.dtype(dtype).kind == "u":
        pytest.skip("a negative ignore index needs signed maps")
    if ignore is not None:
        gt[rng.uniform(size=gt.shape) < 0.1] = ignore
    if rzl:
        gt[rng.uniform(size=gt.shape) < 0.05] = 0
        gt[gt == 151] = 1
    gt[:40, :] = 2          # a run-length stretch, then random again
    got = pixel_confusion(gt, pred, c, ignore_index=ignore, reduce_zero_label=rzl)
    np.testing.assert_array_equal(got, _reference(gt, pred, c, ignore, rzl))


@pytest.mark.parametrize("side", ["gt", "pred"])
def test_a_bad_label_among_random_pixels_is_named(side):
    rng = np.random.default_rng(8)
    gt = rng.integers(0, 19, (256, 256), dtype=np.uint8)
    pred = rng.integers(0, 19, (256, 256), dtype=np.uint8)
    (gt if side == "gt" else pred)[200, 17] = 40
    (gt if side == "gt" else pred)[230, 3] = 41
    ev = SemanticEval(19)
    with pytest.raises(InputError, match=r"pixel \(row 200, col 17\) has label 40"):
        ev.update(gt, pred)
    assert ev.n_images == 0 and ev.confusion().sum() == 0


def test_a_bad_pair_leaves_earlier_counts_as_they_were(tmp_path):
    from PIL import Image
    rng = np.random.default_rng(9)
    good = [rng.integers(0, 19, (64, 80), dtype=np.uint8) for _ in range(2)]
    bad = good[1].copy()
    bad[50, 70] = 77
    ev = SemanticEval(19)
    ev.update(good[0], good[1])
    before = ev.confusion().copy(), ev.results()["per_class"]
    with pytest.raises(InputError, match="label 77"):
        ev.update(np.stack([good[0], good[1]]), np.stack([good[1], bad]))
    Image.fromarray(good[0]).save(tmp_path / "g.png")
    Image.fromarray(bad).save(tmp_path / "p.png")
    with pytest.raises(InputError, match="p.png"):
        ev.update_png(tmp_path / "g.png", tmp_path / "p.png")
    np.testing.assert_array_equal(ev.confusion(), before[0])
    assert ev.results()["per_class"] == before[1] and ev.n_images == 1


@pytest.mark.parametrize("dilation", [None, 0.02])
def test_a_bad_prediction_under_ignored_ground_truth_is_named_and_counts_stay_exact(
        dilation):
    # without boundary IoU two byte maps are counted by byte pair: a prediction beyond
    # the classes is an error even where the ground truth is ignored, and the table is
    # handed back cleared, so the next pair counts as bincount
    rng = np.random.default_rng(10)
    gt = rng.integers(0, 19, (128, 128), dtype=np.uint8)
    pred = rng.integers(0, 19, (128, 128), dtype=np.uint8)
    gt[5, 9] = 255
    pred[5, 9] = 200
    ev = SemanticEval(19, boundary_dilation=dilation)
    with pytest.raises(InputError, match=r"prediction pixel \(row 5, col 9\) has label 200"):
        ev.update(gt, pred)
    gt2 = rng.integers(0, 19, (128, 128), dtype=np.uint8)
    ev.update(gt2, pred * (pred < 19))
    np.testing.assert_array_equal(ev.confusion(),
                                  _reference(gt2, pred * (pred < 19), 19, 255, False))
    rzl_gt = gt2.copy()
    rzl_gt[100, 1] = 21          # class 20 after reduce_zero_label: beyond 19 classes
    with pytest.raises(InputError, match=r"ground truth pixel \(row 100, col 1\) has label 21"):
        SemanticEval(19, reduce_zero_label=True, boundary_dilation=dilation).update(
            rzl_gt, gt2)
