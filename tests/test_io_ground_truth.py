"""BSDS500 ground-truth .mat files: layouts, round trip, official data, errors."""

import numpy as np
import pytest
import scipy.io

from conftest import DATA, FIXTURES, require
from segbench.errors import InputError
from segbench.io import HumanSegmentation, read_ground_truth
from segbench.datasets import write_ground_truth

GT_VAL = DATA / "bsds500" / "groundTruth" / "val"
GT_FIXTURE = FIXTURES / "bsr-official" / "inputs" / "groundTruth"


def _maps(k=3, shape=(5, 7), seed=0):
    rng = np.random.default_rng(seed)
    segs = [rng.integers(1, 4, size=shape) for _ in range(k)]
    bdrys = [rng.integers(0, 2, size=shape) for _ in range(k)]
    return segs, bdrys


def _struct(seg, bdry):
    rec = np.empty((1, 1), dtype=[("Segmentation", object), ("Boundaries", object)])
    rec[0, 0] = (np.asarray(seg, np.uint16), np.asarray(bdry, np.uint8))
    return rec


def _check(result, segs, bdrys):
    assert len(result) == len(segs)
    for h, seg, bdry in zip(result, segs, bdrys):
        assert isinstance(h, HumanSegmentation)
        assert h.segmentation.dtype == np.int32 and h.boundaries.dtype == bool
        np.testing.assert_array_equal(h.segmentation, seg)
        np.testing.assert_array_equal(h.boundaries, np.asarray(bdry, bool))


def test_write_read_round_trip(tmp_path):
    segs, bdrys = _maps(k=4)
    write_ground_truth(tmp_path / "gt.mat", segs, boundaries=bdrys)
    _check(read_ground_truth(tmp_path / "gt.mat"), segs, bdrys)
    # the official layout: 1xK cell of 1x1 structs, uint16 / uint8
    raw = scipy.io.loadmat(tmp_path / "gt.mat")["groundTruth"]
    assert raw.shape == (1, 4) and raw.dtype == object
    assert raw[0, 0]["Segmentation"][0, 0].dtype == np.uint16
    assert raw[0, 0]["Boundaries"][0, 0].dtype == np.uint8


def test_single_annotator_and_equality(tmp_path):
    segs, bdrys = _maps(k=1)
    write_ground_truth(tmp_path / "gt.mat", segs, boundaries=bdrys)
    [h] = read_ground_truth(tmp_path / "gt.mat")
    assert h == HumanSegmentation(np.asarray(segs[0], np.int32),
                                  np.asarray(bdrys[0], bool))
    assert h.shape == (5, 7)


@pytest.mark.parametrize("layout", ["kx1 cell", "struct array", "bare struct",
                                    "double class"])
def test_other_layouts(tmp_path, layout):
    segs, bdrys = _maps(k=1 if layout == "bare struct" else 3)
    if layout == "kx1 cell":
        value = np.empty((3, 1), dtype=object)
        for k in range(3):
            value[k, 0] = _struct(segs[k], bdrys[k])
    elif layout == "struct array":
        value = np.empty((1, 3), dtype=[("Segmentation", object), ("Boundaries", object)])
        for k in range(3):
            value[0, k] = (segs[k].astype(np.uint16), bdrys[k].astype(np.uint8))
    elif layout == "bare struct":
        value = {"Segmentation": segs[0].astype(np.uint16),
                 "Boundaries": bdrys[0].astype(np.uint8)}
    else:  # MATLAB's default double class for both fields
        value = np.empty((1, 3), dtype=object)
        for k in range(3):
            value[0, k] = {"Segmentation": segs[k].astype(float),
                           "Boundaries": bdrys[k].astype(float)}
    scipy.io.savemat(tmp_path / "gt.mat", {"groundTruth": value})
    _check(read_ground_truth(tmp_path / "gt.mat"), segs, bdrys)


def test_official_file_matches_scipy(tmp_path):
    path = require(GT_VAL) / "62096.mat"
    raw = scipy.io.loadmat(path)["groundTruth"]
    result = read_ground_truth(path)
    assert len(result) == raw.shape[1] == 8
    for k, h in enumerate(result):
        seg = raw[0, k]["Segmentation"][0, 0]
        np.testing.assert_array_equal(h.segmentation, seg)
        np.testing.assert_array_equal(h.boundaries, raw[0, k]["Boundaries"][0, 0] == 1)
        assert h.segmentation.min() == 1 and h.shape == (321, 481)
    # re-writing an official file loses nothing
    write_ground_truth(tmp_path / "gt.mat", [h.segmentation for h in result],
                       boundaries=[h.boundaries for h in result])
    assert read_ground_truth(tmp_path / "gt.mat") == result


def test_all_fixture_files_read():
    for path in sorted(require(GT_FIXTURE).glob("*.mat")):
        result = read_ground_truth(path)
        assert 4 <= len(result) <= 9
        assert result[0].shape in ((321, 481), (481, 321))


def test_default_boundaries_are_thinned_seg2bdry(tmp_path):
    try:
        from segbench.boundary import thin  # noqa: F401  (written concurrently)
    except ImportError:
        pytest.skip("segbench.boundary.thin not available yet")
    path = require(GT_VAL) / "101085.mat"
    official = read_ground_truth(path)
    write_ground_truth(tmp_path / "gt.mat", [h.segmentation for h in official])
    assert read_ground_truth(tmp_path / "gt.mat") == official


def test_default_boundaries_call_thin_on_seg2bdry(tmp_path, monkeypatch):
    """The wiring, independent of the real thinning: Boundaries = thin(seg2bdry(seg))."""
    import segbench.primitives
    from segbench.boundary import seg2bdry

    calls = []

    def fake_thin(bmap):
        calls.append(bmap.copy())
        return bmap

    monkeypatch.setattr(segbench.primitives, "thin", fake_thin, raising=False)
    segs, _ = _maps(k=2)
    write_ground_truth(tmp_path / "gt.mat", segs)
    result = read_ground_truth(tmp_path / "gt.mat")
    assert len(calls) == 2
    for h, seg in zip(result, segs):
        np.testing.assert_array_equal(h.boundaries, seg2bdry(seg))


# --- errors ----------------------------------------------------------------------------

def _raises(path, *needles):
    with pytest.raises(InputError) as info:
        read_ground_truth(path)
    msg = str(info.value)
    assert str(path) in msg
    for needle in needles:
        assert needle in msg, msg
    return msg


def test_missing_file(tmp_path):
    _raises(tmp_path / "nope.mat", "file not found")


def test_corrupt_file(tmp_path):
    path = tmp_path / "bad.mat"
    path.write_bytes(b"MATLAB 5.0 MAT-file" + b"\x00" * 50 + b"garbage" * 20)
    _raises(path, "cannot read as a MATLAB .mat file")


def test_not_a_mat_file(tmp_path):
    path = tmp_path / "bad.mat"
    path.write_text("hello")
    _raises(path, "cannot read")


def test_hdf5_mat_is_explained(tmp_path):
    path = tmp_path / "v73.mat"
    header = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Mon Jan 1 2024 HDF5 schema"
    path.write_bytes(header.ljust(116, b" ") + b"\x00" * 8 + b"\x00\x02IM" + b"\x00" * 512)
    _raises(path, "v7.3")


def test_wrong_variable(tmp_path):
    scipy.io.savemat(tmp_path / "gt.mat", {"segs": np.zeros((2, 2))})
    _raises(tmp_path / "gt.mat", "no variable 'groundTruth'", "'segs'")


def test_missing_field(tmp_path):
    value = np.empty((1, 1), dtype=object)
    value[0, 0] = {"Segmentation": np.ones((2, 2), np.uint16)}
    scipy.io.savemat(tmp_path / "gt.mat", {"groundTruth": value})
    _raises(tmp_path / "gt.mat", "groundTruth{1}", "'Boundaries'")


def test_annotators_of_different_sizes(tmp_path):
    segs, bdrys = [np.ones((3, 4)), np.ones((4, 3))], [np.zeros((3, 4)), np.zeros((4, 3))]
    value = np.empty((1, 2), dtype=object)
    for k in range(2):
        value[0, k] = _struct(segs[k], bdrys[k])
    scipy.io.savemat(tmp_path / "gt.mat", {"groundTruth": value})
    _raises(tmp_path / "gt.mat", "3x4", "4x3", "groundTruth{2}")


@pytest.mark.parametrize("seg, bdry, needle", [
    (np.ones((2, 2, 2)), np.zeros((2, 2, 2)), "2-D"),
    (np.array([[1.0, np.nan]]), np.zeros((1, 2)), "NaN"),
    (np.array([[1.5, 1.0]]), np.zeros((1, 2)), "fractional"),
    (np.ones((2, 2)), np.full((2, 2), 2), "only 0 and 1"),
    (np.ones((2, 2)), np.zeros((2, 3)), "Boundaries is 2x3"),
])
def test_bad_maps(tmp_path, seg, bdry, needle):
    value = np.empty((1, 1), dtype=object)
    value[0, 0] = {"Segmentation": seg, "Boundaries": bdry}
    scipy.io.savemat(tmp_path / "gt.mat", {"groundTruth": value})
    _raises(tmp_path / "gt.mat", needle)


def test_empty_cell(tmp_path):
    scipy.io.savemat(tmp_path / "gt.mat", {"groundTruth": np.empty((1, 0), dtype=object)})
    _raises(tmp_path / "gt.mat", "no human segmentations")


def test_write_errors(tmp_path):
    path = tmp_path / "gt.mat"
    with pytest.raises(InputError, match="at least one"):
        write_ground_truth(path, [])
    with pytest.raises(InputError, match="segmentation 2 is 3x2"):
        write_ground_truth(path, [np.ones((2, 3)), np.ones((3, 2))],
                           boundaries=[np.zeros((2, 3))] * 2)
    with pytest.raises(InputError, match="outside the allowed range"):
        write_ground_truth(path, [np.full((2, 2), 70000)], boundaries=[np.zeros((2, 2))])
    with pytest.raises(InputError, match="1 boundary maps for 2"):
        write_ground_truth(path, [np.ones((2, 2))] * 2, boundaries=[np.zeros((2, 2))])
    with pytest.raises(InputError, match="boundaries 1 is 3x3"):
        write_ground_truth(path, [np.ones((2, 2))], boundaries=[np.zeros((3, 3))])
    # missing folders are created; a folder that cannot exist is an error naming the file
    write_ground_truth(tmp_path / "new" / "dir" / "gt.mat", [np.ones((2, 2))],
                       boundaries=[np.zeros((2, 2))])
    (tmp_path / "afile").write_text("x")
    with pytest.raises(InputError) as info:
        write_ground_truth(tmp_path / "afile" / "gt.mat", [np.ones((2, 2))],
                           boundaries=[np.zeros((2, 2))])
    assert "gt.mat" in str(info.value)
