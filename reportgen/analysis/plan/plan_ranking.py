"""The plan search's ranking (methods.md#the-plan-search): every layout of the plan's devices evaluated at the
calibrated η, the fitting ones ranked with the tie rules, why each of the best loses to the first, the declared
layout held against the best, and the cheapest (scale, layout) per price regime."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from reportgen.analysis.common import TIE_TOLERANCE, log_spread
from reportgen.analysis.measured.scaling import ScalingResult
from reportgen.analysis.measured.utilization import plan_precision, precision_split
from reportgen.analysis.model.columns import Layouts
from reportgen.analysis.model.layout_memory import (
    StageColumns,
    declared_columns,
    fits_usable,
    memory_inputs,
    stage_split,
    usable_memory,
)
from reportgen.analysis.model.layout_search import (
    POLICY_CODE,
    STEP_TERMS,
    TERMS,
    SearchSpace,
    StepModel,
    Term,
    enumerate_layouts,
    step_total,
    why_none_enumerated,
)
from reportgen.analysis.model.micro_batch import MicroBatchEfficiency, gemm_size
from reportgen.analysis.model.model_shape import shape_of
from reportgen.analysis.model.transformer import RECOMPUTE_POLICIES, token_flops
from reportgen.analysis.money.cost import local_viability, run_cost
from reportgen.analysis.plan.calibration import Efficiency, calibrate
from reportgen.analysis.plan.plan_search import (
    Cheapest,
    CheapestByRegime,
    DeclaredLayout,
    LayoutMemory,
    PlanSearchResult,
    RankedLayout,
    ShapeBest,
    StepBreakdown,
)
from reportgen.project.model import PlanSearch, Project, RegimeName

MAX_PRICED_SCALES = 16  # scales the cheapest-per-regime search prices: the plan and up to 15 spread over the rest


@dataclass(frozen=True)
class SearchOutcome:
    """What the search adds to the plan search's result."""

    efficiency: Efficiency
    micro_batch: MicroBatchEfficiency
    nodes: int
    enumerated: int
    fitting: int  # memory fits, no bandwidth needed
    stepped: int  # fitting and timed
    capped: bool
    left_out: int
    best: tuple[RankedLayout, ...]
    declared_shape_best: ShapeBest | None
    cheapest: CheapestByRegime | None
    lacks: tuple[tuple[str, int], ...]  # (input, layouts not evaluated for want of it)
    least_memory: tuple[LayoutMemory, float] | None  # with none fitting: the layout of least memory, its excess
    fitting_by_memory: tuple[LayoutMemory, ...]  # with none timed: the fitting layouts of least memory
    emptied_by: str | None  # with none enumerated: the rule after which none was left
    fitting_steps: np.ndarray  # every fitting layout's step, sorted: the declared layout's rank among them
    tokens_per_run: float | None  # T, as the search's inputs have it: every time per run reads it

    def strictly_faster(self, step: float) -> int:
        """The fitting layouts searched whose step is shorter than `step` beyond the tie tolerance."""
        return int(np.searchsorted(self.fitting_steps, step * (1 - TIE_TOLERANCE), side="left"))


def space_of(options: PlanSearch | None, project: Project) -> SearchSpace:
    model = project.baseline.model if project.baseline else None
    g = project.hardware.devices_per_node if project.hardware else 1
    options = options or PlanSearch()
    layout = project.design.parallelism if project.design else None
    memory = project.baseline.memory if project.baseline else None
    mixture = bool(memory and memory.expert_parameters)  # e is searched only for a mixture of experts
    return SearchSpace(options.recompute, options.zero_stages, options.sequence_parallel, options.max_tensor or g,
                       options.micro_batch or ((model.micro_batch if model else 1),), options.zero_with_pipeline,
                       options.max_layouts, options.context_parallel or ((layout.context if layout else 1),),
                       options.expert_parallel if mixture else (), expert_count(project) if mixture else None,
                       (layout.expert if layout else 1) if mixture else 1)


def step_model(project: Project, base: PlanSearchResult) -> StepModel | None:
    """The step model of every layout, or None without the peak or the global batch."""
    shape = shape_of(project)
    inputs = base.inputs
    hardware = project.hardware
    if shape is None or hardware is None or inputs.peak_flops_per_device is None or inputs.global_batch is None:
        return None
    memory = memory_inputs(project, inputs.parameters, kappa=base.activation_calibration or 1.0)
    assert memory is not None  # the search's inputs hold P
    flops = token_flops(inputs.parameters, shape)
    layout = project.design.parallelism if project.design else None
    model = project.baseline.model if project.baseline else None
    # at the plan's precision the weight GEMMs run at its peak and the rest at BF16's under FP8
    # (methods.md#precision); at BF16 a token's time is its FLOPs over the peak
    precision = plan_precision(project)
    split = precision_split(hardware, precision) if precision != "bf16" else None
    return StepModel(
        shape, inputs.global_batch, memory, flops.model,
        np.array([flops.hardware[policy] for policy in RECOMPUTE_POLICIES]),
        split.other_flops_per_s if split else inputs.peak_flops_per_device,
        hardware.devices_per_node, hardware.intra_node_bandwidth, hardware.intra_node_latency or 0.0,
        hardware.network_bandwidth, hardware.network_latency or 0.0, layout.overlap if layout else 0.0,
        context_comm=layout.context_comm if layout else "p2p",
        expert_layers=model.expert_layers if model else shape.layers, top_k=model.top_k if model else 2,
        reference_size=float(gemm_size(shape.micro_batch, shape.sequence, layout.context if layout else 1,
                                       shape.hidden)),
        model_seconds=split.model_seconds(flops) if split else None,
        hardware_seconds=np.array([split.hardware_seconds(flops, policy) for policy in RECOMPUTE_POLICIES])
        if split else None)


def expert_count(project: Project) -> int | None:
    """E_n: the experts of one MoE layer, where the model's shape says."""
    model = project.baseline.model if project.baseline else None
    return model.experts if model else None


@dataclass(frozen=True)
class Evaluated:
    layouts: Layouts
    layers: int  # L: each row's stages split them
    terms: dict[str, np.ndarray]
    step: np.ndarray
    stage: StageColumns  # each layout's most loaded stage
    fits: np.ndarray  # by memory alone
    order: np.ndarray  # the fitting layouts that could be timed, ranked

    @property
    def memory(self) -> np.ndarray:
        return self.stage.memory_b


def evaluate(model: StepModel, layouts: Layouts, efficiency: float, capacity: float | None) -> tuple[
        Evaluated, tuple[tuple[str, int], ...]]:
    stage = model.memory(layouts)
    terms = model.terms(layouts, efficiency, stage)
    step = step_total(terms)
    memory = stage.memory_b
    fits = np.ones(len(layouts), dtype=bool) if capacity is None else fits_usable(memory, capacity)
    usable = np.ones(len(layouts), dtype=bool)
    lacks = []
    for name, lacking in model.missing(layouts).items():
        usable &= ~lacking
        if lacking.any():
            lacks.append((name, int(lacking.sum())))
    candidates = np.flatnonzero(fits & usable)
    order = candidates[rank_order(step[candidates], memory[candidates], layouts.subset(candidates))]
    return Evaluated(layouts, model.shape.layers, terms, step, stage, fits, order), tuple(lacks)


def rank_order(step: np.ndarray, memory: np.ndarray, layouts: Layouts) -> np.ndarray:
    """Positions in ranking order: by step; steps within a relative 10⁻¹² are tied and go by the lower memory,
    then the smaller t·p, recomputation none < selective < full, the lower ZeRO stage, the smaller v, t, p."""
    if len(step) == 0:
        return np.zeros(0, dtype=np.int64)
    keys = (layouts.pipeline, layouts.tensor, layouts.virtual, layouts.zero, layouts.recompute,
            layouts.tensor * layouts.pipeline, memory)
    by_step = np.argsort(step, kind="stable")
    ordered = step[by_step]
    # a new tie group starts where a step exceeds its group's first by more than the tolerance
    group = np.zeros(len(step), dtype=np.int64)
    first = ordered[0]
    label = 0
    for index in range(1, len(ordered)):
        if ordered[index] > first * (1 + TIE_TOLERANCE):
            label += 1
            first = ordered[index]
        group[index] = label
    within = np.lexsort((*(key[by_step] for key in keys), group))
    result: np.ndarray = by_step[within]
    return result


def _breakdown(terms: dict[str, np.ndarray], index: int) -> StepBreakdown:
    return StepBreakdown(*(float(terms[name][index]) for name in STEP_TERMS))


def _row(evaluated: Evaluated, index: int, rank: int, first: int | None, model: StepModel, g: int,
         tokens_per_run: float | None, price: float | None) -> RankedLayout:
    memory = _memory_row(evaluated, index, g)
    step = float(evaluated.step[index])
    per_run = step * tokens_per_run / (model.global_batch * model.shape.sequence) if tokens_per_run else None
    why: Term | None = None
    loses_by = 0.0
    if first is not None and first != index:
        best = float(evaluated.step[first])
        loses_by = step / best - 1.0
        if step > best * (1 + TIE_TOLERANCE):
            growth = [float(evaluated.terms[name][index] - evaluated.terms[name][first]) for name in TERMS]
            why = TERMS[int(np.argmax(growth))]
    cost = run_cost(price, memory.nodes, per_run) if price is not None and per_run is not None else None
    one = evaluated.layouts.subset(np.array([index]))
    return RankedLayout(**vars(memory), rank=rank, step=_breakdown(evaluated.terms, index),
                        time_per_run_s=per_run, cost_per_run=cost, loses_by=loses_by, why=why,
                        slowest_stage=int(model.slowest_stage(one)[0]),
                        micro_batch_efficiency=float(model.rho(one)[0]))


def _memory_row(evaluated: Evaluated, index: int, g: int) -> LayoutMemory:
    t, p, d, v, b, m, z, r, sp, cp, e = evaluated.layouts.row(index)
    stage = evaluated.stage
    return LayoutMemory(t, p, d, v, m, b, z, RECOMPUTE_POLICIES[r], bool(sp), t * p * d * cp / g,
                        float(stage.states_b[index]), float(stage.activations_b[index]),
                        float(stage.memory_b[index]), float(stage.runtime_b[index]), int(stage.stage[index]),
                        stage_split(evaluated.layers, p), context_parallel=cp, expert_parallel=e)


def search_layouts(project: Project, scaling: ScalingResult | None, base: PlanSearchResult) -> SearchOutcome | None:
    """The ranking at the plan's scale, the declared layout against it, and the cheapest scale per regime."""
    model = step_model(project, base)
    hardware = project.hardware
    if model is None or hardware is None:
        return None
    options = project.plan_search or PlanSearch()
    g = hardware.devices_per_node
    planned = project.design.nodes if project.design else None
    measured = [int(row.nodes) for row in scaling.rows if float(row.nodes).is_integer()] if scaling else []
    nodes = planned or (max(measured) if measured else None)
    if nodes is None:
        return None
    calibrated = calibrate(project, scaling, model, given=options.efficiency)
    efficiency, micro_batch = calibrated.efficiency, calibrated.micro_batch
    model = replace(model, saturation=micro_batch.saturation)
    capacity = usable_memory(project)
    space = space_of(options, project)
    layouts = enumerate_layouts(nodes * g, model.shape, g, model.global_batch, space)
    evaluated, lacks = evaluate(model, layouts, efficiency.value, capacity)
    price = project.pricing.node_hour if project.pricing else None
    tokens = base.inputs.tokens_per_run
    order = evaluated.order
    first = int(order[0]) if len(order) else None
    best = tuple(_row(evaluated, int(index), rank + 1, first, model, g, tokens, price)
                 for rank, index in enumerate(order[:options.top]))
    fitting = np.flatnonzero(evaluated.fits)
    by_memory = fitting[np.argsort(evaluated.memory[fitting], kind="stable")]
    least = None
    if not len(fitting) and len(layouts) and capacity is not None:  # none fits by memory: its excess is positive
        lowest = int(np.argmin(evaluated.memory))
        least = (_memory_row(evaluated, lowest, g), float(evaluated.memory[lowest] - capacity))
    unranked = tuple(_memory_row(evaluated, int(index), g) for index in by_memory[:options.top]) if not len(order) \
        else ()
    emptied_by = None if len(layouts) or layouts.left_out else why_none_enumerated(
        nodes * g, model.shape, g, model.global_batch, space)
    return SearchOutcome(efficiency, micro_batch, nodes, len(layouts) + layouts.left_out, len(fitting), len(order),
                         layouts.left_out > 0, layouts.left_out, best, _shape_best(project, evaluated), _cheapest(
                             project, model, space, efficiency.value, capacity, nodes, measured, tokens, options),
                         lacks, least, unranked, emptied_by, np.sort(evaluated.step[order]), tokens)


def _shape_best(project: Project, evaluated: Evaluated) -> ShapeBest | None:
    layout = project.design.parallelism if project.design else None
    data = project.layout_data_degree
    order = evaluated.order
    if layout is None or data is None or not len(order):
        return None
    ls = evaluated.layouts
    same = (ls.tensor[order] == layout.tensor) & (ls.pipeline[order] == layout.pipeline) & (ls.data[order] == data)
    positions = np.flatnonzero(same)
    if not len(positions):
        return None
    index = int(order[positions[0]])
    best = float(evaluated.step[order[0]])
    return ShapeBest(int(ls.virtual[index]), int(ls.zero[index]), RECOMPUTE_POLICIES[int(ls.recompute[index])],
                     bool(ls.sequence_parallel[index]), float(evaluated.step[index]),
                     float(evaluated.step[index]) / best - 1.0, int(positions[0]) + 1)


def held_against_best(declared: DeclaredLayout, project: Project, model: StepModel, outcome: SearchOutcome,
                      margin: float) -> DeclaredLayout:
    """The declared layout's step, time, cost, rank and gap, and each activation mode's step."""
    layout = project.design.parallelism if project.design else None
    if layout is None or declared.data is None:
        return declared
    eta = outcome.efficiency.value
    m = declared.micro_batches
    layouts = declared_columns(layout, declared.data, declared.micro_batch, micro_batches=m)
    at = model.at_declared(project, declared.micro_batch * declared.data * m)
    terms = at.terms(layouts, eta)
    step = _breakdown(terms, 0)
    tokens = outcome.tokens_per_run
    per_run = step.total_s * tokens / (at.global_batch * model.shape.sequence) if tokens else None
    price = project.pricing.node_hour if project.pricing else None
    nodes = declared.nodes
    cost = run_cost(price, nodes, per_run) if price is not None and per_run is not None and nodes else None
    best = outcome.best[0].step_s if outcome.best else None
    fits = declared.fits is not False
    rank = 1 + outcome.strictly_faster(step.total_s) if fits and best is not None else None
    gap = step.total_s / best - 1.0 if best is not None else None
    modes = []
    for mode in declared.modes:
        mode_layouts = replace(layouts, recompute=np.array([POLICY_CODE[mode.recompute]]),
                               sequence_parallel=np.array([1 if mode.sequence_parallel else 0]))
        mode_step = float(step_total(at.terms(mode_layouts, eta))[0])
        modes.append(replace(mode, step_s=mode_step, faster_by=step.total_s / mode_step - 1.0))
    work, times = at.stage_times(layouts, declared.layers_per_stage, eta)
    stages = tuple(replace(stage, work_per_token=float(work[j]), time_per_micro_batch_s=float(times[j]))
                   for j, stage in enumerate(declared.stages))
    return replace(declared, step=step, time_per_run_s=per_run, cost_per_run=cost, rank=rank, gap=gap,
                   within_margin=(gap is not None and gap <= margin and fits) if best is not None else None,
                   modes=tuple(modes), stages=stages, slowest_stage=int(at.slowest_stage(layouts)[0]))


def _cheapest(project: Project, model: StepModel, space: SearchSpace, eta: float,
              capacity: float | None, planned: int, measured: list[int], tokens: float | None,
              options: PlanSearch) -> CheapestByRegime | None:
    """At the plan, every measured scale and plan_search.scales: each scale's fastest fitting layout, priced in each
    regime; the least cost per run of each regime (ties: fewer nodes)."""
    pricing = project.pricing
    if pricing is None or pricing.node_hour is None or tokens is None:
        return None
    g = model.devices_per_node
    found: dict[RegimeName, Cheapest] = {}
    others = sorted({*measured, *options.scales} - {planned})
    if len(others) > MAX_PRICED_SCALES - 1:  # each scale is a search of its own: a bound, spread over the range
        others = [int(n) for n in log_spread([float(n) for n in others], MAX_PRICED_SCALES - 1)]
    for nodes in sorted({planned, *others}):
        layouts = enumerate_layouts(nodes * g, model.shape, g, model.global_batch, space)
        evaluated, _ = evaluate(model, layouts, eta, capacity)
        if not len(evaluated.order):
            continue
        row = _row(evaluated, int(evaluated.order[0]), 1, None, model, g, tokens, pricing.node_hour)
        assert row.time_per_run_s is not None
        for regime, price, time_s, viable in _regimes(project, nodes, row.time_per_run_s):
            cost = run_cost(price, nodes, time_s)
            current = found.get(regime)
            if viable and (current is None or current.cost_per_run is None
                           or cost < current.cost_per_run * (1 - TIE_TOLERANCE)):
                found[regime] = Cheapest.of(row, regime=regime, time_s=time_s, cost=cost, viable=viable)
    return CheapestByRegime(**found) if found else None


def _regimes(project: Project, nodes: int, time_s: float) -> list[tuple[RegimeName, float, float, bool]]:
    """(regime, price per node-hour, time of a run, viable): on demand; spot with its first-order preemption time;
    owned when its utilization allows (methods.md#4-marginal-cost)."""
    pricing = project.pricing
    assert pricing is not None and pricing.node_hour is not None
    regimes: list[tuple[RegimeName, float, float, bool]] = [("on_demand", pricing.node_hour, time_s, True)]
    spec = pricing.regimes
    if spec is not None and spec.spot is not None:
        spot = spec.spot
        preemptions = spot.preemptions_per_node_hour * nodes * time_s / 3600
        regimes.append(("spot", pricing.node_hour * spot.price_fraction,
                        time_s + preemptions * spot.restart_overhead, True))
    if spec is not None and spec.local is not None:
        local = spec.local
        viable, _ = local_viability(local.utilization, local.min_utilization)
        regimes.append(("local", pricing.node_hour * local.price_fraction, time_s, viable))
    return regimes



def rank_plan(project: Project, scaling: ScalingResult | None, base: PlanSearchResult) -> PlanSearchResult:
    """The plan search's result with its ranking, the declared layout held against the best, and the cheapest."""
    outcome = search_layouts(project, scaling, base)
    model = step_model(project, base)
    if outcome is None or model is None:
        return base
    model = replace(model, saturation=outcome.micro_batch.saturation)
    options = project.plan_search or PlanSearch()
    declared = base.declared
    if declared is not None:
        declared = held_against_best(declared, project, model, outcome, options.margin)
    return replace(base, declared=declared, efficiency=outcome.efficiency, nodes=outcome.nodes,
                   enumerated=outcome.enumerated, fitting=outcome.fitting, stepped=outcome.stepped,
                   capped=outcome.capped, best=outcome.best, declared_shape_best=outcome.declared_shape_best,
                   cheapest=outcome.cheapest, left_out=outcome.left_out, lacks=outcome.lacks,
                   least_memory=outcome.least_memory, fitting_by_memory=outcome.fitting_by_memory,
                   emptied_by=outcome.emptied_by, micro_batch_efficiency=outcome.micro_batch)
