"""Best-of-granularities on SAUGE's released per-image counts, against SAUGE's output.

SAUGE (Liufu et al., AAAI 2025; github.com/Star-xing1/SAUGE) releases, for each
setting, the per-image counts of every granularity in
``eval_result/bsds/<setting>/<g>/nms-eval/<id>_ev1.txt`` (rows ``thr cntR sumR cntP
sumP``, 100 rows from threshold 0) with that granularity's ``eval_bdry.txt``, and the
output of its ``best_ods_ois.py`` in ``best_ods/nms-eval/<id>_ev1.txt``. This script
reads a local copy of such a setting folder (read only), runs
:func:`segbench.boundary._granularity.best_of_granularities` and prints:

* how many (image, threshold) count rows equal SAUGE's own ``best_ods`` files, and the
  images on which SAUGE's script would have stopped (its L66 ``.item()`` raises when an
  image's highest F over all (granularity, threshold) pairs is reached more than once);
* ODS / OIS / AP of the combined counts from segbench's summary
  (``summarize_boundary``), beside ``best_ods/nms-eval/eval_bdry.txt`` when the folder
  has one, and beside the figures SAUGE's ``best_ods_ois.py`` prints (its
  ``findBestRPF`` / ``computeRPF`` / ``interp1d`` AP rule, restated below);
* for every granularity, segbench's summary of its own counts beside its
  ``eval_bdry.txt`` (a check that the summary reads these files as their tool did).

Usage::

    python tools/sauge_best_of.py SETTING_DIR [--granularities 0 0.1 ... 1]
        [--best-ods DIR]

``--granularities`` defaults to the subfolders whose names are numbers, in numeric
order (SAUGE's multi-granularity list ``[0, 0.1, ..., 1]``); ``definite`` gives the
single-granularity run of SAUGE's script as committed (``model_name=['definite']``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from segbench.boundary._granularity import best_of_granularities
from segbench.primitives import BoundaryCounts, summarize_boundary

EPS = sys.float_info.epsilon


def read_ev1(path: Path) -> BoundaryCounts:
    return BoundaryCounts.from_table(np.loadtxt(path, ndmin=2))


def numeric_subfolders(setting: Path) -> list[str]:
    names = []
    for p in setting.iterdir():
        try:
            float(p.name)
        except ValueError:
            continue
        if (p / "nms-eval").is_dir():
            names.append(p.name)
    return sorted(names, key=float)


def sauge_rpf(cnt):
    """SAUGE's computeRPF on (..., 4) counts."""
    r = cnt[..., 0] / np.maximum(cnt[..., 1], EPS)
    p = cnt[..., 2] / np.maximum(cnt[..., 3], EPS)
    return r, p, (2 * p * r) / np.maximum(p + r, EPS)


def sauge_ods(total: np.ndarray):
    """ODS as SAUGE's findBestRPF finds it on the (100, 4) pooled counts: labels
    T = 0.01..0.99, segment j from row j-1 to row j for j = 0..98 (j = 0 wraps to the
    last row), NaN F (P + R = 0 at an end) skips a segment, reports T[j-1]."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = total[:, 0] / total[:, 1]
        p = np.nan_to_num(total[:, 2] / total[:, 3], nan=0)
        t = np.array([i / 100 for i in range(1, 100)])
        a = np.linspace(0, 1, 100)
        b = 1 - a
        best = (None, None, None, -1.0, None)
        for j in range(len(t)):
            rj = r[j] * a + r[j - 1] * b
            pj = p[j] * a + p[j - 1] * b
            fj = 2 * pj * rj / (pj + rj)
            f, k = np.max(fj), int(np.argmax(fj))
            if f > best[3]:
                best = (t[j - 1], rj[k], pj[k], f, j)
    return best, r, p


def sauge_ap(r, p):
    """SAUGE's AP: interp1d(R, P) at R = 0.01..1.00, nansum / 100."""
    from scipy.interpolate import interp1d
    try:
        return float(np.nansum(interp1d(r, p, kind="linear")(np.arange(0.01, 1.01, 0.01)))
                     / 100)
    except ValueError as exc:              # SAUGE's script would stop here too
        return f"n/a ({exc})"


def tied_max_images(cnt: np.ndarray) -> list[int]:
    """Images whose highest F over all (granularity, threshold) is reached more than
    once: SAUGE's L66 ``np.where(F == max)[0].item()`` raises on them."""
    f = sauge_rpf(cnt.astype(np.float64))[2]                       # (K, N, T)
    top = f.max(axis=(0, 2), keepdims=True)
    return np.flatnonzero((f == top).sum(axis=(0, 2)) > 1).tolist()


def fmt(xs) -> str:
    return "  ".join(f"{x:.6g}" if isinstance(x, (float, np.floating)) else str(x)
                     for x in xs)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("setting", type=Path, help="eval_result/bsds/<setting> folder")
    ap.add_argument("--granularities", nargs="+", default=None)
    ap.add_argument("--best-ods", type=Path, default=None,
                    help="SAUGE's output folder (default SETTING/best_ods)")
    args = ap.parse_args(argv)
    setting = args.setting
    grans = args.granularities or numeric_subfolders(setting)
    if not grans:
        ap.error(f"no granularity subfolders with nms-eval/ in {setting}")
    best_dir = (args.best_ods or setting / "best_ods") / "nms-eval"

    # the images: those of the first granularity's folder, as SAUGE's L33
    ids = sorted(p.name[:-len("_ev1.txt")]
                 for p in (setting / grans[0] / "nms-eval").glob("*_ev1.txt"))
    records = [[read_ev1(setting / g / "nms-eval" / f"{i}_ev1.txt") for i in ids]
               for g in grans]
    t = records[0][0].thresholds
    print(f"setting {setting}")
    print(f"granularities ({len(grans)}): {' '.join(grans)}")
    print(f"images {len(ids)}, thresholds {t.size} ({t[0]:g} .. {t[-1]:g})")

    combined, choice = best_of_granularities(records)
    counts = np.bincount(choice.ravel(), minlength=len(grans))
    print("chosen (image, threshold) entries per granularity: "
          + ", ".join(f"{g}: {c}" for g, c in zip(grans, counts)))

    cnt = np.stack([np.stack([r.as_table()[:, 1:] for r in g]) for g in records])
    tied = tied_max_images(cnt)
    print(f"images where SAUGE's script stops (highest F reached more than once, "
          f"L66): {len(tied)}" + (f" ({', '.join(ids[i] for i in tied[:10])}"
                                  f"{' ...' if len(tied) > 10 else ''})" if tied else ""))

    ours = np.stack([r.as_table()[:, 1:] for r in combined])
    if best_dir.is_dir():
        missing = [i for i in ids if not (best_dir / f"{i}_ev1.txt").is_file()]
        have = [k for k, i in enumerate(ids) if i not in set(missing)]
        theirs = np.stack([read_ev1(best_dir / f"{ids[k]}_ev1.txt").as_table()[:, 1:]
                           for k in have])
        same = (ours[have] == theirs).all(axis=2)
        print(f"\nSAUGE's {best_dir}: {len(have)} of {len(ids)} images"
              + (f" ({len(missing)} missing)" if missing else ""))
        print(f"(image, threshold) count rows equal to SAUGE's: {int(same.sum())} of "
              f"{same.size}")
        ok = [k for k in range(len(have)) if have[k] not in set(tied)]
        print(f"  on images where SAUGE's script does not stop: {int(same[ok].sum())} of "
              f"{same[ok].size}")
        diff = [ids[have[k]] for k in range(len(have)) if not same[k].all()]
        if diff:
            print(f"  images with a different row: {len(diff)} ({', '.join(diff[:8])}"
                  f"{' ...' if len(diff) > 8 else ''})")
        # which single granularity folder, if any, SAUGE's files copy row for row
        for sub in sorted(p for p in setting.iterdir()
                          if (p / "nms-eval").is_dir() and p.name != best_dir.parent.name):
            files = [sub / "nms-eval" / f"{ids[k]}_ev1.txt" for k in have]
            if all(f.is_file() for f in files) and all(
                    np.array_equal(read_ev1(f).as_table()[:, 1:], th)
                    for f, th in zip(files, theirs)):
                print(f"  SAUGE's files hold exactly the counts of the single folder "
                      f"'{sub.name}' (a K = 1 run)")
    else:
        print(f"\nno {best_dir}: nothing to compare the counts with")

    s = summarize_boundary(combined, ids).metrics()
    print("\n                          ODS_T     ODS_R     ODS_P     ODS_F     "
          "OIS_R     OIS_P     OIS_F     AP")
    row = [s[k] for k in ("ODS_threshold", "ODS_recall", "ODS_precision", "ODS",
                          "OIS_recall", "OIS_precision", "OIS", "AP")]
    print(f"segbench summary        {'  '.join(f'{x:8.6f}' for x in row)}")
    ev = best_dir / "eval_bdry.txt"
    if ev.is_file():
        print(f"SAUGE eval_bdry.txt     "
              f"{'  '.join(f'{x:8.6f}' for x in np.loadtxt(ev).ravel())}")
    else:
        print(f"SAUGE eval_bdry.txt     (none in {best_dir})")
    (odt, odr, odp, odf, j), r_all, p_all = sauge_ods(ours.sum(axis=0).astype(np.float64))
    # SAUGE's OIS: per image the first best row of the combined F, counts pooled
    f_img = sauge_rpf(ours.astype(np.float64))[2]
    pooled = ours[np.arange(len(ids)), np.argmax(f_img, axis=1)].sum(axis=0)
    oisr, oisp, oisf = sauge_rpf(pooled.astype(np.float64))
    sap = sauge_ap(r_all, p_all)
    print(f"SAUGE rule (restated)   {odt:8.6f}  {odr:8.6f}  {odp:8.6f}  {odf:8.6f}  "
          f"{oisr:8.6f}  {oisp:8.6f}  {oisf:8.6f}  "
          + (f"{sap:8.6f}" if isinstance(sap, float) else sap))
    print(f"  SAUGE's best ODS on segment rows {j - 1 if j else 99} -> {j} "
          f"(thresholds {t[j - 1]:g} -> {t[j]:g}); ODS F {'equal' if odf == s['ODS'] else 'differs'}"
          f" (|diff| {abs(odf - s['ODS']):.2g}), OIS F "
          f"{'equal' if oisf == s['OIS'] else 'differs'} (|diff| {abs(oisf - s['OIS']):.2g})")

    print("\nper granularity: segbench summary of its counts vs its eval_bdry.txt "
          "(largest |difference| of the 8 numbers)")
    for g, recs in zip(grans, records):
        e = setting / g / "nms-eval" / "eval_bdry.txt"
        m = summarize_boundary(recs, ids).metrics()
        mine = np.array([m[k] for k in ("ODS_threshold", "ODS_recall", "ODS_precision",
                                        "ODS", "OIS_recall", "OIS_precision", "OIS",
                                        "AP")])
        if e.is_file():
            theirs = np.loadtxt(e).ravel()
            print(f"  {g:>9}: ODS {mine[3]:.6f} (file {theirs[3]:.6f})  OIS {mine[6]:.6f} "
                  f"(file {theirs[6]:.6f})  AP {mine[7]:.6f} (file {theirs[7]:.6f})  "
                  f"max |diff| {np.abs(mine - theirs).max():.2g}")
        else:
            print(f"  {g:>9}: ODS {mine[3]:.6f}  OIS {mine[6]:.6f}  AP {mine[7]:.6f}  "
                  "(no eval_bdry.txt)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
