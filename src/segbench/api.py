"""``segbench.evaluate``: every benchmark of a folder of predictions in one call.

The functions here name the families and hand them to :func:`segbench.engine.run`;
the command line calls the same functions.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import InputError


def family_spec(name: str):
    """The family spec of a name (``"BOUNDARY"``, ``"HUMAN_BOUNDARY"``, ``"REGION"``,
    ``"HUMAN_REGION"``, ``"SUPERPIXEL"``, ``"SEMANTIC"``, ...): that of the benchmark
    registry (:func:`segbench.families.family_spec`), which imports only its package.

    Raises
    ------
    KeyError
        No benchmark runs a spec of that name.
    """
    from .families import family_spec as registered

    return registered(name)


def families(benchmark: str) -> list:
    """The :class:`~segbench.spec.Family` specs a benchmark name runs (the registry's,
    :data:`segbench.families.BENCHMARKS`)."""
    from .families import specs

    return specs(benchmark)


def human_options(results) -> dict:
    """Summary options carrying the human figures of a ``human`` run to a plot/result
    (:func:`segbench.boundary.options.human_options`)."""
    from .boundary.options import human_options as carried

    return carried(results)


def protocol_params(benchmark: str, name: str) -> dict:
    """The record and summary parameters of a protocol preset, named by ``protocol``
    (:func:`segbench.boundary.options.protocol_params`)."""
    from .boundary.options import protocol_params as preset

    return preset(benchmark, name)


def read_run(path, family: str | None = None):
    """The :class:`~segbench.result.Result` of a run folder or of a result file.

    For a folder: the result of ``family`` (``result_<family>.json``, or an older
    run's ``result.json`` holding it), by default of the first family run there
    (:class:`segbench.engine.RunFolder`).
    """
    from .engine import RunFolder

    return RunFolder(path).read(family)


def calibration(
    run,
    alpha: float = 0.5,
    *,
    name: str | None = None,
    params: dict | None = None,
    calibrate_name: str | None = None,
) -> dict:
    """The summary parameters that calibrate a boundary run on another run.

    The calibration run's dataset PR curve (from its ``result_boundary.json``) gives the
    sampled threshold of its best F (weight ``alpha``; first maximum, not interpolated):
    ``{"calibrated_threshold": t, "calibrated_on": "<folder>", "calibrated_name":
    "<its name>"}``.

    Parameters
    ----------
    run : path
        The calibration run folder (or its boundary result file).
    alpha : float, default 0.5
    name : str, optional
        The name of the run being calibrated: the calibration run must bear it (the
        same algorithm on other images), unless ``calibrate_name`` says otherwise.
    params : dict, optional
        The parameters of the run being calibrated: the calibration run's
        :data:`~segbench.boundary.options.CALIBRATION_KEYS` must equal them (defaults
        filled in on both sides).
    calibrate_name : str, optional
        The name the calibration run must bear instead of ``name``: to calibrate on
        another algorithm's run on purpose.

    Raises
    ------
    InputError
        Not a boundary run; another name; other settings (each one named).
    """
    from .boundary.options import calibration_params

    res = _read_family(run, "boundary")
    return calibration_params(
        res, run, alpha, name=name, params=params, calibrate_name=calibrate_name
    )


def _read_family(where, family: str):
    """``family``'s result in the run folder ``where``, or the result file ``where``
    (whose family the reader checks)."""
    return read_run(where, family if Path(where).is_dir() else None)


def _own_options(entry, given: dict, params: dict) -> dict:
    """Check the run options given against those ``entry`` declares; a ``protocol``
    the benchmark has as a record parameter of its own (the semantic-boundary
    family's) joins ``params``, which are returned.

    Raises
    ------
    InputError
        An option the benchmark does not take, naming those that do.
    """
    from .families import BENCHMARKS

    declared = {o.name for o in entry.options}
    for key, value in given.items():
        if value is None or value is False or key in declared:
            continue
        if any(p.name == key for p in entry.params):
            params = {**params, key: value}
            continue
        takers = [
            b.name for b in BENCHMARKS.values() if any(o.name == key for o in b.options)
        ]
        raise InputError(
            f"{key} is an option of the {', '.join(takers)} benchmarks, "
            f"not of {entry.name!r}"
        )
    return params


def _call_runner(func, entry, gt, pred, out, options: dict, params: dict):
    """Call a benchmark's own runner with the options given and its keywords; an
    option it does not take is one line naming it and those it takes."""
    import inspect

    accepted = inspect.signature(func).parameters
    keywords = {**options, **params}
    open_ended = any(p.kind is p.VAR_KEYWORD for p in accepted.values())
    unknown = [] if open_ended else sorted(k for k in keywords if k not in accepted)
    if unknown:
        takes = [k for k, p in accepted.items() if p.kind is p.KEYWORD_ONLY]
        raise InputError(
            f"the {entry.name} benchmark takes no "
            f"{', '.join(map(repr, unknown))}; its keywords: "
            f"{', '.join(takes)}"
        )
    if entry.needs_predictions:
        out_value = func(gt, pred, out, **keywords)
    else:
        if pred is not None:
            raise InputError(
                f"the {entry.name} benchmark scores the ground truth alone: "
                "give no predictions"
            )
        out_value = func(gt, out, **keywords)
    # a (Result, report) pair: the Result, which carries the report as its detail
    if (
        isinstance(out_value, tuple)
        and len(out_value) == 2
        and hasattr(out_value[0], "metrics")
    ):
        return out_value[0]
    return out_value


def memory_predictions(benchmark: str, pred: Mapping) -> dict:
    """``pred`` with every value held in memory made a validated
    :class:`~segbench.io.Prediction` (named ``pred['<id>']`` in messages); file paths
    kept as they are.

    Raises
    ------
    InputError
        An array given to a benchmark that reads no in-memory prediction, or one that
        is not a valid prediction (shape, type, NaN, range), naming its id.
    """
    from .datasets import memory_prediction

    kind = {"boundary": "boundary", "region": "region", "all": "region"}.get(benchmark)
    out = {}
    for key, value in pred.items():
        iid = _image_id(key)
        if iid in out:
            raise InputError(
                f"pred names image {iid!r} twice (as {key!r} and as "
                f"{next(k for k in pred if _image_id(k) == iid)!r})"
            )
        if isinstance(value, (str, os.PathLike)):
            out[iid] = value
            continue
        if kind is None:
            raise InputError(
                f"pred[{key!r}]: the {benchmark} benchmark reads prediction "
                "files; in-memory predictions are read by boundary, region "
                "and all"
            )
        out[iid] = memory_prediction(value, kind, f"pred[{key!r}]")
    return out


def _image_id(key) -> str:
    """An image id as the datasets name it: a string; an integer key (``100007``, as
    :class:`~segbench.BoundaryEval` accepts) is its decimal text."""
    import numpy as np

    if isinstance(key, str):
        return key
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        return str(int(key))
    raise InputError(
        f"pred's keys are image ids (strings such as '100007', or "
        f"integers), not {type(key).__name__} {key!r}"
    )


@contextmanager
def _threads(threads, workers: int, local: bool, executor: bool = False):
    """``SEGBENCH_THREADS`` set for a run (worker processes inherit it), then restored:
    ``threads``, or by default the cores the local workers leave, or one per worker of
    an executor (a pool that runs one image per worker: more threads would share its
    cores, +7% CPU per image); with a scheduler and no ``threads``, the environment is
    left as it is (its workers are not this machine's processes)."""
    if threads is None and local:
        threads = max(1, (os.cpu_count() or 1) // max(1, workers))
    elif threads is None and executor:
        threads = 1
    if threads is None:
        yield
        return
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InputError(f"threads must be a positive integer, not {threads!r}")
    before = os.environ.get("SEGBENCH_THREADS")
    os.environ["SEGBENCH_THREADS"] = str(threads)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("SEGBENCH_THREADS", None)
        else:
            os.environ["SEGBENCH_THREADS"] = before


def evaluate(
    benchmark: str,
    gt,
    pred=None,
    out=None,
    *,
    split: str | None = None,
    presentation: str | None = None,
    ids=None,
    name: str | None = None,
    workers: int = 1,
    threads: int | None = None,
    scheduler: str | None = None,
    executor=None,
    progress: bool = True,
    plot: bool = True,
    human: bool = False,
    ci=None,
    calibrate_on=None,
    calibrate_name: str | None = None,
    protocol: str | None = None,
    gt_format=None,
    preset: str | None = None,
    **params,
):
    """Run a benchmark over a folder of predictions (or the ground truth alone).

    Parameters
    ----------
    benchmark : str
        A name of the registry, :data:`segbench.families.BENCHMARKS`: 'boundary',
        'region', 'all', 'human', 'human_boundary', 'human_region', 'superpixel',
        'semantic', 'consistency', 'agreement', 'stats', and any registered since.
        'all' runs boundary and region in one pass over the files; 'human' scores each
        annotator against the others (boundary F and region measures; no ``pred``).
        Benchmarks with a runner of their own take its keywords and return what it
        returns (their modules are in :mod:`segbench.runners`): 'semantic'
        (``classes=`` required; its runner ``evaluate_semantic``), 'superpixel'
        (``run_superpixel``: ``images=``, ``stutz=``, ``max_annotators=`` and the
        measures' options), 'consistency' (``run_consistency``, its Result),
        'agreement' (``run_agreement``), 'stats' (``run_stats``, its
        EcologicalStatistics); an option of this function the runner does not take is
        refused.
    gt : path or Dataset
        Ground truth of any layout: a folder of BSDS500 ``<iid>.mat`` files, a BSDS300
        ``human/color`` tree of ``.seg`` files, a folder of edge-map or label-map
        images, or a dataset root with ``split``.
    pred : path, list of paths, or mapping, optional
        Folder of ``<iid>.png|bmp|npy|mat`` predictions (for 'boundary', a list of
        folders: the granularities of one multi-granularity detector, scored as the
        best of them per image and threshold, MuGE/SAUGE's rule, each also run alone
        into ``out/granularities/``), or a mapping of image id to
        a prediction file or to a prediction in memory (boundary, region and 'all'):
        an array (a soft map for 'boundary'; a doubleSize ucm2 or an integer label
        map for 'region' and 'all'), a list of label maps (segmentations), a tensor
        (read through ``.detach().cpu().numpy()``), or a
        :class:`~segbench.io.Prediction` (:func:`segbench.datasets.memory_prediction`).
        The records and numbers are those of the same maps read from files.
    out : path, optional
        Output folder (records for resuming, ``result_<family>.json``,
        ``per_item_<family>.csv``, the official files); None writes nothing.
    split, presentation, ids, name, workers, scheduler, executor, progress, gt_format
        As :func:`segbench.engine.run` (``gt_format``: 'edges', 'labels', or a
        :class:`~segbench.datasets.GroundTruthFormat` with the reading's settings;
        :func:`~segbench.datasets.open_ground_truth`).
    threads : int, optional
        Threads each boundary evaluation uses for one image (thresholds thinned and
        annotators matched in parallel; :func:`segbench.boundary.evaluate_image`).
        Default: the cores the worker processes leave, ``max(1, os.cpu_count() //
        workers)``; with ``executor``, one per worker (it runs one image per worker);
        with ``scheduler``, each worker's own default (every core it has, or its
        ``SEGBENCH_THREADS``). An execution setting, like
        ``workers``: records and results are the same for any value. It reaches the
        workers as the environment variable ``SEGBENCH_THREADS``, set for the run.
    plot : bool, default True
        Write ``pr_curve.png`` (boundary).
    human : bool, default False
        Also score the annotators against each other and add their figures to the
        metrics and the plot.
    ci : bool or mapping, optional
        Bootstrap intervals over images of the headline scores (``Result.intervals``):
        True for B = 1000 resamples, a 95% level and seed 0, or a mapping with any of
        ``resamples``, ``level``, ``seed``.
    calibrate_on : path, optional
        A boundary run folder (or its ``result_boundary.json``) on other images, e.g. val:
        the threshold of its best F fixes this run's ``ODS_calibrated`` (boundary).
        It must be a run of the same name scored with the same protocol settings
        (:func:`calibration`); its folder and name are recorded in the parameters
        (``calibrated_on``, ``calibrated_name``).
    calibrate_name : str, optional
        The name the calibration run bears when it is not this run's: to calibrate
        on another algorithm's run on purpose.
    protocol, preset : str, optional
        A preset of the boundary protocol (boundary, all and human benchmarks;
        :data:`segbench.boundary.PROTOCOLS`; ``preset`` is the same keyword under the
        command line's name): 'bsr' (the official code), 'bsds500', 'nyud', 'biped',
        'multicue', 'bsds-rind' (edge detection as papers evaluate it: Dollar's NMS
        first, each dataset's tolerance; docs/datasets.md), 'bsds300', 'martin2004'.
        Its values fill the parameters not given in ``params``; every value is
        recorded in the result's parameters.
        With 'all' the region benchmark takes its ``nthresh`` too, as it takes
        ``nthresh`` (allBench.m has one). 'martin2004' is the 2004 Pb paper's: half
        resolution, ``max_dist`` 0.01.
    **params
        Record parameters: ``nthresh`` (99), ``max_dist`` (0.0075), ``thin`` (True),
        ``labels`` (False: region reads label-map images only when True), ``nms``
        (None; True or a dict of :func:`segbench.boundary.edge_nms` settings: thin raw
        soft maps with Dollar's edge NMS first, as CNN evaluations do), ``min_agreement``
        (None; score against strong human boundaries only), ``resolution`` ('full';
        'half' matches at half resolution, as ``martin2004``), ``max_dist_px`` (None; a
        tolerance in pixels, converted per image to the fraction of its diagonal at the
        resolution matched, overriding ``max_dist``); summary
        parameters: ``alpha`` (0.5, the F-measure's weight of precision).

    Returns
    -------
    Result, or tuple of Result
        One Result for 'boundary' and 'region'; (boundary, region) for 'all';
        (human_boundary, human_region) for 'human'.

    Raises
    ------
    InputError
        An unknown benchmark, or a parameter keyword the benchmark does not declare
        (each one named, with those there are), besides the benchmark's own checks.

    Examples
    --------
    >>> import segbench                                           # doctest: +SKIP
    >>> res = segbench.evaluate("boundary", gt="BSR/BSDS500/data/groundTruth/test",
    ...                         pred="hed/test", out="runs/hed", workers=2)
    >>> res.metrics["ODS"], res.to_pandas().head()
    """
    from .engine import check_workers, run
    from .families import RunSetup, check_keywords, runner
    from .families import benchmark as entry_of

    if scheduler is None:  # checked before anything is read
        check_workers(workers)
    if gt is None:
        raise InputError(
            "gt: give the ground truth (a dataset root, a folder of ground-truth files, "
            "or a file)"
        )
    if preset is not None:
        if protocol is not None and protocol != preset:
            raise InputError(
                f"preset={preset!r} and protocol={protocol!r} name two protocols; give one"
            )
        protocol = preset
    entry = entry_of(benchmark)
    benchmark = entry.name
    own = runner(benchmark)
    if own is not None:
        if isinstance(pred, Mapping):  # its runner reads a folder (pathlib's TypeError)
            raise InputError(
                f"pred: the {benchmark} benchmark reads a folder of prediction files; "
                "a mapping of predictions is read by boundary, region and all"
            )
        given = dict(
            split=split,
            presentation=presentation,
            ids=ids,
            name=name,
            workers=workers,
            threads=threads,
            scheduler=scheduler,
            executor=executor,
            progress=progress,
            plot=plot,
            human=human,
            ci=ci,
            calibrate_on=calibrate_on,
            calibrate_name=calibrate_name,
            protocol=protocol,
            gt_format=gt_format,
        )
        # only the options given (not at this function's defaults) reach the runner
        usual = dict(workers=1, progress=True, plot=True, human=False)
        return _call_runner(
            own,
            entry,
            gt,
            pred,
            out,
            {k: v for k, v in given.items() if v != usual.get(k)},
            params,
        )
    # a benchmark's other declared run options arrive as keywords
    declared = {o.name: params.pop(o.name) for o in entry.options if o.name in params}
    check_keywords(benchmark, params)
    if isinstance(pred, (list, tuple)) and benchmark == "boundary":
        return _granularities(
            list(pred),
            gt,
            out,
            name=name,
            split=split,
            presentation=presentation,
            ids=ids,
            workers=workers,
            threads=threads,
            scheduler=scheduler,
            progress=progress,
            plot=plot,
            protocol=protocol,
            gt_format=gt_format,
            params=params,
        )
    if isinstance(pred, Mapping):
        pred = memory_predictions(benchmark, pred)
    where = dict(
        split=split,
        presentation=presentation,
        ids=ids,
        workers=workers,
        scheduler=scheduler,
        executor=executor,
        progress=progress,
        gt_format=gt_format,
    )
    options: dict[str, Any] = {"plot": plot}
    if ci:
        from .resampling import ci_settings

        if not any(f.resampler is not None for f in families(benchmark)):
            raise InputError(
                f"{benchmark} has no bootstrap intervals (ci / --ci): its scores "
                "are not resampled over images"
            )
        options["ci"] = ci_settings(ci)
    # the run options: each a declared option of the benchmark, whose hook sets up
    given = {
        "protocol": protocol,
        "calibrate_on": calibrate_on,
        "calibrate_name": calibrate_name,
        "human": human,
    }
    given.update(declared)
    params = _own_options(entry, given, params)

    def run_name() -> str:  # the name engine.run will give this run
        from .datasets import run_name as named

        return name or ("predictions" if isinstance(pred, Mapping) else named(pred))

    setup = RunSetup(
        benchmark,
        params,
        options,
        given,
        run_name,
        read_result=_read_family,
        run_benchmark=lambda other: run(families(other), gt, **where, params=setup.params),
    )
    with _threads(
        threads,
        workers,
        scheduler is None and executor is None,
        executor is not None and scheduler is None,
    ):
        for option in entry.options:
            option.apply(given.get(option.name), setup)
        results = run(
            families(benchmark),
            gt,
            pred,
            out,
            name=name,
            params=setup.params,
            options=setup.options,
            **where,
        )
    return results[0] if len(results) == 1 else tuple(results)


# -- a finished MATLAB run as a run folder ----------------------------------------------


def _imported_record(counts, sample, params):
    """One image's counts as read (and combined) before the run."""
    return counts[sample.id]


def _grid(thresholds):
    """Thresholds as printed (``%g``) back to the benchmark's grid when they are it
    (``linspace(1/(n+1), 1-1/(n+1), n)``, BSR and edgesEvalDir alike), else as read."""
    import numpy as np

    from .boundary import default_thresholds

    t = np.asarray(thresholds, dtype=np.float64)
    grid = default_thresholds(t.size)
    return grid if np.allclose(t, grid, rtol=0, atol=5e-6) else t


def _granularities(preds, gt, out, *, name, params, plot, progress, **common):
    """``evaluate('boundary', pred=[g1, g2, ...])``: each granularity run alone (into
    ``out/granularities/<k>-<folder name>``, or a temporary folder without ``out``),
    then :func:`import_run` of their counts as the best of them into ``out``."""
    import tempfile

    from .datasets import run_name
    from .engine import claim_run_folder

    if len(preds) < 2:
        raise InputError(
            "several prediction folders are the granularities of one "
            "detector: give two or more (or one folder)"
        )
    with tempfile.TemporaryDirectory(prefix="segbench-granularities-") as scratch:
        if out is not None:
            base = claim_run_folder(out, {"--gt": gt, "--pred": preds[0]})
            base = base / "granularities"
        else:
            base = Path(scratch)
        singles, alone = [], []
        for k, folder in enumerate(preds, start=1):
            where = base / f"{k}-{run_name(folder)}"  # hed/test: 1-hed
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                one = evaluate(
                    "boundary",
                    gt,
                    folder,
                    where,
                    progress=progress,
                    plot=False,
                    **common,
                    **params,
                )
            for w in caught:  # each granularity's warnings say which folder
                warnings.warn(f"{folder}: {w.message}", w.category, stacklevel=2)
            singles.append(where)
            alone.append(
                {
                    "pred": str(folder),
                    **{m: one.metrics[m] for m in ("ODS", "OIS", "AP", "R50")},
                }
            )
        max_dist = params.get("max_dist")
        if max_dist is None and common.get("protocol") is not None:
            max_dist = protocol_params("boundary", common["protocol"])["max_dist"]
        best = import_run(
            singles,
            out,
            gt=gt,
            split=common.get("split"),
            name=name or run_name(preds[0]),
            max_dist=max_dist,
            plot=plot,
            ids=common.get("ids"),
        )
    best.provenance["granularities"] = alone
    if out is not None:
        best.to_json(Path(out) / "result_boundary.json")
    return best


def _ev1_files(folder: Path) -> dict:
    if not folder.is_dir():
        raise InputError("folder of <iid>_ev1.txt files not found", folder)
    files = {
        p.name[: -len("_ev1.txt")]: p
        for p in sorted(folder.glob("*_ev1.txt"))
        if p.is_file() and not p.name.startswith(".")
    }
    if not files:
        raise InputError(
            "no <iid>_ev1.txt file here (the per-image counts boundaryBench.m "
            "and edgesEvalDir.m write)",
            folder,
        )
    return files


def _declared_rows(folder: Path) -> int | None:
    """The thresholds a run's ``eval_bdry_thr.txt`` lists (one a row), if it has one."""
    try:
        text = (folder / "eval_bdry_thr.txt").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return sum(1 for line in text.splitlines() if line.strip()) or None


def _refuse_cut_files(folders, found, tables) -> None:
    """InputError naming a counts file whose rows (one per threshold) are not as many
    as its folder's ``eval_bdry_thr.txt`` lists or, without one, as most files have: a
    file cut off (a run stopped as it wrote) would be summarized as read."""
    from collections import Counter

    rows = Counter(t.shape[0] for table in tables for t in table.values())
    # the most files' count; on a tie the larger, as a cut file is the shorter
    usual, n_usual = max(rows.items(), key=lambda kv: (kv[1], kv[0]))
    total = sum(rows.values())
    for folder, listing, table in zip(folders, found, tables):
        declared = _declared_rows(folder)
        expected = usual if declared is None else declared
        for iid, t in table.items():
            if t.shape[0] != expected:
                basis = (
                    f"as {n_usual} of the {total} files have"
                    if declared is None
                    else "as eval_bdry_thr.txt beside it lists"
                )
                raise InputError(
                    f"its thresholds differ from the run's: {t.shape[0]} rows where "
                    f"{expected} are expected ({basis}); the file is cut off or of "
                    "another run",
                    listing[iid],
                )


class _GranularityFiles:
    """``input_files`` of a best-of run: every granularity's file keys the record."""

    def __init__(self, by_image):
        self.by_image = by_image

    def __call__(self, sample, params):
        return {"granularities": list(self.by_image[sample.id])}


def import_run(
    ev1_dir,
    out,
    *,
    gt=None,
    split: str | None = None,
    name: str | None = None,
    max_dist: float | None = None,
    plot: bool = True,
    progress: bool = False,
    ids=None,
):
    """A finished boundary run of the MATLAB code as a segbench run folder.

    Parameters
    ----------
    ev1_dir : path, or sequence of paths
        A folder of ``<iid>_ev1.txt`` per-image counts (threshold, cntR, sumR, cntP,
        sumP a row), as BSR's ``boundaryBench.m`` and Dollar's ``edgesEvalDir.m``
        write them (and every segbench boundary run folder holds); an ``eval_bdry.txt``
        beside them is read for comparison. Several folders are the granularities of
        one multi-granularity detector (MuGE, SAUGE): per image and threshold the
        counts of the granularity whose F is highest are kept
        (:func:`segbench.boundary.best_of_granularities`).
    out : path
        The run folder to write (new, empty, or a segbench run folder): records,
        ``result_boundary.json``, the official files and the PR curve, as
        ``segbench boundary`` writes them, so ``segbench compare``, ``--ci`` and
        ``segbench site`` take it.
    gt, split : optional
        The ground truth the MATLAB run scored (any layout
        :func:`segbench.evaluate` takes): its records are then keyed by those files,
        so ``compare`` pairs the run with segbench runs on the same ground truth, and
        every image of it needs a counts file. Without it the run compares only with
        other runs imported without ground truth.
    name : str, optional
        The run's name (default: the folder's, skipping split names).
    max_dist : float, optional
        The tolerance the MATLAB run used, recorded in the result's parameters
        (default 0.0075, BSR's; it changes no number here, since the counts are
        already matched).
    plot, progress : bool
    ids : list of str, str or path, optional
        Import only these images (:func:`~segbench.datasets.parse_ids`); with ``gt``
        its other images need no counts file.

    Returns
    -------
    Result
        The boundary result of the counts as read: ODS, OIS, AP, R50 summarized by
        segbench's rules (those of ``collect_eval_bdry.m``). ``result.detail`` holds
        the summary; ``result.provenance['imported']`` the MATLAB run's own
        ``eval_bdry.txt`` figures when the folder has one.

    Raises
    ------
    InputError
        No ``_ev1.txt`` file, a malformed one (named), one of another number of rows
        than ``eval_bdry_thr.txt`` beside it lists or, without it, than most files
        have (cut off), or files of different thresholds.
    """
    from dataclasses import replace
    from functools import partial

    import numpy as np

    from .boundary import (
        BOUNDARY,
        BoundaryCounts,
        best_of_granularities,
        default_thresholds,
    )
    from .datasets import Dataset, DatasetItem, run_name
    from .engine import run
    from .io import read_ev1, read_eval_bdry

    folders = (
        [Path(d) for d in ev1_dir]
        if isinstance(ev1_dir, (list, tuple))
        else [Path(ev1_dir)]
    )
    if not folders:
        raise InputError("no folder of <iid>_ev1.txt files given")
    if out is not None and any(Path(out).resolve() == d.resolve() for d in folders):
        raise InputError(
            "--out is one of the folders read; write the run elsewhere (its "
            "files would replace the counts being imported)",
            out,
        )
    found = [_ev1_files(d) for d in folders]
    folder, files = folders[0], found[0]
    for d, other in zip(folders[1:], found[1:]):
        if set(other) != set(files):
            odd = sorted(set(other) ^ set(files))
            raise InputError(
                f"the granularities hold other images than {folder}: {', '.join(odd[:20])}",
                d,
            )
    # each file read once: its counts, on the benchmark's grid where it is that
    tables = [{iid: read_ev1(path) for iid, path in listing.items()} for listing in found]
    _refuse_cut_files(folders, found, tables)
    first_iid = next(iter(files))
    first = _grid(tables[0][first_iid][:, 0])
    per_folder = []
    for listing, table in zip(found, tables):
        counts = {}
        for iid, rows in table.items():
            t = _grid(rows[:, 0])
            if t.shape != first.shape or not np.array_equal(t, first):
                raise InputError(
                    f"its thresholds differ from those of "
                    f"{files[first_iid]} ({t.size} against {first.size}); "
                    "one run has one grid",
                    listing[iid],
                )
            counts[iid] = BoundaryCounts(
                first, *(rows[:, k].astype(np.int64) for k in range(1, 5))
            )
        per_folder.append(counts)
    from .datasets import parse_ids

    wanted = parse_ids(ids)
    if wanted is not None:
        absent = [i for i in wanted if i not in files]
        if absent and gt is None:
            raise InputError(
                f"{len(absent)} of the images asked for (--ids) have no "
                f"<iid>_ev1.txt: {', '.join(absent[:20])}",
                folder,
            )
    ids = list(files)
    if len(folders) == 1:
        records = per_folder[0]
    else:
        combined, _ = best_of_granularities([[c[i] for i in ids] for c in per_folder])
        records = dict(zip(ids, combined))
    if gt is not None:
        from .datasets import open_ground_truth

        ds = open_ground_truth(gt, split=split)
        extra = sorted(set(files) - set(ds.ids()))
        if extra:
            raise InputError(
                f"{len(extra)} counts files name images that are not in the "
                f"ground truth: {', '.join(extra[:20])}",
                folder,
            )
        missing = sorted(set(ds.ids() if wanted is None else wanted) - set(files))
        if missing:
            raise InputError(
                f"{len(missing)} images of the ground truth have no "
                f"<iid>_ev1.txt: {', '.join(missing[:20])}",
                folder,
            )
    else:
        ds = Dataset()
        ds.root = folder
        ds._protos = {iid: DatasetItem(iid, "test") for iid in files}
    params = {
        "nthresh": int(first.size),
        "max_dist": BOUNDARY.defaults["max_dist"] if max_dist is None else max_dist,
    }
    if not np.array_equal(first, default_thresholds(first.size)):
        params["thresholds"] = first.tolist()
    family = replace(BOUNDARY, evaluate=partial(_imported_record, records), warm_up=None)
    if len(folders) > 1:  # every granularity's file keys the record
        family = replace(
            family,
            input_files=_GranularityFiles(
                {iid: tuple(listing[iid] for listing in found) for iid in files}
            ),
        )
    (result,) = run(
        [family],
        ds,
        dict(files),
        out,
        name=name or run_name(folder),
        params=params,
        options={"plot": plot},
        progress=progress,
        ids=wanted,
    )
    official = folder / "eval_bdry.txt"
    if len(folders) == 1 and official.is_file():
        try:
            result.provenance["imported"] = read_eval_bdry(official)
        except (OSError, ValueError):
            pass
        else:
            if out is not None:
                result.to_json(Path(out) / "result_boundary.json")
    return result
