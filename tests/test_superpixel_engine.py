"""The superpixel benchmark and its K-sweep on the engine: the numbers of the direct
path, records reused and repaired, worker invariance, every ground-truth layout, the
command line."""

from __future__ import annotations

import importlib
import inspect
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

import segbench.engine._run as engine_run
from conftest import DATA, FIXTURES, require
from segbench import evaluate
from segbench.runners._superpixel import run_superpixel, run_sweep
from segbench.cli import main
from segbench.cli import superpixel as cli_superpixel
from segbench.datasets import BSDS300
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.engine import RECORDS_DIR, RecordWarning
from segbench.errors import InputError
from segbench.io import (read_annotators, read_ground_truth, read_image,
                         read_stutz_results, read_superpixels, write_csv_labels,
                         write_image, write_label_map)
from segbench.datasets import write_ground_truth
from segbench.superpixel import (BOUNDARIES, DEFAULT_TOLERANCE, STUTZ_COLUMNS, SUPERPIXEL,
                                 WINDOWS, SuperpixelRecord, evaluate_image, stutz_rows,
                                 summarize, sweep_family)

# the module (the package's attribute of that name is its function)
algorithms = importlib.import_module("segbench.algorithms.superpixels")
SP = FIXTURES / "superpixel" / "inputs"
SEG_TREE = DATA / "bsds300-seg-subset" / "human" / "color"
VAL = DATA / "bsds500"


def _files(out) -> dict:
    """The bytes of every output file of a run (result.json without its time stamp)."""
    got = {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}
    if "result_superpixel.json" in got:
        d = json.loads(got["result_superpixel.json"])
        d["provenance"].pop("created")
        got["result_superpixel.json"] = json.dumps(d, sort_keys=True).encode()
    return got


def _grid(shape, step=16) -> np.ndarray:
    """Square superpixels of ``step`` pixels: a prediction for any image size."""
    h, w = shape
    y, x = np.mgrid[:h, :w]
    return ((y // step) * ((w + step - 1) // step) + x // step).astype(np.int32)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """A BSDS500-layout root (split val) of 4 images and SLIC superpixels for it."""
    root = tmp_path_factory.mktemp("sp_engine")
    items = make_synthetic_dataset(4, shape=(48, 64), n_annotators=3, seed=5)
    write_synthetic_dataset(root, items, split="val")
    pred = root / "pred"
    pred.mkdir()
    for it in items:
        write_label_map(pred / f"{it.iid}.png", algorithms.slic(it.image, 30))
    return root, items


# ------------------------------------------------------------------ the numbers

def test_fixture_numbers_equal_the_direct_path(tmp_path):
    """run_superpixel = read every file, evaluate_image and summarize, image by image."""
    require(SP)
    res = run_superpixel(SP / "gt", SP / "sp" / "fh", images=SP / "images", out=tmp_path,
                         stutz=True, progress=False)
    ids = sorted(p.stem for p in (SP / "gt").glob("*.npz"))
    records, rows = [], []
    for iid in ids:
        sp = read_superpixels(SP / "sp" / "fh" / f"{iid}.npz")
        gts = read_annotators(SP / "gt" / f"{iid}.npz")
        image = read_image(SP / "images" / f"{iid}.png")
        records.append(evaluate_image(sp, gts, image))
        rows.extend(stutz_rows(sp, gts, image))
    want = summarize(records).metrics()
    assert res.metrics.keys() == want.keys()
    for k, v in want.items():
        assert res.metrics[k] == v or (v != v and res.metrics[k] != res.metrics[k]), k
    assert [r["id"] for r in res.per_item] == ids
    for row, rec in zip(res.per_item, records):
        assert row["n_annotators"] == rec.n_annotators
        assert row["per_annotator"] == {k: v.tolist() for k, v in rec.per_annotator.items()}
    _, cols, values = read_stutz_results(tmp_path / "results.csv")
    assert cols == list(STUTZ_COLUMNS)
    expect = np.array([[float(f"{r[c]:g}") for c in cols] for r in rows])
    np.testing.assert_array_equal(values, expect)
    lines = (tmp_path / "per_annotator.csv").read_bytes().split(b"\r\n")
    assert lines[0].startswith(b"image,annotator,ue,ue_norm,cue") and len(lines) == 2 + len(rows)
    assert (tmp_path / "per_item_superpixel.csv").read_text().startswith("id,n_annotators,ue,")


def test_layouts_mat_npz_csv_give_the_same_numbers(tmp_path):
    """The fixtures' .npz (0-based), the C++ layout's CSV and the BSDS500 .mat files
    hold the same partitions: every figure but the label-dependent stutz ones agree."""
    require(SP)
    mat = tmp_path / "mat"
    csv_dir = tmp_path / "csv"
    mat.mkdir()
    csv_dir.mkdir()
    for p in sorted((SP / "gt").glob("*.npz")):
        for t, g in enumerate(read_annotators(p)):
            write_csv_labels(csv_dir / f"{p.stem}-{t}.csv", g)
        write_ground_truth(mat / f"{p.stem}.mat", [g + 1 for g in read_annotators(p)])
    runs = [run_superpixel(gt, SP / "sp" / "slic200", images=SP / "images",
                           progress=False) for gt in (SP / "gt", csv_dir, mat)]
    for other in runs[1:]:
        assert other.to_dict()["metrics"] == runs[0].to_dict()["metrics"]
        assert other.to_dict()["per_item"] == runs[0].to_dict()["per_item"]


def test_api_registry_runs_the_family(synthetic):
    root, _ = synthetic
    gt = root / "groundTruth" / "val"
    a = evaluate("superpixel", gt, root / "pred", None, progress=False, window="square")
    b = run_superpixel(gt, root / "pred", progress=False, window="square")
    assert a.to_dict()["metrics"] == b.to_dict()["metrics"]


def test_cli_literals_and_api_defaults_agree():
    assert cli_superpixel.WINDOWS == WINDOWS
    assert cli_superpixel.BOUNDARIES == BOUNDARIES
    assert cli_superpixel.DEFAULT_TOLERANCE == DEFAULT_TOLERANCE
    sig = inspect.signature(run_superpixel).parameters
    for k, v in SUPERPIXEL.defaults.items():
        assert sig[k].default == v, k
    sweep = inspect.signature(run_sweep).parameters
    for k, v in sweep_family("slic", 10).defaults.items():
        if k not in ("algorithm", "k", "algorithm_params"):
            assert sweep[k].default == v, k


@pytest.mark.parametrize("command", ["superpixel", "superpixel-sweep"])
def test_help_imports_no_numerical_library(command):
    code = ("import sys, runpy; sys.argv = ['segbench', %r, '--help']\n"
            "try:\n    runpy.run_module('segbench.cli', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "bad = [m for m in ('numpy', 'scipy', 'numba') if m in sys.modules]\n"
            "print('IMPORTED', bad)") % command
    out = " ".join(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                  text=True, timeout=60).stdout.split())
    assert "IMPORTED []" in out and "--presentation" in out and "--scheduler" in out
    assert "--bsds" not in out                           # the hidden alias


# ------------------------------------------------------------------ records

def test_rerun_reuses_and_damaged_record_is_recomputed(synthetic, tmp_path, monkeypatch):
    root, items = synthetic
    kw = dict(images=root / "images" / "val", out=tmp_path, stutz=True, progress=False)
    first = run_superpixel(root / "groundTruth" / "val", root / "pred", **kw)
    want = _files(tmp_path)
    assert {"per_annotator.csv", "results.csv", "per_item_superpixel.csv"} <= set(want)
    records = sorted((tmp_path / RECORDS_DIR / "superpixel").glob("*.json"))
    assert len(records) == len(items)
    kept = records[0].stat().st_mtime_ns

    with monkeypatch.context() as m:
        def boom(group):
            raise AssertionError("recomputed a saved record")
        m.setattr(engine_run, "_evaluate_group", boom)
        again = run_superpixel(root / "groundTruth" / "val", root / "pred", **kw)
        assert again.to_dict()["metrics"] == first.to_dict()["metrics"]
        assert _files(tmp_path) == want
        with pytest.raises(AssertionError, match="recomputed"):   # other options
            run_superpixel(root / "groundTruth" / "val", root / "pred", tolerance=1.0,
                           **kw)

    data = json.loads(records[1].read_text())
    data["record"]["per_annotator"]["br"] = data["record"]["per_annotator"]["br"][:1]
    records[1].write_text(json.dumps(data))
    data = json.loads(records[2].read_text())
    del data["record"]["stutz"][0]["ue"]
    records[2].write_text(json.dumps(data))
    records[3].write_text(records[3].read_text()[:40])             # killed mid-write
    with pytest.warns(RecordWarning) as caught:
        run_superpixel(root / "groundTruth" / "val", root / "pred", **kw)
    named = sorted(str(w.message).split(":")[0].rsplit("/", 1)[-1] for w in caught)
    assert named == [r.name for r in records[1:4]]
    assert records[0].stat().st_mtime_ns == kept
    assert _files(tmp_path) == want


def test_workers_two_equal_one_byte_for_byte(tmp_path):
    require(SP)
    for w in (1, 2):
        run_superpixel(SP / "gt", SP / "sp" / "slic200", images=SP / "images",
                       out=tmp_path / f"w{w}", stutz=True, workers=w, progress=False)
    one, two = _files(tmp_path / "w1"), _files(tmp_path / "w2")
    assert one == two and len(one) == 7  # 4 outputs, the run folder mark and lock, manifest


def test_record_json_is_exact_and_validated():
    rng = np.random.default_rng(0)
    sp = rng.integers(0, 5, (20, 30))
    gts = [rng.integers(0, 3, (20, 30)) for _ in range(2)]
    rec = evaluate_image(sp, gts)
    rows = stutz_rows(sp, gts)
    rows[0]["reg"] = float("inf")
    full = SuperpixelRecord(rec.per_annotator, rec.boundary_counts, rec.n_superpixels,
                            rec.n_components, rec.n_split, rec.co, rec.ev,
                            {"seconds": 0.25}, tuple(rows))
    d = json.loads(json.dumps(full.to_json(), allow_nan=False))   # strict JSON
    back = SuperpixelRecord.from_json(d)
    assert back.stutz[0]["reg"] == float("inf") and np.isnan(back.ev)
    assert back.to_json() == full.to_json()
    for broken in ({**d, "format": 0}, {**d, "n_split": -1},
                   {**d, "boundary_counts": [[1, 2, 3]]},
                   {**d, "per_annotator": {k: v for k, v in d["per_annotator"].items()
                                           if k != "ue"}},
                   {**d, "stutz": d["stutz"][:1]}):
        with pytest.raises((KeyError, TypeError, ValueError)):
            SuperpixelRecord.from_json(broken)


# ------------------------------------------------------------------ layouts

def test_dataset_root_with_split_uses_its_photographs(synthetic, tmp_path):
    root, _ = synthetic
    a, b = tmp_path / "root", tmp_path / "folders"
    assert main(["superpixel", "--gt", str(root), "--split", "val", "--pred",
                 str(root / "pred"), "--out", str(a), "--quiet"]) == 0
    assert main(["superpixel", "--gt", str(root / "groundTruth" / "val"), "--images",
                 str(root / "images" / "val"), "--pred", str(root / "pred"), "--out",
                 str(b), "--quiet"]) == 0
    assert (a / "per_annotator.csv").read_bytes() == (b / "per_annotator.csv").read_bytes()
    assert _ev(a) > 0                                  # explained variation


def _ev(out) -> float:
    return json.loads((out / "result_superpixel.json").read_text())["metrics"]["ev"]


@pytest.fixture(scope="module")
def seg_tree(tmp_path_factory):
    """The BSDS300 .seg tree, grid superpixels for its images, and the .mat files of
    the same annotators (equal label maps: ``.seg`` = Segmentation - 1)."""
    require(SEG_TREE)
    require(VAL / "groundTruth" / "val")
    tree = BSDS300.from_subject_folders(SEG_TREE)
    base = tmp_path_factory.mktemp("sp_seg")
    pred, mat = base / "pred", base / "mat"
    pred.mkdir()
    mat.mkdir()
    for item in tree:
        stored = read_ground_truth(VAL / "groundTruth" / "val" / f"{item.iid}.mat")
        chosen = [next(h for h in stored if np.array_equal(h.segmentation,
                                                           a.segmentation))
                  for a in item.annotations]
        write_ground_truth(mat / f"{item.iid}.mat", [h.segmentation for h in chosen])
        write_label_map(pred / f"{item.iid}.png", _grid(item.shape))
    return pred, mat, len(tree)


def test_bsds300_seg_tree_as_gt(seg_tree, tmp_path):
    pred, mat, n = seg_tree
    outs = []
    for gt in (SEG_TREE, mat):
        out = tmp_path / gt.name
        assert main(["superpixel", "--gt", str(gt), "--pred", str(pred), "--images",
                     str(VAL / "images" / "val"), "--out", str(out), "--stutz",
                     "--quiet"]) == 0
        outs.append(out)
    for name in ("per_annotator.csv", "results.csv", "per_item_superpixel.csv"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    assert len((outs[0] / "per_item_superpixel.csv").read_text().splitlines()) == 1 + n
    assert _ev(outs[0]) > 0


def test_missing_photograph_and_wrong_size_are_named(synthetic, tmp_path, capsys):
    root, items = synthetic
    photos = tmp_path / "photos"
    photos.mkdir()
    shutil.copy(root / "images" / "val" / f"{items[0].iid}.png", photos)
    with pytest.raises(InputError, match="3 of 4 images have no photograph"):
        run_superpixel(root / "groundTruth" / "val", root / "pred", images=photos,
                       progress=False)
    for it in items[1:]:
        write_image(photos / f"{it.iid}.png", np.zeros((8, 8, 3), np.uint8))
    assert main(["superpixel", "--gt", str(root / "groundTruth" / "val"), "--pred",
                 str(root / "pred"), "--images", str(photos), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "photos" in err[0] and "8x8" in err[0]


# ------------------------------------------------------------------ sweeps

def test_sweep_new_k_computes_only_itself(synthetic, tmp_path, monkeypatch):
    root, items = synthetic
    kw = dict(out=tmp_path, progress=False, plot=False)
    first = run_sweep(["slic", "watershed"], [20, 60], root, split="val", **kw)
    real, calls = algorithms.superpixels, []

    def counted(image, k, algorithm="slic", **params):
        calls.append((algorithm, k))
        return real(image, k, algorithm, **params)
    monkeypatch.setattr(algorithms, "superpixels", counted)
    again = run_sweep(["slic", "watershed"], [20, 40, 60], root, split="val", **kw)
    assert sorted(calls) == sorted([("slic", 40), ("watershed", 40)] * len(items))
    for a in ("slic", "watershed"):
        c, d = first.curves[a], again.curves[a]
        assert d["k"] == [20, 40, 60]
        for m in c:
            assert [d[m][0], d[m][2]] == c[m], (a, m)       # seconds too: the records
    folders = sorted(p.name for p in (tmp_path / RECORDS_DIR).iterdir())
    assert folders == [f"superpixel_sweep-{a}-k{k}" for a in ("slic", "watershed")
                       for k in (20, 40, 60)]
    calls.clear()
    run_sweep("slic", [20, 40], root, split="val", **kw)
    assert calls == []


def test_sweep_layouts_aliases_and_workers(synthetic, tmp_path):
    root, _ = synthetic
    base = ["superpixel-sweep", "--algorithm", "slic,felzenszwalb", "--k", "20,50",
            "--quiet", "--no-plot"]
    runs = {"root": ["--gt", str(root), "--split", "val"],
            "bsds": ["--bsds", str(root), "--split", "val", "--workers", "2"],
            "folders": ["--gt", str(root / "groundTruth" / "val"), "--images",
                        str(root / "images" / "val")]}
    for name, args in runs.items():
        assert main([*base, *args, "--out", str(tmp_path / name)]) == 0
    curves = {}
    for name in runs:
        d = json.loads((tmp_path / name / "sweep.json").read_text())
        assert d["provenance"]["params"]["n_images"] == 4
        curves[name] = {a: {k: v for k, v in c.items() if k != "seconds"}
                        for a, c in d["curves"].items()}
    assert curves["root"] == curves["bsds"] == curves["folders"]
    assert main([*base, *runs["root"], "--max-images", "2", "--out",
                 str(tmp_path / "two")]) == 0
    assert main([*base, *runs["root"], "--n-images", "2", "--out",
                 str(tmp_path / "two_alias")]) == 0
    two = [json.loads((tmp_path / n / "sweep.json").read_text()) for n in
           ("two", "two_alias")]
    assert [d["provenance"]["params"]["n_images"] for d in two] == [2, 2]
    assert [d["curves"]["slic"]["br"] for d in two] == [two[0]["curves"]["slic"]["br"]] * 2
    assert two[0]["curves"]["slic"]["br"] != curves["root"]["slic"]["br"]


def test_sweep_without_photographs_is_refused(synthetic):
    root, _ = synthetic
    with pytest.raises(InputError, match="photograph"):
        run_sweep("slic", [20, 40], root / "groundTruth" / "val", progress=False)
    with pytest.raises(InputError, match="unknown superpixel algorithm"):
        run_sweep("no-such-algorithm", [20, 40], root, split="val", progress=False)


def test_dask_scheduler_is_byte_identical(synthetic, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    root, _ = synthetic
    gt, images, pred = root / "groundTruth" / "val", root / "images" / "val", root / "pred"
    run_superpixel(gt, pred, images=images, out=tmp_path / "one", stutz=True,
                   progress=False)
    local = run_sweep("slic", [20, 40], root, split="val", progress=False, plot=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        run_superpixel(gt, pred, images=images, out=tmp_path / "dask", stutz=True,
                       progress=False, scheduler=cluster.scheduler_address)
        remote = run_sweep("slic", [20, 40], root, split="val", progress=False,
                           plot=False, scheduler=cluster.scheduler_address)
    assert _files(tmp_path / "one") == _files(tmp_path / "dask")
    for c in (local.curves["slic"], remote.curves["slic"]):
        c.pop("seconds")
    assert remote.curves == local.curves and remote.metrics == local.metrics
