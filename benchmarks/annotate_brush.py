"""Time the brush of the annotation editor on a large image, in headless Chromium.

    python benchmarks/annotate_brush.py [--size 3000x4000] [--moves 200] [--radius 8]

A synthetic picture of ``--size`` (rows x columns, default a 12-megapixel photograph's
3000x4000) is opened in the editor, a freehand contour splits off its left third, and
with the brush (painting that new segment) one stroke of ``--moves`` pointer moves
crosses the image. Each move's handler (the capsule painted into the
labels and repainted on the canvas) is timed in the page with ``performance.now()``
around a synchronous ``dispatchEvent``. Beside it, in the same page: one full repaint
of the canvas (what every move cost before the editor repainted only the stroke's box),
median of 10. Printed: median and 90th percentile ms per move, the full repaint, and
their ratio. Run it with ``PYTHONPATH`` set to another tree's ``src`` to time that
tree's editor. Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import threading
from pathlib import Path

from PIL import Image

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

#: A freehand contour around the left third of the image (a second segment to paint
#: with: a fresh image is one segment), by synthetic pointer events.
_SPLIT_JS = """
const view = document.getElementById('viewport');
const r = document.getElementById('canvas').getBoundingClientRect();
const pts = [[0.02, 0.02], [0.33, 0.02], [0.33, 0.98], [0.02, 0.98], [0.02, 0.03]];
const ev = (type, [fx, fy]) => new PointerEvent(type, {
  clientX: r.left + fx * r.width, clientY: r.top + fy * r.height, button: 0,
  buttons: type === 'pointerup' ? 0 : 1, pointerId: 1, pointerType: 'mouse', bubbles: true});
view.dispatchEvent(ev('pointerdown', pts[0]));
for (const p of pts.slice(1)) view.dispatchEvent(ev('pointermove', p));
view.dispatchEvent(ev('pointerup', pts[pts.length - 1]));
return segEditor.cur;
"""

#: Dispatch a stroke of pointer events along the canvas' diagonal; time each move.
_STROKE_JS = """
const moves = arguments[0];
const before = segEditor.labels.slice();
const view = document.getElementById('viewport');
const r = document.getElementById('canvas').getBoundingClientRect();
const x0 = r.left + 0.1 * r.width, y0 = r.top + 0.2 * r.height;
const x1 = r.left + 0.9 * r.width, y1 = r.top + 0.8 * r.height;
const ev = (type, k) => new PointerEvent(type, {
  clientX: x0 + (x1 - x0) * k / moves, clientY: y0 + (y1 - y0) * k / moves,
  button: 0, buttons: type === 'pointerup' ? 0 : 1, pointerId: 1, pointerType: 'mouse',
  bubbles: true});
view.dispatchEvent(ev('pointerdown', 0));
const t = [];
for (let k = 1; k <= moves; k++) {
  const e = ev('pointermove', k), t0 = performance.now();
  view.dispatchEvent(e);
  t.push(performance.now() - t0);
}
view.dispatchEvent(ev('pointerup', moves));
let changed = 0;
for (let i = 0; i < before.length; i++) changed += before[i] !== segEditor.labels[i];
return [t, changed];
"""

_FULL_JS = """
const s = document.getElementById('opacity'), t = [];
for (let k = 0; k < 10; k++) {
  const t0 = performance.now();
  s.dispatchEvent(new Event('input'));
  t.push(performance.now() - t0);
}
return t;
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="3000x4000", help="ROWSxCOLS (default 3000x4000)")
    ap.add_argument("--moves", type=int, default=200)
    ap.add_argument("--radius", type=int, default=8, help="brush radius, image pixels")
    a = ap.parse_args(argv)
    try:
        h, w = (int(v) for v in a.size.lower().split("x"))
    except ValueError:
        ap.error(f"--size must be ROWSxCOLS, e.g. 3000x4000, not {a.size!r}")
    if h < 8 or w < 8 or a.moves < 1 or a.radius < 1:
        ap.error("--size must be at least 8x8, --moves and --radius at least 1")

    import conftest
    import test_annotate_browser as tb

    import segbench
    from segbench.annotate import make_server

    if conftest.CHROMIUM is None or conftest.CHROMEDRIVER is None:
        print("chromium and chromium-driver are not installed", file=sys.stderr)
        return 1
    tmp = Path(tempfile.mkdtemp(prefix="segbench-annotate-brush-"))
    try:
        (tmp / "images").mkdir()
        Image.fromarray(tb._picture(h, w)).save(tmp / "images" / "big.png")
        srv = make_server(tmp / "images", tmp / "out", port=0, subject="benchmark")
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        driver = conftest.headless_chromium(tmp / "profile", "1100,720")
        try:
            tb._open(driver, srv.url + "edit?iid=big")
            driver.execute_script(
                "const b = document.getElementById('brush-size');"
                f"b.value = {a.radius}; b.dispatchEvent(new Event('input'));")
            tb._key(driver, "f")
            if driver.execute_script(_SPLIT_JS) == 0:
                print("the split made no second segment", file=sys.stderr)
                return 1
            tb._key(driver, "b")
            moves, changed = driver.execute_script(_STROKE_JS, a.moves)
            full = driver.execute_script(_FULL_JS)
        finally:
            driver.quit()
            srv.shutdown()
            srv.server_close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not changed:
        print("the stroke painted nothing: the brush did not run", file=sys.stderr)
        return 1
    per_move = statistics.median(moves)
    p90 = sorted(moves)[int(0.9 * (len(moves) - 1))]
    repaint = statistics.median(full)
    print(f"segbench from {Path(segbench.__file__).parent}")
    print(f"{h}x{w} image, brush radius {a.radius}, {a.moves} moves, "
          f"{changed:,} pixels painted")
    print(f"brush move: median {per_move:.2f} ms, 90th percentile {p90:.2f} ms")
    print(f"full repaint of the canvas: median {repaint:.1f} ms")
    print(f"move / full repaint: {per_move / repaint:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
