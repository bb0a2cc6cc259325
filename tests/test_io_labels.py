"""Label maps, photographs and folder listings."""

import numpy as np
import pytest
import scipy.io
from PIL import Image

from conftest import DATA, require
from segbench.errors import InputError
from segbench.io import check_all_present, list_files, read_image, read_label_map, write_label_map

LABELS = np.array([[0, 1, 1, 7], [300, 300, 2, 65535]])


def _raises(func, path, *needles, **kw):
    with pytest.raises(InputError) as info:
        func(path, **kw)
    msg = str(info.value)
    assert str(path) in msg, msg
    for needle in needles:
        assert needle in msg, msg
    return msg


# --- label maps ------------------------------------------------------------------------------

@pytest.mark.parametrize("ext", [".png", ".npy"])
def test_write_read_round_trip(tmp_path, ext):
    write_label_map(tmp_path / f"l{ext}", LABELS)
    back = read_label_map(tmp_path / f"l{ext}")
    assert back.dtype == np.int32
    np.testing.assert_array_equal(back, LABELS)


def test_png_is_16bit(tmp_path):
    write_label_map(tmp_path / "l.png", np.array([[0, 1]]))
    with Image.open(tmp_path / "l.png") as im:
        assert im.mode.startswith("I;16")


def test_read_8bit_and_palette_png(tmp_path):
    small = (LABELS % 256).astype(np.uint8)
    Image.fromarray(small).save(tmp_path / "g.png")
    np.testing.assert_array_equal(read_label_map(tmp_path / "g.png"), small)
    # palette: the indices are the labels, whatever the colours
    pal = Image.fromarray(np.array([[0, 1, 2], [2, 1, 0]], np.uint8), mode="P")
    pal.putpalette([255, 0, 0, 0, 255, 0, 0, 0, 255] + [0] * 759)
    pal.save(tmp_path / "p.png")
    with Image.open(tmp_path / "p.png") as im:
        assert im.mode == "P"
    np.testing.assert_array_equal(read_label_map(tmp_path / "p.png"),
                                  [[0, 1, 2], [2, 1, 0]])


def test_read_mat(tmp_path):
    scipy.io.savemat(tmp_path / "a.mat", {"seg": LABELS.astype(float)})
    np.testing.assert_array_equal(read_label_map(tmp_path / "a.mat"), LABELS)
    scipy.io.savemat(tmp_path / "b.mat", {"seg": LABELS, "sp": LABELS + 1, "n": 3.0})
    _raises(read_label_map, tmp_path / "b.mat", "several", "seg, sp", "variable=")
    np.testing.assert_array_equal(read_label_map(tmp_path / "b.mat", variable="sp"),
                                  LABELS + 1)
    _raises(read_label_map, tmp_path / "b.mat", "no variable 'x'", variable="x")
    scipy.io.savemat(tmp_path / "c.mat", {"n": 3.0})
    _raises(read_label_map, tmp_path / "c.mat", "no 2-D numeric variable")


def test_read_errors(tmp_path):
    Image.fromarray(np.zeros((2, 2, 3), np.uint8)).save(tmp_path / "rgb.png")
    _raises(read_label_map, tmp_path / "rgb.png", "RGB", "Colours are not converted")
    np.save(tmp_path / "f.npy", np.array([[0.5, 1.0]]))
    _raises(read_label_map, tmp_path / "f.npy", "fractional")
    np.save(tmp_path / "n.npy", np.array([[np.nan, 1.0]]))
    _raises(read_label_map, tmp_path / "n.npy", "NaN")
    np.save(tmp_path / "3d.npy", np.zeros((2, 2, 2), int))
    _raises(read_label_map, tmp_path / "3d.npy", "2-D")
    np.save(tmp_path / "big.npy", np.array([[2**40]]))
    _raises(read_label_map, tmp_path / "big.npy", "outside the allowed range")
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n broken")
    _raises(read_label_map, tmp_path / "bad.png", "corrupt")
    (tmp_path / "l.txt").write_text("1 2")
    _raises(read_label_map, tmp_path / "l.txt", "unsupported label-map file type")
    _raises(read_label_map, tmp_path / "none.png", "file not found")


def test_write_errors(tmp_path):
    _raises(write_label_map, tmp_path / "l.png", "0..65535", ".npy",
            labels=np.array([[0, 65536]]))
    _raises(write_label_map, tmp_path / "l.png", "[-1, 0]", labels=np.array([[-1, 0]]))
    _raises(write_label_map, tmp_path / "l.jpg", "unsupported", labels=LABELS)
    _raises(write_label_map, tmp_path / "l.npy", "integers", labels=np.zeros((2, 2)))
    _raises(write_label_map, tmp_path / "l.npy", "2-D", labels=np.zeros(3, int))


# --- photographs -----------------------------------------------------------------------------

def test_read_image(tmp_path):
    rgb = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    Image.fromarray(rgb).save(tmp_path / "c.png")
    np.testing.assert_array_equal(read_image(tmp_path / "c.png"), rgb)
    Image.fromarray(rgb[..., 0]).save(tmp_path / "g.png")
    gray = read_image(tmp_path / "g.png")
    assert gray.shape == (2, 4, 3) and (gray == rgb[..., :1]).all()
    Image.fromarray(np.zeros((2, 2), np.uint16)).save(tmp_path / "16.png")
    _raises(read_image, tmp_path / "16.png", "8-bit")


def test_read_bsds_image():
    path = require(DATA / "bsds500" / "images" / "val") / "101085.jpg"
    img = read_image(path)
    assert img.dtype == np.uint8 and img.shape in ((321, 481, 3), (481, 321, 3))


# --- folders -----------------------------------------------------------------------------------

def test_list_files(tmp_path):
    for name in ("2.png", "10.PNG", "3.mat", "notes.txt", ".hidden.png"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "sub.png").mkdir()
    # a folder named like a file listed is refused (it was left out without a word),
    # unless the caller names such folders itself
    with pytest.raises(InputError, match=r"sub\.png: this is a folder, not a file"):
        list_files(tmp_path, ["png", ".mat"])
    found = list_files(tmp_path, ["png", ".mat"], folders=False)
    assert list(found) == ["10", "2", "3"]
    assert found["10"] == tmp_path / "10.PNG"
    assert list(list_files(tmp_path, ".txt")) == ["notes"]


def test_list_files_errors(tmp_path):
    (tmp_path / "1.png").write_bytes(b"")
    (tmp_path / "1.bmp").write_bytes(b"")
    msg = _raises(list_files, tmp_path, "1.bmp", "1.png", "'1'", exts=["png", "bmp"])
    assert "two files" in msg
    _raises(list_files, tmp_path / "missing", "folder not found", exts="png")
    _raises(list_files, tmp_path / "1.png", "expected a folder", exts="png")


def test_check_all_present_names_the_missing_ids(tmp_path):
    check_all_present(["a", "b"], {"a": 1, "b": 2, "c": 3}, "images have no map", tmp_path)
    ids = [f"{k:03d}" for k in range(25)]
    with pytest.raises(InputError, match=r"23 of 25 images have no map: 002, 003, .* 021 \.\.\.$"):
        check_all_present(ids, ids[:2], "images have no map", tmp_path)


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no named pipes")
def test_a_pair_of_label_files_names_a_folder_a_pipe_or_a_missing_file(tmp_path):
    # the pair reader opens files without checking them first: anything that is not
    # a regular file (a pipe is opened without blocking) gets the one-file message
    import os

    from segbench.io import read_stored_label_pair
    Image.fromarray(np.zeros((4, 4), np.uint8)).save(tmp_path / "g.png")
    os.mkfifo(tmp_path / "pipe.png")
    (tmp_path / "dir.png").mkdir()
    for name, message in (("pipe.png", "folder or special file"),
                          ("dir.png", "folder or special file"),
                          ("missing.png", "file not found")):
        with pytest.raises(InputError, match=message) as err:
            read_stored_label_pair(tmp_path / "g.png", tmp_path / name)
        assert name in str(err.value)
