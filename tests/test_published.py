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
