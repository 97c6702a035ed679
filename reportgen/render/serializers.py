"""Each analysis result as its part of the results.json document (the rules: reportgen.render.results).

One function per section, public, named after it; the section registry (reportgen.render.sections) says which
serializes which. The helpers (`_fit`, `_regime`, `_pair`, ...) shape the parts that several sections share.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from reportgen.analysis.checklist import ChecklistResult
from reportgen.analysis.cost import CostResult, Regime
from reportgen.analysis.decisions import DecisionsResult
from reportgen.analysis.diagnosis import DiagnosisResult
from reportgen.analysis.energy import EnergyResult
from reportgen.analysis.findings import Finding
from reportgen.analysis.fits import AlphaBetaFit
from reportgen.analysis.goal import GoalCheck, GoalResult
from reportgen.analysis.layout import LayoutResult
from reportgen.analysis.prediction import PredictionResult
from reportgen.analysis.provenance import ProvenanceResult
from reportgen.analysis.reliability import ReliabilityResult
from reportgen.analysis.scaling import ScalingResult
from reportgen.analysis.serving import OBJECTIVES, ServingCheck, ServingResult
from reportgen.analysis.summary import SummaryResult

Json = dict[str, Any]


def diagnosis(d: DiagnosisResult | None) -> Json | None:
    if d is None:
        return None
    return {
        "ridge_intensity": d.ridge_intensity,
        "steps": [{"name": s.name, "time_s": s.time_s, "intensity": s.intensity, "bound": s.bound,
                   "floors_s": s.floors_s, "dominant": s.dominant, "attained_flops_per_s": s.attained_flops_per_s,
                   "attained_bytes_per_s": s.attained_bytes_per_s, "roof_efficiency": s.roof_efficiency}
                  for s in d.steps],
        "walls": [{"wall": w.wall, "fill": w.fill, "binds": w.binds, "demand": w.demand, "capacity": w.capacity}
                  for w in d.walls],
        "min_devices": d.min_devices,
        "min_nodes": d.min_nodes,
        "devices_per_node": d.devices_per_node,
        "device_memory_bytes": d.device_memory,
        "shard_within_node": d.shard_within_node,
        "binding_ceiling": d.binding_ceiling,
        "node_ceiling": d.node_ceiling,
        "node_axis": d.node_axis,
        "time_source": d.time_source,
        "axis": d.axis,
        "declared_axis": d.declared_axis,
        "axis_matches": d.axis_matches,
        "secondary_ceilings": [{"ceiling": c.ceiling, "axis": c.axis} for c in d.secondary_ceilings],
        "workers_for_deadline": d.workers_for_deadline,
        "replicas_needed": d.replicas_needed,
        "training_time_s": d.training_time_s,
        "memory_demand_bytes": sum(size for _, size in d.memory_stack) if d.memory_stack else None,
    }


def checklist(c: ChecklistResult | None) -> Json | None:
    if c is None:
        return None
    t = c.tax
    return {
        "tax": {"kind": t.kind, "tax_s": t.tax_s, "budget_left_s": t.budget_left_s,
                "exhausting_fanout": t.exhausting_fanout, "ratio": t.ratio, "binds": t.binds},
        "stages": [{"stage": r.stage, "name": r.name, "answer": r.answer, "source": r.source} for r in c.rows],
        "pressures": dict(c.pressures),
        "top_pressures": list(c.top_pressures),
    }


def _fit(f: AlphaBetaFit | None) -> Json | None:
    return None if f is None else {"alpha_s": f.alpha_s, "beta_s": f.beta_s, "residual_s": f.residual_s,
                                   "bandwidth_bytes_per_s": f.bandwidth_bytes_per_s, "min_bytes": f.min_bytes,
                                   "points": f.points}


def prediction(p: PredictionResult | None) -> Json | None:
    if p is None:
        return None
    return {
        "t_comp_s": p.t_comp_s,
        "alpha_s": p.alpha_s,
        "beta_s": p.beta_s,
        "uses_fit": p.uses_fit,
        "max_nodes": p.max_nodes,
        "p_star": p.p_star,
        "speedup_at_p_star": p.speedup_at_p_star,
        "efficiency_at_p_star": p.efficiency_at_p_star,
        "comm_ratio_at_p_star": p.comm_ratio_at_p_star,
        "p_comm_dominated": p.p_comm_dominated,
        "speedup_at_p_comm_dominated": p.speedup_at_p_comm_dominated,
        "rule_of_thumb_nodes": p.rule_of_thumb_nodes,
        "continuous_optimum_nodes": p.continuous_optimum_nodes,
        "rows": [{"nodes": r.nodes, "t_comp_s": r.t_comp_s, "t_comm_s": r.t_comm_s, "t_step_s": r.t_step_s,
                  "speedup": r.speedup, "comm_ratio": r.comm_ratio} for r in p.rows],
        "sensitivity": [{"alpha_scale": s.alpha_scale, "beta_scale": s.beta_scale, "p_star": s.p_star,
                         "speedup": s.speedup} for s in p.sensitivity],
        "fit": _fit(p.fit),
        "capped": p.capped,
        "fit_p_star": p.fit_p_star,
        "fit_continuous_optimum_nodes": p.fit_continuous_optimum_nodes,
        "bus_bandwidths": [{"nodes": n, "ranks": r, "bytes_per_s": b} for n, r, b in p.bus_bandwidths],
        "usl_equivalent": {"sigma": p.usl_sigma, "kappa": p.usl_kappa},
        "pattern": p.pattern.name,
        "pattern_source": p.pattern_source,
        "formula": p.formula,
        "formula_source": p.pattern.source,
        "layout": layout(p.layout),
        "model_departure": p.model_departure,
    }


def layout(result: LayoutResult | None) -> Json | None:
    if result is None:
        return None
    step = result.step
    return {
        "data": result.data, "tensor": result.tensor, "pipeline": result.pipeline,
        "micro_batches": result.micro_batches, "zero_stage": result.zero_stage, "overlap": result.overlap,
        "devices": result.devices, "nodes": result.nodes, "memory_per_device_b": result.memory_per_device_b,
        "device_memory_b": result.device_memory_b, "fits": result.fits,
        "memory_by_stage": [{"stage": m.stage, "weights_b": m.weights_b, "gradients_b": m.gradients_b,
                             "optimizer_b": m.optimizer_b, "activations_b": m.activations_b, "total_b": m.total_b,
                             "fits": m.fits}
                            for m in result.memory],
        "min_data_for_stage": {str(stage): d for stage, d in enumerate(result.min_data_for_stage)},
        "step": None if step is None else {
            "compute_s": step.compute_s, "bubble_s": step.bubble_s, "tensor_s": step.tensor_s,
            "pipeline_s": step.pipeline_s, "data_s": step.data_s, "total_s": step.total_s},
        "step_missing": list(result.step_missing),
        "data_pattern": result.data_pattern.name,
        "optimum": None if result.optimum_data is None else {
            "data": result.optimum_data, "nodes": result.optimum_nodes, "speedup": result.optimum_speedup},
    }


def scaling(s: ScalingResult | None) -> Json | None:
    if s is None:
        return None
    return {
        "form": s.form,
        "reference_nodes": s.reference_nodes,
        "per_unit_of_work": s.per_unit_of_work,
        "rows": [{"nodes": r.nodes, "time_s": r.time_s, "speedup": r.speedup, "efficiency": r.efficiency,
                  "comm_share": r.comm_share, "idle_share": r.idle_share, "karp_flatt": r.karp_flatt,
                  "lost_folds": r.lost_folds, "lost_serial": r.lost_serial,
                  "lost_communication": r.lost_communication, "lost_imbalance": r.lost_imbalance,
                  "lost_io": r.lost_io, "lost_bubble": r.lost_bubble, "lost_startup": r.lost_startup,
                  "lost_contention": r.lost_contention,
                  "gustafson": r.gustafson, "time_ci": _pair(r.time_ci),
                  "imbalance": r.imbalance, "repeats": r.repeats, "time_s_ci": _pair(r.time_ci),
                  "speedup_ci": _pair(r.speedup_ci), "efficiency_ci": _pair(r.efficiency_ci)} for r in s.rows],
        "pop": [{"nodes": p.nodes, "load_balance": p.load_balance, "comm_efficiency": p.comm_efficiency,
                 "parallel_efficiency": p.parallel_efficiency, "imbalance": p.imbalance} for p in s.pop],
        "comm_fit": None if s.comm_fit is None else {"a_s": s.comm_fit.alpha_s, "b_s": s.comm_fit.beta_s,
                                                      "residual_s": s.comm_fit.residual_s,
                                                      "implied_p_star": s.comm_fit_implied_p_star},
        "knee_nodes": s.knee_nodes,
        "knee_cause": s.knee_cause,
        "knee_cause_inferred": s.knee_cause_inferred,
        "peak_nodes": s.peak_nodes,
        "first_below_half_efficiency_nodes": s.first_below_half_efficiency,
        "amdahl": None if s.amdahl is None else {"serial_fraction": s.amdahl.serial_fraction,
                                                  "max_speedup": s.amdahl.max_speedup},
        "usl": None if s.usl is None else {"sigma": s.usl.sigma, "kappa": s.usl.kappa, "gamma": s.usl.gamma,
                                            "peak_nodes": s.usl.peak_nodes,
                                            "peak_whole_nodes": s.usl.peak_whole_nodes,
                                            "peak_capacity": s.usl.peak_capacity},
        "karp_flatt_slope": s.karp_flatt_slope,
        "karp_flatt_trend": s.karp_flatt_trend,
        "axis": s.axis,
        "knee_uncertain": s.knee_uncertain,
        "noisy_nodes": [r.nodes for r in s.rows if r.noisy],
        "mode": s.mode,
        "gustafson": None if s.gustafson is None else {"serial_fraction": s.gustafson.serial_fraction},
        "slower_than_serial_nodes": list(s.slower_than_serial),
        "outlier_repeats": [{"nodes": o.nodes, "position": o.position, "value": o.value, "centre": o.centre,
                             "repeats": o.repeats} for o in s.outlier_repeats],
    }


def _pair(interval: tuple[float, float] | None) -> list[float] | None:
    return None if interval is None else [interval[0], interval[1]]


def _regime(r: Regime) -> Json:
    return {"viable": r.viable, "reason": r.reason, "price_per_node_hour": r.price_per_node_hour,
            "rows": [{"nodes": x.nodes, "time_s": x.time_s, "cost": x.cost, "expected_preemptions": x.preemptions}
                     for x in r.rows],
            "cost_optimal_nodes": r.cost_optimal_nodes, "time_value_optimal_nodes": r.time_value_optimal_nodes}


def cost(c: CostResult | None) -> Json | None:
    if c is None:
        return None
    return {
        "currency": c.currency,
        "per_unit_of_work": c.per_unit_of_work,
        "rows": [{"nodes": r.nodes, "cost": r.cost, "total_with_time_value": r.total_with_time_value}
                 for r in c.rows],
        "marginal": [{"from_nodes": m.from_nodes, "to_nodes": m.to_nodes, "d_speedup": m.d_speedup,
                      "d_cost": m.d_cost, "speedup_per_cost": m.speedup_per_cost} for m in c.marginal],
        "cost_optimal_nodes": c.cost_optimal_nodes,
        "fastest_nodes": c.fastest_nodes,
        "cost_ratio": c.cost_ratio,
        "speedup_ratio": c.speedup_ratio,
        "time_value_optimal_nodes": c.time_value_optimal_nodes,
        "regimes": {name: _regime(regime) for name, regime in c.regimes.items()},
    }


def energy(e: EnergyResult | None) -> Json | None:
    if e is None:
        return None
    return {
        "carbon_intensity_g_per_kwh": e.carbon_intensity_g_per_kwh,
        "carbon_source": e.carbon_source,
        "per_unit_of_work": e.per_unit_of_work,
        "rows": [{"nodes": r.nodes, "energy_kwh": r.energy_kwh, "co2_kg": r.co2_kg, "measured": r.measured,
                  "monthly_energy_kwh": r.monthly_energy_kwh, "monthly_co2_kg": r.monthly_co2_kg,
                  "co2_recorded_kg": r.co2_recorded_kg,
                  "recorded_intensity_g_per_kwh": r.recorded_intensity_g_per_kwh} for r in e.rows],
        "carbon_optimal_nodes": e.carbon_optimal_nodes,
        "modelled": e.modelled,
        "unknown_nodes": list(e.unknown_nodes),
    }


def reliability(r: ReliabilityResult | None) -> Json | None:
    if r is None:
        return None
    return {
        "rows": [{"nodes": x.nodes, "system_mtbf_s": x.system_mtbf_s, "interval_s": x.interval_s,
                  "overhead_fraction": x.overhead_fraction} for x in r.rows],
        "planned_nodes": r.planned_nodes,
        "planned_overhead_fraction": r.planned_overhead_fraction,
        "planned_time_s": r.planned_time_s,
        "declared_interval": None if r.declared is None else {
            "nodes": r.declared.nodes, "interval_s": r.declared.interval_s,
            "overhead_fraction": r.declared.overhead_fraction, "optimal_interval_s": r.declared.optimal_interval_s,
            "optimal_overhead_fraction": r.declared.optimal_overhead_fraction},
    }


def decisions(d: DecisionsResult | None) -> list[Json] | None:
    """One row per context; a serving project's rows carry p99_s, cost_per_hour and co2_kg_per_hour instead of the
    per-run time_s, cost and co2_kg (null), as its goal's rows do."""
    if d is None:
        return None
    per_run, per_hour = (not d.serving), d.serving
    return [{"name": x.name, "optimize": x.optimize, "nodes": x.nodes, "regime": x.regime,
             "time_s": x.time_s if per_run else None, "cost": x.cost if per_run else None,
             "co2_kg": x.co2_kg if per_run else None,
             "p99_s": x.time_s if per_hour else None, "cost_per_hour": x.cost if per_hour else None,
             "co2_kg_per_hour": x.co2_kg if per_hour else None,
             "time_s_ci": _pair(x.time_ci) if per_run else None, "cost_ci": _pair(x.cost_ci) if per_run else None,
             "within_limits": x.within_limits, "note": x.note,
             "nearest": None if x.nearest is None else {"nodes": x.nearest.nodes, "regime": x.nearest.regime},
             "limits": {"max_time_s": x.max_time_s if per_run else None, "max_cost": x.max_cost if per_run else None,
                        "max_co2_kg": x.max_co2_kg, "max_p99_s": x.max_time_s if per_hour else None,
                        "max_cost_per_hour": x.max_cost if per_hour else None,
                        "from_goal": list(x.limits_from_goal)}} for x in d.decisions]


def provenance(p: ProvenanceResult | None) -> Json | None:
    if p is None:
        return None
    return {"rows": [{"nodes": r.nodes, "origin": r.origin, "energy_origin": r.energy_origin,
                      "details": list(r.details)} for r in p.rows],
            "ranks_nodes": p.ranks_nodes,
            "ranks": [{"rank": t.rank, "compute_s": t.compute, "communication_s": t.communication, "wait_s": t.wait,
                       "idle_s": t.idle, "io_s": t.io} for t in p.ranks],
            "wait_measured_nodes": sorted(p.wait_measured_at)}


_SERVING_CHECK_KEYS = {"cost_per_hour": None, "capacity_rps": None, "p99_s": None, "meets_load": None,
                       "meets_latency": None, "load_ratio": None, "latency_ratio": None}


def _goal_check(c: GoalCheck) -> Json:
    return {"nodes": c.nodes, "regime": c.regime, "viable": c.viable, "time_s": c.time_s, "cost": c.cost,
            "co2_kg": c.co2_kg, "meets_time": c.meets_time, "meets_cost": c.meets_cost, "met": c.met,
            "time_ratio": c.time_ratio, "cost_ratio": c.cost_ratio, "monthly_cost": c.monthly_cost,
            "source": c.source, "time_s_ci": _pair(c.time_ci), "cost_ci": _pair(c.cost_ci),
            "failure_tax": c.failure_tax, **_SERVING_CHECK_KEYS}


def _serving_check(c: ServingCheck) -> Json:
    """A serving point in the goal's row shape: its hourly keys filled, the per-run ones null."""
    return {"nodes": c.nodes, "regime": c.regime, "viable": c.viable, "time_s": None, "cost": None, "co2_kg": None,
            "meets_time": None, "meets_cost": c.meets_cost, "met": c.met, "time_ratio": None,
            "cost_ratio": c.cost_ratio, "monthly_cost": c.monthly_cost, "source": c.source, "time_s_ci": None,
            "cost_ci": None, "failure_tax": None,
            "cost_per_hour": c.cost_per_hour, "capacity_rps": c.capacity_rps, "p99_s": c.p99_s,
            "meets_load": c.meets_load, "meets_latency": c.meets_latency, "load_ratio": c.load_ratio,
            "latency_ratio": c.latency_ratio}


def _cheapest(check: GoalCheck | ServingCheck | None) -> Json | None:
    if check is None:
        return None
    if isinstance(check, ServingCheck):
        return {"nodes": check.nodes, "regime": check.regime, "cost": None, "time_s": None,
                "cost_per_hour": check.cost_per_hour, "source": check.source}
    return {"nodes": check.nodes, "regime": check.regime, "cost": check.cost, "time_s": check.time_s,
            "cost_per_hour": None, "source": check.source}


def serving_goal(s: ServingResult) -> Json:
    """The goal of a serving project, in the goal section's shape (§5.x, RESULTS `goal`)."""
    return {
        "text": s.goal_text, "time_per_run_s": None, "cost_per_run": None, "plan_nodes": s.plan_nodes,
        "plan_measured": s.plan_measured, "met_at_plan": s.met_at_plan if s.plan_measured else None,
        "at_plan": [_serving_check(c) for c in s.at_plan],
        "cheapest_meeting": _cheapest(s.cheapest_meeting), "fitted_meeting": None, "none_meets":
        bool(s.points) and all(p.met is False for p in s.points), "runs_per_month": None,
        "monthly_cost": _plan_monthly(s), "note": s.note or None,
    }


def _plan_monthly(s: ServingResult) -> float | None:
    meeting = [c for c in s.at_plan if c.met and c.monthly_cost is not None]
    chosen = min(meeting, key=lambda c: c.monthly_cost or 0.0) if meeting else (s.at_plan[0] if s.at_plan else None)
    return chosen.monthly_cost if chosen else None


def serving(s: ServingResult | None) -> Json | None:
    if s is None:
        return None
    return {
        "load_rps": s.load_rps, "p99_objective_s": s.p99_objective_s, "headroom": s.headroom,
        "capacity_needed_rps": s.capacity_needed_rps, "cost_per_hour_limit": s.cost_limit_per_hour,
        "nodes_to_serve": s.nodes_to_serve, "nodes_to_serve_source": s.nodes_to_serve_source,
        "limited_by": s.limited_by, "nodes_lower_bound": s.nodes_lower_bound,
        "latency_model": s.latency_model, "hours_per_month": s.runs_per_month_hours,
        "rows": [{"nodes": r.nodes, "capacity_rps": r.capacity_rps, "capacity_source": r.capacity_source,
                  "p99_s": r.p99_s, "p99_source": r.p99_source, "meets_load": r.meets_load,
                  "meets_latency": r.meets_latency, "serves": r.serves, "cost_per_hour": r.cost_per_hour,
                  "cost_per_million_requests": r.cost_per_million_requests,
                  "energy_kwh_per_hour": r.energy_kwh_per_hour, "energy_measured": r.energy_measured,
                  "co2_kg_per_hour": r.co2_kg_per_hour, "capacity_per_s": r.capacity_per_s,
                  "ttft_p99_s": r.ttft_p99_s, "ttft_p99_source": r.ttft_source, "tpot_p99_s": r.tpot_p99_s,
                  "tpot_p99_source": r.tpot_source, "cost_per_million": r.cost_per_million,
                  "unknown": list(r.unknown)} for r in s.rows],
        "regimes": [{"name": r.name, "price_per_node_hour": r.price_per_node_hour, "viable": r.viable,
                     "reason": r.reason, "down_fraction": r.down_fraction} for r in s.regimes],
        "points": [_serving_check(c) for c in s.points],
        "unit": s.unit, "load_per_s": s.load_per_s, "capacity_needed_per_s": s.capacity_needed_per_s,
        "objectives": {f"{name}_s": s.objective(name) for name in OBJECTIVES},
        "capacity_only": s.capacity_only,
        "replica": None if s.replica is None else {
            "memory_b": s.replica.memory_b, "weights_b": s.replica.weights_b, "kv_b": s.replica.kv_b,
            "devices": s.replica.devices, "replicas_per_node": s.replica.replicas_per_node},
        "input_tokens_per_output": s.input_tokens_per_output,
    }


def summary(s: SummaryResult | None) -> Json | None:
    if s is None:
        return None
    return {"verdict": s.verdict, "state": s.state, "gap": s.gap,
            "optimum": {"nodes": s.optimum.nodes, "source": s.optimum.source, "text": s.optimum.text},
            "model": s.model, "evidence": s.evidence, "knee": s.knee, "blocker": s.blocker,
            "failure_tax": s.failure_tax,
            "layout": s.layout,
            "next_action": {"code": s.next_action.code, "text": s.next_action.text, "rank": s.next_action.rank}}


def goal_of(result: GoalResult | ServingResult | None) -> Json | None:
    """The goal section: a training job's goal, or a serving project's (its goal lives in the serving analysis)."""
    return serving_goal(result) if isinstance(result, ServingResult) else goal(result)


def goal(g: GoalResult | None) -> Json | None:
    if g is None:
        return None
    return {
        "text": g.text,
        "time_per_run_s": g.time_limit_s,
        "cost_per_run": g.cost_limit,
        "plan_nodes": g.plan_nodes,
        "plan_measured": g.plan_measured,
        "met_at_plan": g.met_at_plan,
        "at_plan": [_goal_check(c) for c in g.at_plan or g.fitted_at_plan],
        "cheapest_meeting": _cheapest(g.cheapest_meeting),
        "fitted_meeting": _cheapest(g.fitted_meeting),
        "none_meets": g.none_meets,
        "runs_per_month": g.runs_per_month,
        "monthly_cost": g.monthly_cost,
        "note": g.note or None,
    }


def trade_offs(d: DecisionsResult | None) -> list[Json] | None:
    if d is None:
        return None
    return [{"context": t.context, "instead_of": t.instead_of, "time_ratio": t.time_ratio,
             "cost_ratio": t.cost_ratio, "co2_ratio": t.co2_ratio} for t in d.trade_offs]


def fields(result: Any) -> Any:
    """A result whose fields are its results.json keys, as they are (a dataclass, its rows nested)."""
    return None if result is None else _lists(dataclasses.asdict(result))


def _lists(value: Any) -> Any:
    """Tuples as lists, as a JSON document holds them (dataclasses.asdict keeps a tuple of rows a tuple)."""
    if isinstance(value, dict):
        return {key: _lists(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_lists(item) for item in value]
    return value


def findings(found: tuple[Finding, ...]) -> list[Json]:
    return [{"severity": f.severity, "code": f.code, "message": f.message, "path": f.path} for f in found]
