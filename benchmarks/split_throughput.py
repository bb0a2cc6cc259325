#!/usr/bin/env python3
"""Throughput of whole runs over the BSDS500 test split: the README's figures.

Runs, as a user does, ``segbench.evaluate`` over the 200 test images into a fresh folder:

- ``boundary``: the HED maps ``<data>/bsds500-hed-nms/test/*.png``, 99 thresholds;
- ``region``: the authors' gPb-owt-ucm hierarchies ``<data>/bsds500-gpb-owt-ucm/test``,
  99 thresholds.

Printed per run, medians of ``--repeat`` runs (the two benchmarks alternate): CPU-seconds
of the whole run (this process and its worker processes: ``resource.getrusage`` self +
children), and wall seconds, which mean something only on an otherwise idle machine
(CPU-seconds / cores is the wall time an idle machine cannot beat). Compiled kernels are
loaded before timing (one untimed run on two images).

    python benchmarks/split_throughput.py --workers 2 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data"


def _cpu() -> float:
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--n", type=int, default=0, help="first N images only (default: all)")
    a = ap.parse_args(argv)
    gt = a.data / "bsds500" / "groundTruth" / "test"
    runs = {"boundary": a.data / "bsds500-hed-nms" / "test",
            "region": a.data / "bsds500-gpb-owt-ucm" / "test"}
    if not gt.is_dir() or not all(p.is_dir() for p in runs.values()):
        print(f"data not found under {a.data}", file=sys.stderr)
        return 2
    from segbench import evaluate
    ids = sorted(p.stem for p in runs["region"].glob("*.mat"))
    if a.n:
        ids = ids[:a.n]
    print(f"BSDS500 test: {len(ids)} images, 99 thresholds, --workers {a.workers}, "
          f"{os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        for name, pred in runs.items():       # untimed: load the kernels
            evaluate(name, gt, pred, Path(tmp) / f"warm-{name}", ids=ids[:2],
                     workers=1, progress=False, plot=False)
        times = {name: [] for name in runs}
        for r in range(a.repeat):
            for name, pred in runs.items():
                c0, w0 = _cpu(), time.perf_counter()
                res = evaluate(name, gt, pred, Path(tmp) / f"{name}-{r}", ids=ids or None,
                               workers=a.workers, progress=False, plot=False)
                times[name].append((_cpu() - c0, time.perf_counter() - w0))
                key = "ODS" if name == "boundary" else "covering_ODS"
                print(f"  {name} run {r + 1}: {key} {res.metrics[key]:.4f}", flush=True)
    print(f"\n{'run':<10}{'CPU-s':>8}{'wall s':>8}{'CPU-s / cores':>15}")
    for name, v in times.items():
        cpu = statistics.median(c for c, _ in v)
        wall = statistics.median(w for _, w in v)
        print(f"{name:<10}{cpu:>8.1f}{wall:>8.1f}{cpu / min(a.workers, os.cpu_count()):>15.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
