"""The invariants of page 1's facts (docs/methods.md#page-1-from-one-set-of-facts), held on every project in inputs/
(tests/test_page_one_invariants.py) and on every generated project and service (tests/generated/test_invariants.py).
Each assertion is numbered as docs/methods.md#page-1-held-on-generated-projects lists it."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

from reportgen.analysis import Analysis, analyze
from reportgen.analysis.page.candidate_order import ordered
from reportgen.analysis.page.candidates import MODEL_BOUNDS, MODEL_REFUTED, P_WRONG_MIN
from reportgen.analysis.verdict.verdict_state import P_MISS_KEEP
from reportgen.project.load_tests import RecordedPoint
from reportgen.project.model import PlanSearch, Project
from tests.generated.figures import unquoted_figures

RANK_THREE = ("measured-scale", "layout", "fitted-scale")


def value_at(document: dict[str, Any], path: str) -> object:
    """The value at a results.json path such as `goal.at_plan[1].time_s`."""
    value: object = document
    for name, index in re.findall(r"([a-z_0-9]+)(?:\[(\d+)\])?", path):
        assert isinstance(value, dict), path
        value = value[name]
        if index:
            assert isinstance(value, list), path
            value = value[int(index)]
    return value


def check_page_one(project: Project, analysis: Analysis, document: dict[str, Any],
                   recorded: tuple[RecordedPoint, ...] = ()) -> None:
    """Page 1's rules (docs/methods.md#page-1-from-one-set-of-facts); `recorded`, a service's load points judged
    from their requests, as the analysis had them."""
    summary, page = analysis.summary, analysis.page_one
    assert summary is not None and page is not None
    goal_rows = (document.get("goal") or {}).get("at_plan") or []
    codes = {f.code for f in analysis.findings}
    action = summary.next_action
    candidates = summary.candidates
    viable = [r for r in summary.regimes if r.viable]
    # 1. the page's state follows from its regimes; each regime's state agrees with its row of goal.at_plan
    if summary.state == "met":
        assert any(r.state == "met" for r in viable) or not summary.regimes
    if summary.state == "missed" and summary.regimes:
        assert all(r.state == "missed" for r in viable), summary.regimes
    by_regime = {row["regime"]: row for row in goal_rows}
    service = project.serving
    for regime in summary.regimes:
        row = by_regime.get(regime.regime)
        if row is None or (service and regime.source == "fitted"):  # a fitted capacity is not judged
            continue
        expected = {True: ("met",), False: ("missed",), None: ("partly", "unjudged")}[row["met"]]
        assert regime.state in expected, (regime, row["met"])
    # 2. an estimate's or a fit's row is null only when one of its stated limits is, and none is missed
    goal_doc = document.get("goal") or {}
    for row in goal_rows if not service else []:
        stated = [meets for meets, limit in ((row["meets_time"], goal_doc.get("time_per_run_s")),
                                             (row["meets_cost"], goal_doc.get("cost_per_run"))) if limit is not None]
        if row["source"] != "measured" and row["viable"] and row["met"] is None:
            assert None in stated and False not in stated, row
    # 3. never a node count above nodes_available, in the next action or the operating point
    available = project.hardware.nodes_available if project.hardware else None
    chosen = candidates[action.candidate] if action.candidate is not None else None
    if available is not None:
        if chosen is not None and chosen.nodes is not None:
            assert chosen.nodes <= available, chosen
        if summary.optimum.nodes is not None:
            assert summary.optimum.nodes <= available
    # 4b. a layout's gap is said one way: the declared step over the best's − 1 is "% longer", never "% faster"
    # (11.9 % slower and "12 % faster" sat on one page)
    search = analysis.plan_search
    if search is not None and search.declared is not None and search.declared.gap is not None:
        longer = f"{round(100 * search.declared.gap)} % faster"
        assert not any(longer in text for text in (summary.next_action.text, summary.plan_search or "")), longer
    # 5. a layout's memory is one function's: each activation mode's row adds up to its activations (its parts were
    # another model's for an uneven split or a context split), and the first stage holds what its stage row holds
    if search is not None and search.declared is not None:
        layout = search.declared
        kappa = search.activation_calibration or 1.0
        for mode in layout.modes:
            if mode.memory_per_device_b is not None:
                assert math.isclose(mode.activations_b, kappa * (mode.layers_b + mode.extra_b), rel_tol=1e-9), mode
        if layout.stages:
            assert math.isclose(layout.in_flight, layout.stages[0].in_flight), (layout.in_flight, layout.stages[0])
    # 4. every quantity equals the value at its source, and every figure page 1 quotes is one of them
    for quantity in summary.quantities:
        assert value_at(document, quantity.source) == quantity.value, quantity
    assert not unquoted_figures(summary, project.currency)
    # one scale the fit meets at, two values: the fitted time alone meets at goal.fitted_meeting, the judge (its
    # interval clear of every limit) at a fitted-scale way's, which page 1 says is the interval's (9 and 12 nodes
    # were both "met by the USL fit" on one page)
    fitted = {q.value for q in summary.quantities if q.source == "goal.fitted_meeting.nodes"}
    judged = {q.value for q in summary.quantities if re.fullmatch(r"summary\.candidates\[\d+\]\.nodes", q.source)
              and candidates[int(q.source.split("[")[1].split("]")[0])].kind == "fitted-scale"
              and candidates[int(q.source.split("[")[1].split("]")[0])].taken is not None}
    if judged - fitted and fitted:
        texts = " ".join(text or "" for text in (summary.optimum.text, action.text))
        assert "90 % interval" in texts, texts
    # 6. one regime's time, two values: an estimate quoted beside rows that fold the failure tax in says it is before
    # it (45 min by Amdahl sat above a 46.8 min on-demand row)
    sources = {quantity.source for quantity in summary.quantities}
    if any(source.startswith("goal.plan_estimate.") for source in sources) and \
            any((row.get("failure_tax") or 0.0) > 0 for row in goal_rows):
        assert "before the failure tax" in summary.verdict, summary.verdict
    # 7. a feasible rank-3 candidate outranks anything later; a measured scale chosen meets the goal as rebuilt
    if any(c.rank == 3 and c.feasible for c in candidates):
        assert action.rank is not None and action.rank <= 3, action
    if chosen is not None and chosen.kind == "measured-scale" and chosen.nodes is not None and project.design \
            and not (project.scaling and project.scaling.mode == "weak"):
        moved = analyze(_moved(project, int(chosen.nodes)), recorded=recorded)
        assert moved.summary is not None and moved.summary.state == "met", moved.summary.verdict
    # 7. on a met page whose plan does not straddle, a measured scale is proposed only for less money, faster
    if summary.state == "met" and not any(r.straddles for r in viable):
        for way in candidates:
            if way.kind == "measured-scale" and way.money is not None:
                assert way.money < 0, way
            if way.kind in ("layout", "fitted-scale"):
                raise AssertionError(f"a met page proposes a modelled way: {way}")
    # 8. a planner's run is proposed only when wanted and material; the requests that decide a straddling service
    # are proposed whenever it straddles, and bring the chance of a wrong verdict down to 5 %
    if chosen is not None and chosen.code == "requests-straddle":
        assert summary.state == "unjudged" and chosen.p_wrong_after is not None, chosen
        assert chosen.p_wrong_after <= min(chosen.p_wrong_before or 1.0, 0.05) + 1e-12, chosen
        assert ("falls from" in chosen.text) == (chosen.p_wrong_after < (chosen.p_wrong_before or 0.0)), chosen
    elif chosen is not None and chosen.kind == "measure" and chosen.p_wrong_after is not None:
        before = chosen.p_wrong_before or 0.0
        assert summary.state in ("unjudged", "partly", "no-goal") or before >= P_WRONG_MIN, chosen
        assert chosen.p_wrong_after <= before / 2 + 1e-12, chosen
    # 9. "keep the plan" only when earned
    if action.code == "none" and summary.state != "no-goal":
        assert summary.state == "met" and summary.can_start.value
        assert not any(r.straddles for r in viable)
        assert all((r.p_miss or 0.0) < P_MISS_KEEP for r in viable if r.state == "met")
        assert not any(c.feasible for c in candidates)
    # 10. the design cannot start ⇔ rank 1 ⇔ a blocker; a rank-1 wrong axis is on the memory-capacity wall
    assert (not summary.can_start.value) == (action.rank == 1) == (summary.blocker is not None), action
    if action.rank == 1 and action.code == "wrong-axis":
        assert analysis.diagnosis is not None and analysis.diagnosis.binding_ceiling == "memory-capacity"
    # 11. a profile that beats the roof is what the verdict rests on
    if "above-roof" in codes:
        assert action.rank is not None and action.rank <= 2, action
    # 12. weak scaling: a smaller scale that meets does the goal's work in plan / p runs
    scaling = analysis.scaling
    plan = project.design.nodes if project.design else None
    if scaling is not None and scaling.mode == "weak" and plan is not None:
        for way in candidates:
            if way.kind == "measured-scale" and way.nodes is not None and way.nodes < plan and way.time_s:
                row = next(r for r in scaling.rows if r.nodes == way.nodes)
                assert row.time_s is not None and way.time_s >= row.time_s * plan / way.nodes * (1 - 1e-9), way
            # a smaller scale said to meet says on what time: the goal's work, never one run's (a lever that moved
            # the plan's shares with the plan named 5 nodes meeting on 5/8 of an 8-node plan's work)
            if way.kind in ("measured-scale", "fitted-scale") and way.nodes is not None and way.nodes < plan and \
                    way.effect in ("meets", "meets-modelled"):
                assert way.time_s is not None, way
    # 13. no candidate at a scale whose measured quantity the choices leave out, unless to fix it
    excluded = {e.nodes for e in summary.constraints.excluded if e.quantity == "throughput"}
    assert not any(c.kind == "measured-scale" and c.nodes in excluded for c in candidates)
    # 14. a bound of the α–β model is never chosen under a model-refuted code
    if action.code in MODEL_BOUNDS:
        assert not codes & set(MODEL_REFUTED)
    # 15. every objective's lever is one the search holds, or null
    levers = {lever.lever for lever in analysis.levers.flips} | {miss.lever for miss in analysis.levers.near_misses}
    for objective in summary.constraints.objectives:
        assert objective.lever is None or objective.lever in levers, objective
    # 18. the chosen one first, the rest in the order; the next action's code is a finding's
    if action.candidate is not None:
        assert action.candidate == 0 and candidates[0].feasible
        rest = list(candidates[1:])
        margin = project.plan_search.margin if project.plan_search else PlanSearch().margin
        assert ordered(rest, margin=margin) == rest
    assert action.code == "none" or action.code in codes, action
    # 9 (item 9 of the list): no blank figure in a sentence of page 1, and no closest lever that would meet
    for text in (summary.verdict, summary.gap, action.text, summary.failure_tax, summary.optimum.text):
        assert text is None or (" — " not in text and not text.endswith("—")), text
    if action.kind == "out-of-reach":  # no closest lever the sentence quotes would meet
        assert " (0." not in action.text and "(1.00×" not in action.text, action.text
        assert not any(miss.excess <= 1.0 and miss.lever in ("nodes", "replicas")
                       for miss in analysis.levers.near_misses), analysis.levers.near_misses


def _moved(project: Project, nodes: int) -> Project:
    """The project planned at another node count, a declared layout's data-parallel degree scaled with it (a layout
    spans the plan's devices)."""
    design = project.design
    assert design is not None
    layout = design.parallelism
    if layout is not None and layout.data is not None and design.nodes:
        layout = replace(layout, data=max(1, layout.data * nodes // design.nodes))
    return replace(project, design=replace(design, nodes=nodes, parallelism=layout))


def permuted_summary(project: Project) -> dict[str, object] | None:
    """The summary of the project with its runs in reverse order: the same, byte for byte
    (docs/methods.md#page-1-held-on-generated-projects)."""
    scaling = project.scaling
    if scaling is None or len(scaling.runs) < 2:
        return None
    reversed_runs = replace(project, scaling=replace(scaling, runs=tuple(reversed(scaling.runs))))
    summary = analyze(reversed_runs).summary
    return None if summary is None else {"state": summary.state, "verdict": summary.verdict,
                                         "action": summary.next_action, "candidates": summary.candidates}
