"""Superpixel measures from their definitions: hand-built cases and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest

from segbench.errors import InputError
from segbench.superpixel import (UE_VARIANTS, achanta_ue, achievable_segmentation_accuracy,
                                 asa, corrected_ue, evaluate_image, levinshtein_ue,
                                 neubert_protzel_ue, oversegmentation_error, seeds_ue,
                                 summarize, superpixel_table, superpixel_tables,
                                 table_measures, undersegmentation_error)

UES = (seeds_ue, corrected_ue, levinshtein_ue, neubert_protzel_ue, achanta_ue)


# ------------------------------------------------------------------ naive references

def _sets(labels):
    """Label map -> list of frozensets of linear pixel indices, one per label."""
    flat = np.asarray(labels).ravel()
    return [frozenset(np.flatnonzero(flat == v).tolist()) for v in np.unique(flat)]


def _naive(sp, gt, void=None):
    """Every measure written over pixel sets, as the definitions read."""
    flat_gt = np.asarray(gt).ravel()
    S = _sets(sp)
    keep = np.unique(flat_gt) if void is None else np.setdiff1d(np.unique(flat_gt), [void])
    G = [frozenset(np.flatnonzero(flat_gt == v).tolist()) for v in keep]
    T = sum(len(g) for g in G)
    seeds = sum(len(s - g) for s in S for g in G if s & g) / T
    cue = sum(len(s - max(G, key=lambda g: len(s & g))) for s in S) / T
    asa_ = sum(max(len(s & g) for g in G) for s in S) / T
    lev = np.mean([(sum(len(s) for s in S if s & g) - len(g)) / len(g) for g in G])
    np_ = sum(min(len(s & g), len(s - g)) for s in S for g in G if s & g) / T
    ach = (sum(len(s) for g in G for s in S if len(s & g) > 0.05 * len(s)) - T) / T
    oe = sum(min(len(g - s) for s in S) for g in G) / T
    return {"ue": seeds, "cue": cue, "asa": asa_, "ue_levinshtein": lev, "ue_np": np_,
            "ue_achanta": ach, "oe": oe}


def _random_pair(rng, shape=(9, 11), n_sp=7, n_gt=4):
    sp = rng.integers(0, n_sp, shape)
    gt = rng.integers(0, n_gt, shape)
    return sp, gt


# ------------------------------------------------------------------ definitions

def test_hand_built_case():
    # superpixels: A = 3 px (2 in g0, 1 in g1), B = 1 px (in g1); segments of 2 px each
    sp = np.array([[0, 0, 0, 1]])
    gt = np.array([[0, 0, 1, 1]])
    assert seeds_ue(sp, gt) == pytest.approx(3 / 4)          # |A-g0| + |A-g1| = 1 + 2
    assert corrected_ue(sp, gt) == pytest.approx(1 / 4)      # A outside g0
    assert asa(sp, gt) == pytest.approx(3 / 4)
    assert levinshtein_ue(sp, gt) == pytest.approx(((3 - 2) / 2 + (4 - 2) / 2) / 2)
    assert neubert_protzel_ue(sp, gt) == pytest.approx((1 + 1) / 4)
    assert achanta_ue(sp, gt) == pytest.approx((3 + 3 + 1 - 4) / 4)
    assert oversegmentation_error(sp, gt) == pytest.approx((0 + 1) / 4)


@pytest.mark.parametrize("seed", range(8))
def test_against_naive_set_definitions(seed):
    rng = np.random.default_rng(seed)
    sp, gt = _random_pair(rng)
    ref = _naive(sp, gt)
    t = superpixel_table(sp, gt)
    got = table_measures(t)
    for k, v in ref.items():
        assert got[k] == pytest.approx(v, rel=1e-12), k
    # the single functions, from maps and from the table, agree with table_measures
    for name, (fn, _) in UE_VARIANTS.items():
        assert fn(sp, gt) == pytest.approx(got[name], rel=1e-12)
        assert fn(table=t) == pytest.approx(got[name], rel=1e-12)
    assert achievable_segmentation_accuracy(table=t) == pytest.approx(got["asa"])
    assert oversegmentation_error(table=t) == pytest.approx(got["oe"])


def test_void_ground_truth():
    rng = np.random.default_rng(3)
    sp, gt = _random_pair(rng, n_gt=5)           # label 0 of gt is void below
    ref = _naive(sp, gt, void=0)
    got = table_measures(superpixel_table(sp, gt, void=0))
    for k, v in ref.items():
        assert got[k] == pytest.approx(v, rel=1e-12), k
    # with void pixels CUE and 1 - ASA part: CUE = N / T - ASA
    n, t = gt.size, (gt != 0).sum()
    assert got["cue"] == pytest.approx(n / t - got["asa"])
    assert got["cue"] > 1 - got["asa"]


def test_superpixel_label_zero_is_a_superpixel():
    gt = np.array([[1, 1, 2, 2]])
    assert asa(np.array([[0, 0, 5, 5]]), gt) == 1.0
    assert superpixel_table(np.array([[0, 0, 5, 5]]), gt)[0].sum() == 0


def test_achanta_rule_and_seeds_equivalence():
    rng = np.random.default_rng(11)
    sp, gt = _random_pair(rng, shape=(20, 20), n_sp=12, n_gt=3)
    # without the 5 % rule the SLIC-paper error is the SEEDS recipe
    assert achanta_ue(sp, gt, min_overlap=0) == pytest.approx(seeds_ue(sp, gt))
    assert achanta_ue(sp, gt) <= seeds_ue(sp, gt)
    # an overlap of exactly 5 % is ignored (the paper: strictly more than B)
    sp1 = np.array([[0] * 20 + [1]])
    gt1 = np.array([[0] * 19 + [1, 1]])
    assert achanta_ue(sp1, gt1) == 0.0
    gt2 = np.array([[0] * 18 + [1, 1, 1]])       # 2/20 = 10 % > 5 %
    assert achanta_ue(sp1, gt2) == pytest.approx(20 / 21)
    with pytest.raises(InputError):
        achanta_ue(sp1, gt1, min_overlap=1.5)


def test_undersegmentation_error_by_name():
    sp = np.array([[0, 0, 0, 1]])
    gt = np.array([[0, 0, 1, 1]])
    assert undersegmentation_error(sp, gt) == seeds_ue(sp, gt)
    assert undersegmentation_error(sp, gt, variant="levinshtein") == levinshtein_ue(sp, gt)
    assert undersegmentation_error(sp, gt, variant="neubert-protzel") == \
        neubert_protzel_ue(sp, gt)
    with pytest.raises(InputError, match="unknown"):
        undersegmentation_error(sp, gt, variant="stutz")


# ------------------------------------------------------------------ properties

@pytest.mark.parametrize("seed", range(4))
def test_one_superpixel_per_segment(seed):
    rng = np.random.default_rng(seed)
    gt = rng.integers(0, 5, (12, 12))
    sp = gt * 7 + 3                               # same partition, other label values
    m = table_measures(superpixel_table(sp, gt))
    for k in ("ue", "cue", "ue_levinshtein", "ue_np", "ue_achanta", "oe"):
        assert m[k] == 0, k
    assert m["asa"] == 1


@pytest.mark.parametrize("seed", range(4))
def test_refinement_has_no_undersegmentation(seed):
    rng = np.random.default_rng(seed)
    gt = np.repeat(np.repeat(rng.integers(0, 4, (4, 4)), 5, 0), 5, 1)
    sp = gt * 100 + rng.integers(0, 6, gt.shape)  # each superpixel inside one segment
    m = table_measures(superpixel_table(sp, gt))
    assert m["ue"] == m["cue"] == m["ue_levinshtein"] == m["ue_np"] == 0
    assert m["asa"] == 1
    assert m["oe"] > 0


@pytest.mark.parametrize("seed", range(6))
def test_cue_is_one_minus_asa_without_void(seed):
    sp, gt = _random_pair(np.random.default_rng(seed))
    assert corrected_ue(sp, gt) == pytest.approx(1 - asa(sp, gt), abs=1e-15)


def test_grid_extreme_every_pixel_a_superpixel():
    gt = np.random.default_rng(0).integers(0, 3, (6, 7))
    sp = np.arange(gt.size).reshape(gt.shape)
    m = table_measures(superpixel_table(sp, gt))
    assert m["ue"] == m["cue"] == m["ue_levinshtein"] == m["ue_np"] == m["ue_achanta"] == 0
    assert m["asa"] == 1


def test_one_superpixel_extreme():
    gt = np.array([[0, 0, 0, 1], [0, 0, 2, 2]])   # segments of 5, 1 and 2 px
    sp = np.zeros_like(gt)
    n, sizes = 8, np.array([5, 1, 2])
    m = table_measures(superpixel_table(sp, gt))
    assert m["asa"] == pytest.approx(5 / 8)                    # the largest segment
    assert m["cue"] == pytest.approx(3 / 8)
    assert m["ue"] == pytest.approx((3 * n - n) / n)           # touches 3 segments
    assert m["ue_achanta"] == pytest.approx(2.0)               # all 3 overlaps > 5 %
    assert m["ue_levinshtein"] == pytest.approx(np.mean((n - sizes) / sizes))
    assert m["ue_np"] == pytest.approx(np.minimum(sizes, n - sizes).sum() / n)
    assert m["oe"] == 0


def test_measures_ignore_label_values():
    rng = np.random.default_rng(5)
    sp, gt = _random_pair(rng)
    perm_sp = rng.permutation(100)[sp] + 1000
    perm_gt = rng.permutation(50)[gt] - 20
    a = table_measures(superpixel_table(sp, gt))
    b = table_measures(superpixel_table(perm_sp, perm_gt))
    for k in a:
        assert a[k] == pytest.approx(b[k], rel=1e-12)


def test_table_errors():
    with pytest.raises(InputError, match="row 0"):
        asa(table=np.array([[1, 0], [0, 3]]))
    with pytest.raises(InputError):
        asa(table=np.array([[0, 0], [0, -3]]))
    with pytest.raises(InputError, match="table="):
        asa(np.zeros((2, 2), int))
    with pytest.raises(InputError, match="shape|HxW"):
        superpixel_table(np.zeros((2, 2), int), np.zeros((2, 3), int))
    assert math.isnan(asa(table=np.zeros((2, 2), np.int64)))


def test_superpixel_tables_matches_single_tables():
    rng = np.random.default_rng(9)
    sp = rng.integers(0, 6, (8, 9))
    gts = [rng.integers(0, k, (8, 9)) for k in (2, 3, 5)]
    tables, compact, n = superpixel_tables(sp, gts)
    assert n == len(np.unique(sp)) and compact.min() == 1
    for t, g in zip(tables, gts):
        np.testing.assert_array_equal(t, superpixel_table(sp, g))


# ------------------------------------------------------------------ per image, summary

def test_evaluate_image_record_and_summaries():
    rng = np.random.default_rng(2)
    gts = [np.repeat(rng.integers(0, 3, (4, 6)), 4, 0).repeat(4, 1) for _ in range(3)]
    sp = np.arange(16 * 24).reshape(16, 24) // 3
    image = rng.integers(0, 256, (16, 24, 3), dtype=np.uint8)
    rec = evaluate_image(sp, gts, image)
    assert rec.n_annotators == 3
    for k, g in enumerate(gts):
        for name, v in _naive(sp, g).items():
            assert rec.per_annotator[name][k] == pytest.approx(v, rel=1e-12), name
    mean, best = rec.mean(), rec.best()
    assert mean["asa"] == pytest.approx(np.mean(rec.per_annotator["asa"]))
    assert best["asa"] == max(rec.per_annotator["asa"])
    assert best["ue"] == min(rec.per_annotator["ue"])
    assert best["br"] == max(rec.per_annotator["br"])
    # JSON round trip, NaN as null
    again = type(rec).from_json(rec.to_json())
    for k in rec.per_annotator:
        np.testing.assert_array_equal(again.per_annotator[k], rec.per_annotator[k])
    # a second, different image record: the summary averages per image
    sp2 = rng.integers(0, 40, (16, 24))
    rec2 = evaluate_image(sp2, gts[:2], image)
    mean2, best2 = rec2.mean(), rec2.best()
    assert mean2["asa"] != mean["asa"] and rec2.co != rec.co
    s = summarize([rec, rec2])
    assert s.n_images == 2
    for m in ("asa", "ue", "br", "bp"):
        assert math.isfinite(mean[m]) and math.isfinite(mean2[m])
        assert s.mean[m] == pytest.approx((mean[m] + mean2[m]) / 2)
        assert s.best[m] == pytest.approx((best[m] + best2[m]) / 2)
    assert s.metrics()["asa_best"] == pytest.approx((best["asa"] + best2["asa"]) / 2)
    assert s.image["co"] == pytest.approx((rec.co + rec2.co) / 2)
    tot = rec.boundary_counts.sum(axis=0) + rec2.boundary_counts.sum(axis=0)
    assert s.pooled["br_pooled"] == pytest.approx(tot[1] / tot[0])


def test_nan_annotators_are_left_out_of_the_mean():
    gt_flat = np.zeros((6, 6), int)                      # one region: no boundary
    gt = np.repeat([[0, 0, 0, 1, 1, 1]], 6, 0)
    sp = np.repeat([[0, 0, 0, 1, 1, 1]], 6, 0)
    rec = evaluate_image(sp, [gt_flat, gt])
    assert math.isnan(rec.per_annotator["br"][0])
    assert rec.mean()["br"] == 1.0
    single = evaluate_image(np.zeros((6, 6), int), [gt])
    assert math.isnan(single.per_annotator["bp"][0])     # no superpixel boundary
    assert math.isnan(single.mean()["bp"]) and math.isnan(single.best()["bp"])
    assert single.to_json()["per_annotator"]["bp"] == [None]
