"""The code stays as the documentation promises: every command documented, imports down the layers. (ruff and mypy
--strict run as `make lint`, inside `make test` and `make check`.)"""

from __future__ import annotations

from reportgen.commands.cli import _parser
from tests.conftest import ROOT
from tests.imports import circle_in, module_imports


def test_every_command_is_on_the_commands_page() -> None:
    page = (ROOT / "docs" / "commands.md").read_text()
    commands = _parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for name in commands:
        assert f"reportgen {name}" in page, f"docs/commands.md lacks `reportgen {name}`"


# The layers of docs/architecture.md, lowest first: a module imports only from its own layer or those below.
LAYERS = [("reportgen.errors", "reportgen.interrupts", "reportgen.files", "reportgen.wording",
           "reportgen.reproducible", "reportgen.version", "reportgen.keys", "reportgen.json_types",
           "reportgen.formats", "reportgen.stack", "reportgen.collector",
           "reportgen.stand_in"),
          ("reportgen.project",),
          ("reportgen.analysis", "reportgen.ingest"), ("reportgen.figures", "reportgen.render"),
          ("reportgen.pipeline", "reportgen.api", "reportgen.project_history",
           "reportgen.revision_pipeline", "reportgen.corpus"), ("reportgen.commands",)]


def _imports() -> dict[str, set[str]]:
    """Each module's imports of reportgen modules at run time (not those under TYPE_CHECKING); `reportgen` itself
    is the package face, in the API's layer; __main__ runs the CLI."""
    return {name: imports.run for name, imports in module_imports().items()
            if name not in ("reportgen", "reportgen.__main__")}


def _layer(module: str) -> int:
    if module == "reportgen":  # the package face names the API (and imports it lazily)
        return next(index for index, prefixes in enumerate(LAYERS) if "reportgen.api" in prefixes)
    for index, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return index
    raise AssertionError(f"{module} is in no layer of docs/architecture.md")


def test_imports_go_down_the_layers_and_never_in_a_circle() -> None:
    graph = _imports()
    upward = [f"{m} imports {d}" for m, deps in graph.items() for d in deps if _layer(d) > _layer(m)]
    assert not upward, upward

    circle = circle_in(graph)
    assert circle is None, circle


def test_no_script_hides_a_standard_library_module() -> None:
    """A script's folder comes first on the module path: bench/concurrent.py hid `concurrent.futures` from
    bench/run.py, which then failed before its first measurement."""
    import sys

    scripts = [path for folder in ("bench", "tests") for path in (ROOT / folder).glob("*.py")]
    assert scripts
    assert not [path.name for path in scripts if path.stem in sys.stdlib_module_names]


MOST_LINES_NAMING_ANY = 90


def test_any_stays_where_a_library_forces_it() -> None:
    """`Any` on at most 90 lines of the package (imports included), each of its files listed, with why, in
    docs/architecture.md#where-any-remains."""
    import re

    lines = {path: [line for line in path.read_text(encoding="utf-8").splitlines() if re.search(r"\bAny\b", line)]
             for path in (ROOT / "reportgen").rglob("*.py")}
    naming = {path: found for path, found in lines.items() if found}
    assert sum(len(found) for found in naming.values()) <= MOST_LINES_NAMING_ANY
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = page[page.index("## Where `Any` remains"):page.index("## Files and folders")]
    unlisted = [str(path.relative_to(ROOT / "reportgen")) for path in naming
                if f"`{path.relative_to(ROOT / 'reportgen')}`" not in listed
                and f"`{path.name}`" not in listed]
    assert unlisted == [], unlisted
