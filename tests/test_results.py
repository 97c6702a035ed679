"""results.json: every key of the contract, its conventions, and byte-identical output."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import pytest

from reportgen.keys import Key, derived
from reportgen.pipeline import BuildOptions, build
from reportgen.render.results import dumps, json_of
from reportgen.render.results_schema import object_schema
from tests.conftest import DATA, INPUTS

CONTRACT = {
    "": ["schema_version", "project", "diagnosis", "checklist", "prediction", "scaling", "cost", "energy",
         "reliability", "decisions", "findings"],
    "project": ["title", "revision", "input_sha256", "generator_version"],
    "diagnosis": ["ridge_intensity", "steps", "walls", "min_devices", "binding_ceiling", "axis", "declared_axis",
                  "axis_matches", "secondary_ceilings", "workers_for_deadline", "replicas_needed"],
    "diagnosis.steps": ["name", "intensity", "bound", "floors_s", "dominant"],
    "diagnosis.steps.floors_s": ["compute", "memory", "io", "network"],
    "diagnosis.walls": ["wall", "fill", "binds"],
    "checklist.tax": ["kind", "tax_s", "budget_left_s", "exhausting_fanout", "ratio", "binds"],
    "prediction": ["p_star", "speedup_at_p_star", "efficiency_at_p_star", "comm_ratio_at_p_star",
                   "p_comm_dominated", "speedup_at_p_comm_dominated", "rows", "sensitivity", "fit", "usl_equivalent"],
    "prediction.rows": ["nodes", "t_comp_s", "t_comm_s", "t_step_s", "speedup", "comm_ratio"],
    "prediction.sensitivity": ["alpha_scale", "beta_scale", "p_star", "speedup"],
    "prediction.fit": ["alpha_s", "beta_s", "residual_s"],
    "prediction.usl_equivalent": ["sigma", "kappa"],
    "scaling": ["rows", "form", "reference_nodes", "pop", "comm_fit", "knee_nodes", "knee_cause", "peak_nodes",
                "amdahl", "usl"],
    "scaling.rows": ["nodes", "time_s", "speedup", "efficiency", "comm_share", "idle_share", "karp_flatt",
                     "lost_folds", "lost_serial", "lost_communication", "lost_imbalance", "imbalance"],
    "scaling.pop": ["nodes", "load_balance", "comm_efficiency", "parallel_efficiency"],
    "scaling.comm_fit": ["a_s", "b_s", "implied_p_star"],
    "scaling.amdahl": ["serial_fraction", "max_speedup"],
    "scaling.usl": ["sigma", "kappa", "gamma", "peak_nodes"],
    "cost": ["rows", "marginal", "cost_optimal_nodes", "fastest_nodes", "cost_ratio", "speedup_ratio",
             "time_value_optimal_nodes", "regimes"],
    "cost.rows": ["nodes", "cost", "total_with_time_value"],
    "cost.marginal": ["from_nodes", "to_nodes", "d_speedup", "d_cost", "speedup_per_cost"],
    "cost.regimes.on_demand": ["viable", "reason", "rows", "cost_optimal_nodes", "time_value_optimal_nodes"],
    "cost.regimes.spot": ["viable", "reason", "rows", "cost_optimal_nodes", "time_value_optimal_nodes"],
    "cost.regimes.local": ["viable", "reason", "rows", "cost_optimal_nodes", "time_value_optimal_nodes"],
    "cost.regimes.spot.rows": ["nodes", "time_s", "cost"],
    "energy": ["carbon_intensity_g_per_kwh", "carbon_source", "rows", "carbon_optimal_nodes"],
    "energy.rows": ["nodes", "energy_kwh", "co2_kg", "measured"],
    "reliability.rows": ["nodes", "system_mtbf_s", "interval_s", "overhead_fraction"],
    "decisions": ["name", "optimize", "nodes", "time_s", "cost", "co2_kg", "within_limits"],
    "findings": ["severity", "code", "message", "path"],
}


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("results")
    build(INPUTS / "example.yaml", BuildOptions(out_root=out, formats=("json",)))
    return json.loads((out / "example" / "results.json").read_text())


def lookup(document: dict, dotted: str) -> object:
    value: object = document
    for part in filter(None, dotted.split(".")):
        value = value[0] if isinstance(value, list) else value
        value = value[part]  # type: ignore[index]
    return value[0] if isinstance(value, list) else value


@pytest.mark.parametrize("where", sorted(CONTRACT))
def test_every_contract_key_is_produced_for_the_example(example: dict, where: str) -> None:
    node = lookup(example, where)
    assert isinstance(node, dict), f"{where} is {node!r}"
    missing = [key for key in CONTRACT[where] if key not in node]
    assert not missing, f"{where} lacks {missing}"


def test_conventions(example: dict) -> None:
    assert example["schema_version"] == 1
    for section in ("prediction", "scaling", "cost", "energy"):
        rows = example[section]["rows"]
        assert [r["nodes"] for r in rows] == sorted(r["nodes"] for r in rows)
        assert all(isinstance(r["nodes"], int) for r in rows)
    assert example["energy"]["carbon_source"] == "codecarbon: country USA, region virginia"
    assert example["energy"]["carbon_intensity_g_per_kwh"] == pytest.approx(244.76, abs=0.01)
    text = json.dumps(example)
    assert "NaN" not in text and "Infinity" not in text


def test_infinity_is_a_string() -> None:
    assert json.loads(dumps({"a": math.inf, "b": [1.0, -math.inf]})) == {"a": "inf", "b": [1.0, "-inf"]}
    with pytest.raises(ValueError):
        dumps({"a": math.nan})


def test_absent_sections_are_null(tmp_path: Path) -> None:
    path = tmp_path / "minimal.yaml"
    path.write_text("project: {title: Only a title}\n")
    build(path, BuildOptions(out_root=tmp_path / "out", formats=("json",)))
    document = json.loads((tmp_path / "out" / "minimal" / "results.json").read_text())
    for section in ("diagnosis", "prediction", "scaling", "cost", "energy", "reliability", "decisions"):
        assert document[section] is None, section


def test_two_builds_are_byte_identical(tmp_path: Path) -> None:
    for out in ("a", "b"):
        build(INPUTS / "example.yaml", BuildOptions(out_root=tmp_path / out, formats=("json",)))
    assert (tmp_path / "a/example/results.json").read_bytes() == (tmp_path / "b/example/results.json").read_bytes()


@pytest.mark.parametrize("path", sorted(INPUTS.glob("*.yaml")) + sorted((DATA / "good").glob("*.yaml")),
                         ids=lambda p: p.stem)
def test_every_output_follows_the_results_schema(path: Path) -> None:
    # the schema documents every key (additionalProperties: false), so a key added without a description fails
    import jsonschema

    from reportgen.pipeline import analyze_loaded
    from reportgen.project.loader import load_project
    from reportgen.render.results import results_schema

    jsonschema.Draft7Validator.check_schema(results_schema())
    _, document = analyze_loaded(load_project(path))
    jsonschema.Draft7Validator(results_schema()).validate(json.loads(dumps(document)))


def test_schema_results_prints_the_results_schema(capsys: pytest.CaptureFixture[str]) -> None:
    from reportgen.commands.cli import main

    assert main(["schema", "--results", "-o", "-"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["title"] == "reportgen results.json" and "scaling" in schema["properties"]


def _key_paths(schema: dict, prefix: str = "") -> set[str]:
    paths = set()
    for name, sub in schema.get("properties", {}).items():
        path = f"{prefix}.{name}" if prefix else name
        paths |= {path} | _key_paths(sub, path)
        if isinstance(sub.get("items"), dict):
            paths |= _key_paths(sub["items"], f"{path}[]")
    return paths


def test_the_results_contract_is_additive() -> None:
    """No key of results.json as released is removed or renamed: the schema holds every path of the contract file
    (tests/data/results-keys.txt, which grows only)."""
    from reportgen.render.results import results_schema

    lines = (Path(__file__).parent / "data" / "results-keys.txt").read_text(encoding="utf-8").splitlines()
    released = [line for line in lines if line and not line.startswith("#")]
    assert released == sorted(set(released))
    missing = set(released) - _key_paths(results_schema())
    assert not missing, f"results.json lost released keys: {sorted(missing)[:10]}"


def _descriptions(schema: dict, path: str = "") -> dict[str, str | None]:
    """Every key path of a schema and its description."""
    found: dict[str, str | None] = {path: schema.get("description")} if path else {}
    for name, item in schema.get("properties", {}).items():
        found.update(_descriptions(item, f"{path}.{name}" if path else name))
    for inner in ("items", "additionalProperties"):
        if isinstance(schema.get(inner), dict):
            found.update(_descriptions(schema[inner], f"{path}[]"))
    return found


def test_every_key_of_the_schema_says_what_it_means() -> None:
    from reportgen.render.results import results_schema

    undescribed = [path for path, text in _descriptions(results_schema()).items() if not (text or "").strip()]
    assert undescribed == []


@dataclass(frozen=True)
class _Row:
    nodes: Annotated[int, Key("node count")]


@dataclass(frozen=True)
class _Result:
    seconds: Annotated[float | None, Key("a time", name="time_s", also=("old_time_s",))]
    rows: Annotated[tuple[_Row, ...], Key("the rows")]
    working: float  # the analysis' own: not a key

    @derived(Key("seconds doubled"))
    def doubled_s(self) -> float | None:
        return None if self.seconds is None else 2 * self.seconds


@dataclass(frozen=True)
class _Undeclared:
    nodes: int


@dataclass(frozen=True)
class _Holder:
    rows: Annotated[tuple[_Undeclared, ...], Key("rows of a type that declares nothing")]


@dataclass(frozen=True)
class _Shapeless:
    both: Annotated[int | str, Key("two types at once")]


def test_a_result_is_written_and_described_from_one_declaration() -> None:
    """A field with a Key is in the document and the schema under one name; a field without one is in neither; a
    derived key is computed on reading; the type says null, arrays and rows."""
    assert json_of(_Result(float("inf"), (), 1.0))["time_s"] == float("inf")  # a float until dumps writes it
    document = json_of(_Result(float("inf"), (_Row(2),), 1.0), as_text=True)
    assert document == {"time_s": "inf", "old_time_s": "inf", "rows": [{"nodes": 2}], "doubled_s": "inf"}
    schema = object_schema(_Result, "a result")
    assert schema["required"] == ["time_s", "old_time_s", "rows", "doubled_s"]
    assert schema["properties"]["time_s"]["anyOf"][-1] == {"type": "null"}
    assert schema["properties"]["rows"]["items"]["properties"]["nodes"] == {"type": "integer",
                                                                          "description": "node count"}


def test_a_result_declared_incompletely_fails() -> None:
    """A row type with no declared key, or a key whose type has no JSON shape, stops the schema (and the suite)."""
    with pytest.raises(TypeError, match="declares no key"):
        object_schema(_Holder, "holder")
    with pytest.raises(TypeError, match="one type"):
        object_schema(_Shapeless, "shapeless")
