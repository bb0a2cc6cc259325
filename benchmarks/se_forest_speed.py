"""CPU cost of the structured edge forests: growing one tree, and detection.

Two subcommands, both timed with ``time.process_time`` (CPU seconds of this process;
run with ``OPENBLAS_NUM_THREADS=1``: the training's few BLAS calls otherwise spin
OpenBLAS threads, whose busy-waiting inflates CPU time tenfold on a loaded machine):

``train``: one tree with ``n_pos = n_neg = N`` on the first ``--images`` BSDS500 train
images, other options the toolbox's defaults; prints the patch collection and growing
times, the tree's size, the peak resident memory of the process (``ru_maxrss``: the
interpreter, compiled kernels and the training data; before the tiny warm-up run too)
and, with ``--save``, writes it (``.npz`` of its arrays). The kernels are compiled first
on a tiny run, outside the timing.

``detect``: ``se()`` on a 481 x 321 BSDS image, single-scale and multiscale, sharpen 0
and 2, with a saved forest (``SEForest.save``) or eight copies of a tree saved by
``train --save`` (the same size and depth as eight different trees of that size).

    OPENBLAS_NUM_THREADS=1 python benchmarks/se_forest_speed.py train 2e4 --images 20
    OPENBLAS_NUM_THREADS=1 python benchmarks/se_forest_speed.py detect forest.npz
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import numpy as np

from segbench.algorithms import _se_forest as sf
from segbench.algorithms._se_detect import se, se_orientation
from segbench.io import read_image

ROOT = Path(__file__).resolve().parents[1]
BSDS = ROOT.parent / "shared" / "data" / "bsds500"
TREE_FIELDS = ("fids", "thrs", "child", "count", "depth", "segs")


def train(args) -> None:
    items = sf.BSDSTrainingSet(args.bsds, "train", n_images=args.images)
    n = int(float(args.n))
    opts = sf.forest_options(dict(n_pos=n, n_neg=n))
    sf.train_tree(items, dict(n_pos=200, n_neg=200, n_images=2, max_depth=4), tree_index=99)
    rng = np.random.default_rng([opts.seed, args.tree])
    n_use = sf._mround(opts.n_tot_ftrs * opts.frac_ftrs)
    fids = np.sort(rng.choice(opts.n_tot_ftrs, n_use, replace=False)).astype(np.int64)
    t0 = time.process_time()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    patches = sf._collect(items, opts, fids, rng)
    t1 = time.process_time()
    tree = sf._grow(patches, opts, rng, fids)
    t2 = time.process_time()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            dict(
                n_pos=n,
                n_neg=n,
                images=len(items),
                patches=patches.n,
                channels_mb=round(patches.src[0].nbytes / 2**20),
                collect_cpu_s=round(t1 - t0, 2),
                grow_cpu_s=round(t2 - t1, 2),
                nodes=tree.n_nodes,
                leaves=tree.n_leaves,
                depth=int(tree.depth.max()),
                peak_rss_mb_warmup=round(rss0 / 1024),
                peak_rss_mb=round(rss / 1024),
            )
        )
    )
    if args.save:
        np.savez(args.save, **{k: getattr(tree, k) for k in TREE_FIELDS})


def detect(args) -> None:
    with np.load(args.model) as z:
        is_tree = "child" in z.files and "format" not in z.files
    if is_tree:
        with np.load(args.model) as z:
            tree = sf.SETree(**{k: z[k] for k in TREE_FIELDS})
        forest = sf.SEForest(dict(n_trees=8), {i: tree for i in range(8)})
    else:
        forest = sf.load_forest(args.model)
    sizes = [t.n_nodes for t in forest.trees.values()]
    print(f"forest: {len(sizes)} trees of {min(sizes)}..{max(sizes)} nodes")
    img = read_image(args.image)
    print(f"image {img.shape[1]}x{img.shape[0]}")
    for kw in (
        dict(sharpen=0),
        dict(sharpen=2),
        dict(sharpen=0, multiscale=True),
        dict(sharpen=2, multiscale=True),
    ):
        e, _ = se(img, forest, **kw)  # compiles; builds the leaf tables once
        reps = args.repeat if not kw.get("multiscale") else max(1, args.repeat // 3)
        t0 = time.process_time()
        for _ in range(reps):
            e, _ = se(img, forest, **kw)
        cpu = (time.process_time() - t0) / reps
        print(f"{kw}: {cpu:.4f} CPU-s per image")
    t0 = time.process_time()
    for _ in range(args.repeat):
        se_orientation(e)
    print(f"of which the orientation: {(time.process_time() - t0) / args.repeat:.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train", help="grow one tree")
    t.add_argument("n", help="n_pos = n_neg, e.g. 2e4")
    t.add_argument("--images", type=int, default=20)
    t.add_argument("--tree", type=int, default=0, help="tree index (random stream)")
    t.add_argument("--bsds", type=Path, default=BSDS)
    t.add_argument("--save", type=Path)
    d = sub.add_parser("detect", help="time se() on one image")
    d.add_argument("model", type=Path, help="SEForest .npz, or a tree from train --save")
    d.add_argument("--image", type=Path, default=BSDS / "images" / "val" / "101085.jpg")
    d.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    train(args) if args.cmd == "train" else detect(args)


if __name__ == "__main__":
    main()
