"""Page 1's invariants (docs/methods.md#page-1-from-one-set-of-facts) on every project in inputs/: the same rules the
generated projects are held to (tests/generated/page_one_invariants.py), and the metamorphic one, runs permuted."""

from __future__ import annotations

import json

import pytest

from reportgen.analysis import analyze
from reportgen.pipeline import analyze_loaded
from reportgen.project.loader import load_project
from reportgen.render.results import dumps
from tests.conftest import INPUTS
from tests.generated.page_one_invariants import check_page_one, permuted_summary

EXAMPLES = sorted(path.name for path in INPUTS.glob("*.yaml"))


@pytest.mark.parametrize("name", EXAMPLES)
def test_page_one_holds_its_invariants_on_every_example(name: str) -> None:
    """As a build analyses it: a service with records is judged from its requests."""
    loaded = load_project(INPUTS / name)
    analysis, document = analyze_loaded(loaded)
    check_page_one(loaded.project, analysis, json.loads(dumps(document)))


@pytest.mark.parametrize("name", EXAMPLES)
def test_permuting_the_runs_leaves_page_one_as_it_was(name: str) -> None:
    project = load_project(INPUTS / name).project
    permuted = permuted_summary(project)
    if permuted is None:
        pytest.skip("fewer than two runs")
    summary = analyze(project).summary
    assert summary is not None
    assert permuted == {"state": summary.state, "verdict": summary.verdict, "action": summary.next_action,
                        "candidates": summary.candidates}
