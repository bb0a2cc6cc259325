#!/usr/bin/env python3
"""Print segbench's deltas against the official BSR outputs in ../shared/fixtures.

    python tools/parity_report.py [--fixtures ../shared/fixtures]

For every official run it re-runs segbench on the same inputs and prints the largest
absolute difference of the summary files (eval_bdry.txt: ODS threshold/R/P/F, OIS R/P/F,
AP; region files: every figure), of each image's best F, and of the per-threshold
counts where the official per-image files exist. The tests assert the tolerances; this
prints the actual numbers.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from segbench import evaluate
from segbench.report.official import read_ev1

BOUNDARY = [("matlab/test_2", "png", 5), ("matlab/test_3", "segs", 5),
            ("octave/png_bdry_n99", "png", 99), ("octave/png_bdry_n99_run2", "png", 99),
            ("octave/test_3_segs_bdry_n99", "segs", 99)]
BOTH = [("matlab/test_1", "ucm2", 5), ("matlab/test_4", "segs", 5),
        ("octave/ucm2_all_n99", "ucm2", 99)]
REGION = [("matlab/test_5", "segs", 5)]
REGION_FILES = ("eval_cover.txt", "eval_cover_img.txt", "eval_cover_th.txt",
                "eval_RI_VOI.txt", "eval_RI_VOI_thr.txt")


def max_abs(a: Path, b: Path) -> float:
    return float(np.max(np.abs(np.loadtxt(a) - np.loadtxt(b))))


def boundary_row(case: str, ref: Path, out: Path) -> str:
    d_sum = np.abs(np.loadtxt(out / "eval_bdry.txt") - np.loadtxt(ref / "eval_bdry.txt"))
    d_img = np.abs(np.loadtxt(out / "eval_bdry_img.txt")[:, 4]
                   - np.loadtxt(ref / "eval_bdry_img.txt")[:, 4]).max()
    f_ours = np.loadtxt(out / "eval_bdry.txt")[[3, 6, 7]]
    f_ref = np.loadtxt(ref / "eval_bdry.txt")[[3, 6, 7]]
    counts = ""
    ev1 = sorted(ref.glob("*_ev1.txt"))
    if ev1:
        rel = []
        for f in ev1:
            o, r = read_ev1(out / f.name), read_ev1(f)
            rel.append(max(np.max(np.abs(o.cnt_r - r.cnt_r) / np.maximum(r.cnt_r, 1)),
                           np.max(np.abs(o.cnt_p - r.cnt_p) / np.maximum(r.cnt_p, 1))))
        counts = f"{max(rel):.4f}"
    return (f"| {case} | {f_ours[0]:.4f} / {f_ref[0]:.4f} | {f_ours[1]:.4f} / {f_ref[1]:.4f} "
            f"| {f_ours[2]:.4f} / {f_ref[2]:.4f} | {d_sum.max():.5f} | {d_img:.5f} | "
            f"{counts or '-'} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fixtures", type=Path,
                    default=Path(__file__).resolve().parents[1].parent / "shared" / "fixtures")
    args = ap.parse_args(argv)
    bsr = args.fixtures / "bsr-official"
    if not bsr.exists():
        print(f"no fixtures at {bsr}", file=sys.stderr)
        return 1
    gt = bsr / "inputs" / "groundTruth"
    rows_b, rows_r = [], []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for case, kind, n in BOUNDARY:
            out = tmp / case.replace("/", "_")
            evaluate("boundary", gt, bsr / "inputs" / kind, out, nthresh=n,
                     progress=False, plot=False)
            rows_b.append(boundary_row(case, bsr / case, out))
        for case, kind, n in BOTH + REGION:
            out = tmp / case.replace("/", "_")
            if (case, kind, n) in BOTH:
                evaluate("all", gt, bsr / "inputs" / kind, out, nthresh=n,
                         progress=False, plot=False)
                rows_b.append(boundary_row(case, bsr / case, out))
            else:
                evaluate("region", gt, bsr / "inputs" / kind, out, nthresh=n,
                         progress=False)
            deltas = [max_abs(out / f, bsr / case / f) for f in REGION_FILES]
            rows_r.append(f"| {case} | " + " | ".join(f"{d:.1e}" for d in deltas) + " |")
    print("Boundary: ours / official; max |delta| of all eval_bdry.txt figures, of each "
          "image's best F, and max relative delta of per-threshold matched counts")
    print("| run | ODS | OIS | AP | max delta eval_bdry | max delta image F | counts rel |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows_b))
    print("\nRegion: max |delta| per official file")
    print("| run | " + " | ".join(REGION_FILES) + " |")
    print("|---" * (len(REGION_FILES) + 1) + "|")
    print("\n".join(rows_r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
