"""``segbench detect`` with a weights file of tools/train_pb.py (issue 28 item 16), and
``detect``/``nms``/``ucm`` resuming as the benchmarks do (item 18)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from segbench.algorithms import pb_2mm, pb_bg, pb_cgtg
from segbench.cli import main
from segbench.datasets import write_ground_truth
from segbench.io import read_image, read_prediction

TOOL = Path(__file__).resolve().parents[1] / "tools" / "train_pb.py"


def _scene(k: int, rng):
    seg = np.ones((40, 50), np.int32)
    seg[:, 20 + 5 * k:] = 2
    seg[28:, :] = 3
    img = np.where(seg[..., None] == 1, 60, np.where(seg[..., None] == 2, 190, 120))
    return np.clip(img + rng.integers(-20, 20, (40, 50, 3)), 0, 255).astype(np.uint8), seg


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Two small photographs with ground truth, and the weights file tools/train_pb.py
    writes from them."""
    tmp = tmp_path_factory.mktemp("weights")
    rng = np.random.default_rng(0)
    (tmp / "img").mkdir()
    for k in range(2):
        img, seg = _scene(k, rng)
        Image.fromarray(img).save(tmp / "img" / f"{k}.jpg", quality=95)
        write_ground_truth(tmp / "gt" / f"{k}.mat", [seg, seg])
    spec = importlib.util.spec_from_file_location("train_pb", TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.main(["--images", str(tmp / "img"), "--gt", str(tmp / "gt"), "--rounds",
                      "1", "--per-image", "300", "--out", str(tmp / "mine.json")]) == 0
    return tmp


def detect(*args):
    return main(["detect", *args, "--quiet"])


def test_detect_takes_a_weights_file_of_train_pb(trained, tmp_path, capsys):
    weights = trained / "mine.json"
    table = json.loads(weights.read_text())
    for det, fn in (("pb-bg", pb_bg), ("pb-cgtg", pb_cgtg), ("2mm", pb_2mm)):
        out = tmp_path / det
        assert detect("--detector", det, "--weights", str(weights), "--images",
                      str(trained / "img"), "--out", str(out)) == 0
        assert f"weights of {weights}" in capsys.readouterr().out
        beta = np.array(table[det]["beta"]) / np.array(table[det]["fstd"])
        img = read_image(trained / "img" / "0.jpg")
        want = fn(img, weights=beta)[0]
        got = read_prediction(out / "0.png").pb
        np.testing.assert_allclose(got, np.rint(want * 65535) / 65535, atol=1e-12)
        marker = (out / ".segbench-detect").read_text()
        assert str(weights) in marker and "sha256" in marker


@pytest.mark.parametrize("content, why", [
    (None, "no such weights file"),
    ("not json", "not a weights file of tools/train_pb.py"),
    ("[1, 2]", "not a weights file of tools/train_pb.py"),
    (json.dumps({"pb-cg": {"cues": ["a", "b"], "beta": [1, 2, 3], "fstd": [1, 1, 1]}}),
     "no weights for pb-bg (it has: pb-cg)"),
    (json.dumps({"pb-bg": {"cues": ["tg"], "beta": [1, 2], "fstd": [1, 1]}}),
     "are for the cues ['tg']"),
    (json.dumps({"pb-bg": {"beta": [1, 2, 3], "fstd": [1, 1, 1]}}),
     "pb-bg needs 2 values in 'beta'"),
    (json.dumps({"pb-bg": {"beta": [1, "x"], "fstd": [1, 1]}}), "numeric lists"),
    (json.dumps({"pb-bg": {"beta": [1, 2], "fstd": [1, 0]}}), "'fstd' positive")])
def test_a_bad_weights_file_is_one_line_naming_it(trained, tmp_path, capsys, content, why):
    path = tmp_path / "w.json"
    if content is not None:
        path.write_text(content)
    assert detect("--detector", "pb-bg", "--weights", str(path), "--images",
                  str(trained / "img"), "--out", str(tmp_path / "out")) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"segbench: error: {path}: ")
    assert why in err
    assert not (tmp_path / "out").exists()


def test_weights_file_only_for_the_weighted_detectors(trained, tmp_path, capsys):
    assert detect("--detector", "gm", "--weights", str(trained / "mine.json"), "--images",
                  str(trained / "img"), "--out", str(tmp_path / "out")) == 2
    assert "--weights applies to" in capsys.readouterr().err


def _mtimes(out: Path) -> dict:
    return {p.name: p.stat().st_mtime_ns for p in out.glob("*.png")}


def test_detect_resumes_like_the_benchmarks(trained, tmp_path, capsys):
    images = tmp_path / "img"
    images.mkdir()
    for k in range(2):
        Image.open(trained / "img" / f"{k}.jpg").save(images / f"{k}.png")
    out = tmp_path / "maps"
    args = ["--detector", "pb-bg", "--images", str(images), "--out", str(out)]
    assert detect(*args) == 0
    assert "reused" not in capsys.readouterr().out
    first, before = _mtimes(out), {p.name: p.read_bytes() for p in out.glob("*.png")}
    assert detect(*args) == 0
    assert "(2 of 2 maps reused from the earlier run)" in capsys.readouterr().out
    assert _mtimes(out) == first                       # not written again
    # a changed photograph is computed again, the other map kept
    img = np.asarray(Image.open(images / "1.png")).copy()
    img[:10] = 0
    Image.fromarray(img).save(images / "1.png")
    assert detect(*args) == 0
    assert "(1 of 2 maps reused" in capsys.readouterr().out
    now = _mtimes(out)
    assert now["0.png"] == first["0.png"] and now["1.png"] != first["1.png"]
    # a map changed by hand is the user's: refused, never written over; once it is
    # gone, computed again
    (out / "0.png").write_bytes(before["1.png"])
    assert detect(*args) == 2
    assert "were not written by segbench detect or were changed since: 0.png" in (
        capsys.readouterr().err
    )
    assert (out / "0.png").read_bytes() == before["1.png"]
    (out / "0.png").unlink()
    assert detect(*args) == 0
    assert "(1 of 2 maps reused" in capsys.readouterr().out
    assert (out / "0.png").read_bytes() == before["0.png"]
    # other weights: computed again
    assert detect(*args, "--weights", "published") == 0
    assert "reused" not in capsys.readouterr().out
    assert detect(*args, "--json") == 0
    assert json.loads(capsys.readouterr().out)["n_reused"] == 0


def test_nms_and_ucm_resume_too(trained, tmp_path, capsys):
    soft = tmp_path / "soft"
    assert detect("--detector", "gm", "--images", str(trained / "img"), "--out",
                  str(soft)) == 0
    for cmd in ("nms", "ucm"):
        args = [cmd, "--pred", str(soft), "--out", str(tmp_path / cmd), "--quiet"]
        assert main(args) == 0
        capsys.readouterr()
        assert main(args) == 0
        assert "(2 of 2 maps reused from the earlier run)" in capsys.readouterr().out
