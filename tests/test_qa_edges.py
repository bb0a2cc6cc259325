"""Defects found by using the product at its edges (stop 52): labels no class count
reaches, and what the QA sweeps of the detectors, the site and the tools found."""

from __future__ import annotations

import numpy as np
import pytest

from segbench.semantic import LabelError, SemanticEval


@pytest.mark.parametrize("dtype", ["<u8", ">u8"])
def test_a_uint64_label_beyond_int64_is_named_as_stored(dtype):
    pred = np.zeros((2, 8, 8), dtype)
    pred[1, 4, 5] = 2**64 - 1
    ev = SemanticEval(3)
    with pytest.raises(
        LabelError, match=r"image 1, row 4, col 5\) has label 18446744073709551615"
    ):
        ev.update(np.zeros((2, 8, 8), np.uint8), pred)
    assert ev.n_images == 0  # nothing counted


def test_a_folder_named_like_a_soft_prediction_is_said_to_be_one(tmp_path):
    from segbench.datasets._inputs import pair_predictions
    from segbench.errors import InputError

    (tmp_path / "100007.png").mkdir()
    with pytest.raises(InputError, match=r"100007\.png is a folder, not a file"):
        pair_predictions(["100007"], tmp_path, ("png", "npy"))


def _png_with_damaged_header(path):
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray((np.arange(64).reshape(8, 8) % 3).astype(np.uint8)).save(buf, "PNG")
    data = bytearray(buf.getvalue())
    data[29] ^= 0xFF  # the IHDR chunk's CRC
    path.write_bytes(bytes(data))


def test_a_png_with_a_damaged_header_is_refused_by_every_reader(tmp_path, capsys):
    from segbench.cli import main
    from segbench.errors import InputError
    from segbench.io import read_label_map

    for side in ("gt", "pred"):
        (tmp_path / side).mkdir()
    _png_with_damaged_header(tmp_path / "gt" / "a.png")
    with pytest.raises(InputError, match="not an image Pillow can read"):
        read_label_map(tmp_path / "gt" / "a.png")
    from PIL import Image

    Image.fromarray(np.zeros((8, 8), np.uint8)).save(tmp_path / "pred" / "a.png")
    code = main(
        [
            "semantic",
            "--gt",
            str(tmp_path / "gt"),
            "--pred",
            str(tmp_path / "pred"),
            "--classes",
            "3",
            "--quiet",
        ]
    )
    assert code == 2
    assert "gt/a.png: not an image Pillow can read" in capsys.readouterr().err
