"""Every methods.md anchor the repository cites exists (docs/methods.md is the repository's own account of its
methods): a renamed heading fails here, not in a reader's browser."""

from __future__ import annotations

import re

from tests.conftest import ROOT

CITED = re.compile(r"methods\.md#([A-Za-z0-9_-]+)")


def slug(heading: str) -> str:
    """A heading's anchor as mkdocs' toc extension makes it: word characters, spaces and hyphens kept, lower case,
    runs of spaces and hyphens one hyphen."""
    text = re.sub(r"[^\w\s-]", "", heading).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors() -> set[str]:
    headings = re.findall(r"^#{1,6} (.+)$", (ROOT / "docs" / "methods.md").read_text(encoding="utf-8"), re.M)
    seen: dict[str, int] = {}
    found = set()
    for heading in headings:  # a repeated heading gets _1, _2, as mkdocs numbers them
        base = slug(heading)
        count = seen.get(base, 0)
        found.add(base if count == 0 else f"{base}_{count}")
        seen[base] = count + 1
    return found


def test_the_slug_is_mkdocs_own() -> None:
    assert slug("2.2 A parallel layout (`design.parallelism`)") == "22-a-parallel-layout-designparallelism"
    assert slug("The goal's levers") == "the-goals-levers"


def test_every_cited_methods_anchor_exists() -> None:
    known = anchors()
    missing = []
    for folder in ("reportgen", "templates", "tests", "bench", "docs"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in (".py", ".html", ".md", ".css", ".txt") or not path.is_file():
                continue
            for anchor in CITED.findall(path.read_text(encoding="utf-8", errors="replace")):
                if anchor not in known:
                    missing.append(f"{path.relative_to(ROOT)}: #{anchor}")
    assert not missing, missing


def test_every_declared_analysis_names_its_method() -> None:
    """An analysis declared in its own module has its section in methods.md (written by `make reference` from its
    `Declared.method`), under the anchor the code cites."""
    from reportgen.analysis import DECLARED

    assert DECLARED
    missing = [declared.key for declared in DECLARED if declared.method.anchor not in anchors()]
    assert not missing, f"no methods.md section for {missing}"
