"""Reading semantic-boundary ground truth and predictions, one class at a time.

Ground truth (:func:`ground_truth_source` tells the kind from the file):

- SBD ``cls/<id>.mat`` (``GTcls``: ``Segmentation``, ``Boundaries`` = 20 sparse maps,
  ``CategoriesPresent``), with ``inst/<id>.mat`` beside it (``GTinst``:
  ``Segmentation`` of instance indices, ``Boundaries`` per instance, ``Categories``)
  for instance-sensitive boundaries;
- Cityscapes ``<name>_gtFine_labelIds.png`` (with ``<name>_gtFine_instanceIds.png``);
- a multi-label edge PNG (pyEdgeEval's encoding: class k in bit k of B, G, R).

Predictions (:class:`PredictionMaps`): one folder per class, ``class_001/<id>.png``
(SEAL and pyEdgeEval), given by the file of the first class; a ``(C, H, W)`` array in
``<id>.npy`` or ``<id>.npz``; or a multi-label RGB PNG (binary maps).

Every problem raises :class:`~segbench.errors.InputError` naming the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..primitives import thin
from ._edges import (
    MAX_ENCODED_CLASSES,
    class_edges,
    decode_class,
    resize_nearest,
    scaled_shape,
)
from ._protocols import CITYSCAPES_IGNORE, CITYSCAPES_LABEL_IDS, SBD_CLASSES

_CITY_LABELS = "_gtFine_labelIds.png"
_CITY_MAX_LABEL_ID = 33  # cityscapesScripts' labels: ids 0..33 (-1 is never drawn)
_CITY_INSTANCES = "_gtFine_instanceIds.png"
_CLASS_DIR = re.compile(r"^class_(\d{3})$")


@dataclass(frozen=True)
class GroundTruthSource:
    """Where one image's ground truth is, and of which kind.

    Attributes
    ----------
    kind : {'sbd', 'cityscapes', 'multilabel'}
    path : Path
        ``cls/<id>.mat``, ``<name>_gtFine_labelIds.png`` or the encoded edge PNG.
    instances : Path or None
        The instance file that goes with it (``inst/<id>.mat``,
        ``<name>_gtFine_instanceIds.png``), read only for instance-sensitive
        boundaries; None for edge PNGs.
    """

    kind: str
    path: Path
    instances: Path | None = None


def ground_truth_source(path) -> GroundTruthSource:
    """The :class:`GroundTruthSource` of a ground-truth file, by its name."""
    p = Path(path)
    if p.suffix.lower() == ".mat":
        return GroundTruthSource("sbd", p, p.parent.parent / "inst" / p.name)
    if p.name.endswith(_CITY_LABELS):
        stem = p.name[: -len(_CITY_LABELS)]
        return GroundTruthSource("cityscapes", p, p.with_name(stem + _CITY_INSTANCES))
    if p.suffix.lower() == ".png":
        return GroundTruthSource("multilabel", p)
    raise InputError(
        "not semantic-boundary ground truth: expected an SBD cls/<id>.mat, "
        f"a Cityscapes <name>{_CITY_LABELS} or a multi-label edge .png",
        p,
    )


# -- files ------------------------------------------------------------------------------


def _loadmat(path: Path) -> dict:
    import scipy.io

    if not path.is_file():
        raise InputError("file not found", path)
    try:
        return scipy.io.loadmat(str(path), squeeze_me=False, struct_as_record=True)
    except NotImplementedError:
        raise InputError(
            "a MATLAB v7.3 (HDF5) file, which is not read; save it with save(..., '-v7')",
            path,
        ) from None
    except Exception as exc:  # scipy raises many types on a corrupt file
        raise InputError(f"not a MATLAB .mat file that can be read ({exc})", path) from None


def _struct(path: Path, variable: str, fields: tuple[str, ...]):
    """The fields of the 1x1 struct ``variable`` of a .mat file."""
    data = _loadmat(path)
    found = sorted(k for k in data if not k.startswith("__"))
    if variable not in data:
        folder = "cls" if variable == "GTcls" else "inst"
        raise InputError(
            f"no variable {variable!r} (an SBD {folder}/<id>.mat holds "
            f"one); found {', '.join(found) or 'none'}",
            path,
        )
    s = data[variable]
    if not isinstance(s, np.ndarray) or s.dtype.names is None or s.size != 1:
        raise InputError(f"{variable} is not a 1x1 struct", path)
    missing = [f for f in fields if f not in s.dtype.names]
    if missing:
        raise InputError(
            f"{variable} has no field {', '.join(missing)}; its fields: "
            f"{', '.join(s.dtype.names)}",
            path,
        )
    return {f: s.ravel()[0][f] for f in fields}


def _labels_2d(arr, what: str, path: Path) -> np.ndarray:
    a = np.asarray(arr)
    if (
        a.ndim != 2
        or a.size == 0
        or not (
            np.issubdtype(a.dtype, np.integer)
            or np.issubdtype(a.dtype, np.floating)
            or a.dtype == bool
        )
    ):
        raise InputError(
            f"{what} is not a 2-D numeric array (shape {a.shape}, {a.dtype})", path
        )
    if np.issubdtype(a.dtype, np.floating) and (
        not np.isfinite(a).all() or (a != np.round(a)).any()
    ):
        raise InputError(f"{what} holds values that are not whole numbers", path)
    return a.astype(np.int32, copy=False)


def _cells(arr, what: str, path: Path) -> list:
    a = np.asarray(arr)
    if a.dtype != object:
        raise InputError(f"{what} is not a cell array", path)
    return list(a.ravel())


def _edge_map(cell, shape, what: str, path: Path) -> np.ndarray:
    """A stored boundary map (sparse or dense) as a bool array of ``shape``."""
    import scipy.sparse

    m = cell.toarray() if scipy.sparse.issparse(cell) else np.asarray(cell)
    if m.shape != tuple(shape):
        raise InputError(
            f"{what} is {m.shape[0] if m.ndim else 0}x"
            f"{m.shape[1] if m.ndim > 1 else 0} but the segmentation is "
            f"{shape[0]}x{shape[1]}",
            path,
        )
    return m != 0


def _read_sbd_cls(path: Path):
    f = _struct(path, "GTcls", ("Segmentation", "Boundaries"))
    seg = _labels_2d(f["Segmentation"], "GTcls.Segmentation", path)
    bdry = _cells(f["Boundaries"], "GTcls.Boundaries", path)
    if len(bdry) != len(SBD_CLASSES):
        raise InputError(
            f"GTcls.Boundaries holds {len(bdry)} maps, not one per SBD "
            f"class ({len(SBD_CLASSES)})",
            path,
        )
    return seg, bdry


def _read_sbd_inst(path: Path, shape):
    if not path.is_file():
        raise InputError(
            "instance-sensitive boundaries read SBD's inst/<id>.mat beside "
            "cls/; this file is missing (or score without "
            "instance_sensitive)",
            path,
        )
    f = _struct(path, "GTinst", ("Segmentation", "Boundaries", "Categories"))
    seg = _labels_2d(f["Segmentation"], "GTinst.Segmentation", path)
    if seg.shape != tuple(shape):
        raise InputError(
            f"GTinst.Segmentation is {seg.shape[0]}x{seg.shape[1]}, the "
            f"class segmentation {shape[0]}x{shape[1]}",
            path,
        )
    cats = np.asarray(f["Categories"]).ravel()
    if cats.size and (
        not np.issubdtype(cats.dtype, np.number)
        or (cats != np.round(cats)).any()
        or cats.min() < 1
        or cats.max() > len(SBD_CLASSES)
    ):
        raise InputError(
            f"GTinst.Categories must be class numbers 1..{len(SBD_CLASSES)}", path
        )
    n = int(seg.max()) if seg.size else 0
    if seg.min() < 0 or n > cats.size:
        raise InputError(
            f"GTinst.Segmentation has instance {n} but Categories lists {cats.size}", path
        )
    bdry = _cells(f["Boundaries"], "GTinst.Boundaries", path)
    if len(bdry) < n:
        raise InputError(
            f"GTinst.Boundaries holds {len(bdry)} maps for {n} instances", path
        )
    return seg, np.concatenate([[0], cats.astype(np.int32)]), bdry


def _check_label_values(labels, top, allowed, what, path, hint="") -> None:
    """Refuse a label outside 0..top (and not in ``allowed``), naming its first pixel."""
    bad = (labels < 0) | (labels > top)
    for v in allowed:
        bad &= labels != v
    if bad.any():
        r, c = (int(i) for i in np.argwhere(bad)[0])
        raise InputError(
            f"{what} holds label {int(labels[r, c])} at row {r}, column {c} "
            f"(0-based), outside 0..{top}{hint}",
            path,
        )


def _read_labels(path: Path) -> np.ndarray:
    from ..io import read_label_map

    return read_label_map(path, dtype=np.int32)


def _read_rgb(path: Path) -> np.ndarray:
    """An RGB PNG as (H, W, 3) uint8, refusing other modes (a gray image would decode
    every class from the same bits)."""
    from PIL import Image

    from ..io import read_image

    if not Path(path).is_file():
        raise InputError("file not found", path)
    try:
        with Image.open(path) as im:
            mode = im.mode
    except Exception as exc:
        raise InputError(f"not an image that can be read ({exc})", path) from None
    if mode != "RGB":
        raise InputError(
            f"a multi-label edge image is RGB (class k in bit k of B, then "
            f"G, then R: pyEdgeEval's encoding); this one is {mode}",
            path,
        )
    return read_image(path)


def _check_encoded_classes(rgb: np.ndarray, n_classes: int, path: Path, what: str) -> None:
    """InputError naming the first pixel of ``rgb`` (the multi-label encoding) with a
    bit set for a class at or above ``n_classes``: those classes would otherwise be
    dropped without a word."""
    for ch in range(3):
        first = 8 * (2 - ch)  # B holds classes 0-7, G 8-15, R 16-23
        used = min(max(n_classes - first, 0), 8)
        extra = rgb[..., ch] >> used if used < 8 else None
        if extra is None or not extra.any():
            continue
        y, x = (int(v[0]) for v in np.nonzero(extra))
        k = first + used + int(extra[y, x]).bit_length() - 1
        raise InputError(
            f"{what} pixel (row {y}, col {x}) sets the bit of class {k + 1} (1-based); "
            f"n_classes is {n_classes}: give the number of classes the files encode",
            path,
        )


# -- ground truth -----------------------------------------------------------------------


def _crop(arr: np.ndarray, margin: int) -> np.ndarray:
    return (
        arr[margin : arr.shape[0] - margin, margin : arr.shape[1] - margin]
        if margin
        else arr
    )


class GroundTruth:
    """One image's ground truth, read once, giving each class's boundary map and region
    at the size evaluated (scaled, then cropped by the margin).

    Parameters
    ----------
    source : GroundTruthSource
    gt_edges : {'stored', 'thin', 'raw'}
        'stored': SBD's own ``Boundaries`` (instance-sensitive: the ``GTinst``
        boundaries of the class OR-ed and thinned, as SEAL's ``demoGenGT.m``); 'thin':
        from the labels, the radius-1 band thinned (pyEdgeEval's thin ground truth);
        'raw': the radius-2 band (SEAL's and pyEdgeEval's raw). A multi-label edge PNG
        is used as encoded whatever this says.
    instance_sensitive : bool
        Add the boundaries between instances of a class (label-map ground truth).
    scale : float
        Size factor of the evaluation: label maps are resized (nearest) before the
        thin band is drawn, raw bands and stored maps after (pyEdgeEval, SEAL).
    margin : int
        Pixels cropped from each side (SEAL ``evaluate_imgs.m``).
    n_classes : int, optional
        Classes of a multi-label edge PNG (required there); SBD has 20, Cityscapes 19.
    """

    def __init__(
        self,
        source: GroundTruthSource,
        *,
        gt_edges: str = "stored",
        instance_sensitive: bool = False,
        scale: float = 1.0,
        margin: int = 0,
        n_classes: int | None = None,
    ):
        self.source, self.kind = source, source.kind
        self.gt_edges, self.instance_sensitive = gt_edges, instance_sensitive
        self.margin, self._inst, self._inst_bdry = margin, None, None
        path = source.path
        if self.kind == "sbd":
            self._labels, self._stored = _read_sbd_cls(path)
            _check_label_values(
                self._labels, len(SBD_CLASSES), (255,), "GTcls.Segmentation", path
            )
            self._ignore = None
            self._values = tuple(range(1, len(SBD_CLASSES) + 1))
            if instance_sensitive:
                assert source.instances is not None  # as ground_truth_source sets it
                seg, cat_of, bdry = _read_sbd_inst(source.instances, self._labels.shape)
                self._inst, self._inst_cat, self._inst_bdry = seg, cat_of, bdry
        elif self.kind == "cityscapes":
            if gt_edges == "stored":
                raise InputError(
                    "Cityscapes boundaries are drawn from the label maps: "
                    "gt_edges 'thin' or 'raw' ('stored' reads SBD's own "
                    "Boundaries)",
                    path,
                )
            self._labels = _read_labels(path)
            _check_label_values(
                self._labels,
                _CITY_MAX_LABEL_ID,
                (),
                "label map",
                path,
                " (Cityscapes labelIds run 0..33: a trainIds map, 0..18 and 255, "
                "saved under the labelIds name?)",
            )
            self._ignore = np.isin(self._labels, CITYSCAPES_IGNORE)
            self._values = CITYSCAPES_LABEL_IDS
            if instance_sensitive:
                assert source.instances is not None  # as ground_truth_source sets it
                if not source.instances.is_file():
                    raise InputError(
                        "instance-sensitive boundaries read the "
                        f"{_CITY_INSTANCES} beside the label map; it is "
                        "missing (or score without instance_sensitive)",
                        source.instances,
                    )
                inst = _read_labels(source.instances)
                if inst.shape != self._labels.shape:
                    raise InputError(
                        f"instance map is {inst.shape[0]}x{inst.shape[1]}, "
                        f"the label map {self._labels.shape[0]}x"
                        f"{self._labels.shape[1]}",
                        source.instances,
                    )
                self._inst = inst
        else:
            if n_classes is None:
                raise InputError(
                    "a multi-label edge PNG does not say how many classes "
                    "it encodes: give n_classes",
                    path,
                )
            if n_classes > MAX_ENCODED_CLASSES:
                raise InputError(
                    f"the RGB encoding holds at most {MAX_ENCODED_CLASSES} "
                    f"classes, not n_classes = {n_classes}",
                    path,
                )
            self._rgb = _read_rgb(path)
            _check_encoded_classes(self._rgb, n_classes, path, "ground truth")
            self._labels = None
            self._scaled_rgb = resize_nearest(
                self._rgb, scaled_shape(self._rgb.shape, scale)
            )
            self._values = tuple(range(n_classes))
        if n_classes is not None and n_classes != len(self._values):
            raise InputError(
                f"this {self.kind} ground truth has {len(self._values)} "
                f"classes, not n_classes = {n_classes}",
                path,
            )
        full = (self._labels if self._labels is not None else self._rgb).shape[:2]
        self.full_shape = tuple(full)
        self.shape = scaled_shape(full, scale)  # the predictions' size
        if 2 * margin >= min(self.shape):
            raise InputError(
                f"a margin of {margin} px leaves nothing of a "
                f"{self.shape[0]}x{self.shape[1]} image",
                path,
            )
        self._scaled_labels = (
            None if self._labels is None else resize_nearest(self._labels, self.shape)
        )

    @property
    def n_classes(self) -> int:
        return len(self._values)

    def _instances(self, c: int, scaled: bool):
        """Instance ids of class ``c``'s pixels (0 elsewhere), or None."""
        if self._inst is None:
            return None
        if self.kind == "sbd":
            inst = np.where(self._inst_cat[self._inst] == c + 1, self._inst, 0)
        else:
            v = self._inst
            inst = np.where((v >= 1000) & (v // 1000 == self._values[c]), v, 0)
        return resize_nearest(inst, self.shape) if scaled else inst

    def edges(self, c: int) -> np.ndarray:
        """Class ``c``'s (0-based) boundary map, (H, W) bool at the evaluated size."""
        if self.kind == "multilabel":
            return _crop(decode_class(self._scaled_rgb, c), self.margin)
        if self.gt_edges == "stored":
            if self._inst is not None:  # SEAL demoGenGT.m L110-119
                inst_bdry, instances = self._inst_bdry, self.source.instances
                assert inst_bdry is not None and instances is not None  # read with _inst
                full = np.zeros(self.full_shape, bool)
                for k in np.flatnonzero(self._inst_cat == c + 1):
                    full |= _edge_map(
                        inst_bdry[k - 1],
                        self.full_shape,
                        f"GTinst.Boundaries{{{k}}}",
                        instances,
                    )
                if full.any():
                    full = thin(full)
            else:
                full = _edge_map(
                    self._stored[c],
                    self.full_shape,
                    f"GTcls.Boundaries{{{c + 1}}}",
                    self.source.path,
                )
            return _crop(resize_nearest(full, self.shape), self.margin)
        ignore = self._ignore
        if self.gt_edges == "thin":  # labels resized first, band of radius 1
            ig = None if ignore is None else resize_nearest(ignore, self.shape)
            e = class_edges(
                self._scaled_labels,
                self._values[c],
                radius=1,
                ignore=ig,
                instances=self._instances(c, True),
                thin=True,
            )
        else:  # band of radius 2 at full size, then resized
            e = resize_nearest(
                class_edges(
                    self._labels,
                    self._values[c],
                    radius=2,
                    ignore=ignore,
                    instances=self._instances(c, False),
                ),
                self.shape,
            )
        return _crop(e, self.margin)

    def region(self, c: int) -> np.ndarray:
        """Class ``c``'s pixels at the evaluated size (for ``kill_internal``)."""
        if self._scaled_labels is None:
            raise InputError(
                "kill_internal needs the classes' regions, which a "
                "multi-label edge PNG does not hold; give label maps or "
                "SBD .mat files, or turn kill_internal off",
                self.source.path,
            )
        return _crop(self._scaled_labels == self._values[c], self.margin)


# -- predictions ------------------------------------------------------------------------


def _class_dir_index(path: Path) -> int | None:
    """Index in ``path.parts`` of the nearest ``class_NNN`` folder above the file."""
    parts = path.parts
    for i in range(len(parts) - 2, -1, -1):
        if _CLASS_DIR.match(parts[i]):
            return i
    return None


def class_file(path, c: int) -> Path:
    """The file of class ``c`` (0-based) beside ``path`` in the per-class layout:
    ``.../class_001/<id>.png`` -> ``.../class_{c + 1:03d}/<id>.png``."""
    p = Path(path)
    i = _class_dir_index(p)
    if i is None:
        raise InputError("not in a class_NNN folder", p)
    return Path(*p.parts[:i], f"class_{c + 1:03d}", *p.parts[i + 1 :])


def _as_unit(arr: np.ndarray, what: str, path) -> np.ndarray:
    """A soft map as float64 in [0, 1]: floats as they are (finite, in range), uint8
    /255, uint16 /65535, bool 0/1."""
    if arr.dtype == bool:
        return arr.astype(np.float64)
    if arr.dtype == np.uint8:
        return arr / 255.0
    if arr.dtype == np.uint16:
        return arr / 65535.0
    if not np.issubdtype(arr.dtype, np.floating):
        raise InputError(
            f"{what} is {arr.dtype}; give floats in [0, 1] (or uint8, uint16, bool)", path
        )
    out = np.asarray(arr, dtype=np.float64)
    if not np.isfinite(out).all() or out.min(initial=0) < 0 or out.max(initial=0) > 1:
        raise InputError(f"{what} has values outside [0, 1] (or NaN)", path)
    return out


class PredictionMaps:
    """One image's per-class soft maps, read one class at a time.

    Parameters
    ----------
    path : path
        ``<id>.npy`` / ``<id>.npz`` holding a ``(C, H, W)`` array (floats in [0, 1],
        uint8 as /255, bool); ``.../class_001/<id>.png`` (8-bit /255, 16-bit /65535)
        whose sibling folders ``class_002``, ... hold the other classes; or a
        multi-label RGB PNG (binary maps, pyEdgeEval's encoding).
    n_classes : int
        Classes the ground truth has.
    shape : (H, W)
        The size the maps must have (the ground truth's at the evaluated scale);
        nothing is resized.
    """

    def __init__(self, path, n_classes: int, shape):
        self.path, self.n_classes, self.shape = Path(path), n_classes, tuple(shape)
        ext = self.path.suffix.lower()
        self._array = self._rgb = None
        if ext in (".npy", ".npz"):
            self.layout = "array"
            self._array = self._load_array()
            self._check(self._array.shape[1:], self.path)
        elif ext in (".png", ".bmp") and _class_dir_index(self.path) is not None:
            self.layout = "folders"
            beyond = class_file(self.path, n_classes).parent
            if beyond.is_dir():  # as an array with more than C maps is refused
                raise InputError(
                    f"a class folder beyond the ground truth's {n_classes} classes "
                    f"(class_001 .. class_{n_classes:03d})",
                    beyond,
                )
        elif ext == ".png":
            self.layout = "multilabel"
            if n_classes > MAX_ENCODED_CLASSES:
                raise InputError(
                    f"{n_classes} classes do not fit the RGB encoding "
                    f"({MAX_ENCODED_CLASSES} at most)",
                    self.path,
                )
            self._rgb = _read_rgb(self.path)
            self._check(self._rgb.shape[:2], self.path)
            _check_encoded_classes(self._rgb, n_classes, self.path, "prediction")
        else:
            raise InputError(
                "a prediction is a (C, H, W) .npy/.npz, a "
                "class_NNN/<id>.png (one folder per class) or a multi-label "
                "RGB .png",
                self.path,
            )

    def _load_array(self) -> np.ndarray:
        from ..io import check_numpy_file

        check_numpy_file(self.path)
        try:
            data = (
                np.load(self.path, mmap_mode="r", allow_pickle=False)
                if self.path.suffix.lower() == ".npy"
                else np.load(self.path, allow_pickle=False)
            )
        except FileNotFoundError:
            raise InputError("file not found", self.path) from None
        except Exception as exc:
            raise InputError(
                f"not a numpy file that can be read ({exc})", self.path
            ) from None
        if not isinstance(data, np.ndarray):  # an .npz archive
            with data:
                keys = list(data.keys())
                if len(keys) != 1:
                    raise InputError(
                        f"an .npz prediction holds one (C, H, W) array; "
                        f"this one holds {len(keys)}: {', '.join(keys)}",
                        self.path,
                    )
                data = data[keys[0]]
        if data.ndim != 3 or data.shape[0] != self.n_classes:
            raise InputError(
                f"expected a (C, H, W) array with C = {self.n_classes} "
                f"classes, got shape {data.shape}",
                self.path,
            )
        return data

    def _check(self, shape, path) -> None:
        if tuple(shape) != self.shape:
            raise InputError(
                f"prediction is {shape[0]}x{shape[1]} (HxW) but the ground truth is "
                f"{self.shape[0]}x{self.shape[1]} at the scale evaluated; segbench does "
                "not resize predictions (pyEdgeEval resizes with nearest, SEAL bicubic): "
                "resize them first",
                path,
            )

    def __call__(self, c: int) -> np.ndarray:
        """Class ``c``'s (0-based) soft map, (H, W) float64 in [0, 1]."""
        if self.layout == "array":
            assert self._array is not None  # loaded for this layout
            return _as_unit(np.asarray(self._array[c]), f"class {c + 1}'s map", self.path)
        if self.layout == "multilabel":
            return decode_class(self._rgb, c).astype(np.float64)
        from ..io import read_prediction

        path = class_file(self.path, c)
        if not path.is_file():
            raise InputError(
                f"class {c + 1}'s prediction is missing (one folder per "
                f"class, class_001 .. class_{self.n_classes:03d})",
                path,
            )
        pb = read_prediction(path, kind="soft").pb
        assert pb is not None  # a 'soft' Prediction has one
        self._check(pb.shape, path)
        return pb
