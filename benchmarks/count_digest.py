#!/usr/bin/env python3
"""SHA-256 digests of the boundary counts on the BSDS500 test HED maps (issue 17, item 3).

The exactness check behind every change to the matcher, the thinning, the readers or the
kernel loading: the per-threshold counts of ``evaluate_image`` (cnt_r, sum_r, cnt_p,
sum_p, as int64) and the per-annotator ``human_counts`` of every image are hashed in id
order. Run it with two versions of the code; identical digests mean identical counts.

    python benchmarks/count_digest.py [--n 200] [--data ../shared/data]

Printed: the number of images and the two digests (first 16 hex digits).
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import numpy as np

from segbench.boundary import evaluate_image, human_counts
from segbench.io import read_ground_truth, read_prediction

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data")
    a = ap.parse_args()
    maps = a.data / "bsds500-hed-nms" / "test"
    ids = sorted(p.stem for p in maps.glob("*.png"))[:a.n]
    if not ids:
        raise SystemExit(f"no HED maps under {maps}")
    counts, human = hashlib.sha256(), hashlib.sha256()
    for iid in ids:
        gt = [g.boundaries for g in
              read_ground_truth(a.data / "bsds500" / "groundTruth" / "test" / f"{iid}.mat")]
        r = evaluate_image(read_prediction(maps / f"{iid}.png").pb, gt)
        for arr in (r.cnt_r, r.sum_r, r.cnt_p, r.sum_p):
            counts.update(np.ascontiguousarray(arr, np.int64).tobytes())
        human.update(np.ascontiguousarray(human_counts(gt, per_annotator=True),
                                          np.int64).tobytes())
    print(len(ids), "eval", counts.hexdigest()[:16], "human", human.hexdigest()[:16])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
