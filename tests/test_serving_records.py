"""A service judged from its load tests' requests, end to end (methods.md#a-service-judged-from-its-requests):
the project's objectives, a point judged after its checks, the records line and store, the load curves and the
verdict at the plan, and `ingest serving` of a per-request file into a project that `build` then judges, the same
number written by both."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import t as student

from reportgen.analysis.measured.load_point import Judgement, judge_point, judgement_of
from reportgen.analysis.measured.requests import (
    Objectives,
    repeats_interval,
    requests_needed,
    t_quantile_95,
    with_few_exceptions,
)
from reportgen.analysis.verdict.goodput import judge_records
from reportgen.errors import InputError
from reportgen.ingest.records_store import archive as store_bytes
from reportgen.ingest.records_store import read_store, write_store
from reportgen.project.load_tests import LoadPoint, RecordedPoint, Requests
from reportgen.project.loader import load_project_text
from reportgen.project.model import Run, capacity_runs
from reportgen.project.records import RecordsLine
from tests.conftest import ROOT
from tests.serving.simulate import load_test

OBJECTIVES = Objectives(ttft_s=0.25, tpot_s=0.030, e2e_s=6.0)  # the stand-in's TPOT: 20 ms·LogN(0, 0.1)
AT_99 = Judgement(OBJECTIVES, 0.99, True)

SERVICE = """\
project:
  title: Chat service judged from its requests
  workload: inference
  goal:
    load: {load}
    attainment: 99 %
    latency: {{ttft: 250 ms, tpot: 30 ms, e2e: 6 s}}
hardware:
  name: one GPU node
  peak_compute: 1 PFLOP/s
  memory_bandwidth: 3 TB/s
  memory_capacity: 640 GB
  devices_per_node: 8
  device_memory: 80 GB
  network_bandwidth: 50 GB/s
  network_latency: 5 us
design:
  axis: distribute inference
  nodes: {plan}
scaling:
  file: runs.csv
pricing:
  currency: USD
  node_hour: 40 USD
"""


def run_cli(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reportgen", *arguments], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def point(requests: Requests, rate: float) -> LoadPoint:
    return LoadPoint("vllm-detailed", requests, "open", rate, None, True, False, "server")


# ------------------------------------------------------------------------------------------ the project's fields
def test_the_objectives_and_the_target_share_as_a_project_states_them(tmp_path: Path) -> None:
    text = SERVICE.format(load="6 request/s", plan=1).replace("scaling:\n  file: runs.csv\n", "")
    goal = load_project_text(text, tmp_path / "p.yaml", "p.yaml").project.project.goal
    assert goal is not None and goal.attainment == pytest.approx(0.99)
    judgement = judgement_of(goal)
    assert judgement == Judgement(Objectives(0.25, 0.030, 6.0), pytest.approx(0.99), True)
    assert load_project_text(text.replace("99 %", "0.995"), tmp_path / "p.yaml",
                             "p.yaml").project.project.goal.attainment == 0.995  # type: ignore[union-attr]
    for wrong, message in (("150 %", "between 0 % and 100 %"), ("lots", "99 %")):
        with pytest.raises(InputError, match=message):
            load_project_text(text.replace("99 %", wrong), tmp_path / "p.yaml", "p.yaml")
    with pytest.raises(InputError, match=r"goal\.latency\.ttft is a per-request threshold"):
        load_project_text(text.replace("{ttft: 250 ms,", "{ttft: 250 ms, ttft_p99: 1 s,"), tmp_path / "p.yaml",
                          "p.yaml")
    with pytest.raises(InputError, match=r"state them in goal\.latency"):
        load_project_text(text.replace("    latency: {ttft: 250 ms, tpot: 30 ms, e2e: 6 s}\n", ""),
                          tmp_path / "p.yaml", "p.yaml")
    # p99 objectives alone: each judged from the records at 99 % of requests, one by one
    p99s = text.replace("    attainment: 99 %\n", "").replace("{ttft: 250 ms, tpot: 30 ms, e2e: 6 s}",
                                                              "{ttft_p99: 1 s, tpot_p99: 50 ms}")
    marginal = judgement_of(load_project_text(p99s, tmp_path / "p.yaml",
                                              "p.yaml").project.project.goal)
    assert marginal == Judgement(Objectives(1.0, 0.05, None), 0.99, False)


def test_a_scales_capacity_runs_are_those_at_its_highest_load() -> None:
    runs = (Run(nodes=8, throughput=2.0, offered=2.0), Run(nodes=8, throughput=7.8, offered=8.0),
            Run(nodes=8, throughput=7.7, offered=8.0), Run(nodes=16, throughput=15.0),
            Run(nodes=4, throughput=3.0, concurrency=4), Run(nodes=4, throughput=3.9, concurrency=16))
    assert [(run.nodes, run.throughput) for run in capacity_runs(runs)] == [(8, 7.8), (8, 7.7), (16, 15.0),
                                                                           (4, 3.9)]
    plain = (Run(nodes=1, throughput=1.0), Run(nodes=2, throughput=2.0))
    assert capacity_runs(plain) is plain


# ------------------------------------------------------------------------------------------ the statistics added
def test_a_share_with_few_exceptions_is_not_a_certainty() -> None:
    # 60 of 60 good: Wilson at n = 60, z = 1.6449: (1 + z²/120 − z·√(z²/14400)) / (1 + z²/60) = 1/1.04509 = 0.95686
    low, high = with_few_exceptions(np.ones(60), (1.0, 1.0))
    assert (low, high) == (pytest.approx(60 / (60 + 1.6448536 ** 2), abs=1e-6), 1.0)
    outcomes = np.r_[np.ones(990), np.zeros(10)]  # ten on each side: the bootstrap's own interval stands
    assert with_few_exceptions(outcomes, (0.985, 0.995)) == (0.985, 0.995)
    # all good needs z²·a*/(1 − a*) = 2.7055 × 99 = 267.8 → 268 requests before 99 % is decided
    assert requests_needed(1.0, 0.99) == 268
    assert requests_needed(0.9875, 0.99) == 5344  # the formula's own figure is untouched below the target


def test_students_quantile_and_the_union_of_three_repeats() -> None:
    for degrees in (1, 2, 5, 30, 31, 45, 200):
        assert t_quantile_95(degrees) == pytest.approx(student.ppf(0.95, degrees), abs=1e-4)
    # runs at 98.0, 99.0, 99.6 %: mean 98.8667 %, sd 0.8083 %, t(2) = 2.92 → ± 1.3627 %: [97.504, 100.229] %
    low, high = repeats_interval([0.980, 0.990, 0.996], (0.984, 0.992))
    assert (low, high) == (pytest.approx(0.975040, abs=1e-5), pytest.approx(1.002293, abs=1e-5))


# ------------------------------------------------------------------------------------------ one point judged
def test_a_healthy_point_is_judged_and_its_checks_pass() -> None:
    requests = load_test(2000, 8.0, seed=3)
    facts = judge_point(point(requests, 8.0), AT_99)
    assert facts.valid and not facts.fired and facts.attainment is not None
    good = np.mean(requests.ok & (requests.ttft_s <= 0.25) & (requests.e2e_s <= 6.0)
                   & ((requests.e2e_s - requests.ttft_s) / (requests.output_tokens - 1) <= 0.030))
    assert facts.attainment.joint == pytest.approx(good)
    low, high = facts.attainment.joint_ci
    assert low <= good <= high
    assert facts.verdict == ("met" if low >= 0.99 else "missed" if high < 0.99 else None)
    p99 = facts.quantiles["ttft"][-1]
    assert p99.n == 2000 and p99.value == pytest.approx(np.percentile(requests.ttft_s, 99))


def test_what_each_check_removes_from_the_verdict() -> None:
    # warm-up: the first 200 of 2,000 requests slowed 4×: the first tenth leaves
    slow = judge_point(point(load_test(2000, 8.0, seed=3, slow_first=200), 8.0), AT_99)
    assert [check.code for check in slow.fired] == ["warm-up-in-window"]
    assert slow.kept.count == 1800 and slow.warm_up_left_out == 200 and slow.valid
    # over-saturated at 16 request/s into a capacity of about 14.7: the point leaves
    saturated = judge_point(point(load_test(2000, 16.0, seed=3), 16.0), AT_99)
    assert not saturated.valid and "over-saturated" in {check.code for check in saturated.fired}
    # a client that sent 40 % of the rate it claims
    short = judge_point(point(load_test(1000, 4.0, seed=3), 10.0), AT_99)
    assert not short.valid and "rate-not-reached" in {check.code for check in short.fired}
    # TTFT written as 0 on 3 % of requests (a tool's placeholder): TTFT and TPOT are not measured there
    requests = load_test(1000, 6.0, seed=4)
    requests.ttft_s[::33] = 0.0
    placeholder = judge_point(point(requests, 6.0), AT_99)
    assert placeholder.unmeasured == ("ttft", "tpot") and placeholder.attainment is None
    assert placeholder.verdict is None
    # below 1 %, those requests leave and the point is judged
    requests = load_test(1000, 6.0, seed=4)
    requests.ttft_s[:5] = 0.0
    few = judge_point(point(requests, 6.0), AT_99)
    assert few.kept.count == 995 and few.attainment is not None


# ------------------------------------------------------------------------------------------ the records line and store
def test_the_records_line_reads_back_what_it_wrote() -> None:
    line = RecordsLine("aiperf-records", "0.13.0", "profile export 1.jsonl", "ab" * 32, 2, 3, "open", 12.0, None,
                       11.96, 1200, 6, 100.4, 20, "server", True, False, None, False, "runs.records/abab.npz")
    text = line.line()
    assert "file=profile%20export%201.jsonl" in text and text.startswith("# reportgen records: tool=aiperf-records")
    assert RecordsLine.parsed(text) == line
    assert RecordsLine.parsed(text.replace("sent=1200", "sent=many")) is None
    assert RecordsLine.parsed("# reportgen load test: requested=2") is None


def test_the_store_keeps_every_point_and_refuses_what_it_did_not_write(tmp_path: Path) -> None:
    first = load_test(300, 4.0, seed=1)
    second = Requests(first.send_s, first.ttft_s, first.e2e_s, first.output_tokens.copy(), first.ok,
                      np.linspace(0, 0.01, 300))
    second.output_tokens[3] = np.nan
    store = tmp_path / "runs.records" / "x.npz"
    write_store(store, store_bytes([point(first, 4.0), point(second, 4.0)]))
    back = read_store(store, 2, "x.npz")
    assert np.array_equal(back.send_s, second.send_s) and np.isnan(back.output_tokens[3])
    assert back.client_queue_s == pytest.approx(second.client_queue_s)
    assert read_store(store, 1, "x.npz").client_queue_s is None
    with pytest.raises(InputError, match="no load point 3"):
        read_store(store, 3, "x.npz")
    arrays = dict(np.load(store))
    arrays["p1_ok"] = arrays["p1_ok"].astype(np.float64)
    np.savez(tmp_path / "typed.npz", **arrays)
    with pytest.raises(InputError, match="ok is float64"):
        read_store(tmp_path / "typed.npz", 1, "typed.npz")
    arrays = dict(np.load(store))
    arrays["p1_e2e_s"] = arrays["p1_e2e_s"][:-1]
    np.savez(tmp_path / "short.npz", **arrays)
    with pytest.raises(InputError, match="unequal length"):
        read_store(tmp_path / "short.npz", 1, "short.npz")
    with zipfile.ZipFile(tmp_path / "pickled.npz", "w") as archive:
        archive.writestr("p1_send_s.npy", b"not an array")
    with pytest.raises(InputError, match="records store cannot be read"):
        read_store(tmp_path / "pickled.npz", 1, "pickled.npz")


# ------------------------------------------------------------------------------------------ curves and the plan
def curve_points(nodes: float, slots: int, rates: tuple[float, ...], seed: int = 0) -> list[RecordedPoint]:
    line = RecordsLine("vllm-detailed", "-", "f.json", "0" * 64, 1, 1, "open", None, None, None, 0, 0, 0.0, 0,
                       "server", True, False, None, False, "s.npz")
    return [RecordedPoint(nodes, line, point(load_test(1500, rate, slots=slots, seed=seed + index), rate))
            for index, rate in enumerate(rates)]


def test_the_max_load_lies_where_the_fitted_curve_crosses_the_target() -> None:
    recorded = tuple(curve_points(8, 48, (4.0, 8.0, 12.0, 14.0)))
    found = judge_records(recorded, AT_99, plan=8, need_per_s=6.0, unit="request", devices_per_node=8)
    assert found.goodput is not None
    (curve,) = found.goodput.by_scale
    shares = {facts.point.offered_per_s: facts.attainment.joint for _, facts in found.judged
              if facts.attainment is not None and facts.valid}
    above = [load for load, share in sorted(shares.items()) if share >= 0.99]
    assert curve.bound is None and above and above[-1] <= curve.max_load_per_s
    low, high = curve.max_load_ci
    assert low is not None and high is not None and low <= curve.max_load_per_s <= high
    plan = found.goodput.at_plan
    assert plan is not None and plan.need_per_s == 6.0
    expected = "met" if low >= 6.0 else "missed" if high < 6.0 else None
    assert plan.verdict == expected
    # every point is in serving.records with its checks and the same attainment
    assert len(found.records.points) == 4
    assert [record.attainment for record in found.records.points] == \
        [facts.attainment.joint if facts.attainment else None for _, facts in found.judged]


def test_a_plan_between_two_scales_reads_their_max_loads_interpolated() -> None:
    recorded = (*curve_points(4, 24, (2.0, 4.0, 6.0, 7.0), seed=10), *curve_points(8, 48, (4.0, 8.0, 12.0, 14.0)))
    found = judge_records(recorded, AT_99, plan=6, need_per_s=100.0, unit="request", devices_per_node=8)
    assert found.goodput is not None
    four, eight = found.goodput.by_scale
    plan = found.goodput.at_plan
    assert plan is not None and plan.interpolated
    assert plan.max_load_per_s == pytest.approx((four.max_load_per_s + eight.max_load_per_s) / 2)
    assert plan.max_load_ci[0] == pytest.approx((four.max_load_ci[0] + eight.max_load_ci[0]) / 2)
    assert plan.verdict == "missed"  # 100 request/s is past any interval
    # beyond every measured scale: not judged, and why
    beyond = judge_records(recorded, AT_99, plan=16, need_per_s=6.0, unit="request", devices_per_node=8)
    assert beyond.goodput is not None and beyond.goodput.at_plan is not None
    assert beyond.goodput.at_plan.verdict is None and "both sides" in (beyond.goodput.at_plan.why_unjudged or "")
    # a load counted in tokens is not held against a curve of requests
    tokens = judge_records(recorded, AT_99, plan=8, need_per_s=6.0, unit="token", devices_per_node=8)
    assert tokens.goodput is not None and tokens.goodput.at_plan is not None
    assert "counts tokens" in (tokens.goodput.at_plan.why_unjudged or "")


# ------------------------------------------------------------------------------------------ ingest, then build
def vllm_file(requests: Requests, rate: float) -> dict[str, object]:
    """vLLM bench serve --save-detailed's keys for the requests (gaps left out: the latencies are given)."""
    count = requests.count
    ok = requests.ok
    return {"request_rate": rate, "max_concurrency": None, "completed": int(ok.sum()), "failed": int((~ok).sum()),
            "total_output_tokens": int(requests.output_tokens[ok].sum()),
            "ttfts": [float(v) if good else 0.0 for v, good in zip(requests.ttft_s, ok, strict=True)],
            "itls": [[] for _ in range(count)], "input_lens": [256] * count,
            "output_lens": [int(n) if good else 0 for n, good in zip(requests.output_tokens, ok, strict=True)],
            "errors": ["" if good else "HTTP 500" for good in ok], "start_times": (1000.0 + requests.send_s).tolist(),
            "latencies": requests.e2e_s.tolist()}


def test_ingest_then_build_judges_the_service_from_its_requests(tmp_path: Path) -> None:
    project = tmp_path / "service.yaml"
    project.write_text(SERVICE.format(load="6 request/s", plan=1), encoding="utf-8")
    appended = "\n".join(json.dumps(vllm_file(load_test(1200, rate, seed=int(rate)), rate)) for rate in (4.0, 8.0))
    (tmp_path / "vllm.json").write_text(appended + "\n", encoding="utf-8")
    result = run_cli("ingest", "serving", str(tmp_path / "vllm.json"), "--nodes", "1", "--project", str(project))
    assert result.returncode == 0, result.stderr
    assert "vllm-detailed point 1/2 at 1 node: open at 4.00 requests/s" in result.stdout
    csv = (tmp_path / "runs.csv").read_text(encoding="utf-8")
    assert csv.splitlines()[0] == ("nodes,throughput [request/s],offered [request/s],attainment,goodput [request/s],"
                                   "p99_latency [s],ttft_p99 [s],tpot_p99 [s]")
    lines = [RecordsLine.parsed(line) for line in csv.splitlines()]
    records = [line for line in lines if line is not None]
    assert [(line.point, line.offered_per_s, line.sent) for line in records] == [(1, 4.0, 1200), (2, 8.0, 1200)]
    assert (tmp_path / records[0].store).is_file()
    # the same point again is refused; --repeat adds it, --replace replaces it
    again = run_cli("ingest", "serving", str(tmp_path / "vllm.json"), "--nodes", "1", "--point", "2",
                    "--project", str(project))
    assert again.returncode == 2 and "already has a run at 1 nodes and 8 request/s" in again.stderr
    replaced = run_cli("ingest", "serving", str(tmp_path / "vllm.json"), "--nodes", "1", "--point", "2", "--replace",
                       "--project", str(project))
    assert replaced.returncode == 0, replaced.stderr
    assert (tmp_path / "runs.csv").read_text(encoding="utf-8").count("# reportgen records:") == 2
    # build reads the store, and serving.records holds the attainment ingest wrote in the row
    built = run_cli("build", str(project), "-o", str(tmp_path / "out"), "--format", "json")
    assert built.returncode == 0, built.stderr
    document = json.loads((tmp_path / "out" / "service" / "results.json").read_text(encoding="utf-8"))
    points = document["serving"]["records"]["points"]
    written = [float(row.split(",")[3]) for row in (tmp_path / "runs.csv").read_text(encoding="utf-8").splitlines()
               if row[:1].isdigit()]
    assert sorted(p["attainment"] for p in points) == pytest.approx(sorted(written), abs=1e-12)
    goodput = document["serving"]["goodput"]
    assert goodput["target"] == pytest.approx(0.99) and goodput["by_scale"][0]["points_used"] == 2
    assert goodput["at_plan"]["need_per_s"] == 6.0
    # one verdict: the scale's serving row reads its capacity from the records, and the plan's verdict agrees
    (row,) = document["serving"]["rows"]
    assert row["capacity_source"] == "records" and row["capacity_rps"] == goodput["by_scale"][0]["max_load_per_s"]
    assert document["goal"]["met_at_plan"] == {"met": True, "missed": False, None: None}[
        goodput["at_plan"]["verdict"]]
    # a store that is gone leaves the row's summary: no records, no failure
    (tmp_path / records[0].store).unlink()
    rebuilt = run_cli("build", str(project), "-o", str(tmp_path / "out2"), "--format", "json")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert json.loads((tmp_path / "out2" / "service" / "results.json").read_text())["serving"]["records"][
        "points"] == []


def test_ingest_prints_each_point_and_its_findings_as_json(tmp_path: Path) -> None:
    requests = load_test(1000, 16.0, seed=2)
    (tmp_path / "sat.json").write_text(json.dumps(vllm_file(requests, 16.0)), encoding="utf-8")
    result = run_cli("ingest", "serving", str(tmp_path / "sat.json"), "--nodes", "2", "--format", "json",
                     "--format", "vllm-detailed")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    (only,) = document["points"]
    assert document["tool"] == "vllm-detailed" and not only["valid"]
    assert "over-saturated" in {finding["code"] for finding in only["findings"]}
    assert "warning [over-saturated] point 1" in result.stderr
    assert {entry["quantity"] for entry in document["definitions"]} >= {"TTFT", "TPOT", "E2E"}
    wrong = run_cli("ingest", "serving", str(tmp_path / "sat.json"), "--nodes", "2", "--format", "guidellm")
    assert wrong.returncode == 2 and "is not a guidellm file" in wrong.stderr
    assert math.isfinite(only["window_s"])


def test_a_closed_load_is_written_as_its_concurrency_and_judged_on_its_own_axis(tmp_path: Path) -> None:
    project = tmp_path / "service.yaml"
    project.write_text(SERVICE.format(load="6 request/s", plan=1), encoding="utf-8")
    closed = vllm_file(load_test(800, 6.0, seed=5), 6.0)
    closed.update(request_rate="inf", max_concurrency=8)
    (tmp_path / "closed.json").write_text(json.dumps(closed), encoding="utf-8")
    result = run_cli("ingest", "serving", str(tmp_path / "closed.json"), "--nodes", "1", "--project", str(project))
    assert result.returncode == 0, result.stderr
    assert "closed at 8 in flight" in result.stdout
    header, *_ = (tmp_path / "runs.csv").read_text(encoding="utf-8").splitlines()
    assert header == "nodes,throughput [request/s],concurrency,attainment,goodput [request/s]"
    row = (tmp_path / "runs.csv").read_text(encoding="utf-8").splitlines()[-1].split(",")
    assert row[2] == "8"
    built = run_cli("build", str(project), "-o", str(tmp_path / "out"), "--format", "json")
    assert built.returncode == 0, built.stderr
    goodput = json.loads((tmp_path / "out" / "service" / "results.json").read_text())["serving"]["goodput"]
    (curve,) = goodput["by_scale"]
    assert curve["mode"] == "closed" and curve["max_load_per_s"] == 8.0  # one point: a bound at the load measured
    assert goodput["at_plan"]["verdict"] is None  # a concurrency is not held against a rate
    assert "concurrency, not a rate" in goodput["at_plan"]["why_unjudged"]


def test_a_point_not_decided_asks_for_the_requests_that_would_decide_it() -> None:
    from reportgen.analysis.measured.confidence import planner_runs
    from reportgen.analysis.verdict.goodput import requests_runs

    # 1,500 requests at 7 request/s into 32 slots: 99.3 % [98.9 %, 99.7 %] straddles 99 %
    recorded = tuple(curve_points(2, 32, (7.0,), seed=4))
    found = judge_records(recorded, AT_99, plan=2, need_per_s=7.0, unit="request", devices_per_node=8)
    ((_, facts),) = found.judged
    assert facts.verdict is None
    (run,) = requests_runs(found.judged, AT_99, 2, 40.0)
    measured = facts.attainment
    assert measured is not None and run.kind == "requests" and run.objective == "every"
    needed = requests_needed(measured.joint, 0.99, facts.good_autocorrelation)
    if needed is not None and needed > measured.requests:
        assert (run.repeats, run.requests_needed) == (1, needed)
    else:  # enough requests, not decided: a run near capacity, repeated twice
        assert (run.repeats, run.requests_needed) == (2, 2 * measured.requests)
    assert run.duration_s == pytest.approx(run.requests_needed / 7.0)
    assert run.cost == pytest.approx(2 * run.duration_s / 3600 * 40.0)
    assert 0 < run.p_wrong_before < 0.5 and planner_runs((run,)) == ()
    decided = judge_records(tuple(curve_points(2, 32, (8.0,), seed=4)), AT_99, plan=2, need_per_s=8.0,
                            unit="request", devices_per_node=8)
    assert requests_runs(decided.judged, AT_99, 2, 40.0) == ()  # missed outright: nothing to ask for


# ------------------------------------------------------------------------------------------ eight pathologies
def _ttft_zero() -> LoadPoint:
    requests = load_test(1200, 6.0, seed=21)
    requests.ttft_s[:] = 0.0  # an unstreamed endpoint: the tool writes 0 where it measured nothing
    return point(requests, 6.0)


def _failures() -> LoadPoint:
    return point(load_test(1200, 6.0, seed=22, fail_share=0.3), 6.0)


def _short_rate() -> LoadPoint:
    return point(load_test(1200, 4.0, seed=23), 10.0)  # 40 % of the rate it claims


def _over_saturated() -> LoadPoint:
    return point(load_test(2000, 16.0, seed=24), 16.0)


def _few_for_a_p99() -> LoadPoint:
    return point(load_test(600, 6.0, seed=25), 6.0)  # a p99 needs 1,000


def _warm_up() -> LoadPoint:
    return point(load_test(1200, 6.0, seed=26, slow_first=120), 6.0)


def _tokens_miscounted() -> LoadPoint:
    requests = load_test(1200, 6.0, seed=27)
    total = int(np.nansum(requests.output_tokens) * 1.07)  # the file's total counts 7 % more than its records
    return LoadPoint("vllm-detailed", requests, "open", 6.0, None, True, False, "unknown", file_output_tokens=total)


def _littles_law() -> LoadPoint:
    # E2E is the end less the send here, so the law breaks only out of a steady state: latency that runs away
    return point(load_test(2000, 17.0, seed=28), 17.0)


PATHOLOGIES = {"placeholder-latency": _ttft_zero, "failed-requests": _failures, "rate-not-reached": _short_rate,
               "over-saturated": _over_saturated, "too-few-for-quantile": _few_for_a_p99,
               "warm-up-in-window": _warm_up, "token-count-mismatch": _tokens_miscounted,
               "littles-law": _littles_law}


@pytest.mark.parametrize("code", list(PATHOLOGIES))
def test_each_pathology_raises_its_code_and_leaves_the_verdict_as_its_row_says(tmp_path: Path, code: str) -> None:
    from reportgen.analysis import analyze

    p99s = "{ttft_p99: 1 s, tpot_p99: 30 ms, p99: 8 s}"  # judged one by one: a p99 needs 1,000 requests
    text = SERVICE.format(load="6 request/s", plan=1).replace(
        "    attainment: 99 %\n", "").replace("{ttft: 250 ms, tpot: 30 ms, e2e: 6 s}", p99s).replace(
        "scaling:\n  file: runs.csv\n", "scaling:\n  runs: [{nodes: 1, throughput: 6 request/s}]\n")
    project = load_project_text(text, tmp_path / "p.yaml", "p.yaml").project
    loaded = PATHOLOGIES[code]()
    line = RecordsLine(loaded.tool, "-", "f.json", "0" * 64, 1, 1, "open", loaded.offered_per_s, None, None,
                       loaded.requests.count, 0, 0.0, 0, "server", True, False, None, False, "s.npz")
    analysis = analyze(project, recorded=(RecordedPoint(1, line, loaded),))
    assert analysis.serving is not None and analysis.serving.records is not None
    (record,) = analysis.serving.records.points
    codes = {finding.code for finding in analysis.findings}
    if code == "failed-requests":  # a failed request is never good: 30 % failed misses 99 % outright
        assert record.failed > 300 and record.verdict == "missed"
        return
    # (rate-not-reached is worded from the load test's counts line, which ingest writes beside the records line)
    assert code in (codes if code != "rate-not-reached" else set(record.findings)), codes
    if code in ("rate-not-reached", "over-saturated", "littles-law"):  # the point leaves the verdict
        assert not record.valid and analysis.serving.goodput is not None
        assert analysis.serving.goodput.by_scale == ()
    elif code == "placeholder-latency":  # TTFT (and TPOT with it) is not measured there: the point is not judged
        assert record.attainment is None and record.verdict is None
    elif code == "warm-up-in-window":  # the first tenth leaves
        assert record.dropped.warmup == 120 and record.valid
    else:  # nothing leaves
        assert record.valid and record.attainment is not None


# ------------------------------------------------------------------------------------------ the intervals' coverage
def _truth(rate: float, slots: int = 48) -> float:
    """The stand-in's share of good requests at a load, from 200,000 of its requests."""
    from reportgen.analysis.measured.requests import good_requests

    return float(good_requests(load_test(200_000, rate, slots=slots, seed=999), OBJECTIVES_25, open_load=True).mean())


OBJECTIVES_25 = Objectives(ttft_s=0.25, tpot_s=0.025, e2e_s=6.0)  # the stand-in's TPOT misses 25 ms 1.3 % of the time


@pytest.mark.slow
def test_the_single_run_interval_covers_the_truth_nine_times_in_ten_below_capacity() -> None:
    """500 load tests of 1,000 requests at 8 request/s (54 % of the stand-in's 14.7): the 90 % interval covers the
    true share in 87–93 % of them (90 % ± 1.96·√(0.09/500)). Measured: 91.4 %."""
    truth = _truth(8.0)
    judgement = Judgement(OBJECTIVES_25, 0.99, True)
    covered = 0
    for trial in range(500):
        facts = judge_point(point(load_test(1000, 8.0, seed=trial), 8.0), judgement, seed=trial)
        assert facts.attainment is not None
        low, high = facts.attainment.joint_ci
        covered += low <= truth <= high
    assert 0.87 <= covered / 500 <= 0.93, covered


@pytest.mark.slow
def test_near_capacity_three_repeats_cover_the_truth_and_one_run_is_flagged(tmp_path: Path) -> None:
    """Near capacity (12 request/s, 82 % of 14.7), 100 groups of three runs of 1,000 requests: the union of the
    pooled interval and the runs' t-interval covers the true share in at least 85 %; a single run there is
    single-run-near-capacity."""
    from reportgen.analysis import analyze

    truth = _truth(12.0)
    judgement = Judgement(OBJECTIVES_25, 0.99, True)
    line = RecordsLine("vllm-detailed", "-", "f.json", "0" * 64, 1, 1, "open", 12.0, None, None, 1000, 0, 0.0, 0,
                       "server", True, False, None, False, "s.npz")
    covered = 0
    groups = 100
    for group in range(groups):
        repeats = tuple(RecordedPoint(8, line, point(load_test(1000, 12.0, seed=10_000 + 3 * group + k), 12.0))
                        for k in range(3))
        found = judge_records(repeats, judgement, plan=8, need_per_s=12.0, unit="request", devices_per_node=8)
        assert found.goodput is not None and found.goodput.at_plan is not None
        interval = found.goodput.at_plan.attainment_ci
        assert interval is not None
        covered += interval[0] <= truth <= interval[1]
    assert covered / groups >= 0.85, covered
    # one run past the knee of its scale's curve is flagged, and decided only by an interval of its own width
    text = SERVICE.format(load="12 request/s", plan=8).replace(
        "scaling:\n  file: runs.csv\n", "scaling:\n  runs: [{nodes: 8, throughput: 12 request/s}]\n").replace(
        "tpot: 30 ms", "tpot: 25 ms")
    project = load_project_text(text, tmp_path / "p.yaml", "p.yaml").project
    curve = tuple(RecordedPoint(8, line, point(load_test(1000, rate, seed=int(rate)), rate))
                  for rate in (2.0, 4.0, 8.0, 12.0))
    analysis = analyze(project, recorded=curve)
    assert "single-run-near-capacity" in {finding.code for finding in analysis.findings}


def test_the_energy_a_tool_measured_is_spread_over_its_output_tokens(tmp_path: Path) -> None:
    """vLLM's gpu_energy_j over a window whose successful requests produced Σ n output tokens: J per token =
    energy / Σ n (methods.md#a-service-judged-from-its-requests), kept through the records line to the build."""
    project = tmp_path / "service.yaml"
    project.write_text(SERVICE.format(load="6 request/s", plan=1), encoding="utf-8")
    requests = load_test(600, 4.0, seed=9)
    document = vllm_file(requests, 4.0)
    document["gpu_energy_j"] = 90_000.0
    (tmp_path / "energy.json").write_text(json.dumps(document), encoding="utf-8")
    assert run_cli("ingest", "serving", str(tmp_path / "energy.json"), "--nodes", "1", "--project",
                   str(project)).returncode == 0
    built = run_cli("build", str(project), "-o", str(tmp_path / "out"), "--format", "json")
    assert built.returncode == 0, built.stderr
    (record,) = json.loads((tmp_path / "out" / "service" / "results.json").read_text())["serving"]["records"]["points"]
    produced = float(np.sum(requests.output_tokens[requests.ok]))
    assert record["pareto"]["energy_j_per_token"] == pytest.approx(90_000.0 / produced)
    assert record["pareto"]["energy_source"] == "measured"


def test_a_store_whose_arrays_claim_more_than_they_hold_is_refused_before_allocating(tmp_path: Path) -> None:
    """A member of a few bytes whose header declares a trillion values: refused from the header, never
    allocated."""
    good = tmp_path / "good.npz"
    write_store(good, store_bytes([point(load_test(50, 4.0, seed=1), 4.0)]))
    with zipfile.ZipFile(good) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }"
    header += b" " * (118 - len(header)) + b"\n"
    members["p1_send_s.npy"] = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + b"\0" * 16
    with zipfile.ZipFile(tmp_path / "bomb.npz", "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    with pytest.raises(InputError, match="send_s declares 8,000,000,000,000 bytes"):
        read_store(tmp_path / "bomb.npz", 1, "bomb.npz")


@pytest.mark.parametrize("piece", [1000, 4096, 10_000])
def test_an_aiperf_file_read_in_small_pieces_reads_as_in_one(piece: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces smaller than a record (3.1 KB: the buffer grows), about one, and a few: every record is cut across
    pieces somewhere, and the columns are those of reading the file at once."""
    from reportgen.ingest import aiperf_stream

    path = Path(__file__).parent / "data" / "serving" / "aiperf-0.13.0" / "rate8" / "profile_export.jsonl"
    whole, sha = aiperf_stream.read_columns(path, path.name, processes=1)
    monkeypatch.setattr(aiperf_stream, "PIECE_BYTES", piece)
    pieces, same_sha = aiperf_stream.read_columns(path, path.name, processes=1)
    assert sha == same_sha and pieces.warmup == whole.warmup == 5
    for name in ("start_ns", "credit_ns", "ttft_s", "e2e_s", "tokens", "ok"):
        assert np.array_equal(pieces.column(name), whole.column(name)), name
    assert len(whole.column("e2e_s")) == 60


def test_an_aiperf_file_with_an_endless_line_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reportgen.ingest import aiperf_stream

    monkeypatch.setattr(aiperf_stream, "PIECE_BYTES", 1 << 10)
    monkeypatch.setattr(aiperf_stream, "MAX_LINE_BYTES", 1 << 12)
    path = tmp_path / "profile_export.jsonl"
    path.write_text('{"metadata": {"request_start_ns": 1}, "metrics": {}, "pad": "' + "x" * 10_000 + '"}\n')
    with pytest.raises(InputError, match="a line longer than"):
        aiperf_stream.read_columns(path, "profile_export.jsonl", processes=1)


def test_the_levers_of_a_service_judged_from_its_requests(tmp_path: Path) -> None:
    """A plan that misses: the load flips where the need reaches the low end of the plan's max load; each objective
    at the ⌈a*·N⌉-th smallest value of its latency among the nearest point's requests meeting the others; the
    share at that point's attainment. The objectives and the share are promises (kind objective), never the next
    action while an engineering lever flips the verdict."""
    from reportgen.analysis import analyze
    from reportgen.analysis.measured.requests import objective_flip

    text = SERVICE.format(load="12 request/s", plan=8).replace(
        "scaling:\n  file: runs.csv\n", "scaling:\n  runs: [{nodes: 8, throughput: 12 request/s}]\n")
    project = load_project_text(text, tmp_path / "p.yaml", "p.yaml").project
    line = RecordsLine("vllm-detailed", "-", "f.json", "0" * 64, 1, 1, "open", None, None, None, 0, 0, 0.0, 0,
                       "server", True, False, None, False, "s.npz")
    recorded = tuple(RecordedPoint(8, line, point(load_test(1500, rate, seed=40 + int(rate)), rate))
                     for rate in (4.0, 8.0, 12.0))
    analysis = analyze(project, recorded=recorded)
    assert analysis.serving is not None and analysis.serving.goodput is not None
    at_plan = analysis.serving.goodput.at_plan
    assert at_plan is not None and at_plan.verdict == "missed"
    levers = {lever.lever: lever for lever in analysis.levers.flips}
    low = at_plan.max_load_ci[0]
    assert low is not None and levers["load"].flips_at == pytest.approx(low)  # no headroom: the need is the load
    assert levers["load"].kind == "engineering" and levers["load"].meets
    nearest = next(facts for nodes, facts in analysis.serving.records_judged if facts.point.offered_per_s == 12.0)
    for name in ("ttft", "tpot", "e2e"):
        expected = objective_flip(nearest.kept, Objectives(0.25, 0.030, 6.0), name, 0.99, open_load=True)
        lever = levers.get(f"{name} objective")
        if expected is None or expected <= getattr(Objectives(0.25, 0.030, 6.0), f"{name}_s"):
            assert lever is None, name  # the others bind, or it is met already: no value of it flips the verdict
        else:
            assert lever is not None and lever.flips_at == pytest.approx(expected) and lever.kind == "objective"
    share = levers["attainment target"]
    assert share.flips_at == pytest.approx(nearest.attainment.joint) and share.kind == "objective"
    action = analysis.summary.next_action  # type: ignore[union-attr]
    assert action.lever not in {"ttft objective", "tpot objective", "e2e objective", "attainment target"}
    # page 1 names the objective that binds, and the fewest nodes reads the capacity from the requests too
    assert f"{at_plan.binding.upper()} the one that binds" in analysis.summary.verdict  # type: ignore[union-attr]
    (curve,) = analysis.serving.goodput.by_scale
    assert analysis.serving.nodes_lower_bound == math.ceil(12.0 / (curve.max_load_per_s / 8))
