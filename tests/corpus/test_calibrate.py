"""`reportgen calibrate`: the committed table matches the corpus, the same bytes come out of any process and any
--jobs, and adding one curve is the whole recipe (docs/methods.md#the-calibration-corpus)."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus.test_curves import VALID

ROOT = Path(__file__).resolve().parents[2]
CURVES = ROOT / "reportgen" / "corpus" / "curves"


def calibrate(*arguments: str | Path, seed: str = "random") -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.endswith("_NUM_THREADS")}
    env["PYTHONHASHSEED"] = seed
    return subprocess.run([sys.executable, "-m", "reportgen", "calibrate", *map(str, arguments)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300, check=False)


def outputs(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_the_committed_table_matches_the_corpus() -> None:
    done = calibrate("--check")
    assert done.returncode == 0, done.stderr
    assert "files match" in done.stdout


@pytest.mark.slow
def test_any_process_and_any_jobs_write_the_same_bytes(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    first = calibrate("--out", one, "--report", one / "calibration.md", "--jobs", "1", seed="1")
    second = calibrate("--out", two, "--report", two / "calibration.md", "--jobs", "2", seed="2")
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert outputs(one) == outputs(two)
    assert outputs(one)["calibration.json"] == (ROOT / "reportgen" / "corpus" / "calibration.json").read_bytes()
    assert len(outputs(one)["calibration.json"]) <= 64 * 1024


def test_check_names_the_first_file_and_cell_that_differ(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert calibrate("--out", out, "--report", out / "calibration.md").returncode == 0
    table = json.loads((out / "calibration.json").read_text(encoding="utf-8"))
    key = sorted(table["cells"])[0]
    table["cells"][key]["factor"] = 99.0
    (out / "calibration.json").write_text(json.dumps(table, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    done = calibrate("--out", out, "--report", out / "calibration.md", "--check")
    assert done.returncode == 1
    assert "calibration.json differs from the corpus at line" in done.stderr and f"(cell {key})" in done.stderr


@pytest.mark.slow
def test_adding_one_curve_adds_one_case_to_each_cell_it_enters(tmp_path: Path) -> None:
    corpus, before, after = tmp_path / "curves", tmp_path / "before", tmp_path / "after"
    shutil.copytree(CURVES, corpus)
    assert calibrate("--corpus", corpus, "--out", before, "--report", before / "r.md").returncode == 0
    (corpus / "added.yaml").write_text(VALID.format(id="added", system="a new cluster", name="a solver")
                                       .replace("  - {nodes: 4, values: [280]}\n",
                                                "  - {nodes: 4, values: [280]}\n  - {nodes: 8, values: [160]}\n"),
                                       encoding="utf-8")
    assert calibrate("--corpus", corpus, "--out", after, "--report", after / "r.md").returncode == 0
    old = json.loads((before / "calibration.json").read_text(encoding="utf-8"))["cells"]
    new = json.loads((after / "calibration.json").read_text(encoding="utf-8"))["cells"]
    entered = [line.split(",")[7] for line in (after / "cases.csv").read_text(encoding="utf-8").splitlines()
               if line.startswith("added,") and ",true," in line and line.split(",")[16] == "true"]
    assert entered
    for key in set(old) | set(new):
        grew = new.get(key, {}).get("cases", 0) - old.get(key, {}).get("cases", 0)
        assert grew == (1 if key in entered else 0), key


def test_a_malformed_curve_fails_with_its_location(tmp_path: Path) -> None:
    corpus = tmp_path / "curves"
    corpus.mkdir()
    (corpus / "bad.yaml").write_text(VALID.format(id="bad", system="x", name="y").replace("kind: hpc", "kind: x"),
                                     encoding="utf-8")
    (corpus / "excluded.yaml").write_text(VALID.format(id="excluded", system="x", name="BLOOM-176B"),
                                          encoding="utf-8")
    done = calibrate("--corpus", corpus, "--out", tmp_path / "out", "--report", tmp_path / "r.md")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert any(line.endswith('workload.kind: expected one of data-parallel-training, layout-training, '
                             'data-processing, service or hpc, got "x"') and ":6:18: error:" in line
               for line in lines), lines
    assert any("excluded.yaml:2:" in line and "corpus-excluded" in line for line in lines), lines
    assert not (tmp_path / "out").exists()  # nothing is written when a curve is refused


BUILD_WATCHED = """
import sys
opened = []
sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" and args else None)
from reportgen.commands.cli import main
status = main(["build", "inputs/bert-extrapolated.yaml", "--format", "json", "-q", "-o", sys.argv[1]])
print(status)
print(sorted(name for name in sys.modules if name.startswith("reportgen.corpus")))
print(sorted({path for path in opened if "corpus" in path}))
"""


def test_a_build_reads_the_table_alone(tmp_path: Path) -> None:
    """A build reads calibration.json and nothing else of the corpus: no curve, no reader of the corpus imported."""
    done = subprocess.run([sys.executable, "-c", BUILD_WATCHED, str(tmp_path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=True)
    status, modules, opened = done.stdout.strip().splitlines()
    assert status == "0" and modules == "[]"
    assert [Path(path).name for path in ast.literal_eval(opened)] == ["calibration.json"]


def test_calibrate_called_in_process_checks_there(capsys: pytest.CaptureFixture[str]) -> None:
    """Only the command itself re-executes with one BLAS thread: a caller of main() is never replaced."""
    from reportgen.commands.cli import main

    assert main(["calibrate", "--check"]) == 0
    assert "files match" in capsys.readouterr().out
