"""Repeated runs: medians, seeded bootstrap intervals, `noisy`, an uncertain knee, "within noise"
in a diff, and commands that add a repeat instead of refusing a measured scale."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reportgen.analysis.measured.scaling import analyze_scaling, knee_uncertain
from reportgen.commands.cli import main
from reportgen.project.loader import load_project, load_project_text
from tests.conftest import INPUTS, ROOT

EXAMPLE = INPUTS / "nightly-repeats.yaml"


def scaling_of(runs: str):  # type: ignore[no-untyped-def]
    text = f"project: {{title: T}}\nscaling:\n  time_unit: s\n  runs:\n{runs}"
    return load_project_text(text, ROOT / "p.yaml", "p.yaml").project.scaling


def test_rows_hold_the_medians_of_their_repeats() -> None:
    scaling = analyze_scaling(scaling_of(
        "    - {nodes: 1, time: 100}\n    - {nodes: 1, time: 110}\n    - {nodes: 1, time: 90}\n"
        "    - {nodes: 2, time: 60}\n    - {nodes: 2, time: 50}\n    - {nodes: 4, time: 40}\n"))
    assert scaling is not None
    assert [(r.nodes, r.repeats, r.time_s) for r in scaling.rows] == [(1, 3, 100.0), (2, 2, 55.0), (4, 1, 40.0)]
    assert scaling.rows[1].speedup == pytest.approx(100 / 55)  # on the medians
    assert scaling.rows[2].time_ci is None and scaling.rows[2].speedup_ci is None  # one run: no interval
    low, high = scaling.rows[1].time_ci  # type: ignore[misc]
    assert 50.0 <= low <= 55.0 <= high <= 60.0  # a median of two resampled runs lies between them
    assert scaling.rows[0].speedup_ci == (1.0, 1.0)  # the reference against itself
    assert scaling.rows[1].efficiency_ci == pytest.approx(tuple(s / 2 for s in scaling.rows[1].speedup_ci))  # type: ignore[union-attr]


def test_breakdown_medians_are_taken_per_component() -> None:
    scaling = analyze_scaling(scaling_of(
        "    - {nodes: 1, compute: 100, communication: 0, idle: 0}\n"
        "    - {nodes: 2, compute: 50, communication: 10, idle: 1}\n"
        "    - {nodes: 2, compute: 52, communication: 6, idle: 3}\n"
        "    - {nodes: 2, compute: 51, communication: 8, idle: 9}\n"))
    assert scaling is not None
    run = scaling.rows[1].run
    assert (run.compute, run.communication, run.idle) == (51.0, 8.0, 3.0)
    assert scaling.rows[1].time_s == 62.0  # the sum of the component medians


def test_intervals_are_seeded_and_identical_repeats_give_none_of_width() -> None:
    runs = "".join(f"    - {{nodes: {n}, time: {t}}}\n" for n, t in
                   [(1, 100), (1, 103), (1, 98), (2, 52), (2, 55), (2, 51), (4, 30), (4, 30)])
    first, second = analyze_scaling(scaling_of(runs)), analyze_scaling(scaling_of(runs))
    assert first is not None and second is not None
    assert [r.speedup_ci for r in first.rows] == [r.speedup_ci for r in second.rows]  # byte-identical outputs
    assert first.rows[2].time_ci == (30.0, 30.0)


def test_a_wide_interval_is_noisy_and_a_narrow_one_is_not() -> None:
    loaded = load_project(EXAMPLE)
    from reportgen.analysis import analyze

    analysis = analyze(loaded.project)
    noisy = [f for f in analysis.findings if f.code == "noisy"]
    assert len(noisy) == 1 and "32 nodes" in noisy[0].message and "over 5 runs" in noisy[0].message
    assert analysis.scaling is not None
    assert [r.nodes for r in analysis.scaling.rows if r.noisy] == [32]
    assert all(r.repeats == 5 for r in analysis.scaling.rows)


def test_the_knee_is_uncertain_when_its_interval_overlaps_a_neighbours() -> None:
    scaling = analyze_scaling(scaling_of("".join(f"    - {{nodes: {n}, time: {t}}}\n" for n, t in
                                                 [(1, 100), (1, 100), (2, 52), (2, 52), (4, 30), (4, 31),
                                                  (8, 26), (8, 24), (16, 25), (16, 24)])))
    assert scaling is not None and scaling.knee_nodes is not None
    rows = list(scaling.rows)
    assert knee_uncertain(rows, scaling.knee_nodes) == scaling.knee_uncertain
    from dataclasses import replace

    apart = [replace(r, speedup_ci=(r.speedup - 0.001, r.speedup + 0.001)) for r in rows]
    overlapping = [replace(r, speedup_ci=(0.0, 100.0)) for r in rows]
    assert not knee_uncertain(apart, scaling.knee_nodes)
    assert knee_uncertain(overlapping, scaling.knee_nodes)


def test_results_and_report_carry_the_intervals(tmp_path: Path) -> None:
    assert main(["build", str(EXAMPLE), "-o", str(tmp_path), "--format", "json,html"]) == 0
    document = json.loads((tmp_path / "nightly-repeats" / "results.json").read_text())
    rows = document["scaling"]["rows"]
    assert [r["repeats"] for r in rows] == [5] * 6
    assert all(len(r["time_s_ci"]) == 2 and r["time_s_ci"][0] <= r["time_s"] <= r["time_s_ci"][1] for r in rows)
    assert document["scaling"]["noisy_nodes"] == [32]
    html = " ".join((tmp_path / "nightly-repeats" / "report.html").read_text().split())
    assert "95 % bootstrap interval in brackets" in html and 'class="ci"' in html
    assert "Black bars: the 95 % bootstrap interval" in html  # the speedup figure's error bars


def test_a_diff_inside_the_noise_says_so_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the revision moves the 16-node median by 1 %: inside that scale's interval
    revised = tmp_path / "revised"
    revised.mkdir()
    shutil.copy(EXAMPLE, revised / "nightly-repeats.yaml")
    lines = (INPUTS / "nightly-repeats-runs.csv").read_text().splitlines()
    moved = [",".join([cells[0], *(f"{float(c) * 0.99:.1f}" for c in cells[1:])])
             if (cells := line.split(","))[0] == "16" else line for line in lines]
    (revised / "nightly-repeats-runs.csv").write_text("\n".join(moved) + "\n")
    status = main(["diff", str(EXAMPLE), str(revised / "nightly-repeats.yaml"), "-o", str(tmp_path / "out"),
                   "--format", "json", "--exit-code"])
    assert status == 0
    document = json.loads(next((tmp_path / "out").glob("diff-*/diff.json")).read_text())
    verdicts = {r["name"]: r["verdict"] for r in document["results"]}
    assert verdicts["peak_speedup"] == "within noise"
    assert document["worse"] == []


def test_measure_and_ingest_add_a_repeat_instead_of_refusing(tmp_path: Path) -> None:
    from reportgen.ingest.measure import Measurement, append_run, check_can_append

    csv = tmp_path / "runs.csv"
    csv.write_text("nodes,time [s]\n1,100\n2,55\n")
    with pytest.raises(Exception, match="use --repeat to add another run"):
        check_can_append(csv, 2, replace=False)
    run = Measurement(2, 53.0, None, {}, 0)
    append_run(csv, run, time_unit_s=None, replace=False, repeat=True)
    assert csv.read_text().splitlines()[-1] == "2,53" and csv.read_text().count("\n2,") == 2
    with pytest.raises(SystemExit) as usage:  # one or the other
        main(["measure", "--project", "x.yaml", "--nodes", "2", "--repeat", "--replace", "--", "true"])
    assert usage.value.code == 2


def test_ingest_trace_adds_a_repeat(tmp_path: Path) -> None:
    from tests.test_traces import write_job

    project = tmp_path / "p.yaml"
    project.write_text("project: {title: T}\nscaling: {file: runs.csv}\n")
    folder = write_job(tmp_path / "job", [1000.0, 1600.0])
    arguments = ["ingest", "trace", str(folder), "--project", str(project), "--nodes", "2"]
    assert main(arguments) == 0
    assert main(arguments) == 2  # a measured scale is refused without --repeat or --replace
    assert main([*arguments, "--repeat"]) == 0
    text = (tmp_path / "runs.csv").read_text()
    assert text.count("\n2,") == 2 and text.count("# reportgen ingest trace") == 2  # each with its provenance
    scaling = load_project(project).project.scaling
    assert scaling is not None and len(scaling.runs) == 2


def test_many_scales_show_a_readable_selection_and_results_keep_every_row(tmp_path: Path) -> None:
    # 300 distinct node counts: tables show the selection, findings stay one sentence, results.json holds all
    from reportgen.analysis import analyze
    from reportgen.render.context import normalized_inputs
    from reportgen.render.selection import MAX_SHOWN, for_tables, shown_nodes

    runs = "".join(f"    - {{nodes: {p}, compute: {3000 / p:.3f}, communication: {p ** 0.5:.3f}, idle: 0.5}}\n"
                   for p in range(1, 301))
    text = (f"project: {{title: T}}\ndesign: {{nodes: 100}}\nprediction: {{t_comp: 3000 s, alpha: 1 s, beta: 1 s}}\n"
            f"scaling:\n  time_unit: s\n  runs:\n{runs}")
    project = load_project_text(text, ROOT / "p.yaml", "p.yaml").project
    analysis = analyze(project)
    shown = shown_nodes(analysis, 100)
    assert shown is not None and MAX_SHOWN < 300
    assert {1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 100} <= shown  # powers of two, the ends, the plan
    assert analysis.scaling is not None and analysis.scaling.peak_nodes in shown
    assert len(shown) < 40
    cut = for_tables(analysis, shown)
    assert cut.scaling is not None and {r.nodes for r in cut.scaling.rows} == set(shown)
    inputs = normalized_inputs(project, {}, shown)
    listed = {row.path.partition("]")[0] for row in inputs if row.path.startswith("scaling.runs[")}
    assert len(listed) == len(shown) and inputs[-1].value.startswith(f"… and {300 - len(shown):,} more runs")
    assert all(len(f.message) < 1000 for f in analysis.findings)  # "and 291 more (results.json)"
    assert any("more (results.json)" in f.message for f in analysis.findings)
    assert main(["build", str(_write(tmp_path, text)), "-o", str(tmp_path), "--format", "json,html"]) == 0
    document = json.loads((tmp_path / "p" / "results.json").read_text())
    assert len(document["scaling"]["rows"]) == 300
    html = (tmp_path / "p" / "report.html").read_text()
    assert f"the tables show {len(shown)} of them" in html


def _write(folder: Path, text: str) -> Path:
    path = folder / "p.yaml"
    path.write_text(text)
    return path


def test_interval_bars_are_drawn_for_repeated_scales_only() -> None:
    """A mix of many single-run scales and a few repeated ones draws caps for the repeated ones alone: 5,000 single
    runs beside ten repeated scales once drew 20,000 caps, a 3.8 MB figure."""
    from reportgen.figures.scaling import speedup

    single = "".join(f"    - {{nodes: {p}, time: {1000 / p + p * 0.01:.4f} s}}\n" for p in range(1, 301))
    repeated = "".join(f"    - {{nodes: {p}, time: {1000 / p * factor:.4f} s}}\n" for p in (512, 1024, 2048)
                       for factor in (0.98, 1.0, 1.03))
    text = f"project: {{title: Mix}}\nscaling:\n  runs:\n{single}{repeated}"
    scaling = analyze_scaling(load_project_text(text, ROOT / "mix.yaml", "mix.yaml").project.scaling)
    assert scaling is not None and sum(1 for row in scaling.rows if row.speedup_ci) == 3
    job = speedup(scaling)
    assert job is not None
    uses = job.run().count("<use ")  # each cap, marker and glyph of text is one <use> in matplotlib's SVG
    assert uses <= 60, uses  # the text and 12 caps; a cap per single-run scale too gave 1,248


def test_one_wild_repeat_of_three_is_the_only_one_named() -> None:
    """55, 54 and 240 s at one scale: 240 is the outlier (4.4× the middle of the other two); 55 and 54 are each more
    than 2× from the middle of the wild run and the other, and were once named too."""
    from reportgen.analysis.measured.scaling import find_outlier_repeats, repeats_by_nodes

    scaling = scaling_of("    - {nodes: 2, time: 55}\n    - {nodes: 2, time: 54}\n    - {nodes: 2, time: 240}\n")
    found = find_outlier_repeats(repeats_by_nodes(scaling.runs), None)
    assert [(repeat.position, repeat.value) for repeat in found] == [(3, 240.0)]
    assert found[0].centre == pytest.approx(54.5)
