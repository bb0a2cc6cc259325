"""``segbench compare``: runs side by side, with paired tests between them."""

from __future__ import annotations

from ._common import add_ci, print_table


def _fmt(value: float, bounds=None, digits: int = 4) -> str:
    text = f"{value:.{digits}f}"
    if bounds is not None:
        text += f" [{bounds[0]:.{digits - 1}f}, {bounds[1]:.{digits - 1}f}]"
    return text


def _p(p: float) -> str:
    return "nan" if p != p else (f"{p:.2g}" if p < 0.01 else f"{p:.3f}")


def _cmd_compare(a) -> int:
    import warnings

    from ..comparison import claim_comparison_folder, compare, load_run, write_comparison
    from ..resampling import FewResamplesWarning, check_settings, warn_if_few_resamples

    check_settings(a.resamples, a.level)  # before the runs are read and --out claimed
    runs = [load_run(r) for r in a.runs]
    if a.out:  # refused before the work, not after it
        claim_comparison_folder(a.out)
    with warnings.catch_warnings():
        # said once the comparison is written: a run's file refused there is one line
        warnings.simplefilter("ignore", FewResamplesWarning)
        res = compare(*runs, resamples=a.resamples, level=a.level, seed=a.seed)
    written = write_comparison(a.out, res, runs) if a.out else []
    warn_if_few_resamples(a.resamples)
    if a.json:
        print(res.to_json())
        return 0
    from ..families import BENCHMARKS

    entry = BENCHMARKS.get(res["family"])
    order = [m.key for m in entry.shown_metrics()] if entry is not None else []
    shown = [s for s in order if s in res["runs"][0]["metrics"]] or [
        s for s in res["runs"][0]["intervals"]
    ][:4]
    level = f"{100 * res['settings']['level']:g}%"
    print(
        f"{res['family']}: {len(res['runs'])} runs on the same {res['n_images']} "
        f"image{'s' if res['n_images'] != 1 else ''}; {level} intervals from "
        f"{res['settings']['resamples']} bootstrap draws (seed {res['settings']['seed']})"
    )
    print_table(
        [
            (r["name"], *(_fmt(r["metrics"][s], r["intervals"][s]) for s in shown))
            for r in res["runs"]
        ],
        ("run", *shown),
    )
    head = shown[0]
    print()
    n = len(res["pairs"])
    holm = (
        "one pair, so no Holm correction"
        if n == 1
        else f"p-values Holm-corrected across the {n} pairs"
    )
    print(
        f"{'pair' if n == 1 else 'pairs'}: paired bootstrap of the {head} difference, "
        f"and image by image on each image's {res['item_score']} ({holm})"
    )
    rows = []
    for pair in res["pairs"]:
        b, t = pair["bootstrap"][head], pair["per_image"]
        rows.append(
            (
                f"{pair['a']} - {pair['b']}",
                _fmt(b["diff"], (b["lo"], b["hi"])),
                _p(b["p_holm"]),
                f"{t['wins_a']}/{t['wins_b']}/{t['ties']}",
                _p(t["sign_p_holm"]),
                _p(t["wilcoxon_p_holm"]),
            )
        )
    print_table(
        rows, ("pair", f"{head} diff", "p", "wins a/b/ties", "sign p", "Wilcoxon p")
    )
    if written:
        print(f"output: {', '.join(str(w) for w in written)}")
    return 0


def add_parsers(sub) -> None:
    """Register ``segbench compare``."""
    p = sub.add_parser(
        "compare",
        help="runs side by side, with paired tests between them",
        description="Compare runs of one benchmark on the same images: each run's "
        "scores with bootstrap intervals; for each pair the paired "
        "bootstrap of every score difference, win counts, the sign test "
        "and the Wilcoxon signed-rank test on per-image scores, Holm's "
        "correction across pairs. Runs on different images are refused.",
    )
    p.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="run folders (made with --out; their first family's result) "
        "or result files (result_<family>.json)",
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="OUT",
        help="write compare.json, per_item.csv (every run side by side) and, "
        "for boundary runs, pr_curve.png with every run; without --out "
        "nothing is saved",
    )
    add_ci(p, flag=False)
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.set_defaults(func=_cmd_compare)
