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

Both are means over all such pairs (pooled). Each image's segmentations are compacted
once; ``--workers N`` shares the images between N processes (the sums are added in image
order, so the figures do not depend on N). Usage::

    python tools/granularity_different_images.py --gt GT_DIR [GT_DIR ...] --segs SEG_DIR \
        [--workers N]

The images are those of SEG_DIR (the ids of its files).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from segbench.io import read_ground_truth, read_label_map
from segbench.region import prepare_ground_truth
from segbench.region.consistency import cross_image_errors


#: Per process: image id -> compacted human segmentations (flat, counts) and shape;
#: set before the pool forks, so workers share it.
_STATE: dict = {}


def _one_image(ia: int) -> np.ndarray:
    """Sums over the pairs of image ``ids[ia]``: human GCE, LCE, count (against the
    later images), machine GCE, LCE, count (against every other image)."""
    ids, prep, shapes, segs_dir = (_STATE[k] for k in ("ids", "prep", "shapes", "segs"))
    A = ids[ia]
    ks = _STATE["ks"][A]
    mine = prepare_ground_truth([read_label_map(segs_dir / f"{A}_{k}.png") for k in ks],
                                void=None)
    out = np.zeros(6)
    for ib, B in enumerate(ids):
        if ib == ia or shapes[B] != shapes[A]:
            continue
        if ib > ia:
            h = cross_image_errors(prep[A], prep[B], prepared=True)[:, 2:]
            out[:3] += h[:, 0].sum(), h[:, 1].sum(), len(h)
        m = cross_image_errors(mine, prep[B], prepared=True)[:, 2:]
        out[3:] += m[:, 0].sum(), m[:, 1].sum(), len(m)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gt", nargs="+", required=True, help="folders of <iid>.mat")
    p.add_argument("--segs", required=True, help="folder of <iid>_<k>.png (--save-segs)")
    p.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    a = p.parse_args(argv)
    segs_dir = Path(a.segs)
    ids = sorted({f.stem.rsplit("_", 1)[0] for f in segs_dir.glob("*_*.png")})
    prep, shapes, ks = {}, {}, {}
    for iid in ids:
        path = next(Path(g) / f"{iid}.mat" for g in a.gt if (Path(g) / f"{iid}.mat").is_file())
        segs = [h.segmentation for h in read_ground_truth(path)]
        shapes[iid] = segs[0].shape
        ks[iid] = [int(np.unique(s).size) for s in segs]
        prep[iid] = prepare_ground_truth(segs, void=None)
    _STATE.update(ids=ids, prep=prep, shapes=shapes, ks=ks, segs=segs_dir)
    if a.workers > 1:
        import multiprocessing
        with multiprocessing.get_context("fork").Pool(a.workers) as pool:
            sums = pool.map(_one_image, range(len(ids)), chunksize=1)
    else:
        sums = [_one_image(ia) for ia in range(len(ids))]
    total = np.zeros(6)
    for row in sums:                 # in image order, for any number of workers
        total += row
    print(f"images: {len(ids)}")
    print(f"human vs human, different images:   GCE {total[0] / total[2]:.4f}  "
          f"LCE {total[1] / total[2]:.4f}  ({int(total[2])} pairs)")
    print(f"machine vs human, different images: GCE {total[3] / total[5]:.4f}  "
          f"LCE {total[4] / total[5]:.4f}  ({int(total[5])} pairs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
