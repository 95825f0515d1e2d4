"""The HTML report as headless Chromium lays it out, at 1400 px and at 800 px wide.

A copy of the page gets a small script that, once the page has loaded, writes what the
browser measured into the document (the text column's width, every table's width, every
image's natural and drawn size and whether it loaded, every caption); Chromium's
``--dump-dom`` prints the document after the script ran, and the tests read the
measurements back. No package beyond Chromium itself is needed.

Checked mechanically, for the report rendered from the committed results/measurements.json
and for results/report.html itself:

- every table is no wider than the text column;
- every image loaded (complete, with a natural size);
- no image is drawn taller than 2.5 times its width (a figure that is a thin sliver);
- no caption is a placeholder (the file name standing in for a description).

Without Chromium (``chromium``, ``chromium-browser`` or ``google-chrome`` on PATH) every
test here skips and says so; ``make test`` installs it with apt when run as root.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from experiments import report  # noqa: E402

RESULTS = ROOT / "results"
WIDTHS = (1400, 800)
MAX_ASPECT = 2.5  # height / width of a drawn image
BROWSER = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                if shutil.which(n)), None)
pytestmark = [
    pytest.mark.skipif(BROWSER is None, reason="headless Chromium is not installed (make test "
                       "installs it with apt when run as root; or apt-get install chromium)"),
    pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning"),
]

MEASURE = """<script>
window.addEventListener("load", function () {
  var body = document.body, cs = getComputedStyle(body);
  var column = body.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  var out = {column: column, tables: [], images: [], captions: []};
  document.querySelectorAll("table").forEach(function (t) {
    out.tables.push({width: t.getBoundingClientRect().width, scroll: t.scrollWidth,
                     head: Array.from(t.querySelectorAll("th")).map(function (h) {
                       return h.textContent; }).join(" | ")});
  });
  document.querySelectorAll("img").forEach(function (im) {
    var r = im.getBoundingClientRect();
    out.images.push({alt: im.alt, complete: im.complete, natural: [im.naturalWidth, im.naturalHeight],
                     drawn: [r.width, r.height]});
  });
  document.querySelectorAll("figcaption").forEach(function (c) { out.captions.push(c.textContent); });
  var pre = document.createElement("pre");
  pre.id = "layout-measurements";
  pre.textContent = JSON.stringify(out);
  body.appendChild(pre);
});
</script>"""


def measure(page: str, width: int) -> dict:
    """What Chromium measured on ``page`` in a window ``width`` px wide."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "page.html"
        path.write_text(page.replace("</body>", MEASURE + "</body>", 1), encoding="utf-8")
        cmd = [BROWSER, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
               f"--user-data-dir={Path(tmp) / 'profile'}", f"--window-size={width},1200",
               "--virtual-time-budget=10000", "--dump-dom", path.as_uri()]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=180,
                              env=dict(os.environ, HOME=tmp))
    found = re.search(r'<pre id="layout-measurements">(.*?)</pre>', done.stdout, re.S)
    assert found, f"Chromium wrote no measurements (exit {done.returncode}): {done.stderr[-500:]}"
    return json.loads(html.unescape(found.group(1)))


@pytest.fixture(scope="module")
def layouts() -> dict[tuple[str, int], dict]:
    committed = json.loads((RESULTS / "measurements.json").read_text(encoding="utf-8"))
    pages = {"rendered from results/measurements.json": report.render_html(committed, RESULTS),
             "results/report.html": (RESULTS / "report.html").read_text(encoding="utf-8")}
    return {(name, w): measure(page, w) for name, page in pages.items() for w in WIDTHS}


CASES = [(name, w) for name in ("rendered from results/measurements.json", "results/report.html")
         for w in WIDTHS]


@pytest.mark.parametrize("case", CASES, ids=[f"{n} at {w}px" for n, w in CASES])
def test_every_table_fits_the_text_column(layouts, case):
    m = layouts[case]
    assert m["tables"], "no tables measured"
    wide = [(round(t["width"]), t["head"][:80]) for t in m["tables"] if t["width"] > m["column"] + 1]
    assert not wide, f"{case}: tables wider than the {m['column']:.0f} px column: {wide}"


@pytest.mark.parametrize("case", CASES, ids=[f"{n} at {w}px" for n, w in CASES])
def test_every_image_loads_and_none_is_a_sliver(layouts, case):
    m = layouts[case]
    assert m["images"], "no images measured"
    for im in m["images"]:
        assert im["complete"] and min(im["natural"]) > 0, f"{case}: {im['alt'][:60]!r} did not load"
        w, h = im["drawn"]
        assert w > 0 and h <= MAX_ASPECT * w, (
            f"{case}: {im['alt'][:60]!r} is drawn {w:.0f} x {h:.0f} px, taller than "
            f"{MAX_ASPECT}x its width")


@pytest.mark.parametrize("case", CASES, ids=[f"{n} at {w}px" for n, w in CASES])
def test_no_caption_is_a_placeholder(layouts, case):
    m = layouts[case]
    assert len(m["captions"]) == len(m["images"])
    for text in m["captions"]:
        body = re.sub(r"^Figure \d+\.\s*", "", " ".join(text.split()))
        body = re.sub(r"\s*\(file: [^)]*\)$", "", body)
        assert len(body) > 40 and not re.fullmatch(r"[\w.-]+\.png(\s*\([\w.-]+\))?", body), (
            f"{case}: placeholder caption {text!r}")
