"""Every bad input under tests/data/bad ends in the located message its first lines expect; good ones load."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from reportgen.errors import InputError
from reportgen.project.loader import load_project
from tests.conftest import DATA, INPUTS

BAD = sorted((DATA / "bad").glob("*.yaml"))
GOOD = sorted((DATA / "good").glob("*.yaml")) + sorted(INPUTS.glob("*.yaml"))


def expectations(path: Path) -> list[str]:
    """`# expect: [FILE:]LINE:COL: PATH: MESSAGE` lines; FILE defaults to the project file itself."""
    lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
    expected = []
    for line in lines:
        if not line.startswith("# expect: "):
            break
        text = line.removeprefix("# expect: ")
        expected.append(text if not text[0].isdigit() else f"{path.name}:{text}")
    assert expected, f"{path.name} has no `# expect:` line"
    return expected


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_bad_input_gives_located_error(path: Path) -> None:
    started = time.perf_counter()
    with pytest.raises(InputError) as caught:
        load_project(path, display=path.name)
    assert time.perf_counter() - started < 5, "a bad input must be refused fast"
    reported = [str(problem).replace(": error: ", ": ", 1) for problem in caught.value.problems]
    reported = [text.replace(str(path.parent) + "/", "") for text in reported]
    for expected in expectations(path):
        assert expected in reported, f"expected {expected!r} among {reported}"


@pytest.mark.parametrize("path", GOOD, ids=[p.stem for p in GOOD])
def test_good_input_loads(path: Path) -> None:
    loaded = load_project(path)
    assert loaded.project.project.title
    assert len(loaded.input_sha256) == 64


def test_every_problem_is_one_line_with_position(tmp_path: Path) -> None:
    path = DATA / "bad" / "several-problems.yaml"
    with pytest.raises(InputError) as caught:
        load_project(path)
    text = str(caught.value)
    assert len(text.splitlines()) == 2
    assert all(line.startswith(f"{path}:") and ": error: " in line for line in text.splitlines())


def test_oversized_file_is_refused(write_project) -> None:
    path = write_project("project: {title: T}\n" + "# padding\n" * 120_000)
    with pytest.raises(InputError, match="larger than 1 MiB"):
        load_project(path)


def test_deep_nesting_is_refused(write_project) -> None:
    path = write_project("project: {title: T}\nx: " + "[" * 200 + "]" * 200 + "\n")
    with pytest.raises(InputError, match="nests too deeply"):
        load_project(path)


def test_csv_runs_load_with_units_from_header() -> None:
    scaling = load_project(DATA / "good" / "csv-runs.yaml").project.scaling
    assert scaling is not None and scaling.form == "breakdown"
    assert [run.nodes for run in scaling.runs] == [1, 2, 4]
    assert scaling.runs[1].compute == 510.0
    assert scaling.runs[1].energy == pytest.approx(0.9 * 3.6e6)
    assert scaling.runs[0].energy is None


def test_csv_error_names_the_csv_file_and_cell(write_project, tmp_path: Path) -> None:
    (tmp_path / "runs.csv").write_text("nodes,time\n1,100 s\n2,fast\n", encoding="utf-8")
    path = write_project("project: {title: T}\nscaling: {file: runs.csv}\n")
    with pytest.raises(InputError) as caught:
        load_project(path)
    [problem] = caught.value.problems
    assert (Path(problem.file).name, problem.line, problem.column) == ("runs.csv", 3, 3)
    assert problem.path == "scaling.runs[1].time"


def test_csv_and_inline_runs_together_are_refused(write_project, tmp_path: Path) -> None:
    (tmp_path / "runs.csv").write_text("nodes,time [s]\n1,100\n", encoding="utf-8")
    path = write_project("project: {title: T}\nscaling:\n  file: runs.csv\n  runs: [{nodes: 2, time: 5 s}]\n")
    with pytest.raises(InputError, match=r"not both \(`reportgen runs export` moves inline runs"):
        load_project(path)


@pytest.mark.parametrize(("text", "where", "hint"), [
    ("project:\n  title: x\n   workload: training\n", "3:12",
     "line 3 is indented 3 spaces, deeper than the key on line 2 (2)"),
    ("project:\n  title: Design: a test\n", "2:16", 'a value that holds ": " must be quoted: title: "Design: a test"'),
    ("project:\n  title: x\n design: {nodes: 2}\n", "3:2",
     "line 3 is indented 1 space, a level no key above it has (0, 2)"),
    ("project:\n\ttitle: x\n", "2:1", "YAML indents with spaces, never tabs"),
    ("project:\n  title: x\n  goal\n  workload: training\n", "4:3", 'line 3 ("goal") has no colon'),
])
def test_a_yaml_slip_gets_a_hint_at_its_line(write_project, text: str, where: str, hint: str) -> None:
    """docs/project-file.md#syntax-errors: PyYAML's message, then what the person most likely typed."""
    path = write_project(text)
    with pytest.raises(InputError) as raised:
        load_project(path)
    [line] = str(raised.value).splitlines()
    assert f":{where}: error: invalid YAML: " in line and hint in line, line


def test_time_unit_applies_to_bare_run_numbers(write_project) -> None:
    path = write_project("project: {title: T}\nscaling:\n  time_unit: min\n  runs:\n"
                         "    - {nodes: 1, time: 2}\n    - {nodes: 2, throughput: 30}\n")
    with pytest.raises(InputError, match="every run must be in one form"):
        load_project(path)
    path = write_project("project: {title: T}\nscaling:\n  time_unit: min\n  runs:\n"
                         "    - {nodes: 1, time: 2}\n    - {nodes: 2, time: 1.5}\n", name="ok.yaml")
    runs = load_project(path).project.scaling.runs
    assert [run.time for run in runs] == [120.0, 90.0]


def test_time_unit_does_not_leak_outside_scaling(write_project) -> None:
    path = write_project("project: {title: T}\nscaling:\n  time_unit: s\n  runs: [{nodes: 1, time: 2}]\n"
                         "reliability: {node_mtbf: 100, checkpoint_cost: 1 min}\n")
    with pytest.raises(InputError, match=r"reliability\.node_mtbf: expected time"):
        load_project(path)


def test_numbers_in_exponent_form_are_numbers(write_project) -> None:
    # PyYAML (YAML 1.1) reads 1.3e9 as a string; the loader must still accept it as a number.
    path = write_project("project: {title: T}\nbaseline: {memory: {parameters: 1.3e9}}\n")
    assert load_project(path).project.baseline.memory.parameters == 1.3e9


def test_defaults_apply(write_project) -> None:
    path = write_project("project: {title: T}\nbaseline: {memory: {parameters: 1e9}}\n"
                         "prediction: {t_comp: 1 s}\nenergy: {node_power: 1 kW}\n")
    project = load_project(path).project
    assert project.baseline.memory.bytes_per(serving=False) == 16.0  # mixed-precision Adam; a service: 2 B
    assert project.prediction.max_nodes == 4096
    assert project.energy.pue == 1.0
    assert project.currency == "USD"


def test_other_currency_is_parsed(write_project) -> None:
    path = write_project("project: {title: T}\npricing: {currency: EUR, node_hour: 12.5 EUR, "
                         "value_of_time: 30 EUR/h}\n")
    pricing = load_project(path).project.pricing
    assert pricing.node_hour == 12.5
    assert pricing.value_of_time == pytest.approx(30 / 3600)


def test_project_is_frozen() -> None:
    project = load_project(INPUTS / "example.yaml").project
    with pytest.raises(AttributeError):
        project.design.nodes = 3  # type: ignore[misc]


FLAWED_ON_PURPOSE = {"finetune-r1": ["wrong-axis", "replica-cannot-fit"]}  # the revision that diff corrects


@pytest.mark.parametrize("path", sorted(INPUTS.glob("*.yaml")), ids=lambda p: p.stem)
def test_the_examples_open_without_an_error_finding(path: Path) -> None:
    # an example is what a new user reads first: its own evidence must not contradict it (the default example once
    # fitted a negative latency from its collectives)
    from reportgen.analysis import analyze

    findings = analyze(load_project(path).project).findings
    assert [f.code for f in findings if f.severity == "error"] == FLAWED_ON_PURPOSE.get(path.stem, [])


@pytest.mark.parametrize("choice", ["[]", '""', '["split data", " "]'])
def test_a_slot_that_names_no_choice_is_refused_at_load(tmp_path: Path, choice: str) -> None:
    """An empty list of choices passed check and made the build's communication pattern an IndexError."""
    path = tmp_path / "p.yaml"
    path.write_text(f"project: {{title: C}}\ndesign:\n  nodes: 4\n  slots:\n    communication: {{choice: {choice}}}\n")
    with pytest.raises(InputError) as refused:
        load_project(path)
    (problem,) = refused.value.problems
    assert (problem.line, problem.path) == (5, "design.slots.communication.choice")
    assert "names no choice" in problem.message


@pytest.mark.parametrize(("model", "layout", "said"), [
    ("{layers: 4, hidden: 4096, sequence: 2048}", "{tensor: 8, pipeline: 8}",
     "design.parallelism.pipeline: 8 pipeline stages for 4 layers: a stage holds at least one layer"),
    ("{layers: 1000000000000, hidden: 4096, sequence: 2048}", "{tensor: 8}",
     "baseline.model.layers: must be a positive whole number up to 100,000"),
    ("{layers: 32, moe_layers: 40, hidden: 4096, sequence: 2048}", "{tensor: 8}",
     "baseline.model.moe_layers: 40 layers with experts, of 32 layers in all"),
])
def test_a_layout_no_framework_could_build_is_refused_at_load(tmp_path: Path, model: str, layout: str,
                                                              said: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(f"project: {{title: L}}\nbaseline:\n  model: {model}\n  training: {{parameters: 7e9, tokens: "
                    f"1e9, mfu: 0.4}}\ndesign:\n  nodes: 8\n  parallelism: {layout}\n")
    with pytest.raises(InputError) as refused:
        load_project(path)
    (problem,) = refused.value.problems
    assert f"{problem.path}: {problem.message}".startswith(said)


def test_an_unknown_field_suggests_up_to_three_by_abbreviation_prefix_or_spelling() -> None:
    from reportgen.errors import InputError
    from tests.conftest import make_project

    def message(text: str) -> str:
        with pytest.raises(InputError) as raised:
            make_project(text)
        return str(raised.value.problems[0])

    runs = "project: {title: T}\nscaling:\n  runs: [{nodes: 1, compute: 10 s, comm: 1 s, idle: 0 s}]\n"
    assert message(runs).endswith("scaling.runs[0].comm: unknown field; did you mean `communication`?")
    hardware = "project: {title: T}\nhardware: {mem_bw: 3 TB/s}\n"
    assert message(hardware).endswith("hardware.mem_bw: unknown field; did you mean `memory_bandwidth`?")
    # a word that starts several fields: each of them, at most three
    several = "project: {title: T}\nhardware: {net: 5 us}\n"
    assert message(several).endswith("did you mean `network_bandwidth` or `network_latency`?")
    # a name of the same meaning alone: `idle_power` is energy.wait_power
    assert message("project: {title: T}\nenergy: {idle_power: 1 kW}\n").endswith("did you mean `wait_power`?")
