"""Bootstrap over images: each family's fast statistic against a slow direct resampling
(copies of the drawn records summarized as a run), the interval and p-value rules,
determinism, and the --ci outputs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from segbench import Result, evaluate
from segbench.algorithms import slic
from segbench.algorithms.edges import gradient_magnitude
from segbench.runners._semantic import evaluate_semantic
from segbench.runners._superpixel import run_superpixel
from segbench.cli import main
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.errors import InputError
from segbench.io import write_label_map, write_segs, write_soft_map
from segbench.resampling import (bootstrap_indices, draws, index_weights, intervals,
                                 paired_differences)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """7 synthetic images, 3 annotators: soft maps, segs .mat, SLIC label maps."""
    base = tmp_path_factory.mktemp("resample")
    root = base / "data"
    items = make_synthetic_dataset(7, shape=(64, 80), n_annotators=3, seed=8)
    write_synthetic_dataset(root, items, split="test")
    soft, segs, sp = base / "soft", base / "segs", base / "sp"
    for d in (soft, segs, sp):
        d.mkdir()
    for k, item in enumerate(items):
        write_soft_map(soft / f"{item.iid}.png", gradient_magnitude(item.image))
        write_segs(segs / f"{item.iid}.mat", [item.segmentations[k % 3],
                                              item.segmentations[(k + 1) % 3]])
        write_label_map(sp / f"{item.iid}.png", slic(item.image, 20 + 5 * k))
    return root, items


def _pred(root, kind):
    return root.parent / kind


def _direct(result: Result, family, idx: np.ndarray, keys) -> dict:
    """Summarize copies of the drawn records, one draw at a time (the slow way)."""
    params = {**family.resolve(result.provenance["params"]),
              **family.resolve_summary(result.provenance["params"])}
    ids = [row["id"] for row in result.per_item]
    out = {k: [] for k in keys}
    for row in idx:
        drawn = [result.records[i] for i in row]
        m = family.summarize([f"{ids[i]}_{j}" for j, i in enumerate(row)], drawn,
                             params, {}).metrics
        for k in keys:
            out[k].append(m[k])
    return {k: np.array(v, dtype=np.float64) for k, v in out.items()}


def _check_family(result: Result, family, *, exact: bool):
    n = len(result.per_item)
    idx = bootstrap_indices(n, 40, seed=3)
    params = {**family.resolve(result.provenance["params"]),
              **family.resolve_summary(result.provenance["params"])}
    fast = draws(family.resampler(None, result.records, params, {}), idx, n)
    slow = _direct(result, family, idx, fast.keys())
    assert fast.keys() == slow.keys() and len(fast) >= 3
    for k in fast:
        if exact:
            np.testing.assert_array_equal(fast[k], slow[k], err_msg=k)
        else:
            np.testing.assert_allclose(fast[k], slow[k], rtol=1e-12, atol=1e-13,
                                       err_msg=k)
        # at weight 1 per image the statistic is the run's own score
        one = family.resampler(None, result.records, params, {})(np.ones((1, n)))[k][0]
        np.testing.assert_allclose(one, result.metrics[k], rtol=1e-12, atol=1e-13,
                                   equal_nan=True, err_msg=k)


def test_boundary_statistic_equals_direct_resampling(data):
    from segbench.boundary import BOUNDARY
    root, _ = data
    res = evaluate("boundary", root, _pred(root, "soft"), split="test", progress=False,
                   plot=False)
    _check_family(res, BOUNDARY, exact=True)     # integer sums: the very same bits


def test_boundary_statistic_with_alpha_and_calibration(data):
    from segbench.boundary import BOUNDARY
    root, _ = data
    base = evaluate("boundary", root, _pred(root, "soft"), split="test", progress=False,
                    plot=False)
    t = base.curves["thresholds"][40]
    res = evaluate("boundary", root, _pred(root, "soft"), split="test", progress=False,
                   plot=False, alpha=0.3, calibrated_threshold=t)
    assert "ODS_calibrated" in res.metrics
    _check_family(res, BOUNDARY, exact=True)


def test_region_statistic_equals_direct_resampling(data):
    from segbench.region import REGION
    root, _ = data
    res = evaluate("region", root, _pred(root, "segs"), split="test", progress=False)
    _check_family(res, REGION, exact=False)      # means: float sums in another order


def test_superpixel_statistic_equals_direct_resampling(data):
    from segbench.superpixel import SUPERPIXEL
    root, _ = data
    res = run_superpixel(root, _pred(root, "sp"), split="test", progress=False)
    _check_family(res, SUPERPIXEL, exact=False)


def test_semantic_statistic_equals_direct_resampling(tmp_path):
    from segbench.semantic import SEMANTIC
    rng = np.random.default_rng(4)
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    for i in range(9):
        gt = rng.integers(0, 4, (20, 24))
        gt[rng.uniform(size=gt.shape) < 0.1] = 255
        pred = np.where(rng.uniform(size=gt.shape) < 0.3, rng.integers(0, 5, gt.shape),
                        np.where(gt == 255, 0, gt))
        write_label_map(tmp_path / "gt" / f"im{i}.png", gt)
        write_label_map(tmp_path / "pred" / f"im{i}.png", pred)
    res = evaluate_semantic(tmp_path / "gt", tmp_path / "pred", classes=5,
                            progress=False)
    _check_family(res, SEMANTIC, exact=False)


def test_weights_count_the_draws():
    idx = np.array([[0, 0, 2], [1, 2, 2]])
    np.testing.assert_array_equal(index_weights(idx, 3), [[2, 0, 1], [0, 1, 2]])
    a = bootstrap_indices(5, 7, seed=1)
    np.testing.assert_array_equal(a, bootstrap_indices(5, 7, seed=1))
    assert not np.array_equal(a, bootstrap_indices(5, 7, seed=2))


def test_interval_is_the_percentile_of_the_draws():
    x = np.arange(10, dtype=float) ** 2

    def mean(w):
        return {"mean": w @ x / x.size}
    got = intervals(mean, x.size, resamples=300, level=0.9, seed=5)["mean"]
    idx = bootstrap_indices(x.size, 300, seed=5)
    direct = np.array([x[row].mean() for row in idx])
    np.testing.assert_allclose(got, np.quantile(direct, [0.05, 0.95]), rtol=1e-12)


def test_paired_p_value_rule():
    rng = np.random.default_rng(0)
    x = rng.normal(size=30)
    y = x + 0.05 + rng.normal(scale=0.5, size=30)

    def mean_of(v):
        return lambda w: {"m": w @ v / v.size}
    got = paired_differences(mean_of(y), mean_of(x), 30, resamples=500, seed=2)["m"]
    idx = bootstrap_indices(30, 500, seed=2)
    d = np.array([y[row].mean() - x[row].mean() for row in idx])
    below, above = (d <= 0).sum(), (d >= 0).sum()
    assert got["p"] == pytest.approx(min(1, 2 * (min(below, above) + 1) / 501))
    assert got["diff"] == pytest.approx(y.mean() - x.mean())
    assert (got["lo"], got["hi"]) == pytest.approx(tuple(np.quantile(d, [0.025, 0.975])))
    same = paired_differences(mean_of(x), mean_of(x), 30, resamples=100)["m"]
    assert same["p"] == 1.0 and same["diff"] == 0.0


@pytest.mark.parametrize("bad", [{"resamples": 0}, {"level": 1.5}, {"B": 3}])
def test_bad_settings_are_refused(data, bad):
    root, _ = data
    with pytest.raises(InputError):
        evaluate("boundary", root, _pred(root, "soft"), split="test", progress=False,
                 plot=False, ci=bad)


def test_cli_ci_prints_and_saves_intervals(data, tmp_path, capsys):
    root, _ = data
    out = tmp_path / "run"
    args = ["boundary", "--gt", str(root), "--split", "test", "--pred",
            str(_pred(root, "soft")), "--out", str(out), "--ci", "--resamples", "200",
            "--quiet", "--no-plot"]
    assert main(args) == 0
    text = capsys.readouterr().out
    data1 = json.loads((out / "result_boundary.json").read_text())
    assert set(data1["intervals"]) == {"ODS", "OIS", "AP", "R50"}
    assert data1["provenance"]["ci"]["resamples"] == 200
    lo, hi = data1["intervals"]["ODS"]
    assert lo <= data1["metrics"]["ODS"] <= hi
    assert f"{data1['metrics']['ODS']:.4f} [{lo:.3f}, {hi:.3f}]" in text
    back = Result.from_json(out / "result_boundary.json")
    assert back.intervals["ODS"] == (lo, hi)
    # the same seed gives the same intervals; the records are reused
    assert main(args) == 0
    saved = json.loads((out / "result_boundary.json").read_text())
    assert saved["intervals"] == data1["intervals"]
