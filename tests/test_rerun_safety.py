"""A rerun of ``segbench ucm|nms|detect --out u`` removes only files that its own
records say it wrote: a file of the user's in ``u`` is left, and named in one warning
line (issue 40, item 2)."""

from __future__ import annotations

import shutil

import pytest

from segbench.cli import main

N = 3


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Soft maps and photographs of a small synthetic dataset."""
    from segbench.algorithms.edges import gradient_magnitude
    from segbench.datasets.synthetic import (
        make_synthetic_dataset,
        write_synthetic_dataset,
    )
    from segbench.io import write_soft_map
    tmp = tmp_path_factory.mktemp("rerun")
    items = make_synthetic_dataset(N, shape=(60, 80), n_annotators=1, seed=2)
    root = write_synthetic_dataset(tmp / "ds", items)
    for it in items:
        write_soft_map(tmp / "soft" / f"{it.iid}.png", gradient_magnitude(it.image))
    return {"soft": tmp / "soft", "images": root / "images" / "test",
            "ids": [it.iid for it in items]}


COMMANDS = {
    # (gm maps are thinned lines: smoothed first, as the warning of --smooth 0 says)
    "ucm": (lambda d: ["ucm", "--pred", str(d["soft"]), "--smooth", "1"], ".mat"),
    "nms": (lambda d: ["nms", "--pred", str(d["soft"])], ".png"),
    "detect": (lambda d: ["detect", "--detector", "gm", "--images", str(d["images"])],
               ".png"),
}


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("segbench: warning:")]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_rerun_keeps_the_users_file_and_names_it_once(inputs, tmp_path, capsys,
                                                       command):
    args, suffix = COMMANDS[command]
    out = tmp_path / "u"
    assert main([*args(inputs), "--out", str(out), "--quiet"]) == 0
    mine = out / f"my-best{suffix}"
    mine.write_bytes(b"the user's own file")
    capsys.readouterr()
    assert main([*args(inputs), "--out", str(out), "--quiet"]) == 0
    assert mine.read_bytes() == b"the user's own file"
    warned = _warnings(capsys.readouterr().err)
    assert len(warned) == 1 and mine.name in warned[0], warned
    assert sorted(p.name for p in out.glob(f"*{suffix}")) == sorted(
        [f"{i}{suffix}" for i in inputs["ids"]] + [mine.name])


@pytest.mark.parametrize("command", ["ucm", "nms"])
def test_rerun_still_removes_its_own_stale_maps(inputs, tmp_path, capsys, command):
    """A map this command wrote for an input that is gone is removed; the user's file
    beside it stays."""
    suffix = COMMANDS[command][1]
    soft = tmp_path / "soft"
    shutil.copytree(inputs["soft"], soft)
    out = tmp_path / "u"
    run = [*COMMANDS[command][0]({"soft": soft}), "--out", str(out), "--quiet"]
    assert main(run) == 0
    gone = inputs["ids"][0]
    (soft / f"{gone}.png").unlink()
    mine = out / f"my-best{suffix}"
    mine.write_bytes(b"mine")
    assert main(run) == 0
    assert not (out / f"{gone}{suffix}").exists()
    assert mine.read_bytes() == b"mine"
    assert len(_warnings(capsys.readouterr().err)) == 1


def test_a_map_the_user_changed_is_not_removed(inputs, tmp_path, capsys):
    """The records say what was written: a map edited since is the user's now."""
    soft = tmp_path / "soft"
    shutil.copytree(inputs["soft"], soft)
    out = tmp_path / "u"
    run = [*COMMANDS["ucm"][0]({"soft": soft}), "--out", str(out), "--quiet"]
    assert main(run) == 0
    edited = inputs["ids"][1]
    (out / f"{edited}.mat").write_bytes(b"edited by hand")
    (soft / f"{edited}.png").unlink()
    capsys.readouterr()
    assert main(run) == 0
    assert (out / f"{edited}.mat").read_bytes() == b"edited by hand"
    warned = _warnings(capsys.readouterr().err)
    assert len(warned) == 1 and f"{edited}.mat" in warned[0], warned
