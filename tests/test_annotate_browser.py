"""The annotation editor in a real headless Chromium, driven with real mouse events.

Needs the Debian packages ``chromium`` and ``chromium-driver`` and the Python package
``selenium``; skips cleanly without them. Each test draws with WebDriver pointer actions,
reads back the vertices the page recorded for each contour and stroke, computes the
partition those vertices must give independently (``matplotlib.path`` for contours,
numpy distances for the brush), and checks it pixel by pixel against the ``.seg`` file
the server wrote, read with :func:`segbench.io.read_seg`.

Pixel-centre convention (the same in ``static/geometry.js``): pixel (r, c) is the square
[c, c+1) x [r, r+1) in image coordinates; it is inside a contour when its centre
(c + 0.5, r + 0.5) is (even-odd rule), under the brush when its centre is within the
radius of the stroke. A centre lying exactly on an edge (or at exactly the radius) is a
tie either answer may take; the tests count such pixels, require them to be rare, and
take the page's answer there.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

webdriver = pytest.importorskip("selenium.webdriver")

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from conftest import NEEDS_CHROMIUM, headless_chromium  # noqa: E402

pytestmark = NEEDS_CHROMIUM
H, W = 60, 90
TIE = 1e-7


def _picture(h, w, seed=0):
    yy, xx = np.mgrid[:h, :w]
    rng = np.random.default_rng(seed)
    img = np.stack([xx * 255 // w, yy * 255 // h, (xx + yy) * 127 // (h + w)], -1)
    return np.clip(img + rng.integers(0, 30, img.shape), 0, 255).astype(np.uint8)


def _serve(tmp: Path, images: dict, **options):
    from segbench.annotate import make_server
    img_dir = tmp / "images"
    img_dir.mkdir()
    for iid, arr in images.items():
        Image.fromarray(arr).save(img_dir / f"{iid}.png")
    srv = make_server(img_dir, tmp / "out", port=0, **options)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


@pytest.fixture(scope="module")
def browser():
    profile = tempfile.mkdtemp(prefix="segbench-chromium-")
    driver = headless_chromium(profile, "1200,900")
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


# ---- page helpers ----------------------------------------------------------------------

def _open(driver, url):
    driver.get(url)
    WebDriverWait(driver, 20).until(
        lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
    severe = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == []   # no script error, failed load or CSP violation


def _labels(driver) -> np.ndarray:
    flat = driver.execute_script("return Array.from(segEditor.labels)")
    h, w = driver.execute_script("return [segEditor.H, segEditor.W]")
    return np.array(flat, np.int64).reshape(h, w)


def _canvas(driver) -> np.ndarray:
    """The editor canvas' RGBA pixels, (H, W, 4)."""
    flat = driver.execute_script(
        "const c = document.getElementById('canvas');"
        "return Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data)")
    h, w = driver.execute_script("return [segEditor.H, segEditor.W]")
    return np.array(flat, np.uint8).reshape(h, w, 4)


def _repaint_all(driver) -> None:
    """Make the editor repaint the whole canvas (what a change of opacity does)."""
    driver.execute_script("document.getElementById('opacity').dispatchEvent("
                          "new Event('input'))")


def _client(driver, pts):
    """Viewport (CSS px) positions of image points, through the canvas' on-screen box."""
    left, top, width, height, w, h = driver.execute_script(
        "const r = document.getElementById('canvas').getBoundingClientRect();"
        "return [r.left, r.top, r.width, r.height, segEditor.W, segEditor.H];")
    return [(round(left + x * width / w), round(top + y * height / h))
            for x, y in pts]


def _actions(driver):
    return ActionBuilder(driver, duration=0)


def _drag(driver, pts):
    """Press at the first point, move through the others, release (a freehand contour
    or a brush stroke)."""
    ab = _actions(driver)
    xy = _client(driver, pts)
    ab.pointer_action.move_to_location(*xy[0]).pointer_down()
    for p in xy[1:]:
        ab.pointer_action.move_to_location(*p)
    ab.pointer_action.pointer_up()
    ab.perform()


def _click(driver, pt):
    ab = _actions(driver)
    ab.pointer_action.move_to_location(*_client(driver, [pt])[0]).click()
    ab.perform()


def _key(driver, key, ctrl=False, shift=False):
    chain = ActionChains(driver)
    for mod, on in ((Keys.CONTROL, ctrl), (Keys.SHIFT, shift)):
        if on:
            chain.key_down(mod)
    chain.send_keys(key)
    for mod, on in ((Keys.SHIFT, shift), (Keys.CONTROL, ctrl)):
        if on:
            chain.key_up(mod)
    chain.perform()


def _status(driver, text, timeout=10):
    WebDriverWait(driver, timeout).until(
        lambda d: text in d.find_element(By.ID, "status").text)


# ---- the independent model -------------------------------------------------------------

def _centres(h, w):
    yy, xx = np.mgrid[:h, :w]
    return np.column_stack([xx.ravel() + 0.5, yy.ravel() + 0.5])


def _seg_dist(p, a, b):
    """Distance of points p (N, 2) to the segment a-b."""
    d = b - a
    len2 = float(d @ d)
    t = np.zeros(len(p)) if len2 == 0 else np.clip((p - a) @ d / len2, 0, 1)
    return np.hypot(*(p - (a + t[:, None] * d)).T)


def _inside(pts, h, w):
    """(inside, tie) masks of the closed polygon: matplotlib's point-in-polygon on the
    pixel centres, and the centres within TIE of an edge."""
    from matplotlib.path import Path as MplPath
    pts = np.asarray(pts, float)
    c = _centres(h, w)
    inside = MplPath(pts).contains_points(c)
    tie = np.zeros(len(c), bool)
    for a, b in zip(pts, np.roll(pts, -1, axis=0)):
        tie |= _seg_dist(c, a, b) < TIE
    return inside.reshape(h, w), tie.reshape(h, w)


def _brushed(points, radius, h, w):
    """(under, tie) masks of a brush stroke: centres within radius of any of its
    segments (a single point is a disk)."""
    pts = np.asarray(points, float)
    c = _centres(h, w)
    d = _seg_dist(c, pts[0], pts[0])
    for a, b in itertools.pairwise(pts):
        d = np.minimum(d, _seg_dist(c, a, b))
    return (d <= radius).reshape(h, w), (np.abs(d - radius) < TIE).reshape(h, w)


class Model:
    """The editor's operations on a numpy label map, from recorded geometry."""

    def __init__(self, h, w):
        self.lab, self.n, self.cur, self.ties = np.zeros((h, w), np.int64), 1, 0, 0

    def split(self, pts, page, target=None):
        """Split segment ``target`` (default: the current one) by the contour."""
        inside, tie = _inside(pts, *self.lab.shape)
        inside = np.where(tie, page == self.n, inside)   # ties: the page's answer
        self.ties += int(tie.sum())
        part = inside & (self.lab == (self.cur if target is None else target))
        assert part.any() and not (part == (self.lab == self.cur)).all()
        self.lab[part] = self.n
        self.cur, self.n = self.n, self.n + 1

    def brush(self, stroke, page):
        under, tie = _brushed(stroke["points"], stroke["radius"], *self.lab.shape)
        under = np.where(tie, page == self.cur, under)
        self.ties += int(tie.sum())
        self.lab[under] = self.cur


def _same_partition(a, b) -> bool:
    """True if a and b are the same partition up to renaming the segments."""
    pairs = np.unique(np.stack([a.ravel(), b.ravel()]), axis=1).shape[1]
    return pairs == np.unique(a).size == np.unique(b).size


# ---- tests ------------------------------------------------------------------------------

def test_split_brush_merge_undo_draft_save_match_what_was_drawn(browser, tmp_path):
    from segbench.io import read_seg
    srv = _serve(tmp_path, {"a": _picture(H, W)}, subject="Ada Lovelace")
    try:
        url = srv.url + "edit?iid=a"
        _open(browser, url)
        model = Model(H, W)

        # freehand: a long thin blob around the left half
        blob = [(10 + 30 * np.cos(t) * 0.9 + 20, 30 + 22 * np.sin(t))
                for t in np.linspace(0, 2 * np.pi, 24, endpoint=False)]
        _drag(browser, blob)
        page = _labels(browser)
        contour = browser.execute_script("return segEditor.lastContour")
        assert len(contour) >= 3
        # the page recorded where the mouse went (to the rounding of CSS pixels)
        zoom = browser.execute_script("return segEditor.zoom")
        assert np.abs(np.asarray(contour[0]) - blob[0]).max() <= 1 / zoom + 1e-9
        model.split(contour, page)
        assert (page == model.lab).all()

        # polygon (tool P): cut the new segment in two with a box over its right part
        _key(browser, "p")
        box = [(28, 2), (70, 3), (71, 58), (29, 57)]
        for pt in box:
            _click(browser, pt)
        _key(browser, Keys.ENTER)
        page = _labels(browser)
        model.split(browser.execute_script("return segEditor.lastContour"), page)
        assert (page == model.lab).all()
        assert np.unique(page).size == 3

        # pick segment 0 (tool K), brush it across both others (tool B)
        _key(browser, "k")
        _click(browser, (85, 5))
        assert browser.execute_script("return segEditor.cur") == model.lab[5, 85] == 0
        model.cur = 0
        _key(browser, "b")
        before_stroke = _canvas(browser)
        _drag(browser, [(80, 30), (60, 32), (40, 31), (25, 35)])
        page = _labels(browser)
        stroke = browser.execute_script("return segEditor.lastStroke")
        model.brush(stroke, page)
        assert (page == model.lab).all()
        # the stroke repainted only around itself: the canvas is what a full repaint
        # gives, and it did change
        painted = _canvas(browser)
        _repaint_all(browser)
        assert (painted == _canvas(browser)).all()
        assert (painted != before_stroke).any(axis=2).sum() > 100
        assert browser.find_element(By.ID, "segments").text == str(np.unique(page).size)

        # merge (tool M) a segment into the current one, then undo it; redo, undo again
        before = page.copy()
        _key(browser, "m")
        other = int(np.setdiff1d(np.unique(model.lab), [0])[0])
        r, c = np.argwhere(model.lab == other)[0]
        _click(browser, (c + 0.5, r + 0.5))
        merged = _labels(browser)
        assert not (merged == other).any() and (merged[before == other] == 0).all()
        _key(browser, "z", ctrl=True)
        assert (_labels(browser) == before).all()
        _key(browser, "z", ctrl=True, shift=True)
        assert (_labels(browser) == merged).all()
        _key(browser, "z", ctrl=True)
        assert (_labels(browser) == before).all()
        assert model.ties < 0.02 * H * W

        # the draft survives closing the page: reload, same labels
        WebDriverWait(browser, 10).until(
            lambda d: d.execute_script("return !segEditor.dirty && !segEditor.saving"))
        _open(browser, url)
        assert (_labels(browser) == before).all()
        assert "draft restored" in browser.find_element(By.ID, "status").text

        browser.find_element(By.ID, "save").click()
        _status(browser, "saved human/color/")
        seg = read_seg(tmp_path / "out" / "human" / "color" / "1" / "a.seg")
        assert seg.shape == (H, W) and _same_partition(seg.labels, model.lab)
        assert (seg.user, seg.gray, seg.invert, seg.flipflop) == (1, False, False, False)
        assert seg.segments == np.unique(model.lab).size and seg.date
    finally:
        srv.shutdown()
        srv.server_close()


def test_grey_inverted_flipped_presentation_is_saved_in_image_orientation(browser,
                                                                          tmp_path):
    from segbench.io import read_seg
    picture = _picture(H, W, seed=1)
    srv = _serve(tmp_path, {"b": picture}, subject="Grace", gray=True, invert=True,
                 flipflop=True)
    try:
        _open(browser, srv.url + "edit?iid=b")
        # the page shows the inverted grey image turned by 180 degrees
        shown = np.array(browser.execute_script("return Array.from(segEditor.pixels)"),
                         np.int64).reshape(H, W, 4)
        grey = np.rint(picture @ [0.298936, 0.587043, 0.114021])
        assert (shown[..., 0] == shown[..., 2]).all()
        assert np.abs(shown[..., 0] - (255 - grey[::-1, ::-1])).max() <= 1
        # zoom in (keys) and pan (pan tool, a real drag): drawing must follow the view
        zoom0, tx0 = browser.execute_script("return [segEditor.zoom, segEditor.tx]")
        _key(browser, "+")
        _key(browser, "+")
        _key(browser, "h")
        _drag(browser, [(45, 30), (55, 36)])
        zoom, tx = browser.execute_script("return [segEditor.zoom, segEditor.tx]")
        assert zoom == pytest.approx(zoom0 * 1.25 ** 2) and tx != tx0
        _key(browser, "p")
        model = Model(H, W)
        for pt in [(3, 4), (40, 6), (20, 30)]:   # a triangle near the top-left on screen
            _click(browser, pt)
        _click(browser, (3, 4))                  # clicking the first corner closes it
        page = _labels(browser)
        contour = browser.execute_script("return segEditor.lastContour")
        assert np.abs(np.asarray(contour[1]) - (40, 6)).max() <= 1 / zoom + 1e-9
        model.split(contour, page)
        assert (page == model.lab).all()         # on screen, as drawn
        browser.find_element(By.ID, "save").click()
        _status(browser, "saved human/gray/")
        seg = read_seg(tmp_path / "out" / "human" / "gray" / "1" / "b.seg")
        assert (seg.gray, seg.invert, seg.flipflop) == (True, True, True)
        # ... and the file holds it in the image's own orientation: bottom-right
        assert _same_partition(seg.labels, model.lab[::-1, ::-1])
        assert seg.labels[-5, -5] != seg.labels[0, 0]
    finally:
        srv.shutdown()
        srv.server_close()


def test_split_of_a_481x321_image_is_fast(browser, tmp_path):
    from conftest import DATA
    folder = DATA / "bsds500" / "images" / "test"   # a real photograph when present
    photo = next((p for p in sorted(folder.glob("*.jpg")) if Image.open(p).size ==
                  (481, 321)), None) if folder.is_dir() else None
    img = np.asarray(Image.open(photo).convert("RGB")) if photo else _picture(321, 481)
    srv = _serve(tmp_path, {"big": img}, subject="Timer")
    try:
        _open(browser, srv.url + "edit?iid=big")
        ring = [(240 + 200 * np.cos(t), 160 + 130 * np.sin(t))
                for t in np.linspace(0, 2 * np.pi, 48, endpoint=False)]
        _drag(browser, ring)
        timing = browser.execute_script("return segEditor.timings.at(-1)")
        assert timing["op"] == "split" and timing["pixels"] > 0.4 * 481 * 321
        print(f"\nsplit of {timing['pixels']} pixels of 481x321: "
              f"{timing['split_ms']:.1f} ms, then render {timing['render_ms']:.1f} ms")
        assert timing["split_ms"] + timing["render_ms"] < 500
    finally:
        srv.shutdown()
        srv.server_close()


def test_collection_mode_sign_in_next_save_in_the_browser(browser, tmp_path):
    srv = _serve(tmp_path, {f"c{k}": _picture(H, W, seed=k) for k in range(3)},
                 collect=True, per_image=2, seed=0)
    try:
        browser.delete_all_cookies()
        browser.get(srv.url)
        browser.find_element(By.NAME, "name").send_keys("Marie Curie")
        browser.find_element(By.CSS_SELECTOR, "form button").click()
        WebDriverWait(browser, 10).until(lambda d: "Hello, Marie Curie" in d.page_source)
        browser.find_element(By.CSS_SELECTOR, "form button").click()     # next image
        WebDriverWait(browser, 20).until(
            lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
        iid = browser.execute_script("return segEditor.task.iid")
        gray = browser.execute_script("return segEditor.task.gray")
        _key(browser, "p")
        for pt in [(10, 10), (60, 12), (40, 50)]:
            _click(browser, pt)
        _key(browser, Keys.ENTER)
        browser.find_element(By.ID, "save").click()
        _status(browser, "saved human/")
        kind = "gray" if gray else "color"
        assert (tmp_path / "out" / "human" / kind / "1" / f"{iid}.seg").is_file()
        browser.find_element(By.ID, "next").click()
        WebDriverWait(browser, 10).until(lambda d: "segmented 1 image" in d.page_source)
        browser.get(srv.url + f"edit?iid={iid}")                 # never the same twice
        WebDriverWait(browser, 10).until(
            lambda d: "already segmented" in d.find_element(By.ID, "status").text)
        browser.get(srv.url + "progress")
        # (under load the page can still be blank when get() returns: wait for it, as
        # a person does, rather than read it at once)
        WebDriverWait(browser, 10).until(lambda d: "Marie Curie" in d.page_source)
    finally:
        browser.get_log("browser")   # the 409 above is meant: not the next test's error
        srv.shutdown()
        srv.server_close()


# ---- issue 28, 16b: what a person meets first --------------------------------------------

def _screen(driver, width, height):
    """Make the page see a screen of width x height CSS pixels (a phone below 600)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1,
                            "mobile": width < 600})


def _unscreen(driver):
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def _box(driver, element_id):
    return driver.execute_script(
        f"const r = document.getElementById('{element_id}').getBoundingClientRect();"
        "return [r.left, r.top, r.right, r.bottom]")


def _segment_rows(driver):
    """The panel's segment list as (label, pixels, is current) rows, as displayed."""
    rows = []
    for li in browser_rows(driver):
        label, px = li.find_elements(By.TAG_NAME, "span")[1:3]
        assert label.text.startswith("segment ") and px.text.endswith(" px")
        rows.append((int(label.text.split()[1]), int(px.text.split()[0]),
                     "current" in (li.get_attribute("class") or "")))
    return rows


def browser_rows(driver):
    return driver.find_elements(By.CSS_SELECTOR, "#segment-list li[data-label]")


def test_collection_next_image_opens_the_next_assigned_image(browser, tmp_path):
    import json
    import urllib.request
    srv = _serve(tmp_path, {f"c{k}": _picture(H, W, seed=k) for k in range(3)},
                 collect=True, per_image=2, seed=0)

    def api(path, body, cookie=None, headers=None):
        h = {"X-Segbench": "1", **(headers or {})}
        if cookie:
            h["Cookie"] = cookie
        req = urllib.request.Request(srv.url + path, data=body, method="POST", headers=h)
        with urllib.request.urlopen(req, timeout=20) as r:
            return json.loads(r.read()), r.headers.get("Set-Cookie")

    def editor_iid(d):
        return d.execute_script("return window.segEditor && segEditor.task && "
                                "document.body.dataset.ready === '1' ? segEditor.task.iid "
                                ": null")

    def segment_and_save():
        _key(browser, "p")
        for pt in [(10, 10), (60, 12), (40, 50)]:
            _click(browser, pt)
        _key(browser, Keys.ENTER)
        browser.find_element(By.ID, "save").click()
        _status(browser, "saved human/")

    try:
        # another subject has segmented one image, so two can be given to Marie
        _, cookie = api("api/login", json.dumps({"name": "Pierre"}).encode(),
                        headers={"Content-Type": "application/json"})
        cookie = cookie.split(";")[0]
        got, _ = api("api/next", b"{}", cookie)
        api(f"api/submit/{got['iid']}", np.zeros((H, W), "<u2").tobytes(), cookie,
            {"X-Segments": "1"})

        browser.delete_all_cookies()
        browser.get(srv.url)
        browser.find_element(By.NAME, "name").send_keys("Marie")
        browser.find_element(By.CSS_SELECTOR, "form button").click()
        WebDriverWait(browser, 10).until(lambda d: "Hello, Marie" in d.page_source)
        browser.find_element(By.CSS_SELECTOR, "form button").click()     # next image
        first = WebDriverWait(browser, 20).until(editor_iid)
        segment_and_save()
        browser.find_element(By.ID, "next").click()
        # straight into the editor of the next image the server assigned: no home page
        second = WebDriverWait(browser, 20).until(
            lambda d: (editor_iid(d) or first) != first and editor_iid(d))
        assert "/edit?iid=" in browser.current_url
        segment_and_save()
        browser.find_element(By.ID, "next").click()
        # none left for Marie now: the home page says so
        WebDriverWait(browser, 20).until(lambda d: "No image can be given" in d.page_source)
        assert "segmented 2 image" in browser.page_source
        done = {p.stem for p in (tmp_path / "out" / "human").glob("*/2/*.seg")}   # Marie is subject 2
        assert done == {first, second}
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_contour_around_another_object_after_a_split_splits_that_object(browser,
                                                                          tmp_path):
    from segbench.io import read_seg
    srv = _serve(tmp_path, {"d": _picture(H, W, seed=3)}, subject="Ada")
    try:
        _open(browser, srv.url + "edit?iid=d")
        model = Model(H, W)

        def ring(cx, cy, rx, ry):
            return [(cx + rx * np.cos(t), cy + ry * np.sin(t))
                    for t in np.linspace(0, 2 * np.pi, 24, endpoint=False)]

        _drag(browser, ring(22, 30, 14, 20))                 # the first object
        model.split(browser.execute_script("return segEditor.lastContour"),
                    _labels(browser))
        assert browser.execute_script("return segEditor.cur") == 1
        # around the second object: no pixel of the current segment (the first one)
        _drag(browser, ring(67, 30, 14, 20))
        page = _labels(browser)
        model.split(browser.execute_script("return segEditor.lastContour"), page,
                    target=0)
        assert (page == model.lab).all() and np.unique(page).size == 3
        assert browser.execute_script("return segEditor.cur") == 2
        assert "off segment 0" in browser.find_element(By.ID, "status").text
        # a contour holding part of the current segment still splits it, wherever it
        # starts (here in segment 0), as in the 2001 tool
        _key(browser, "p")
        for pt in [(50, 1), (67, 1), (67, 58), (50, 58)]:
            _click(browser, pt)
        _key(browser, Keys.ENTER)
        page = _labels(browser)
        model.split(browser.execute_script("return segEditor.lastContour"), page,
                    target=2)
        assert (page == model.lab).all() and np.unique(page).size == 4
        # the panel lists every segment with its pixels, the current one marked
        rows = _segment_rows(browser)
        counts = np.bincount(page.ravel())
        assert [(lab, px) for lab, px, _ in rows] == [(k, int(c)) for k, c in
                                                      enumerate(counts) if c]
        assert [lab for lab, _, cur in rows if cur] == [3]
        browser.find_element(By.ID, "save").click()
        _status(browser, "saved human/color/")
        seg = read_seg(tmp_path / "out" / "human" / "color" / "1" / "d.seg")
        assert seg.segments == 4 and _same_partition(seg.labels, model.lab)
        assert model.ties < 0.02 * H * W
    finally:
        srv.shutdown()
        srv.server_close()


def test_instructions_keys_and_segments_are_on_screen_at_1400x1000(browser, tmp_path):
    srv = _serve(tmp_path, {"e": _picture(321, 481, seed=4)}, subject="Ada")
    try:
        _screen(browser, 1400, 1000)
        _open(browser, srv.url + "edit?iid=e")
        inner_h = browser.execute_script("return innerHeight")
        help_ = browser.find_element(By.ID, "help")
        assert help_.is_displayed() and "Divide the image into pieces" in help_.text
        left, top, right, bottom = _box(browser, "help")
        assert 0 <= top and bottom <= inner_h                    # above the fold
        keys = browser.find_element(By.ID, "keys")
        assert keys.is_displayed() and _box(browser, "keys")[3] <= inner_h
        shown = keys.text   # on the page, not in tooltips
        for key in ("F", "P", "B", "M", "K", "H", "Space", "Enter", "Esc", "[", "]",
                    "+", "-", "0", "1", "Ctrl+Z", "Ctrl+Shift+Z", "Ctrl+Y"):
            assert key in shown.split() or f"{key}," in shown or f"{key}+" in shown, key
        # the editor is one screen: no page scroll, the image fits beside the panel
        assert browser.execute_script(
            "return document.scrollingElement.scrollHeight") <= inner_h
        v, c = _box(browser, "viewport"), _box(browser, "canvas")
        assert v[0] - 0.5 <= c[0] and c[2] <= v[2] + 0.5 and v[2] <= _box(browser, "help")[0]
        assert _segment_rows(browser) == [(0, 321 * 481, True)]
        _drag(browser, [(100, 100), (300, 90), (320, 250), (120, 260)])
        rows = _segment_rows(browser)
        counts = np.bincount(_labels(browser).ravel())
        assert rows == [(0, int(counts[0]), False), (1, int(counts[1]), True)]
        browser.find_elements(By.CSS_SELECTOR, "#segment-list li")[0].click()
        assert browser.execute_script("return segEditor.cur") == 0
        assert browser.find_element(By.ID, "current").text == "0"
        assert _segment_rows(browser)[0][2]
    finally:
        _unscreen(browser)
        srv.shutdown()
        srv.server_close()


def test_fit_shows_the_whole_image_on_a_412_px_phone(browser, tmp_path):
    srv = _serve(tmp_path, {"f": _picture(321, 481, seed=5)}, subject="Ada")

    def check_fits():
        inner_w, inner_h, scroll_w = browser.execute_script(
            "return [innerWidth, innerHeight, document.scrollingElement.scrollWidth]")
        assert (inner_w, scroll_w) == (412, 412)                 # nothing off the side
        v, c = _box(browser, "viewport"), _box(browser, "canvas")
        assert 0 <= v[0] and v[2] <= inner_w and 0 <= v[1] and v[3] <= inner_h + 0.5
        assert v[0] - 0.5 <= c[0] and v[1] - 0.5 <= c[1]
        assert c[2] <= v[2] + 0.5 and c[3] <= v[3] + 0.5          # the whole image
        vw, vh = v[2] - v[0], v[3] - v[1]
        zoom = min((vw - 16) / 481, (vh - 16) / 321)   # an 8 px margin to draw in
        assert browser.execute_script("return segEditor.zoom") == pytest.approx(zoom)
        assert browser.find_element(By.ID, "zoom").text == f"{round(100 * zoom)}%"
        assert zoom < 1

    try:
        _screen(browser, 412, 915)
        _open(browser, srv.url + "edit?iid=f")
        _key(browser, "+")
        browser.find_element(By.ID, "zoom-fit").click()
        check_fits()
        # a split: the status line grows (it wraps on a phone); the image still fits
        _drag(browser, [(100, 100), (300, 90), (320, 250), (120, 260)])
        assert "off segment 0" in browser.find_element(By.ID, "status").text
        WebDriverWait(browser, 5).until(lambda d: _box(d, "viewport")[3] <= 915.5)
        check_fits()
        # a wide window made narrow: the fitted image follows
        _screen(browser, 1400, 1000)
        _open(browser, srv.url + "edit?iid=f")
        _screen(browser, 412, 915)
        WebDriverWait(browser, 5).until(lambda d: d.execute_script(
            "return document.getElementById('canvas').getBoundingClientRect().right "
            "<= 412.5"))
        check_fits()
        browser.save_screenshot(str(tmp_path / "phone.png"))
    finally:
        _unscreen(browser)
        srv.shutdown()
        srv.server_close()


def test_collection_skip_in_the_editor_gives_the_image_up_and_opens_the_next(browser,
                                                                            tmp_path):
    from segbench.annotate import Ledger
    srv = _serve(tmp_path, {f"s{k}": _picture(H, W, seed=k) for k in range(2)},
                 collect=True, per_image=2, seed=0)
    ready = ("return window.segEditor && segEditor.task && "
             "document.body.dataset.ready === '1' ? segEditor.task.iid : null")
    try:
        browser.delete_all_cookies()
        browser.get(srv.url)
        browser.find_element(By.NAME, "name").send_keys("Lise")
        browser.find_element(By.CSS_SELECTOR, "form button").click()
        WebDriverWait(browser, 10).until(lambda d: "Hello, Lise" in d.page_source)
        browser.find_element(By.CSS_SELECTOR, "form button").click()
        first = WebDriverWait(browser, 20).until(lambda d: d.execute_script(ready))
        browser.find_element(By.ID, "skip").click()
        second = WebDriverWait(browser, 20).until(
            lambda d: (d.execute_script(ready) or first) != first and d.execute_script(ready))
        assert {first, second} == {"s0", "s1"}
        got = Ledger(tmp_path / "out" / "annotate.sqlite").assignment(1, first)
        assert got is not None and got[1] == "released"
    finally:
        srv.shutdown()
        srv.server_close()
