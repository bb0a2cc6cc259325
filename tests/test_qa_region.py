"""Region, superpixel and granularity runs as a user meets them (QA round of
2026-12-07, helper-46)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from segbench.cli import main
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """3 synthetic images (val): ground truth, photographs, grid superpixels."""
    root = tmp_path_factory.mktemp("qa_region")
    items = make_synthetic_dataset(3, shape=(48, 64), n_annotators=3, seed=4)
    write_synthetic_dataset(root, items, split="val")
    sp = root / "sp"
    sp.mkdir()
    rows, cols = np.mgrid[0:48, 0:64]
    grid = (rows // 8 * 8 + cols // 8).astype(np.uint16)
    for it in items:
        Image.fromarray(grid).save(sp / f"{it.iid}.png")
    return root / "groundTruth" / "val", root / "images" / "val", sp


@pytest.mark.parametrize("command", ["superpixel", "superpixel-sweep", "granularity"])
def test_out_inside_the_ground_truth_is_refused(data, tmp_path, capsys, command):
    """These runs take the ground truth as a Dataset: --out inside it was accepted, and
    the next run read the run folder as an image of the ground truth."""
    import shutil
    gt_src, img, sp = data
    gt = tmp_path / "gt"
    shutil.copytree(gt_src, gt)
    args = {
        "superpixel": ["--pred", str(sp)],
        "superpixel-sweep": ["--images", str(img), "--k", "20,30", "--max-images", "1"],
        "granularity": ["--images", str(img), "--segmenter", "kmeans", "--max-images",
                        "1", "--no-plot"],
    }[command]
    assert main([command, "--gt", str(gt), *args, "--out", str(gt / "run"),
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--out is inside the --gt folder" in err, err
    assert sorted(p.name for p in gt.iterdir()) == sorted(p.name for p in gt_src.iterdir())
