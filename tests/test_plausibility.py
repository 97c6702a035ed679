"""Measurements that cannot be right are said to be wrong: one scale, a speedup far above ideal, an outlier."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from reportgen.analysis import analyze
from reportgen.analysis.model.fits import fit_usl, usl_capacity
from reportgen.commands.cli import main
from tests.conftest import make_project

SLIP = """
project: {title: Slip, goal: {text: Two hours., time_per_run: 2 h}}
design: {nodes: 8}
scaling: {time_unit: s, runs: [{nodes: 1, time: 7200}, {nodes: 2, time: 3930}, {nodes: 4, time: 2380},
                                {nodes: 8, time: 3}]}
"""


def codes(analysis) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.code for f in analysis.findings]


def test_a_3_s_slip_is_an_implausible_speedup_named_by_its_run() -> None:
    analysis = analyze(make_project(SLIP))
    # 8 nodes: S = 7,200 / 3 = 2,400 against an ideal of 8: E = 300, far above 1.25
    assert [r.nodes for r in analysis.scaling.implausible] == [8]
    finding = next(f for f in analysis.findings if f.code == "implausible-speedup")
    assert finding.severity == "warning" and "the run at 8 nodes reaches 30,000 % of ideal" in finding.message
    summary = analysis.summary
    assert summary.next_action.code == "implausible-speedup" and "Check the run at 8 nodes" in summary.next_action.text
    assert summary.verdict.startswith("The goal would be met at the planned 8 nodes, but the run there is implausibly "
                                      "fast")
    assert summary.state == "unjudged" and "rests on the run at 8 nodes" in summary.evidence


def test_a_stated_reason_accepts_a_superlinear_run_as_a_note_quoting_it() -> None:
    analysis = analyze(make_project("""
project: {title: T}
scaling:
  time_unit: s
  superlinear: the 4-node shard fits in HBM
  runs: [{nodes: 1, time: 1000}, {nodes: 2, time: 480}, {nodes: 4, time: 180}]
"""))
    # 4 nodes: S = 1,000 / 180 = 5.56, E = 1.39 > 1.25
    assert "implausible-speedup" not in codes(analysis)
    note = next(f for f in analysis.findings if f.code == "superlinear")
    assert note.severity == "info" and "“the 4-node shard fits in HBM”" in note.message


def test_an_efficiency_of_exactly_125_percent_is_not_implausible() -> None:
    analysis = analyze(make_project("""
project: {title: T}
scaling: {time_unit: s, runs: [{nodes: 1, time: 1000}, {nodes: 4, time: 200}]}
"""))
    assert analysis.scaling.rows[1].efficiency == pytest.approx(1.25)  # 1,000 / 200 / 4
    assert "implausible-speedup" not in codes(analysis)


def test_an_outlier_is_named_and_the_others_are_held_against_a_fit_without_it() -> None:
    analysis = analyze(make_project("""
project: {title: T}
scaling: {time_unit: s, runs: [{nodes: 1, time: 100}, {nodes: 2, time: 52}, {nodes: 4, time: 27},
                                {nodes: 8, time: 50}]}
"""))
    outliers = analysis.scaling.outliers
    assert [o.nodes for o in outliers] == [8]  # the bad run bends every fit with it, yet only it is flagged
    fit = fit_usl([1.0, 2.0, 4.0], [1 / 100, 1 / 52, 1 / 27])  # capacity 1/T of the other three
    expected = float(usl_capacity(np.array([8.0]), fit.gamma, fit.sigma, fit.kappa)[0])
    assert outliers[0].expected == pytest.approx(expected) and outliers[0].measured == pytest.approx(1 / 50)
    assert 1 / outliers[0].factor > 2  # slower than predicted by more than twice
    message = next(f.message for f in analysis.findings if f.code == "outlier")
    assert message.startswith("the run at 8 nodes is") and "slower than the USL fitted to the other scales" in message


def test_three_scales_have_no_outlier_test() -> None:
    analysis = analyze(make_project("""
project: {title: T}
scaling: {time_unit: s, runs: [{nodes: 1, time: 100}, {nodes: 2, time: 52}, {nodes: 4, time: 90}]}
"""))
    assert analysis.scaling.outliers == ()


def test_one_measured_scale_builds_every_format_and_names_what_to_add(tmp_path: Path) -> None:
    project = tmp_path / "first-run.yaml"
    project.write_text("project: {title: Smoke, goal: {text: Under an hour., time_per_run: 1 h}}\n"
                       "scaling: {time_unit: s, runs: [{nodes: 4, time: 5200}]}\n", encoding="utf-8")
    assert main(["build", str(project), "-o", str(tmp_path / "out"), "--format", "html,pdf,json,csv", "-q"]) == 0
    folder = tmp_path / "out" / "first-run"
    assert (folder / "report.pdf").stat().st_size > 0
    html = " ".join((folder / "report.html").read_text(encoding="utf-8").split())
    for key in ("speedup", "karp-flatt", "lost-folds"):
        assert f'id="fig-{key}"' not in html  # never a figure on a degenerate axis
    assert ("Only 4 nodes measured: speedup, Karp–Flatt, the knee, the lost folds and the fits need a run at another "
            "node count, ideally 1 node") in html
    results = json.loads((folder / "results.json").read_text())
    assert results["scaling"]["knee_nodes"] is None and results["scaling"]["usl"] is None
    assert "single-scale" in {f["code"] for f in results["findings"]}


def test_the_summary_never_claims_no_warning_while_a_run_is_implausible(tmp_path: Path) -> None:
    project = tmp_path / "slip.yaml"
    project.write_text(SLIP, encoding="utf-8")
    assert main(["build", str(project), "-o", str(tmp_path), "--format", "html", "-q"]) == 0
    html = (tmp_path / "slip" / "report.html").read_text(encoding="utf-8")
    assert "No error or warning" not in html and "implausible-speedup" in html
