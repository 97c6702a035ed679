"""The corpus's curve files: read like a project file, every problem located, excluded sources refused, and the
shipped corpus holding to its own rules (docs/methods.md#the-calibration-corpus)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from reportgen.corpus.curve import EXCLUDED, read_curve
from reportgen.corpus.table import MAX_PER_SYSTEM, load_corpus
from reportgen.errors import InputError

CURVES = Path(__file__).resolve().parents[2] / "reportgen" / "corpus" / "curves"

VALID = """\
id: {id}
source: {{repo: someone/bench, commit: 0123456789abcdef0123456789abcdef01234567, paths: [results.md],
         locator: Table 2, licence: MIT, read: table}}
curated: {{by: the tests, date: 2026-11-29, tool: by hand}}
hardware: {{name: {system}}}
workload: {{kind: hpc, name: {name}, batch: fixed}}
unit: {{node: node, value: time, printed: s}}
points:
  - {{nodes: 1, values: [1000, 1010]}}
  - {{nodes: 2, values: [520]}}
  - {{nodes: 4, values: [280]}}
"""


def write(folder: Path, curve_id: str, *, system: str = "a cluster", name: str = "a solver") -> Path:
    path = folder / f"{curve_id}.yaml"
    path.write_text(VALID.format(id=curve_id, system=system, name=name), encoding="utf-8")
    return path


def test_a_valid_curve_reads(tmp_path: Path) -> None:
    curve = read_curve(write(tmp_path, "one"), "one.yaml")
    assert curve.scales() == (1, 2, 4)
    assert curve.times(curve.points[0], 1.0) == (1000, 1010)


def test_every_problem_of_a_malformed_curve_is_located_at_once(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(VALID.format(id="bad", system="x", name="y")
                    .replace("kind: hpc", "kind: hcp")
                    .replace("printed: s", "printed: fortnights")
                    .replace("values: [520]", "values: [-520]"), encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_curve(path, "bad.yaml")
    lines = [str(problem) for problem in raised.value.problems]
    assert lines == [
        'bad.yaml:6:18: error: workload.kind: expected one of data-parallel-training, layout-training, '
        'data-processing, service or hpc, got "hcp"; did you mean `hpc`?',
        'bad.yaml:7:42: error: unit.printed: a time is written in one of s, min, h, got "fortnights"',
        'bad.yaml:10:25: error: points[1].values[0]: must be greater than 0, got "-520"']


def test_fewer_than_three_scales_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(VALID.format(id="two", system="x", name="y").replace("  - {nodes: 4, values: [280]}\n", ""),
                    encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_curve(path, "two.yaml")
    assert [problem.message for problem in raised.value.problems] == ["expected at least 3 entries, got 2"]


def test_an_id_not_its_files_stem_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other-name.yaml"
    path.write_text(VALID.format(id="named", system="x", name="y"), encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_curve(path, "other-name.yaml")
    assert [str(problem) for problem in raised.value.problems] == [
        'other-name.yaml:1:5: error: id: the id "named" is not the file\'s stem "other-name"']


@pytest.mark.parametrize("name", ["BLOOM-176B training", "Llama 3.1 405B", "llama31_8b", "MegaScale 175B",
                                  "PaLM 540B", "MT-NLG 530B"])
def test_a_curve_of_an_excluded_source_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(InputError) as raised:
        read_curve(write(tmp_path, "excluded", name=name), "excluded.yaml")
    assert any("corpus-excluded" in problem.message for problem in raised.value.problems)


def test_llama_2_is_not_excluded(tmp_path: Path) -> None:
    read_curve(write(tmp_path, "llama2", name="Llama 2 70B LoRA"), "llama2.yaml")


def test_too_many_curves_of_one_system_are_refused(tmp_path: Path) -> None:
    for index in range(MAX_PER_SYSTEM + 1):
        write(tmp_path, f"c{index}")
    with pytest.raises(InputError) as raised:
        load_corpus(tmp_path)
    assert "at most 8 per source and system" in str(raised.value)


def test_the_shipped_corpus_holds_to_its_rules() -> None:
    corpus = load_corpus(CURVES)  # every curve passes its schema and the exclusions, or this raises
    assert len(corpus.curves) >= 25
    texts = [(loaded.curve.id, loaded.data.decode("utf-8")) for loaded in corpus.curves]
    for curve_id, text in texts:  # a pattern scan of the whole file, comments included
        for name, pattern in EXCLUDED:
            assert not pattern.search(text), f"{curve_id} matches the excluded {name}"
    systems = Counter((loaded.curve.source.repo, loaded.curve.hardware.name) for loaded in corpus.curves)
    assert max(systems.values()) <= MAX_PER_SYSTEM
    assert sum(len(data) for _, data in texts) < 2 * 1024 * 1024


def test_the_shipped_table_covers_90_percent_with_intervals_still_useful() -> None:
    """Over the cells of 20 curves or more, the calibrated intervals hold 86–94 % of the held-out measurements, and
    at up to 4× their median high/low stays under 2.5 (2.16 on the shipped corpus: docs/calibration.md)."""
    import csv
    import json
    from statistics import median

    from reportgen.analysis.measured.conformal import calibrated_interval

    folder = CURVES.parent
    cells = json.loads((folder / "calibration.json").read_text(encoding="utf-8"))["cells"]
    large = {key: cell for key, cell in cells.items() if cell["cases"] >= 20}
    assert large, "no cell of 20 curves: the table calibrates nothing yet"
    coverage = sum(cell["covered"] for cell in large.values()) / sum(cell["cases"] for cell in large.values())
    assert 0.86 <= coverage <= 0.94
    with (folder / "cases.csv").open(encoding="utf-8") as rows:
        used = [row for row in csv.DictReader(rows) if row["used"] == "true" and row["cell"] in large]
    widths = []
    for row in used:
        if float(row["ratio"]) <= 4:
            low, high = calibrated_interval(row["predictor"], float(row["predicted_s"]), float(row["low_s"]),
                                            float(row["high_s"]), large[row["cell"]]["factor"])
            widths.append(high / low)
    assert widths and median(widths) <= 2.5
