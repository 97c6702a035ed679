"""The analysis core's layers (docs/architecture.md#the-analysis-layers), declared once here and drawn there: each
subpackage of reportgen.analysis imports only from its own layer or those below, and no module imports one that
imports it back. The imports are read with `ast` (tests/imports.py), lazy ones inside functions too."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT
from tests.imports import PACKAGE, circle_in, module_imports

CORE = "reportgen.analysis"
# Lowest first. A layer is a subpackage or, for the few modules at the top of the package, the modules themselves.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundations", ("common", "findings", "quotes")),
    ("model", ("model",)),
    ("declarations", ("declared",)),
    ("measured", ("measured",)),
    ("money", ("money",)),
    ("plan", ("plan",)),
    ("verdict", ("verdict",)),
    ("page", ("page",)),
    ("registry", ("",)),  # reportgen/analysis/__init__.py: Analysis, the steps and the results sections
    ("revisions", ("revisions",)),
)
MOST_AT_THE_TOP = 5  # modules of reportgen/analysis/ outside a subpackage, the registry included


def layer_of(module: str) -> int:
    """The index in LAYERS of a module of the core."""
    relative = module.removeprefix(CORE).removeprefix(".")
    for index, (_, members) in enumerate(LAYERS):
        if any(relative == member or (member and relative.startswith(member + ".")) for member in members):
            return index
    raise AssertionError(f"{module} is in no layer of tests/test_layers.py (docs/architecture.md#the-analysis-layers)")


def _core_graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Each core module's imports of core modules: those run, and those for the type checker only."""
    def core(names: set[str]) -> set[str]:
        return {name for name in names if name == CORE or name.startswith(CORE + ".")}

    found = {name: imports for name, imports in module_imports().items() if name in core({name})}
    return ({name: core(imports.run) for name, imports in found.items()},
            {name: core(imports.typing) for name, imports in found.items()})


def upward_imports(run: dict[str, set[str]], typing: dict[str, set[str]]) -> list[str]:
    """Every import from a layer to one above it, those for the type checker alone too."""
    found = [f"{module} imports {dep}" for module, deps in run.items() for dep in deps
             if layer_of(dep) > layer_of(module)]
    found += [f"{module} imports {dep} (for its types)" for module, deps in typing.items() for dep in deps
              if layer_of(dep) > layer_of(module)]
    return found


def test_every_core_module_is_in_a_layer_and_few_stay_at_the_top() -> None:
    run, _ = _core_graph()
    assert len(run) > 40, "the walk found too few modules"
    for module in run:
        layer_of(module)
    top = [path.name for path in (PACKAGE / "analysis").glob("*.py")]
    assert len(top) <= MOST_AT_THE_TOP, sorted(top)


def test_the_core_imports_only_downward_and_never_in_a_circle() -> None:
    run, typing = _core_graph()
    assert not upward_imports(run, typing)
    circle = circle_in(run)
    assert circle is None, " → ".join(circle)


def test_an_import_back_up_and_a_circle_are_caught() -> None:
    """The checks fail on what they are for: the goal importing the page, and two modules importing each other."""
    run = {f"{CORE}.verdict.goal": {f"{CORE}.page.page_one"}, f"{CORE}.page.page_one": {f"{CORE}.verdict.goal"}}
    typing: dict[str, set[str]] = {f"{CORE}.model.layout": {f"{CORE}.measured.scaling"}}
    assert upward_imports(run, typing) == [f"{CORE}.verdict.goal imports {CORE}.page.page_one",
                                           f"{CORE}.model.layout imports {CORE}.measured.scaling (for its types)"]
    assert circle_in(run) is not None
    with pytest.raises(AssertionError, match="in no layer"):
        layer_of(f"{CORE}.elsewhere.thing")


def test_the_architecture_page_draws_these_layers() -> None:
    """docs/architecture.md's table of the core's layers names each layer, in this order."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = page[page.index("## The analysis layers"):]
    section = section[:section.index("\n## ", 1)]
    rows = [line.split("|")[1].strip().strip("`") for line in section.splitlines() if line.startswith("| `")]
    assert rows == [name for name, _ in reversed(LAYERS)]
