#!/usr/bin/env python3
"""Speed of segbench's BSDS500 region benchmark on gPb-owt-ucm hierarchies, 99 thresholds.

Inputs: the BSDS500 authors' gPb-owt-ucm maps ``<data>/bsds500-gpb-owt-ucm/<split>/<iid>.mat``
(variable ``ucm2``, doubleSize) and the human ground truth
``<data>/bsds500/groundTruth/<split>/<iid>.mat``.  Per image the timed work is what a user
pays: read both files, cut the ucm2 at the 99 thresholds, compare every level with every
annotator (covering, PRI, VI).  Times are CPU seconds of this process
(``time.process_time``) and wall seconds, one worker, after one warm-up image (Numba
compilation is cached on disk and excluded).

Printed:
  * per-image CPU and wall seconds (median, mean, max) and a breakdown (reading, levels,
    tables + measures) on the first few images;
  * the floor beside it: reading both files and cutting the ucm2 at the 99 thresholds
    (CPU s per image, timed right after each image), and segbench / floor;
  * the official code's region time on the 5 images of its self-test, which are BSDS500
    test images with these same gPb-owt-ucm maps (``<fixtures>/bsr-official/octave/
    ucm2_all_n99/timing.txt``: GNU Octave 7.3, ``t_reg_s`` = wall seconds of
    evaluation_reg_image.m per image) beside segbench's wall time on the same images, and
    the ratio.  There is no peer to run: the official code needs MATLAB or ~15 minutes of
    Octave per image;
  * with ``--runner``, the whole split through ``segbench.evaluate('region', ...)`` (``--workers``) in a fresh
    folder: wall time and the dataset figures, next to those published for gPb-owt-ucm.

The script prints figures only; it asserts nothing about timing.

    python benchmarks/region_speed.py                    # all 200 test images, one worker
    python benchmarks/region_speed.py --n 20
    python benchmarks/region_speed.py --runner --workers 2
    python benchmarks/region_speed.py --split val --runner --workers 2
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_DATA = REPO.parent / "shared" / "data"
DEFAULT_FIXTURES = REPO.parent / "shared" / "fixtures"
NTHRESH = 99

# Arbeláez et al. 2011, Table 2 (gPb-owt-ucm): BSDS500 test and BSDS300 test (= BSDS500 val).
PUBLISHED = {
    "test": {"covering_ODS": 0.59, "covering_OIS": 0.65, "covering_best": 0.74,
             "PRI_ODS": 0.83, "PRI_OIS": 0.86, "VI_ODS": 1.69, "VI_OIS": 1.48},
    "val": {"covering_ODS": 0.59, "covering_OIS": 0.65, "covering_best": 0.75,
            "PRI_ODS": 0.81, "PRI_OIS": 0.85, "VI_ODS": 1.65, "VI_OIS": 1.47},
}


def _official_times(fixtures: Path) -> dict[str, float]:
    path = fixtures / "bsr-official" / "octave" / "ucm2_all_n99" / "timing.txt"
    out = {}
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 4 and not line.startswith("#"):
            out[parts[0]] = float(parts[2])
    return out


def _time_image(ucm_path: Path, gt_path: Path, breakdown: bool):
    from segbench.io import read_ground_truth, read_prediction
    from segbench.region import default_thresholds, evaluate_image, ucm_levels
    c0, w0 = time.process_time(), time.perf_counter()
    pred = read_prediction(ucm_path)
    gt = read_ground_truth(gt_path)
    c1 = time.process_time()
    rec = evaluate_image(pred, gt, nthresh=NTHRESH)
    c2, w2 = time.process_time(), time.perf_counter()
    row = {"cpu": c2 - c0, "wall": w2 - w0, "read": c1 - c0, "eval": c2 - c1,
           "distinct_levels": int(len(np.unique(rec.n_regions))),
           "annotators": len(gt)}
    # the floor: what any region benchmark pays, reading both files and cutting the
    # hierarchy at the 99 thresholds (timed right after, so load hits both alike)
    c3 = time.process_time()
    for _ in ucm_levels(pred.ucm2, default_thresholds(NTHRESH)):
        pass
    row["levels"] = time.process_time() - c3
    row["tables_measures"] = row["eval"] - row["levels"]
    row["floor"] = row["read"] + row["levels"]
    return row


def _stats(xs) -> str:
    return (f"median {statistics.median(xs):.3f}  mean {statistics.fmean(xs):.3f}  "
            f"max {max(xs):.3f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", default="test", choices=("test", "val"))
    ap.add_argument("--n", type=int, default=0, help="first N images (default: all)")
    ap.add_argument("--runner", action="store_true",
                    help="also time the region benchmark over the split (fresh output folder)")
    ap.add_argument("--workers", type=int, default=2, help="workers for --runner")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES)
    ap.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    a = ap.parse_args(argv)

    ucm_dir = a.data / "bsds500-gpb-owt-ucm" / a.split
    gt_dir = a.data / "bsds500" / "groundTruth" / a.split
    if not ucm_dir.is_dir() or not gt_dir.is_dir():
        print(f"data not found: {ucm_dir} / {gt_dir}", file=sys.stderr)
        return 2
    ids = sorted(p.stem for p in ucm_dir.glob("*.mat"))
    if a.n:
        ids = ids[:a.n]
    import segbench
    print(f"segbench {segbench.__version__}, Python {platform.python_version()}, "
          f"numpy {np.__version__}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs")
    print(f"split {a.split}: {len(ids)} images, {NTHRESH} thresholds, one worker")

    _time_image(ucm_dir / f"{ids[0]}.mat", gt_dir / f"{ids[0]}.mat", False)  # warm-up
    rows = {}
    for k, iid in enumerate(ids):
        rows[iid] = _time_image(ucm_dir / f"{iid}.mat", gt_dir / f"{iid}.mat", k < 10)
    cpu = [r["cpu"] for r in rows.values()]
    wall = [r["wall"] for r in rows.values()]
    print(f"per image CPU s:  {_stats(cpu)}")
    floor = [r["floor"] for r in rows.values()]
    print(f"floor (read + 99 cuts) CPU s: {_stats(floor)}")
    print(f"segbench / floor: {statistics.median(cpu) / statistics.median(floor):.2f}x "
          f"(medians); per-image ratios median "
          f"{statistics.median(r['cpu'] / r['floor'] for r in rows.values()):.2f}x")
    print(f"per image wall s: {_stats(wall)}   total wall {sum(wall):.1f} s")
    first = [r for r in rows.values() if "levels" in r]
    print(f"breakdown (first {len(first)} images, CPU s/image): read "
          f"{statistics.fmean(r['read'] for r in first):.3f}, levels (99 cuts) "
          f"{statistics.fmean(r['levels'] for r in first):.3f}, tables + measures "
          f"{statistics.fmean(r['tables_measures'] for r in first):.3f}; distinct "
          f"partitions per image {statistics.fmean(r['distinct_levels'] for r in rows.values()):.1f}")

    official = _official_times(a.fixtures)
    compare = []
    if official:
        print("official evaluation_reg_image.m (Octave 7.3, wall s) vs segbench (wall s):")
        for iid, t_off in official.items():
            src = ucm_dir / f"{iid}.mat"
            if not src.exists():
                continue
            r = rows.get(iid) or _time_image(src, gt_dir / f"{iid}.mat", False)
            compare.append((iid, t_off, r["wall"]))
            print(f"  {iid}: official {t_off:8.1f}   segbench {r['wall']:.3f}   "
                  f"ratio {t_off / r['wall']:,.0f}x")
        if compare:
            tot_off = sum(c[1] for c in compare)
            tot_us = sum(c[2] for c in compare)
            print(f"  total: official {tot_off:.0f} s, segbench {tot_us:.2f} s, "
                  f"ratio {tot_off / tot_us:,.0f}x")

    runner = None
    if a.runner:
        from segbench import evaluate
        with tempfile.TemporaryDirectory() as out:
            w0 = time.perf_counter()
            res = evaluate("region", gt_dir, ucm_dir, out, nthresh=NTHRESH,
                           workers=a.workers, progress=False)
            dt = time.perf_counter() - w0
        m = res.metrics
        runner = {"workers": a.workers, "wall_s": dt, "metrics": m}
        print(f"region benchmark over {a.split} ({res.provenance['params']['n_images']} images, "
              f"{a.workers} workers): {dt:.1f} s wall")
        pub = PUBLISHED[a.split]
        for key in pub:
            print(f"  {key:15s} {m[key]:.4f}   published {pub[key]:.2f}")
    if a.json:
        a.json.write_text(json.dumps({"per_image": rows, "official_vs_segbench": compare,
                                      "runner": runner}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
