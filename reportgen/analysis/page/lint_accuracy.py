"""The findings of a prediction's measured accuracy (docs/methods.md#how-accurate-each-prediction-is): a class no
guide at the plan's extrapolation, too few published cases to state one, a plan beyond every published case, and a
build without the calibration table."""

from __future__ import annotations

from reportgen.analysis.findings import Finding, info, warning
from reportgen.analysis.measured.confidence import PlanEstimate
from reportgen.analysis.page.prose.accuracy import (
    beyond_sentence,
    capital,
    demoted_words,
    predictor_words,
    too_few_words,
)

SECTION = "measure"


def accuracy_findings(estimate: PlanEstimate | None, *, table: bool) -> list[Finding]:
    if not table:
        return [warning("calibration-table-missing", "The calibration table (reportgen/corpus/calibration.json) is "
                        "missing or describes other predictors: predictions carry their raw intervals, unchecked "
                        "against published curves (run `reportgen calibrate`)", "", SECTION)]
    if estimate is None:
        return []
    out: list[Finding] = []
    for calibration in (estimate.calibration, estimate.model_calibration):
        if calibration is None:
            continue
        if calibration.demoted:
            out.append(warning("model-demoted", f"{demoted_words(calibration)}; the plan is not judged from it",
                               "design.nodes", SECTION))
        elif calibration is estimate.calibration and calibration.status == "too-few" and \
                calibration.bucket is not None:  # the interval the plan is judged by: the α–β model has none
            out.append(info("uncalibrated-prediction", f"{too_few_words(calibration)}.", "design.nodes", SECTION))
        if calibration.beyond_corpus:
            out.append(info("beyond-corpus", f"{capital(predictor_words(calibration.predictor))}: "
                            f"{beyond_sentence(calibration)}.", "design.nodes", SECTION))
    return out
