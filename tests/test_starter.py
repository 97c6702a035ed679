"""The starter `reportgen init` writes is generated from the field specs: every field in it, none invented, each
with the spec's documentation; what it writes live passes check."""

from __future__ import annotations

import re
from typing import Any

import yaml

from reportgen.project.loader import load_project_text
from reportgen.project.model import Hardware, Project
from reportgen.project.spec import Items, Section, spec_fields, starter_fields
from reportgen.project.starter import starter_project
from tests.conftest import ROOT


def every_field_uncommented(text: str) -> Any:
    """The starter with every left-out field put back: each `# ` marker removed where it was inserted."""
    body = text.split("\n\n", 1)[1]  # after the header
    lines = []
    for line in body.splitlines():
        while re.match(r"^ *# ", line):
            line = re.sub(r"^( *)# ", r"\1", line, count=1)
        lines.append(re.sub(r"\s+# .*$", "", line))
    return yaml.safe_load("\n".join(lines))


def test_the_starter_holds_every_field_and_nothing_else() -> None:
    document = every_field_uncommented(starter_project())

    def walk(cls: type, mapping: Any, path: str) -> None:
        assert isinstance(mapping, dict), path
        names = [name for name, _, _ in spec_fields(cls)]
        assert list(mapping) == names, f"{path}: {list(mapping)} != {names}"  # in the model's order
        for name, spec, _ in spec_fields(cls):
            if isinstance(spec, Section):
                walk(spec.cls, mapping[name], f"{path}.{name}")
            elif isinstance(spec, Items) and isinstance(spec.item, Section):
                walk(spec.item.cls, mapping[name][0], f"{path}.{name}[0]")

    walk(Project, document, "")


def test_each_line_carries_its_fields_documentation() -> None:
    text = starter_project()
    for name, spec, _ in spec_fields(Hardware):
        assert re.search(rf"^ *(# )?{name}: .* # {re.escape(spec.doc)}$", text, re.M), name


def test_what_it_writes_live_passes_check_and_the_rest_is_left_out() -> None:
    text = starter_project()
    loaded = load_project_text(text, ROOT / "starter.yaml", "starter.yaml")
    project = loaded.project
    assert project.project.title == "My distributed training design"
    assert project.scaling is None and project.pricing is None  # sections the starter leaves out
    assert project.design is not None and project.design.axis == "distribute training"
    assert "scaling" not in starter_fields(Project) and "hardware" in starter_fields(Project)
    # the diagnosis of the starter's own numbers agrees with its declared axis
    from reportgen.analysis import analyze

    analysis = analyze(project)
    assert analysis.diagnosis is not None and analysis.diagnosis.axis_matches
    assert [f.code for f in analysis.findings if f.severity == "error"] == []
