"""tools/train_pb.py: the record of a fit says how its cues were sampled."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
from PIL import Image

from segbench.datasets import write_ground_truth

TOOL = Path(__file__).resolve().parents[1] / "tools" / "train_pb.py"


def _tool():
    spec = importlib.util.spec_from_file_location("train_pb", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_cached_fit_records_the_cache_settings(tmp_path, capsys):
    rng = np.random.default_rng(0)
    (tmp_path / "img").mkdir()
    for k in range(2):
        seg = np.ones((40, 50), np.int32)
        seg[:, 20 + 5 * k:] = 2
        seg[28:, :] = 3
        img = np.where(seg[..., None] == 1, 60, np.where(seg[..., None] == 2, 190, 120))
        img = np.clip(img + rng.integers(-20, 20, (40, 50, 3)), 0, 255).astype(np.uint8)
        Image.fromarray(img).save(tmp_path / "img" / f"{k}.jpg", quality=95)
        write_ground_truth(tmp_path / "gt" / f"{k}.mat", [seg, seg])
    common = ["--images", str(tmp_path / "img"), "--gt", str(tmp_path / "gt"),
              "--cache", str(tmp_path / "cues.npz"), "--rounds", "1"]
    tool = _tool()
    assert tool.main([*common, "--per-image", "300", "--out", str(tmp_path / "a.json")]) == 0
    first = json.loads((tmp_path / "a.json").read_text())["_training"]
    assert (first["per_image"], first["pixels"], first["images"]) == (300, 600, 2)
    capsys.readouterr()
    # refit from the cache, asking for other settings: the record keeps the cache's
    assert tool.main([*common, "--per-image", "1000", "--seed", "5",
                      "--out", str(tmp_path / "b.json")]) == 0
    err = capsys.readouterr().err
    assert "per_image=300" in err and "seed=0" in err
    second = json.loads((tmp_path / "b.json").read_text())
    assert second["_training"] == first
    assert second["pb-bg"] == json.loads((tmp_path / "a.json").read_text())["pb-bg"]
