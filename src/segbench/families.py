"""The registry of benchmarks: every benchmark named once, with its parameters.

A :class:`Benchmark` entry says which family specs (:class:`segbench.spec.Family`) it
runs, or which runner it calls when it has its own (semantic, consistency, ...), the
command-line group that shows it, and the results it makes that ``segbench compare``
can resample. A :class:`Param` declares a parameter once (name, default, help, how it
is given on the command line, whether it keys records or only the summary); the
family specs take their defaults from it, the command line generates its options from
it, and :func:`segbench.evaluate` refuses keywords that no parameter declares.

Adding a family is one package (its spec) plus one :func:`register` call (or one entry
in :data:`BENCHMARKS`); ``segbench.evaluate(name, ...)``, ``segbench NAME`` (a generic
command, unless a hand-written one exists), ``segbench compare`` and the run folder
follow (docs/engine.md, "How to add a family").

This module is pure data: it imports no numerical library (``segbench --help`` reads
it), and it is the one place that imports a family's package by its name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import InputError

__all__ = [
    "BENCHMARKS",
    "BOUNDARY_PARAMS",
    "CRISPNESS_PARAMS",
    "DEFAULT_MAX_DIST",
    "ENTRY_POINT_GROUP",
    "Metric",
    "PRESETS",
    "REGION_PARAMS",
    "SEMANTIC_BOUNDARY_PARAMS",
    "SEMANTIC_BOUNDARY_PROTOCOLS",
    "Benchmark",
    "Param",
    "add_options",
    "benchmark",
    "check_keywords",
    "comparable",
    "comparable_spec",
    "defaults",
    "family_spec",
    "known_keywords",
    "load_entry_points",
    "options_from_args",
    "register",
    "runner",
    "specs",
    "summary_defaults",
    "unregister",
]

#: The boundary protocols' names (``--preset``): segbench.boundary.PROTOCOLS, listed
#: here so that the command line needs no numerical library (a test checks the two).
PRESETS = (
    "bsr",
    "bsds500",
    "bsds300",
    "martin2004",
    "nyud",
    "biped",
    "multicue",
    "bsds-rind",
)

#: The boundary matching tolerance of the BSDS500 benchmark (BSR ``maxDist``), as a
#: fraction of the image diagonal: the one place it is written.
DEFAULT_MAX_DIST = 0.0075


@dataclass(frozen=True)
class Param:
    """One parameter of a family, declared once.

    Attributes
    ----------
    name : str
        The keyword of :func:`segbench.evaluate` and the key in records and results.
    default : object
        The value when not given (recorded as such; JSON types only).
    help : str
        The command line's help text ('' for a parameter the command line does not
        offer, such as one a calibration fills in).
    summary : bool
        True for a parameter of the summary only (not in record keys: changing it
        recomputes no record), such as the F-measure's ``alpha``.
    flag : str or None
        The command-line option; default ``--`` and the name with dashes. A boolean
        whose default is True is offered as ``--no-<name>`` (``flag`` says so).
    type : callable, optional
        Parses the option's text (default: the default's type, or ``str``); ``bool``
        makes a flag that sets True.
    parse : callable, optional
        Turns the parsed option into the value (after argparse, so its errors are
        :class:`~segbench.errors.InputError` lines, not usage errors).
    metavar : str, optional
    choices : tuple, optional
    default_text : str, optional
        How the help states the default when the value alone would mislead (a preset
        changes it).
    cli : bool
        Offered on the command line at all.
    const : object, optional
        The value of the option given without a value (``--nms`` alone); the option
        then takes an optional value.
    aliases : tuple of str
        Other command-line spellings of the option (an older name kept working).
    """

    name: str
    default: Any
    help: str = ""
    summary: bool = False
    flag: str | None = None
    type: Callable | None = None
    parse: Callable | None = None
    metavar: str | None = None
    choices: tuple | None = None
    default_text: str | None = None
    cli: bool = True
    const: Any = None
    aliases: tuple = ()

    @property
    def option(self) -> str:
        if self.flag:
            return self.flag
        dashed = self.name.replace("_", "-")
        return f"--no-{dashed}" if self.default is True else f"--{dashed}"


def _thresholds(text):
    """``--thresholds``: a count (as ``--nthresh``) or an explicit comma-separated list
    of thresholds in [0, 1], in one JSON-stable form (an int, or a sorted list)."""
    t = str(text).strip()
    if t.isdigit():
        return int(t)
    try:
        values = sorted({float(v) for v in t.split(",") if v.strip()})
    except ValueError:
        raise InputError(
            f"--thresholds is a count or a comma-separated list of numbers "
            f"in [0, 1], not {text!r}"
        ) from None
    if not values:
        raise InputError(f"--thresholds {text!r} names no threshold")
    return values


def _nms(text):
    """``--nms`` alone (True: Dollar's settings) or ``--nms r=1,s=5,m=1.01,presmooth=1``
    (a dict of the settings given; the others keep their defaults)."""
    if text is True:
        return True
    if str(text).strip().lower() in ("off", "none", "no", "false", "0"):
        return False
    out = {}
    for part in str(text).split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in ("r", "s", "m", "presmooth"):
            raise InputError(
                f"--nms takes settings r=, s=, m=, presmooth= separated by "
                f"commas (e.g. r=1,s=5,m=1.01), not {part.strip()!r}"
            )
        try:
            out[key] = (
                (value.strip().lower() in ("1", "true", "yes"))
                if key == "presmooth"
                else float(value)
                if key == "m"
                else int(value)
            )
        except ValueError:
            raise InputError(
                f"--nms {key}= takes a number, not {value.strip()!r}"
            ) from None
    return out


def _agreement(text):
    """``--min-agreement``: an integer, a fraction or 'all', in one JSON-stable form."""
    t = str(text).strip().lower()
    if t == "all":
        return "all"
    try:
        return int(t) if t.isdigit() else float(t)
    except ValueError:
        raise InputError(
            f"--min-agreement is an integer, a fraction or 'all', not {text!r}"
        ) from None


#: The boundary benchmark's parameters (boundary, all, human and agreement take their
#: subsets): record parameters first, then those of the summary.
BOUNDARY_PARAMS = (
    Param(
        "protocol",
        "bsr",
        summary=True,
        flag="--preset",
        aliases=("--protocol",),
        choices=PRESETS,
        default_text="",
        metavar="NAME",
        help="the protocol of a dataset as papers evaluate it (docs/datasets.md): "
        "bsr (the official BSDS500 code, the default), bsds500 / nyud / biped / "
        "multicue / bsds-rind (edge detection: Dollar's NMS first, each "
        "dataset's tolerance), bsds300 (its site's ranking: 30 thresholds, human "
        "maps thinned, smaller soft maps upsampled) or martin2004 (the 2004 Pb "
        "paper: bsds300 at half resolution, max-dist 0.01); the options below "
        "override its values; recorded in the result as 'protocol'",
    ),
    Param(
        "nthresh",
        99,
        metavar="N",
        default_text="99; 30 with --protocol bsds300",
        help="number of thresholds for soft maps and ucm2",
    ),
    Param(
        "thresholds",
        None,
        type=str,
        parse=_thresholds,
        metavar="N|T1,T2,...",
        help="the boundary benchmark's thresholds for soft maps: a count (as "
        "--nthresh) or an explicit comma-separated list of values in [0, 1] "
        "(a map is cut at pb >= t)",
    ),
    Param(
        "max_dist",
        DEFAULT_MAX_DIST,
        metavar="F",
        default_text="0.0075; 0.01 with --protocol martin2004",
        help="matching tolerance as a fraction of the image diagonal",
    ),
    Param(
        "max_dist_px",
        None,
        type=float,
        metavar="PX",
        help="matching tolerance in pixels instead, converted per image to the "
        "fraction of its diagonal (at half resolution under martin2004); "
        "docs/protocol.md",
    ),
    Param("thin", True, help="do not thin thresholded maps before matching"),
    Param("thin_gt", False, cli=False),
    Param("lone", "skip", cli=False),
    Param("upsample", None, cli=False),
    Param(
        "min_agreement",
        None,
        type=str,
        parse=_agreement,
        metavar="K",
        help="score against strong boundaries only: human pixels drawn by at least "
        "K annotators (an integer), a fraction of them (e.g. 0.5), or 'all' "
        "(docs/agreement.md)",
    ),
    Param(
        "nms",
        None,
        type=str,
        parse=_nms,
        const=True,
        metavar="r=R,s=S,m=M",
        help="thin raw soft maps (a CNN's output) with Dollar's edge NMS first, as "
        "HED, RCF and PiDiNet are evaluated: --nms alone for their settings (r=1, "
        "s=5, m=1.01, presmooth=1: convTri(E, 1) first), the settings to change, "
        "e.g. --nms r=2,m=1.05, or --nms off (where a preset sets it) "
        "(docs/detectors.md)",
    ),
    Param("resolution", "full", cli=False),
    Param(
        "alpha",
        0.5,
        summary=True,
        metavar="A",
        help="F-measure weight: F = PR / (A R + (1 - A) P); 0.5 is the harmonic mean "
        "of every BSDS paper",
    ),
    Param("calibrated_threshold", None, summary=True, cli=False),
    Param("calibrated_on", None, summary=True, cli=False),
    Param("calibrated_name", None, summary=True, cli=False),
)

#: The region benchmark's parameters (its own; ``all`` takes ``nthresh`` from the
#: boundary's, as allBench.m has one).
REGION_PARAMS = (
    Param(
        "labels",
        False,
        type=bool,
        help="read .png/.bmp/.tif/.npy predictions as label maps (one segmentation "
        "per image; every value is a region)",
    ),
    Param("nthresh", 99, metavar="N", help="number of ucm2 thresholds"),
)

#: The crispness benchmark's parameters (Average Crispness, and SEval/CEval: the
#: boundary benchmark after Dollar's NMS and without it).
CRISPNESS_PARAMS = (
    Param("nthresh", 99, metavar="N", help="number of thresholds"),
    Param(
        "max_dist",
        DEFAULT_MAX_DIST,
        metavar="F",
        help="matching tolerance as a fraction of the image diagonal",
    ),
    Param(
        "thin",
        True,
        help="do not thin thresholded maps before matching (in both SEval and CEval)",
    ),
    Param("nms_r", 1, metavar="R", help="SEval's NMS radius"),
    Param("nms_s", 5, metavar="S", help="SEval's NMS border band"),
    Param("nms_m", 1.01, metavar="M", help="SEval's NMS tolerance"),
    Param("nms_presmooth", True, help="SEval's NMS without convTri(E, 1) first"),
    Param(
        "alpha",
        0.5,
        summary=True,
        metavar="A",
        help="F-measure weight: F = PR / (A R + (1 - A) P)",
    ),
)

#: The semantic-boundary protocols (``--protocol``): segbench.semantic_boundary.PROTOCOLS,
#: listed here so that the command line needs no numerical library (a test checks the
#: two).
SEMANTIC_BOUNDARY_PROTOCOLS = ("sbd", "sbd-seal", "cityscapes")


def _on_off(text):
    """``on``/``off`` (also yes/no, true/false, 1/0) of an option a protocol presets."""
    t = str(text).strip().lower()
    if t in ("on", "yes", "true", "1"):
        return True
    if t in ("off", "no", "false", "0"):
        return False
    raise InputError(f"expected on or off, not {text!r}")


#: The semantic-boundary benchmark's parameters. Those left None take the protocol's
#: value (segbench.semantic_boundary.PROTOCOLS, with the source of each).
SEMANTIC_BOUNDARY_PARAMS = (
    Param(
        "protocol",
        "sbd-seal",
        choices=SEMANTIC_BOUNDARY_PROTOCOLS,
        metavar="NAME",
        flag="--preset",
        aliases=("--protocol",),
        help="sbd (the original SBD benchmark: kill internal, skip absent classes), "
        "sbd-seal (SEAL's evaluation: 5 px margin, thin ground truth) or "
        "cityscapes (SEAL's: half size, instance-sensitive, max-dist 0.0035); "
        "the options below override its values (docs/semantic-boundary.md); "
        "recorded as 'protocol'",
    ),
    Param("nthresh", 99, metavar="N", help="number of thresholds"),
    Param(
        "thresholds",
        None,
        type=str,
        parse=_thresholds,
        metavar="N|T1,T2,...",
        help="thresholds of every class's soft map: a count (as --nthresh) or an "
        "explicit comma-separated list of values in [0, 1] (a map is cut at "
        "pb >= t)",
    ),
    Param(
        "max_dist",
        None,
        type=float,
        metavar="F",
        default_text="0.02; 0.0035 with --preset cityscapes",
        help="matching tolerance as a fraction of the image diagonal",
    ),
    Param(
        "thin",
        None,
        type=str,
        parse=_on_off,
        metavar="on|off",
        default_text="on",
        help="thin thresholded predictions before matching",
    ),
    Param(
        "gt_edges",
        None,
        type=str,
        choices=("stored", "thin", "raw"),
        metavar="HOW",
        default_text="stored; thin with --preset cityscapes",
        help="ground-truth boundaries: SBD's stored Boundaries, or drawn from the "
        "label maps, thin (1 px band thinned) or raw (2 px band)",
    ),
    Param(
        "instance_sensitive",
        None,
        type=str,
        parse=_on_off,
        metavar="on|off",
        default_text="off; on with --preset cityscapes",
        help="add the boundaries between instances of a class (reads SBD inst/ or "
        "Cityscapes _instanceIds.png)",
    ),
    Param(
        "skip_if_nonexistent",
        None,
        type=str,
        parse=_on_off,
        metavar="on|off",
        default_text="on with --preset sbd, else off",
        help="an image without a class adds nothing to it (not even false positives)",
    ),
    Param(
        "kill_internal",
        None,
        type=str,
        parse=_on_off,
        metavar="on|off",
        default_text="on with --preset sbd, else off",
        help="drop predictions inside the class's region farther than the tolerance "
        "from its boundary",
    ),
    Param(
        "margin",
        None,
        type=int,
        metavar="PX",
        default_text="5 with --preset sbd-seal, else 0",
        help="pixels cropped from each side of maps and ground truth",
    ),
    Param(
        "scale",
        None,
        type=float,
        metavar="S",
        default_text="1; 0.5 with --preset cityscapes",
        help="evaluate at the ground truth's size times S (nearest; label maps are "
        "resized before thin bands are drawn); predictions must have that size",
    ),
    Param(
        "nms",
        False,
        type=bool,
        help="thin each class's raw map with Dollar's edge NMS first",
    ),
    Param(
        "n_classes",
        None,
        type=int,
        metavar="C",
        help="classes of multi-label edge PNG ground truth (SBD has 20, Cityscapes 19)",
    ),
    Param(
        "alpha",
        0.5,
        summary=True,
        metavar="A",
        help="F-measure weight: F = PR / (A R + (1 - A) P)",
    ),
)


def _named(params, names) -> tuple[Param, ...]:
    index: dict[str, Param] = {}
    for p in params:  # the first declaration of a name wins
        index.setdefault(p.name, p)
    return tuple(index[n] for n in names)


def defaults(params, names=None) -> dict:
    """``{name: default}`` of the record parameters among ``params`` (those of
    ``names``, in that order, when given): a family spec's ``defaults``."""
    chosen = params if names is None else _named(params, names)
    return {p.name: p.default for p in chosen if not p.summary}


def summary_defaults(params, names=None) -> dict:
    """``{name: default}`` of the summary parameters: a spec's ``summary_defaults``."""
    chosen = params if names is None else _named(params, names)
    return {p.name: p.default for p in chosen if p.summary}


@dataclass(frozen=True)
class Metric:
    """One score of a family's result, declared once for every surface that shows it
    (the command line's table and ``compare``'s columns, the site's ranking).

    Attributes
    ----------
    key : str
        The key in :attr:`segbench.Result.metrics` (of a per-image metric: the column
        of :attr:`segbench.Result.per_item`).
    label : str
        How the site's tables title it ('' : the key; ``compare`` titles columns by key).
    higher_is_better : bool
        False for a distance or an error (VI, GCE, UE): the site ranks such a score
        ascending and marks its best run by the smallest value.
    digits : int
        Decimals shown.
    long : str
        Its title where it stands alone, as on the site's list of algorithms ('' : the
        label).
    compare : bool
        One of ``segbench compare``'s columns.
    site : bool
        One of the site's ranking columns.
    """

    key: str
    label: str = ""
    higher_is_better: bool = True
    digits: int = 4
    long: str = ""
    compare: bool = True
    site: bool = True

    @property
    def title(self) -> str:
        return self.label or self.key

    @property
    def long_title(self) -> str:
        return self.long or self.title


def _m(*keys: str, lower: tuple = ()) -> tuple:
    """Metrics of these keys, those in ``lower`` lower-is-better."""
    return tuple(Metric(k, higher_is_better=k not in lower) for k in keys)


#: The region benchmark's scores as tables show them; the OIS of PRI and VI are on the
#: site's ranking, not among compare's columns.
_REGION_METRICS = (
    Metric("covering_ODS", "Cov ODS", long="Covering ODS"),
    Metric("covering_OIS", "Cov OIS"),
    Metric("covering_best", "Cov Best"),
    Metric("PRI_ODS", "PRI ODS"),
    Metric("PRI_OIS", "PRI OIS", compare=False),
    Metric("VI_ODS", "VI ODS", higher_is_better=False),
    Metric("VI_OIS", "VI OIS", higher_is_better=False, compare=False),
)


@dataclass(frozen=True)
class Option:
    """A keyword of :func:`segbench.evaluate` that sets a run up rather than entering
    its records (the boundary protocol preset, a calibration run, the human figures),
    declared by the benchmarks that take it; :func:`segbench.evaluate` refuses it for
    the others.

    Attributes
    ----------
    name : str
        The keyword.
    hook : (module, function) or None
        ``function(value, setup)``, called with the value given (not None, not False)
        and the :class:`RunSetup`, which it changes, in the order the benchmark
        declares its options; None: a companion read by another option's hook
        (``calibrate_name`` of ``calibrate_on``).
    help : str
        Its help, on the command line and in docs/options.md.
    metavar : str, optional
        The command line's name of its value.
    switch : bool
        An on/off option (``--human``), no value.
    cli : bool
        Offered by the benchmark's command (False: offered otherwise, as the
        protocol through the ``--preset`` parameter).
    """

    name: str
    hook: tuple | None = None
    help: str = ""
    metavar: str | None = None
    switch: bool = False
    cli: bool = True

    @property
    def option(self) -> str:
        """Its command-line option: ``--`` and the name, ``_`` as ``-``."""
        return "--" + self.name.replace("_", "-")

    def apply(self, value, setup: RunSetup) -> None:
        if self.hook is None or value is None or value is False:
            return
        from importlib import import_module

        module, func = self.hook
        getattr(import_module(module), func)(value, setup)


@dataclass
class RunSetup:
    """What a run option's hook may change before the engine runs, and what it may
    use.

    Attributes
    ----------
    benchmark : str
    params : dict
        The record and summary parameters (the hook may add or replace).
    options : dict
        The summary options (plot, human figures, ...).
    given : dict
        Every option's value as given (companions included).
    run_name : callable
        ``run_name()``: the name the run will bear.
    read_result : callable
        ``read_result(path, family)``: a run folder's (or result file's) Result.
    run_benchmark : callable
        ``run_benchmark(name)``: the Results of benchmark ``name`` run on this run's
        ground truth alone, with its parameters (the human benchmark).
    """

    benchmark: str
    params: dict
    options: dict
    given: dict
    run_name: Callable
    read_result: Callable
    run_benchmark: Callable


_BO = "segbench.boundary.options"
#: The boundary benchmark's run options (segbench.boundary.options), in hook order:
#: the protocol fills parameters the calibration then checks.
PROTOCOL_OPTION = Option(
    "protocol",
    (_BO, "apply_protocol"),
    "a preset of the boundary protocol (the --preset parameter)",
    cli=False,
)
CALIBRATION_OPTIONS = (
    Option(
        "calibrate_on",
        (_BO, "apply_calibration"),
        "a boundary run on other images (train or val): report this run's P, R, F at "
        "that run's best threshold as ODS_calibrated; it must be a run of the same "
        "name (see --calibrate-name) and protocol settings",
        metavar="RUN_DIR",
    ),
    Option(
        "calibrate_name",
        None,
        "the name of the --calibrate-on run when it is another algorithm's, to "
        "calibrate on it on purpose",
        metavar="NAME",
    ),
)
LABELS_REFUSED = Option(
    "labels",
    (_BO, "refuse_label_maps"),
    "refused: label-map images are the region benchmark's (region --labels)",
    cli=False,
)
HUMAN_OPTION = Option(
    "human",
    (_BO, "apply_human"),
    "also score each annotator against the others",
    switch=True,
)


@dataclass(frozen=True)
class Benchmark:
    """One benchmark as the user names it (``segbench.evaluate(name)``, ``segbench
    name``).

    Attributes
    ----------
    name : str
    specs : tuple of (module, attribute)
        The family specs :func:`segbench.engine.run` runs, in result order: the
        module that defines each (``'segbench.boundary'``) and its name there.
    runner : (module, function), optional
        A function of its own to call instead (``runner(gt, pred, out, **keywords)``
        for families with predictions, ``runner(gt, out, **keywords)`` otherwise),
        for benchmarks whose inputs are not a dataset and a prediction folder.
    params : tuple of Param
        The parameters the command line offers (all of them are keywords of
        :func:`segbench.evaluate`, with those the specs declare).
    help : str
        One line for ``segbench --help``.
    group : str or None
        The command-line module (``segbench.cli.<group>``) with a hand-written
        command of this name; ``'generic'`` (the default): ``segbench NAME``, made
        from the entry by ``segbench.cli.benchmark``; None: no command of its own
        (a part of another, as ``human_region`` of ``human``).
    needs_predictions : bool
    compare : bool
        Results of this benchmark resample, so ``segbench compare`` takes them.
    headline : tuple of str
        The metrics :meth:`segbench.Result.headline` shows first.
    metrics : tuple of Metric
        The scores its tables show, in their order (``segbench compare``'s columns);
        the first is the one a ranking sorts by. Empty: the headline, each higher-is-better.
    gt_help, pred_help : str
        The help of ``--gt`` and ``--pred`` of a generic command, where the family
        reads other ground truth or predictions than the boundary benchmark's ('':
        the common text).
    site : bool
        The site ranks runs of this family (a benchmark of one family, scoring an
        algorithm's predictions; not the human or dataset studies).
    per_image : tuple of Metric
        The per-image columns (keys of :attr:`segbench.Result.per_item`) an
        algorithm's page on the site lists.
    files : tuple of str
        The family's own files in a run folder besides its result and per-item table
        (the official text files), offered for download in this order.
    options : tuple of Option
        Its run options (keywords of :func:`segbench.evaluate` that set the run up).
    """

    name: str
    specs: tuple = ()
    runner: tuple | None = None
    params: tuple = ()
    help: str = ""
    group: str | None = "generic"
    needs_predictions: bool = True
    compare: bool = False
    headline: tuple = ()
    metrics: tuple = ()
    gt_help: str = ""
    pred_help: str = ""
    site: bool = True
    per_image: tuple = ()
    files: tuple = ()
    options: tuple = ()

    def shown_metrics(self) -> tuple:
        """The :class:`Metric` s ``compare``'s tables show (:attr:`metrics` so marked,
        else the headline's keys as higher-is-better scores)."""
        return tuple(m for m in self.metrics if m.compare) or _m(*self.headline)

    def site_metrics(self) -> tuple:
        """The :class:`Metric` s of the site's ranking, the first the one it ranks by
        (:attr:`metrics` so marked, else the headline's keys)."""
        return tuple(m for m in self.metrics if m.site) or _m(*self.headline)

    def metric(self, key: str) -> Metric:
        """The declared :class:`Metric` of a key; an undeclared key is a
        higher-is-better score shown as it is named."""
        return next((m for m in self.metrics if m.key == key), Metric(key))


_B, _R = "segbench.boundary", "segbench.region"

#: The entry-point group through which an installed package adds benchmarks.
ENTRY_POINT_GROUP = "segbench.families"


class _Registry(dict):
    """The benchmarks by name; the installed packages' ones (entry points of
    :data:`ENTRY_POINT_GROUP`) are read on the first lookup that misses a built-in
    name and on the first listing, so a command of a built-in family never pays for
    scanning the installed distributions (60-70 ms)."""

    _plugins_read = False

    def _read_plugins(self) -> None:
        if self._plugins_read:
            return
        self._plugins_read = True  # first: a plugin's register() looks names up
        load_entry_points(self)

    def __missing__(self, key):
        if not self._plugins_read:
            self._read_plugins()
            if dict.__contains__(self, key):
                return dict.__getitem__(self, key)
        raise KeyError(key)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def __contains__(self, key) -> bool:
        if not dict.__contains__(self, key):
            self._read_plugins()
        return dict.__contains__(self, key)

    def __iter__(self):
        self._read_plugins()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._read_plugins()
        return dict.__len__(self)

    def keys(self):
        self._read_plugins()
        return dict.keys(self)

    def values(self):
        self._read_plugins()
        return dict.values(self)

    def items(self):
        self._read_plugins()
        return dict.items(self)


def load_entry_points(registry=None) -> list[str]:
    """Register the benchmarks that installed packages declare under the entry-point
    group ``segbench.families``: each entry point names a :class:`Benchmark`, a
    sequence of them, or a function returning either. A plugin that fails to load, or
    names a benchmark that exists already, is skipped with one warning line naming the
    entry point (segbench's own commands keep working). Returns the names added.
    """
    import warnings
    from importlib.metadata import entry_points

    registry = BENCHMARKS if registry is None else registry
    added = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        where = f"entry point {ep.name!r} ({ep.value}) of group {ENTRY_POINT_GROUP!r}"
        try:
            obj = ep.load()
            if callable(obj) and not isinstance(obj, Benchmark):
                obj = obj()
            entries = [obj] if isinstance(obj, Benchmark) else list(obj)
            for entry in entries:
                if not isinstance(entry, Benchmark):
                    raise TypeError(
                        f"gives a {type(entry).__name__}, not a segbench.families.Benchmark"
                    )
                if dict.__contains__(registry, entry.name):
                    if dict.__getitem__(registry, entry.name) is entry:
                        continue  # the plugin registered itself on import
                    raise ValueError(f"a benchmark named {entry.name!r} exists already")
                register(entry)
                added.append(entry.name)
        except Exception as exc:  # noqa: BLE001 - a broken plugin is skipped
            warnings.warn(f"{where} skipped: {type(exc).__name__}: {exc}", stacklevel=2)
    return added


#: Every benchmark, by name (the installed packages' ones read when first needed).
BENCHMARKS: dict[str, Benchmark] = _Registry(
    {
        b.name: b
        for b in (
            Benchmark(
                "boundary",
                ((_B, "BOUNDARY"),),
                params=BOUNDARY_PARAMS,
                compare=True,
                group="benchmark",
                help="boundary benchmark (ODS, OIS, AP, R50)",
                headline=("ODS", "OIS", "AP", "R50"),
                metrics=_m("ODS", "OIS", "AP", "R50"),
                files=("eval_bdry.txt", "eval_bdry_thr.txt", "eval_bdry_img.txt"),
                options=(PROTOCOL_OPTION, *CALIBRATION_OPTIONS, HUMAN_OPTION),
            ),
            Benchmark(
                "region",
                ((_R, "REGION"),),
                params=REGION_PARAMS,
                compare=True,
                group="benchmark",
                help="region benchmark (covering, PRI, VI at ODS/OIS)",
                headline=("covering_ODS", "covering_OIS", "PRI_ODS", "VI_ODS"),
                metrics=_REGION_METRICS,
                files=(
                    "eval_cover.txt",
                    "eval_cover_th.txt",
                    "eval_cover_img.txt",
                    "eval_RI_VOI.txt",
                    "eval_RI_VOI_thr.txt",
                ),
                options=(HUMAN_OPTION,),
            ),
            Benchmark(
                "all",
                ((_B, "BOUNDARY"), (_R, "REGION")),
                site=False,
                group="benchmark",
                # no 'labels': the boundary family reads predictions as soft maps or
                # .mat segmentations, so label-map images would score F = 0 here
                # (region's nthresh is the boundary's: allBench.m has one)
                params=BOUNDARY_PARAMS,
                options=(
                    LABELS_REFUSED,
                    PROTOCOL_OPTION,
                    *CALIBRATION_OPTIONS,
                    HUMAN_OPTION,
                ),
                help="boundary and region benchmarks in one pass (allBench)",
            ),
            Benchmark(
                "human",
                ((_B, "HUMAN_BOUNDARY"), (_R, "HUMAN_REGION")),
                site=False,
                params=BOUNDARY_PARAMS,
                needs_predictions=False,
                group="benchmark",
                help="human consistency: each annotator against the others",
                options=(PROTOCOL_OPTION,),
            ),
            Benchmark(
                "human_boundary",
                ((_B, "HUMAN_BOUNDARY"),),
                site=False,
                params=BOUNDARY_PARAMS,
                needs_predictions=False,
                group=None,
                headline=("F", "recall", "precision"),
                options=(PROTOCOL_OPTION,),
            ),
            Benchmark(
                "human_region",
                ((_R, "HUMAN_REGION"),),
                site=False,
                needs_predictions=False,
                group=None,
                headline=("covering", "PRI", "VI"),
                metrics=_m("covering", "PRI", "VI", lower=("VI",)),
            ),
            Benchmark(
                "superpixel",
                (("segbench.superpixel", "SUPERPIXEL"),),
                compare=True,
                runner=("segbench.runners._superpixel", "run_superpixel"),
                group="superpixel",
                headline=("asa", "ue", "br", "bp", "co"),
                metrics=_m("asa", "ue", "br", "bp", "co", lower=("ue",)),
                help="superpixel benchmark (UE, CUE, ASA, BR, BP, CO, EV)",
            ),
            Benchmark(
                "semantic",
                (("segbench.semantic", "SEMANTIC"),),
                compare=True,
                runner=("segbench.runners._semantic", "evaluate_semantic"),
                group="semantic",
                headline=("mIoU", "mAcc", "aAcc"),
                help="semantic segmentation (mIoU, per-class IoU/Acc, boundary IoU)",
            ),
            Benchmark(
                "consistency",
                ((_R, "CONSISTENCY"),),
                site=False,
                needs_predictions=False,
                runner=("segbench.runners._consistency", "run_consistency"),
                group="consistency",
                headline=("GCE_same", "LCE_same"),
                metrics=_m("GCE_same", "LCE_same", lower=("GCE_same", "LCE_same")),
                help="GCE/LCE between human segmentations (Martin et al. 2001)",
            ),
            Benchmark(
                "agreement",
                ((_B, "AGREEMENT"),),
                site=False,
                needs_predictions=False,
                runner=("segbench.runners._agreement", "run_agreement"),
                group="agreement",
                help="how many annotators drew each boundary pixel",
            ),
            Benchmark(
                "stats",
                (("segbench.stats", "STATS"),),
                site=False,
                needs_predictions=False,
                runner=("segbench.runners._stats", "run_stats"),
                group="stats",
                help="ecological statistics of the human segmentations",
            ),
            Benchmark(
                "semantic_boundary",
                (("segbench.semantic_boundary", "SEMANTIC_BOUNDARY"),),
                params=SEMANTIC_BOUNDARY_PARAMS,
                compare=True,
                headline=("MF_ODS", "MF_OIS", "MAP"),
                help="semantic (category) boundaries, SBD and Cityscapes (MF-ODS, per "
                "class ODS/OIS/AP)",
                gt_help="ground truth: SBD's dataset folder (cls/, inst/, train.txt, "
                "val.txt; --split) or its cls/ folder of <id>.mat, a Cityscapes "
                "gtFine tree (or gtFine/<split>), or a folder of multi-label edge "
                "PNGs (pyEdgeEval's encoding; give --n-classes)",
                pred_help="predictions: <id>.npy or <id>.npz (C, H, W) soft maps in [0, 1], "
                "multi-label <id>.png, or one folder per class (give the first, "
                "PRED/class_001)",
            ),
            Benchmark(
                "crispness",
                ((_B, "CRISPNESS"),),
                params=CRISPNESS_PARAMS,
                headline=("AC", "SEval_ODS", "CEval_ODS", "SEval_OIS", "CEval_OIS"),
                help="Average Crispness of raw soft maps, and ODS/OIS/AP with NMS (SEval) "
                "and without (CEval) in one run",
            ),
        )
    }
)


#: The options of the generic command (segbench.cli.benchmark.add_generic) besides a
#: benchmark's own, which its parameters must not shadow.
_GENERIC_OPTIONS = frozenset(
    {
        "gt",
        "split",
        "presentation",
        "pred",
        "out",
        "name",
        "ids",
        "ci",
        "resamples",
        "level",
        "seed",
        "workers",
        "scheduler",
        "json",
        "quiet",
    }
)


def register(entry: Benchmark, *, replace: bool = False) -> Benchmark:
    """Add a benchmark to :data:`BENCHMARKS` (a family defined outside segbench, or
    in a test).

    Raises
    ------
    ValueError
        The name is taken (unless ``replace``), the entry has neither specs nor a
        runner, or a parameter of a generic command shadows one of its options
        (``--out``, ``--level``, ...).
    """
    if not entry.specs and entry.runner is None:
        raise ValueError(f"benchmark {entry.name!r} has neither family specs nor a runner")
    if dict.__contains__(BENCHMARKS, entry.name) and not replace:
        raise ValueError(f"a benchmark named {entry.name!r} is registered already")
    if entry.group == "generic":
        taken = sorted(p.name for p in entry.params if p.cli and p.name in _GENERIC_OPTIONS)
        if taken:
            raise ValueError(
                f"benchmark {entry.name!r}: parameter names taken by the "
                f"generic command's own options: {', '.join(taken)}"
            )
    BENCHMARKS[entry.name] = entry
    return entry


def benchmark(name: str) -> Benchmark:
    """The entry of a benchmark name (``-`` and ``_`` alike).

    Raises
    ------
    InputError
        An unknown name, naming those there are.
    """
    found = BENCHMARKS.get(name) or BENCHMARKS.get(name.replace("-", "_"))
    if found is None:
        raise InputError(f"unknown benchmark {name!r}; one of {', '.join(BENCHMARKS)}")
    return found


def family_spec(name: str):
    """The :class:`~segbench.spec.Family` spec of a spec name (``'BOUNDARY'``,
    ``'HUMAN_REGION'``, ...) that some benchmark runs; imports only its package.

    Raises
    ------
    KeyError
        No benchmark runs a spec of that name.
    """
    from importlib import import_module

    for entry in BENCHMARKS.values():
        for module, attr in entry.specs:
            if attr == name:
                return getattr(import_module(module), attr)
    raise KeyError(name)


def specs(name: str) -> list:
    """The family specs a benchmark runs, in result order."""
    from importlib import import_module

    return [getattr(import_module(m), a) for m, a in benchmark(name).specs]


def runner(name: str) -> Callable | None:
    """The benchmark's own runner function, or None when the engine runs its specs."""
    entry = benchmark(name)
    if entry.runner is None:
        return None
    from importlib import import_module

    module, func = entry.runner
    return getattr(import_module(module), func)


def comparable_spec(result_family: str):
    """The spec ``segbench compare`` resamples results of ``result_family`` with.

    Raises
    ------
    KeyError
        Results of that family cannot be compared.
    """
    for entry in BENCHMARKS.values():
        if entry.compare and len(entry.specs) == 1:
            spec = family_spec(entry.specs[0][1])
            if spec.name == result_family:
                return spec
    raise KeyError(result_family)


# the spec is a segbench.spec.Family: Any here, as this module sits in spec's layer and
# imports none of it
def result_entry(result_family: str) -> tuple[Benchmark, Any] | None:
    """``(entry, spec)``: the benchmark of one family whose results are of
    ``result_family`` (the ``family`` of a result file), and that family's spec; None
    when no registered benchmark makes such results alone (a family of a package not
    installed here). The entry named as the family is looked at first, so a built-in
    lookup imports only its own package."""
    from importlib import import_module

    named = BENCHMARKS.get(result_family)
    entries = ([named] if named is not None else []) + [
        b for b in BENCHMARKS.values() if b is not named
    ]
    for entry in entries:
        if len(entry.specs) != 1:
            continue
        module, attr = entry.specs[0]
        spec = getattr(import_module(module), attr)
        if spec.name == result_family:
            return entry, spec
    return None


def ranked_families(families) -> list[tuple[str, Benchmark]]:
    """``[(family, entry)]`` of the result families among ``families`` that the site
    ranks (:attr:`Benchmark.site`), in the registry's order."""
    found = {}
    for family in families:
        got = result_entry(family)
        if got is not None and got[0].site:
            found[family] = got[0]
    order = {b.name: n for n, b in enumerate(BENCHMARKS.values())}
    return sorted(found.items(), key=lambda fe: (order.get(fe[1].name, len(order)), fe[0]))


def comparable() -> list[str]:
    """The benchmark names whose results ``segbench compare`` takes."""
    return [b.name for b in BENCHMARKS.values() if b.compare]


# -- the command line ------------------------------------------------------------------


def add_options(parser, params, names=None) -> None:
    """Add the command-line options of ``params`` (those of ``names``, in that
    order) to an argparse parser. Every option defaults to None, so a value given is
    told from one left out (a preset fills those); the help states the default."""
    chosen = params if names is None else _named(params, names)
    for p in chosen:
        if not p.cli:
            continue
        text = p.help
        if p.default_text:
            text += f" (default: {p.default_text})"
        elif (
            p.default_text is None
            and p.default is not None
            and not isinstance(p.default, bool)
        ):
            text += f" (default: {p.default})"
        flags = (p.option, *p.aliases)
        if p.const is not None:
            parser.add_argument(
                *flags,
                dest=p.name,
                type=p.type or str,
                nargs="?",
                const=p.const,
                default=None,
                metavar=p.metavar,
                help=text,
            )
        elif p.default is True:
            parser.add_argument(
                *flags, dest=p.name, action="store_false", default=None, help=text
            )
        elif p.type is bool:
            parser.add_argument(
                *flags, dest=p.name, action="store_true", default=None, help=text
            )
        else:
            kind = p.type or (type(p.default) if p.default is not None else str)
            parser.add_argument(
                *flags,
                dest=p.name,
                type=kind,
                default=None,
                metavar=p.metavar,
                choices=p.choices,
                help=text,
            )


def add_run_options(parser, options) -> None:
    """Add the command-line options of a benchmark's run options (:class:`Option`
    with ``cli``) to an argparse parser."""
    for o in options:
        if not o.cli:
            continue
        if o.switch:
            parser.add_argument(o.option, dest=o.name, action="store_true", help=o.help)
        else:
            parser.add_argument(
                o.option, dest=o.name, default=None, metavar=o.metavar, help=o.help
            )


def options_from_args(args, params, names=None) -> dict:
    """The parameters given on the command line (parsed ``args``), as keywords.

    Raises
    ------
    InputError
        ``--max-dist`` and ``--max-dist-px`` both given (each sets the tolerance).
    """
    chosen = params if names is None else _named(params, names)
    out = {}
    for p in chosen:
        value = getattr(args, p.name, None) if p.cli else None
        if value is not None and p.name not in out:
            out[p.name] = p.parse(value) if p.parse is not None else value
    if "max_dist" in out and "max_dist_px" in out:
        raise InputError("--max-dist and --max-dist-px both set the tolerance; give one")
    return out


def known_keywords(name: str) -> set[str]:
    """Every parameter keyword the benchmark takes: its declared :class:`Param`
    names and the record and summary parameters of its specs."""
    out = {p.name for p in benchmark(name).params if p.cli}
    for spec in specs(name):
        out |= set(spec.defaults) | set(spec.summary_defaults)
    return out


def check_keywords(name: str, params: Mapping) -> None:
    """Refuse keywords no parameter of the benchmark declares (a misspelt one would
    otherwise be silently ignored and the run made with the default).

    Raises
    ------
    InputError
        Naming each unknown keyword and the ones there are.
    """
    known = known_keywords(name)
    unknown = sorted(set(params) - known)
    if unknown:
        raise InputError(
            f"the {name} benchmark has no parameter "
            f"{', '.join(map(repr, unknown))}; its parameters: "
            f"{', '.join(sorted(known))}"
        )


def unregister(name: str) -> None:
    """Remove a benchmark :func:`register` added (built-in ones stay)."""
    if name in _BUILT_IN:
        raise ValueError(f"{name!r} is a built-in benchmark")
    BENCHMARKS.pop(name, None)


_BUILT_IN = frozenset(dict.keys(BENCHMARKS))
