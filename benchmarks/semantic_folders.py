"""Semantic evaluation from folders of PNG label maps, and in memory: segbench beside hotcoco.

Two sets of 500 pairs of 512x512 8-bit PNGs, 150 classes, written once to the cache
(Pillow's default PNG settings, as a user's ``Image.save`` writes them):

- ``blob``: the blob maps of benchmarks/semantic_data.py (about 5% ignored, 10% wrong):
  long runs of one label, what real label maps look like;
- ``random``: every pixel an independent uniform label on both sides: no runs at all,
  the worst case for run-length counting and for PNG compression.

For each set, runs alternate between the libraries, ``--repeat`` times, and the medians
are printed (CPU-seconds of the process, all threads; wall beside it):

- files: hotcoco ``SemanticEval.update_folders`` against segbench's ``update_folders``
  and ``evaluate_semantic`` (the engine path ``segbench semantic`` takes, no output
  folder, one worker);
- memory: the decoded maps (uint8) fed one pair per ``update`` to each;
- floor: segbench reading and decoding the files as ``update_folders`` does
  (``read_stored_label_pair``), no counting.

hotcoco runs on one thread (``RAYON_NUM_THREADS=1``, set before it is imported), so
both sides are compared on one core. Every run's mIoU is checked against hotcoco's to
1e-12. hotcoco is a peer for this script only: ``pip install hotcoco==1.3.0`` into the
environment that runs it; without it only segbench's rows are printed.

    python benchmarks/semantic_folders.py --repeat 5
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")   # before hotcoco starts its pool

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from semantic_data import default_cache, make_pair  # noqa: E402

import segbench  # noqa: E402
from segbench.semantic import SemanticEval  # noqa: E402

try:
    from hotcoco import semantic as hc_semantic
    import hotcoco
except ImportError:
    hc_semantic = hotcoco = None

N, H, W, CLASSES = 500, 512, 512, 150
SETS = ("blob", "random")


def folders(name: str, cache: Path) -> tuple[Path, Path]:
    """``<cache>/folders/<name>-512/{gt,pred}/<i>.png``, written once."""
    from PIL import Image
    root = cache / "folders" / f"{name}-512"
    done = root / "done"
    if not done.exists():
        shutil.rmtree(root, ignore_errors=True)
        (root / "gt").mkdir(parents=True)
        (root / "pred").mkdir()
        rng = np.random.default_rng(7)
        for i in range(N):
            if name == "blob":
                gt, pred = make_pair(rng, H, W, CLASSES, 40)
            else:
                gt = rng.integers(0, CLASSES, (H, W), dtype=np.uint8)
                pred = rng.integers(0, CLASSES, (H, W), dtype=np.uint8)
            Image.fromarray(gt).save(root / "gt" / f"{i:04d}.png")
            Image.fromarray(pred).save(root / "pred" / f"{i:04d}.png")
        done.write_text("")
    return root / "gt", root / "pred"


def timed(fn):
    c, w = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - c, time.perf_counter() - w, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    ap.add_argument("--repeat", type=int, default=5, help="runs of each, medians")
    ap.add_argument("--cache", type=Path, default=default_cache())
    a = ap.parse_args(argv)
    from segbench.runners._semantic import evaluate_semantic
    from segbench.io import read_stored_label_pair, read_stored_labels

    print(f"segbench {segbench.__version__} from {Path(segbench.__file__).parent}; "
          + (f"hotcoco {hotcoco.__version__}, RAYON_NUM_THREADS="
             f"{os.environ['RAYON_NUM_THREADS']}" if hotcoco else
             "hotcoco not installed: segbench rows only"))
    # compile / load every kernel outside the timings
    tiny = np.zeros((4, 4), np.uint8)
    SemanticEval(3, boundary_dilation=None).update(tiny, tiny)
    results = {}
    for name in a.sets:
        gt_dir, pred_dir = folders(name, a.cache)
        files = sorted(gt_dir.iterdir())
        read_stored_labels(files[0])
        gts = [read_stored_labels(f) for f in files]
        preds = [read_stored_labels(pred_dir / f.name) for f in files]

        def ours_files():
            ev = SemanticEval(CLASSES, boundary_dilation=None)
            ev.update_folders(gt_dir, pred_dir)
            return ev.report()["metrics"]["mIoU"]

        def ours_engine():
            res = evaluate_semantic(gt_dir, pred_dir, None, classes=CLASSES,
                                    boundary_dilation=None, workers=1, progress=False)
            return res.metrics["mIoU"]

        def ours_memory():
            ev = SemanticEval(CLASSES, boundary_dilation=None)
            for g, p in zip(gts, preds):
                ev.update(g, p)
            return ev.report()["metrics"]["mIoU"]

        def floor():
            for f in files:
                read_stored_label_pair(f, pred_dir / f.name)

        runs = {"files: segbench update_folders": ours_files,
                "files: segbench evaluate_semantic": ours_engine,
                "memory: segbench update": ours_memory,
                "floor: segbench read + decode": floor}
        if hc_semantic is not None:
            def hc_files():
                ev = hc_semantic.SemanticEval(CLASSES)
                ev.update_folders(str(gt_dir), str(pred_dir))
                return ev.report()["metrics"]["mIoU"]

            def hc_memory():
                ev = hc_semantic.SemanticEval(CLASSES)
                for g, p in zip(gts, preds):
                    ev.update(g, p)
                return ev.report()["metrics"]["mIoU"]
            runs = {"files: hotcoco update_folders": hc_files,
                    "memory: hotcoco update": hc_memory, **runs}
        ours_engine()   # the engine's first call imports what it needs
        times = {k: [] for k in runs}
        miou = {}
        for _ in range(a.repeat):           # alternating, so load changes hit all alike
            for label, fn in runs.items():
                cpu, wall, value = timed(fn)
                times[label].append((cpu, wall))
                if value is not None:
                    miou[label] = value
        ref = miou.get("files: hotcoco update_folders", miou["files: segbench update_folders"])
        for label, value in miou.items():
            assert abs(value - ref) <= 1e-12, (name, label, value, ref)
        results[name] = {k: (statistics.median(c for c, _ in v),
                             statistics.median(w for _, w in v)) for k, v in times.items()}
        print(f"  {name}: done (mIoU {ref:.6f}, equal to 1e-12 in every run)", flush=True)

    print(f"\n{N} pairs of {H}x{W}, {CLASSES} classes; medians of {a.repeat} alternating "
          "runs; CPU-s of the process (all threads), wall beside; ratio = hotcoco CPU-s / "
          "this row's CPU-s\n")
    print(f"{'set':<8}{'run':<36}{'CPU-s':>8}{'wall s':>8}{'ms/pair':>9}{'vs hotcoco':>12}")
    for name, rows in results.items():
        for label, (cpu, wall) in rows.items():
            peer = None
            if hc_semantic is not None and not label.startswith("floor"):
                peer = rows["files: hotcoco update_folders" if label.startswith("files")
                            else "memory: hotcoco update"][0]
            ratio = "" if peer is None or "hotcoco" in label else f"{peer / cpu:.2f}x"
            print(f"{name:<8}{label:<36}{cpu:>8.3f}{wall:>8.3f}{1000 * cpu / N:>9.3f}"
                  f"{ratio:>12}")


if __name__ == "__main__":
    main()
