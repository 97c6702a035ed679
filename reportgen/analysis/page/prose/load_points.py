"""A load point's checks in words (methods.md#a-service-judged-from-its-requests): each fired check as the finding
`ingest serving` prints and the report lists, with both of its numbers and the fix in the tool's own terms. One
sentence per code, here only."""

from __future__ import annotations

from reportgen.analysis.measured.load_point import PointFacts
from reportgen.analysis.measured.request_checks import BURST_SHARE, Check
from reportgen.project.load_tests import LoadPoint
from reportgen.wording import duration, number, percent, requests

WARM_UP_FIX = ("add warm-up requests (vLLM --num-warmups, AIPerf --warmup-request-count, a GuideLLM warmup phase)")


def load_words(point: LoadPoint) -> str:
    """The load a point was measured at: "open at 12 requests/s", "closed at 8 in flight", "unbounded"."""
    if point.mode == "open" and point.offered_per_s:
        return f"open at {requests(point.offered_per_s)}"
    if point.mode == "closed" and point.concurrency:
        return f"closed at {point.concurrency:,} in flight"
    return "unbounded"


def sampled_sentence(point: LoadPoint) -> str:
    """What a sampled file (GuideLLM's reservoir) leaves the judgement."""
    return (f"the file keeps {point.requests.count:,} of {point.sampled_from or 0:,} requests; shares and percentiles "
            "are the sample's, and the checks that read the send order are skipped")


def check_sentence(check: Check, facts: PointFacts) -> str:
    """What the check found at the point, and what it left out of the verdict."""
    point = facts.point
    offered = point.offered_per_s or 0.0
    if check.code == "rate-not-reached":
        return (f"the client sent {number(check.value * offered)} of {requests(offered)} ({percent(check.value)}): "
                "the point leaves the verdict; give the load generator more workers or CPUs, or run it nearer the "
                "service")
    if check.code == "rate-exceeded":
        if check.limit == BURST_SHARE:
            return (f"{percent(check.value)} of the sends came within 1 ms of another, where the schedule spaces "
                    "them: the client sent in bursts, not the load it claims; the point leaves the verdict")
        return (f"the client sent {number(check.value * offered)} request/s where {requests(offered)} were offered "
                f"({percent(check.value)}): the point leaves the verdict")
    if check.code == "client-queueing":
        return (f"requests waited p90 {duration(check.value)} in the client past their scheduled send (the limit "
                f"is {duration(check.limit)}: a tenth of the tightest TTFT or E2E objective, else of the median "
                "TTFT): TTFT and E2E count the wait; the client fell behind its schedule: give the load generator "
                "more workers or CPUs, or raise its concurrency limit (vLLM --max-concurrency)")
    if check.code == "littles-law":
        return (f"the file's latencies and its request times disagree by {percent(abs(check.value))} (Little's law, "
                f"λ·W̄ against the requests in flight; the limit is {percent(check.limit)}): the point leaves the "
                "verdict; check the tool's version and its measured window")
    if check.code == "over-saturated":
        return (f"latency and the requests in flight both rose through the window (Mann–Kendall S = "
                f"{check.value:.0f} for latency): {requests(offered)} over-saturates the service; the point leaves "
                "the verdict and the max load lies below it: measure lower loads")
    if check.code == "latency-drift":
        return (f"latency rose through the window at a fixed concurrency (Mann–Kendall S = {check.value:.0f}): "
                "the point stands, but its percentiles mix a rising tail")
    if check.code == "warm-up-in-window":
        return (f"the first tenth of the sends took {number(check.value)}× the rest's median latency: those "
                f"{facts.warm_up_left_out:,} requests leave the verdict; {WARM_UP_FIX}")
    if check.code == "placeholder-latency":
        unmeasured = ", ".join(name.upper() for name in facts.unmeasured)
        left = f"{unmeasured} is not measured at the point" if unmeasured else "those requests leave the verdict"
        return (f"{percent(check.value)} of the successful requests carry a latency of 0 or a TTFT past their E2E, "
                f"which a tool writes where it did not measure: {left}; stream the responses so TTFT is measured")
    if check.code == "token-count-mismatch":
        return (f"the records' output tokens differ from the file's own total by {percent(abs(check.value))} (more "
                f"than {percent(check.limit)}): count tokens with the server's usage (AIPerf "
                "--use-server-token-count, inference-perf use_server_output_tokens)")
    if check.code == "records-disagree":
        return (f"the records differ from the file's own summary by {percent(abs(check.value))} (their count or "
                f"their mean E2E; the limit is {percent(check.limit)}): the point leaves the verdict; check that the "
                "file is whole and "
                "the tool's version")
    return f"{check.code}: {number(check.value)} against {number(check.limit)}"
