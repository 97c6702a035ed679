"""The analyses as a registry (reportgen.analysis.REGISTRY): analyze() iterates it; each step names the Analysis field
it fills and the fields it reads, which earlier steps must have filled; every field of Analysis is filled by one."""

from __future__ import annotations

import dataclasses
import inspect

from reportgen.analysis import REGISTRY, Analysis


def test_every_step_reads_only_what_an_earlier_step_filled() -> None:
    filled: set[str] = set()
    for step in REGISTRY:
        missing = set(step.needs) - filled
        assert not missing, f"{step.name} reads {sorted(missing)} before any step fills it"
        filled.add(step.name)


def test_every_field_of_the_analysis_is_filled_by_a_step() -> None:
    fields = {field.name for field in dataclasses.fields(Analysis)}
    assert {step.name for step in REGISTRY} == fields


def test_a_step_reads_no_field_it_does_not_declare() -> None:
    """Each step's function names only the fields it declares (a.<field>), so the order check above is complete."""
    fields = {field.name for field in dataclasses.fields(Analysis)}
    for step in REGISTRY:
        source = inspect.getsource(step.run)  # every step is a named function: its source is its own
        read = {name for name in fields if f"a.{name}" in source}
        assert read <= set(step.needs), f"{step.name} reads {sorted(read - set(step.needs))} undeclared"
