"""Annotator agreement (Hou et al. 2013): levels checked by hand and against independent
matchings, thresholds, strong boundaries, records, the command and real BSDS500 data."""

from __future__ import annotations

import argparse
import json
import math
from itertools import combinations

import numpy as np
import pytest
from PIL import Image
from scipy.optimize import linear_sum_assignment

from conftest import DATA, require
from segbench.runners._agreement import DEFAULT_MAX_DIST as API_MAX_DIST
from segbench.runners._agreement import run_agreement
from segbench.boundary import (AGREEMENT, DEFAULT_MAX_DIST, AgreementRecord,
                               agreement_histogram, agreement_levels, agreement_map,
                               agreement_threshold, human_counts, strong_boundaries)
from segbench.boundary._agreement import gray_agreement_map
from segbench.cli import main
from segbench.cli.agreement import add_parsers
from segbench.datasets import write_ground_truth
from segbench.errors import InputError

SHAPE = (20, 20)
#: Tolerance of 1.5 px on a 20x20 image: offsets of 0, 1 and sqrt(2) px are candidates.
MD15 = 1.5 / math.hypot(*SHAPE)


def _line(col, rows=(2, 18)):
    b = np.zeros(SHAPE, bool)
    b[rows[0]:rows[1], col] = True
    return b


def _abcd():
    """A: column 5 (16 px); B: column 6, 1 px from A; C: column 10, 4 px from both;
    D: the upper half of A (8 px)."""
    return [_line(5), _line(6), _line(10), _line(5, (2, 10))]


def test_levels_by_hand():
    a, b, c, d = _abcd()
    lv = agreement_levels([a, b, c, d], max_dist=MD15)
    # A-B match all 16 rows (straight, 1 px); A-D and B-D the 8 rows of D; C nothing
    exp_a = np.where(a, 2, 0)
    exp_a[2:10, 5] = 3
    exp_b = np.where(b, 2, 0)
    exp_b[2:10, 6] = 3
    assert [m.dtype for m in lv] == [np.uint8] * 4
    np.testing.assert_array_equal(lv[0], exp_a)
    np.testing.assert_array_equal(lv[1], exp_b)
    np.testing.assert_array_equal(lv[2], np.where(c, 1, 0))
    np.testing.assert_array_equal(lv[3], np.where(d, 3, 0))
    h = agreement_histogram(lv)
    np.testing.assert_array_equal(h, [16, 16, 24, 0])
    assert h.sum() == sum(int(m.sum()) for m in (a, b, c, d))
    # the highest level at each pixel
    amap = agreement_map(lv)
    assert amap[5, 5] == 3 and amap[12, 5] == 2 and amap[5, 10] == 1 and amap[0, 0] == 0


def test_tolerance_excludes_far_lines():
    """At the default tolerance a 20x20 image matches exact overlaps only (0.21 px)."""
    a, b, c, d = _abcd()
    lv = agreement_levels([a, b, c, d])
    np.testing.assert_array_equal(lv[1], np.where(b, 1, 0))
    np.testing.assert_array_equal(lv[3], np.where(d, 2, 0))
    np.testing.assert_array_equal(agreement_histogram(lv), [16 + 16 + 8, 16, 0, 0])


@pytest.mark.parametrize("seed", range(8))
def test_exact_overlaps_on_random_maps(seed):
    """Below 1 px of tolerance, agreement is 1 + the others drawing the same pixel."""
    rng = np.random.default_rng(seed)
    maps = [rng.random(SHAPE) < rng.uniform(0.05, 0.5) for _ in range(rng.integers(2, 7))]
    lv = agreement_levels(maps)
    total = np.sum(maps, axis=0)
    for m, got in zip(maps, lv):
        np.testing.assert_array_equal(got, np.where(m, total, 0))


def test_one_to_one_matching():
    """Two parallel lines 1 px either side of one line: only one pixel of the pair per
    row can be credited; the line in the middle is matched everywhere."""
    e = _line(5) | _line(7)
    f = _line(6)
    le, lf = agreement_levels([e, f], max_dist=MD15)
    assert np.count_nonzero(le == 2) == 16 and np.count_nonzero(le == 1) == 16
    np.testing.assert_array_equal(lf, np.where(f, 2, 0))


def test_unanimous_orphan_and_empty():
    a = _line(5)
    lv = agreement_levels([a, a, a])
    assert all((m == np.where(a, 3, 0)).all() for m in lv)
    np.testing.assert_array_equal(agreement_histogram(lv), [0, 0, 48])
    lv = agreement_levels([_line(1), _line(9), np.zeros(SHAPE, bool)], max_dist=MD15)
    np.testing.assert_array_equal(agreement_histogram(lv), [32, 0, 0])
    lv = agreement_levels([a])
    np.testing.assert_array_equal(agreement_histogram(lv), [16])


def _brute_matches(b1, b2, max_dist):
    """Size of the benchmark's optimal matching, by a dense assignment (scipy)."""
    radius = max_dist * math.hypot(*b1.shape)
    outlier = int(np.rint(100 * 100 * radius))
    p1, p2 = np.argwhere(b1), np.argwhere(b2)
    if len(p1) == 0 or len(p2) == 0:
        return 0
    d2 = ((p1[:, None, :] - p2[None, :, :]) ** 2).sum(-1).astype(float)
    cost = np.rint(np.sqrt(d2) * 100) - outlier
    cost[d2 > radius * radius] = 0
    r, c = linear_sum_assignment(cost)
    return int((cost[r, c] < 0).sum())


@pytest.mark.parametrize("seed", range(12))
def test_levels_sum_to_twice_the_pairwise_matches(seed):
    """Symmetric consistency: every matched pair credits one pixel on each side, so
    the levels above 1 add up to twice the matches of all pairs (checked against an
    independent solver), and every boundary pixel has exactly one level."""
    rng = np.random.default_rng(50 + seed)
    h, w = rng.integers(6, 24, 2)
    k = int(rng.integers(2, 6))
    maps = [rng.random((h, w)) < rng.uniform(0.05, 0.3) for _ in range(k)]
    max_dist = float(rng.uniform(0.02, 0.12))
    lv = agreement_levels(maps, max_dist=max_dist)
    hist = agreement_histogram(lv)
    assert hist.sum() == sum(int(m.sum()) for m in maps)
    for m, got in zip(maps, lv):
        assert ((got > 0) == m).all() and got.max(initial=0) <= k
    pairs = sum(_brute_matches(maps[a], maps[b], max_dist)
                for a, b in combinations(range(k), 2))
    assert int(((np.arange(1, k + 1) - 1) * hist).sum()) == 2 * pairs


def test_bad_inputs():
    with pytest.raises(InputError, match="no human boundary"):
        agreement_levels([])
    with pytest.raises(InputError, match="differ in shape"):
        agreement_levels([np.zeros((4, 4)), np.zeros((4, 5))])
    with pytest.raises(InputError, match="max_dist"):
        agreement_levels([np.zeros((4, 4))], max_dist=0)
    with pytest.raises(InputError, match="outside"):
        agreement_histogram([np.full((3, 3), 3), np.zeros((3, 3), int)])


def test_threshold_parsing():
    assert agreement_threshold(1, 5) == 1
    assert agreement_threshold(3, 5) == 3
    assert agreement_threshold(7, 5) == 7                  # no pixel of that image
    assert agreement_threshold(np.int64(2), 5) == 2
    assert agreement_threshold("all", 6) == 6
    assert agreement_threshold(" ALL ", 6) == 6
    assert agreement_threshold(1.0, 6) == 6                 # a fraction: everyone
    assert agreement_threshold(0.5, 5) == 3
    assert agreement_threshold(0.5, 6) == 3
    assert agreement_threshold(2 / 3, 6) == 4
    assert agreement_threshold(0.01, 9) == 1
    assert agreement_threshold(np.float32(0.5), 4) == 2
    assert agreement_threshold("2", 5) == 2
    assert agreement_threshold("0.5", 4) == 2
    for bad in (0, -1, 1.5, 0.0, float("nan"), float("inf"), True, "most", "", None,
                [2], "1.5", "0"):
        with pytest.raises(InputError, match="min_agreement"):
            agreement_threshold(bad, 5)
    for bad_k in (0, -2, 2.0, True):
        with pytest.raises(InputError, match="annotators"):
            agreement_threshold(2, bad_k)


def test_strong_boundaries():
    maps = _abcd()
    lv = agreement_levels(maps, max_dist=MD15)
    strong = strong_boundaries(maps, lv, 3)
    assert [int(s.sum()) for s in strong] == [8, 8, 0, 8]
    assert all(s.dtype == np.bool_ and not (s & ~m).any() for s, m in zip(strong, maps))
    kept = strong_boundaries(maps, lv, 1)
    assert all((s == m).all() for s, m in zip(kept, maps))
    assert [int(s.sum()) for s in strong_boundaries(maps, lv, 0.5)] == [16, 16, 0, 8]
    assert sum(int(s.sum()) for s in strong_boundaries(maps, lv, "all")) == 0
    assert sum(int(s.sum()) for s in strong_boundaries(maps, lv, 5)) == 0
    with pytest.raises(InputError, match="3 agreement level maps for 4"):
        strong_boundaries(maps, lv[:3], 2)
    with pytest.raises(InputError, match="do not match"):
        strong_boundaries(maps, [lv[1], lv[0], lv[2], lv[3]], 2)
    with pytest.raises(InputError, match="min_agreement"):
        strong_boundaries(maps, lv, 0)


def test_gray_map():
    g = gray_agreement_map(np.array([[0, 1, 2, 3, 4]]), 4)
    np.testing.assert_array_equal(g, [[0, 64, 128, 191, 255]])
    levels = np.arange(10)
    assert (np.rint(gray_agreement_map(levels[None], 9).astype(float) * 9 / 255)
            == levels).all()


def _record():
    return AgreementRecord.from_levels(agreement_levels(_abcd(), max_dist=MD15))


def test_record_round_trip():
    rec = _record()
    d = json.loads(json.dumps(AGREEMENT.to_json(rec)))
    back = AGREEMENT.from_json(d)
    np.testing.assert_array_equal(back.per_annotator, rec.per_annotator)
    np.testing.assert_array_equal(back.histogram, [16, 16, 24, 0])
    np.testing.assert_array_equal(back.level_map(), rec.level_map())
    assert back.shape == SHAPE and back.k == 4 and back.n_pixels == 56
    assert len(json.dumps(d)) < 1000


@pytest.mark.parametrize("edit", [
    lambda d: d.update(version=2),
    lambda d: d.pop("per_annotator"),
    lambda d: d.update(k=3),
    lambda d: d.update(k=True),
    lambda d: d["per_annotator"][0].__setitem__(0, -1),
    lambda d: d["per_annotator"][0].__setitem__(0, 1.5),
    lambda d: d["per_annotator"].pop(),
    lambda d: d.update(shape=[20]),
    lambda d: d.update(shape=[20, 0]),
    lambda d: d.update(shape=[20, 21]),
    lambda d: d["map"].update(encoding="raw"),
    lambda d: d["map"].update(data="not base64!"),
    lambda d: d["map"].update(data="AAAA"),
    lambda d: d["map"].update(data=3),
    lambda d: d["per_annotator"][2].__setitem__(3, 5),   # level 4 counted, map max 3
    lambda d: d["per_annotator"][2].__setitem__(0, 400),  # more pixels than the map
])
def test_record_rejects_bad_payloads(edit):
    d = json.loads(json.dumps(AGREEMENT.to_json(_record())))
    edit(d)
    with pytest.raises((KeyError, TypeError, ValueError)):
        AGREEMENT.from_json(d)


def test_record_rejects_bad_map():
    import base64
    import zlib
    d = AGREEMENT.to_json(_record())
    bad = np.zeros(SHAPE, np.uint8)
    bad[0, 0] = 9                                          # above K
    d["map"]["data"] = base64.b64encode(zlib.compress(bad.tobytes())).decode()
    with pytest.raises(ValueError):
        AGREEMENT.from_json(d)
    d["map"]["data"] = base64.b64encode(zlib.compress(b"\0" * 10 ** 6)).decode()
    with pytest.raises(ValueError, match="20x20"):
        AGREEMENT.from_json(d)
    with pytest.raises(ValueError):
        AGREEMENT.from_json([1, 2])


def test_family_summary_pools_by_own_k():
    r4 = _record()                                         # K = 4: [16, 16, 24, 0]
    r3 = AgreementRecord.from_levels(agreement_levels([_line(5)] * 3))   # [0, 0, 48]
    r1 = AgreementRecord.from_levels(agreement_levels([_line(5)]))       # not scored
    res = AGREEMENT.summarize(["a", "b", "c"], [r4, r3, r1],
                              {"max_dist": MD15, "unit": "pixel"}, {})
    m = res.metrics
    assert res.family == "agreement"
    assert m["n_boundary_pixels"] == 104 and m["n_images_scored"] == 2
    assert m["orphan_fraction"] == pytest.approx(16 / 104)
    assert m["unanimous_fraction"] == pytest.approx(48 / 104)   # level 3 of the K=3 image
    assert m["level_3"] == pytest.approx(72 / 104) and m["level_4"] == 0
    assert m["orphan_fraction_image_mean"] == pytest.approx((16 / 56 + 0) / 2)
    assert m["unanimous_fraction_image_mean"] == pytest.approx((0 + 1) / 2)
    assert m["mean_agreement"] == pytest.approx((16 / 4 + 32 / 4 + 72 / 4 + 48) / 104)
    rows = {r["id"]: r for r in res.per_item}
    assert rows["a"]["annotators"] == 4 and rows["a"]["level_2"] == pytest.approx(16 / 56)
    assert math.isnan(rows["b"]["level_4"]) and rows["b"]["unanimous_fraction"] == 1
    assert math.isnan(rows["c"]["orphan_fraction"]) and rows["c"]["boundary_pixels"] == 16
    assert res.curves["pixels"] == [16, 16, 72, 0]
    assert res.curves["pixels_by_annotators"] == {"3": [0, 0, 48], "4": [16, 16, 24, 0]}


# --- the command ----------------------------------------------------------------------


@pytest.fixture()
def gt_dir(tmp_path):
    root = tmp_path / "gt"
    root.mkdir()
    seg = np.ones(SHAPE, np.uint16)
    maps = _abcd()
    write_ground_truth(root / "a.mat", [seg] * 4, boundaries=maps)
    write_ground_truth(root / "b.mat", [seg] * 3, boundaries=[_line(5)] * 3)
    return root


def _parser():
    parser = argparse.ArgumentParser(prog="segbench")
    add_parsers(parser.add_subparsers(dest="command", required=True))
    return parser


def test_cli_defaults():
    a = _parser().parse_args(["agreement", "--gt", "g"])
    assert (a.max_dist, a.workers, a.scheduler, a.out, a.json, a.split) == \
        (DEFAULT_MAX_DIST, 1, None, None, False, None)
    assert API_MAX_DIST == DEFAULT_MAX_DIST == AGREEMENT.defaults["max_dist"]


def test_cli_json_and_files(gt_dir, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["agreement", "--gt", str(gt_dir), "--max-dist", str(MD15), "--out", str(out),
            "--quiet", "--json", "--unit", "pixel"]
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)
    m = res["metrics"]
    assert res["family"] == "agreement" and m["n_images"] == 2
    assert m["orphan_fraction"] == pytest.approx(16 / 104)
    assert m["unanimous_fraction"] == pytest.approx(48 / 104)
    assert [r["id"] for r in res["per_item"]] == ["a", "b"]
    assert json.loads((out / "result_agreement.json").read_text())["metrics"] == m
    assert (out / "per_item_agreement.csv").read_text().startswith("id,annotators,")
    assert (out / "agreement.png").stat().st_size > 0
    a = np.asarray(Image.open(out / "agreement" / "a.png"))
    assert a.dtype == np.uint8 and a.shape == SHAPE
    assert (a[5, 5], a[12, 5], a[5, 10], a[0, 0]) == (191, 128, 64, 0)
    assert (np.asarray(Image.open(out / "agreement" / "b.png")) == _line(5) * 255).all()
    # a rerun resumes from the records, and gives the same numbers
    stamp = (out / "agreement" / "a.png").stat().st_mtime_ns
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["metrics"] == m
    assert (out / "agreement" / "a.png").stat().st_mtime_ns == stamp


def test_cli_text(gt_dir, capsys):
    assert main(["agreement", "--gt", str(gt_dir), "--max-dist", str(MD15),
                 "--quiet", "--unit", "pixel"]) == 0
    text = capsys.readouterr().out
    assert "agreement level" in text and "orphan (level 1): 15.38%" in text
    assert "unanimous (level K): 46.15%" in text and "30.58%" in text


def test_cli_no_outputs(gt_dir, tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["agreement", "--gt", str(gt_dir), "--out", str(out), "--no-plot",
                 "--no-maps", "--quiet", "--json"]) == 0
    assert (out / "result_agreement.json").exists()
    assert not (out / "agreement.png").exists() and not (out / "agreement").exists()


def test_a_rerun_on_fewer_images_removes_the_maps_it_left_out(gt_dir, tmp_path, capsys):
    """agreement/<iid>.png of images a rerun (--ids) left out are removed, so the
    folder agrees with its summary (they stayed); a user's file there stays."""
    out = tmp_path / "o"
    assert main(["agreement", "--gt", str(gt_dir), "--out", str(out), "--quiet"]) == 0
    (out / "agreement" / "notes.txt").write_text("mine")
    assert main(["agreement", "--gt", str(gt_dir), "--out", str(out), "--quiet",
                 "--ids", "a"]) == 0
    assert sorted(p.name for p in (out / "agreement").iterdir()) == ["a.png", "notes.txt"]


def test_cli_bad_input_names_the_file(gt_dir, capsys):
    (gt_dir / "c.mat").write_bytes(b"not a mat file")
    assert main(["agreement", "--gt", str(gt_dir), "--quiet"]) == 2
    assert "c.mat" in capsys.readouterr().err
    assert main(["agreement", "--gt", str(gt_dir), "--max-dist", "2", "--quiet"]) == 2
    assert "max_dist" in capsys.readouterr().err


def test_damaged_record_is_recomputed(gt_dir, tmp_path):
    from segbench.engine import RECORDS_DIR, RecordWarning
    out = tmp_path / "out"          # not tmp_path: it holds the ground truth
    first = run_agreement(gt_dir, out, max_dist=MD15, progress=False, maps=False)
    path = out / RECORDS_DIR / "agreement" / "a.json"
    data = json.loads(path.read_text())
    data["record"]["map"]["data"] = "AAAA"
    path.write_text(json.dumps(data))
    with pytest.warns(RecordWarning, match="a.json"):
        again = run_agreement(gt_dir, out, max_dist=MD15, progress=False, maps=False)
    assert again.metrics == first.metrics


def test_workers_give_the_same_result(gt_dir):
    one = run_agreement(gt_dir, max_dist=MD15, progress=False)
    two = run_agreement(gt_dir, max_dist=MD15, progress=False, workers=2)
    assert one.metrics == two.metrics
    assert one.to_dict()["per_item"] == two.to_dict()["per_item"]   # NaN as null


# --- real data ------------------------------------------------------------------------

REAL_IDS = ["100007", "103029"]     # 5 and 8 annotators


@pytest.fixture(scope="module")
def bsds_test():
    return require(DATA / "bsds500" / "groundTruth" / "test")


def test_real_images(bsds_test):
    from segbench.io import read_ground_truth
    for iid in REAL_IDS:
        gt = read_ground_truth(bsds_test / f"{iid}.mat")
        k = len(gt)
        lv = agreement_levels(gt)
        hist = agreement_histogram(lv)
        assert len(hist) == k and hist.sum() == sum(int(g.boundaries.sum()) for g in gt)
        # each matched pixel of the benchmark's leave-one-out recall is one credit
        assert int((np.arange(k) * hist).sum()) == human_counts(gt)[0]
        again = agreement_levels(gt)
        assert all((x == y).all() for x, y in zip(lv, again))
        strong = strong_boundaries(gt, lv, "all")
        assert sum(int(s.sum()) for s in strong) == hist[-1]
        assert 0 < hist[0] < hist.sum() and 0 < hist[-1] < hist.sum()


def test_real_run(bsds_test, tmp_path):
    res = run_agreement(bsds_test, tmp_path, ids=REAL_IDS, progress=False, maps=False,
                        unit="pixel")
    from segbench.io import read_ground_truth
    hists = [agreement_histogram(agreement_levels(read_ground_truth(bsds_test
                                                                   / f"{i}.mat")))
             for i in REAL_IDS]
    total = sum(int(h.sum()) for h in hists)
    assert res.metrics["orphan_fraction"] == pytest.approx(sum(h[0] for h in hists) / total)
    assert res.metrics["unanimous_fraction"] == pytest.approx(
        sum(h[-1] for h in hists) / total)
    assert res.metrics["n_annotators_max"] == 8
    assert (tmp_path / "agreement.png").exists()
