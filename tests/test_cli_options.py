"""The options users reach for (issue 28 item 17): ``segbench all`` takes the boundary
protocol options, ``segbench submit`` takes ``--presentation``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import FIXTURES, require
from segbench.cli import main

BSR = FIXTURES / "bsr-official"


def official(out: Path, prefix: str) -> dict:
    return {p.name: p.read_bytes() for p in sorted(out.glob(f"{prefix}*.txt"))}


@pytest.mark.parametrize("options", [["--protocol", "bsds300"],
                                     ["--min-agreement", "2", "--nthresh", "5"]])
def test_all_takes_the_boundary_protocol_options(tmp_path, capsys, options):
    """``all`` writes the boundary files ``boundary`` writes with the same options, and
    the region files ``region`` writes at the same thresholds."""
    gt = require(BSR / "inputs" / "groundTruth")
    pred = BSR / "inputs" / "ucm2"
    common = ["--gt", str(gt), "--pred", str(pred), "--quiet", "--no-plot"]
    assert main(["all", *common, *options, "--out", str(tmp_path / "all")]) == 0
    assert main(["boundary", *common, *options, "--out", str(tmp_path / "b")]) == 0
    nthresh = "30" if "bsds300" in options else "5"
    assert main(["region", "--gt", str(gt), "--pred", str(pred), "--quiet",
                 "--nthresh", nthresh, "--out", str(tmp_path / "r")]) == 0
    assert official(tmp_path / "all", "eval_bdry") == official(tmp_path / "b", "eval_bdry")
    assert official(tmp_path / "all", "eval_bdry")
    for prefix in ("eval_cover", "eval_RI_VOI"):
        assert official(tmp_path / "all", prefix) == official(tmp_path / "r", prefix)
    params = json.loads((tmp_path / "all" / "result_boundary.json").read_text())["provenance"]
    b = json.loads((tmp_path / "b" / "result_boundary.json").read_text())["provenance"]
    assert params["params"] == b["params"]


def test_all_takes_nms_and_ci(tmp_path, capsys):
    gt = require(BSR / "inputs" / "groundTruth")
    common = ["--gt", str(gt), "--pred", str(BSR / "inputs" / "ucm2"), "--quiet",
              "--no-plot", "--nthresh", "5"]
    # --nms thins soft maps: on ucm2 hierarchies it is refused in one line
    assert main(["all", *common, "--nms"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--nms thins soft boundary maps" in err
    assert main(["all", *common, "--ci", "--resamples", "50", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert "ODS" in res["boundary"]["intervals"]
    assert "covering_ODS" in res["region"]["intervals"]


def _bsds300(root: Path):
    """A BSDS300 tree of 2 test images: colour segmentations by two subjects, grayscale
    ones by a third (other segmentations)."""
    from segbench.datasets.bsds import SyntheticDataset
    from segbench.io import SegFile, write_seg
    synth = SyntheticDataset(n_images=2, shape=(24, 32), n_annotators=3)
    (root / "images" / "test").mkdir(parents=True)
    for k, it in enumerate(synth.synthetic_items):
        iid = str(k + 1)
        Image.fromarray(it.image).save(root / "images" / "test" / f"{iid}.jpg")
        for u, seg in enumerate(it.segmentations):
            kind = "gray" if u == 2 else "color"
            d = root / "human" / kind / str(1100 + u)
            d.mkdir(parents=True, exist_ok=True)
            write_seg(d / f"{iid}.seg", SegFile(labels=seg - 1, user=1100 + u,
                                                gray=kind == "gray"))
    return synth


def test_submit_takes_presentation(tmp_path, capsys):
    from segbench.algorithms.edges import gradient_magnitude
    from segbench.io import write_soft_map
    root = tmp_path / "BSDS300"
    synth = _bsds300(root)
    sub = tmp_path / "sub"
    for k, it in enumerate(synth.synthetic_items):
        write_soft_map(sub / f"{k + 1}.png", gradient_magnitude(it.image))
    (sub / "name.txt").write_text("grey gm\n")
    results = {}
    for pres in ("gray", "color"):
        out = tmp_path / f"run-{pres}"
        assert main(["submit", str(sub), "--out", str(out), "--dataset", str(root),
                     "--presentation", pres, "--quiet"]) == 0
        meta = json.loads((out / "meta.json").read_text())
        assert meta["presentation"] == pres
        results[pres] = official(out, "eval_bdry")
        # the same files as the boundary benchmark against that presentation, under
        # the BSDS300 page's protocol (issue 40 item 16)
        assert main(["boundary", "--gt", str(root), "--split", "test", "--presentation",
                     pres, "--pred", str(sub), "--out", str(tmp_path / f"b-{pres}"),
                     "--preset", "bsds300", "--quiet", "--no-plot"]) == 0
        assert results[pres] == official(tmp_path / f"b-{pres}", "eval_bdry")
    assert results["gray"] != results["color"]
    capsys.readouterr()
    # the site ranks it with the greyscale runs
    from segbench.report._site_runs import load_run
    assert load_run(tmp_path / "run-gray").presentation == "grey"


def test_submit_presentation_needs_bsds300(tmp_path, capsys):
    from segbench.datasets.bsds import SyntheticDataset
    from segbench.datasets.synthetic import write_synthetic_dataset
    root = tmp_path / "bsds500"
    synth = SyntheticDataset(n_images=2, shape=(24, 32), n_annotators=2)
    write_synthetic_dataset(root, synth.synthetic_items, split="test")
    (tmp_path / "sub").mkdir()
    assert main(["submit", str(tmp_path / "sub"), "--out", str(tmp_path / "run"),
                 "--dataset", str(root), "--presentation", "gray", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--presentation applies to BSDS300" in err
    assert not (tmp_path / "run").exists()
