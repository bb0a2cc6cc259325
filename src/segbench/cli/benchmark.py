"""``segbench boundary``, ``region``, ``all``, ``human`` and ``demo``.

Argument parsing and printing only: each command calls :func:`segbench.api.evaluate`.
"""

from __future__ import annotations

import argparse
import json

from ._common import add_ci, add_common, add_inputs, ci_option, print_table, where


def _boundary_params(p: argparse.ArgumentParser, *, thresholds: bool = True,
                     protocol: bool = False) -> None:
    if protocol:
        p.add_argument("--protocol", choices=("bsr", "bsds300", "martin2004"),
                       default=None,
                       help="preset of the boundary protocol: bsr (BSDS500, the "
                            "default), bsds300 (its site's ranking: 30 thresholds, "
                            "human maps thinned, smaller soft maps upsampled) or "
                            "martin2004 (the 2004 Pb paper: bsds300 at half "
                            "resolution, max-dist 0.01); the options below override "
                            "it (docs/protocol.md)")
    if thresholds:
        p.add_argument("--nthresh", type=int, default=None, metavar="N",
                       help="number of thresholds for soft maps and ucm2 (default: 99; "
                            "30 with --protocol bsds300)")
    p.add_argument("--max-dist", type=float, default=None, metavar="F",
                   help="matching tolerance as a fraction of the image diagonal "
                        "(default: 0.0075; 0.01 with --protocol martin2004)")
    p.add_argument("--max-dist-px", type=float, default=None, metavar="PX",
                   help="matching tolerance in pixels instead, converted per image to "
                        "the fraction of its diagonal (at half resolution under "
                        "martin2004); docs/protocol.md")
    if thresholds:
        p.add_argument("--no-thin", dest="thin", action="store_false", default=None,
                       help="do not thin thresholded maps before matching")


def _finish(p, func, *, plot: bool = True, human: bool = True,
            protocol: bool = False) -> None:
    """The options boundary, region and all share after their own, and the command."""
    if plot:
        p.add_argument("--no-plot", action="store_true", help="skip the PR-curve PNG")
        _boundary_params(p, protocol=protocol)
        if protocol:
            p.add_argument("--min-agreement", default=None, metavar="K",
                           help="score against strong boundaries only: human pixels "
                                "drawn by at least K annotators (an integer), a "
                                "fraction of them (e.g. 0.5), or 'all' "
                                "(docs/agreement.md)")
            p.add_argument("--nms", action="store_true", default=None,
                           help="thin raw soft maps (a CNN's output) with Dollar's edge "
                                "NMS first, as HED, RCF and PiDiNet are evaluated "
                                "(r=1, s=5, m=1.01, convTri(E, 1) first; "
                                "docs/detectors.md)")
        p.add_argument("--alpha", type=float, default=0.5, metavar="A",
                       help="F-measure weight: F = PR / (A R + (1 - A) P); 0.5 is the "
                            "harmonic mean of every BSDS paper")
        p.add_argument("--calibrate-on", metavar="RUN_DIR",
                       help="a boundary run on other images (train or val): report this "
                            "run's P, R, F at that run's best threshold as "
                            "ODS_calibrated; it must be a run of the same name (see "
                            "--calibrate-name) and protocol settings")
        p.add_argument("--calibrate-name", metavar="NAME", default=None,
                       help="the name of the --calibrate-on run when it is another "
                            "algorithm's, to calibrate on it on purpose")
    add_ci(p)
    if human:
        p.add_argument("--human", action="store_true",
                       help="also score each annotator against the others")
    add_common(p, scheduler=True)
    if plot:
        p.add_argument("--threads", type=int, default=None, metavar="N",
                       help="threads per image for the boundary benchmark (thresholds "
                            "thinned, annotators matched in parallel; results are "
                            "identical for any number) (default: the cores --workers "
                            "leaves, cpu_count // workers)")
    p.set_defaults(func=func)


def min_agreement(text: str | None):
    """``--min-agreement``: an int, a fraction or 'all', in one JSON-stable form."""
    if text is None:
        return None
    t = text.strip().lower()
    if t == "all":
        return "all"
    try:
        return int(t) if t.isdigit() else float(t)
    except ValueError:
        from ..errors import InputError
        raise InputError(f"--min-agreement is an integer, a fraction or 'all', not "
                         f"{text!r}") from None


def _params(a) -> dict:
    if getattr(a, "max_dist", None) is not None and \
            getattr(a, "max_dist_px", None) is not None:
        from ..errors import InputError
        raise InputError("--max-dist and --max-dist-px both set the tolerance; give one")
    keys = ("nthresh", "max_dist", "max_dist_px", "thin", "labels", "alpha", "protocol",
            "nms")
    out = {k: getattr(a, k) for k in keys if getattr(a, k, None) is not None}
    if getattr(a, "min_agreement", None) is not None:
        out["min_agreement"] = min_agreement(a.min_agreement)
    return out


def _evaluate(benchmark: str, a, **extra):
    from ..api import evaluate
    return evaluate(benchmark, a.gt, getattr(a, "pred", None), a.out, name=a.name,
                    threads=getattr(a, "threads", None),
                    human=getattr(a, "human", False), plot=not getattr(a, "no_plot", False),
                    ci=ci_option(a), calibrate_on=getattr(a, "calibrate_on", None),
                    calibrate_name=getattr(a, "calibrate_name", None),
                    **where(a), **_params(a), **extra)


def _header(res, out) -> None:
    n = res.provenance["params"]["n_images"]
    print(f"images: {n}" + (f"   output: {out}" if out else ""))


def _boundary_rows(res) -> list[tuple]:
    return [tuple(_cell(res, k) for k in ("ODS", "OIS", "AP", "R50"))]


def _cell(res, metric: str) -> str:
    """A metric as the table shows it: 'n/a' where not computed (R50 of a curve that
    never reaches P = 0.5), '*' where a note qualifies it (printed under the table)."""
    text = res.interval_text(metric)
    if text == "nan":
        text = "n/a"
    return text + "*" if metric in res.notes else text


def _print_notes(*results) -> None:
    """One line per noted metric, under the table its '*' marks."""
    for res in results:
        for metric, note in res.notes.items():
            print(f"* {metric}: {note}")


def _region_rows(res) -> list[tuple]:
    t = res.interval_text
    return [("covering", t("covering_ODS"), t("covering_OIS"), t("covering_best")),
            ("PRI", t("PRI_ODS"), t("PRI_OIS"), ""),
            ("VI", t("VI_ODS"), t("VI_OIS"), "")]


def _print_calibrated(m) -> None:
    if "ODS_calibrated" in m:
        print(f"calibrated ODS (threshold {m['ODS_calibrated_threshold']:.4f} fixed on "
              f"the calibration run): F {m['ODS_calibrated']:.4f}  (recall "
              f"{m['ODS_calibrated_recall']:.4f}, precision "
              f"{m['ODS_calibrated_precision']:.4f})")


def _print_human(m) -> None:
    if "human_F" in m:
        print(f"human (each annotator against the others): F {m['human_F']:.4f}")
    if "human_covering" in m:
        print(f"human (each annotator against the others): covering "
              f"{m['human_covering']:.4f}  PRI {m['human_PRI']:.4f}  "
              f"VI {m['human_VI']:.4f}")


def _report(a, res, rows, header) -> int:
    """Print one result: as JSON with ``--json``, else a table and the human figures."""
    if a.json:
        print(res.to_json())
        return 0
    _header(res, a.out)
    print_table(rows, header)
    _print_notes(res)
    _print_calibrated(res.metrics)
    _print_human(res.metrics)
    return 0


def _cmd_boundary(a) -> int:
    res = _evaluate("boundary", a)
    return _report(a, res, [(res.name, *_boundary_rows(res)[0])],
                   ("algorithm", "ODS", "OIS", "AP", "R50"))


def _cmd_region(a) -> int:
    res = _evaluate("region", a)
    return _report(a, res, _region_rows(res), (res.name, "ODS", "OIS", "Best"))


def _cmd_all(a) -> int:
    b, r = _evaluate("all", a)
    if a.json:
        print(json.dumps({"boundary": b.to_dict(), "region": r.to_dict()}, indent=1))
        return 0
    _header(b, a.out)
    rows = [("boundary F", _cell(b, "ODS"), _cell(b, "OIS"), "", _cell(b, "AP")),
            *((*row, "") for row in _region_rows(r))]
    print_table(rows, (b.name, "ODS", "OIS", "Best", "AP"))
    _print_notes(b, r)
    _print_calibrated(b.metrics)
    _print_human({**b.metrics, **r.metrics})
    return 0


def _cmd_human(a) -> int:
    from ..api import evaluate
    benchmark = "human_boundary" if a.no_region else "human"
    out = evaluate(benchmark, a.gt, None, a.out, name=a.name, **_params(a), **where(a))
    h, r = (out, None) if a.no_region else out
    if a.json:
        print(json.dumps({"boundary": h.to_dict()["metrics"],
                          "region": None if r is None else r.to_dict()["metrics"]},
                         indent=1))
        return 0
    m = h.metrics
    print(f"human, each annotator against the others ({m['n_images']} images):")
    print(f"  boundary  F = {m['F']:.4f}  (recall {m['recall']:.4f}, precision "
          f"{m['precision']:.4f})")
    if r is not None:
        mr = r.metrics
        print(f"  region    covering {mr['covering']:.4f}  PRI {mr['PRI']:.4f}  "
              f"VI {mr['VI']:.4f}  ({_count(mr['n_pairs'], 'image-annotator pair')})")
    if a.out:
        print(f"output: {a.out}")
    return 0


def _count(n: int, what: str) -> str:
    """'1 pair', '61 pairs'."""
    return f"{n} {what}" + ("" if n == 1 else "s")


def _cmd_demo(a) -> int:
    from ..demo import run_demo
    run_demo(a.out, n_images=a.n_images, workers=a.workers, progress=not a.quiet,
             as_json=a.json)
    return 0


def add_parsers(sub) -> None:
    """Register the benchmark commands on the ``segbench`` sub-command parser."""
    p = sub.add_parser(
        "boundary", help="boundary benchmark (ODS, OIS, AP, R50)",
        description="Boundary precision and recall of soft maps, ucm2 or segmentations "
                    "at every threshold, as the BSDS500 boundary benchmark "
                    "(boundaryBench.m): ODS, OIS, AP, R50 and the PR curve.")
    add_inputs(p, pred_help="folder of predictions <iid>.png/.bmp (8-bit /255, 16-bit "
                            "/65535), .npy (floats in [0, 1]) or .mat (ucm2 or segs)")
    _finish(p, _cmd_boundary, protocol=True)

    p = sub.add_parser(
        "region", help="region benchmark (covering, PRI, VI at ODS/OIS)",
        description="Segmentation covering, probabilistic Rand index and variation of "
                    "information of ucm2 hierarchies, segs or label maps, as the BSDS500 "
                    "region benchmark (evaluation_reg_image.m, collect_eval_reg.m).")
    add_inputs(p, pred_help="folder of <iid>.mat (ucm2 or segs), or with --labels "
                            "<iid>.png/.bmp/.tif/.npy label maps")
    p.add_argument("--labels", action="store_true",
                   help="read .png/.bmp/.tif/.npy predictions as label maps (one "
                        "segmentation per image; every value is a region)")
    p.add_argument("--nthresh", type=int, default=99, metavar="N",
                   help="number of ucm2 thresholds")
    _finish(p, _cmd_region, plot=False)

    p = sub.add_parser(
        "all", help="boundary and region benchmarks in one pass (allBench)",
        description="The boundary and region benchmarks of ucm2 or segs .mat files, "
                    "each image read once (allBench.m); writes the files of both.")
    add_inputs(p, pred_help="folder of <iid>.mat (ucm2 or segs)")
    _finish(p, _cmd_all, protocol=True)

    p = sub.add_parser(
        "human", help="human consistency: each annotator against the others",
        description="Each human segmentation scored against the others of its image: "
                    "boundary F (boundaryBenchHuman.m) and covering, PRI, VI.")
    add_inputs(p, pred=False, out_help="output folder: result_human_boundary.json and "
                                       "per_item_human_boundary.csv, result_human_region.json and "
                                       "per_item_human_region.csv, records")
    _boundary_params(p, thresholds=False, protocol=True)
    p.add_argument("--no-region", action="store_true",
                   help="boundary F only (skip covering, PRI, VI)")
    add_common(p, scheduler=True)
    p.set_defaults(func=_cmd_human)

    p = sub.add_parser(
        "demo", help="synthetic dataset, baseline detectors, every benchmark, the site",
        description="Render a synthetic dataset with simulated annotators, run two "
                    "baseline boundary detectors and a segmenter, score them with the "
                    "boundary and region benchmarks and build the benchmark site.")
    p.add_argument("--out", default="segbench-demo", metavar="OUT", help="output folder")
    p.add_argument("--n-images", type=int, default=8, metavar="N",
                   help="number of synthetic images to render")
    add_common(p)
    p.set_defaults(func=_cmd_demo)
