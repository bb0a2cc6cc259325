"""Every benchmark command reads every ground-truth layout, and runs on a Dask cluster
with the same bytes as one local worker."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import DATA, require
from segbench.cli import main
from segbench.datasets import BSDS300, open_ground_truth
from segbench.io import read_ground_truth
from segbench.datasets import write_ground_truth

SEG_TREE = DATA / "bsds300-seg-subset" / "human" / "color"
VAL_MAT = DATA / "bsds500" / "groundTruth" / "val"
VAL_UCM = DATA / "bsds500-gpb-owt-ucm" / "val"


def official_files(out: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(out.glob("*.txt"))}


@pytest.fixture(scope="module")
def same_annotators(tmp_path_factory):
    """The .mat ground truth of the tree's images, holding exactly the annotators the
    tree has, in its order (found by equal label maps: ``.seg`` = Segmentation - 1)."""
    require(SEG_TREE)
    require(VAL_MAT)
    tree = BSDS300.from_subject_folders(SEG_TREE)
    out = tmp_path_factory.mktemp("mat_of_tree")
    for item in tree:
        stored = read_ground_truth(VAL_MAT / f"{item.iid}.mat")
        chosen = []
        for ann in item.annotations:
            hits = [h for h in stored if np.array_equal(h.segmentation, ann.segmentation)]
            assert len(hits) >= 1, f"{ann.source} is no annotator of {item.iid}.mat"
            chosen.append(hits[0])
        write_ground_truth(out / f"{item.iid}.mat", [h.segmentation for h in chosen],
                           boundaries=[h.boundaries for h in chosen])
    return tree, out


def test_open_ground_truth_layouts(tmp_path):
    require(SEG_TREE)
    tree = open_ground_truth(SEG_TREE)
    assert tree.name == "BSDS300" and len(tree) == 11
    assert sum(len(it.annotations) for it in tree) == 61
    assert all(a.gray is False and a.user > 1000 for it in tree for a in it.annotations)
    assert len(open_ground_truth(SEG_TREE.parent)) == 11           # the human folder
    with pytest.raises(Exception, match="gray"):
        open_ground_truth(SEG_TREE.parent, presentation="gray")
    root = require(DATA / "bsds500")
    with pytest.raises(Exception, match="--split"):
        open_ground_truth(root)
    assert len(open_ground_truth(root, split="val")) == 100
    assert len(open_ground_truth(VAL_MAT)) == 100


def test_seg_tree_counts_equal_mat_counts(same_annotators, tmp_path):
    """boundary, region and human on the .seg tree = on the same annotators' .mat."""
    require(VAL_UCM)
    tree, mat = same_annotators
    for gt, out in ((SEG_TREE, tmp_path / "seg"), (mat, tmp_path / "mat")):
        assert main(["all", "--gt", str(gt), "--pred", str(VAL_UCM), "--out", str(out),
                     "--quiet", "--no-plot", "--nthresh", "25"]) == 0
        assert main(["human", "--gt", str(gt), "--out", str(out / "human"),
                     "--quiet"]) == 0
    seg_files, mat_files = official_files(tmp_path / "seg"), official_files(tmp_path / "mat")
    assert len(seg_files) == 11 * 4 + 8
    assert seg_files == mat_files
    for name in ("per_item_human_boundary.csv", "per_item_human_region.csv"):
        assert (tmp_path / "seg" / "human" / name).read_text() == \
            (tmp_path / "mat" / "human" / name).read_text()


def test_seg_tree_consistency_equals_mat(same_annotators, tmp_path):
    """segbench consistency on the .seg tree = on the same annotators' .mat files."""
    tree, mat = same_annotators
    for gt, out in ((SEG_TREE, tmp_path / "seg"), (mat, tmp_path / "mat")):
        assert main(["consistency", "--gt", str(gt), "--pairs", "20", "--out", str(out),
                     "--quiet", "--no-plot"]) == 0
    seg = (tmp_path / "seg" / "consistency_pairs.csv").read_text()
    assert seg == (tmp_path / "mat" / "consistency_pairs.csv").read_text()
    assert len(seg.splitlines()) > 1 + 11


def test_dask_scheduler_is_byte_identical(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    from segbench.algorithms.edges import gradient_magnitude
    from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
    from segbench.io import write_segs, write_soft_map
    items = make_synthetic_dataset(5, shape=(90, 120), n_annotators=3, seed=11)
    root = write_synthetic_dataset(tmp_path / "ds", items)
    gt = root / "groundTruth" / "test"
    soft, segs = tmp_path / "soft", tmp_path / "segs"
    for it in items:
        g = gradient_magnitude(it.image)
        write_soft_map(soft / f"{it.iid}.png", g)
        write_segs(segs / f"{it.iid}.mat", [(g < t).astype(np.int32) + 1
                                            for t in (0.05, 0.2)])
    runs = (("boundary", soft), ("region", segs), ("all", segs))
    for cmd, pred in runs:
        assert main([cmd, "--gt", str(gt), "--pred", str(pred), "--out",
                     str(tmp_path / f"{cmd}1"), "--quiet", "--no-plot"
                     if cmd != "region" else "--quiet"]) == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        for cmd, pred in runs:
            assert main([cmd, "--gt", str(gt), "--pred", str(pred), "--out",
                         str(tmp_path / f"{cmd}d"), "--quiet", "--scheduler",
                         cluster.scheduler_address, "--no-plot"
                         if cmd != "region" else "--quiet"]) == 0
    for cmd, _ in runs:
        a, b = official_files(tmp_path / f"{cmd}1"), official_files(tmp_path / f"{cmd}d")
        assert a == b and len(a) >= 5 * 1 + 3
