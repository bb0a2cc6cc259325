"""Best of several granularities (MuGE / SAUGE ``best_ods_ois.py``), on counts whose
winner is worked out by hand, and against a plain transcription of the rule."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from segbench.boundary import BoundaryCounts, summarize
from segbench.boundary._granularity import best_of_granularities
from segbench.errors import InputError

EPS = sys.float_info.epsilon
THR = [0.25, 0.5, 0.75]


def rec(rows, thr=THR):
    """A record from (cntR, sumR, cntP, sumP) rows, one per threshold."""
    a = np.asarray(rows, dtype=np.int64).reshape(-1, 4)
    return BoundaryCounts(np.asarray(thr, dtype=np.float64), *(a[:, c] for c in range(4)))


def rpf(cnt_r, sum_r, cnt_p, sum_p):
    """SAUGE's computeRPF, written out."""
    r = cnt_r / max(sum_r, EPS)
    p = cnt_p / max(sum_p, EPS)
    return r, p, (2 * p * r) / max(p + r, EPS)


# Three granularities, two images, three thresholds. Rows (cntR, sumR, cntP, sumP);
# F written beside each row, the winner of each (image, threshold) marked *.
G = [
    [rec([(8, 10, 2, 10),    # R .8 P .2  F .32
          (6, 10, 6, 10),    # R .6 P .6  F .60 *
          (2, 10, 9, 10)]),  # R .2 P .9  F .327
     rec([(10, 20, 5, 10),   # R .5 P .5  F .50 *
          (8, 20, 4, 8),     # R .4 P .5  F .444
          (0, 20, 0, 0)])],  # empty      F 0
    [rec([(5, 10, 5, 10),    # R .5 P .5  F .50 *
          (4, 10, 7, 10),    # R .4 P .7  F .509
          (3, 10, 8, 10)]),  # R .3 P .8  F .436
     rec([(16, 20, 2, 10),   # R .8 P .2  F .32
          (12, 20, 6, 10),   # R .6 P .6  F .60
          (2, 20, 1, 1)])],  # R .1 P 1   F .182 *
    [rec([(9, 10, 1, 10),    # R .9 P .1  F .18
          (7, 10, 5, 10),    # R .7 P .5  F .583
          (5, 10, 9, 10)]),  # R .5 P .9  F .643 * (image 0's best)
     rec([(0, 20, 0, 0),     # empty      F 0
          (14, 20, 3, 5),    # R .7 P .6  F .646 * (image 1's best)
          (0, 20, 0, 3)])],  # R 0 P 0    F 0
]


def test_hand_worked_winners():
    combined, choice = best_of_granularities(G)
    assert choice.tolist() == [[1, 0, 2], [0, 2, 1]]
    assert choice.dtype == np.int64
    assert [r.as_table()[:, 1:].astype(int).tolist() for r in combined] == [
        [[5, 10, 5, 10], [6, 10, 6, 10], [5, 10, 9, 10]],
        [[10, 20, 5, 10], [14, 20, 3, 5], [2, 20, 1, 1]]]
    for r in combined:
        np.testing.assert_array_equal(r.thresholds, THR)
        assert all(getattr(r, c).dtype == np.int64
                   for c in ("cnt_r", "sum_r", "cnt_p", "sum_p"))


def test_one_granularity_is_the_identity():
    combined, choice = best_of_granularities([G[0]])
    assert (choice == 0).all()
    for a, b in zip(combined, G[0]):
        np.testing.assert_array_equal(a.as_table(), b.as_table())


def test_ties_go_to_the_first_granularity():
    a = rec([(10, 20, 1, 2), (0, 20, 0, 0), (3, 20, 3, 9)])   # F .5, 0, ...
    b = rec([(10, 20, 5, 10), (0, 20, 0, 7), (3, 20, 3, 9)])  # F .5, 0, same counts
    for first, second in ((a, b), (b, a)):
        combined, choice = best_of_granularities([[first], [second]])
        assert choice.tolist() == [[0, 0, 0]]
        np.testing.assert_array_equal(combined[0].as_table(), first.as_table())
    # a later granularity wins only with a strictly higher F
    c = rec([(10, 20, 1, 2), (1, 20, 1, 1), (3, 20, 3, 9)])
    assert best_of_granularities([[a], [b], [c]])[1].tolist() == [[0, 2, 0]]


def test_ois_is_the_best_f_over_granularities_and_thresholds():
    combined, _ = best_of_granularities(G)
    # image 0: (g2, t2) = (5, 10, 9, 10); image 1: (g2, t1) = (14, 20, 3, 5)
    r, p, f = rpf(5 + 14, 10 + 20, 9 + 3, 10 + 5)
    s = summarize(combined)
    assert s.ois == pytest.approx((r, p, f), abs=0, rel=1e-15)
    assert f == pytest.approx(0.70698, abs=1e-5)
    # the per-image max F of the combination is the max over every (g, t)
    for i, r_ in enumerate(combined):
        best = max(rpf(*row)[2] for g in G for row in g[i].as_table()[:, 1:])
        assert max(rpf(*row)[2] for row in r_.as_table()[:, 1:]) == best


def test_refusals():
    with pytest.raises(InputError, match="K >= 1"):
        best_of_granularities([])
    with pytest.raises(InputError, match="same images"):
        best_of_granularities([G[0], G[1][:1]])
    with pytest.raises(InputError, match="no images"):
        best_of_granularities([[], []])
    other = [rec(r.as_table()[:, 1:], thr=[0.2, 0.5, 0.75]) for r in G[1]]
    with pytest.raises(InputError, match="granularity 1, image 0 has thresholds"):
        best_of_granularities([G[0], other])
    shorter = [rec(r.as_table()[:2, 1:], thr=THR[:2]) for r in G[1]]
    with pytest.raises(InputError, match="same thresholds"):
        best_of_granularities([G[0], shorter])
    swapped = [G[1][1], G[1][0]]                # images out of order: sumR differs
    with pytest.raises(InputError, match="same order"):
        best_of_granularities([G[0], swapped])
    with pytest.raises(InputError, match="not a BoundaryCounts"):
        best_of_granularities([[np.zeros((3, 5))]])


def plain_rule(records):
    """The rule as SAUGE's script states it: per image and threshold, the first
    granularity of highest computeRPF F, and its counts."""
    k, n = len(records), len(records[0])
    t = len(records[0][0].thresholds)
    choice = np.zeros((n, t), dtype=int)
    rows = np.zeros((n, t, 4), dtype=np.int64)
    for i in range(n):
        for j in range(t):
            best_f, best_g = None, None
            for g in range(k):
                r = records[g][i]
                f = rpf(int(r.cnt_r[j]), int(r.sum_r[j]), int(r.cnt_p[j]),
                        int(r.sum_p[j]))[2]
                if best_f is None or f > best_f:
                    best_f, best_g = f, g
            r = records[best_g][i]
            choice[i, j] = best_g
            rows[i, j] = (r.cnt_r[j], r.sum_r[j], r.cnt_p[j], r.sum_p[j])
    return choice, rows


def sauge_ois(records):
    """SAUGE's OIS: per image the first threshold of highest best-of-K F (then its
    first granularity), those counts pooled over images."""
    choice, rows = plain_rule(records)
    pooled = np.zeros(4, dtype=np.int64)
    for i in range(rows.shape[0]):
        fs = [rpf(*(int(x) for x in rows[i, j]))[2] for j in range(rows.shape[1])]
        pooled += rows[i, fs.index(max(fs))]
    return rpf(*(int(x) for x in pooled))


@pytest.mark.parametrize("seed", range(40))
def test_matches_plain_transcription(seed):
    rng = np.random.default_rng(seed)
    k, n, t = rng.integers(1, 5), rng.integers(1, 6), rng.integers(1, 7)
    hi = int(rng.choice([3, 50]))          # small counts: many exact ties and zeros
    thr = np.sort(rng.choice(np.arange(1, 100), t, replace=False)) / 100
    sum_r = rng.integers(0, hi, n)
    records = []
    for _ in range(k):
        g = []
        for i in range(n):
            cnt_r = rng.integers(0, sum_r[i] + 1, t)
            sum_p = rng.integers(0, hi, t)
            cnt_p = rng.integers(0, sum_p + 1)
            g.append(BoundaryCounts(thr.copy(), cnt_r, np.full(t, sum_r[i]), cnt_p,
                                    sum_p))
        records.append(g)
    if k > 1 and seed % 4 == 0:            # a duplicated granularity: ties everywhere
        records[1] = list(records[0])
    combined, choice = best_of_granularities(records)
    want_choice, want_rows = plain_rule(records)
    np.testing.assert_array_equal(choice, want_choice)
    np.testing.assert_array_equal(np.stack([r.as_table()[:, 1:] for r in combined]),
                                  want_rows)
    assert summarize(combined).ois == pytest.approx(sauge_ois(records), abs=0, rel=1e-15)
