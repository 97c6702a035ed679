"""Arithmetic cannot go untested: every analysis of the registry has a test worked by hand (`@worked`, tests/worked.py),
and every field of the project file is used by an example or a test. Then the worked cases of the energy-delay
product (methods.md#energy-delay-product), the analysis docs/architecture.md's recipe was followed for, and of two
fields nothing else used."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from reportgen.analysis import DECLARED, REGISTRY, analyze
from reportgen.analysis.energy_delay import ANALYSIS as ENERGY_DELAY
from reportgen.analysis.energy_delay import plots
from reportgen.project.carbon import Intensity
from reportgen.project.model import Project
from reportgen.project.spec import Items, Section, spec_fields
from tests.conftest import INPUTS, ROOT, make_project
from tests.worked import worked

TESTS = ROOT / "tests"


def analyses() -> set[str]:
    """Every analysis of the registry: the core's fields and the declared analyses' keys."""
    return {step.name for step in REGISTRY if step.name != "declared"} | {declared.key for declared in DECLARED}


def worked_cases(sources: dict[str, str]) -> dict[str, list[str]]:
    """Each analysis named by a `@worked(...)` mark in the given test sources, with the tests that carry it."""
    found: dict[str, list[str]] = {}
    for name, source in sources.items():
        for names, test in re.findall(r"^@worked\(([^)]*)\)\n(?:@.*\n)*def (\w+)", source, flags=re.M):
            for analysis in re.findall(r'"(\w+)"', names):
                found.setdefault(analysis, []).append(f"{name}::{test}")
    return found


def sources_of_tests() -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(TESTS.glob("test_*.py"))}


def test_every_analysis_has_a_hand_worked_test() -> None:
    cases = worked_cases(sources_of_tests())
    assert not analyses() - set(cases), f"no hand-worked test (@worked) for {sorted(analyses() - set(cases))}"
    assert not set(cases) - analyses(), f"@worked names no analysis: {sorted(set(cases) - analyses())}"


def test_the_worked_case_check_can_fail() -> None:
    source = '@worked("cost")\n@pytest.mark.slow\ndef test_a() -> None:\n    pass\n'
    assert worked_cases({"a.py": source}) == {"cost": ["a.py::test_a"]}
    assert worked_cases({"a.py": source.replace("@worked", "# @worked")}) == {}


def field_paths(cls: type = Project, prefix: str = "") -> Iterator[str]:
    """Every leaf field of the project file, as a dotted path (`scaling.runs[].time`)."""
    for name, spec, _ in spec_fields(cls):
        inner = spec.cls if isinstance(spec, Section) else (
            spec.item.cls if isinstance(spec, Items) and isinstance(spec.item, Section) else None)
        if inner is None:
            yield f"{prefix}{name}"
        else:
            yield from field_paths(inner, f"{prefix}{name}{'[].' if isinstance(spec, Items) else '.'}")


def unused_fields(corpus: str) -> list[str]:
    """The fields whose name appears nowhere in the corpus as a YAML key (`name:`) or a CSV column (`name [unit]`,
    in a file or in a test's string, where a line ends in `\\n`)."""
    missing = []
    for path in field_paths():
        name = re.escape(path.rsplit(".", 1)[-1])
        if not re.search(rf"(^|[\s{{,\"'])({name})[\"']?\s*:|(^|,){name}( \[[^\]]*\])?(,|$|\\n)", corpus, flags=re.M):
            missing.append(path)
    return missing


def test_every_input_field_is_used_by_an_example_or_a_test() -> None:
    corpus = "\n".join(path.read_text(encoding="utf-8", errors="replace")
                       for pattern in ("inputs/**/*.yaml", "inputs/**/*.csv", "tests/**/*.py", "tests/**/*.yaml",
                                       "tests/**/*.csv") for path in ROOT.glob(pattern))
    assert len(list(field_paths())) > 100
    assert unused_fields(corpus) == []
    assert "energy.pue" in unused_fields(corpus.replace("pue", "p_u_e"))  # the check can fail


TIMES = """
project: {title: T}
scaling:
  runs: [{nodes: 1, time: 1000 s}, {nodes: 2, time: 600 s}, {nodes: 4, time: 450 s}]
energy: {node_power: 500 W, pue: 1.2}
"""


@worked("energy_delay")
def test_the_energy_delay_products_by_hand() -> None:
    # E(p) = PUE · p · 500 W · T(p): 1.2 × 500 × 1,000 = 600,000 J; 1.2 × 2 × 500 × 600 = 720,000 J;
    # 1.2 × 4 × 500 × 450 = 1,080,000 J.
    # E·T: 6.0e8, 4.32e8, 4.86e8 J·s: the least at 2 nodes. E·T²: 6.0e11, 2.592e11, 2.187e11 J·s²: at 4 nodes.
    result = ENERGY_DELAY.of(analyze(make_project(TIMES)))
    assert result is not None and not result.per_unit_of_work
    assert [row.nodes for row in result.rows] == [1, 2, 4]
    assert [row.energy_j for row in result.rows] == pytest.approx([600_000, 720_000, 1_080_000], rel=1e-12)
    assert [row.time_s for row in result.rows] == [1000, 600, 450]
    assert [row.edp for row in result.rows] == pytest.approx([6.0e8, 4.32e8, 4.86e8], rel=1e-12)
    assert [row.ed2p for row in result.rows] == pytest.approx([6.0e11, 2.592e11, 2.187e11], rel=1e-12)
    assert (result.edp_optimal_nodes, result.ed2p_optimal_nodes) == (2, 4)
    # the figure: both products relative to 1 node's, the least E·T starred at 2 nodes (4.32e8 / 6.0e8 = 0.72)
    (plot,) = plots(result)
    assert plot.series[0].y == pytest.approx((1.0, 0.72, 0.81)) and plot.series[1].y == pytest.approx(
        (1.0, 0.432, 0.3645))
    assert plot.marked is not None and plot.marked[:2] == pytest.approx((2.0, 0.72))


def test_energy_delay_ties_go_to_the_fewer_nodes_and_a_wrong_energy_is_left_out() -> None:
    # 2 nodes: 4.32e8 J·s; 4 nodes at √180,000 = 424.2641 s: 1.2 × 4 × 500 × 180,000 = 4.32e8 J·s, a tie
    tied = ENERGY_DELAY.of(analyze(make_project(TIMES.replace("450 s", "424.26406871192853 s"))))
    assert tied is not None and tied.rows[2].edp == pytest.approx(tied.rows[1].edp, rel=1e-12)
    assert tied.edp_optimal_nodes == 2
    # 2 nodes measured at 0.001 kWh over 600 s: below what two nodes draw waiting, so it cannot be right
    wrong = TIMES.replace("{nodes: 2, time: 600 s}", "{nodes: 2, time: 600 s, energy: 0.001 kWh}").replace(
        "node_power: 500 W", "node_power: 500 W, wait_power: 300 W")
    result = ENERGY_DELAY.of(analyze(make_project(wrong)))
    assert result is not None and [row.excluded for row in result.rows] == [False, True, False]
    assert result.edp_optimal_nodes == 4  # 4.86e8 against 1 node's 6.0e8, the 2-node row left out


def test_no_energy_or_a_service_has_no_energy_delay_product() -> None:
    assert ENERGY_DELAY.of(analyze(make_project(TIMES.replace("energy: {node_power: 500 W, pue: 1.2}", "")))) is None
    service = analyze(make_project((INPUTS / "inference-service.yaml").read_text(encoding="utf-8")))
    assert ENERGY_DELAY.of(service) is None


def test_the_carbon_limit_of_a_decision_by_hand() -> None:
    # energy p·T·1 kW: 8, 8.4, 9.6, 12.8 kWh at 1, 2, 4, 8 nodes; at 100 g/kWh 0.8, 0.84, 0.96, 1.28 kg CO2e.
    # The fastest within 0.9 kg: 2 nodes (4.2 h); 4 nodes (0.96 kg) is over the limit.
    text = """
project: {title: T}
scaling:
  time_unit: h
  runs: [{nodes: 1, time: 8}, {nodes: 2, time: 4.2}, {nodes: 4, time: 2.4}, {nodes: 8, time: 1.6}]
energy: {node_power: 1 kW}
decisions:
  - {name: capped, optimize: time, max_co2: 0.9 kg}
"""
    decision = analyze(make_project(text), intensity=Intensity(100.0, "given")).decisions.decisions[0]
    assert decision.nodes == 2 and decision.within_limits
    assert decision.limits.max_co2_kg == pytest.approx(0.9)


def test_the_size_aware_fit_starts_at_the_floor_it_is_given() -> None:
    # A ring of α = 10 µs and B = 10 GB/s: t = α(p − 1) + 2(p − 1)/p · n / B. At 1 and 2 GB the times are exact
    # (2 nodes: 0.10001 s and 0.20001 s; 4 nodes: 0.15003 s and 0.30003 s); the 1 MB messages take 1 and 2 ms, not
    # the line's 0.11 and 0.18 ms (another protocol). The default floor is the size nearest the 1 MB message, so
    # every point is used and the line bends; fit_min_bytes: 1 GB leaves the small ones out and finds α and B.
    collectives = ("[{nodes: 2, bytes: 1 MB, time: 1 ms}, {nodes: 4, bytes: 1 MB, time: 2 ms}, "
                   "{nodes: 2, bytes: 1 GB, time: 0.10001 s}, {nodes: 2, bytes: 2 GB, time: 0.20001 s}, "
                   "{nodes: 4, bytes: 1 GB, time: 0.15003 s}, {nodes: 4, bytes: 2 GB, time: 0.30003 s}]")
    text = f"project: {{title: T}}\nprediction: {{t_comp: 10 s, message_bytes: 1 MB, collectives: {collectives}}}\n"
    default = analyze(make_project(text)).prediction
    floored = analyze(make_project(text.replace("message_bytes: 1 MB", "message_bytes: 1 MB, fit_min_bytes: 1 GB")))
    fit = floored.prediction.fit
    assert fit is not None and fit.min_bytes == pytest.approx(1e9) and fit.points == 4
    assert fit.alpha_s == pytest.approx(10e-6, rel=1e-6) and fit.bandwidth_bytes_per_s == pytest.approx(1e10, rel=1e-9)
    assert fit.beta_s == pytest.approx(1e6 / 1e10, rel=1e-9)  # β = message bytes / B
    assert default.fit is not None and default.fit.points == 6 and abs(default.fit.alpha_s - 10e-6) > 1e-6


def test_the_recipe_analysis_is_found_without_being_listed() -> None:
    """The registry finds energy_delay from its module's `ANALYSIS = Declared(...)`: no list names it."""
    assert ENERGY_DELAY in DECLARED
    registry = (ROOT / "reportgen" / "analysis" / "__init__.py").read_text(encoding="utf-8")
    assert "energy_delay" not in registry
    assert Path(ENERGY_DELAY.run.__code__.co_filename).name == "energy_delay.py"
