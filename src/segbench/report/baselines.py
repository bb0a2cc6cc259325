"""``segbench baselines``: every detector and segmenter of the package on a dataset
split, scored by the boundary and region benchmarks, ranked in one table and on the site.

The output folder holds::

    OUT/.segbench-baselines      marks the folder as this command's (the settings)
    OUT/maps/<algorithm>/        the maps of each algorithm: <iid>.png soft maps, or
                                 <iid>.mat (ucm2 hierarchies, segs lists)
    OUT/runs/<algorithm>/        its run folder (segbench boundary or all)
    OUT/runs/human/              the annotators scored against each other
    OUT/baselines.json, .md      the table, with the published figures beside
    OUT/site/                    the benchmark site with every algorithm ranked

Resuming: every map has a record (:class:`segbench.engine.MapRecords`) and every
scored image one (:class:`segbench.engine.RecordStore`), so a killed run, rerun with the
same settings, makes and scores only what it had not finished; a finished algorithm is
only re-summarized from its records. The folder is claimed with
:func:`segbench.io.claim_folder`: nothing a user made is ever written over.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TypedDict

from ..errors import InputError
from ..io import (
    atomic_write_text,
    claim_folder,
    ensure_dir,
    list_files,
    read_image,
    write_segs,
)

#: The file that marks a folder written by ``segbench baselines``.
MARKER = ".segbench-baselines"

#: The superpixel counts of ``segbench superpixel-sweep`` (its ``--k`` default): SLIC
#: and Felzenszwalb are scored as hierarchies-by-list of one segmentation per K.
SWEEP_KS = (200, 400, 600, 800, 1000, 1200)

#: Segment counts of ``ncut`` (one segmentation per count, scored as a segs list).
NCUT_KS = (2, 3, 4, 6, 8, 12, 16, 24, 32)


class _UcmOptions(TypedDict):  # keywords of algorithms.ucm_file
    orientations: int
    smooth: float
    raw: bool


#: OWT-UCM of a detector's thinned soft map: blurred by sigma 1 first (a one-pixel line's
#: watershed floods through its gaps otherwise) and merge levels the mean strengths (BSR's
#: logistic is fitted to gPb and saturates on other detectors): ``segbench ucm --smooth 1
#: --levels mean``, the settings of docs/detectors.md's HED-owt-ucm.
UCM_OPTIONS: _UcmOptions = {"orientations": 8, "smooth": 1.0, "raw": True}


@dataclass(frozen=True)
class Baseline:
    """One algorithm of the table.

    Attributes
    ----------
    kind : {'soft', 'ucm', 'segs'}
        What it writes: soft boundary maps (.png, boundary benchmark), ucm2
        hierarchies or segs lists (.mat, boundary and region benchmarks).
    made_from : str
        'image' (the photograph), 'hed' (the ``hed`` folder) or the name of the
        algorithm whose soft maps it turns into hierarchies.
    about : str
        One line on what it is, for the table and the site.
    published : dict
        Figures a paper gives for it on the BSDS500 (``ODS``, ``OIS``, ``AP``,
        ``covering``, ``PRI``, ``VI``) and ``source``.
    scoring : dict
        Benchmark parameters of its own (gPb's raw maps are thinned by edge NMS first,
        as docs/detectors.md scores them).
    """

    kind: str
    made_from: str
    about: str
    published: dict
    scoring: dict = field(default_factory=dict)


_ARBELAEZ = "Arbelaez et al. 2011, BSDS500 test, Tables 1-2"

#: The two algorithms made together, from one gPb per image, when both are run.
GPB_PAIR = ("gpb", "gpb-owt-ucm")

#: Every baseline, in the table's order before ranking.
BASELINES = {
    "gm": Baseline("soft", "image", "gradient magnitude of L*a*b*, thinned", {}),
    "canny": Baseline(
        "soft",
        "image",
        "Canny, soft (hysteresis levels)",
        {"ODS": 0.60, "OIS": 0.63, "AP": 0.58, "source": _ARBELAEZ},
    ),
    "pb-bg": Baseline("soft", "image", "Pb, brightness gradient", {}),
    "pb-cg": Baseline("soft", "image", "Pb, colour gradient", {}),
    "pb-tg": Baseline("soft", "image", "Pb, texture gradient", {}),
    "pb-bgtg": Baseline("soft", "image", "greyscale Pb (Martin et al. 2004)", {}),
    "pb-cgtg": Baseline(
        "soft",
        "image",
        "colour Pb (Martin et al. 2004)",
        {"ODS": 0.65, "source": "Arbelaez et al. 2011, on the BSDS300"},
    ),
    "2mm": Baseline("soft", "image", "second moment matrix", {}),
    "gpb": Baseline(
        "soft",
        "image",
        "gPb (Arbelaez et al. 2011), edge NMS",
        {"ODS": 0.71, "source": _ARBELAEZ},
        {"nms": True},
    ),
    "gpb-owt-ucm": Baseline(
        "ucm",
        "image",
        "gPb-owt-ucm (Arbelaez et al. 2011)",
        {
            "ODS": 0.73,
            "OIS": 0.76,
            "AP": 0.73,
            "covering": 0.59,
            "PRI": 0.83,
            "VI": 1.69,
            "source": _ARBELAEZ,
        },
    ),
    "se": Baseline(
        "soft",
        "image",
        "structured edge forest (Dollar and Zitnick 2015), single scale, sharpen 2, "
        "edge NMS; trained here on the train split",
        {"ODS": 0.73, "source": "Dollar and Zitnick 2015, BSDS500 test, single scale"},
        {"nms": {"presmooth": False}},
    ),
    "se-owt-ucm": Baseline("ucm", "se", "OWT-UCM of the se maps", {}),
    "canny-owt-ucm": Baseline("ucm", "canny", "OWT-UCM of the canny maps", {}),
    "pb-owt-ucm": Baseline("ucm", "pb-cgtg", "OWT-UCM of the pb-cgtg maps", {}),
    "hed-owt-ucm": Baseline("ucm", "hed", "OWT-UCM of the given HED maps", {}),
    "ncut": Baseline(
        "segs",
        "image",
        f"multiway normalized cut on SLIC superpixels, K = {','.join(map(str, NCUT_KS))}",
        {},
    ),
    "felzenszwalb": Baseline(
        "segs", "image", "Felzenszwalb-Huttenlocher at the superpixel sweep's K", {}
    ),
    "slic": Baseline("segs", "image", "SLIC at the superpixel sweep's K", {}),
}

#: Published figures of the annotators scored against each other (BSDS500).
HUMAN_PUBLISHED = {
    "ODS": 0.80,
    "OIS": 0.80,
    "covering": 0.72,
    "PRI": 0.88,
    "VI": 1.17,
    "source": _ARBELAEZ,
}

#: The columns of the table: (metric key in the results, column name).
COLUMNS = (
    ("ODS", "ODS"),
    ("OIS", "OIS"),
    ("AP", "AP"),
    ("covering_ODS", "covering"),
    ("PRI_ODS", "PRI"),
    ("VI_ODS", "VI"),
)


def algorithm_names(text=None, *, hed: bool = False) -> list[str]:
    """The algorithms to run, in the table's order.

    Parameters
    ----------
    text : str or sequence of str, optional
        A comma-separated list or a sequence of names of :data:`BASELINES`; None: every
        one (``hed-owt-ucm`` only with ``hed``).
    hed : bool, default False
        HED maps are given.

    Returns
    -------
    list of str

    Raises
    ------
    InputError
        An unknown name (the error lists the known ones), or ``hed-owt-ucm`` without
        ``hed``.
    """
    if text is None:
        return [a for a in BASELINES if a != "hed-owt-ucm" or hed]
    names = [
        s.strip() for s in (text.split(",") if isinstance(text, str) else text) if s.strip()
    ]
    unknown = [a for a in names if a not in BASELINES]
    if unknown or not names:
        raise InputError(
            f"--algorithms: unknown {', '.join(map(repr, unknown)) or 'empty list'}"
            f"; choose from {', '.join(BASELINES)}"
        )
    if "hed-owt-ucm" in names and not hed:
        raise InputError("--algorithms hed-owt-ucm needs the HED maps: give --hed DIR")
    return [a for a in BASELINES if a in names]


def _segs(image, algorithm: str) -> list:
    """The segs list of a segmenter: one label map (labels from 1) per K."""
    from ..algorithms import felzenszwalb, slic
    from ..algorithms.segmenters import prepare_ncut

    ks: tuple[int, ...]
    if algorithm == "ncut":
        run, ks = prepare_ncut(image), NCUT_KS
    else:
        run, ks = (
            partial({"slic": slic, "felzenszwalb": felzenszwalb}[algorithm], image),
            SWEEP_KS,
        )
    return [run(k) + 1 for k in ks]


def make_map(
    job, *, algorithm: str | tuple[str, str], se_model=None
) -> str | tuple[str, str]:
    """Make one map of ``algorithm`` (module level, so worker processes can run it).

    Parameters
    ----------
    job : (str, str)
        ``(src, dst)``: the photograph (or the soft map an OWT-UCM is made from) and
        the file to write (``.png`` soft map, ``.mat`` ucm2 or segs); for
        :data:`GPB_PAIR`, ``dst`` is the pair ``(gpb .png, gpb-owt-ucm .mat)``.
    algorithm : str
        A name of :data:`BASELINES`, or :data:`GPB_PAIR`: gPb's soft map and its
        gPb-owt-ucm from one gPb of the photograph.
    se_model : path, optional
        The structured edge forest of ``se`` (:func:`segbench.algorithms.se_file`).

    Returns
    -------
    str or (str, str)
        ``dst``.

    Raises
    ------
    InputError
        Naming ``src`` when it cannot be read or processed.
    """
    src, dst = job
    if algorithm == GPB_PAIR:
        from ..algorithms import gpb_file

        gpb_file(src, dst[0], output="soft", ucm_dst=dst[1])
        return dst
    assert isinstance(algorithm, str)  # GPB_PAIR is the one pair of names
    base = BASELINES[algorithm]
    if algorithm == "se":
        from ..algorithms import se_file

        se_file(src, dst, se_model)
    elif base.kind == "soft" and algorithm == "gpb":
        from ..algorithms import gpb_file

        gpb_file(src, dst, output="soft")
    elif base.kind == "soft":
        from ..algorithms import detect_file

        detect_file(src, dst, algorithm)
    elif algorithm == "gpb-owt-ucm":
        from ..algorithms import gpb_file

        gpb_file(src, dst, output="ucm")
    elif base.kind == "ucm":
        from ..algorithms import ucm_file

        ucm_file(src, dst, **UCM_OPTIONS)
    else:
        try:
            segs = _segs(read_image(src), algorithm)
        except InputError as e:
            raise (InputError(e.problem, src) if e.path is None else e) from None
        write_segs(dst, segs)
    return dst


def _make_gpb_pair(
    records: dict, photos: dict, ids, maps: dict, *, executor, workers, progress
) -> None:
    """Make the gpb and gpb-owt-ucm maps that either of their records lacks, both from
    one gPb of each photograph (remaking a map that was there gives the same bytes)."""
    from ..engine import map_items

    soft, ucm = (records[a] for a in GPB_PAIR)
    missing = {Path(dst).stem for r in (soft, ucm) for _, dst in r.todo}
    jobs = [
        (
            str(photos[i]),
            (str(maps["gpb"] / f"{i}.png"), str(maps["gpb-owt-ucm"] / f"{i}.mat")),
        )
        for i in ids
        if i in missing
    ]
    for soft_dst, ucm_dst in map_items(
        partial(make_map, algorithm=GPB_PAIR),
        jobs,
        workers=workers,
        executor=executor,
        progress=progress and bool(jobs),
        desc="gpb + gpb-owt-ucm",
    ):
        soft.keep(soft_dst)
        ucm.keep(ucm_dst)


def _photographs(ds, ids) -> dict:
    """Image id -> photograph of every image to run on; InputError naming the first id
    without one."""
    found = {}
    for iid in ids:
        path = ds[iid].image_path
        if path is None:
            raise InputError(
                f"image {iid} has no photograph: --gt must be a dataset root "
                "with images/ (BSR/BSDS500/data)",
                ds.root,
            )
        found[iid] = Path(path)
    return found


def _hed_maps(hed, ids) -> dict:

    found = list_files(Path(hed), (".png", ".bmp", ".npy"))
    missing = [i for i in ids if i not in found]
    if missing:
        raise InputError(
            f"no HED map for {len(missing)} of {len(ids)} images (e.g. {missing[0]}.png)",
            hed,
        )
    return {i: found[i] for i in ids}


def _table_row(name: str, metrics: dict, published: dict, about: str) -> dict:
    return {
        "algorithm": name,
        "about": about,
        **{col: _number(metrics.get(key)) for key, col in COLUMNS},
        "published": {k: v for k, v in published.items()},
    }


def _number(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def table_markdown(rows, *, n_images: int, split: str, command: str | None = None) -> str:
    """The ranked table as Markdown: our figures, and the published one beside each
    where a paper gives it (``ours (published)``).

    Parameters
    ----------
    rows : list of dict
        The ``rows`` of :func:`run_baselines`.
    n_images : int
    split : str
    command : str, optional
        The command line that made the table, for its caption.

    Returns
    -------
    str
    """
    head = ["algorithm", *(c for _, c in COLUMNS), "published figures from"]
    lines = [
        f"Baselines on {n_images} {split} images"
        + (f", made by `{command}`" if command else "")
        + ". Published figures "
        "(in parentheses) are on the full test set of the paper named in the last "
        "column.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for r in rows:
        cells = []
        for _, col in COLUMNS:
            v, p = r[col], r["published"].get(col)
            text = "" if v is None else f"{v:.3f}"
            if p is not None:
                text += f" ({p:.2f})"
            cells.append(text)
        lines.append(
            f"| {r['algorithm']} | "
            + " | ".join(cells)
            + f" | {r['published'].get('source', '')} |"
        )
    return "\n".join(lines) + "\n"


def _se_forest_file(gt, out: Path, se_model, *, workers, scheduler, say, progress) -> Path:
    """The finished structured edge forest of ``se``: ``se_model`` as it is, or trained
    into it (default ``OUT/models/se.npz``) on the train split of ``gt``."""
    from ..algorithm_folders import train_se
    from ..algorithms import load_forest
    from ..datasets import BSDS500

    path = Path(se_model) if se_model is not None else out / "models" / "se.npz"
    if path.exists():
        forest = load_forest(path)  # a damaged or foreign file: one line naming it
        if forest.complete:
            say(
                f"se: the structured edge forest of {path} ({forest.options.n_trees} trees)"
            )
            return path
    # the split it trains on, checked here: the error says what se needs
    try:
        has_train = (BSDS500(gt).root / "images" / "train").is_dir()
    except InputError as e:
        has_train, reason = False, e.problem
    else:
        reason = "no images/train folder"
    if not has_train:
        raise InputError(
            f"se trains its forest on the BSDS500 train split, which this --gt lacks "
            f"({reason}): give --se-model FILE, a model trained by 'segbench train "
            "--detector se'",
            gt,
        )
    say(
        f"se: training the structured edge forest into {path} on the train split "
        "(the toolbox's default model, about 25 CPU-minutes; kept for later runs)"
    )
    train_se(
        gt, path, split="train", workers=workers, scheduler=scheduler, progress=progress
    )
    return path


def run_baselines(
    gt,
    out,
    *,
    split: str = "test",
    algorithms=None,
    ids=None,
    hed=None,
    workers: int = 1,
    scheduler: str | None = None,
    progress: bool = True,
    site: bool = True,
    command: str | None = None,
    log=None,
    se_model=None,
) -> dict:
    """Run the package's detectors and segmenters on a split, score them, rank them.

    Parameters
    ----------
    gt : path
        A dataset root with photographs (``BSR/BSDS500/data``, a BSDS300 root).
    out : path
        The output folder: new, empty, or one written by this function before
        (marked by :data:`MARKER`); any other folder is refused, nothing written.
    split : str, default 'test'
    algorithms : str or sequence of str, optional
        Names of :data:`BASELINES` (comma-separated in a str); default all, with
        ``hed-owt-ucm`` only when ``hed`` is given.
    ids : str or sequence, optional
        Only these image ids (as ``--ids``: a list, ``'a,b'`` or a file of ids).
    hed : path, optional
        Folder of HED soft maps ``<iid>.png`` (raw or NMS-thinned), for hed-owt-ucm.
    workers, scheduler, progress
        As :func:`segbench.engine.map_items` and :func:`segbench.api.evaluate`: the
        results are the same for any setting.
    site : bool, default True
        Build the site (``OUT/site``) with every algorithm ranked.
    command : str, optional
        The command line, recorded in the table's caption.
    log : callable, optional
        Called with one line per step (what the CLI prints as progress).
    se_model : path, optional
        The structured edge forest of ``se`` (and ``se-owt-ucm``): used as it is when
        it is a finished model, else trained there on the train split of ``gt``
        (:func:`segbench.algorithm_folders.train_se`, the toolbox's default model,
        about 25 CPU-minutes) and reused by every later run. Default
        ``OUT/models/se.npz``.

    Returns
    -------
    dict
        ``rows`` (the table, ranked by boundary ODS, humans first), ``algorithms``
        (per algorithm: ``maps``, ``maps_reused``, ``run`` folder, ``metrics``),
        ``n_images``, ``table`` (path of baselines.md), ``site`` (index.html or None).
    """
    from ..api import evaluate
    from ..datasets import open_ground_truth, parse_ids
    from ..engine import MapRecords, check_workers, fingerprint, map_items, open_executor

    say = log or (lambda line: None)
    names = algorithm_names(algorithms, hed=hed is not None)
    if scheduler is None:  # refused before the folder is claimed
        check_workers(workers)
    gt = Path(gt)
    ds = open_ground_truth(gt, split=split)
    wanted = parse_ids(ids)
    all_ids = list(ds.ids())
    if wanted is not None:
        missing = [i for i in wanted if i not in all_ids]
        if missing:
            raise InputError(
                f"--ids: {len(missing)} ids are not in the {split} split "
                f"(e.g. {missing[0]})",
                gt,
            )
        keep = set(wanted)
        run_ids = [i for i in all_ids if i in keep]
    else:
        run_ids = all_ids
    if not run_ids:
        raise InputError(f"no images in the {split} split", gt)
    photos = _photographs(ds, run_ids)
    hed_maps = _hed_maps(hed, run_ids) if "hed-owt-ucm" in names else {}
    settings = {"gt": str(gt), "split": split, "hed": None if hed is None else str(hed)}
    out = claim_folder(
        out,
        MARKER,
        "segbench baselines",
        "written by segbench baselines; its maps, runs and site are "
        "replaced when it runs again\n" + json.dumps(settings, indent=1) + "\n",
        inputs={"--gt": gt, "--hed": hed},
        apart=True,
    )

    model = None
    if "se" in names or "se-owt-ucm" in names:
        model = _se_forest_file(
            gt,
            out,
            se_model,
            workers=workers,
            scheduler=scheduler,
            say=say,
            progress=progress,
        )
    # the algorithms whose soft maps another one's OWT-UCM is made from come first
    needed = list(names)
    for a in names:
        src = BASELINES[a].made_from
        if src in BASELINES and src not in needed:
            needed.insert(0, src)
    maps: dict[str, Path] = {}
    done: dict[str, dict] = {}
    # gPb and gPb-owt-ucm both asked for: one gPb per image makes both maps
    paired = {} if set(GPB_PAIR) - set(needed) else dict.fromkeys(GPB_PAIR)
    with open_executor(workers, scheduler) as executor:
        for a in needed:
            base = BASELINES[a]
            folder = ensure_dir(out / "maps" / a)
            suffix = ".png" if base.kind == "soft" else ".mat"
            source = (
                photos
                if base.made_from == "image"
                else hed_maps
                if base.made_from == "hed"
                else {i: maps[base.made_from] / f"{i}.png" for i in run_ids}
            )
            jobs = [(str(source[i]), str(folder / f"{i}{suffix}")) for i in run_ids]
            extra: Mapping[str, object] = (
                UCM_OPTIONS if base.kind == "ucm" and a != "gpb-owt-ucm" else {}
            )
            if a == "se":
                assert model is not None
                extra = {"model": fingerprint(model)}
            records = MapRecords(folder, f"baselines {a}", {"algorithm": a, **extra}, jobs)
            say(f"{a}: {len(jobs)} maps" + records.note())
            maps[a] = folder
            done[a] = {
                "maps": len(jobs),
                "maps_reused": records.reused,
                "maps_folder": str(folder),
            }
            if a in paired:
                paired[a] = records
                if None not in paired.values():
                    _make_gpb_pair(
                        paired,
                        photos,
                        run_ids,
                        maps,
                        executor=executor,
                        workers=workers,
                        progress=progress,
                    )
                continue
            for dst in map_items(
                partial(make_map, algorithm=a, se_model=model),
                records.todo,
                workers=workers,
                executor=executor,
                progress=progress and bool(records.todo),
                desc=a,
            ):
                records.keep(dst)
        where = dict(
            split=split,
            ids=run_ids,
            workers=workers,
            progress=progress,
            executor=executor,
            scheduler=scheduler if executor is None else None,
        )
        say(f"human: the annotators against each other on {len(run_ids)} images")
        hb, hr = evaluate("human", gt, None, out / "runs" / "human", name="human", **where)
        human = {**hb.metrics, **hr.metrics}
        human_row = _table_row(
            "human",
            {
                "ODS": human["F"],
                "OIS": human["F"],
                "covering_ODS": human["covering"],
                "PRI_ODS": human["PRI"],
                "VI_ODS": human["VI"],
            },
            HUMAN_PUBLISHED,
            "each annotator against the others",
        )
        for a in names:
            run_dir = out / "runs" / a
            say(f"{a}: scoring")
            if BASELINES[a].kind == "soft":
                res = evaluate(
                    "boundary",
                    gt,
                    maps[a],
                    run_dir,
                    name=a,
                    plot=False,
                    **BASELINES[a].scoring,
                    **where,
                )
                metrics = res.metrics
            else:
                b, r = evaluate("all", gt, maps[a], run_dir, name=a, plot=False, **where)
                metrics = {**b.metrics, **r.metrics}
            done[a].update(run=str(run_dir), metrics=metrics)
    rows = sorted(
        (
            _table_row(a, done[a]["metrics"], BASELINES[a].published, BASELINES[a].about)
            for a in names
        ),
        key=lambda r: -(r["ODS"] if r["ODS"] is not None else -1.0),
    )
    rows.insert(0, human_row)
    summary = {
        "n_images": len(run_ids),
        "split": split,
        "ids": run_ids,
        "command": command,
        "rows": rows,
        "algorithms": {
            a: {k: v for k, v in done[a].items() if k != "metrics"} for a in names
        },
    }
    atomic_write_text(out / "baselines.json", json.dumps(summary, indent=1) + "\n")
    table = out / "baselines.md"
    atomic_write_text(
        table, table_markdown(rows, n_images=len(run_ids), split=split, command=command)
    )
    index = None
    if site:
        from .site import build_site

        say("site: building")
        index = build_site(
            gt,
            [done[a]["run"] for a in names],
            out / "site",
            split=split,
            workers=workers,
            progress=progress,
            ids=run_ids,
            pred_dirs={done[a]["run"]: maps[a] for a in names},
            title=f"segbench baselines: {len(run_ids)} {split} images",
        )
    summary.update(
        algorithms={a: {**done[a]} for a in names},
        table=str(table),
        site=None if index is None else str(index),
    )
    return summary


__all__ = [
    "BASELINES",
    "COLUMNS",
    "GPB_PAIR",
    "HUMAN_PUBLISHED",
    "MARKER",
    "NCUT_KS",
    "SWEEP_KS",
    "UCM_OPTIONS",
    "Baseline",
    "algorithm_names",
    "make_map",
    "run_baselines",
    "table_markdown",
]
