"""pbGM.m (``segbench.algorithms._pb.pb_gm``) under the 2004 paper's protocol: the
BSDS300 test images (= BSDS500 val) reduced to half size (``halve_image``), the detector at
each of pbGM.m's fitted scales, scored by ``--protocol martin2004``; prints ODS and OIS per
scale (docs/protocol.md, "The 2004 Pb paper's protocol").

    python tools/m2004_gaussian_derivative.py [BSDS500_ROOT] [--sigmas 1,2,4,8,16]

BSDS500_ROOT holds images/val and groundTruth/val (default ../shared/data/bsds500).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import imageio.v3 as iio
import numpy as np

import segbench
from segbench.algorithms._pb import PB_GM_WEIGHTS, pb_gm
from segbench.boundary._half import halve_image


def main() -> None:
    here = Path(__file__).resolve().parents[1]
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("root", nargs="?", default=here.parent / "shared" / "data" / "bsds500",
                   type=Path)
    p.add_argument("--sigmas", default=",".join(map(str, PB_GM_WEIGHTS)))
    a = p.parse_args()
    images = sorted((a.root / "images" / "val").glob("*.jpg"))
    print(f"{len(images)} images, --protocol martin2004 (paper: Gaussian derivative 0.58, "
          "greyscale Pb 0.65, colour Pb 0.67)")
    print(f"{'sigma':>5}  {'ODS':>6}  {'OIS':>6}")
    for sigma in (int(s) for s in a.sigmas.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            for path in images:
                pb = pb_gm(halve_image(iio.imread(path)), sigma=sigma)[0]
                np.save(Path(tmp) / f"{path.stem}.npy", pb)
            res = segbench.evaluate("boundary", a.root / "groundTruth" / "val", tmp,
                                    preset="martin2004", progress=False, plot=False)
        print(f"{sigma:>5}  {res.metrics['ODS']:.4f}  {res.metrics['OIS']:.4f}")


if __name__ == "__main__":
    main()
