"""Synthetic label-map pairs for benchmarks/semantic_speed.py, generated once and cached.

Ground truth: blob maps, the nearest of ~K random seeds (each with a random class) on a
grid four times coarser than the image, upsampled, with about 5% of the area in
ignore-index (255) blobs. Prediction: the same map with its seeds displaced a few pixels
(errors along the contours) plus random blobs of random classes, about 10% of the valid
pixels wrong in all. Deterministic per seed; written as two (N, H, W) uint8 .npy files
that both processes memory-map, so the peer reads exactly our bytes.

Only numpy; runs under the peer's venv too.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

SETS = {
    # name: (n_pairs, height, width, classes, seeds per map)
    "cityscapes": (500, 1024, 2048, 19, 60),
    "ade": (2000, 512, 683, 150, 40),
}


def default_cache() -> Path:
    return Path(os.environ.get("SEGBENCH_BENCH_CACHE",
                               Path(tempfile.gettempdir()) / "segbench-semantic-bench"))


def _voronoi(shape, seeds_rc, labels, step):
    """Label of the nearest seed, computed on a coarse grid and upsampled by ``step``."""
    h, w = shape
    hs, ws = -(-h // step), -(-w // step)
    rr = (np.arange(hs) * step + step / 2)[:, None, None]
    cc = (np.arange(ws) * step + step / 2)[None, :, None]
    best = np.full((hs, ws), np.inf)
    out = np.zeros((hs, ws), np.uint8)
    for k in range(0, len(seeds_rc), 16):  # chunks keep memory small
        sr = seeds_rc[k:k + 16, 0][None, None, :]
        sc = seeds_rc[k:k + 16, 1][None, None, :]
        dist = (rr - sr) ** 2 + (cc - sc) ** 2
        j = dist.argmin(axis=2)
        dj = np.take_along_axis(dist, j[..., None], axis=2)[..., 0]
        better = dj < best
        best[better] = dj[better]
        out[better] = labels[k + j[better]]
    return np.repeat(np.repeat(out, step, 0), step, 1)[:h, :w]


def make_pair(rng, h, w, classes, n_seeds):
    seeds = rng.uniform(0, 1, (n_seeds, 2)) * (h, w)
    labels = rng.integers(0, classes, n_seeds).astype(np.uint8)
    labels[rng.uniform(size=n_seeds) < 0.05] = 255  # ignore blobs
    gt = _voronoi((h, w), seeds, labels, 4)
    moved = seeds + rng.normal(0, 0.003 * np.hypot(h, w), seeds.shape)
    extra = max(4, n_seeds // 3)
    noise_seeds = rng.uniform(0, 1, (extra, 2)) * (h, w)
    pred_seeds = np.concatenate([moved, noise_seeds])
    pred_labels = np.concatenate([np.where(labels == 255, rng.integers(0, classes, n_seeds),
                                           labels).astype(np.uint8),
                                  rng.integers(0, classes, extra).astype(np.uint8)])
    pred = _voronoi((h, w), pred_seeds, pred_labels, 4)
    # the noise seeds took whole cells; keep a random quarter of them only (about 10% wrong)
    keep = rng.uniform(size=extra) < 0.25
    owner = _voronoi((h, w), pred_seeds, np.r_[np.zeros(n_seeds, np.uint8),
                                               np.where(keep, 1, 0).astype(np.uint8)], 4)
    shifted = _voronoi((h, w), moved, pred_labels[:n_seeds], 4)
    pred = np.where(owner == 1, pred, shifted)
    return gt, pred


def generate(name: str, cache: Path | None = None, *, seed: int = 0) -> tuple[Path, Path]:
    """Write (or reuse) ``<cache>/<name>_{gt,pred}.npy``; returns their paths."""
    n, h, w, classes, n_seeds = SETS[name]
    cache = Path(cache or default_cache())
    cache.mkdir(parents=True, exist_ok=True)
    gt_path, pred_path = cache / f"{name}_gt.npy", cache / f"{name}_pred.npy"
    meta_path = cache / f"{name}.json"
    meta = {"n": n, "h": h, "w": w, "classes": classes, "seeds": n_seeds, "seed": seed,
            "version": 2}
    if gt_path.exists() and pred_path.exists() and meta_path.exists():
        if json.loads(meta_path.read_text()) == meta:
            return gt_path, pred_path
    rng = np.random.default_rng(seed)
    gts = np.lib.format.open_memmap(gt_path, "w+", np.uint8, (n, h, w))
    preds = np.lib.format.open_memmap(pred_path, "w+", np.uint8, (n, h, w))
    for i in range(n):
        gts[i], preds[i] = make_pair(rng, h, w, classes, n_seeds)
    gts.flush()
    preds.flush()
    del gts, preds
    meta_path.write_text(json.dumps(meta))
    return gt_path, pred_path


def load(name: str, cache: Path | None = None):
    """The two (N, H, W) uint8 arrays (memory-mapped) and the class count."""
    gt_path, pred_path = generate(name, cache)
    return (np.load(gt_path, mmap_mode="r"), np.load(pred_path, mmap_mode="r"),
            SETS[name][3])


if __name__ == "__main__":
    for set_name in sys.argv[1:] or list(SETS):
        g, p, c = load(set_name)
        valid = g[:20] != 255
        wrong = ((g[:20] != p[:20]) & valid).sum() / valid.sum()
        print(f"{set_name}: {g.shape}, {c} classes, ignored {1 - valid.mean():.1%}, "
              f"wrong {wrong:.1%} (first 20 pairs)")
