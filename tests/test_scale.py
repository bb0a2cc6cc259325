"""Large images: compact candidate lists, memory that follows the boundary pixels, and
threads (``threads=``, ``--threads``) that change nothing but the time."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from conftest import DATA, require
from segbench.boundary import (Matcher, default_thresholds, evaluate_image, seg2bdry, thin,
                               thin_frames)
from segbench.primitives import _correspond
from segbench.primitives import _boundary_counts as _counts
from segbench.primitives._solver import _layout
from segbench.errors import InputError

HED = DATA / "bsds500-hed-nms" / "test"
GT = DATA / "bsds500" / "groundTruth" / "test"


def _pairs(keys, others, shape, radius):
    """For each key pixel, how many ``others`` lie within ``radius`` (brute force)."""
    ky, kx = np.divmod(keys, shape[1])
    oy, ox = np.divmod(others, shape[1])
    d2 = (ky[:, None] - oy[None, :]) ** 2 + (kx[:, None] - ox[None, :]) ** 2
    return (d2 <= radius * radius).sum(axis=1)


@pytest.mark.parametrize("seed", range(8))
def test_layout_counts_the_candidate_pairs(seed):
    """Each pixel's list has room for exactly the other side's pixels within the
    tolerance (brute force), near the borders and across 64-bit words too."""
    rng = np.random.default_rng(seed)
    h, w = rng.integers(5, 90, 2)
    m = Matcher((h, w), rng.uniform(0.02, 0.3))
    keys = np.flatnonzero(rng.random(h * w) < rng.uniform(0.02, 0.5))
    others = np.flatnonzero(rng.random(h * w) < rng.uniform(0.02, 0.5))
    bits = m._workspace()[0]
    off = _layout(keys, others, h, w, m._half, bits)
    np.testing.assert_array_equal(np.diff(off), _pairs(keys, others, (h, w), m.radius))
    assert not bits.any()                                   # the workspace is left empty


def _curvy_scene(shape, seed, n_maps=3):
    """Thin curved boundaries (level sets of a smooth field) and a soft map along them."""
    rng = np.random.default_rng(seed)
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w] / max(h, w)
    field = np.zeros(shape)
    for _ in range(4):
        fy, fx, ph = rng.uniform(0.5, 2), rng.uniform(0.5, 2), rng.uniform(0, 6.3)
        field += np.sin(2 * np.pi * (fy * yy + fx * xx) + ph)
    maps = [thin(seg2bdry(np.floor(field + 0.1 * rng.standard_normal() * yy)
                          .astype(np.int32))) for _ in range(n_maps)]
    pb = np.zeros(shape)
    edge = thin(seg2bdry(np.floor(field + 0.15).astype(np.int32)))
    pb[edge] = rng.uniform(0.05, 1, edge.sum())
    noise = rng.random(shape) < 0.01
    pb[noise] = rng.uniform(0.01, 0.3, noise.sum())
    return pb, maps


def test_candidate_storage_follows_the_pairs_not_the_disc():
    """The lists hold one entry per candidate pair; nothing kept is as large as the
    image but bitmaps (3 bits per pixel and side)."""
    shape = (240, 320)
    pb, maps = _curvy_scene(shape, 0)
    m = Matcher(shape, 0.03)                      # radius 12 px: a disc of 450 offsets
    frames = thin_frames(pb, default_thresholds(20))
    m.frame_events(maps[0], frames)
    pool = m._frame_pool(frames)
    fixed = np.flatnonzero(maps[0])
    pairs = int(_pairs(pool[6], fixed, shape, m.radius).sum())
    lists = m._box[0][3]
    assert lists.nb_col.size == pairs                       # sized by this call, exactly
    assert pairs < 0.1 * max(fixed.size, pool[6].size) * m.dv.size
    for a in m._workspace():
        assert a.nbytes * 8 <= shape[0] * (shape[1] + 128)  # one bit per pixel, + padding


def _counts_table(c):
    return c.as_table()


@pytest.mark.parametrize("threads", [2, 3, 8])
def test_threads_give_identical_counts(threads):
    pb, maps = _curvy_scene((200, 260), 1, n_maps=5)
    one = evaluate_image(pb, maps, max_dist=0.02, threads=1)
    many = evaluate_image(pb, maps, max_dist=0.02, threads=threads)
    np.testing.assert_array_equal(_counts_table(one), _counts_table(many))
    for a, b in zip(thin_frames(pb, default_thresholds(99)),
                    thin_frames(pb, default_thresholds(99), threads=threads)):
        np.testing.assert_array_equal(a, b)


def test_threads_on_real_maps_and_concurrent_callers():
    """A HED map at 2x its size, several thread counts, and two callers at once (each
    thread has its own matchers): every count identical."""
    require(HED)
    from segbench.io import read_ground_truth, read_prediction
    iid = min(p.stem for p in HED.glob("*.png"))
    pb = np.repeat(np.repeat(read_prediction(HED / f"{iid}.png").pb, 2, 0), 2, 1)
    gts = [thin(seg2bdry(np.repeat(np.repeat(g.segmentation, 2, 0), 2, 1)))
           for g in read_ground_truth(GT / f"{iid}.mat")]
    want = _counts_table(evaluate_image(pb, gts, max_dist=0.011, threads=1))
    for n in (2, 4):
        np.testing.assert_array_equal(
            _counts_table(evaluate_image(pb, gts, max_dist=0.011, threads=n)), want)
    got = [None, None]

    def run(k):
        got[k] = _counts_table(evaluate_image(pb, gts, max_dist=0.011, threads=2))
    workers = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    for g in got:
        np.testing.assert_array_equal(g, want)


def test_matching_helpers_reuse_their_matchers():
    pb, maps = _curvy_scene((80, 100), 2, n_maps=4)
    evaluate_image(pb, maps, threads=3)
    key = ((80, 100), 0.0075)
    idle = list(_correspond._IDLE.get(key, []))
    assert 1 <= len(idle) <= 2
    evaluate_image(pb, maps, threads=3)
    assert all(any(m is i for i in _correspond._IDLE[key]) for m in idle)


def test_default_threads_and_bad_values(monkeypatch):
    monkeypatch.delenv("SEGBENCH_THREADS", raising=False)
    import os
    assert _counts.default_threads() == (os.cpu_count() or 1)
    monkeypatch.setenv("SEGBENCH_THREADS", "3")
    assert _counts.default_threads() == 3
    pb, maps = _curvy_scene((40, 50), 3, n_maps=2)
    for bad in ("0", "x", "-2"):
        monkeypatch.setenv("SEGBENCH_THREADS", bad)
        with pytest.raises(InputError, match="SEGBENCH_THREADS"):
            evaluate_image(pb, maps)
    monkeypatch.delenv("SEGBENCH_THREADS")
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(InputError, match="threads"):
            evaluate_image(pb, maps, threads=bad)
        with pytest.raises(InputError, match="threads"):
            thin_frames(pb, [0.5], threads=bad)


def test_evaluate_sets_threads_for_the_run_only(tmp_path, monkeypatch):
    """``segbench.evaluate(threads=)`` and ``--threads``: the setting reaches the
    evaluations (also in worker processes) and is restored; records, keys and
    results do not depend on it."""
    import json

    from segbench import evaluate
    from segbench.cli import main
    from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
    from segbench.io import write_soft_map
    items = make_synthetic_dataset(2, shape=(60, 80), n_annotators=3, seed=5)
    write_synthetic_dataset(tmp_path / "d", items)
    gt, pred = tmp_path / "d" / "groundTruth" / "test", tmp_path / "pred"
    for item in items:
        pb, _ = _curvy_scene((60, 80), int(item.iid[-1]))
        write_soft_map(pred / f"{item.iid}.png", pb)
    seen = []
    real = _counts.evaluate_image

    def spy(*args, **kw):
        seen.append(_counts.default_threads())
        return real(*args, **kw)
    import segbench.boundary._family as family
    monkeypatch.setattr(family, "evaluate_image", spy)
    monkeypatch.setenv("SEGBENCH_THREADS", "5")
    a = evaluate("boundary", gt, pred, tmp_path / "a", threads=3, progress=False,
                 plot=False)
    assert set(seen) == {3} and len(seen) >= 2
    import os
    assert os.environ["SEGBENCH_THREADS"] == "5"            # restored
    monkeypatch.delenv("SEGBENCH_THREADS")
    seen.clear()
    b = evaluate("boundary", gt, pred, tmp_path / "b", workers=1, progress=False,
                 plot=False)
    assert set(seen) == {os.cpu_count() or 1}
    assert "SEGBENCH_THREADS" not in os.environ
    assert json.dumps(a.metrics) == json.dumps(b.metrics)
    assert a.provenance["records"] == b.provenance["records"]     # same record keys
    with pytest.raises(InputError, match="threads"):
        evaluate("boundary", gt, pred, None, threads=0, progress=False)
    monkeypatch.undo()
    assert main(["boundary", "--gt", str(gt), "--pred", str(pred), "--out",
                 str(tmp_path / "c"), "--threads", "2", "--workers", "2", "--no-plot",
                 "--quiet", "--json"]) == 0
    for name in ("eval_bdry.txt", "eval_bdry_img.txt", "eval_bdry_thr.txt"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "c" / name).read_bytes()
    assert json.loads((tmp_path / "c" / "result_boundary.json").read_text())["metrics"] == \
        json.loads((tmp_path / "a" / "result_boundary.json").read_text())["metrics"]


def test_radius_and_workspace_of_a_large_shape_stay_small():
    """A 3000x4000 matcher allocates bitmaps only (no image-sized slot maps)."""
    m = Matcher((3000, 4000), 0.0075)
    assert math.isclose(m.radius, 37.5)
    assert sum(a.nbytes for a in m._workspace()) < 10 * 2 ** 20


def test_matchers_of_a_thread_share_their_solver_arrays():
    """BSDS's two orientations (same radius) use one set of solver arrays per thread,
    and matching through either still gives the other's results unchanged."""
    from segbench.boundary import Matcher, shared_matcher
    rng = np.random.default_rng(3)
    land = rng.random((60, 90)) > 0.97
    port = np.ascontiguousarray(land.T)
    a, b = shared_matcher(land.shape), shared_matcher(port.shape)
    assert a is not b and a._box is b._box
    fresh = Matcher(land.shape).match(land, np.roll(land, 1, axis=0))    # its own arrays
    a.match(land, np.roll(land, 3, axis=1))
    b.match(port, np.roll(port, 2, axis=1))             # the shared arrays are reused
    again = a.match(land, np.roll(land, 1, axis=0))
    for x, y in zip(fresh, again):
        assert np.array_equal(x, y)
    assert np.array_equal(b.match(port, np.roll(port, 2, axis=1))[0],
                          Matcher(port.shape).match(port, np.roll(port, 2, axis=1))[0])


def test_large_arrays_are_mapped_on_glibc():
    import platform
    from segbench.memory import MMAP_THRESHOLD, release_large_arrays
    if platform.libc_ver()[0] != "glibc":
        pytest.skip("glibc only")
    assert release_large_arrays() is True and MMAP_THRESHOLD == 4 << 20


def test_an_executor_pool_matches_one_thread_per_worker(tmp_path, monkeypatch):
    """``segbench.evaluate(executor=pool)``: each worker (one image at a time) matches
    on one thread unless ``threads`` says otherwise; the setting is restored."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    from segbench import evaluate
    from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
    from segbench.io import write_soft_map
    items = make_synthetic_dataset(2, shape=(40, 50), n_annotators=2, seed=2)
    write_synthetic_dataset(tmp_path / "d", items)
    gt, pred = tmp_path / "d" / "groundTruth" / "test", tmp_path / "pred"
    for item in items:
        write_soft_map(pred / f"{item.iid}.png", _curvy_scene((40, 50), 1)[0])

    class Pool(ThreadPoolExecutor):
        seen = []

        def submit(self, fn, *args, **kw):
            self.seen.append(os.environ.get("SEGBENCH_THREADS"))
            return super().submit(fn, *args, **kw)

    monkeypatch.delenv("SEGBENCH_THREADS", raising=False)
    with Pool(2) as pool:
        evaluate("boundary", gt, pred, tmp_path / "a", executor=pool, progress=False,
                 plot=False)
    assert set(Pool.seen) == {"1"}
    assert "SEGBENCH_THREADS" not in os.environ
    Pool.seen.clear()
    with Pool(2) as pool:
        evaluate("boundary", gt, pred, tmp_path / "b", executor=pool, threads=2,
                 progress=False, plot=False)
    assert set(Pool.seen) == {"2"}
