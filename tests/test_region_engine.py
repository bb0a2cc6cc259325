"""Region runner (resume, workers, label maps, errors), summary rules, human figures, CLI."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

import segbench.engine._run as engine_run
from conftest import FIXTURES, require
from segbench import evaluate
from segbench.cli.benchmark import add_parsers
from segbench.errors import InputError
from segbench.io import read_ground_truth, read_prediction, write_label_map
from segbench.datasets import write_ground_truth
from segbench.region import (RegionRecord, evaluate_image, human_region, region_scores,
                             summarize, summarize_human_region)

BSR = FIXTURES / "bsr-official"
INPUTS = BSR / "inputs"


def _record(cov_num, ri, voi, *, sum_r=100.0):
    t = len(cov_num)
    return RegionRecord(np.arange(1, t + 1, dtype=float), np.asarray(cov_num, float),
                        np.full(t, sum_r), np.asarray(cov_num, float) / 2, np.full(t, 50.0),
                        float(max(cov_num)) + 1, np.asarray(ri, float), np.asarray(voi, float))


def test_summary_tie_rules():
    """OIS takes the last best threshold, the per-image table the first; VI: lower wins."""
    a = _record([50, 80, 80], [0.7, 0.9, 0.9], [2.0, 1.0, 1.0])
    b = _record([60, 40, 40], [0.8, 0.8, 0.6], [1.5, 1.5, 3.0])
    s = summarize([a, b], ["a", "b"])
    np.testing.assert_array_equal(s.per_image[:, 0], [2, 1])          # first best
    assert s.per_image_best[0, 0] == 3 and s.per_image_best[1, 0] == 1  # last best
    assert s.covering_ois == pytest.approx((80 + 60) / 200)
    assert s.covering_ods == (2.0, pytest.approx(120 / 200))          # first of a tie
    assert s.covering_best == pytest.approx((81 + 61) / 200)
    assert s.pri_ods == (2.0, pytest.approx(0.85))
    assert s.pri_ois == pytest.approx((0.9 + 0.8) / 2)
    assert s.vi_ods == (2.0, pytest.approx(1.25))
    assert s.vi_ois == pytest.approx((1.0 + 1.5) / 2)
    with pytest.raises(InputError):
        summarize([a, _record([1, 2], [0, 0], [0, 0])])


def test_record_json_round_trip():
    rec = _record([1.25, 2.5], [0.5, 0.75], [1.0, 2.0])
    assert RegionRecord.from_json(json.loads(json.dumps(rec.to_json()))).to_json() == \
        rec.to_json()


def test_evaluate_image_inputs_agree():
    """ucm2 array, Prediction, list of levels and a single label map give one answer."""
    require(INPUTS)
    gt = read_ground_truth(INPUTS / "groundTruth" / "3063.mat")
    ucm = read_prediction(INPUTS / "ucm2" / "3063.mat")
    ths = [0.2, 0.5]
    a = evaluate_image(ucm, gt, thresholds=ths)
    b = evaluate_image(ucm.ucm2, gt, thresholds=ths)
    np.testing.assert_array_equal(a.ev2_table(), b.ev2_table())
    from segbench.region import ucm_segmentation
    levels = [ucm_segmentation(ucm.ucm2, t) for t in ths]
    c = evaluate_image(levels, gt)
    np.testing.assert_array_equal(a.ev2_table()[:, 1:], c.ev2_table()[:, 1:])
    np.testing.assert_array_equal(a.ev4_table()[:, 1:], c.ev4_table()[:, 1:])
    d = evaluate_image(levels[1], gt)
    s = region_scores(levels[1], gt)
    assert d.cnt_r[0] == s.cnt_r and d.ri[0] == s.pri and d.voi[0] == s.vi
    with pytest.raises(InputError):
        evaluate_image(ucm.ucm2[:-2], gt)


def _small_dataset(tmp_path):
    """3 tiny images, 2-3 annotators each, label-map predictions (0 is a real label)."""
    rng = np.random.default_rng(7)
    gt_dir, pred_dir = tmp_path / "gt", tmp_path / "pred"
    gt_dir.mkdir()
    pred_dir.mkdir()
    for i in range(3):
        base = np.kron(rng.integers(1, 4, (4, 5)), np.ones((5, 5), int))
        segs = [base, np.where(base == 1, 1, 2), base + (np.arange(25)[None, :] > 12)]
        write_ground_truth(gt_dir / f"{i}.mat", segs[: 2 + i % 2])
        write_label_map(pred_dir / f"{i}.png", np.kron(rng.integers(0, 3, (5, 5)),
                                                     np.ones((4, 5), int)))
    return gt_dir, pred_dir


def test_runner_label_maps_resume_and_workers(tmp_path, monkeypatch):
    gt_dir, pred_dir = _small_dataset(tmp_path)
    out1 = tmp_path / "o1"
    r1 = evaluate("region", gt_dir, pred_dir, out1, labels=True, progress=False)
    for name in ("eval_cover.txt", "eval_cover_img.txt", "eval_cover_th.txt",
                 "eval_RI_VOI.txt", "eval_RI_VOI_thr.txt", "result_region.json", "0_ev2.txt",
                 "0_ev3.txt", "0_ev4.txt"):
        assert (out1 / name).exists()
    # a label map: one "threshold", label 0 is a region (relabelled), not void
    from segbench.io import read_label_map
    lab = read_label_map(pred_dir / "0.png")
    ref = region_scores(lab + 1, read_ground_truth(gt_dir / "0.mat"))
    assert r1.per_item[0]["covering"] == pytest.approx(ref.covering)

    out2 = tmp_path / "o2"
    r2 = evaluate("region", gt_dir, pred_dir, out2, labels=True, workers=2,
                  progress=False)
    assert r2.metrics == r1.metrics
    for name in ("eval_cover.txt", "eval_RI_VOI.txt", "1_ev2.txt"):
        assert (out1 / name).read_text() == (out2 / name).read_text()

    def boom(group):
        raise AssertionError("recomputed a cached image")
    monkeypatch.setattr(engine_run, "_evaluate_group", boom)
    r3 = evaluate("region", gt_dir, pred_dir, out1, labels=True, progress=False)
    assert r3.metrics == r1.metrics
    # a changed input is recomputed
    write_label_map(pred_dir / "2.png", np.zeros((20, 25), int))
    with pytest.raises(AssertionError, match="recomputed"):
        evaluate("region", gt_dir, pred_dir, out1, labels=True, progress=False)


def test_runner_errors(tmp_path):
    gt_dir, pred_dir = _small_dataset(tmp_path)
    (pred_dir / "1.png").unlink()
    with pytest.raises(InputError, match="no prediction"):
        evaluate("region", gt_dir, pred_dir, tmp_path / "o", labels=True,
                 progress=False)
    write_label_map(pred_dir / "1.png", np.zeros((25, 20), int))     # transposed
    with pytest.raises(InputError, match="transposed"):
        evaluate("region", gt_dir, pred_dir, tmp_path / "o", labels=True,
                 progress=False)


def test_human_region_is_each_annotator_against_the_others():
    require(INPUTS)
    gt = read_ground_truth(INPUTS / "groundTruth" / "2018.mat")
    tab = human_region(gt)
    assert tab.shape == (len(gt), 6)
    s = region_scores(gt[1].segmentation, [g for k, g in enumerate(gt) if k != 1])
    np.testing.assert_allclose(tab[1], [s.cnt_r, s.sum_r, s.cnt_p, s.sum_p, s.pri, s.vi])
    h = summarize_human_region([tab, human_region(gt[:1])])
    assert h["n_pairs"] == len(gt) and 0 < h["covering"] < 1


def test_cli_parser_and_run(tmp_path, capsys):
    gt_dir, pred_dir = _small_dataset(tmp_path)
    parser = argparse.ArgumentParser()
    add_parsers(parser.add_subparsers(dest="command", required=True))
    a = parser.parse_args(["region", "--gt", str(gt_dir), "--pred", str(pred_dir), "--out",
                           str(tmp_path / "o"), "--quiet", "--json", "--human", "--labels"])
    # options left out stay None: the default is the registry's, recorded by the run
    assert a.nthresh is None and a.workers == 1
    assert a.func(a) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["family"] == "region" and "human_PRI" in res["metrics"]
    assert res["provenance"]["params"]["nthresh"] == 99
