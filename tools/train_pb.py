"""Fit the logistic combinations of the Pb detectors on BSDS500 train (= BSDS300 train).

For every train image (seeded): the smoothed oriented cues of the Pb family (BG on the
grey image; L*, a*, b*; TG on the shipped textons) and the second moment matrix cues,
at ``--per-image`` pixels drawn uniformly at random (the 1-pixel border excluded). The
label of a pixel is the fraction of the image's annotators whose boundary map
(``groundTruth{k}.Boundaries``) marks a pixel of its 3x3 neighbourhood: a soft
on/off-boundary label that tolerates one pixel of localization error. The natural
proportion of boundary pixels is kept, so the intercept calibrates the probability.

Each Pb detector's cues are read at one orientation per pixel, the one where the
detector's own linear score is largest, as the detector takes the maximum over
orientations: starting from equal weights on the standardized cues, the fit and the
choice of orientation alternate for ``--rounds`` rounds. The fit is a logistic
regression (Newton's method / IRLS on soft labels, a ridge of 1e-6) on the cues
standardized by their standard deviation, stored as the MATLAB code stores its fits:
``beta`` on ``[1, cue / fstd]`` and ``fstd``.

Writes ``src/segbench/algorithms/data/pb_weights.json`` (a few KB).

    python tools/train_pb.py [--images DIR] [--gt DIR] [--per-image 4000] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "bsds500"
DEFAULT_OUT = ROOT / "src" / "segbench" / "algorithms" / "data" / "pb_weights.json"
PB = ("pb-bg", "pb-cg", "pb-tg", "pb-bgtg", "pb-cgtg")


def soft_labels(gt_path: Path, shape) -> np.ndarray:
    """Fraction of annotators marking a boundary within the 3x3 neighbourhood."""
    from scipy import ndimage

    from segbench.io import read_ground_truth
    segs = read_ground_truth(gt_path)
    acc = np.zeros(shape)
    for s in segs:
        b = np.asarray(s.boundaries, bool)
        if b.shape != tuple(shape):
            raise ValueError(f"{gt_path}: ground truth {b.shape} vs image {shape}")
        acc += ndimage.binary_dilation(b, np.ones((3, 3), bool))
    return acc / len(segs)


def sample_image(img_path: Path, gt_path: Path, n: int, rng, distance: str):
    """Cues at n random pixels: dict name -> (n, norient) or (n,), and labels (n,)."""
    from segbench.algorithms._pb import (_image01, brightness_gradient, pb_cues,
                                         structure_tensor_cues)
    from segbench.io import read_image
    img = _image01(read_image(img_path))
    h, w = img.shape[:2]
    y = soft_labels(gt_path, (h, w))
    rows = rng.integers(1, h - 1, n)
    cols = rng.integers(1, w - 1, n)
    feats, _ = pb_cues(img, "pb-cgtg", distance=distance)  # L, a, b, tg
    bg, _ = brightness_gradient(img, radius=0.01, distance=distance)
    out = {name: feats[i][:, rows, cols].T for i, name in enumerate(("L", "a", "b", "tg"))}
    out["bg"] = bg[:, rows, cols].T
    lmax, lmin, _ = structure_tensor_cues(img, sigma=2.0)
    out["sqrt_lmax"] = lmax[rows, cols]
    out["sqrt_lmin"] = lmin[rows, cols]
    return out, y[rows, cols]


def logistic_fit(x: np.ndarray, y: np.ndarray, ridge: float = 1e-6, iters: int = 50):
    """Weights b (with intercept first) maximizing the soft-label log likelihood
    ``sum y log p + (1 - y) log(1 - p)``, ``p = 1 / (1 + exp(-[1, x] b))``, by Newton's
    method; ``ridge`` on the non-intercept weights keeps the Hessian invertible."""
    a = np.hstack([np.ones((x.shape[0], 1)), x])
    b = np.zeros(a.shape[1])
    b[0] = np.log(max(y.mean(), 1e-6) / max(1 - y.mean(), 1e-6))
    reg = np.full(a.shape[1], ridge)
    reg[0] = 0.0
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-(a @ b)))
        grad = a.T @ (y - p) - reg * b
        hess = (a * (p * (1 - p))[:, None]).T @ a + np.diag(reg)
        step = np.linalg.solve(hess, grad)
        b += step
        if np.abs(step).max() < 1e-10:
            break
    return b


def fit_detector(cues: dict, names, y: np.ndarray, rounds: int):
    """(beta on standardized cues, fstd, chosen-orientation statistics)."""
    oriented = np.stack([cues[n] for n in names])            # (k, n, norient)
    fstd = np.array([oriented[i].std() for i in range(len(names))])
    z = oriented / fstd[:, None, None]
    beta = np.concatenate([[0.0], np.ones(len(names))])
    for _ in range(rounds):
        score = np.tensordot(beta[1:], z, axes=(0, 0))        # (n, norient)
        o = score.argmax(axis=1)
        x = z[:, np.arange(z.shape[1]), o].T                   # (n, k)
        beta = logistic_fit(x, y)
    return beta, fstd


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--images", type=Path, default=DATA / "images" / "train")
    p.add_argument("--gt", type=Path, default=DATA / "groundTruth" / "train")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--per-image", type=int, default=4000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--limit", type=int, default=0, help="use only the first N images")
    p.add_argument("--distance", default="similarity", choices=("similarity", "chi2"))
    p.add_argument("--cache", type=Path, default=None,
                   help="save/load the sampled cues here (.npz) to refit quickly")
    a = p.parse_args(argv)
    from segbench.algorithms._pb import PB_DETECTORS

    # how the cues were sampled: the record says so, from the cache when one is read
    sampling = {"per_image": a.per_image, "seed": a.seed, "distance": a.distance,
                "limit": a.limit}
    if a.cache and a.cache.is_file():
        z = np.load(a.cache)
        cues = {k: z[k] for k in z.files if k not in ("y", "n_images", "sampling")}
        y = z["y"]
        n_images = int(z["n_images"])
        if "sampling" in z.files:
            cached = json.loads(str(z["sampling"]))
            differ = [k for k in sampling if cached[k] != sampling[k]]
            if differ:
                print(f"{a.cache}: cues sampled with "
                      f"{', '.join(f'{k}={cached[k]}' for k in differ)}; the fit and its "
                      f"record use the cache's", file=sys.stderr)
        else:
            print(f"{a.cache}: a cache that does not say how its cues were sampled; the "
                  f"record gives null for those settings", file=sys.stderr)
            cached = dict.fromkeys(sampling)
        sampling = cached
    else:
        paths = sorted(a.images.glob("*.jpg"))
        if a.limit:
            paths = paths[:a.limit]
        rng = np.random.default_rng(a.seed)
        parts, ys, t0 = [], [], time.time()
        for i, path in enumerate(paths):
            c, yy = sample_image(path, a.gt / f"{path.stem}.mat", a.per_image, rng,
                                 a.distance)
            parts.append(c)
            ys.append(yy)
            if (i + 1) % 20 == 0:
                print(f"{i + 1}/{len(paths)} images, {time.time() - t0:.0f} s",
                      file=sys.stderr, flush=True)
        cues = {k: np.concatenate([c[k] for c in parts]) for k in parts[0]}
        y = np.concatenate(ys)
        n_images = len(paths)
        if a.cache:
            np.savez(a.cache, y=y, n_images=n_images, sampling=json.dumps(sampling),
                     **cues)
    table = {"_about": "Logistic fits of tools/train_pb.py on BSDS500 train: beta on "
                       "[1, cue / fstd]; effective weights on the raw cues are "
                       "beta ./ fstd (fstd[0] = 1).",
             "_training": {"images": n_images, "pixels": int(y.size),
                           "per_image": sampling["per_image"], "seed": sampling["seed"],
                           "rounds": a.rounds, "distance": sampling["distance"],
                           "positive_fraction": float(y.mean()),
                           "label": "fraction of annotators marking the 3x3 "
                                    "neighbourhood"}}
    for det in PB:
        names = PB_DETECTORS[det]
        beta, fstd = fit_detector(cues, names, y, a.rounds)
        table[det] = {"cues": list(names), "beta": [float(v) for v in beta],
                      "fstd": [1.0] + [float(v) for v in fstd]}
        print(det, np.round(beta, 4), np.round(fstd, 4), file=sys.stderr)
    x = np.stack([cues["sqrt_lmax"], cues["sqrt_lmin"]], axis=1)
    fstd = x.std(axis=0)
    beta = logistic_fit(x / fstd, y)
    table["2mm"] = {"cues": ["sqrt_lmax", "sqrt_lmin"], "sigma": 2.0,
                    "beta": [float(v) for v in beta],
                    "fstd": [1.0] + [float(v) for v in fstd]}
    print("2mm", np.round(beta, 4), np.round(fstd, 4), file=sys.stderr)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(table, indent=1) + "\n")
    print(f"wrote {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
