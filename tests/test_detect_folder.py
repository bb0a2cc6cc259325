"""The folder runners of the algorithms as a library (issue 30):
:func:`segbench.detect_folder`, :func:`segbench.nms_folder` and
:func:`segbench.ucm_folder` write what ``segbench detect|nms|ucm`` write, resume, refuse
the same folders and options with the same messages, and docs/detectors.md's example
runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.io
from PIL import Image

import segbench
from segbench import algorithm_folders
from segbench.algorithms import DETECTORS, NMS_FORMATS, WEIGHTED, edge_nms
from segbench.cli import main
from segbench.algorithm_folders import FolderResult, detect_folder, nms_folder, ucm_folder
from segbench.errors import InputError
from segbench.io import read_prediction

DOC = Path(__file__).resolve().parents[1] / "docs" / "detectors.md"


def _photo(k: int) -> np.ndarray:
    """A 30 x 40 colour image: two regions, a step at column 15 + 3 k, some noise."""
    rng = np.random.default_rng(k)
    img = np.full((30, 40, 3), 60, np.int32)
    img[:, 15 + 3 * k:] = 180
    img[20:, :, 1] = 120
    return np.clip(img + rng.integers(-8, 8, img.shape), 0, 255).astype(np.uint8)


def _images(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for k in range(2):
        Image.fromarray(_photo(k)).save(folder / f"im{k}.png")
    return folder


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> Path:
    return _images(tmp_path_factory.mktemp("photos") / "images")


@pytest.fixture(scope="module")
def soft(images, tmp_path_factory) -> Path:
    """gm soft maps of the images (16-bit PNG)."""
    out = tmp_path_factory.mktemp("soft") / "gm"
    detect_folder(images, out, "gm", progress=False)
    return out


def _cli(capsys, *argv) -> str:
    capsys.readouterr()
    assert main([*argv, "--quiet"]) == 0
    return capsys.readouterr().out


def _maps(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())
            if p.suffix in (".png", ".npy")}


def test_the_cli_literals_are_the_librarys():
    """cli/detect.py keeps its names as literals (so --help imports nothing numerical)."""
    from segbench.cli import detect
    assert {"nms": detect.MARKER, "ucm": detect.UCM_MARKER,
            "detect": detect.DETECT_MARKER} == algorithm_folders.MARKERS
    assert set(detect._GPB) == set(algorithm_folders.GPB_DETECTORS)
    assert set(detect._FORMATS) == set(NMS_FORMATS)
    assert set(detect._WEIGHTED) == set(WEIGHTED)
    assert set(detect._DETECTORS) == (
        set(DETECTORS) | set(detect._GPB) | set(algorithm_folders.MODEL_DETECTORS)
    )


def test_top_level_names():
    for name in ("FolderResult", "detect_folder", "nms_folder", "ucm_folder"):
        assert getattr(segbench, name) is getattr(algorithm_folders, name)
        assert name in segbench.__all__


def test_detect_folder_writes_what_the_cli_writes_and_resumes(images, tmp_path, capsys):
    out = tmp_path / "lib"
    res = detect_folder(images, out, "gm", progress=False)
    assert isinstance(res, FolderResult)
    assert (res.command, res.out, res.n_maps, res.n_reused, res.kind) == \
        ("detect", out, 2, 0, "soft")
    assert res.settings == {"detector": "gm", "source": str(images), "weights": None,
                            "resolution": "full"}
    assert res.headline() == f"wrote 2 soft maps of gm into {out} (16-bit PNG)"
    assert sorted(p.name for p in out.iterdir()) == [".segbench-detect", ".segbench-lock",
                                                     ".segbench-records", "im0.png",
                                                     "im1.png"]
    assert read_prediction(out / "im0.png").pb.shape == (30, 40)
    # the command: the same maps to the byte, the same marker, the same line and JSON
    cli = tmp_path / "cli"
    line = _cli(capsys, "detect", "--detector", "gm", "--images", str(images), "--out",
                str(cli)).strip()
    assert line == res.headline().replace(str(out), str(cli))
    assert _maps(cli) == _maps(out)
    marker = ".segbench-detect"
    assert (cli / marker).read_bytes() == (out / marker).read_bytes()
    shown = json.loads(_cli(capsys, "detect", "--detector", "gm", "--images", str(images),
                            "--out", str(cli), "--json"))
    assert shown == {**res.to_dict(), "out": str(cli), "n_reused": 2}
    assert list(shown) == ["n_images", "n_reused", "out", "detector", "source", "weights",
                           "resolution"]
    # a rerun reuses every map; a rerun from the CLI reuses the library's maps too
    again = detect_folder(images, out, "gm", progress=False)
    assert (again.n_maps, again.n_reused) == (2, 2)
    assert again.headline().endswith("(2 of 2 maps reused from the earlier run)")
    assert "(2 of 2 maps reused" in _cli(capsys, "detect", "--detector", "gm", "--images",
                                         str(images), "--out", str(out))


def test_detect_folder_weights_and_protocol(images, tmp_path):
    res = detect_folder(images, tmp_path / "bg", "pb-bg", weights="published",
                        protocol="martin2004", progress=False)
    assert res.settings["weights"] == "published" and res.settings["resolution"] == "half"
    assert res.headline() == (f"wrote 2 soft maps of pb-bg (published weights) into "
                              f"{tmp_path / 'bg'} (16-bit PNG, half resolution)")
    assert read_prediction(tmp_path / "bg" / "im0.png").pb.shape == (15, 20)


def test_nms_folder_matches_edge_nms_and_the_cli(soft, tmp_path, capsys):
    out = tmp_path / "lib"
    res = nms_folder(soft, out, r=2, s=3, m=1.0, presmooth=False, fmt="npy",
                     progress=False)
    assert (res.command, res.n_maps, res.n_reused, res.kind) == ("nms", 2, 0, "soft")
    assert res.headline() == (f"thinned 2 maps into {out} (npy; r=2 s=3 m=1, no "
                              "presmoothing)")
    for iid in ("im0", "im1"):
        pb = read_prediction(soft / f"{iid}.png").pb
        assert np.array_equal(np.load(out / f"{iid}.npy"),
                              edge_nms(pb, r=2, s=3, m=1.0, presmooth=False))
    cli = tmp_path / "cli"
    shown = json.loads(_cli(capsys, "nms", "--pred", str(soft), "--out", str(cli), "--r",
                            "2", "--s", "3", "--m", "1.0", "--no-presmooth", "--format",
                            "npy", "--json"))
    assert shown == {**res.to_dict(), "out": str(cli)}
    assert list(shown)[:3] == ["n_maps", "n_reused", "out"]
    assert _maps(cli) == _maps(out)
    again = nms_folder(soft, out, r=2, s=3, m=1.0, presmooth=False, fmt="npy",
                       progress=False)
    assert again.n_reused == again.n_maps == 2
    # another format: the maps of the earlier one are removed, not read with these
    png = nms_folder(soft, out, progress=False)
    assert png.n_reused == 0
    assert sorted(_maps(out)) == ["im0.png", "im1.png"]


def test_ucm_folder_matches_the_cli_and_resumes(soft, tmp_path, capsys):
    out = tmp_path / "lib"
    res = ucm_folder(soft, out, levels="mean", progress=False)
    assert (res.command, res.n_maps, res.n_reused, res.kind) == ("ucm", 2, 0, "ucm2")
    assert res.headline() == (f"wrote 2 ultrametric contour maps into {out} (ucm2 .mat, "
                              f"doubleSize): score them with 'segbench region --pred "
                              f"{out}'")
    cli = tmp_path / "cli"
    line = _cli(capsys, "ucm", "--pred", str(soft), "--out", str(cli), "--levels",
                "mean").strip()
    assert line == res.headline().replace(str(out), str(cli))
    for iid in ("im0", "im1"):      # savemat stamps the time: compare the arrays
        a, b = (scipy.io.loadmat(d / f"{iid}.mat")["ucm2"] for d in (out, cli))
        assert a.shape == (61, 81) and np.array_equal(a, b)
    again = ucm_folder(soft, out, levels="mean", progress=False)
    assert again.n_reused == again.n_maps == 2
    assert json.loads(_cli(capsys, "ucm", "--pred", str(soft), "--out", str(out),
                           "--levels", "mean", "--json"))["n_reused"] == 2
    assert ucm_folder(soft, out, progress=False).n_reused == 0     # other levels


def test_a_thinned_map_gives_one_warning(tmp_path):
    pred = tmp_path / "thin"
    pred.mkdir()
    pb = np.zeros((40, 40), np.uint8)
    pb[[13, 27], :] = pb[:, [13, 27]] = 200                          # one-pixel lines
    pb[(np.add.outer(np.arange(40), np.arange(40)) % 7) == 0] = 0   # gaps in them
    Image.fromarray(pb).save(pred / "a.png")
    with pytest.warns(UserWarning, match="looks thinned .* use --smooth 1"):
        ucm_folder(pred, tmp_path / "u", progress=False)


@pytest.mark.parametrize("runner", ["detect", "nms", "ucm"])
def test_a_foreign_folder_and_the_input_are_refused_untouched(runner, images, soft,
                                                               tmp_path):
    call = {"detect": lambda o: detect_folder(images, o, "gm", progress=False),
            "nms": lambda o: nms_folder(soft, o, progress=False),
            "ucm": lambda o: ucm_folder(soft, o, progress=False)}[runner]
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "keep.png").write_bytes(b"precious")
    with pytest.raises(InputError, match="did not make") as exc:
        call(theirs)
    assert exc.value.path == str(theirs)
    assert [(p.name, p.read_bytes()) for p in theirs.iterdir()] == [("keep.png",
                                                                    b"precious")]
    source = images if runner == "detect" else soft
    before = sorted(p.name for p in source.iterdir())
    with pytest.raises(InputError, match="its files would be replaced"):
        call(source)
    assert sorted(p.name for p in source.iterdir()) == before
    # another command's folder is foreign too
    other = "nms" if runner != "nms" else "ucm"
    mine = tmp_path / "other"
    {"nms": lambda: nms_folder(soft, mine, progress=False),
     "ucm": lambda: ucm_folder(soft, mine, progress=False)}[other]()
    with pytest.raises(InputError, match="did not make"):
        call(mine)


def test_a_rerun_on_fewer_images_removes_only_its_stale_maps(tmp_path):
    images = _images(tmp_path / "img")
    out = tmp_path / "maps"
    detect_folder(images, out, "canny", progress=False)
    (out / "notes.txt").write_text("mine")
    (images / "im1.png").unlink()
    res = detect_folder(images, out, "canny", progress=False)
    assert (res.n_maps, res.n_reused) == (1, 1)
    assert sorted(p.name for p in out.iterdir()) == [".segbench-detect", ".segbench-lock",
                                                     ".segbench-records", "im0.png",
                                                     "notes.txt"]


# The CLI's option errors, and the same refusal from the library: (argv, runner call).
CASES = [
    (["nms", "--r", "-1"], lambda p, o: nms_folder(p["soft"], o, r=-1)),
    (["nms", "--s", "-2"], lambda p, o: nms_folder(p["soft"], o, s=-2)),
    (["nms", "--m", "nan"], lambda p, o: nms_folder(p["soft"], o, m=float("nan"))),
    (["ucm", "--smooth", "-1"], lambda p, o: ucm_folder(p["soft"], o, smooth=-1.0)),
    (["ucm", "--orientations", "-3"],
     lambda p, o: ucm_folder(p["soft"], o, orientations=-3)),
    (["ucm", "--radius", "0.5"], lambda p, o: ucm_folder(p["soft"], o, radius=0.5)),
    (["detect", "--detector", "gm", "--weights", "published"],
     lambda p, o: detect_folder(p["images"], o, "gm", weights="published")),
    (["detect", "--detector", "2mm", "--weights", "published"],
     lambda p, o: detect_folder(p["images"], o, "2mm", weights="published")),
    (["detect", "--detector", "pb-bg", "--rsz", "0.5"],
     lambda p, o: detect_folder(p["images"], o, "pb-bg", rsz=0.5)),
    (["detect", "--detector", "gpb", "--rsz", "1.5"],
     lambda p, o: detect_folder(p["images"], o, "gpb", rsz=1.5)),
    (["detect", "--detector", "gpb", "--protocol", "martin2004"],
     lambda p, o: detect_folder(p["images"], o, "gpb", protocol="martin2004")),
    (["detect", "--detector", "pb-bg", "--weights", "no-such.json"],
     lambda p, o: detect_folder(p["images"], o, "pb-bg", weights="no-such.json")),
    (["nms", "--workers", "0"], lambda p, o: nms_folder(p["soft"], o, workers=0)),
]


@pytest.mark.parametrize("argv, call", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_a_bad_option_is_the_clis_error(argv, call, images, soft, tmp_path, capsys):
    where = {"images": images, "soft": soft}
    source = ["--images", str(images)] if argv[0] == "detect" else ["--pred", str(soft)]
    capsys.readouterr()
    assert main([*argv, *source, "--out", str(tmp_path / "cli"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("segbench: error: ")
    with pytest.raises(InputError) as exc:
        call(where, tmp_path / "lib")
    assert f"segbench: error: {exc.value}" == err
    assert not (tmp_path / "lib").exists() and not (tmp_path / "cli").exists()


@pytest.mark.parametrize("call, says", [
    (lambda p, o: detect_folder(p["images"], o, "sobel"), "unknown detector 'sobel'"),
    (lambda p, o: nms_folder(p["soft"], o, fmt="tiff"), "--format must be one of"),
    (lambda p, o: nms_folder(p["soft"], o, r=1.5), "--r must be a non-negative integer"),
    (lambda p, o: ucm_folder(p["soft"], o, levels="max"), "--levels must be one of"),
    (lambda p, o: detect_folder(p["images"], o, "gm", protocol="bsds"), "--protocol"),
    (lambda p, o: detect_folder(p["images"], o, "gm", workers=-1), "workers (--workers) must be"),
    (lambda p, o: nms_folder(p["images"] / "none", o), "folder not found"),
])
def test_what_only_the_parser_checked_is_checked_too(call, says, images, soft, tmp_path):
    with pytest.raises(InputError, match=re.escape(says)):
        call({"images": images, "soft": soft}, tmp_path / "lib")
    assert not (tmp_path / "lib").exists()


def test_the_docs_example_runs(tmp_path, monkeypatch, capsys):
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## From Python: folders"):]
    code = re.search(r"^```python\n(.*?)^```", section, flags=re.S | re.M).group(1)
    _images(tmp_path / "images")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(DOC), "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"wrote 2 soft maps of gm into {Path('maps/gm')} (16-bit PNG)",
                     "ucm2 2", "npy"]
    assert sorted(p.name for p in (tmp_path / "maps" / "gm-ucm").glob("*.mat")) == \
        ["im0.mat", "im1.mat"]


def test_a_dask_scheduler_gives_the_same_maps(soft, tmp_path, capsys):
    """``scheduler=`` (``--scheduler``): the maps made on a Dask worker process are the
    local ones, and a bad address is refused before the folder is claimed."""
    distributed = pytest.importorskip("dask.distributed")
    local = nms_folder(soft, tmp_path / "local", fmt="npy", progress=False)
    with pytest.raises(InputError, match="not a scheduler address"):
        nms_folder(soft, tmp_path / "bad", scheduler="no address", progress=False)
    assert not (tmp_path / "bad").exists()
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        res = nms_folder(soft, tmp_path / "dask", fmt="npy", progress=False,
                         scheduler=cluster.scheduler_address)
        line = _cli(capsys, "ucm", "--pred", str(soft), "--out", str(tmp_path / "ucm"),
                    "--scheduler", cluster.scheduler_address)
    assert (res.n_maps, res.n_reused) == (2, 0)
    assert _maps(tmp_path / "dask") == _maps(local.out)
    assert line.startswith("wrote 2 ultrametric contour maps")
