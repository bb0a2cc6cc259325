"""segbench compare: paired tests checked against scipy.stats on the same numbers, Holm by
hand, refusals (other images, stale records), the command line and its files; the
calibrated ODS and F_alpha of the boundary summary."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from scipy import ndimage, stats

import segbench
from segbench import evaluate
from segbench.algorithms.edges import gradient_magnitude
from segbench.cli import main
from segbench.comparison import compare, holm, write_comparison
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.errors import InputError
from segbench.io import write_soft_map
from segbench.result import json_ready as _plain


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three boundary runs (gradient, blurred gradient, noisy gradient) on 10 images."""
    base = tmp_path_factory.mktemp("compare")
    root = base / "data"
    items = make_synthetic_dataset(10, shape=(64, 80), n_annotators=3, seed=12)
    write_synthetic_dataset(root, items, split="test")
    rng = np.random.default_rng(1)
    preds = {"sharp": base / "sharp", "blurred": base / "blurred", "noisy": base / "noisy"}
    for d in preds.values():
        d.mkdir()
    for item in items:
        g = gradient_magnitude(item.image)
        write_soft_map(preds["sharp"] / f"{item.iid}.png", g)
        write_soft_map(preds["blurred"] / f"{item.iid}.png", ndimage.gaussian_filter(g, 2))
        write_soft_map(preds["noisy"] / f"{item.iid}.png",
                       np.clip(g + rng.uniform(0, 0.3, g.shape), 0, 1))
    out = {}
    for name, pred in preds.items():
        out[name] = base / f"run-{name}"
        evaluate("boundary", root, pred, out[name], split="test", name=name,
                 progress=False, plot=False)
    return root, preds, out


def test_holm_by_hand():
    # sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    got = holm([0.2, float("nan"), 0.01])
    assert got[0] == pytest.approx(0.2) and np.isnan(got[1]) and got[2] == pytest.approx(0.02)


def test_image_tests_equal_scipy(runs):
    _, _, out = runs
    res = compare(out["sharp"], out["blurred"], out["noisy"], resamples=200)
    assert [r["name"] for r in res["runs"]] == ["sharp", "blurred", "noisy"]
    assert res["item_score"] == "f" and len(res["pairs"]) == 3
    f = {n: np.array([row["f"] for row in segbench.Result.from_json(
        out[n] / "result_boundary.json").per_item]) for n in out}
    raw = {}
    for pair in res["pairs"]:
        a, b = f[pair["a"]], f[pair["b"]]
        t = pair["per_image"]
        assert (t["wins_a"], t["wins_b"], t["ties"]) == (
            int((a > b).sum()), int((a < b).sum()), int((a == b).sum()))
        want = stats.binomtest(t["wins_a"], t["wins_a"] + t["wins_b"]).pvalue
        assert t["sign_p"] == pytest.approx(want, rel=1e-12)
        w = stats.wilcoxon(a, b)
        assert t["wilcoxon_p"] == pytest.approx(w.pvalue, rel=1e-12)
        assert t["wilcoxon_statistic"] == pytest.approx(w.statistic)
        raw[pair["a"], pair["b"]] = t["wilcoxon_p"]
        ods = {r["name"]: r["metrics"]["ODS"] for r in res["runs"]}
        assert pair["bootstrap"]["ODS"]["diff"] == pytest.approx(ods[pair["a"]]
                                                                 - ods[pair["b"]])
    assert [p["per_image"]["wilcoxon_p_holm"] for p in res["pairs"]] == \
        pytest.approx(holm(list(raw.values())))


def test_pairs_equal_paired_differences_without_image_tests(runs):
    """The pairs' bootstrap is resampling.paired_differences on the same draws;
    ``per_image=False`` leaves the image tests out and changes nothing else."""
    from segbench.comparison import load_run
    from segbench.resampling import paired_differences
    _, _, out = runs
    full = compare(out["sharp"], out["noisy"], resamples=150, seed=3)
    lean = compare(out["sharp"], out["noisy"], resamples=150, seed=3, per_image=False)
    assert "per_image" not in lean["pairs"][0] and "per_image" in full["pairs"][0]
    assert json.dumps(lean["runs"]) == json.dumps(full["runs"])       # NaN-safe
    assert json.dumps(lean["pairs"][0]["bootstrap"]) == \
        json.dumps(full["pairs"][0]["bootstrap"])
    a, b = load_run(out["sharp"]), load_run(out["noisy"])
    stat = [r.family.resampler(r.ids, r.records, r.result.provenance["params"], {})
            for r in (a, b)]
    direct = paired_differences(*stat, len(a.ids), resamples=150, seed=3)
    for score, d in direct.items():
        got = full["pairs"][0]["bootstrap"][score]
        assert {k: got[k] for k in d} == pytest.approx(d, nan_ok=True)


def test_runs_in_memory_compare_as_their_folders(runs):
    root, preds, out = runs
    a = evaluate("boundary", root, preds["sharp"], split="test", name="sharp",
                 progress=False, plot=False)
    b = evaluate("boundary", root, preds["noisy"], split="test", name="noisy",
                 progress=False, plot=False)
    mem = compare(a, b, resamples=100)
    disk = compare(out["sharp"], out["noisy"], resamples=100)
    for r in mem["runs"] + disk["runs"]:
        r.pop("path")
    assert json.dumps(_plain(mem)) == json.dumps(_plain(disk))
    with pytest.raises(InputError, match="no per-image records"):
        compare(segbench.Result.from_json(out["sharp"] / "result_boundary.json"), b)


def test_other_images_are_refused_with_their_ids(runs, tmp_path):
    root, preds, out = runs
    ids = [row["id"] for row in segbench.Result.from_json(
        out["sharp"] / "result_boundary.json").per_item]
    part = tmp_path / "part"
    evaluate("boundary", root, preds["blurred"], part, split="test", ids=ids[:-2],
             progress=False, plot=False)
    with pytest.raises(InputError) as err:
        compare(out["sharp"], part)
    assert ids[-1] in str(err.value) and ids[-2] in str(err.value)
    with pytest.raises(InputError, match="at least two"):
        compare(out["sharp"])


def test_stale_records_are_refused(runs, tmp_path):
    root, preds, out = runs
    run = tmp_path / "run"
    shutil.copytree(out["sharp"], run)
    kept = (run / "result_boundary.json").read_bytes()
    evaluate("boundary", root, preds["sharp"], run, split="test", nthresh=20,
             progress=False, plot=False)
    (run / "result_boundary.json").write_bytes(kept)        # as if the later run died at the end
    with pytest.raises(InputError, match="not those its result was"):
        compare(run, out["noisy"])


def test_cli_compare_table_json_and_files(runs, tmp_path, capsys):
    _, _, out = runs
    dest = tmp_path / "cmp"
    args = ["compare", str(out["sharp"]), str(out["blurred"]), "--resamples", "100",
            "--out", str(dest)]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "sharp - blurred" in text and "Wilcoxon" in text
    data = json.loads((dest / "compare.json").read_text())
    assert data["settings"] == {"resamples": 100, "level": 0.95, "seed": 0}
    header = (dest / "per_item.csv").read_text().splitlines()[0].split(",")
    assert header[0] == "id" and "sharp:f" in header and "blurred:f" in header
    assert (dest / "pr_curve.png").stat().st_size > 1000
    assert main([*args[:-2], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pairs"][0]["a"] == "sharp"
    assert main(["compare", str(out["sharp"]), str(tmp_path)]) == 2
    assert "no result file" in capsys.readouterr().err


def test_calibrated_ods_is_the_test_curve_at_the_calibration_threshold(runs, tmp_path):
    root, preds, out = runs
    ids = [row["id"] for row in segbench.Result.from_json(
        out["sharp"] / "result_boundary.json").per_item]
    cal = tmp_path / "cal"
    c = evaluate("boundary", root, preds["blurred"], cal, split="test", ids=ids[:5],
                 progress=False, plot=False)
    t = evaluate("boundary", root, preds["blurred"], tmp_path / "test", split="test",
                 ids=ids[5:], calibrate_on=cal, progress=False, plot=False)
    r, p = np.array(c.curves["recall"]), np.array(c.curves["precision"])
    j = int(np.argmax(2 * p * r / np.where(p + r > 0, p + r, 1)))
    tr, tp = t.curves["recall"][j], t.curves["precision"][j]
    assert t.metrics["ODS_calibrated_threshold"] == pytest.approx(c.curves["thresholds"][j])
    assert t.metrics["ODS_calibrated_recall"] == pytest.approx(tr)
    assert t.metrics["ODS_calibrated"] == pytest.approx(2 * tp * tr / (tp + tr))
    assert t.metrics["ODS_calibrated"] <= t.metrics["ODS"] + 1e-12
    assert t.provenance["params"]["calibrated_on"] == str(cal)
    with pytest.raises(InputError, match="thresholds"):
        evaluate("boundary", root, preds["blurred"], split="test", ids=ids[5:], nthresh=20,
                 calibrate_on=cal, progress=False, plot=False)


def test_alpha_weights_the_f_measure(runs):
    root, preds, _ = runs
    kw = dict(split="test", progress=False, plot=False)
    base = evaluate("boundary", root, preds["sharp"], **kw)
    half = evaluate("boundary", root, preds["sharp"], alpha=0.5, **kw)
    assert half.metrics == base.metrics
    res = evaluate("boundary", root, preds["sharp"], alpha=0.25, **kw)
    assert res.provenance["params"]["alpha"] == 0.25
    r, p = np.array(res.curves["recall"]), np.array(res.curves["precision"])
    den = 0.25 * r + 0.75 * p
    np.testing.assert_allclose(res.curves["f"], np.where(den > 0, p * r / np.where(
        den > 0, den, 1), 0))                          # 0 where P = R = 0, as BSR
    m = res.metrics
    assert m["ODS"] == pytest.approx(m["ODS_precision"] * m["ODS_recall"] / (
        0.25 * m["ODS_recall"] + 0.75 * m["ODS_precision"]))
    assert m["ODS"] >= np.max(res.curves["f"]) - 1e-12
    with pytest.raises(InputError, match="alpha"):
        evaluate("boundary", root, preds["sharp"], alpha=1.5, **kw)


def test_region_and_superpixel_runs_compare(tmp_path):
    """Every resampled family compares: region on each image's OIS covering,
    superpixel on ASA, with the same ids and the run's own scores as observed."""
    from segbench.algorithms import slic
    from segbench.runners._superpixel import run_superpixel
    from segbench.io import write_label_map, write_segs
    root = tmp_path / "data"
    items = make_synthetic_dataset(6, shape=(48, 64), n_annotators=3, seed=5)
    write_synthetic_dataset(root, items, split="test")
    for d in ("segs_a", "segs_b", "sp_a", "sp_b"):
        (tmp_path / d).mkdir()
    for k, item in enumerate(items):
        write_segs(tmp_path / "segs_a" / f"{item.iid}.mat", [item.segmentations[0]])
        write_segs(tmp_path / "segs_b" / f"{item.iid}.mat",
                   [slic(item.image, 12), slic(item.image, 40)])
        write_label_map(tmp_path / "sp_a" / f"{item.iid}.png", slic(item.image, 20))
        write_label_map(tmp_path / "sp_b" / f"{item.iid}.png", slic(item.image, 60))
    region = [evaluate("region", root, tmp_path / d, tmp_path / f"run-{d}", split="test",
                       progress=False) for d in ("segs_a", "segs_b")]
    res = compare(tmp_path / "run-segs_a", tmp_path / "run-segs_b", resamples=100)
    assert res["item_score"] == "ois_covering"
    assert res["runs"][0]["metrics"]["covering_ODS"] == pytest.approx(
        region[0].metrics["covering_ODS"])
    a = np.array([r["ois_covering"] for r in region[0].per_item])
    b = np.array([r["ois_covering"] for r in region[1].per_item])
    t = res["pairs"][0]["per_image"]
    assert (t["wins_a"], t["wins_b"]) == (int((a > b).sum()), int((a < b).sum()))
    sp = [run_superpixel(root, tmp_path / d, out=tmp_path / f"run-{d}", split="test",
                         progress=False) for d in ("sp_a", "sp_b")]
    res = compare(*sp, resamples=100)
    assert res["family"] == "superpixel" and res["item_score"] == "asa"
    assert res["runs"][1]["metrics"]["asa"] == pytest.approx(sp[1].metrics["asa"])
    with pytest.raises(InputError, match="different families"):
        compare(tmp_path / "run-segs_a", tmp_path / "run-sp_a")


def test_out_folder_of_other_files_is_refused(runs, tmp_path):
    _, _, out = runs
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "compare.json").write_text("my own notes\n")
    res = compare(out["sharp"], out["blurred"], resamples=50)
    with pytest.raises(InputError, match="did not make"):
        write_comparison(mine, res, [out["sharp"], out["blurred"]])
    assert (mine / "compare.json").read_text() == "my own notes\n"
    dest = tmp_path / "cmp"
    write_comparison(dest, res, [out["sharp"], out["blurred"]])
    write_comparison(dest, res, [out["sharp"], out["blurred"]])   # its own: replaced
    assert json.loads((dest / "compare.json").read_text())["n_images"] == 10


@pytest.mark.parametrize("field, value", [("per_item", 7), ("per_item", [7]),
                                          ("metrics", [1]), ("family", None),
                                          ("intervals", {"ODS": 3}),
                                          ("provenance", "x")])
def test_cli_compare_names_a_malformed_result_file(runs, tmp_path, capsys, field, value):
    """A result.json of the wrong shape is one line naming it (exit 2), from compare and
    from the site, through the check Result.from_json makes; never a traceback."""
    _, _, out = runs
    bad = tmp_path / "bad"
    shutil.copytree(out["sharp"], bad)
    data = json.loads((bad / "result_boundary.json").read_text())
    data[field] = value
    (bad / "result_boundary.json").write_text(json.dumps(data))
    assert main(["compare", str(out["blurred"]), str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(bad / "result_boundary.json") in err, err
    assert err.startswith("segbench: error:") and "not a segbench result" in err
    with pytest.raises(InputError, match="not a segbench result"):
        segbench.Result.from_json(bad / "result_boundary.json")
    from segbench.report._site_runs import load_run as site_load_run
    with pytest.raises(InputError, match="not a segbench result") as exc:
        site_load_run(bad)
    assert str(bad / "result_boundary.json") in str(exc.value)


@pytest.mark.parametrize("edit", ["row", "curve"])
def test_cli_compare_names_a_result_file_of_wrong_values(runs, tmp_path, capsys, edit):
    _, _, out = runs
    bad = tmp_path / "bad"
    shutil.copytree(out["sharp"], bad)
    data = json.loads((bad / "result_boundary.json").read_text())
    if edit == "row":
        data["per_item"][0]["f"] = "high"
    else:
        data["curves"]["recall"] = 7
    (bad / "result_boundary.json").write_text(json.dumps(data))
    assert main(["compare", str(out["blurred"]), str(bad), "--resamples", "20",
                 "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(bad / "result_boundary.json") in err, err
    assert "not a segbench result" in err


def test_cli_calibrate_on_checks_the_name_and_settings_and_records_the_run(runs, tmp_path,
                                                                          capsys):
    """--calibrate-on another algorithm's run is refused in one line unless
    --calibrate-name names it; a run of other settings is refused naming them; the
    threshold's run (folder and name) is recorded in result.json."""
    root, preds, out = runs
    ids = [row["id"] for row in segbench.Result.from_json(
        out["sharp"] / "result_boundary.json").per_item]
    base = ["boundary", "--gt", str(root), "--split", "test", "--ids", ",".join(ids[5:]),
            "--no-plot", "--quiet"]
    cal = tmp_path / "cal-sharp"
    assert main([*base[:5], "--ids", ",".join(ids[:5]), "--pred", str(preds["sharp"]),
                 "--out", str(cal), "--no-plot", "--quiet"]) == 0
    capsys.readouterr()
    dest = tmp_path / "blurred-test"
    assert main([*base, "--pred", str(preds["blurred"]), "--out", str(dest),
                 "--calibrate-on", str(cal)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'sharp'" in err and "'blurred'" in err
    assert "--calibrate-name" in err and str(cal) in err
    assert not dest.exists()                           # refused before anything is written
    assert main([*base, "--pred", str(preds["blurred"]), "--out", str(dest),
                 "--calibrate-on", str(cal), "--calibrate-name", "sharp"]) == 0
    capsys.readouterr()
    params = json.loads((dest / "result_boundary.json").read_text())["provenance"]["params"]
    assert params["calibrated_on"] == str(cal) and params["calibrated_name"] == "sharp"
    assert main([*base, "--pred", str(preds["sharp"]), "--out", str(tmp_path / "t2"),
                 "--calibrate-on", str(cal), "--max-dist", "0.01"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "max_dist 0.0075 there, 0.01 here" in err
    assert main([*base, "--pred", str(preds["sharp"]), "--out", str(tmp_path / "t3"),
                 "--calibrate-on", str(cal), "--calibrate-name", "other"]) == 2
    assert "not 'other'" in capsys.readouterr().err


def test_comparison_object_tables_and_json(runs, tmp_path):
    """compare returns a Comparison: its pandas tables hold the same numbers as its
    mapping, and its JSON is compare.json's."""
    pd = pytest.importorskip("pandas")
    _, _, out = runs
    res = compare(out["sharp"], out["blurred"], out["noisy"], resamples=100)
    assert isinstance(res, segbench.comparison.Comparison) and res.family == "boundary"
    assert res.names == ["sharp", "blurred", "noisy"]
    pairs = res.to_pandas()
    assert isinstance(pairs, pd.DataFrame) and len(pairs) == 3 * len(
        res["pairs"][0]["bootstrap"])
    for pair in res["pairs"]:
        row = pairs.loc[(pair["a"], pair["b"], "ODS")]
        want = pair["bootstrap"]["ODS"]
        assert (row["diff"], row["p_holm"]) == (want["diff"], want["p_holm"])
        assert row["wilcoxon_p_holm"] == pair["per_image"]["wilcoxon_p_holm"]
    table = res.to_pandas("runs")
    for r in res["runs"]:
        assert table.loc[(r["name"], "ODS"), "value"] == r["metrics"]["ODS"]
        assert table.loc[(r["name"], "ODS"), "lo"] == r["intervals"]["ODS"][0]
    with pytest.raises(ValueError, match="pairs' or 'runs'"):
        res.to_pandas("images")
    written = res.write(tmp_path / "cmp", [out["sharp"], out["blurred"], out["noisy"]])
    assert json.loads(written[0].read_text()) == json.loads(res.to_json())


def test_the_old_module_name_still_imports_with_a_deprecation_warning():
    """``segbench.compare`` is the function; the module is ``segbench.comparison``.
    Code that imported from the module keeps working for one release, warned."""
    import segbench.comparison as comparison
    with pytest.warns(DeprecationWarning, match="segbench.comparison"):
        from segbench.compare import load_run as old
    assert old is comparison.load_run
    import segbench.compare  # noqa: F401 - the module name, as old code wrote it
    assert segbench.compare is comparison.compare and callable(segbench.compare)


def test_write_after_compare_on_some_ids_holds_those_images(runs, tmp_path):
    """QA (helper-47): Comparison.write after compare(ids=...) raised IndexError, or
    wrote every image's rows while compare.json said 5."""
    import csv
    _, _, out = runs
    ids = [row["id"] for row in segbench.Result.from_json(
        out["sharp"] / "result_boundary.json").per_item][:5]
    with pytest.warns(UserWarning, match="below 10 images"):
        cmp = segbench.compare(out["sharp"], out["blurred"], ids=ids, resamples=20)
    written = cmp.write(tmp_path / "cmp", [out["sharp"], out["blurred"]])
    rows = list(csv.reader(open(written[1])))
    assert [r[0] for r in rows[1:]] == sorted(ids)
    assert json.loads(written[0].read_text())["n_images"] == 5
    with pytest.raises(InputError, match="pass the runs it compared"):
        cmp.write(tmp_path / "cmp2", [out["sharp"]])


def test_per_image_tests_come_from_the_checked_records(runs, tmp_path, capsys):
    """QA (helper-47): a per_item score edited in result_boundary.json moved the sign
    and Wilcoxon tests while the bootstrap (from the records) did not."""
    _, _, out = runs
    bad = tmp_path / "edited"
    shutil.copytree(out["sharp"], bad)
    data = json.loads((bad / "result_boundary.json").read_text())
    data["per_item"][0]["f"] = 0.1
    (bad / "result_boundary.json").write_text(json.dumps(data))
    assert main(["compare", str(out["blurred"]), str(bad), "--resamples", "20"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(bad / "result_boundary.json") in err, err
    assert "per-image scores are not those of the records" in err


def test_a_run_given_twice_is_refused(runs, tmp_path, capsys):
    """QA (helper-47): compare (and the site) took one folder twice and compared it
    with itself, naming the second copy by its absolute path."""
    root, _, out = runs
    assert main(["compare", str(out["sharp"]), str(out["blurred"]),
                 str(out["sharp"]) + "/"]) == 2
    err = capsys.readouterr().err
    assert "is given twice" in err and err.count("\n") == 1, err
    assert main(["site", "--gt", str(root), "--results", str(out["sharp"]),
                 str(out["sharp"]), "--out", str(tmp_path / "site"), "--quiet"]) == 2
    assert "is given twice" in capsys.readouterr().err
