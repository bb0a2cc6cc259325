"""The boundary benchmark's run options: keywords of :func:`segbench.evaluate` (and
options of its commands) that set a run up rather than enter its records. Each is
declared in the registry (:class:`segbench.families.Option`) with its hook here; the
hook changes the :class:`~segbench.families.RunSetup` before the engine runs.

- ``protocol``: a preset of the boundary protocol fills the parameters not given;
- ``calibrate_on`` (with ``calibrate_name``): another run's best threshold fixes this
  run's ``ODS_calibrated``;
- ``human``: the annotators scored against each other, their figures added to the
  result and the plot.
"""

from __future__ import annotations

from ..errors import InputError
from ..primitives import calibration_index
from ._family import BOUNDARY
from ._protocols import protocol

#: Record and summary parameters that must agree between a run and the run it is
#: calibrated on: a threshold chosen under other settings is not this run's best.
CALIBRATION_KEYS = (
    "protocol",
    "nthresh",
    "max_dist",
    "thin",
    "thin_gt",
    "upsample",
    "nms",
    "min_agreement",
    "resolution",
    "max_dist_px",
)

#: The benchmarks a protocol preset applies to.
PROTOCOL_BENCHMARKS = ("boundary", "all", "human", "human_boundary")


def protocol_params(benchmark: str, name: str) -> dict:
    """The record and summary parameters of a protocol preset, named by ``protocol``.

    Raises
    ------
    InputError
        ``benchmark`` is not one a preset applies to, or an unknown preset.
    """
    if benchmark not in PROTOCOL_BENCHMARKS:
        raise InputError(
            f"a protocol preset applies to the boundary and human "
            f"benchmarks (and 'all'), not to {benchmark!r}"
        )
    preset = protocol(name)
    keys = (
        "nthresh",
        "max_dist",
        "thin",
        "thin_gt",
        "upsample",
        "lone",
        "resolution",
        "alpha",
    ) + (("nms",) if benchmark in ("boundary", "all") else ())
    return {"protocol": name, **{k: preset[k] for k in keys}}


def human_options(results) -> dict:
    """Summary options carrying the human figures of a ``human`` run to a plot or a
    result: ``human_boundary`` (recall, precision, F) and ``human_region`` (its
    metrics)."""
    out = {}
    for r in results:
        if r.family == "human_boundary":
            out["human_boundary"] = (
                r.metrics["recall"],
                r.metrics["precision"],
                r.metrics["F"],
            )
        elif r.family == "human_region":
            out["human_region"] = r.metrics
    return out


def calibration_params(
    res,
    where,
    alpha: float = 0.5,
    *,
    name: str | None = None,
    params: dict | None = None,
    calibrate_name: str | None = None,
) -> dict:
    """The summary parameters that calibrate a boundary run on the boundary result
    ``res`` of another run (read from ``where``); see :func:`segbench.api.calibration`.

    Raises
    ------
    InputError
        Not a boundary result; another name; other settings (each one named).
    """
    curves = res.curves
    if res.family != "boundary" or not {"thresholds", "recall", "precision"} <= set(curves):
        raise InputError(
            "a calibration run must be a boundary run (its result file has "
            "no boundary PR curve)",
            where,
        )
    expected = calibrate_name if calibrate_name is not None else name
    if expected is not None and res.name != expected:
        how = (
            f"not {expected!r} (--calibrate-name)"
            if calibrate_name is not None
            else f"this run is {name!r}: calibrate on a run of the same algorithm, or say "
            f"--calibrate-name {res.name!r} to use it on purpose"
        )
        raise InputError(f"the calibration run is {res.name!r}, {how}", where)
    if params is not None:
        theirs = res.provenance.get("params", {})
        mine = {**BOUNDARY.resolve(params), **BOUNDARY.resolve_summary(params)}
        other = {**BOUNDARY.resolve(theirs), **BOUNDARY.resolve_summary(theirs)}
        differ = [
            f"{k} {other.get(k)!r} there, {mine.get(k)!r} here"
            for k in CALIBRATION_KEYS
            if other.get(k) != mine.get(k)
        ]
        if differ:
            raise InputError(
                "the calibration run was scored with other settings ("
                + "; ".join(differ)
                + "): its best threshold is not one "
                "of this run's thresholds under the same protocol; rerun "
                "it with this run's options",
                where,
            )
    j = calibration_index(
        curves["thresholds"], curves["recall"], curves["precision"], alpha
    )
    return {
        "calibrated_threshold": float(curves["thresholds"][j]),
        "calibrated_on": str(where),
        "calibrated_name": res.name,
    }


# -- the hooks the registry names ----------------------------------------------------


def apply_protocol(value: str, setup) -> None:
    """``protocol``: the preset's values fill the parameters not given; every value is
    recorded in the result's parameters."""
    setup.params = {**protocol_params(setup.benchmark, value), **setup.params}


def apply_calibration(value, setup) -> None:
    """``calibrate_on``: the calibration run's best threshold (weight ``alpha``) and
    where it came from, as summary parameters; ``calibrate_name`` names the run it
    must be when it is not this one."""
    res = setup.read_result(value, "boundary")
    setup.params.update(
        calibration_params(
            res,
            value,
            setup.params.get("alpha", 0.5),
            name=setup.run_name(),
            params=setup.params,
            calibrate_name=setup.given.get("calibrate_name"),
        )
    )


def apply_human(value, setup) -> None:
    """``human``: score the annotators against each other with this run's parameters
    and carry their figures into the result and the plot."""
    if value:
        setup.options.update(human_options(setup.run_benchmark("human")))


def refuse_label_maps(value, setup) -> None:
    """``labels`` with 'all': refused. The boundary half reads predictions as soft
    maps or ``.mat`` segmentations, so label-map images would score boundary F = 0."""
    if value:
        raise InputError(
            f"{setup.benchmark!r} does not read label-map images (its boundary benchmark "
            "would take them for soft maps): run 'region' with labels=True (--labels), "
            "and 'boundary' on their boundaries or on .mat segmentations"
        )
