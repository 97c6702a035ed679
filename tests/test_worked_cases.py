"""Arithmetic cannot go untested: every analysis of the registry has a test worked by hand (`@worked`, tests/worked.py),
and every field of the project file is used by an example or a test."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from reportgen.analysis import DECLARED, REGISTRY
from reportgen.project.model import Project
from reportgen.project.spec import Items, Section, spec_fields
from tests.conftest import ROOT

TESTS = ROOT / "tests"


def analyses() -> set[str]:
    """Every analysis of the registry: the core's fields and the declared analyses' keys."""
    return {step.name for step in REGISTRY if step.name != "declared"} | {declared.key for declared in DECLARED}


def worked_cases(sources: dict[str, str]) -> dict[str, list[str]]:
    """Each analysis named by a `@worked(...)` mark in the given test sources, with the tests that carry it."""
    found: dict[str, list[str]] = {}
    for name, source in sources.items():
        for names, test in re.findall(r"^@worked\(([^)]*)\)\n(?:@.*\n)*def (\w+)", source, flags=re.M):
            for analysis in re.findall(r'"(\w+)"', names):
                found.setdefault(analysis, []).append(f"{name}::{test}")
    return found


def sources_of_tests() -> dict[str, str]:
    return {str(path.relative_to(TESTS)): path.read_text(encoding="utf-8") for path in sorted(TESTS.rglob("test_*.py"))}


def test_every_analysis_has_a_hand_worked_test() -> None:
    cases = worked_cases(sources_of_tests())
    assert not analyses() - set(cases), f"no hand-worked test (@worked) for {sorted(analyses() - set(cases))}"
    assert not set(cases) - analyses(), f"@worked names no analysis: {sorted(set(cases) - analyses())}"


def test_the_worked_case_check_can_fail() -> None:
    source = '@worked("cost")\n@pytest.mark.slow\ndef test_a() -> None:\n    pass\n'
    assert worked_cases({"a.py": source}) == {"cost": ["a.py::test_a"]}
    assert worked_cases({"a.py": source.replace("@worked", "# @worked")}) == {}


def field_paths(cls: type = Project, prefix: str = "") -> Iterator[str]:
    """Every leaf field of the project file, as a dotted path (`scaling.runs[].time`)."""
    for name, spec, _ in spec_fields(cls):
        inner = spec.cls if isinstance(spec, Section) else (
            spec.item.cls if isinstance(spec, Items) and isinstance(spec.item, Section) else None)
        if inner is None:
            yield f"{prefix}{name}"
        else:
            yield from field_paths(inner, f"{prefix}{name}{'[].' if isinstance(spec, Items) else '.'}")


def unused_fields(corpus: str) -> list[str]:
    """The fields whose name appears nowhere in the corpus as a YAML key (`name:`) or a CSV column (`name [unit]`,
    in a file or in a test's string, where a line ends in `\\n`)."""
    missing = []
    for path in field_paths():
        name = re.escape(path.rsplit(".", 1)[-1])
        if not re.search(rf"(^|[\s{{,\"'])({name})[\"']?\s*:|(^|,){name}( \[[^\]]*\])?(,|$|\\n)", corpus, flags=re.M):
            missing.append(path)
    return missing


def test_every_input_field_is_used_by_an_example_or_a_test() -> None:
    corpus = "\n".join(path.read_text(encoding="utf-8", errors="replace")
                       for pattern in ("inputs/**/*.yaml", "inputs/**/*.csv", "tests/**/*.py", "tests/**/*.yaml",
                                       "tests/**/*.csv") for path in ROOT.glob(pattern))
    assert len(list(field_paths())) > 100
    assert unused_fields(corpus) == []
    assert "energy.pue" in unused_fields(corpus.replace("pue", "p_u_e"))  # the check can fail


def test_a_declared_analysis_reads_fields_the_project_file_has() -> None:
    paths = set(field_paths())
    sections = {path.split(".")[0] for path in paths} | {path.rsplit(".", 1)[0].removesuffix("[]") for path in paths}
    for declared in DECLARED:
        unknown = [name for name in declared.reads if name not in paths | sections]
        assert not unknown, f"{declared.key} reads no such field: {unknown}"


# A property of Project a declared analysis may read, and the field it reads in its stead
PROJECT_PROPERTIES = {"serving": "project.workload", "currency": "pricing.currency"}


def project_fields_read(function: Callable[..., object]) -> set[str]:
    """The project file's fields a function reads, as `section.field` (or a section alone, for a test of its
    presence): each attribute chain through `project.` in its source, a property by the field it reads."""
    import ast
    import inspect
    import textwrap

    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    read = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or id(node) in inner:
            continue
        chain = ast.unparse(node).split(".")
        if "project" in chain[:-1]:
            after = chain[chain.index("project") + 1:][:2]
            read.add(PROJECT_PROPERTIES.get(after[0], ".".join(after)))
    return read


def test_a_declared_analysis_reads_only_the_fields_it_names() -> None:
    """`reads` names every project field a declared analysis's run reads itself (a section read only to test it is
    there is covered by any of its fields)."""
    for declared in DECLARED:
        named = set(declared.reads) | {name.split(".")[0] for name in declared.reads}
        unnamed = project_fields_read(declared.run) - named
        assert not unnamed, f"{declared.key} reads {sorted(unnamed)} without naming them in `reads`"


def test_the_fields_read_are_found_through_any_name() -> None:
    def run(i: object, scaling: object) -> object:  # a run as a declared analysis writes it
        project = i.project  # type: ignore[attr-defined]
        if project.serving or project.scaling.axis == "load":
            return project.hardware.devices_per_node * i.project.energy.pue  # type: ignore[attr-defined]
        return None

    assert project_fields_read(run) == {"project.workload", "scaling.axis", "hardware.devices_per_node", "energy.pue"}
