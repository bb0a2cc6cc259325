"""The protocol preset and strong boundaries as the boundary and human commands run them:
every preset value recorded and overridable, grey and colour scored apart, smaller soft
maps upsampled only under bsds300, per-subject human scores, --min-agreement equal to
scoring the strong maps directly."""

from __future__ import annotations

import csv
import dataclasses
import json

import numpy as np
import pytest

from segbench import evaluate
from segbench.algorithms.edges import gradient_magnitude
from segbench.boundary import (agreement_levels, evaluate_image, human_counts,
                               strong_boundaries, subject_counts, summarize)
from segbench.cli import main
from segbench.datasets import open_ground_truth
from segbench.datasets.synthetic import make_synthetic_dataset
from segbench.errors import InputError
from segbench.io import SegFile, write_seg, write_soft_map


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """A BSDS300 tree of 4 images: 3 colour and 2 grey subjects per image, and soft
    maps at full and at half size."""
    root = tmp_path_factory.mktemp("b300")
    items = [dataclasses.replace(item, iid=str(10001 + n)) for n, item in
             enumerate(make_synthetic_dataset(4, shape=(60, 80), n_annotators=5, seed=21))]
    for item in items:
        for k, seg in enumerate(item.segmentations):
            gray = k >= 3
            uid = 2000 + k if gray else 1000 + k
            d = root / "human" / ("gray" if gray else "color") / str(uid)
            d.mkdir(parents=True, exist_ok=True)
            write_seg(d / f"{item.iid}.seg",
                      SegFile(np.asarray(seg) - np.min(seg), image=int(item.iid),
                              user=uid, gray=gray))
    full, half = root / "full", root / "half"
    full.mkdir()
    half.mkdir()
    for item in items:
        g = gradient_magnitude(item.image)
        write_soft_map(full / f"{item.iid}.png", g)
        write_soft_map(half / f"{item.iid}.png", g[::2, ::2])
    return root, items


def test_preset_values_are_recorded_and_overridable(tree):
    root, _ = tree
    kw = dict(presentation="color", progress=False, plot=False)
    res = evaluate("boundary", root / "human" / "color", root / "full",
                   protocol="bsds300", **kw)
    params = res.provenance["params"]
    assert {k: params[k] for k in ("protocol", "nthresh", "thin", "thin_gt", "upsample",
                                   "max_dist", "alpha")} == {
        "protocol": "bsds300", "nthresh": 30, "thin": True, "thin_gt": True,
        "upsample": "nearest", "max_dist": 0.0075, "alpha": 0.5}
    assert len(res.curves["thresholds"]) == 30
    over = evaluate("boundary", root / "human" / "color", root / "full",
                    protocol="bsds300", nthresh=12, **kw)
    assert over.provenance["params"]["nthresh"] == 12 and len(over.curves["f"]) == 12
    with pytest.raises(InputError, match="protocol"):
        evaluate("region", root / "human" / "color", root / "full", protocol="bsds300",
                 progress=False)
    with pytest.raises(InputError):
        evaluate("boundary", root / "human" / "color", root / "full", protocol="x", **kw)


def test_grey_and_colour_are_scored_apart(tree):
    root, items = tree
    scores = {}
    for pres in ("color", "gray"):
        res = evaluate("boundary", root / "human", root / "full", presentation=pres,
                       protocol="bsds300", progress=False, plot=False)
        ds = open_ground_truth(root / "human", presentation=pres)
        counts = []
        for item in items:
            anns = ds[item.iid].ground_truth()
            assert all(a.gray == (pres == "gray") for a in anns)
            assert len(anns) == (3 if pres == "color" else 2)
            counts.append(evaluate_image(gradient_magnitude(item.image), anns, nthresh=30,
                                         thin_gt=True))
        want = summarize(counts)
        assert res.metrics["ODS"] == pytest.approx(want.ods[3], abs=1e-12)
        scores[pres] = res.metrics["ODS"]
    assert scores["color"] != scores["gray"]


def test_smaller_soft_maps_upsampled_only_under_bsds300(tree):
    root, items = tree
    gt = root / "human" / "color"
    with pytest.raises(InputError, match="30x40"):
        evaluate("boundary", gt, root / "half", progress=False, plot=False)
    res = evaluate("boundary", gt, root / "half", protocol="bsds300", progress=False,
                   plot=False)
    ds = open_ground_truth(gt)
    counts = []
    for item in items:   # imresize 'nearest' by 2 repeats each pixel twice each way
        pb = np.round(gradient_magnitude(item.image)[::2, ::2] * 255) / 255
        big = np.repeat(np.repeat(pb, 2, 0), 2, 1)
        counts.append(evaluate_image(big, ds[item.iid].ground_truth(), nthresh=30,
                                     thin_gt=True))
    assert res.metrics["ODS"] == pytest.approx(summarize(counts).ods[3], abs=1e-12)


def test_human_per_subject_and_lone_subjects(tree, tmp_path):
    root, items = tree
    out = tmp_path / "human"
    assert main(["human", "--gt", str(root / "human"), "--presentation", "gray",
                 "--protocol", "bsds300", "--no-region", "--out", str(out),
                 "--quiet"]) == 0
    res = json.loads((out / "result_human_boundary.json").read_text())
    assert res["provenance"]["params"]["lone"] == "count"
    rows = list(csv.DictReader((out / "per_subject.csv").open()))
    assert [int(r["subject"]) for r in rows] == [2003, 2004]
    ds = open_ground_truth(root / "human", presentation="gray")
    pooled = {2003: np.zeros(4, np.int64), 2004: np.zeros(4, np.int64)}
    for item in items:
        rec = subject_counts(ds[item.iid].ground_truth())
        for u, c in zip(rec.users, rec.counts):
            pooled[u] += c
    for r in rows:
        assert [int(r[k]) for k in ("cnt_r", "sum_r", "cnt_p", "sum_p")] == \
            pooled[int(r["subject"])].tolist()
        assert int(r["n_images"]) == len(items)
    total = sum(pooled.values())
    assert res["metrics"]["counts"] == total.tolist()
    # a lone subject: BSDS300 counts its pixels against no one, BSR leaves it out
    lone = tmp_path / "lone" / "human" / "gray" / "2003"
    lone.mkdir(parents=True)
    src = next((root / "human" / "gray" / "2003").glob("*.seg"))
    (lone / src.name).write_bytes(src.read_bytes())
    h300 = evaluate("human_boundary", tmp_path / "lone" / "human", presentation="gray",
                    protocol="bsds300", progress=False).metrics
    bsr = evaluate("human_boundary", tmp_path / "lone" / "human", presentation="gray",
                   progress=False).metrics
    assert h300["counts"][:3] == [0, 0, 0] and h300["counts"][3] > 0
    assert bsr["counts"] == [0, 0, 0, 0]


def test_min_agreement_scores_the_strong_maps(tree):
    root, items = tree
    gt = root / "human" / "color"
    kw = dict(progress=False, plot=False)
    base = evaluate("boundary", gt, root / "full", **kw)
    one = evaluate("boundary", gt, root / "full", min_agreement=1, **kw)
    assert one.metrics == base.metrics            # K = 1 keeps every pixel
    ds = open_ground_truth(gt)
    for k in (2, "all", 0.5):
        res = evaluate("boundary", gt, root / "full", min_agreement=k, **kw)
        assert res.provenance["params"]["min_agreement"] == k
        counts = []
        for item in items:
            anns = ds[item.iid].ground_truth()
            strong = strong_boundaries(anns, agreement_levels(anns), k)
            counts.append(evaluate_image(gradient_magnitude(item.image), strong))
        want = summarize(counts)
        assert res.metrics["ODS"] == pytest.approx(want.ods[3], abs=1e-12)
        assert sum(c.sum_r[0] for c in counts) < sum(
            human_counts(ds[i.iid].ground_truth())[1] for i in items) or k == 1
    with pytest.raises(InputError):
        evaluate("boundary", gt, root / "full", min_agreement=0, **kw)


def test_cli_min_agreement_forms(tree, capsys):
    root, _ = tree
    args = ["boundary", "--gt", str(root / "human" / "color"), "--pred",
            str(root / "full"), "--quiet", "--no-plot", "--json"]
    assert main([*args, "--min-agreement", "all"]) == 0
    assert json.loads(capsys.readouterr().out)["provenance"]["params"][
        "min_agreement"] == "all"
    assert main([*args, "--min-agreement", "two"]) == 2
    assert "--min-agreement" in capsys.readouterr().err
