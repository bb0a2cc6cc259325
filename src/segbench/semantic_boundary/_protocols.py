"""The protocols of semantic-boundary evaluation (SBD before and after SEAL, Cityscapes),
the source of each of their values, the class names, and the check of the parameters.
"""

from __future__ import annotations

from ..errors import InputError
from ..primitives import threshold_list

#: SBD's 20 categories (PASCAL VOC order; class k is label k + 1 in ``GTcls``).
SBD_CLASSES = (
    "aeroplane",
    "bicycle",
    "bird",
    "boat",
    "bottle",
    "bus",
    "car",
    "cat",
    "chair",
    "cow",
    "diningtable",
    "dog",
    "horse",
    "motorbike",
    "person",
    "pottedplant",
    "sheep",
    "sofa",
    "train",
    "tvmonitor",
)

#: Cityscapes' 19 evaluated categories, by trainId.
CITYSCAPES_CLASSES = (
    "road",
    "sidewalk",
    "building",
    "wall",
    "fence",
    "pole",
    "traffic_light",
    "traffic_sign",
    "vegetation",
    "terrain",
    "sky",
    "person",
    "rider",
    "car",
    "truck",
    "bus",
    "train",
    "motorcycle",
    "bicycle",
)

#: The labelId of each Cityscapes trainId 0..18 (cityscapesScripts ``labels.py``).
CITYSCAPES_LABEL_IDS = (
    7,
    8,
    11,
    12,
    13,
    17,
    19,
    20,
    21,
    22,
    23,
    24,
    25,
    26,
    27,
    28,
    31,
    32,
    33,
)

#: Cityscapes labelIds whose pixels are void for the boundaries ("rectification
#: border", "out of roi").
CITYSCAPES_IGNORE = (2, 3)

#: The protocols: every parameter a preset sets.
PROTOCOLS = {
    "sbd": {
        "max_dist": 0.02,
        "thin": True,
        "gt_edges": "stored",
        "instance_sensitive": False,
        "skip_if_nonexistent": True,
        "kill_internal": True,
        "margin": 0,
        "scale": 1.0,
    },
    "sbd-seal": {
        "max_dist": 0.02,
        "thin": True,
        "gt_edges": "stored",
        "instance_sensitive": False,
        "skip_if_nonexistent": False,
        "kill_internal": False,
        "margin": 5,
        "scale": 1.0,
    },
    "cityscapes": {
        "max_dist": 0.0035,
        "thin": True,
        "gt_edges": "thin",
        "instance_sensitive": True,
        "skip_if_nonexistent": False,
        "kill_internal": False,
        "margin": 0,
        "scale": 0.5,
    },
}

_PEE = "pyEdgeEval 0.2.8"
_SEAL = "SEAL (Chrisding/seal 3f40b21)"

#: Where each value of each protocol comes from.
SOURCES = {
    "sbd": {
        "max_dist": f"{_PEE} evaluators/sbd.py L149-151 (eval_mode 'pre-seal': "
        "max_dist = 0.02); SEISM kill_internal_bdries.m ('0.02 for SBD')",
        "thin": f"{_PEE} tests/test_sbd.py (the pre-SEAL run that reproduces the SBD "
        "benchmark's demo output: apply_thinning=True)",
        "gt_edges": "haruishi43/py-edge-eval tests/test_sbd.py, 2022 version (the SBD "
        "demo reproduced from datadir/cls/<id>.mat Boundaries); SEAL README "
        "on the original benchmark",
        "instance_sensitive": f"{_PEE} evaluators/sbd.py L155-157 (pre-SEAL forces "
        "instance_sensitive False)",
        "skip_if_nonexistent": f"{_PEE} evaluators/sbd.py L153 (pre-seal); "
        "common/multi_label/evaluate_boundaries.py L70-73",
        "kill_internal": f"{_PEE} evaluators/sbd.py L152 (pre-seal); "
        "common/multi_label/options.py L7-25; SEISM "
        "kill_internal_bdries.m",
        "margin": "haruishi43/py-edge-eval tests/test_sbd.py, 2022 version (whole "
        "image, no margin)",
        "scale": f"{_PEE} evaluators/sbd.py L134 (scale 1.0)",
    },
    "sbd-seal": {
        "max_dist": f"{_SEAL} lib/matlab/eval/demoBatchEval.m L16-18, L55-57 "
        "(maxDist 0.02 on the original SBD ground truth)",
        "thin": f"{_SEAL} demoBatchEval.m L18 (thinpb true with the thin ground truth)",
        "gt_edges": f"{_SEAL} data/sbd-preprocess/code/demoGenGT.m L85-86 (thin ground "
        "truth = SBD's own GTcls.Boundaries; instance-sensitive: the GTinst "
        "Boundaries of the class OR-ed, then bwmorph thin, L110-119)",
        "instance_sensitive": f"{_SEAL} demoBatchEval.m L55-57 (the cls/ ground truth; "
        "L16-18 scores inst/)",
        "skip_if_nonexistent": f"{_SEAL} lib/matlab/eval/function/evaluate_imgs.m "
        "L14-29 (every image of the list, every class)",
        "kill_internal": f"{_SEAL} evaluate_bdry.m (no kill-internal step)",
        "margin": f"{_SEAL} demoBatchEval.m L18 (margin 5), evaluate_imgs.m L22-25 "
        "(cropped from prediction and ground truth)",
        "scale": f"{_SEAL} evaluate_imgs.m L20 (ground truth at full size)",
    },
    "cityscapes": {
        "max_dist": f"{_SEAL} demoBatchEval.m L92-94 (maxDist 0.0035); {_PEE} "
        "evaluators/cityscapes.py L151",
        "thin": f"{_SEAL} demoBatchEval.m L94 (thinpb true); {_PEE} "
        "helpers/evaluate_cityscapes.py L289",
        "gt_edges": f"{_SEAL} data/cityscapes-preprocess/code/demoGenGT.m L65-67, L92, "
        "L95 (labels at half size, radius 1, bwmorph thin); {_PEE} "
        "helpers/convert_cityscapes.py L96-97, L116-118",
        "instance_sensitive": f"{_SEAL} demoBatchEval.m L92-94 (inst/ ground truth only)",
        "skip_if_nonexistent": f"{_SEAL} evaluate_imgs.m L14-29",
        "kill_internal": f"{_SEAL} evaluate_bdry.m (no kill-internal step)",
        "margin": f"{_SEAL} demoBatchEval.m L94 (margin 0)",
        "scale": f"{_SEAL} cityscapes-preprocess demoGenGT.m L65-67 (imresize(labels, "
        f"0.5, 'nearest')); {_PEE} evaluators/cityscapes.py L147 (scale 0.5)",
    },
}

#: How ground-truth boundaries are made (``gt_edges``).
GT_EDGES = ("stored", "thin", "raw")

_TRUE = ("1", "on", "true", "yes", "y")
_FALSE = ("0", "off", "false", "no", "n")


def _flag(name: str, value) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InputError(f"{name} is on or off (True or False), not {value!r}")


def check_params(params: dict) -> None:
    """Fill the parameters left None from the protocol and check every value, in place.

    Raises
    ------
    InputError
        An unknown protocol or ``gt_edges``, a tolerance outside (0, 1), a negative
        margin, a scale outside (0, 1], a non-positive ``nthresh`` or ``n_classes``.
    """
    name = params.get("protocol")
    if name not in PROTOCOLS:
        raise InputError(
            f"unknown semantic-boundary protocol {name!r}; one of {', '.join(PROTOCOLS)}"
        )
    for key, value in PROTOCOLS[name].items():
        if params.get(key) is None:
            params[key] = value
    for key in (
        "thin",
        "instance_sensitive",
        "skip_if_nonexistent",
        "kill_internal",
        "nms",
    ):
        params[key] = _flag(key, params[key])
    try:
        params["max_dist"] = float(params["max_dist"])
        params["scale"] = float(params["scale"])
        params["margin"] = int(params["margin"])
        params["nthresh"] = int(params["nthresh"])
    except (TypeError, ValueError):
        raise InputError(
            "max_dist and scale are numbers, margin and nthresh integers; "
            f"got {params['max_dist']!r}, {params['scale']!r}, "
            f"{params['margin']!r}, {params['nthresh']!r}"
        ) from None
    if not 0 < params["max_dist"] < 1:
        raise InputError(
            f"max_dist is a fraction of the image diagonal in (0, 1), got "
            f"{params['max_dist']}"
        )
    if not 0 < params["scale"] <= 1:
        raise InputError(f"scale is in (0, 1], got {params['scale']}")
    if params["margin"] < 0:
        raise InputError(f"margin is a number of pixels >= 0, got {params['margin']}")
    given = params.get("thresholds")
    if isinstance(given, int) and not isinstance(given, bool):
        params["nthresh"], params["thresholds"] = given, None  # a count: as nthresh
    elif given is not None:
        params["thresholds"] = threshold_list(given)
    if params["nthresh"] < 1:  # after a count given as thresholds: checked here, once
        raise InputError(f"nthresh must be a positive integer, got {params['nthresh']}")
    if params["gt_edges"] not in GT_EDGES:
        raise InputError(
            f"gt_edges is one of {', '.join(GT_EDGES)}, not {params['gt_edges']!r}"
        )
    n = params.get("n_classes")
    if n is not None and (isinstance(n, bool) or int(n) != n or n < 1):
        raise InputError(f"n_classes is a positive integer, got {n!r}")
    if n is not None:
        params["n_classes"] = int(n)


def class_names(kind: str, n_classes: int) -> tuple[str, ...]:
    """The names of a ground truth's classes: SBD's or Cityscapes', else
    ``class_001``, ``class_002``, ..."""
    known = {"sbd": SBD_CLASSES, "cityscapes": CITYSCAPES_CLASSES}.get(kind)
    if known is not None and len(known) == n_classes:
        return known
    return tuple(f"class_{k:03d}" for k in range(1, n_classes + 1))
