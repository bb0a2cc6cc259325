"""Images are sized from their header before any pixel is decoded: a small file that
claims a huge image (a decompression bomb) is refused naming it, at a few MiB of memory
(issue 14, item 2)."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from segbench.errors import InputError
from segbench.io import MAX_PIXELS, image_size, read_image, read_label_map, \
    read_prediction

SIDE = 12000          # 144 megapixels, 1.36 GiB as the old code decoded it


def _png_bomb(path):
    Image.new("1", (SIDE, SIDE)).save(path)          # about 140 kB on disk
    return path


def _jpeg_bomb(path):
    """A real 16x16 JPEG whose frame header claims SIDE x SIDE."""
    buf = io.BytesIO()
    Image.new("L", (16, 16)).save(buf, format="JPEG")
    data = bytearray(buf.getvalue())
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = SIDE.to_bytes(2, "big") * 2
    path.write_bytes(bytes(data))
    return path


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_bombs_are_refused_from_the_header(tmp_path):
    png = _png_bomb(tmp_path / "bomb.png")
    bmp = tmp_path / "bomb.bmp"
    Image.new("1", (SIDE, SIDE)).save(bmp)
    jpg = _jpeg_bomb(tmp_path / "bomb.jpg")
    assert png.stat().st_size < 500_000 and jpg.stat().st_size < 2000
    for path, reader in ((png, read_prediction), (bmp, read_prediction),
                         (png, read_label_map), (jpg, read_image)):
        with pytest.raises(InputError, match="megapixels") as err:
            reader(path)
        assert str(path) in str(err.value)
        assert image_size(path) == (SIDE, SIDE)
    assert SIDE * SIDE > MAX_PIXELS


def test_bomb_costs_little_memory(tmp_path):
    """Peak memory of a process that reads the bomb stays under 200 MiB."""
    png = _png_bomb(tmp_path / "bomb.png")
    # VmHWM is this process's own peak (ru_maxrss would carry the forking parent's)
    code = (
        "from segbench.io import read_prediction\n"
        "from segbench.errors import InputError\n"
        f"try:\n    read_prediction({str(png)!r})\n"
        "except InputError as exc:\n    print('REFUSED', exc)\n"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0]\n"
        "print('RSS_KIB', hwm.split()[1])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120).stdout
    assert "REFUSED" in out, out
    rss_mib = int(out.split("RSS_KIB")[1]) / 1024
    assert rss_mib < 200, f"peak RSS {rss_mib:.0f} MiB"


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_submission_of_a_bomb_is_a_wrong_size_not_a_decode(tmp_path):
    """In a folder submission the size is compared with the image's before decoding."""
    from segbench.datasets import SyntheticDataset
    from segbench.submit import SubmissionError, submit
    synth = SyntheticDataset(n_images=1, shape=(24, 32), n_annotators=2)
    root = synth.write(tmp_path / "data")
    sub = tmp_path / "sub"
    sub.mkdir()
    _png_bomb(sub / "synth000.png")
    (sub / "name.txt").write_text("bomb\n")
    with pytest.raises(SubmissionError) as err:
        submit(sub, tmp_path / "run", dataset=root, progress=False, plot=False)
    problem = dict(err.value.malformed)["synth000.png"]
    assert f"{SIDE}x{SIDE}" in problem


def test_ordinary_images_still_read(tmp_path):
    arr = (np.arange(12 * 16) % 256).astype(np.uint8).reshape(12, 16)
    Image.fromarray(arr).save(tmp_path / "ok.png")
    np.testing.assert_array_equal(read_label_map(tmp_path / "ok.png"), arr)
    assert image_size(tmp_path / "ok.png") == (12, 16)
