"""Golden HTML: the rendered report of a small project, compared with a reviewed copy.

Figures are replaced by their keys before comparing (their SVG depends on matplotlib's version; the figure tests
cover them), and so is reportgen's version. A golden file is no test of arithmetic (every formula has its own
hand-worked test, tests/test_worked_cases.py): it holds the report's words and layout still. After an intended
change, `make golden` shows the diff of every golden file; `make golden REVIEWED=1` writes them once it is read.
"""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Callable
from pathlib import Path

from reportgen import __version__
from reportgen.pipeline import BuildOptions, build
from tests.conftest import INPUTS

FOLDER = Path(__file__).parent / "golden"


def normalized(html: str) -> str:
    html = re.sub(r"<svg .*?</svg>", "<svg/>", html, flags=re.S)
    return html.replace(f"reportgen {__version__}", "reportgen VERSION")


def report_html(out: Path) -> str:
    build(INPUTS / "mlperf-ssd.yaml", BuildOptions(out_root=out, formats=("html",)))
    return normalized((out / "mlperf-ssd" / "report.html").read_text(encoding="utf-8"))


# Every golden file, and how its current text is made (in a scratch folder)
GOLDEN: dict[str, Callable[[Path], str]] = {"mlperf-ssd.html": report_html}


def test_report_html_matches_the_golden_copy(tmp_path: Path) -> None:
    actual = report_html(tmp_path)
    assert actual == (FOLDER / "mlperf-ssd.html").read_text(encoding="utf-8"), (
        "the report changed: run `make golden` to see the diff, then `make golden REVIEWED=1` once it is intended")


def update(reviewed: bool, scratch: Path) -> int:
    """Print the diff of every golden file against what the code makes now; write them only when `reviewed`.
    Returns the exit status: 0 when nothing differs or the files were written, 1 when a diff awaits review."""
    changed = []
    for name, make in GOLDEN.items():
        path = FOLDER / name
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        new = make(scratch / name)
        if new == old:
            continue
        changed.append(name)
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                                   f"tests/golden/{name} (reviewed)", f"tests/golden/{name} (now)"))
        if reviewed:
            path.write_text(new, encoding="utf-8")
    if not changed:
        print("the golden files match the code: nothing to write")
        return 0
    if reviewed:
        print(f"wrote {', '.join(changed)}: commit them with the change that made the diff above")
        return 0
    print(f"\n{', '.join(changed)} would change (diff above). Read it as you would code: every changed line should be "
          "one the change meant. Then write them: make golden REVIEWED=1", file=sys.stderr)
    return 1


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        sys.exit(update(reviewed="--reviewed" in sys.argv[1:], scratch=Path(scratch)))
