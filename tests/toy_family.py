"""A toy benchmark family, the example of docs/engine.md ("How to add a family"):
how many boundary pixels a soft map marks at a level, against the annotators' mean."""

import numpy as np

from segbench.families import Benchmark, Param, defaults, register
from segbench.result import Result
from segbench.spec import Family

PARAMS = (Param("threshold", 0.5, metavar="T", help="soft-map level counted as boundary"),)


def _read(path):
    from segbench.io import read_prediction
    return read_prediction(path, kind="soft").pb


def evaluate(sample, params):
    pb = sample.read_prediction(_read)
    human = np.mean([np.count_nonzero(g.boundaries) for g in sample.ground_truth()])
    return {"marked": int(np.count_nonzero(pb >= params["threshold"])), "human": float(human)}


def summarize(ids, records, params, options):
    rows = [{"id": i, **r, "ratio": r["marked"] / r["human"] if r["human"] else np.nan}
            for i, r in zip(ids, records)]
    return Result("boundary_count", {"ratio": float(np.nanmean([r["ratio"] for r in rows]))},
                  per_item=rows)


def resampler(ids, records, params, options):
    ratio = np.array([r["marked"] / r["human"] for r in records])
    return lambda weights: {"ratio": weights @ ratio / weights.sum(axis=1)}


BOUNDARY_COUNT = Family(
    name="boundary_count", version=1, defaults=defaults(PARAMS), evaluate=evaluate,
    to_json=dict, from_json=lambda d: {"marked": int(d["marked"]), "human": float(d["human"])},
    summarize=summarize, prediction_exts=lambda params: ("png", "npy"),
    resampler=resampler, item_score="ratio", label="boundary count")

ENTRY = Benchmark("boundary_count", ((__name__, "BOUNDARY_COUNT"),), params=PARAMS,
                  compare=True, headline=("ratio",),
                  help="boundary pixels marked, against the annotators' mean")


def install():
    """Register the toy (the tests call it; a package would at import)."""
    return register(ENTRY, replace=True)
