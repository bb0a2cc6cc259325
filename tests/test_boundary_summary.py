"""ODS/OIS/AP/R50 from the definitions of collect_eval_bdry.m, on hand-made counts."""

from __future__ import annotations

import numpy as np
import pytest

from segbench.boundary import (BoundaryCounts, average_precision, default_thresholds,
                               f_measure, max_f, recall_at_precision, summarize)
from segbench.errors import InputError


def counts(thr, cnt_r, sum_r, cnt_p, sum_p):
    a = [np.asarray(x, np.int64) for x in (cnt_r, sum_r, cnt_p, sum_p)]
    return BoundaryCounts(np.asarray(thr, float), *a)


def test_default_thresholds():
    t = default_thresholds(99)
    assert t.size == 99 and t[0] == pytest.approx(0.01) and t[-1] == pytest.approx(0.99)
    np.testing.assert_allclose(default_thresholds(5), np.arange(1, 6) / 6)
    with pytest.raises(InputError):
        default_thresholds(0)


def test_f_measure_zero_safe():
    assert f_measure(0, 0) == 0
    assert f_measure(1, 1) == 1
    assert f_measure(0.5, 1.0) == pytest.approx(2 / 3)


def test_max_f_interpolates_between_thresholds():
    # two points with equal F = 0.5; the chord between them reaches a higher F
    t = np.array([0.25, 0.75])
    r = np.array([1.0, 1 / 3])
    p = np.array([1 / 3, 1.0])
    bt, br, bp, bf = max_f(t, r, p)
    assert bf > 0.5
    # midpoint of the chord: R = P = 2/3 -> F = 2/3 at d = 0.5 (sampled at d ~ 0.5)
    assert bf == pytest.approx(2 / 3, abs=1e-4)
    assert bt == pytest.approx(0.5, abs=0.01)


def test_max_f_first_maximum_wins():
    t = np.array([0.1, 0.2, 0.3])
    r = np.array([0.5, 0.5, 0.5])
    p = np.array([0.5, 0.5, 0.5])
    assert max_f(t, r, p)[0] == pytest.approx(0.1)


def test_ap_definition():
    # P = 1 on recall [0, 0.5]: 51 samples of 1, the rest outside the range -> 0
    r = np.array([0.0, 0.5])
    p = np.array([1.0, 1.0])
    assert average_precision(r, p) == pytest.approx(0.51)
    assert average_precision(r, p, corrected=True) == pytest.approx(51 / 101)
    assert average_precision([0.3, 0.3], [1, 1]) == 0.0   # one distinct recall value


def test_ap_unique_rule():
    r = np.array([0.0, 0.5, 0.5, 1.0])
    p = np.array([1.0, 0.8, 0.4, 0.2])
    first = average_precision(r, p, unique_keep="first")
    last = average_precision(r, p, unique_keep="last")
    assert first > last
    with pytest.raises(InputError):
        average_precision(r, p, unique_keep="middle")


def test_r50():
    r = np.array([0.9, 0.6, 0.2])
    p = np.array([0.3, 0.5, 0.9])
    assert recall_at_precision(r, p) == pytest.approx(0.6)
    assert np.isnan(recall_at_precision([0.5, 0.4], [0.1, 0.2]))


def test_summarize_pools_counts_and_ois_uses_first_best():
    thr = [0.2, 0.4, 0.6]
    a = counts(thr, [80, 60, 10], [100, 100, 100], [40, 60, 10], [100, 70, 10])
    b = counts(thr, [50, 50, 50], [100, 100, 100], [50, 50, 50], [100, 100, 100])
    s = summarize([a, b], ["a", "b"])
    np.testing.assert_allclose(s.recall, [130 / 200, 110 / 200, 60 / 200])
    np.testing.assert_allclose(s.precision, [90 / 200, 110 / 170, 60 / 110])
    # OIS: image a at its best sampled threshold (0.4), b at its first best (0.2)
    r, p, f = s.ois
    assert r == pytest.approx((60 + 50) / 200) and p == pytest.approx((60 + 50) / 170)
    assert s.ids == ["a", "b"]
    assert s.per_image.shape == (2, 4)
    assert s.ods[3] >= s.f.max()


def test_summarize_refuses_mixed_thresholds():
    a = counts([0.5], [1], [2], [1], [2])
    b = counts([0.4], [1], [2], [1], [2])
    with pytest.raises(InputError, match="thresholds"):
        summarize([a, b])
    with pytest.raises(InputError):
        summarize([])
