"""``segbench train --detector se`` and ``segbench detect --detector se``: a tiny forest
trained from a synthetic BSDS500 layout, the same for any number of workers, resumed
tree by tree, refusing files it did not write; detection through the folder runner
equal to ``segbench.algorithms.se``; bad model files as one line."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from PIL import Image

from segbench.algorithm_folders import detect_folder, train_se
from segbench.algorithms import SEForest, load_forest, se
from segbench.cli import main
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.errors import InputError
from segbench.io import read_image

#: A forest small enough to train in about a second a tree.
TINY = ["--trees", "2", "--samples", "3000", "--depth", "8"]
TINY_OPTIONS = {"n_trees": 2, "n_pos": 1500, "n_neg": 1500, "max_depth": 8}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("se") / "data"
    write_synthetic_dataset(root, make_synthetic_dataset(4, seed=3), split="train")
    return root


@pytest.fixture(scope="module")
def model(data, tmp_path_factory):
    out = tmp_path_factory.mktemp("model") / "se.npz"
    assert main(["train", "--detector", "se", "--gt", str(data), "--out", str(out),
                 "--quiet", *TINY]) == 0
    return out


def test_the_command_trains_the_forest_the_library_trains(data, model, tmp_path):
    forest = load_forest(model)
    assert forest.complete and forest.options.n_trees == 2
    assert forest.options.n_pos == 1500 and forest.options.max_depth == 8
    # the same forest from the library, and with two workers: byte-identical files
    lib = train_se(data, tmp_path / "lib.npz", options=TINY_OPTIONS, progress=False)
    assert lib.n_trees == 2 and lib.n_reused == 0
    two = tmp_path / "two.npz"
    assert main(["train", "--detector", "se", "--gt", str(data), "--out", str(two),
                 "--quiet", "--workers", "2", *TINY]) == 0
    assert (tmp_path / "lib.npz").read_bytes() == model.read_bytes() == two.read_bytes()


def test_an_interrupted_training_resumes_with_its_finished_trees(data, model, tmp_path):
    full = load_forest(model)
    partial = SEForest(full.options, {0: full.trees[0]}, full.training)  # a killed run's
    out = partial.save(tmp_path / "partial.npz")
    res = train_se(data, out, options=TINY_OPTIONS, progress=False)
    assert res.n_reused == 1 and res.n_trees == 2
    assert "1 of 2 trees kept" in res.headline()
    assert out.read_bytes() == model.read_bytes()
    again = train_se(data, out, options=TINY_OPTIONS, progress=False)  # finished: reused
    assert again.n_reused == 2 and out.read_bytes() == model.read_bytes()


def test_training_refuses_what_it_must_not_touch(data, model, tmp_path, capsys):
    mine = tmp_path / "mine.npz"
    mine.write_bytes(b"PK\x03\x04 my own archive")
    other = tmp_path / "other.npz"
    other.write_bytes(model.read_bytes())
    cases = [
        (mine, TINY, "is not a structured edge model"),
        (other, ["--trees", "3", "--samples", "3000", "--depth", "8"], "other options (n_trees)"),
        (tmp_path / "model.pt", TINY, "must end in .npz"),
    ]
    for out, options, words in cases:
        before = out.read_bytes() if out.exists() else None
        rc = main(["train", "--detector", "se", "--gt", str(data), "--out", str(out),
                   "--quiet", *options])
        err = capsys.readouterr().err.strip()
        assert rc != 0 and words in err and str(out) in err and "\n" not in err
        assert (out.read_bytes() if out.exists() else None) == before  # untouched
    import segbench

    inside = tmp_path.__class__(segbench.__file__).parent / "se-model.npz"
    with pytest.raises(InputError, match="inside the segbench package"):
        train_se(data, inside, options=TINY_OPTIONS, progress=False)
    assert not inside.exists()
    with pytest.raises(InputError, match="no split 'val'"):
        train_se(data, tmp_path / "v.npz", split="val", options=TINY_OPTIONS)
    rc = main(["train", "--detector", "se", "--gt", str(tmp_path), "--out",
               str(tmp_path / "x.npz")])
    err = capsys.readouterr().err
    assert rc != 0 and "not a BSDS500 layout" in err


def test_detect_se_writes_the_maps_of_the_library(data, model, tmp_path, capsys):
    images = data / "images" / "train"
    out = tmp_path / "maps"
    rc = main(["detect", "--detector", "se", "--model", str(model), "--images",
               str(images), "--out", str(out), "--quiet", "--sharpen", "1"])
    assert rc == 0
    line = capsys.readouterr().out
    assert "--nms presmooth=0" in line and "sharpen 1" in line
    forest = load_forest(model)
    paths = sorted(images.iterdir())
    assert len(paths) == 4 and sorted(p.stem for p in out.glob("*.png")) == [
        p.stem for p in paths
    ]
    for path in paths:
        edges, _ = se(read_image(path), forest, sharpen=1)
        with Image.open(out / f"{path.stem}.png") as im:
            ours = np.asarray(im)
        assert ours.dtype == np.uint16 and ours.max() > 0
        assert np.array_equal(ours, np.round(edges.astype(np.float64) * 65535))
    # a rerun with the same settings reuses every map; another sharpen remakes them
    again = detect_folder(images, out, "se", model=model, sharpen=1, progress=False)
    assert again.n_reused == 4
    multi = detect_folder(images, out, "se", model=model, multiscale=True, progress=False)
    assert multi.n_reused == 0 and multi.settings["multiscale"] is True
    assert multi.settings["model"]["sha256"] and multi.settings["sharpen"] == 2


def test_detect_se_refuses_bad_models_and_options_in_one_line(data, model, tmp_path, capsys):
    images = str(data / "images" / "train")
    unfinished = SEForest(load_forest(model).options, {1: load_forest(model).trees[1]})
    half = unfinished.save(tmp_path / "half.npz")
    cut = tmp_path / "cut.npz"
    cut.write_bytes(model.read_bytes()[:300])
    photo = next((data / "images" / "train").iterdir())
    cases = [
        (["--detector", "se"], "needs --model"),
        (["--detector", "se", "--model", str(cut)], "damaged"),
        (["--detector", "se", "--model", str(photo)], "not an .npz archive"),
        (["--detector", "se", "--model", str(tmp_path / "absent.npz")], "no such"),
        (["--detector", "se", "--model", str(half)], "not finished (trees 0 missing)"),
        (["--detector", "se", "--model", str(model), "--trees-eval", "3"], "has 2 trees"),
        (["--detector", "se", "--model", str(model), "--sharpen", "-1"], "--sharpen"),
        (["--detector", "gm", "--model", str(model)], "applies to --detector se"),
        (["--detector", "gm", "--multiscale"], "applies to --detector se"),
    ]
    for args, words in cases:
        out = tmp_path / "never"
        rc = main(["detect", *args, "--images", images, "--out", str(out), "--quiet"])
        err = capsys.readouterr().err.strip()
        assert rc != 0 and words in err and "\n" not in err, (args, err)
        assert not out.exists()


def test_baselines_train_the_forest_once_and_score_se_and_its_ucm(tmp_path, monkeypatch):
    from segbench.algorithm_folders import train_se as real_train
    from segbench.report import baselines

    data = write_synthetic_dataset(
        tmp_path / "data", make_synthetic_dataset(2, shape=(48, 64), seed=5), split="test"
    )
    train = [replace(it, iid=f"train{it.iid}")
             for it in make_synthetic_dataset(3, shape=(48, 64), seed=6)]
    write_synthetic_dataset(data, train, split="train")
    trained = []

    def tiny(gt, out, **kw):  # the default model takes 25 CPU-minutes: train a tiny one
        trained.append(out)
        return real_train(gt, out, options=TINY_OPTIONS, **{
            k: v for k, v in kw.items() if k != "options"})

    monkeypatch.setattr("segbench.algorithm_folders.train_se", tiny)
    out = tmp_path / "out"
    res = baselines.run_baselines(
        data, out, algorithms="se,se-owt-ucm", progress=False, site=False
    )
    model = out / "models" / "se.npz"
    assert trained == [model] and load_forest(model).complete
    rows = {r["algorithm"]: r for r in res["rows"]}
    assert 0 < rows["se"]["ODS"] <= 1 and rows["se"]["covering"] is None
    assert 0 < rows["se-owt-ucm"]["ODS"] <= 1 and rows["se-owt-ucm"]["covering"] > 0
    assert rows["se"]["published"]["ODS"] == 0.73
    # the maps are the library's, thinned by NMS without a second convTri when scored
    photo = sorted((data / "images" / "test").iterdir())[0]
    edges, _ = se(read_image(photo), load_forest(model))
    with Image.open(out / "maps" / "se" / f"{photo.stem}.png") as im:
        assert np.array_equal(np.asarray(im), np.round(edges.astype(np.float64) * 65535))
    run = json.loads((out / "runs" / "se" / "result_boundary.json").read_text())
    assert run["provenance"]["params"]["nms"]["presmooth"] is False
    # a rerun reuses the model and every map
    again = baselines.run_baselines(
        data, out, algorithms="se,se-owt-ucm", progress=False, site=False
    )
    assert trained == [model]
    assert again["algorithms"]["se"]["maps_reused"] == 2
    # a given model is used as it is; one that cannot be read is one line
    bad = tmp_path / "bad.npz"
    bad.write_text("no")
    with pytest.raises(InputError, match="not an .npz archive"):
        baselines.run_baselines(data, tmp_path / "o2", algorithms="se", se_model=bad,
                                progress=False, site=False)
    assert bad.read_text() == "no"


def test_baselines_without_a_train_split_ask_for_a_model(tmp_path):
    from segbench.report import baselines

    data = write_synthetic_dataset(
        tmp_path / "data", make_synthetic_dataset(2, shape=(48, 64), seed=5), split="test"
    )
    with pytest.raises(InputError, match="give --se-model FILE"):
        baselines.run_baselines(data, tmp_path / "out", algorithms="se", progress=False,
                                site=False)


def test_detect_se_writes_the_orientation_of_the_library(data, model, tmp_path, capsys):
    images = data / "images" / "train"
    out = tmp_path / "orient"
    assert main(["detect", "--detector", "se", "--model", str(model), "--images",
                 str(images), "--out", str(out), "--orientation"]) == 0
    assert "orientation maps of se" in capsys.readouterr().out
    forest = load_forest(model)
    for path in sorted(images.iterdir()):
        theirs = se(read_image(path), forest)[1]
        ours = np.load(out / f"{path.stem}.npy")
        assert ours.dtype == np.float32 and np.array_equal(ours, theirs)
        assert (ours >= 0).all() and (ours < np.pi).all()
    again = detect_folder(images, out, "se", model=model, orientation=True, progress=False)
    assert again.n_reused == 4 and again.kind == "orientation"
    rc = main(["detect", "--detector", "gm", "--orientation", "--images", str(images),
               "--out", str(tmp_path / "never"), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert rc != 0 and "--orientation applies to --detector se" in err


def test_a_model_path_that_cannot_be_written_is_one_line_before_any_tree(data, tmp_path,
                                                                       capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("mine")
    rc = main(["train", "--detector", "se", "--gt", str(data), "--out",
               str(blocker / "m.npz"), "--quiet", *TINY])
    err = capsys.readouterr().err.strip()
    assert rc != 0 and "cannot write" in err and "\n" not in err
    assert blocker.read_text() == "mine"


def test_a_model_of_other_images_is_not_resumed_or_reused(data, model, tmp_path, capsys):
    """QA (helper-49): resuming with --split val a model begun on train mixed the two
    in one forest; a finished one was kept and said to be trained on the new split."""
    import shutil

    both = tmp_path / "both"
    shutil.copytree(data, both)
    for kind in ("images", "groundTruth"):  # a val split of other ids
        (both / kind / "val").mkdir()
        for f in (both / kind / "train").iterdir():
            shutil.copyfile(f, both / kind / "val" / f"v{f.name}")
    assert load_forest(model).training["split"] == "train"
    full = load_forest(model)
    for name, forest in (("partial", SEForest(full.options, {0: full.trees[0]},
                                                  full.training)), ("full", full)):
        out = forest.save(tmp_path / f"{name}.npz")
        before = out.read_bytes()
        rc = main(["train", "--detector", "se", "--gt", str(both), "--split", "val",
                   "--out", str(out), "--quiet", *TINY])
        err = capsys.readouterr().err
        assert rc == 2 and "trained on the 'train' split, not the 'val' images" in err
        assert out.read_bytes() == before
    # the split it was trained on resumes as before
    assert main(["train", "--detector", "se", "--gt", str(both), "--out",
                 str(tmp_path / "partial.npz"), "--quiet", *TINY]) == 0
    assert (tmp_path / "partial.npz").read_bytes() == model.read_bytes()
