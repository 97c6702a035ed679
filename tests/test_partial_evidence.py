"""Every number whose inputs are present is computed, whatever else is missing."""

from __future__ import annotations

import pytest

from reportgen.analysis import analyze
from reportgen.analysis.model.prediction import model_curve, optimum
from reportgen.project.loader import load_project
from tests.conftest import make_project


def test_the_training_time_is_computed_without_a_deadline() -> None:
    analysis = analyze(make_project("""
project: {title: T}
hardware: {peak_compute: 1 PFLOP/s}
baseline: {training: {parameters: 1e9, tokens: 1e10, mfu: 0.5}}
"""))
    diagnosis = analysis.diagnosis
    # 6 × 10⁹ × 10¹⁰ FLOP / (0.5 × 10¹⁵ FLOP/s) = 1.2 × 10⁵ s
    assert diagnosis.training_time_s == pytest.approx(1.2e5)
    wall = next(w for w in diagnosis.walls if w.wall == "time")
    assert wall.fill is None and wall.binds and wall.demand == pytest.approx(1.2e5)  # no deadline: no fill
    assert diagnosis.workers_for_deadline is None
    assert "no-deadline" in {f.code for f in analysis.findings}


def test_the_collectives_fit_predicts_when_alpha_and_beta_are_not_given() -> None:
    analysis = analyze(make_project("""
project: {title: T}
prediction:
  t_comp: 2 s
  collectives: [{nodes: 2, time: 12 ms}, {nodes: 4, time: 20 ms}]
"""))
    prediction = analysis.prediction
    # exact with two points: t = α(p − 1) + 2β(p − 1)/p → 12 ms = α + β, 20 ms = 3α + 1.5β
    # → 1.5α = 20 − 18 = 2 ms: α = 1.33 ms, β = 12 − 1.33 = 10.67 ms
    alpha, beta = 0.002 / 1.5, 0.012 - 0.002 / 1.5
    assert prediction is not None and prediction.uses_fit and prediction.fit_stands_in
    assert (prediction.alpha_s, prediction.beta_s) == (pytest.approx(alpha), pytest.approx(beta))
    assert prediction.p_star == optimum(model_curve(2.0, alpha, beta, 4096)).p_star


def test_use_fit_with_a_collectives_file_is_accepted(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "collectives.csv").write_text("nodes,time [ms]\n2,12\n4,20\n", encoding="utf-8")
    project = tmp_path / "p.yaml"
    project.write_text("project: {title: T}\nhardware: {network_latency: 8 us}\n"
                       "prediction: {t_comp: 2 s, beta: 1 ms, collectives_file: collectives.csv, use_fit: true}\n",
                       encoding="utf-8")
    prediction = analyze(load_project(project).project).prediction
    assert prediction is not None and prediction.uses_fit and prediction.alpha_s == pytest.approx(0.002 / 1.5)


def test_use_fit_with_an_empty_collectives_file_is_refused_at_the_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from reportgen.errors import InputError

    (tmp_path / "collectives.csv").write_text("nodes,time [ms]\n", encoding="utf-8")
    project = tmp_path / "p.yaml"
    project.write_text("project: {title: T}\n"
                       "prediction: {t_comp: 2 s, alpha: 8 us, beta: 1 ms, collectives_file: collectives.csv,"
                       " use_fit: true}\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"prediction\.use_fit: needs measured collectives"):
        load_project(project)


def test_measured_energy_is_reported_without_node_power() -> None:
    analysis = analyze(make_project("""
project: {title: T}
scaling: {time_unit: s, runs: [{nodes: 1, time: 3600}, {nodes: 2, time: 1900, energy: 3 kWh}]}
"""))
    energy = analysis.energy
    assert energy is not None and not energy.modelled
    assert [(r.nodes, r.energy_kwh, r.measured) for r in energy.rows] == [(2, pytest.approx(3.0), True)]  # PUE 1
    assert energy.unknown_nodes == (1,) and energy.rows[0].co2_kg is None  # no location: no CO2e


def test_a_multi_device_node_without_devices_per_node_gets_a_note() -> None:
    analysis = analyze(make_project("""
project: {title: T}
hardware: {name: 8x H100 SXM node, memory_capacity: 640 GB}
baseline: {memory: {parameters: 1e9, activations: 180 GB}}
"""))
    note = next(f for f in analysis.findings if f.code == "devices-per-node-unset")
    assert note.severity == "info" and "set hardware.devices_per_node: 8" in note.message
    # a data-processing job holds no model's state: the note would ask for an input its kind never reads
    data = analyze(make_project("project: {title: T, workload: data-processing}\n"
                                "hardware: {name: 8x H100 SXM node, memory_capacity: 640 GB}\n"))
    assert "devices-per-node-unset" not in {f.code for f in data.findings}


def test_the_declared_checkpoint_interval_is_held_against_dalys() -> None:
    analysis = analyze(load_project("inputs/example.yaml").project)
    declared = analysis.reliability.declared
    # M_8 = 6,300 h / 8 = 2,835,000 s; at τ = 1,200 s: 45/1,200 + (600 + 240)/2,835,000 = 3.78 %
    assert declared.overhead_fraction == pytest.approx(45 / 1200 + (600 + 240) / 2_835_000)
    assert declared.optimal_overhead_fraction < declared.overhead_fraction
    # the finding speaks of the regime page 1 leads with, spot, where failures and preemptions together make
    # Daly's interval 23.1 min: 20 min costs 8.05 % against 7.96 %, 1.1 % more, within the 10 % tolerance
    # (docs/methods.md#spot-as-failures)
    finding = next(f for f in analysis.findings if f.code == "checkpoint-interval")
    assert finding.severity == "info" and finding.message.startswith("on spot, checkpointing every 20 min costs 8.05 %")
    assert "Daly's interval of 23.1 min for failures and preemptions together" in finding.message
