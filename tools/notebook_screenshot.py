"""Make docs/img/notebook_result.png: a real Jupyter notebook that streams a boundary
evaluation, shows the Result (its ``_repr_html_``: table and inline PR plot) and a
``Result.plot`` of two results with the human point, executed by a Jupyter kernel,
converted to HTML by nbconvert and photographed by headless Chromium.

Needs (not segbench dependencies): ``pip install nbconvert nbclient ipykernel nbformat``
and a ``chromium`` binary.

    python tools/notebook_screenshot.py [--out docs/img/notebook_result.png]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CELLS = [
    """import numpy as np
from scipy import ndimage
import segbench
from segbench.datasets import make_synthetic_dataset, open_ground_truth, write_synthetic_dataset

root = write_synthetic_dataset("data", make_synthetic_dataset(8, shape=(120, 160), seed=4))
items = list(open_ground_truth(root, split="test").items())

def fake_model(image, sigma):
    grey = image.astype(float).mean(axis=-1)
    mag = ndimage.gaussian_filter(np.hypot(ndimage.sobel(grey, 0), ndimage.sobel(grey, 1)), sigma)
    return mag / mag.max()""",
    """sharp = segbench.BoundaryEval(name="sharp", workers=2)
blurry = segbench.BoundaryEval(name="blurry", workers=2)
for item in items:
    sharp.update(fake_model(item.image, 1.0), item)
    blurry.update(fake_model(item.image, 3.0), item)
human = segbench.human_scores(root, split="test")
a = sharp.compute(ci=True, human=human)
a""",
    """ax = a.plot()
blurry.compute().plot(ax=ax);""",
]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs" /
                                         "img" / "notebook_result.png"))
    args = ap.parse_args(argv)
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("needs a chromium binary", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": tmp}}).execute()
        body, _ = HTMLExporter().from_notebook_node(nb)
        page = Path(tmp) / "notebook.html"
        page.write_text(body, encoding="utf-8")
        shot = Path(tmp) / "shot.png"
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", "--window-size=1000,1350",
                        f"--screenshot={shot}", page.as_uri()], check=True,
                       capture_output=True, timeout=120)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, args.out)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
