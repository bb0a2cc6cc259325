"""Semantic evaluator speed: segbench beside hotcoco 1.3.0 on the same label maps.

Two synthetic sets (benchmarks/semantic_data.py, generated once and cached):
(a) 500 Cityscapes-size 1024x2048 pairs, 19 classes; (b) 2000 ADE-size 512x683 pairs,
150 classes; blob maps, ~5% ignored, ~10% of the predicted pixels wrong. Both libraries
get the arrays in memory, fed per image (batch 1) and in batches of 8, as a validation
loop would. hotcoco runs single-threaded in its own venv (a subprocess); segbench with
1 and 2 worker threads, boundary IoU off and on (hotcoco 1.3.0 has no boundary IoU).

    python benchmarks/semantic_speed.py                 # both sets, ~3 min with generation
    python benchmarks/semantic_speed.py --sets ade --repeat 3

Set-up of the peer (once):
    python -m venv benchmarks/.peer-venv-semantic
    benchmarks/.peer-venv-semantic/bin/pip install hotcoco==1.3.0 numpy
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from semantic_data import SETS, default_cache, generate, load  # noqa: E402

from segbench.semantic import METRIC_NAMES, SemanticEval  # noqa: E402

PEER = HERE / ".peer-venv-semantic" / "bin" / "python"


def _feed(ev, gt, pred, batch):
    for i in range(0, len(gt), batch):
        ev.update(gt[i:i + batch] if batch > 1 else gt[i],
                  pred[i:i + batch] if batch > 1 else pred[i])


def run_ours(gt, pred, classes, batch, workers, biou, repeat):
    best, ev = float("inf"), None
    for _ in range(repeat):
        ev = SemanticEval(classes, workers=workers, boundary_dilation=0.02 if biou else None)
        t = time.perf_counter()
        _feed(ev, gt, pred, batch)
        best = min(best, time.perf_counter() - t)
    return best, ev


def run_peer(name, cache, batches, repeat):
    if not PEER.exists():
        print(f"  (peer venv missing: {PEER}; see the docstring)")
        return None
    env = dict(os.environ, RAYON_NUM_THREADS="1", OMP_NUM_THREADS="1")
    cmd = [str(PEER), str(HERE / "semantic_peer.py"), "--set", name, "--cache", str(cache),
           "--batches", ",".join(map(str, batches)), "--repeat", str(repeat)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    ap.add_argument("--batches", nargs="+", type=int, default=[1, 8])
    ap.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--repeat", type=int, default=1, help="best of N runs")
    ap.add_argument("--cache", type=Path, default=default_cache())
    a = ap.parse_args(argv)

    # compile every kernel variant the runs use, outside the timings
    w = SemanticEval(3, workers=2)
    w.update(np.zeros((2, 600, 600), np.uint8), np.zeros((2, 600, 600), np.uint8))
    SemanticEval(3, boundary_dilation=None).update(np.zeros((9, 9), np.uint8),
                                                   np.zeros((9, 9), np.uint8))
    rows = []
    for name in a.sets:
        n, h, wd, classes, _ = SETS[name]
        t = time.perf_counter()
        generate(name, a.cache)
        print(f"{name}: {n} pairs {h}x{wd}, {classes} classes "
              f"(data ready in {time.perf_counter() - t:.1f} s, cache {a.cache})", flush=True)
        peer = run_peer(name, a.cache, a.batches, a.repeat)
        gt, pred, _ = load(name, a.cache)
        gt, pred = np.array(gt), np.array(pred)
        for batch in a.batches:
            hc = peer["timings"][str(batch)] if peer else float("nan")
            rows.append((name, batch, "hotcoco 1.3.0, 1 thread", "off", hc, 1.0))
            for biou in (False, True):
                for workers in a.workers:
                    sec, ev = run_ours(gt, pred, classes, batch, workers, biou, a.repeat)
                    rows.append((name, batch, f"segbench, {workers} worker"
                                 + ("s" if workers > 1 else ""), "on" if biou else "off",
                                 sec, hc / sec))
                    if peer and not biou:
                        ours = dict(zip(METRIC_NAMES, ev.stats))
                        for k, v in peer["stats"].items():
                            assert abs(ours[k] - v) < 1e-9, (k, ours[k], v)
            print(f"  batch {batch}: done", flush=True)
        del gt, pred
    print()
    print(f"{'set':<11}{'batch':>6}  {'implementation':<26}{'BIoU':>5}{'seconds':>9}"
          f"{'Mpix/s':>9}{'speed-up vs hotcoco':>21}{'on / off':>10}")
    off = {(name, batch, impl): sec for name, batch, impl, biou, sec, _ in rows
           if biou == "off"}
    for name, batch, impl, biou, sec, ratio in rows:
        n, h, wd, _, _ = SETS[name]
        cost = f"{sec / off[name, batch, impl]:>9.2f}x" if biou == "on" else ""
        print(f"{name:<11}{batch:>6}  {impl:<26}{biou:>5}{sec:>9.3f}"
              f"{n * h * wd / sec / 1e6:>9.0f}{ratio:>20.2f}x{cost}")
    print("\nspeed-up = hotcoco seconds / segbench seconds (same set, same batch); "
          "on / off = segbench's seconds with boundary IoU over its seconds without (same "
          "set, batch and workers; target <= 2). Metrics of every BIoU-off run checked "
          "equal to hotcoco's to 1e-9.")


if __name__ == "__main__":
    main()
