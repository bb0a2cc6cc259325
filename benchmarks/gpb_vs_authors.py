"""Our gPb-owt-ucm against the BSDS500 authors' released ucm2, image by image.

Three steps, each resumable (outputs already in ``--out`` are reused):

1. ``segbench detect --detector gpb-owt-ucm`` on the split's photographs into
   ``OUT/ours`` (the command resumes by itself: maps already written are kept);
2. ``segbench boundary`` of our maps (``OUT/run_ours``) and of the authors' ucm2
   (``OUT/run_authors``; their folder holds ``<iid>.mat`` with the variable ``ucm2``,
   which ``--pred`` reads as a ucm2 map); each run resumes from its own records;
3. a table: overall ODS / OIS / AP of both; per image |delta best F| and |delta AP|
   (max, median, count above ``--tol``); the Pearson correlation of the two full ucm2
   arrays (min, median); the recall (and precision, number of predicted boundary
   pixels) of the overall PR curve at its highest thresholds (the coarsest levels of
   the hierarchies). Per-image AP is not a column of ``per_item_boundary.csv``
   (which holds each image's best threshold, R, P, F); it is computed here from each
   image's PR curve, the official ``<iid>_ev1.txt`` of the run folder (threshold,
   cntR, sumR, cntP, sumP), with the same AP as the dataset's
   (:func:`segbench.primitives.average_precision`, ``collect_eval_bdry.m``).

Writes ``OUT/per_image.csv`` (one row per image) and ``OUT/summary.json``.

    python benchmarks/gpb_vs_authors.py --split test --out /tmp/gpb200 --workers 2
    python benchmarks/gpb_vs_authors.py --split val --ids 101085,101087 --out /tmp/g
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
SEGBENCH = Path(sys.executable).with_name("segbench")
TOP_LEVELS = (0.5, 0.9, 0.95)


def _ids_arg(value: str | None, images: Path) -> list[str]:
    if value is None:
        return sorted(p.stem for p in images.iterdir()
                      if p.suffix.lower() in (".jpg", ".png", ".bmp", ".tif"))
    p = Path(value)
    if p.is_file():
        text = p.read_text().replace(",", " ").split()
    else:
        text = value.replace(",", " ").split()
    return sorted(dict.fromkeys(text))


def _run(cmd: list[str], log: Path) -> None:
    print("$", " ".join(cmd), flush=True)
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode:
        sys.exit(f"command failed (rc {r.returncode}), see {log}")


def _ev1(path: Path) -> np.ndarray:
    """(T, 5): threshold, cntR, sumR, cntP, sumP of one image."""
    return np.loadtxt(path, ndmin=2)


def _curve(ev: np.ndarray):
    from segbench.primitives import bsr_ratio

    r = bsr_ratio(ev[:, 1], ev[:, 2])
    p = bsr_ratio(ev[:, 3], ev[:, 4])
    return ev[:, 0], r, p


def _image_ap(ev: np.ndarray) -> float:
    from segbench.primitives import average_precision

    _, r, p = _curve(ev)
    return float(average_precision(r, p))


def _read_ucm2(path: Path) -> np.ndarray:
    import scipy.io

    return np.asarray(scipy.io.loadmat(path, variable_names=["ucm2"])["ucm2"],
                      dtype=np.float64)


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    a = a.ravel() - a.mean()
    b = b.ravel() - b.mean()
    den = np.sqrt((a * a).sum() * (b * b).sum())
    return float((a * b).sum() / den) if den > 0 else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="test", choices=("train", "val", "test"))
    ap.add_argument("--ids", default=None,
                    help="comma-separated ids or a file of ids (default: every image "
                         "of the split)")
    ap.add_argument("--out", required=True, type=Path,
                    help="output folder (reused: maps and run records already there "
                         "are kept)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--data", type=Path, default=DATA,
                    help="the shared data root (bsds500/, bsds500-gpb-owt-ucm/)")
    ap.add_argument("--tol", type=float, default=0.002,
                    help="per-image |delta| counted above this (default 0.002)")
    ap.add_argument("--top", type=int, default=6,
                    help="highest thresholds of the overall curve to print (default 6)")
    ap.add_argument("--worst", type=int, default=10,
                    help="images listed by |delta AP| (default 10)")
    args = ap.parse_args(argv)

    images = args.data / "bsds500" / "images" / args.split
    gt = args.data / "bsds500" / "groundTruth" / args.split
    authors = args.data / "bsds500-gpb-owt-ucm" / args.split
    for p in (images, gt, authors):
        if not p.is_dir():
            sys.exit(f"missing folder {p}")
    ids = _ids_arg(args.ids, images)
    ids = [i for i in ids if (authors / f"{i}.mat").is_file()]
    if not ids:
        sys.exit("no image with an authors' ucm2")
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if ROOT in out.parents or out == ROOT:
        sys.exit("put --out outside the repository")
    idfile = out / "ids.txt"
    idfile.write_text("\n".join(ids) + "\n")
    log = out / "commands.log"
    seg = str(SEGBENCH)

    # 1. our maps (detect resumes by itself: written maps are reused)
    ours = out / "ours"
    missing = [i for i in ids if not (ours / f"{i}.mat").is_file()]
    if missing:
        _run([seg, "detect", "--detector", "gpb-owt-ucm", "--images", str(images),
              "--out", str(ours), "--ids", str(idfile), "--workers", str(args.workers),
              "--quiet"], log)
    else:
        print(f"ours: all {len(ids)} maps present in {ours}, detect skipped")

    # 2. both scored by the same benchmark (each run resumes from its records)
    runs = {"ours": (ours, out / "run_ours"), "authors": (authors, out / "run_authors")}
    for name, (pred, run) in runs.items():
        _run([seg, "boundary", "--gt", str(gt), "--pred", str(pred), "--ids",
              str(idfile), "--out", str(run), "--name", f"gpb-owt-ucm-{name}",
              "--workers", str(args.workers), "--no-plot", "--quiet"], log)

    # 3. figures
    res, per, evs = {}, {}, {}
    for name, (_, run) in runs.items():
        res[name] = json.loads((run / "result_boundary.json").read_text())
        with open(run / "per_item_boundary.csv") as f:
            per[name] = {row["id"]: row for row in csv.DictReader(f)}
        evs[name] = {i: _ev1(run / f"{i}_ev1.txt") for i in ids}

    rows = []
    for i in ids:
        fa, fb = float(per["ours"][i]["f"]), float(per["authors"][i]["f"])
        aa, ab = _image_ap(evs["ours"][i]), _image_ap(evs["authors"][i])
        ua, ub = _read_ucm2(ours / f"{i}.mat"), _read_ucm2(authors / f"{i}.mat")
        corr = _pearson(ua, ub)
        d = np.abs(ua - ub)
        row = {"id": i, "F_ours": fa, "F_authors": fb, "dF": fa - fb,
               "AP_ours": aa, "AP_authors": ab, "dAP": aa - ab, "corr": corr,
               "max_abs_diff": float(d.max()), "cells_diff_1e-6": int((d > 1e-6).sum()),
               "finest_partition_equal": bool(np.array_equal(ua > 0, ub > 0)),
               "top_ours": float(ua.max()), "top_authors": float(ub.max())}
        # the coarse levels: boundary pixels (ucm2[2::2, 2::2] >= t) in one map only
        ba, bb = ua[2::2, 2::2], ub[2::2, 2::2]
        for t in TOP_LEVELS:
            row[f"px_xor_t{t:g}"] = int(((ba >= t) != (bb >= t)).sum())
        rows.append(row)
    with open(out / "per_image.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

    dF = np.abs([r["dF"] for r in rows])
    dAP = np.abs([r["dAP"] for r in rows])
    corr = np.array([r["corr"] for r in rows])
    m = {k: res[k]["metrics"] for k in runs}
    print()
    print(f"{args.split}: {len(ids)} images; ours {ours}, authors {authors}")
    print(f"{'':24s}{'ours':>10s}{'authors':>10s}{'delta':>10s}")
    for key in ("ODS", "OIS", "AP", "R50"):
        a, b = m["ours"].get(key), m["authors"].get(key)
        if a is None or b is None:
            continue
        print(f"{key:24s}{a:10.4f}{b:10.4f}{a - b:+10.4f}")
    print()
    tol = args.tol
    print(f"per image (n={len(ids)})       max    median    mean   count>{tol:g}")
    print(f"|delta best F|          {dF.max():8.4f}  {np.median(dF):8.4f}  "
          f"{dF.mean():7.4f}  {int((dF > tol).sum()):5d}")
    print(f"|delta AP|              {dAP.max():8.4f}  {np.median(dAP):8.4f}  "
          f"{dAP.mean():7.4f}  {int((dAP > tol).sum()):5d}")
    print(f"ucm2 Pearson corr       min {corr.min():.6f}  median {np.median(corr):.6f}  "
          f"count<0.999: {int((corr < 0.999).sum())}  count>=0.999999: "
          f"{int((corr >= 0.999999).sum())}")
    fine = sum(r["finest_partition_equal"] for r in rows)
    same = sum(r["max_abs_diff"] <= 1e-6 for r in rows)
    print(f"ucm2 max |diff| <= 1e-6: {same} images; finest partition (ucm2 > 0) "
          f"equal: {fine}; max |diff| over images {max(r['max_abs_diff'] for r in rows):.3g}")
    print(f"highest level |ours - authors| max "
          f"{max(abs(r['top_ours'] - r['top_authors']) for r in rows):.2g}")
    for t in TOP_LEVELS:
        xs = [r[f"px_xor_t{t:g}"] for r in rows]
        print(f"boundary pixels at ucm >= {t:g} in one map only: {sum(xs)} in all "
              f"({sum(x > 0 for x in xs)} images, max {max(xs)} in one)")
    print(f"mean AP of images        ours {np.mean([r['AP_ours'] for r in rows]):.4f}"
          f"  authors {np.mean([r['AP_authors'] for r in rows]):.4f}")

    # the overall curve's highest thresholds (the coarsest levels)
    print()
    print("overall PR curve at the highest thresholds (px: predicted boundary pixels, "
          "summed over images)")
    print(f"{'t':>6s} {'R ours':>8s} {'R auth':>8s} {'P ours':>8s} {'P auth':>8s} "
          f"{'px ours':>9s} {'px auth':>9s}")
    # counts summed over the images (thresholds are the same for every image);
    # the recall and precision equal the run's own curve (result_boundary.json)
    tot = {}
    for k in runs:
        tot[k] = sum(evs[k][i] for i in ids)
        tot[k][:, 0] = evs[k][ids[0]][:, 0]
        c = res[k]["curves"]
        assert np.allclose(_curve(tot[k])[1], c["recall"]), k
        assert np.allclose(_curve(tot[k])[2], c["precision"]), k
    top = []
    nt = tot["ours"].shape[0]
    for j in range(nt - 1, max(-1, nt - 1 - args.top), -1):
        t, ro, po = (x[j] for x in _curve(tot["ours"]))
        _, ra, pa = (x[j] for x in _curve(tot["authors"]))
        no, na = tot["ours"][j, 4], tot["authors"][j, 4]
        top.append({"t": float(t), "R_ours": float(ro), "R_authors": float(ra),
                    "P_ours": float(po), "P_authors": float(pa),
                    "px_ours": int(no), "px_authors": int(na)})
        print(f"{t:6.2f} {ro:8.4f} {ra:8.4f} {po:8.4f} {pa:8.4f} {int(no):9d} {int(na):9d}")

    worst = sorted(rows, key=lambda r: -abs(r["dAP"]))[:args.worst]
    print()
    print(f"worst {len(worst)} by |delta AP|:  id  F ours/auth  AP ours/auth  corr")
    for r in worst:
        print(f"  {r['id']:>8s}  {r['F_ours']:.4f}/{r['F_authors']:.4f}  "
              f"{r['AP_ours']:.4f}/{r['AP_authors']:.4f}  {r['corr']:.6f}")

    summary = {
        "split": args.split, "n": len(ids),
        "overall": {k: {x: m[k].get(x) for x in ("ODS", "OIS", "AP", "R50")}
                    for k in runs},
        "abs_dF": {"max": float(dF.max()), "median": float(np.median(dF)),
                   "mean": float(dF.mean()), "above_tol": int((dF > tol).sum())},
        "abs_dAP": {"max": float(dAP.max()), "median": float(np.median(dAP)),
                    "mean": float(dAP.mean()), "above_tol": int((dAP > tol).sum())},
        "corr": {"min": float(corr.min()), "median": float(np.median(corr)),
                 "below_0.999": int((corr < 0.999).sum())},
        "top_thresholds": top, "tol": tol,
        "worst": [r["id"] for r in worst],
        "ucm_equal_1e-6": same, "finest_partition_equal": fine,
        "px_xor": {f"{t:g}": sum(r[f"px_xor_t{t:g}"] for r in rows) for t in TOP_LEVELS},
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
