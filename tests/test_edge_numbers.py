"""Issue 28, the numbers a user sees: each is right or refused, at the edges of the
commands (strong boundaries above an image's annotator count, R50 of curves that never
reach P = 0.5, records that cannot be, the PR plot's R = 0 end, AP under the BSDS300
protocol, id lists saved with a BOM, a region folder of PNGs without --labels).

Each test runs the command as a user does (``segbench.cli.main``): its exit status, its
one-line message, the files it leaves."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, FIXTURES, require

from segbench.algorithms.edges import gradient_magnitude
from segbench.cli import main
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.io import SegFile, write_segs, write_seg, write_soft_map

BOM = "\ufeff"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """4 synthetic images with 3 annotators: soft maps, segs .mat, PNG label maps."""
    root = tmp_path_factory.mktemp("edge")
    items = make_synthetic_dataset(4, shape=(60, 80), n_annotators=3, seed=5)
    write_synthetic_dataset(root, items)
    pred, segs = root / "pred", root / "segs"
    for item in items:
        g = gradient_magnitude(item.image)
        write_soft_map(pred / f"{item.iid}.png", g)
        write_segs(segs / f"{item.iid}.mat",
                   [(g < t).astype(np.int32) + 1 for t in (0.1, 0.3)])
    return root / "groundTruth" / "test", pred, segs, [i.iid for i in items]


@pytest.fixture(scope="module")
def b300(tmp_path_factory):
    """A BSDS300 tree of 3 images, 3 colour and 2 grey subjects each, and soft maps."""
    root = tmp_path_factory.mktemp("b300")
    items = [dataclasses.replace(item, iid=str(10001 + n)) for n, item in
             enumerate(make_synthetic_dataset(3, shape=(60, 80), n_annotators=5, seed=21))]
    for item in items:
        for k, seg in enumerate(item.segmentations):
            gray = k >= 3
            uid = 2000 + k if gray else 1000 + k
            d = root / "human" / ("gray" if gray else "color") / str(uid)
            d.mkdir(parents=True, exist_ok=True)
            write_seg(d / f"{item.iid}.seg",
                      SegFile(np.asarray(seg) - np.min(seg), image=int(item.iid),
                              user=uid, gray=gray))
    pred = root / "pred"
    for item in items:
        write_soft_map(pred / f"{item.iid}.png", gradient_magnitude(item.image))
    return root, pred


def _run(capsys, *args):
    """``segbench ARGS --quiet``: (exit status, stdout, stderr lines other than the note
    of a resumed run)."""
    code = main([*map(str, args), "--quiet"])
    out, err = capsys.readouterr()
    return code, out, [line for line in err.splitlines()
                       if line.strip() and not line.startswith("segbench: resumed:")]


# --- 9. text files saved with a UTF-8 BOM ----------------------------------------------


def test_ids_file_and_name_txt_with_a_bom(data, tmp_path, capsys):
    gt, pred, _, ids = data
    listed = tmp_path / "ids.txt"
    listed.write_text(BOM + f"{ids[1]}\r\n{ids[2]}\r\n", encoding="utf-8")   # Notepad
    named = tmp_path / "named"
    named.mkdir()
    for p in pred.glob("*.png"):
        (named / p.name).write_bytes(p.read_bytes())
    (named / "name.txt").write_text(BOM + "My detector\r\n", encoding="utf-8")
    code, out, err = _run(capsys, "boundary", "--gt", gt, "--pred", named, "--out",
                          tmp_path / "run", "--ids", listed, "--no-plot")
    assert code == 0, err
    assert "images: 2" in out and "My detector" in out
    res = json.loads((tmp_path / "run" / "result_boundary.json").read_text())
    assert res["name"] == "My detector"
    assert [r["id"] for r in res["per_item"]] == ids[1:3]


def test_seg_and_csv_files_with_a_bom(tmp_path):
    from segbench.io import read_seg
    from segbench.io._superpixel import read_csv_labels
    seg = tmp_path / "a.seg"
    write_seg(seg, SegFile(np.array([[0, 0, 1], [0, 1, 1]]), image=1, user=2, gray=False))
    plain = read_seg(seg)
    seg.write_bytes(BOM.encode() + seg.read_bytes())
    assert np.array_equal(read_seg(seg).labels, plain.labels)
    csv = tmp_path / "a.csv"
    csv.write_text(BOM + "1,2\n3,4\n", encoding="utf-8")
    assert read_csv_labels(csv).tolist() == [[1, 2], [3, 4]]


# --- 10. region: a PNG among .mat files, without --labels ------------------------------


def test_region_names_the_png_it_did_not_read(data, tmp_path, capsys):
    gt, _, segs, ids = data
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    from segbench.io import read_prediction, write_label_map
    for iid in ids[:-1]:       # one segmentation each, as the label map is
        write_segs(mixed / f"{iid}.mat", read_prediction(segs / f"{iid}.mat").segs[:1])
    write_label_map(mixed / f"{ids[-1]}.png", np.arange(60 * 80).reshape(60, 80) % 7)
    code, out, err = _run(capsys, "region", "--gt", gt, "--pred", mixed, "--out",
                          tmp_path / "run")
    assert code == 2 and len(err) == 1, err
    assert f"{ids[-1]}.png is there but not read" in err[0] and "--labels" in err[0]
    assert not (tmp_path / "run" / "result_boundary.json").exists()
    # the option it names reads it
    code, out, err = _run(capsys, "region", "--gt", gt, "--pred", mixed, "--labels",
                          "--out", tmp_path / "run2")
    assert code == 0, err
    assert "images: 4" in out


# --- 6. AP under --protocol bsds300 ------------------------------------------------------


def test_bsds300_ap_is_marked_in_the_table_and_result(b300, tmp_path, capsys):
    root, pred = b300
    code, out, err = _run(capsys, "boundary", "--gt", root / "human" / "color", "--pred",
                          pred, "--protocol", "bsds300", "--out", tmp_path / "b3",
                          "--no-plot")
    assert code == 0, err
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("algorithm"))
    row = lines[header + 1].split()
    assert row[3].endswith("*") and not row[1].endswith("*")        # AP, not ODS
    note = [line for line in lines if line.startswith("* AP:")]
    assert len(note) == 1 and "30 thresholds" in note[0] and "narrower recall" in note[0]
    saved = json.loads((tmp_path / "b3" / "result_boundary.json").read_text())
    assert "narrower recall range" in saved["notes"]["AP"]
    from segbench import Result
    assert Result.from_json(tmp_path / "b3" / "result_boundary.json").notes == saved["notes"]
    # the default protocol reports AP itself: no mark, no note
    code, out, err = _run(capsys, "boundary", "--gt", root / "human" / "color", "--pred",
                          pred, "--out", tmp_path / "bsr", "--no-plot")
    assert code == 0 and "*" not in out
    assert "notes" not in json.loads((tmp_path / "bsr" / "result_boundary.json").read_text())


# --- 5. the PR plot of maps empty at the highest thresholds -------------------------------


def _blue_on_the_r0_axis(png: Path) -> int:
    """Pixels of the first curve's colour within 1 px of the R = 0 axis, inside the axes
    (the legend's handle starts 11 pt to its right)."""
    from PIL import Image

    from segbench.boundary._plots import axes_box
    x0, y0, side = (v * 150 / 72 for v in axes_box(False))     # points -> pixels at 150 dpi
    with Image.open(png) as im:
        a = np.asarray(im.convert("RGB")).astype(int)
    band = a[int(y0):int(y0 + side), int(round(x0)) - 1:int(round(x0)) + 2]
    blue = (np.abs(band - np.array([31, 119, 180])).sum(axis=2) < 60)
    return int(blue.sum())


def test_pr_plot_drops_the_points_bsr_drops(data, tmp_path, capsys):
    gt, pred, _, ids = data
    faint = tmp_path / "faint"            # maps at most 0.4: thresholds above find nothing
    faint.mkdir()
    from segbench.io import read_prediction
    for iid in ids:
        write_soft_map(faint / f"{iid}.png", 0.4 * read_prediction(pred / f"{iid}.png").pb)
    code, out, err = _run(capsys, "boundary", "--gt", gt, "--pred", faint, "--out",
                          tmp_path / "run")
    assert code == 0, err
    res = json.loads((tmp_path / "run" / "result_boundary.json").read_text())
    r = np.array(res["curves"]["recall"])
    assert (r == 0).sum() > 10 and (r >= 0.01).sum() > 10     # the shape of the issue
    assert _blue_on_the_r0_axis(tmp_path / "run" / "pr_curve.png") == 0
    from segbench.boundary._plots import drawn_points
    assert drawn_points([0.5, 0.02, 0.0099, 0.0, np.nan], [0.4, 0.9, 1.0, 0.0, 0.5]
                        ).tolist() == [True, True, False, False, False]


# --- 2. R50 of curves that touch P = 0.5 only near R = 0 ---------------------------------


def test_r50_is_the_largest_recall_with_precision_at_least_half():
    from segbench.boundary import recall_at_precision
    # falls below 0.5 as recall grows past 0.6, touches 0.5 again at its last
    # non-empty threshold (R = 3e-5), then the empty maps (R = P = 0)
    r = np.array([0.95, 0.8, 0.6, 0.4, 0.1, 3e-5, 0.0, 0.0])
    p = np.array([0.20, 0.40, 0.60, 0.80, 0.9, 0.5, 0.0, 0.0])
    assert recall_at_precision(r, p) == pytest.approx(0.7)    # 0.8 + (0.6-0.8)/2
    # a dip below 0.5 between two crossings: the larger recall wins
    r2, p2 = np.array([0.9, 0.7, 0.5, 0.3]), np.array([0.3, 0.55, 0.45, 0.7])
    assert recall_at_precision(r2, p2) == pytest.approx(0.7 + 0.2 * 0.05 / 0.25)
    # every point above 0.5: the largest recall (Dollar's max(P(o(1)), .5))
    assert recall_at_precision([0.9, 0.5], [0.6, 0.8]) == 0.9
    assert np.isnan(recall_at_precision([0.9, 0.5, 0.0], [0.3, 0.45, 0.0]))
    # a monotone curve: Dollar's formula, bit for bit
    rm, pm = np.linspace(0.95, 0.05, 99), np.linspace(0.2, 0.9, 99) ** 1.3
    pu, idx = np.unique(pm, return_index=True)
    assert recall_at_precision(rm, pm) == float(np.interp(0.5, pu, rm[idx]))


def test_r50_of_gradient_magnitude_on_bsds300(tmp_path, capsys):
    """gm on the 11 BSDS300 images: its precision reaches 0.5 near R = 0.95 and is 0.5
    again at R = 3e-5, where Dollar's sorted-precision interpolation put R50."""
    gt = require(DATA / "bsds300-seg-subset" / "human" / "color")
    images = require(DATA / "bsds500" / "images" / "val")
    from PIL import Image
    from segbench.datasets import open_ground_truth
    pred = tmp_path / "gm"
    pred.mkdir()
    for iid in open_ground_truth(gt).ids():
        im = np.asarray(Image.open(images / f"{iid}.jpg"))
        write_soft_map(pred / f"{iid}.png", gradient_magnitude(im))
    code, out, err = _run(capsys, "boundary", "--gt", gt, "--pred", pred, "--out",
                          tmp_path / "run", "--no-plot", "--workers", 2)
    assert code == 0, err
    res = json.loads((tmp_path / "run" / "result_boundary.json").read_text())
    r, p = np.array(res["curves"]["recall"]), np.array(res["curves"]["precision"])
    assert res["metrics"]["R50"] > 0.9
    assert r[p >= 0.5].max() <= res["metrics"]["R50"] <= r[p < 0.5].max()
    row = out.splitlines()[-1].split()
    assert row[4] == f"{res['metrics']['R50']:.4f}"


def test_r50_never_reached_is_n_a(data, tmp_path, capsys):
    gt, pred, _, ids = data
    blank = tmp_path / "blank"          # detects nothing at any threshold: P = 0
    blank.mkdir()
    for iid in ids:
        write_soft_map(blank / f"{iid}.png", np.zeros((60, 80)))
    code, out, err = _run(capsys, "boundary", "--gt", gt, "--pred", blank, "--out",
                          tmp_path / "run", "--no-plot")
    assert code == 0, err
    header, row, note = out.splitlines()[-3:]
    assert header.split()[-1] == "R50" and row.split()[-1] == "n/a"
    assert note.startswith("n/a: R50 is the recall where precision falls to 0.5")
    assert json.loads((tmp_path / "run" / "result_boundary.json").read_text())["metrics"][
        "R50"] is None


# --- 1. --min-agreement K above an image's annotator count -------------------------------


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """Ground truth of 2 images with 5 annotators (a0, a1), 2 with 3 (b0, b1), and one
    (c0) whose third annotator drew no boundary at all; gradient maps of each."""
    from segbench.datasets import write_ground_truth
    root = tmp_path_factory.mktemp("mixed")
    gt, pred = root / "gt", root / "pred"
    gt.mkdir()
    pred.mkdir()
    sets = [("a", make_synthetic_dataset(2, shape=(60, 80), n_annotators=5, seed=7)),
            ("b", make_synthetic_dataset(2, shape=(60, 80), n_annotators=3, seed=8)),
            ("c", make_synthetic_dataset(1, shape=(60, 80), n_annotators=2, seed=9))]
    for prefix, items in sets:
        for n, item in enumerate(items):
            segs = list(item.segmentations)
            if prefix == "c":
                segs.append(np.ones((60, 80), np.int32))       # one region: no boundary
            write_ground_truth(gt / f"{prefix}{n}.mat", segs)
            write_soft_map(pred / f"{prefix}{n}.png", gradient_magnitude(item.image))
    return gt, pred


def test_min_agreement_leaves_out_images_with_fewer_annotators(mixed, tmp_path, capsys):
    gt, pred = mixed
    code, out, err = _run(capsys, "boundary", "--gt", gt, "--pred", pred, "--out",
                          tmp_path / "k4", "--min-agreement", 4, "--no-plot")
    assert code == 0, err
    assert len(err) == 1 and err[0].startswith("segbench: warning: 3 of 5 images left "
                                               "out"), err
    assert "4 annotators" in err[0] and "b0, b1, c0" in err[0]
    assert "images: 2" in out
    res = json.loads((tmp_path / "k4" / "result_boundary.json").read_text())
    assert [r["id"] for r in res["per_item"]] == ["a0", "a1"]
    assert res["provenance"]["params"]["n_images"] == 2
    (left,) = res["provenance"]["excluded"]
    assert left["ids"] == ["b0", "b1", "c0"] and "4 annotators" in left["reason"]
    assert sorted(p.name for p in (tmp_path / "k4").glob("*_ev1.txt")) == [
        "a0_ev1.txt", "a1_ev1.txt"]
    # the scores are those of the images that have strong boundaries, alone
    code, _, err = _run(capsys, "boundary", "--gt", gt, "--pred", pred, "--out",
                        tmp_path / "a", "--min-agreement", 4, "--ids", "a0,a1",
                        "--no-plot")
    assert code == 0 and err == []
    for name in ("eval_bdry.txt", "eval_bdry_thr.txt", "eval_bdry_img.txt"):
        assert (tmp_path / "k4" / name).read_bytes() == (tmp_path / "a" / name).read_bytes()


def test_min_agreement_that_leaves_no_image_is_an_error(mixed, b300, tmp_path, capsys):
    gt, pred = mixed
    code, out, err = _run(capsys, "boundary", "--gt", gt, "--pred", pred, "--out",
                          tmp_path / "k20", "--min-agreement", 20)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("segbench: error: no image left to score: 5 of 5")
    assert "20 annotators" in err[0]
    assert not list((tmp_path / "k20").glob("*.txt"))
    assert not (tmp_path / "k20" / "result_boundary.json").exists()
    # grey subsets: 2 grey subjects per image, 3 asked for
    root, b300_pred = b300
    code, out, err = _run(capsys, "boundary", "--gt", root / "human", "--presentation",
                          "gray", "--pred", b300_pred, "--out", tmp_path / "grey",
                          "--min-agreement", 3)
    assert code == 2 and len(err) == 1 and "no image left to score: 3 of 3" in err[0]
    assert not (tmp_path / "grey" / "eval_bdry.txt").exists()
    code, out, err = _run(capsys, "boundary", "--gt", root / "human", "--presentation",
                          "color", "--pred", b300_pred, "--out", tmp_path / "colour",
                          "--min-agreement", 3, "--no-plot")
    assert code == 0 and err == [] and "images: 3" in out


def test_min_agreement_all_leaves_out_images_no_pixel_of_which_is_unanimous(
        mixed, tmp_path, capsys):
    gt, pred = mixed
    code, out, err = _run(capsys, "boundary", "--gt", gt, "--pred", pred, "--out",
                          tmp_path / "all", "--min-agreement", "all", "--no-plot")
    assert code == 0, err
    res = json.loads((tmp_path / "all" / "result_boundary.json").read_text())
    (left,) = res["provenance"]["excluded"]
    kept = [r["id"] for r in res["per_item"]]
    assert "c0" in left["ids"] and kept and not set(kept) & set(left["ids"])
    assert len(err) == 1 and f"{len(left['ids'])} of 5 images left out" in err[0]
    assert "all of its annotators" in err[0] and ", ".join(left["ids"]) in err[0]
    # exactly the images with no unanimous pixel are left out
    from segbench.boundary import agreement_levels, strong_boundaries
    from segbench.io import read_ground_truth
    for iid in kept + left["ids"]:
        gts = read_ground_truth(gt / f"{iid}.mat")
        strong = strong_boundaries(gts, agreement_levels(gts), "all")
        assert any(s.any() for s in strong) == (iid in kept)


# --- 3. records that cannot be are recomputed, never summarized ---------------------------


def _tamper(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data["record"])
    path.write_text(json.dumps(data))


def _official(out: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(out.glob("*.txt"))}


def test_impossible_boundary_record_is_recomputed(data, tmp_path, capsys):
    gt, pred, _, ids = data
    out = tmp_path / "run"
    args = ("boundary", "--gt", gt, "--pred", pred, "--out", out, "--no-plot")
    assert _run(capsys, *args)[0] == 0
    clean = _official(out)
    record = out / ".segbench-records" / "boundary" / f"{ids[0]}.json"

    def more_matched_than_there_are(rec):       # ODS 1.91 in the issue
        rec["cnt_r"] = [2 * s for s in rec["sum_r"]]
    _tamper(record, more_matched_than_there_are)
    code, _, err = _run(capsys, *args)
    assert code == 0 and len(err) == 1, err
    assert str(record) in err[0] and "computing it again" in err[0]
    assert "more pixels matched than there are" in err[0]
    assert _official(out) == clean                    # eval_bdry.txt, <iid>_ev1.txt
    _tamper(record, lambda rec: [rec[k].__setitem__(slice(50, None), [])   # 50 of 99
                                 for k in ("thresholds", "cnt_r", "sum_r", "cnt_p",
                                           "sum_p")])
    code, _, err = _run(capsys, *args)
    assert code == 0 and len(err) == 1 and str(record) in err[0], err
    assert "50 thresholds, not the 99" in err[0]
    assert _official(out) == clean


def test_region_record_of_the_wrong_length_is_recomputed(tmp_path, capsys):
    inputs = require(FIXTURES / "bsr-official" / "inputs")
    gt, ucm = inputs / "groundTruth", inputs / "ucm2"
    ids = sorted(p.stem for p in ucm.glob("*.mat"))
    out = tmp_path / "run"
    args = ("region", "--gt", gt, "--pred", ucm, "--out", out, "--nthresh", 9)
    code, _, err = _run(capsys, *args)
    assert code == 0, err
    clean = _official(out)
    record = out / ".segbench-records" / "region" / f"{ids[1]}.json"
    _tamper(record, lambda rec: [rec[k].__setitem__(slice(5, None), []) for k in rec
                                 if isinstance(rec[k], list)])
    code, _, err = _run(capsys, *args)       # was: "records were computed at different
    assert code == 0 and len(err) == 1, err   # thresholds", naming no file
    assert str(record) in err[0] and "5 thresholds, not the 9" in err[0]
    assert _official(out) == clean
    _tamper(record, lambda rec: rec.__setitem__("cnt_p", [2 * s for s in rec["sum_p"]]))
    code, _, err = _run(capsys, *args)
    assert code == 0 and len(err) == 1 and str(record) in err[0], err
    assert _official(out) == clean


@pytest.mark.parametrize("family, payload, bad", [
    ("human_boundary", {"users": [1, 2], "counts": [[5, 10, 3, 4], [2, 3, 1, 1]]},
     lambda d: d["counts"][0].__setitem__(0, 11)),
    ("human_region", {"table": [[5.0, 10.0, 3.0, 4.0, 0.8, 1.2]]},
     lambda d: d["table"][0].__setitem__(4, 1.5)),
    ("human_region", {"table": [[5.0, 10.0, 3.0, 4.0, 0.8, 1.2]]},
     lambda d: d["table"][0].__setitem__(2, 4.5)),
    ("consistency", {"shape": [4, 5], "counts": [2, 3], "same": [[0, 1, 0.1, 0.05]]},
     lambda d: d["same"][0].__setitem__(2, float("nan"))),
])
def test_every_family_refuses_counts_that_cannot_be(family, payload, bad):
    import copy

    from segbench.api import families
    from segbench.region import CONSISTENCY
    spec = CONSISTENCY if family == "consistency" else families(family)[0]
    spec.from_json(copy.deepcopy(payload))            # the payload as written is valid
    broken = copy.deepcopy(payload)
    bad(broken)
    with pytest.raises(ValueError):
        spec.from_json(broken)


def test_store_checks_a_record_against_its_parameters(tmp_path):
    """A semantic record of 2 classes under a key of 3 is recomputed, with a warning."""
    from segbench.engine import RecordStore, RecordWarning, record_key
    from segbench.semantic import SEMANTIC
    params = SEMANTIC.resolve({"classes": 3})
    key = record_key(SEMANTIC, params, {"gt": ["0"], "pred": ["1"]})
    store = RecordStore(tmp_path)
    store.prepare([SEMANTIC])
    path = tmp_path / ".segbench-records" / "semantic" / "a.json"
    payload = {"format": 1, "num_classes": 2, "conf_index": [0, 3], "conf_count": [5, 4],
               "gt_band": [1, 1], "pred_band": [1, 1], "band_inter": [0, 1]}
    path.write_text(json.dumps({"id": "a", "key": key, "record": payload}))
    with pytest.warns(RecordWarning, match="holds 2 classes, its parameters 3"):
        assert store.load(SEMANTIC, "a", key) is None
    assert store.saved(SEMANTIC, "a") is None
    payload = {**payload, "num_classes": 3, "gt_band": [1, 1, 0], "pred_band": [1, 1, 0],
               "band_inter": [0, 1, 0]}
    path.write_text(json.dumps({"id": "a", "key": key, "record": payload}))
    assert store.load(SEMANTIC, "a", key) is not None
