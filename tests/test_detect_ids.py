"""``segbench detect``, ``ucm`` and ``nms`` take ``--ids``; maps made for a subset of the
ground truth are scored with ``--ids``, and the error without it says so (issue 40,
item 11)."""

from __future__ import annotations

import pytest

from segbench.cli import main

N = 6


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    from segbench.algorithms.edges import gradient_magnitude
    from segbench.datasets.synthetic import (
        make_synthetic_dataset,
        write_synthetic_dataset,
    )
    from segbench.io import write_soft_map
    tmp = tmp_path_factory.mktemp("ids")
    items = make_synthetic_dataset(N, shape=(60, 80), n_annotators=2, seed=6)
    root = write_synthetic_dataset(tmp / "ds", items)
    for it in items:
        write_soft_map(tmp / "soft" / f"{it.iid}.png", gradient_magnitude(it.image))
    return {"soft": tmp / "soft", "images": root / "images" / "test",
            "gt": root / "groundTruth" / "test", "ids": [it.iid for it in items]}


COMMANDS = {
    "detect": (lambda d: ["detect", "--detector", "gm", "--images", str(d["images"])],
               ".png"),
    "ucm": (lambda d: ["ucm", "--pred", str(d["soft"])], ".mat"),
    "nms": (lambda d: ["nms", "--pred", str(d["soft"])], ".png"),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_ids_makes_only_those_maps(data, tmp_path, capsys, command):
    args, suffix = COMMANDS[command]
    chosen = data["ids"][:2]
    out = tmp_path / "maps"
    assert main([*args(data), "--out", str(out), "--ids", ",".join(chosen),
                 "--quiet"]) == 0
    assert sorted(p.name for p in out.glob(f"*{suffix}")) == [f"{i}{suffix}"
                                                              for i in chosen]
    # a later run of other ids keeps these maps (same settings)
    assert main([*args(data), "--out", str(out), "--ids", data["ids"][2], "--quiet"]) == 0
    assert len(list(out.glob(f"*{suffix}"))) == 3


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_id_without_input_is_one_line(data, tmp_path, capsys, command):
    args, _ = COMMANDS[command]
    out = tmp_path / "maps"
    assert main([*args(data), "--out", str(out), "--ids", f"{data['ids'][0]},nope",
                 "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nope" in err[0] and "--ids" in err[0], err
    assert not out.exists() or not any(out.glob("*.png")) and not any(out.glob("*.mat"))


def test_a_subset_of_maps_is_scored_with_ids(data, tmp_path, capsys):
    """detect's own hint scores the subset; without --ids the error names it."""
    chosen = data["ids"][:2]
    ucm = tmp_path / "ucm"
    assert main(["ucm", "--pred", str(data["soft"]), "--out", str(ucm), "--ids",
                 ",".join(chosen), "--quiet"]) == 0
    headline = capsys.readouterr().out
    assert f"--ids {','.join(chosen)}" in headline
    assert main(["region", "--gt", str(data["gt"]), "--pred", str(ucm), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert f"{N - 2} of {N} images have no prediction" in err[0]
    assert "cover only 2 of the 6 images" in err[0] and "--ids" in err[0], err
    assert main(["region", "--gt", str(data["gt"]), "--pred", str(ucm), "--ids",
                 ",".join(chosen), "--quiet"]) == 0
    assert "images: 2" in capsys.readouterr().out


def test_more_predictions_than_ground_truth_is_the_same(data, tmp_path, capsys):
    """The other side larger: ground truth of a subset scores against a full folder of
    maps (its ids are the ones scored), and --ids naming an image without ground truth
    is one line that names it."""
    import shutil
    gt = tmp_path / "gt"
    gt.mkdir()
    for iid in data["ids"][:3]:
        shutil.copy(data["gt"] / f"{iid}.mat", gt)
    assert main(["boundary", "--gt", str(gt), "--pred", str(data["soft"]), "--quiet",
                 "--no-plot"]) == 0
    assert "images: 3" in capsys.readouterr().out
    assert main(["boundary", "--gt", str(gt), "--pred", str(data["soft"]), "--ids",
                 data["ids"][4], "--quiet", "--no-plot"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and data["ids"][4] in err[0], err
