"""PR plots: accept the usual curve shapes and write a valid PNG."""

from dataclasses import dataclass

import numpy as np
import pytest

from segbench.boundary import plot_pr

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass
class Point:
    recall: float
    precision: float
    f: float


@dataclass
class Curve:
    name: str
    recall: np.ndarray
    precision: np.ndarray
    ods: Point


def _curve(shift=0.0):
    r = np.linspace(0.97, 0.25, 99)
    p = np.clip(1.0 - 0.85 * r**3 - shift, 0, 1)
    f = 2 * p * r / (p + r)
    i = int(np.argmax(f))
    return r, p, (r[i], p[i], f[i])


def _check_png(path, min_side=300):
    from PIL import Image

    data = path.read_bytes()
    assert len(data) > 1000 and data.startswith(PNG_SIGNATURE)
    with Image.open(path) as im:
        im.verify()
    with Image.open(path) as im:
        assert min(im.size) >= min_side


def test_dicts_dataclasses_and_human(tmp_path):
    r1, p1, ods1 = _curve()
    r2, p2, ods2 = _curve(0.15)
    r2[:3] = np.nan  # thresholds that selected nothing are skipped, not drawn
    curves = [
        {"name": "gradient", "recall": r1, "precision": p1, "ods": ods1},
        Curve("canny", r2, p2, Point(*ods2)),
    ]
    out = plot_pr(curves, tmp_path / "sub" / "pr.png", human=(0.8, 0.9, 0.847),
                  title="synthetic")
    assert out == tmp_path / "sub" / "pr.png"
    _check_png(out)


def test_single_curve_ods_without_f(tmp_path):
    r, p, (orr, op, _) = _curve()
    out = plot_pr({"name": "only", "recall": r, "precision": p,
                   "ods": {"recall": orr, "precision": op}}, tmp_path / "one.png")
    _check_png(out)


def test_empty_plot_still_valid(tmp_path):
    _check_png(plot_pr([], tmp_path / "empty.png", human={"recall": 0.7, "precision": 0.8}))


def test_bad_curves(tmp_path):
    r, p, ods = _curve()
    with pytest.raises(ValueError):
        plot_pr([{"recall": r, "precision": p}], tmp_path / "x.png")  # no name
    with pytest.raises(ValueError):
        plot_pr([{"name": "a", "recall": r, "precision": p[:-1]}], tmp_path / "x.png")
    with pytest.raises(ValueError):
        plot_pr([{"name": "a", "recall": r, "precision": p, "ods": (0.5,)}],
                tmp_path / "x.png")


def test_dollar_in_names_and_title_is_plain_text(tmp_path):
    """'$' would start matplotlib mathtext (an unbalanced one raises): shown as is."""
    r, p, _ = _curve()
    out = plot_pr([{"name": "a $\\frac{ b", "recall": r, "precision": p,
                    "ods": (0.5, 0.5, 0.5)}], tmp_path / "pr.png", title="cost $5")
    assert out.read_bytes().startswith(PNG_SIGNATURE)
