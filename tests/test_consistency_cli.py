"""``segbench consistency`` and ``segbench granularity`` on the command line."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.errors import InputError
from segbench.cli.consistency import add_parsers


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    items = make_synthetic_dataset(4, shape=(40, 56), n_annotators=3, seed=2)
    write_synthetic_dataset(root, items, split="val")
    return root / "groundTruth" / "val", root / "images" / "val"


def _parser():
    parser = argparse.ArgumentParser(prog="segbench")
    add_parsers(parser.add_subparsers(dest="command", required=True))
    return parser


def _run(argv):
    a = _parser().parse_args(argv)
    return a.func(a)


def test_defaults():
    a = _parser().parse_args(["consistency", "--gt", "g"])
    assert (a.pairs, a.seed, a.workers, a.out, a.json, a.quiet) == \
        (1000, 0, 1, None, False, False)
    a = _parser().parse_args(["granularity", "--gt", "g1", "g2", "--segmenter", "ncut",
                              "--images", "i"])
    assert a.gt == ["g1", "g2"] and a.images == ["i"] and a.max_images is None
    with pytest.raises(SystemExit):
        _parser().parse_args(["granularity", "--gt", "g", "--segmenter", "watershed"])


def test_consistency_json_and_files(data, tmp_path, capsys):
    gt, _ = data
    assert _run(["consistency", "--gt", str(gt), "--pairs", "2", "--seed", "3",
                 "--out", str(tmp_path), "--quiet", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    m = res["metrics"]
    assert res["family"] == "consistency"
    assert m["n_images"] == 4 and m["n_same_pairs"] == 4 * 3 and m["n_image_pairs"] == 2
    assert m["n_different_pairs"] == 2 * 9 and m["n_image_pairs_total"] == 6
    assert (tmp_path / "consistency_hist.png").exists()
    assert json.loads((tmp_path / "result_consistency.json").read_text())["metrics"] == m


def test_consistency_text(data, capsys):
    gt, _ = data
    assert _run(["consistency", "--gt", str(gt), "--quiet", "--json"]) == 0
    m = json.loads(capsys.readouterr().out)["metrics"]
    assert _run(["consistency", "--gt", str(gt), "--quiet", "--workers", "2"]) == 0
    out = capsys.readouterr().out
    assert "GCE" in out and "LCE" in out and "(0.11)" in out and "5.9% @ 0.16" in out
    # the computed values of the same data, not only the paper's constants
    assert f"{m['GCE_same']:.4f} (" in out and f"{m['LCE_different']:.4f} (" in out


def test_granularity_segmenters_and_folder(data, tmp_path, capsys):
    gt, img = data
    segs = tmp_path / "segs"
    assert _run(["granularity", "--gt", str(gt), "--images", str(img), "--segmenter",
                 "kmeans", "--save-segs", str(segs), "--max-images", "2", "--quiet",
                 "--json", "--no-plot", "--out", str(tmp_path / "o")]) == 0
    km = json.loads(capsys.readouterr().out)["metrics"]
    assert km["n_images"] == 2 and km["segmenter"] == "kmeans_segmenter"
    assert (tmp_path / "o" / "result_granularity.json").exists()
    assert not (tmp_path / "o" / "granularity.png").exists()
    assert _run(["granularity", "--gt", str(gt), "--segmenter", "folder", "--seg-dir",
                 str(segs), "--max-images", "2", "--quiet", "--json"]) == 0
    fm = json.loads(capsys.readouterr().out)["metrics"]
    assert np.isclose(fm["GCE"], km["GCE"]) and np.isclose(fm["LCE"], km["LCE"])
    assert _run(["granularity", "--gt", str(gt), "--images", str(img), "--segmenter",
                 "ncut", "--max-images", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "ncut vs human" in out and "human vs human" in out


def test_no_different_pairs_prints_nan(data, capsys):
    gt, _ = data
    assert _run(["consistency", "--gt", str(gt), "--pairs", "0", "--quiet"]) == 0
    assert "nan" in capsys.readouterr().out


def test_errors(data, tmp_path):
    gt, img = data
    with pytest.raises(InputError, match="--seg-dir"):
        _run(["granularity", "--gt", str(gt), "--segmenter", "folder", "--quiet"])
    with pytest.raises(InputError, match="--images"):
        _run(["granularity", "--gt", str(gt), "--segmenter", "kmeans", "--quiet"])
    with pytest.raises(InputError, match=str(tmp_path)):
        _run(["consistency", "--gt", str(tmp_path), "--quiet"])
    with pytest.raises(InputError, match="not found"):
        _run(["granularity", "--gt", str(gt), "--segmenter", "folder", "--seg-dir",
              str(tmp_path / "absent"), "--quiet"])
