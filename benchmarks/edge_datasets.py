#!/usr/bin/env python3
"""segbench on the edge-detection datasets' own layouts, next to pyEdgeEval and edgeval.

Synthetic data is written IN EACH DATASET'S LAYOUT from segbench's generator
(``segbench.datasets.make_synthetic_dataset``), with soft predictions made from the scene's
boundaries (blurred, shifted, plus noise from a seeded generator; three kinds of map in
turn: smooth, noisy, random texture):

  * NYUD-like: ``NYUD/test_gt_mat/img_NNNN.mat`` (one annotator, BSDS ``.mat`` written by
    ``segbench.datasets.write_ground_truth``), 560x425, tolerance 0.011;
  * BIPED-like: ``BIPED/edges/edge_maps/test/rgbr/RGB_NNN.png`` (0/255) with the photos in
    ``BIPED/edges/imgs/test/rgbr/RGB_NNN.jpg``, tolerance 0.0075;
  * Multicue-like: ``multicue/ground-truth/images/edges/<name>.<k>.png`` (six annotators)
    with ``multicue/images/<name>.png``, tolerance 0.0075.

segbench runs as a process, as a user runs it: ``segbench boundary --gt <layout root>
--pred ... --preset nyud|biped|multicue --nms off --workers 1 --threads 1`` (the presets
apply Dollar's NMS; neither peer does, so NMS is off on both sides: the settings compared
are the presets' tolerance, 99 thresholds, thinning on).  The peers read ``.mat`` only:
each PNG layout is converted, as users do, to one BSDS ``.mat`` an image holding every
annotator (``Boundaries`` = PNG > 0).  They run in their own virtual environments through
``_edge_peer_driver.py`` (one JSON document on stdout), seeded through ctypes so their
randomized matcher gives the same counts on every run:

  * pyEdgeEval 0.2.8 (``benchmarks/.peer-venv``): ``bsds_eval_single``, summary by its own
    ``calculate_metrics`` (AP = its ``AUC``, the BSDS AP; its ``AP`` is another measure);
  * edgeval 0.1.1 (``benchmarks/.peer-venv-edgeval``): its exact CSA path
    ``gpu_eval_img_precise(workers=1)`` with its ``loadmat`` patched to bool boundaries
    (0.1.1 is otherwise at recall 0), summary by its own ``edges_eval_dir``.

Printed per layout: ODS, OIS and AP of the three and the peers' deltas; per (image,
threshold) cell: whether sumR and sumP agree (sumP differs only where a thinning differs:
pyEdgeEval's ``binary_thin`` stops early on near-solid masks), and, where sumP agrees,
whether segbench's cntR is at least the peer's (segbench's matching is exact, the peers'
CSA graph is randomly sparsified, so it can only find fewer matches); the best F per image.

Speed, on the NYUD-like layout (``--n`` images of 560x425, 99 thresholds, tolerance
0.011): CPU seconds of segbench's whole command per image (user + sys of the child
process, ``resource.getrusage(RUSAGE_CHILDREN)``, one worker, one thread; median of
``--repeat`` runs after one untimed warm-up), against each peer's (its whole driver
process, and the read + evaluate section per image alone), the ratios, and an
extrapolation to NYUD's 654 test images, labelled as such.

The script prints figures only: it never asserts anything about timing or agreement.  The
default run takes about 15 minutes on one core, nearly all of it the peers'.

``--write-figures FILE`` is a separate mode: the small deterministic set of
``make_parity_set`` (4 images of 96x128 a layout) through both peers, written as the
reference that ``tests/test_edge_layouts_parity.py`` checks segbench against.

    python benchmarks/edge_datasets.py                    # 12 images a layout, both peers
    python benchmarks/edge_datasets.py --n 3 --skip-peers
    python benchmarks/edge_datasets.py --json edge.json
    python benchmarks/edge_datasets.py --write-figures tests/peer_figures/edge_layouts.json
"""

from __future__ import annotations

import os

# One worker each: no hidden thread pools in any process (set before numpy/numba load).
_SINGLE_THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
}
# Set for this process when run as a script (below); every child gets it explicitly, and
# importing this module (the test does, for its data) changes nothing.

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PYEDGEEVAL_VENV = HERE / ".peer-venv"
EDGEVAL_VENV = HERE / ".peer-venv-edgeval"
DRIVER = HERE / "_edge_peer_driver.py"
FIGURES = REPO / "tests" / "peer_figures" / "edge_layouts.json"

NTHRESH = 99
THIN = True
PEER_SEED = 1            # the seed both peers' CSA random generators get before each image
NYUD_TEST_IMAGES = 654   # NYUDv2's test split, for the extrapolation
PRED_KINDS = ("smooth", "noisy", "texture")

#: Each layout: the preset whose tolerance it is scored at (NMS off on both sides), the
#: annotators a synthetic image gets, the image shape (H, W) of the dataset and of this
#: benchmark's default run, and the generator's seed.
LAYOUTS = {
    "nyud": {"preset": "nyud", "max_dist": 0.011, "annotators": 1, "shape": (425, 560),
             "seed": 11, "gt_format": None},
    "biped": {"preset": "biped", "max_dist": 0.0075, "annotators": 1, "shape": (720, 1280),
              "seed": 12, "gt_format": None},
    "multicue": {"preset": "multicue", "max_dist": 0.0075, "annotators": 6,
                 "shape": (720, 1280), "seed": 13, "gt_format": "multicue-edges"},
}
#: The small deterministic set of the test's reference figures.
PARITY_SET = {"n": 4, "shape": (96, 128)}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- data


def soft_prediction(truth: np.ndarray, index: int, seed: int) -> tuple[np.ndarray, str]:
    """A uint8 soft boundary map of a scene (its regions ``truth``) and its kind.

    The scene's boundaries (every object, faint or not, so the map fires where some
    annotators draw nothing) shifted by up to a pixel and blurred, at a random contrast,
    plus: little noise (``smooth``), strong uniform noise (``noisy``), or a random
    texture (``texture``: the magnitude of smoothed Gaussian noise). Deterministic in
    (``index``, ``seed``).
    """
    from scipy.ndimage import gaussian_filter

    from segbench.primitives import seg2bdry, thin

    kind = PRED_KINDS[index % len(PRED_KINDS)]
    rng = np.random.default_rng([seed, 0x5EED, index])
    bdry = np.asarray(thin(seg2bdry(np.asarray(truth))), np.float64)
    h, w = bdry.shape
    dy, dx = (int(v) for v in rng.integers(-1, 2, size=2))
    signal = np.roll(bdry, (dy, dx), axis=(0, 1))
    contrast = float(rng.uniform(0.55, 1.0))
    if kind == "smooth":
        s = gaussian_filter(signal, 1.0)
        s = contrast * s / s.max() + 0.03 * rng.random((h, w))
    elif kind == "noisy":
        s = gaussian_filter(signal, 1.5)
        s = 0.85 * contrast * s / s.max() + 0.35 * rng.random((h, w))
    else:
        field = np.abs(gaussian_filter(rng.standard_normal((h, w)), 2.0))
        s = gaussian_filter(signal, 1.2)
        s = 0.7 * contrast * s / s.max() + 0.45 * field / field.max() \
            + 0.05 * rng.random((h, w))
    return np.clip(np.rint(255.0 * s), 0, 255).astype(np.uint8), kind


def _edge_png(seg: np.ndarray) -> np.ndarray:
    """An annotator's edge map as BIPED and Multicue store it: 0/255, the boundary of its
    segmentation as BSDS draws it (``thin(seg2bdry(seg))``)."""
    from segbench.primitives import seg2bdry, thin
    return np.where(np.asarray(thin(seg2bdry(np.asarray(seg))), bool), 255, 0).astype(np.uint8)


def generator_call(layout: str, n: int, shape=None, seed=None) -> str:
    spec = LAYOUTS[layout]
    h, w = shape or spec["shape"]
    return (f"segbench.datasets.make_synthetic_dataset({n}, shape=({h}, {w}), "
            f"n_annotators={spec['annotators']}, seed={spec['seed'] if seed is None else seed})")


def write_layout(root, layout: str, n: int, *, shape=None, seed=None) -> dict:
    """Write ``n`` synthetic images of ``layout`` under ``root`` in that dataset's own
    layout, with a soft prediction each; returns the manifest of what was written.

    Manifest keys: ``layout``, ``gt`` (what ``--gt`` takes), ``gt_format``, ``pred``
    (the predictions' folder), ``ids``, ``kinds`` (prediction kind per id), ``files``
    (path relative to ``root`` -> content hash, every ground-truth and prediction file),
    ``peer_items`` (per image the prediction, the ``.mat`` the peers read and, for PNG
    layouts, the PNGs it is made from), ``generator`` (the exact call), ``max_dist``,
    ``preset``, ``shape``.
    """
    from segbench.datasets import make_synthetic_dataset, write_ground_truth
    from segbench.io import write_image

    spec = LAYOUTS[layout]
    root = Path(root)
    h, w = shape or spec["shape"]
    seed = spec["seed"] if seed is None else seed
    items = make_synthetic_dataset(n, shape=(h, w), n_annotators=spec["annotators"],
                                   seed=seed)
    pred_dir = root / "pred" / layout
    pred_dir.mkdir(parents=True, exist_ok=True)
    peer_gt = root / "peer_gt" / layout
    manifest = {"layout": layout, "gt_format": spec["gt_format"], "pred": str(pred_dir),
                "ids": [], "kinds": {}, "files": {}, "peer_items": [],
                "generator": generator_call(layout, n, (h, w), seed),
                "prediction": f"edge_datasets.soft_prediction(item.truth, i, seed={seed})",
                "max_dist": spec["max_dist"], "preset": spec["preset"], "shape": [h, w]}
    written = []
    for i, item in enumerate(items):
        if layout == "nyud":
            iid = f"img_{5001 + i}"
            gt_dir = root / "NYUD" / "test_gt_mat"
            gt_dir.mkdir(parents=True, exist_ok=True)
            mat = gt_dir / f"{iid}.mat"
            write_ground_truth(mat, item.segmentations)
            written.append(mat)
            peer = {"iid": iid, "gt": str(mat)}
            manifest["gt"] = str(gt_dir)
        elif layout == "biped":
            iid = f"RGB_{i + 1:03d}"
            edges = root / "BIPED" / "edges"
            gt_dir = edges / "edge_maps" / "test" / "rgbr"
            img_dir = edges / "imgs" / "test" / "rgbr"
            gt_dir.mkdir(parents=True, exist_ok=True)
            img_dir.mkdir(parents=True, exist_ok=True)
            png = gt_dir / f"{iid}.png"
            write_image(png, _edge_png(item.segmentations[0]))
            write_image(img_dir / f"{iid}.jpg", item.image)
            written.append(png)
            peer = {"iid": iid, "pngs": [str(png)], "gt": str(peer_gt / f"{iid}.mat")}
            manifest["gt"] = str(root / "BIPED")
        elif layout == "multicue":
            iid = f"{i + 1:04d}_left_0001"
            mc = root / "multicue"
            gt_dir = mc / "ground-truth" / "images" / "edges"
            img_dir = mc / "images"
            gt_dir.mkdir(parents=True, exist_ok=True)
            img_dir.mkdir(parents=True, exist_ok=True)
            pngs = []
            for k, seg in enumerate(item.segmentations, 1):
                png = gt_dir / f"{iid}.{k}.png"
                write_image(png, _edge_png(seg))
                written.append(png)
                pngs.append(str(png))
            write_image(img_dir / f"{iid}.png", item.image)
            peer = {"iid": iid, "pngs": pngs, "gt": str(peer_gt / f"{iid}.mat")}
            manifest["gt"] = str(mc)
        else:
            raise ValueError(f"unknown layout {layout!r}")
        pred, kind = soft_prediction(item.truth, i, seed)
        pred_png = pred_dir / f"{iid}.png"
        write_image(pred_png, pred)
        written.append(pred_png)
        peer["pred"] = str(pred_png)
        manifest["ids"].append(iid)
        manifest["kinds"][iid] = kind
        manifest["peer_items"].append(peer)
    manifest["files"] = {p.relative_to(root).as_posix(): content_hash(p) for p in written}
    return manifest


def content_hash(path) -> str:
    """SHA-256 of what a file holds, decoded: a PNG's pixels (mode, size, bytes), a BSDS
    ``.mat``'s every ``Segmentation`` and ``Boundaries`` (dtype, shape, bytes).

    The files' own bytes are not reproducible (a ``.mat`` header carries the time it was
    written; PNG and ``.mat`` compression follow the zlib build); what the evaluators
    read is.
    """
    from PIL import Image
    from scipy.io import loadmat

    path = Path(path)
    h = hashlib.sha256()
    if path.suffix.lower() == ".mat":
        cells = loadmat(path)["groundTruth"]
        for k in range(cells.shape[1]):
            for field in ("Segmentation", "Boundaries"):
                a = np.ascontiguousarray(cells[0, k][field][0, 0])
                h.update(f"{k}:{field}:{a.dtype.str}:{a.shape}|".encode())
                h.update(a.tobytes())
    else:
        with Image.open(path) as im:
            a = np.ascontiguousarray(np.asarray(im))
            h.update(f"{im.mode}:{a.dtype.str}:{a.shape}|".encode())
            h.update(a.tobytes())
    return h.hexdigest()


def make_parity_set(root, layouts=tuple(LAYOUTS)) -> dict:
    """The small deterministic set of the reference figures: ``PARITY_SET['n']`` images of
    ``PARITY_SET['shape']`` a layout, every layout's own generator seed. Returns
    ``{layout: manifest}`` (:func:`write_layout`)."""
    return {lay: write_layout(Path(root), lay, PARITY_SET["n"], shape=PARITY_SET["shape"])
            for lay in layouts}


# --------------------------------------------------------------------------- segbench side


def segbench_command() -> list[str]:
    exe = Path(sys.executable).parent / "segbench"
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "segbench.cli"]


def segbench_args(manifest: dict, out: Path, ids=None) -> list[str]:
    """``segbench boundary`` as a user runs it on the layout: the preset's tolerance, NMS
    off (no peer applies it), one worker, one thread."""
    args = segbench_command() + [
        "boundary", "--gt", manifest["gt"], "--pred", manifest["pred"],
        "--preset", manifest["preset"], "--nms", "off", "--nthresh", str(NTHRESH),
        "--workers", "1", "--threads", "1", "--out", str(out), "--quiet", "--no-plot"]
    if manifest["gt_format"]:
        args += ["--gt-format", manifest["gt_format"]]
    if ids:
        args += ["--ids", ",".join(ids)]
    return args


def _child_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_segbench(manifest: dict, out: Path, ids=None, read_counts: bool = True) -> dict:
    """One ``segbench boundary`` command as a child process; its CPU (user + sys), wall
    time, summary and per-image counts (its ``<iid>_ev1.txt`` files)."""
    if out.exists():
        shutil.rmtree(out)  # a run folder resumes from its records: start afresh
    env = dict(os.environ, **_SINGLE_THREAD_ENV)
    cmd = segbench_args(manifest, out, ids)
    c0, w0 = _child_cpu(), time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    wall, cpu = time.perf_counter() - w0, _child_cpu() - c0
    if r.returncode != 0:
        sys.exit(f"segbench failed (exit {r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    res = json.loads((out / "result_boundary.json").read_text())
    m = res["metrics"]
    run = {"cpu_s": cpu, "wall_s": wall, "command": " ".join(cmd),
           "overall": {"ODS": m["ODS"], "ODS_threshold": m["ODS_threshold"],
                       "OIS": m["OIS"], "AP": m["AP"]},
           "params": res["provenance"]["params"], "images": []}
    if read_counts:
        from segbench.io import read_ev1
        for iid in (ids or manifest["ids"]):
            a = read_ev1(out / f"{iid}_ev1.txt")
            run["images"].append({"iid": iid, "thresholds": a[:, 0].tolist(),
                                  **{k: a[:, j].astype(int).tolist() for j, k in
                                     enumerate(("cnt_r", "sum_r", "cnt_p", "sum_p"), 1)}})
    return run


# --------------------------------------------------------------------------- peer side


PEERS = {"pyEdgeEval": ("pyedgeeval", PYEDGEEVAL_VENV),
         "edgeval": ("edgeval", EDGEVAL_VENV)}


def peer_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def peers_missing() -> list[str]:
    return [f"{name} ({peer_python(venv)})" for name, (_, venv) in PEERS.items()
            if not peer_python(venv).is_file()]


def _driver(venv: Path, cfg: dict) -> dict:
    env = dict(os.environ, **_SINGLE_THREAD_ENV)
    env.pop("PYTHONPATH", None)
    c0, w0 = _child_cpu(), time.perf_counter()
    r = subprocess.run([str(peer_python(venv)), str(DRIVER), json.dumps(cfg)],
                       stdout=subprocess.PIPE, stderr=None, text=True, env=env)
    wall, cpu = time.perf_counter() - w0, _child_cpu() - c0
    if r.returncode != 0:
        sys.exit(f"{cfg['tool']} driver failed (exit {r.returncode}) in {venv}")
    out = json.loads(r.stdout.strip().splitlines()[-1])
    out["process_cpu_s"], out["process_wall_s"] = cpu, wall
    return out


def convert_png_ground_truth(manifests: dict) -> None:
    """The PNG layouts' ground truth as one BSDS ``.mat`` an image (every annotator), for
    the peers; done by the driver in pyEdgeEval's environment (OpenCV, SciPy)."""
    items = [{"pngs": it["pngs"], "mat": it["gt"]} for m in manifests.values()
             for it in m["peer_items"] if "pngs" in it]
    if items:
        _driver(PYEDGEEVAL_VENV, {"tool": "convert", "items": items})


def run_peer(name: str, manifest: dict, work: Path) -> dict:
    tool, venv = PEERS[name]
    cfg = {"tool": tool, "nthresh": NTHRESH, "max_dist": manifest["max_dist"], "thin": THIN,
           "seed": PEER_SEED, "work": str(work / f"{tool}_{manifest['layout']}"),
           "items": [{"iid": it["iid"], "pred": it["pred"], "gt": it["gt"]}
                     for it in manifest["peer_items"]]}
    log(f"Running {name} on {manifest['layout']} ({len(cfg['items'])} images) ...")
    return _driver(venv, cfg)


# --------------------------------------------------------------------------- comparison


def fmeasure(r, p):
    r, p = np.asarray(r, float), np.asarray(p, float)
    return 2 * p * r / (p + r + ((p + r) == 0))


def best_f(im: dict) -> float:
    """An image's best F over the thresholds (its OIS F, no interpolation)."""
    c = {k: np.asarray(im[k], float) for k in ("cnt_r", "sum_r", "cnt_p", "sum_p")}
    r = c["cnt_r"] / np.where(c["sum_r"] == 0, 1, c["sum_r"])
    p = c["cnt_p"] / np.where(c["sum_p"] == 0, 1, c["sum_p"])
    return float(fmeasure(r, p).max())


def compare_counts(ours: dict, peer: dict, other: dict | None = None) -> dict:
    """Per (image, threshold) cell, segbench's counts against a peer's.

    ``other``: the other peer's images, to tell which sumP differences are the peer's own
    thinning (where the other peer agrees with segbench).
    """
    by_peer = {im["iid"]: im for im in peer["images"]}
    by_other = {im["iid"]: im for im in other["images"]} if other else {}
    out = {"cells": 0, "sum_r_differ": 0, "sum_p_differ": 0, "sum_p_differ_peer_more": 0,
           "sum_p_differ_other_agrees": 0, "cnt_r_ours_more": 0, "cnt_r_equal": 0,
           "cnt_r_ours_less": 0, "cnt_r_max_gain": 0, "cnt_r_less_where_sum_p_differs": 0,
           "cnt_p_min": 0, "cnt_p_max": 0, "best_f_max_abs_delta": 0.0, "images": {}}
    for o in ours["images"]:
        p = by_peer[o["iid"]]
        a = {k: np.asarray(o[k], np.int64) for k in ("cnt_r", "sum_r", "cnt_p", "sum_p")}
        b = {k: np.asarray(p[k], np.int64) for k in ("cnt_r", "sum_r", "cnt_p", "sum_p")}
        same_p = a["sum_p"] == b["sum_p"]
        d_r = a["cnt_r"] - b["cnt_r"]
        d_p = (a["cnt_p"] - b["cnt_p"])[same_p]
        out["cells"] += len(a["sum_p"])
        out["sum_r_differ"] += int(np.count_nonzero(a["sum_r"] != b["sum_r"]))
        out["sum_p_differ"] += int(np.count_nonzero(~same_p))
        out["sum_p_differ_peer_more"] += int(np.count_nonzero(b["sum_p"] > a["sum_p"]))
        if o["iid"] in by_other:
            oth = np.asarray(by_other[o["iid"]]["sum_p"], np.int64)
            out["sum_p_differ_other_agrees"] += int(
                np.count_nonzero(~same_p & (oth == a["sum_p"])))
        out["cnt_r_ours_more"] += int(np.count_nonzero(d_r[same_p] > 0))
        out["cnt_r_equal"] += int(np.count_nonzero(d_r[same_p] == 0))
        out["cnt_r_ours_less"] += int(np.count_nonzero(d_r[same_p] < 0))
        out["cnt_r_less_where_sum_p_differs"] += int(np.count_nonzero(d_r[~same_p] < 0))
        if same_p.any():
            out["cnt_r_max_gain"] = max(out["cnt_r_max_gain"], int(d_r[same_p].max()))
            out["cnt_p_min"] = min(out["cnt_p_min"], int(d_p.min()))
            out["cnt_p_max"] = max(out["cnt_p_max"], int(d_p.max()))
        df = best_f(p) - best_f(o)
        out["images"][o["iid"]] = {"best_f_ours": best_f(o), "best_f_peer": best_f(p),
                                   "delta": df}
        out["best_f_max_abs_delta"] = max(out["best_f_max_abs_delta"], abs(df))
    return out


# --------------------------------------------------------------------------- printing


def _fmt(x, nd=4) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def _fmt_delta(x) -> str:
    return "-" if x is None else f"{x:+.4f}"


def print_parity(layout: str, manifest: dict, ours: dict, peers: dict) -> dict:
    h, w = manifest["shape"]
    print()
    print(f"== {layout}: {len(manifest['ids'])} images {w}x{h}, "
          f"{LAYOUTS[layout]['annotators']} annotator(s), --gt {manifest['gt']}"
          f"{' --gt-format ' + manifest['gt_format'] if manifest['gt_format'] else ''}")
    print(f"   tolerance {manifest['max_dist']} (preset {manifest['preset']}), NMS off, "
          f"{NTHRESH} thresholds, thinning on; predictions: "
          + ", ".join(f"{k} x{list(manifest['kinds'].values()).count(k)}" for k in PRED_KINDS))
    hdr = f"   {'':<11} {'ODS':>7} {'OIS':>7} {'AP':>7}   {'dODS':>8} {'dOIS':>8} {'dAP':>8}"
    print(hdr)
    o = ours["overall"]
    print(f"   {'segbench':<11} {_fmt(o['ODS'])} {_fmt(o['OIS'])} {_fmt(o['AP'])}")
    table = {"segbench": o}
    for name, peer in peers.items():
        if peer is None:
            continue
        p = peer["overall"]
        print(f"   {name:<11} {_fmt(p['ODS'])} {_fmt(p['OIS'])} {_fmt(p['AP'])}   "
              f"{_fmt_delta(p['ODS'] - o['ODS'])} {_fmt_delta(p['OIS'] - o['OIS'])} "
              f"{_fmt_delta(p['AP'] - o['AP'])}")
        table[name] = p
    if len(table) > 1:
        print("   (d = peer minus segbench; each tool's own summary of its own counts; "
              "pyEdgeEval's AP is its AUC)")
    checks = {}
    names = [n for n, p in peers.items() if p is not None]
    if names:
        print(f"   per (image, threshold) cell, segbench vs peer ({len(ours['images'])} x "
              f"{NTHRESH} cells):")
        print(f"   {'peer':<11} {'sumR!=':>6} {'sumP!=':>6} {'(thin)':>6} | "
              f"{'cntR >':>6} {'cntR =':>6} {'cntR <':>6} {'max+':>5} | {'cntP range':>10} | "
              f"{'best-F max|d|':>13}")
        for name in names:
            other = next((peers[n] for n in names if n != name), None)
            c = compare_counts(ours, peers[name], other)
            checks[name] = c
            print(f"   {name:<11} {c['sum_r_differ']:>6} {c['sum_p_differ']:>6} "
                  f"{c['sum_p_differ_other_agrees']:>6} | {c['cnt_r_ours_more']:>6} "
                  f"{c['cnt_r_equal']:>6} {c['cnt_r_ours_less']:>6} {c['cnt_r_max_gain']:>5} | "
                  f"{c['cnt_p_min']:>+4d}..{c['cnt_p_max']:<+4d} | "
                  f"{c['best_f_max_abs_delta']:>13.5f}")
        print("   sumR!= / sumP!=: cells where the totals differ; (thin): of those, cells where "
              "the other peer's\n   sumP equals segbench's (this peer's thinning differs). "
              "cntR >, =, <: segbench's matched\n   ground-truth pixels against the peer's, on "
              "the cells where sumP agrees (segbench's matching\n   is exact; the peers' CSA "
              "graph is randomly sparsified, so < would be a fault); max+: the\n   largest "
              "gain; cntP range: segbench minus peer on those cells.")
        for name in names:
            c = checks[name]
            if c["sum_p_differ"]:
                print(f"   {name}: sumP differs at {c['sum_p_differ']} cell(s) "
                      f"({c['sum_p_differ_peer_more']} with more pixels kept by {name}); "
                      f"cntR below segbench's there: {c['cnt_r_less_where_sum_p_differs']} "
                      f"cell(s), not counted above")
        if LAYOUTS[layout]["annotators"] > 1 and any(checks[n]["cnt_p_min"] < 0 for n in names):
            print("   cntP below a peer's with several annotators: a detected pixel counts if it "
                  "matches ANY annotator,\n   and which of several equally cheap optimal "
                  "matchings each annotator gets moves that union;\n   segbench's matcher, "
                  "repaired from threshold to threshold, lands on optima that overlap more\n"
                  "   across annotators than the peers' random choice (its cntR is still >= "
                  "theirs).")
        if any(checks[n]["sum_p_differ_peer_more"] for n in names if n == "pyEdgeEval"):
            print("   pyEdgeEval's binary_thin stops as soon as its first sub-iteration "
                  "changes nothing, keeping\n   pixels MATLAB's bwmorph(.., 'thin', Inf) "
                  "removes (edgeval and segbench agree with MATLAB).")
    return {"summary": table, "checks": checks}


def print_speed(manifest: dict, ours_runs: list[dict], ours_one: list[dict],
                peers: dict) -> dict:
    n = len(manifest["ids"])
    h, w = manifest["shape"]
    cpu_runs = [r["cpu_s"] for r in ours_runs]
    ours_cpu = statistics.median(cpu_runs)
    ours_per = ours_cpu / n
    one = statistics.median(r["cpu_s"] for r in ours_one) if ours_one else None
    slope = (ours_cpu - one) / (n - 1) if one is not None and n > 1 else None
    print()
    print(f"== speed, NYUD-like: {n} images {w}x{h}, {NTHRESH} thresholds, tolerance "
          f"{manifest['max_dist']}, NMS off, one worker, one thread, thread pools pinned to 1")
    print("   CPU seconds (user + sys of the child process, getrusage(RUSAGE_CHILDREN))")
    hdr = (f"   {'':<11} {'process/img':>11} {'eval/img':>9} {'median img':>10} "
           f"{'peer/segbench':>13}   {'654 images (extrapolated)':>25}")
    print(hdr)
    print(f"   {'segbench':<11} {ours_per:>11.3f} {'-':>9} {'-':>10} {'1.0x':>13}   "
          f"{ours_per * NYUD_TEST_IMAGES / 60:>18.1f} CPU-min")
    out = {"segbench": {"cpu_s_runs": cpu_runs, "cpu_s": ours_cpu, "per_image": ours_per,
                        "one_image_cpu_s": one, "slope_cpu_s": slope,
                        "extrapolated_654_cpu_s": ours_per * NYUD_TEST_IMAGES}}
    for name, peer in peers.items():
        if peer is None:
            continue
        per = peer["process_cpu_s"] / n
        evals = [im["cpu_s"] for im in peer["images"]]
        ratio = per / ours_per
        print(f"   {name:<11} {per:>11.2f} {np.mean(evals):>9.2f} "
              f"{statistics.median(evals):>10.2f} {ratio:>12.1f}x   "
              f"{per * NYUD_TEST_IMAGES / 3600:>18.2f} CPU-h")
        out[name] = {"process_cpu_s": peer["process_cpu_s"], "per_image": per,
                     "eval_cpu_s": evals, "eval_mean": float(np.mean(evals)),
                     "eval_median": statistics.median(evals), "ratio_over_segbench": ratio,
                     "ratio_eval_over_segbench": float(np.mean(evals)) / ours_per,
                     "extrapolated_654_cpu_s": per * NYUD_TEST_IMAGES}
    print(f"   process/img: the whole command's CPU / {n} (segbench: the median of "
          f"{len(cpu_runs)} run(s), {', '.join(f'{c:.2f}' for c in cpu_runs)} CPU-s, after "
          "an untimed warm-up run;\n   peers: one run each, their driver process with "
          "imports). eval/img: the peer's read + evaluate per image alone\n   "
          "(time.process_time in its process), mean and median over the images.")
    if slope is not None:
        fit = one + slope * (NYUD_TEST_IMAGES - 1)
        print(f"   segbench on 1 image: {one:.2f} CPU-s (startup included); the line through "
              f"it and the {n}-image run: {slope:.3f} CPU-s per\n   further image, "
              f"{fit / 60:.1f} CPU-min for 654 images (extrapolated); the startup is paid "
              "once per command.")
        out["segbench"]["extrapolated_654_fit_cpu_s"] = fit
    print("   654 images: NYUDv2's test split; every figure in that column is the per-image "
          "figure times 654, extrapolated,\n   not measured (real maps and ground truth "
          "differ from these synthetic ones).")
    return out


# --------------------------------------------------------------------------- modes


def environment(peers: dict) -> dict:
    import segbench
    env = {"python": platform.python_version(), "numpy": np.__version__,
           "machine": platform.machine(), "cpus": os.cpu_count(),
           "segbench": getattr(segbench, "__version__", "?")}
    try:
        import numba
        env["numba"] = numba.__version__
    except ImportError:
        pass
    for name, p in peers.items():
        if p:
            env[name] = {"version": p["version"], "numpy": p["numpy_version"]}
    return env


def mode_benchmark(args) -> dict:
    work = Path(tempfile.mkdtemp(prefix="segbench-edge-"))
    try:
        return _benchmark(args, work)
    finally:
        if args.keep:
            print(f"\nkept the data and runs in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _benchmark(args, work: Path) -> dict:
    png_shape = tuple(LAYOUTS["biped"]["shape"]) if args.full_size else \
        (LAYOUTS["biped"]["shape"][0] // 2, LAYOUTS["biped"]["shape"][1] // 2)
    plan = {"nyud": (args.n, None), "biped": (args.n_png, png_shape),
            "multicue": (args.n_png, png_shape)}
    print("segbench on the edge-detection datasets' layouts (synthetic data from "
          "segbench.datasets.make_synthetic_dataset),\nnext to pyEdgeEval and edgeval "
          f"(exact CSA path); {NTHRESH} thresholds, thinning on, NMS off on both sides, "
          f"peers seeded ({PEER_SEED})")
    manifests = {}
    for lay, (n, shape) in plan.items():
        if n > 0:
            manifests[lay] = write_layout(work / "data", lay, n, shape=shape)
            log(f"wrote {lay}: {manifests[lay]['generator']}")
    skip = args.skip_peers
    if not skip and (missing := peers_missing()):
        print(f"  peers not installed: {', '.join(missing)}; running segbench only "
              "(see /tmp/research/peers.md for their environments)")
        skip = True
    if not skip:
        convert_png_ground_truth(manifests)

    # warm-up: the first command may compile or load Numba's cache; not timed
    warm = run_segbench(manifests["nyud"] if "nyud" in manifests else
                        next(iter(manifests.values())), work / "runs" / "warm",
                        read_counts=False)
    log(f"segbench warm-up: {warm['cpu_s']:.2f} CPU-s (not counted)")
    result = {"mode": "benchmark", "settings": {
        "nthresh": NTHRESH, "thin": THIN, "nms": None, "peer_seed": PEER_SEED,
        "repeat": args.repeat, "layouts": {k: {"n": len(m["ids"]), "shape": m["shape"],
                                               "max_dist": m["max_dist"],
                                               "generator": m["generator"]}
                                           for k, m in manifests.items()}},
        "layouts": {}}
    all_peers = {}
    for lay, m in manifests.items():
        ours = run_segbench(m, work / "runs" / lay)
        peers = {name: (None if skip else run_peer(name, m, work)) for name in PEERS}
        all_peers.update({k: v for k, v in peers.items() if v})
        table = print_parity(lay, m, ours, peers)
        result["layouts"][lay] = {"manifest": {k: m[k] for k in ("generator", "ids", "kinds",
                                                                 "max_dist", "preset",
                                                                 "shape", "files")},
                                  "segbench": ours, **table,
                                  "peers": {k: v for k, v in peers.items() if v}}
        if lay == "nyud":
            runs, ones = [], []
            for k in range(args.repeat):
                runs.append(run_segbench(m, work / "runs" / f"speed{k}", read_counts=False))
                if len(m["ids"]) > 1:
                    ones.append(run_segbench(m, work / "runs" / f"one{k}", ids=m["ids"][:1],
                                             read_counts=False))
            result["speed"] = print_speed(m, runs, ones, peers)
    result["environment"] = environment(all_peers)
    return result


def _compact_json(obj, indent: int = 1) -> str:
    """JSON with lists of numbers on one line (the count arrays stay readable)."""
    def enc(o, level):
        pad, inner = " " * (indent * level), " " * (indent * (level + 1))
        if isinstance(o, dict):
            if not o:
                return "{}"
            return "{\n" + ",\n".join(f"{inner}{json.dumps(k)}: {enc(v, level + 1)}"
                                      for k, v in o.items()) + f"\n{pad}}}"
        if isinstance(o, (list, tuple)):
            if all(isinstance(x, (int, float, str)) or x is None for x in o):
                return json.dumps(list(o))
            return "[\n" + ",\n".join(inner + enc(x, level + 1) for x in o) + f"\n{pad}]"
        return json.dumps(o)
    return enc(obj, 0) + "\n"


def mode_figures(args) -> dict:
    """The small set through both peers, as the test's reference."""
    if missing := peers_missing():
        sys.exit(f"--write-figures needs both peers: missing {', '.join(missing)}")
    work = Path(tempfile.mkdtemp(prefix="segbench-edge-fig-"))
    try:
        manifests = make_parity_set(work / "data")
        convert_png_ground_truth(manifests)
        fig = {
            "about": "Per-image counts of pyEdgeEval and edgeval (exact CSA path) on the small "
                     "synthetic set of benchmarks/edge_datasets.py:make_parity_set, in each "
                     "dataset's layout; the reference of tests/test_edge_layouts_parity.py. "
                     "Regenerate: python benchmarks/edge_datasets.py --write-figures "
                     "tests/peer_figures/edge_layouts.json",
            "generator": {
                "function": "benchmarks/edge_datasets.py:make_parity_set(root)",
                "set": {"n": PARITY_SET["n"], "shape": list(PARITY_SET["shape"])},
                "prediction": "benchmarks/edge_datasets.py:soft_prediction(item.truth, i, "
                              "seed) -> uint8 PNG, kinds " + ", ".join(PRED_KINDS) + " in turn",
                "hashes": "content_hash(file): SHA-256 of the decoded pixels of a PNG, of "
                          "every Segmentation and Boundaries of a .mat (the files' bytes carry "
                          "a timestamp and zlib's output)",
            },
            "settings": {"nthresh": NTHRESH, "thin": THIN, "nms": None,
                         "peer_seed": PEER_SEED,
                         "peer_gt": "PNG layouts: one BSDS .mat an image, every annotator, "
                                    "Boundaries = cv2.imread(png, IMREAD_GRAYSCALE) > 0 "
                                    "(bool), made by _edge_peer_driver.py convert"},
            "peers": {}, "environment": {}, "layouts": {},
        }
        for lay, m in manifests.items():
            entry = {"generator": m["generator"], "prediction": m["prediction"],
                     "preset": m["preset"], "max_dist": m["max_dist"],
                     "gt_format": m["gt_format"],
                     "gt": Path(m["gt"]).relative_to(work / "data").as_posix(),
                     "pred": Path(m["pred"]).relative_to(work / "data").as_posix(),
                     "ids": m["ids"], "kinds": m["kinds"], "files": m["files"]}
            ours = run_segbench(m, work / "runs" / lay)
            peers = {name: run_peer(name, m, work) for name in PEERS}
            table = print_parity(lay, m, ours, peers)
            for name, p in peers.items():
                fig["peers"][name] = {"version": p["version"],
                                      "module_version": p["module_version"],
                                      "numpy": p["numpy_version"],
                                      "python": p["python"], "call": p["call"],
                                      "seed": PEER_SEED}
                entry[name] = {"overall": p["overall"],
                               "images": {im["iid"]: {k: im[k] for k in
                                                      ("cnt_r", "sum_r", "cnt_p", "sum_p")}
                                          for im in p["images"]}}
            entry["segbench_when_written"] = {"overall": ours["overall"],
                                              "checks": {k: {x: y for x, y in v.items()
                                                             if x != "images"}
                                                         for k, v in table["checks"].items()}}
            fig["layouts"][lay] = entry
        fig["environment"] = environment({n: {"version": v["version"],
                                              "numpy_version": v["numpy"]}
                                          for n, v in fig["peers"].items()})
        args.write_figures.parent.mkdir(parents=True, exist_ok=True)
        args.write_figures.write_text(_compact_json(fig))
        print(f"\nwrote {args.write_figures}")
        return fig
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=12,
                    help="NYUD-like images (560x425), parity and speed (default 12)")
    ap.add_argument("--n-png", type=int, default=3,
                    help="BIPED-like and Multicue-like images each (default 3; 0 skips them)")
    ap.add_argument("--full-size", action="store_true",
                    help="BIPED and Multicue at their 1280x720 (default: 640x360, the peers "
                         "take minutes an image at full size, Multicue with six annotators)")
    ap.add_argument("--repeat", type=int, default=5,
                    help="timed segbench runs of the speed layout; the median is reported "
                         "(default 5; the peers run once)")
    ap.add_argument("--skip-peers", action="store_true", help="run segbench only")
    ap.add_argument("--keep", action="store_true", help="keep the generated data and runs")
    ap.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    ap.add_argument("--write-figures", type=Path, metavar="FILE",
                    help="separate mode: the small deterministic set through both peers, "
                         f"written as the test's reference (e.g. {FIGURES.relative_to(REPO)})")
    args = ap.parse_args(argv)
    if args.n < 1 or args.n_png < 0 or args.repeat < 1:
        ap.error("--n and --repeat must be >= 1, --n-png >= 0")
    result = mode_figures(args) if args.write_figures else mode_benchmark(args)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    os.environ.update(_SINGLE_THREAD_ENV)
    sys.exit(main())
