"""The plan search in words (methods.md#the-plan-search): a layout as page 1 describes it, and page 1's sentence on
the best layout the model finds against the declared one."""

from __future__ import annotations

from reportgen.analysis.plan.plan_search import LayoutMemory, PlanSearchResult, RankedLayout
from reportgen.analysis.quotes import quote
from reportgen.wording import duration, listed, money, nodes, percent, size

POLICY_WORDS = {"none": "no recompute", "selective": "selective recompute", "full": "full recompute"}


def layout_shape(row: LayoutMemory) -> str:
    """"8 × 16 × 12": t × p × d, each quoted from the layout's row."""
    return " × ".join(str(quote(row, axis)) for axis in ("tensor", "pipeline", "data"))


def layout_words(row: LayoutMemory) -> str:
    """"with 4 virtual stages, ZeRO-1, no recompute and sequence parallelism"."""
    parts = [*([f"{quote(row, 'virtual_stages')} virtual stages"] if row.virtual_stages > 1 else []),
             f"ZeRO-{quote(row, 'zero_stage')}", POLICY_WORDS[row.recompute],
             *(["sequence parallelism"] if row.sequence_parallel else []),
             *([f"context parallelism {quote(row, 'context_parallel')}"] if row.context_parallel > 1 else []),
             *([f"expert parallelism {quote(row, 'expert_parallel')}"] if row.expert_parallel > 1 else [])]
    return listed(parts)


def hours(seconds: float) -> str:
    """A layout's time per run: from an hour in hours with thousands separators (no decimals from 10 h, one
    below), the unit a large plan's layouts compare in; under an hour as a duration reads ("7 s", "25 min"), since
    one decimal of an hour showed a 7 s run as "0.0 h"."""
    value = seconds / 3600
    if value < 1:
        return duration(seconds)
    return f"{value:,.0f} h" if value >= 10 else f"{value:,.1f} h"


def _figures(row: RankedLayout, currency: str) -> str:
    """": 388 h, 25,023,258 USD", or what of it is known."""
    known = [*([hours(row.time_per_run_s)] if row.time_per_run_s is not None else []),
             *([money(round(row.cost_per_run), currency)] if row.cost_per_run is not None else [])]
    return ", ".join(known)


def plan_sentence(search: PlanSearchResult, currency: str, margin: float,
                  ran: tuple[float, ...] = ()) -> str | None:
    """Page 1's sentence: the best layout the model finds, against the declared one. `ran`: the measured node
    counts at or below the plan, where the declared layout ran whatever the memory model says of it."""
    if not search.best:
        if search.stepped == 0 and search.fitting and search.lacks:  # methods.md#a-search-with-nothing-to-rank
            wanting = listed([name for name, _ in search.lacks], "or")
            return (f"{search.fitting:,} layouts of the plan's devices fit; none could be timed without "
                    f"{wanting}.")
        return None
    best = search.best[0]
    precision = search.inputs.precision
    timed = f", timed at {precision.upper()}" if precision not in ("bf16", "fp16") else ""  # methods.md#precision
    described = f"{best.layout} (t × p × d) with {layout_words(best)}{timed}"
    figures = _figures(best, currency)
    declared = search.declared
    if declared is None or declared.gap is None:
        where = f" at {search.nodes:,} nodes" if search.nodes is not None else ""
        return f"The best layout the model finds{where} is {described}" + (f": {figures}." if figures else ".")
    if declared.fits is False and declared.memory_per_device_b is not None \
            and search.inputs.device_memory_b is not None:
        said = f"{size(declared.memory_per_device_b)} per device of {size(search.inputs.device_memory_b)}"
        if ran:  # the runs outrank the memory model (methods.md#evidence-reconciled-before-it-is-judged)
            return (f"The memory model says the declared layout {declared.layout} does not fit ({said}), yet it ran "
                    f"at {listed([nodes(p) for p in ran])}: the model overstates its memory. The best layout it "
                    f"finds is {described}" + (f": {figures}." if figures else "."))
        return (f"The declared layout {declared.layout} does not fit ({said}); the best layout the model finds is "
                f"{described}" + (f": {figures}." if figures else "."))
    z = round(100 * declared.gap)  # the declared step over the best's − 1: the declared one is z % longer
    if declared.gap > margin:
        return (f"The best layout the model finds is {described}" + (f": {figures}; " if figures else "; ")
                + f"the declared one's step is {z} % longer.")
    inner = f"{described}: {figures}" if figures else described
    if declared.gap <= 0:
        return f"The declared layout {declared.layout} is as fast as the best layout the model finds ({inner})."
    return f"The declared layout {declared.layout} is within {z} % of the best layout the model finds ({inner})."


def why_text(row: RankedLayout, first: RankedLayout) -> str | None:
    """Why a layout loses to the first, in one sentence with the numbers."""
    if row.rank == 1:
        return None
    if row.why is None:
        return f"#{row.rank} is tied with #1."
    head = f"#{row.rank} loses {percent(row.loses_by)} to #1: "
    term = f"{row.why}_s"
    grew = getattr(row.step, term) - getattr(first.step, term)
    if row.why == "recompute":
        return head + (f"{POLICY_WORDS[row.recompute].replace(' recompute', ' recomputation')} adds {duration(grew)} "
                       f"of forward passes a step (#1: {POLICY_WORDS[first.recompute]}).")
    if row.why == "bubble":
        return head + (f"its pipeline bubble is {duration(grew)} longer: (p − 1)/(v·m) = {row.pipeline - 1}/"
                       f"({row.virtual_stages}·{row.micro_batches}) against {first.pipeline - 1}/"
                       f"({first.virtual_stages}·{first.micro_batches}).")
    if row.why == "imbalance":
        layers = row.layers_per_stage[row.slowest_stage]
        return head + (f"its slowest stage, {layers} layer{'s' if layers != 1 else ''}, paces {row.micro_batches:,} "
                       f"micro-batches: {duration(grew)} more.")
    if row.why == "tensor":
        return head + (f"its tensor-parallel all-reduces take {duration(grew)} more (t = {row.tensor} against "
                       f"{first.tensor}).")
    if row.why == "pipeline":
        chunks, first_chunks = row.virtual_stages * row.micro_batches, first.virtual_stages * first.micro_batches
        return head + f"its pipeline sends take {duration(grew)} more (v·m = {chunks:,} against {first_chunks:,})."
    if row.why == "context":
        return head + (f"its context-parallel exchange of keys and values takes {duration(grew)} more (cp = "
                       f"{row.context_parallel} against {first.context_parallel}).")
    if row.why == "expert":
        return head + (f"its experts' all-to-all takes {duration(grew)} more (e = {row.expert_parallel} against "
                       f"{first.expert_parallel}).")
    return head + (f"its data-parallel collective takes {duration(grew)} more (ZeRO-{row.zero_stage} over d = "
                   f"{row.data:,} against ZeRO-{first.zero_stage} over d = {first.data:,}).")
