"""The six-stage design checklist, the communication tax in both forms, and the axis pressures.
(docs/methods.md#1-diagnosis-which-resource-runs-out-first)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from reportgen.analysis.common import ceil_ratio
from reportgen.analysis.measured.diagnosis import DiagnosisResult
from reportgen.analysis.model.prediction import PredictionResult
from reportgen.analysis.model.reliability import ReliabilityResult
from reportgen.keys import Key, derived
from reportgen.project.model import PRESSURE_AXES, REGIME_PHRASES, Project
from reportgen.wording import percent

TaxKind = Literal["interactive", "training"]  # fan-out against a latency SLO, or R(p) at the plan

FANOUT_RANGE = range(1, 81)


@dataclass(frozen=True)
class TaxResult:
    kind: Annotated[TaxKind | None, Key("interactive (fan-out against a latency SLO) or training (R(p) at the plan)")]
    tax_s: Annotated[float | None, Key("the tax in seconds")]
    budget_left_s: Annotated[float | None, Key("what the budget leaves after the tax")]
    exhausting_fanout: Annotated[int | None, Key("the fan-out at which the tax uses up the budget")]
    ratio: Annotated[float | None, Key("tax / SLO (interactive) or R(p) at the plan (training)")]
    binds: Annotated[bool, Key("whether the tax exhausts the budget")]
    budget_curve: tuple[tuple[int, float], ...]  # (fanout, budget left) for fanouts 1…80 (interactive)
    fanout: int | None
    planned_nodes: int | None
    budget_s: float | None = None  # what the tax is spent from: the latency objective, or the compute per step


@dataclass(frozen=True)
class ChecklistRow:
    stage: Annotated[int, Key("1 to 6")]
    name: Annotated[str, Key("the stage")]
    answer: Annotated[str, Key("the answer")]
    source: Annotated[str, Key("where the answer came from")]  # "diagnosed", "declared", "computed" or "not given"


@dataclass(frozen=True)
class ChecklistResult:
    rows: Annotated[tuple[ChecklistRow, ...], Key("the checklist's answers", name="stages")]
    tax: Annotated[TaxResult, Key("the communication tax against its budget")]
    pressures: tuple[tuple[str, float], ...]  # in PRESSURE_AXES order, given ones only
    top_pressures: Annotated[tuple[str, ...], Key("the pressures ranked highest", item="a pressure")]

    @derived(Key("checklist.pressures as given (0 to 1 each)", name="pressures", item="a pressure"))
    def pressure_by_axis(self) -> dict[str, float]:
        return dict(self.pressures)


def interactive_tax(fanout: int, hop_latency: float, latency_slo: float) -> TaxResult:
    tax = fanout * hop_latency
    curve = tuple((n, latency_slo - n * hop_latency) for n in FANOUT_RANGE)
    return TaxResult("interactive", tax, latency_slo - tax, ceil_ratio(latency_slo, hop_latency), tax / latency_slo,
                     latency_slo - tax <= 0, curve, fanout, None, latency_slo)


def training_tax(prediction: PredictionResult, planned_nodes: int) -> TaxResult:
    row = next(r for r in prediction.rows if r.nodes == planned_nodes)
    return TaxResult("training", row.t_comm_s, row.t_comp_s - row.t_comm_s, None, row.comm_ratio,
                     row.comm_ratio >= 1.0, (), None, planned_nodes, row.t_comp_s)


NO_TAX = TaxResult(None, None, None, None, None, False, (), None, None)


def build_checklist(project: Project, diagnosis: DiagnosisResult | None, prediction: PredictionResult | None,
                    reliability: ReliabilityResult | None) -> ChecklistResult | None:
    checklist, design = project.checklist, project.design
    if checklist is None and design is None and diagnosis is None:
        return None
    planned = design.nodes if design else None
    if checklist and checklist.tax:
        tax = interactive_tax(checklist.tax.fanout, checklist.tax.hop_latency, checklist.tax.latency_slo)
    elif prediction and planned:
        tax = training_tax(prediction, planned)
    else:
        tax = NO_TAX
    pressures = tuple((axis, value) for axis in PRESSURE_AXES
                      if checklist and checklist.pressures
                      and (value := getattr(checklist.pressures, axis)) is not None)
    ranked = sorted(pressures, key=lambda item: -item[1])  # stable: ties keep the listed order
    declared = design.axis if design else None
    rows = (
        ChecklistRow(1, "ceiling", diagnosis.binding_ceiling if diagnosis else "not diagnosed",
                     "diagnosed" if diagnosis else "not given"),
        ChecklistRow(2, "axis", _axis_answer(diagnosis, declared), "diagnosed vs declared"),
        _declared(3, "topology", checklist.topology if checklist else None),
        _declared(4, "processing mode", checklist.mode if checklist else None),
        _declared(5, "dominant metric", checklist.metric if checklist else None),
        ChecklistRow(6, "the tax", _tax_answer(tax, reliability), "computed" if tax.kind else "not given"),
    )
    return ChecklistResult(rows, tax, pressures, tuple(axis for axis, _ in ranked[:2]))


def _declared(stage: int, name: str, value: str | None) -> ChecklistRow:
    return ChecklistRow(stage, name, value or "—", "declared" if value else "not given")


def _axis_answer(diagnosis: DiagnosisResult | None, declared: str | None) -> str:
    if diagnosis is None:
        return f"declared: {declared}" if declared else "—"
    if declared is None:
        return f"{diagnosis.axis} (none declared)"
    verdict = "matches" if declared == diagnosis.axis else "does NOT match"
    return f"{diagnosis.axis}; declared {declared}: {verdict}"


def _tax_answer(tax: TaxResult, reliability: ReliabilityResult | None) -> str:
    parts = []
    if tax.kind == "interactive":
        parts.append(f"communication tax {tax.fanout} hops = {tax.tax_s * 1e3:.3g} ms; "  # type: ignore[operator]
                     f"budget left {tax.budget_left_s * 1e3:.3g} ms; exhausted at fanout {tax.exhausting_fanout}")  # type: ignore[operator]
    elif tax.kind == "training":
        parts.append(f"communication-to-computation ratio R({tax.planned_nodes}) = {tax.ratio:.3g}")
    if reliability and reliability.at_plan:
        # each regime's tax of reliability.at_plan, named: a single figure over several regimes would be one of them
        # quoted as all (methods.md#spot-as-failures)
        taxes = [f"{percent(row.overhead_fraction)}" + (f" {REGIME_PHRASES[row.regime]}" if row.regime else "")
                 for row in reliability.at_plan]
        parts.append(f"failure tax {', '.join(taxes)} at {reliability.planned_nodes} nodes")
    return "; ".join(parts) or "—"
