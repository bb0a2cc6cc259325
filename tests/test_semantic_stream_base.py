"""Issue 39, item 3 for the semantic family: SemanticEval is a streaming evaluator on
the base every one of them shares, its numbers those of an independent numpy count, its
folder call the one way in (``segbench.evaluate("semantic", ...)``), its updates whole
or nothing, and its state one sum however many images it counts."""

from __future__ import annotations

import pickle
import tracemalloc

import numpy as np
import pytest
from PIL import Image

import segbench
from segbench import hooks
from segbench.errors import InputError
from segbench.result import json_ready
from segbench.semantic import SemanticEval, confusion_metrics
from segbench.streaming import StreamEvalBase
from segbench.stream import StreamEvalBase as StreamBaseOfStream


# --- independent references ------------------------------------------------------------


def bincount_confusion(gt, pred, c, ignore=255, rzl=False):
    """(C, C) confusion matrix by np.bincount; row = ground truth."""
    gt = np.asarray(gt, np.int64).ravel()
    pred = np.asarray(pred, np.int64).ravel()
    if rzl:  # mmseg's LoadAnnotations: 0 -> 255, the others down by one
        gt = np.where(gt == 0, 255, gt - 1)
        gt[gt == 254] = 255
    keep = np.ones(gt.shape, bool) if ignore is None else gt != ignore
    return np.bincount(gt[keep] * c + pred[keep], minlength=c * c).reshape(c, c)


def numpy_means(m):
    """mIoU, mAcc, aAcc, mDice, fwIoU of a matrix, written out in numpy."""
    m = m.astype(np.float64)
    tp, gt, pr = np.diag(m), m.sum(1), m.sum(0)
    union = gt + pr - tp
    with np.errstate(invalid="ignore", divide="ignore"):
        iou = np.where(union > 0, tp / union, np.nan)
        acc = np.where(gt > 0, tp / gt, np.nan)
        dice = np.where(gt + pr > 0, 2 * tp / (gt + pr), np.nan)
    total = gt.sum()
    fw = np.nansum(gt / total * np.nan_to_num(iou)) if total else np.nan
    return {"mIoU": np.nanmean(iou), "mAcc": np.nanmean(acc),
            "aAcc": tp.sum() / total if total else np.nan, "mDice": np.nanmean(dice),
            "fwIoU": fw}


def blobs(rng, shape, classes, cell=6, ignore_frac=0.0):
    h, w = shape
    small = rng.integers(0, classes, (h // cell + 2, w // cell + 2))
    lab = np.ascontiguousarray(np.repeat(np.repeat(small, cell, 0), cell, 1)[:h, :w])
    if ignore_frac:
        lab[rng.uniform(size=shape) < ignore_frac] = 255
    return lab


def noisy(rng, gt, classes, frac=0.1):
    pred = np.where(gt == 255, rng.integers(0, classes, gt.shape), gt)
    flip = rng.uniform(size=gt.shape) < frac
    pred[flip] = rng.integers(0, classes, flip.sum())
    return pred


def _png(path, labels):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.asarray(labels).astype(np.uint8)).save(path)


# --- one base ----------------------------------------------------------------------------


def test_every_streaming_evaluator_is_built_on_one_base():
    assert StreamBaseOfStream is StreamEvalBase
    for cls in (SemanticEval, segbench.BoundaryEval, segbench.RegionEval,
                segbench.SemanticBoundaryEval):
        assert issubclass(cls, StreamEvalBase), cls
    ev = SemanticEval(3)
    for name in ("merge", "state_dict", "load_state_dict", "reset", "close", "compute"):
        assert callable(getattr(ev, name))


def test_the_folder_call_imports_no_higher_layer():
    """update_folders reaches the folder run through the composition root's slot,
    not an import (tests/test_architecture.py declares no upward import)."""
    import ast
    import inspect

    from segbench.semantic import _evaluator

    tree = ast.parse(inspect.getsource(_evaluator))
    imported = {node.module for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module}
    assert not {m for m in imported if m.split(".")[0] in ("api", "api_semantic", "runners",
                                                            "engine", "families")}
    method = next(n for n in ast.walk(tree)
                  if isinstance(n, ast.FunctionDef) and n.name == "update_folders")
    assert not [n for n in ast.walk(method) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert hooks.evaluate is not None


# --- the numbers of an independent count -------------------------------------------------


@pytest.mark.parametrize("kw, workers, shape", [
    (dict(), 1, (37, 53)),
    (dict(ignore_index=None), 1, (40, 30)),
    (dict(reduce_zero_label=True), 1, (33, 61)),
    (dict(ignore_index=2), 1, (25, 25)),
    (dict(), 2, (720, 800)),        # big enough that each image is cut in two slots
])
def test_counts_and_means_equal_a_bincount(kw, workers, shape):
    rng = np.random.default_rng(sum(shape))
    c = 5
    ev = SemanticEval(c, workers=workers, boundary_dilation=None, **kw)
    total = np.zeros((c, c), np.int64)
    ignore = kw.get("ignore_index", 255)
    for k in range(3):
        if kw.get("reduce_zero_label"):
            gt = blobs(rng, shape, c + 1, cell=5)            # raw 0 is "other"
            gt[rng.uniform(size=shape) < 0.03] = 255
        else:
            gt = blobs(rng, shape, c, cell=5, ignore_frac=0.03)
            if ignore is None:
                gt[gt == 255] = 0
            elif ignore != 255:
                gt[gt == 255] = ignore
        pred = noisy(rng, gt if not kw.get("reduce_zero_label") else
                     np.where(gt == 0, 255, np.where(gt == 255, 255, gt - 1)), c)
        pred = np.where(pred >= c, 0, pred)
        if k == 2:      # a batch of two
            ev.update(np.stack([gt, gt[::-1]]), np.stack([pred, pred[::-1]]))
            for g, p in ((gt, pred), (gt[::-1], pred[::-1])):
                total += bincount_confusion(g, p, c, ignore, kw.get("reduce_zero_label"))
        else:
            ev.update(gt.astype(np.uint8), pred.astype(np.int32))
            total += bincount_confusion(gt, pred, c, ignore, kw.get("reduce_zero_label"))
    np.testing.assert_array_equal(ev.confusion(), total)
    assert ev.n_images == 4 and ev.n_pixels == total.sum()
    metrics = ev.report()["metrics"]
    exact = confusion_metrics(total)            # the pure function, on the bincount
    for key in ("mIoU", "mAcc", "aAcc", "mDice", "fwIoU"):
        assert metrics[key] == exact[key], key  # to the last bit
        assert metrics[key] == pytest.approx(numpy_means(total)[key], rel=1e-12), key
    assert json_ready(ev.compute().metrics) == json_ready(metrics)


def test_shards_by_state_dict_pickle_and_merge_equal_one_pass():
    rng = np.random.default_rng(7)
    pairs = [(g, noisy(rng, g, 6)) for g in
             (blobs(rng, (30 + 7 * i, 50), 6, ignore_frac=0.02) for i in range(6))]
    whole = SemanticEval(6)
    for g, p in pairs:
        whole.update(g, p)
    shards = [SemanticEval(6) for _ in range(3)]
    for i, (g, p) in enumerate(pairs):
        shards[i % 3].update(g, p)
    merged = SemanticEval(6)
    merged.merge(shards[0])                                         # an evaluator
    merged.merge(pickle.loads(pickle.dumps(shards[1].state_dict())))  # plain data
    merged.merge(pickle.loads(pickle.dumps(shards[2])))               # a pickle
    assert json_ready(merged.results()) == json_ready(whole.results())
    again = SemanticEval(6)
    again.update(*pairs[0])
    again.load_state_dict(whole.state_dict())                       # replaces
    assert json_ready(again.results()) == json_ready(whole.results())
    again.reset()
    assert again.n_images == 0 and again.n_pixels == 0


def test_merge_refusals_keep_their_messages():
    ev = SemanticEval(3)
    with pytest.raises(ValueError, match="different settings: ignore_index 255 vs 0"):
        ev.merge(SemanticEval(3, ignore_index=0))
    with pytest.raises(ValueError, match="ignore_index"):
        ev.merge(SemanticEval(3, ignore_index=0).state_dict())
    with pytest.raises(TypeError, match="can only merge a SemanticEval, got str"):
        ev.merge("not an evaluator")
    with pytest.raises(TypeError, match="got BoundaryEval"):
        ev.merge(segbench.BoundaryEval())
    with pytest.raises(InputError, match="cannot merge a SemanticEval into a BoundaryEval"):
        segbench.BoundaryEval().merge(ev)
    bad = SemanticEval(3).state_dict()
    bad["conf"] = -bad["conf"] - 1
    with pytest.raises(InputError, match="negative"):
        ev.merge(bad)
    assert ev.n_images == 0


# --- whole updates -----------------------------------------------------------------------


@pytest.mark.parametrize("workers, shape", [(1, (30, 40)), (2, (720, 800))])
def test_a_batch_with_a_bad_pair_counts_nothing(workers, shape):
    rng = np.random.default_rng(11)
    gt = np.stack([blobs(rng, shape, 4, cell=20) for _ in range(3)])
    pred = np.stack([noisy(rng, g, 4, 0.02) for g in gt])
    with SemanticEval(4, workers=workers) as ev:
        ev.update(gt[0], pred[0])
        before = json_ready(ev.results()), ev.confusion().copy()
        bad = pred.copy()
        bad[1, 5, 7] = 9                          # one label out of range, image 1
        with pytest.raises(InputError, match="image 1, row 5, col 7"):
            ev.update(gt, bad)
        assert json_ready(ev.results()) == before[0]
        np.testing.assert_array_equal(ev.confusion(), before[1])
        ev.update(gt, pred)                       # the corrected batch counts whole
        assert ev.n_images == 4
    assert ev._pool is None                      # closed by the with block


# --- the folder call is segbench.evaluate("semantic") -------------------------------------


def _folders(tmp_path, bad=False):
    rng = np.random.default_rng(5)
    for i in range(4):
        g = blobs(rng, (24, 36), 4, cell=4, ignore_frac=0.05)
        p = noisy(rng, g, 4)
        if bad and i == 2:
            p[3, 3] = 7
        _png(tmp_path / "gt" / f"{i}.png", g)
        _png(tmp_path / "pred" / f"{i}.png", p)
    return tmp_path / "gt", tmp_path / "pred"


def test_update_folders_equals_evaluate_semantic(tmp_path, monkeypatch):
    gt, pred = _folders(tmp_path)
    run = segbench.evaluate("semantic", gt, pred, classes=4, progress=False)
    calls = []
    real = hooks.evaluate

    def spy(*args, **kw):
        calls.append((args, kw))
        return real(*args, **kw)

    monkeypatch.setattr(hooks, "evaluate", spy)
    ev = SemanticEval(4)
    assert ev.update_folders(gt, pred) == 4
    assert len(calls) == 1 and calls[0][0][:3] == ("semantic", gt, pred)
    assert json_ready(ev.results()) == json_ready(run.detail.results())
    assert json_ready(ev.report()["metrics"]) == json_ready(run.metrics)
    np.testing.assert_array_equal(ev.confusion(), run.detail.confusion())


def test_update_folders_with_a_bad_pair_counts_nothing(tmp_path):
    gt, pred = _folders(tmp_path, bad=True)
    ev = SemanticEval(4)
    with pytest.raises(InputError, match=r"2\.png"):
        ev.update_folders(gt, pred)
    assert ev.n_images == 0 and ev.n_pixels == 0


# --- memory ------------------------------------------------------------------------------


def test_the_state_is_one_sum_whatever_the_number_of_images():
    """150 classes: the state is one C x C matrix and three C-vectors (183,600 bytes),
    not a record per image; 300 more images leave it the same size."""
    c = 150
    rng = np.random.default_rng(3)
    g = rng.integers(0, c, (64, 80)).astype(np.uint8)
    p = rng.integers(0, c, (64, 80)).astype(np.uint8)
    ev = SemanticEval(c, boundary_dilation=None)
    ev.update(g, p)
    size = sum(v.nbytes for v in ev.state_dict().values() if isinstance(v, np.ndarray))
    assert size == (c * c + 3 * c) * 8
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(300):
            ev.update(g, p)
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, grown              # a per-image record would be ~3 MB
    assert len(pickle.dumps(ev)) < 2 * size
    assert ev.n_images == 301
