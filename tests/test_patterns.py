"""The prediction follows the design's communication pattern: every pattern's T_comm by hand, its optimum, its
fit, and where the pattern is read from."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reportgen.analysis import analyze, sections_values
from reportgen.analysis.model.fits import fit_alpha_bandwidth, fit_alpha_beta
from reportgen.analysis.model.patterns import Pattern
from reportgen.analysis.model.prediction import predict
from reportgen.errors import InputError
from tests.conftest import make_project

ALPHA, BETA = 1e-3, 10e-3


def project(extra: str = "", **fields: str):
    settings = {"t_comp": "1 s", "alpha": "1 ms", "beta": "10 ms", **fields}
    body = ", ".join(f"{k}: {v}" for k, v in settings.items())
    return make_project(f"project: {{title: T}}\nprediction: {{{body}}}\n{extra}")


@pytest.mark.parametrize(("pattern", "p", "expected"), [
    # ring: α(p − 1) + 2β(p − 1)/p; p = 4: 3 ms + 15 ms
    (Pattern("ring"), 4, 3 * ALPHA + 2 * BETA * 3 / 4),
    # tree: 2α⌈log2 p⌉ + 2β; p = 5: ⌈log2 5⌉ = 3
    (Pattern("tree"), 5, 2 * ALPHA * 3 + 2 * BETA),
    (Pattern("tree"), 8, 2 * ALPHA * 3 + 2 * BETA),
    # parameter server with S = 4: 2α + 2βp/S; p = 16: 2 ms + 80 ms
    (Pattern("parameter-server", servers=4), 16, 2 * ALPHA + 2 * BETA * 16 / 4),
    # scatter-gather: 2[(p − 1)α + β(p − 1)/p]
    (Pattern("scatter-gather"), 4, 2 * (3 * ALPHA + BETA * 3 / 4)),
    # gossip with k = 3: min(k, p − 1)(α + β): a node of 2 has one peer; from p = 4 on, k
    (Pattern("gossip", peers=3), 2, 1 * (ALPHA + BETA)),
    (Pattern("gossip", peers=3), 4, 3 * (ALPHA + BETA)),
    (Pattern("gossip", peers=3), 1000, 3 * (ALPHA + BETA)),
    # sharded (FSDP, ZeRO-3): 3[(p − 1)α + β(p − 1)/p]
    (Pattern("sharded"), 8, 3 * (7 * ALPHA + BETA * 7 / 8)),
    # all-to-all with E = 4: E[(p − 1)α + β(p − 1)/p]
    (Pattern("all-to-all", exchanges=4), 8, 4 * (7 * ALPHA + BETA * 7 / 8)),
])
def test_every_pattern_by_hand(pattern: Pattern, p: int, expected: float) -> None:
    assert pattern.t_comm(p, ALPHA, BETA) == pytest.approx(expected)
    assert pattern.t_comm(1, ALPHA, BETA) == 0.0  # one node communicates with no one


@pytest.mark.parametrize("name", ["ring", "tree", "parameter-server", "scatter-gather", "gossip", "sharded",
                                  "all-to-all"])
def test_the_prediction_uses_the_declared_pattern_at_every_node_count(name: str) -> None:
    extra = "exchanges: 4" if name == "all-to-all" else None
    fields = {"pattern": name, "max_nodes": "64", **({"exchanges": "4"} if extra else {})}
    result = predict(project(**fields))
    assert result.pattern.name == name and result.pattern_source == "prediction.pattern"
    pattern = Pattern(name, exchanges=4 if extra else 1)
    for row in result.rows:
        assert row.t_comm_s == pytest.approx(pattern.t_comm(row.nodes, ALPHA, BETA), abs=1e-15)
        assert row.t_step_s == pytest.approx(1.0 / row.nodes + row.t_comm_s)
    best = min(range(1, 65), key=lambda p: (1.0 / p + pattern.t_comm(p, ALPHA, BETA), p))
    assert result.p_star == best
    assert result.formula == pattern.formula
    # beyond the evaluated range (a planned 200 nodes) the same formula answers
    assert result.at(200).t_comm_s == pytest.approx(pattern.t_comm(200, ALPHA, BETA))


def test_a_parameter_server_has_a_finite_optimum_without_latency() -> None:
    # α = 0, S = 4, T_comp = 1 s, β = 10 ms: T_p = 1/p + 2βp/S, p* ≈ √(S·T_comp/(2β)) = √200 = 14.1
    result = predict(project(pattern="parameter-server", servers="4", alpha="0 s"))
    assert result.continuous_optimum_nodes == pytest.approx(math.sqrt(4 * 1.0 / (2 * BETA)))
    assert result.p_star == 14  # T(14) = 0.07143 + 0.07 = 0.14143 < T(15) = 0.06667 + 0.075 = 0.14167
    assert result.rule_of_thumb_nodes is None  # the ring's rule of thumb is not offered to another pattern
    assert result.usl_sigma is None and result.usl_kappa is None
    # the cost grows with p: communication-dominated from R(p) = (2βp/S)/(1/p) ≥ 1, p² ≥ 200: p = 15
    assert result.p_comm_dominated == 15


def test_gossip_is_flat_and_has_no_communication_dominated_point_when_cheap() -> None:
    # k(α + β) = 2 × 11 ms = 22 ms < T_comp/p = 1/p for p ≤ 45: with max_nodes 40, R < 1 everywhere
    result = predict(project(pattern="gossip", max_nodes="40"))
    assert len({round(row.t_comm_s, 12) for row in result.rows if row.nodes > 2}) == 1  # flat once p > k = 2
    assert result.p_comm_dominated is None
    assert result.p_star == 40  # T_p keeps falling: the optimum is the range's end
    assert result.capped and result.continuous_optimum_nodes == math.inf


@pytest.mark.parametrize(("pattern", "expected"), [
    (Pattern("ring"), math.sqrt((1.0 - 2 * BETA) / ALPHA)),
    (Pattern("scatter-gather"), math.sqrt((1.0 - 2 * BETA) / (2 * ALPHA))),
    (Pattern("sharded"), math.sqrt((1.0 - 3 * BETA) / (3 * ALPHA))),
    (Pattern("all-to-all", exchanges=4), math.sqrt((1.0 - 4 * BETA) / (4 * ALPHA))),
    (Pattern("tree"), math.log(2) / (2 * ALPHA)),
    (Pattern("parameter-server", servers=2), math.sqrt(2 / (2 * BETA))),
])
def test_the_continuous_optimum_is_where_the_derivative_vanishes(pattern: Pattern, expected: float) -> None:
    assert pattern.continuous_optimum(1.0, ALPHA, BETA) == pytest.approx(expected)
    p = np.array([expected * 0.999, expected, expected * 1.001])
    a, b = pattern.coefficients(p)
    step = 1.0 / p + ALPHA * a + BETA * b
    if pattern.name != "tree":  # the tree's ⌈log2 p⌉ is stepped; its optimum treats it as continuous
        assert step[1] <= step[0] and step[1] <= step[2]


@pytest.mark.parametrize("pattern", [Pattern("ring"), Pattern("tree"), Pattern("parameter-server", servers=4),
                                     Pattern("scatter-gather"), Pattern("sharded"),
                                     Pattern("all-to-all", exchanges=4)])
def test_the_fit_is_least_squares_of_the_patterns_own_formula(pattern: Pattern) -> None:
    nodes = [2, 3, 8, 16, 64]
    times = [pattern.t_comm(p, 2e-5, 0.04) for p in nodes]
    fit = fit_alpha_beta(nodes, times, coefficients=pattern.coefficients)
    assert fit is not None
    assert fit.alpha_s == pytest.approx(2e-5, rel=1e-6) and fit.beta_s == pytest.approx(0.04, rel=1e-6)
    # nccl-tests' sizes too: t = α·a(p) + b(p)·n/B with B = 10 GB/s, β = message / B
    sizes = [2**26, 2**28]
    points = [(p, n, 2e-5 * pattern.coefficients(np.array([p]))[0][0]
               + pattern.coefficients(np.array([p]))[1][0] * n / 1e10) for p in (2, 8) for n in sizes]
    sized = fit_alpha_bandwidth([p for p, _, _ in points], [n for _, n, _ in points], [t for _, _, t in points],
                                message_bytes=2**28, coefficients=pattern.coefficients)
    assert sized is not None and sized.bandwidth_bytes_per_s == pytest.approx(1e10, rel=1e-6)


def test_gossip_cannot_tell_alpha_from_beta() -> None:
    pattern = Pattern("gossip")
    assert fit_alpha_beta([2, 8, 32], [0.02, 0.02, 0.02], coefficients=pattern.coefficients) is None


def test_the_pattern_comes_from_the_communication_slot_and_prediction_pattern_overrides() -> None:
    slot = "design: {slots: {communication: {choice: parameter server}}}"
    assert predict(project(slot)).pattern.name == "parameter-server"
    assert predict(project(slot)).pattern_source == "design.slots.communication"
    assert predict(project(slot, pattern="tree")).pattern.name == "tree"
    hybrid = predict(project("design: {slots: {communication: {choice: [all-reduce, gossip]}}}"))
    assert hybrid.pattern.name == "ring" and "hybrid" in (hybrid.pattern_note or "")
    stage_three = predict(project("design: {nodes: 2, parallelism: {zero_stage: 3}}"))
    assert stage_three.pattern.name == "sharded" and stage_three.pattern_source == "design.parallelism"


def test_the_ring_default_leaves_every_number_as_it_was() -> None:
    result = predict(project())
    assert result.pattern.name == "ring" and result.pattern_source == "default"
    assert result.p_star == 31 and result.rule_of_thumb_nodes == pytest.approx(math.sqrt(1000))


def test_all_to_all_needs_its_exchanges() -> None:
    with pytest.raises(InputError, match="exchanges"):
        project(pattern="all-to-all")


def test_the_model_check_compares_every_pattern_with_the_measurements() -> None:
    runs = "scaling: {runs: [{nodes: 1, time: 1 s}, {nodes: 4, time: 0.4 s}, {nodes: 8, time: 0.3 s}]}"
    analysis = analyze(project(runs, pattern="parameter-server", servers="2"))
    check = analysis.model_check
    pattern = Pattern("parameter-server", servers=2)
    predicted = {p: 1.0 / (1.0 / p + pattern.t_comm(p, ALPHA, BETA)) for p in (4, 8)}
    measured = {4: 2.5, 8: 1 / 0.3}
    departure = max(abs(predicted[p] - measured[p]) / measured[p] for p in (4, 8))
    assert check is not None and check.model_departure == pytest.approx(departure)
    written = sections_values(analysis)["prediction"]  # results.json's prediction section carries it too
    assert written is not None and written.model_departure == check.model_departure
    assert check.sigma_model is None  # σ, κ only for the ring


def test_a_parameter_server_report_names_its_pattern_formula_and_optimum(tmp_path) -> None:
    import html as html_module
    import re
    from pathlib import Path

    from reportgen.pipeline import BuildOptions, build

    inputs = Path(__file__).resolve().parent.parent / "inputs"
    build(inputs / "parameter-server.yaml", BuildOptions(out_root=tmp_path, formats=("html",)))
    raw = (tmp_path / "parameter-server" / "report.html").read_text(encoding="utf-8")
    page = " ".join(html_module.unescape(re.sub(r"<[^>]+>", "", raw)).split())
    assert "(parameter server, 4 servers): T_comm(p) = 2α + 2βp/S, S = 4" in page
    assert "read from design.slots.communication" in page
    # p* ≈ √(S·T_comp/(2β)) = √(4 × 2.4 / 0.256) = 6.12; the whole optimum is 6
    assert "The continuous optimum of this pattern, √(S·T_comp/(2β)), lies at 6.12 nodes" in page
    assert "p* = 6" in page and "√(T_comp/α) gives" not in page  # no ring rule of thumb for another pattern
    assert "The USL equivalence (σ = 2β/T_comp, κ = α/T_comp) holds for the ring only" in page


def test_a_communication_loss_gets_the_patterns_own_remedy() -> None:
    runs = ("scaling: {runs: [{nodes: 1, time: 36000 s}, {nodes: 2, time: 20400 s}, {nodes: 4, time: 13300 s}, "
            "{nodes: 8, time: 12900 s}, {nodes: 16, time: 18600 s}]}")
    server = analyze(project(runs, pattern="parameter-server", servers="4")).scaling
    ring = analyze(project(runs)).scaling
    assert server is not None and ring is not None and server.knee_cause == ring.knee_cause == "communication"
    assert server.remedy is not None and "more parameter servers" in server.remedy
    assert ring.remedy is not None and "parameter servers" not in ring.remedy
