"""The share of the peak each measured scale reached: MFU, HFU, MFU at 6·P FLOPs a token, and the FLOP/s each
device achieved (methods.md#flops-mfu-and-hfu).

PaLM (Chowdhery et al. 2022, App. B) defines MFU as the model's FLOPs per token times the tokens per second over the
peak, recomputation not counted; HFU counts what the hardware executed, recomputation included (Korthikanti et al.
2022, Table 5). The counts per token are reportgen.analysis.transformer's; the declared layout's recomputation gives
the hardware's unless a count is given (`baseline.model.hardware_flops_per_token`) or counted (a run's `flops`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from statistics import median
from typing import Literal

from reportgen.analysis.model_shape import ParametersSource, parameters_of, shape_of
from reportgen.analysis.scaling import ScaleRow, ScalingResult
from reportgen.analysis.transformer import RecomputePolicy, TokenFlops, token_flops
from reportgen.project.model import Project

HfuSource = Literal["counted", "given", "model"]


@dataclass(frozen=True)
class ModelFlops:
    """What every scale's utilization reads: the FLOPs per token, the hardware's for the declared recomputation
    (given, counted or modelled), and the peak."""

    parameters: float
    parameters_source: ParametersSource
    flops: TokenFlops
    policy: RecomputePolicy
    hardware_per_token: float
    hardware_source: HfuSource
    peak_per_node: float
    devices_per_node: int


def model_flops(project: Project) -> ModelFlops | None:
    """None without the parameters or the node's peak compute."""
    found = parameters_of(project)
    hardware = project.hardware
    if found is None or hardware is None or hardware.peak_compute is None:
        return None
    parameters, source = found
    flops = token_flops(parameters, shape_of(project))
    layout = project.design.parallelism if project.design else None
    policy: RecomputePolicy = layout.recompute if layout is not None else "none"
    model = project.baseline.model if project.baseline else None
    counted = _counted_per_token(project)
    hfu_source: HfuSource
    if model is not None and model.hardware_flops_per_token is not None:
        per_token, hfu_source = model.hardware_flops_per_token, "given"
    elif counted is not None:
        per_token, hfu_source = counted, "counted"
    else:
        per_token, hfu_source = flops.hardware[policy], "model"
    return ModelFlops(parameters, source, flops, policy, per_token, hfu_source, hardware.peak_compute,
                      hardware.devices_per_node)


def _counted_per_token(project: Project) -> float | None:
    """The median over the runs that give both of flops / tokens."""
    runs = project.scaling.runs if project.scaling else ()
    ratios = [run.flops / run.tokens for run in runs if run.flops and run.tokens]
    return median(ratios) if ratios else None


@dataclass(frozen=True)
class Utilization:
    tokens: float | None = None
    mfu: float | None = None
    mfu_6p: float | None = None
    hfu: float | None = None
    hfu_source: HfuSource | None = None
    achieved_flops_per_device: float | None = None


def default_tokens(project: Project) -> float | None:
    """A run's tokens when it does not give its own: scaling.work_per_run counted in tokens, else
    baseline.training.tokens (a strong-scaling run does the job's work); none in weak scaling, whose work grows."""
    scaling = project.scaling
    if scaling is None or scaling.mode == "weak":
        return None
    if scaling.work_per_run is not None and project.work_per_run_counts == "token":
        return scaling.work_per_run
    training = project.baseline.training if project.baseline else None
    return training.tokens if training else None


def scale_utilization(row: ScaleRow, form: str | None, model: ModelFlops, project: Project) -> Utilization:
    """MFU and HFU of one measured scale (the median of its repeats):

    total or breakdown, tokens τ in T_p:   MFU = τ·F_model / (T_p·π),  HFU = (flops, else τ·F_hw) / (T_p·π)
    throughput X in token/s:               MFU = X·F_model / π,        HFU = X·F_hw / π
    throughput X in FLOP/s:                HFU = X / π,                MFU = HFU·F_model / F_hw
    other units of work:                   none
    with π = nodes × hardware.peak_compute."""
    peak = row.nodes * model.peak_per_node
    run = row.run
    flops = model.flops
    tokens, mfu, hfu, source = None, None, None, model.hardware_source
    if form in ("total", "breakdown"):
        tokens = run.tokens if run.tokens is not None else default_tokens(project)
        time_s = row.time_s
        if tokens is not None and time_s:
            mfu = tokens * flops.model / (time_s * peak)
            if run.flops is not None:
                hfu, source = run.flops / (time_s * peak), "counted"
            else:
                hfu = tokens * model.hardware_per_token / (time_s * peak)
    elif form == "throughput" and run.throughput is not None:
        counts = project.throughput_counts
        if counts == "token":
            tokens = project.scaling.work_per_run if project.scaling and project.work_per_run_counts == "token" \
                else None
            mfu = run.throughput * flops.model / peak
            hfu = run.throughput * model.hardware_per_token / peak
        elif counts == "FLOP":  # Megatron's papers publish hardware FLOP/s, recomputation counted
            hfu, source = run.throughput / peak, "counted"
            mfu = hfu * flops.model / model.hardware_per_token
    if mfu is None or hfu is None:
        return Utilization(tokens)
    return Utilization(tokens, mfu, mfu * flops.six_p / flops.model, hfu, source,
                       hfu * model.peak_per_node / model.devices_per_node)


def with_utilization(project: Project, scaling: ScalingResult | None) -> ScalingResult | None:
    """The scaling rows with their MFU, HFU and achieved FLOP/s per device, where their inputs are there."""
    model = model_flops(project) if scaling is not None else None
    if scaling is None or model is None or project.serving:
        return scaling
    rows = tuple(replace(row, **vars(scale_utilization(row, scaling.form, model, project))) for row in scaling.rows)
    return replace(scaling, rows=rows)
