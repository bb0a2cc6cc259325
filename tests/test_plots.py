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


def _axes_box(path):
    """(x0, y0, x1, y1) of the axes in the PNG, found from its black spines: the left
    spine is the column, the bottom spine the row, with the most near-black pixels."""
    from PIL import Image

    with Image.open(path) as im:
        rgb = np.asarray(im.convert("RGB")).astype(int)
    dark = rgb.sum(axis=2) < 3 * 110
    x0, y1 = int(dark.sum(axis=0).argmax()), int(dark.sum(axis=1).argmax())
    y0 = int(np.nonzero(dark[:, x0])[0].min())
    x1 = int(np.nonzero(dark[y1, :])[0].max())
    return rgb, (x0, y0, x1, y1)


def _colour_near(rgb, x, y, colour, radius=2):
    """Whether some pixel within ``radius`` of (x, y) is ``colour`` (#rrggbb) +- 12."""
    want = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])
    x, y = round(x), round(y)
    patch = rgb[y - radius:y + radius + 1, x - radius:x + radius + 1]
    return bool((np.abs(patch - want).max(axis=2) <= 12).any())


def test_points_and_curves_are_where_the_data_says(tmp_path):
    """The ODS markers, a curve's points and the human star sit at their (recall,
    precision) in the axes found from the spines; the PNG is 5.6 in at the dpi."""
    r1, p1, ods1 = _curve()
    r2, p2, ods2 = _curve(0.3)
    out = plot_pr([{"name": "a", "recall": r1, "precision": p1, "ods": ods1},
                   {"name": "b", "recall": r2, "precision": p2, "ods": ods2}],
                  tmp_path / "pr.png", human=(0.55, 0.95, 0.70), dpi=100)
    rgb, (x0, y0, x1, y1) = _axes_box(out)
    assert rgb.shape[:2] == (560, 560)
    assert abs((x1 - x0) - (y1 - y0)) <= 3 and x1 - x0 > 400      # square axes

    def at(r, p):
        return x0 + r * (x1 - x0), y1 - p * (y1 - y0)
    assert _colour_near(rgb, *at(*ods1[:2]), "#1f77b4")        # C0, circle
    assert _colour_near(rgb, *at(*ods2[:2]), "#ff7f0e")        # C1, square
    for k in (20, 60, 80):                                      # along the curves
        assert _colour_near(rgb, *at(r1[k], p1[k]), "#1f77b4", 3), k
        assert _colour_near(rgb, *at(r2[k], p2[k]), "#ff7f0e", 3), k
    assert _colour_near(rgb, *at(0.55, 0.95), "#000000")       # the human star
    assert not _colour_near(rgb, *at(0.9, 0.97), "#1f77b4", 3)  # nothing drawn there


def test_plot_draws_without_pyplot(tmp_path):
    """matplotlib's Agg canvas, no pyplot: no global figure state, no display backend."""
    import subprocess
    import sys
    code = ("import sys, numpy as np\nfrom segbench.boundary import plot_pr\n"
            "print('matplotlib' in sys.modules)\n"
            "r = np.linspace(0.9, 0.2, 30)\n"
            f"plot_pr([{{'name': 'x', 'recall': r, 'precision': r[::-1]}}], "
            f"{str(tmp_path / 'pr.png')!r}, human=(0.7, 0.8, 0.75), title='t')\n"
            "print('matplotlib' in sys.modules, 'matplotlib.pyplot' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    # imported by the drawing only, and then without pyplot
    assert proc.stdout.split() == ["False", "True", "False"]
    _check_png(tmp_path / "pr.png")


def test_same_plot_same_bytes(tmp_path):
    """Deterministic: no timestamp or version in the PNG."""
    r, p, ods = _curve()
    curve = {"name": "a", "recall": r, "precision": p, "ods": ods}
    one = plot_pr([curve], tmp_path / "1.png", human=(0.8, 0.9, 0.847)).read_bytes()
    two = plot_pr([curve], tmp_path / "2.png", human=(0.8, 0.9, 0.847)).read_bytes()
    assert one == two and b"Matplotlib" not in one


def test_every_marker_and_colour_of_a_crowded_plot(tmp_path):
    """Twelve curves cycle through all ten markers and colours; each ODS point is drawn
    in its curve's colour."""
    curves = []
    for k in range(12):
        r, p, ods = _curve(0.05 * k)
        curves.append({"name": f"algorithm {k}", "recall": r, "precision": p, "ods": ods})
    out = plot_pr(curves, tmp_path / "many.png", human=(0.9, 0.95, 0.92), dpi=100)
    rgb, (x0, y0, x1, y1) = _axes_box(out)
    colours = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
               "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
    for k, c in enumerate(curves[:10]):
        r, p = c["ods"][:2]
        assert _colour_near(rgb, x0 + r * (x1 - x0), y1 - p * (y1 - y0), colours[k]), k
