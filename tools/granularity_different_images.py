"""The different-image half of the 2001 table (Martin et al., ICCV 2001, Figs. 4 and 8):
GCE and LCE of segmentations of one image against the human segmentations of another.

``segbench granularity`` scores a segmenter against the people of the *same* image. The
paper also reads the error against the people of *other* images as the score of a random
segmentation, for the humans (0.39 / 0.30) and for NCuts (0.38 / 0.31). This script
computes both on the images of a granularity run, from the segmentations it saved
(``--save-segs DIR``: ``<iid>_<k>.png``):

* humans: every segmentation of image A against every segmentation of image B, for every
  pair A < B of equal shape (GCE and LCE are symmetric);
* machine: for every person p of image A, the machine segmentation of A with p's segment
  count against every segmentation of every other image B of equal shape.

Both are means over all such pairs (pooled). Usage::

    python tools/granularity_different_images.py --gt GT_DIR [GT_DIR ...] --segs SEG_DIR

The images are those of SEG_DIR (the ids of its files).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from segbench.io import read_ground_truth, read_label_map
from segbench.region.consistency import cross_image_errors


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gt", nargs="+", required=True, help="folders of <iid>.mat")
    p.add_argument("--segs", required=True, help="folder of <iid>_<k>.png (--save-segs)")
    a = p.parse_args(argv)
    segs_dir = Path(a.segs)
    ids = sorted({f.stem.rsplit("_", 1)[0] for f in segs_dir.glob("*_*.png")})
    gts = {}
    for iid in ids:
        path = next(Path(g) / f"{iid}.mat" for g in a.gt if (Path(g) / f"{iid}.mat").is_file())
        gts[iid] = [h.segmentation for h in read_ground_truth(path)]
    human, machine = [], []
    for ia, A in enumerate(ids):
        ks = [int(np.unique(s).size) for s in gts[A]]
        mine = {k: read_label_map(segs_dir / f"{A}_{k}.png") for k in set(ks)}
        for B in ids:
            if B == A or gts[B][0].shape != gts[A][0].shape:
                continue
            if ids.index(B) > ia:
                human.append(cross_image_errors(gts[A], gts[B])[:, 2:])
            machine.append(cross_image_errors([mine[k] for k in ks], gts[B])[:, 2:])
    h, m = np.concatenate(human), np.concatenate(machine)
    print(f"images: {len(ids)}")
    print(f"human vs human, different images:   GCE {h[:, 0].mean():.4f}  "
          f"LCE {h[:, 1].mean():.4f}  ({len(h)} pairs)")
    print(f"machine vs human, different images: GCE {m[:, 0].mean():.4f}  "
          f"LCE {m[:, 1].mean():.4f}  ({len(m)} pairs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
