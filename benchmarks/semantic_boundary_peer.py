"""segbench's semantic-boundary benchmark beside pyEdgeEval's SBD evaluation, on the same
synthetic SBD-like data: per-class ODS F from each one's counts, the count differences,
and the CPU-time ratio (ours / pyEdgeEval).

    python benchmarks/semantic_boundary_peer.py [--images 6] [--size 240x320]

pyEdgeEval runs in ``benchmarks/.peer-venv`` (never imported here): for each image and
class its own per-sample function, ``pyEdgeEval.datasets.sbd_eval_single`` (what
``SBDEvaluator.evaluate_category`` maps over its samples), in one process, timed with
``time.process_time``. Both read the same files: ground truth as pyEdgeEval's encoded edge
PNG (ours: the same maps stored in ``cls/<id>.mat``), the class regions (theirs as a
trainId PNG, since its loader compares with ``category - 1``), predictions as
``class_NNN/<id>.png``. Predictions and ground truth keep clear of a 5-pixel border, which
pyEdgeEval always zeroes in predictions, so both score the same maps at the full size.

First ``mask2edge`` beside pyEdgeEval's ``mask2bdry`` (cv2 and scipy paths) on random
label maps with void (expected: identical). Then two settings: ``pre-seal`` (kill internal, skip absent classes, thinning, max-dist
0.02) and ``seal`` (neither, thinning, 0.02). Expected: sumR equal; sumP differing by a
few pixels where pyEdgeEval's LUT thinning differs from MATLAB's ``bwmorph`` (segbench's,
checked against Octave); cntR/cntP within a few pixels (their CSA matcher samples
outlier edges at random, ours is exact); so per-class F within a few thousandths.
Measured (6 images of 240x320): max |delta F| 4.6e-3 (pre-seal) and 3.4e-3 (seal),
CPU-time ratio 0.07-0.08 (ours 5-11 s, pyEdgeEval 81-143 s). pyEdgeEval takes minutes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PEER = ROOT / "benchmarks" / ".peer-venv" / "bin" / "python"

DRIVER = r"""
import json, sys, time
cfg = json.loads(sys.argv[1])
out_stream, sys.stdout = sys.stdout, sys.stderr
import numpy as np
import pyEdgeEval
from pyEdgeEval.datasets import sbd_eval_single
counts = {}
t0 = time.process_time()
for item in cfg["items"]:
    for cat in range(1, 21):
        r = sbd_eval_single(dict(
            edge_path=item["edge"], seg_path=item["seg"],
            pred_path=f"{cfg['pred']}/class_{cat:03d}/{item['iid']}.png",
            category=cat, scale=1.0, max_dist=cfg["max_dist"], thresholds=99,
            apply_thinning=True, apply_nms=False, kill_internal=cfg["kill"],
            skip_if_nonexistent=cfg["skip"], num_classes=20))
        counts[f"{item['iid']}/{cat}"] = [np.asarray(a).tolist() for a in r]
cpu = time.process_time() - t0
out_stream.write(json.dumps({"version": pyEdgeEval.__version__, "cpu": cpu,
                             "counts": counts}))
"""


MASK2EDGE = r"""
import json, sys
import numpy as np
from pyEdgeEval.utils.distance_transforms import mask2bdry
labels = np.load(sys.argv[1])
out = {f"{r} {cv}": np.asarray(mask2bdry(labels == 1, (labels == 3).astype(np.uint8),
                                         radius=r, use_cv2=cv)).astype(bool).tolist()
       for r in (1, 2) for cv in (True, False)}
sys.__stdout__.write(json.dumps(out))
"""


def _check_mask2edge(tmp: Path) -> None:
    """segbench's mask2edge beside pyEdgeEval's mask2bdry (cv2 and scipy paths) on
    random label maps, class 1 against void 3."""
    from segbench.semantic_boundary import mask2edge
    rng = np.random.default_rng(0)
    worst = 0
    for k in range(4):
        labels = np.kron(rng.integers(0, 4, (8, 10)), np.ones((7, 7), int))
        np.save(tmp / "labels.npy", labels)
        proc = subprocess.run([str(PEER), "-c", MASK2EDGE, str(tmp / "labels.npy")],
                              cwd=tmp, capture_output=True, text=True)
        theirs = json.loads(proc.stdout.splitlines()[-1])
        for key, edge in theirs.items():
            ours = mask2edge(labels == 1, radius=int(key.split()[0]), ignore=labels == 3)
            worst = max(worst, int((ours != np.array(edge, bool)).sum()))
    print(f"mask2edge vs pyEdgeEval mask2bdry (radius 1, 2; cv2 and scipy; 4 random "
          f"label maps): {worst} pixels differ at most")


def _write(root: Path, n: int, shape, seed: int = 0) -> list[str]:
    import scipy.io
    import scipy.sparse
    from PIL import Image
    from scipy.ndimage import binary_erosion, gaussian_filter

    from segbench.semantic_boundary import encode_multilabel
    rng = np.random.default_rng(seed)
    h, w = shape
    for sub in ("cls", "edges", "seg", "pred"):
        (root / sub).mkdir(parents=True)
    ids = []
    for i in range(n):
        iid = f"2008_{i:06d}"
        ids.append(iid)
        seg = np.zeros((h, w), np.uint8)
        for c in rng.choice(np.arange(1, 21), size=3, replace=False):
            r0, c0 = rng.integers(10, h // 2), rng.integers(10, w // 2)
            r1, c1 = r0 + rng.integers(h // 6, h // 2 - 10), c0 + rng.integers(w // 6,
                                                                           w // 2 - 10)
            seg[r0:r1, c0:c1] = c
        edges = np.stack([(seg == c) & ~binary_erosion(seg == c) for c in range(1, 21)])
        cells = np.empty((20, 1), object)
        for c in range(20):
            cells[c, 0] = scipy.sparse.csc_matrix(edges[c].astype(float))
        scipy.io.savemat(root / "cls" / f"{iid}.mat", {"GTcls": {
            "Segmentation": seg, "Boundaries": cells}})
        Image.fromarray(encode_multilabel(edges)).save(root / "edges" / f"{iid}.png")
        Image.fromarray(np.where(seg > 0, seg - 1, 255).astype(np.uint8)).save(
            root / "seg" / f"{iid}.png")
        for c in range(20):
            shift = np.roll(edges[c], rng.integers(-2, 3), axis=rng.integers(0, 2))
            pb = gaussian_filter(shift.astype(float), 1.2) * 2.5 \
                + rng.random((h, w)) * 0.35
            inner = (seg == c + 1) & (rng.random((h, w)) < 0.01)   # clutter inside
            pb = np.clip(pb + gaussian_filter(inner.astype(float), 1.0) * 3, 0, 1)
            pb[:5], pb[-5:], pb[:, :5], pb[:, -5:] = 0, 0, 0, 0
            folder = root / "pred" / f"class_{c + 1:03d}"
            folder.mkdir(exist_ok=True)
            Image.fromarray(np.round(pb * 255).astype(np.uint8)).save(
                folder / f"{iid}.png")
    return ids


def _ods(counts_by_class, ids) -> np.ndarray:
    """Per-class ODS F by segbench's summary of (image -> class -> 4 x T) counts."""
    from segbench.semantic_boundary._matcher import (BoundaryCounts, default_thresholds,
                                                     summarize_boundary)
    ths = default_thresholds(99)
    out = np.full(20, np.nan)
    for c in range(20):
        recs = [BoundaryCounts(ths, *(np.asarray(v, np.int64)
                                      for v in counts_by_class[i][c])) for i in ids]
        if sum(r.sum_r[0] for r in recs):
            out[c] = summarize_boundary(recs, ids).ods[3]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=6)
    ap.add_argument("--size", default="240x320", help="HxW")
    a = ap.parse_args()
    if not PEER.is_file():
        print(f"no peer environment at {PEER}; nothing to compare", file=sys.stderr)
        return 1
    import segbench
    from segbench.semantic_boundary import (class_folder_predictions, evaluate_classes,
                                            open_sbd)
    shape = tuple(int(v) for v in a.size.lower().split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _check_mask2edge(root)
        ids = _write(root, a.images, shape)
        ds = open_sbd(root)
        pred = class_folder_predictions(root / "pred", ds)
        evaluate_classes(np.zeros((1, 8, 8)), np.eye(8, dtype=bool)[None])   # compile
        for name, kill in (("pre-seal", True), ("seal", False)):
            params = dict(kill_internal=kill, skip_if_nonexistent=kill, margin=0,
                          max_dist=0.02, thin=True, gt_edges="stored")
            t0 = time.process_time()
            res = segbench.evaluate("semantic_boundary", gt=ds, pred=pred, progress=False,
                                    workers=1, threads=1, **params)
            ours_cpu = time.process_time() - t0
            ours = {i: [[getattr(r, k)[c] for k in ("cnt_r", "sum_r", "cnt_p", "sum_p")]
                        for c in range(20)] for i, r in zip(ids,
                                                            res.records)}
            cfg = {"items": [{"iid": i, "edge": str(root / "edges" / f"{i}.png"),
                              "seg": str(root / "seg" / f"{i}.png")} for i in ids],
                   "pred": str(root / "pred"), "max_dist": 0.02, "kill": kill,
                   "skip": kill}
            proc = subprocess.run([str(PEER), "-c", DRIVER, json.dumps(cfg)], cwd=tmp,
                                  capture_output=True, text=True)
            if proc.returncode:
                print(proc.stderr[-2000:], file=sys.stderr)
                return 1
            peer = json.loads(proc.stdout)
            theirs = {i: [peer["counts"][f"{i}/{c + 1}"] for c in range(20)] for i in ids}
            d = np.array([[np.subtract(ours[i][c], theirs[i][c]) for c in range(20)]
                          for i in ids])                        # (N, 20, 4, T)
            f_ours, f_theirs = _ods(ours, ids), _ods(theirs, ids)
            delta = f_ours - f_theirs
            print(f"{name}: {a.images} images {shape[0]}x{shape[1]}, 20 classes, "
                  f"pyEdgeEval {peer['version']}")
            print(f"  sumR differs in {int(np.count_nonzero(d[:, :, 1]))} entries, sumP "
                  f"in {int(np.count_nonzero(d[:, :, 3]))}; |cntR diff| max "
                  f"{int(np.abs(d[:, :, 0]).max())}, |cntP diff| max "
                  f"{int(np.abs(d[:, :, 2]).max())} px")
            print("  class  ODS F ours  ODS F pyEdgeEval   delta")
            for c in np.flatnonzero(~np.isnan(f_ours)):
                print(f"  {c + 1:5d}  {f_ours[c]:.5f}     {f_theirs[c]:.5f}         "
                      f"{delta[c]:+.5f}")
            print(f"  max |delta F| {np.nanmax(np.abs(delta)):.2e}; MF-ODS ours "
                  f"{res.metrics['MF_ODS']:.5f}")
            print(f"  CPU seconds: ours {ours_cpu:.2f}, pyEdgeEval {peer['cpu']:.2f}, "
                  f"ratio {ours_cpu / peer['cpu']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
