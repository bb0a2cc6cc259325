"""Issue 40 item 19: an R50 the curve never reaches is 'n/a' in every table segbench
prints (not 'nan' in one and 'n/a' in another), and the table says why."""

from __future__ import annotations

import numpy as np

from segbench.cli import main
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.io import write_soft_map


def test_r50_never_reached_is_na_with_its_reason(tmp_path, capsys):
    items = make_synthetic_dataset(2, shape=(40, 48), n_annotators=2, seed=4)
    write_synthetic_dataset(tmp_path / "data", items, split="test")
    gt = tmp_path / "data" / "groundTruth" / "test"
    rng = np.random.default_rng(0)
    for name in ("noise", "noise2"):          # random maps: precision far below 0.5
        for it in items:
            write_soft_map(tmp_path / name / f"{it.iid}.png", rng.random((40, 48)))
    assert main(["boundary", "--gt", str(gt), "--pred", str(tmp_path / "noise"),
                 str(tmp_path / "noise2"), "--quiet", "--no-plot"]) == 0
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if ln.strip()]
    rows = [ln for ln in lines if ln.startswith(("noise", "  "))]
    assert len(rows) == 3 and all(r.split()[-1] == "n/a" for r in rows), out
    assert "nan" not in out
    assert any("R50 is the recall where precision falls to 0.5" in ln for ln in lines), out
