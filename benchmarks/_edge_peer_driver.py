"""Driver that runs one peer edge evaluator (pyEdgeEval or edgeval) image by image.

Run by ``edge_datasets.py`` with the Python of the peer's own virtual environment (a peer
is never imported into segbench's environment).  Usage::

    python _edge_peer_driver.py '<json config>'

config keys: ``tool`` (``pyedgeeval``, ``edgeval`` or ``convert``), ``items`` (list of
``{"iid", "pred", "gt"}``; for ``convert`` ``{"pngs": [...], "mat": out}``), ``nthresh``,
``max_dist``, ``thin``, ``seed`` (reseed the CSA's random generator before each image;
0 = leave it clock-seeded as upstream does), ``work`` (a scratch folder, edgeval).

* ``pyedgeeval``: ``pyEdgeEval.datasets.bsds.bsds_eval_single`` per image (the function
  ``BSDS500Evaluator`` maps over the samples): the map read with ``skimage.io.imread`` +
  ``img_as_float`` (uint8 / 255), every ``groundTruth{k}.Boundaries`` with ``loadmat``,
  ``pred >= t`` at ``linspace(1/(n+1), 1-1/(n+1), n)``, ``binary_thin``, the BSDS C++
  ``correspondPixels`` per annotator.  Summary: its own ``calculate_metrics`` (ODS, OIS,
  ``AUC`` = the BSDS AP, and its own ``AP``, an interpolated-max AP).  Seed: the C++
  ``Random::reseed`` of its extension through ctypes (it exposes none).
* ``edgeval``: ``edgeval_cu.eval_precise.gpu_eval_img_precise(..., workers=1)`` -- the
  exact CSA path (CPU despite the name), not the pure-Python auction its CLI runs on CPU
  -- with the module's ``loadmat`` wrapped so ``Boundaries`` come back as bool (0.1.1
  indexes a zeros mask with the uint8 0/1 array, marking rows 0 and 1 instead of the
  edges).  Map read as the package reads it (``cv2.imread(IMREAD_UNCHANGED) / 255``).
  Summary: its own ``edges_eval_dir`` over ``_ev1.txt`` files written here (it skips
  images whose file exists).  Seed: ``reseed_random`` exported by its ``solve_csa.so``.
* ``convert``: each ground-truth PNG (one a annotator) binarized ``> 0`` and wrapped into
  one BSDS ``.mat`` (``groundTruth{k}`` with a bool ``Boundaries``), which is how a user
  feeds BIPED or Multicue PNGs to evaluators that read ``.mat`` only.

The timed section per image is read + evaluate, ``time.process_time`` in this process.
Everything the peers print goes to stderr; stdout carries one JSON document.
"""

import contextlib
import ctypes
import io
import json
import os
import shutil
import sys
import time


def _dist_version(name):
    """The installed distribution's version (edgeval 0.1.1's module still says 0.1.0)."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


def _thresholds(n):
    import numpy as np
    return np.linspace(1.0 / (n + 1), 1.0 - 1.0 / (n + 1), n)


def _image_record(iid, t0, w0, cnt_r, sum_r, cnt_p, sum_p):
    import numpy as np
    return {
        "iid": iid,
        "cpu_s": time.process_time() - t0,
        "wall_s": time.perf_counter() - w0,
        "cnt_r": np.asarray(cnt_r, float).astype(int).tolist(),
        "sum_r": np.asarray(sum_r, float).astype(int).tolist(),
        "cnt_p": np.asarray(cnt_p, float).astype(int).tolist(),
        "sum_p": np.asarray(sum_p, float).astype(int).tolist(),
    }


def run_convert(cfg):
    import cv2
    import numpy as np
    from scipy.io import savemat

    done = []
    for item in cfg["items"]:
        cell = np.empty((1, len(item["pngs"])), dtype=object)
        for k, png in enumerate(item["pngs"]):
            g = cv2.imread(png, cv2.IMREAD_GRAYSCALE)
            if g is None:
                raise SystemExit(f"cannot read {png}")
            b = g > 0
            cell[0, k] = {"Segmentation": np.ones(b.shape, np.uint16), "Boundaries": b}
        os.makedirs(os.path.dirname(item["mat"]), exist_ok=True)
        savemat(item["mat"], {"groundTruth": cell})
        done.append(item["mat"])
    return {"converted": done, "numpy_version": np.__version__,
            "opencv_version": cv2.__version__}


def run_pyedgeeval(cfg):
    with contextlib.redirect_stdout(io.StringIO()):  # "WARN: cannot load newer .mat"
        import numpy as np
        import pyEdgeEval
        from pyEdgeEval.common.binary_label import calculate_metrics
        from pyEdgeEval.datasets.bsds import bsds_eval_single

    lib = ctypes.CDLL(sys.modules["pyEdgeEval._lib.correspond_pixels"].__file__)
    rand_addr = ctypes.addressof(ctypes.c_char.in_dll(lib, "_ZN6Random4randE"))
    reseed_fn = lib._ZN6Random6reseedEm
    reseed_fn.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
    reseed_fn.restype = None

    seed = int(cfg.get("seed") or 0)
    nthresh = int(cfg["nthresh"])
    results, images = {}, []
    for k, item in enumerate(cfg["items"], 1):
        kwargs = dict(name=item["iid"], gt_path=item["gt"], pred_path=item["pred"],
                      scale=1.0, max_dist=float(cfg["max_dist"]), thresholds=nthresh,
                      apply_thinning=bool(cfg["thin"]), apply_nms=False)
        if seed:
            reseed_fn(rand_addr, seed)
        w0 = time.perf_counter()
        t0 = time.process_time()
        cnt_r, sum_r, cnt_p, sum_p = bsds_eval_single(kwargs)
        rec = _image_record(item["iid"], t0, w0, cnt_r, sum_r, cnt_p, sum_p)
        images.append(rec)
        results[item["iid"]] = (cnt_r, sum_r, cnt_p, sum_p)
        print(f"  [pyEdgeEval] {k}/{len(cfg['items'])} {item['iid']}: "
              f"{rec['cpu_s']:.1f} CPU-s", file=sys.stderr, flush=True)

    with contextlib.redirect_stdout(io.StringIO()):  # its progress bar
        _, _, overall = calculate_metrics(
            eval_single=lambda s: results[s["name"]], thresholds=nthresh,
            samples=[dict(name=iid) for iid in results], nproc=1)
    overall = {k: float(v) for k, v in overall.items()}
    return {
        "version": _dist_version("pyedgeeval"),
        "module_version": pyEdgeEval.__version__,
        "numpy_version": np.__version__,
        "images": images,
        "thresholds": _thresholds(nthresh).tolist(),
        "overall": {"ODS": overall["ODS_f1"], "ODS_threshold": overall["ODS_threshold"],
                    "OIS": overall["OIS_f1"], "AP": overall["AUC"],
                    "own_AP": overall["AP"]},
        "call": "pyEdgeEval.datasets.bsds.bsds_eval_single(dict(name, gt_path, pred_path, "
                "scale=1.0, max_dist, thresholds=nthresh, apply_thinning, apply_nms=False)); "
                "summary pyEdgeEval.common.binary_label.calculate_metrics (AP = its AUC)",
    }


def run_edgeval(cfg):
    import cv2
    import numpy as np
    from scipy.io import loadmat as scipy_loadmat

    import edgeval_cu
    import edgeval_cu.csa as ev_csa
    import edgeval_cu.eval_precise as ev_precise
    import edgeval_cu.metrics as ev_metrics

    def loadmat_bool_boundaries(path, *a, **kw):
        m = scipy_loadmat(path, *a, **kw)
        gt = m["groundTruth"]
        for j in range(gt.shape[1]):
            gt[0, j]["Boundaries"][0, 0] = gt[0, j]["Boundaries"][0, 0].astype(bool)
        return m

    ev_precise.loadmat = loadmat_bool_boundaries  # the 0.1.1 fix, this module only
    ev_csa.solver.reseed_random.argtypes = [ctypes.c_uint64]
    ev_csa.solver.reseed_random.restype = None

    seed = int(cfg.get("seed") or 0)
    nthresh = int(cfg["nthresh"])
    thin = bool(cfg["thin"])
    images = []
    for k, item in enumerate(cfg["items"], 1):
        if seed:
            ev_csa.solver.reseed_random(seed)
        w0 = time.perf_counter()
        t0 = time.process_time()
        e = cv2.imread(item["pred"], cv2.IMREAD_UNCHANGED)
        if e is None or e.ndim != 2 or e.dtype != np.uint8:
            raise SystemExit(f"not an 8-bit grey map: {item['pred']}")
        info = ev_precise.gpu_eval_img_precise(e / 255.0, item["gt"], thrs=nthresh,
                                               max_dist=float(cfg["max_dist"]), thin=thin,
                                               workers=1)
        info = np.asarray(info)
        rec = _image_record(item["iid"], t0, w0, *info[:, 1:].T)
        rec["info"] = info
        images.append(rec)
        print(f"  [edgeval] {k}/{len(cfg['items'])} {item['iid']}: {rec['cpu_s']:.1f} CPU-s",
              file=sys.stderr, flush=True)

    # its own summary: edges_eval_dir over _ev1.txt files it finds already written
    work = cfg["work"]
    res_dir = os.path.join(work, "edgeval_res")
    gt_dir = os.path.join(work, "edgeval_gt")
    eval_dir = f"{res_dir}-eval" if nthresh == 99 else f"{res_dir}-eval-{nthresh}"
    for d in (res_dir, gt_dir, eval_dir):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    for item, rec in zip(cfg["items"], images):
        os.symlink(os.path.abspath(item["gt"]), os.path.join(gt_dir, f"{item['iid']}.mat"))
        np.savetxt(os.path.join(eval_dir, f"{item['iid']}_ev1.txt"), rec.pop("info"),
                   fmt="%10g")
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # its tqdm and "ODS: ..." print
    try:
        ev_metrics.edges_eval_dir(res_dir, gt_dir, thrs=nthresh,
                                  max_dist=float(cfg["max_dist"]), thin=thin, workers=1)
    finally:
        sys.stdout = real_stdout
    ods_t, _, _, ods_f, _, _, ois_f, ap = np.loadtxt(os.path.join(eval_dir, "eval_bdry.txt"))
    return {
        "version": _dist_version("edgeval"),
        "module_version": getattr(edgeval_cu, "__version__", "?"),
        "numpy_version": np.__version__,
        "images": images,
        "thresholds": _thresholds(nthresh).tolist(),
        "overall": {"ODS": float(ods_f), "ODS_threshold": float(ods_t),
                    "OIS": float(ois_f), "AP": float(ap)},
        "call": "edgeval_cu.eval_precise.gpu_eval_img_precise(cv2.imread(png, "
                "IMREAD_UNCHANGED) / 255, gt_mat, thrs=nthresh, max_dist, thin, workers=1) "
                "with loadmat patched to bool Boundaries; summary "
                "edgeval_cu.metrics.edges_eval_dir over the _ev1.txt files",
    }


def main() -> int:
    cfg = json.loads(sys.argv[1])
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    tool = cfg["tool"]
    if tool == "convert":
        out = run_convert(cfg)
    elif tool == "pyedgeeval":
        out = run_pyedgeeval(cfg)
    elif tool == "edgeval":
        out = run_edgeval(cfg)
    else:
        raise SystemExit(f"unknown tool {tool!r}")
    out.update(tool=tool, python=sys.version.split()[0], pid=os.getpid())
    real_stdout.write(json.dumps(out) + "\n")
    real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
