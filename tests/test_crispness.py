"""Average Crispness and SEval/CEval ("Delving into Crispness", eval_crispness.m).

AC on maps whose value can be worked out by hand, and a run that reports SEval (after
NMS) and CEval (without) whose counts equal the boundary benchmark's with and without
``nms``.
"""

from __future__ import annotations

import numpy as np
import pytest

import segbench
from segbench.boundary import crispness
from segbench.datasets import make_synthetic_dataset, write_synthetic_dataset
from segbench.io import read_ground_truth, write_soft_map


def test_a_one_pixel_line_is_wholly_crisp():
    E = np.zeros((41, 41))
    E[10:30, 20] = 1.0
    assert crispness(E) == pytest.approx(1.0)


def test_a_blurred_line_keeps_its_crest_less_the_border_ramp():
    """A full-height vertical line with profile 0.5, 1, 0.5: NMS keeps the crest
    column; Dollar's NMS ramps the s = 5 border rows by y/5, so each end keeps
    0 + .2 + .4 + .6 + .8 = 2 of its 5: crest mass 41 - 6 = 35 of the 41 * 2 = 82."""
    E = np.zeros((41, 41))
    E[:, 19], E[:, 20], E[:, 21] = 0.5, 1.0, 0.5
    assert crispness(E) == pytest.approx(35 / 82, abs=1e-6)


def test_an_empty_map_has_no_crispness():
    assert np.isnan(crispness(np.zeros((8, 8))))


def test_seval_and_ceval_are_the_boundary_benchmark_with_and_without_nms(tmp_path):
    items = make_synthetic_dataset(3, shape=(64, 80), n_annotators=2, seed=4)
    write_synthetic_dataset(tmp_path, items)
    gt = tmp_path / "groundTruth" / "test"
    from scipy import ndimage
    rng = np.random.default_rng(1)
    for it in items:
        b = read_ground_truth(gt / f"{it.iid}.mat")[0].boundaries.astype(float)
        soft = np.clip(ndimage.gaussian_filter(b, 1.5) * 3 + 0.1 * rng.random(b.shape), 0, 1)
        write_soft_map(tmp_path / "pred" / f"{it.iid}.png", soft)
    res = segbench.evaluate("crispness", gt=gt, pred=tmp_path / "pred",
                            out=tmp_path / "run", progress=False)
    with_nms = segbench.evaluate("boundary", gt=gt, pred=tmp_path / "pred", nms=True,
                                 plot=False, progress=False)
    without = segbench.evaluate("boundary", gt=gt, pred=tmp_path / "pred", plot=False,
                                progress=False)
    for key in ("ODS", "OIS", "AP"):
        assert res.metrics[f"SEval_{key}"] == with_nms.metrics[key]
        assert res.metrics[f"CEval_{key}"] == without.metrics[key]
    from segbench.io import read_prediction
    per_image = [crispness(read_prediction(tmp_path / "pred" / f"{it.iid}.png").pb)
                 for it in items]
    assert res.metrics["AC"] == pytest.approx(np.mean(per_image), abs=1e-12)
    assert 0 < res.metrics["AC"] < 1
    again = segbench.Result.from_json(tmp_path / "run" / "result_crispness.json")
    assert again.metrics["AC"] == res.metrics["AC"]
