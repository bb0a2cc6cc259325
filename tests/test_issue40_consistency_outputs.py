"""Issue 40, item 19 (part): a consistency run over several ``--gt`` folders records
every one of them, and Figure 9 keeps its title inside the picture at 10 images."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from segbench.cli import main
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """``segbench consistency --figures`` on 10 images from two folders (5 val, 5 test),
    3 annotators each (Figure 9 draws images with at least 3)."""
    root = tmp_path_factory.mktemp("two-folders")
    items = make_synthetic_dataset(10, shape=(40, 56), n_annotators=3, seed=4)
    write_synthetic_dataset(root, items[:5], split="val")
    write_synthetic_dataset(root, items[5:], split="test")
    gts = [str(root / "groundTruth" / s) for s in ("val", "test")]
    out = root / "out"
    argv = ["consistency", "--gt", *gts, "--images", str(root / "images" / "val"),
            str(root / "images" / "test"), "--out", str(out), "--pairs", "3",
            "--figures", "--figure-images", "0", "--segmenter", "kmeans", "--quiet"]
    assert main(argv) == 0
    return out, gts


def test_provenance_names_every_gt_folder(run):
    out, gts = run
    for family in ("consistency", "consistency_matrix", "granularity"):
        data = json.loads((out / f"result_{family}.json").read_text())
        assert data["provenance"]["params"]["gt_dir"] == gts, family
    manifest = json.loads((out / "manifest.json").read_text())
    for family in ("consistency", "consistency_matrix", "granularity"):
        assert manifest["runs"][family]["gt_dir"] == gts, family


def test_one_folder_is_still_recorded_as_one_path(tmp_path):
    items = make_synthetic_dataset(3, shape=(40, 56), n_annotators=3, seed=5)
    write_synthetic_dataset(tmp_path, items, split="val")
    gt = str(tmp_path / "groundTruth" / "val")
    assert main(["consistency", "--gt", gt, "--out", str(tmp_path / "o"), "--pairs", "1",
                 "--no-plot", "--quiet"]) == 0
    data = json.loads((tmp_path / "o" / "result_consistency.json").read_text())
    assert data["provenance"]["params"]["gt_dir"] == gt


@pytest.mark.parametrize("name", ["fig9_gce_boxplot.png", "fig7_ncuts.png", "fig5_gce.png",
                                  "fig5_lce.png", "granularity.png", "consistency_hist.png"])
def test_no_text_is_cut_at_the_edges_of_a_figure(run, name):
    """Clipped text reaches the picture's edge: its outermost rows and columns hold ink
    (Figure 9's one-line title at 10 images ran past both sides of its 6-inch figure)."""
    out, _ = run
    grey = np.asarray(Image.open(out / name).convert("L"))
    if name == "fig9_gce_boxplot.png":
        assert grey.shape[1] <= 700          # the narrowest figure, where it was cut
    edges = {"left": grey[:, :2], "right": grey[:, -2:], "top": grey[:2], "bottom": grey[-2:]}
    inked = {side: int((px < 200).sum()) for side, px in edges.items()}
    assert not any(inked.values()), f"{name}: text cut at the edge {inked}"
