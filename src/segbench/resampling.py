"""Bootstrap over images: intervals for one run, paired differences between runs.

Every BSDS score is a function of per-image records, so resampling images is exact to
compute: a family turns its records into a *statistic*, a function of image weights
(how many times each image was drawn) that returns each headline score per draw
(``Family.resampler``). This module draws the weights and turns the draws into
intervals and p-values; it knows no family.

Conventions (see ../shared/reference/reporting-statistics.md and docs/statistics.md):

- images are drawn with replacement, ``n`` draws of ``n`` images, ``B`` times, from
  ``numpy.random.default_rng(seed)``; the same draws serve every score of a run, and
  both runs of a paired comparison;
- intervals are percentile intervals (``numpy.quantile``, linear interpolation);
- a paired p-value is two-sided: twice the smaller share of draws on either side of 0,
  counted as ``(count + 1) / (B + 1)`` so that it is never 0, capped at 1.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from .errors import InputError

__all__ = [
    "DEFAULT_LEVEL",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "FEW_RESAMPLES",
    "MIN_RESAMPLES",
    "FewResamplesWarning",
    "bootstrap_indices",
    "check_resamples",
    "check_settings",
    "ci_settings",
    "differences_of_draws",
    "draws",
    "index_weights",
    "intervals",
    "paired_differences",
    "percentile_interval",
    "warn_if_few_resamples",
]

DEFAULT_RESAMPLES = 1000
DEFAULT_LEVEL = 0.95
DEFAULT_SEED = 0
#: Draws per block when evaluating a statistic (bounds memory for large image sets).
_BLOCK = 250

Statistic = Callable[[np.ndarray], Mapping[str, np.ndarray]]


#: Fewest resamples an interval takes: the quantiles of one draw are that draw.
MIN_RESAMPLES = 2
#: Below this many resamples an interval is coarse (a warning says so).
FEW_RESAMPLES = 200


class FewResamplesWarning(UserWarning):
    """Bootstrap intervals from fewer than :data:`FEW_RESAMPLES` draws."""


def check_resamples(resamples, name: str = "resamples", *, zero: bool = False) -> None:
    """InputError unless ``resamples`` is an integer of at least :data:`MIN_RESAMPLES`.

    Parameters
    ----------
    resamples : int
        The number of bootstrap draws.
    name : str, default 'resamples'
        The keyword the message names (with ``--resamples``, the option behind it).
    zero : bool, default False
        Also accept 0, for a keyword where it means no interval (``n_boot``).
    """
    try:
        whole = not isinstance(resamples, bool) and int(resamples) == resamples
    except (TypeError, ValueError, OverflowError):
        whole = False
    if whole and (resamples >= MIN_RESAMPLES or (zero and resamples == 0)):
        return
    raise InputError(
        f"{name} (--resamples) must be {'0 (no interval) or ' if zero else ''}an "
        f"integer of at least {MIN_RESAMPLES} (one draw gives no interval), got "
        f"{resamples!r}"
    )


def warn_if_few_resamples(resamples: int, stacklevel: int = 2) -> None:
    """A :class:`FewResamplesWarning` when ``resamples`` is below :data:`FEW_RESAMPLES`.

    Called once per run or comparison, where the intervals are made (not by
    :func:`intervals`, which a run calls once per family).

    Parameters
    ----------
    resamples : int
    stacklevel : int, default 2
        As :func:`warnings.warn`, counted from the caller.
    """
    if resamples < FEW_RESAMPLES:
        import warnings

        warnings.warn(
            f"intervals from {resamples} bootstrap draws (--resamples) are coarse: with "
            f"so few, their bounds move with the seed; use {DEFAULT_RESAMPLES} (the "
            "default) or more for figures to report",
            FewResamplesWarning,
            stacklevel=stacklevel + 1,
        )


def check_settings(resamples: int, level: float) -> None:
    """InputError unless ``resamples`` >= :data:`MIN_RESAMPLES` and 0 < ``level`` < 1."""
    check_resamples(resamples)
    if not 0 < level < 1:
        raise InputError(f"the interval level is a fraction in (0, 1), got {level!r}")


def ci_settings(ci) -> dict:
    """``ci`` (True or a mapping) as the engine's ``{"resamples", "level", "seed"}``,
    checked."""
    given = dict(ci) if isinstance(ci, dict) else {}
    unknown = set(given) - {"resamples", "level", "seed"}
    if unknown:
        raise InputError(f"unknown interval settings: {', '.join(sorted(unknown))}")
    out = {
        "resamples": given.get("resamples", DEFAULT_RESAMPLES),
        "level": given.get("level", DEFAULT_LEVEL),
        "seed": given.get("seed", DEFAULT_SEED),
    }
    check_settings(out["resamples"], out["level"])
    seed = out["seed"]
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"the bootstrap seed must be an integer >= 0, got {seed!r}")
    return out


def bootstrap_indices(
    n: int, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> np.ndarray:
    """The drawn images: a (resamples, n) int64 array of indices into the sorted ids.

    The same ``(n, resamples, seed)`` give the same draws on every machine (numpy's
    PCG64 stream of ``default_rng(seed).integers``).
    """
    if n < 1:
        raise InputError("no images to resample")
    return np.random.default_rng(seed).integers(0, n, size=(int(resamples), n))


def index_weights(indices: np.ndarray, n: int) -> np.ndarray:
    """(B, n) float64: how many times each image appears in each draw."""
    b = indices.shape[0]
    flat = (np.arange(b)[:, None] * n + indices).ravel()
    return np.bincount(flat, minlength=b * n).reshape(b, n).astype(np.float64)


def draws(
    statistic: Statistic, indices: np.ndarray, n: int, *, progress: bool = False
) -> dict[str, np.ndarray]:
    """Each score of ``statistic`` on each draw of ``indices``: name -> (B,) float64.
    ``progress``: a bar on stderr once the draws have taken a second (a million
    resamples can take minutes)."""
    parts: dict[str, list] = {}
    bar = _draws_bar(indices.shape[0]) if progress else None
    for a in range(0, indices.shape[0], _BLOCK):
        for name, values in statistic(index_weights(indices[a : a + _BLOCK], n)).items():
            parts.setdefault(name, []).append(np.asarray(values, dtype=np.float64))
        if bar is not None:
            bar.update(min(_BLOCK, indices.shape[0] - a))
    if bar is not None:
        bar.close()
    return {name: np.concatenate(v) for name, v in parts.items()}


def _draws_bar(total: int):
    import sys

    from tqdm.auto import tqdm

    tty = getattr(sys.stderr, "isatty", lambda: False)()
    # delay: no bar for the usual thousand draws, which take well under a second
    return tqdm(
        total=total,
        desc="bootstrap",
        unit="draw",
        file=sys.stderr,
        dynamic_ncols=True,
        leave=not tty,
        delay=1.0,
    )


def percentile_interval(values: np.ndarray, level: float) -> tuple[float, float]:
    """The central ``level`` interval of drawn values; NaN bounds if any draw is NaN."""
    finite = values[np.isfinite(values)]
    if finite.size < values.size or finite.size == 0:
        return float("nan"), float("nan")  # a draw where the score is undefined
    lo, hi = np.quantile(finite, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def intervals(
    statistic: Statistic,
    n: int,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
    progress: bool = False,
) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap intervals of every score of one run.

    Parameters
    ----------
    statistic : callable
        ``weights (b, n) -> {score: (b,) array}`` (a family's resampler).
    n : int
        Number of images.
    resamples, level, seed
        B, the interval's coverage (0.95 = 95%), and the seed of the draws.
    progress : bool, default False
        A progress bar on stderr when the draws take more than a second.

    Returns
    -------
    dict of str -> (lo, hi)
        NaN bounds where some draw leaves the score undefined.
    """
    check_settings(resamples, level)
    samples = draws(statistic, bootstrap_indices(n, resamples, seed), n, progress=progress)
    return {name: percentile_interval(v, level) for name, v in samples.items()}


def paired_differences(
    stat_a: Statistic,
    stat_b: Statistic,
    n: int,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
    observed_a: Mapping | None = None,
    observed_b: Mapping | None = None,
) -> dict[str, dict]:
    """Paired bootstrap of each score difference ``a - b`` on the same images.

    Each draw of images is applied to both runs, so what the images have in common
    cancels.

    Parameters
    ----------
    stat_a, stat_b : callable
        The two runs' statistics, on the same ``n`` images in the same order.
    observed_a, observed_b : mapping, optional
        Each run's scores on all images (the difference reported); by default the
        statistic at weight 1 for every image.

    Returns
    -------
    dict of str -> dict
        Per score common to both: ``diff`` (observed a - b), ``lo``, ``hi`` (the
        percentile interval of the drawn differences) and ``p`` (two-sided; see the
        module notes). NaN where a draw leaves a score undefined.
    """
    check_settings(resamples, level)
    idx = bootstrap_indices(n, resamples, seed)
    ones = np.ones((1, n))
    oa = (
        observed_a if observed_a is not None else {k: v[0] for k, v in stat_a(ones).items()}
    )
    ob = (
        observed_b if observed_b is not None else {k: v[0] for k, v in stat_b(ones).items()}
    )
    return differences_of_draws(draws(stat_a, idx, n), draws(stat_b, idx, n), oa, ob, level)


def differences_of_draws(
    da: Mapping,
    db: Mapping,
    observed_a: Mapping,
    observed_b: Mapping,
    level: float = DEFAULT_LEVEL,
) -> dict:
    """:func:`paired_differences` from the two runs' drawn scores (:func:`draws` with the
    same indices), for a caller that has them already.

    Parameters
    ----------
    da, db : mapping of score -> (B,) array
        Each run's scores at every draw.
    observed_a, observed_b : mapping
        Each run's scores on all images.
    level : float
        Interval coverage.
    """
    out = {}
    for name in da:
        if name not in db:
            continue
        d = da[name] - db[name]
        lo, hi = percentile_interval(d, level)
        if np.isfinite(d).all():
            b = d.size
            below, above = int((d <= 0).sum()), int((d >= 0).sum())
            p = min(1.0, 2 * (min(below, above) + 1) / (b + 1))
        else:
            p = float("nan")
        out[name] = {
            "diff": float(observed_a[name]) - float(observed_b[name]),
            "lo": lo,
            "hi": hi,
            "p": p,
        }
    return out
