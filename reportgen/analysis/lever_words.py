"""A lever as page 1 states it (docs/methods.md#the-goals-levers): the change, from today's value to the one at which
the verdict at the plan flips, and, when no feasible lever flips a missed goal, "out of reach of this design" with
the two closest."""

from __future__ import annotations

from reportgen.analysis.levers import Lever, Levers, NearMiss
from reportgen.wording import duration, listed, money, nodes, number, percent, plural, rate, times


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


_VERBS = {"start-up": "Cut start-up", "serial fraction": "Cut the serial fraction",
          "network bandwidth": "Raise the network bandwidth", "network latency": "Cut the network latency",
          "node price": "Find nodes at a node-hour price", "spot fraction": "Find spot capacity at a price fraction",
          "preemption rate": "Find spot capacity with a preemption rate",
          "checkpoint interval": "Checkpoint every", "utilization": "Raise the owned nodes' utilization",
          "ZeRO stage": "Raise the ZeRO stage", "capacity per replica": "Raise each replica's capacity"}


def _noun(miss: NearMiss, currency: str) -> str:
    """"node count (8 nodes)", "node price": a near miss at its best (a continuous lever's best is only where the
    search ended)."""
    if miss.lever in ("nodes", "replicas"):
        return f"{miss.lever[:-1]} count ({value_words(miss, miss.best, currency)})"
    return miss.lever


def lever_action(lever: Lever, plan: int | None, currency: str) -> str:
    """"Cut start-up from 12.6 s to 7.4 s (−41 %): the plan then meets the goal"; the nodes lever as a plan."""
    if lever.lever in ("nodes", "replicas"):
        target = nodes(lever.flips_at)
        if lever.source == "fitted":
            return (f"Measure {target}, the nearest scale where the fit judges the goal met (its 90 % interval "
                    f"clear of every limit), instead of planning {nodes(lever.today)}.")
        return f"Plan {target} instead of {nodes(lever.today)}: the goal is met there, as measured."
    today = value_words(lever, lever.today, currency)
    then = value_words(lever, lever.flips_at, currency)
    if lever.lever == "checkpoint interval":
        return f"Checkpoint every {then} instead of every {today}: the plan then meets the goal."
    if lever.lever == "ZeRO stage":
        return f"Raise the ZeRO stage from {number(lever.today)} to {number(lever.flips_at)}: the layout then fits."
    if lever.lever == "p99 latency":
        where = f" at the planned {nodes(plan)}" if plan else ""
        return (f"Cut the p99{where} from {today} to the {then} objective ({change(lever.ratio)}) before adding "
                "replicas, which have the capacity already: a lighter load per replica, fewer fan-out hops, hedged "
                "requests, batching or a smaller or quantized model.")
    return f"{_VERBS[lever.lever]} from {today} to {then} ({change(lever.ratio)}): the plan then meets the goal."


def out_of_reach(levers: Levers, plan: int | None, currency: str) -> str:
    """No feasible lever flips the missed goal: the two levers closest to flipping it."""
    where = f" at the planned {nodes(plan)}" if plan else ""
    beyond = [f"{lever.lever} at {value_words(lever, lever.flips_at, currency)} ({times(lever.ratio)} today's, "
              "beyond reach)" for lever in levers.flips if not lever.feasible]
    near = [f"the {_noun(miss, currency)} ({times(miss.excess)}" + (" over a limit at its best)" if index == 0 else ")")
            for index, miss in enumerate(levers.near_misses)]
    closest = (beyond + near)[:2]
    if not closest:
        return f"The goal is out of reach of this design{where}: no input the report can vary meets it."
    return (f"The goal is out of reach of this design{where}: no feasible lever meets it. The closest: "
            f"{listed(closest, 'and')}. Change the design, or the goal.")
