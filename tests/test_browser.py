"""The HTML report in a real browser (headless Chromium): at a phone's 390 px nothing is wider than the screen,
every figure shows and no table column is narrower than its longest word; at a desktop's 1280 px too.

The report is loaded in an iframe of the width under test, so that its media queries see that width (headless
Chromium will not make a window narrower than 500 px); a script added to a copy of the page measures it and posts
the answer to the frame's parent, whose DOM Chromium dumps. `make test` installs Chromium from Debian's packages
where apt exists; elsewhere this test is skipped with a message.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from reportgen.pipeline import BuildOptions, build
from tests.conftest import INPUTS

pytestmark = pytest.mark.slow

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PROBE = """<script>
window.addEventListener("load", () => {
  const figures = [...document.querySelectorAll("figure svg")].map(svg => {
    const box = svg.getBoundingClientRect();
    return {width: box.width, height: box.height, right: box.right};
  });
  // every word of a table cell that its column breaks across lines or lets spill out: the column is narrower
  // than its longest word (a word: what lies between spaces, "on-demand" and "comm-share-departs" included)
  const squeezed = [];
  document.querySelectorAll("table td, table th").forEach(cell => {
    const style = getComputedStyle(cell);
    const box = cell.getBoundingClientRect();
    const right = box.right - parseFloat(style.paddingRight) - parseFloat(style.borderRightWidth);
    const texts = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let text = texts.nextNode(); text; text = texts.nextNode()) {
      for (const found of text.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(text, found.index);
        range.setEnd(text, found.index + found[0].length);
        const rects = [...range.getClientRects()].filter(rect => rect.width > 0);
        const lines = new Set(rects.map(rect => Math.round(rect.top))).size;
        const spill = Math.max(...rects.map(rect => rect.right)) - right;
        if (lines > 1 || spill > 1) {
          const table = cell.closest("table");
          squeezed.push({caption: table.caption ? table.caption.innerText.slice(0, 60) : table.className,
                         word: found[0], lines, spill: Math.round(spill)});
        }
      }
    }
  });
  const answer = {width: document.documentElement.scrollWidth, viewport: window.innerWidth, figures,
                  drawn: document.querySelectorAll("figure").length, squeezed};
  window.parent.postMessage(JSON.stringify(answer), "*");
});
</script>"""
FRAME = """<!doctype html><html><body style="margin:0">
<iframe src="probed.html" style="width:{width}px;height:900px;border:0"></iframe><pre id="answer"></pre>
<script>window.addEventListener("message", e => {{ document.getElementById("answer").textContent = e.data; }});
</script></body></html>"""


def _browser() -> str:
    found = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if found is None:
        pytest.skip("no Chromium on PATH (make test installs Debian's chromium where apt exists)")
    return found


def _measure(browser: str, page: Path, width: int, profile: Path) -> dict:
    html = page.read_text(encoding="utf-8").replace("</head>", PROBE + "</head>", 1)
    (page.parent / "probed.html").write_text(html, encoding="utf-8")
    frame = page.parent / f"frame-{width}.html"
    frame.write_text(FRAME.format(width=width), encoding="utf-8")
    dumped = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1400,1000",
         "--allow-file-access-from-files", "--virtual-time-budget=10000", f"--user-data-dir={profile}",
         "--dump-dom", frame.as_uri()],
        capture_output=True, text=True, timeout=120, check=True).stdout
    answer = re.search(r'<pre id="answer">([^<]*)</pre>', dumped)
    assert answer and answer.group(1), f"the page posted no measurement at {width} px"
    return json.loads(answer.group(1).replace("&quot;", '"'))


@pytest.mark.parametrize("example", ["example", "llm-service"])
@pytest.mark.parametrize("width", [390, 1280])
def test_the_report_fits_the_screen_and_shows_every_figure(tmp_path: Path, example: str, width: int) -> None:
    browser = _browser()
    written = build(INPUTS / f"{example}.yaml", BuildOptions(out_root=tmp_path, formats=("html",),
                                                             use_disk_cache=False))
    page = next(path for path in written if path.name == "report.html")
    measured = _measure(browser, page, width, tmp_path / "profile")
    assert measured["viewport"] == width
    assert measured["width"] <= width, f"the page is {measured['width']} px wide on a {width} px screen"
    assert measured["figures"] and len(measured["figures"]) == measured["drawn"]
    assert not measured["squeezed"], f"table columns narrower than their longest word: {measured['squeezed'][:5]}"
    for figure in measured["figures"]:
        assert figure["width"] > 100 and figure["height"] > 50, figure
        assert figure["right"] <= width, f"a figure ends at {figure['right']} px on a {width} px screen"


def test_a_long_word_in_project_text_wraps_on_a_phone(tmp_path: Path) -> None:
    """A 200-character word (a path, a URL) in the title or the goal made the page wider than a phone's screen."""
    browser = _browser()
    word = "s3://bucket/" + "x" * 200
    text = (INPUTS / "example.yaml").read_text(encoding="utf-8")
    title = next(line for line in text.splitlines() if line.startswith("  title:"))
    (tmp_path / "long.yaml").write_text(text.replace(title, f"  title: Data in {word}", 1), encoding="utf-8")
    written = build(tmp_path / "long.yaml", BuildOptions(out_root=tmp_path, formats=("html",), use_disk_cache=False))
    page = next(path for path in written if path.name == "report.html")
    assert word in page.read_text(encoding="utf-8")
    measured = _measure(browser, page, 390, tmp_path / "profile")
    assert measured["width"] <= 390, f"the page is {measured['width']} px wide on a 390 px screen"
