"""Our structured edge detection against OpenCV's on the same (exported) model: maps and
CPU time per image, one thread each.

Run it with the OpenCV venv's python (opencv-contrib-python-headless, numpy); it runs
segbench's side in segbench's venv (``--ours-python``) and passes arrays through
``.npy`` files in ``--work``:

    python3 -m venv /tmp/cv-venv
    /tmp/cv-venv/bin/pip install numpy opencv-contrib-python-headless
    /tmp/cv-venv/bin/python benchmarks/se_opencv_parity.py \\
        --model /tmp/se_forest/sweep_forest.npz --ours-python .venv/bin/python

Stages:

1. ``ours`` (segbench's venv): ``export_opencv`` writes the model twice, with the
   forest's ``n_trees_eval`` (4 of 8) and with all 8 trees evaluated; the first
   ``--images`` BSDS500 val images are saved as float32 RGB in [0, 1] (both sides get
   these same arrays), and ``se()`` maps computed (sharpen 0 = what OpenCV does, and
   the model's sharpen), timed with ``time.process_time``.
2. ``opencv`` (this venv): ``createStructuredEdgeDetection(model).detectEdges(rgb)`` on
   both exported models, timed the same way (``cv2.setNumThreads(1)``); and OpenCV's
   channels (``RFFeatureGetter.getFeatures`` of the image padded as ``detectEdges``
   pads it: 8 px, ``BORDER_REFLECT``), smoothed as ``predictEdges`` smooths them
   (``imsmooth``: ``sepFilter2D``, default border ``BORDER_REFLECT_101``, radii
   ``round(chnSmooth / shrink)`` and ``round(simSmooth / shrink)``).
3. ``replay`` (segbench's venv): our tree kernels (``apply_forest``,
   ``accumulate_edges``) on those channels, the patches placed, scaled and cropped as
   ``predictEdges`` does and smoothed by ``imsmooth(., 1)`` (numpy, REFLECT_101),
   with all trees evaluated (OpenCV's tree choice per location differs from the
   toolbox's when 4 of 8 are). This isolates the model file and the tree evaluation
   from the channel computation: it should give OpenCV's map up to float rounding.
4. The comparison printed: max / mean absolute difference and Pearson correlation over
   all pixels and 16 px inside the border, per pair of maps, averaged over the images
   (max: the largest); and the CPU-s per image.

The maps differ where the two implementations differ (research note §7): OpenCV's
gradient channels (twice the toolbox's central difference, hard orientation binning,
other borders), its 8 px reflected padding and its tree selection; OpenCV does not clip,
``se()`` clips at 1 (OpenCV's map is clipped here for the comparison with ``se()``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

for _v in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
):
    os.environ[_v] = "1"

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BSDS = ROOT.parent / "shared" / "data" / "bsds500"
BORDER = 16


def _cpu(fn, repeat):
    fn()  # warm-up: compiles, builds tables
    t0 = time.process_time()
    for _ in range(repeat):
        out = fn()
    return out, (time.process_time() - t0) / repeat


# ---------------------------------------------------------------------------------------
# stage 1: segbench


def stage_ours(args) -> None:
    from segbench.algorithms._se_detect import se
    from segbench.algorithms._se_export import export_opencv
    from segbench.algorithms._se_forest import load_forest
    from segbench.io import read_image

    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    forest = load_forest(args.model)
    n_trees = forest.options.n_trees
    model_sharpen = forest.options.sharpen
    export_opencv(forest, work / "model.yml.gz")
    export_opencv(forest, work / "model_all.yml.gz", n_trees_eval=n_trees)
    ids = sorted(p.stem for p in (args.bsds / "images" / "val").glob("*.jpg"))
    ids = ids[: args.images]
    timing = {"se sharpen 0": [], f"se sharpen {model_sharpen}": []}
    for iid in ids:
        rgb = read_image(args.bsds / "images" / "val" / f"{iid}.jpg")
        img = (rgb.astype(np.float32) / np.float32(255)).astype(np.float32)
        np.save(work / f"{iid}_img.npy", img)
        e0, t0 = _cpu(lambda img=img: se(img, forest, sharpen=0)[0], args.repeat)
        es, ts = _cpu(
            lambda img=img: se(img, forest, sharpen=model_sharpen)[0], args.repeat
        )
        ea = se(img, forest, sharpen=0, n_trees_eval=n_trees)[0]
        np.save(work / f"{iid}_se0.npy", e0)
        np.save(work / f"{iid}_se_sharpen.npy", es)
        np.save(work / f"{iid}_se0_all.npy", ea)
        timing["se sharpen 0"].append(t0)
        timing[f"se sharpen {model_sharpen}"].append(ts)
    meta = dict(
        ids=ids,
        n_trees=n_trees,
        n_trees_eval=forest.options.n_trees_eval,
        sharpen=model_sharpen,
        timing=timing,
        stride=forest.options.stride,
        shrink=forest.options.shrink,
        gt_width=forest.options.gt_width,
        chn_smooth=forest.options.chn_smooth,
        sim_smooth=forest.options.sim_smooth,
    )
    (work / "ours.json").write_text(json.dumps(meta))


# ---------------------------------------------------------------------------------------
# stage 3: our tree kernels on OpenCV's channels


def _imsmooth_101(x: np.ndarray, rad: int) -> np.ndarray:
    """OpenCV's imsmooth (structured_edge_detection.cpp) of (H, W, C) float32: the
    toolbox's triangle / [1 p 1] kernel, separable, BORDER_REFLECT_101."""
    if rad == 0:
        return x
    if rad <= 1:
        p = np.float32(12.0) / rad / (rad + 2) - 2
        k = np.array([1 / (p + 2), p / (p + 2), 1 / (p + 2)], np.float32)
    else:
        nrml = np.float32((rad + 1.0) ** 2)
        k = np.array(
            [(min(i, 2 * rad - i) + 1) / nrml for i in range(2 * rad + 1)], np.float32
        )
    r = k.size // 2
    pad = np.pad(x, ((r, r), (0, 0), (0, 0)), mode="reflect")  # numpy reflect = 101
    y = sum(k[i] * pad[i : i + x.shape[0]] for i in range(k.size)).astype(np.float32)
    pad = np.pad(y, ((0, 0), (r, r), (0, 0)), mode="reflect")
    return sum(k[i] * pad[:, i : i + x.shape[1]] for i in range(k.size)).astype(np.float32)


def stage_replay(args) -> None:
    from segbench.algorithms import _se_forest_kernels as fk
    from segbench.algorithms._se_forest import feature_offsets, load_forest

    work = args.work
    meta = json.loads((work / "ours.json").read_text())
    forest = load_forest(args.model)
    opts = forest.options
    tabs = forest.detection_tables(1)
    n_eval = opts.n_trees
    stride, shrink, g = opts.stride, opts.shrink, opts.gt_width
    for iid in meta["ids"]:
        # OpenCV's channels, smoothed by OpenCV's sepFilter2D (stage 2), (Hf, Wf, 13)
        reg = np.load(work / f"{iid}_cv_reg.npy")
        sim = np.load(work / f"{iid}_cv_sim.npy")
        h, w = np.load(work / f"{iid}_img.npy").shape[:2]
        hf, wf = reg.shape[:2]
        reg = np.ascontiguousarray(np.moveaxis(reg, 2, 0))
        sim = np.ascontiguousarray(np.moveaxis(sim, 2, 0))
        h1 = int(np.ceil((hf * shrink - opts.image_width) / stride))
        w1 = int(np.ceil((wf * shrink - opts.image_width) / stride))
        cids, c1, c2 = feature_offsets(opts, hf, wf)
        ind = fk.apply_forest(
            reg,
            sim,
            h1,
            w1,
            stride // shrink,
            tabs["nodes"],
            n_eval,
            opts.n_chn_ftrs,
            cids,
            c1,
            c2,
        )
        acc = np.zeros((h1 * stride + g, w1 * stride + g), np.float32)
        fk.accumulate_edges(ind, tabs["bins"], tabs["bnds"], 1, stride, g, acc)
        step = np.float32(2.0 * stride**2 / g**2 / n_eval)
        e = np.zeros((h, w), np.float32)
        hh, ww = min(h, acc.shape[0]), min(w, acc.shape[1])
        e[:hh, :ww] = acc[:hh, :ww] * step  # OpenCV places patch i at row i*stride
        e = _imsmooth_101(e[:, :, None], 1)[:, :, 0]
        np.save(work / f"{iid}_replay_all.npy", e)


# ---------------------------------------------------------------------------------------
# stage 2 and 4: OpenCV, comparison


def _stats(a: np.ndarray, b: np.ndarray) -> dict:
    d = np.abs(a.astype(np.float64) - b.astype(np.float64))
    i = (slice(BORDER, -BORDER), slice(BORDER, -BORDER))
    di = d[i]

    def corr(x, y):
        x, y = x.ravel().astype(np.float64), y.ravel().astype(np.float64)
        return float(np.corrcoef(x, y)[0, 1])

    return dict(
        frac=float(np.mean(d > 1e-4)),
        max=float(d.max()),
        mean=float(d.mean()),
        corr=corr(a, b),
        max_in=float(di.max()),
        mean_in=float(di.mean()),
        corr_in=corr(a[i], b[i]),
    )


def _cv_kernel(rad: int):
    """imsmooth's kernel (structured_edge_detection.cpp), float32 as OpenCV forms it;
    None for radius 0."""
    if rad == 0:
        return None
    if rad <= 1:
        p = np.float32(12.0) / np.float32(rad) / np.float32(rad + 2) - np.float32(2)
        return np.array([1 / (p + 2), p / (p + 2), 1 / (p + 2)], np.float32)
    nrml = np.float32(rad + 1.0) ** 2
    k = [np.float32(min(i, 2 * rad - i) + 1) / nrml for i in range(2 * rad + 1)]
    return np.array(k, np.float32)


def stage_opencv(args) -> None:
    import cv2

    cv2.setNumThreads(1)
    work = args.work
    meta = json.loads((work / "ours.json").read_text())
    det = cv2.ximgproc.createStructuredEdgeDetection(str(work / "model.yml.gz"))
    det_all = cv2.ximgproc.createStructuredEdgeDetection(str(work / "model_all.yml.gz"))
    getter = cv2.ximgproc.createRFFeatureGetter()
    times = []
    for iid in meta["ids"]:
        img = np.load(work / f"{iid}_img.npy")
        e, t = _cpu(lambda img=img: det.detectEdges(img), args.repeat)
        times.append(t)
        np.save(work / f"{iid}_cv.npy", e)
        np.save(work / f"{iid}_cv_all.npy", det_all.detectEdges(img))
        pad = 8  # (patchSize - patchInnerSize) / 2, as detectEdges pads
        src = cv2.copyMakeBorder(img, pad, pad, pad, pad, cv2.BORDER_REFLECT)
        n_size = (src.shape[0] // meta["shrink"], src.shape[1] // meta["shrink"])
        feats = np.zeros((*n_size, 13), np.float32)
        getter.getFeatures(src, feats, 4, 0, meta["shrink"], 13, 4)
        for name, rad in (("reg", meta["chn_smooth"]), ("sim", meta["sim_smooth"])):
            k = _cv_kernel(round(rad / meta["shrink"]))
            sm = feats if k is None else cv2.sepFilter2D(feats, -1, k, k)
            np.save(work / f"{iid}_cv_{name}.npy", sm)
    meta["timing"]["OpenCV detectEdges"] = times
    (work / "cv.json").write_text(json.dumps(meta))


def report(args) -> None:
    work = args.work
    meta = json.loads((work / "cv.json").read_text())
    ids = meta["ids"]
    s = meta["sharpen"]
    ne, nt = meta["n_trees_eval"], meta["n_trees"]
    pairs = [
        (f"se(sharpen=0) vs OpenCV, {ne} of {nt} trees", "se0", "cv", True),
        (f"se(sharpen=0) vs OpenCV, all {nt} trees", "se0_all", "cv_all", True),
        (f"se(sharpen={s}) vs OpenCV, {ne} of {nt} trees", "se_sharpen", "cv", True),
        (
            f"our trees on OpenCV's channels vs OpenCV, all {nt}",
            "replay_all",
            "cv_all",
            False,
        ),
    ]
    print(f"{len(ids)} BSDS500 val images ({', '.join(ids[:3])}, ...), model {args.model}")
    print(
        "| pair | max abs | mean abs | corr | > 1e-4 | max abs (16 px in) | mean abs (in) "
        "| corr (in) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for label, a, b, clip in pairs:
        rows = []
        for iid in ids:
            x = np.load(work / f"{iid}_{a}.npy")
            y = np.load(work / f"{iid}_{b}.npy")
            rows.append(_stats(x, np.clip(y, 0, 1) if clip else y))
        m = {
            k: (max if k.startswith("max") else np.mean)([r[k] for r in rows])
            for k in rows[0]
        }
        print(
            f"| {label} | {m['max']:.3g} | {m['mean']:.3g} | {m['corr']:.4f} | "
            f"{100 * m['frac']:.3g}% | "
            f"{m['max_in']:.3g} | {m['mean_in']:.3g} | {m['corr_in']:.4f} |"
        )
    print()
    print("| CPU-s per image (one thread) | mean | min | max |")
    print("|---|---|---|---|")
    for name, ts in meta["timing"].items():
        print(f"| {name} | {np.mean(ts):.4f} | {min(ts):.4f} | {max(ts):.4f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "stage",
        nargs="?",
        default="all",
        choices=["all", "ours", "opencv", "replay", "report"],
    )
    ap.add_argument("--model", type=Path, default=Path("/tmp/se_forest/sweep_forest.npz"))
    ap.add_argument("--ours-python", default=str(ROOT / ".venv" / "bin" / "python"))
    ap.add_argument("--bsds", type=Path, default=BSDS)
    ap.add_argument("--images", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path("/tmp/se_opencv_parity"))
    args = ap.parse_args()
    if args.stage == "all":
        common = [
            "--model",
            str(args.model),
            "--bsds",
            str(args.bsds),
            "--images",
            str(args.images),
            "--repeat",
            str(args.repeat),
            "--work",
            str(args.work),
        ]
        me = str(Path(__file__).resolve())
        subprocess.run([args.ours_python, me, "ours", *common], check=True)
        stage_opencv(args)
        subprocess.run([args.ours_python, me, "replay", *common], check=True)
        report(args)
    else:
        dict(ours=stage_ours, opencv=stage_opencv, replay=stage_replay, report=report)[
            args.stage
        ](args)


if __name__ == "__main__":
    sys.exit(main())
