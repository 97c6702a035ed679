"""Fuzzing the loader and the analyses with generated project files.

Valid projects (random values in random units, every section) must load and build to JSON; mutated ones (wrong
types, odd unicode, huge numbers, deep nesting, unknown keys, bytes edited) must either load or raise the project's
own InputError with a position: never another exception, never a hang.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

import jsonschema
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reportgen.analysis import analyze
from reportgen.analysis.common import plan_verdict
from reportgen.errors import InputError
from reportgen.project.carbon import intensity_for
from reportgen.project.loader import load_project_text
from reportgen.project.model import AXES, PATTERNS, SLOT_VOCABULARY
from reportgen.render.results import dumps, results_document, results_schema
from tests.conftest import ROOT, examples

FUZZ = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow],
                derandomize=True)
UNITS = {
    "time": ["s", "ms", "us", "min", "h"],
    "rate": ["TFLOP/s", "PFLOP/s", "GFLOP/s"],
    "bandwidth": ["GB/s", "TB/s", "MB/s", "Gb/s"],
    "bytes": ["B", "GB", "GiB", "TB", "MB"],
    "flop": ["FLOP", "TFLOP", "PFLOP"],
    "power": ["W", "kW"],
}
positive = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)
# A fraction as a file writes it: 0, or from 10⁻⁶ up (numbers below 10⁻³⁰ are refused as out of range)
fraction = st.one_of(st.just(0.0), st.floats(min_value=1e-6, max_value=1.0))
text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40).filter(str.strip)


def quantity(kind: str) -> st.SearchStrategy[str]:
    return st.builds(lambda value, unit: f"{value:.6g} {unit}", positive, st.sampled_from(UNITS[kind]))


def optional(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A mapping with a random subset of the fields."""
    return st.fixed_dictionaries({}, optional=fields)


@st.composite
def runs(draw: st.DrawFn) -> list[dict[str, Any]]:
    nodes = sorted(draw(st.sets(st.integers(1, 512), min_size=1, max_size=7)))
    form = draw(st.sampled_from(["breakdown", "total", "throughput"]))
    result = []
    for p in nodes:
        if form == "breakdown":
            run = {"nodes": p, "compute": draw(quantity("time")), "communication": f"{draw(fraction) * 100:.4g} s",
                   "idle": f"{draw(fraction) * 50:.4g} s"}
            if draw(st.booleans()):
                run["workers"] = [draw(quantity("time")) for _ in range(draw(st.integers(1, 4)))]
        elif form == "total":
            run = {"nodes": p, "time": draw(quantity("time"))}
        else:
            run = {"nodes": p, "throughput": f"{draw(positive):.6g} sample/s"}
        if draw(st.booleans()):
            run["energy"] = f"{draw(positive):.6g} kWh"
        result.append(run)
    return result


slot = st.builds(lambda choice, why: {"choice": choice, "why": why},
                 st.one_of(st.sampled_from([c for v in SLOT_VOCABULARY.values() for c in v]), text), text)

projects = st.fixed_dictionaries(
    {"project": st.fixed_dictionaries({"title": text}, optional={"authors": st.lists(text, min_size=1, max_size=3),
                                                                 "problem": text, "revision": text,
                                                                 "workload": st.sampled_from(["training",
                                                                                              "inference"])})},
    optional={
        "hardware": optional(peak_compute=quantity("rate"), memory_bandwidth=quantity("bandwidth"),
                             memory_capacity=quantity("bytes"), network_bandwidth=quantity("bandwidth"),
                             network_latency=quantity("time"), io_bandwidth=quantity("bandwidth"),
                             storage=quantity("bytes")),
        "baseline": optional(
            steps=st.lists(st.fixed_dictionaries({"name": st.uuids().map(str), "time": quantity("time")},
                                                 optional={"flops": quantity("flop"), "bytes": quantity("bytes"),
                                                           "io_bytes": quantity("bytes"),
                                                           "net_bytes": quantity("bytes")}), min_size=1, max_size=3),
            memory=st.fixed_dictionaries({"parameters": positive}, optional={"activations": quantity("bytes")}),
            training=st.fixed_dictionaries({"parameters": positive, "tokens": positive,
                                            "mfu": st.floats(0.01, 1.0)}, optional={"deadline": quantity("time")}),
            dataset=st.fixed_dictionaries({"size": quantity("bytes")})),
        "checklist": optional(pressures=optional(data=fraction, training=fraction, model=fraction,
                                                 inference=fraction),
                              tax=st.fixed_dictionaries({"fanout": st.integers(1, 100), "hop_latency": quantity("time"),
                                                         "latency_slo": quantity("time")})),
        "design": optional(axis=st.sampled_from(AXES), nodes=st.integers(1, 4096),
                           slots=optional(**{name: slot for name in SLOT_VOCABULARY}),
                           parallelism=optional(data=st.integers(1, 4096), tensor=st.integers(1, 16),
                                                pipeline=st.integers(1, 16), micro_batches=st.integers(1, 64),
                                                zero_stage=st.integers(0, 3), overlap=fraction)),
        "prediction": st.fixed_dictionaries({"t_comp": quantity("time"), "alpha": quantity("time"),
                                             "beta": quantity("time")},
                                            optional={"max_nodes": st.integers(1, 5000),
                                                      "pattern": st.sampled_from([p for p in PATTERNS
                                                                                  if p != "all-to-all"]),
                                                      "servers": st.integers(1, 64), "peers": st.integers(1, 8),
                                                      "collectives": st.lists(st.fixed_dictionaries(
                                                          {"nodes": st.integers(2, 64), "time": quantity("time")}),
                                                          min_size=1, max_size=3)}),
        "scaling": st.builds(lambda r: {"runs": r}, runs()),
        "pricing": optional(node_hour=st.builds(lambda v: f"{v:.4g} USD", positive),
                            value_of_time=st.builds(lambda v: f"{v:.4g} USD/h", positive),
                            runs_per_month=positive,
                            regimes=optional(spot=st.fixed_dictionaries({"price_fraction": fraction}),
                                             local=st.fixed_dictionaries({"price_fraction": fraction,
                                                                          "utilization": fraction,
                                                                          "min_utilization": fraction}))),
        "energy": optional(node_power=quantity("power"), pue=st.floats(1.0, 3.0),
                           location=st.one_of(st.just({"country": "FRA"}), st.just({"country": "USA",
                                                                                    "region": "texas"}),
                                              st.builds(lambda v: {"carbon_intensity": f"{v:.4g} g/kWh"}, positive))),
        "reliability": st.fixed_dictionaries({"node_mtbf": quantity("time"), "checkpoint_cost": quantity("time")}),
        "decisions": st.lists(st.fixed_dictionaries({"name": st.uuids().map(str),
                                                     "optimize": st.sampled_from(["cost", "time", "carbon"])},
                                                    optional={"max_time": quantity("time")}), min_size=1,
                                 max_size=3),
    }).map(lambda document: _per_hour_limits(document))


def _per_hour_limits(document: dict[str, Any]) -> dict[str, Any]:
    """A serving project is judged per hour: a decision's per-run max_time is refused there (the project's own
    check), so the generator leaves it out of inference projects."""
    if document["project"].get("workload") == "inference":
        for decision in document.get("decisions", []):
            decision.pop("max_time", None)
    return document


RESULTS_SCHEMA = jsonschema.Draft7Validator(results_schema())


def load(text_: str) -> Any:
    return load_project_text(text_, ROOT / "fuzz.yaml", "fuzz.yaml")


def build_json(document: dict[str, Any]) -> dict[str, Any]:
    loaded = load(yaml.safe_dump(document, allow_unicode=True))
    energy = loaded.project.energy
    analysis = analyze(loaded.project, intensity=intensity_for(energy.location if energy else None))
    return json.loads(dumps(results_document(loaded, analysis)))


def finite_everywhere(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite_everywhere(v) for v in value.values())
    if isinstance(value, list):
        return all(finite_everywhere(v) for v in value)
    return True


def invalid_bits(issue: InputError) -> None:
    """The only acceptable failure: located problems of our own."""
    assert issue.problems
    for problem in issue.problems:
        assert problem.line >= 1 and problem.column >= 1 and problem.file and problem.message


@FUZZ
@given(projects)
def test_valid_projects_build_to_json(document: dict[str, Any]) -> None:
    started = time.perf_counter()
    results = build_json(document)  # a valid project must build: an InputError here is a failure
    assert results["schema_version"] == 1
    RESULTS_SCHEMA.validate(results)  # every key documented, every type as documented, for any valid project
    assert finite_everywhere(results), "no NaN or infinity may reach results.json as a float"
    assert time.perf_counter() - started < 10
    goal = results["goal"]
    if goal is not None:  # the verdict agrees with its rows (docs/methods.md#plan-verdict)
        assert goal["met_at_plan"] == plan_verdict([(row["viable"], row["met"]) for row in goal["at_plan"]])


garbage = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(), text,
              st.text(max_size=200), st.sampled_from(["1e999 s", "9**9**9 s", ".inf", "-0 s", "NaN GB", "\u202e s",
                                                      "10 µs", "1,5 s", "1_000 s", "0x10 s", "∞ s", "1 s s"])),
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(text, children, max_size=3)),
    max_leaves=8)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    document = draw(projects)
    target: Any = document
    path = []
    while isinstance(target, dict | list) and target and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(target.keys(), key=str)) if isinstance(target, dict)
                   else st.integers(0, len(target) - 1))
        path.append(key)
        if not isinstance(target[key], dict | list):
            break
        target = target[key]
    how = draw(st.sampled_from(["replace", "unknown-key", "delete", "deep"]))
    if isinstance(target, dict):
        keys = sorted(target.keys(), key=str)
        if how == "unknown-key" or not keys:
            target[draw(text)] = draw(garbage)
        elif how == "delete":
            del target[draw(st.sampled_from(keys))]
        elif how == "deep":
            target[draw(st.sampled_from(keys))] = json.loads("[" * 40 + "]" * 40)
        else:
            target[draw(st.sampled_from(keys))] = draw(garbage)
    elif isinstance(target, list) and target:
        target[draw(st.integers(0, len(target) - 1))] = draw(garbage)
    rendered = yaml.safe_dump(document, allow_unicode=True)
    if draw(st.booleans()):  # a raw edit of the text itself
        position = draw(st.integers(0, len(rendered)))
        rendered = rendered[:position] + draw(st.text(max_size=5)) + rendered[position:]
    return rendered


@FUZZ
@given(mutated())
def test_mutated_projects_load_or_fail_with_located_errors(rendered: str) -> None:
    started = time.perf_counter()
    try:
        loaded = load(rendered)
    except InputError as issue:
        invalid_bits(issue)
    else:
        energy = loaded.project.energy
        analysis = analyze(loaded.project, intensity=intensity_for(energy.location if energy else None))
        dumps(results_document(loaded, analysis))
    assert time.perf_counter() - started < 5, "an input must be refused or accepted fast"
