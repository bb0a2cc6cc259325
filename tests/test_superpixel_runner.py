"""Folders, file formats, the command line, K-sweeps and the baseline algorithms."""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest
from PIL import Image

from conftest import FIXTURES, require
from segbench.algorithms.superpixels import (SUPERPIXEL_ALGORITHMS, felzenszwalb,
                                             quickshift, slic, superpixels, watershed)
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.errors import InputError
from segbench.runners._superpixel import run_superpixel, run_sweep
from segbench.cli.superpixel import add_parsers
from segbench.io import (list_annotator_files, read_annotators, read_csv_labels,
                         read_ground_truth, read_image, read_stutz_results,
                         read_superpixels, write_csv_labels, write_label_map)
from segbench.superpixel import average_over_range, evaluate_image


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A small synthetic split in the BSDS500 layout and SLIC superpixels for it."""
    root = tmp_path_factory.mktemp("sp_data")
    items = make_synthetic_dataset(3, shape=(40, 56), n_annotators=3)
    write_synthetic_dataset(root, items, split="val")
    pred = root / "pred"
    pred.mkdir()
    for it in items:
        write_label_map(pred / f"{it.iid}.png", slic(it.image, 40))
    return root, items


def _cli(argv):
    p = argparse.ArgumentParser(prog="segbench")
    add_parsers(p.add_subparsers(dest="command", required=True))
    a = p.parse_args(argv)
    return a.func(a)


# ------------------------------------------------------------------ runner and formats

def test_run_superpixel_matches_evaluate_image(dataset, tmp_path):
    root, items = dataset
    import segbench

    # the one way in: segbench.evaluate runs the family's runner with its keywords
    res = segbench.evaluate("superpixel", root / "groundTruth" / "val", root / "pred",
                            tmp_path, images=root / "images" / "val", progress=False)
    assert res.family == "superpixel" and res.metrics["n_images"] == 3
    rec = evaluate_image(slic(items[0].image, 40), items[0].segmentations, items[0].image)
    row = res.per_item[0]
    assert row["id"] == items[0].iid and row["n_annotators"] == 3
    for k, v in rec.mean().items():
        assert row[k] == pytest.approx(v, nan_ok=True)
    assert row["ev"] == pytest.approx(rec.ev)
    d = json.loads((tmp_path / "result_superpixel.json").read_text())
    assert d["provenance"]["params"]["window"] == "euclidean"
    lines = (tmp_path / "per_annotator.csv").read_text().splitlines()
    assert len(lines) == 1 + 3 * 3 and lines[0].startswith("image,annotator,ue,ue_norm,cue")


def test_workers_give_identical_results(dataset):
    root, _ = dataset
    a = run_superpixel(root / "groundTruth" / "val", root / "pred", progress=False)
    b = run_superpixel(root / "groundTruth" / "val", root / "pred", workers=2,
                       progress=False)
    assert a.to_dict()["per_item"] == b.to_dict()["per_item"]     # NaN as null
    assert math.isnan(a.metrics["ev"])                    # no images given


def test_csv_layout_roundtrip(dataset, tmp_path):
    root, items = dataset
    gt_dir, sp_dir = tmp_path / "gt", tmp_path / "sp"
    gt_dir.mkdir()
    sp_dir.mkdir()
    for it in items:
        for t, seg in enumerate(it.segmentations):
            write_csv_labels(gt_dir / f"{it.iid}-{t}.csv", seg - 1)
        write_csv_labels(sp_dir / f"{it.iid}.csv", slic(it.image, 40))
    assert np.array_equal(read_csv_labels(gt_dir / f"{items[0].iid}-1.csv"),
                          items[0].segmentations[1] - 1)
    files = list_annotator_files(gt_dir)
    assert list(files) == [it.iid for it in items] and len(files[items[0].iid]) == 3
    a = run_superpixel(gt_dir, sp_dir, progress=False)
    b = run_superpixel(root / "groundTruth" / "val", root / "pred", progress=False)
    assert a.metrics == pytest.approx(b.metrics, nan_ok=True)


def test_readers_name_the_file(tmp_path):
    bad = tmp_path / "ragged.csv"
    bad.write_text("1,2,3\n4,5\n")
    with pytest.raises(InputError, match="ragged.csv.*row 2"):
        read_csv_labels(bad)
    bad.write_text("1,2\n3,x\n")
    with pytest.raises(InputError, match="not an integer"):
        read_csv_labels(bad)
    with pytest.raises(InputError, match="file not found"):
        read_superpixels(tmp_path / "missing.npz")
    gap = tmp_path / "gap"
    gap.mkdir()
    for t in (0, 2):
        write_csv_labels(gap / f"img-{t}.csv", np.zeros((2, 2), int))
    with pytest.raises(InputError, match="without gaps"):
        list_annotator_files(gap)
    np.savez(tmp_path / "two.npz", a=np.zeros((2, 2), int), b=np.ones((2, 2), int))
    with pytest.raises(InputError, match="sp"):
        read_superpixels(tmp_path / "two.npz")


def test_npz_label_out_of_int32_range_is_named(tmp_path):
    big = np.zeros((2, 2), np.int64)
    big[1, 1] = 2 ** 40                     # astype(int32) would wrap this to 0
    sp, gt = tmp_path / "big_sp.npz", tmp_path / "big_gt.npz"
    np.savez(sp, sp=big)
    np.savez(gt, gt0=np.zeros((2, 2), np.int64), gt1=big)
    with pytest.raises(InputError, match="outside the allowed range") as info:
        read_superpixels(sp)
    assert "big_sp.npz" in str(info.value)
    with pytest.raises(InputError, match="gt1 has values") as info:
        read_annotators(gt)
    assert "big_gt.npz" in str(info.value)


def test_missing_superpixel_map_is_named(dataset, tmp_path):
    root, items = dataset
    (tmp_path / "sp").mkdir()
    write_label_map(tmp_path / "sp" / f"{items[0].iid}.png", np.zeros((40, 56), int))
    with pytest.raises(InputError, match="2 of 3"):
        run_superpixel(root / "groundTruth" / "val", tmp_path / "sp", progress=False)


def test_fixture_npz_layouts():
    sp_dir = require(FIXTURES / "superpixel" / "inputs")
    gts = read_annotators(sp_dir / "gt" / "101085.npz")
    assert len(gts) == 5 and gts[0].shape == (481, 321)
    sp = read_superpixels(sp_dir / "sp" / "slic200" / "101085.npz")
    # the C++ benchmark's own count of this map's superpixels (its `sp` column)
    rows, cols, values = read_stutz_results(require(FIXTURES / "superpixel" / "outputs" /
                                                    "slic200" / "results.csv"))
    counts = {values[i, cols.index("sp")] for i, (iid, _) in enumerate(rows)
              if iid == "101085"}
    (n,) = counts                            # the same on every annotator's row
    assert len(np.unique(sp)) == n and sp.min() == 0 and sp.max() == n - 1


# ------------------------------------------------------------------ command line

def test_cli_superpixel(dataset, tmp_path, capsys):
    root, _ = dataset
    assert _cli(["superpixel", "--gt", str(root / "groundTruth" / "val"), "--pred",
                 str(root / "pred"), "--images", str(root / "images" / "val"), "--quiet",
                 "--out", str(tmp_path), "--stutz"]) == 0
    out = capsys.readouterr().out
    assert "mean over annotators" in out and "best annotator" in out and "UE-SLIC" in out
    assert (tmp_path / "results.csv").read_text().startswith("image,ground_truth,ue,oe")
    # a rerun without --stutz: its results.csv would disagree with the summary, so it
    # goes (it stayed); a user's file of that name would not
    argv = ["superpixel", "--gt", str(root / "groundTruth" / "val"), "--pred",
            str(root / "pred"), "--quiet", "--out", str(tmp_path)]
    assert _cli(argv) == 0
    assert not (tmp_path / "results.csv").exists()
    (tmp_path / "results.csv").write_text("my,own,table\n")
    assert _cli(argv) == 0
    assert (tmp_path / "results.csv").read_text() == "my,own,table\n"
    capsys.readouterr()
    assert _cli(["superpixel", "--gt", str(root / "groundTruth" / "val"), "--pred",
                 str(root / "pred"), "--quiet", "--json", "--window", "square"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["family"] == "superpixel" and d["metrics"]["ev"] is None


def test_cli_sweep(dataset, tmp_path, capsys):
    root, _ = dataset
    argv = ["superpixel-sweep", "--bsds", str(root), "--split", "val", "--algorithm",
            "slic,watershed", "--k", "20,60", "--out", str(tmp_path), "--quiet"]
    assert _cli(argv) == 0
    out = capsys.readouterr().out
    assert "average" in out and "watershed K" in out
    assert (tmp_path / "curves.png").stat().st_size > 0
    assert len((tmp_path / "sweep.csv").read_text().splitlines()) == 1 + 2 * 2
    with pytest.raises(SystemExit):                   # --gt (or --bsds) is required
        _cli(["superpixel-sweep", "--k", "20,60"])


# ------------------------------------------------------------------ sweeps

def test_sweep_curves_averages_and_resume(dataset, tmp_path):
    root, items = dataset
    kw = dict(out=tmp_path, progress=False, plot=False)
    res = run_sweep("slic", [20, 60], root / "groundTruth" / "val", root / "images" / "val",
                    **kw)
    c = res.curves["slic"]
    assert c["k"] == [20, 60] and c["n_superpixels"][0] < c["n_superpixels"][1]
    assert c["br"][0] < c["br"][1]                   # more superpixels, more recall
    lo, hi = res.provenance["params"]["k_range"]
    assert res.metrics["slic/avg_br"] == pytest.approx(
        average_over_range(c["n_superpixels"], c["br"], lo, hi))
    # every record is cached: a rerun recomputes nothing and gives the same numbers
    cache = list((tmp_path / ".segbench-records").rglob("*.json"))
    assert len(cache) == 2 * len(items)
    stamp = {p: p.stat().st_mtime_ns for p in cache}
    again = run_sweep("slic", [20, 60], root / "groundTruth" / "val",
                      root / "images" / "val", **kw)
    assert again.curves["slic"]["br"] == c["br"]
    assert all(p.stat().st_mtime_ns == t for p, t in stamp.items())
    # another tolerance is another record
    other = run_sweep("slic", [20], root / "groundTruth" / "val", root / "images" / "val",
                      tolerance=1.0, k_range=(10, 30), **kw)
    assert other.curves["slic"]["br"][0] <= c["br"][0]


def test_average_over_range():
    assert average_over_range([100, 300], [0.5, 0.7], 100, 300) == pytest.approx(0.6)
    assert average_over_range([100, 300], [0.5, 0.7], 0, 400) == pytest.approx(0.6)
    assert average_over_range([300, 100], [0.7, 0.5], 200, 300) == pytest.approx(0.65)
    assert average_over_range([100, 200, 300], [0.5, np.nan, 0.7], 100, 300) == \
        pytest.approx(0.6)
    with pytest.raises(InputError):
        average_over_range([1, 2], [1, 2], 3, 3)


# ------------------------------------------------------------------ baseline algorithms

@pytest.fixture(scope="module")
def photo():
    return make_synthetic_dataset(1, shape=(60, 80))[0].image


@pytest.mark.parametrize("name", sorted(SUPERPIXEL_ALGORITHMS))
def test_baselines_deterministic_and_near_k(photo, name):
    if name == "seeds":        # the optional extra segbench[superpixels]
        cv2 = pytest.importorskip("cv2")
        if not hasattr(cv2, "ximgproc"):
            pytest.skip("OpenCV without its contrib module")
    a = superpixels(photo, 40, name)
    b = superpixels(photo, 40, name)
    assert a.dtype == np.int32 and a.shape == photo.shape[:2]
    np.testing.assert_array_equal(a, b)
    n = a.max() + 1
    assert set(np.unique(a)) == set(range(n))
    assert 10 <= n <= 120, n


def test_counts_follow_k(photo):
    for fn in (slic, watershed, felzenszwalb):
        assert fn(photo, 20).max() < fn(photo, 150).max()
    assert quickshift(photo, 20).max() < quickshift(photo, 150).max()
    with pytest.raises(InputError):
        superpixels(photo, 0)
    with pytest.raises(InputError, match="unknown"):
        superpixels(photo, 10, "no-such-algorithm")


def test_slic_reproduces_the_fixture_call():
    inputs = require(FIXTURES / "superpixel" / "inputs")
    img = np.asarray(Image.open(inputs / "images" / "101085.png"))
    ref = np.load(inputs / "sp" / "slic200" / "101085.npz")["sp"]
    np.testing.assert_array_equal(slic(img, 200), ref)


def test_read_image_and_ground_truth_agree(dataset):
    root, items = dataset
    it = items[0]
    assert np.array_equal(read_image(root / "images" / "val" / f"{it.iid}.png"), it.image)
    gts = read_ground_truth(root / "groundTruth" / "val" / f"{it.iid}.mat")
    assert all(np.array_equal(g.segmentation, s) for g, s in zip(gts, it.segmentations))
