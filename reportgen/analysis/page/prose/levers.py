"""A lever as page 1 states it (docs/methods.md#the-goals-levers): the change, from today's value to the one at which
the verdict at the plan flips, and, when no feasible lever flips a missed goal, "out of reach of this design" with
the two closest."""

from __future__ import annotations

from reportgen.analysis.quotes import quote
from reportgen.analysis.verdict.lever_records import Lever, Levers, NearMiss
from reportgen.wording import duration, margin, money, nodes, number, percent, plural, rate, times


def value_words(lever: Lever | NearMiss, value: float, currency: str) -> str:
    """A lever's value in its unit, as a person writes it."""
    unit = lever.unit
    if unit == "s":
        return duration(value)
    if unit == "fraction":
        return percent(value)
    if unit == "B/s":
        return rate(value, "B/s")
    if unit == "nodes":
        return nodes(value)
    if unit == "stage":
        return f"stage {int(value)}"
    if unit.endswith("per node-hour") and unit.startswith(currency):
        return f"{money(value, currency)} per node-hour"
    if unit.endswith(" per s"):
        return f"{number(value)} {plural(unit.removesuffix(' per s'))}/s"
    return f"{number(value)} {unit}"


def lever_value(lever: Lever | NearMiss, which: str, currency: str) -> str:
    """A lever's `today`, `flips_at` or `best` as the levers table shows it."""
    return value_words(lever, float(getattr(lever, which)), currency)


def change(ratio: float) -> str:
    """flips_at / today as a signed change: "−41.3 %", "+1.23 %"."""
    return f"{'+' if ratio >= 1.0 else '−'}{percent(abs(ratio - 1.0))}"


# the latency levers, one per objective, and what cuts each without more replicas
LATENCY_WORDS = {"p99 latency": "p99", "ttft p99": "p99 time to first token", "tpot p99": "p99 time per output token"}
LATENCY_REMEDIES = {
    "p99 latency": "a lighter load per replica, fewer fan-out hops, hedged requests, batching or a smaller or "
                   "quantized model",
    "ttft p99": "shorter prompts or prefix caching, chunked prefill, a prefill-decode split or fewer requests batched "
                "per replica",
    "tpot p99": "a smaller decode batch per replica, speculative decoding, a quantized model or faster memory per "
                "replica",
}

# each lever's action, from today's value to the one that flips the verdict, and the regime it then meets in
_ACTIONS = {
    "start-up": ("Cut start-up from {today} to {then} ({change})", ""),
    "serial fraction": ("Cut the serial fraction from {today} to {then} ({change})", ""),
    "network bandwidth": ("Raise the network bandwidth from {today} to {then} ({change})", ""),
    "network latency": ("Cut the network latency from {today} to {then} ({change})", ""),
    "node price": ("Find nodes at {then} or less (today {today}, {change})", ""),
    "spot fraction": ("Find spot capacity at {then} of the on-demand price or less (today {today}, {change})",
                      " on spot"),
    "preemption rate": ("Find spot capacity preempted at most {then} (today {today}, {change})", " on spot"),
    "utilization": ("Raise the owned nodes' utilization from {today} to {then} ({change}): owning then pays",
                    " on owned nodes"),
    "capacity per replica": ("Raise each replica's capacity from {today} to {then} ({change})", ""),
    "load": ("Serve at most {then} at the plan (today {today}, {change})", ""),
    "ttft objective": ("Promise a TTFT of {then} instead of {today} ({change}), a promise and not an engineering "
                       "change", ""),
    "tpot objective": ("Promise a TPOT of {then} instead of {today} ({change}), a promise and not an engineering "
                       "change", ""),
    "e2e objective": ("Promise an E2E latency of {then} instead of {today} ({change}), a promise and not an "
                      "engineering change", ""),
    "attainment target": ("Promise {then} of requests within every objective instead of {today} ({change}), a "
                          "promise and not an engineering change", ""),
}


def lever_action(lever: Lever, levers: Levers, plan: float | None, currency: str) -> str:
    """"Cut start-up from 12.1 s to 6.5 s (−46.3 %): the plan then meets the goal; no node count meets it while it
    stays"; the nodes lever as a plan."""
    today = value_words(lever, quote(lever, "today", lever.unit), currency)
    then = value_words(lever, quote(lever, "flips_at", lever.unit), currency)
    if lever.lever in ("nodes", "replicas"):
        if lever.source == "fitted":
            return (f"Measure {then}, the nearest scale where the fit judges the goal met (its 90 % interval "
                    f"clear of every limit), instead of planning {today}.")
        return f"Plan {then} instead of {today}: the goal is met there, as measured."
    if lever.lever == "checkpoint interval":
        return f"Checkpoint every {then} instead of every {today}: the plan then meets the goal."
    if lever.lever == "ZeRO stage":
        return (f"Raise the ZeRO stage from {int(quote(lever, 'today'))} to {int(quote(lever, 'flips_at'))}: the "
                "layout then fits.")
    if lever.lever in LATENCY_WORDS:
        where = f" at the planned {nodes(plan)}" if plan else ""
        return (f"Cut the {LATENCY_WORDS[lever.lever]}{where} from {today} to the {then} objective "
                f"({change(quote(lever, 'ratio'))}) before adding replicas, which have the capacity already: "
                f"{LATENCY_REMEDIES[lever.lever]}.")
    action, regime = _ACTIONS[lever.lever]
    scale = any(other.lever in ("nodes", "replicas") and other.feasible and other.meets for other in levers.flips)
    alone = "" if scale else "; no node count meets it while it stays"
    return (f"{action.format(today=today, then=then, change=change(quote(lever, 'ratio')))}: the plan then meets the "
            f"goal{regime}{alone}.")


def _near_miss(miss: NearMiss, currency: str, *, first: bool = True) -> str:
    """"a node price of 1.90 USD per node-hour still leaves the plan 35 % over a limit": a near miss at its best (a
    continuous lever's best is only where the search ended), said as a sentence."""
    best = value_words(miss, quote(miss, 'best', miss.unit), currency)
    over = margin(quote(miss, 'excess'))
    if miss.lever in ("nodes", "replicas"):  # a scale is where the plan stands, not a value it is given
        return f"the plan at {best} is still {over} a limit" if first else f"at {best}, {over}"
    return f"a {miss.lever} of {best} still leaves the plan {over} a limit" if first else \
        f"a {miss.lever} of {best}, {over}"


def out_of_reach(levers: Levers, plan: float | None, currency: str) -> str:
    """No feasible lever flips the missed goal: the two levers closest to flipping it."""
    where = f" at the planned {nodes(plan)}" if plan else ""
    beyond = [f"the {lever.lever} would have to be {value_words(lever, quote(lever, 'flips_at', lever.unit), currency)}"
              f" ({times(quote(lever, 'ratio'))} today's), beyond its reach" for lever in levers.flips
              if not lever.feasible]
    # a lever whose best value the fit puts within every limit (unjudged: its interval straddles) is no near miss
    misses = [miss for miss in levers.near_misses if miss.excess > 1.0]
    near = [_near_miss(miss, currency, first=not beyond and index == 0) for index, miss in enumerate(misses)]
    closest = (beyond + near)[:2]
    if not closest:
        return f"The goal is out of reach of this design{where}: no input the report can vary meets it."
    return (f"The goal is out of reach of this design{where}: no feasible lever meets it. The closest: "
            f"{'; '.join(closest)}. Change the design, or the goal.")
