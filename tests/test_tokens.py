"""Services measured in tokens: the unit kept, several latency objectives, serves as true, false or "not
known", the replica's memory with its KV cache, and money per million of the load's unit. Hand-worked numbers."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from reportgen.analysis import analyze
from reportgen.project.units import work_unit
from tests.conftest import make_project

INPUTS = Path(__file__).resolve().parent.parent / "inputs"

SERVICE = """project:
  title: Tokens
  workload: inference
  goal: {{load: 120000 token/s, headroom: 0.15, latency: {{ttft_p99: 1.5 s, tpot_p99: 120 ms}}{cost}}}
hardware: {{devices_per_node: 8, device_memory: 80 GB}}
baseline:
  memory: {{parameters: 70e9}}
  serving: {{kv_bytes_per_token: 327680 B, tokens_in_flight: 1.2e6}}
design: {{nodes: {plan}}}
scaling:
  runs:
    - {{nodes: 8, throughput: 38000 token/s, ttft_p99: 1.15 s, tpot_p99: 88 ms}}
    - {{nodes: 16, throughput: 74000 token/s, ttft_p99: 1.22 s, tpot_p99: 92 ms}}
    - {{nodes: 24, throughput: 108000 token/s, ttft_p99: 1.38 s, tpot_p99: 97 ms}}
{more}"""


def service(plan: int = 32, more: str = "", cost: str = ""):
    return analyze(make_project(SERVICE.format(plan=plan, more=more, cost=cost)))


def test_the_need_includes_the_headroom_in_the_loads_own_unit() -> None:
    serving = service().serving
    assert serving is not None and serving.unit == "token"
    assert serving.capacity_needed_per_s == pytest.approx(120000 * 1.15)  # 138,000 token/s
    assert serving.need_words.startswith("138,000 tokens/s within a p99 time to first token of 1.5 s")


@pytest.mark.parametrize(("text", "unit"), [("138000 token/s", "token"), ("12 tps", "token"), ("40 req/s", "request"),
                                            ("50 qps", "request"), ("2000 sequences/s", "sequence"),
                                            ("2000 1/s", None), ("9 FLOP/s", None)])
def test_the_work_unit_is_read_as_written(text: str, unit: str | None) -> None:
    assert work_unit(text) == unit


def test_serves_is_true_false_or_not_known() -> None:
    serving = service().serving
    assert serving is not None
    rows = {row.nodes: row for row in serving.rows}
    # measured: 108,000 < 138,000 at 24 nodes: false, whatever the latencies (all met there)
    assert rows[24].serves is False and rows[24].meets_latency is True
    # the plan, 32 nodes, lies past the largest load test: capacity from the USL fit, TTFT and TPOT unknown there:
    # not known, never true
    assert rows[32].capacity_source == "fitted" and rows[32].meets_load is True
    assert rows[32].ttft_p99_s is None and rows[32].serves is None
    assert rows[32].unknown == ("ttft_p99", "tpot_p99")
    # so nodes to serve is the fitted capacity's alone, labelled
    assert serving.nodes_to_serve_source == "fitted" and serving.capacity_only
    assert serving.met_at_plan is None


def test_an_interpolated_objective_decides_between_measured_scales() -> None:
    # a fourth load test at 40 nodes: 32 now lies between 24 and 40, so its TTFT is interpolated
    more = "    - {nodes: 40, throughput: 170000 token/s, ttft_p99: 1.62 s, tpot_p99: 104 ms}\n"
    serving = service(more=more).serving
    assert serving is not None
    row = next(r for r in serving.rows if r.nodes == 32)
    # TTFT at 32 = 1.38 + (1.62 − 1.38) × (32 − 24)/(40 − 24) = 1.50 s: met at the limit; TPOT 100.5 ms
    assert row.ttft_source == "interpolated" and row.ttft_p99_s == pytest.approx(1.50)
    assert row.tpot_p99_s == pytest.approx(100.5e-3)
    assert row.serves is True
    # 40 nodes, measured: capacity met but TTFT 1.62 s over 1.5 s: false
    assert next(r for r in serving.rows if r.nodes == 40).serves is False
    # at 36 nodes TTFT is 1.56 s: interpolated and over the objective, so false, not "not known"
    assert service(plan=36, more=more).serving.plan_row.serves is False  # type: ignore[union-attr]


def test_the_replica_holds_its_weights_and_kv_cache() -> None:
    serving = service().serving
    assert serving is not None and serving.replica is not None
    replica = serving.replica
    assert replica.weights_b == pytest.approx(70e9 * 2)  # 2 B per parameter for a service, not Adam's 16
    assert replica.kv_b == pytest.approx(327680 * 1.2e6)  # 393 GB
    assert replica.devices == 7 and replica.replicas_per_node == 1  # ceil(533.2 / 80)
    analysis = service()
    assert analysis.diagnosis is not None
    assert ("KV cache", pytest.approx(327680 * 1.2e6)) in analysis.diagnosis.memory_stack


def test_a_replica_larger_than_a_node_is_an_error() -> None:
    text = SERVICE.format(plan=32, more="", cost="").replace("tokens_in_flight: 1.2e6", "tokens_in_flight: 2e6")
    analysis = analyze(make_project(text))
    finding = next(f for f in analysis.findings if f.code == "replica-exceeds-node")
    assert finding.severity == "error" and "needs 10 devices" in finding.message  # (140 + 655) GB / 80 GB
    assert analysis.summary is not None and analysis.summary.blocker is not None


def test_money_per_million_tokens() -> None:
    more = "pricing: {node_hour: 55.04 USD}\n"
    serving = service(more=more).serving
    assert serving is not None
    row = next(r for r in serving.rows if r.nodes == 24)
    # 24 × 55.04 = 1,320.96 USD an hour over 120,000 tokens/s × 3600 s: 3.0578 USD per million tokens
    assert row.cost_per_million == pytest.approx(24 * 55.04 / (120000 * 3600) * 1e6)


def test_a_request_service_is_named_as_before_and_a_token_service_never_says_request(tmp_path) -> None:
    from reportgen.pipeline import BuildOptions, build

    build(INPUTS / "llm-service.yaml", BuildOptions(out_root=tmp_path, formats=("html",)))
    raw = (tmp_path / "llm-service" / "report.html").read_text(encoding="utf-8")
    body = re.sub(r"<script.*?</script>|<style.*?</style>", "", raw, flags=re.S)
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())
    for sentence in re.findall(r"[^.]*\brequests?/s[^.]*|[^.]*million requests[^.]*", text):
        pytest.fail(f"a token service's report names its load in requests: {sentence}")
    assert "per million tokens" in text and "138,000 tokens/s" in text
    assert "a load test at 32 nodes that measures it would decide" in text
    analysis = analyze(make_project((INPUTS / "inference-service.yaml").read_text(encoding="utf-8")))
    assert analysis.serving is not None and analysis.serving.unit == "request"
    assert analysis.serving.need_words == "57,500 requests/s within a p99 of 20 ms"
