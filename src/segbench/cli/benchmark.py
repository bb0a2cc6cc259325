"""``segbench boundary``, ``region``, ``all``, ``human`` and ``demo``.

Argument parsing and printing only: each command calls :func:`segbench.api.evaluate`.
"""

from __future__ import annotations

import argparse
import json

from ..families import (
    BENCHMARKS,
    BOUNDARY_PARAMS,
    REGION_PARAMS,
    add_options,
    add_run_options,
    options_from_args,
)
from ._common import (
    R50_NOTE,
    add_ci,
    add_common,
    add_inputs,
    ci_option,
    print_table,
    where,
)


def _boundary_params(
    p: argparse.ArgumentParser, *, thresholds: bool = True, protocol: bool = False
) -> None:
    names = (
        (["protocol"] if protocol else [])
        + (["nthresh", "thresholds"] if thresholds else [])
        + ["max_dist", "max_dist_px"]
        + (["thin"] if thresholds else [])
    )
    add_options(p, BOUNDARY_PARAMS, names)


def _finish(p, func, name: str, *, plot: bool = True, protocol: bool = False) -> None:
    """The options boundary, region and all share after their own (the benchmark's
    run options as the registry declares them), and the command."""
    if plot:
        p.add_argument("--no-plot", action="store_true", help="skip the PR-curve PNG")
        _boundary_params(p, protocol=protocol)
        add_options(
            p, BOUNDARY_PARAMS, ["min_agreement", "nms", "alpha"] if protocol else ["alpha"]
        )
    add_run_options(p, BENCHMARKS[name].options)
    add_ci(p)
    add_common(p, scheduler=True)
    if plot:
        p.add_argument(
            "--threads",
            type=int,
            default=None,
            metavar="N",
            help="threads per image for the boundary benchmark (thresholds "
            "thinned, annotators matched in parallel; results are "
            "identical for any number) (default: the cores --workers "
            "leaves, cpu_count // workers)",
        )
    p.set_defaults(func=func)


def _params(a) -> dict:
    """The benchmark parameters given on the command line (the registry's)."""
    return options_from_args(a, BOUNDARY_PARAMS + REGION_PARAMS)


def _evaluate(benchmark: str, a, **extra):
    from ..api import evaluate

    pred = getattr(a, "pred", None)
    if isinstance(pred, list):
        pred = pred[0] if len(pred) == 1 else pred
    return evaluate(
        benchmark,
        a.gt,
        pred,
        a.out,
        name=a.name,
        threads=getattr(a, "threads", None),
        human=getattr(a, "human", False),
        plot=not getattr(a, "no_plot", False),
        ci=ci_option(a),
        calibrate_on=getattr(a, "calibrate_on", None),
        calibrate_name=getattr(a, "calibrate_name", None),
        **where(a),
        **_params(a),
        **extra,
    )


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
    return [
        ("covering", t("covering_ODS"), t("covering_OIS"), t("covering_best")),
        ("PRI", t("PRI_ODS"), t("PRI_OIS"), ""),
        ("VI", t("VI_ODS"), t("VI_OIS"), ""),
    ]


def _print_calibrated(m) -> None:
    if "ODS_calibrated" in m:
        print(
            f"calibrated ODS (threshold {m['ODS_calibrated_threshold']:.4f} fixed on "
            f"the calibration run): F {m['ODS_calibrated']:.4f}  (recall "
            f"{m['ODS_calibrated_recall']:.4f}, precision "
            f"{m['ODS_calibrated_precision']:.4f})"
        )


def _print_human(m) -> None:
    if "human_F" in m:
        print(f"human (each annotator against the others): F {m['human_F']:.4f}")
    if "human_covering" in m:
        print(
            f"human (each annotator against the others): covering "
            f"{m['human_covering']:.4f}  PRI {m['human_PRI']:.4f}  "
            f"VI {m['human_VI']:.4f}"
        )


def _number(value) -> str:
    """A figure of a table: 'n/a' where undefined (NaN), as :func:`_cell` says it."""
    return "n/a" if value != value else f"{value:.4f}"


def _print_table_noted(rows, header) -> None:
    """The table, and under it why a figure is 'n/a' (an R50 never reached)."""
    print_table(rows, header)
    if "R50" in header:
        k = list(header).index("R50")
        if any(str(row[k]).startswith("n/a") for row in rows):
            print(R50_NOTE)


def _report(a, res, rows, header) -> int:
    """Print one result: as JSON with ``--json``, else a table and the human figures."""
    if a.json:
        print(res.to_json())
        return 0
    _header(res, a.out)
    _print_table_noted(rows, header)
    _print_notes(res)
    _print_calibrated(res.metrics)
    _print_human(res.metrics)
    return 0


def _cmd_boundary(a) -> int:
    res = _evaluate("boundary", a)
    rows = [(res.name, *_boundary_rows(res)[0])]
    alone = res.provenance.get("granularities")
    if alone:  # each granularity alone, beside the best of them
        rows[0] = (f"{res.name} (best of {len(alone)})", *rows[0][1:])
        rows += [
            (f"  {g['pred']}", *(_number(g[m]) for m in ("ODS", "OIS", "AP", "R50")))
            for g in alone
        ]
    return _report(a, res, rows, ("algorithm", "ODS", "OIS", "AP", "R50"))


def _cmd_region(a) -> int:
    res = _evaluate("region", a)
    return _report(a, res, _region_rows(res), (res.name, "ODS", "OIS", "Best"))


def _cmd_all(a) -> int:
    b, r = _evaluate("all", a)
    if a.json:
        print(json.dumps({"boundary": b.to_dict(), "region": r.to_dict()}, indent=1))
        return 0
    _header(b, a.out)
    rows = [
        ("boundary F", _cell(b, "ODS"), _cell(b, "OIS"), "", _cell(b, "AP")),
        *((*row, "") for row in _region_rows(r)),
    ]
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
        print(
            json.dumps(
                {
                    "boundary": h.to_dict()["metrics"],
                    "region": None if r is None else r.to_dict()["metrics"],
                },
                indent=1,
            )
        )
        return 0
    m = h.metrics
    print(f"human, each annotator against the others ({m['n_images']} images):")
    print(
        f"  boundary  F = {m['F']:.4f}  (recall {m['recall']:.4f}, precision "
        f"{m['precision']:.4f})"
    )
    if "F_median_subject" in m:
        print(
            f"            median over the {m['n_subjects']} subjects' own F = "
            f"{m['F_median_subject']:.4f} (each subject's counts pooled over its "
            "images: the 2004 paper's human figure)"
        )
    elif m.get("n_subjects") == 0:
        print(
            "            (no median over subjects: this ground truth records no "
            "subject ids, as BSDS500 .mat files; a BSDS300 human/<uid>/ tree does)"
        )
    if r is not None:
        mr = r.metrics
        print(
            f"  region    covering {mr['covering']:.4f}  PRI {mr['PRI']:.4f}  "
            f"VI {mr['VI']:.4f}  ({_count(mr['n_pairs'], 'image-annotator pair')})"
        )
    if a.out:
        print(f"output: {a.out}")
    return 0


def _count(n: int, what: str) -> str:
    """'1 pair', '61 pairs'."""
    return f"{n} {what}" + ("" if n == 1 else "s")


def _cmd_generic(a) -> int:
    """A benchmark of the registry without a command of its own (docs/engine.md, "How
    to add a family"): its parameters are the registry's, its table the results'
    headlines."""
    from ..api import evaluate

    entry = BENCHMARKS[a.benchmark]
    out = evaluate(
        entry.name,
        a.gt,
        getattr(a, "pred", None),
        a.out,
        name=a.name,
        ci=ci_option(a),
        **where(a),
        **options_from_args(a, entry.params),
    )
    results = out if isinstance(out, tuple) else (out,)
    if a.json:
        print(
            json.dumps({r.family: r.to_dict() for r in results}, indent=1)
            if len(results) > 1
            else results[0].to_json()
        )
        return 0
    for r in results:
        print(r.headline())
    _print_notes(*results)
    if a.out:
        print(f"output: {a.out}")
    return 0


def add_generic(sub, entry) -> None:
    """Register ``segbench <entry.name>`` for a benchmark of the registry whose
    ``group`` is 'generic': the common inputs, its declared parameters, the bootstrap
    and execution options."""
    p = sub.add_parser(
        entry.name.replace("_", "-"),
        help=entry.help or entry.name,
        description=(entry.help or entry.name) + " (a benchmark of the "
        "registry, segbench.families)",
    )
    texts = {
        k: v for k, v in (("gt_help", entry.gt_help), ("pred_help", entry.pred_help)) if v
    }
    # a family reading ground truth of its own (gt_help) has no BSDS300 presentations
    # nor the common readers' formats
    add_inputs(
        p,
        pred=entry.needs_predictions,
        presentation=not entry.gt_help,
        formats=not entry.gt_help,
        **texts,
    )
    add_options(p, entry.params)
    if entry.compare:  # its results resample (crispness's do not: no --ci to offer)
        add_ci(p)
    add_common(p, scheduler=True)
    p.set_defaults(func=_cmd_generic, benchmark=entry.name)


def _cmd_import_run(a) -> int:
    from ..api import import_run

    dirs = a.ev1_dir if len(a.ev1_dir) > 1 else a.ev1_dir[0]
    res = import_run(
        dirs,
        a.out,
        gt=a.gt,
        split=a.split,
        ids=a.ids,
        name=a.name,
        max_dist=a.max_dist,
        plot=not a.no_plot,
        progress=not a.quiet,
    )
    if a.json:
        print(res.to_json())
        return 0
    print(f"images: {len(res.per_item)}   output: {a.out}")
    rows = [
        (
            res.name + (f" (best of {len(a.ev1_dir)})" if len(a.ev1_dir) > 1 else ""),
            *_boundary_rows(res)[0],
        )
    ]
    if len(a.ev1_dir) > 1:  # each granularity alone, beside the best of them
        for d in a.ev1_dir:
            one = import_run(d, None, max_dist=a.max_dist, plot=False)
            rows.append((f"  {d}", *_boundary_rows(one)[0]))
    _print_table_noted(rows, ("algorithm", "ODS", "OIS", "AP", "R50"))
    theirs = res.provenance.get("imported")
    if theirs:
        print(
            f"the MATLAB run's eval_bdry.txt: ODS {theirs['ods_f']:.4f}  OIS "
            f"{theirs['ois_f']:.4f}  AP {theirs['ap']:.4f}"
        )
    return 0


def _cmd_demo(a) -> int:
    from ..demo import run_demo

    run_demo(
        a.out, n_images=a.n_images, workers=a.workers, progress=not a.quiet, as_json=a.json
    )
    return 0


def add_parsers(sub) -> None:
    """Register the benchmark commands on the ``segbench`` sub-command parser."""
    p = sub.add_parser(
        "boundary",
        help="boundary benchmark (ODS, OIS, AP, R50)",
        description="Boundary precision and recall of soft maps, ucm2 or segmentations "
        "at every threshold, as the BSDS500 boundary benchmark "
        "(boundaryBench.m): ODS, OIS, AP, R50 and the PR curve.",
    )
    add_inputs(
        p,
        pred_help="folder of predictions <iid>.png/.bmp (8-bit /255, 16-bit "
        "/65535), .npy (floats in [0, 1]) or .mat (ucm2 or segs); "
        "several folders: the granularities of one detector (MuGE, "
        "SAUGE), scored as the best of them per image and threshold",
        formats=True,
        several_pred=True,
    )
    _finish(p, _cmd_boundary, "boundary", protocol=True)

    p = sub.add_parser(
        "region",
        help="region benchmark (covering, PRI, VI at ODS/OIS)",
        description="Segmentation covering, probabilistic Rand index and variation of "
        "information of ucm2 hierarchies, segs or label maps, as the BSDS500 "
        "region benchmark (evaluation_reg_image.m, collect_eval_reg.m).",
    )
    add_inputs(
        p,
        pred_help="folder of <iid>.mat (ucm2 or segs), or with --labels "
        "<iid>.png/.bmp/.tif/.npy label maps",
        formats=True,
    )
    add_options(p, REGION_PARAMS)
    _finish(p, _cmd_region, "region", plot=False)

    p = sub.add_parser(
        "all",
        help="boundary and region benchmarks in one pass (allBench)",
        description="The boundary and region benchmarks of ucm2 or segs .mat files, "
        "each image read once (allBench.m); writes the files of both.",
    )
    add_inputs(p, pred_help="folder of <iid>.mat (ucm2 or segs)", formats=True)
    _finish(p, _cmd_all, "all", protocol=True)

    p = sub.add_parser(
        "human",
        help="human consistency: each annotator against the others",
        description="Each human segmentation scored against the others of its image: "
        "boundary F (boundaryBenchHuman.m) and covering, PRI, VI.",
    )
    add_inputs(
        p,
        pred=False,
        out_help="output folder: result_human_boundary.json and "
        "per_item_human_boundary.csv, result_human_region.json and "
        "per_item_human_region.csv, records",
        formats=True,
    )
    _boundary_params(p, thresholds=False, protocol=True)
    p.add_argument(
        "--no-region", action="store_true", help="boundary F only (skip covering, PRI, VI)"
    )
    add_common(p, scheduler=True)
    p.set_defaults(func=_cmd_human)

    p = sub.add_parser(
        "import-run",
        help="a finished MATLAB boundary run (<iid>_ev1.txt) as a run folder",
        description="Read the per-image counts a MATLAB boundary run wrote (BSR's "
        "boundaryBench.m or Dollar's edgesEvalDir.m: <iid>_ev1.txt) into a "
        "segbench run folder that compare, --ci and site take; ODS, OIS, AP "
        "and R50 are summarized from the counts as read.",
    )
    p.add_argument(
        "ev1_dir",
        metavar="EV1_DIR",
        nargs="+",
        help="folder of <iid>_ev1.txt files; several: the granularities of a "
        "multi-granularity detector (MuGE, SAUGE), scored as the best "
        "of them per image and threshold, each also shown alone",
    )
    p.add_argument(
        "--gt",
        default=None,
        metavar="GT",
        help="the ground truth the MATLAB run scored (any layout): then "
        "compare pairs the run with segbench runs on it",
    )
    p.add_argument("--split", default=None, metavar="S", help="split of a dataset root")
    p.add_argument(
        "--ids",
        default=None,
        metavar="LIST|FILE",
        help="import only these images (a run of a subset of the ground truth): "
        "separated by commas or spaces, or a file of ids, one per line",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="OUT",
        help="run folder to write (new, empty, or a segbench run folder)",
    )
    p.add_argument(
        "--name",
        default=None,
        metavar="NAME",
        help="name of the run (default: the folder's name, skipping split names)",
    )
    p.add_argument(
        "--max-dist",
        type=float,
        default=None,
        metavar="F",
        help="the tolerance the MATLAB run used, recorded with the result "
        "(default: 0.0075)",
    )
    p.add_argument("--no-plot", action="store_true", help="skip the PR-curve PNG")
    add_common(p, workers=False)
    p.set_defaults(func=_cmd_import_run)

    p = sub.add_parser(
        "demo",
        help="synthetic dataset, baseline detectors, every benchmark, the site",
        description="Render a synthetic dataset with simulated annotators, run two "
        "baseline boundary detectors and a segmenter, score them with the "
        "boundary and region benchmarks and build the benchmark site.",
    )
    p.add_argument("--out", default="segbench-demo", metavar="OUT", help="output folder")
    p.add_argument(
        "--n-images",
        type=int,
        default=8,
        metavar="N",
        help="number of synthetic images to render",
    )
    add_common(p)
    p.set_defaults(func=_cmd_demo)

    for entry in BENCHMARKS.values():
        if entry.group == "generic":
            add_generic(sub, entry)
