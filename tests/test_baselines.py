"""``segbench baselines`` (issue 27 item 5): a subset of the algorithms end to end on a
tiny synthetic dataset, resuming after a kill, and one line on bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from segbench.cli import build_parser, main
from segbench.cli.baselines import ALGORITHMS
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.report.baselines import BASELINES, SWEEP_KS, algorithm_names

#: Fast algorithms of every kind: a soft detector, an OWT-UCM of another one's maps
#: (canny's maps made for it, canny itself not scored) and a segmenter.
SUBSET = "gm,canny-owt-ucm,slic"


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """Three 48 x 64 synthetic images, three annotators each, in the BSDS500 layout."""
    root = tmp_path_factory.mktemp("baselines") / "data"
    return write_synthetic_dataset(root, make_synthetic_dataset(3, shape=(48, 64),
                                                                n_annotators=3, seed=2))


@pytest.fixture(scope="module")
def finished(data, tmp_path_factory):
    """An uninterrupted run of SUBSET, and what it printed."""
    out = tmp_path_factory.mktemp("whole") / "out"
    assert main(["baselines", "--gt", str(data), "--out", str(out), "--algorithms",
                 SUBSET, "--quiet"]) == 0
    return out


def _rows(out: Path) -> list:
    return json.loads((out / "baselines.json").read_text())["rows"]


def test_cli_names_and_sweep_ks_agree_with_the_library():
    assert ALGORITHMS == tuple(BASELINES)
    sweep = build_parser(("superpixel",))._subparsers._group_actions[0] \
        .choices["superpixel-sweep"]
    k = next(a for a in sweep._actions if a.dest == "k")
    assert tuple(int(v) for v in k.default.split(",")) == SWEEP_KS


def test_algorithm_names_keep_the_table_order_and_need_hed_for_hed():
    assert algorithm_names("slic,gm") == ["gm", "slic"]
    assert "hed-owt-ucm" not in algorithm_names()
    assert "hed-owt-ucm" in algorithm_names(hed=True)


def test_a_subset_runs_end_to_end(finished):
    rows = _rows(finished)
    assert [r["algorithm"] for r in rows][0] == "human"
    assert sorted(r["algorithm"] for r in rows[1:]) == ["canny-owt-ucm", "gm", "slic"]
    ods = [r["ODS"] for r in rows[1:]]
    assert ods == sorted(ods, reverse=True) and all(0 < v <= 1 for v in ods)
    by = {r["algorithm"]: r for r in rows}
    assert by["gm"]["covering"] is None          # a soft map has no region figures
    for a in ("canny-owt-ucm", "slic"):
        assert 0 < by[a]["covering"] <= 1 and 0 < by[a]["PRI"] <= 1 and by[a]["VI"] > 0
    assert by["human"]["published"]["ODS"] == 0.80
    table = (finished / "baselines.md").read_text()
    assert "| canny-owt-ucm |" in table and "| human | " in table and "(0.80)" in table
    # canny's maps were made for its OWT-UCM, canny itself is not in the table
    assert len(list((finished / "maps" / "canny").glob("*.png"))) == 3
    assert not (finished / "runs" / "canny").exists()
    assert len(list((finished / "maps" / "slic").glob("*.mat"))) == 3
    site = (finished / "site" / "index.html").read_text()
    assert all(a in site for a in ("gm", "canny-owt-ucm", "slic"))


def _mtimes(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.stat().st_mtime_ns
            for p in folder.rglob("*") if p.is_file()}


def test_a_killed_run_resumes_to_the_same_results(data, finished, tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "segbench.cli", "baselines", "--gt", str(data), "--out",
           str(out), "--algorithms", SUBSET, "--quiet", "--no-site"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    # killed once the first algorithm's maps are finished and slic's have begun
    first = out / "maps" / "slic" / ".segbench-records" / "slic"
    deadline = time.monotonic() + 300
    while not (first.is_dir() and any(first.glob("*.json"))):
        assert proc.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.005)
    proc.kill()
    proc.wait()
    assert not (out / "baselines.json").exists()     # killed before the end
    before = {a: _mtimes(out / "maps" / a) for a in ("canny", "gm", "slic")}
    assert before["gm"] and before["slic"]
    assert main(["baselines", "--gt", str(data), "--out", str(out), "--algorithms",
                 SUBSET, "--quiet"]) == 0
    # nothing finished before the kill was made again
    for a, files in before.items():
        after = _mtimes(out / "maps" / a)
        kept = {f: t for f, t in files.items() if f.endswith(".json")}
        # each map recorded before the kill, and its record, untouched
        maps = {f: t for f, t in files.items() if "/" not in f
                and Path(f).stem in {Path(k).stem for k in kept}}
        assert kept and len(maps) == len(kept), a
        assert all(after[f] == t for f, t in {**kept, **maps}.items()), a
    summary = json.loads((out / "baselines.json").read_text())
    assert summary["algorithms"]["gm"]["maps_reused"] == 3
    assert _rows(out) == _rows(finished)


def test_a_rerun_recomputes_nothing(data, finished, capsys):
    before = _mtimes(finished / "maps")
    assert main(["baselines", "--gt", str(data), "--out", str(finished), "--algorithms",
                 SUBSET, "--quiet", "--no-site", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert _mtimes(finished / "maps") == before
    assert printed["rows"] == _rows(finished)


def _one_line_error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("segbench: error: ")
    return err[0]


def test_bad_input_gives_one_line(data, tmp_path, capsys):
    gt = ["--gt", str(data)]
    line = _one_line_error(capsys, ["baselines", *gt, "--out", str(tmp_path / "a"),
                                    "--algorithms", "gm,sobel"])
    assert "'sobel'" in line and "slic" in line
    line = _one_line_error(capsys, ["baselines", *gt, "--out", str(tmp_path / "b"),
                                    "--algorithms", "hed-owt-ucm"])
    assert "--hed" in line
    line = _one_line_error(capsys, ["baselines", "--gt", str(tmp_path / "nowhere"),
                                    "--out", str(tmp_path / "c")])
    assert "nowhere" in line
    line = _one_line_error(capsys, ["baselines", *gt, "--out", str(tmp_path / "d"),
                                    "--ids", "synth000,nosuch"])
    assert "nosuch" in line
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    line = _one_line_error(capsys, ["baselines", *gt, "--out", str(mine)])
    assert str(mine) in line
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]
    assert (mine / "notes.txt").read_text() == "keep me"
    hed = tmp_path / "hed"
    hed.mkdir()
    line = _one_line_error(capsys, ["baselines", *gt, "--out", str(tmp_path / "e"),
                                    "--algorithms", "hed-owt-ucm", "--hed", str(hed)])
    assert "no HED map" in line and str(hed) in line
    assert not (tmp_path / "e").exists()          # refused before anything is written


def test_two_workers_give_the_same_table(data, finished, tmp_path):
    out = tmp_path / "out"
    assert main(["baselines", "--gt", str(data), "--out", str(out), "--algorithms",
                 SUBSET, "--quiet", "--no-site", "--workers", "2"]) == 0
    assert _rows(out) == _rows(finished)


def test_a_dask_scheduler_gives_the_same_table(data, finished, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    out = tmp_path / "out"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        assert main(["baselines", "--gt", str(data), "--out", str(out), "--algorithms",
                     SUBSET, "--quiet", "--no-site", "--scheduler",
                     cluster.scheduler_address]) == 0
    assert _rows(out) == _rows(finished)


def test_gpb_and_its_ucm_come_from_one_gpb_per_image(data, tmp_path, monkeypatch):
    """Both gPb algorithms asked for: one gPb per image writes both maps, the same bytes
    as each one's own run; a missing map is remade with the other one's record kept."""
    import segbench.algorithms._gpb as gpb_module
    from segbench.algorithms import gpb_file
    from segbench.report.baselines import run_baselines

    calls = []
    real = gpb_module.gpb

    def counted(image, **kw):
        calls.append(image.shape)
        return real(image, **kw)

    monkeypatch.setattr(gpb_module, "gpb", counted)
    iid = sorted(p.stem for p in (data / "images" / "test").iterdir())[0]
    out = tmp_path / "out"
    run_baselines(data, out, algorithms="gpb,gpb-owt-ucm", ids=[iid], progress=False,
                  site=False)
    assert len(calls) == 1
    photo = next((data / "images" / "test").glob(f"{iid}.*"))
    gpb_file(photo, tmp_path / "alone.png", output="soft")
    gpb_file(photo, tmp_path / "alone.mat", output="ucm")
    assert (out / "maps" / "gpb" / f"{iid}.png").read_bytes() == \
        (tmp_path / "alone.png").read_bytes()
    from scipy.io import loadmat
    assert (loadmat(out / "maps" / "gpb-owt-ucm" / f"{iid}.mat")["ucm2"]
            == loadmat(tmp_path / "alone.mat")["ucm2"]).all()
    calls.clear()
    (out / "maps" / "gpb-owt-ucm" / f"{iid}.mat").unlink()
    summary = run_baselines(data, out, algorithms="gpb,gpb-owt-ucm", ids=[iid],
                            progress=False, site=False)
    assert len(calls) == 1
    assert summary["algorithms"]["gpb"]["maps_reused"] == 1
    assert (out / "maps" / "gpb-owt-ucm" / f"{iid}.mat").is_file()
