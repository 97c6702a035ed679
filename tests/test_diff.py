"""reportgen diff: what changed between two revisions, in JSON, Markdown, HTML and PDF."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from reportgen.analysis.revisions.changes import KEY_RESULTS, Better, InputChange, Value, _verdict
from reportgen.commands.cli import main
from tests.conftest import INPUTS


@pytest.fixture(scope="module")
def finetune(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("diff")
    assert main(["diff", str(INPUTS / "finetune-r1.yaml"), str(INPUTS / "finetune-r2.yaml"), "-o", str(out)]) == 0
    return out / "diff-finetune-r1-vs-finetune-r2"


def test_axis_correction_is_the_headline(finetune: Path) -> None:
    document = json.loads((finetune / "diff.json").read_text())
    results = {r["name"]: r for r in document["results"]}
    assert (results["declared_axis"]["old"], results["declared_axis"]["new"]) == ("distribute training",
                                                                                  "distribute the model")
    assert results["axis_matches"]["verdict"] == "better"
    assert results["errors"] == {**results["errors"], "old": 2, "new": 0, "verdict": "better"}
    assert {f["code"] for f in document["resolved"]} == {"wrong-axis", "replica-cannot-fit", "unjustified-slot"}
    # r2 starts, and its plan is not measured: page 1 asks for that run, and says so as a finding
    # (docs/methods.md#page-1-from-one-set-of-facts)
    assert [f["code"] for f in document["appeared"]] == ["plan-not-measured"]
    assert document["page_one"] == ("page 1: not judged (the design cannot start) → not judged (nothing measured); "
                                    "next action: Measure the plan's scale, 4 nodes: its time and cost are not "
                                    "evidenced.")
    assert document["identical"] is False
    assert set(document["worse"]) == {"speedup_at_p_star", "p_comm_dominated"}  # FSDP moves 1.5× the bytes


def test_inputs_and_slots_that_changed(finetune: Path) -> None:
    document = json.loads((finetune / "diff.json").read_text())
    inputs = {i["path"]: i for i in document["inputs"]}
    assert inputs["prediction.message_bytes"]["change"] == pytest.approx(0.5)  # 60 GB → 90 GB
    assert inputs["design.slots.partitioning.detail"]["old"] is None  # added in r2
    assert "hardware.peak_compute" not in inputs and document["unchanged_inputs"] > 40
    slots = {s["slot"]: s for s in document["slots"]}
    assert slots["partitioning"]["new_choice"] == "shard model + split data"


def test_all_formats_written(finetune: Path) -> None:
    assert sorted(p.name for p in finetune.iterdir()) == ["diff.html", "diff.json", "diff.md", "diff.pdf"]
    markdown = (finetune / "diff.md").read_text()
    assert "| declared axis | distribute training | distribute the model |" in markdown
    assert "resolved: `wrong-axis`" in markdown
    html = (finetune / "diff.html").read_text()
    assert 'id="fig-overlay-predicted"' in html and "old: " in html
    assert (finetune / "diff.pdf").read_bytes().startswith(b"%PDF")


def test_exit_code_reports_a_worse_result(tmp_path: Path) -> None:
    old, new = str(INPUTS / "finetune-r1.yaml"), str(INPUTS / "finetune-r2.yaml")
    assert main(["diff", old, new, "-o", str(tmp_path), "--format", "json", "--exit-code"]) == 1
    assert main(["diff", new, new, "-o", str(tmp_path), "--format", "json", "--exit-code"]) == 0


def test_a_file_against_itself_is_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    example = str(INPUTS / "example.yaml")
    assert main(["diff", example, example, "-o", str(tmp_path), "--format", "json,md"]) == 0
    assert "no difference" in capsys.readouterr().out
    folder = tmp_path / "diff-example-vs-example"
    document = json.loads((folder / "diff.json").read_text())
    assert document["identical"] and document["inputs"] == [] and document["worse"] == []
    assert "**No difference**" in (folder / "diff.md").read_text()


def test_revisions_from_git(tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    (tmp_path / "p").mkdir()
    project = tmp_path / "p" / "project.yaml"
    (tmp_path / "p" / "runs.csv").write_text("nodes,time [s]\n1,100\n2,60\n4,40\n")
    project.write_text("project: {title: T, revision: r1}\nscaling: {file: runs.csv}\npricing: {node_hour: 10 USD}\n")
    git("init", "-q")
    git("-c", "user.email=a@b", "-c", "user.name=a", "add", ".")
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "r1")
    (tmp_path / "p" / "runs.csv").write_text("nodes,time [s]\n1,100\n2,55\n4,30\n")  # faster runs, not committed
    out = tmp_path / "out"
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(["diff", "HEAD:p/project.yaml", "p/project.yaml", "-o", str(out), "--format", "json"]) == 0
        assert main(["diff", "HEAD~5:p/project.yaml", "p/project.yaml", "-o", str(out)]) == 2  # no such revision
    finally:
        os.chdir(cwd)
    document = json.loads((out / "diff-HEAD-project-vs-project" / "diff.json").read_text())
    results = {r["name"]: r for r in document["results"]}
    assert results["cost_at_fastest"]["verdict"] == "better"  # 4 × 30 s is cheaper than 4 × 40 s
    # the YAML is the same; the runs read from the CSV changed, and they are inputs like any other
    assert {i["path"] for i in document["inputs"]} == {"scaling.runs[nodes=2].time", "scaling.runs[nodes=4].time"}


@pytest.mark.parametrize(("name", "better", "old", "new", "verdict"), [
    ("x", "higher", 2, 3, "better"), ("x", "lower", 2, 3, "worse"), ("x", None, 2, 3, "changed"),
    ("x", "higher", 2, 2, "same"), ("knee_nodes", "higher", 8, None, "better"),  # no knee: better than any
    ("knee_nodes", "higher", None, 8, "worse"), ("x", "true", False, True, "better"),
    ("x", "higher", None, 3, "changed"),
])
def test_verdicts(name: str, better: Better | None, old: Value, new: Value, verdict: str) -> None:
    infinite = {key.name for key in KEY_RESULTS if key.none_is_infinite}
    assert _verdict(better, old, new, none_is_infinite=name in infinite) == verdict


@pytest.fixture(scope="module")
def added_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 7B project before and after one more measured run (24 nodes, faster than any before it)."""
    folder = tmp_path_factory.mktemp("added")
    text = (INPUTS / "finetune-7b.yaml").read_text(encoding="utf-8")
    (folder / "old.yaml").write_text(text, encoding="utf-8")
    new = text.replace("    - {nodes: 32, compute: 900",
                       "    - {nodes: 24, compute: 1180, communication: 800, idle: 220, io: 20}\n"
                       "    - {nodes: 32, compute: 900")
    assert new != text
    (folder / "new.yaml").write_text(new, encoding="utf-8")
    assert main(["diff", str(folder / "old.yaml"), str(folder / "new.yaml"), "-o", str(folder),
                 "--exit-code"]) == 0  # a run that raises the peak is no regression
    return folder / "diff-old-vs-new"


def test_an_added_run_is_one_added_run_and_no_worse_result(added_run: Path) -> None:
    document = json.loads((added_run / "diff.json").read_text())
    assert [(i["path"], i["old"]) for i in document["inputs"]] == [("scaling.runs[nodes=24]", None)]
    assert document["inputs"][0]["new"] == "compute 19.7 min, communication 13.3 min, idle 3.67 min, io 20 s"
    assert document["worse"] == []
    results = {r["name"]: r for r in document["results"]}
    # 27,000 / 2,220 = 12.16 against 27,000 / 2,296 = 11.76 before: the peak speedup rose
    assert results["peak_speedup"]["verdict"] == "better"
    assert results["peak_nodes"]["verdict"] == "changed"
    # the fastest scale moved from 32 to 24 nodes: its cost is another point's, not a regression
    assert results["cost_at_fastest"]["verdict"] == "changed"


def test_the_diff_puts_changed_results_first_and_money_in_its_currency(added_run: Path) -> None:
    html = (added_run / "diff.html").read_text()
    table = html[html.index('<section id="results">'):html.index('<section id="design">')]
    assert "largest measured speedup" in table.split("<details")[0]
    assert "predicted optimum p*" in table.split("<details")[1]  # unchanged rows are folded
    assert "1,123 USD" in (added_run / "diff.md").read_text()


def test_a_changed_run_is_matched_by_its_node_count(tmp_path: Path) -> None:
    from reportgen.analysis.revisions.changes import compare_inputs
    from tests.conftest import make_project

    text = (INPUTS / "finetune-7b.yaml").read_text(encoding="utf-8")
    old = make_project(text)
    new = make_project(text.replace("{nodes: 8, compute: 3420,", "{nodes: 8, compute: 3300,"))
    changes, _ = compare_inputs(old, new)
    assert [(c.path, c.old, c.new) for c in changes] == [("scaling.runs[nodes=8].compute", "57 min", "55 min")]


def test_a_slot_change_names_the_field_that_changed() -> None:
    from reportgen.analysis.revisions.changes import compare_slots
    from tests.conftest import make_project

    text = (INPUTS / "finetune-7b.yaml").read_text(encoding="utf-8")
    new = text.replace("why: Matches the single-node optimisation exactly.", "why: Reproducibility.")
    (change,) = compare_slots(make_project(text), make_project(new))
    assert (change.slot, change.fields) == ("consistency", ("why",))
    # the change shows what changed, never "changed: why" beside two identical choices
    assert (change.old_changed, change.new_changed) == ("why: Matches the single-node optimisation exactly.",
                                                        "why: Reproducibility.")


REVISION = """project: {{title: T, revision: {name}}}
design: {{nodes: 4}}
scaling: {{runs: [{runs}]}}
"""


def _revision(name: str, times: tuple[float, ...], *, repeats: int = 1) -> str:
    runs = ", ".join(f"{{nodes: {n}, time: {t * (1 + 0.01 * k)} s}}" for n, t in zip((1, 2, 4), times, strict=True)
                     for k in range(repeats))
    return REVISION.format(name=name, runs=runs)


def test_a_reference_that_moved_between_sessions_is_named_and_times_are_not_judged() -> None:
    from reportgen.analysis import analyze
    from reportgen.analysis.revisions.changes import compare
    from tests.conftest import make_project

    # the 1-node reference moved 28.8 s → 15 s (−48 %) with no input that would explain it: the machine's load
    old, new = make_project(_revision("r1", (28.8, 16, 10))), make_project(_revision("r2", (15, 9, 6)))
    diff = compare(old, analyze(old), new, analyze(new), old_label="r1", new_label="r2")
    (moved,) = diff.findings
    assert moved.code == "reference-moved" and "from 28.8 s to 15 s (−48%) beyond noise" in moved.message
    assert not [r for r in diff.results if r.kind in ("seconds", "money", "kg") and r.verdict in ("better", "worse")]


def test_a_reference_within_noise_is_not_moved() -> None:
    from reportgen.analysis import analyze
    from reportgen.analysis.revisions.changes import compare
    from tests.conftest import make_project

    # 2 % apart without repeats: within the 5 % the comparison allows
    old, new = make_project(_revision("r1", (28.8, 16, 10))), make_project(_revision("r2", (29.4, 15, 9)))
    assert compare(old, analyze(old), new, analyze(new), old_label="r1", new_label="r2").findings == ()


def test_identical_overlays_are_left_out() -> None:
    from reportgen.figures.overlay import overlay

    line = ((1, 1.0), (2, 1.9))
    assert overlay("overlay-measured", line, line, "speedup", "c", "a", "b") is None
    assert overlay("overlay-measured", line, ((1, 1.0), (2, 1.8)), "speedup", "c", "a", "b") is not None


def test_watch_and_diff_print_money_with_its_currency() -> None:
    from reportgen.commands.cli import _shown

    assert _shown(1123.4, "money", "EUR") == "1,123 EUR"
    assert _shown("spot", "regime", "EUR") == "spot"
    assert _shown(2.5e8, "number", "EUR") == "2.50 × 10⁸"


def _repeats(name: str, at_four: tuple[float, ...]) -> str:
    runs = ", ".join(["{nodes: 1, time: 400 s}", "{nodes: 2, time: 210 s}",
                      *(f"{{nodes: 4, time: {t} s}}" for t in at_four)])
    return REVISION.format(name=name, runs=runs)


def test_repeats_are_compared_as_distributions_never_repeat_by_repeat() -> None:
    from reportgen.analysis import analyze
    from reportgen.analysis.revisions.changes import compare
    from tests.conftest import make_project

    def diff(old_times: tuple[float, ...], new_times: tuple[float, ...]) -> list[InputChange]:
        old, new = make_project(_repeats("r1", old_times)), make_project(_repeats("r2", new_times))
        result = compare(old, analyze(old), new, analyze(new), old_label="r1", new_label="r2")
        return [c for c in result.inputs if c.path != "project.revision"]

    # the same three runs in another order are the same measurement: no input changed
    assert diff((100, 104, 108), (108, 100, 104)) == []
    # one change for the scale, not three: medians 104 s → 106 s (+1.92 %), intervals overlap
    (change,) = diff((100, 104, 108), (106, 102, 110))
    assert change.path == "scaling.runs[nodes=4]" and change.within_noise is True
    assert change.change == pytest.approx(106 / 104 - 1)
    assert change.old == "3 runs: median 104 s, 95 % interval [100 s, 108 s]" and "#" not in change.path
    # 104 s → 82 s with intervals apart: beyond noise
    (change,) = diff((100, 104, 108), (80, 82, 84))
    assert change.within_noise is False and change.change == pytest.approx(82 / 104 - 1)
    # a repeat added: still one distribution change, with its new count
    (change,) = diff((100, 104, 108), (100, 104, 108, 250))
    assert change.new.startswith("4 runs: median")


def test_a_layout_change_is_judged_and_a_stage_is_not_a_percentage() -> None:
    """The diff left the layout's results out, and called ZeRO stage 1 → 3 "+200 %"."""
    from reportgen.analysis import analyze
    from reportgen.analysis.revisions.changes import compare
    from tests.conftest import make_project

    text = (INPUTS / "llm-70b-3d.yaml").read_text(encoding="utf-8")
    assert "zero_stage: 1" in text
    old_project, new_project = make_project(text), make_project(text.replace("zero_stage: 1", "zero_stage: 3"))
    old, new = analyze(old_project), analyze(new_project)
    result = compare(old_project, old, new_project, new, old_label="a", new_label="b")
    stage = next(change for change in result.inputs if change.path == "design.parallelism.zero_stage")
    assert (stage.old, stage.new, stage.change) == ("1", "3", None)
    memory = next(r for r in result.results if r.name == "layout_memory_per_device")
    # stage 3 shards the weights too: less memory per device, better (methods.md#22-a-parallel-layout-designparallelism)
    assert memory.new < memory.old and memory.verdict == "better"
    assert {r.name for r in result.results} >= {"layout_fits", "layout_step"}


def test_page_ones_headline_is_among_the_key_results() -> None:
    # finetune-7b with its 16-node run (the plan) 14 % faster in compute: page 1's time per run at the plan, on
    # demand, moves from 2,437 s (1,745 + 524 + 140 + 28) × the failure tax to 2,128 s (1,500 + 480 + 120 + 28) × it
    from reportgen.analysis import analyze
    from reportgen.analysis.revisions.changes import compare_results
    from tests.conftest import make_project

    text = (INPUTS / "finetune-7b.yaml").read_text(encoding="utf-8")
    faster = text.replace("{nodes: 16, compute: 1745, communication: 524, idle: 140, io: 28}",
                          "{nodes: 16, compute: 1500, communication: 480, idle: 120, io: 28}")
    assert faster != text
    old, new = analyze(make_project(text)), analyze(make_project(faster))
    results = {change.name: change for change in compare_results(old, new)}
    time = results["plan_time_on_demand"]
    tax = 1 + old.goal.at_plan[0].failure_tax
    assert time.old == pytest.approx(2437 * tax, rel=1e-9) and time.new == pytest.approx(2128 * tax, rel=1e-9)
    assert time.verdict == "better" and time.label.startswith("page 1: ")
    assert results["plan_cost_on_demand"].verdict == "better"
    # a measured cost beside page 1's says why the two differ
    assert "page 1's figures include any failure tax" in results["cost_at_fastest"].label
