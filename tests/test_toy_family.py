"""Adding a family is one package and one registry entry (issue 30): the toy family of
docs/engine.md, registered here and touching nothing of segbench, is run by
segbench.evaluate, by a generated ``segbench boundary-count`` command (with its declared
option), into a run folder that RunFolder reads, and compared by segbench.compare. Also
evaluate() for every benchmark the CLI knows, and its refusal of unknown keywords."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import segbench
from segbench.cli import main
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.errors import InputError
from segbench.io import write_label_map, write_soft_map

import toy_family

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    from segbench.algorithms.edges import gradient_magnitude
    base = tmp_path_factory.mktemp("toy")
    items = make_synthetic_dataset(4, shape=(40, 48), n_annotators=3, seed=3)
    write_synthetic_dataset(base / "data", items, split="test")
    d = {"gt": base / "data" / "groundTruth" / "test", "root": base / "data",
         "soft": base / "soft", "blur": base / "blur", "items": items,
         "sem_gt": base / "sem_gt", "sem_pred": base / "sem_pred"}
    for name in ("soft", "blur", "sem_gt", "sem_pred"):
        d[name].mkdir()
    for it in items:
        pb = gradient_magnitude(it.image)
        write_soft_map(d["soft"] / f"{it.iid}.png", pb)
        write_soft_map(d["blur"] / f"{it.iid}.png", np.sqrt(pb))
        seg = np.asarray(it.segmentations[1], np.int64)
        write_label_map(d["sem_gt"] / f"{it.iid}.png", (seg % 3).astype(np.uint8))
        write_label_map(d["sem_pred"] / f"{it.iid}.png",
                        (np.asarray(it.segmentations[0]) % 3).astype(np.uint8))
    return d


@pytest.fixture
def toy():
    entry = toy_family.install()
    yield entry
    segbench.families.unregister(entry.name)


def _direct(data, folder, level):
    """The toy's numbers computed here without segbench's engine."""
    from segbench.io import read_ground_truth, read_prediction
    out = {}
    for it in data["items"]:
        pb = read_prediction(folder / f"{it.iid}.png", kind="soft").pb
        gts = read_ground_truth(data["gt"] / f"{it.iid}.mat")
        out[it.iid] = np.count_nonzero(pb >= level) / np.mean(
            [np.count_nonzero(g.boundaries) for g in gts])
    return out


def test_a_registered_family_runs_from_python_the_cli_and_compare(data, toy, tmp_path,
                                                                  capsys):
    res = segbench.evaluate("boundary_count", data["gt"], data["soft"],
                            tmp_path / "py", threshold=0.3, progress=False)
    want = _direct(data, data["soft"], 0.3)
    assert [r["id"] for r in res.per_item] == sorted(want)
    assert [r["ratio"] for r in res.per_item] == pytest.approx([want[i] for i in
                                                                sorted(want)])
    assert res.metrics["ratio"] == pytest.approx(np.mean(list(want.values())))
    assert res.provenance["params"]["threshold"] == 0.3
    # the generated command: its declared option, the run folder, the headline
    assert main(["boundary-count", "--gt", str(data["gt"]), "--pred", str(data["blur"]),
                 "--out", str(tmp_path / "cli"), "--threshold", "0.3", "--quiet"]) == 0
    line = capsys.readouterr().out.splitlines()[0]
    assert re.fullmatch(r"boundary_count blur: ratio \d+\.\d{4}  \(4 items\)", line), line
    folder = segbench.engine.RunFolder(tmp_path / "cli")
    assert folder.families() == ["boundary_count"]
    back = folder.read()
    want = _direct(data, data["blur"], 0.3)
    assert back.metrics["ratio"] == pytest.approx(np.mean(list(want.values())))
    assert "--threshold 0.3" in folder.manifest()["runs"]["boundary_count"]["command"]
    # a misspelt keyword is refused, not ignored
    with pytest.raises(InputError, match="no parameter 'thresh'.*threshold"):
        segbench.evaluate("boundary_count", data["gt"], data["soft"], thresh=0.3)
    # compare takes it: the registry marks it comparable, its spec resamples
    cmp = segbench.compare(tmp_path / "py", tmp_path / "cli", resamples=50)
    assert cmp.family == "boundary_count" and cmp.names == ["soft", "blur"]
    assert cmp["pairs"][0]["bootstrap"]["ratio"]["diff"] == pytest.approx(
        res.metrics["ratio"] - back.metrics["ratio"])
    # the command line's compare table takes its columns from the registry's entry
    assert main(["compare", str(tmp_path / "py"), str(tmp_path / "cli"),
                 "--resamples", "50"]) == 0
    table = capsys.readouterr().out
    assert re.search(r"^run +ratio$", table, re.M), table
    assert re.search(r"^soft +\d\.\d{4} \[", table, re.M), table
    with pytest.raises(SystemExit) as done:
        main(["boundary-count", "--help"])
    assert done.value.code == 0 and "--threshold T" in capsys.readouterr().out


def test_a_parameter_shadowing_a_generic_option_is_refused():
    from dataclasses import replace

    from segbench.families import Param, register
    bad = replace(toy_family.ENTRY, name="toy_bad", params=(Param("level", 0.5),))
    with pytest.raises(ValueError, match="toy_bad.*level"):
        register(bad)


def test_an_unregistered_family_is_unknown(data):
    with pytest.raises(InputError, match="unknown benchmark 'boundary_count'"):
        segbench.evaluate("boundary_count", data["gt"], data["soft"])
    with pytest.raises(SystemExit) as done:           # argparse: an invalid choice
        main(["boundary-count", "--gt", str(data["gt"])])
    assert done.value.code == 2


def test_registry_parameters_are_the_specs_defaults():
    """Every declared parameter's default is the one its specs record with (the spec
    takes it from the declaration): one place to change a default."""
    from segbench.families import BENCHMARKS, specs
    for name, entry in BENCHMARKS.items():
        for spec in specs(name):
            merged = {**spec.defaults, **spec.summary_defaults}
            for p in entry.params:
                if p.name in merged:
                    assert merged[p.name] == p.default, (name, spec.name, p.name)


def test_evaluate_knows_every_family_the_cli_knows(data, tmp_path):
    """semantic, consistency, agreement and stats are evaluate() names too, returning
    what their commands print from."""
    sem = segbench.evaluate("semantic", data["sem_gt"], data["sem_pred"], classes=3,
                            progress=False)
    assert sem.family == "semantic" and 0 <= sem.metrics["mIoU"] <= 1
    cons = segbench.evaluate("consistency", data["gt"], pairs=3, progress=False)
    assert cons.family == "consistency" and cons.metrics["n_images"] == 4
    agree = segbench.evaluate("agreement", data["gt"], progress=False, plot=False)
    assert agree.family == "agreement"
    with pytest.raises(InputError, match="takes no 'protocol'"):
        segbench.evaluate("semantic", data["sem_gt"], data["sem_pred"], classes=3,
                          protocol="bsr")
    with pytest.raises(InputError, match="ground truth alone"):
        segbench.evaluate("consistency", data["gt"], data["soft"])
    from segbench.cli import _COMMAND_GROUPS
    from segbench.families import BENCHMARKS
    for name, entry in BENCHMARKS.items():
        if entry.group is not None:
            assert name.replace("_", "-") in _COMMAND_GROUPS, name


def test_the_docs_show_the_toy_as_it_is():
    page = (ROOT / "docs" / "engine.md").read_text(encoding="utf-8")
    block = re.search(r"```python toy\n(.*?)^```", page, flags=re.S | re.M)
    assert block is not None
    assert block.group(1) == (ROOT / "tests" / "toy_family.py").read_text(
        encoding="utf-8")


def test_compare_table_of_a_family_that_declares_no_headline(data, toy, tmp_path, capsys):
    """An entry with neither headline nor metrics: the table shows the scores the
    bootstrap resampled (before, an IndexError traceback)."""
    import dataclasses
    segbench.families.register(dataclasses.replace(toy, headline=(), metrics=()),
                               replace=True)
    for name, folder in (("a", data["soft"]), ("b", data["blur"])):
        segbench.evaluate("boundary_count", data["gt"], folder, tmp_path / name,
                          progress=False)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"),
                 "--resamples", "50"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^run +ratio$", out, re.M) and "ratio diff" in out, out


def test_declared_metrics_say_which_way_is_better():
    from segbench.families import BENCHMARKS
    region = BENCHMARKS["region"]
    assert not region.metric("VI_ODS").higher_is_better
    assert region.metric("covering_ODS").higher_is_better
    assert [m.key for m in region.shown_metrics()][:2] == ["covering_ODS", "covering_OIS"]
    assert not BENCHMARKS["superpixel"].metric("ue").higher_is_better
    assert not BENCHMARKS["consistency"].metric("GCE_same").higher_is_better
    # every headline score is declared where a family declares its metrics
    for entry in BENCHMARKS.values():
        if entry.metrics:
            keys = {m.key for m in entry.metrics}
            assert set(entry.headline) <= keys, entry.name


def test_a_family_added_at_run_time_has_a_site_and_a_compare_table(data, tmp_path, capsys):
    """Issue 39: a family declared only by its registry entry is ranked by the site
    (its declared metrics as columns, in their declared direction), listed with its
    per-image scores on its algorithm page, offered for download, and compared,
    beside a boundary run of the same algorithm; no site, CLI or compare code names
    it."""
    from dataclasses import replace

    from segbench.families import Metric, register, unregister
    from segbench.report.site import build_site

    # lower-is-better, so the ranking must put the smaller ratio first
    entry = replace(
        toy_family.ENTRY,
        metrics=(Metric("ratio", "Marked ratio", higher_is_better=False),),
        per_image=(Metric("marked", "Marked px"),),
    )
    register(entry, replace=True)
    try:
        runs = {}
        for name in ("soft", "blur"):
            runs[name] = tmp_path / "runs" / name
            res = segbench.evaluate("boundary_count", data["gt"], data[name], runs[name],
                                    threshold=0.3, progress=False)
            runs[name + "_ratio"] = res.metrics["ratio"]
        segbench.evaluate("boundary", data["gt"], data["soft"], tmp_path / "runs" / "soft",
                          progress=False)
        index = build_site(data["root"], [runs["soft"], runs["blur"]], tmp_path / "site",
                           progress=False)
        html = index.read_text()
        ranking = html.split('id="ranking"', 1)[1].split("</table>", 1)[0]
        head = ranking.split("</thead>", 1)[0]
        assert '<th data-sort="num" data-lower-better>Marked ratio</th>' in head, head
        assert re.search(r">ODS</th>.*>Marked ratio</th>", head, re.S), head
        rows = re.findall(r'<tr data-slug="([^"]+)">', ranking)
        # soft has a boundary result, blur none: ODS ranks first, then the ratio
        assert rows == ["soft", "blur"], rows
        assert f"{runs['blur_ratio']:.3f}" in ranking and f"{runs['soft_ratio']:.3f}" in ranking
        page = (tmp_path / "site" / "algorithms" / "blur.html").read_text()
        assert "<th colspan=\"2\">Boundary count</th>" in page and "Marked ratio" in page
        assert '<th data-sort="num">Marked px</th>' in page
        marked = segbench.engine.RunFolder(runs["blur"]).read().per_item[0]["marked"]
        assert f'data-value="{float(marked)!r}"' in page or f">{marked}<" in page, page
        assert "result_boundary_count.json" in page and "per_item_boundary_count.csv" in page
        listing = (tmp_path / "site" / "algorithms" / "index.html").read_text()
        assert ">ODS</th>" in listing and ">Marked ratio</th>" in listing
        # the declared direction orders runs of the family alone: smaller ratio first
        from segbench.report._site_runs import load_run, rank_runs

        high = segbench.evaluate("boundary_count", data["gt"], data["blur"],
                                 tmp_path / "runs" / "high", threshold=0.1, progress=False)
        assert high.metrics["ratio"] > runs["blur_ratio"]
        for given in ([runs["blur"], tmp_path / "runs" / "high"],
                      [tmp_path / "runs" / "high", runs["blur"]]):
            ranked = rank_runs([load_run(d) for d in given])
            assert [r.dir for r in ranked] == [runs["blur"], tmp_path / "runs" / "high"]
        # the compare table in Python and on the command line
        cmp = segbench.compare(runs["soft"] / "result_boundary_count.json",
                               runs["blur"], resamples=40)
        assert cmp.family == "boundary_count" and cmp.names == ["soft", "blur"]
        assert main(["compare", str(runs["soft"] / "result_boundary_count.json"),
                     str(runs["blur"]), "--resamples", "40"]) == 0
        assert re.search(r"^run +ratio$", capsys.readouterr().out, re.M)
    finally:
        unregister(entry.name)


def apply_scale(value, setup):
    """A run option's hook, declared below as ``Option("scale", (this module,
    "apply_scale"))``: it scales the toy's level."""
    setup.params["threshold"] = setup.params.get("threshold", 0.5) * value


def test_run_options_are_declared_with_a_hook_and_refused_where_undeclared(data, tmp_path):
    """Issue 39 item 1: a run option is the registry's (an Option with a hook), not
    code in segbench.evaluate: a family declares its own and evaluate calls its hook;
    the boundary's options are refused by a benchmark that does not declare them."""
    from dataclasses import replace

    from segbench.families import Option, register, unregister

    entry = replace(toy_family.ENTRY, options=(Option("scale", (__name__, "apply_scale")),))
    register(entry, replace=True)
    try:
        res = segbench.evaluate("boundary_count", data["gt"], data["soft"], threshold=0.6,
                                scale=0.5, progress=False)
    finally:
        unregister(entry.name)
    assert res.provenance["params"]["threshold"] == pytest.approx(0.3)
    want = _direct(data, data["soft"], 0.3)
    assert res.metrics["ratio"] == pytest.approx(np.mean(list(want.values())))
    for option, value in (("calibrate_on", tmp_path), ("human", True), ("protocol", "nyud")):
        with pytest.raises(InputError, match=rf"{option} is an option of the boundary.* not "
                                             r"of 'crispness'"):
            segbench.evaluate("crispness", data["gt"], data["soft"], progress=False,
                              **{option: value})
    assert {o.name for o in segbench.families.BENCHMARKS["boundary"].options} == {
        "protocol", "calibrate_on", "calibrate_name", "human"}


def test_all_refuses_label_maps_rather_than_score_their_boundaries_zero(data):
    """'all' declared the region's ``labels``, but its boundary half reads predictions
    as soft maps: label-map images scored boundary F = 0. It is refused now."""
    with pytest.raises(InputError, match="'all' does not read label-map images"):
        segbench.evaluate("all", data["gt"], data["sem_pred"], labels=True, progress=False)
