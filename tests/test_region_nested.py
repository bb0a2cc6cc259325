"""Region scores of a hierarchy: the tables of each cut merged from the previous cut's give
the numbers counted from the pixels, and a non-nested sequence is still counted right."""

from __future__ import annotations

import numpy as np

from segbench.region import evaluate_image


def _ucm(rng, h, w):
    """A doubleSize ucm2 from nested random region merges (boundaries of a random
    partition, each with a random strength)."""
    u = np.zeros((2 * h + 1, 2 * w + 1))
    lab = rng.integers(0, 6, (h // 4 + 1, w // 4 + 1))
    lab = np.repeat(np.repeat(lab, 4, 0), 4, 1)[:h, :w]
    lab2 = lab + 6 * (np.arange(w)[None, :] > w // 2)
    strength = rng.uniform(0.05, 1, 64)
    for i in range(h):
        for j in range(w - 1):
            if lab2[i, j] != lab2[i, j + 1]:
                u[2 * i + 1, 2 * j + 2] = max(strength[lab2[i, j]], strength[lab2[i, j + 1]])
    for i in range(h - 1):
        for j in range(w):
            if lab2[i, j] != lab2[i + 1, j]:
                u[2 * i + 2, 2 * j + 1] = max(strength[lab2[i, j]], strength[lab2[i + 1, j]])
    p = np.pad(u, 1)
    near = np.maximum.reduce([p[:-2, 1:-1], p[2:, 1:-1], p[1:-1, :-2], p[1:-1, 2:]])
    u[::2, ::2] = near[::2, ::2]      # a corner is as strong as the edges meeting there
    return u, lab2


def test_hierarchy_equals_its_cuts_scored_one_by_one():
    rng = np.random.default_rng(0)
    u, lab = _ucm(rng, 40, 52)
    gts = [lab + 1, (lab // 2) + 1, np.where(lab > 3, 2, 1)]
    ths = np.linspace(0, 1, 25)
    rec = evaluate_image(u, gts, thresholds=ths)
    from segbench.region import ucm_levels
    cuts = [labels.copy() for labels, _, _ in ucm_levels(u, ths)]
    one_by_one = evaluate_image(cuts, gts)        # a list: every cut from its pixels
    for name in ("cnt_r", "sum_r", "cnt_p", "sum_p", "ri", "voi"):
        np.testing.assert_allclose(getattr(rec, name), getattr(one_by_one, name),
                                   rtol=1e-13, atol=1e-13, err_msg=name)
    assert rec.cnt_r_best == one_by_one.cnt_r_best
    down = evaluate_image(u, gts, thresholds=ths[::-1])     # not nested: coarse to fine
    np.testing.assert_allclose(down.voi, rec.voi[::-1], rtol=1e-13)
