"""Parity with the frozen outputs of five references on 60 cases (../shared fixtures).

mmseg (IoUMetric 1.2.2) is the rule we follow for the IoU family; hotcoco 1.3.0 for fwIoU;
boundary-iou-api's mask_to_boundary for boundary IoU. torchmetrics and detectron2 differ
by documented rules, and those differences are checked to be exactly where the fixture
says, not assumed.
"""

import functools
import json

import numpy as np
import pytest

from conftest import FIXTURES, require
from segbench.result import _plain
from segbench.semantic import SemanticEval

ROOT = FIXTURES / "semantic" / "public"
MMSEG_RTOL = 1e-6  # mmseg and torchmetrics compute in float32


@functools.lru_cache(maxsize=1)
def _expected():
    return json.loads((require(ROOT) / "expected.json").read_text())


def _case_names():
    path = ROOT / "expected.json"
    if not path.exists():
        return ["<fixtures absent>"]
    return sorted(json.loads(path.read_text())["cases"])


CASES = _case_names()


@functools.lru_cache(maxsize=None)
def _ours(case):
    """Our evaluator on a case: one update per pair, as the references were fed."""
    spec = _expected()["cases"][case]
    params = spec["params"]
    ev = SemanticEval(params["num_classes"], ignore_index=params["ignore_index"],
                      reduce_zero_label=params["reduce_zero_label"])
    with np.load(ROOT / spec["input"]) as z:
        for i in range(len(spec["shapes"])):
            ev.update(z[f"gt{i}"], z[f"pred{i}"])
    return ev, ev.results()


def _refs(case):
    require(ROOT)
    if case not in _expected()["cases"]:
        pytest.skip("fixtures absent")
    spec = _expected()["cases"][case]
    return spec, spec["references"], _ours(case)


def _per_class(res, key):
    return np.array([row[key] for row in res["per_class"]], dtype=float)


def _close(ours, theirs, rtol, atol=0.0):
    ours = np.asarray(ours, dtype=float)
    theirs = np.asarray(theirs, dtype=float)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    ok = ~np.isnan(ours)
    np.testing.assert_allclose(ours[ok], theirs[ok], rtol=rtol, atol=atol)


@pytest.mark.parametrize("case", CASES)
def test_confusion_identical(case):
    _spec, _refs_, (ev, _res) = _refs(case)
    with np.load(ROOT / "confusion" / f"{case}.npz") as z:
        for ref in ("hotcoco", "torchmetrics", "spec_numpy"):
            np.testing.assert_array_equal(ev.confusion(), z[ref].astype(np.uint64), ref)
        # detectron2 stores the transpose with an extra row/column for ignored gt
        d2 = z["detectron2"]
        np.testing.assert_array_equal(ev.confusion(), d2[:-1, :-1].T.astype(np.uint64))


@pytest.mark.parametrize("case", CASES)
def test_mmseg(case):
    _spec, refs, (_ev, res) = _refs(case)
    mm = refs["mmseg"]
    for key in ("IoU", "Acc", "Dice"):
        _close(_per_class(res, key), mm[key], MMSEG_RTOL, atol=1e-12)
    for key in ("mIoU", "mAcc", "mDice", "aAcc"):
        _close([res[key]], [mm[key]], MMSEG_RTOL, atol=1e-12)


@pytest.mark.parametrize("case", CASES)
def test_hotcoco(case):
    _spec, refs, (_ev, res) = _refs(case)
    hc = refs["hotcoco"]
    for key in ("mIoU", "fwIoU", "mAcc", "aAcc"):
        _close([res[key]], [hc[key]], 1e-12)
    for key in ("IoU", "Acc"):
        _close(_per_class(res, key), hc[key], 1e-12)
    assert res["n_pixels"] == hc["n_pixels"]


@pytest.mark.parametrize("case", CASES)
def test_boundary_iou_api(case):
    _spec, refs, (_ev, res) = _refs(case)
    b = refs["boundary_iou_api"]
    np.testing.assert_array_equal([r["band_intersection"] for r in res["per_class"]],
                                  b["band_intersection"])
    np.testing.assert_array_equal([r["band_union"] for r in res["per_class"]],
                                  b["band_union"])
    _close(_per_class(res, "BIoU"), b["BIoU"], 1e-9)
    _close([res["mBIoU"]], [b["mBIoU"]], 1e-9)


@pytest.mark.parametrize("case", CASES)
def test_torchmetrics_where_rules_coincide(case):
    spec, refs, (_ev, res) = _refs(case)
    tm = refs["torchmetrics"]
    ours = _per_class(res, "IoU")
    # documented: torchmetrics gives 0 where a class is absent on both sides (we: nan)
    theirs = np.array(tm["IoU"], dtype=float)
    absent = np.isnan(ours)
    np.testing.assert_array_equal(theirs[absent], 0.0)
    np.testing.assert_allclose(ours[~absent], theirs[~absent], rtol=MMSEG_RTOL, atol=1e-12)
    differs = "mIoU" in spec["disagreements_vs_spec"]["torchmetrics"]
    ign = spec["params"]["ignore_index"]
    if not differs:
        _close([res["mIoU"]], [tm["mIoU"]], MMSEG_RTOL, atol=1e-12)
    else:
        # documented: torchmetrics leaves class ignore_index out of its mean
        assert ign < spec["params"]["num_classes"]
        assert abs(res["mIoU"] - tm["mIoU"]) > 1e-6
        kept = np.delete(ours, ign)
        assert np.nanmean(kept) == pytest.approx(tm["mIoU"], rel=MMSEG_RTOL)


@pytest.mark.parametrize("case", CASES)
def test_detectron2_differs_exactly_on_predicted_only_classes(case):
    spec, refs, (_ev, res) = _refs(case)
    d2 = refs["detectron2"]
    gt_area = _per_class(res, "gt_area")
    pred_area = _per_class(res, "pred_area")
    pred_only = (gt_area == 0) & (pred_area > 0)
    ours = _per_class(res, "IoU")
    theirs = np.array(d2["IoU"], dtype=float)
    # detectron2 drops a class that is predicted but never in the ground truth...
    assert np.isnan(theirs[pred_only]).all()
    np.testing.assert_array_equal(ours[pred_only], 0.0)
    _close(ours[~pred_only], theirs[~pred_only], 1e-9)
    # ...so its mIoU is the mean over classes with ground truth, which differs from ours
    # wherever a predicted-only class exists (unless the two means happen to coincide,
    # as on 001: a single class scoring 0 either way)
    d2_rule = np.nanmean(np.where(gt_area > 0, ours, np.nan)) if (gt_area > 0).any() \
        else np.nan
    _close([d2_rule], [d2["mIoU"]], 1e-9)
    differs = not np.isclose(res["mIoU"], d2["mIoU"], rtol=1e-9, equal_nan=True)
    assert differs <= bool(pred_only.any())
    assert ("mIoU" in spec["disagreements_vs_spec"]["detectron2"]) == differs
    _close([res["mAcc"]], [d2["mAcc"]], 1e-9)
    _close([res["aAcc"]], [d2["aAcc"]], 1e-9)
    if res["n_pixels"]:
        _close([res["fwIoU"]], [d2["fwIoU"]], 1e-9)
    else:  # documented: detectron2 reports 0 for an all-ignored split
        assert np.isnan(res["fwIoU"]) and d2["fwIoU"] == 0.0


def test_detectron2_labelmap_boundary_iou_is_another_quantity():
    """detectron2's BoundaryIoU erodes the whole label map; it differs from the
    per-class bands on most cases, as the fixture records. Wherever it differs, ours is
    boundary-iou-api's per-class value: the band counts exactly, the ratio to 1e-9."""
    require(ROOT)
    compared = differ = 0
    for case in CASES:
        spec = _expected()["cases"][case]
        theirs = spec["references"]["detectron2"].get("BoundaryIoU_labelmap")
        if theirs is None:
            continue
        _ev, res = _ours(case)
        compared += 1
        ours = _per_class(res, "BIoU")
        theirs = np.array(theirs, dtype=float)
        same = np.isnan(ours) == np.isnan(theirs)
        both = ~np.isnan(ours) & ~np.isnan(theirs)
        same[both] = np.isclose(ours[both], theirs[both], rtol=1e-9, atol=1e-12)
        if same.all():
            continue
        differ += 1
        api = spec["references"]["boundary_iou_api"]
        where = ~same
        for key in ("band_intersection", "band_union"):
            np.testing.assert_array_equal(
                np.array([r[key] for r in res["per_class"]])[where],
                np.array(api[key])[where], err_msg=f"{case} {key}")
        _close(ours[where], np.array(api["BIoU"], dtype=float)[where], 1e-9)
    assert compared >= 50
    assert differ >= compared / 2, (differ, compared)


def test_pickled_and_merged_parity_case():
    """A case split over two evaluators, pickled and merged, equals the whole."""
    import pickle

    require(ROOT)
    case = "026_ade_like_4imgs"
    if case not in _expected()["cases"]:
        pytest.skip("case absent")
    spec = _expected()["cases"][case]
    whole, _ = _ours(case)
    params = spec["params"]
    parts = [SemanticEval(params["num_classes"], ignore_index=params["ignore_index"],
                          reduce_zero_label=params["reduce_zero_label"]) for _ in range(2)]
    with np.load(ROOT / spec["input"]) as z:
        for i in range(len(spec["shapes"])):
            parts[i % 2].update(z[f"gt{i}"], z[f"pred{i}"])
    merged = pickle.loads(pickle.dumps(parts[0]))
    merged.merge(pickle.loads(pickle.dumps(parts[1])))
    np.testing.assert_array_equal(merged.confusion(), whole.confusion())
    assert _plain(merged.results()) == _plain(whole.results())
