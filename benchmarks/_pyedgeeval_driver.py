"""Driver that runs pyEdgeEval's BSDS500 boundary evaluation, one image at a time.

Run by ``boundary_speed.py`` with the Python of ``benchmarks/.peer-venv`` (pyEdgeEval is
never imported into segbench's environment).  Usage::

    python _pyedgeeval_driver.py '<json config>'

config keys: ``items`` (list of ``{"iid", "pred", "gt"}``), ``nthresh``, ``max_dist``,
``thin``.  Per image it calls ``pyEdgeEval.datasets.bsds.bsds_eval_single`` -- the very
function ``BSDS500Evaluator.evaluate`` maps over the samples (there through a process pool
of ``nproc`` workers; here in this single process, so one worker).  It reads the PNG with
``skimage.io.imread`` + ``img_as_float`` (uint8 / 255), the ground truth with
``scipy.io.loadmat`` (``groundTruth{k}.Boundaries``), thresholds with ``pred >= t`` at
``linspace(1/(n+1), 1-1/(n+1), n)``, thins each thresholded map (LUT thinning) and
matches it against every annotator with the BSDS C++ ``correspondPixels`` code.

The timed section is that one call (read + evaluate), measured with ``time.process_time``
in this process.  Everything else this script or its imports print goes to stderr; the only
thing written to stdout is one JSON document.
"""

import json
import os
import sys
import time


def main() -> int:
    cfg = json.loads(sys.argv[1])
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # pyEdgeEval prints warnings at import time

    import numpy as np
    import pyEdgeEval
    from pyEdgeEval.datasets.bsds import bsds_eval_single

    out = {
        "pyedgeeval_version": pyEdgeEval.__version__,
        "numpy_version": np.__version__,
        "python": sys.version.split()[0],
        "pid": os.getpid(),
        "images": [],
    }
    n = len(cfg["items"])
    for k, item in enumerate(cfg["items"], 1):
        kwargs = dict(
            name=item["iid"],
            gt_path=item["gt"],
            pred_path=item["pred"],
            scale=1.0,
            max_dist=float(cfg["max_dist"]),
            thresholds=int(cfg["nthresh"]),
            apply_thinning=bool(cfg["thin"]),
            apply_nms=False,
        )
        w0 = time.perf_counter()
        c0 = time.process_time()
        cnt_r, sum_r, cnt_p, sum_p = bsds_eval_single(kwargs)
        c1 = time.process_time()
        w1 = time.perf_counter()
        n_t = int(cfg["nthresh"])
        thresholds = np.linspace(1.0 / (n_t + 1), 1.0 - 1.0 / (n_t + 1), n_t)
        out["images"].append(
            {
                "iid": item["iid"],
                "cpu_s": c1 - c0,
                "wall_s": w1 - w0,
                "thresholds": thresholds.tolist(),
                "cnt_r": np.asarray(cnt_r).tolist(),
                "sum_r": np.asarray(sum_r).tolist(),
                "cnt_p": np.asarray(cnt_p).tolist(),
                "sum_p": np.asarray(sum_p).tolist(),
            }
        )
        print(
            f"  [pyEdgeEval] {k}/{n} {item['iid']}: {c1 - c0:.1f} CPU-s "
            f"({w1 - w0:.1f} s wall)",
            file=sys.stderr,
            flush=True,
        )

    real_stdout.write(json.dumps(out))
    real_stdout.write("\n")
    real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
