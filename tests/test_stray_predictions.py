"""Prediction files that name no image of the ground truth (a typo, a stray export,
another split's maps) are not scored, and the run says so, naming them; files of
images left out by --ids are not stray."""

from __future__ import annotations

import logging

import numpy as np
from PIL import Image

from segbench.cli import main
from segbench.datasets import pair_folders

EDGES = np.zeros((40, 48), np.uint8)
EDGES[12, 4:44] = 255
EDGES[4:36, 24] = 255


def _folders(tmp_path, n=3):
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    for i in range(n):
        Image.fromarray(EDGES).save(gt / f"im{i}.png")
        Image.fromarray(EDGES // 2).save(pred / f"im{i}.png")
    return gt, pred


def test_boundary_names_prediction_files_of_no_image(tmp_path, capsys):
    gt, pred = _folders(tmp_path)
    Image.fromarray(EDGES).save(pred / "im 1.png")
    Image.fromarray(EDGES).save(pred / "im9.png")
    args = ["boundary", "--gt", str(gt), "--pred", str(pred), "--quiet", "--no-plot",
            "--gt-format", "edges"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert (f"segbench: {pred}: 2 prediction files name no image of the ground truth "
            "and are not scored: im 1.png, im9.png") in err


def test_files_of_images_left_out_by_ids_are_not_stray(tmp_path, capsys):
    gt, pred = _folders(tmp_path)
    args = ["boundary", "--gt", str(gt), "--pred", str(pred), "--quiet", "--no-plot",
            "--gt-format", "edges", "--ids", "im0,im2"]
    assert main(args) == 0
    assert "not scored" not in capsys.readouterr().err
    Image.fromarray(EDGES).save(pred / "extra.png")
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "1 prediction file names no image of the ground truth and is not scored: " \
           "extra.png" in err


def test_semantic_names_prediction_files_of_no_image(tmp_path, capsys):
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    labels = (np.arange(40 * 48).reshape(40, 48) % 3).astype(np.uint8)
    for name in ("a", "b"):
        Image.fromarray(labels).save(gt / f"{name}.png")
        Image.fromarray(labels).save(pred / f"{name}.png")
    Image.fromarray(labels).save(pred / "c.png")
    args = ["semantic", "--gt", str(gt), "--pred", str(pred), "--classes", "3",
            "--quiet", "--no-boundary-iou"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "1 prediction file names no image of the ground truth and is not scored: " \
           "c.png" in err
    (pred / "c.png").unlink()
    assert main(args) == 0
    assert "not scored" not in capsys.readouterr().err
    # a failing run says its error alone, as the engine's benchmarks do
    Image.fromarray(labels).save(pred / "c.png")
    Image.fromarray(labels + 7).save(pred / "b.png")  # label 9 of 3 classes
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "b.png" in err and "not scored" not in err


def test_pair_folders_leaves_them_out_with_a_note(tmp_path, caplog):
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    gt.mkdir()
    pred.mkdir()
    for name in ("a", "b"):
        Image.fromarray(EDGES).save(gt / f"{name}.png")
        Image.fromarray(EDGES).save(pred / f"{name}.png")
    Image.fromarray(EDGES).save(pred / "a_old.png")
    with caplog.at_level(logging.INFO, logger="segbench"):
        pairs = pair_folders(gt, pred)
    assert [k for k, _, _ in pairs] == ["a", "b"]
    assert "1 prediction file names no image of the ground truth and is not scored: " \
           "a_old.png" in caplog.text
