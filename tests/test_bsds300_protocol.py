"""The BSDS300 protocol (segbench 1.2.0) beside the BSR one: each difference, tested.

Real data: the 61 BSDS300 colour ``.seg`` files in ../shared/data (skipped without it);
grey presentations are written here as ``.seg`` files with header ``gray 1``.
"""

from __future__ import annotations

import collections
import math
from pathlib import Path

import numpy as np
import pytest

from conftest import DATA, require
from segbench.boundary import (correspond_pixels, default_thresholds, evaluate_image,
                               human_counts, seg2bdry, thin)
from segbench.boundary._protocols import (PROTOCOLS, SOURCES, SubjectCounts,
                                          by_presentation, human_boundary_map,
                                          pool_subjects, protocol, seg2bmap,
                                          subject_counts, upsample_nearest)
from segbench.errors import InputError
from segbench.io import SegFile, read_ground_truth, read_prediction, read_seg, write_seg

SEGS = DATA / "bsds300-seg-subset" / "human" / "color"


def _color_segs() -> dict[str, list[tuple[int, Path]]]:
    """iid -> [(uid, path)] of the real colour .seg files, by ascending uid."""
    require(SEGS)
    out: dict[str, list] = collections.defaultdict(list)
    for f in sorted(SEGS.glob("*/*.seg")):
        out[f.stem].append((int(f.parent.name), f))
    return {k: sorted(v) for k, v in sorted(out.items())}


def _mat(iid: str) -> Path:
    found = sorted((DATA / "bsds500" / "groundTruth").glob(f"*/{iid}.mat"))
    if not found:
        pytest.skip(f"no BSDS500 ground truth for {iid}")
    return found[0]


# --- the presets -------------------------------------------------------------------------


def test_presets_name_the_family_parameters_and_their_sources():
    assert set(PROTOCOLS) == {"bsr", "bsds300", "martin2004", "bsds500", "nyud", "biped",
                              "multicue", "bsds-rind"}
    for name, preset in PROTOCOLS.items():
        assert set(SOURCES[name]) == set(preset), name
        assert all(SOURCES[name][k] for k in preset)
    bsr, b300 = PROTOCOLS["bsr"], PROTOCOLS["bsds300"]
    # the BSR preset is the boundary family's current default
    assert (bsr["nthresh"], bsr["max_dist"], bsr["thin"], bsr["thin_gt"]) == \
        (99, 0.0075, True, False)
    assert (b300["nthresh"], b300["max_dist"], b300["thin"], b300["thin_gt"]) == \
        (30, 0.0075, True, True)
    assert b300["presentations"] == ("gray", "color") and bsr["presentations"] is None
    assert b300["reported"] == ("ODS",) and b300["lone"] == "count"


def test_protocol_returns_a_copy_and_refuses_unknown_names():
    p = protocol("bsds300")
    p["nthresh"] = 1
    assert PROTOCOLS["bsds300"]["nthresh"] == 30
    with pytest.raises(InputError, match="unknown protocol"):
        protocol("bsds5000")


# --- thresholds --------------------------------------------------------------------------


def test_thirty_thresholds_are_k_over_31():
    t = default_thresholds(PROTOCOLS["bsds300"]["nthresh"])
    np.testing.assert_allclose(t, np.arange(1, 31) / 31, rtol=0, atol=1e-15)
    assert t[0] == pytest.approx(1 / 31) and t[-1] == pytest.approx(30 / 31)


def test_no_8bit_value_sits_on_a_bsds300_threshold():
    """v/255 = k/31 has no solution for k in 1..30 (31 and 255 are coprime), so the last
    bit of MATLAB's linspace cannot move any pixel of an 8-bit map across a threshold.
    BSR's 99 thresholds do meet 8-bit values (51/255 = 0.2)."""
    v = np.arange(256)[:, None] / 255
    gap30 = np.abs(v - default_thresholds(30)[None, :]).min()
    gap99 = np.abs(v - default_thresholds(99)[None, :]).min()
    assert gap30 > 1e-4
    assert gap99 < 1e-15


def test_thirty_thresholds_give_the_sampled_counts():
    """nthresh=30 scores the map at k/31, k = 1..30 (thresholds equal to the last bit,
    counts exactly)."""
    rng = np.random.default_rng(3)
    pb = np.round(rng.random((40, 50)) * 255) / 255
    human = np.zeros((40, 50), bool)
    human[20, 5:45] = True
    c30 = evaluate_image(pb, [human], nthresh=30)
    cx = evaluate_image(pb, [human], thresholds=np.arange(1, 31) / 31)
    np.testing.assert_allclose(c30.thresholds, cx.thresholds, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(c30.as_table()[:, 1:], cx.as_table()[:, 1:])
    np.testing.assert_array_equal(c30.sum_p, [thin(pb >= k / 31).sum()
                                              for k in range(1, 31)])


# --- seg2bmap: the BSDS300 human map -----------------------------------------------------


def test_seg2bmap_by_hand():
    seg = np.array([[1, 1, 2],
                    [1, 1, 2],
                    [3, 3, 3]])
    # east/south/south-east differences; last row: east only; last column: south only
    expected = np.array([[0, 1, 0],
                         [1, 1, 1],
                         [0, 0, 0]], bool)
    np.testing.assert_array_equal(seg2bmap(seg), expected)
    # a lone south-east difference marks the pixel (the corner rule)
    seg = np.array([[1, 1], [1, 2]])
    np.testing.assert_array_equal(seg2bmap(seg), [[1, 1], [1, 0]])


def test_seg2bmap_equals_seg2bdry_image_size():
    rng = np.random.default_rng(0)
    for _ in range(3000):
        h, w = rng.integers(1, 8, 2)
        lab = rng.integers(0, rng.integers(1, 4), (h, w))
        np.testing.assert_array_equal(seg2bmap(lab), seg2bdry(lab, "imageSize"))


def test_seg2bmap_refuses_bad_input():
    with pytest.raises(InputError):
        seg2bmap(np.zeros(5))


def test_real_human_maps_equal_the_bsds500_boundaries():
    """thin(seg2bmap(.seg)) is exactly the BSDS500 ``Boundaries`` of the same annotator,
    and the thinning removes pixels from every raw map."""
    n = 0
    for iid, entries in _color_segs().items():
        gt = read_ground_truth(_mat(iid))
        for _, path in entries:
            lab = read_seg(path).labels
            raw = seg2bmap(lab)
            np.testing.assert_array_equal(raw, seg2bdry(lab))
            same = [g for g in gt if np.array_equal(g.segmentation - 1, lab)]
            assert len(same) == 1, (iid, path)
            np.testing.assert_array_equal(human_boundary_map(lab), same[0].boundaries)
            assert raw.sum() > same[0].boundaries.sum()
            n += 1
    assert n == 61


# --- thin_gt: thinning the human maps ----------------------------------------------------


def _band():
    """A 3-pixel-thick human band and a one-pixel detection along its middle."""
    human = np.zeros((30, 40), bool)
    human[10:13, 5:35] = True
    pb = np.zeros((30, 40))
    pb[11, 5:35] = 0.8
    return pb, human


def test_thin_gt_thins_the_human_maps_before_matching():
    pb, human = _band()
    thin_h = thin(human)
    assert thin_h.sum() < human.sum()
    ours = evaluate_image(pb, [human], nthresh=30, thin_gt=True)
    by_hand = evaluate_image(pb, [thin_h], nthresh=30)
    np.testing.assert_array_equal(ours.as_table(), by_hand.as_table())
    stored = evaluate_image(pb, [human], nthresh=30)          # BSR: as stored
    assert (stored.sum_r == human.sum()).all()
    assert (ours.sum_r == thin_h.sum()).all()
    # The tolerance (0.375 px here) matches coincident pixels only. Thinning reduces
    # the band to its middle row without the two end pixels (28 of 30 columns):
    # as stored, the whole 30-px detected line matches the band's middle row and two
    # of the band's three rows go unfound; thinned, the band is found entirely but
    # the detected line's two end pixels have no partner.
    assert np.array_equal(np.argwhere(thin_h), [[11, c] for c in range(6, 34)])
    t = int(np.flatnonzero(ours.thresholds <= 0.8)[-1])
    assert ours.sum_p[t] == stored.sum_p[t] == 30
    assert (stored.cnt_r[t], stored.sum_r[t], stored.cnt_p[t]) == (30, 90, 30)
    assert (ours.cnt_r[t], ours.sum_r[t], ours.cnt_p[t]) == (28, 28, 28)


def test_thin_gt_is_a_no_op_on_the_official_boundaries():
    iid = "101085"
    gt = read_ground_truth(_mat(iid))
    ucm = require(DATA / "bsds500-gpb-owt-ucm" / "val" / f"{iid}.mat")
    pred = read_prediction(ucm)
    a = evaluate_image(pred, gt, nthresh=30, thin_gt=True)
    b = evaluate_image(pred, gt, nthresh=30)
    np.testing.assert_array_equal(a.as_table(), b.as_table())


def test_bsds300_rules_on_seg_files_equal_bsr_rules_on_the_mat():
    """The human maps BSDS300 derives from the .seg files are the ones BSR reads from
    the .mat, so with the same thresholds the counts agree exactly."""
    segs = _color_segs()
    iid = "101085"
    gt = read_ground_truth(_mat(iid))
    labels = [read_seg(p).labels for _, p in segs[iid]]
    same = [g.boundaries for g in gt if any(np.array_equal(g.segmentation - 1, lab)
                                            for lab in labels)]
    pred = read_prediction(require(DATA / "bsds500-gpb-owt-ucm" / "val" / f"{iid}.mat"))
    p300 = PROTOCOLS["bsds300"]
    b300 = evaluate_image(pred, [seg2bmap(lab) for lab in labels],
                          nthresh=p300["nthresh"], max_dist=p300["max_dist"],
                          thin=p300["thin"], thin_gt=p300["thin_gt"])
    bsr = evaluate_image(pred, same, nthresh=30)
    np.testing.assert_array_equal(b300.as_table(), bsr.as_table())
    raw = evaluate_image(pred, [seg2bmap(lab) for lab in labels], nthresh=30)
    assert (raw.sum_r > b300.sum_r).all()        # the unthinned maps are larger


# --- per-subject human counts ------------------------------------------------------------


def _three_subjects():
    """On a 50x50 image the tolerance is 0.53 px, so only coincident pixels match."""
    a = np.zeros((50, 50), bool)
    a[10, 5:25] = True                       # 20 px
    b = np.zeros((50, 50), bool)
    b[10, 5:15] = True                       # 10 px, half of a
    b[30, 5:15] = True                       # 10 px nobody else drew
    c = np.zeros((50, 50), bool)
    c[10, 15:25] = True                      # the other half of a
    return a, b, c


def test_subject_counts_by_hand():
    a, b, c = _three_subjects()
    rec = subject_counts([a, b, c], users=[7, 8, 9])
    # a against {b, c}: b's 10 of 20 px and c's 10 of 10 px found; all 20 of a matched
    # b against {a, c}: 10 of a's 20 found, none of c's 10; 10 of b's 20 matched
    # c against {a, b}: 10 of a's 20, none of b's 20; all 10 of c matched
    expected = np.array([[20, 30, 20, 20],
                         [10, 30, 10, 20],
                         [10, 40, 10, 10]])
    np.testing.assert_array_equal(rec.counts, expected)
    assert rec.users == (7, 8, 9)
    np.testing.assert_array_equal(rec.total(), expected.sum(0))
    r, p = expected[:, 0] / expected[:, 1], expected[:, 2] / expected[:, 3]
    np.testing.assert_allclose(rec.rpf(), np.column_stack([r, p, 2 * p * r / (p + r)]))


def test_subject_counts_against_pairwise_matching():
    """Each row rebuilt from correspond_pixels, pair by pair, on real subjects."""
    segs = _color_segs()
    entries = next(iter(segs.values()))
    maps = [human_boundary_map(read_seg(p).labels) for _, p in entries]
    rec = subject_counts(maps, users=[u for u, _ in entries])
    for j, hj in enumerate(maps):
        acc = np.zeros(hj.shape, bool)
        row = np.zeros(4, np.int64)
        for k, hk in enumerate(maps):
            if k != j:
                m1, m2 = correspond_pixels(hj, hk)
                acc |= np.asarray(m1) > 0
                row[0] += int((np.asarray(m2) > 0).sum())
                row[1] += int(hk.sum())
        row[2], row[3] = acc.sum(), hj.sum()
        np.testing.assert_array_equal(rec.counts[j], row)
    np.testing.assert_array_equal(rec.total(), human_counts(maps))


def test_lone_subject_counts_its_pixels_as_bsds300():
    a, _, _ = _three_subjects()
    np.testing.assert_array_equal(subject_counts([a], users=[1]).counts, [[0, 0, 0, 20]])
    np.testing.assert_array_equal(subject_counts([a], users=[1], lone="skip").counts,
                                  [[0, 0, 0, 0]])
    np.testing.assert_array_equal(human_counts([a]), [0, 0, 0, 0])   # default unchanged
    np.testing.assert_array_equal(human_counts([a], lone="count"), [0, 0, 0, 20])
    with pytest.raises(InputError):
        human_counts([a], lone="maybe")
    assert subject_counts([]).counts.shape == (0, 4)


def test_subject_counts_thin_the_maps():
    human = np.zeros((30, 40), bool)
    human[10:13, 5:35] = True
    other = np.zeros((30, 40), bool)
    other[11, 5:35] = True
    rec = subject_counts([human, other], users=[1, 2])
    t = thin(human)
    assert rec.counts[0, 3] == t.sum() < human.sum()
    np.testing.assert_array_equal(
        rec.counts, subject_counts([t, other], users=[1, 2], thin_gt=False).counts)
    np.testing.assert_array_equal(human_counts([human, other], thin_gt=True),
                                  rec.total())


def test_subject_counts_json_round_trip_and_pooling():
    a, b, c = _three_subjects()
    r1 = subject_counts([a, b, c], users=[7, 8, 9])
    r2 = subject_counts([b, c], users=[8, 9])
    assert SubjectCounts.from_json(r1.to_json()) == r1
    with pytest.raises(ValueError):
        SubjectCounts.from_json({"users": [1], "counts": [[1, 2, 3]]})
    with pytest.raises(ValueError):
        SubjectCounts.from_json({"users": [1], "counts": [[1, 2, 3, -1]]})
    pooled = pool_subjects([r1, r2])
    assert list(pooled) == [7, 8, 9]
    np.testing.assert_array_equal(pooled[8], r1.counts[1] + r2.counts[0])
    with pytest.raises(InputError):
        pool_subjects([subject_counts([a, b])])


def test_real_subjects_pooled_per_subject_and_per_image():
    """Per image the rows sum to the pooled human counts; per subject they pool over
    the images that subject segmented."""
    records = []
    for entries in _color_segs().values():
        anns = [read_seg(p) for _, p in entries]
        maps = [human_boundary_map(s.labels) for s in anns]
        rec = subject_counts(maps, users=[s.user for s in anns])
        assert rec.users == tuple(u for u, _ in entries)
        np.testing.assert_array_equal(rec.total(), human_counts(maps))
        assert (rec.counts[:, 2] <= rec.counts[:, 3]).all()
        assert (rec.counts[:, 0] <= rec.counts[:, 1]).all()
        records.append(rec)
    pooled = pool_subjects(records)
    n_images = collections.Counter(u for r in records for u in r.users)
    assert set(pooled) == set(n_images)
    total = sum(r.total() for r in records)
    np.testing.assert_array_equal(sum(pooled.values()), total)
    r, p = total[0] / total[1], total[2] / total[3]
    assert 0.6 < 2 * p * r / (p + r) < 0.95     # the human F of the colour subjects


# --- presentations -----------------------------------------------------------------------


def _gray_tree(tmp_path) -> tuple[Path, str]:
    """A BSDS300 human tree: the real colour subjects of one image, and the same label
    maps written again as grey presentations by other subject ids (header gray 1), the
    first of them shifted by 3 columns so that grey and colour scores differ."""
    segs = _color_segs()
    iid = "101085"
    for uid, path in segs[iid]:
        s = read_seg(path)
        d = tmp_path / "human" / "color" / str(uid)
        d.mkdir(parents=True, exist_ok=True)
        write_seg(d / f"{iid}.seg", s)
        lab = s.labels if uid != segs[iid][0][0] else np.roll(s.labels, 3, axis=1)
        g = SegFile(lab, image=s.image, user=uid + 1000, gray=True)
        d = tmp_path / "human" / "gray" / str(uid + 1000)
        d.mkdir(parents=True, exist_ok=True)
        write_seg(d / f"{iid}.seg", g)
    return tmp_path, iid


def test_gray_seg_files_are_scored_apart_from_colour(tmp_path):
    from segbench.datasets import BSDS300
    root, iid = _gray_tree(tmp_path)
    f = next((root / "human" / "gray").glob(f"*/{iid}.seg"))
    assert "gray 1" in f.read_text().splitlines()
    assert read_seg(f).gray is True
    gray = BSDS300(root, presentation="gray")[iid].annotations
    color = BSDS300(root, presentation="color")[iid].annotations
    both = BSDS300(root, presentation="all")[iid].annotations
    assert all(a.gray for a in gray) and not any(a.gray for a in color)
    split = by_presentation(both)
    assert [a.user for a in split["gray"]] == [a.user for a in gray]
    assert [a.user for a in split["color"]] == [a.user for a in color]
    rec_g = subject_counts(split["gray"])
    rec_c = subject_counts(split["color"])
    assert all(u > 2000 for u in rec_g.users) and all(u < 2000 for u in rec_c.users)
    # colour subjects are scored against colour subjects only, grey against grey
    np.testing.assert_array_equal(rec_c.total(), human_counts(color))
    np.testing.assert_array_equal(rec_g.total(), human_counts(gray))
    assert not np.array_equal(rec_g.counts, rec_c.counts)
    mixed = subject_counts(both)
    assert mixed.counts[:, 1].sum() > rec_c.counts[:, 1].sum() + rec_g.counts[:, 1].sum()
    # the machine benchmark's ground truth also depends on the presentation
    pb = read_prediction(require(DATA / "bsds500-gpb-owt-ucm" / "val" / f"{iid}.mat"))
    cg = evaluate_image(pb, gray, nthresh=30, thin_gt=True)
    cc = evaluate_image(pb, color, nthresh=30, thin_gt=True)
    np.testing.assert_array_equal(cg.sum_p, cc.sum_p)
    assert not np.array_equal(cg.cnt_r, cc.cnt_r)


def test_by_presentation_needs_the_presentation():
    gt = read_ground_truth(_mat("101085"))
    with pytest.raises(InputError, match="gray or in colour"):
        by_presentation(gt)


# --- a soft map smaller than the segmentations -------------------------------------------


def test_upsample_nearest():
    pb = np.arange(6, dtype=float).reshape(2, 3)
    up = upsample_nearest(pb, (4, 6))
    np.testing.assert_array_equal(up, np.repeat(np.repeat(pb, 2, 0), 2, 1))
    np.testing.assert_array_equal(upsample_nearest(pb, (2, 3)), pb)
    half = np.random.default_rng(1).random((161, 241))
    full = upsample_nearest(half, (321, 481))
    assert full.shape == (321, 481)
    # pixel centres aligned: output x reads input floor((x + 0.5) * in / out)
    rows = np.minimum(((np.arange(321) + 0.5) * 161 / 321).astype(int), 160)
    cols = np.minimum(((np.arange(481) + 0.5) * 241 / 481).astype(int), 240)
    np.testing.assert_array_equal(full, half[np.ix_(rows, cols)])
    with pytest.raises(InputError, match="only upsamples"):
        upsample_nearest(np.zeros((5, 5)), (4, 4))
    with pytest.raises(InputError):
        upsample_nearest(np.zeros((4, 6)), (6, 4))


def test_f_measure_of_the_preset_is_the_harmonic_mean():
    assert PROTOCOLS["bsds300"]["alpha"] == PROTOCOLS["bsr"]["alpha"] == 0.5
    rec = SubjectCounts((1,), np.array([[3, 4, 1, 2]]))
    r, p, f = rec.rpf()[0]
    assert math.isclose(f, 2 * r * p / (r + p))
