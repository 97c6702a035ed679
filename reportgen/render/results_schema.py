"""The JSON Schema of results.json (`reportgen schema --results`): every key, its type and what it means.

One source for the schema and for the results reference in docs/ (generated from it), and tested against every
example's output, so that a key added to results.py without a description here fails the suite. Units follow the
document's rule: seconds, bytes, FLOP, watts; kWh for energy, kg for CO2, the project's currency for money; infinity
is the string "inf". Every object lists all its keys (`required`) and no others (`additionalProperties: false`).
"""

from __future__ import annotations

from typing import Any, get_args

from reportgen.analysis.checklist import TaxKind
from reportgen.analysis.common import Origin
from reportgen.analysis.decisions import GoalLimit
from reportgen.analysis.diagnosis import Bound, CeilingName, TimeSource, WallName
from reportgen.analysis.findings import Severity
from reportgen.analysis.patterns import PatternSource
from reportgen.analysis.scaling import Cause
from reportgen.analysis.serving import ObjectiveName
from reportgen.analysis.summary import OptimumSource, VerdictState
from reportgen.project.model import Axis, Objective, PatternName, RegimeName, RunForm, ScalingMode

Schema = dict[str, Any]

_NUMBER: Schema = {"anyOf": [{"type": "number"}, {"enum": ["inf", "-inf"]}]}  # JSON has no infinity


def _of(kind: str, doc: str, *, null: bool = False) -> Schema:
    base: Schema = dict(_NUMBER) if kind == "number" else {"type": kind}
    if null:
        base = {"anyOf": [*base["anyOf"], {"type": "null"}]} if "anyOf" in base else {"type": [kind, "null"]}
    return {**base, "description": doc}


def num(doc: str, *, null: bool = False) -> Schema:
    return _of("number", doc, null=null)


def int_(doc: str, *, null: bool = False) -> Schema:
    return _of("integer", doc, null=null)


def str_(doc: str, *, null: bool = False) -> Schema:
    return _of("string", doc, null=null)


def bool_(doc: str, *, null: bool = False) -> Schema:
    return _of("boolean", doc, null=null)


def one_of(vocabulary: Any, doc: str, *, null: bool = False) -> Schema:
    """A vocabulary key: its values read from the code's Literal type, so the reference lists every one."""
    values: list[Any] = list(get_args(vocabulary))
    return {"enum": [*values, None] if null else values, "description": doc}


def obj(doc: str, properties: dict[str, Schema], *, null: bool = False) -> Schema:
    schema: Schema = {"type": ["object", "null"] if null else "object", "description": doc,
                      "properties": properties, "required": list(properties), "additionalProperties": False}
    return schema


def rows(doc: str, properties: dict[str, Schema], *, null: bool = False) -> Schema:
    item = obj("one row", properties)
    return {"type": ["array", "null"] if null else "array", "description": doc, "items": item}


def items(doc: str, item: Schema) -> Schema:
    return {"type": "array", "description": doc, "items": item}


NODES = int_("node count")
# A measured scale: a node count, or a load level that may be fractional on a load axis (scaling.axis: load).
SCALE = num("node count, or load level with scaling.axis: load")


def interval(of: str) -> Schema:
    return {"type": ["array", "null"], "items": num("a bound"), "minItems": 2, "maxItems": 2,
            "description": f"95 % percentile-bootstrap interval [low, high] of {of} over the repeats (2,000 seeded "
                           "resamples); null with one run"}
TIME = num("seconds per run (per unit of work when the section says per_unit_of_work)")


def _regime() -> Schema:
    return obj("one price regime", {
        "viable": bool_("whether the regime can be used at all (owned nodes below their minimum utilisation cannot)"),
        "reason": str_("why the regime is or is not viable, in words"),
        "price_per_node_hour": num("the node-hour price in this regime"),
        "rows": rows("cost per measured scale in this regime", {
            "nodes": NODES,
            "time_s": num("seconds per run, with the expected preemption restarts added (spot)"),
            "cost": num("money per run"),
            "expected_preemptions": num("expected preemptions per run (spot only)", null=True),
        }),
        "cost_optimal_nodes": int_("the cheapest measured scale in this regime (ties: fewer nodes)", null=True),
        "time_value_optimal_nodes": int_("the scale with the lowest cost plus value of time", null=True),
    })


_GOAL_ROW: dict[str, Schema] = {
    "nodes": NODES, "regime": one_of(RegimeName, "the price regime", null=True),
    "viable": bool_("the regime is viable"), "time_s": num("seconds per run", null=True),
    "cost": num("money per run", null=True), "co2_kg": num("kg CO2e per run", null=True),
    "meets_time": bool_("within the time limit; null without one", null=True),
    "meets_cost": bool_("within the cost limit (per run, or per hour when serving); null without one",
                        null=True),
    "met": bool_("every stated limit met", null=True),
    "time_ratio": num("time / the limit", null=True), "cost_ratio": num("cost / the limit", null=True),
    "monthly_cost": num("cost × runs per month (serving: × 730 hours)", null=True),
    "source": one_of(Origin, "where the values come from"),
    "time_s_ci": interval("time_s"),
    "cost_ci": interval("cost (proportional to the time)"),
    "failure_tax": num("the failure tax's overhead fraction folded into time, cost and CO2e (with reliability)",
                       null=True),
    "cost_per_hour": num("serving: money per hour in this regime", null=True),
    "capacity_rps": num("serving: requests per second served (spot: less the nodes down)", null=True),
    "p99_s": num("serving: the p99 latency there", null=True),
    "meets_load": bool_("serving: capacity reaches the load with its headroom", null=True),
    "meets_latency": bool_("serving: the p99 is within the objective; null when unknown", null=True),
    "load_ratio": num("serving: capacity / capacity needed", null=True),
    "latency_ratio": num("serving: p99 / the objective", null=True)}

_POINT: dict[str, Schema] = {
    "nodes": NODES, "regime": one_of(RegimeName, "its price regime", null=True),
    "cost": num("money per run", null=True), "time_s": num("seconds per run", null=True),
    "cost_per_hour": num("serving: money per hour", null=True),
    "source": one_of(Origin, "measured, or from the USL fit")}

# The document's own keys; each section's schema follows, named after it (reportgen.render.sections uses them).
HEADER: dict[str, Schema] = {
    "schema_version": int_("the version of this document's layout: keys are added, never renamed"),
    "project": obj("the project the results are of", {
        "title": str_("project.title"),
        "revision": str_("project.revision", null=True),
        "input_sha256": str_("SHA-256 of the project file's bytes"),
        "measurements_sha256": str_("SHA-256 of the CSV named by scaling.file, when there is one", null=True),
        "generator_version": str_("the reportgen version that wrote the document"),
    }),
}

DIAGNOSIS: Schema = obj("§1: which resource runs out first, and the axis of distribution that cures it", {
    "ridge_intensity": num("peak compute / memory bandwidth (FLOP per byte): the roofline's ridge", null=True),
    "steps": rows("the roofline of each profiled baseline step", {
        "name": str_("the step's name"),
        "time_s": num("the measured time of the step"),
        "intensity": num("arithmetic intensity W/Q (FLOP per byte); inf when Q = 0 < W", null=True),
        "bound": one_of(Bound, "the largest floor (ties: the earlier in this list)",
                    null=True),
        "floors_s": obj("each resource's lower bound on the step's time", {
            name: num(f"the {name} floor in seconds", null=True)
            for name in ("compute", "memory", "io", "network")}),
        "dominant": bool_("the longest step, whose floors decide the bound"),
        "attained_flops_per_s": num("W / measured time", null=True),
        "attained_bytes_per_s": num("Q / measured time", null=True),
        "roof_efficiency": num("the attained rate over the roofline's rate at this intensity", null=True),
    }),
    "walls": rows("each wall: what is demanded of one node against what it has", {
        "wall": one_of(WallName, "the wall"),
        "fill": num("demand / capacity; above 1 the wall binds", null=True),
        "binds": bool_("whether the wall binds"),
        "demand": num("what the workload needs (bytes, requests per second or seconds)", null=True),
        "capacity": num("what one device or node offers, in the same unit", null=True),
    }),
    "min_devices": int_("the fewest devices that hold one shard of the memory demand", null=True),
    "min_nodes": int_("min_devices over devices_per_node, rounded up", null=True),
    "devices_per_node": int_("hardware.devices_per_node (1 when not given)"),
    "device_memory_bytes": num("the memory of one device: the memory wall's capacity", null=True),
    "shard_within_node": bool_("the memory wall binds per device and a perfect shard fits within one node: the "
                               "design must shard the model within each node"),
    "binding_ceiling": one_of(CeilingName, "the ceiling that runs out first"),
    "node_ceiling": one_of(CeilingName, "with a within-node shard required: the ceiling the axis across nodes "
                           "must cure (the next that binds; none when one node holding the shard suffices)", null=True),
    "node_axis": one_of(Axis, "the axis that cures node_ceiling", null=True),
    "time_source": one_of(TimeSource, "where the time wall's single-machine time comes from: the measured 1-node "
                          "run (it outranks the model) or 6·P·T / (MFU·π)", null=True),
    "axis": one_of(Axis, "the axis of distribution that cures the binding ceiling"),
    "declared_axis": one_of(Axis, "design.axis", null=True),
    "axis_matches": bool_("whether the declared axis is the one the diagnosis names", null=True),
    "secondary_ceilings": rows("ceilings that also bind, with the axis each needs", {
        "ceiling": one_of(CeilingName, "the ceiling"), "axis": one_of(Axis, "the axis that cures it")}),
    "workers_for_deadline": int_("workers needed to meet the training deadline at the stated MFU", null=True),
    "replicas_needed": int_("serving replicas needed for the request rate", null=True),
    "training_time_s": num("single-machine training time from baseline.training", null=True),
    "memory_demand_bytes": num("the memory stack's total: parameters × bytes each, activations, other",
                               null=True),
}, null=True)

CHECKLIST: Schema = obj("the six-stage design checklist and the communication tax", {
    "tax": obj("the communication tax against its budget", {
        "kind": one_of(TaxKind, "interactive (fan-out against a latency SLO) or training (R(p) at the plan)",
                       null=True),
        "tax_s": num("the tax in seconds", null=True),
        "budget_left_s": num("what the budget leaves after the tax", null=True),
        "exhausting_fanout": int_("the fan-out at which the tax uses up the budget", null=True),
        "ratio": num("tax / SLO (interactive) or R(p) at the plan (training)", null=True),
        "binds": bool_("whether the tax exhausts the budget"),
    }),
    "stages": rows("the checklist's answers", {
        "stage": int_("1 to 6"), "name": str_("the stage"), "answer": str_("the answer"),
        "source": str_("where the answer came from")}),
    "pressures": {"type": "object", "description": "checklist.pressures as given (0 to 1 each)",
                  "additionalProperties": num("a pressure")},
    "top_pressures": items("the pressures ranked highest", str_("a pressure")),
}, null=True)

STAGE_DEGREES = {str(stage): int_(f"the smallest d at which ZeRO stage {stage} fits one device", null=True)
                 for stage in range(4)}
LAYOUT: Schema = obj("§3.2: the parallel layout of design.parallelism: memory per device and the step's terms", {
    "data": int_("d: the data-parallel degree (declared, or the devices left by tensor and pipeline)", null=True),
    "tensor": int_("t: the tensor-parallel degree"), "pipeline": int_("pp: pipeline stages"),
    "micro_batches": int_("m: micro-batches per step"), "zero_stage": int_("the ZeRO stage, 0 to 3"),
    "overlap": num("share of the data-parallel collective hidden behind compute"),
    "devices": int_("d · t · pp", null=True), "nodes": num("devices / devices_per_node", null=True),
    "memory_per_device_b": num("bytes per device at the declared stage and d", null=True),
    "device_memory_b": num("one device's memory", null=True),
    "fits": bool_("the declared layout's memory per device fits one device", null=True),
    "memory_by_stage": rows("every ZeRO stage's bytes per device at the declared d", {
        "stage": int_("the ZeRO stage"), "weights_b": num("weights per device"),
        "gradients_b": num("gradients per device"), "optimizer_b": num("optimizer state per device"),
        "activations_b": num("activations and other resident memory, as given"), "total_b": num("their sum"),
        "fits": bool_("within one device's memory", null=True)}),
    "min_data_for_stage": obj("the smallest d at which each stage fits, by stage", STAGE_DEGREES),
    "step": obj("the step's terms at the declared layout (§3.2)", {
        "compute_s": num("T_comp · g / (d·t·pp)"), "bubble_s": num("compute × (pp − 1)/m, the 1F1B bubble"),
        "tensor_s": num("tensor parallelism's all-reduces"), "pipeline_s": num("pipeline sends"),
        "data_s": num("(1 − overlap) × the data-parallel collective"), "total_s": num("the step")}, null=True),
    "step_missing": items("the inputs the step time lacks", str_("a field")),
    "data_pattern": one_of(PatternName, "the data-parallel group's collective: ring for stages 0–2, sharded for 3"),
    "optimum": obj("the data-parallel degree with the shortest step at the declared t and pp", {
        "data": int_("d*"), "nodes": num("the nodes it takes"), "speedup": num("T_comp / T_step there")},
        null=True),
}, null=True)

PREDICTION: Schema = obj("§2: predicted speedup from the alpha-beta communication model", {
    "t_comp_s": num("single-node compute time per step, T_comp"),
    "alpha_s": num("α, the latency term per node, as used"),
    "beta_s": num("β, the bandwidth term (message bytes / bandwidth), as used"),
    "uses_fit": bool_("whether α and β are the fit to the measured collectives"),
    "max_nodes": int_("the largest node count evaluated"),
    "p_star": int_("the whole node count of the highest predicted speedup (ties: fewer nodes)"),
    "speedup_at_p_star": num("the predicted speedup there"),
    "efficiency_at_p_star": num("speedup / p* there"),
    "comm_ratio_at_p_star": num("R(p*) = T_comm / T_comp there"),
    "p_comm_dominated": int_("the first node count where communication exceeds computation", null=True),
    "speedup_at_p_comm_dominated": num("the predicted speedup there", null=True),
    "rule_of_thumb_nodes": num("√(T_comp / α): the textbook estimate of the ring's optimum (null for other "
                               "patterns)", null=True),
    "continuous_optimum_nodes": num("where dT_p/dp = 0 (the ring: √((T_comp − 2β)/α), when T_comp > 2β); \"inf\" "
                                    "when T_p keeps falling", null=True),
    "rows": rows("the predicted curve at the report's node counts", {
        "nodes": NODES, "t_comp_s": num("T_comp / p"), "t_comm_s": num("T_comm(p)"),
        "t_step_s": num("the predicted step time"), "speedup": num("T_comp / t_step"),
        "comm_ratio": num("T_comm / (T_comp / p)")}),
    "sensitivity": rows("p* and its speedup with α and β scaled", {
        "alpha_scale": num("factor applied to α"), "beta_scale": num("factor applied to β"),
        "p_star": int_("the optimum under the scaled model"), "speedup": num("the speedup there")}),
    "fit": obj("α and β fitted to the measured collectives", {
        "alpha_s": num("fitted α"), "beta_s": num("fitted β"),
        "residual_s": num("root-mean-square residual of the fit"),
        "bandwidth_bytes_per_s": num("link bandwidth of the size-aware fit", null=True),
        "min_bytes": num("the smallest message size the size-aware fit used", null=True),
        "points": int_("measurements the fit used (0: the two-point exact solution)")}, null=True),
    "capped": bool_("p* is max_nodes: the optimum lies beyond the range evaluated"),
    "fit_p_star": int_("the p* the fitted α and β imply", null=True),
    "fit_continuous_optimum_nodes": num("the continuous optimum of the fitted model", null=True),
    "bus_bandwidths": rows("the size-aware fit's bandwidth per node as nccl-tests' bus bandwidth, at each node "
                           "and rank count the fit used (B × ((r − 1)/r) / ((p − 1)/p)): compare with the log's "
                           "busbw column", {
                               "nodes": NODES, "ranks": int_("ranks (GPUs) the collectives ran over"),
                               "bytes_per_s": num("the bus bandwidth")}),
    "usl_equivalent": obj("the USL coefficients the alpha-beta model corresponds to (the ring's only: null for "
                          "other patterns)", {
        "sigma": num("σ = 2β / T_comp, contention", null=True), "kappa": num("κ = α / T_comp, coherency", null=True)}),
    "pattern": one_of(PatternName, "the communication pattern T_comm(p) follows (§3.1)"),
    "pattern_source": one_of(PatternSource, "where the pattern was read: prediction.pattern, the layout's data-"
                             "parallel group, the communication slot, or the ring by default"),
    "formula": str_("the T_comm(p) formula used, as the methodology prints it"),
    "formula_source": str_("where the formula comes from, and what it leaves out"),
    "layout": LAYOUT,
    "model_departure": num("the largest |S_pred − S_meas| / S_meas at the measured scales", null=True),
}, null=True)

SCALING: Schema = obj("§3: measured scaling and where every lost fold of speedup went", {
    "form": one_of(RunForm, "how the runs were written"),
    "reference_nodes": num("the smallest measured scale, the reference of speedup"),
    "per_unit_of_work": bool_("times are per unit of work (throughput form without scaling.work_per_run)"),
    "rows": rows("one row per measured node count", {
        "nodes": SCALE, "time_s": num("T_p: the measured time per run", null=True),
        "speedup": num("S_p = T_ref · ref / T_p"), "efficiency": num("E_p = S_p / p"),
        "comm_share": num("communication / T_p (breakdown form)", null=True),
        "idle_share": num("idle / T_p (breakdown form)", null=True),
        "karp_flatt": num("the experimentally determined serial fraction e_p", null=True),
        "lost_folds": num("p − S_p: folds of speedup lost"),
        "lost_serial": num("the folds lost to the serial fraction", null=True),
        "lost_communication": num("the folds lost to communication", null=True),
        "lost_imbalance": num("the folds lost to load imbalance", null=True),
        "lost_io": num("the folds lost to I/O that did not shrink (runs that give io)", null=True),
        "lost_bubble": num("the folds lost to the pipeline bubble (runs that give bubble)", null=True),
        "lost_contention": num("the folds lost to contention: an oversubscribed run's compute that did not shrink "
                               "(runs whose ranks_per_node exceed hardware.cores)", null=True),
        "lost_startup": num("the folds lost to start-up: the wall time less the breakdown's parts (runs that give "
                            "both)", null=True),
        "gustafson": num("weak mode: Gustafson's serial fraction s_p = (q − S_p)/(q − 1)", null=True),
        "time_ci": interval("time_s (the same as time_s_ci)"),
        "imbalance": num("max / mean − 1 of the per-worker compute times", null=True),
        "repeats": int_("runs measured at this node count; the row holds their medians"),
        "time_s_ci": interval("time_s"), "speedup_ci": interval("speedup"),
        "efficiency_ci": interval("efficiency")}),
    "pop": rows("POP efficiency metrics per scale (breakdown form)", {
        "nodes": SCALE, "load_balance": num("mean / max worker compute"),
        "comm_efficiency": num("max compute / runtime", null=True),
        "parallel_efficiency": num("load balance × communication efficiency", null=True),
        "imbalance": num("max / mean − 1")}),
    "comm_fit": obj("a + b·p fitted to the measured communication times", {
        "a_s": num("intercept"), "b_s": num("slope per node"), "residual_s": num("RMS residual"),
        "implied_p_star": int_("the optimum it implies", null=True)}, null=True),
    "knee_nodes": num("the knee: the first scale whose efficiency falls below the threshold", null=True),
    "knee_cause": one_of(Cause, "the cause with the most lost time beyond the knee (at the largest scale without one)",
                         null=True),
    "knee_cause_inferred": bool_("the cause was inferred (no breakdown), not measured"),
    "peak_nodes": num("the measured scale of the largest speedup"),
    "first_below_half_efficiency_nodes": num("the first scale with efficiency below 0.5", null=True),
    "amdahl": obj("Amdahl's law fitted to the speedups", {
        "serial_fraction": num("s"), "max_speedup": num("1 / s")}, null=True),
    "usl": obj("the Universal Scalability Law fitted to the speedups", {
        "sigma": num("σ, contention"), "kappa": num("κ, coherency"), "gamma": num("γ, single-node scale"),
        "peak_nodes": num("√((1 − σ)/κ), the continuous peak", null=True),
        "peak_whole_nodes": int_("the whole concurrency beside the peak with the larger predicted capacity "
                                 "(ties: the smaller)", null=True),
        "peak_capacity": num("X at the continuous peak: the predicted peak throughput (throughput form, in its "
                             "work per second) or speedup", null=True)}, null=True),
    "karp_flatt_slope": num("the Karp-Flatt serial fraction's slope per node", null=True),
    "axis": {"enum": ["nodes", "load"], "description": "scaling.axis: what a scale counts, whole nodes or a "
                                                       "load level (concurrency) that may be fractional"},
    "karp_flatt_trend": {"enum": ["rising", "flat", "falling", None],
                         "description": "rising (falling) when the slope moves e by more than 10 % of its mean "
                                        "over the measured range, else flat; drives the inferred knee cause"},
    "knee_uncertain": bool_("the knee scale's speedup interval overlaps a neighbouring scale's"),
    "noisy_nodes": items("scales whose time interval's half-width exceeds 10 % of the median", SCALE),
    "mode": one_of(ScalingMode, "scaling.mode: strong (fixed work per run) or weak (fixed work per node: scaled "
                   "speedups q·T_ref/T_p, Gustafson in place of Amdahl and Karp–Flatt)"),
    "gustafson": obj("weak mode: Gustafson's law S = q − s(q − 1) fitted to the scaled speedups", {
        "serial_fraction": num("s")}, null=True),
    "slower_than_serial_nodes": items("scales slower than any serial fraction explains (Karp–Flatt e > 1, or every "
                                      "scale when Amdahl's f ≥ 1)", SCALE),
    "outlier_repeats": rows("single repeats far from their scale's others (three repeats: more than 2× from the "
                            "middle of the other two; four or more: beyond 3 IQR outside the quartiles)", {
        "nodes": SCALE, "position": int_("the repeat's place among its scale's rows, from 1"),
        "value": num("its time per run (s), or its throughput in throughput form"),
        "centre": num("what it was held against"), "repeats": int_("the scale's repeats")}),
}, null=True)

COST: Schema = obj("§4: cost per run and the marginal speedup money buys", {
    "currency": str_("pricing.currency"),
    "per_unit_of_work": bool_("costs are per unit of work"),
    "rows": rows("on-demand cost per measured scale", {
        "nodes": NODES, "cost": num("money per run"),
        "total_with_time_value": num("cost plus the value of the run's time", null=True)}),
    "marginal": rows("what each step up in scale buys", {
        "from_nodes": NODES, "to_nodes": NODES, "d_speedup": num("speedup gained"),
        "d_cost": num("money added per run"), "speedup_per_cost": num("d_speedup / d_cost")}),
    "cost_optimal_nodes": int_("the cheapest measured scale on demand (ties: fewer nodes)"),
    "fastest_nodes": int_("the fastest measured scale"),
    "cost_ratio": num("cost at the fastest / cost at the cheapest"),
    "speedup_ratio": num("speedup at the fastest / speedup at the cheapest"),
    "time_value_optimal_nodes": int_("the lowest cost plus value of time", null=True),
    "regimes": {"type": "object", "description": "each price regime the project states, by name "
                "(on_demand, spot, local)", "additionalProperties": _regime()},
}, null=True)

ENERGY: Schema = obj("§5: energy and carbon per run", {
    "carbon_intensity_g_per_kwh": num("grid carbon intensity used", null=True),
    "carbon_source": str_("where the intensity came from", null=True),
    "per_unit_of_work": bool_("energy and CO2 are per unit of work"),
    "rows": rows("energy and CO2e per measured scale", {
        "nodes": NODES, "energy_kwh": num("kWh per run, PUE included"),
        "co2_kg": num("kg CO2e per run (null without a carbon intensity)", null=True),
        "measured": bool_("the energy was measured, not modelled"),
        "monthly_energy_kwh": num("kWh per month at pricing.runs_per_month", null=True),
        "monthly_co2_kg": num("kg CO2e per month", null=True),
        "co2_recorded_kg": num("the CO2e an ingested CodeCarbon file recorded for the run, with its own "
                               "intensity of the day (co2_kg always uses this report's one intensity)",
                               null=True),
        "recorded_intensity_g_per_kwh": num("that record's intensity: its CO2e over the measured energy "
                                            "(without PUE)", null=True)}),
    "carbon_optimal_nodes": int_("the scale with the least CO2e per run", null=True),
    "modelled": bool_("energy.node_power is given, so scales without a measured energy are modelled"),
    "unknown_nodes": items("measured scales with no energy: neither measured nor modelled (no "
                           "energy.node_power)", NODES),
}, null=True)

RELIABILITY: Schema = obj("failures at scale: checkpoint interval and its overhead", {
    "rows": rows("per scale", {
        "nodes": NODES, "system_mtbf_s": num("node MTBF / nodes"),
        "interval_s": num("Young-Daly checkpoint interval"),
        "overhead_fraction": num("time lost to checkpoints and restarts, as a share")}),
    "planned_nodes": int_("design.nodes", null=True),
    "planned_overhead_fraction": num("the overhead at the plan: at the declared checkpoint interval when one is "
                                     "declared, else at Daly's", null=True),
    "planned_time_s": num("the measured time at the plan with the overhead folded in", null=True),
    "declared_interval": obj("reliability.checkpoint_interval held against Daly's interval", {
        "nodes": NODES, "interval_s": num("the declared interval"),
        "overhead_fraction": num("the overhead at the declared interval"),
        "optimal_interval_s": num("Daly's interval there"),
        "optimal_overhead_fraction": num("the overhead at Daly's interval")}, null=True),
}, null=True)

GOAL: Schema = obj("the goal checked at the plan, in each price regime", {
    "text": str_("project.goal.text", null=True),
    "time_per_run_s": num("the goal's time limit", null=True),
    "cost_per_run": num("the goal's cost limit", null=True),
    "plan_nodes": int_("design.nodes", null=True),
    "plan_measured": bool_("whether the plan's node count was measured"),
    "met_at_plan": bool_("a viable regime meets the goal at the plan; null when it cannot be judged",
                         null=True),
    "at_plan": rows("the plan in each price regime (an unmeasured plan: as the USL fit has it, source "
                    "fitted); a serving project's rows carry the hourly keys, with the per-run ones null",
                    _GOAL_ROW),
    "cheapest_meeting": obj("the cheapest measured point that meets the goal", _POINT, null=True),
    "fitted_meeting": obj("no measured point meets the goal: the smallest unmeasured scale the USL fit says "
                          "would (training)", _POINT, null=True),
    "none_meets": bool_("no measured point meets the goal"),
    "runs_per_month": num("pricing.runs_per_month", null=True),
    "monthly_cost": num("the plan's monthly spend in its cheapest regime that meets the goal", null=True),
    "note": str_("what could not be checked, in words", null=True),
}, null=True)

PROVENANCE: Schema = obj("where each measured number came from", {
    "rows": rows("per measured scale", {
        "nodes": SCALE, "origin": str_("typed in, measured, or ingested (and from what)"),
        "energy_origin": str_("where a measured energy came from", null=True),
        "details": items("the provenance comments of the row", str_("a comment"))}),
    "ranks_nodes": int_("the largest scale with a per-rank split from traces", null=True),
    "ranks": rows("each rank's split at that scale, seconds per run", {
        "rank": int_("the rank"), "compute_s": num("compute"), "communication_s": num("exposed transfer"),
        "wait_s": num("waiting for the slowest rank"), "idle_s": num("idle"), "io_s": num("memory-only time")}),
    "wait_measured_nodes": items("scales whose wait for the slowest rank was measured", SCALE),
}, null=True)

SERVING: Schema = obj("§5.x: a serving project's load served within its p99 objective, and its hourly cost", {
    "load_rps": num("the peak request rate to serve"),
    "p99_objective_s": num("the p99 latency objective", null=True),
    "headroom": num("spare capacity wanted at the peak, as a fraction of the load"),
    "capacity_needed_rps": num("load × (1 + headroom)"),
    "cost_per_hour_limit": num("the goal's budget per hour", null=True),
    "nodes_to_serve": int_("the smallest measured scale that serves, else the smallest the USL fit says does",
                           null=True),
    "nodes_to_serve_source": {"enum": ["measured", "fitted", None], "description": "where nodes_to_serve "
                              "comes from"},
    "limited_by": {"enum": ["capacity", "latency", None], "description": "what keeps every scale from serving"},
    "nodes_lower_bound": int_("no fewer nodes can serve at the best capacity per node measured", null=True),
    "latency_model": str_("how the p99 is known: measured, interpolated, or modelled"),
    "hours_per_month": num("the hours a month counts (730)"),
    "rows": rows("each measured scale, plus the plan and the fitted scale to serve when unmeasured", {
        "nodes": NODES, "capacity_rps": num("requests per second sustained", null=True),
        "capacity_source": {"enum": ["measured", "fitted"], "description": "measured, or from the USL fit"},
        "p99_s": num("p99 latency there", null=True),
        "p99_source": {"enum": ["measured", "interpolated", "modelled", None],
                       "description": "how the p99 is known (null: unknown there)"},
        "meets_load": bool_("capacity ≥ capacity needed", null=True),
        "meets_latency": bool_("p99 ≤ the objective; null when unknown", null=True),
        "serves": bool_("meets the load and every stated objective, each known there; null when one is not known "
                        "(never true with an objective unknown)", null=True),
        "cost_per_hour": num("nodes × the on-demand price", null=True),
        "cost_per_million_requests": num("cost per hour / (load × 3600) × 10⁶", null=True),
        "energy_kwh_per_hour": num("kWh per hour of service, PUE included", null=True),
        "energy_measured": bool_("from the run's measured energy"),
        "co2_kg_per_hour": num("kg CO2e per hour", null=True),
        "capacity_per_s": num("the load's unit per second sustained (capacity_rps, named for any unit)", null=True),
        "ttft_p99_s": num("p99 time to first token there", null=True),
        "ttft_p99_source": {"enum": ["measured", "interpolated", None],
                            "description": "how the p99 TTFT is known (null: unknown there)"},
        "tpot_p99_s": num("p99 time per output token there", null=True),
        "tpot_p99_source": {"enum": ["measured", "interpolated", None],
                            "description": "how the p99 TPOT is known (null: unknown there)"},
        "cost_per_million": num("cost per hour / (load × 3600) × 10⁶, per million of serving.unit", null=True),
        "unknown": items("the stated objectives not known at this scale: the measurement that would decide it",
                         one_of(ObjectiveName, "an objective"))}),
    "regimes": rows("each price regime as a service sees it", {
        "name": one_of(RegimeName, "the regime"), "price_per_node_hour": num("the price in this regime"),
        "viable": bool_("whether the regime can be used"), "reason": str_("why, in words"),
        "down_fraction": num("spot: expected share of nodes down after preemptions")}),
    "points": rows("every measured scale in every regime, against the goal (the decisions choose among those "
                   "that serve)", dict(_GOAL_ROW)),
    "unit": str_("the unit of work the load counts: request, token, sample, ... (every label says it)"),
    "load_per_s": num("the peak load, in serving.unit per second (load_rps, named for any unit)"),
    "capacity_needed_per_s": num("load × (1 + headroom), in serving.unit per second"),
    "objectives": obj("every latency objective, null when not stated", {
        "p99_s": num("end-to-end p99 latency", null=True), "ttft_p99_s": num("p99 time to first token", null=True),
        "tpot_p99_s": num("p99 time per output token", null=True)}),
    "capacity_only": bool_("nodes_to_serve is a fitted scale whose capacity suffices but some objective is not "
                           "known there (capacity only, latency unmeasured)"),
    "replica": obj("one replica's memory (§5.y): weights at 2 B per parameter unless stated, and the KV cache", {
        "memory_b": num("weights + KV cache + activations and other memory"), "weights_b": num("the weights"),
        "kv_b": num("kv_bytes_per_token × tokens_in_flight", null=True),
        "devices": int_("ceil(memory / device memory): tensor-parallel within a node"),
        "replicas_per_node": int_("floor(devices_per_node / devices); 0 when a replica exceeds a node")},
        null=True),
    "input_tokens_per_output": num("input tokens per output token, when the load counts output tokens", null=True),
}, null=True)

SUMMARY: Schema = obj("§7.1: page 1, as a reviewer writes it", {
    "verdict": str_("the goal's verdict at the plan, in the project's dominant metric"),
    "state": one_of(VerdictState, "how the verdict reads"),
    "gap": str_("when the goal is missed: the gap in its own terms and the cheapest way to meet it", null=True),
    "optimum": obj("the operating point the evidence supports", {
        "nodes": int_("the node count", null=True),
        "source": one_of(OptimumSource, "where it comes from", null=True),
        "text": str_("the sentence")}),
    "model": str_("the α–β model's optimum as the model's, or why it does not describe the system", null=True),
    "evidence": str_("how strong the measurements are: single runs, intervals, flagged runs", null=True),
    "knee": str_("the measured curve's knee and the largest loss beyond it (no cause without a knee)",
                 null=True),
    "blocker": str_("an error that says the design cannot start, with its fix: page 1 opens with it", null=True),
    "failure_tax": str_("with reliability: the failure tax folded into the verdict's figures, and the time Daly's "
                        "interval would save", null=True),
    "layout": str_("with design.parallelism: the layout, its memory per device against the device, and where each "
                   "ZeRO stage fits", null=True),
    "next_action": obj("the one next action: the step that most changes the verdict", {
        "code": str_("the finding code it comes from; none when no finding calls for one"),
        "text": str_("the action"),
        "rank": {"enum": [1, 2, 3, 4, 5, None], "description": "ANALYSES §7.1's order: 1 an error that stops the "
                 "design, 2 the plan against the evidence, 3 a measurement that cannot be right, 4 the model "
                 "against the measurements, 5 noise and the rest; null without an action"}}),
})

DECISIONS: Schema = rows("one recommendation per deployment context (a serving project: among the scales that serve, "
                  "with the hourly keys filled and the per-run ones null)", {
    "name": str_("the context's name"), "optimize": one_of(Objective, "the objective"),
    "nodes": int_("the recommended scale", null=True),
    "regime": one_of(RegimeName, "the price regime it is priced in", null=True),
    "time_s": num("seconds per run", null=True), "cost": num("money per run", null=True),
    "co2_kg": num("kg CO2e per run", null=True),
    "p99_s": num("serving: the p99 there", null=True),
    "cost_per_hour": num("serving: money per hour", null=True),
    "co2_kg_per_hour": num("serving: kg CO2e per hour", null=True),
    "time_s_ci": interval("time_s"), "cost_ci": interval("cost (proportional to the time)"),
    "within_limits": bool_("the recommendation meets the context's limits"),
    "note": str_("why, in words"),
    "nearest": obj("no point is within the limits: the one whose largest excess over a limit is the smallest", {
        "nodes": NODES, "regime": str_("its price regime", null=True)}, null=True),
    "limits": obj("the limits applied", {
        "max_time_s": num("time limit", null=True), "max_cost": num("cost limit", null=True),
        "max_co2_kg": num("carbon limit", null=True),
        "max_p99_s": num("serving: p99 limit", null=True),
        "max_cost_per_hour": num("serving: hourly cost limit", null=True),
        "from_goal": items("limits taken from the project's goal", one_of(GoalLimit, "a limit"))}),
}, null=True)

TRADE_OFFS: Schema = rows("what each context gives up against another's choice", {
    "context": str_("the context"), "instead_of": str_("the other context"),
    "time_ratio": num("× slower", null=True), "cost_ratio": num("× more money", null=True),
    "co2_ratio": num("× more CO2e", null=True)}, null=True)

FINDINGS: Schema = rows("every warning and error the analyses raise, most severe first", {
    "severity": one_of(Severity, "how serious"),
    "code": str_("a stable identifier, for example wrong-axis"), "message": str_("the finding, with its numbers"),
    "path": str_("the project-file field it is about")})

