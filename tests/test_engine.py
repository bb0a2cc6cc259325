"""The one engine: resume and repair, worker invariance, record store, errors, naming,
subsets, per-item CSV, and the command line around it."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import segbench.engine._run as engine_run
from segbench import Result, evaluate
from segbench.algorithms.edges import gradient_magnitude
from segbench.cli import main
from segbench.datasets import run_name
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.engine import RECORDS_DIR, RecordWarning
from segbench.errors import InputError, OutputError
from segbench.io import write_segs, write_soft_map
from segbench.datasets import write_ground_truth

OUTPUTS = ("eval_bdry.txt", "eval_bdry_img.txt", "eval_bdry_thr.txt")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """6 synthetic images with 3 annotators: soft maps and segs .mat predictions."""
    root = tmp_path_factory.mktemp("synth")
    items = make_synthetic_dataset(6, shape=(120, 160), n_annotators=3, seed=3)
    write_synthetic_dataset(root, items)
    pred, segs = root / "pred" / "test", root / "segs"
    for item in items:
        g = gradient_magnitude(item.image)
        write_soft_map(pred / f"{item.iid}.png", g)
        write_segs(segs / f"{item.iid}.mat",
                   [(g < t).astype(np.int32) + 1 for t in (0.1, 0.3)])
    return root / "groundTruth" / "test", pred, segs


def official_files(out: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(out.glob("*.txt"))}


def test_worker_count_does_not_change_results(dataset, tmp_path):
    gt, pred, segs = dataset
    evaluate("boundary", gt, pred, tmp_path / "w1", workers=1, progress=False, plot=False)
    evaluate("boundary", gt, pred, tmp_path / "w2", workers=2, progress=False, plot=False)
    assert official_files(tmp_path / "w1") == official_files(tmp_path / "w2")
    evaluate("all", gt, segs, tmp_path / "a1", workers=1, progress=False, plot=False)
    evaluate("all", gt, segs, tmp_path / "a2", workers=2, progress=False, plot=False)
    assert official_files(tmp_path / "a1") == official_files(tmp_path / "a2")


def test_outputs_result_csv_and_name(dataset, tmp_path):
    gt, pred, _ = dataset
    out = tmp_path / "run"
    res = evaluate("boundary", gt, pred, out, progress=False)
    assert (out / "pr_curve.png").stat().st_size > 0
    # the prediction folder is .../pred/test: the split name is skipped
    assert res.name == "pred" and "pred" in repr(res) and "ODS=" in repr(res)
    back = Result.from_json(out / "result_boundary.json")
    assert back.name == "pred" and back.metrics["ODS"] == res.metrics["ODS"]
    assert back.per_item[0]["id"] == "synth000"
    lines = (out / "per_item_boundary.csv").read_text().splitlines()
    assert lines[0].split(",") == ["id", "threshold", "recall", "precision", "f"]
    assert len(lines) == 7 and lines[1].startswith("synth000,")
    assert float(lines[1].split(",")[4]) == pytest.approx(res.per_item[0]["f"])
    (pred / "name.txt").write_text("My detector\n")
    try:
        assert run_name(pred) == "My detector"
    finally:
        (pred / "name.txt").unlink()
    assert evaluate("boundary", gt, pred, None, name="x", progress=False).name == "x"


def test_ids_subset(dataset, tmp_path):
    gt, pred, _ = dataset
    ids = tmp_path / "ids.txt"
    ids.write_text("synth001  # a comment\nsynth004\n")
    res = evaluate("boundary", gt, pred, None, ids=ids, progress=False)
    assert [r["id"] for r in res.per_item] == ["synth001", "synth004"]
    full = evaluate("boundary", gt, pred, None, progress=False)
    assert res.per_item[1] == full.per_item[4]
    with pytest.raises(InputError, match="not in"):
        evaluate("boundary", gt, pred, None, ids="synth001,nope", progress=False)
    # a prediction missing for an id asked for is still an error
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / "synth001.png").write_bytes((pred / "synth001.png").read_bytes())
    assert evaluate("boundary", gt, partial, None, ids="synth001",
                    progress=False).per_item[0] == full.per_item[1]
    with pytest.raises(InputError, match="synth004"):
        evaluate("boundary", gt, partial, None, ids="synth001,synth004", progress=False)


def test_resume_reuses_and_repairs(dataset, tmp_path, monkeypatch):
    gt, pred, _ = dataset
    out = tmp_path / "run"
    res = evaluate("boundary", gt, pred, out, progress=False, plot=False)
    before = official_files(out)
    records = sorted((out / RECORDS_DIR / "boundary").glob("*.json"))
    assert len(records) == 6
    untouched = records[5]
    mtime = untouched.stat().st_mtime_ns
    records[0].unlink()                                         # never finished
    records[1].write_text(records[1].read_text()[:50])          # killed while writing
    data = json.loads(records[2].read_text())
    data["record"]["cnt_r"] = data["record"]["cnt_r"][:3]       # valid JSON, bad payload
    records[2].write_text(json.dumps(data))
    data = json.loads(records[3].read_text())
    data["record"] = {"thresholds": "x"}
    records[3].write_text(json.dumps(data))
    (out / "synth004_ev1.txt").unlink()                         # official file deleted
    ev = out / "synth005_ev1.txt"
    ev.write_bytes(ev.read_bytes()[:40])                        # ... or truncated
    with pytest.warns(RecordWarning) as caught:
        res2 = evaluate("boundary", gt, pred, out, progress=False, plot=False)
    damaged = sorted(Path(str(w.message).split(":")[0]).name for w in caught)
    assert damaged == [records[1].name, records[2].name, records[3].name]
    assert untouched.stat().st_mtime_ns == mtime                # reused, not recomputed
    assert official_files(out) == before
    assert res2.metrics == res.metrics

    def boom(group):
        raise AssertionError("recomputed a saved record")
    monkeypatch.setattr(engine_run, "_evaluate_group", boom)
    assert evaluate("boundary", gt, pred, out, progress=False, plot=False).metrics == \
        res.metrics
    # a changed parameter is a different record, recomputed
    with pytest.raises(AssertionError, match="recomputed"):
        evaluate("boundary", gt, pred, out, progress=False, plot=False, nthresh=9)


def test_all_shares_records_with_each_benchmark(dataset, tmp_path, monkeypatch):
    gt, segs = dataset[0], dataset[2]
    out = tmp_path / "all"
    b, r = evaluate("all", gt, segs, out, progress=False, plot=False)
    monkeypatch.setattr(engine_run, "_evaluate_group", None)    # any computation fails
    again = evaluate("boundary", gt, segs, out, progress=False, plot=False)
    assert again.to_dict()["metrics"] == b.to_dict()["metrics"]     # NaN R50 as null
    again = evaluate("region", gt, segs, out, progress=False)
    assert again.to_dict()["metrics"] == r.to_dict()["metrics"]
    assert (out / "result_region.json").is_file() and (out / "per_item_region.csv").is_file()


def _run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "segbench.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_kill_at_any_moment_then_rerun_is_byte_identical(dataset, tmp_path):
    gt, _, segs = dataset
    clean = tmp_path / "clean"
    evaluate("all", gt, segs, clean, progress=False, plot=False)
    want = official_files(clean)
    assert len(want) == 6 * 4 + 8
    rng = random.Random(5)
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "segbench.cli", "all", "--gt", str(gt), "--pred",
           str(segs), "--out", str(out), "--quiet", "--no-plot"]
    for _ in range(4):   # kills at random moments, each run resuming the last
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 3.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert main(["all", "--gt", str(gt), "--pred", str(segs), "--out", str(out),
                 "--quiet", "--no-plot"]) == 0
    assert official_files(out) == want
    assert not list(out.rglob("*.tmp"))


def test_missing_prediction_and_shape_mismatch_are_named(dataset, tmp_path):
    gt, pred, _ = dataset
    partial = tmp_path / "partial"
    partial.mkdir()
    for p in sorted(pred.iterdir())[:4]:
        (partial / p.name).write_bytes(p.read_bytes())
    with pytest.raises(InputError) as err:
        evaluate("boundary", gt, partial, tmp_path / "o", progress=False, plot=False)
    assert "synth004" in str(err.value) and str(partial) in str(err.value)
    g, p = tmp_path / "gt", tmp_path / "pred"
    seg = np.ones((20, 30), np.int32)
    seg[:, 15:] = 2
    write_ground_truth(g / "a.mat", [seg])
    write_soft_map(p / "a.png", np.zeros((30, 20)))
    with pytest.raises(InputError, match="a.png"):
        evaluate("boundary", g, p, tmp_path / "o2", progress=False, plot=False)


def test_region_refuses_soft_maps_unless_labels(dataset, tmp_path):
    gt, pred, _ = dataset
    with pytest.raises(InputError, match="--labels") as err:
        evaluate("region", gt, pred, None, progress=False)
    assert ".png" in str(err.value) and str(pred) in str(err.value)
    proc = _run_cli("region", "--gt", gt, "--pred", pred, "--quiet")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "ucm2 or segs .mat" in proc.stderr


def test_unwritable_out_is_one_line_and_leaves_nothing(dataset, tmp_path, monkeypatch):
    gt, pred, _ = dataset
    a_file = tmp_path / "file"
    a_file.write_text("mine")
    for out, why in ((a_file, "not a folder"), (a_file / "sub", "Not a directory"),
                     ("/sys/segbench-test-out", "not permitted")):
        proc = _run_cli("boundary", "--gt", gt, "--pred", pred, "--out", out, "--quiet")
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1
        assert str(out) in proc.stderr and why in proc.stderr
    assert a_file.read_text() == "mine"
    # a disk that fills up while the results are written: records kept, no .tmp left
    out = tmp_path / "full"
    evaluate("boundary", gt, pred, out, progress=False, plot=False)
    (out / "eval_bdry.txt").unlink()
    real = Path.write_bytes

    def full(self, data):
        if self.name.startswith(".eval_bdry"):
            real(self, data[:10])
            raise OSError(28, "No space left on device")
        return real(self, data)
    monkeypatch.setattr(Path, "write_bytes", full)
    with pytest.raises(OutputError, match="No space left") as err:
        evaluate("boundary", gt, pred, out, progress=False, plot=False)
    assert "eval_bdry" in str(err.value)
    assert not list(out.rglob("*.tmp"))
    assert len(list((out / RECORDS_DIR / "boundary").glob("*.json"))) == 6


def test_cli_errors_without_traceback(tmp_path, capsys):
    code = main(["boundary", "--gt", str(tmp_path / "nope"), "--pred", str(tmp_path),
                 "--out", str(tmp_path / "o"), "--quiet"])
    assert code == 2
    assert "nope" in capsys.readouterr().err


def test_cli_boundary_json_and_human_out(dataset, tmp_path, capsys):
    gt, pred, _ = dataset
    assert main(["boundary", "--gt", str(gt), "--pred", str(pred), "--out",
                 str(tmp_path / "o"), "--quiet", "--json", "--no-plot"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert 0 < result["metrics"]["ODS"] <= 1 and len(result["per_item"]) == 6
    assert main(["human", "--gt", str(gt), "--out", str(tmp_path / "h"), "--quiet"]) == 0
    assert "boundary  F =" in capsys.readouterr().out
    h = Result.from_json(tmp_path / "h" / "result_human_boundary.json")
    hr = Result.from_json(tmp_path / "h" / "result_human_region.json")
    assert h.family == "human_boundary" and 0.5 < h.metrics["F"] < 1
    assert hr.family == "human_region" and len(hr.per_item) == 6
    assert (tmp_path / "h" / "per_item_human_boundary.csv").read_text().startswith("id,cnt_r,")


def test_human_identical_annotators_score_one(tmp_path):
    rng = np.random.default_rng(0)
    seg = (rng.random((40, 50)) > 0.5).astype(np.int32) + 1
    write_ground_truth(tmp_path / "x.mat", [seg, seg, seg])
    assert evaluate("human_boundary", tmp_path, progress=False).metrics["F"] == 1.0


def test_help_imports_no_numerical_library():
    code = ("import sys, runpy; sys.argv = ['segbench', 'boundary', '--help']\n"
            "try:\n    runpy.run_module('segbench.cli', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "bad = [m for m in ('numpy', 'scipy', 'numba') if m in sys.modules]\n"
            "print('IMPORTED', bad)")
    out = " ".join(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                  text=True, timeout=60).stdout.split())
    assert "IMPORTED []" in out and "--presentation" in out and "(default: 99;" in out
    bare = _run_cli()
    assert bare.returncode == 0 and "boundary" in bare.stdout


def test_demo_runs(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--n-images", "2", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "ODS" in out and "human" in out
    assert (tmp_path / "pr_curves.png").stat().st_size > 0
    assert (tmp_path / "results" / "canny-grey" / "eval_bdry.txt").exists()


def test_two_results_compared_in_pandas(dataset, tmp_path):
    """The notebook example of docs/engine.md, run as written there."""
    pd = pytest.importorskip("pandas")
    gt, pred, segs = dataset
    evaluate("boundary", gt, pred, tmp_path / "runs" / "gradient", progress=False,
             plot=False)
    evaluate("boundary", gt, segs, tmp_path / "runs" / "segs", progress=False, plot=False)
    a = Result.from_json(tmp_path / "runs" / "gradient" / "result_boundary.json")
    b = Result.from_json(tmp_path / "runs" / "segs" / "result_boundary.json")
    table = pd.concat({"gradient": a.to_pandas()["f"], "segs": b.to_pandas()["f"]},
                      axis=1)
    table["gain"] = table["segs"] - table["gradient"]
    assert list(table.index) == [f"synth00{i}" for i in range(6)]
    assert table.loc["synth003", "gradient"] == pytest.approx(a.per_item[3]["f"])
    assert table["gain"].mean() == pytest.approx(
        np.mean([q["f"] - p["f"] for p, q in zip(a.per_item, b.per_item)]))
    assert isinstance(table, pd.DataFrame)
