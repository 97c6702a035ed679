"""Runs repeated at a scale (methods.md#3-measured-scaling-and-where-the-speedup-went): two runs state their range,
never a 95 % interval, which three runs give; two runs identical in every column are named as a likely copy, by
`check` and on page 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from reportgen.analysis import analyze
from reportgen.project.loader import load_project_text
from reportgen.wording import spread
from tests.conftest import ROOT

PROJECT = """project: {{title: Repeats, goal: {{time_per_run: 100 s}}}}
design: {{nodes: 4}}
scaling:
  runs:
  - {{nodes: 1, time: 300 s}}
{repeats}
"""


def _summary(times: list[int]):  # type: ignore[no-untyped-def]
    repeats = "\n".join(f"  - {{nodes: 4, time: {t} s}}" for t in times)
    loaded = load_project_text(PROJECT.format(repeats=repeats), ROOT / "r.yaml", "r.yaml")
    analysis = analyze(loaded.project)
    assert analysis.summary is not None
    return analysis


def test_two_runs_state_their_range_and_three_an_interval() -> None:
    two = _summary([90, 110])
    assert "the range of 2 runs [90.0 s, 110 s]" in two.summary.verdict and "95 %" not in two.summary.verdict
    straddles = next(f for f in two.findings if f.code == "plan-straddles")
    assert straddles.message.startswith("the range of the plan's 2 runs holds a limit")
    three = _summary([90, 100, 110])
    assert "; 95 % interval [" in three.summary.verdict and "range of" not in three.summary.verdict
    assert (spread(2), spread(3), spread(None)) == ("the range of 2 runs", "95 % interval", "95 % interval")


def test_identical_runs_are_named_by_check_and_on_page_two(tmp_path: Path) -> None:
    analysis = _summary([90, 90, 110])
    (finding,) = [f for f in analysis.findings if f.code == "identical-runs"]
    assert finding.severity == "warning" and finding.message.startswith("2 runs at 4 nodes are identical")
    assert not [f for f in _summary([90, 110]).findings if f.code == "identical-runs"]
    path = tmp_path / "p.yaml"
    path.write_text(PROJECT.format(repeats="  - {nodes: 4, time: 90 s}\n  - {nodes: 4, time: 90 s}"),
                    encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "reportgen", "check", str(path)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0 and "warning [identical-runs]: 2 runs at 4 nodes are identical" in done.stderr
    assert done.stdout.strip().endswith(": ok")
