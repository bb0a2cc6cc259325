"""docs/python.md runs: its examples (the numpy variants of the PyTorch ones; torch is
not a dependency and is not installed) run in order in a fresh process, and the README
links the page."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "python.md"


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"^```{kind}\n(.*?)^```", PAGE.read_text(encoding="utf-8"),
                      flags=re.S | re.M)


def test_the_examples_run(tmp_path):
    code = "\n".join(_blocks("python"))
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, env={**_env(), "MPLBACKEND": "Agg"}, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    epochs = [ln for ln in lines if ln.startswith("epoch ")]
    assert len(epochs) == 2 and all("ODS 0." in ln and "human F 0." in ln for ln in epochs)
    assert any(ln.startswith("merged ODS 0.") for ln in lines)
    assert (tmp_path / "pr.png").stat().st_size > 0
    assert (tmp_path / "runs" / "in-memory" / "result_boundary.json").is_file()
    assert "torch" not in proc.stderr


def test_the_torch_examples_are_the_numpy_ones_with_tensors():
    """The pages's PyTorch examples (not run) use the calls the numpy variants run."""
    torch_code = "\n".join(_blocks("python no-test"))
    assert "dist.all_gather_object(states, ev.state_dict())" in torch_code
    assert "torch.sigmoid(model(images.cuda()))" in torch_code
    run = "\n".join(_blocks("python"))
    for call in ("ev.update(", "ev.compute(human=human)", "ev.reset()", "total.merge(state)",
                 ".plot(ax=ax)", ".compare(", "segbench.evaluate("):
        assert call in run, call


def test_readme_links_the_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/python.md)" in readme


def _env():
    import os
    return dict(os.environ)
