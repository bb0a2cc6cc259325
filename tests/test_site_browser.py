"""The site in a real headless Chromium, served on 127.0.0.1 and from the file system.

Needs the Debian packages ``chromium`` and ``chromium-driver`` and the Python package
``selenium``; skips cleanly without any of them. No network: the browser runs with a
fresh profile and background networking off, and the site has no external resource.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import urllib.error
import urllib.request
from collections import deque
from urllib.parse import urldefrag, urlsplit

import pytest
from PIL import Image

webdriver = pytest.importorskip("selenium.webdriver")

from conftest import NEEDS_CHROMIUM, headless_chromium  # noqa: E402
from test_site_helpers import expected_order, make_inputs  # noqa: E402

pytestmark = NEEDS_CHROMIUM


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from segbench.report.site import build_site
    inputs = make_inputs(tmp_path_factory.mktemp("browser-inputs"))
    site = tmp_path_factory.mktemp("browser-site") / "site"
    build_site(inputs["bsds300"], inputs["runs"] + [inputs["grey_run"]], site,
               pred_dirs=inputs["pred_dirs"], progress=False)
    return inputs, site


@pytest.fixture(scope="module")
def server(built):
    from segbench.report.site import make_server
    srv = make_server(built[1], port=0, quiet=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="module")
def browser():
    profile = tempfile.mkdtemp(prefix="segbench-chromium-")
    driver = headless_chromium(profile, "1280,1000")
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _errors(driver) -> list[str]:
    """Console messages of level SEVERE (errors, failed loads, CSP violations)."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


_REFS = ("return Array.from(document.querySelectorAll("
         "'a[href], img[src], link[href], script[src]')).map(e => e.href || e.src);")
_BROKEN_IMAGES = """return Array.from(document.images).filter(
i => !(i.complete && i.naturalWidth > 0)).map(i => i.src);"""


def _load(driver, url):
    driver.get(url)
    # lazy images: scroll through the page so every one is requested and decoded
    driver.execute_script("window.scrollTo(0, document.body.scrollHeight);")
    driver.execute_async_script("""const done = arguments[arguments.length - 1];
Promise.all(Array.from(document.images).map(i => { i.loading = 'eager';
  return i.decode().catch(() => null); })).then(() => done(true));""")


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            r.read()
            return r.status
    except urllib.error.HTTPError as err:
        return err.code


def test_every_page_loads_cleanly_and_every_link_resolves(browser, server, built):
    origin = urlsplit(server).netloc
    todo, seen_pages, checked = deque([server + "/index.html"]), set(), {}
    while todo:
        url = todo.popleft()
        if url in seen_pages:
            continue
        seen_pages.add(url)
        _load(browser, url)
        assert _errors(browser) == [], url
        assert browser.execute_script(_BROKEN_IMAGES) == [], url
        for ref in browser.execute_script(_REFS):
            ref = urldefrag(ref)[0]
            if urlsplit(ref).netloc != origin:
                assert urlsplit(ref).scheme in ("https", "http", "mailto", "data"), ref
                continue
            if ref not in checked:
                checked[ref] = _status(ref)
            assert checked[ref] == 200, f"{url} -> {ref}"
            if ref.endswith(".html"):
                todo.append(ref)
    n_items = len(built[0]["items"])
    # home, human, algorithm index + pages (the grey run too), two image indexes +
    # pages, subject pages (three colour subjects, two greyscale ones)
    assert len(seen_pages) == 2 + 1 + len(built[0]["runs"]) + 1 + 2 + n_items + 1 + 3 + 2


def test_ranking_order_and_sorting(browser, server, built, tmp_path):
    _load(browser, server + "/index.html")
    rows = browser.find_elements("css selector", "#ranking tbody:last-of-type tr")
    slugs = [r.get_attribute("data-slug") for r in rows]
    assert slugs == expected_order(built[0]["runs"])
    first = browser.find_element("css selector", "#ranking tbody.pinned tr td:nth-child(2)")
    assert first.text == "Human"
    # sort by the algorithm name, then back by rank; the human row stays on top
    name_th = browser.find_element("css selector", "#ranking thead th:nth-child(2)")
    name_th.click()
    names = [r.find_element("css selector", "td.name").text for r in
             browser.find_elements("css selector", "#ranking tbody:last-of-type tr")]
    assert names == sorted(names, key=str.lower)
    assert name_th.get_attribute("aria-sort") == "ascending"
    browser.find_element("css selector", "#ranking thead th:nth-child(1)").click()
    rows = browser.find_elements("css selector", "#ranking tbody:last-of-type tr")
    assert [r.get_attribute("data-slug") for r in rows] == slugs
    assert browser.find_element(
        "css selector", "#ranking tbody.pinned tr td:nth-child(2)").text == "Human"
    # the hostile name is shown as text, not run
    assert any("<script>" in n for n in names)
    assert _errors(browser) == []


def test_screenshots(browser, server, built, tmp_path):
    iid = built[0]["items"][0].iid
    shots = {}
    for name, path in (("home", "/index.html"), ("image", f"/images/{iid}.html")):
        _load(browser, server + path)
        browser.execute_script("window.scrollTo(0, 0);")
        height = browser.execute_script("return document.body.scrollHeight")
        browser.set_window_size(1280, min(max(height + 120, 600), 4000))
        out = tmp_path / f"site-{name}.png"
        assert browser.save_screenshot(str(out))
        shots[name] = out
    browser.set_window_size(1280, 1000)
    for out in shots.values():
        assert out.stat().st_size > 20_000
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_pages_work_from_the_file_system(browser, built):
    site = built[1]
    for rel in ("index.html", f"images/{built[0]['items'][0].iid}.html",
                "algorithms/index.html", "subjects/index.html"):
        _load(browser, (site / rel).resolve().as_uri())
        assert _errors(browser) == [], rel
        assert browser.execute_script(_BROKEN_IMAGES) == [], rel
        # the stylesheet applied (relative link, allowed by the page's CSP)
        bg = browser.execute_script(
            "return getComputedStyle(document.querySelector('header.top')).backgroundColor")
        assert bg == "rgb(244, 246, 248)", rel
    _load(browser, (site / "index.html").resolve().as_uri())
    th = browser.find_element("css selector", "#ranking thead th:nth-child(3)")
    th.click()                          # script runs from file:// too
    assert th.get_attribute("aria-sort") == "descending"


_COLUMN = """const [table, idx] = arguments;
return Array.from(document.querySelectorAll('#' + table + ' tbody:last-of-type tr')).map(
  r => r.cells[idx].getAttribute('data-value'));"""


def test_every_ranking_column_sorts(browser, server):
    _load(browser, server + "/index.html")
    heads = browser.find_elements("css selector", "#ranking thead th")
    assert len(heads) >= 8
    for idx, th in enumerate(heads):
        numeric = th.get_attribute("data-sort") == "num"
        assert th.get_attribute("data-sort") in ("num", "text"), th.text
        for _ in range(2):                      # both directions
            th.click()
            order = th.get_attribute("aria-sort")
            got = browser.execute_script(_COLUMN, "ranking", idx)
            present = [v for v in got if v not in (None, "")]
            assert got[:len(present)] == present, (th.text, got)     # missing last
            keys = [float(v) for v in present] if numeric else [v.lower() for v in present]
            assert keys == sorted(keys, reverse=order == "descending"), (th.text, got)
        assert browser.find_element(
            "css selector", "#ranking tbody.pinned tr td:nth-child(2)").text == "Human"
    assert _errors(browser) == []


PHONE = 412


def test_readable_on_a_phone(browser, server, built, tmp_path):
    """At a phone's 412 CSS pixels no page scrolls sideways (wide tables scroll in
    their own box); screenshots of home, a run page and an image page in tmp_path."""
    site = built[1]
    iid = built[0]["items"][0].iid
    shots = {"index.html": "home", "algorithms/kmeans.html": "run",
             f"images/{iid}.html": "image"}
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": PHONE, "height": 915, "deviceScaleFactor": 1, "mobile": True})
    try:
        for page in sorted(site.rglob("*.html")):
            rel = page.relative_to(site).as_posix()
            _load(browser, f"{server}/{rel}")
            width = browser.execute_script(
                "return [document.documentElement.scrollWidth, window.innerWidth]")
            assert width[0] <= PHONE and width[1] <= PHONE, (rel, width)
            if rel in shots:
                browser.execute_script("window.scrollTo(0, 0);")
                out = tmp_path / f"phone-{shots[rel]}.png"
                assert browser.save_screenshot(str(out))
                assert out.stat().st_size > 10_000
                with Image.open(out) as im:
                    assert im.size[0] == PHONE
        # the wide ranking scrolls inside its own box instead
        _load(browser, server + "/index.html")
        box = browser.execute_script("const b = document.querySelector('#ranking')"
                                     ".parentElement; return [b.className, b.scrollWidth,"
                                     " b.clientWidth]")
        assert box[0] == "scroll" and box[1] > box[2]
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert _errors(browser) == []


@pytest.mark.parametrize("width", [1280, 1920, 390])
def test_the_ranking_uses_the_screen(browser, server, width):
    """Issue 40 item 18: the ranking (every boundary and region column, intervals,
    dates) fits in the page on a 1920 px screen without scrolling inside its box, the
    page never scrolls sideways at 1280 or 390 px, and where the table is wider than
    the screen, it scrolls inside its own box."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": 1000, "deviceScaleFactor": 1, "mobile": width < 600})
    try:
        _load(browser, server + "/index.html")
        page, inner, table, box, free = browser.execute_script(
            "const t = document.querySelector('#ranking'); const b = t.parentElement;"
            "const m = document.querySelector('main');"
            "return [document.documentElement.scrollWidth, window.innerWidth,"
            " t.getBoundingClientRect().width, b.clientWidth,"
            " window.innerWidth - m.getBoundingClientRect().right];")
        assert page <= inner, (width, page, inner)
        if table <= width - 80:      # a table that can fit the screen is not cut
            assert table <= box + 1, (width, table, box)
        else:
            assert box < table       # it scrolls in its box, not the page
        if width >= 1600:            # no wide empty margin beside a scrolling table
            assert table <= box + 1 or free < 100, (width, table, box, free)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
