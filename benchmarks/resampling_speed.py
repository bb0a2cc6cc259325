#!/usr/bin/env python3
"""Cost of bootstrap intervals and of ``segbench compare`` on the BSDS500 test split.

Inputs: a boundary run folder made with ``--out`` (e.g. HED on the 200 test images):

    segbench boundary --gt ../shared/data/bsds500/groundTruth/test \\
        --pred ../shared/data/bsds500-hed-nms/test --out /tmp/hed-test --workers 2

Timed, in this process (CPU seconds, ``time.process_time``; medians of ``--repeats``):

  * segbench's statistic: B draws of the images through the family's resampler (weighted
    sums of the per-image counts; ``segbench.resampling.draws``);
  * the floor beside it: the same draws summarized directly, copies of the drawn records
    through ``segbench.boundary.summarize`` (what a user would write by hand), on the
    first ``--direct`` draws and scaled to B; the figures of both are checked equal;
  * ``segbench compare RUN RUN`` as a process (wall seconds), what a user waits for.

    python benchmarks/resampling_speed.py /tmp/hed-test [/tmp/gpb-test]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("other", type=Path, nargs="?")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--direct", type=int, default=50, help="direct draws timed")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()

    from segbench.boundary import summarize
    from segbench.comparison import load_run
    from segbench.resampling import bootstrap_indices, draws

    run = load_run(a.run)
    n = len(run.records)
    params = {**run.family.resolve(run.result.provenance["params"]),
              **run.family.resolve_summary(run.result.provenance["params"])}
    idx = bootstrap_indices(n, a.resamples, 0)

    fast_t, fast = [], None
    for _ in range(a.repeats):
        t = time.process_time()
        fast = draws(run.family.resampler(run.ids, run.records, params, {}), idx, n)
        fast_t.append(time.process_time() - t)
    direct_t = []
    for _ in range(a.repeats):
        t = time.process_time()
        ods = [summarize([run.records[i] for i in row]).ods[3] for row in idx[:a.direct]]
        direct_t.append((time.process_time() - t) * a.resamples / a.direct)
    assert np.array_equal(np.array(ods), fast["ODS"][:a.direct]), "figures differ"
    f, d = statistics.median(fast_t), statistics.median(direct_t)
    print(f"{n} images, B = {a.resamples} draws, {len(fast)} scores per draw")
    print(f"  segbench statistic      {f:8.2f} CPU s")
    print(f"  direct re-summarizing   {d:8.2f} CPU s (scaled from {a.direct} draws)")
    print(f"  ratio direct / segbench {d / f:8.1f}x   (ODS of the timed draws identical)")
    if a.other is not None:
        walls = []
        for _ in range(a.repeats):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "segbench.cli", "compare", str(a.run),
                            str(a.other), "--resamples", str(a.resamples)], check=True,
                           capture_output=True)
            walls.append(time.perf_counter() - t)
        print(f"  segbench compare (process, 2 runs) {statistics.median(walls):.2f} s wall")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
