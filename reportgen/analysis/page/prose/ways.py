"""Page 2's "Ways considered" in words (docs/methods.md#ways-considered): why each candidate was not the one
chosen. The facts are page 1's (reportgen.analysis.page.page_one); this module only words them."""

from __future__ import annotations

from reportgen.analysis.page.candidates import MATERIAL, P_WRONG_MIN
from reportgen.analysis.page.page_one_facts import Candidate
from reportgen.wording import percent

_EXCLUDED = {
    "nodes_available": "more nodes than are available",
    "measured": "the runs pass the model's bound",
    "model-refuted": "the model does not describe the measured system",
    "beyond-reach": "beyond the lever's reach",
    "excluded": "it reads a measurement that cannot be right",
    "demoted": "its predictor misses too often to be trusted",
}
RANK_WORDS = {1: "the design cannot start", 2: "a measurement the verdict rests on", 3: "a way that meets the goal",
              4: "a measurement that decides", 5: "a lever", 6: "out of reach", 7: "advice"}


def why_not(candidate: Candidate, chosen: Candidate | None) -> str:
    """"chosen", "more nodes than are available", "after rank 3 (a way that meets the goal)", …"""
    if chosen is None or candidate is chosen:
        return "chosen"
    if not candidate.feasible:
        if candidate.excluded_by == "immaterial":
            before = candidate.p_wrong_before or 0.0
            if before < P_WRONG_MIN:
                return f"the verdict is only {percent(before)} likely wrong (below {percent(P_WRONG_MIN)})"
            return f"it would not halve the chance of a wrong verdict (at most × {MATERIAL:g} needed)"
        return _EXCLUDED.get(candidate.excluded_by or "", "not feasible")
    if candidate.rank is not None and chosen.rank is not None and candidate.rank > chosen.rank:
        return f"after rank {chosen.rank} ({RANK_WORDS[chosen.rank]})"
    return "after it on the rank's ties (the cheaper, nearer or more severe first)"
