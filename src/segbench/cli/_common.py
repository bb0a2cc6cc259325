"""Options and output helpers shared by every ``segbench`` sub-command.

Nothing here imports a numerical library: ``segbench --help`` must stay fast.
"""

from __future__ import annotations

import argparse


class HelpFormatter(argparse.HelpFormatter):
    """Shows each option's default, unless it is empty or the help already says it."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if (
            "default" in text
            or default is None
            or default is argparse.SUPPRESS
            or isinstance(default, (bool, list, tuple))
            or not action.option_strings
        ):
            return text
        return f"{text} (default: %(default)s)"


#: Under a table with an R50 of 'n/a': why it has none.
R50_NOTE = (
    "n/a: R50 is the recall where precision falls to 0.5; this curve never reaches it"
)


def add_common(
    p: argparse.ArgumentParser, *, workers: bool = True, scheduler: bool = False
) -> None:
    """``--workers`` and ``--scheduler`` (optional), ``--json`` and ``--quiet``."""
    if workers:
        p.add_argument(
            "--workers",
            type=int,
            default=1,
            metavar="N",
            help="local worker processes (results are identical for any number)",
        )
    if scheduler:
        p.add_argument(
            "--scheduler",
            default=None,
            metavar="ADDRESS",
            help="run on a running dask.distributed scheduler "
            "(tcp://host:port or a scheduler .json file) instead; "
            "results are identical",
        )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def add_inputs(
    p: argparse.ArgumentParser,
    *,
    pred: bool = True,
    pred_help: str = "folder of predictions <iid>.<ext>",
    out_help: str = "output folder: result_<family>.json, "
    "per_item_<family>.csv, the official files, and records "
    "so that a rerun resumes",
    several: bool = False,
    gt_help: str | None = None,
    layouts: bool = True,
    presentation: bool = True,
    formats: bool = False,
    several_pred: bool = False,
    name_help: str | None = None,
) -> None:
    """The input options of every command that scores a dataset (``several``: ``--gt``
    takes several folders, and a dataset root's splits are all used without
    ``--split``; ``layouts=False``: no ``--split``/``--presentation``, for a plain
    folder of files; ``presentation=False``: ``--split`` without BSDS300's
    ``--presentation``, for a family with ground truth of its own; ``formats``: the
    ground-truth reading options, ``--gt-format`` and its settings)."""
    p.add_argument(
        "--gt",
        required=True,
        metavar="GT",
        nargs="+" if several else None,
        help=gt_help
        or "ground truth: a folder of BSDS500 <iid>.mat, a "
        "BSDS300 human/color (or gray) tree of <uid>/<iid>.seg, or a "
        "dataset root (BSR/BSDS500/data, BSDS300) with --split"
        + ("; several folders are taken together" if several else ""),
    )
    if layouts:
        p.add_argument(
            "--split",
            default=None,
            metavar="S",
            help="split of a dataset root (train, val, test)"
            + ("; default: all" if several else ""),
        )
    if layouts and presentation:
        p.add_argument(
            "--presentation",
            choices=("color", "gray", "all"),
            default=None,
            help="BSDS300: segmentations made on colour images (the "
            "default), on grayscale ones, or both",
        )
    if formats:
        add_gt_format(p)
    if pred:
        p.add_argument(
            "--pred",
            required=True,
            metavar="PRED",
            help=pred_help,
            nargs="+" if several_pred else None,
        )
    p.add_argument(
        "--out",
        default=None,
        metavar="OUT",
        help=out_help + "; without --out nothing is saved",
    )
    p.add_argument(
        "--name",
        default=None,
        metavar="NAME",
        help=name_help
        or "name of the run in results, plots and the site (default: "
        + (
            "name.txt in PRED, else its folder name, skipping split names)"
            if pred
            else "'human')"
        ),
    )
    p.add_argument(
        "--ids",
        default=None,
        metavar="LIST|FILE",
        help="evaluate only these image ids: separated by commas or spaces, or a file "
        "of ids, one per line (spaces in a line are part of its id; # starts a comment)",
    )


#: ``--gt-format`` choices: segbench.datasets.GT_FORMATS (not imported here: it loads
#: numpy; tests/test_edge_ground_truth.py checks the two agree).
GT_FORMAT_CHOICES = (
    "auto",
    "bsds",
    "edges",
    "labels",
    "multicue-edges",
    "multicue-boundaries",
)


def add_gt_format(p: argparse.ArgumentParser) -> None:
    """``--gt-format`` and the settings of the edge-map and label-map readers."""
    g = p.add_argument_group("ground-truth files (docs/datasets.md)")
    g.add_argument(
        "--gt-format",
        choices=GT_FORMAT_CHOICES,
        default=None,
        help="how --gt's files are read: bsds (.mat/.seg), edges (edge-map "
        "images: 0/255 or 0/1 maps are edges where nonzero), labels "
        "(label maps: boundaries where labels change, and regions), "
        "multicue-edges or multicue-boundaries (a Multicue tree's two "
        "annotations) (default: auto, from the files and the dataset's "
        "layout; an ambiguous folder is named)",
    )
    g.add_argument(
        "--gt-threshold",
        type=float,
        default=None,
        metavar="T",
        help="edges: a pixel of a graded (anti-aliased, JPEG) map is an edge "
        "at T of full scale or more (default: 0.5; binary maps: nonzero)",
    )
    g.add_argument(
        "--gt-void",
        default=None,
        metavar="L[,L...]",
        help="labels: labels of unlabelled pixels (e.g. 255 for PASCAL VOC, "
        "0 for NYUD); no region, no boundary",
    )
    g.add_argument(
        "--gt-variable",
        default=None,
        metavar="NAME",
        help="the .mat variable holding each map (edges, labels)",
    )


def gt_format_option(a):
    """The ``gt_format`` keyword from parsed options: None when none was given."""
    name = getattr(a, "gt_format", None)
    threshold = getattr(a, "gt_threshold", None)
    void = getattr(a, "gt_void", None)
    variable = getattr(a, "gt_variable", None)
    if name is None and threshold is None and void is None and variable is None:
        return None
    from ..datasets import GroundTruthFormat
    from ..errors import InputError

    labels = ()
    if void is not None:
        try:
            labels = tuple(int(v) for v in str(void).split(",") if v.strip())
        except ValueError:
            raise InputError(
                f"--gt-void takes integer labels separated by commas, not {void!r}"
            ) from None
    return GroundTruthFormat(
        name or "auto", threshold=threshold, void=labels, variable=variable
    )


def int_at_least(low: int):
    """An argparse type: an integer of at least ``low`` (one line naming the option)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(
                f"must be {low} or more, got {value}"
                if low == 0
                else f"must be at least {low}, got {value}"
            )
        return value

    parse.__name__ = f"integer of at least {low}"  # argparse names the type in errors
    return parse


#: ``--seed``: a non-negative integer (numpy's generators take no negative seed).
seed_int = int_at_least(0)


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free one) to 65535."""
    value = int_at_least(0)(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, got {value}")
    return value


def add_ci(p: argparse.ArgumentParser, *, flag: bool = True) -> None:
    """``--ci`` and the bootstrap settings (``flag=False``: the settings only, for a
    command that always resamples)."""
    g = p.add_argument_group("bootstrap over images")
    if flag:
        g.add_argument(
            "--ci", action="store_true", help="bootstrap intervals for every headline score"
        )
    g.add_argument(
        "--resamples",
        type=int,
        default=1000,
        metavar="B",
        help="bootstrap resamples (draws of the images): at least 2; below 200 "
        "the intervals are coarse (a warning says so)",
    )
    g.add_argument(
        "--level",
        type=float,
        default=0.95,
        metavar="L",
        help="interval coverage (0.95 = 95%%)",
    )
    g.add_argument(
        "--seed", type=seed_int, default=0, metavar="N", help="seed of the resampling"
    )


def ci_option(a):
    """The ``ci`` setting of the library from ``--ci`` and its options (None without)."""
    if not getattr(a, "ci", False):  # a command without resampled results has no --ci
        return None
    return {"resamples": a.resamples, "level": a.level, "seed": a.seed}


def print_intervals(res, names=None, *, percent: bool = False) -> None:
    """One line of a result's bootstrap intervals (nothing without them); ``percent``:
    the scores and bounds in percent, for a command whose table prints percent."""
    if not res.intervals:
        return
    ci = res.provenance.get("ci", {})
    shown = [k for k in (names or res.intervals) if k in res.intervals]

    def text(k):
        if not percent:
            return res.interval_text(k)
        lo, hi = res.intervals[k]
        return f"{100 * res.metrics[k]:.2f} [{100 * lo:.2f}, {100 * hi:.2f}]"

    print(
        f"{100 * ci.get('level', 0.95):g}% intervals ({ci.get('resamples')} bootstrap "
        f"draws of the images, seed {ci.get('seed')}): "
        + "  ".join(f"{k} {text(k)}" for k in shown)
    )


def where(a) -> dict:
    """The engine's input and execution keywords from parsed options."""
    out = {
        "split": a.split,
        "presentation": getattr(a, "presentation", None),
        "ids": a.ids,
        "workers": a.workers,
        "scheduler": a.scheduler,
        "progress": not a.quiet,
    }
    fmt = gt_format_option(a)
    if fmt is not None:
        out["gt_format"] = fmt
    return out


def print_table(rows: list[tuple], header: tuple) -> None:
    """Print rows as a plain aligned table: first column left, the others right."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        print(
            "  ".join(
                str(v).rjust(w) if i else str(v).ljust(w)
                for i, (v, w) in enumerate(zip(r, widths))
            )
        )
