"""The type checker holds the project model to its specs: a field annotated otherwise than what its spec reads, or a
comparison against a name outside a vocabulary, or a diff's key result reading a field the results do not have,
fails `mypy --strict` (the `lint` target of `make test`)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from mypy import api

pytestmark = pytest.mark.slow  # one mypy run over the model and its imports: several seconds

ROOT = Path(__file__).resolve().parent.parent

# Each line marked `# wrong` must draw exactly one mypy error; the other lines none.
CASES = '''
    from dataclasses import dataclass

    from reportgen.analysis.revisions.changes import KeyResult
    from reportgen.analysis.findings import Finding
    from reportgen.project.model import Run, Scaling
    from reportgen.project.spec import Count, Names, OneOf, Positive, Quantity, Section, field
    from reportgen.project import units


    @dataclass(frozen=True)
    class Model:
        count: int = field(Count("a count"), required=True)
        label: str = field(Count("a count"), required=True)  # wrong
        level: int = field(Positive("a level"), required=True)  # wrong
        level_ok: float = field(Positive("a level"), required=True)
        maybe: float = field(Positive("absent unless given"))  # wrong
        maybe_ok: float | None = field(Positive("absent unless given"))
        names: tuple[str, ...] = field(Names("names"), ())
        names_wrong: str = field(Names("names"), ())  # wrong
        time: float = field(Quantity(units.TIME, "a time"), 1.0)
        scaling: Scaling | None = field(Section(Scaling))
        scaling_wrong: Run | None = field(Section(Scaling))  # wrong
        side: str = field(OneOf("a side", ("left", "right")), "left")


    def typo_in_a_form(run: Run) -> bool:
        return run.form == "breakdwn"  # wrong


    def typo_in_a_severity(finding: Finding) -> bool:
        return finding.severity == "warn"  # wrong


    def typo_in_an_axis(scaling: Scaling) -> bool:
        return scaling.axis == "nodes" or scaling.axis == "loads"  # wrong


    KNEE = KeyResult("knee_nodes", "knee", "nodes", "higher", lambda a: a.scaling.knee_nodes if a.scaling else None)
    RENAMED = KeyResult("knee_nodes", "knee", "nodes", "higher",
                        lambda a: a.scaling.knee_node if a.scaling else None)  # wrong
    DIRECTION = KeyResult("knee_nodes", "knee", "nodes", "upward", lambda a: None)  # wrong
'''


def test_mypy_holds_field_annotations_and_vocabularies_to_their_specs(tmp_path: Path) -> None:
    source = textwrap.dedent(CASES)
    module = tmp_path / "typing_cases.py"
    module.write_text(source)
    stdout, _, _ = api.run(["--strict", "--no-incremental", "--follow-imports=silent", str(module)])
    flagged = {int(line) for line in re.findall(r"typing_cases\.py:(\d+): error", stdout)}
    expected = {number for number, line in enumerate(source.splitlines(), 1) if line.endswith("# wrong")}
    assert flagged == expected, stdout
