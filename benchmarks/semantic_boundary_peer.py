"""segbench's semantic-boundary benchmark beside pyEdgeEval's SBD evaluation, on the same
synthetic SBD-like data: per-class ODS F from each one's counts, the count differences,
and the CPU-time ratio (ours / pyEdgeEval).

    python benchmarks/semantic_boundary_peer.py [--images 6] [--size 240x320] [--seed 1]
    python benchmarks/semantic_boundary_peer.py --write-figures tests/peer_figures/sbd.json

pyEdgeEval runs in ``benchmarks/.peer-venv`` (never imported here): for each image and
class its own per-sample function, ``pyEdgeEval.datasets.sbd_eval_single`` (what
``SBDEvaluator.evaluate_category`` maps over its samples), in one process, timed with
``time.process_time``. Its CSA matcher draws outlier edges from a clock-seeded global
generator; the driver reseeds it (``Random::reseed`` of its extension, through ctypes)
before every (image, class) call, so its counts are repeatable.

The data (:func:`make_sbd_set`): SBD's ``cls/<id>.mat`` (``GTcls``) and ``inst/<id>.mat``
(``GTinst``), which segbench reads; the same stored boundaries as pyEdgeEval's encoded
edge PNG (``edges/<id>.png``); the class regions for ``kill_internal`` as a **trainId**
PNG (``seg/<id>.png``: label - 1, background 255), because pyEdgeEval 0.2.8's SBD loader
selects ``seg == category - 1`` (``datasets/sbd.py`` L65): on the labelId PNG its own
converter writes, that is the previous class (background for class 1), a bug; on a
trainId map it is the class itself. Predictions ``pred/class_NNN/<id>.png`` keep clear of
a 5-pixel border, which pyEdgeEval always zeroes in predictions, so both score the same
maps at the full size.

First ``mask2edge`` beside pyEdgeEval's ``mask2bdry`` (cv2 and scipy paths) on random
label maps with void (expected: identical). Then two settings: ``pre-seal`` (kill
internal, skip absent classes, thinning, max-dist 0.02) and ``seal`` (neither, thinning,
0.02; no margin on either side). Expected: sumR equal; sumP differing by a few pixels
where pyEdgeEval's LUT thinning stops early (segbench's is MATLAB's ``bwmorph``, checked
against Octave); cntR/cntP within a few pixels (their CSA matcher samples outlier edges at
random, ours is exact); so per-class F within a few thousandths.
Measured (6 images of 240x320, seed 1): sumR equal everywhere; sumP differs on 272
(pre-seal) and 1900 (seal) of the 11,880 (image, class, threshold) cells (on the
parity set every such cell is one where pyEdgeEval's thinning stops early); |cntR
diff| at most 4 px; max |delta F| 3.7e-3 (pre-seal) and 3.0e-3 (seal); CPU-time ratio
0.068 and 0.084 (ours 4.0 and 12.1 s, pyEdgeEval 59 and 144 s). pyEdgeEval takes
minutes. SBD-sized timing: benchmarks/semantic_boundary_speed.py.

``--write-figures PATH`` records pyEdgeEval's per-image, per-class counts on the small set
``make_sbd_set(root, **PARITY_SET)`` under both settings, with the SHA-256 of every input
file: the reference of ``tests/test_sbd_parity.py`` (which needs no peer).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PEER = ROOT / "benchmarks" / ".peer-venv" / "bin" / "python"
COUNTS = ("cnt_r", "sum_r", "cnt_p", "sum_p")

#: The small set of tests/peer_figures/sbd.json: 4 images of 96x128, five classes
#: (1 aeroplane, 7 car, 12 dog, 15 person, 20 tvmonitor: bits of B, G and R of the
#: encoding), three of them in each image; the other 15 classes' maps are all zero.
PARITY_SET = {"n": 4, "shape": (96, 128), "classes": (1, 7, 12, 15, 20), "per_image": 3,
              "seed": 0}

#: The two settings, as segbench parameters and as pyEdgeEval's ``sbd_eval_single``
#: arguments. Neither crops a margin (SEAL's 5 px would shrink the diagonal, while
#: pyEdgeEval keeps the full size and zeroes the prediction's border).
SETTINGS = {
    "pre-seal": {
        "segbench": {"protocol": "sbd", "max_dist": 0.02, "thin": True,
                     "gt_edges": "stored", "kill_internal": True,
                     "skip_if_nonexistent": True, "margin": 0, "nthresh": 99},
        "pyEdgeEval": {"max_dist": 0.02, "thresholds": 99, "apply_thinning": True,
                       "apply_nms": False, "kill_internal": True,
                       "skip_if_nonexistent": True, "scale": 1.0, "num_classes": 20},
    },
    "seal": {
        "segbench": {"protocol": "sbd-seal", "max_dist": 0.02, "thin": True,
                     "gt_edges": "stored", "kill_internal": False,
                     "skip_if_nonexistent": False, "margin": 0, "nthresh": 99},
        "pyEdgeEval": {"max_dist": 0.02, "thresholds": 99, "apply_thinning": True,
                       "apply_nms": False, "kill_internal": False,
                       "skip_if_nonexistent": False, "scale": 1.0, "num_classes": 20},
    },
}

DRIVER = r"""
import ctypes, json, sys, time
cfg = json.load(open(sys.argv[1]))
out_stream, sys.stdout = sys.stdout, sys.stderr      # pyEdgeEval prints on import
import numpy as np
import pyEdgeEval
from pyEdgeEval.datasets import sbd_eval_single
lib = ctypes.CDLL(sys.modules["pyEdgeEval._lib.correspond_pixels"].__file__)
rand = ctypes.addressof(ctypes.c_char.in_dll(lib, "_ZN6Random4randE"))
reseed = lib._ZN6Random6reseedEm
reseed.argtypes, reseed.restype = [ctypes.c_void_p, ctypes.c_uint64], None
counts = {}
t0 = time.process_time()
for item in cfg["items"]:
    for cat in cfg["classes"]:
        if cfg["seed"]:
            reseed(rand, cfg["seed"])       # the CSA's outlier edges: repeatable
        r = sbd_eval_single(dict(
            edge_path=item["edge"], seg_path=item["seg"],
            pred_path=f"{cfg['pred']}/class_{cat:03d}/{item['iid']}.png",
            category=cat, **cfg["params"]))
        counts[f"{item['iid']}/{cat}"] = [np.asarray(a).astype(np.int64).tolist()
                                          for a in r]
cpu = time.process_time() - t0
early = {}
if cfg.get("flag_thinning"):
    # cells where binary_thin stops early: its own LUT sub-iterations, run until a
    # whole iteration changes nothing (MATLAB's bwmorph 'thin' Inf), give another map
    from PIL import Image
    from pyEdgeEval.common.multi_label import add_ignore_pixel
    from pyEdgeEval.common.utils import check_thresholds
    from pyEdgeEval.preprocess import binary_thin
    from pyEdgeEval.preprocess.thin.thin import (_thin_iter_1_lut, _thin_iter_2_lut,
                                                 binary_image_to_lut_indices)
    lut1, lut2 = _thin_iter_1_lut(), _thin_iter_2_lut()
    def converged(x):
        while True:
            y = lut2[binary_image_to_lut_indices(lut1[binary_image_to_lut_indices(x)])]
            if (y == x).all():
                return y
            x = y
    ths = check_thresholds(cfg["params"]["thresholds"])
    for item in cfg["items"]:
        for cat in cfg["classes"]:
            pred = np.array(Image.open(
                f"{cfg['pred']}/class_{cat:03d}/{item['iid']}.png")) / 255
            pred = add_ignore_pixel(pred.astype(float), border_px=5, ignore_id=0)
            flags = [j for j, t in enumerate(ths) if (pred >= t).any() and
                     (binary_thin(pred >= t) != converged(pred >= t)).any()]
            if flags:
                early[f"{item['iid']}/{cat}"] = flags
ods = {}
if cfg.get("summary"):
    from pyEdgeEval.common.multi_label.calculate_metrics import calculate_metrics
    ids = [item["iid"] for item in cfg["items"]]
    for cat in cfg["classes"]:
        cached = {i: [np.asarray(a, dtype=float) for a in counts[f"{i}/{cat}"]]
                  for i in ids}
        if sum(c[1][0] for c in cached.values()) == 0:
            continue                         # no ground truth in any image
        _, _, overall = calculate_metrics(eval_single=lambda s: cached[s["name"]],
                                          thresholds=cfg["params"]["thresholds"],
                                          samples=[{"name": i} for i in ids], nproc=1)
        ods[str(cat)] = {k: float(overall[k]) for k in
                         ("ODS_threshold", "ODS_recall", "ODS_precision", "ODS_f1")}
out_stream.write(json.dumps({"version": pyEdgeEval.__version__, "cpu": cpu,
                             "numpy": np.__version__,
                             "python": sys.version.split()[0],
                             "counts": counts, "ods": ods, "early_stop": early}))
"""


MASK2EDGE = r"""
import json, sys
import numpy as np
from pyEdgeEval.utils.distance_transforms import mask2bdry
labels = np.load(sys.argv[1])
out = {f"{r} {cv}": np.asarray(mask2bdry(labels == 1, (labels == 3).astype(np.uint8),
                                         radius=r, use_cv2=cv)).astype(bool).tolist()
       for r in (1, 2) for cv in (True, False)}
sys.__stdout__.write(json.dumps(out))
"""


def _check_mask2edge(tmp: Path) -> None:
    """segbench's mask2edge beside pyEdgeEval's mask2bdry (cv2 and scipy paths) on
    random label maps, class 1 against void 3."""
    from segbench.semantic_boundary import mask2edge
    rng = np.random.default_rng(0)
    worst = 0
    for k in range(4):
        labels = np.kron(rng.integers(0, 4, (8, 10)), np.ones((7, 7), int))
        np.save(tmp / "labels.npy", labels)
        proc = subprocess.run([str(PEER), "-c", MASK2EDGE, str(tmp / "labels.npy")],
                              cwd=tmp, capture_output=True, text=True)
        theirs = json.loads(proc.stdout.splitlines()[-1])
        for key, edge in theirs.items():
            ours = mask2edge(labels == 1, radius=int(key.split()[0]), ignore=labels == 3)
            worst = max(worst, int((ours != np.array(edge, bool)).sum()))
    print(f"mask2edge vs pyEdgeEval mask2bdry (radius 1, 2; cv2 and scipy; 4 random "
          f"label maps): {worst} pixels differ at most")


# -- the synthetic SBD-like set ---------------------------------------------------------

_MAT_HEADER = (b"MATLAB 5.0 MAT-file, written by segbench "
               b"benchmarks/semantic_boundary_peer.py")


def savemat_fixed(path: Path, mdict: dict) -> None:
    """``scipy.io.savemat`` (v5, uncompressed) with a fixed header text instead of
    scipy's ``Created on: <time>``, so the same content gives the same bytes."""
    import scipy.io
    buf = io.BytesIO()
    scipy.io.savemat(buf, mdict)
    data = bytearray(buf.getvalue())
    data[:116] = _MAT_HEADER.ljust(116, b" ")
    Path(path).write_bytes(bytes(data))


def _inner_boundary(mask: np.ndarray) -> np.ndarray:
    """The mask's pixels with a 4-neighbour outside it (SBD-like 1-px boundaries)."""
    from scipy.ndimage import binary_erosion
    return mask & ~binary_erosion(mask)


def _smooth_field(rng, shape, lo: float, hi: float) -> np.ndarray:
    """A smooth random field spanning [lo, hi] (edge strength along a boundary)."""
    from scipy.ndimage import gaussian_filter
    f = gaussian_filter(rng.random(shape), 6.0)
    return lo + (hi - lo) * (f - f.min()) / max(np.ptp(f), 1e-12)


def _clutter(rng, shape, noise: float) -> np.ndarray:
    """Background response: blurred Gaussian texture (blobs that survive thresholds
    up to about 0.5) plus uniform noise up to ``noise / 2``."""
    from scipy.ndimage import gaussian_filter
    t = gaussian_filter(rng.standard_normal(shape), 2.0)
    return np.clip(t / t.std() * 0.12 + 0.05, 0, None) + rng.random(shape) * noise / 2


def make_sbd_set(root, n: int = 4, shape=(96, 128), classes=tuple(range(1, 21)),
                 per_image: int = 3, seed: int = 0, raw_edges: bool = False,
                 noise: float = 0.35) -> list[str]:
    """Write a deterministic synthetic SBD-like set under ``root``; return its ids.

    Files (every one a function of the arguments alone: .mat headers carry no date):

    - ``cls/<id>.mat``: ``GTcls`` with ``Segmentation`` (uint8 labels 0..20),
      ``Boundaries`` (20x1 cell of sparse maps: each class's pixels with a 4-neighbour
      of another label) and ``CategoriesPresent``; ``inst/<id>.mat``: ``GTinst`` with
      ``Segmentation`` (instance indices), ``Boundaries`` (one per instance) and
      ``Categories``; ``val.txt``: the ids (SBD's ``benchmark_RELEASE/dataset`` layout);
    - ``edges/<id>.png``: the same 20 stored boundary maps in pyEdgeEval's RGB
      multi-label encoding (the ground truth pyEdgeEval reads);
    - ``edges_raw/<id>.png`` (``raw_edges``): the radius-2 bands of every class
      (segbench's ``class_edges``, pyEdgeEval's ``mask2bdry``), encoded likewise;
    - ``seg/<id>.png``: the class regions as trainIds (label - 1; background 255), for
      pyEdgeEval's ``kill_internal`` (see the module's docstring);
    - ``pred/class_NNN/<id>.png``: uint8 soft maps for every one of the 20 classes.

    ``per_image`` of ``classes`` are drawn as rectangles in each image (later ones may
    overlap earlier ones; in the first image the first rectangle is two instances side
    by side). A class in the image gets its boundaries shifted by up to 2 px, blurred,
    plus uniform noise up to ``noise`` and blobs inside its region (which
    ``kill_internal`` removes); a class of ``classes`` absent from the image gets the
    noise and a faint false rectangle; a class outside ``classes`` an all-zero map.
    Nothing is drawn within 5 px of the border.
    """
    import scipy.sparse
    from PIL import Image
    from scipy.ndimage import gaussian_filter

    from segbench.semantic_boundary import class_edges, encode_multilabel
    root = Path(root)
    rng = np.random.default_rng(seed)
    h, w = shape
    classes = tuple(int(c) for c in classes)
    subs = ["cls", "inst", "edges", "seg", "pred"] + (["edges_raw"] if raw_edges else [])
    for sub in subs:
        (root / sub).mkdir(parents=True, exist_ok=True)
    ids = []
    for i in range(n):
        iid = f"2008_{i:06d}"
        ids.append(iid)
        seg = np.zeros((h, w), np.uint8)
        inst = np.zeros((h, w), np.uint8)
        inst_cat = []
        present = rng.choice(classes, size=min(per_image, len(classes)), replace=False)
        for j, c in enumerate(present):
            r0, c0 = rng.integers(10, h // 2), rng.integers(10, w // 2)
            r1 = r0 + rng.integers(h // 6, h // 2 - 10)
            c1 = c0 + rng.integers(w // 6, w // 2 - 10)
            seg[r0:r1, c0:c1] = c
            if i == 0 and j == 0:           # two touching instances of one class
                mid = (c0 + c1) // 2
                inst_cat += [c, c]
                inst[r0:r1, c0:mid] = len(inst_cat) - 1
                inst[r0:r1, mid:c1] = len(inst_cat)
            else:
                inst_cat.append(c)
                inst[r0:r1, c0:c1] = len(inst_cat)
        inst[seg == 0] = 0
        edges = np.stack([_inner_boundary(seg == c) for c in range(1, 21)])
        cells = np.empty((20, 1), object)
        for c in range(20):
            cells[c, 0] = scipy.sparse.csc_matrix(edges[c].astype(float))
        cats = np.array(sorted(int(c) for c in np.unique(seg) if c), np.uint8)
        savemat_fixed(root / "cls" / f"{iid}.mat", {"GTcls": {
            "Segmentation": seg, "Boundaries": cells,
            "CategoriesPresent": cats.reshape(-1, 1)}})
        kept = [k for k in range(1, len(inst_cat) + 1) if (inst == k).any()]
        inst = np.searchsorted(np.array([0] + kept), inst).astype(np.uint8)  # 1..K
        icells = np.empty((len(kept), 1), object)
        for k in range(len(kept)):
            icells[k, 0] = scipy.sparse.csc_matrix(
                _inner_boundary(inst == k + 1).astype(float))
        savemat_fixed(root / "inst" / f"{iid}.mat", {"GTinst": {
            "Segmentation": inst, "Boundaries": icells,
            "Categories": np.array([inst_cat[k - 1] for k in kept],
                                   np.uint8).reshape(-1, 1)}})
        Image.fromarray(encode_multilabel(edges)).save(root / "edges" / f"{iid}.png")
        if raw_edges:
            raw = np.stack([class_edges(seg, c, radius=2) for c in range(1, 21)])
            Image.fromarray(encode_multilabel(raw)).save(root / "edges_raw" / f"{iid}.png")
        Image.fromarray(np.where(seg > 0, seg.astype(np.int64) - 1, 255).astype(
            np.uint8)).save(root / "seg" / f"{iid}.png")
        for c in range(1, 21):
            if c not in classes:
                pb = np.zeros((h, w))
            elif c in present:
                shift = np.roll(edges[c - 1], rng.integers(-2, 3), axis=rng.integers(0, 2))
                pb = gaussian_filter(shift * _smooth_field(rng, shape, 0.1, 1.3), 1.2) \
                    * 2.5 + _clutter(rng, shape, noise)
                inner = (seg == c) & (rng.random((h, w)) < 0.01)     # clutter inside
                pb = pb + gaussian_filter(inner.astype(float), 1.0) * 3
            else:                                                     # a false rectangle
                fake = np.zeros((h, w), bool)
                r0, c0 = rng.integers(10, h // 2), rng.integers(10, w // 2)
                fake[r0:r0 + h // 4, c0:c0 + w // 4] = True
                pb = gaussian_filter(_inner_boundary(fake) * _smooth_field(
                    rng, shape, 0.0, 1.0), 1.2) * 1.5 + _clutter(rng, shape, noise)
            pb = np.clip(pb, 0, 1)
            pb[:5], pb[-5:], pb[:, :5], pb[:, -5:] = 0, 0, 0, 0
            folder = root / "pred" / f"class_{c:03d}"
            folder.mkdir(exist_ok=True)
            Image.fromarray(np.round(pb * 255).astype(np.uint8)).save(
                folder / f"{iid}.png")
    (root / "val.txt").write_text("".join(f"{i}\n" for i in ids))
    return ids


def file_hashes(root) -> dict:
    """SHA-256 of every file under ``root``, by path relative to it (sorted)."""
    root = Path(root)
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


# -- running both -----------------------------------------------------------------------


def run_peer(root: Path, ids, classes, params: dict, *, seed: int = 1,
             summary: bool = False, flag_thinning: bool = False,
             edge_dir: str = "edges", seg_dir: str = "seg") -> dict:
    """pyEdgeEval's counts (``{"<id>/<class>": [cntR, sumR, cntP, sumP]}``), its CPU
    seconds, (``summary``) its own per-class ODS and (``flag_thinning``) the
    thresholds at which its thinning stops early (``{"<id>/<class>": [index, ...]}``),
    from its venv."""
    cfg = {"items": [{"iid": i, "edge": str(root / edge_dir / f"{i}.png"),
                      "seg": str(root / seg_dir / f"{i}.png")} for i in ids],
           "pred": str(root / "pred"), "classes": [int(c) for c in classes],
           "params": params, "seed": seed, "summary": summary,
           "flag_thinning": flag_thinning}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(cfg, f)
    try:
        proc = subprocess.run([str(PEER), "-c", DRIVER, f.name], cwd=root,
                              capture_output=True, text=True,
                              env={**os.environ, "OMP_NUM_THREADS": "1",
                                   "OPENBLAS_NUM_THREADS": "1"})
    finally:
        os.unlink(f.name)
    if proc.returncode:
        raise RuntimeError(f"pyEdgeEval driver failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def run_segbench(root: Path, params: dict):
    """segbench's result on the set (one worker, one thread) and its CPU seconds."""
    import segbench
    from segbench.semantic_boundary import class_folder_predictions, open_sbd
    ds = open_sbd(root, "val")
    pred = class_folder_predictions(root / "pred", ds)
    t0 = time.process_time()
    res = segbench.evaluate("semantic_boundary", gt=ds, pred=pred, progress=False,
                            workers=1, threads=1, **params)
    return res, time.process_time() - t0


def _ods(counts_by_class, ids) -> np.ndarray:
    """Per-class ODS F by segbench's summary of (image -> class -> 4 x T) counts."""
    from segbench.primitives import BoundaryCounts, default_thresholds, summarize_boundary
    ths = default_thresholds(99)
    out = np.full(20, np.nan)
    for c in range(20):
        recs = [BoundaryCounts(ths, *(np.asarray(v, np.int64)
                                      for v in counts_by_class[i][c])) for i in ids]
        if sum(r.sum_r[0] for r in recs):
            out[c] = summarize_boundary(recs, ids).ods[3]
    return out


def write_figures(path: Path, seed: int = 1) -> None:
    """pyEdgeEval's counts on ``make_sbd_set(root, **PARITY_SET)`` under both settings,
    with the inputs' hashes: the reference of tests/test_sbd_parity.py."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ids = make_sbd_set(root, **PARITY_SET)
        hashes = file_hashes(root)
        protocols = {}
        peer = None
        for name, setting in SETTINGS.items():
            peer = run_peer(root, ids, range(1, 21), setting["pyEdgeEval"], seed=seed,
                            summary=True, flag_thinning=True)
            active = sorted({int(k.split("/")[1]) for k, v in peer["counts"].items()
                             if np.any(v)})
            zero = [c for c in range(1, 21) if c not in active]
            protocols[name] = {
                "segbench": setting["segbench"],
                "pyEdgeEval": setting["pyEdgeEval"],
                "zero_classes": zero,
                "counts": {i: {str(c): peer["counts"][f"{i}/{c}"] for c in active}
                           for i in ids},
                "ods": peer["ods"],
                "thinning_early_stop": {
                    i: {str(c): peer["early_stop"].get(f"{i}/{c}", []) for c in active}
                    for i in ids},
            }
        # pyEdgeEval's kill_internal bug measured: the same pre-SEAL run with the class
        # regions as labelIds (what its converter writes), where seg == category - 1
        # selects the previous class
        import scipy.io
        from PIL import Image
        (root / "seg_labelids").mkdir()
        for i in ids:
            seg = scipy.io.loadmat(root / "cls" / f"{i}.mat")["GTcls"][0, 0]["Segmentation"]
            Image.fromarray(seg.astype(np.uint8)).save(root / "seg_labelids" / f"{i}.png")
        bug = run_peer(root, ids, PARITY_SET["classes"], SETTINGS["pre-seal"]["pyEdgeEval"],
                       seed=seed, seg_dir="seg_labelids")
        right = protocols["pre-seal"]["counts"]
        cells = [(np.asarray(right[k.split("/")[0]][k.split("/")[1]])[3], np.asarray(v)[3])
                 for k, v in bug["counts"].items()]
        bug_note = (
            f"Measured: the same pre-SEAL run with labelId regions gives another sumP on "
            f"{sum(int((a != b).sum()) for a, b in cells)} of "
            f"{sum(a.size for a, _ in cells)} (image, class, threshold) cells of the "
            f"{len(PARITY_SET['classes'])} classes (class 1 loses most of its pixels: its "
            "'region' is the background).")
    set_call = ", ".join(f"{k}={v!r}" for k, v in PARITY_SET.items())
    doc = {
        "about": "pyEdgeEval 0.2.8's per-image, per-class counts (cntR, sumR, cntP, sumP "
                 "at each of 99 thresholds) on a small synthetic SBD-like set, under the "
                 "pre-SEAL and SEAL-style settings, and its own per-class ODS: the "
                 "reference of tests/test_sbd_parity.py. Regenerate: python "
                 "benchmarks/semantic_boundary_peer.py --write-figures "
                 "tests/peer_figures/sbd.json",
        "generator": {
            "function": "benchmarks/semantic_boundary_peer.py:make_sbd_set",
            "call": f"make_sbd_set(root, {set_call})",
            "kwargs": {k: list(v) if isinstance(v, tuple) else v
                       for k, v in PARITY_SET.items()},
            "ids": ids,
            "hashes": "SHA-256 of each file's bytes (the .mat headers are written "
                      "without scipy's date; PNGs by Pillow "
                      f"{__import__('PIL').__version__}, .mat by scipy "
                      f"{__import__('scipy').__version__})",
        },
        "files": hashes,
        "peer": {
            "name": "pyEdgeEval", "version": peer["version"], "numpy": peer["numpy"],
            "python": peer["python"],
            "call": "pyEdgeEval.datasets.sbd_eval_single(dict(edge_path=edges/<id>.png, "
                    "seg_path=seg/<id>.png, pred_path=pred/class_NNN/<id>.png, "
                    "category=NNN, **settings)), one process; ODS: "
                    "pyEdgeEval.common.multi_label.calculate_metrics over the 4 images "
                    "(its 101-point interpolation)",
            "seed": seed,
            "seeding": "before every (image, class) call: Random::reseed(&Random::rand, "
                       "seed) of pyEdgeEval._lib.correspond_pixels through ctypes "
                       "(_ZN6Random6reseedEm, _ZN6Random4randE); upstream seeds it from "
                       "the clock",
            "machine": f"{platform.system()} {platform.machine()}",
        },
        "notes": [
            "Ground truth: pyEdgeEval reads the stored GTcls.Boundaries encoded as its "
            "RGB multi-label PNG (edges/<id>.png), segbench the cls/<id>.mat itself "
            "(gt_edges 'stored'): the same maps.",
            "kill_internal: pyEdgeEval 0.2.8's SBD loader takes the class region as "
            "seg == category - 1 (datasets/sbd.py L65). On the labelId PNG its own "
            "converter writes (_labelIds.png, labels 1..20) that is the previous class "
            "(background for class 1), a bug that would make its pre-SEAL counts "
            "incomparable. Here seg/<id>.png holds trainIds (label - 1, background "
            "255), on which category - 1 is the class itself: the setting where "
            "pyEdgeEval is right, and what segbench does (its region is the class's "
            "own pixels). " + bug_note,
            "Margin: none on either side (segbench margin 0; pyEdgeEval zeroes a 5 px "
            "prediction border, where every map here is 0 anyway).",
            "thinning_early_stop: per image and class, the threshold indices (0-based) "
            "at which pyEdgeEval's binary_thin differs from its own two LUT "
            "sub-iterations repeated until a whole iteration changes nothing (MATLAB's "
            "bwmorph(.., 'thin', Inf), segbench's thin): binary_thin stops as soon as "
            "sub-iteration 1 changes nothing, without trying sub-iteration 2. Computed "
            "on the thresholded map before kill_internal, for every map.",
            "The 15 classes outside the generator's classes have all-zero maps and are "
            "absent from every image: pyEdgeEval's counts for them are all zero "
            "(zero_classes) and are not stored.",
            "sumP differs where pyEdgeEval's LUT thinning (binary_thin) stops after a "
            "first sub-iteration that changes nothing, keeping pixels MATLAB's bwmorph "
            "(segbench's) removes; cntR/cntP differ because its CSA graph has randomly "
            "sampled outlier edges (segbench's matcher is exact).",
        ],
        "protocols": protocols,
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, indent=1)
    # one line per list of numbers (a count row, a list of threshold indices)
    text = re.sub(r"\[\s*(-?[\d.e+-]+(?:,\s*-?[\d.e+-]+)*)\s*\]",
                  lambda m: "[" + re.sub(r"\s+", "", m.group(1)) + "]", text)
    path.write_text(text + "\n")
    print(f"wrote {path}: {len(hashes)} input files, {len(ids)} images, "
          + ", ".join(f"{k}: classes {sorted(int(c) for c in v['ods'])} scored"
                      for k, v in protocols.items()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=6)
    ap.add_argument("--size", default="240x320", help="HxW")
    ap.add_argument("--seed", type=int, default=1,
                    help="reseed pyEdgeEval's matcher before each (image, class) call "
                         "(0: leave it clock-seeded, as upstream)")
    ap.add_argument("--write-figures", metavar="JSON",
                    help="record pyEdgeEval's counts on the small parity set and stop")
    a = ap.parse_args()
    if not PEER.is_file():
        print(f"no peer environment at {PEER}; nothing to compare", file=sys.stderr)
        return 1
    if a.write_figures:
        write_figures(Path(a.write_figures), seed=a.seed)
        return 0
    from segbench.semantic_boundary import evaluate_classes
    shape = tuple(int(v) for v in a.size.lower().split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _check_mask2edge(root)
        ids = make_sbd_set(root, a.images, shape)
        evaluate_classes(np.zeros((1, 8, 8)), np.eye(8, dtype=bool)[None])   # compile
        for name, setting in SETTINGS.items():
            res, ours_cpu = run_segbench(root, setting["segbench"])
            ours = {i: [[getattr(r, k)[c] for k in COUNTS] for c in range(20)]
                    for i, r in zip(ids, res.records)}
            peer = run_peer(root, ids, range(1, 21), setting["pyEdgeEval"], seed=a.seed)
            theirs = {i: [peer["counts"][f"{i}/{c + 1}"] for c in range(20)] for i in ids}
            d = np.array([[np.subtract(ours[i][c], theirs[i][c]) for c in range(20)]
                          for i in ids])                        # (N, 20, 4, T)
            f_ours, f_theirs = _ods(ours, ids), _ods(theirs, ids)
            delta = f_ours - f_theirs
            print(f"{name}: {a.images} images {shape[0]}x{shape[1]}, 20 classes, "
                  f"pyEdgeEval {peer['version']} (seed {a.seed})")
            print(f"  sumR differs in {int(np.count_nonzero(d[:, :, 1]))} entries, sumP "
                  f"in {int(np.count_nonzero(d[:, :, 3]))}; |cntR diff| max "
                  f"{int(np.abs(d[:, :, 0]).max())}, |cntP diff| max "
                  f"{int(np.abs(d[:, :, 2]).max())} px")
            print("  class  ODS F ours  ODS F pyEdgeEval   delta")
            for c in np.flatnonzero(~np.isnan(f_ours)):
                print(f"  {c + 1:5d}  {f_ours[c]:.5f}     {f_theirs[c]:.5f}         "
                      f"{delta[c]:+.5f}")
            print(f"  max |delta F| {np.nanmax(np.abs(delta)):.2e}; MF-ODS ours "
                  f"{res.metrics['MF_ODS']:.5f}")
            print(f"  CPU seconds: ours {ours_cpu:.2f}, pyEdgeEval {peer['cpu']:.2f}, "
                  f"ratio {ours_cpu / peer['cpu']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
