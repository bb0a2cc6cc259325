"""Evaluators fed disjoint shards in other processes, pickled back and merged, equal the
single-process evaluator exactly (integer counts: the order of addition cannot matter)."""

import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from segbench.result import _plain
from segbench.semantic import SemanticEval

CLASSES = 7
N_PAIRS = 12


def _pair(i):
    """Deterministic pair i (regenerated in each worker, so nothing big is shipped)."""
    rng = np.random.default_rng(1000 + i)
    h, w = 40 + 7 * i, 90 - 3 * i
    small = rng.integers(0, CLASSES, (h // 5 + 2, w // 5 + 2))
    gt = np.repeat(np.repeat(small, 5, 0), 5, 1)[:h, :w].astype(np.uint8)
    gt[rng.uniform(size=gt.shape) < 0.03] = 255
    pred = np.where(gt == 255, 0, gt)
    flip = rng.uniform(size=gt.shape) < 0.1
    pred[flip] = rng.integers(0, CLASSES, flip.sum())
    return gt, pred


def _shard(indices):
    ev = SemanticEval(CLASSES)
    for i in indices:
        ev.update(*_pair(i))
    return ev  # pickled back to the caller


def _single():
    return _shard(range(N_PAIRS))


def _shards(n):
    return [list(range(k, N_PAIRS, n)) for k in range(n)]


def test_merge_across_processes_is_exact():
    ctx = mp.get_context("spawn")  # fresh interpreters, as on separate machines
    with ProcessPoolExecutor(max_workers=2, mp_context=ctx) as pool:
        parts = list(pool.map(_shard, _shards(3)))
    total = parts[0]
    for part in parts[1:]:
        total.merge(part)
    single = _single()
    np.testing.assert_array_equal(total.confusion(), single.confusion())
    assert _plain(total.results()) == _plain(single.results())
    assert total.n_images == N_PAIRS


def test_merge_across_dask_workers_is_exact():
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        addresses = sorted(client.scheduler_info()["workers"])
        assert len(addresses) == 2
        # pin shards to both worker processes, so the merge really crosses processes
        futures = [client.submit(_shard, shard, workers=[addresses[k % 2]], pure=False)
                   for k, shard in enumerate(_shards(4))]
        parts = client.gather(futures)
    total = SemanticEval(CLASSES)
    for part in parts:
        total.merge(part)
    single = _single()
    np.testing.assert_array_equal(total.confusion(), single.confusion())
    assert _plain(total.results()) == _plain(single.results())
