"""Semantic evaluation of two folders of label-map PNGs: files read, paired and counted.

Times ``SemanticEval.update_folders`` and, where the library has it,
``segbench.api_semantic.evaluate_semantic`` (the engine path: records, worker
processes) on the same folders, and checks that every run gives the same six means.
Two sets, written once as 8-bit PNGs to the cache (pairs of benchmarks/semantic_data.py):

- ``small``: 2000 pairs of 64x96, 19 classes (many small images: per-pair overhead);
- ``ade``: 200 pairs of 512x683, 150 classes.

Runs against whatever ``segbench`` is importable, so the same script times an older
checkout too::

    python benchmarks/semantic_folders.py --sets small ade --workers 1 2 --repeat 3
    PYTHONPATH=/path/to/old/src python benchmarks/semantic_folders.py ...
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from semantic_data import default_cache, make_pair  # noqa: E402

import segbench  # noqa: E402
from segbench.semantic import METRIC_NAMES, SemanticEval  # noqa: E402

try:
    from segbench.api_semantic import evaluate_semantic
except ImportError:          # an older segbench: update_folders only
    evaluate_semantic = None

SETS = {  # name: (pairs, height, width, classes, seeds per map)
    "small": (2000, 64, 96, 19, 8),
    "ade": (200, 512, 683, 150, 40),
}


def folders(name: str, cache: Path) -> tuple[Path, Path, int]:
    """``<cache>/folders/<name>/{gt,pred}/<i>.png``, written once."""
    from PIL import Image
    n, h, w, classes, seeds = SETS[name]
    root = cache / "folders" / name
    done = root / "done"
    if not done.exists():
        shutil.rmtree(root, ignore_errors=True)
        (root / "gt").mkdir(parents=True)
        (root / "pred").mkdir()
        rng = np.random.default_rng(7)
        for i in range(n):
            gt, pred = make_pair(rng, h, w, classes, seeds)
            Image.fromarray(gt).save(root / "gt" / f"{i:05d}.png")
            Image.fromarray(pred).save(root / "pred" / f"{i:05d}.png")
        done.write_text("")
    return root / "gt", root / "pred", classes


def best(fn, repeat: int):
    t_best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        t_best = min(t_best, time.perf_counter() - t)
    return t_best, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    ap.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs")
    ap.add_argument("--cache", type=Path, default=default_cache())
    a = ap.parse_args(argv)
    print(f"segbench from {Path(segbench.__file__).parent}")
    # compile the kernels (int32, both variants) outside the timings
    tiny = np.zeros((2, 2), np.int32)
    SemanticEval(3).update(tiny, tiny)
    SemanticEval(3, boundary_dilation=None).update(tiny, tiny)
    rows = []
    for name in a.sets:
        n, h, w, _, _ = SETS[name]
        gt, pred, classes = folders(name, a.cache)
        for biou in (None, 0.02):
            label = "on" if biou else "off"
            for workers in a.workers:
                def old(workers=workers, biou=biou):
                    ev = SemanticEval(classes, boundary_dilation=biou)
                    ev.update_folders(gt, pred, workers=workers)
                    return ev.stats
                sec, stats = best(old, a.repeat)
                rows.append((name, "SemanticEval.update_folders", workers, label, "", sec))
                if evaluate_semantic is None:
                    continue
                tmp = Path(tempfile.mkdtemp(prefix="semfold-"))

                def new(out=None, workers=workers, biou=biou):
                    res = evaluate_semantic(gt, pred, out, classes=classes,
                                            boundary_dilation=biou, workers=workers,
                                            progress=False)
                    return [res.metrics[k] for k in METRIC_NAMES]

                sec2, stats2 = best(new, a.repeat)
                assert np.array_equal(stats2, stats, equal_nan=True)
                rows.append((name, "evaluate_semantic", workers, label, "no", sec2))
                runs = iter(range(a.repeat))
                sec3, _ = best(lambda: new(tmp / f"o{next(runs)}"), a.repeat)
                rows.append((name, "evaluate_semantic", workers, label, "new", sec3))
                sec4, stats4 = best(lambda: new(tmp / "o0"), a.repeat)
                assert np.array_equal(stats4, stats, equal_nan=True)
                rows.append((name, "evaluate_semantic", workers, label, "resume", sec4))
                shutil.rmtree(tmp)
        print(f"  {name}: {n} pairs {h}x{w} done", flush=True)
    print()
    print(f"{'set':<7}{'call':<30}{'workers':>8}{'BIoU':>6}{'--out':>8}{'seconds':>9}"
          f"{'ms/pair':>9}")
    for name, call, workers, biou, out, sec in rows:
        print(f"{name:<7}{call:<30}{workers:>8}{biou:>6}{out:>8}{sec:>9.3f}"
              f"{1000 * sec / SETS[name][0]:>9.3f}")
    print("\n--out: no = no output folder; new = a fresh folder (records, result.json, "
          "per_item.csv written); resume = every record reused. Six means checked equal "
          "across calls.")


if __name__ == "__main__":
    main()
