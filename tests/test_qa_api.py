"""The Python API as a training loop meets it (QA round of 2026-12-07, helper-48): a
channels-last map read as a batch of one-pixel-wide images, and a two-segment label map
numbered from 0 read as a boundary map."""

from __future__ import annotations

import numpy as np
import pytest

import segbench
from segbench.errors import InputError
from segbench.semantic import SemanticEval


def test_semantic_refuses_a_channel_axis_last():
    g = (np.arange(60 * 80).reshape(60, 80) % 5).astype(np.uint8)
    ev = SemanticEval(5)
    with pytest.raises(InputError, match=r"shape \(60, 80, 1\), a channel axis last.*"
                                         r"60 images of 80 x 1 px"):
        ev.update(g[..., None], g[..., None])
    ev.update(g, g)
    assert ev.results()["n_images"] == 1


def test_boundary_eval_blames_a_channels_last_prediction_not_the_ground_truth():
    gt = np.zeros((40, 60), bool)
    gt[20, :] = True
    with pytest.raises(InputError, match=r"pred has shape \(40, 60, 1\), channels last"):
        segbench.BoundaryEval().update(np.zeros((40, 60, 1)), [gt])
    with pytest.raises(InputError, match=r"pred has shape \(40, 60, 3\), channels last"):
        segbench.BoundaryEval().update(np.zeros((40, 60, 3)), [gt])


def test_a_two_segment_label_map_numbered_from_zero_is_a_label_map():
    seg = np.zeros((64, 96), np.int64)
    seg[:, 40:] = 1
    pred = np.zeros((64, 96))
    pred[:, 39:41] = 1.0
    scores = []
    for g in (seg, seg + 1, seg.astype(np.uint8)):
        ev = segbench.BoundaryEval()
        ev.update(pred, [g])
        scores.append(ev.compute().metrics["ODS"])
    assert scores[0] > 0.99 and scores[0] == scores[1] == scores[2]


def test_thin_zero_one_maps_are_still_boundary_maps():
    """A .mat's Boundaries (0/1, thin) and the same map as bool score alike."""
    b = np.zeros((64, 96), np.uint8)
    b[:, 40] = 1
    b[30, :] = 1
    pred = b.astype(float)
    scores = []
    for g in (b, b.astype(bool), b * 255):
        ev = segbench.BoundaryEval()
        ev.update(pred, [g])
        scores.append(ev.compute().metrics["ODS"])
    assert scores[0] == 1.0 and scores[0] == scores[1] == scores[2]


def test_region_eval_counts_label_zero_of_ground_truth_arrays_as_a_region():
    """QA (helper-46): RegionEval dropped region 0 of 0-based ground-truth arrays as
    BSDS's "unlabelled", while the folder command reads label-map images with every
    label a region; 0- and 1-based arrays now give the same numbers."""
    rng = np.random.default_rng(0)
    rows, cols = np.mgrid[0:48, 0:64]
    gts = [((rows // (12 + 4 * k)) * 3 + cols // (16 + 4 * k)).astype(np.int64)
           for k in range(3)]
    pred = (rows // 16 * 4 + cols // 16 + (rng.random((48, 64)) < 0.02)).astype(np.int64)
    metrics = []
    for offset in (0, 1, 7):
        ev = segbench.RegionEval()
        ev.update(pred, [g + offset for g in gts], ids=["a"])
        metrics.append(ev.compute().metrics)
    assert metrics[0] == metrics[1] == metrics[2]


def test_region_messages_about_ucm2_sizes_name_what_was_given():
    """QA (helper-46): a uint8 doubleSize ucm2 was told to "take ucm2[2::2, 2::2]",
    which RegionEval then scored as a label map; a ucm2 of the wrong size was
    reported at half the size it was given."""
    seg = np.zeros((40, 60), np.int64)
    seg[:, 30:] = 1
    ucm2 = np.zeros((81, 121))
    with pytest.raises(InputError) as err:
        segbench.RegionEval().update(ucm2.astype(np.uint8), [seg])
    assert "looks like a doubleSize ucm2" in str(err.value)
    assert "2::2" not in str(err.value)
    with pytest.raises(InputError, match=r"the ucm2 is 41x61 \(HxW\), the doubleSize of "
                                         r"20x30, but the image and ground truth are 40x60"):
        segbench.RegionEval().update(np.zeros((41, 61)), [seg])
    with pytest.raises(InputError, match=r"or take ucm2\[2::2, 2::2\]"):
        segbench.BoundaryEval().update(ucm2, [seg])
