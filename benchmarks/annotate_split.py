"""Time a split in the annotation editor on a 481x321 image, in headless Chromium (and,
with --screenshot, save a picture of the editor).

    python benchmarks/annotate_split.py [--image IMG] [--screenshot PNG] [--repeat N]

The image defaults to BSDS500 test image 100039 (or the first landscape test image)
under ../shared/data, a synthetic picture without them. The contours drawn are the outlines of the largest
segments of that image's first BSDS500 annotator (when its ground truth is there), drawn
with real mouse events as freehand contours; then one large ellipse is split off and
undone N times. The split time is the page's ``performance.now()`` around the split (the
point-in-polygon fill and relabelling), and the render time is the redraw after it.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
from PIL import Image

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "shared" / "data" / "bsds500"
sys.path.insert(0, str(HERE.parent / "tests"))


def _default_image() -> Path | None:
    folder = DATA / "images" / "test"
    if not folder.is_dir():
        return None
    if (folder / "100039.jpg").is_file():   # a bear at a tree: clear objects to cut out
        return folder / "100039.jpg"
    return next((p for p in sorted(folder.glob("*.jpg"))
                 if Image.open(p).size == (481, 321)), None)


def _outlines(iid: str, k: int = 5) -> list[np.ndarray]:
    """(x, y) outlines of the k largest segments of the first annotator that cover
    less than a quarter of the image (objects rather than sky or ground)."""
    gt = DATA / "groundTruth" / "test" / f"{iid}.mat"
    if not gt.is_file():
        return []
    from skimage.measure import approximate_polygon, find_contours

    from segbench.io import read_ground_truth
    seg = read_ground_truth(gt)[0].segmentation
    labels, sizes = np.unique(seg, return_counts=True)
    out = []
    for lab in labels[np.argsort(sizes)[::-1]]:
        if len(out) == k or sizes[labels == lab][0] > seg.size / 4:
            if len(out) == k:
                break
            continue
        contour = max(find_contours((seg == lab).astype(float), 0.5), key=len)
        poly = approximate_polygon(contour, tolerance=1.5)
        if len(poly) >= 4:
            out.append(poly[:, ::-1] + 0.5)   # (row, col) -> (x, y) of pixel centres
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--image", type=Path, default=None)
    ap.add_argument("--screenshot", type=Path, default=None,
                    help="also save a screenshot of the editor here (a new file)")
    ap.add_argument("--repeat", type=int, default=10)
    a = ap.parse_args(argv)
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")
    if a.image is not None and not a.image.is_file():
        ap.error(f"{a.image}: no such image file")
    if a.screenshot is not None and a.screenshot.exists():
        ap.error(f"{a.screenshot}: exists; choose a new file for the screenshot")

    import conftest
    import test_annotate_browser as tb

    from segbench.annotate import make_server

    if conftest.CHROMIUM is None or conftest.CHROMEDRIVER is None:
        print("chromium and chromium-driver are not installed", file=sys.stderr)
        return 1
    photo = a.image or _default_image()
    tmp = Path(tempfile.mkdtemp(prefix="segbench-annotate-bench-"))
    try:
        (tmp / "images").mkdir()
        iid = photo.stem if photo else "synthetic"
        img = (np.asarray(Image.open(photo).convert("RGB")) if photo
               else tb._picture(321, 481))
        Image.fromarray(img).save(tmp / "images" / f"{iid}.png")
        srv = make_server(tmp / "images", tmp / "out", port=0, subject="benchmark")
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        driver = conftest.headless_chromium(tmp / "profile", "1100,720")
        try:
            tb._open(driver, srv.url + f"edit?iid={iid}")
            h, w = driver.execute_script("return [segEditor.H, segEditor.W]")
            for outline in _outlines(iid):
                labels = tb._labels(driver)
                inside, _ = tb._inside(outline, h, w)
                free = np.argwhere(~inside & (labels == 0))
                if not len(free):
                    continue
                tb._key(driver, "k")
                r, c = free[len(free) // 2]
                tb._click(driver, (c + 0.5, r + 0.5))
                tb._key(driver, "f")
                tb._drag(driver, [tuple(p) for p in outline])
            shots = driver.execute_script("return segEditor.timings.length")
            tb._key(driver, "k")
            tb._click(driver, (2.5, 2.5))
            tb._key(driver, "f")
            ring = [(240 + 200 * np.cos(t), 160 + 130 * np.sin(t))
                    for t in np.linspace(0, 2 * np.pi, 64, endpoint=False)]
            for _ in range(a.repeat):
                tb._drag(driver, ring)
                tb._key(driver, "z", ctrl=True)
            times = driver.execute_script("return segEditor.timings")
            if a.screenshot is not None:
                a.screenshot.parent.mkdir(parents=True, exist_ok=True)
                driver.save_screenshot(str(a.screenshot))
        finally:
            driver.quit()
            srv.shutdown()
            srv.server_close()
        ring_t = [t for t in times[shots:] if t["op"] == "split"]
        if not ring_t:
            print("no split of the ring was recorded", file=sys.stderr)
            return 1
        split = statistics.median(t["split_ms"] for t in ring_t)
        render = statistics.median(t["render_ms"] for t in ring_t)
        print(f"image {iid} {w}x{h}: {shots} outline splits, then {len(ring_t)} splits of "
              f"{ring_t[0]['pixels']} pixels")
        print(f"split: median {split:.1f} ms (min {min(t['split_ms'] for t in ring_t):.1f})"
              f"; redraw after it: median {render:.1f} ms")
        if shots:
            print("outline splits: " + ", ".join(f"{t['pixels']} px {t['split_ms']:.1f} ms"
                                                 for t in times[:shots]))
        if a.screenshot is not None:
            print(f"screenshot: {a.screenshot}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
