"""The semantic-boundary family (segbench.semantic_boundary): per-class counts equal to
the boundary benchmark's on each class alone; mask2edge, kill_internal, skip and the
multi-label encoding on hand-checkable maps; SBD / Cityscapes / encoded ground truth and
the prediction layouts, with one-line errors; an end-to-end run on synthetic SBD .mat
files written here, from Python and from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import segbench
from segbench.cli import main
from segbench.errors import InputError
from segbench.families import SEMANTIC_BOUNDARY_PROTOCOLS, specs
from segbench.semantic_boundary import (PROTOCOLS, SOURCES, GroundTruth,
                                        GroundTruthSource, PredictionMaps,
                                        SemanticBoundaryCounts, class_edges,
                                        class_folder_predictions, decode_multilabel,
                                        encode_multilabel, evaluate_classes, kill_mask,
                                        mask2edge, open_cityscapes, open_multilabel,
                                        open_sbd, resampler, resize_nearest,
                                        summarize_classes)
from segbench.primitives import (default_thresholds, evaluate_image,
                                                 summarize_boundary)

H, W = 48, 64


def _outline(mask):
    from scipy.ndimage import binary_erosion
    return mask & ~binary_erosion(mask)


def _soft(gt_maps, rng):
    from scipy.ndimage import gaussian_filter
    return np.stack([np.clip(gaussian_filter(g.astype(float), 1.0) * 2.2
                             + rng.random(g.shape) * 0.3, 0, 1) for g in gt_maps])


# -- synthetic SBD, written with scipy.io.savemat --------------------------------------


def _write_sbd(root: Path, n: int = 3, seed: int = 0) -> dict:
    """``cls/``, ``inst/``, ``val.txt``, predictions as (20, H, W) .npy and as class
    folders of 8-bit PNGs (the same maps, quantized). Each image: two classes, each two
    touching instances."""
    import scipy.io
    import scipy.sparse
    rng = np.random.default_rng(seed)
    for sub in ("cls", "inst", "npy", "png"):
        (root / sub).mkdir(parents=True)
    truth = {}
    for i in range(n):
        iid = f"2008_{i:06d}"
        seg = np.zeros((H, W), np.uint8)
        inst = np.zeros((H, W), np.uint8)
        cats = []
        for c in rng.choice(np.arange(1, 21), size=2, replace=False):
            r0, c0 = 6 + 18 * len(cats) // 2, int(rng.integers(6, W - 36))
            for j in range(2):
                seg[r0:r0 + 14, c0 + 14 * j:c0 + 14 * (j + 1)] = c
                inst[r0:r0 + 14, c0 + 14 * j:c0 + 14 * (j + 1)] = len(cats) + 1
                cats.append(int(c))
        stored = np.stack([_outline(seg == c) for c in range(1, 21)])
        cells = np.empty((20, 1), object)
        for c in range(20):
            cells[c, 0] = scipy.sparse.csc_matrix(stored[c].astype(float))
        icells = np.empty((len(cats), 1), object)
        for k in range(len(cats)):
            icells[k, 0] = scipy.sparse.csc_matrix(_outline(inst == k + 1).astype(float))
        scipy.io.savemat(root / "cls" / f"{iid}.mat", {"GTcls": {
            "Segmentation": seg, "Boundaries": cells,
            "CategoriesPresent": np.unique(seg[seg > 0])[:, None]}})
        scipy.io.savemat(root / "inst" / f"{iid}.mat", {"GTinst": {
            "Segmentation": inst, "Boundaries": icells,
            "Categories": np.array(cats, np.uint8)[:, None]}})
        pred = np.round(_soft(stored, rng) * 255) / 255
        np.save(root / "npy" / f"{iid}.npy", pred)
        for c in range(20):
            folder = root / "png" / f"class_{c + 1:03d}"
            folder.mkdir(exist_ok=True)
            Image.fromarray(np.round(pred[c] * 255).astype(np.uint8)).save(
                folder / f"{iid}.png")
        truth[iid] = (seg, inst, stored, pred)
    (root / "val.txt").write_text("\n".join(truth) + "\n")
    return truth


@pytest.fixture(scope="module")
def sbd(tmp_path_factory):
    root = tmp_path_factory.mktemp("sbd")
    return root, _write_sbd(root)


# -- the per-image function ------------------------------------------------------------


def test_counts_equal_the_boundary_benchmark_on_each_class_alone():
    rng = np.random.default_rng(1)
    labels = np.zeros((H, W), int)
    labels[8:30, 10:40], labels[20:44, 30:60] = 1, 2
    gt = np.stack([_outline(labels == k) for k in (1, 2)] + [np.zeros((H, W), bool)])
    pred = _soft(gt, rng)
    pred[1] *= 0.005                   # below every threshold: the shortcut's counts
    pred[2] = rng.random((H, W)) * 0.6     # a class absent from the ground truth
    ths = default_thresholds(25)
    rec = evaluate_classes(pred, gt, thresholds=ths, max_dist=0.02, thin=True)
    assert rec.cnt_r.shape == (3, 25)
    for c in range(3):
        ref = evaluate_image(pred[c], [gt[c]], thresholds=ths, max_dist=0.02, thin=True)
        for k in ("cnt_r", "sum_r", "cnt_p", "sum_p"):
            assert np.array_equal(getattr(rec, k)[c], getattr(ref, k)), (c, k)
    assert rec.sum_p[2].sum() > 0 and rec.cnt_p[2].sum() == 0      # false positives
    lazy = evaluate_classes(lambda c: pred[c], lambda c: gt[c], n_classes=3,
                            thresholds=ths, max_dist=0.02)
    assert np.array_equal(lazy.cnt_p, rec.cnt_p)


def test_nms_thins_each_class_map_first():
    from segbench.primitives import edge_nms
    rng = np.random.default_rng(4)
    gt = np.zeros((1, 30, 30), bool)
    gt[0, 15, 4:26] = True
    pred = _soft(gt, rng)
    rec = evaluate_classes(pred, gt, nthresh=9, nms=True)
    ref = evaluate_image(edge_nms(pred[0]).astype(np.float64), [gt[0]], nthresh=9,
                         max_dist=0.02)
    assert np.array_equal(rec.sum_p[0], ref.sum_p) and np.array_equal(rec.cnt_r[0],
                                                                       ref.cnt_r)


def test_skip_if_nonexistent_adds_nothing_for_an_absent_class():
    gt = np.zeros((2, 20, 20), bool)
    gt[0, 5, 3:15] = True
    pred = np.full((2, 20, 20), 0.0)
    pred[0, 5, 3:15] = 0.9
    pred[1, 12, 2:18] = 0.8                      # predicted, but not in the image
    kept = evaluate_classes(pred, gt, nthresh=9, max_dist=0.02)
    skipped = evaluate_classes(pred, gt, nthresh=9, max_dist=0.02,
                               skip_if_nonexistent=True)
    assert kept.sum_p[1].tolist() == [16] * 8 + [0] and not kept.cnt_p[1].any()
    assert not any(getattr(skipped, k)[1].any() for k in ("cnt_r", "sum_r", "cnt_p",
                                                          "sum_p"))
    assert np.array_equal(skipped.cnt_r[0], kept.cnt_r[0])


def test_kill_internal_removes_predictions_deep_inside_the_region():
    region = np.zeros((60, 60), bool)
    region[5:55, 5:55] = True
    gt = _outline(region)
    pred = np.where(gt, 0.9, 0.0)
    pred[30, 15:45] = 0.7            # inside, > 0.02 * diag (1.7 px) from the outline
    pred[5:55, 57] = 0.6             # outside the region: kept (a false positive)
    kill = kill_mask(gt, region, 0.02)
    assert kill[30, 15:45].all() and not kill[gt].any() and not kill[:, 57].any()
    assert not kill[6, 6]            # within the buffer of the outline
    ths = default_thresholds(9)
    rec = evaluate_classes(pred[None], gt[None], regions=region[None], thresholds=ths,
                           kill_internal=True)
    ref = evaluate_image(np.where(kill, 0, pred), [gt], thresholds=ths, max_dist=0.02)
    for k in ("cnt_r", "sum_r", "cnt_p", "sum_p"):
        assert np.array_equal(getattr(rec, k)[0], getattr(ref, k))
    plain = evaluate_classes(pred[None], gt[None], thresholds=ths)
    assert (plain.sum_p[0] - rec.sum_p[0])[:6].tolist() == [30] * 6   # t <= 0.7
    with pytest.raises(InputError, match="regions"):
        evaluate_classes(pred[None], gt[None], kill_internal=True)


def test_kill_internal_applies_after_thinning():
    """A thick blob across the kill border: thinned first, then cut (pyEdgeEval's
    order), which is not the thinning of the cut blob."""
    from segbench.primitives import thin
    region = np.zeros((40, 40), bool)
    region[2:38, 2:38] = True
    gt = _outline(region)
    pred = np.zeros((40, 40))
    pred[14:26, 4:30] = 0.8
    kill = kill_mask(gt, region, 0.02)
    frame = thin(pred >= 0.5) & ~kill
    rec = evaluate_classes(pred[None], gt[None], regions=region[None],
                           thresholds=[0.5], kill_internal=True)
    assert rec.sum_p[0, 0] == frame.sum()


# -- mask2edge -------------------------------------------------------------------------


def test_mask2edge_is_a_two_sided_band():
    m = np.zeros((7, 7), bool)
    m[2:5, 2:5] = True
    one = mask2edge(m, radius=1).astype(int)
    assert one.tolist() == [[0, 0, 0, 0, 0, 0, 0],
                            [0, 0, 1, 1, 1, 0, 0],
                            [0, 1, 1, 1, 1, 1, 0],
                            [0, 1, 1, 0, 1, 1, 0],
                            [0, 1, 1, 1, 1, 1, 0],
                            [0, 0, 1, 1, 1, 0, 0],
                            [0, 0, 0, 0, 0, 0, 0]]
    two = mask2edge(m, radius=2)
    assert two[2:5, 2:5].all() and two[1, 1] and not two[0, 0]   # sqrt(2) in, sqrt(8) out
    assert not mask2edge(np.zeros((5, 5), bool)).any()
    assert not mask2edge(np.ones((5, 5), bool)).any()             # the border is no edge


def test_no_boundary_between_a_class_and_void():
    labels = np.zeros((6, 8), int)
    labels[:, :4] = 7
    labels[:, 4:] = 3                                   # void (Cityscapes "out of roi")
    assert not mask2edge(labels == 7, radius=1, ignore=labels == 3).any()
    edge = mask2edge(labels == 7, radius=1)             # the same split, no void
    assert edge[:, 3].all() and edge[:, 4].all() and edge.sum() == 12


def test_instance_sensitive_adds_boundaries_between_touching_instances():
    labels = np.zeros((10, 12), int)
    labels[2:8, 2:10] = 5
    inst = np.zeros_like(labels)
    inst[2:8, 2:6], inst[2:8, 6:10] = 1, 2
    plain = class_edges(labels, 5, radius=1)
    both = class_edges(labels, 5, radius=1, instances=inst)
    assert not plain[3:7, 5:7].any()
    assert both[3:7, 5].all() and both[3:7, 6].all()
    assert np.array_equal(both & ~plain, np.isin(np.arange(12), [5, 6])[None, :]
                          & (np.arange(10)[:, None] >= 3) & (np.arange(10)[:, None] < 7))
    thin = class_edges(labels, 5, radius=1, instances=inst, thin=True)
    assert thin.sum() < both.sum() and thin[3:7, 5:7].any(axis=1).all()


# -- the multi-label encoding ----------------------------------------------------------


def test_multilabel_encoding_round_trip(tmp_path):
    edges = np.zeros((20, 4, 5), bool)
    edges[0, 0, 0] = edges[7, 0, 0] = True      # B bits 0 and 7
    edges[9, 1, 1] = True                       # G bit 1
    edges[17, 2, 2] = edges[19, 2, 2] = True    # R bits 1 and 3
    edges[:, 3, 4] = True
    rgb = encode_multilabel(edges)
    assert rgb[0, 0].tolist() == [0, 0, 129]
    assert rgb[1, 1].tolist() == [0, 2, 0]
    assert rgb[2, 2].tolist() == [10, 0, 0]
    assert rgb[3, 4].tolist() == [15, 255, 255]
    assert np.array_equal(decode_multilabel(rgb, 20), edges)
    Image.fromarray(rgb).save(tmp_path / "a.png")
    gt = GroundTruth(GroundTruthSource("multilabel", tmp_path / "a.png"), n_classes=20)
    assert all(np.array_equal(gt.edges(c), edges[c]) for c in range(20))
    pred = PredictionMaps(tmp_path / "a.png", 20, (4, 5))
    assert np.array_equal(pred(9), edges[9].astype(float))
    with pytest.raises(InputError, match="n_classes"):
        GroundTruth(GroundTruthSource("multilabel", tmp_path / "a.png"))
    Image.fromarray(rgb[..., 0]).save(tmp_path / "gray.png")
    with pytest.raises(InputError, match="gray.png: a multi-label edge image is RGB"):
        GroundTruth(GroundTruthSource("multilabel", tmp_path / "gray.png"), n_classes=20)


# -- ground truth and predictions ------------------------------------------------------


def _write_city(root: Path, name="frankfurt_000000_000001", size=(40, 48)):
    from segbench.io import write_label_map
    h, w = size
    labels = np.full((h, w), 7, np.uint8)              # road
    labels[:, -6:] = 3                                 # out of roi
    labels[10:30, 8:30] = 26                           # car: two instances
    inst = labels.astype(np.int32).copy()
    inst[10:30, 8:19], inst[10:30, 19:30] = 26000, 26001
    folder = root / "gtFine" / "val" / name.split("_")[0]
    folder.mkdir(parents=True, exist_ok=True)
    write_label_map(folder / f"{name}_gtFine_labelIds.png", labels)
    write_label_map(folder / f"{name}_gtFine_instanceIds.png", inst.astype(np.uint16))
    return labels, inst


def test_cityscapes_ground_truth(tmp_path):
    labels, inst = _write_city(tmp_path)
    ds = open_cityscapes(tmp_path, "val")
    assert ds.ids() == ["frankfurt_000000_000001"]
    src = ds["frankfurt_000000_000001"].annotations[0]
    car = 13                                           # trainId of labelId 26
    raw = GroundTruth(src, gt_edges="raw", instance_sensitive=True)
    assert raw.shape == (40, 48) and raw.n_classes == 19
    assert np.array_equal(raw.edges(car), class_edges(labels, 26, radius=2,
                                                      instances=np.where(inst >= 1000,
                                                                         inst, 0)))
    road = raw.edges(0)
    assert not road[:, -6:].any() and not road[:, -8:-6].any()   # void: no boundary
    half = GroundTruth(src, gt_edges="thin", instance_sensitive=False, scale=0.5)
    assert half.shape == (20, 24)
    small = labels[1::2, 1::2]
    assert np.array_equal(half.edges(car), class_edges(small, 26, radius=1, thin=True))
    assert np.array_equal(half.region(car), small == 26)
    with pytest.raises(InputError, match="'stored' reads SBD"):
        GroundTruth(src, gt_edges="stored")


def test_resize_nearest_takes_pixel_centres():
    a = np.arange(8 * 6).reshape(8, 6)
    assert np.array_equal(resize_nearest(a, (4, 3)), a[1::2, 1::2])
    assert resize_nearest(a, (8, 6)) is a


def test_sbd_ground_truth_stored_and_from_labels(sbd):
    root, truth = sbd
    iid = next(iter(truth))
    seg, inst, stored, _ = truth[iid]
    src = open_sbd(root, "val")[iid].annotations[0]
    c = int(seg.max()) - 1
    gt = GroundTruth(src, margin=5)
    assert np.array_equal(gt.edges(c), stored[c][5:-5, 5:-5])
    raw = GroundTruth(src, gt_edges="raw")
    assert np.array_equal(raw.edges(c), class_edges(seg, c + 1, radius=2))
    from segbench.primitives import thin
    per_inst = GroundTruth(src, instance_sensitive=True).edges(c)   # SEAL: OR, thinned
    ks = np.unique(inst[seg == c + 1])
    assert len(ks) == 2
    assert np.array_equal(per_inst, thin(_outline(inst == ks[0])
                                         | _outline(inst == ks[1])))
    assert (per_inst & ~stored[c]).any()          # the line between the two instances
    assert np.array_equal(gt.region(c), (seg == c + 1)[5:-5, 5:-5])


@pytest.mark.parametrize("variable, payload, match", [
    ("foo", {"a": np.zeros((3, 3))}, "no variable 'GTcls'"),
    ("GTcls", {"Segmentation": np.zeros((4, 4))}, "no field Boundaries"),
    ("GTcls", {"Segmentation": np.zeros((4, 4)), "Boundaries": "cells3"},
     "holds 3 maps"),
])
def test_bad_sbd_files_name_the_file(tmp_path, variable, payload, match):
    import scipy.io
    (tmp_path / "cls").mkdir()
    path = tmp_path / "cls" / "x.mat"
    if payload.get("Boundaries") == "cells3":
        payload["Boundaries"] = np.empty((3, 1), object)
        for k in range(3):
            payload["Boundaries"][k, 0] = np.zeros((4, 4))
    scipy.io.savemat(path, payload if variable == "foo" else {variable: payload})
    with pytest.raises(InputError, match=match) as exc:
        GroundTruth(GroundTruthSource("sbd", path, tmp_path / "inst" / "x.mat"))
    assert exc.value.path == str(path)


def test_prediction_errors_name_the_file(tmp_path, sbd):
    root, truth = sbd
    iid = next(iter(truth))
    np.save(tmp_path / "c.npy", np.zeros((19, H, W)))
    with pytest.raises(InputError, match="C = 20") as exc:
        PredictionMaps(tmp_path / "c.npy", 20, (H, W))
    assert exc.value.path == str(tmp_path / "c.npy")
    with pytest.raises(InputError, match="does not resize predictions"):
        PredictionMaps(root / "npy" / f"{iid}.npy", 20, (H // 2, W // 2))
    np.save(tmp_path / "nan.npy", np.full((2, 4, 4), np.nan))
    with pytest.raises(InputError, match="outside"):
        PredictionMaps(tmp_path / "nan.npy", 2, (4, 4))(0)
    pred = PredictionMaps(root / "png" / "class_001" / f"{iid}.png", 20, (H, W))
    assert np.allclose(pred(19), truth[iid][3][19])
    with pytest.raises(InputError, match="missing"):
        PredictionMaps(root / "png" / "class_001" / f"{iid}.png", 21, (H, W))(20)


# -- records and summary ---------------------------------------------------------------


def test_record_round_trip_and_validation():
    rng = np.random.default_rng(2)
    gt = rng.random((3, 20, 20)) > 0.9
    rec = evaluate_classes(rng.random((3, 20, 20)), gt, nthresh=5, kind="sbd")
    back = SemanticBoundaryCounts.from_json(json.loads(json.dumps(rec.to_json())))
    assert back.kind == "sbd" and all(np.array_equal(getattr(back, k), getattr(rec, k))
                                      for k in ("thresholds", "cnt_r", "sum_r", "cnt_p",
                                                "sum_p"))
    bad = rec.to_json()
    bad["cnt_p"][0][0] = bad["sum_p"][0][0] + 1
    with pytest.raises(ValueError, match="matched"):
        SemanticBoundaryCounts.from_json(bad)
    bad = rec.to_json()
    bad["sum_r"] = bad["sum_r"][:2]
    with pytest.raises(ValueError):
        SemanticBoundaryCounts.from_json(bad)


def test_summary_is_the_boundary_summary_of_each_class():
    rng = np.random.default_rng(3)
    records = []
    for _ in range(4):
        gt = np.zeros((3, 30, 30), bool)
        gt[0, 10, 5:25] = True
        gt[1, 5:25, rng.integers(5, 25)] = rng.random() > 0.3
        records.append(evaluate_classes(_soft(gt, rng), gt, nthresh=15))
    s = summarize_classes(records, list("abcd"), names=("x", "y", "z"))
    for c in (0, 1):
        ref = summarize_boundary([r.counts(c) for r in records], list("abcd")).metrics()
        assert s.metrics[f"ODS_{'xy'[c]}"] == ref["ODS"]
        assert s.table[c]["AP"] == ref["AP"]
    assert np.isnan(s.metrics["ODS_z"]) and s.metrics["n_classes_scored"] == 2
    assert s.metrics["MF_ODS"] == pytest.approx((s.metrics["ODS_x"]
                                                 + s.metrics["ODS_y"]) / 2)
    stat = resampler(records)(np.ones((1, 4)))
    assert stat["MF_ODS"][0] == pytest.approx(s.metrics["MF_ODS"], abs=1e-12)
    assert stat["MF_OIS"][0] == pytest.approx(s.metrics["MF_OIS"], abs=1e-12)


# -- the family on the engine ----------------------------------------------------------


def _direct(root, truth, **kw):
    """MF-ODS etc. of the SBD fixture under sbd-seal, computed here from the arrays."""
    recs = []
    for iid, (seg, inst, stored, pred) in truth.items():
        crop = (slice(5, -5), slice(5, -5))
        recs.append(evaluate_classes(pred[:, crop[0], crop[1]],
                                     stored[:, crop[0], crop[1]], max_dist=0.02, **kw))
    return summarize_classes(recs, list(truth)).metrics


def test_end_to_end_from_python(sbd, tmp_path):
    root, truth = sbd
    ds = open_sbd(root, "val")
    out = tmp_path / "run"
    res = segbench.evaluate("semantic_boundary", gt=ds, pred=root / "npy", out=out,
                            progress=False)
    direct = _direct(root, truth)
    assert res.metrics["MF_ODS"] == pytest.approx(direct["MF_ODS"], abs=1e-12)
    assert res.metrics["MF_OIS"] == pytest.approx(direct["MF_OIS"], abs=1e-12)
    assert res.provenance["params"]["margin"] == 5
    assert res.provenance["params"]["kill_internal"] is False
    assert [r["id"] for r in res.per_item] == list(truth)
    assert (out / "result_semantic_boundary.json").is_file()
    assert (out / "eval_semantic_bdry.txt").read_text().count("\n") == 21
    seg = truth[ds.ids()[0]][0]
    assert (out / f"class_{int(seg.max()):03d}" / "eval_bdry.txt").is_file()
    again = segbench.evaluate("semantic_boundary", gt=ds, pred=root / "npy", out=out,
                              progress=False)
    assert again.metrics == res.metrics
    folders = segbench.evaluate(
        "semantic_boundary", gt=ds, pred=class_folder_predictions(root / "png", ds),
        progress=False, workers=2)
    assert folders.metrics["MF_ODS"] == pytest.approx(res.metrics["MF_ODS"], abs=1e-12)
    assert [r["f"] for r in folders.per_item] == [r["f"] for r in res.per_item]


def test_protocol_sbd_on_the_engine(sbd):
    from segbench.engine import run
    root, truth = sbd
    res, = run(specs("semantic_boundary"), open_sbd(root, "val"), root / "npy",
               params={"protocol": "sbd"}, progress=False)
    p = res.provenance["params"]
    assert (p["kill_internal"], p["skip_if_nonexistent"], p["margin"],
            p["max_dist"]) == (True, True, 0, 0.02)
    recs = []
    for seg, _, stored, pred in truth.values():
        regions = np.stack([seg == c for c in range(1, 21)])
        recs.append(evaluate_classes(pred, stored, regions=regions, kill_internal=True,
                                     skip_if_nonexistent=True))
    assert res.metrics["MF_ODS"] == pytest.approx(
        summarize_classes(recs).metrics["MF_ODS"], abs=1e-12)


def test_protocol_keyword_through_evaluate(sbd):
    root, _ = sbd
    res = segbench.evaluate("semantic_boundary", gt=open_sbd(root, "val"),
                            pred=root / "npy", protocol="sbd", progress=False)
    assert res.provenance["params"]["kill_internal"] is True
    same = segbench.evaluate("semantic_boundary", gt=open_sbd(root, "val"),
                             pred=root / "npy", preset="sbd", progress=False)
    assert same.metrics["MF_ODS"] == res.metrics["MF_ODS"]


def test_command_line(sbd, tmp_path, capsys):
    root, truth = sbd
    out = tmp_path / "cli"
    code = main(["semantic-boundary", "--gt", str(root / "cls"), "--ids",
                 str(root / "val.txt"), "--pred", str(root / "png" / "class_001"),
                 "--out", str(out), "--name", "blur", "--instance-sensitive", "on",
                 "--kill-internal", "off", "--quiet", "--json"])
    assert code == 0
    res = json.loads(capsys.readouterr().out)
    assert res["family"] == "semantic_boundary" and res["name"] == "blur"
    assert res["provenance"]["params"]["instance_sensitive"] is True
    same = segbench.evaluate("semantic_boundary", gt=open_sbd(root, "val"),
                             pred=root / "npy", instance_sensitive=True,
                             kill_internal=False, progress=False)
    assert res["metrics"]["MF_ODS"] == pytest.approx(same.metrics["MF_ODS"], abs=1e-12)
    present = {int(truth[i][0].max()) for i in truth}
    assert all((out / f"class_{c:03d}" / "eval_bdry.txt").is_file() for c in present)


def test_command_line_errors_are_one_line(sbd, tmp_path, capsys):
    import scipy.io
    root, truth = sbd
    bad = tmp_path / "cls"
    bad.mkdir()
    scipy.io.savemat(bad / "2008_000000.mat", {"GT": np.zeros((3, 3))})
    code = main(["semantic-boundary", "--gt", str(bad), "--pred", str(root / "npy"),
                 "--ids", "2008_000000", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1
    assert f"{bad / '2008_000000.mat'}: no variable 'GTcls'" in err
    code = main(["semantic-boundary", "--gt", str(root / "cls"), "--pred",
                 str(root / "npy" / "nothing-here"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1


def test_command_line_reads_the_layouts_as_distributed(sbd, tmp_path, capsys):
    """The SBD dataset folder with --split, and the per-class prediction folders by
    their parent (SEAL's and pyEdgeEval's layout), as the family's own readers."""
    root, _ = sbd
    code = main(["semantic-boundary", "--gt", str(root), "--split", "val", "--pred",
                 str(root / "png"), "--quiet", "--json"])
    assert code == 0
    res = json.loads(capsys.readouterr().out)
    same = segbench.evaluate("semantic_boundary", gt=open_sbd(root, "val"),
                             pred=root / "npy", progress=False)
    assert res["metrics"]["MF_ODS"] == pytest.approx(same.metrics["MF_ODS"], abs=1e-12)


# -- protocols -------------------------------------------------------------------------


def test_protocols_are_declared_once_and_sourced():
    assert SEMANTIC_BOUNDARY_PROTOCOLS == tuple(PROTOCOLS)
    for name, values in PROTOCOLS.items():
        assert set(SOURCES[name]) == set(values), name
    spec = specs("semantic_boundary")[0]
    p = spec.resolve({"protocol": "cityscapes", "margin": 2})
    assert (p["max_dist"], p["scale"], p["margin"], p["instance_sensitive"]) == \
        (0.0035, 0.5, 2, True)
    with pytest.raises(InputError, match="one of sbd"):
        spec.resolve({"protocol": "voc"})
    assert spec.resolve({"thin": "off"})["thin"] is False


def test_the_docs_table_shows_the_protocols():
    page = (Path(__file__).resolve().parents[1] / "docs" / "semantic-boundary.md"
            ).read_text(encoding="utf-8")
    rows = {}
    for line in page.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`") and cells[0][1:-1] in \
                PROTOCOLS["sbd"]:
            rows[cells[0][1:-1]] = cells[1:4]
    assert set(rows) == set(PROTOCOLS["sbd"])

    def shown(v):
        return ("on" if v else "off") if isinstance(v, bool) else f"{v:g}" \
            if isinstance(v, float) else str(v)
    for key, cells in rows.items():
        assert cells == [shown(PROTOCOLS[p][key]) for p in PROTOCOLS], key


def test_multilabel_dataset_needs_n_classes(tmp_path):
    rgb = encode_multilabel(np.zeros((3, 8, 8), bool))
    Image.fromarray(rgb).save(tmp_path / "a_edge.png")
    edges = np.zeros((3, 8, 8), bool)
    edges[1, 2, 1:7] = True
    Image.fromarray(encode_multilabel(edges)).save(tmp_path / "a_edge.png")
    ds = open_multilabel(tmp_path, suffix="_edge.png")
    assert ds.ids() == ["a"]
    (tmp_path / "pred").mkdir()
    np.save(tmp_path / "pred" / "a.npy", edges * 0.8)
    with pytest.raises(InputError, match="give n_classes"):
        segbench.evaluate("semantic_boundary", gt=ds, pred=tmp_path / "pred",
                          progress=False, margin=0)
    res = segbench.evaluate("semantic_boundary", gt=ds, pred=tmp_path / "pred",
                            progress=False, margin=0, n_classes=3)
    assert res.metrics["ODS_class_002"] == 1.0 and res.metrics["n_classes_scored"] == 1


def test_cityscapes_protocol_on_the_engine(tmp_path):
    from segbench.engine import run
    labels, inst = _write_city(tmp_path)
    (tmp_path / "pred").mkdir()
    name = "frankfurt_000000_000001"
    np.save(tmp_path / "pred" / f"{name}.npy", np.full((19, 20, 24), 0.3))
    res, = run(specs("semantic_boundary"), open_cityscapes(tmp_path), tmp_path / "pred",
               params={"protocol": "cityscapes"}, progress=False)
    assert res.metrics["n_classes"] == 19 and res.metrics["n_classes_scored"] == 2
    np.save(tmp_path / "pred" / f"{name}.npy", np.full((19, 40, 48), 0.3))
    with pytest.raises(InputError, match="20x24 at the scale evaluated"):
        run(specs("semantic_boundary"), open_cityscapes(tmp_path), tmp_path / "pred",
            params={"protocol": "cityscapes"}, progress=False)


def test_streaming_equals_the_folder_run(sbd):
    """SemanticBoundaryEval fed each image's maps in memory (two updates, a merged
    half, a state dict through pickle) gives the folder run's numbers."""
    import pickle

    from segbench.semantic_boundary import GroundTruth, ground_truth_source
    root, _ = sbd
    ds = open_sbd(root, "val")
    folder = segbench.evaluate("semantic_boundary", gt=ds, pred=root / "npy",
                               progress=False)
    halves = [segbench.SemanticBoundaryEval(), segbench.SemanticBoundaryEval()]
    for k, iid in enumerate(ds.ids()):
        gt = GroundTruth(ground_truth_source(ds[iid].sources[0]), gt_edges="stored",
                         margin=0)
        edges = np.stack([gt.edges(c) for c in range(gt.n_classes)])
        pred = np.load(root / "npy" / f"{iid}.npy")
        halves[k % 2].update(pred, edges, ids=iid)
    whole = segbench.SemanticBoundaryEval()
    whole.load_state_dict(pickle.loads(pickle.dumps(halves[0].state_dict())))
    whole.merge(halves[1])
    res = whole.compute()
    assert res.metrics["MF_ODS"] == pytest.approx(folder.metrics["MF_ODS"], abs=1e-12)
    assert res.metrics["MF_OIS"] == pytest.approx(folder.metrics["MF_OIS"], abs=1e-12)
    with pytest.raises(InputError, match="must be \\(C, H, W\\) of one shape"):
        whole.update(pred[:, :5], edges)


def test_explicit_thresholds_from_the_command_line(sbd, tmp_path, capsys):
    """``--thresholds 0.2,0.5,0.8`` scores those three cuts of every class (the same
    counts as evaluate_classes at them), a count acts as --nthresh, and a value
    outside [0, 1] is one line."""
    root, truth = sbd
    code = main(["semantic-boundary", "--gt", str(root / "cls"), "--ids",
                 str(root / "val.txt"), "--pred", str(root / "npy"),
                 "--thresholds", "0.8,0.2,0.5", "--out", str(tmp_path / "r"),
                 "--quiet", "--json"])
    assert code == 0
    res = json.loads(capsys.readouterr().out)
    assert res["provenance"]["params"]["thresholds"] == [0.2, 0.5, 0.8]
    same = segbench.evaluate("semantic_boundary", gt=open_sbd(root, "val"),
                             pred=root / "npy", thresholds=[0.2, 0.5, 0.8], progress=False)
    assert res["metrics"]["MF_ODS"] == pytest.approx(same.metrics["MF_ODS"], abs=1e-12)
    recs = [evaluate_classes(pred, stored, thresholds=[0.2, 0.5, 0.8])
            for _, _, stored, pred in truth.values()]
    direct = summarize_classes(recs).metrics["MF_ODS"]
    assert same.metrics["MF_ODS"] == pytest.approx(direct, abs=1e-12)
    assert all(r.thresholds.tolist() == [0.2, 0.5, 0.8] for r in same.records)
    as_count = segbench.evaluate("semantic_boundary", gt=open_sbd(root, "val"),
                                 pred=root / "npy", thresholds=9, progress=False)
    assert as_count.provenance["params"]["nthresh"] == 9
    code = main(["semantic-boundary", "--gt", str(root / "cls"), "--pred",
                 str(root / "npy"), "--thresholds", "0.5,1.5", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "[0, 1]" in err


def test_cityscapes_class_folders_given_by_their_first(tmp_path):
    """Per-class folders in pyEdgeEval's Cityscapes layout
    (class_NNN/<city>/<id>_leftImg8bit.png): --pred PRED/class_001, as --help says,
    scores as --pred PRED (it was refused with a hint naming that very form)."""
    from segbench.cli import main
    _write_city(tmp_path / "gt")
    name = "frankfurt_000000_000001"
    for c in range(1, 20):
        folder = tmp_path / "pred" / f"class_{c:03d}" / "frankfurt"
        folder.mkdir(parents=True)
        Image.fromarray(np.full((20, 24), 80, np.uint8)).save(
            folder / f"{name}_leftImg8bit.png")
    got = {}
    for pred in ("pred", "pred/class_001"):
        out = tmp_path / ("run-" + pred.replace("/", "-"))
        assert main(["semantic-boundary", "--gt", str(tmp_path / "gt"), "--preset",
                     "cityscapes", "--pred", str(tmp_path / pred), "--out", str(out),
                     "--quiet"]) == 0
        got[pred] = json.loads((out / "result_semantic_boundary.json").read_text())["metrics"]
    assert got["pred"] == got["pred/class_001"]


def test_help_offers_no_bsds300_presentation(capsys):
    """SBD and Cityscapes have splits but no colour/grey presentations: the option is
    the boundary benchmark's, not this family's."""
    from segbench.cli import main as cli_main

    for command, offered in (("semantic-boundary", False), ("boundary", True)):
        with pytest.raises(SystemExit):
            cli_main([command, "--help"])
        text = capsys.readouterr().out
        assert ("--presentation" in text) is offered, command
        assert "--split" in text
