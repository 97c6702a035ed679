"""The analyses as a registry (reportgen.analysis.REGISTRY): analyze() iterates it; each step names the Analysis field
it fills and the fields it reads, which earlier steps must have filled; every field of Analysis is filled by one. An
analysis declared in its own module fills its key of `Analysis.declared` and reads what its `needs` name."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
from collections import Counter
from pathlib import Path

from reportgen.analysis import DECLARED, REGISTRY, Analysis

ANALYSIS_PACKAGE = Path(__file__).resolve().parent.parent / "reportgen" / "analysis"


def test_every_step_reads_only_what_an_earlier_step_filled() -> None:
    filled: set[str] = set()
    declared = iter(DECLARED)
    for step in REGISTRY:
        missing = set(step.needs) - filled
        assert not missing, f"{step.name} reads {sorted(missing)} before any step fills it"
        filled.add(next(declared).key if step.name == "declared" else step.name)


def test_every_field_of_the_analysis_is_filled_by_a_step() -> None:
    fields = {field.name for field in dataclasses.fields(Analysis)}
    assert {step.name for step in REGISTRY} == fields


def test_each_field_has_one_writer() -> None:
    """A step returns its own result; a later refinement is its own field (the lint's findings, then the report's),
    or is copied into a section as results.json is written, never a second step rewriting the field. The declared
    analyses share the one field `declared`, each writing its own key."""
    writers = Counter(step.name for step in REGISTRY if step.name != "declared")
    assert [name for name, count in writers.items() if count > 1] == []
    keys = [declared.key for declared in DECLARED]
    assert len(keys) == len(set(keys)) and sum(1 for step in REGISTRY if step.name == "declared") == len(keys)


def test_a_step_reads_no_field_it_does_not_declare() -> None:
    """Each core step's function names only the fields it declares (a.<field>), so the order check above is
    complete. A declared analysis is given only what its `needs` name: its function takes the inputs and one
    parameter per need."""
    fields = {field.name for field in dataclasses.fields(Analysis)}
    for step in REGISTRY:
        if step.name == "declared":
            continue
        source = inspect.getsource(step.run)  # every step is a named function: its source is its own
        read = {name for name in fields if f"a.{name}" in source}
        assert read <= set(step.needs), f"{step.run.__name__} reads {sorted(read - set(step.needs))} undeclared"
    for declared in DECLARED:
        parameters = inspect.signature(declared.run).parameters
        assert len(parameters) == 1 + len(declared.needs), f"{declared.key}: one parameter per need, after inputs"


def test_declared_analyses_run_after_what_they_need() -> None:
    keys = [declared.key for declared in DECLARED]
    for index, declared in enumerate(DECLARED):
        assert not set(declared.needs) & set(keys[index:]), f"{declared.key} runs before an analysis it needs"


def declaring_modules(package: Path, dotted: str = "reportgen.analysis") -> dict[str, str]:
    """Every module under `package` that binds a name at its top level to a `Declared(...)` call, however spelt
    (`ANALYSIS = Declared(...)`, `ANALYSIS: Declared[X] = Declared(...)`, another name): module → the name."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        module = ".".join((dotted, *path.relative_to(package).with_suffix("").parts)).removesuffix(".__init__")
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
            if isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1].split("[")[0] == "Declared":
                target = node.targets[0] if isinstance(node, ast.Assign) else node.target
                found[module] = ast.unparse(target)
    return found


def test_every_module_that_declares_an_analysis_is_in_the_registrys_list() -> None:
    """The registry lists its declared analyses by hand (DECLARED): a module that declares one the list does not
    hold would be dropped without a word, so it fails here, whatever the spelling of its declaration."""
    found = declaring_modules(ANALYSIS_PACKAGE)
    assert found, "no module declares an analysis: the walk is broken"
    for module, name in found.items():
        assert getattr(importlib.import_module(module), name) in DECLARED, f"{module}.{name} is not in DECLARED"


def test_a_typed_or_renamed_declaration_is_found(tmp_path: Path) -> None:
    """The spellings the old text search missed: a typed declaration, another name, a declaration in a subpackage."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "typed.py").write_text("ANALYSIS: Declared[int] = Declared(key='x')\n", encoding="utf-8")
    (tmp_path / "sub" / "renamed.py").write_text("import d\nMINE = d.Declared(key='y')\nOTHER = f()\n",
                                                 encoding="utf-8")
    (tmp_path / "plain.py").write_text("def f():\n    return Declared(key='z')\n", encoding="utf-8")
    assert declaring_modules(tmp_path, "p") == {"p.typed": "ANALYSIS", "p.sub.renamed": "MINE"}
