"""The analyses as a registry (reportgen.analysis.REGISTRY): analyze() iterates it; each step names the Analysis field
it fills and the fields it reads, which earlier steps must have filled; every field of Analysis is filled by one. An
analysis declared in its own module fills its key of `Analysis.declared` and reads what its `needs` name."""

from __future__ import annotations

import dataclasses
import inspect

from reportgen.analysis import DECLARED, REGISTRY, Analysis


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


def test_a_step_reads_no_field_it_does_not_declare() -> None:
    """Each step's function names only the fields it declares (a.<field>), so the order check above is complete."""
    fields = {field.name for field in dataclasses.fields(Analysis)}
    runs = [step.run for step in REGISTRY if step.name != "declared"] + [declared.run for declared in DECLARED]
    needs = [step.needs for step in REGISTRY if step.name != "declared"] + [declared.needs for declared in DECLARED]
    keys = {declared.key for declared in DECLARED}
    for run, declared_needs in zip(runs, needs, strict=True):
        source = inspect.getsource(run)  # every step is a named function: its source is its own
        read = {name for name in fields if f"a.{name}" in source}
        read |= {key for key in keys if f'declared["{key}"]' in source or f"declared.get(\"{key}\")" in source}
        assert read <= set(declared_needs), f"{run.__name__} reads {sorted(read - set(declared_needs))} undeclared"


def test_declared_analyses_run_after_what_they_need() -> None:
    keys = [declared.key for declared in DECLARED]
    for index, declared in enumerate(DECLARED):
        assert not set(declared.needs) & set(keys[index:]), f"{declared.key} runs before an analysis it needs"
