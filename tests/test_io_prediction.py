"""Prediction inputs: soft maps (PNG/BMP/npy), ucm2 and segs .mat, validation."""

import numpy as np
import pytest
import scipy.io
from PIL import Image

from conftest import DATA, FIXTURES, require
from segbench.errors import InputError
from segbench.io import Prediction, as_prediction, check_same_shape, read_prediction

INPUTS = FIXTURES / "bsr-official" / "inputs"
U8 = np.array([[0, 1, 128], [200, 254, 255]], np.uint8)


def _png(tmp_path, array, name="p.png", mode=None):
    path = tmp_path / name
    Image.fromarray(array, mode=mode).save(path) if mode else Image.fromarray(array).save(path)
    return path


def _raises(path, *needles, **kw):
    with pytest.raises(InputError) as info:
        read_prediction(path, **kw)
    msg = str(info.value)
    assert str(path) in msg, msg
    for needle in needles:
        assert needle in msg, msg
    return msg


# --- soft maps ---------------------------------------------------------------------------

def test_png_8bit(tmp_path):
    pred = read_prediction(_png(tmp_path, U8))
    assert pred.kind == "soft" and pred.pb.dtype == np.float64
    np.testing.assert_array_equal(pred.pb, U8 / 255.0)
    assert pred.shape == (2, 3) and pred.ucm2 is None and pred.segs is None
    assert pred.source == str(tmp_path / "p.png")


def test_png_16bit(tmp_path):
    a = np.array([[0, 1, 40000], [65535, 3, 7]], np.uint16)
    pred = read_prediction(_png(tmp_path, a))
    np.testing.assert_array_equal(pred.pb, a / 65535.0)


def test_png_1bit(tmp_path):
    pred = read_prediction(_png(tmp_path, U8 > 100))
    np.testing.assert_array_equal(pred.pb, (U8 > 100).astype(float))


def test_bmp(tmp_path):
    pred = read_prediction(_png(tmp_path, U8, "p.bmp"))
    np.testing.assert_array_equal(pred.pb, U8 / 255.0)


def test_rgb_with_identical_channels_is_gray(tmp_path):
    for mode, stack in (("RGB", [U8, U8, U8]), ("RGBA", [U8, U8, U8, np.full_like(U8, 255)])):
        pred = read_prediction(_png(tmp_path, np.stack(stack, -1), f"{mode}.png"))
        np.testing.assert_array_equal(pred.pb, U8 / 255.0)


def test_rgb_with_different_channels_is_refused(tmp_path):
    rgb = np.stack([U8, U8, 255 - U8], -1)
    _raises(_png(tmp_path, rgb), "RGB", "single-channel", "channels differ")


def test_rgba_with_transparency_is_refused(tmp_path):
    rgba = np.stack([U8, U8, U8, U8], -1)
    _raises(_png(tmp_path, rgba), "alpha")


def test_palette_png_is_refused(tmp_path):
    path = tmp_path / "p.png"
    Image.fromarray(U8).quantize(4).save(path)
    _raises(path, "palette")


def test_npy_float(tmp_path):
    a = np.array([[0.0, 0.25], [0.5, 1.0]], np.float32)
    np.save(tmp_path / "p.npy", a)
    pred = read_prediction(tmp_path / "p.npy")
    assert pred.pb.dtype == np.float64
    np.testing.assert_array_equal(pred.pb, a.astype(np.float64))


def test_npy_uint8_and_uint16_scale_like_images(tmp_path):
    np.save(tmp_path / "a.npy", U8)
    np.testing.assert_array_equal(read_prediction(tmp_path / "a.npy").pb, U8 / 255.0)
    np.save(tmp_path / "b.npy", U8.astype(np.uint16) * 257)
    np.testing.assert_array_equal(read_prediction(tmp_path / "b.npy").pb, U8 / 255.0)


@pytest.mark.parametrize("array, needles", [
    (np.array([[0.5, np.nan]]), ("NaN",)),
    (np.array([[0.5, np.inf]]), ("NaN or infinite",)),
    (np.array([[0.5, 1.5]]), ("[0.5, 1.5]", "[0, 1]")),
    (np.array([[-0.1, 0.5]]), ("[0, 1]",)),
    (np.array([[1, 2]], np.int64), ("int64", "ambiguous")),
    (np.zeros((2, 3, 1)), ("2-D", "squeeze")),
    (np.zeros((0, 3)), ("empty",)),
    (np.array([["a"]]), ("holds text, not numbers",)),
])
def test_npy_errors(tmp_path, array, needles):
    np.save(tmp_path / "p.npy", array)
    _raises(tmp_path / "p.npy", *needles)


def test_npy_pickled_objects_refused(tmp_path):
    np.save(tmp_path / "p.npy", np.array([None, 1], dtype=object), allow_pickle=True)
    _raises(tmp_path / "p.npy", "pickled")


def test_corrupt_files(tmp_path):
    good = _png(tmp_path, np.zeros((50, 50), np.uint8) + np.arange(50, dtype=np.uint8))
    (tmp_path / "trunc.png").write_bytes(good.read_bytes()[:60])
    _raises(tmp_path / "trunc.png", "corrupt")
    (tmp_path / "junk.png").write_bytes(b"this is not a png")
    _raises(tmp_path / "junk.png", "not an image")
    (tmp_path / "junk.npy").write_bytes(b"\x93NUMPY garbage")
    _raises(tmp_path / "junk.npy", "npy")


def test_missing_and_unsupported(tmp_path):
    _raises(tmp_path / "none.png", "file not found")
    (tmp_path / "p.jpg").write_bytes(b"x")
    _raises(tmp_path / "p.jpg", "JPEG is lossy")
    (tmp_path / "p.txt").write_bytes(b"x")
    _raises(tmp_path / "p.txt", "unsupported prediction file type")
    _raises(_png(tmp_path, U8), "not 'ucm2'", kind="ucm2")


def test_official_png_fixture():
    path = require(INPUTS / "png") / "2018.png"
    pred = read_prediction(path)
    raw = np.asarray(Image.open(path))
    np.testing.assert_array_equal(pred.pb, raw / 255.0)
    assert pred.shape == (481, 321)


def test_hed_png():
    folder = require(DATA / "bsds500-hed-nms" / "test")
    path = sorted(folder.glob("*.png"))[0]
    pred = read_prediction(path)
    assert pred.shape in ((321, 481), (481, 321)) and 0 <= pred.pb.min() <= pred.pb.max() <= 1


# --- ucm2 and segs -----------------------------------------------------------------------

def _ucm2(h=3, w=4, seed=0):
    return np.random.default_rng(seed).random((2 * h + 1, 2 * w + 1))


def test_ucm2_mat(tmp_path):
    u = _ucm2()
    scipy.io.savemat(tmp_path / "u.mat", {"ucm2": u})
    pred = read_prediction(tmp_path / "u.mat")
    assert pred.kind == "ucm2" and pred.shape == (3, 4)
    np.testing.assert_array_equal(pred.ucm2, u)
    np.testing.assert_array_equal(pred.pb, u[2::2, 2::2])


def test_official_ucm2_and_segs():
    u = require(INPUTS / "ucm2") / "2018.mat"
    pred = read_prediction(u)
    raw = scipy.io.loadmat(u)["ucm2"]
    assert pred.ucm2.shape == (963, 643) and pred.shape == (481, 321)
    np.testing.assert_array_equal(pred.pb, raw[2::2, 2::2])
    s = INPUTS / "segs" / "2018.mat"
    pred = read_prediction(s)
    raw = scipy.io.loadmat(s)["segs"]
    assert pred.kind == "segs" and len(pred.segs) == raw.shape[1]
    for mine, theirs in zip(pred.segs, raw[0]):
        assert mine.dtype == np.int32
        np.testing.assert_array_equal(mine, theirs)


def test_segs_mat(tmp_path):
    segs = [np.arange(12).reshape(3, 4) % k for k in (2, 3, 5)]
    cell = np.empty((1, 3), dtype=object)
    for k, s in enumerate(segs):
        cell[0, k] = s.astype(float)  # MATLAB's default double
    scipy.io.savemat(tmp_path / "s.mat", {"segs": cell})
    pred = read_prediction(tmp_path / "s.mat")
    assert pred.kind == "segs" and pred.pb is None and pred.shape == (3, 4)
    assert all(np.array_equal(a, b) for a, b in zip(pred.segs, segs))
    # a bare 2-D array counts as one segmentation
    scipy.io.savemat(tmp_path / "one.mat", {"segs": segs[0]})
    assert len(read_prediction(tmp_path / "one.mat").segs) == 1


def test_mat_with_both_needs_kind(tmp_path):
    scipy.io.savemat(tmp_path / "b.mat", {"ucm2": _ucm2(), "segs": np.ones((3, 4))})
    _raises(tmp_path / "b.mat", "both", "kind=")
    assert read_prediction(tmp_path / "b.mat", kind="segs").kind == "segs"
    assert read_prediction(tmp_path / "b.mat", kind="ucm2").kind == "ucm2"


def test_mat_errors(tmp_path):
    scipy.io.savemat(tmp_path / "w.mat", {"pb": np.zeros((3, 3))})
    _raises(tmp_path / "w.mat", "no variable 'ucm2' or 'segs'", "'pb' (3x3 double)")
    _raises(tmp_path / "w.mat", "no variable 'segs'", kind="segs")
    scipy.io.savemat(tmp_path / "even.mat", {"ucm2": np.zeros((6, 9))})
    _raises(tmp_path / "even.mat", "6x9", "(2H+1)x(2W+1)")
    scipy.io.savemat(tmp_path / "nan.mat", {"ucm2": np.full((3, 3), np.nan)})
    _raises(tmp_path / "nan.mat", "ucm2", "NaN")
    scipy.io.savemat(tmp_path / "big.mat", {"ucm2": np.full((3, 3), 255.0)})
    _raises(tmp_path / "big.mat", "[0, 1]")
    cell = np.empty((1, 2), dtype=object)
    cell[0, 0], cell[0, 1] = np.ones((3, 4)), np.ones((4, 3))
    scipy.io.savemat(tmp_path / "s.mat", {"segs": cell})
    _raises(tmp_path / "s.mat", "segs{2} is 4x3", "segs{1} is 3x4")
    cell[0, 1] = np.full((3, 4), 0.5)
    scipy.io.savemat(tmp_path / "s.mat", {"segs": cell})
    _raises(tmp_path / "s.mat", "segs{2}", "fractional")
    scipy.io.savemat(tmp_path / "e.mat", {"segs": np.empty((1, 0), dtype=object)})
    _raises(tmp_path / "e.mat", "empty")
    (tmp_path / "c.mat").write_bytes(b"MATLAB 5.0 MAT-file garbage")
    _raises(tmp_path / "c.mat", "cannot read")


# --- in memory -----------------------------------------------------------------------------

def test_as_prediction():
    soft = as_prediction(U8)
    np.testing.assert_array_equal(soft.pb, U8 / 255.0)
    assert soft.source is None
    assert as_prediction(np.array([[0.5]])).pb[0, 0] == 0.5
    assert as_prediction(soft) is soft
    u = as_prediction(_ucm2(), kind="ucm2")
    assert u.kind == "ucm2" and u.shape == (3, 4)
    segs = as_prediction([np.zeros((2, 2), np.uint8), np.ones((2, 2), np.int64)])
    assert segs.kind == "segs" and [s.dtype for s in segs.segs] == [np.int32] * 2
    stack = as_prediction(np.zeros((3, 2, 2), int), kind="segs")
    assert len(stack.segs) == 3
    assert as_prediction(np.ones((2, 2), int), kind="segs").segs[0].shape == (2, 2)
    assert Prediction("soft", pb=U8) == soft
    assert Prediction("ucm2", ucm2=u.ucm2) == u


@pytest.mark.parametrize("obj, kw, needle", [
    (np.array([[0.5, np.nan]]), {}, "NaN"),
    (np.array([[2.0]]), {}, "[0, 1]"),
    (np.zeros((3, 3, 3)), {}, "2-D"),
    (np.zeros((4, 4)), {"kind": "ucm2"}, "odd"),
    ([np.ones((2, 2)), np.ones((3, 3))], {}, "segs{2} is 3x3"),
    ([], {}, "empty"),
    ("hello", {}, "cannot make a prediction from a str"),
    ([np.ones((2, 2))], {"kind": "soft"}, "'segs' prediction"),
    (np.ones((2, 2)), {"kind": "edges"}, "kind must be one of"),
])
def test_as_prediction_errors(obj, kw, needle):
    with pytest.raises(InputError) as info:
        as_prediction(obj, source="algo/1.png", **kw)
    assert needle in str(info.value) and "algo/1.png" in str(info.value)


def test_prediction_constructor_checks():
    with pytest.raises(InputError, match="needs pb"):
        Prediction("soft", segs=[np.ones((2, 2))])
    with pytest.raises(InputError, match="must equal"):
        Prediction("ucm2", ucm2=_ucm2(), pb=np.zeros((3, 4)))
    with pytest.raises(InputError, match="expected a 'ucm2'"):
        as_prediction(as_prediction(U8), kind="ucm2")


# --- shape check ---------------------------------------------------------------------------

def _shape_error(pred, gt_shape, path=None):
    with pytest.raises(InputError) as info:
        check_same_shape(pred, gt_shape, path)
    return str(info.value)


def test_check_same_shape():
    pred = as_prediction(np.zeros((481, 321)), source="pred/1.png")
    check_same_shape(pred, (481, 321))
    msg = _shape_error(pred, (321, 481))
    assert msg.startswith("pred/1.png: ") and "481x321" in msg and "321x481" in msg
    assert "transposed" in msg
    msg = _shape_error(pred, (480, 320))
    assert "481x321" in msg and "480x320" in msg and "transposed" not in msg
    msg = _shape_error(np.zeros((7, 9)), (3, 4), "a.npy")
    assert msg.startswith("a.npy: ") and "doubleSize" in msg
    ucm = as_prediction(np.zeros((5, 7)), kind="ucm2", source="u.mat")
    msg = _shape_error(ucm, (5, 7))
    assert "u.mat" in msg and "11x15" in msg and "image size" in msg
    assert "(2, 3)" not in _shape_error((2, 3), (3, 3))


def test_pickles_for_worker_processes():
    import pickle

    for pred in (as_prediction(U8, source="a.png"), as_prediction(_ucm2(), kind="ucm2"),
                 as_prediction([np.ones((2, 2), int)])):
        assert pickle.loads(pickle.dumps(pred)) == pred
