"""Published data sets (sources cited beside each figure) through the whole pipeline, checked against the source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reportgen.analysis import analyze
from reportgen.pipeline import BuildOptions, build
from reportgen.project.carbon import intensity_for
from tests.conftest import INPUTS, make_project


def build_json(name: str, tmp_path: Path) -> dict:
    build(INPUTS / f"{name}.yaml", BuildOptions(out_root=tmp_path, formats=("json",)))
    return json.loads((tmp_path / name / "results.json").read_text())


def test_nvidia_bert_multi_node_scaling(tmp_path: Path) -> None:
    results = build_json("bert-dgx-a100", tmp_path)
    rows = {r["nodes"]: r for r in results["scaling"]["rows"]}
    assert rows[32]["speedup"] == pytest.approx(138294 / 4553)  # 30.37× on 32 nodes
    assert rows[32]["efficiency"] == pytest.approx(138294 / 4553 / 32)  # 95 %
    assert results["scaling"]["knee_nodes"] is None  # near-linear: no knee
    assert results["scaling"]["per_unit_of_work"] is True
    # cost per sequence at 1 node: 29.39 USD/h / 3600 / 4553 sequence/s
    assert results["cost"]["rows"][0]["cost"] == pytest.approx(29.39 / 3600 / 4553)


def test_mlperf_ssd_minutes_to_train(tmp_path: Path) -> None:
    results = build_json("mlperf-ssd", tmp_path)
    rows = {r["nodes"]: r for r in results["scaling"]["rows"]}
    assert rows[8]["time_s"] == pytest.approx(6.142 * 60)
    assert rows[8]["speedup"] == pytest.approx(35.969 / 6.142)
    assert rows[256]["speedup"] == pytest.approx(35.969 / 0.855)
    assert results["scaling"]["peak_nodes"] == 256
    assert results["scaling"]["first_below_half_efficiency_nodes"] == 256  # 42× on 256 nodes is 16 %


@pytest.mark.parametrize(("chips", "days", "watts", "pue", "g_per_kwh", "kwh", "kg"), [
    (512, 20, 310, 1.12, 545, 85_700, 46_700),  # T5
    (1024, 30, 289, 1.09, 415, 232_000, 96_400),  # Meena
])
def test_patterson_energy_and_carbon(chips: int, days: int, watts: int, pue: float, g_per_kwh: int, kwh: int,
                                     kg: int) -> None:
    # Patterson et al. 2021, Table 4; one TPU v3 chip is one "node" here. The source says chips × hours × watts ×
    # PUE reproduces its energy column within half a percent.
    project = make_project(f"""
project: {{title: TPU training}}
scaling: {{runs: [{{nodes: {chips}, time: {days} day}}]}}
energy: {{node_power: {watts} W, pue: {pue}, location: {{carbon_intensity: {g_per_kwh} g/kWh}}}}
""")
    energy = analyze(project, intensity=intensity_for(project.energy.location)).energy
    assert energy.rows[0].energy_kwh == pytest.approx(kwh, rel=0.005)
    assert energy.rows[0].co2_kg == pytest.approx(kg, rel=0.005)


def test_llama3_mtbf_gives_a_daly_interval() -> None:
    # Llama 3: a per-node MTBF of about 6,300 h; at 2,048 nodes the system MTBF is about 3.1 h.
    project = make_project("""
project: {title: Llama 3}
design: {nodes: 2048}
reliability: {node_mtbf: 6300 h, checkpoint_cost: 5 min}
""")
    row = next(r for r in analyze(project).reliability.rows if r.nodes == 2048)
    assert row.system_mtbf_s / 3600 == pytest.approx(3.08, abs=0.01)


def test_lulesh_imbalance_from_published_max_and_mean() -> None:
    # LULESH 2.0.3, 343 ranks: LagrangeLeapFrog mean 36.12 s, max 50.80 s → max/mean − 1 = 0.41
    workers = "[" + ", ".join(["36.12"] * 342) + "]"
    project = make_project(f"""
project: {{title: LULESH}}
scaling:
  time_unit: s
  runs:
    - {{nodes: 1, compute: 36.12, communication: 0, idle: 0}}
    - {{nodes: 343, compute: 50.80, communication: 16.42, idle: 0, workers: {workers[:-1]}, 50.80]}}
""")
    pop = analyze(project).scaling.pop[0]
    mean = (36.12 * 342 + 50.80) / 343
    assert pop.imbalance == pytest.approx(50.80 / mean - 1)


# Quinn, Parallel Programming in C with MPI and OpenMP (2004), §7.5: two benchmarks on 1–8 processors, read with the
# Karp–Flatt metric. Example 1's e stays at 0.099–0.100 ("limited opportunity for parallelism", a serial
# fraction); Example 2's rises from 0.070 to 0.100 ("parallel overhead" that grows with p).
QUINN = {
    "example-1": ((1.82, 2.50, 3.08, 3.57, 4.00, 4.38, 4.71), "flat", "serial-fraction"),
    "example-2": ((1.87, 2.61, 3.23, 3.73, 4.14, 4.46, 4.71), "rising", "communication"),
}


def quinn_project(speedups: tuple[float, ...]) -> str:
    runs = ", ".join(f"{{nodes: {p}, time: {100 / s!r} s}}" for p, s in zip(range(1, 9), (1.0, *speedups),
                                                                           strict=True))
    return f"project: {{title: Quinn}}\nscaling: {{runs: [{runs}]}}\n"


@pytest.mark.parametrize("name", QUINN)
def test_quinn_karp_flatt_trend_names_the_cause_the_book_does(name: str) -> None:
    from reportgen.analysis.measured.scaling import REMEDIES, analyze_scaling
    from reportgen.figures.scaling import karp_flatt

    speedups, trend, cause = QUINN[name]
    result = analyze_scaling(make_project(quinn_project(speedups)).scaling)
    e = [row.karp_flatt for row in result.rows[1:]]
    if name == "example-1":
        assert min(e) == pytest.approx(0.0989, abs=1e-4) and max(e) == pytest.approx(0.1001, abs=1e-4)
    else:
        assert e[0] == pytest.approx(0.070, abs=1e-3) and e[-1] == pytest.approx(0.100, abs=1e-3)
    assert result.karp_flatt_trend == trend
    assert (result.knee_cause, result.knee_cause_inferred) == (cause, True)
    assert result.remedy == REMEDIES[cause]
    job = karp_flatt(result)
    assert job is not None
    caption = job.frame.caption
    assert f"its trend is {trend}" in caption and f"names the likely cause, {cause}" in caption
    other = {"flat": "rising", "rising": "flat"}[trend]
    assert f"trend is {other}" not in caption


@pytest.mark.parametrize("name", QUINN)
def test_quinn_report_says_one_thing(name: str, tmp_path: Path) -> None:
    import html
    import re

    from reportgen.analysis.measured.scaling import REMEDIES, TREND_READING

    speedups, trend, cause = QUINN[name]
    project = tmp_path / f"quinn-{name}.yaml"
    project.write_text(quinn_project(speedups))
    build(project, BuildOptions(out_root=tmp_path, formats=("html",)))
    markup = (tmp_path / project.stem / "report.html").read_text()
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", markup)).split())
    # Quinn's series have no knee: the measure section names the largest loss (page 1 names no cause without a knee)
    assert (f"The largest loss is likely {cause}, inferred from the Karp–Flatt trend, which is {trend}, "
            f"{TREND_READING[trend]}; a compute") in text
    assert f"The remedy: {REMEDIES[cause]}." in text
    assert f"its trend is {trend}, {TREND_READING[trend]}" in text
    for other in {"flat", "rising", "falling"} - {trend}:
        assert f"its trend is {other}" not in text and f"which is {other}," not in text


def test_megatron_weak_scaling_in_flops() -> None:
    # Shoeybi et al. 2019 (Megatron-LM): 39 TFLOP/s on one V100, 15.1 PFLOP/s on 512 GPUs, "76 % scaling
    # efficiency". Weak-scaling papers publish FLOP/s: it is read as the throughput, and work per run in FLOP.
    from reportgen.analysis.measured.scaling import analyze_scaling

    scaling = make_project("project: {title: Megatron}\nscaling:\n  work_per_run: 1.0e21 FLOP\n"
                           "  runs: [{nodes: 1, throughput: 39 TFLOP/s}, {nodes: 512, throughput: 15.1 PFLOP/s}]\n"
                           ).scaling
    assert [run.throughput for run in scaling.runs] == [39e12, 15.1e15]
    assert scaling.work_per_run == 1.0e21
    result = analyze_scaling(scaling)
    assert result.rows[1].efficiency == pytest.approx(0.756, abs=1e-3)
    assert result.rows[0].time_s == pytest.approx(1.0e21 / 39e12)  # seconds per run: work / throughput
