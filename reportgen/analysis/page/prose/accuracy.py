"""Page 1's words for how far a prediction can be trusted (docs/methods.md#how-accurate-each-prediction-is): how
often this kind of extrapolation held on published curves, that too few were published to say, or that the class
is no guide at this extrapolation. Every count is quoted from the prediction's `calibration` in results.json."""

from __future__ import annotations

import math

from reportgen.analysis.measured.conformal import DEMOTE_MISSED_SHARE, is_interval_class
from reportgen.analysis.quotes import quote
from reportgen.project.accuracy_table import Calibration
from reportgen.wording import integer, number, whole_percent

# A bucket where a prediction stands ("Amdahl at 2–4×: …") and how far beyond the runs ("Amdahl, 2–4× beyond …")
AT_BUCKET = {"<=2": "up to 2×", "<=4": "at 2–4×", "<=8": "at 4–8×", ">8": "beyond 8×"}
SPAN_BUCKET = {"<=2": "up to 2× beyond", "<=4": "2–4× beyond", "<=8": "4–8× beyond", ">8": "more than 8× beyond"}
PREDICTOR_WORDS = {"amdahl": "Amdahl", "usl": "the USL", "alpha-beta": "the α–β model",
                   "layout-step": "the layout's step", "memory": "the memory model"}


def predictor_words(predictor: str) -> str:
    return PREDICTOR_WORDS.get(predictor, predictor)


def held_words(calibration: Calibration) -> str:
    """"; this kind of extrapolation (Amdahl, 2–4× beyond the largest measured scale) held its 90 % interval in 27
    of 30 published cases (median error 6 %)", or why its accuracy cannot be stated ("" without a table)."""
    if calibration.bucket is None or calibration.cases is None:
        return ""
    name = predictor_words(calibration.predictor)
    if calibration.status == "too-few":
        return f" ({too_few_words(calibration)})"
    if not calibration.trusted:
        return ""
    few = "; few cases" if calibration.status == "provisional" else ""
    own = "" if not calibration.own_cases else (
        f" and {integer(quote(calibration, 'own_covered'))} of {integer(quote(calibration, 'own_cases'))} of this "
        "project's graded predictions")
    return (f"; this kind of extrapolation ({capital(name)}, {SPAN_BUCKET[calibration.bucket]} the largest measured "
            "scale) held its "
            f"90 % interval in {integer(quote(calibration, 'covered'))} of {integer(quote(calibration, 'cases'))} "
            f"published cases{own} (median error {_percent(calibration)}{few}){beyond_words(calibration)}")


def too_few_words(calibration: Calibration) -> str:
    """"Amdahl at 4–8×: 6 published cases, too few to state its accuracy; the interval is the bootstrap's"."""
    name = capital(predictor_words(calibration.predictor))
    at = AT_BUCKET[calibration.bucket] if calibration.bucket is not None else "at this extrapolation"
    published = f"{integer(quote(calibration, 'cases'))} published cases" if calibration.cases else \
        "no published case"
    text = f"{name} {at}: {published}, too few to state its accuracy"
    if calibration.factor_from is not None:  # widened as the nearer trusted bucket's
        return (f"{text}; the interval takes the factor of the cases {AT_BUCKET[calibration.factor_from]}, since "
                "farther out is never surer")
    # a point prediction has no interval of its own
    return f"{text}; the interval is the bootstrap's" if is_interval_class(calibration.predictor) else text


def model_held_words(calibration: Calibration | None) -> str:
    """" (within a factor 1.41 either way in 90 % of 24 published cases)" for a trusted α–β cell, else ""."""
    if calibration is None or not calibration.trusted or calibration.half_width_log is None:
        return ""
    factor = math.exp(quote(calibration, "half_width_log"))
    return (f" (within a factor {number(factor)} either way in 90 % of {integer(quote(calibration, 'cases'))} "
            f"published cases){beyond_words(calibration)}")


def demoted_words(calibration: Calibration) -> str:
    """"The α–β model is not a guide at 8× beyond the measurements: it missed in 11 of 20 published cases"."""
    name = capital(predictor_words(calibration.predictor))
    ratio = quote(calibration, "ratio")
    reasons = []
    cases = integer(quote(calibration, "cases"))
    far = calibration.off_by_25
    if far is not None and calibration.cases and far / calibration.cases > DEMOTE_MISSED_SHARE:
        reasons.append(f"it missed in {integer(quote(calibration, 'off_by_25'))} of {cases} published cases (by "
                       "more than 25 %)")
    if calibration.bias is not None and calibration.same_sign is not None:
        bias = quote(calibration, "bias")
        if abs(bias) >= 0.05 or not reasons:
            direction = "low" if bias > 0 else "high"
            reasons.append(f"its predictions ran {whole_percent(abs(bias))} {direction} in "
                           f"{integer(quote(calibration, 'same_sign'))} of {cases} published cases")
    return f"{name} is not a guide at {_ratio(ratio)} beyond the measurements: {'; '.join(reasons)}"


def beyond_words(calibration: Calibration) -> str:
    """"; no published case reached 64× (the largest is 21×)", when the plan lies beyond the cell's cases."""
    if not calibration.beyond_corpus or calibration.max_ratio is None or calibration.ratio is None:
        return ""
    return f"; {beyond_sentence(calibration)}"


def beyond_sentence(calibration: Calibration) -> str:
    return (f"no published case reached {_ratio(quote(calibration, 'ratio'))} (the largest is "
            f"{_ratio(quote(calibration, 'max_ratio'))})")


def _ratio(value: float) -> str:
    """An extrapolation as "4×", "1.5×", "21.3×"."""
    return f"{value:.3g}×"


def _percent(calibration: Calibration) -> str:
    return whole_percent(quote(calibration, "median_abs_rel_error"))


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]
