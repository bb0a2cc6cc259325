"""segbench stats on folders: .mat and .seg layouts, workers, CLI, real data."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
from PIL import Image

from conftest import DATA, require
from segbench.errors import InputError
from segbench.io import SegFile, write_seg
from segbench.datasets import write_ground_truth
from segbench.runners._stats import run_stats
from segbench.datasets import open_ground_truth
from segbench.cli.stats import add_parsers


def _image(rng, h=30, w=45):
    return (rng.random((h, w, 3)) * 255).astype(np.uint8)


def _segs(rng, h=30, w=45, k=3):
    out = []
    for _ in range(k):
        n = int(rng.integers(2, 7))
        rows = np.sort(rng.choice(np.arange(1, h), n - 1, replace=False))
        seg = np.searchsorted(rows, np.arange(h), side="right")[:, None] + 1
        seg = np.repeat(seg, w, axis=1)
        seg[:, : int(rng.integers(5, w - 5))] += n        # split left/right as well
        out.append(seg.astype(np.uint16))
    return out


@pytest.fixture(scope="module")
def bsds500(tmp_path_factory):
    root = tmp_path_factory.mktemp("bsds500")
    rng = np.random.default_rng(0)
    for split, ids in (("train", ["11", "12", "13"]), ("val", ["21", "22"])):
        (root / "images" / split).mkdir(parents=True)
        for iid in ids:
            write_ground_truth(root / "groundTruth" / split / f"{iid}.mat", _segs(rng))
            Image.fromarray(_image(rng)).save(root / "images" / split / f"{iid}.png")
    return root


@pytest.fixture(scope="module")
def bsds300(tmp_path_factory):
    root = tmp_path_factory.mktemp("bsds300")
    rng = np.random.default_rng(1)
    (root / "images" / "test").mkdir(parents=True)
    for iid in (31, 32):
        Image.fromarray(_image(rng)).save(root / "images" / "test" / f"{iid}.png")
        for uid, gray in ((1101, True), (1102, False), (1103, False)):
            seg = _segs(rng, k=1)[0].astype(np.int32) - 1
            folder = root / "human" / ("gray" if gray else "color") / str(uid)
            folder.mkdir(parents=True, exist_ok=True)
            write_seg(folder / f"{iid}.seg", SegFile(seg, image=iid, user=uid, gray=gray))
    return root


def test_layouts(bsds500, bsds300):
    ds = open_ground_truth(bsds500 / "groundTruth", all_splits=True)
    assert ds.ids() == ["11", "12", "13", "21", "22"]
    assert all(it.image_path is not None for it in ds)
    ds = open_ground_truth(bsds300 / "human", presentation="all")
    assert ds.ids() == ["31", "32"]
    assert sorted(a.user for a in ds["31"].annotations) == [1101, 1102, 1103]
    with pytest.raises(InputError):
        run_stats(bsds500 / "nothing", progress=False)
    with pytest.raises(InputError):
        run_stats(bsds500 / "images", progress=False)     # no ground truth there


def test_workers_do_not_change_anything(bsds500, tmp_path):
    a = run_stats(bsds500 / "groundTruth", tmp_path / "a", samples=150, workers=1,
                  progress=False, n_boot=50, min_area=1)
    b = run_stats(bsds500 / "groundTruth", tmp_path / "b", samples=150, workers=2,
                  progress=False, n_boot=50, min_area=1)
    assert [r.key for r in a.records] == [r.key for r in b.records]
    for ra, rb in zip(a.records, b.records):
        np.testing.assert_array_equal(ra.proximity, rb.proximity)
        for cue in ra.cues:
            np.testing.assert_array_equal(ra.cues[cue], rb.cues[cue])
    da = json.loads((tmp_path / "a" / "result_stats.json").read_text())
    db = json.loads((tmp_path / "b" / "result_stats.json").read_text())
    assert da["curves"] == db["curves"] and da["metrics"] == db["metrics"]
    assert a.params["n_segmentations"] == 15 and set(a.groups) == {"all"}
    for name in ("proximity", "similarity_gray", "similarity_color", "similarity_texture",
                 "convexity", "region_area"):
        assert (tmp_path / "a" / f"{name}.png").stat().st_size > 0


def test_bsds300_gray_split(bsds300, tmp_path):
    res = run_stats(bsds300 / "human", None, samples=100, progress=False, n_boot=0)
    assert res.params["n_images"] == 2 and res.params["n_images_with_photo"] == 2
    assert res.groups["gray"].n_segmentations == 2
    assert res.groups["color"].n_segmentations == 4
    assert {r.key for r in res.records if r.gray} == {"31/1101", "32/1101"}
    np.testing.assert_array_equal(res.groups["gray"].proximity.pairs
                                  + res.groups["color"].proximity.pairs,
                                  res.all.proximity.pairs)


def test_missing_images_skip_similarity_only(bsds300, tmp_path):
    import shutil
    human = tmp_path / "tree" / "human"          # the segmentations without photographs
    shutil.copytree(bsds300 / "human", human)
    empty = tmp_path / "no-images"
    empty.mkdir()
    with pytest.warns(UserWarning, match="similarity skipped"):
        res = run_stats(human, None, images=empty, samples=80, progress=False, n_boot=0)
    assert res.all.similarity == {} and res.all.proximity.n_items == 6


def test_image_size_mismatch(tmp_path):
    write_ground_truth(tmp_path / "groundTruth" / "5.mat", [np.ones((10, 12), np.uint16)])
    (tmp_path / "images").mkdir()
    Image.fromarray(np.zeros((12, 10, 3), np.uint8)).save(tmp_path / "images" / "5.png")
    with pytest.raises(InputError, match="5.png"):
        run_stats(tmp_path / "groundTruth", None, progress=False)


def test_cli(bsds500, tmp_path, capsys):
    parser = argparse.ArgumentParser()
    add_parsers(parser.add_subparsers(dest="command"))
    out = tmp_path / "cli"
    a = parser.parse_args(["stats", "--gt", str(bsds500 / "groundTruth"), "--out", str(out),
                           "--samples", "100", "--n-boot", "20", "--quiet", "--json",
                           "--no-plot"])
    assert a.func(a) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["all"]["n_segmentations"] == 15
    assert (out / "result_stats.json").exists() and not (out / "proximity.png").exists()
    a = parser.parse_args(["stats", "--gt", str(bsds500 / "groundTruth"), "--out", str(out),
                           "--samples", "100", "--n-boot", "20", "--quiet",
                           "--normalize", "image"])
    assert a.func(a) == 0
    text = capsys.readouterr().out
    assert "15 segmentations of 5 images" in text and "alpha" in text


# --- real data (skipped without ../shared) -------------------------------------------------

def test_real_bsds300_subset_is_all_colour():
    segs = require(DATA / "bsds300-seg-subset")
    images = require(DATA / "bsds500" / "images")
    res = run_stats(segs, None, images=images, samples=150, progress=False, n_boot=100)
    assert res.params["n_segmentations"] == 61 and res.params["n_images_with_photo"] == 11
    assert res.groups["color"].n_segmentations == 61
    assert res.groups["gray"].n_segmentations == 0
    g = res.all
    p0, _ = g.proximity.ends()
    s0, s1 = g.similarity["gray"].ends()
    assert p0 > 0.4 and s0 > s1
    assert 0.7 < g.convexity.median < 0.95


def test_real_bsds500_workers_agree(tmp_path):
    src = require(DATA / "bsds500")
    ids = sorted(p.stem for p in (src / "groundTruth" / "val").glob("*.mat"))[:4]
    for sub in ("groundTruth", "images"):
        (tmp_path / sub).mkdir()
    for iid in ids:
        (tmp_path / "groundTruth" / f"{iid}.mat").symlink_to(
            src / "groundTruth" / "val" / f"{iid}.mat")
        (tmp_path / "images" / f"{iid}.jpg").symlink_to(src / "images" / "val" / f"{iid}.jpg")
    a = run_stats(tmp_path / "groundTruth", None, samples=300, workers=1, progress=False,
                  n_boot=50)
    b = run_stats(tmp_path / "groundTruth", None, samples=300, workers=2, progress=False,
                  n_boot=50)
    np.testing.assert_array_equal(a.all.proximity.mean, b.all.proximity.mean)
    np.testing.assert_array_equal(a.all.similarity["texture"].pooled,
                                  b.all.similarity["texture"].pooled)
    assert a.all.area.alpha_ci == b.all.area.alpha_ci
    assert a.all.n_images == 4 and a.all.n_segmentations >= 16
