"""Issue 40, items 4 and 8: a streaming update counts its batch whole or not at all
(ground truth as .mat paths too, with or without pool threads), and the streaming
evaluators take thresholds= as the CLI's --thresholds and segbench.evaluate do."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import DATA, require

import segbench
from segbench.errors import InputError

GT = DATA / "bsds500" / "groundTruth" / "test"


def _maps():
    rng = np.random.default_rng(3)
    return rng.random((321, 481)), rng.random((321, 481))


@pytest.mark.parametrize("workers", [0, 2])
def test_a_bad_batch_with_mat_ground_truth_counts_nothing_and_can_be_resent(workers):
    require(GT / "100007.mat")
    a, b = _maps()
    gts = [GT / "100007.mat", GT / "100039.mat"]
    ev = segbench.BoundaryEval(workers=workers)
    with pytest.raises(InputError, match=r"batch index 1 \(id '100039'\): prediction is "
                                         r"320x481"):
        ev.update([a, b[:-1]], gts)     # one row short: found when the .mat is read
        ev.compute()                    # with workers, raised here
    assert len(ev) == 0
    ev.update([a, b], gts)              # the corrected batch is accepted
    res = ev.compute()
    assert [r["id"] for r in res.per_item] == ["100007", "100039"]
    ref = segbench.BoundaryEval()
    ref.update([a, b], gts)
    want = ref.compute().metrics
    for k in ("ODS", "OIS", "AP"):
        assert res.metrics[k] == want[k]


def test_a_failed_pool_batch_frees_its_ids_once_raised_by_the_next_update():
    require(GT / "100007.mat")
    a, b = _maps()
    gts = [GT / "100007.mat", GT / "100039.mat"]
    ev = segbench.BoundaryEval(workers=2)
    ev.update([a, b[:-1]], gts)
    with pytest.raises(InputError, match="nothing of update 1 is counted"):
        ev.update([a, b], gts)          # the pool's error first, not "counted twice"
    ev.update([a, b], gts)
    assert len(ev) == 2 and len(ev.compute().per_item) == 2


def test_semantic_boundary_and_semantic_batches_are_atomic():
    gt = np.zeros((2, 24, 32), bool)
    gt[0, 12, 4:28] = True
    ev = segbench.SemanticBoundaryEval(max_dist=0.0075)
    bad = gt * 0.9
    bad[1, 0, 0] = 2.0
    with pytest.raises(InputError, match="batch index 1"):
        ev.update(np.stack([gt * 0.9, bad]), np.stack([gt, gt]), ids=["x", "y"])
    assert len(ev) == 0
    ev.update(np.stack([gt * 0.9, gt * 0.9]), np.stack([gt, gt]), ids=["x", "y"])
    assert len(ev) == 2
    from segbench.semantic import SemanticEval
    sem = SemanticEval(2)
    with pytest.raises(InputError):
        sem.update(np.array([[[0, 1]], [[1, 0]]]), np.array([[[0, 1]], [[1, 7]]]))
    assert sem.n_images == 0 and sem.n_pixels == 0


def test_boundary_eval_takes_an_explicit_threshold_list_as_evaluate_does(tmp_path):
    require(GT / "100007.mat")
    a, _ = _maps()
    ev = segbench.BoundaryEval(thresholds=[0.9, 0.1, 0.5])
    ev.update(a, GT / "100007.mat")
    res = ev.compute()
    np.testing.assert_array_equal(res.records[0].thresholds, [0.1, 0.5, 0.9])
    gt_dir = tmp_path / "gt"
    gt_dir.mkdir()
    (gt_dir / "100007.mat").write_bytes((GT / "100007.mat").read_bytes())
    folder = segbench.evaluate("boundary", gt_dir, pred={"100007": a},
                               thresholds=[0.1, 0.5, 0.9])
    for k in ("ODS", "OIS", "AP"):
        assert res.metrics[k] == pytest.approx(folder.metrics[k], abs=1e-12)


@pytest.mark.parametrize("make, message", [
    (lambda: segbench.BoundaryEval(thresholds=[0.1, 2.0]), "must lie in \\[0, 1\\]"),
    (lambda: segbench.BoundaryEval(thresholds=True), "BoundaryEval: thresholds"),
    (lambda: segbench.RegionEval(thresholds=[0.1, 0.5]), "RegionEval: thresholds is"),
])
def test_bad_threshold_arguments_are_refused_in_one_line(make, message):
    with pytest.raises(InputError, match=message) as err:
        make()
    assert "\n" not in str(err.value)
