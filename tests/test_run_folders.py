"""Every command that writes a folder claims it by one rule (issue 28, item 0): a new or
empty folder, or one it marked before; a folder of the user's own files is refused in
one line, untouched. A boundary and a region run of one algorithm share a run folder,
each keeping its own result file, and every reader (site, compare, calibration) finds
both."""

from __future__ import annotations

import json
import shlex

import numpy as np
import pytest

import segbench
import segbench.api
from segbench.cli import main
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.io import write_label_map, write_segs, write_soft_map


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """4 synthetic images: ground truth and photos, soft maps, segs, label maps."""
    from segbench.algorithms.edges import gradient_magnitude
    base = tmp_path_factory.mktemp("folders")
    items = make_synthetic_dataset(4, shape=(40, 48), n_annotators=3, seed=7)
    root = base / "data"
    write_synthetic_dataset(root, items, split="test")
    d = {"root": root, "base": base}
    for name in ("soft", "segs", "labels", "sem_gt", "sem_pred"):
        d[name] = base / name
        d[name].mkdir()
    for it in items:
        write_soft_map(d["soft"] / f"{it.iid}.png", gradient_magnitude(it.image))
        write_segs(d["segs"] / f"{it.iid}.mat", [it.segmentations[0]])
        seg = np.asarray(it.segmentations[1], np.int64)
        write_label_map(d["labels"] / f"{it.iid}.png", seg)
        write_label_map(d["sem_gt"] / f"{it.iid}.png", (seg % 3).astype(np.uint8))
        write_label_map(d["sem_pred"] / f"{it.iid}.png",
                        (np.asarray(it.segmentations[0]) % 3).astype(np.uint8))
    return d


def _users_folder(tmp_path, name="mine"):
    """A folder of the user's own: a result.json, per_item.csv, notes and a src/."""
    folder = tmp_path / name
    (folder / "src").mkdir(parents=True)
    (folder / "result.json").write_text("my own result\n")
    (folder / "per_item.csv").write_text("my,own\n")
    (folder / "notes.txt").write_text("keep me\n")
    (folder / "src" / "main.py").write_text("print('mine')\n")
    return folder


def _snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None
            for p in sorted(folder.rglob("*"))}


def _commands(d, run_dir, site_runs):
    """Every command that writes a folder, with valid inputs; ``--out`` last."""
    gt, root = str(d["root"] / "groundTruth" / "test"), str(d["root"])
    quiet = ["--quiet"]
    return {k: v if k == "compare" else v + quiet for k, v in {
        "boundary": ["boundary", "--gt", gt, "--pred", str(d["soft"]), "--no-plot"],
        "region": ["region", "--gt", gt, "--pred", str(d["segs"])],
        "all": ["all", "--gt", gt, "--pred", str(d["segs"]), "--no-plot"],
        "human": ["human", "--gt", gt],
        "superpixel": ["superpixel", "--gt", gt, "--pred", str(d["labels"])],
        "superpixel-sweep": ["superpixel-sweep", "--gt", root, "--split", "test",
                             "--algorithm", "slic", "--k", "8,16", "--no-plot"],
        "semantic": ["semantic", "--gt", str(d["sem_gt"]), "--pred", str(d["sem_pred"]),
                     "--classes", "3"],
        "stats": ["stats", "--gt", gt, "--no-plot"],
        "consistency": ["consistency", "--gt", gt, "--pairs", "5", "--no-plot"],
        "agreement": ["agreement", "--gt", gt, "--no-plot"],
        "granularity": ["granularity", "--gt", gt, "--images",
                        str(d["root"] / "images" / "test"), "--segmenter", "kmeans",
                        "--max-images", "1"],
        "compare": ["compare", str(run_dir), f"{run_dir}-copy", "--resamples", "20"],
        "site": ["site", "--gt", root, "--results", *site_runs],
        "nms": ["nms", "--pred", str(d["soft"])],
        "detect": ["detect", "--detector", "gm", "--images",
                   str(d["root"] / "images" / "test")],
        "submit": ["submit", str(d["soft"]), "--gt", root, "--name", "gm"],
        "demo": ["demo", "--n-images", "2"],
    }.items()}


@pytest.fixture(scope="module")
def boundary_run(data):
    out = data["base"] / "run-soft"
    assert main(["boundary", "--gt", str(data["root"] / "groundTruth" / "test"), "--pred",
                 str(data["soft"]), "--out", str(out), "--no-plot", "--quiet"]) == 0
    import shutil
    shutil.copytree(out, f"{out}-copy")   # compare takes two runs, not one twice
    return out


COMMANDS = ("boundary", "region", "all", "human", "superpixel", "superpixel-sweep",
            "semantic", "stats", "consistency", "granularity", "agreement", "compare",
            "site", "nms", "detect", "submit", "demo")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_writer_refuses_a_folder_of_the_users_files(data, boundary_run, tmp_path,
                                                          capsys, command):
    argv = _commands(data, boundary_run, [str(boundary_run)])[command]
    mine = _users_folder(tmp_path)
    before = _snapshot(mine)
    capsys.readouterr()
    assert main([*argv, "--out", str(mine)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("segbench: error:") and str(mine) in err
    assert "did not make" in err and "nothing was changed" in err
    assert _snapshot(mine) == before


@pytest.mark.parametrize("command", ("boundary", "stats", "compare", "nms", "demo"))
def test_every_writer_takes_a_new_or_empty_folder_and_its_own_again(data, boundary_run,
                                                                    tmp_path, capsys,
                                                                    command):
    argv = _commands(data, boundary_run, [str(boundary_run)])[command]
    empty = tmp_path / "empty"
    empty.mkdir()
    for _ in range(2):                      # the second time: a folder it marked
        assert main([*argv, "--out", str(empty)]) == 0
    capsys.readouterr()
    assert any(p.name.startswith(".segbench") for p in empty.iterdir())


def test_out_is_never_an_input_folder(data, capsys):
    gt = data["root"] / "groundTruth" / "test"
    before = _snapshot(data["soft"])
    assert main(["boundary", "--gt", str(gt), "--pred", str(data["soft"]), "--out",
                 str(data["soft"]), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--out is the --pred folder" in err and len(err.strip().splitlines()) == 1
    assert main(["human", "--gt", str(gt), "--out", str(gt), "--quiet"]) == 2
    assert "--out is the --gt folder" in capsys.readouterr().err
    assert _snapshot(data["soft"]) == before


def test_a_run_folder_of_an_older_segbench_resumes(data, tmp_path, capsys):
    """A run folder made before the marker (its record store is the mark) is taken."""
    gt = str(data["root"] / "groundTruth" / "test")
    out = tmp_path / "old"
    argv = ["boundary", "--gt", gt, "--pred", str(data["soft"]), "--out", str(out),
            "--no-plot", "--quiet"]
    assert main(argv) == 0
    (out / ".segbench-run").unlink()
    kept = (out / "eval_bdry.txt").read_bytes()
    assert main(argv) == 0
    capsys.readouterr()
    assert (out / "eval_bdry.txt").read_bytes() == kept and (out / ".segbench-run").is_file()


def _family(path):
    return json.loads(path.read_text())["family"]


@pytest.mark.parametrize("first", ("boundary", "region"))
def test_boundary_and_region_runs_share_a_run_folder(data, tmp_path, capsys, first):
    """Either order: each family keeps its own result_<family>.json and
    per_item_<family>.csv, a rerun of one replaces only its own, the manifest lists
    both in the order run with each one's command line, and the site, compare and
    --calibrate-on find each family's result."""
    gt = str(data["root"] / "groundTruth" / "test")
    out = tmp_path / "ucm"
    argv = {"boundary": ["boundary", "--gt", gt, "--pred", str(data["segs"]), "--out",
                         str(out), "--no-plot", "--quiet"],
            "region": ["region", "--gt", gt, "--pred", str(data["segs"]), "--out",
                       str(out), "--quiet"]}
    second = "region" if first == "boundary" else "boundary"
    assert main(argv[first]) == 0
    alone = _snapshot(out)
    assert main(argv[second]) == 0
    assert main(argv[second]) == 0                      # a rerun: its own files only
    capsys.readouterr()
    assert not (out / "result.json").exists() and not (out / "per_item.csv").exists()
    for family in (first, second):
        assert _family(out / f"result_{family}.json") == family
        assert (out / f"per_item_{family}.csv").is_file()
    both = _snapshot(out)
    for name, data_ in alone.items():       # nothing of the first run was replaced
        if not name.startswith(".segbench") and name != "manifest.json":
            assert both[name] == data_, name
    manifest = json.loads(both["manifest.json"])
    assert manifest["families"] == [first, second]
    assert manifest["runs"][second]["command"] == shlex.join(["segbench", *argv[second]])
    assert manifest["runs"][first]["pred_dir"] == str(data["segs"])
    from segbench.engine import RunFolder
    folder = RunFolder(out)
    assert folder.families() == [first, second]
    assert folder.read().family == first and folder.read(second).family == second
    assert folder.prediction_folder() == data["segs"]
    # the official files of both families are there
    assert (out / "eval_bdry.txt").is_file() and (out / "eval_cover.txt").is_file()
    # readers find each family
    from segbench.report._site_runs import load_run
    run = load_run(out)
    assert run.boundary.family == "boundary" and run.region.family == "region"
    assert main(["boundary", "--gt", gt, "--pred", str(data["segs"]), "--name", "segs",
                 "--out", str(tmp_path / "cal"), "--calibrate-on", str(out), "--no-plot",
                 "--quiet"]) == 0
    capsys.readouterr()


def test_all_into_a_region_run_folder_keeps_one_file_per_family(data, tmp_path, capsys):
    gt = str(data["root"] / "groundTruth" / "test")
    out = tmp_path / "ucm"
    assert main(["region", "--gt", gt, "--pred", str(data["segs"]), "--out", str(out),
                 "--quiet"]) == 0
    assert main(["all", "--gt", gt, "--pred", str(data["segs"]), "--out", str(out),
                 "--no-plot", "--quiet"]) == 0
    capsys.readouterr()
    assert _family(out / "result_region.json") == "region"
    assert _family(out / "result_boundary.json") == "boundary"
    assert sorted(p.name for p in out.glob("result*.json")) == [
        "result_boundary.json", "result_region.json"]


def test_older_run_folders_are_read_and_their_files_replaced_by_family(data, tmp_path,
                                                                      capsys):
    """A folder made before result files were named by family: its result.json (the
    first family's) and result_<family>.json are read; a rerun of the family that
    result.json holds replaces it (and per_item.csv) by its own named files, a rerun
    of another family leaves it."""
    import shutil

    from segbench.engine import RunFolder
    from segbench.result import Result
    gt = str(data["root"] / "groundTruth" / "test")
    out = tmp_path / "old"
    assert main(["all", "--gt", gt, "--pred", str(data["segs"]), "--out", str(out),
                 "--no-plot", "--quiet"]) == 0
    capsys.readouterr()
    # the layout an older segbench wrote: boundary in result.json, no manifest
    shutil.move(out / "result_boundary.json", out / "result.json")
    shutil.move(out / "per_item_boundary.csv", out / "per_item.csv")
    (out / "manifest.json").unlink()
    folder = RunFolder(out)
    assert folder.families() == ["boundary", "region"]     # result.json: the first run
    assert folder.result_file("boundary") == out / "result.json"
    assert Result.from_json(out / "result.json").family == "boundary"
    assert segbench.api.read_run(out, "boundary").family == "boundary"
    kept = (out / "result.json").read_bytes()
    assert main(["region", "--gt", gt, "--pred", str(data["segs"]), "--out", str(out),
                 "--quiet"]) == 0
    assert (out / "result.json").read_bytes() == kept
    assert main(["boundary", "--gt", gt, "--pred", str(data["segs"]), "--out", str(out),
                 "--no-plot", "--quiet"]) == 0
    capsys.readouterr()
    assert not (out / "result.json").exists() and not (out / "per_item.csv").exists()
    assert _family(out / "result_boundary.json") == "boundary"


def test_a_damaged_result_json_in_a_run_folder_is_left_as_it_is(data, tmp_path, capsys):
    """A result.json that is no segbench result (damaged, or the user's) is never
    read as a family's result nor replaced; the run writes its own named files."""
    gt = str(data["root"] / "groundTruth" / "test")
    out = tmp_path / "run"
    argv = ["region", "--gt", gt, "--pred", str(data["segs"]), "--out", str(out),
            "--quiet"]
    assert main(argv) == 0
    (out / "result.json").write_text("{not json")
    assert main(argv) == 0
    capsys.readouterr()
    assert (out / "result.json").read_text() == "{not json"
    assert _family(out / "result_region.json") == "region"