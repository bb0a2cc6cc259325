"""Semantic-boundary inputs a user gets wrong (QA round of 2026-12-07): each case gave a
result for the wrong images, a wrong split in the record, or an error pointing at an
option this command does not have."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from PIL import Image
from test_semantic_boundary import _write_city, _write_sbd

from segbench.cli import main
from segbench.io import write_label_map


@pytest.fixture(scope="module")
def sbd(tmp_path_factory):
    root = tmp_path_factory.mktemp("sbd")
    _write_sbd(root)
    return root


def _run(capsys, *args):
    code = main(["semantic-boundary", *map(str, args), "--quiet"])
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_error(code, err):
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1, err


def test_a_split_folder_and_another_split_are_refused(tmp_path, capsys):
    _write_city(tmp_path)  # gtFine/val/frankfurt/...
    code, _, err = _run(
        capsys, "--gt", tmp_path / "gtFine" / "val", "--split", "test",
        "--pred", tmp_path / "none",
    )
    _one_line_error(code, err)
    assert "'val' split's folder but --split is 'test'" in err


def test_the_cls_folder_with_a_split_that_has_no_list_is_refused(sbd, capsys):
    code, _, err = _run(
        capsys, "--gt", sbd / "cls", "--split", "test", "--pred", sbd / "npy"
    )
    _one_line_error(code, err)
    assert "test.txt" in err and "no list of the 'test' split" in err


def test_a_stray_subfolder_does_not_change_the_prediction_layout(sbd, tmp_path, capsys):
    pred = tmp_path / "png"
    shutil.copytree(sbd / "png", pred)
    (pred / "class_001" / ".ipynb_checkpoints").mkdir()
    code, out, err = _run(
        capsys, "--gt", sbd, "--split", "val", "--pred", pred / "class_001",
        "--out", tmp_path / "run", "--json",
    )
    assert code == 0, err
    assert json.loads(out)["metrics"]["MF_ODS"] > 0.5


def test_a_class_folder_beyond_the_ground_truths_classes_is_refused(sbd, tmp_path, capsys):
    pred = tmp_path / "png"
    shutil.copytree(sbd / "png", pred)
    shutil.copytree(pred / "class_020", pred / "class_021")
    code, _, err = _run(
        capsys, "--gt", sbd, "--split", "val", "--pred", pred / "class_001"
    )
    _one_line_error(code, err)
    assert "class_021" in err and "beyond the ground truth's 20 classes" in err


def test_cityscapes_label_ids_above_33_are_refused(tmp_path):
    labels, _ = _write_city(tmp_path)
    path = next((tmp_path / "gtFine" / "val").glob("*/*_labelIds.png"))
    labels = labels.copy()
    labels[4, 5] = 255  # what a trainIds map holds where labelIds are read
    write_label_map(path, labels)
    from segbench.errors import InputError
    from segbench.semantic_boundary import GroundTruth, open_cityscapes

    src = open_cityscapes(tmp_path, "val")["frankfurt_000000_000001"].annotations[0]
    with pytest.raises(InputError) as got:
        GroundTruth(src, gt_edges="raw")
    msg = str(got.value)
    assert str(path) in msg and "label 255 at row 4, column 5" in msg and "trainIds" in msg


def test_sbd_class_labels_above_20_are_refused(tmp_path, capsys):
    import scipy.io

    _write_sbd(tmp_path, n=1)
    mat = next((tmp_path / "cls").glob("*.mat"))
    gt = scipy.io.loadmat(mat, squeeze_me=False)["GTcls"][0, 0]
    seg = np.array(gt["Segmentation"])
    seg[1, 2] = 40
    scipy.io.savemat(
        mat, {"GTcls": {"Segmentation": seg, "Boundaries": gt["Boundaries"]}}
    )
    code, _, err = _run(
        capsys, "--gt", tmp_path, "--split", "val", "--pred", tmp_path / "npy"
    )
    _one_line_error(code, err)
    assert "GTcls.Segmentation holds label 40 at row 1, column 2" in err


def test_grey_png_ground_truth_names_this_commands_layouts(tmp_path, capsys):
    gt = tmp_path / "gt"
    gt.mkdir()
    Image.fromarray(np.zeros((8, 8), np.uint8)).save(gt / "a.png")
    code, _, err = _run(capsys, "--gt", gt, "--pred", tmp_path, "--n-classes", "3")
    _one_line_error(code, err)
    assert "a L image" in err and "SBD's dataset folder" in err
    assert "--gt-format" not in err


def test_an_empty_ground_truth_folder_names_this_commands_layouts(tmp_path, capsys):
    (tmp_path / "gt").mkdir()
    code, _, err = _run(capsys, "--gt", tmp_path / "gt", "--pred", tmp_path)
    _one_line_error(code, err)
    assert "no semantic-boundary ground truth here" in err and "BSDS" not in err


def test_a_city_folder_reads_its_label_maps_only(tmp_path):
    from segbench.semantic_boundary._family import _open_ground_truth

    _write_city(tmp_path)
    city = tmp_path / "gtFine" / "val" / "frankfurt"
    Image.fromarray(np.zeros((40, 48, 3), np.uint8)).save(
        city / "frankfurt_000000_000001_gtFine_color.png"
    )
    ds = _open_ground_truth(city, None)
    assert ds.ids() == ["frankfurt_000000_000001"]
