"""segbench.semantic: counting, metrics, band, evaluator, files, folders, CLI.

Counting is checked against independent references written here with numpy/scipy
(bincount confusion, the authors' band as a padded iterated 3x3 erosion).
"""

import argparse
import json
import pickle

import numpy as np
import pytest
from PIL import Image
from scipy import ndimage

from segbench.datasets import pair_folders
from segbench.errors import InputError
from segbench.result import _plain
from segbench.semantic import (METRIC_NAMES, LabelError, SemanticEval, boundary_band,
                               boundary_counts, boundary_iou, confusion_metrics, dilation_pixels,
                               frequency_weighted_iou, iou_per_class, mean_accuracy,
                               mean_dice, mean_iou, pixel_accuracy,
                               pixel_confusion)
from segbench.semantic import _core
from segbench.cli.semantic import add_parsers as add_parser, read_classes


# --- independent references ------------------------------------------------------------------

def ref_confusion(gt, pred, c, ignore=255, rzl=False):
    gt = np.asarray(gt, np.int64)
    pred = np.asarray(pred, np.int64)
    if rzl:  # mmseg LoadAnnotations
        gt = gt.copy()
        gt[gt == 0] = 255
        gt = gt - 1
        gt[gt == 254] = 255
    keep = gt != ignore if ignore is not None else np.ones(gt.shape, bool)
    return np.bincount(gt[keep] * c + pred[keep], minlength=c * c).reshape(c, c)


def ref_mask_to_boundary(mask, d):
    """The authors' mask_to_boundary: pad with 0, erode by a 3x3 square d times."""
    h, w = mask.shape
    eroded = ndimage.binary_erosion(np.pad(mask, 1), np.ones((3, 3), bool), iterations=d,
                                    border_value=1)
    return mask & ~eroded[1:h + 1, 1:w + 1]


def ref_band_counts(gt, pred, c, ratio=0.02, ignore=255):
    d = max(1, int(round(ratio * np.sqrt(gt.shape[0] ** 2 + gt.shape[1] ** 2))))
    valid = gt != ignore
    inter = np.zeros(c, np.int64)
    union = np.zeros(c, np.int64)
    for k in range(c):
        bg = ref_mask_to_boundary(gt == k, d) & valid
        bp = ref_mask_to_boundary(pred == k, d) & valid
        inter[k] = (bg & bp).sum()
        union[k] = (bg | bp).sum()
    return inter, union


def blobs(rng, shape, classes, cell=6, ignore_frac=0.0):
    h, w = shape
    small = rng.integers(0, classes, (h // cell + 2, w // cell + 2))
    lab = np.repeat(np.repeat(small, cell, 0), cell, 1)
    dy, dx = rng.integers(0, cell, 2)
    lab = np.ascontiguousarray(lab[dy:dy + h, dx:dx + w])
    if ignore_frac:
        lab[rng.uniform(size=shape) < ignore_frac] = 255
    return lab


def noisy(rng, gt, classes, frac=0.1):
    pred = np.where(gt == 255, rng.integers(0, classes, gt.shape), gt)
    flip = rng.uniform(size=gt.shape) < frac
    pred[flip] = rng.integers(0, classes, flip.sum())
    return pred


# --- metrics of a matrix ---------------------------------------------------------------------

def test_matrix_metrics_by_hand():
    # rows = gt: class 0 has 3 right, 1 called class 1; class 1 has 2 right; class 2
    # never in gt but predicted once; class 3 absent on both sides
    m = np.array([[3, 1, 0, 0], [0, 2, 1, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    iou = iou_per_class(m)
    np.testing.assert_allclose(iou[:3], [3 / 4, 2 / 4, 0.0])
    assert np.isnan(iou[3])
    assert mean_iou(m) == pytest.approx((0.75 + 0.5 + 0) / 3)
    assert mean_accuracy(m) == pytest.approx((3 / 4 + 2 / 3) / 2)
    assert mean_dice(m) == pytest.approx((6 / 7 + 4 / 6 + 0) / 3)
    assert pixel_accuracy(m) == pytest.approx(5 / 7)
    assert frequency_weighted_iou(m) == pytest.approx((4 * 0.75 + 3 * 0.5) / 7)
    all_ = confusion_metrics(m)
    assert np.isnan(all_["Acc"][2]) and np.isnan(all_["Dice"][3])


def test_empty_matrix_is_nan_never_zero():
    m = np.zeros((3, 3))
    res = confusion_metrics(m)
    for key in ("mIoU", "fwIoU", "mAcc", "aAcc", "mDice"):
        assert np.isnan(res[key]), key
    biou, mbiou = boundary_iou([0, 0], [0, 0])
    assert np.isnan(biou).all() and np.isnan(mbiou)


def test_matrix_must_be_square():
    with pytest.raises(ValueError):
        mean_iou(np.zeros((2, 3)))


# --- counting ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int8, np.int16, np.int32,
                                   np.int64, np.uint32, np.uint64])
def test_pixel_confusion_any_integer_dtype(dtype):
    rng = np.random.default_rng(1)
    gt = blobs(rng, (37, 53), 5, ignore_frac=0.05 if np.iinfo(dtype).max >= 255 else 0)
    pred = noisy(rng, gt, 5)
    got = pixel_confusion(gt.astype(dtype), pred.astype(dtype), 5)
    assert got.dtype == np.uint64
    np.testing.assert_array_equal(got, ref_confusion(gt, pred, 5))


def test_pixel_confusion_batch_bool_and_mixed_dtypes():
    rng = np.random.default_rng(2)
    gt = np.stack([blobs(rng, (20, 30), 2) for _ in range(3)])
    pred = np.stack([noisy(rng, g, 2) for g in gt])
    expect = ref_confusion(gt, pred, 2)
    np.testing.assert_array_equal(pixel_confusion(gt.astype(bool), pred.astype(np.int64), 2),
                                  expect)
    np.testing.assert_array_equal(pixel_confusion(gt.astype(np.uint8), pred.astype(np.int32),
                                                  2), expect)


def test_reduce_zero_label_is_mmseg_rule():
    rng = np.random.default_rng(3)
    raw = rng.integers(0, 6, (40, 40)).astype(np.uint8)  # 0 = other
    raw[:3] = 255
    pred = rng.integers(0, 5, (40, 40))
    got = pixel_confusion(raw, pred, 5, reduce_zero_label=True)
    np.testing.assert_array_equal(got, ref_confusion(raw, pred, 5, rzl=True))
    with pytest.raises(ValueError, match="ignore_index=255"):
        pixel_confusion(raw, pred, 5, reduce_zero_label=True, ignore_index=0)


def test_ignore_index_none_and_inside_range():
    gt = np.array([[0, 1, 2], [2, 2, 1]])
    pred = np.array([[0, 2, 2], [1, 2, 1]])
    np.testing.assert_array_equal(pixel_confusion(gt, pred, 3, ignore_index=None),
                                  ref_confusion(gt, pred, 3, ignore=None))
    np.testing.assert_array_equal(pixel_confusion(gt, pred, 3, ignore_index=2),
                                  ref_confusion(gt, pred, 3, ignore=2))


def test_array_protocol_without_numpy_type():
    class Tensor:  # stands for a CPU torch tensor
        def __init__(self, a):
            self.a = a

        def __array__(self, dtype=None, copy=None):
            return self.a

    gt = np.array([[0, 1], [1, 1]], np.int64)
    ev = SemanticEval(2)
    ev.update(Tensor(gt), Tensor(gt))
    assert ev.report()["metrics"]["mIoU"] == 1.0


@pytest.mark.parametrize("bad", [np.zeros((2, 2), np.float32), np.zeros((2, 2, 2, 2), int),
                                 np.zeros((0, 3), int)])
def test_bad_arrays_refused(bad):
    with pytest.raises(ValueError):
        pixel_confusion(bad, bad, 2)


def test_shape_mismatch():
    with pytest.raises(ValueError, match="shape"):
        SemanticEval(2).update(np.zeros((3, 4), int), np.zeros((4, 3), int))


# --- out-of-range labels ----------------------------------------------------------------------

@pytest.mark.parametrize("side,value,where", [("gt", 7, "ground truth pixel"),
                                              ("gt", -1, "ground truth pixel"),
                                              ("pred", 9, "prediction pixel"),
                                              ("pred", 255, "prediction pixel")])
def test_out_of_range_names_pixel_and_counts_nothing(side, value, where):
    rng = np.random.default_rng(4)
    gt = blobs(rng, (30, 40), 3, ignore_frac=0.1).astype(np.int16)
    pred = noisy(rng, gt, 3).astype(np.int16)
    ev = SemanticEval(3)
    ev.update(gt, pred)
    before = ev.confusion().copy(), ev.results()["per_class"], ev.n_images
    bad_gt, bad_pred = gt.copy(), pred.copy()
    if side == "gt":
        bad_gt[17, 23] = value
    else:
        bad_gt[17, 23] = 255  # a prediction is checked at ignored pixels too
        bad_pred[17, 23] = value
    with pytest.raises(ValueError) as info:
        ev.update(np.stack([gt, bad_gt]), np.stack([pred, bad_pred]))
    msg = str(info.value)
    assert where in msg and "image 1, row 17, col 23" in msg and f"label {value}" in msg
    assert isinstance(info.value, LabelError) and where.startswith(info.value.side)
    np.testing.assert_array_equal(ev.confusion(), before[0])
    assert ev.results()["per_class"] == before[1] and ev.n_images == before[2]


def test_out_of_range_with_threads_counts_nothing():
    rng = np.random.default_rng(5)
    gt = np.stack([blobs(rng, (400, 700), 4, cell=40) for _ in range(3)])
    pred = np.stack([noisy(rng, g, 4, 0.02) for g in gt])
    ev = SemanticEval(4, workers=2)
    ev.update(gt, pred)
    snap = _plain(ev.results())
    pred[2, 399, 699] = 4
    with pytest.raises(ValueError, match="image 2, row 399, col 699"):
        ev.update(gt, pred)
    assert _plain(ev.results()) == snap


# --- boundary band ----------------------------------------------------------------------------

def test_dilation_pixels_rounds_like_the_authors():
    assert dilation_pixels((1024, 2048), 0.02) == 46
    assert dilation_pixels((1, 1), 0.02) == 1
    assert dilation_pixels((512, 683), 0.02) == round(0.02 * np.hypot(512, 683))


def test_band_equals_padded_erosion_on_random_maps():
    rng = np.random.default_rng(6)
    for trial in range(120):
        h, w = rng.integers(1, 48, 2)
        lab = blobs(rng, (h, w), int(rng.integers(1, 5)), cell=int(rng.integers(1, 9)))
        d = int(rng.integers(1, 9))
        got = boundary_band(lab, dilation_px=d)
        ref = np.zeros((h, w), bool)
        for k in np.unique(lab):
            ref |= ref_mask_to_boundary(lab == k, d)
        np.testing.assert_array_equal(got, ref, err_msg=f"trial {trial} d={d}")


def test_wide_band_matches_mask_to_boundary():
    """d >= 8 takes the word-skipping interior routine (``_interior_wide``)."""
    rng = np.random.default_rng(16)
    lab = blobs(rng, (300, 280), 3, cell=90)
    ref = np.zeros(lab.shape, bool)
    for k in np.unique(lab):
        ref |= ref_mask_to_boundary(lab == k, 130)
    np.testing.assert_array_equal(boundary_band(lab, dilation_px=130), ref)


def test_band_counts_equal_reference_with_ignore():
    rng = np.random.default_rng(7)
    for trial in range(25):
        shape = tuple(rng.integers(5, 90, 2))
        gt = blobs(rng, shape, 4, cell=int(rng.integers(2, 12)), ignore_frac=0.05)
        pred = noisy(rng, gt, 4, frac=float(rng.choice([0.0, 0.02])))
        ratio = float(rng.choice([0.02, 0.05, 0.1]))
        got = boundary_counts(gt, pred, 4, dilation_ratio=ratio)
        inter, union = ref_band_counts(gt, pred, 4, ratio)
        np.testing.assert_array_equal(got["intersection"], inter)
        np.testing.assert_array_equal(got["union"], union)


def test_band_counts_on_maps_with_repeated_rows():
    # the band kernel reuses a row's counts (and each map's interior) while the rows
    # entering and leaving the window repeat; repeated rows in one map only, ignore blobs
    # (whole repeated rows of them too), narrow (d < 8) and wide (d >= 8) bands
    rng = np.random.default_rng(17)
    for trial in range(30):
        h, w = (int(v) for v in rng.integers(20, 160, 2))
        gt = blobs(rng, (h, w), 4, cell=int(rng.integers(2, 9)))
        pred = noisy(rng, gt, 4, frac=0.0)
        if trial % 3 == 0:  # blobby errors: rows repeat in pred too, with its own breaks
            pred = np.where(blobs(rng, (h, w), 2, cell=5) == 1,
                            blobs(rng, (h, w), 4, cell=3), pred)
        elif trial % 3 == 1:  # pred rows repeat, gt rows do not
            gt = noisy(rng, gt, 4, frac=0.01)
        if trial % 2:
            gt[rng.integers(0, h), :] = 255
            gt[blobs(rng, (h, w), 12, cell=7) == 0] = 255
        ratio = float(rng.choice([0.01, 0.03, 0.06, 0.12]))
        inter, union = ref_band_counts(gt, pred, 4, ratio)
        got = boundary_counts(gt, pred, 4, dilation_ratio=ratio)
        np.testing.assert_array_equal(got["intersection"], inter, err_msg=f"trial {trial}")
        np.testing.assert_array_equal(got["union"], union, err_msg=f"trial {trial}")
        for k in (2, 3):  # row ranges on separate threads
            split = _core.plan((1, h, w), k, True, min_pixels=1)
            assert len(split) == k
            counts = _core.Counts.zeros(4)
            for tasks in split:
                for task in tasks:
                    assert _core.run_task(task, gt[None], pred[None], 4, 255, False, ratio,
                                          counts) < 0
            np.testing.assert_array_equal(counts.band_inter, inter)
            np.testing.assert_array_equal(counts.gt_band + counts.pred_band
                                          - counts.band_inter, union)


def test_band_counts_across_dtypes_ignore_rules_and_tall_maps():
    # the interior take-backs compare labels at the map's own width, map raw values
    # under reduce_zero_label, honour an ignore index inside the class range, and tall
    # maps keep their change rows in int32
    rng = np.random.default_rng(18)
    cases = [(np.uint8, dict(reduce_zero_label=True)), (np.uint16, {}),
             (np.int32, dict(ignore_index=0)), (np.int64, dict(ignore_index=None)),
             (np.uint8, dict(ignore_index=2))]
    for trial, (dtype, kw) in enumerate(cases * 3):
        h, w = (int(v) for v in rng.integers(30, 120, 2))
        ratio = float(rng.choice([0.02, 0.06, 0.15]))
        if trial == len(cases):
            h, w, ratio = 33000, 40, 0.0003  # past int16 rows; d = 10
        raw = blobs(rng, (h, w), 5, cell=int(rng.integers(3, 12)), ignore_frac=0.02)
        base = np.where(raw == 4, 3, raw)  # classes 0..3 and 255
        pred = noisy(rng, base, 4, frac=0.01)
        ignore = kw.get("ignore_index", 255)
        if kw.get("reduce_zero_label"):  # raw 0 and 255 ignored, raw v is class v - 1
            gt, ref_ignore = raw, 255
            ref_gt = np.where((raw == 0) | (raw == 255), 255, raw - 1)
        else:
            gt = np.where(base == 255, 0 if ignore is None else ignore, base)
            ref_gt, ref_ignore = gt, ignore
        inter, union = ref_band_counts(ref_gt, pred, 4, ratio, ignore=ref_ignore)
        got = boundary_counts(gt.astype(dtype), pred.astype(dtype), 4,
                              dilation_ratio=ratio, **kw)
        np.testing.assert_array_equal(got["intersection"], inter, err_msg=f"trial {trial}")
        np.testing.assert_array_equal(got["union"], union, err_msg=f"trial {trial}")


def test_run_listing_helpers_against_numpy():
    # the band kernel lists runs branch-free, eight slots per 64 marks and a loop for the
    # rest: dense rows (up to every column a change) take that rarely used path
    from segbench.semantic import _kernels as K
    rng = np.random.default_rng(19)
    for trial in range(60):
        n = int(rng.integers(1, 300))
        density = float(rng.choice([0.01, 0.1, 0.5, 0.95]))
        buf = K._mark_buffer(n + 1)
        buf[1:n + 1] = rng.random(n) < density      # byte 0 and the padding stay 0
        runs = np.zeros(buf.size + 10, np.int64)
        edges = np.flatnonzero(np.diff(np.r_[0, buf, 0]))
        expected = edges.reshape(-1, 2)
        for finder in (K._set_runs, K._byte_runs):
            k = finder(buf, runs)
            np.testing.assert_array_equal(runs[:2 * k].reshape(-1, 2), expected,
                                          err_msg=f"{finder.__name__} trial {trial}")
        w = int(rng.integers(1, 400))
        g = rng.choice([0, 1, 2, 255], w, p=[0.4, 0.3, 0.2, 0.1]).astype(np.uint8)
        pr = rng.integers(0, 3, w).astype(np.uint8)
        if trial % 2:  # long runs too
            g, pr = np.repeat(g[:w // 8 + 1], 8)[:w], np.repeat(pr[:w // 8 + 1], 8)[:w]
        state = K._runs_state(w)
        m = K._row_runs(g, pr, K._mark_buffer(w), w, 3, 255, False, state)
        starts = np.flatnonzero(np.r_[True, (g[1:] != g[:-1]) | (pr[1:] != pr[:-1])])
        np.testing.assert_array_equal(state[0][:m + 1], np.r_[starts, w])
        np.testing.assert_array_equal(state[1][:m], g[starts])
        np.testing.assert_array_equal(state[2][:m], pr[starts])
        agree = np.r_[0, np.cumsum((g == pr) & (g != 255))]
        ignored = np.r_[0, np.cumsum(g == 255)]
        for x in range(w):
            assert K._before(state, 255, x) == (agree[x], ignored[x]), (trial, x)


def test_workers_and_row_chunks_give_identical_counts():
    rng = np.random.default_rng(8)
    gt = np.stack([blobs(rng, (800, 700), 6, cell=30, ignore_frac=0.01) for _ in range(3)])
    pred = np.stack([noisy(rng, g, 6, 0.01) for g in gt])
    for band in (True, False):  # big enough that one image is cut in two
        assert len(_core.plan((1, 800, 700), 2, band)) == 2
    for dilation in (0.02, None):
        one = SemanticEval(6, boundary_dilation=dilation)
        one.update(gt, pred)
        two = SemanticEval(6, boundary_dilation=dilation, workers=2)
        two.update(gt, pred)            # images round-robin over two threads
        two.update(gt[0], pred[0])      # one image cut in two row ranges
        one.update(gt[0], pred[0])
        assert _plain(one.results()) == _plain(two.results())


def test_no_boundary_iou_reads_nan():
    ev = SemanticEval(2, boundary_dilation=None)
    ev.update(np.array([[0, 1]]), np.array([[0, 1]]))
    r = ev.report()
    assert np.isnan(r["metrics"]["mBIoU"]) and np.isnan(r["per_class"]["class_0"]["BIoU"])
    assert json.loads(ev.to_json())["metrics"]["mBIoU"] is None
    assert "BIoU" not in ev.summarize()


# --- evaluator --------------------------------------------------------------------------------

def test_report_shape_and_names():
    names = ["road", "car", "sky"]
    ev = SemanticEval(names)
    ev.update(np.array([[0, 1], [1, 255]], np.uint8), np.array([[0, 1], [0, 1]], np.uint8))
    r = ev.report()
    assert set(r) == {"family", "metrics", "per_class", "per_item", "curves", "provenance"}
    assert r["family"] == "semantic" and list(r["metrics"]) == list(METRIC_NAMES)
    assert list(r["per_class"]) == names
    assert set(r["per_class"]["road"]) == {"IoU", "Acc", "Dice", "BIoU"}
    assert np.isnan(r["per_class"]["sky"]["IoU"])  # absent on both sides
    assert r["provenance"]["status"] == "parity_verified"
    assert r["provenance"]["params"]["n_images"] == 1
    js = json.loads(ev.to_json())
    assert js["per_class"]["sky"]["IoU"] is None
    rows = ev.results()["per_class"]
    assert rows[1] == {**rows[1], "name": "car", "tp": 1, "gt_area": 2, "pred_area": 1}
    conf = ev.confusion()
    assert conf.dtype == np.uint64 and conf.tolist() == [[1, 0, 0], [1, 1, 0], [0, 0, 0]]
    # the means by hand from that matrix: IoU 1/2, 1/2 (sky none), Acc 1/1, 1/2, Dice
    # 2/3, 2/3, aAcc 2/3; d = 1 puts every pixel in a band: BIoU road {00}/{00, 10},
    # car {01}/{01, 10} (the ignored pixel 11 left out of both bands)
    fw = (1 / 2) * (1 / 3) + (1 / 2) * (2 / 3)
    assert ev.stats == pytest.approx([1 / 2, fw, 3 / 4, 2 / 3, 2 / 3, 1 / 2], rel=1e-15)
    text = ev.summarize()
    assert "road" in text and "mIoU" in text and "(1 images, 3 pixels)" in text


@pytest.mark.parametrize("kwargs", [dict(classes=0), dict(classes=["a", "a"]),
                                    dict(classes="abc"), dict(classes=3, workers=0),
                                    dict(classes=3, boundary_dilation=2.0),
                                    dict(classes=3, reduce_zero_label=True, ignore_index=-1)])
def test_bad_settings(kwargs):
    with pytest.raises(ValueError):
        SemanticEval(**kwargs)


def test_merge_and_pickle_equal_single_pass():
    rng = np.random.default_rng(9)
    pairs = []
    for _ in range(6):
        g = blobs(rng, tuple(rng.integers(20, 80, 2)), 5, ignore_frac=0.03)
        pairs.append((g, noisy(rng, g, 5)))
    whole = SemanticEval(5)
    for g, p in pairs:
        whole.update(g, p)
    a, b = SemanticEval(5), SemanticEval(5)
    for i, (g, p) in enumerate(pairs):
        (a if i % 3 else b).update(g, p)
    merged = pickle.loads(pickle.dumps(a))
    merged.merge(pickle.loads(pickle.dumps(b)))
    assert _plain(merged.results()) == _plain(whole.results())
    with pytest.raises(ValueError, match="ignore_index"):
        merged.merge(SemanticEval(5, ignore_index=0))
    with pytest.raises(TypeError):
        merged.merge("not an evaluator")


# --- files and folders ------------------------------------------------------------------------

def _png(path, labels, mode):
    labels = np.asarray(labels)
    if mode == "L":
        im = Image.fromarray(labels.astype(np.uint8))
    elif mode == "I;16":
        im = Image.fromarray(labels.astype(np.uint16))
    elif mode == "P":
        im = Image.fromarray(labels.astype(np.uint8), mode="P")
        im.putpalette(list(np.random.default_rng(0).integers(0, 256, 768)))
    else:
        im = Image.fromarray(np.stack([labels] * 3, -1).astype(np.uint8))
    path.parent.mkdir(parents=True, exist_ok=True)
    im.save(path)
    return path


@pytest.mark.parametrize("mode", ["L", "I;16", "P"])
def test_png_modes_read_as_class_ids(tmp_path, mode):
    rng = np.random.default_rng(10)
    gt = blobs(rng, (30, 20), 4, ignore_frac=0.05)
    pred = noisy(rng, gt, 4)
    ev = SemanticEval(4)
    ev.update_png(_png(tmp_path / "gt.png", gt, mode), _png(tmp_path / "pred.png", pred, mode))
    np.testing.assert_array_equal(ev.confusion(), ref_confusion(gt, pred, 4))


def test_png_rgb_refused_and_label_error_names_file(tmp_path):
    gt = _png(tmp_path / "gt.png", np.zeros((4, 4)), "L")
    rgb = _png(tmp_path / "rgb.png", np.zeros((4, 4)), "RGB")
    ev = SemanticEval(2)
    with pytest.raises(InputError, match="RGB") as info:
        ev.update_png(gt, rgb)
    assert str(rgb) in str(info.value)
    bad = _png(tmp_path / "bad.png", np.full((4, 4), 9), "L")
    with pytest.raises(InputError) as info:
        ev.update_png(gt, bad)
    assert str(bad) in str(info.value) and "label 9" in str(info.value)
    small = _png(tmp_path / "small.png", np.zeros((3, 4)), "L")
    with pytest.raises(InputError, match="3x4"):
        ev.update_png(gt, small)
    assert ev.n_images == 0 and ev.n_pixels == 0


def _city_layout(root, rng, n=5):
    """Cityscapes-style: gt nested per city with a suffix, predictions flat."""
    pairs = []
    for i in range(n):
        city = ["aachen", "bonn"][i % 2]
        key = f"{city}_{i:06d}_000019"
        gt = blobs(rng, (24, 48), 4, ignore_frac=0.05)
        pred = noisy(rng, gt, 4)
        _png(root / "gt" / city / f"{key}_gtFine_labelTrainIds.png", gt, "L")
        _png(root / "gt" / city / f"{key}_gtFine_color.png", gt, "L")  # other suffix
        _png(root / "pred" / f"{key}_leftImg8bit.png", pred, "L")
        pairs.append((gt, pred))
    return pairs


def test_update_folders_recursive_with_suffixes(tmp_path):
    pairs = _city_layout(tmp_path, np.random.default_rng(11))
    expect = SemanticEval(4)
    for g, p in pairs:
        expect.update(g, p)
    for workers in (1, 2):
        ev = SemanticEval(4)
        n = ev.update_folders(tmp_path / "gt", tmp_path / "pred", recursive=True,
                              gt_suffix="_gtFine_labelTrainIds.png",
                              pred_suffix="_leftImg8bit.png", workers=workers)
        assert n == 5
        assert _plain(ev.results()) == _plain(expect.results())


def test_update_folders_flat_default(tmp_path):
    rng = np.random.default_rng(12)
    gt = blobs(rng, (10, 12), 3)
    _png(tmp_path / "g" / "a.png", gt, "L")
    _png(tmp_path / "p" / "a.png", gt, "P")
    _png(tmp_path / "p" / "extra.png", gt, "L")  # a prediction without gt is left out
    _png(tmp_path / "g" / "sub" / "b.png", gt, "L")  # not searched without recursive
    ev = SemanticEval(3)
    assert ev.update_folders(tmp_path / "g", tmp_path / "p", workers=1) == 1
    assert ev.report()["metrics"]["mIoU"] == 1.0


def test_pairing_errors_list_keys(tmp_path):
    rng = np.random.default_rng(13)
    _city_layout(tmp_path, rng, n=3)
    (tmp_path / "pred" / "bonn_000001_000019_leftImg8bit.png").unlink()
    with pytest.raises(InputError, match="1 of 3 .*bonn_000001_000019"):
        pair_folders(tmp_path / "gt", tmp_path / "pred", recursive=True,
                     gt_suffix="_gtFine_labelTrainIds.png", pred_suffix="_leftImg8bit.png")
    dup = tmp_path / "pred" / "x" / "aachen_000000_000019_leftImg8bit.png"
    _png(dup, np.zeros((24, 48)), "L")
    _png(tmp_path / "pred" / "bonn_000001_000019_leftImg8bit.png", np.zeros((24, 48)), "L")
    with pytest.raises(InputError, match="aachen_000000_000019"):
        pair_folders(tmp_path / "gt", tmp_path / "pred", recursive=True,
                     gt_suffix="_gtFine_labelTrainIds.png", pred_suffix="_leftImg8bit.png")
    with pytest.raises(InputError, match="no ground-truth file"):
        pair_folders(tmp_path / "gt", tmp_path / "pred")  # nested, not recursive
    with pytest.raises(InputError, match="not found"):
        pair_folders(tmp_path / "nope", tmp_path / "pred")


def test_update_folders_all_or_nothing(tmp_path):
    rng = np.random.default_rng(14)
    for i in range(4):
        g = blobs(rng, (10, 10), 3)
        _png(tmp_path / "g" / f"{i}.png", g, "L")
        _png(tmp_path / "p" / f"{i}.png", np.where(np.arange(10) == i, 3, g) if i == 2
             else g, "L")
    ev = SemanticEval(3)
    with pytest.raises(InputError, match=r"2\.png"):
        ev.update_folders(tmp_path / "g", tmp_path / "p", workers=2)
    assert ev.n_images == 0 and ev.n_pixels == 0


# --- CLI --------------------------------------------------------------------------------------

def _cli(argv):
    parser = argparse.ArgumentParser(prog="segbench")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["semantic", *argv])
    return args.func(args)


def test_cli_json_and_table(tmp_path, capsys):
    _city_layout(tmp_path, np.random.default_rng(15), n=3)
    (tmp_path / "names.txt").write_text("road\ncar\nsky\nperson\n")
    common = ["--gt", str(tmp_path / "gt"), "--pred", str(tmp_path / "pred"), "--recursive",
              "--gt-suffix", "_gtFine_labelTrainIds.png", "--pred-suffix",
              "_leftImg8bit.png", "--quiet"]
    assert _cli([*common, "--classes", str(tmp_path / "names.txt"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["per_class"]) == ["road", "car", "sky", "person"]
    assert out["provenance"]["params"]["n_images"] == 3
    assert _cli([*common, "--classes", "4", "--no-boundary-iou", "--workers", "2"]) == 0
    text = capsys.readouterr().out
    assert "class_3" in text and "mIoU" in text and "mBIoU" not in text


def test_cli_errors_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="neither a number"):
        read_classes(str(tmp_path / "missing.txt"))
    (tmp_path / "dup.txt").write_text("a\nb\na\n")
    with pytest.raises(InputError, match="duplicated"):
        read_classes(str(tmp_path / "dup.txt"))
    (tmp_path / "g").mkdir()
    with pytest.raises(InputError, match="ignore_index=255"):
        _cli(["--gt", str(tmp_path / "g"), "--pred", str(tmp_path / "g"), "--classes", "3",
              "--reduce-zero-label", "--ignore-index", "0"])
