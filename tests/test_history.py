"""A project's history (methods.md#a-projects-history): a git repository made here, revision by revision, walked
by `reportgen history`, with the prediction ledger's grades worked out by hand."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest

import reportgen
from reportgen.analysis.revisions.history import LedgerRow, coverage, ledger, missed, own_cases
from reportgen.commands.cli import main
from reportgen.project_history import HistoryOptions, history

BASE = """project:
  title: History
  goal: {time_per_run: 30 min}
hardware: {network_bandwidth: 10 GB/s, network_latency: 10 us}
design:
  nodes: 8
  slots:
    communication: {choice: all-reduce, why: one symmetric collective}
prediction: {t_comp: 10 s, alpha: 10 us, beta: 0.2 s}
scaling:
  time_unit: s
  runs:
RUNS"""


def project(runs: list[tuple[int, float]], communication: str = "all-reduce") -> str:
    rows = "".join(f"    - {{nodes: {n}, time: {t}}}\n" for n, t in runs)
    return BASE.replace("all-reduce", communication).replace("RUNS", rows)


def commit(folder: Path, text: str, message: str) -> None:
    (folder / "p.yaml").write_text(text, encoding="utf-8")
    subprocess.run(["git", "add", "p.yaml"], cwd=folder, check=True)
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", message], cwd=folder,
                   check=True)


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six revisions: measurements added, an unparseable revision, a design change, a moved reference."""
    folder = tmp_path_factory.mktemp("history")
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    commit(folder, project([(1, 3600), (2, 1900)]), "r1: two scales")
    commit(folder, project([(1, 3600), (2, 1900), (4, 1050)]), "r2: 4 nodes measured")
    commit(folder, project([(1, 3600)]) + "  - {nodes: [", "r3: a broken save")
    commit(folder, project([(1, 3600), (2, 1900), (4, 1050)], "parameter server"), "r4: the design changes")
    commit(folder, project([(1, 3600), (2, 1900), (4, 1050), (8, 620)], "parameter server"), "r5: 8 nodes")
    commit(folder, project([(1, 3300), (2, 1900), (4, 1050), (8, 620)], "parameter server"), "r6: reference moved")
    return folder


def test_every_revision_and_each_prediction_graded(repository: Path) -> None:
    document = history(repository / "p.yaml")
    revisions = document["revisions"]
    assert [r["subject"][:2] for r in revisions] == ["r1", "r2", "r3", "r4", "r5", "r6"]
    assert [r["built"] for r in revisions] == [True, True, False, True, True, True]
    assert "invalid YAML" in revisions[2]["error"] and revisions[2]["error"].count("\n") == 0
    labels = [r["label"] for r in revisions]
    rows = [row for row in document["ledger"] if row["predicted_in"] == labels[0]]
    # r1 (1 and 2 nodes) predicts 4, 8 and 16 nodes; r2 measures 4 with the same design: graded, measured / predicted
    # − 1 by hand from the two numbers
    four = next(row for row in rows if row["nodes"] == 4 and row["model"] == "amdahl")
    predicted = next(p for p in revisions[0]["predictions"] if p["nodes"] == 4 and p["model"] == "amdahl")
    assert four["status"] == "graded" and four["measured_in"] == labels[1]
    assert four["measured_s"] == 1050 and four["rel_error"] == pytest.approx(1050 / predicted["time_s"] - 1)
    assert four["inside"] == (predicted["low"] <= 1050 <= predicted["high"])
    # Amdahl from 1 and 2 nodes: S(2) = 3,600/1,900, f = (1/S − 1/2)/(1 − 1/2) = 0.05556; T(4) = 3,600 (f + (1 − f)/4)
    f = (1900 / 3600 - 0.5) / 0.5
    assert predicted["time_s"] == pytest.approx(3600 * (f + (1 - f) / 4))
    # r1's and r2's predictions at 8 nodes: the design changed (r4) before r5 measured 8: superseded
    eight = [row for row in document["ledger"] if row["nodes"] == 8 and row["predicted_in"] in labels[:2]]
    assert eight and {row["status"] for row in eight} == {"superseded"}
    # r4's prediction at 8 nodes is graded by r5 (same design); r6 predicts 16 nodes: pending
    assert {row["status"] for row in document["ledger"] if row["predicted_in"] == labels[3] and row["nodes"] == 8} \
        == {"graded"}
    assert {row["status"] for row in document["ledger"] if row["predicted_in"] == labels[5]} == {"pending"}


def test_the_ledgers_summary_by_hand() -> None:
    # the predicting revision measured up to 2 nodes: 4 is r = 2 (up to 2×), 8 is r = 4 (2–4×); the 4-node one is
    # inside its calibrated interval too, the 8-node one in neither
    rows = [LedgerRow(4, "usl", "a", "b", 100.0, 110.0, 0.10, True, "graded", 2.0, 90.0, 115.0, True),
            LedgerRow(8, "usl", "a", "b", 100.0, 150.0, 0.50, False, "graded", 4.0, 80.0, 120.0, False),
            LedgerRow(8, "alpha-beta", "a", "b", 100.0, 130.0, 0.30, None, "graded", 4.0),
            LedgerRow(16, "usl", "a", None, 100.0, None, None, None, "pending", 8.0)]
    summary = coverage(rows)
    assert summary["usl"] == {"graded": 2, "coverage": 0.5, "median_abs_error": pytest.approx(0.30),
                              "buckets": {"<=2": {"graded": 1, "covered": 1, "covered_calibrated": 1},
                                          "<=4": {"graded": 1, "covered": 0, "covered_calibrated": 0}}}
    assert summary["alpha-beta"] == {"graded": 1, "coverage": None, "median_abs_error": pytest.approx(0.30),
                                     "buckets": {"<=4": {"graded": 1, "covered": 0, "covered_calibrated": 0}}}
    # a graded prediction's score, as a published curve's case is scored: |ln(110/100)| / ln(115/100) = 0.682
    assert rows[0].score == pytest.approx(math.log(1.1) / math.log(1.15))
    assert rows[2].score == pytest.approx(math.log(1.3)) and rows[3].score is None  # a point one; a pending one
    assert [case.score for case in own_cases(rows)] == pytest.approx([rows[0].score, rows[1].score, rows[2].score])
    # outside its interval, or 25 % off without one: prediction-missed
    assert [(row.nodes, row.model) for row in missed(rows)] == [(8, "usl"), (8, "alpha-beta")]
    assert ledger([]) == []


def test_the_second_call_reads_the_cache_and_the_command_writes_three_files(
        repository: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["history", str(repository / "p.yaml"), "-o", str(out)]) == 0
    first = capsys.readouterr().out
    assert "6 revisions: 6 analysed now" in first and "1 revision could not be built" in first
    assert main(["history", str(repository / "p.yaml"), "-o", str(out)]) == 0
    assert "0 analysed now, 6 from the cache" in capsys.readouterr().out
    folder = out / "history-p"
    assert sorted(p.name for p in folder.iterdir()) == ["history.html", "history.json", "history.md"]
    document = json.loads((folder / "history.json").read_text(encoding="utf-8"))
    assert len(document["revisions"]) == 6 and set(document["coverage"]) == set(document["accuracy"])
    assert all(share is None or 0 <= share <= 1 for share in document["coverage"].values())
    markdown = (folder / "history.md").read_text(encoding="utf-8")
    assert "<" not in markdown.replace("&lt;", "")  # inert: no raw HTML from a project's text
    assert 'id="fig-history-timeline"' in (folder / "history.html").read_text(encoding="utf-8")


def test_last_caps_the_history_and_says_so(repository: Path) -> None:
    document = history(repository / "p.yaml", HistoryOptions(last=2))
    assert document["capped"] and document["total_revisions"] == 6 and len(document["revisions"]) == 2
    with pytest.raises(reportgen.errors.UsageError):
        history(repository / "p.yaml", HistoryOptions(last=0))
    with pytest.raises(reportgen.errors.UsageError):
        history(repository / "p.yaml", HistoryOptions(rev="--output=x"))


def test_the_api_gives_the_timeline_and_the_ledger_as_frames(repository: Path) -> None:
    result = reportgen.history(repository / "p.yaml", last=3)
    assert list(result.timeline["revision"].unique()) == [r["label"] for r in result.document["revisions"]]
    assert {"nodes", "model", "status", "rel_error"} <= set(result.ledger.columns)


def test_a_huge_revision_is_refused_as_build_refuses_it_and_the_rest_are_built(tmp_path: Path) -> None:
    # a project file past the 1 MiB limit at one commit: that revision is listed with its error, unread; the
    # revisions around it are built
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    commit(tmp_path, project([(1, 3600), (2, 1900)]), "small")
    commit(tmp_path, project([(1, 3600), (2, 1900)]) + "#" * (1 << 20) + "\n", "huge")
    commit(tmp_path, project([(1, 3600), (2, 1900), (4, 1050)]), "small again")
    revisions = history(tmp_path / "p.yaml")["revisions"]
    assert [r["built"] for r in revisions] == [True, False, True]
    assert "larger than" in revisions[1]["error"] and "refused without reading it" in revisions[1]["error"]


# three revisions whose page 1 differs: missed out of reach (levers searched), missed with a measured scale that
# meets, met (docs/methods.md#a-projects-history)
THREE = """project:
  title: Three
  goal: {time_per_run: GOAL}
design: {nodes: 4}
scaling:
  time_unit: s
  runs: [{nodes: 1, time: 3600}, {nodes: 2, time: 1900}, {nodes: 4, time: 1050}, {nodes: 8, time: 640}]
"""


def test_each_revision_shows_the_verdict_and_next_action_its_build_shows(tmp_path: Path) -> None:
    """A history's row of a revision equals a build of it: its state, verdict and next action, the levers searched
    only where page 1 needs them."""
    from reportgen.analysis import analyze
    from reportgen.project.loader import load_project

    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    texts = [THREE.replace("GOAL", goal) for goal in ("5 min", "15 min", "30 min")]
    for index, text in enumerate(texts):
        commit(tmp_path, text, f"r{index + 1}")
    revisions = history(tmp_path / "p.yaml")["revisions"]
    for text, revision in zip(texts, revisions, strict=True):
        (tmp_path / "built.yaml").write_text(text, encoding="utf-8")
        summary = analyze(load_project(tmp_path / "built.yaml").project).summary
        action = summary.next_action
        assert (revision["state"], revision["why"], revision["verdict"]) == (summary.state, summary.why,
                                                                            summary.verdict)
        assert revision["next_action"] == {"code": action.code, "text": action.text, "rank": action.rank,
                                           "kind": action.kind}
    # out of reach (its sentence reads the levers), then the 8 measured nodes that meet 15 min (no unmeasured scale
    # between 4 and 8 clears the limit once its interval is calibrated on published curves:
    # docs/methods.md#how-accurate-each-prediction-is), then the plan meets 30 min
    assert [r["next_action"]["kind"] for r in revisions] == ["out-of-reach", "measured-scale", "keep"]
    assert [r["state"] for r in revisions] == ["missed", "missed", "met"]


def test_the_design_change_column_names_each_input_that_changed(tmp_path: Path) -> None:
    """A network upgrade is named as one, with its values, not as "layout or baseline"; a change of what a run's
    time means (scaling.mode) supersedes the predictions made before it."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    first = project([(1, 3600), (2, 1900), (4, 1050)])
    commit(tmp_path, first, "r1")
    commit(tmp_path, first.replace("network_bandwidth: 10 GB/s", "network_bandwidth: 25 GB/s"), "r2: the network")
    out = tmp_path / "out"
    assert main(["history", str(tmp_path / "p.yaml"), "-o", str(out)]) == 0
    page = (out / "history-p" / "history.html").read_text(encoding="utf-8")
    assert "hardware.network_bandwidth: 10.0 GB/s → 25.0 GB/s" in page and "layout or baseline" not in page
    document = history(tmp_path / "p.yaml")
    assert document["revisions"][0]["design"] != document["revisions"][1]["design"]


def _throughput(runs: list[tuple[int, float]], work: str) -> str:
    rows = "".join(f"    - {{nodes: {n}, throughput: {x} token/s}}\n" for n, x in runs)
    return BASE.replace("  time_unit: s\n", f"  work_per_run: {work}\n").replace("RUNS", rows)


WEAK = project([(1, 3600), (2, 1900), (4, 1050)]).replace("  time_unit: s\n", "  time_unit: s\n  mode: weak\n")


@pytest.mark.parametrize("first, second", [
    (_throughput([(1, 1e6), (2, 1.9e6)], "3.6e9 token"),
     _throughput([(1, 1e6), (2, 1.9e6), (4, 3.4e6)], "7.2e9 token")),
    (project([(1, 3600), (2, 1900)]), WEAK),
], ids=["work_per_run", "mode"])
def test_a_change_of_what_a_runs_time_means_supersedes_the_predictions(tmp_path: Path, first: str,
                                                                       second: str) -> None:
    """A prediction made for one amount of work is never graded against a run of another: scaling.work_per_run and
    scaling.mode are design inputs, so r2's measurement of 4 nodes supersedes r1's prediction instead of grading it
    (+100 % for twice the work; strong to weak scaling graded +567 % before)."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    commit(tmp_path, first, "r1: two scales")
    commit(tmp_path, second, "r2: 4 nodes, another work")
    assert all(revision["built"] for revision in history(tmp_path / "p.yaml")["revisions"])
    document = history(tmp_path / "p.yaml")
    first = document["revisions"][0]["label"]
    at_four = [row for row in document["ledger"] if row["predicted_in"] == first and row["nodes"] == 4]
    assert at_four and {row["status"] for row in at_four} == {"superseded"}
    # the same measurement without the change grades r1's prediction
    subprocess.run(["git", "init", "-q", str(tmp_path / "same")], check=True)
    commit(tmp_path / "same", project([(1, 3600), (2, 1900)]), "r1")
    commit(tmp_path / "same", project([(1, 3600), (2, 1900), (4, 1050)]), "r2")
    same = history(tmp_path / "same" / "p.yaml")
    label = same["revisions"][0]["label"]
    assert "graded" in {row["status"] for row in same["ledger"] if row["predicted_in"] == label and row["nodes"] == 4}


def test_revisions_built_in_worker_processes_read_as_one_process_builds_them(tmp_path: Path) -> None:
    """Ten revisions to build (PARALLEL_FROM or more) with -j 2 go to forked workers: the records come back in the
    revisions' order, a broken revision's error with them, and the cache then holds each record."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    for index in range(10):
        text = project([(1, 3600 + 10 * index), (2, 1900), (4, 1050 + index)])
        commit(tmp_path, text + ("  - {nodes: [" if index == 6 else ""), f"r{index}")
    alone = history(tmp_path / "p.yaml", HistoryOptions(jobs=1))
    cache = tmp_path / "cache"
    together = history(tmp_path / "p.yaml", HistoryOptions(jobs=2, cache=cache))
    assert together == alone and together["built_now"] == 10
    assert [r["built"] for r in together["revisions"]].count(False) == 1
    assert [r["measured"][0]["time_s"] for r in together["revisions"] if r["built"]] == \
        [3600 + 10 * index for index in range(10) if index != 6]
    again = history(tmp_path / "p.yaml", HistoryOptions(jobs=2, cache=cache))
    assert again["built_now"] == 0 and again["revisions"] == together["revisions"]


@pytest.mark.parametrize("jobs", [0, -1, True, 2.0, 65])
def test_jobs_outside_one_to_sixty_four_is_a_usage_error(repository: Path, jobs: object) -> None:
    with pytest.raises(reportgen.errors.UsageError, match="-j must be"):
        history(repository / "p.yaml", HistoryOptions(jobs=jobs))  # type: ignore[arg-type]
