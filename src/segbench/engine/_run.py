"""``run``: the one runner under every benchmark command."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, NamedTuple

from ..datasets import (
    Dataset,
    Sample,
    format_record,
    memory_sample,
    open_ground_truth,
    pair_predictions,
    parse_ids,
    run_name,
    stray_predictions,
)
from ..errors import ClusterLostError, InputError, first_names
from ..io import normalisation_hint, refuse_unreadable
from ..result import Result, provenance
from ..spec import Family, common_exts
from ._executor import map_items, open_executor, scheduler_address
from ._folder import (
    MAP_FOLDER_MARKERS,
    RunFolder,
    claim_run_folder,
    lock_run_folder,
    mark_writing,
    release_run_folder,
    result_names,
    unmark_writing,
)
from ._store import ExcludedWarning, RecordStore, fingerprint, record_key, records_digest

#: Notes of a run a user may want (a resumed run's reuse); the CLI prints them.
log = logging.getLogger("segbench")


class _Bad(NamedTuple):
    """An item's InputError as a worker returns it (path and problem kept apart, which
    an exception's pickling would join)."""

    path: str | None
    problem: str

    def error(self) -> InputError:
        """The InputError to say (its path left out when the problem names it)."""
        named = self.path and not self.problem.startswith(self.path)
        return InputError(self.problem, self.path if named else None)


def _evaluate_group(group):
    """Worker: every family's record of one sample (its files read once), or the
    InputError its files gave as a :class:`_Bad`: the run goes on and names every bad
    file at the end."""
    sample, jobs = group
    try:
        return sample.id, [family.evaluate(sample, params) for family, params in jobs]
    except InputError as exc:
        where = exc.path
        if where is None:  # say which file, even where a kernel could not
            where = sample.prediction or (
                sample.item.sources[0] if sample.item.sources else None
            )
        return sample.id, _Bad(None if where is None else str(where), exc.problem)
    finally:
        sample.release()


_BAD_SHOWN = 10  # distinct problems named, one a line, when several fail


def _raise_bad_items(failed: dict, item_ids) -> None:
    """Raise once every other item is scored and saved: one line per distinct problem
    (a run used to stop at the first bad file, so a folder with several took a run for
    each); a problem every bad item shares (a setting that fits none of them) stays one
    line, with how many images it hit."""
    bad = [failed[i] for i in item_ids if i in failed]
    groups: dict[str, list] = {}
    texts: dict[str, str] = {}
    for b in bad:
        # one problem though each message names its own file
        key = b.problem.replace(str(b.path), "\0") if b.path else b.problem
        texts.setdefault(key, b.problem)
        groups.setdefault(key, []).append(b.path)

    def line(problem, paths):
        others = list(dict.fromkeys(paths))[1:]
        if not others:
            return problem
        names = first_names([Path(o).name for o in others if o], 5)
        many = "s" if len(others) > 1 else ""
        return f"{problem} (and {len(others)} other image{many} likewise: {names})"

    def where(problem, paths):  # not "a.png: a.png is ..." when it names the file
        return None if paths[0] and problem.startswith(str(paths[0])) else paths[0]

    shown = [(texts[k], paths) for k, paths in groups.items()]
    for problem, paths in shown[1:_BAD_SHOWN]:
        log.error("error: %s", InputError(line(problem, paths), where(problem, paths)))
    problem, paths = shown[0]
    if len(shown) == 1:
        raise InputError(line(problem, paths), where(problem, paths))
    named = "named above" if len(shown) <= _BAD_SHOWN else f"{_BAD_SHOWN - 1} named above"
    rest = (
        "no image was scored"
        if len(bad) == len(item_ids)
        else "the others are scored and saved, so a rerun after fixing these resumes"
    )
    raise InputError(
        f"{line(problem, paths)}; {len(shown) - 1} other problems, {named}, in "
        f"{len(bad)} of the {len(item_ids)} images in all; {rest}",
        where(problem, paths),
    )


def _pred_folder(pred, pred_dir):
    """The prediction folder of a run: ``pred_dir`` when given, else ``pred`` unless
    it is a mapping (files from anywhere) or absent."""
    if pred_dir is not None:
        return pred_dir
    return None if pred is None or isinstance(pred, Mapping) else pred


class ThinnedTwiceWarning(UserWarning):
    """NMS asked for on maps that ``segbench nms`` thinned already."""


def _warn_thinned_twice(pred, resolved) -> None:
    """Warn when a family's ``nms`` parameter (the boundary families') would thin maps
    that ``segbench nms`` wrote: a second NMS moves the scores (3.5 ODS points on
    a QA run), and a preset turns it on without the user asking."""
    if not isinstance(pred, (str, Path)) or not any(p.get("nms") for _, p in resolved):
        return
    marker = Path(pred) / MAP_FOLDER_MARKERS["nms"]
    try:
        if not marker.is_file():
            return
    except OSError:  # an unreadable folder: refused where the predictions are paired
        return
    warnings.warn(
        f"{pred}: these maps were thinned by segbench nms already ({marker.name}); "
        "NMS is on for this run too (--nms, or the preset's), so they are thinned "
        "twice: add --nms off",
        ThinnedTwiceWarning,
        stacklevel=3,
    )


class RunFolderWarning(UserWarning):
    """A run folder is about to hold the results of two algorithms."""


def _warn_another_algorithm(folder: RunFolder, names: list[str], label: str) -> None:
    """Warn when another family's result in ``folder`` is of another algorithm (run
    name) than ``label``: the site and ``compare`` take one folder for one algorithm,
    so HED's boundary scores would sit beside gPb-owt-ucm's covering as one row."""
    import json

    for other in folder.families():
        path = folder.result_file(other)
        if other in names or path is None:
            continue
        try:
            theirs = json.loads(path.read_text(encoding="utf-8")).get("name")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(theirs, str) and theirs not in (label, "human"):
            warnings.warn(
                f"{folder.path} holds {other} results of {theirs!r} and now "
                f"{'+'.join(names)} results of {label!r}: the site and compare show "
                "a run folder as one algorithm (give each algorithm its own --out, or "
                "one --name)",
                RunFolderWarning,
                stacklevel=3,
            )


def _run_label(name, families, pred) -> str:
    """The run's name: ``name``, 'human' for the ground truth alone, else the
    prediction folder's (:func:`~segbench.datasets.run_name`)."""
    if name or not any(f.needs_predictions for f in families):
        return name or "human"
    return "predictions" if isinstance(pred, Mapping) else run_name(pred)


def refuse_another_algorithm(out, families, label: str) -> None:
    """InputError, before any work, when the run folder ``out`` holds a result of one
    of ``families`` (names) for another algorithm (run name) than ``label``: a run of
    ``label`` would replace that finished run's result and records."""
    import json

    folder = RunFolder(out)
    for name in families:
        path = folder.result_file(name)
        if path is None:
            continue
        try:
            theirs = json.loads(path.read_text(encoding="utf-8")).get("name")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(theirs, str) and theirs not in (label, "human") and label != "human":
            raise InputError(
                f"this folder holds the {name} results of {theirs!r}; a run of "
                f"{label!r} would replace them: give it its own --out (or --name "
                f"{theirs} if it is the same algorithm)",
                folder.path,
            )


def _retire_stale_image_files(out: Path, family: Family, ids, store) -> None:
    """Remove the family's per-image files (``family.per_image_files``) of ids this run
    did not score that an earlier run in ``out`` wrote: the ids with a record of the
    family in the folder's store. A rerun on fewer images (``--ids``) then leaves no
    file the summary does not count. Files of other names are never touched."""
    if not family.per_image_files or store.root is None:
        return
    kept = set(ids)
    for entry in family.per_image_files:
        folder, _, ending = entry.rpartition("/")  # 'agreement/.png': in a subfolder
        where = out / folder if folder else out
        if not where.is_dir():
            continue
        for path in where.glob(f"*{ending}"):
            iid = path.name[: -len(ending)]
            if iid and iid not in kept and store.has_record(family, iid):
                path.unlink(missing_ok=True)


def _found_exts(pred_dir) -> list[str]:
    try:
        return sorted(
            {
                p.suffix.lower().lstrip(".")
                for p in Path(pred_dir).iterdir()
                if p.is_file() and not p.name.startswith(".") and p.suffix
            }
        )
    except OSError:
        return []


def _digests(sample: Sample, family: Family, params: dict, base: dict) -> dict:
    """The input digests of one record of ``family``: ground truth (and prediction)
    plus the family's own extra files."""
    out = (
        base
        if family.needs_predictions
        else {k: v for k, v in base.items() if k in ("gt", "gt_reading")}
    )
    if family.input_files is not None:
        out = dict(out)
        for role, paths in family.input_files(sample, params).items():
            out[role] = [fingerprint(p) for p in paths]
    return out


def _family_dataset(families, gt, split):
    """The first dataset a family's own ``open_ground_truth`` makes of a ``gt`` path,
    or None."""
    if isinstance(gt, (Dataset, list, tuple)) or gt is None:
        return None
    refuse_unreadable(gt)  # before a family's probes, which name a path inside it
    for f in families:
        if f.open_ground_truth is not None:
            ds = f.open_ground_truth(gt, split)
            if ds is not None:
                return ds
    return None


def _dataset_folders(dataset) -> dict:
    """The folders a dataset's files sit in (the ground truth's and the photographs'),
    as ``claim_run_folder`` inputs: a run given a Dataset (``superpixel``,
    ``granularity``) refuses an ``--out`` inside them as a run given the path does; a
    run folder there would be read as an image next time. (Not its root: a dataset of
    imported counts has the counts' folder as its root, and a run inside it is fine.)"""
    folders: dict = {}
    for iid in dataset.ids():
        item = dataset[iid]
        for option, path in (("--gt", item.gt_path), ("--images", item.image_path)):
            if isinstance(path, (str, Path)):
                folders.setdefault(str(Path(path).parent), option)
    named: dict = {}
    for folder, option in folders.items():
        named.setdefault(option, []).append(folder)
    return named


def _family_predictions(families, ids, pred):
    """A family's own pairing of ``pred`` with the ids, or None."""
    for f in families:
        if f.needs_predictions and f.pair_predictions is not None:
            found = f.pair_predictions(ids, pred)
            if found is not None:
                return found
    return None


def _sample_digests(sample: Sample) -> dict:
    digests = {
        role: [fingerprint(path) for path in paths]
        for role, paths in sample.input_files().items()
    }
    if not digests["gt"]:  # in-memory ground truth: key by its content
        digests["gt"] = [sample.content_digest()]
    if sample.value is not None:  # in-memory prediction: key by its content
        digests["pred"] = [sample.prediction_digest()]
    if sample.item.reading:  # the same files read otherwise: other ground truth
        digests["gt_reading"] = [sample.item.reading]
    return digests


def _evaluate_joint(job):
    """Worker: one joint record (a family's work over several items)."""
    family, params, task, samples = job
    try:
        return task.key, family.evaluate_joint(samples, task.payload, params)
    finally:
        for s in samples.values():
            s.release()


def run(
    families: Family | Sequence[Family],
    gt,
    pred=None,
    out=None,
    *,
    split: str | None = None,
    presentation: str | None = None,
    ids=None,
    all_splits: bool = False,
    name: str | None = None,
    params: Mapping | None = None,
    options: Mapping | None = None,
    workers: int = 1,
    scheduler: str | None = None,
    executor=None,
    progress: bool = True,
    save_results: bool = True,
    gt_format=None,
    pred_dir=None,
) -> list[Result]:
    """Run one or more benchmark families over a dataset and its predictions.

    Pairs the inputs (:func:`segbench.datasets.open_ground_truth`,
    :func:`~segbench.datasets.pair_predictions`), reuses the records saved in ``out``
    and computes the rest on the executor, keeping each record as soon as it is done,
    then summarizes and writes every output file. Several families evaluated together
    read each image's files once and keep the same records as when run alone.

    Parameters
    ----------
    families : Family or sequence of Family
    gt : path, sequence of paths, or Dataset
        Ground truth of any layout (see :func:`~segbench.datasets.open_ground_truth`);
        several folders are taken together (their ids must differ).
    pred : path or mapping, optional
        Folder of ``<iid>.<ext>`` predictions, or a mapping of id to prediction file;
        needed unless every family scores the ground truth alone.
    out : path, optional
        Output folder (:class:`~segbench.engine.RunFolder`): records (so a rerun
        resumes), ``result_<family>.json`` and ``per_item_<family>.csv`` of each family,
        the manifest, and each family's own files. It must be new, empty or a segbench
        run folder (:func:`~segbench.engine.claim_run_folder`), else InputError before
        anything is written. None keeps nothing on disk.
    split, presentation, gt_format
        As :func:`~segbench.datasets.open_ground_truth` (``gt_format``: how the
        ground-truth files are read, recorded in the result's provenance when not the
        default).
    ids : list of str, str or path, optional
        Evaluate only these images (see :func:`~segbench.datasets.parse_ids`).
    all_splits : bool, default False
        Take every split of a dataset root (the statistics and GCE/LCE of a whole
        dataset) instead of requiring ``split``.
    name : str, optional
        Name of the run (default :func:`~segbench.datasets.run_name` of ``pred``).
    params : mapping, optional
        Record parameters; each family takes the keys it declares.
    options : mapping, optional
        Output options for summaries and writers (``plot``, human figures), and
        ``ci``: ``{"resamples": B, "level": 0.95, "seed": 0}`` to add bootstrap
        intervals over images (:mod:`segbench.resampling`) to every family that has
        a resampler.
    workers : int, default 1
        Local worker processes.
    scheduler : str, optional
        Address of a running ``dask.distributed`` scheduler to run on instead.
    executor : concurrent.futures.Executor, optional
        Any executor to run on instead (left open).
    progress : bool, default True
    save_results : bool, default True
        Write ``result_*.json``, ``per_item_*.csv``, the manifest and the families'
        files to ``out``
        (False: only records, for callers that compose several runs into one result).
    pred_dir : path, optional
        Where the files of a ``pred`` mapping were found (a folder run paired by
        name), recorded in the provenance and the manifest as the prediction folder.

    Returns
    -------
    list of Result
        One per family, in the order given. Results do not depend on ``workers``,
        ``scheduler`` or ``executor``.
    """
    families = [families] if isinstance(families, Family) else list(families)
    params, options = dict(params or {}), dict(options or {})
    if scheduler and executor is None:
        scheduler_address(scheduler)  # a malformed address fails before any work
    own = _family_dataset(families, gt, split)
    if own is not None and presentation is not None:
        raise InputError(
            f"--presentation chooses the subjects of a BSDS300 tree; {own.name} has "
            "none to choose",
            own.root,
        )
    dataset = own or open_ground_truth(
        gt,
        split=split,
        presentation=presentation,
        all_splits=all_splits,
        gt_format=gt_format,
    )
    guessed = dataset.guessed_format  # how the files were read, if guessed
    all_ids = dataset.ids()  # before --ids: a file of an image left out is not stray
    wanted = parse_ids(ids)
    if wanted is not None:
        dataset = dataset.subset(wanted)
    item_ids = dataset.ids()
    if not item_ids:
        raise InputError("no images to evaluate", dataset.root)
    resolved = [(f, f.resolve(params)) for f in families]
    _warn_thinned_twice(pred, resolved)
    for f in families:  # summary settings too (--alpha): refused before any work
        alpha = f.resolve_summary(params).get("alpha")
        if alpha is not None:
            from ..primitives import check_alpha

            check_alpha(alpha)
    preds: dict = {}
    stray_note = None  # prediction files of no image of the ground truth, said at the end
    if any(f.needs_predictions for f in families):
        if pred is None:
            raise InputError(
                f"the {families[0].name} benchmark needs a folder of predictions (--pred)"
            )
        if isinstance(pred, Mapping):
            preds = dict(pred)
            missing = [i for i in item_ids if i not in preds]
            if missing:
                covered = len(item_ids) - len(missing)
                subset = (
                    f"; the predictions cover only {covered} of the "
                    f"{len(item_ids)} images: to score those, pass their ids with "
                    "ids="
                    if covered
                    else ""
                )
                hint = normalisation_hint(missing, preds, "among the predictions")
                raise InputError(
                    f"{len(missing)} of {len(item_ids)} images have no "
                    f"prediction: {', '.join(missing[:20])}{subset}"
                    + (f"; {hint}" if hint else "")
                )
        else:
            refuse_unreadable(pred)  # as the ground truth (_family_dataset)
            first = next(f for f in families if f.needs_predictions)
            hint = (
                first.missing_hint(first.resolve(params), _found_exts(pred))
                if first.missing_hint
                else None
            )
            preds = _family_predictions(families, item_ids, pred)
            if not preds:
                exts = common_exts(families, params)
                preds = pair_predictions(item_ids, pred, exts, hint=hint)
                from ..io import list_files

                # said once the run is done: a run that fails says its error alone
                stray_note = stray_predictions(
                    pred, list_files(pred, exts, folders=False), all_ids
                )
        for f, p in resolved:
            if f.check_predictions is not None and f.needs_predictions:
                f.check_predictions({i: preds[i] for i in item_ids if i in preds}, p)
    store = RecordStore(out)
    pred_folder = _pred_folder(pred, pred_dir)
    files = {}
    lock = None
    if out is not None:
        # before anything is written: refuse a folder of the user's own files, and
        # give each family its own result file beside those of other families
        inputs = {"--gt": gt, "--pred": pred_folder}
        for option, folders in _dataset_folders(dataset).items():
            if not isinstance(inputs.get(option), (str, Path)):  # a Dataset given
                inputs[option] = folders
        claim_run_folder(out, inputs)
        files = result_names(out, families)
        folder = RunFolder(out)
        if save_results:
            refuse_another_algorithm(
                out, [f.name for f in families], _run_label(name, families, pred)
            )
        store.prepare(families)
        lock = lock_run_folder(out)
    try:
        records: dict[str, dict] = {f.name: {} for f in families}
        keys, jobs_of, todo = {}, {}, []
        for iid in item_ids:
            sample = memory_sample(dataset[iid], preds.get(iid))
            keep = store.root is not None  # without a store no key is ever compared
            base = _sample_digests(sample) if keep else None
            jobs = []
            for f, p in resolved:
                key = (
                    record_key(f, p, _digests(sample, f, p, base))
                    if base is not None
                    else None
                )
                keys[f.name, iid] = key
                rec = None if key is None else store.load(f, iid, key)  # None: no store
                if rec is None:
                    jobs.append((f, p))
                else:
                    records[f.name][iid] = rec
            if jobs:
                jobs_of[iid] = jobs
                todo.append((sample, jobs))
        reused = len(item_ids) - len(todo)
        if reused:
            log.info(
                "resumed: %d of %d images reused from the records in %s%s",
                reused,
                len(item_ids),
                out,
                f"; computing the other {len(todo)}" if todo else "",
            )
        if todo and executor is None and scheduler is None and workers > 1:
            for f, p in resolved:  # compile here once; forked workers inherit it
                if f.warm_up is not None:
                    f.warm_up(p)
        desc = "+".join(f.label or f.name for f in families)
        joint: dict[str, list] = {}
        try:
            with (
                open_executor(workers, scheduler)
                if executor is None
                else nullcontext(executor) as ex
            ):
                failed: dict[str, _Bad] = {}
                for iid, recs in map_items(
                    _evaluate_group, todo, executor=ex, progress=progress, desc=desc
                ):
                    if isinstance(recs, _Bad):
                        # said now to one watching the progress, not at the end only
                        if not failed and progress and len(todo) > 1:
                            log.warning(
                                "warning: %s; the run goes on, and names every image "
                                "it could not score at its end",
                                recs.error(),
                            )
                        failed[iid] = recs
                        continue
                    for (f, _), rec in zip(jobs_of[iid], recs):
                        key = keys[f.name, iid]
                        if key is not None:  # None: no store to keep it in
                            store.save(f, iid, key, rec)
                        records[f.name][iid] = rec
                if failed:
                    _raise_bad_items(failed, item_ids)
                for f, p in resolved:
                    if f.joint_tasks is not None:
                        joint[f.name] = _run_joint(
                            f,
                            p,
                            dataset,
                            preds,
                            item_ids,
                            [records[f.name][i] for i in item_ids],
                            store,
                            ex,
                            progress,
                        )
        except ClusterLostError as exc:  # or WorkerDiedError: a local worker killed
            # counted over the whole run: the images reused and those finished here
            done = sum(all(i in records[f.name] for f in families) for i in item_ids)
            raise type(exc)(done, len(item_ids), saved=store.root is not None) from None

        label = _run_label(name, families, pred)
        if out is not None and save_results and label != "human":
            _warn_another_algorithm(folder, [f.name for f in families], label)
        gt_dir = dataset.root if isinstance(gt, (Dataset, list, tuple)) else gt
        sources = getattr(dataset, "sources", None) or []
        if len(sources) > 1:  # folders read together: every one, not the first
            gt_dir = [str(s) for s in sources]
        where: dict[str, Any] = {
            "gt_dir": gt_dir if gt_dir is None or isinstance(gt_dir, list) else str(gt_dir),
            "pred_dir": None if pred_folder is None else str(pred_folder),
            "split": split,
            "presentation": presentation,
            "ids": wanted,
        }
        if gt_format is not None:  # recorded when given or guessed: older runs unchanged
            where["gt_format"] = format_record(gt_format)
        elif guessed is not None:
            where["gt_format"] = {**format_record(guessed[0]), "guessed_from": guessed[1]}
        # every family's items settled before any file is written: a run that leaves no
        # item to score fails whole
        scored = {f.name: scored_ids(f, p, item_ids, records[f.name]) for f, p in resolved}
        writing = out is not None and save_results
        if writing:  # named by family: another family's run leaves this mark alone
            mark_writing(out, [f.name for f, _ in resolved])
        results = []
        for f, p in resolved:
            ids_f, left_out = scored[f.name]
            recs = [records[f.name][i] for i in ids_f]
            extra = {"joint": joint[f.name]} if f.name in joint else {}
            digest = (
                None
                if store.root is None
                else records_digest([(i, keys[f.name, i]) for i in ids_f])
            )
            result = summarize_records(
                f,
                ids_f,
                recs,
                {**p, **f.resolve_summary(params)},
                options,
                name=label,
                where=where,
                excluded=left_out,
                records_key=digest,
                progress=progress,
                **extra,
            )
            if out is not None and save_results:
                outp = Path(out)
                if f.write is not None:
                    f.write(outp, result, ids_f, recs, options)
                    _retire_stale_image_files(outp, f, ids_f, store)
                json_name, csv_name = files[f.name]
                result.to_json(outp / json_name)
                result.to_csv(outp / csv_name)
                folder.retire_legacy(f.name)
            results.append(result)
        ci = (options or {}).get("ci")
        if ci and any(f.resampler is not None for f, _ in resolved):
            from ..resampling import DEFAULT_RESAMPLES, warn_if_few_resamples

            # once for the run (not per family's intervals), once its files are written
            warn_if_few_resamples(int(ci.get("resamples", DEFAULT_RESAMPLES)))
        if out is not None and save_results:
            folder.note_run(families, where)
        if writing:
            unmark_writing(out, [f.name for f, _ in resolved])
        if stray_note:
            log.info(stray_note)
        return results
    finally:
        # (the lock ends however the run ends; the writing mark stays unless every
        # file landed)
        release_run_folder(lock)


def summarize_records(
    family: Family,
    ids,
    records,
    params: dict,
    options: Mapping,
    *,
    name: str,
    where: Mapping | None = None,
    excluded=None,
    records_key: str | None = None,
    progress: bool = False,
    **extra,
) -> Result:
    """A family's :class:`Result` of per-item records, as every run ends: the summary,
    its name, records and provenance, and bootstrap intervals when ``options`` asks.

    The one place a result is made from records, shared by :func:`run` and the
    streaming evaluators (:mod:`segbench.stream`), so the two cannot disagree.

    Parameters
    ----------
    family : Family
    ids : list of str
        The items, in the order of ``records``.
    records : list
    params : dict
        Record and summary parameters, resolved (``family.resolve`` and
        ``family.resolve_summary``).
    options : mapping
        As :func:`run` (``ci``: interval settings; human figures).
    name : str
        The run's name.
    where : mapping, optional
        Inputs recorded in the provenance (folders, split); None values dropped.
    excluded : list, optional
        Items left out, as ``[{"reason", "ids"}]``.
    records_key : str, optional
        Digest of the record keys (:func:`~segbench.engine.records_digest`).
    progress : bool, default False
        A bar on stderr for bootstrap draws that take more than a second.
    **extra
        Passed to ``family.summarize`` (``joint`` records).
    """
    result = family.summarize(ids, records, params, options, **extra)
    result.name = name
    result.records = records
    result.provenance = provenance(
        **{k: v for k, v in (where or {}).items() if v is not None},
        **params,
        n_images=len(ids),
    )
    if excluded:
        result.provenance["excluded"] = excluded
    if records_key is not None:
        result.provenance["records"] = records_key
    ci = (options or {}).get("ci")
    if ci and family.resampler is not None:
        from ..resampling import intervals

        settings: dict[str, Any] = {  # intervals' keywords: int, float, int
            "resamples": int(ci.get("resamples", 1000)),
            "level": float(ci.get("level", 0.95)),
            "seed": int(ci.get("seed", 0)),
        }
        result.intervals = intervals(
            family.resampler(ids, records, params, options),
            len(ids),
            progress=progress,
            **settings,
        )
        result.provenance["ci"] = {**settings, "method": "percentile bootstrap over images"}
    return result


def scored_ids(family, params, item_ids, records) -> tuple[list, list]:
    """(the ids ``family`` scores, the ones it leaves out as ``[{"reason", "ids"}]``):
    a warning per reason, InputError when none is left."""
    if family.excluded is None:
        return list(item_ids), []
    kept: list = []
    why_of: dict[str, list] = {}  # reason -> the ids left out for it
    for iid in item_ids:
        why = family.excluded(records[iid], params)
        if why is None:
            kept.append(iid)
        else:
            why_of.setdefault(why, []).append(iid)
    left_out = [{"reason": why, "ids": ids} for why, ids in why_of.items()]
    n = len(item_ids)
    if not kept:
        raise InputError(
            "no image left to score: "
            + "; ".join(f"{len(e['ids'])} of {n} have {e['reason']}" for e in left_out)
        )
    for e in left_out:
        shown = ", ".join(e["ids"][:10]) + (" ..." if len(e["ids"]) > 10 else "")
        warnings.warn(
            f"{len(e['ids'])} of {n} images left out: they have {e['reason']} "
            f"({shown}); the {family.label or family.name} scores are over the "
            f"other {len(kept)}",
            ExcludedWarning,
            stacklevel=3,
        )
    return kept, left_out


def _run_joint(
    family, params, dataset, preds, item_ids, records, store, executor, progress
) -> list:
    """The joint records of one family, reused from the store where their key holds."""
    import hashlib
    import json

    tasks = family.joint_tasks(item_ids, records, params)
    digests = {}
    out, todo, keys = {}, [], {}
    keep = store.root is not None
    for task in tasks:
        if not keep:
            todo.append(
                (
                    family,
                    params,
                    task,
                    {i: memory_sample(dataset[i], preds.get(i)) for i in task.ids},
                )
            )
            continue
        for i in task.ids:
            if i not in digests:
                digests[i] = _sample_digests(memory_sample(dataset[i], preds.get(i)))
        payload = hashlib.sha256(
            json.dumps(task.payload, sort_keys=True).encode()
        ).hexdigest()
        key = record_key(
            family,
            {**params, "joint": task.key, "payload": payload},
            {"items": [[i, digests[i]] for i in task.ids]},
        )
        keys[task.key] = key
        rec = store.load_joint(family, task.key, key)
        if rec is None:
            todo.append(
                (
                    family,
                    params,
                    task,
                    {i: memory_sample(dataset[i], preds.get(i)) for i in task.ids},
                )
            )
        else:
            out[task.key] = rec
    for task_key, rec in map_items(
        _evaluate_joint,
        todo,
        executor=executor,
        progress=progress,
        desc=f"{family.label or family.name} (joint)",
    ):
        store.save_joint(family, task_key, keys.get(task_key), rec)
        out[task_key] = rec
    return [out[t.key] for t in tasks]
