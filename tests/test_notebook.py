"""Results in a notebook: the HTML a Result shows (table and inline PR plot),
Result.plot on matplotlib axes (several results, iso-F contours, the human point) and
Result.compare on results computed in memory."""

from __future__ import annotations

import base64
import io
import re

import numpy as np
import pytest

import segbench
from segbench.datasets.synthetic import make_synthetic_dataset
from segbench.errors import InputError


@pytest.fixture(scope="module")
def results():
    from scipy import ndimage

    from segbench.boundary import seg2bdry
    items = make_synthetic_dataset(5, shape=(80, 112), n_annotators=4, seed=2)
    rng = np.random.default_rng(1)
    evs = [segbench.BoundaryEval(name="sharp"), segbench.BoundaryEval(name="blurry")]
    for it in items:
        edges = seg2bdry(it.segmentations[0], "imageSize").astype(float)
        for ev, sigma in zip(evs, (0.8, 2.0)):
            m = ndimage.gaussian_filter(edges, sigma) + 0.1 * rng.random(edges.shape)
            ev.update(m / m.max(), it.segmentations, ids=it.iid)
    human = segbench.human_scores([it.segmentations for it in items])
    return evs[0].compute(human=human), evs[1].compute(ci={"resamples": 100}), human


def test_repr_html_is_a_table_and_an_inline_png(results):
    from PIL import Image
    sharp, blurry, _ = results
    text = blurry._repr_html_()
    assert "<b>blurry</b> &middot; boundary &middot; 5 images" in text
    ods = blurry.metrics["ODS"]
    lo, hi = blurry.intervals["ODS"]
    assert (f"<th style='text-align:left'>ODS</th><td style='text-align:right'>"
            f"{ods:.4f} <small>[{lo:.3f}, {hi:.3f}]</small></td>") in text
    png = re.search(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", text).group(1)
    image = Image.open(io.BytesIO(base64.b64decode(png)))
    assert image.format == "PNG" and image.size == (360, 360)


def test_repr_html_of_a_region_result_has_no_plot_and_escapes_the_name():
    ev = segbench.RegionEval(name="<b>ucm</b>")
    seg = np.ones((20, 24), np.int32)
    seg[:, 12:] = 2
    ev.update([[seg]], [[seg, seg]])
    text = ev.compute()._repr_html_()
    assert "&lt;b&gt;ucm&lt;/b&gt;" in text and "<img" not in text
    assert "covering_ODS" in text
    with pytest.raises(InputError, match="Result.plot draws boundary PR curves; the "
                                         "region result"):
        ev.compute().plot()


def test_plot_draws_several_results_on_one_axes(results):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    sharp, blurry, human = results
    ax = Figure().add_subplot()
    assert sharp.plot(ax) is ax
    blurry.plot(ax=ax, label="blurred")
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [f"sharp [F = {sharp.metrics['ODS']:.3f}]",
                      f"blurred [F = {blurry.metrics['ODS']:.3f}]",
                      f"Human [F = {human.F:.3f}]"]
    star = [ln for ln in ax.lines if ln.get_marker() == "*"]
    assert len(star) == 1 and star[0].get_xydata().tolist() == [list(human.point[:2])]
    iso = [t.get_text() for t in ax.texts]
    assert iso == [f"{f / 10:.1f}" for f in range(1, 10)]       # drawn once
    curve = ax.lines[9]                          # after the nine iso-F contours
    r = np.asarray(sharp.curves["recall"])
    assert curve.get_xdata().tolist() == r[r >= 0.01].tolist()


def test_compare_on_results_in_memory_is_segbench_compare(results):
    sharp, blurry, _ = results
    mine = sharp.compare(blurry, resamples=200, seed=3)
    theirs = segbench.compare(sharp, blurry, resamples=200, seed=3)
    assert mine == theirs
    assert mine["runs"][0]["name"] == "sharp" and mine["n_images"] == 5
