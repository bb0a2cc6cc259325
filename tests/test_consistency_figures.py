"""Figures 5, 7 and 9 of the 2001 paper (``segbench consistency --figures``)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from segbench.runners._consistency import run_consistency
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.errors import InputError
from segbench.region.consistency import pair_errors
from segbench.region.consistency_figures import (FIGURE_NAMES, matrix_images,
                                                 matrix_report, pick_examples)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Five images of one shape and two of another, three annotators each."""
    root = tmp_path_factory.mktemp("figs")
    items = make_synthetic_dataset(5, shape=(36, 48), n_annotators=3, seed=4)
    items += make_synthetic_dataset(2, shape=(48, 36), n_annotators=3, seed=5)
    items = [replace(it, iid=f"{n + 1:03d}") for n, it in enumerate(items)]
    write_synthetic_dataset(root, items, split="val")
    return root / "groundTruth" / "val", root / "images" / "val"


@pytest.fixture(scope="module")
def run(data, tmp_path_factory):
    gt, img = data
    out = tmp_path_factory.mktemp("run")
    run_consistency(gt, out, pairs=3, figures=True, figure_images=6, images=img,
                    progress=False)
    return out


def _block_diagonal(owner: np.ndarray) -> bool:
    """Each image's segmentations are one contiguous run (so its pairs are one block
    on the diagonal)."""
    change = np.flatnonzero(np.diff(owner)) + 1
    runs = np.split(owner, change)
    return len({int(r[0]) for r in runs}) == len(runs)


def test_figures_are_written_with_the_papers_names(run):
    names = [*FIGURE_NAMES["fig5"], FIGURE_NAMES["fig7"], FIGURE_NAMES["fig9"]]
    assert names == ["fig5_gce.png", "fig5_lce.png", "fig7_ncuts.png",
                     "fig9_gce_boxplot.png"]
    for n in names:
        assert (run / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (run / "result_consistency_matrix.json").is_file()
    assert (run / "result_granularity.json").is_file()
    assert sorted(p.name for p in (run / "ncut-2001_segmentations").iterdir())


def test_fig5_matrices_symmetric_sorted_by_image_zero_diagonal(run, data):
    z = np.load(run / "fig5_errors.npz")
    gce, lce, owner, ids = z["gce"], z["lce"], z["owner"], list(z["ids"])
    assert len(ids) == 6 and len(owner) == 18 and gce.shape == (18, 18)
    for m in (gce, lce):
        assert np.array_equal(np.isnan(m), np.isnan(m.T))
        assert np.allclose(np.nan_to_num(m), np.nan_to_num(m.T), atol=0)
        assert (np.diag(m) == 0).all()
        assert np.isfinite(m[owner[:, None] == owner[None, :]]).all()   # blocks complete
    assert _block_diagonal(owner)
    assert (np.nan_to_num(lce) <= np.nan_to_num(gce) + 1e-12).all()
    # the images are grouped by shape (largest group first), by id within a group
    meta = json.loads((run / "result_consistency_matrix.json").read_text())
    shapes = [tuple(r["shape"]) for r in meta["per_item"]]
    assert [r["id"] for r in meta["per_item"]] == ids
    first = [s for s in shapes if s == shapes[0]]
    assert shapes[:len(first)] == first and ids[:len(first)] == sorted(ids[:len(first)])
    # pairs of images of different shape are not compared, all others are
    same_shape = np.array([[shapes[a] == shapes[b] for b in owner] for a in owner])
    assert np.array_equal(np.isfinite(gce), same_shape)
    assert meta["metrics"]["n_pairs"] == int(np.triu(same_shape, 1).sum())


def test_fig5_entries_are_the_pair_errors(run, data):
    from segbench.datasets import open_ground_truth
    z = np.load(run / "fig5_errors.npz")
    ds = open_ground_truth(data[0])
    ids, owner, ann = list(z["ids"]), z["owner"], z["annotator"] - 1
    for r, c in [(0, 1), (0, 4), (2, 7), (5, 11)]:
        a = ds[ids[owner[r]]].ground_truth()[ann[r]].segmentation
        b = ds[ids[owner[c]]].ground_truth()[ann[c]].segmentation
        if a.shape == b.shape:
            g, e = pair_errors(a, b)
            assert z["gce"][r, c] == pytest.approx(g, abs=1e-12)
            assert z["lce"][r, c] == pytest.approx(e, abs=1e-12)


def test_matrix_report_orders_blocks_and_mirrors():
    same = [np.array([[0, 1, 0.2, 0.1]]), np.array([[0, 1, 0.3, 0.2], [0, 2, 0.4, 0.1],
                                                    [1, 2, 0.5, 0.3]])]
    cross = {(0, 1): np.array([[i, j, 0.6 + 0.01 * i, 0.5] for i in range(2)
                               for j in range(3)])}
    rep = matrix_report(["b", "a"], [(4, 5), (4, 5)], [[2, 3], [1, 1, 1]], same, cross,
                        n_images_total=9, seed=0)
    assert rep.ids == ["a", "b"] and rep.owner.tolist() == [0, 0, 0, 1, 1]
    assert rep.segments.tolist() == [1, 1, 1, 2, 3]
    assert np.array_equal(rep.gce, rep.gce.T) and (np.diag(rep.gce) == 0).all()
    assert rep.gce[0, 1] == 0.3 and rep.gce[3, 4] == 0.2 and rep.gce[3, 0] == 0.6
    assert rep.metrics()["n_pairs"] == 10


def test_matrix_images_seeded_subset():
    ids = [f"{n:03d}" for n in range(30, 0, -1)]
    a = matrix_images(ids, 5, seed=1)
    assert a == sorted(a) and len(set(a)) == 5 and a == matrix_images(ids, 5, seed=1)
    assert a != matrix_images(ids, 5, seed=2)
    assert matrix_images(ids, 0) == sorted(ids) == matrix_images(ids, 99)


def test_pick_examples_spread_over_the_commonest_shape():
    scores = {"a": 0.5, "b": 0.1, "c": 0.3, "d": 0.9, "e": 0.2, "f": 0.0}
    shapes = {i: (3, 4) for i in "abcde"} | {"f": (4, 3)}
    assert pick_examples(scores, shapes, 4) == ["b", "e", "a", "d"]   # ranks 0, 1, 3, 4
    assert pick_examples(scores, shapes, 9) == ["b", "e", "c", "a", "d"]


def test_fig9_from_the_granularity_records(run):
    res = json.loads((run / "result_granularity.json").read_text())
    assert res["metrics"]["n_images"] == 6 and res["metrics"]["segmenter"] == "ncut-2001"


def test_figures_need_out_and_a_known_segmenter(data):
    gt, img = data
    with pytest.raises(InputError, match="--out"):
        run_consistency(gt, None, figures=True, images=img, progress=False)
    with pytest.raises(InputError, match="unknown segmenter"):
        run_consistency(gt, "unused", figures=True, segmenter="watershed", images=img,
                        progress=False)


def test_cli_options_and_no_matplotlib_without_figures(data, tmp_path):
    from test_consistency_cli import _parser
    a = _parser().parse_args(["consistency", "--gt", "g"])
    assert (a.figures, a.segmenter, a.figure_images, a.images) == (False, "ncut-2001", 50, None)
    a = _parser().parse_args(["consistency", "--gt", "g", "--figures", "--segmenter",
                              "ncut-superpixel", "--figure-images", "0", "--images", "i"])
    assert (a.figures, a.segmenter, a.figure_images, a.images) == \
        (True, "ncut-superpixel", 0, ["i"])
    gt, _ = data
    code = ("import sys\n"
            "from segbench.cli import main\n"
            "for argv in ([\"consistency\", \"--help\"],\n"
            f"             [\"consistency\", \"--gt\", {str(gt)!r}, \"--quiet\"],\n"
            f"             [\"consistency\", \"--gt\", {str(gt)!r}, \"--quiet\",\n"
            f"              \"--out\", {str(tmp_path / 'o')!r}, \"--no-plot\"]):\n"
            "    try:\n"
            "        main(argv)\n"
            "    except SystemExit:\n"
            "        pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
