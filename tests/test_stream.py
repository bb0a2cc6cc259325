"""The streaming evaluators (segbench.BoundaryEval, RegionEval, human_scores) against
the folder commands on the same maps: the counts of every image, the metrics, the
per-item rows; their errors; merging states made in other processes; and
segbench.evaluate(pred={id: array})."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, require

import segbench
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.errors import InputError
from segbench.io import read_ev1_table, read_prediction, write_soft_map

HED = DATA / "bsds500-hed-nms" / "test"
BSDS_GT = DATA / "bsds500" / "groundTruth" / "test"


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "segbench.cli", *map(str, args)],
                          capture_output=True, text=True)


def _soft_map(seg: np.ndarray, rng) -> np.ndarray:
    """A plausible detector output: the boundaries of one annotator, blurred, with
    noise; floats in [0, 1] off any PNG grid."""
    from scipy import ndimage

    from segbench.boundary import seg2bdry
    edges = seg2bdry(seg, "imageSize").astype(float)
    soft = ndimage.gaussian_filter(edges, 1.2) * 3 + 0.15 * rng.random(seg.shape)
    return np.clip(soft / soft.max(), 0, 1)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """8 synthetic images (5 annotators) with float soft maps, those maps written as
    16-bit PNG, and ``segbench boundary`` run on the PNGs."""
    root = tmp_path_factory.mktemp("synth")
    items = make_synthetic_dataset(8, shape=(96, 128), n_annotators=5, seed=11)
    write_synthetic_dataset(root, items)
    rng = np.random.default_rng(5)
    maps = {it.iid: _soft_map(it.segmentations[0], rng) for it in items}
    pngs = root / "pngs"
    for iid, pb in maps.items():
        write_soft_map(pngs / f"{iid}.png", pb, bits=16)
    out = root / "run"
    proc = _cli("boundary", "--gt", root / "groundTruth" / "test", "--pred", pngs,
                "--out", out, "--quiet")
    assert proc.returncode == 0, proc.stderr
    return {"gt": root / "groundTruth" / "test", "maps": maps, "pngs": pngs, "run": out,
            "items": items, "root": root}


def _counts_of_run(run: Path, iid: str) -> np.ndarray:
    return read_ev1_table(run / f"{iid}_ev1.txt")


def _assert_same_as_run(res, run: Path):
    """Every image's counts (the records, against the run's _ev1.txt), every metric and
    every per-item row of the run's result.json."""
    folder = segbench.Result.from_json(run / "result_boundary.json")
    assert [r["id"] for r in res.per_item] == [r["id"] for r in folder.per_item]
    for row, rec in zip(res.per_item, res.records):
        table = _counts_of_run(run, row["id"])      # thresholds printed to 2 decimals
        np.testing.assert_array_equal(rec.as_table()[:, 1:], table[:, 1:])
        np.testing.assert_allclose(rec.thresholds, table[:, 0], rtol=0, atol=1e-12)
    for k, v in folder.metrics.items():
        assert res.metrics[k] == pytest.approx(v, rel=0, abs=1e-12), k
    for mine, theirs in zip(res.per_item, folder.per_item):
        for k, v in theirs.items():
            assert mine[k] == (v if k == "id" else pytest.approx(v, rel=0, abs=1e-12))


def test_synthetic_counts_equal_the_folder_run_on_the_16bit_pngs(synthetic):
    """The maps read back from the PNGs, fed in batches with the .mat paths (ids from
    their stems), count exactly what ``segbench boundary`` counted."""
    ids = sorted(synthetic["maps"])
    ev = segbench.BoundaryEval()
    for a in range(0, len(ids), 3):
        chunk = ids[a:a + 3]
        batch = [read_prediction(synthetic["pngs"] / f"{i}.png").pb for i in chunk]
        ev.update(batch, [synthetic["gt"] / f"{i}.mat" for i in chunk])
    _assert_same_as_run(ev.compute(), synthetic["run"])


def test_bits_16_rounds_float_maps_as_the_png_run(synthetic):
    """Float maps off the PNG grid, as a model gives them, with ``bits=16``: the same
    counts; without it the counts differ (the maps are not the PNGs')."""
    ids = sorted(synthetic["maps"])
    batch = np.stack([synthetic["maps"][i] for i in ids])[:, None]      # (N, 1, H, W)
    gts = [synthetic["gt"] / f"{i}.mat" for i in ids]
    ev = segbench.BoundaryEval(bits=16, workers=2)
    ev.update(batch, gts)
    _assert_same_as_run(ev.compute(), synthetic["run"])
    exact = segbench.BoundaryEval()
    exact.update(batch, gts)
    assert [r.as_table().tolist() for r in exact.compute().records] != \
        [r.as_table().tolist() for r in ev.compute().records]


def test_workers_give_the_same_numbers_in_any_number(synthetic):
    ids = sorted(synthetic["maps"])
    gts = [synthetic["gt"] / f"{i}.mat" for i in ids]
    results = []
    for workers in (0, 1, 3):
        ev = segbench.BoundaryEval(workers=workers)
        for i, g in zip(ids, gts):
            ev.update(synthetic["maps"][i], g)
        results.append(ev.compute())
        ev.close()
    for other in results[1:]:
        assert other.metrics == results[0].metrics
        assert other.per_item == results[0].per_item
        assert [r.as_table().tolist() for r in other.records] == \
            [r.as_table().tolist() for r in results[0].records]


def test_hed_maps_count_as_segbench_boundary(tmp_path):
    """20 HED maps of BSDS500 test: written as 16-bit PNG, scored by ``segbench
    boundary``; the same maps read back and streamed in batches of 4 (two workers)
    give every image's counts and every number of the run."""
    require(HED)
    require(BSDS_GT)
    ids = sorted(p.stem for p in HED.glob("*.png"))[:20]
    pngs = tmp_path / "pngs"
    for iid in ids:
        write_soft_map(pngs / f"{iid}.png", read_prediction(HED / f"{iid}.png").pb,
                       bits=16)
    run = tmp_path / "run"
    proc = _cli("boundary", "--gt", BSDS_GT, "--pred", pngs, "--out", run, "--quiet",
                "--ids", ",".join(ids), "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    ev = segbench.BoundaryEval(workers=2)
    for a in range(0, 20, 4):
        chunk = ids[a:a + 4]
        batch = np.stack([read_prediction(pngs / f"{i}.png").pb for i in chunk]) \
            if len({read_prediction(pngs / f"{i}.png").shape for i in chunk}) == 1 \
            else [read_prediction(pngs / f"{i}.png").pb for i in chunk]
        ev.update(batch, [BSDS_GT / f"{i}.mat" for i in chunk])
    _assert_same_as_run(ev.compute(), run)


# --- errors --------------------------------------------------------------------------


def _gt(h=24, w=32):
    g = np.zeros((h, w), bool)
    g[h // 2, 2:w - 2] = True
    return [g]


@pytest.mark.parametrize("pred, gt, message", [
    (np.stack([np.full((24, 32), 0.5), np.full((24, 32), np.nan)]), [_gt(), _gt()],
     "batch index 1: boundary map contains 768 NaN or infinite value(s)"),
    (np.stack([np.full((24, 32), 0.5), np.full((24, 32), np.inf)]), [_gt(), _gt()],
     "batch index 1: boundary map contains 768 NaN or infinite value(s)"),
    (np.stack([np.full((24, 32), 0.5), np.full((24, 32), 1.5)]), [_gt(), _gt()],
     "batch index 1: boundary map has values in [1.5, 1.5]; boundary strengths must lie "
     "in [0, 1]"),
    (np.full((3, 24, 32), 0.5), [_gt(), _gt()],
     "gt: a batch of 3 predictions needs a sequence of 3 ground truths, one per image; "
     "got 2 entries"),
    (np.full((2, 24, 32), 0.5), [_gt(), _gt(24, 30)],
     "batch index 1: prediction is 24x32 (HxW) but the image and ground truth are 24x30"),
    (np.full((2, 24, 32), 7, np.int32), [_gt(), _gt()],
     "batch index 0: boundary map is an integer array of int32"),
    (np.full((2, 3, 24, 32), 0.5), [_gt(), _gt()],
     "pred is a batch of 3-channel maps (shape (2, 3, 24, 32))"),
    (np.full((2, 2, 2, 24, 32), 0.5), [_gt(), _gt()],
     "pred must be an (H, W) map or an (N, H, W) or (N, 1, H, W) batch, got shape "
     "(2, 2, 2, 24, 32)"),
    ([np.full((24, 32), 0.5), "not a map"], [_gt(), _gt()],
     "batch index 1: expected an array, got str"),
])
def test_bad_input_is_one_line_naming_the_batch_index(pred, gt, message):
    ev = segbench.BoundaryEval()
    ev.update(np.full((24, 32), 0.5), _gt(), ids="before")
    with pytest.raises(InputError) as err:
        ev.update(pred, gt)
    assert str(err.value).startswith(message), str(err.value)
    assert "\n" not in str(err.value)
    assert len(ev) == 1                      # nothing of the bad call was counted
    assert [r["id"] for r in ev.compute().per_item] == ["before"]


def test_errors_found_in_the_pool_name_the_update_and_index(synthetic):
    """A .mat of another size is read in the pool: compute() says which update."""
    ev = segbench.BoundaryEval(workers=2)
    ev.update(np.full((10, 12), 0.5), _gt(10, 12))
    ev.update(np.full((2, 10, 12), 0.5), [_gt(10, 12), synthetic["gt"] / "synth000.mat"])
    with pytest.raises(InputError, match=r"^update 2, batch index 1 \(id 'synth000'\): "
                                         r"prediction is 10x12 \(HxW\) but the image"):
        ev.compute()
    assert len(ev.compute().per_item) == 1   # the bad batch (update 2) is left out whole


def test_repeated_ids_and_missing_gt_files_are_refused(tmp_path):
    ev = segbench.BoundaryEval()
    ev.update(np.full((24, 32), 0.5), _gt(), ids="a")
    with pytest.raises(InputError, match="image 'a' is counted twice"):
        ev.update(np.full((24, 32), 0.5), _gt(), ids="a")
    with pytest.raises(InputError, match="ground-truth file not found"):
        ev.update(np.full((24, 32), 0.5), tmp_path / "nope.mat")
    with pytest.raises(InputError, match="no image counted"):
        segbench.BoundaryEval().compute()


class _FakeTensor:
    """What a CUDA tensor offers: .detach().cpu().numpy(), and no __array__."""

    def __init__(self, arr):
        self._arr = arr
        self.calls = []

    def detach(self):
        self.calls.append("detach")
        return self

    def cpu(self):
        self.calls.append("cpu")
        return self

    def numpy(self):
        self.calls.append("numpy")
        return self._arr


class _ArrayLike:
    def __init__(self, arr):
        self._arr = arr

    def __array__(self, dtype=None, copy=None):
        return self._arr if dtype is None else self._arr.astype(dtype)


def test_tensors_and_array_likes_give_the_numbers_of_arrays(synthetic):
    ids = sorted(synthetic["maps"])[:3]
    batch = np.stack([synthetic["maps"][i] for i in ids])[:, None]
    gts = [synthetic["gt"] / f"{i}.mat" for i in ids]
    plain = segbench.BoundaryEval()
    plain.update(batch, gts)
    tensor = _FakeTensor(batch)
    via_tensor = segbench.BoundaryEval(workers=1)
    via_tensor.update(tensor, gts)
    via_array = segbench.BoundaryEval()
    via_array.update(_ArrayLike(batch), gts)
    assert tensor.calls == ["detach", "cpu", "numpy"]
    assert "torch" not in sys.modules
    assert via_tensor.compute().metrics == plain.compute().metrics
    assert via_array.compute().metrics == plain.compute().metrics


def test_the_pool_copies_maps_the_caller_reuses(synthetic):
    """A loop that writes each batch into one buffer: the pool scores what was given."""
    ids = sorted(synthetic["maps"])[:4]
    gts = [synthetic["gt"] / f"{i}.mat" for i in ids]
    ref = segbench.BoundaryEval()
    pooled = segbench.BoundaryEval(workers=2)
    buf = np.empty_like(synthetic["maps"][ids[0]])
    for i, g in zip(ids, gts):
        ref.update(synthetic["maps"][i], g)
        buf[...] = synthetic["maps"][i]
        pooled.update(buf, g)
        buf[...] = 0.0
    assert pooled.compute().metrics == ref.compute().metrics


# --- state: merge, state_dict in other processes, pickling, reset -------------------

_SHARD = textwrap.dedent("""
    import pickle, sys
    import numpy as np
    import segbench
    from segbench.io import read_prediction
    pngs, gt, out, *ids = sys.argv[1:]
    ev = segbench.BoundaryEval(workers=1)
    for iid in ids:
        ev.update(read_prediction(f"{pngs}/{iid}.png").pb, f"{gt}/{iid}.mat")
    with open(out, "wb") as f:
        pickle.dump(ev.state_dict(), f)
""")


def test_states_made_in_separate_processes_merge_into_the_whole(synthetic, tmp_path):
    """Three 'ranks' (processes) each score a shard and pickle their state_dict, as
    all_gather_object would; merged in any order they give the folder run."""
    ids = sorted(synthetic["maps"])
    shards = [ids[0::3], ids[1::3], ids[2::3]]
    procs, files = [], []
    for k, shard in enumerate(shards):
        files.append(tmp_path / f"rank{k}.pkl")
        procs.append(subprocess.Popen([sys.executable, "-c", _SHARD, synthetic["pngs"],
                                       synthetic["gt"], files[-1], *shard]))
    assert [p.wait(timeout=300) for p in procs] == [0, 0, 0]
    states = [pickle.loads(f.read_bytes()) for f in files]
    for state in states:              # plain data only: arrays and JSON values
        assert all(isinstance(v, (np.ndarray, str, int, dict, list)) for v in state.values())
    forward, backward = segbench.BoundaryEval(), segbench.BoundaryEval()
    for s in states:
        forward.merge(s)
    for s in states[::-1]:
        backward.merge(s)
    _assert_same_as_run(forward.compute(), synthetic["run"])
    assert backward.compute().metrics == forward.compute().metrics
    loaded = segbench.BoundaryEval()
    loaded.load_state_dict(forward.state_dict())
    assert loaded.compute().per_item == forward.compute().per_item


def test_merge_refuses_other_settings_and_shared_ids(synthetic):
    a = segbench.BoundaryEval()
    a.update(synthetic["maps"]["synth000"], synthetic["gt"] / "synth000.mat")
    b = segbench.BoundaryEval(max_dist=0.01)
    with pytest.raises(InputError, match=r"other settings: params\.max_dist 0\.01 there, 0\.0075 here"):
        a.merge(b)
    c = segbench.BoundaryEval()
    c.update(synthetic["maps"]["synth000"], synthetic["gt"] / "synth000.mat")
    with pytest.raises(InputError, match="both hold image 'synth000'"):
        a.merge(c)
    with pytest.raises(InputError, match="not a BoundaryEval state_dict"):
        a.merge({"counts": np.zeros(3)})
    broken = c.state_dict()
    broken["cnt_r"] = broken["cnt_r"] + 10 ** 6          # more matched than there are
    with pytest.raises(InputError, match="record of image 0 .* is not valid"):
        segbench.BoundaryEval().load_state_dict(broken)


def test_pickled_evaluator_with_a_pool_and_reset(synthetic):
    ev = segbench.BoundaryEval(workers=2)
    for iid in sorted(synthetic["maps"])[:3]:
        ev.update(synthetic["maps"][iid], synthetic["gt"] / f"{iid}.mat")
    copy = pickle.loads(pickle.dumps(ev))
    assert copy.compute().metrics == ev.compute().metrics
    ev.reset()
    assert len(ev) == 0
    ev.update(synthetic["maps"]["synth000"], synthetic["gt"] / "synth000.mat")
    assert [r["id"] for r in ev.compute().per_item] == ["synth000"]


def test_memory_holds_counts_not_maps(synthetic):
    """After the pool has counted an image, the evaluator holds its counts only."""
    ev = segbench.BoundaryEval(workers=2)
    iid = "synth000"
    for k in range(6):
        ev.update(synthetic["maps"][iid], synthetic["gt"] / f"{iid}.mat", ids=f"x{k}")
    ev._items()
    size = len(pickle.dumps(ev))
    assert size < 6 * 50_000, size


def test_ci_on_request_matches_the_folder_run(synthetic):
    ids = sorted(synthetic["maps"])
    ev = segbench.BoundaryEval()
    for iid in ids:
        ev.update(read_prediction(synthetic["pngs"] / f"{iid}.png").pb,
                  synthetic["gt"] / f"{iid}.mat")
    res = ev.compute(ci={"resamples": 200})
    run = segbench.evaluate("boundary", gt=synthetic["gt"], pred=synthetic["pngs"],
                            progress=False, plot=False, ci={"resamples": 200})
    assert res.intervals == run.intervals and set(res.intervals) >= {"ODS", "OIS", "AP"}


# --- segbench.evaluate(pred={id: array}) --------------------------------------------


def test_evaluate_takes_in_memory_predictions(synthetic, tmp_path):
    """A mapping of id -> array gives the records and numbers of the PNG folder, and
    with --out its files; a bad array is named by its id."""
    arrays = {iid: read_prediction(synthetic["pngs"] / f"{iid}.png").pb
              for iid in synthetic["maps"]}
    res = segbench.evaluate("boundary", gt=synthetic["gt"], pred=arrays,
                            out=tmp_path / "mem", progress=False, plot=False)
    _assert_same_as_run(res, synthetic["run"])
    assert res.name == "predictions"
    assert (tmp_path / "mem" / "synth000_ev1.txt").read_text() == \
        (synthetic["run"] / "synth000_ev1.txt").read_text()
    again = segbench.evaluate("boundary", gt=synthetic["gt"], pred=arrays,
                              out=tmp_path / "mem", progress=False, plot=False)
    assert again.metrics == res.metrics
    arrays["synth003"] = arrays["synth003"][:, :-1]
    with pytest.raises(InputError, match=r"^pred\['synth003'\]: prediction is 96x127"):
        segbench.evaluate("boundary", gt=synthetic["gt"], pred=arrays, progress=False)
    arrays["synth003"] = np.full((96, 128), 2.0)
    with pytest.raises(InputError, match=r"^pred\['synth003'\]: boundary map has values"):
        segbench.evaluate("boundary", gt=synthetic["gt"], pred=arrays, progress=False)


# --- RegionEval and human_scores ------------------------------------------------------


def _ucm2(fine: np.ndarray, coarse: np.ndarray) -> np.ndarray:
    """A doubleSize contour map: the edges of ``fine`` at 0.3, of ``coarse`` at 0.7
    (each edge between two pixels, the corners at the largest edge beside them)."""
    h, w = fine.shape
    u = np.zeros((2 * h + 1, 2 * w + 1))
    for seg, v in ((fine, 0.3), (coarse, 0.7)):
        right = seg[:, 1:] != seg[:, :-1]
        down = seg[1:, :] != seg[:-1, :]
        u[1::2, 2:-1:2] = np.maximum(u[1::2, 2:-1:2], v * right)
        u[2:-1:2, 1::2] = np.maximum(u[2:-1:2, 1::2], v * down)
    u[2:-1:2, 2:-1:2] = np.maximum.reduce([u[1:-2:2, 2:-1:2], u[3::2, 2:-1:2],
                                           u[2:-1:2, 1:-2:2], u[2:-1:2, 3::2]])
    return u


@pytest.fixture(scope="module")
def regions(synthetic, tmp_path_factory):
    """ucm2 and segs .mat predictions of the synthetic images, scored by ``segbench
    region``."""
    import scipy.io

    from segbench.io import write_segs
    root = tmp_path_factory.mktemp("regions")
    items = sorted(synthetic["items"], key=lambda it: it.iid)
    ucm = {it.iid: _ucm2(it.segmentations[1], it.segmentations[2]) for it in items}
    segs = {it.iid: [it.segmentations[3], it.truth] for it in items}
    for iid in ucm:
        (root / "ucm").mkdir(exist_ok=True)
        scipy.io.savemat(root / "ucm" / f"{iid}.mat", {"ucm2": ucm[iid]})
        write_segs(root / "segs" / f"{iid}.mat", segs[iid])
    runs = {}
    for kind in ("ucm", "segs"):
        runs[kind] = root / f"run-{kind}"
        proc = _cli("region", "--gt", synthetic["gt"], "--pred", root / kind, "--out",
                    runs[kind], "--quiet")
        assert proc.returncode == 0, proc.stderr
    return {"ucm": ucm, "segs": segs, "runs": runs, "items": items}


def _assert_region_same(res, run: Path):
    from segbench.io import format_ev2, format_ev3, format_ev4
    folder = segbench.Result.from_json(run / "result_region.json")
    assert res.metrics == pytest.approx(folder.metrics, rel=0, abs=1e-12)
    assert [r["id"] for r in res.per_item] == [r["id"] for r in folder.per_item]
    for row, rec in zip(res.per_item, res.records):
        for fmt, suffix in ((format_ev2, "ev2"), (format_ev3, "ev3"), (format_ev4, "ev4")):
            assert fmt(rec) == (run / f"{row['id']}_{suffix}.txt").read_text(), suffix


def test_region_eval_equals_segbench_region_on_ucm2_and_segs(synthetic, regions):
    ids = sorted(regions["ucm"])
    for workers in (0, 2):
        ev = segbench.RegionEval(workers=workers)
        batch = np.stack([regions["ucm"][i] for i in ids[:4]])        # (N, 2H+1, 2W+1)
        ev.update(batch, [it.segmentations for it in regions["items"][:4]], ids=ids[:4])
        for it in regions["items"][4:]:
            ev.update(regions["ucm"][it.iid], synthetic["gt"] / f"{it.iid}.mat")
        _assert_region_same(ev.compute(), regions["runs"]["ucm"])
    ev = segbench.RegionEval()
    ev.update([regions["segs"][i] for i in ids], [synthetic["gt"] / f"{i}.mat" for i in ids])
    _assert_region_same(ev.compute(), regions["runs"]["segs"])
    run = segbench.evaluate("region", gt=synthetic["gt"], pred=regions["ucm"],
                            progress=False)
    _assert_region_same(run, regions["runs"]["ucm"])


def test_region_eval_state_merges_and_refuses_boundary_maps(synthetic, regions):
    ids = sorted(regions["ucm"])
    halves = [segbench.RegionEval(), segbench.RegionEval()]
    for k, iid in enumerate(ids):
        halves[k % 2].update(regions["ucm"][iid], synthetic["gt"] / f"{iid}.mat")
    whole = segbench.RegionEval()
    whole.merge(pickle.loads(pickle.dumps(halves[1].state_dict())))
    whole.merge(halves[0])
    _assert_region_same(whole.compute(), regions["runs"]["ucm"])
    with pytest.raises(InputError, match="gt, annotator 0 is a boundary map .* the "
                                         "region measures need label maps"):
        segbench.RegionEval().update(regions["ucm"][ids[0]], _gt(96, 128))
    with pytest.raises(InputError,
                       match=r"^pred \(id 'synth000'\): ucm2 is 96x128, but a doubleSize"):
        segbench.RegionEval().update(np.zeros((96, 128)), synthetic["gt"] / "synth000.mat")


def test_human_scores_equal_segbench_human(synthetic, tmp_path):
    """Once per split, from the dataset or from the annotators' maps in memory: the
    figures of ``segbench human``; compute(human=...) puts them in the metrics."""
    out = tmp_path / "human"
    proc = _cli("human", "--gt", synthetic["root"], "--split", "test", "--out", out,
                "--quiet")
    assert proc.returncode == 0, proc.stderr
    folder_b = segbench.Result.from_json(out / "result_human_boundary.json")
    folder_r = segbench.Result.from_json(out / "result_human_region.json")
    from_files = segbench.human_scores(synthetic["root"], split="test")
    in_memory = segbench.human_scores([it.segmentations for it in synthetic["items"]])
    for hs in (from_files, in_memory):
        assert hs.point == (folder_b.metrics["recall"], folder_b.metrics["precision"],
                            folder_b.metrics["F"])
        for k in ("covering", "PRI", "VI"):
            assert hs.region.metrics[k] == folder_r.metrics[k]
    ev = segbench.BoundaryEval()
    ev.update(synthetic["maps"]["synth000"], synthetic["gt"] / "synth000.mat")
    assert ev.compute(human=from_files).metrics["human_F"] == folder_b.metrics["F"]
