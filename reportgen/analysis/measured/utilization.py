"""The share of the peak each measured scale reached: MFU, HFU, MFU at 6·P FLOPs a token, and the FLOP/s each
device achieved (methods.md#flops-mfu-and-hfu).

PaLM (Chowdhery et al. 2022, App. B) defines MFU as the model's FLOPs per token times the tokens per second over the
peak, recomputation not counted; HFU counts what the hardware executed, recomputation included (Korthikanti et al.
2022, Table 5). The counts per token are reportgen.analysis.model.transformer's; the declared layout's recomputation
gives the hardware's unless a count is given (`baseline.model.hardware_flops_per_token`) or counted (a run's `flops`).

Each share is against the peak of the precision the runs' GEMMs used (`baseline.training.precision`), and again
against BF16 dense, the second figure papers print; an FP8 recipe runs the layers' weight GEMMs at FP8 and the rest
at BF16, which `PrecisionSplit` times (methods.md#precision).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from statistics import median
from typing import Literal

from reportgen.analysis.measured.scaling import ScaleRow, ScalingResult
from reportgen.analysis.model.model_shape import ParametersSource, parameters_of, shape_of
from reportgen.analysis.model.transformer import RecomputePolicy, TokenFlops, token_flops
from reportgen.project.model import PRECISIONS, Hardware, Precision, Project

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
    peak_per_node: float  # π_node at the runs' precision
    devices_per_node: int
    precision: Precision
    bf16_peak_per_node: float | None  # π_node(bf16), the second figure's peak (None where not given)


def run_precision(project: Project) -> Precision:
    """The runs' GEMM precision: baseline.training.precision, else BF16."""
    training = project.baseline.training if project.baseline else None
    given = training.precision if training is not None else None
    return given if given is not None else "bf16"


def plan_precision(project: Project) -> Precision:
    """The precision the plan search times layouts at: plan_search.precision, else the runs'."""
    given = project.plan_search.precision if project.plan_search is not None else None
    return given if given is not None else run_precision(project)


def peaks_per_device(hardware: Hardware) -> dict[Precision, float]:
    """π_dev by precision, each that the hardware gives or defaults (BF16's and FP16's to peak_compute)."""
    peaks = {precision: hardware.peak_at(precision) for precision in PRECISIONS}
    return {precision: peak / hardware.devices_per_node for precision, peak in peaks.items() if peak is not None}


@dataclass(frozen=True)
class PrecisionSplit:
    """The FLOP/s a device runs each part of a token's FLOPs at (methods.md#precision). Under FP8, Transformer
    Engine's fp8_autocast covers the layers' Linear modules; attention and Megatron's output layer stay in BF16.
    TF32 and FP32 run everything at their own peak, BF16 and FP16 at peak_compute."""

    precision: Precision
    linear_flops_per_s: float  # π_dev(pr): the layers' weight GEMMs, F_lin
    other_flops_per_s: float  # π_dev(bf16) under FP8, else π_dev(pr): the rest, F_bf = F − F_lin

    def seconds(self, total: float, linear: float) -> float:
        """A device's seconds for `total` FLOPs of which `linear` are weight GEMMs, at η = ρ = 1:
        F_lin/π_dev(pr) + (F − F_lin)/π_dev(bf16). Divide by η·ρ, multiply by the tokens a device computes."""
        return linear / self.linear_flops_per_s + (total - linear) / self.other_flops_per_s

    def hardware_seconds(self, flops: TokenFlops, policy: RecomputePolicy) -> float:
        """One token's F_hw under `policy` (recomputation included), on one device at η = ρ = 1."""
        return self.seconds(flops.hardware[policy], flops.linear[policy])

    def model_seconds(self, flops: TokenFlops) -> float:
        """One token's F_model (compute_s's part; recompute_s is hardware_seconds − this), at η = ρ = 1."""
        return self.seconds(flops.model, min(flops.linear["none"], flops.model))

    def effective_flops_per_s(self, total: float, linear: float) -> float:
        """The one peak that times `total` as the split does: total / seconds (π_dev itself at BF16)."""
        return total / self.seconds(total, linear) if total > 0 else self.linear_flops_per_s


def precision_split(hardware: Hardware, precision: Precision) -> PrecisionSplit | None:
    """Each part's FLOP/s per device at `precision`; None without its peak (or, at FP8, BF16's)."""
    peaks = peaks_per_device(hardware)
    linear = peaks.get(precision)
    other = peaks.get("bf16") if precision == "fp8" else linear
    if linear is None or other is None:
        return None
    return PrecisionSplit(precision, linear, other)


def model_flops(project: Project) -> ModelFlops | None:
    """None without the parameters or the node's peak at the runs' precision."""
    found = parameters_of(project)
    hardware = project.hardware
    precision = run_precision(project)
    peak = hardware.peak_at(precision) if hardware is not None else None
    if found is None or hardware is None or peak is None:
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
    return ModelFlops(parameters, source, flops, policy, per_token, hfu_source, peak, hardware.devices_per_node,
                      precision, hardware.peak_at("bf16"))


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
    precision: Precision | None = None
    mfu_bf16: float | None = None
    hfu_bf16: float | None = None


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
    with π = nodes × π_node at the runs' precision; mfu_bf16 and hfu_bf16 against BF16 dense (equal at BF16), and
    mfu_6p too, as the time wall reads it against peak_compute."""
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
    mfu_bf16, hfu_bf16 = against_bf16(mfu, model), against_bf16(hfu, model)
    mfu_6p = mfu_bf16 * flops.six_p / flops.model if mfu_bf16 is not None else None
    return Utilization(tokens, mfu, mfu_6p, hfu, source, hfu * model.peak_per_node / model.devices_per_node,
                       model.precision, mfu_bf16, hfu_bf16)


def against_bf16(share: float, model: ModelFlops) -> float | None:
    """A share of the runs' peak as a share of BF16 dense's: the same number for a BF16 run."""
    bf16 = model.bf16_peak_per_node
    if bf16 is None:
        return None
    return share if bf16 == model.peak_per_node else share * model.peak_per_node / bf16


def with_utilization(project: Project, scaling: ScalingResult | None) -> ScalingResult | None:
    """The scaling rows with their MFU, HFU and achieved FLOP/s per device, where their inputs are there."""
    model = model_flops(project) if scaling is not None else None
    if scaling is None or model is None or project.serving:
        return scaling
    rows = tuple(replace(row, **vars(scale_utilization(row, scaling.form, model, project))) for row in scaling.rows)
    return replace(scaling, rows=rows)
