"""``segbench superpixel`` and ``segbench superpixel-sweep``: parsers, registered by cli.py.

Thin, as the rest of the CLI: parses, calls :func:`segbench.evaluate` ``("superpixel", ...)``
/ :func:`segbench.runners.run_sweep` (imported lazily, so ``segbench --help``
stays fast), prints.
"""

from __future__ import annotations

import argparse

from ._common import (
    add_ci,
    add_common,
    add_inputs,
    ci_option,
    int_at_least,
    print_intervals,
    print_table,
    where,
)

#: As segbench.superpixel (literals here, so that --help imports no numerical library;
#: tests/test_superpixel_engine.py checks they agree).
WINDOWS = ("euclidean", "square", "matched")
BOUNDARIES = ("bsds", "two-sided")
DEFAULT_TOLERANCE = 2.0

#: Columns of the printed tables: result key, header.
_SHOWN = (
    ("br", "BR"),
    ("bp", "BP"),
    ("ue", "UE"),
    ("cue", "CUE"),
    ("asa", "ASA"),
    ("ue_levinshtein", "UE-Lev"),
    ("ue_np", "UE-NP"),
    ("ue_achanta", "UE-SLIC"),
    ("co", "CO"),
    ("ev", "EV"),
)


#: Printed under every table that shows the SEEDS-recipe UE.
_UE_NOTE = (
    "note: UE follows the SEEDS scoring recipe, which charges a superpixel once per "
    "segment it touches:\n      the reference states a range of [0, 1] that "
    "this recipe does not keep{worst};\n      --ue normalized shows UE/(1+UE) of "
    "each annotator instead, which stays in [0, 1) (metric ue_norm)"
)


def _ue_columns(a, shown):
    """``shown`` with the UE column as ``--ue`` asks."""
    if a.ue != "normalized":
        return shown
    return tuple(("ue_norm", "UE-norm") if k == "ue" else (k, h) for k, h in shown)


def _ue_note(a, worst=None, what="against one annotator") -> None:
    if a.ue == "normalized":
        print(
            "UE-norm = UE/(1+UE): the SEEDS recipe's numerator over its largest "
            "possible value, in [0, 1)"
        )
        return
    text = f" (here up to {worst:.3f} {what})" if worst is not None and worst > 1 else ""
    print(_UE_NOTE.format(worst=text))


def _worst_ue(records) -> float | None:
    vals = [float(v) for r in records or () for v in r.per_annotator["ue"] if v == v]
    return max(vals, default=None)


def _f(v, spec=".4f") -> str:
    return "nan" if v is None or v != v else format(v, spec)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--tolerance",
        type=float,
        default=DEFAULT_TOLERANCE,
        metavar="PX",
        help=f"boundary tolerance in pixels (default: {DEFAULT_TOLERANCE:g}, as SEEDS)",
    )
    p.add_argument(
        "--window",
        choices=WINDOWS,
        default=WINDOWS[0],
        help="boundary matching: Euclidean distance (the default), square window "
        "(the C++ benchmark), or one-to-one (the BSDS correspondence)",
    )
    p.add_argument(
        "--boundary",
        choices=BOUNDARIES,
        default=BOUNDARIES[0],
        help="boundary pixels of a label map: BSDS seg2bdry, 1 px (the default), "
        "or both sides of every contour, 2 px (the C++ benchmark)",
    )
    p.add_argument(
        "--max-annotators",
        type=int,
        default=None,
        metavar="N",
        help="use only the first N annotators (the C++ benchmark reads 5)",
    )
    p.add_argument(
        "--ue",
        choices=("seeds", "normalized"),
        default="seeds",
        help="UE column printed: the SEEDS recipe (the default; it can exceed "
        "1) or UE/(1+UE), which stays in [0, 1); the JSON holds both "
        "(ue, ue_norm)",
    )
    add_common(p, scheduler=True)


def _options(a) -> dict:
    return {
        "tolerance": a.tolerance,
        "window": a.window,
        "boundary": a.boundary,
        "max_annotators": a.max_annotators,
    }


def _cmd_superpixel(a) -> int:
    from ..api import evaluate
    from ..errors import InputError

    if a.stutz and not a.out:
        raise InputError("--stutz writes results.csv: give --out")
    res = evaluate(
        "superpixel",
        a.gt,
        a.pred,
        a.out,
        images=a.images,
        name=a.name,
        stutz=a.stutz,
        ci=ci_option(a),
        **where(a),
        **_options(a),
    )
    if a.json:
        print(res.to_json())
        return 0
    m = res.metrics
    print(
        f"images: {m['n_images']}   superpixels per image: "
        f"{_f(m['n_superpixels'], '.1f')}   connected components: "
        f"{_f(m['n_components'], '.1f')}   split superpixels: "
        f"{_f(m['n_split'], '.2f')}" + (f"   output: {a.out}" if a.out else "")
    )
    shown = _ue_columns(a, _SHOWN)
    no_ev = m.get("ev") is None or m["ev"] != m["ev"]
    rows = [
        (
            "mean over annotators",
            *("n/a" if k == "ev" and no_ev else _f(m[k]) for k, _ in shown),
        ),
        (
            "best annotator",
            *(_f(m.get(f"{k}_best")) if f"{k}_best" in m else "" for k, _ in shown),
        ),
    ]
    print_table(rows, (res.name, *(h for _, h in shown)))
    print(
        f"boundary: {a.window}, {_f(a.tolerance, 'g')} px, {a.boundary} boundaries; "
        f"pooled BR {_f(m['br_pooled'])}, BP {_f(m['bp_pooled'])}"
    )
    if no_ev:
        print(
            "EV n/a: explained variation needs the photographs (--images, or a "
            "dataset root with its images)"
        )
    _ue_note(a, _worst_ue(getattr(res, "records", None)))
    print_intervals(res, [k for k, _ in shown])
    return 0


def _ints(text: str) -> list[int]:
    from ..errors import InputError

    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"expected comma-separated integers, got {text!r}") from None


def _cmd_sweep(a) -> int:
    from ..errors import InputError
    from ..runners import run_sweep

    k_range = None if a.k_range is None else _ints(a.k_range)
    if k_range is not None and len(k_range) != 2:
        raise InputError(f"--k-range takes two numbers, got {a.k_range!r}")
    res = run_sweep(
        [s.strip() for s in a.algorithm.split(",") if s.strip()],
        _ints(a.k),
        a.gt,
        a.images,
        a.out,
        name=a.name,
        k_range=k_range,
        max_images=a.max_images,
        plot=not a.no_plot,
        **where(a),
        **_options(a),
    )
    if a.json:
        print(res.to_json())
        return 0
    p = res.provenance["params"]
    print(
        f"images: {p['n_images']}   K range for averages: "
        f"{p['k_range'][0]:g}-{p['k_range'][1]:g}"
        + (f"   output: {a.out}" if a.out else "")
    )
    shown = _ue_columns(
        a,
        (
            ("br", "BR"),
            ("ue", "UE"),
            ("cue", "CUE"),
            ("asa", "ASA"),
            ("ev", "EV"),
            ("co", "CO"),
        ),
    )
    for alg, c in res.curves.items():
        rows = [
            (
                str(c["k"][i]),
                _f(c["n_superpixels"][i], ".0f"),
                _f(c["seconds"][i], ".3f"),
                *(_f(c[k][i]) for k, _ in shown),
            )
            for i in range(len(c["k"]))
        ]
        rows.append(
            ("average", "", "", *(_f(res.metrics[f"{alg}/avg_{k}"]) for k, _ in shown))
        )
        print_table(rows, (alg + " K", "n", "sec", *(h for _, h in shown)))
    _ue_note(
        a,
        max((v for c in res.curves.values() for v in c["ue"] if v == v), default=None),
        "as a mean over the images",
    )
    return 0


def _option(p: argparse.ArgumentParser, option: str) -> argparse.Action:
    # argparse has no public lookup of an option's action (nor a way to hide one of its
    # spellings); the table it parses with is the one place that has it
    return p._option_string_actions[option]


def _gt_help(p: argparse.ArgumentParser, more: str) -> None:
    """Add to the help of ``--gt`` what this command also reads."""
    action = _option(p, "--gt")
    assert action.help is not None  # every --gt is declared with its help
    action.help += more


def _alias(p: argparse.ArgumentParser, option: str, alias: str) -> None:
    """A hidden second spelling of ``option``: the same action, so ``required`` holds
    when either is given."""
    p._option_string_actions[alias] = _option(p, option)


def add_parsers(subparsers) -> None:
    """Register ``superpixel`` and ``superpixel-sweep`` on the sub-command parser."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "superpixel",
        help="superpixel benchmark (UE variants, CUE, ASA, BR, BP, CO, EV)",
        description="Score a folder of superpixel label maps against human "
        "segmentations: undersegmentation error (SEEDS, corrected, "
        "Levinshtein, Neubert-Protzel, SLIC-paper), ASA, boundary recall "
        "and precision, compactness, explained variation, connected "
        "components. Per image: mean over annotators and best annotator.",
    )
    add_inputs(
        p,
        formats=True,
        pred_help="superpixels: <iid>.png (16-bit), .npy, .mat, .csv (C++ layout) or .npz",
        out_help="output folder: result_superpixel.json, per_item_superpixel.csv, "
        "per_annotator.csv "
        "(and results.csv with --stutz), and records so that a rerun "
        "resumes",
    )
    _gt_help(
        p,
        "; or a folder of <iid>.npz (gt0, gt1, ...) or of the C++ benchmark's "
        "<iid>-<t>.csv",
    )
    p.add_argument(
        "--images",
        default=None,
        metavar="IMG_DIR",
        help="folder of <iid>.jpg/.png photographs (enables the explained "
        "variation; a dataset root brings its own)",
    )
    p.add_argument(
        "--stutz",
        action="store_true",
        help="also write the C++ superpixel benchmark's results.csv (its "
        "columns and conventions) to --out",
    )
    add_ci(p)
    _common(p)
    p.set_defaults(func=_cmd_superpixel)

    p = subparsers.add_parser(
        "superpixel-sweep",
        help="baseline superpixels over K: curves and K-averages",
        description="Run scikit-image baselines at several superpixel counts on a "
        "dataset split, score them, and write metric-vs-K curves (PNG) and "
        "the averages over a K range (area under the curve / width).",
    )
    p.add_argument(
        "--algorithm",
        default="slic",
        metavar="NAME[,NAME...]",
        help="slic, felzenszwalb, watershed, quickshift, seeds (needs "
        "segbench[superpixels]), or a comma list (default: slic)",
    )
    p.add_argument(
        "--k",
        default="200,400,600,800,1000,1200",
        metavar="K[,K...]",
        help="comma-separated target counts (default: 200,400,...,1200)",
    )
    p.add_argument(
        "--k-range",
        default=None,
        metavar="MIN,MAX",
        help="superpixel-count range of the averages (default: min,max of --k)",
    )
    add_inputs(
        p,
        pred=False,
        out_help="output folder: sweep.json, sweep.csv, curves.png, and records "
        "so that a rerun resumes (a new K computes only itself)",
    )
    _gt_help(
        p,
        " (a dataset root brings its photographs: --gt BSR/BSDS500/data --split "
        "val); or a folder of <iid>.npz or <iid>-<t>.csv with --images",
    )
    _alias(p, "--gt", "--bsds")  # its name before the CLI was unified
    # add_inputs's default ('human') is that of the ground-truth-only benchmarks; a sweep
    # scores algorithms and keeps the name as given
    _option(p, "--name").help = "name of the run in sweep.json (default: none)"
    p.add_argument(
        "--images",
        default=None,
        metavar="IMG_DIR",
        help="folder of <iid>.jpg/.png photographs, if the ground-truth layout has none",
    )
    p.add_argument(
        "--max-images",
        "--n-images",
        dest="max_images",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="first N images only (sorted by id)",
    )
    p.add_argument("--no-plot", action="store_true", help="skip curves.png")
    _common(p)
    p.set_defaults(func=_cmd_sweep)


__all__ = ["add_parsers"]
