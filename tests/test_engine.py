"""The boundary runner: resume, worker-count invariance, errors, CLI, demo."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from segbench.algorithms.edges import gradient_magnitude
from segbench.cli import main
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.engine import run_boundary, run_human
from segbench.engine._boundary import CACHE_DIR
from segbench.errors import InputError
from segbench.io import write_ground_truth, write_soft_map

OUTPUTS = ("eval_bdry.txt", "eval_bdry_img.txt", "eval_bdry_thr.txt")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("synth")
    items = make_synthetic_dataset(6, shape=(120, 160), n_annotators=3, seed=3)
    write_synthetic_dataset(root, items)
    pred = root / "pred"
    for item in items:
        write_soft_map(pred / f"{item.iid}.png", gradient_magnitude(item.image))
    return root / "groundTruth" / "test", pred


def read_outputs(out: Path) -> dict:
    return {name: (out / name).read_text() for name in OUTPUTS}


def test_worker_count_does_not_change_results(dataset, tmp_path):
    gt, pred = dataset
    run_boundary(gt, pred, tmp_path / "w1", workers=1, progress=False, plot=False)
    run_boundary(gt, pred, tmp_path / "w2", workers=2, progress=False, plot=False)
    assert read_outputs(tmp_path / "w1") == read_outputs(tmp_path / "w2")
    for ev1 in sorted((tmp_path / "w1").glob("*_ev1.txt")):
        assert ev1.read_text() == (tmp_path / "w2" / ev1.name).read_text()


def test_resume_recomputes_only_what_is_missing(dataset, tmp_path):
    gt, pred = dataset
    out = tmp_path / "run"
    res = run_boundary(gt, pred, out, progress=False, plot=True)
    assert (out / "pr_curve.png").stat().st_size > 0
    assert set(json.loads((out / "result.json").read_text())) >= {"metrics", "per_item",
                                                                  "curves", "provenance"}
    before = read_outputs(out)
    records = sorted((out / CACHE_DIR).glob("*.json"))
    assert len(records) == 6
    untouched = records[2]
    mtime = untouched.stat().st_mtime_ns
    records[0].unlink()                                  # never finished
    records[1].write_text(records[1].read_text()[:50])   # killed while writing
    time.sleep(0.01)
    res2 = run_boundary(gt, pred, out, progress=False, plot=False)
    assert untouched.stat().st_mtime_ns == mtime         # reused, not recomputed
    assert read_outputs(out) == before
    assert res2.metrics == res.metrics


def test_changed_input_or_parameter_is_recomputed(dataset, tmp_path):
    gt, pred = dataset
    out = tmp_path / "run"
    a = run_boundary(gt, pred, out, progress=False, plot=False, nthresh=9)
    b = run_boundary(gt, pred, out, progress=False, plot=False, nthresh=19)
    assert len(a.curves["thresholds"]) == 9 and len(b.curves["thresholds"]) == 19


def test_killed_run_resumes_to_identical_numbers(dataset, tmp_path):
    gt, pred = dataset
    clean = tmp_path / "clean"
    run_boundary(gt, pred, clean, progress=False, plot=False)
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "segbench.cli", "boundary", "--gt", str(gt), "--pred",
           str(pred), "--out", str(out), "--quiet", "--no-plot"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and not list((out / CACHE_DIR).glob("*.json")):
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert main(["boundary", "--gt", str(gt), "--pred", str(pred), "--out", str(out),
                 "--quiet", "--no-plot"]) == 0
    assert read_outputs(out) == read_outputs(clean)


def test_missing_prediction_is_named(dataset, tmp_path):
    gt, pred = dataset
    partial = tmp_path / "partial"
    partial.mkdir()
    for p in sorted(pred.iterdir())[:4]:
        (partial / p.name).write_bytes(p.read_bytes())
    with pytest.raises(InputError) as err:
        run_boundary(gt, partial, tmp_path / "o", progress=False, plot=False)
    assert "synth004" in str(err.value) and str(partial) in str(err.value)


def test_shape_mismatch_names_the_file(tmp_path):
    gt = tmp_path / "gt"
    pred = tmp_path / "pred"
    seg = np.ones((20, 30), np.int32)
    seg[:, 15:] = 2
    write_ground_truth(gt / "a.mat", [seg])
    write_soft_map(pred / "a.png", np.zeros((30, 20)))
    with pytest.raises(InputError) as err:
        run_boundary(gt, pred, tmp_path / "o", progress=False, plot=False)
    assert "a.png" in str(err.value)


def test_cli_reports_errors_without_traceback(tmp_path, capsys):
    code = main(["boundary", "--gt", str(tmp_path / "nope"), "--pred", str(tmp_path),
                 "--out", str(tmp_path / "o"), "--quiet"])
    assert code == 2
    assert "nope" in capsys.readouterr().err


def test_cli_boundary_json(dataset, tmp_path, capsys):
    gt, pred = dataset
    assert main(["boundary", "--gt", str(gt), "--pred", str(pred), "--out",
                 str(tmp_path / "o"), "--quiet", "--json", "--no-plot"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert 0 < result["metrics"]["ODS"] <= 1
    assert len(result["per_item"]) == 6


def test_human_identical_annotators_score_one(tmp_path):
    rng = np.random.default_rng(0)
    seg = (rng.random((40, 50)) > 0.5).astype(np.int32) + 1
    write_ground_truth(tmp_path / "x.mat", [seg, seg, seg])
    h = run_human(tmp_path, progress=False)
    assert h["F"] == 1.0


def test_human_on_synthetic(dataset):
    gt, _ = dataset
    h = run_human(gt, progress=False)
    assert 0.5 < h["F"] < 1.0


def test_demo_runs(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--n-images", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "ODS" in out and "human" in out
    assert (tmp_path / "pr_curves.png").stat().st_size > 0
    assert (tmp_path / "results" / "canny-grey" / "eval_bdry.txt").exists()
