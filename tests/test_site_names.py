"""The site names a run as the run was named (``--name``, ``name.txt``, the prediction
folder), not after its output folder."""

from __future__ import annotations

from segbench import evaluate
from segbench.algorithms.edges import gradient_magnitude
from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
from segbench.io import write_soft_map
from segbench.report._site_runs import load_run


def test_run_names_come_from_the_result(tmp_path):
    items = make_synthetic_dataset(2, shape=(40, 60), n_annotators=2, seed=1)
    root = write_synthetic_dataset(tmp_path / "ds", items)
    gt = root / "groundTruth" / "test"
    pred = tmp_path / "my-detector" / "test"
    for it in items:
        write_soft_map(pred / f"{it.iid}.png", gradient_magnitude(it.image))
    evaluate("boundary", gt, pred, tmp_path / "out1", progress=False, plot=False)
    assert load_run(tmp_path / "out1").name == "my-detector"        # split name skipped
    evaluate("boundary", gt, pred, tmp_path / "out2", name="Gradient <Lab>",
             progress=False, plot=False)
    assert load_run(tmp_path / "out2").name == "Gradient <Lab>"
    (pred / "name.txt").write_text("From name.txt\n")
    evaluate("boundary", gt, pred, tmp_path / "out3", progress=False, plot=False)
    assert load_run(tmp_path / "out3").name == "From name.txt"


def test_serve_errors_are_one_line(tmp_path):
    """A port in use, or a folder that is not a site: one line, exit 2, no traceback."""
    import socket
    import subprocess
    import sys
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html></html>")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "segbench.cli", "serve", str(site),
                               "--port", str(port)], capture_output=True, text=True,
                              timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and f"127.0.0.1:{port}" in proc.stderr
    assert "in use" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "segbench.cli", "serve",
                           str(tmp_path / "nope")], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "nope" in proc.stderr and len(proc.stderr.splitlines()) == 1
