"""Compute Pb's 64 universal textons from the BSDS500 train images (= BSDS300 train).

As the 2003 MATLAB code's ``unitex.m`` does: the filter bank of ``fbCreate(6, 1, 2,
sqrt(2), 2)`` (here with the centre-surround filters, see
``segbench.algorithms.filter_bank``) run on each grey image (MATLAB ``rgb2gray`` of the
image in [0, 1]); 100 000 responses sampled uniformly without replacement, the same
number from each image; multi-level k-means (``kmeansML.m``: 30 iterations) into 64
centres. Everything is seeded, so the output is the same on every run.

Writes ``src/segbench/algorithms/data/pb_textons.npz``: ``centres`` (64, 26) float32
and ``params`` (JSON: the filter-bank parameters, k, seed, samples, source).

    python tools/train_textons.py [--images DIR] [--out FILE] [--seed 0] [--k 64]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_IMAGES = ROOT.parent / "shared" / "data" / "bsds500" / "images" / "train"
DEFAULT_OUT = ROOT / "src" / "segbench" / "algorithms" / "data" / "pb_textons.npz"
FILTER_BANK = {"n_orient": 6, "start_sigma": 1.0, "n_scales": 2,
               "scaling": float(np.sqrt(2.0)), "elong": 2.0, "center_surround": True}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--images", type=Path, default=DEFAULT_IMAGES)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--k", type=int, default=64)
    p.add_argument("--samples", type=int, default=100_000)
    a = p.parse_args(argv)
    from segbench.algorithms._pb import _grey, _image01
    from segbench.algorithms._pb_textons import filter_bank, filter_responses, kmeans
    from segbench.io import read_image

    paths = sorted(a.images.glob("*.jpg"))
    if not paths:
        print(f"no .jpg images in {a.images}", file=sys.stderr)
        return 2
    fb = filter_bank(**FILTER_BANK)
    per = round(a.samples / len(paths))
    rng = np.random.default_rng(a.seed)
    data = []
    t0 = time.time()
    for i, path in enumerate(paths):
        resp = filter_responses(_grey(_image01(read_image(path))), fb)
        flat = resp.reshape(-1, resp.shape[2])
        data.append(flat[rng.permutation(flat.shape[0])[:per]])
        if (i + 1) % 50 == 0:
            print(f"{i + 1}/{len(paths)} images, {time.time() - t0:.0f} s", file=sys.stderr)
    data = np.concatenate(data)
    print(f"k-means: {data.shape[0]} samples x {data.shape[1]} filters -> {a.k}",
          file=sys.stderr)
    centres = kmeans(data, a.k, seed=a.seed)
    params = {"filter_bank": FILTER_BANK, "k": a.k, "seed": a.seed,
              "samples": int(data.shape[0]), "per_image": per,
              "source": "BSDS500 images/train (200 jpgs, = BSDS300 train)",
              "script": "tools/train_textons.py"}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(a.out, centres=centres.astype(np.float32),
                        params=np.array(json.dumps(params)))
    print(f"wrote {a.out} ({a.out.stat().st_size} bytes) in {time.time() - t0:.0f} s",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
