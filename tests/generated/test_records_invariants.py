"""Page 1 of a service judged from its requests, held on load tests nobody wrote
(docs/methods.md#a-service-judged-from-its-requests): scales of a seeded stand-in server (tests/serving/simulate.py)
load-tested at drawn fractions of their capacity, against drawn objectives, target shares, needs and plans. Each
project keeps page 1's rules (tests/generated/page_one_invariants.py), and the curves and the plan's verdict keep
theirs: a max load never past the loads measured, inside its own interval, a verdict its interval decides. The fast
tier tries 12 projects; the whole suite 60 more (slow)."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from reportgen.analysis import analyze
from reportgen.project.load_tests import LoadPoint, RecordedPoint
from reportgen.project.loader import load_project_text
from reportgen.project.records import RecordsLine
from reportgen.render.results import dumps, results_document
from tests.conftest import FAST, ROOT
from tests.generated.page_one_invariants import check_page_one
from tests.serving.simulate import load_test
from tests.test_serving_records import SERVICE

SLOTS_PER_NODE = 6
SECONDS_PER_REQUEST = 3.26  # the stand-in holds a slot about this long: capacity ≈ slots / 3.26 request/s
REQUESTS = 800
LINE = RecordsLine("vllm-detailed", "-", "f.json", "0" * 64, 1, 1, "open", None, None, None, 0, 0, 0.0, 0, "server",
                   True, False, None, False, "s.npz")


@dataclass(frozen=True)
class RecordedService:
    """A service's load tests, its objectives and its goal, as drawn."""

    scales: tuple[int, ...]
    fractions: tuple[float, ...]  # each load as a share of the scale's capacity
    target: float
    objectives: tuple[float, float, float]  # TTFT, TPOT, E2E (s)
    need_per_s: float
    plan: int
    seed: int

    def recorded(self) -> tuple[RecordedPoint, ...]:
        return tuple(RecordedPoint(float(nodes), LINE, LoadPoint(
            "vllm-detailed", load_test(REQUESTS, rate, slots=SLOTS_PER_NODE * nodes, seed=self.seed + index),
            "open", rate, None, True, False, "server"))
            for index, (nodes, rate) in enumerate((nodes, capacity(nodes) * fraction) for nodes in self.scales
                                                  for fraction in self.fractions))

    def project_text(self, recorded: tuple[RecordedPoint, ...]) -> str:
        ttft, tpot, e2e = self.objectives
        runs = []
        for nodes in self.scales:  # each scale's row: what its highest load completed (its summary column)
            highest = max((entry for entry in recorded if entry.nodes == nodes),
                          key=lambda entry: entry.point.offered_per_s or 0.0)
            requests = highest.point.requests
            done = requests.send_s + requests.e2e_s
            runs.append(f"{{nodes: {nodes}, throughput: {requests.count / float(done.max()):.6g} request/s}}")
        text = SERVICE.format(load=f"{self.need_per_s!r} request/s", plan=self.plan)  # the tests' service, drawn
        for written, drawn in (("attainment: 99 %", f"attainment: {100 * self.target:g} %"),
                               ("latency: {ttft: 250 ms, tpot: 30 ms, e2e: 6 s}",
                                f"latency: {{ttft: {ttft:g} s, tpot: {tpot:g} s, e2e: {e2e:g} s}}"),
                               ("scaling:\n  file: runs.csv\n", f"scaling:\n  runs: [{', '.join(runs)}]\n")):
            assert written in text, written
            text = text.replace(written, drawn)
        return text


def capacity(nodes: int) -> float:
    return SLOTS_PER_NODE * nodes / SECONDS_PER_REQUEST


@st.composite
def recorded_services(draw: st.DrawFn) -> RecordedService:
    scales = tuple(sorted(draw(st.lists(st.sampled_from([1, 2, 4, 8]), min_size=1, max_size=3, unique=True))))
    fractions = tuple(sorted(draw(st.lists(st.sampled_from([0.3, 0.5, 0.7, 0.85, 0.95, 1.05]), min_size=2,
                                           max_size=4, unique=True))))
    between = {(a + b) // 2 for a, b in itertools.pairwise(scales) if a < (a + b) // 2 < b}  # interpolated
    plan = draw(st.sampled_from(sorted({*scales, *between})))
    # never one of the loads tested: a need equal to a load measured is decided by that point alone
    need = capacity(plan) * draw(st.sampled_from([0.35, 0.6, 0.8, 0.9, 1.0, 1.2]))
    objectives = (draw(st.sampled_from([0.25, 0.5, 1.0])), draw(st.sampled_from([0.025, 0.03, 0.04])),
                  draw(st.sampled_from([5.0, 6.0, 8.0])))
    return RecordedService(scales, fractions, draw(st.sampled_from([0.9, 0.95, 0.99])), objectives, need, plan,
                           draw(st.integers(0, 10**6)))


def check_recorded_service(service: RecordedService) -> None:
    recorded = service.recorded()
    text = service.project_text(recorded)
    note(f"# the project (its load tests: {service}):\n{text}")
    loaded = load_project_text(text, ROOT / "generated.yaml", "generated.yaml")
    analysis = analyze(loaded.project, recorded=recorded)
    assert analysis.serving is not None and analysis.serving.goodput is not None
    goodput = analysis.serving.goodput
    for curve in goodput.by_scale:  # never past the loads measured; inside its own interval
        loads = [entry.point.offered_per_s for entry in recorded if entry.nodes == curve.nodes]
        if curve.max_load_per_s is not None:
            assert min(loads) - 1e-9 <= curve.max_load_per_s <= max(loads) + 1e-9, (curve, loads)
        low, high = curve.max_load_ci
        if curve.bound is None and curve.max_load_per_s is not None and low is not None and high is not None:
            assert low - 1e-9 <= curve.max_load_per_s <= high + 1e-9, curve
    plan = goodput.at_plan
    assert plan is not None
    low, high = plan.max_load_ci
    exact = any(entry.nodes == service.plan and abs((entry.point.offered_per_s or 0) - service.need_per_s)
                <= 1e-9 * service.need_per_s for entry in recorded)
    need = service.need_per_s
    if plan.verdict == "met" and not exact:  # decided by its interval, clear of the need
        assert low is not None and need <= low * (1 + 1e-9), plan
    if plan.verdict == "missed" and not exact:  # past the high end (or at a bound below, past the load that missed)
        assert high is not None and (need > high or (plan.max_load_per_s is not None
                                                     and need >= plan.max_load_per_s)), plan
    if plan.verdict is None and plan.max_load_per_s is not None and not exact:
        assert plan.why_unjudged, plan
    summary = analysis.summary
    assert summary is not None
    if plan.verdict != "met":  # page 1 never says met where the requests do not
        assert summary.state != "met", (summary.verdict, plan)
    document = json.loads(dumps(results_document(loaded, analysis)))
    check_page_one(loaded.project, analysis, document, recorded)


_SETTINGS = {"deadline": None, "derandomize": True, "suppress_health_check": [HealthCheck.too_slow]}


@pytest.mark.skipif(not FAST, reason="the whole suite runs the deep tier's projects instead")
@settings(max_examples=12, **_SETTINGS)  # type: ignore[arg-type]
@given(recorded_services())
def test_page_one_holds_on_generated_services_judged_from_their_requests(service: RecordedService) -> None:
    check_recorded_service(service)


@pytest.mark.slow
@pytest.mark.skipif(FAST, reason="the deep tier")
@settings(max_examples=72, **_SETTINGS)  # type: ignore[arg-type]
@given(recorded_services())
def test_page_one_holds_on_many_generated_services_judged_from_their_requests(service: RecordedService) -> None:
    check_recorded_service(service)
