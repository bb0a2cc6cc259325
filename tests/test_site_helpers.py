"""Small inputs for the site tests: a synthetic dataset, runs on it, a BSDS300 copy.

Imported by test_site.py and test_site_browser.py; its own test checks the fixture.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np

HOSTILE_NAME = '<script>alert("name")</script> & "quotes" $\\frac{'
HOSTILE_ABOUT = ('<p onclick="alert(1)">Our <em>method</em>, see '
                 '<a href="javascript:alert(2)">this</a> and '
                 '<a href="https://example.org/paper" onmouseover="alert(3)">the paper</a>.'
                 '<script>alert(4)</script><img src=x onerror="alert(5)">'
                 '<ul><li>one<li>two</ul><style>body{display:none}</style></p>'
                 '<iframe src="https://evil.example"></iframe>')


def make_inputs(root: Path, *, n_images: int = 3, shape=(120, 180), n_annotators: int = 3):
    """Dataset (BSDS500 and BSDS300 layouts), and four run folders.

    Runs: two soft-map detectors (boundary), the first again under a hostile name with
    an about text (meta.json), and a k-means segmenter (boundary + region, segs .mat).
    The BSDS300 tree has colour segmentations (subjects 1001.., the BSDS500 ones) and
    greyscale ones (subjects 2001.., ``gray 1`` in the header: the colour ones moved
    by two pixels, one annotator fewer); ``grey_run`` is the first detector scored
    against the greyscale ones (``--presentation gray``).

    Returns a dict of paths and the items.
    """
    from segbench.algorithms.edges import canny_soft, gradient_magnitude
    from segbench.datasets.synthetic import make_synthetic_dataset, write_synthetic_dataset
    from segbench import evaluate
    from segbench.io import SegFile, write_seg, write_soft_map
    from segbench.demo import run_demo_segmenter

    root = Path(root)
    items = make_synthetic_dataset(n_images, shape=shape, n_annotators=n_annotators,
                                   seed=3)
    ds = write_synthetic_dataset(root / "dataset", items)
    gt = ds / "groundTruth" / "test"
    runs = []
    for name, det in (("gradient", gradient_magnitude), ("canny", canny_soft)):
        pred = root / "predictions" / name
        for it in items:
            write_soft_map(pred / f"{it.iid}.png", det(it.image))
        evaluate("boundary", gt, pred, root / "results" / name, progress=False, plot=False)
        runs.append(root / "results" / name)
    # the same outputs under a hostile name, predictions inside the run folder
    hostile = root / "results" / "hostile"
    evaluate("boundary", gt, root / "predictions" / "gradient", hostile, progress=False,
             plot=False)
    (hostile / "predictions").mkdir()
    for p in sorted((root / "predictions" / "gradient").iterdir()):
        (hostile / "predictions" / p.name).write_bytes(p.read_bytes())
    (hostile / "meta.json").write_text(json.dumps({
        "name": HOSTILE_NAME, "about_html": HOSTILE_ABOUT, "kind": "boundary <b>x</b>",
        "date": "2024-01-02"}))
    runs.append(hostile)
    _, _, seg_run = run_demo_segmenter(items, gt, root, name="kmeans", ks=(2, 4, 6),
                                       progress=False)
    runs.append(seg_run)
    # the same annotations as a BSDS300 tree: subjects 1001.. (colour)
    b300 = root / "bsds300"
    for it in items:
        img = b300 / "images" / "test"
        img.mkdir(parents=True, exist_ok=True)
        (img / f"{it.iid}.png").write_bytes((ds / "images" / "test" /
                                             f"{it.iid}.png").read_bytes())
        for k, seg in enumerate(it.segmentations):
            uid = 1001 + k
            (b300 / "human" / "color" / str(uid)).mkdir(parents=True, exist_ok=True)
            write_seg(b300 / "human" / "color" / str(uid) / f"{it.iid}.seg",
                      SegFile(np.asarray(seg, np.int32) - 1, image=None, user=uid))
        for k, seg in enumerate(it.segmentations[:-1]):
            uid = 2001 + k
            (b300 / "human" / "gray" / str(uid)).mkdir(parents=True, exist_ok=True)
            write_seg(b300 / "human" / "gray" / str(uid) / f"{it.iid}.seg",
                      SegFile(np.roll(np.asarray(seg, np.int32) - 1, 2, axis=1),
                              image=None, user=uid, gray=True))
    grey_run = root / "results" / "gradient-grey"
    evaluate("boundary", b300 / "human" / "gray", root / "predictions" / "gradient",
             grey_run, presentation="gray", name="gradient (grey)", progress=False,
             plot=False)
    return {"root": root, "dataset": ds, "gt": gt, "runs": runs, "items": items,
            "bsds300": b300, "grey_run": grey_run,
            "pred_dirs": {runs[0]: root / "predictions" / "gradient",
                          runs[1]: root / "predictions" / "canny",
                          grey_run: root / "predictions" / "gradient"}}


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        for key in ("href", "src"):
            if a.get(key) is not None:
                self.links.append(a[key])


def internal_links(html_path: Path) -> list[str]:
    """href/src values of a page that point inside the site."""
    p = _Links()
    p.feed(Path(html_path).read_text(encoding="utf-8"))
    out = []
    for link in p.links:
        scheme = urlsplit(link).scheme
        if scheme or link.startswith(("#", "//")):
            continue
        out.append(link)
    return out


def resolve(html_path: Path, link: str) -> Path:
    return (Path(html_path).parent / unquote(urlsplit(link).path)).resolve()


def ranking_slugs(index_html: str) -> list[str]:
    body = index_html.split('<tbody class="pinned">', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr data-slug="([^"]+)"', body)


def expected_order(runs) -> list[str]:
    """Slugs of the runs by ODS, best first, ties by name: what the ranking must show."""
    from segbench.report._site_runs import slugify
    rows, taken = [], set()
    for d in runs:
        d = Path(d)
        m = json.loads((d / "result_boundary.json").read_text())["metrics"]
        meta = d / "meta.json"
        name = json.loads(meta.read_text())["name"] if meta.is_file() else d.name
        rows.append((-m["ODS"], name, slugify(name, taken)))
    return [slug for _, _, slug in sorted(rows)]


def test_make_inputs(tmp_path):
    got = make_inputs(tmp_path, n_images=2)
    assert [p.name for p in got["runs"]] == ["gradient", "canny", "hostile", "kmeans"]
    assert (got["runs"][3] / "result_region.json").is_file()
    assert len(list((got["bsds300"] / "human" / "color").iterdir())) == 3
    assert len(list((got["bsds300"] / "human" / "gray").iterdir())) == 2
    from segbench.io import read_seg
    seg = next((got["bsds300"] / "human" / "gray" / "2001").glob("*.seg"))
    assert read_seg(seg).gray and b"gray 1" in seg.read_bytes()
    params = json.loads((got["grey_run"] / "result_boundary.json").read_text())["provenance"]
    assert params["params"]["presentation"] == "gray"
