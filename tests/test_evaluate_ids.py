"""``segbench.evaluate(pred={id: map})`` takes image ids as strings or as integers
(as :class:`segbench.BoundaryEval` does): BSDS ids are numbers, and a user's dict is often
keyed by them."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import segbench
from segbench.boundary import seg2bdry
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.errors import InputError


@pytest.fixture(scope="module")
def numbered(tmp_path_factory):
    """Three synthetic images named by numbers (100007, 100039, 100099) and a soft map
    of each (its first annotator's boundaries, blurred)."""
    from scipy import ndimage
    root = tmp_path_factory.mktemp("numbered")
    items = [dataclasses.replace(it, iid=iid) for it, iid in zip(
        make_synthetic_dataset(3, shape=(48, 64), n_annotators=3, seed=4),
        ("100007", "100039", "100099"))]
    write_synthetic_dataset(root, items)
    maps = {}
    for it in items:
        soft = ndimage.gaussian_filter(seg2bdry(it.segmentations[0], "imageSize")
                                       .astype(float), 1.0)
        maps[it.iid] = np.clip(soft / soft.max(), 0, 1)
    return root / "groundTruth" / "test", maps


def test_integer_ids_score_as_their_string_ids(numbered):
    gt, maps = numbered
    by_text = segbench.evaluate("boundary", gt=gt, pred=maps, progress=False, plot=False)
    by_int = segbench.evaluate("boundary", gt=gt, pred={int(k): v for k, v in maps.items()},
                               progress=False, plot=False)
    assert by_int.metrics == by_text.metrics
    assert [r["id"] for r in by_int.per_item] == ["100007", "100039", "100099"]
    mixed = {("100007" if k == "100007" else np.int64(k)): v for k, v in maps.items()}
    assert segbench.evaluate("boundary", gt=gt, pred=mixed, progress=False,
                             plot=False).metrics == by_text.metrics


def test_an_id_given_twice_or_a_key_that_is_no_id_is_one_line(numbered):
    gt, maps = numbered
    twice = {**maps, 100007: maps["100007"]}
    with pytest.raises(InputError, match=r"names image '100007' twice"):
        segbench.evaluate("boundary", gt=gt, pred=twice, progress=False)
    with pytest.raises(InputError, match=r"keys are image ids .* not float 100007.0"):
        segbench.evaluate("boundary", gt=gt, pred={100007.0: maps["100007"]},
                          progress=False)
