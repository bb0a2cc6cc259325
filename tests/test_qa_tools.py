"""The map commands as a user meets them (QA round of 2026-12-07): ucm on NMS maps
without a word, tracebacks on malformed .npy maps, an error that did not name the file,
and crispness offering --ci it refuses."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import DATA, require
from PIL import Image
from scipy import ndimage

from segbench.cli import main

HED_NMS = DATA / "bsds500-hed-nms" / "test"


def _run(capsys, *args):
    code = main([*map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_real_nms_maps_look_thinned_and_blurred_ones_do_not():
    from segbench.algorithms import looks_thinned
    from segbench.io import read_prediction

    require(HED_NMS)
    for path in sorted(HED_NMS.glob("*.png"))[:8]:
        pb = read_prediction(path, kind="soft").pb
        assert looks_thinned(pb), path.name
        blurred = ndimage.gaussian_filter(pb, 2)
        assert not looks_thinned(blurred / blurred.max() * 0.95), path.name


@pytest.mark.parametrize(
    "write, message",
    [
        (lambda p: p.write_bytes(b""), "an empty file, not a NumPy .npy array"),
        (lambda p: np.savez(open(p, "wb"), a=np.zeros((9, 9))), "an .npz archive"),
        (lambda p: np.save(p, np.zeros((40, 60, 0))), "an empty array"),
        (lambda p: np.save(p, np.random.default_rng(0).random((1, 20, 20))), "squeeze"),
    ],
    ids=["empty-file", "npz", "zero-size", "singleton-axis"],
)
def test_ucm_names_a_malformed_npy_in_one_line(tmp_path, capsys, write, message):
    pred = tmp_path / "maps"
    pred.mkdir()
    write(pred / "e.npy")
    code, _, err = _run(capsys, "ucm", "--pred", pred, "--out", tmp_path / "u", "--quiet")
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1, err
    assert "e.npy" in err and message in err


def test_ucm_names_the_map_a_smoothing_is_too_large_for(tmp_path, capsys):
    pred = tmp_path / "maps"
    pred.mkdir()
    Image.fromarray(np.full((20, 30), 40, np.uint8)).save(pred / "small.png")
    code, _, err = _run(capsys, "ucm", "--pred", pred, "--out", tmp_path / "u",
                        "--smooth", "150", "--quiet")
    assert code == 2 and "small.png" in err and "sigma" in err, err


def test_crispness_offers_no_bootstrap_and_warns_when_every_map_is_zero(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["crispness", "--help"])
    out = capsys.readouterr().out
    assert "--gt-format" in out and "--ci" not in out and "--resamples" not in out
    gt, pred = tmp_path / "gt", tmp_path / "pred"
    for d in (gt, pred):
        d.mkdir()
    edges = np.zeros((30, 40), np.uint8)
    edges[10, 5:35] = 255
    for i in range(2):
        Image.fromarray(edges).save(gt / f"a{i}.png")
        Image.fromarray(np.zeros((30, 40), np.uint16)).save(pred / f"a{i}.png")
    code, _, err = _run(capsys, "crispness", "--gt", gt, "--pred", pred, "--quiet",
                        "--gt-format", "edges")
    assert code == 0 and "every map is all zero (a0, a1)" in err, err


def test_a_second_run_into_a_map_folder_in_use_is_refused(tmp_path, capsys):
    from segbench.engine import lock_run_folder, release_run_folder

    pred = tmp_path / "raw"
    pred.mkdir()
    rng = np.random.default_rng(0)
    for i in range(3):
        Image.fromarray((rng.random((24, 32)) * 65535).astype(np.uint16)).save(
            pred / f"m{i}.png")
    out = tmp_path / "nms"
    assert main(["nms", "--pred", str(pred), "--out", str(out), "--quiet"]) == 0
    held = lock_run_folder(out)  # as a first run still writing would hold it
    try:
        code, _, err = _run(capsys, "nms", "--pred", pred, "--out", out, "--quiet",
                            "--ids", "m0", "--r", "2")
        assert code == 2 and "pid" in err and err.count("\n") == 1, err
        assert sorted(p.name for p in out.glob("*.png")) == ["m0.png", "m1.png", "m2.png"]
    finally:
        release_run_folder(held)
    code, _, err = _run(capsys, "nms", "--pred", pred, "--out", out, "--quiet")
    assert code == 0, err
