"""The semantic family on the engine: equal to SemanticEval (fixture cases, synthetic
folders, per-pair rows), suffix pairing in datasets, outputs, records (resume, repair),
the command line, and a Dask cluster giving the bytes of one local worker."""

from __future__ import annotations

import functools
import json
import subprocess
import sys

import numpy as np
import pytest

import segbench.engine._run as engine_run
from conftest import FIXTURES, require
from segbench import Result
from segbench.runners._semantic import evaluate_semantic
from segbench.cli import main
from segbench.datasets import LabelMapFolder, pair_folders, predictions_by_suffix
from segbench.engine import RECORDS_DIR, RecordWarning, run
from segbench.errors import InputError
from segbench.io import write_label_map
from segbench.result import _plain
from segbench.semantic import SEMANTIC, SemanticEval

ROOT = FIXTURES / "semantic" / "public"
CITY = dict(recursive=True, gt_suffix="_gtFine_labelTrainIds.png",
            pred_suffix="_leftImg8bit.png")


def _pair(rng, shape, classes, ignore=0.05, wrong=0.1):
    """A blob ground truth (some pixels 255) and a prediction with some pixels wrong."""
    h, w = shape
    cell = 6
    small = rng.integers(0, classes, (h // cell + 2, w // cell + 2))
    gt = np.repeat(np.repeat(small, cell, 0), cell, 1)[:h, :w].copy()
    gt[rng.uniform(size=shape) < ignore] = 255
    pred = np.where(gt == 255, rng.integers(0, classes, shape), gt)
    flip = rng.uniform(size=shape) < wrong
    pred[flip] = rng.integers(0, classes, flip.sum())
    return gt, pred


def _city(root, n=5, seed=11, classes=4):
    """Cityscapes-style folders: ground truth per city with a suffix, flat predictions."""
    rng = np.random.default_rng(seed)
    for folder in ("gt/aachen", "gt/bonn", "pred"):
        (root / folder).mkdir(parents=True)
    pairs = {}
    for i in range(n):
        key = f"{['aachen', 'bonn'][i % 2]}_{i:06d}_000019"
        gt, pred = _pair(rng, (24 + 3 * i, 48 - 2 * i), classes)
        write_label_map(root / "gt" / key.split("_")[0] / f"{key}_gtFine_labelTrainIds.png",
                        gt)
        write_label_map(root / "pred" / f"{key}_leftImg8bit.png", pred)
        pairs[key] = (gt, pred)
    (root / "gt" / "aachen" / "aachen_000000_000019_gtFine_color.png").write_bytes(b"x")
    return root / "gt", root / "pred", pairs


def _fed(pairs, classes=4, **kw) -> SemanticEval:
    ev = SemanticEval(classes, **kw)
    for gt, pred in pairs:
        ev.update(gt, pred)
    return ev


def _same(res, ev) -> None:
    """The engine's result says exactly what the evaluator says."""
    assert _plain(res.metrics) == _plain(ev.report()["metrics"])
    assert _plain(res.per_class) == _plain(ev.report()["per_class"])
    assert _plain(res.detail.results()) == _plain(ev.results())
    np.testing.assert_array_equal(res.detail.confusion(), ev.confusion())


# --- equal to SemanticEval -------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _cases():
    return json.loads((require(ROOT) / "expected.json").read_text())["cases"]


def test_family_equals_evaluator_on_every_fixture_case(tmp_path):
    cases = _cases()
    for case, spec in sorted(cases.items()):
        p = spec["params"]
        gt_dir, pred_dir = tmp_path / case / "gt", tmp_path / case / "pred"
        gt_dir.mkdir(parents=True)
        pred_dir.mkdir()
        pairs = []
        with np.load(ROOT / spec["input"]) as z:
            for i in range(len(spec["shapes"])):
                np.save(gt_dir / f"{i:03d}_gt.npy", z[f"gt{i}"])
                np.save(pred_dir / f"{i:03d}_pred.npy", z[f"pred{i}"])
                pairs.append((z[f"gt{i}"], z[f"pred{i}"]))
        kw = dict(ignore_index=p["ignore_index"], reduce_zero_label=p["reduce_zero_label"])
        res = evaluate_semantic(gt_dir, pred_dir, classes=p["num_classes"],
                                gt_suffix="_gt.npy", pred_suffix="_pred.npy",
                                progress=False, **kw)
        ev = _fed(pairs, p["num_classes"], **kw)
        _same(res, ev)
        assert res.provenance["params"]["n_images"] == len(pairs) == len(res.per_item)
        for (gt, pred), row in zip(pairs, res.per_item):   # each row: that pair alone
            one = _fed([(gt, pred)], p["num_classes"], **kw).results()
            assert row["n_pixels"] == one["n_pixels"]
            assert _plain([row["aAcc"], row["mIoU"], row["mBIoU"]]) == \
                _plain([one["aAcc"], one["mIoU"], one["mBIoU"]]), case
            assert row["n_classes"] == sum(not np.isnan(r["IoU"]) for r in one["per_class"])
    assert len(cases) >= 50


@pytest.mark.parametrize("kw", [{}, dict(boundary_dilation=None),
                                dict(ignore_index=None, boundary_dilation=0.1),
                                dict(classes=["road", "car", "sky", "person", "tree"])])
def test_family_equals_update_folders_and_arrays(tmp_path, kw):
    gt_dir, pred_dir, pairs = _city(tmp_path)
    if kw.get("ignore_index", 255) is None:   # every pixel counts: no 255 left in gt
        for key, (gt, _pred) in pairs.items():
            gt[gt == 255] = 0
            write_label_map(gt_dir / key.split("_")[0] / f"{key}_gtFine_labelTrainIds.png",
                            gt)
    kw = dict(kw)
    classes = kw.pop("classes", 4)
    res = evaluate_semantic(gt_dir, pred_dir, classes=classes, progress=False, **CITY, **kw)
    ev = _fed([pairs[k] for k in sorted(pairs)], classes, **kw)
    _same(res, ev)
    folders = SemanticEval(classes, **kw)
    assert folders.update_folders(gt_dir, pred_dir, **CITY) == len(pairs)
    assert _plain(folders.results()) == _plain(ev.results())
    assert [row["id"] for row in res.per_item] == sorted(pairs)
    assert ("mBIoU" in res.per_item[0]) == (kw.get("boundary_dilation", 0.02) is not None)
    with pytest.raises(AssertionError):   # the comparison can fail: another split
        _same(res, _fed([pairs[k] for k in sorted(pairs)[1:]], classes, **kw))


def test_engine_run_takes_the_suffix_mapping(tmp_path):
    gt_dir, pred_dir, pairs = _city(tmp_path)
    ds = LabelMapFolder(gt_dir, suffix=CITY["gt_suffix"], recursive=True)
    preds = predictions_by_suffix(ds, pred_dir, suffix=CITY["pred_suffix"])
    res, = run(SEMANTIC, ds, preds, params={"classes": 4}, name="x", progress=False)
    assert res.name == "x" and res.family == "semantic"
    _same(res, _fed([pairs[k] for k in sorted(pairs)]))


# --- pairing by suffix (datasets) ------------------------------------------------------


def test_label_map_folder_and_pairing_errors(tmp_path):
    gt_dir, pred_dir, pairs = _city(tmp_path, n=3)
    ds = LabelMapFolder(gt_dir, suffix=CITY["gt_suffix"], recursive=True)
    assert ds.ids() == sorted(pairs) and ds.splits == ("test",)
    item = ds[sorted(pairs)[0]]
    assert item.sources == (item.gt_path,) and item.gt_path.name.endswith(CITY["gt_suffix"])
    np.testing.assert_array_equal(item.annotations[0].segmentation, pairs[item.iid][0])
    triples = pair_folders(gt_dir, pred_dir, **CITY)
    assert [k for k, _, _ in triples] == sorted(pairs)
    assert all(p == pred_dir / f"{k}_leftImg8bit.png" for k, _, p in triples)

    missing = sorted(pairs)[1]
    (pred_dir / f"{missing}_leftImg8bit.png").rename(tmp_path / "aside.png")
    with pytest.raises(InputError, match=f"1 of 3 ground-truth files have no prediction "
                                         f"named <key>_leftImg8bit.png: {missing}"):
        predictions_by_suffix(ds, pred_dir, suffix=CITY["pred_suffix"])
    # a key outside the ids is not needed
    assert list(predictions_by_suffix([sorted(pairs)[0]], pred_dir,
                                      suffix=CITY["pred_suffix"])) == [sorted(pairs)[0]]
    (tmp_path / "aside.png").rename(pred_dir / f"{missing}_leftImg8bit.png")
    dup = pred_dir / "x" / f"{sorted(pairs)[0]}_leftImg8bit.png"
    dup.parent.mkdir()
    dup.write_bytes(b"")
    with pytest.raises(InputError, match="1 keys name several prediction files"):
        predictions_by_suffix(ds, pred_dir, suffix=CITY["pred_suffix"], recursive=True)
    with pytest.raises(InputError, match="no ground-truth file ending in '.png' \\(pass"):
        LabelMapFolder(gt_dir)
    with pytest.raises(InputError, match="not found"):
        LabelMapFolder(tmp_path / "nope")
    with pytest.raises(InputError, match="non-empty"):
        pair_folders(gt_dir, pred_dir, gt_suffix="")
    (gt_dir / "bonn" / "sub").mkdir()
    (gt_dir / "bonn" / "sub" / f"{sorted(pairs)[1]}_gtFine_labelTrainIds.png").write_bytes(
        b"")
    with pytest.raises(InputError, match="several ground-truth files"):
        LabelMapFolder(gt_dir, suffix=CITY["gt_suffix"], recursive=True)


# --- outputs, records, command line ----------------------------------------------------


def _cli(gt_dir, pred_dir, out, *extra):
    argv = ["semantic", "--gt", str(gt_dir), "--pred", str(pred_dir), "--classes", "4",
            "--recursive", "--gt-suffix", CITY["gt_suffix"], "--pred-suffix",
            CITY["pred_suffix"], "--quiet", *extra]
    return main(argv + (["--out", str(out)] if out is not None else []))


def _files(out) -> tuple:
    """per_item.csv as bytes, result.json without its creation time."""
    data = json.loads((out / "result_semantic.json").read_text())
    data["provenance"].pop("created")
    return (out / "per_item_semantic.csv").read_bytes(), data


def test_out_writes_result_and_csv_and_a_rerun_reuses_records(tmp_path, monkeypatch,
                                                               capsys):
    gt_dir, pred_dir, pairs = _city(tmp_path)
    out = tmp_path / "run"
    assert _cli(gt_dir, pred_dir, out) == 0
    text = capsys.readouterr().out
    assert text.startswith("5 pairs") and "mBIoU" in text and f"output: {out}" in text
    res = Result.from_json(out / "result_semantic.json")
    ev = _fed([pairs[k] for k in sorted(pairs)])
    assert res.family == "semantic" and res.name == "pred"
    assert _plain(res.metrics) == _plain(ev.report()["metrics"])
    saved = json.loads((out / "result_semantic.json").read_text())
    assert saved["per_class"] == _plain(ev.report()["per_class"])
    prov = saved["provenance"]
    assert prov["status"] == "parity_verified" and "mmsegmentation" in str(prov)
    assert prov["params"]["n_pixels"] == ev.n_pixels and prov["params"]["n_images"] == 5
    lines = (out / "per_item_semantic.csv").read_text().splitlines()
    assert lines[0] == "id,n_pixels,n_classes,aAcc,mIoU,mBIoU" and len(lines) == 6
    assert lines[1].startswith(sorted(pairs)[0] + ",")
    assert len(list((out / RECORDS_DIR / "semantic").glob("*.json"))) == 5
    before = _files(out)

    def boom(group):
        raise AssertionError("recomputed a saved record")
    monkeypatch.setattr(engine_run, "_evaluate_group", boom)
    assert _cli(gt_dir, pred_dir, out) == 0
    assert _files(out) == before
    with pytest.raises(AssertionError, match="recomputed"):   # other settings
        _cli(gt_dir, pred_dir, out, "--no-boundary-iou")
    key = sorted(pairs)[2]
    write_label_map(pred_dir / f"{key}_leftImg8bit.png", pairs[key][1] * 0)
    with pytest.raises(AssertionError, match="recomputed"):   # a changed file
        _cli(gt_dir, pred_dir, out)


def test_damaged_records_are_recomputed_with_a_warning(tmp_path):
    gt_dir, pred_dir, _ = _city(tmp_path)
    out = tmp_path / "run"
    first = evaluate_semantic(gt_dir, pred_dir, out, classes=4, progress=False, **CITY)
    records = sorted((out / RECORDS_DIR / "semantic").glob("*.json"))
    untouched = records[4].stat().st_mtime_ns
    records[0].write_text(records[0].read_text()[:60])            # killed while writing
    damage = {1: lambda r: r.update(conf_index=[16] + r["conf_index"][1:]),  # outside CxC
              2: lambda r: r.update(conf_count=[1.5] * len(r["conf_count"])),
              3: lambda r: r.update(format=99)}
    for i, change in damage.items():
        data = json.loads(records[i].read_text())
        change(data["record"])
        records[i].write_text(json.dumps(data))
    with pytest.warns(RecordWarning) as caught:
        again = evaluate_semantic(gt_dir, pred_dir, out, classes=4, progress=False, **CITY)
    named = sorted(str(w.message).split(":")[0].rsplit("/", 1)[-1] for w in caught)
    assert named == [r.name for r in records[:4]]
    assert records[4].stat().st_mtime_ns == untouched
    assert _plain(again.metrics) == _plain(first.metrics)
    assert _plain(again.per_item) == _plain(first.per_item)


def test_record_json_round_trip_and_validation():
    rec = (np.array([0, 3, 5]), np.array([7, 1, 2]), np.array([3, 0, 1]),
           np.array([2, 1, 1]), np.array([2, 0, 1]))
    payload = json.loads(json.dumps(SEMANTIC.to_json(rec)))
    back = SEMANTIC.from_json(payload)
    for a, b in zip(rec, back):
        np.testing.assert_array_equal(a, b)
    for bad in ({**payload, "conf_index": [0, 3, 3]}, {**payload, "conf_count": [7, 0, 2]},
                {**payload, "gt_band": [3, 0]}, {**payload, "band_inter": [4, 0, 1]},
                {**payload, "num_classes": True}, {**payload, "pred_band": "x"},
                {k: v for k, v in payload.items() if k != "gt_band"}, [payload]):
        with pytest.raises((KeyError, TypeError, ValueError)):
            SEMANTIC.from_json(bad)


def test_cli_ids_name_json_and_errors(tmp_path, capsys):
    gt_dir, pred_dir, pairs = _city(tmp_path)
    keys = sorted(pairs)
    (pred_dir / f"{keys[3]}_leftImg8bit.png").unlink()   # outside --ids: not needed
    assert _cli(gt_dir, pred_dir, None, "--ids", f"{keys[0]},{keys[2]}", "--name", "mine",
                "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["name"] == "mine" and [r["id"] for r in out["per_item"]] == keys[0:3:2]
    assert out["metrics"] == _plain(_fed([pairs[keys[0]], pairs[keys[2]]]).report()[
        "metrics"])
    assert _cli(gt_dir, pred_dir, None) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "1 of 5 ground-truth files" in err and keys[3] in err
    assert _cli(gt_dir, pred_dir, None, "--reduce-zero-label", "--ignore-index", "0") == 2
    assert "ignore_index=255" in capsys.readouterr().err


def test_settings_none_and_bad_values():
    p = SEMANTIC.resolve({"classes": 3, "ignore_index": None, "boundary_dilation": None})
    assert p == {"classes": 3, "ignore_index": None, "reduce_zero_label": False,
                 "boundary_dilation": None}
    assert SEMANTIC.resolve({"classes": ("a", "b")})["classes"] == ["a", "b"]
    for bad in ({}, {"classes": 0}, {"classes": ["a", "a"]}, {"classes": "abc"},
                {"classes": 3, "boundary_dilation": 2.0},
                {"classes": 3, "reduce_zero_label": True, "ignore_index": None}):
        with pytest.raises(InputError):
            SEMANTIC.resolve(bad)


def test_family_module_and_help_import_no_engine_or_numpy():
    code = ("import sys, numpy as np, tempfile, pathlib\n"
            "from segbench.semantic import SEMANTIC, SemanticEval\n"
            "assert 'segbench.engine' not in sys.modules\n"
            "from segbench.io import write_label_map\n"
            "d = pathlib.Path(tempfile.mkdtemp())\n"
            "(d / 'g').mkdir(); (d / 'p').mkdir()\n"
            "write_label_map(d / 'g' / 'a.png', np.zeros((4, 4), int))\n"
            "write_label_map(d / 'p' / 'a.png', np.zeros((4, 4), int))\n"
            # the folder call is the engine's folder run (issue 30)
            "assert SemanticEval(2).update_folders(d / 'g', d / 'p', workers=2) == 1\n"
            "assert 'segbench.engine' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)
    code = ("import sys\nfrom segbench.cli import main\n"
            "try:\n    main(['semantic', '--help'])\nexcept SystemExit:\n    pass\n"
            "assert not {'numpy', 'scipy', 'numba'} & set(sys.modules), sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "--scheduler" in done.stdout and "--split" not in done.stdout


# --- workers and a Dask cluster --------------------------------------------------------


def test_workers_and_dask_scheduler_are_byte_identical(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    gt_dir, pred_dir, _ = _city(tmp_path, n=8)
    assert _cli(gt_dir, pred_dir, tmp_path / "w1", "--workers", "1") == 0
    assert _cli(gt_dir, pred_dir, tmp_path / "w2", "--workers", "2") == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        assert _cli(gt_dir, pred_dir, tmp_path / "dask", "--scheduler",
                    cluster.scheduler_address) == 0
    one = _files(tmp_path / "w1")
    assert one == _files(tmp_path / "w2") == _files(tmp_path / "dask")
    assert one[0].count(b"\n") == 9


def test_a_partly_resumed_run_gives_the_same_result(tmp_path, capsys):
    # records counted now (int32 cells) and records read back from JSON (int64) sum to
    # the same split and the same per-pair rows
    gt_dir, pred_dir, _pairs = _city(tmp_path)
    out = tmp_path / "run"
    assert _cli(gt_dir, pred_dir, out) == 0
    first = {name: (out / name).read_text()
             for name in ("result_semantic.json", "per_item_semantic.csv")}
    saved = sorted((out / RECORDS_DIR / "semantic").glob("*.json"))
    for path in saved[:2]:
        path.unlink()
    assert _cli(gt_dir, pred_dir, out) == 0
    assert len(list((out / RECORDS_DIR / "semantic").glob("*.json"))) == len(saved)
    again = json.loads((out / "result_semantic.json").read_text())
    before = json.loads(first["result_semantic.json"])
    assert again["metrics"] == before["metrics"]
    assert again["per_class"] == before["per_class"]
    assert (out / "per_item_semantic.csv").read_text() == first["per_item_semantic.csv"]
