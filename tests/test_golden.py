"""Golden HTML: the rendered report of a small project, compared with a reviewed copy.

Figures are replaced by their keys before comparing (their SVG depends on matplotlib's version; the figure tests
cover them), and so is reportgen's version. Regenerate after an intended change with `make golden` and review the
diff like code.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from reportgen import __version__
from reportgen.pipeline import BuildOptions, build
from tests.conftest import INPUTS

GOLDEN = Path(__file__).parent / "golden" / "mlperf-ssd.html"


def normalized(html: str) -> str:
    html = re.sub(r"<svg .*?</svg>", "<svg/>", html, flags=re.S)
    return html.replace(f"reportgen {__version__}", "reportgen VERSION")


def test_report_html_matches_the_golden_copy(tmp_path: Path) -> None:
    build(INPUTS / "mlperf-ssd.yaml", BuildOptions(out_root=tmp_path, formats=("html",)))
    actual = normalized((tmp_path / "mlperf-ssd" / "report.html").read_text(encoding="utf-8"))
    if os.environ.get("REPORTGEN_REGENERATE_GOLDEN"):
        GOLDEN.write_text(actual, encoding="utf-8")
    assert actual == GOLDEN.read_text(encoding="utf-8"), "the report changed: review, then run `make golden`"
