"""Semantic-boundary datasets as segbench :class:`~segbench.datasets.Dataset` objects,
and the pairing of per-class prediction folders with them.

Each item's ``sources`` is its ground-truth file (the record key's digest) and its
``annotations`` the :class:`GroundTruthSource` the family reads; the instance files
join a record's key only when instance-sensitive boundaries read them.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from ..datasets import Dataset, DatasetItem
from ..errors import InputError
from ._readers import GroundTruthSource, ground_truth_source

_CITY_LABELS = "_gtFine_labelIds.png"


def _source(path: Path) -> tuple[GroundTruthSource]:
    return (ground_truth_source(path),)


class SemanticBoundaryDataset(Dataset):
    """Ground-truth files by image id (see :func:`open_sbd`, :func:`open_cityscapes`,
    :func:`open_multilabel`)."""

    name = "semantic-boundary ground truth"

    def __init__(self, root, files: dict, split: str):
        super().__init__()
        self.root = Path(root)
        for iid, path in sorted(files.items()):
            self._protos[iid] = DatasetItem(
                iid, split, annotation_loader=partial(_source, path), sources=(path,)
            )


def _id_list(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(f"cannot read the list of ids: {exc.strerror}", path) from None
    return [
        w
        for w in (line.strip() for line in text.splitlines())
        if w and not w.startswith("#")
    ]


def open_sbd(root, split: str | None = None) -> SemanticBoundaryDataset:
    """The SBD ground truth (``benchmark_RELEASE/dataset``) as a Dataset.

    Parameters
    ----------
    root : path
        The folder holding ``cls/`` (and ``inst/`` for instance-sensitive boundaries)
        and the split lists ``train.txt``, ``val.txt``.
    split : str, optional
        Read ``<root>/<split>.txt`` for the ids (SEAL's and pyEdgeEval's test set is
        SBD's ``val``); default: every ``cls/<id>.mat``.

    Raises
    ------
    InputError
        No ``cls/`` folder, no split list, or an id of the list without its file.
    """
    root = Path(root)
    cls = root / "cls"
    if not cls.is_dir():
        raise InputError(
            "no cls/ folder here (SBD's benchmark_RELEASE/dataset holds "
            "cls/, inst/, train.txt and val.txt)",
            root,
        )
    if split is None:
        files = {p.stem: p for p in sorted(cls.glob("*.mat")) if p.is_file()}
    else:
        listed = root / f"{split}.txt"
        if not listed.is_file():
            raise InputError(f"no list of the {split!r} split ({split}.txt)", listed)
        files = {i: cls / f"{i}.mat" for i in _id_list(listed)}
        missing = [i for i, p in files.items() if not p.is_file()]
        if missing:
            raise InputError(
                f"{len(missing)} ids of {split}.txt have no cls/<id>.mat: "
                f"{', '.join(missing[:10])}",
                cls,
            )
    if not files:
        raise InputError("no <id>.mat file in cls/", cls)
    return SemanticBoundaryDataset(root, files, split or "sbd")


def open_cityscapes(root, split: str = "val") -> SemanticBoundaryDataset:
    """Cityscapes ``gtFine/<split>/<city>/<name>_gtFine_labelIds.png`` as a Dataset,
    ids ``<name>`` (``frankfurt_000000_000294``); the ``_instanceIds.png`` beside each
    is read for instance-sensitive boundaries.

    Parameters
    ----------
    root : path
        The Cityscapes folder holding ``gtFine/``, or ``gtFine`` itself.
    split : str, default 'val'
    """
    root = Path(root)
    fine = root if root.name == "gtFine" else root / "gtFine"
    folder = fine / split
    if not folder.is_dir():
        raise InputError(f"no gtFine/{split} folder here", root)
    files = {
        p.name[: -len(_CITY_LABELS)]: p
        for p in sorted(folder.glob(f"*/*{_CITY_LABELS}"))
        if p.is_file()
    }
    if not files:
        raise InputError(f"no <city>/<name>{_CITY_LABELS} file", folder)
    return SemanticBoundaryDataset(root, files, split)


def open_multilabel(
    folder, suffix: str = ".png", split: str = "test"
) -> SemanticBoundaryDataset:
    """A folder of multi-label edge PNGs (pyEdgeEval's converted ground truth,
    ``<id><suffix>``) as a Dataset; give the run ``n_classes``.

    Parameters
    ----------
    folder : path
    suffix : str, default '.png'
        The end of each file name after the id (``'_thin_edge.png'`` for pyEdgeEval's
        converted SBD).
    split : str, default 'test'
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("ground-truth folder not found", folder)
    files = {
        p.name[: -len(suffix)]: p
        for p in sorted(folder.iterdir())
        if p.is_file() and p.name.endswith(suffix) and len(p.name) > len(suffix)
    }
    if not files:
        raise InputError(f"no <id>{suffix} file here", folder)
    return SemanticBoundaryDataset(folder, files, split)


def class_folder_predictions(root, ids, pattern: str = "{id}.png") -> dict:
    """The prediction of each id in the per-class layout, as ``segbench.evaluate``
    takes it: ``{id: root/class_001/<file>}`` (the other classes are read from the
    sibling folders ``class_002``, ...).

    Parameters
    ----------
    root : path
        The folder holding ``class_001``, ``class_002``, ... (SEAL, pyEdgeEval).
    ids : iterable of str, or Dataset
    pattern : str, default '{id}.png'
        The file's path below each class folder: ``{id}`` is the image id, ``{city}``
        the part of it before the first ``_`` (pyEdgeEval's Cityscapes layout is
        ``'{city}/{id}_leftImg8bit.png'``).

    Raises
    ------
    InputError
        No ``class_001`` folder, or ids without their file there (listed).
    """
    first = Path(root) / "class_001"
    if not first.is_dir():
        raise InputError(
            "no class_001 folder here (one folder per class, class_001 .. "
            "class_NNN, as SEAL and pyEdgeEval write them)",
            root,
        )
    ids = ids.ids() if isinstance(ids, Dataset) else list(ids)
    out = {i: first / pattern.format(id=i, city=i.split("_")[0]) for i in ids}
    missing = [i for i, p in out.items() if not p.is_file()]
    if missing:
        raise InputError(
            f"{len(missing)} of {len(out)} images have no prediction "
            f"({pattern}): {', '.join(missing[:10])}",
            first,
        )
    return out
