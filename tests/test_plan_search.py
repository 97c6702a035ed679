"""The plan search (methods.md#the-plan-search): the enumeration's counts, a layout's step by hand, the ranking's
ties, η from the runs, the published layouts and times, and the findings and sentence it gives."""

from __future__ import annotations

import numpy as np
import pytest

from reportgen.analysis import analyze
from reportgen.analysis.model.layout_memory import NO_RUNTIME, MemoryInputs
from reportgen.analysis.model.layout_search import SearchSpace, StepModel, enumerate_layouts
from reportgen.analysis.model.transformer import Shape
from reportgen.analysis.plan.plan_ranking import rank_order
from tests.conftest import DATA, INPUTS, make_project
from tests.worked import worked

EVERY = SearchSpace(("none", "selective", "full"), (0, 1, 2, 3), True, 8, (1,), False, 10**6)
A100 = ("hardware: {peak_compute: 2.496 PFLOP/s, devices_per_node: 8, device_memory: 80 GB, intra_node_bandwidth: "
        "300 GB/s,\n           intra_node_latency: 2 us, network_bandwidth: 200 GB/s, network_latency: 5 us}")


def test_the_enumeration_counts() -> None:
    # GPT-3's shape on 128 nodes of 8 (1,024 devices), B = 1,536, b = 1: t ∈ {1, 2, 4, 8}, p a power of two dividing
    # 96 (1 … 32), less (t, p) = (1, 1) whose d = 1,024 does not divide 1,536: 23 pairs, 606 layouts
    layouts = enumerate_layouts(1024, Shape(96, 12288, 96, 128, 2048, 51200, 1), 8, 1536, EVERY)
    assert len(layouts) == 606 and len(set(zip(layouts.tensor, layouts.pipeline, strict=True))) == 23
    big = enumerate_layouts(16384, Shape(128, 16384, 128, 128, 2048, 51200, 1), 8, 16384, EVERY)
    assert len(big) == 720
    capped = enumerate_layouts(1024, Shape(96, 12288, 96, 128, 2048, 51200, 1), 8, 1536,
                               SearchSpace(("none", "selective", "full"), (0, 1, 2, 3), True, 8, (1,), False, 100))
    assert len(capped) == 100 and capped.left_out == 506


@worked("plan_search")
def test_a_layouts_step_by_hand() -> None:
    # L = 4, h = 1,024, s = 1,000, B = 64, b = 1 on 2 nodes of 4 devices of 100 TFLOP/s, η = 0.5; t = 2, p = 2, d = 2,
    # m = 32, v = 1, no recomputation, ZeRO-0, P = 60e6 (V·h = 10,240,000)
    shape = Shape(4, 1024, 8, 128, 1000, 10000, 1)
    memory = MemoryInputs(60e6, 0.0, 2.0, 2.0, 12.0, 0.0, shape, None, 1.0, NO_RUNTIME)
    model = StepModel(shape, 64, memory, 400e6, np.array([400e6, 410e6, 500e6]), 100e12, 4, 100e9, 1e-6, 10e9, 5e-6,
                      0.0)
    layouts = enumerate_layouts(8, shape, 4, 64, SearchSpace(("none",), (0,), False, 4, (1,), False, 10**6))
    index = next(i for i in range(len(layouts)) if layouts.row(i)[:3] == (2, 2, 2))
    terms = {name: float(value[index]) for name, value in model.terms(layouts, 0.5).items()}
    # compute: 64 × 1,000 tokens × 400e6 FLOP / (8 × 100e12 × 0.5) = 0.064 s; no recomputation
    assert terms["compute"] == pytest.approx(0.064) and terms["recompute"] == 0
    # the stages: 2 layers each, the last also the logit layer, 6·V·h = 61,440,000 FLOP a token; a layer is
    # (400e6 − 61.44e6)/4 = 84.64e6, so the stages' work is 169.28e6 and 230.72e6 (mean 200e6): τ̄ = 0.064/32 =
    # 2 ms a micro-batch and τ★ = 2 ms × 230.72/200 = 2.3072 ms
    # imbalance: m·(τ★ − τ̄) = 32 × 0.3072 ms = 9.8304 ms; bubble: (p·τ̄ − τ★)/v = 4 − 2.3072 = 1.6928 ms
    assert terms["imbalance"] == pytest.approx(32 * 0.0003072)
    assert terms["bubble"] == pytest.approx(0.0016928)
    # tensor: 4 × (4/2) × 32 × (2·1/2 × A/100e9 + 2·1·1 µs), A = 2 × 1 × 1,000 × 1,024 = 2,048,000 B:
    # 256 × (20.48 µs + 2 µs) = 5.75488 ms
    assert terms["tensor"] == pytest.approx(256 * (2_048_000 / 100e9 + 2e-6))
    # pipeline: 2 × 1 × 32 × (5 µs + 2,048,000 / 10e9) = 64 × 209.8 µs = 13.4272 ms
    assert terms["pipeline"] == pytest.approx(64 * (5e-6 + 2_048_000 / 10e9))
    # data: 8 devices leave the node: Ψ = ((60e6 − 10.24e6)/2 + 10.24e6)/2 = 17,560,000; ZeRO-0 all-reduces 2·g·Ψ =
    # 70,240,000 B over the network with S = min(4, t·p = 4) = 4 rings a link: (2 − 1) × 5 µs + ½ × 4 × 70.24e6 /
    # 10e9 = 14.053 ms
    assert terms["data"] == pytest.approx(5e-6 + 0.5 * 4 * 70_240_000 / 10e9)


def test_ties_go_to_less_memory_then_smaller_model_parallelism() -> None:
    layouts = enumerate_layouts(8, Shape(4, 1024, 8, 128, 1000, 10000, 1), 4, 64, EVERY)
    step = np.full(len(layouts), 1.0)
    step[3] = 1.0 + 1e-13  # within the tolerance: tied
    memory = np.arange(len(layouts), 0, -1, dtype=float)  # the later, the less memory
    order = rank_order(step, memory, layouts)
    assert order[0] == len(layouts) - 1  # the least memory among the tied
    step[0] = 0.5
    assert rank_order(step, memory, layouts)[0] == 0  # strictly faster wins whatever its memory


PTD_P = (DATA / "ptd-p-175b.yaml").read_text(encoding="utf-8")  # Narayanan et al. 2021's 175B project


def test_narayanans_strong_scaling_calibrates_one_eta_and_gives_23_days() -> None:
    # Table 2, PTD-P at 174.6B (t = 8, p = 12, B = 1,536, b = 1): 153, 149 and 141 TFLOP/s a GPU on 384, 768 and
    # 1,536 GPUs; one η describes the three within 0.2 %, and 300B tokens at 1,536 GPUs take 23 days
    search = analyze(make_project(PTD_P)).plan_search
    efficiency = search.efficiency
    assert efficiency.source == "measured" and [run.data for run in efficiency.runs] == [4, 8, 16]
    assert efficiency.max_abs_residual < 0.002
    # the fit by hand: 1/η = Σ C(step − Y)/step² / Σ C²/step² over the three runs
    assert search.declared.time_per_run_s / 86400 == pytest.approx(23.0, abs=0.05)


@pytest.mark.parametrize(("layers", "hidden", "heads", "pipeline", "gpus", "batch", "teraflops", "virtual"), [
    (80, 12288, 96, 8, 1536, 2304, 148, 5), (105, 20480, 128, 35, 2520, 2520, 163, 3),
    (128, 25600, 160, 64, 3072, 3072, 163, 2)])
def test_narayanans_table_1_layouts_are_within_5_percent_of_the_best(layers: int, hidden: int, heads: int,
                                                                   pipeline: int, gpus: int, batch: int,
                                                                   teraflops: int, virtual: int) -> None:
    # the 145.6B, 529.6B and 1T rows, t = 8, calibrated on their own achieved teraFLOP/s; the search among the 2021
    # techniques (full recomputation, no ZeRO, no sequence parallelism). The table does not state v: PTD-P runs the
    # interleaved schedule, taken at the largest v ≤ 5 dividing the stage's layers
    data = gpus // (8 * pipeline)
    text = f"""
project: {{title: T}}
{A100}
baseline:
  model: {{layers: {layers}, hidden: {hidden}, sequence: 2048, heads: {heads}, vocabulary: 51200,
          global_batch: {batch}}}
design:
  nodes: {gpus // 8}
  parallelism: {{tensor: 8, pipeline: {pipeline}, micro_batches: {batch // data}, recompute: full,
                 virtual_stages: {virtual}}}
plan_search: {{recompute: [full], zero_stages: [0], sequence_parallel: false}}
scaling:
  runs: [{{nodes: {gpus // 8}, throughput: {teraflops * gpus / 1000} PFLOP/s}}]
"""
    declared = analyze(make_project(text)).plan_search.declared
    assert declared.gap is not None and 0 <= declared.gap <= 0.05 and declared.within_margin


@pytest.mark.parametrize(("layers", "hidden", "heads", "pipeline", "virtual", "micro", "batch", "full", "seqsel"), [
    (48, 6144, 64, 1, 1, 4, 4, 1.42, 1.10), (96, 12288, 96, 8, 3, 1, 64, 18.13, 13.75),
    (105, 20480, 128, 35, 3, 1, 280, 49.05, 37.83), (128, 25600, 160, 64, 1, 1, 512, 94.42, 71.49)])
def test_korthikantis_other_policy_is_predicted_within_2_percent(layers: int, hidden: int, heads: int,
                                                                   pipeline: int, virtual: int, micro: int,
                                                                   batch: int, full: float, seqsel: float) -> None:
    # Table 5: calibrated on the selective + sequence parallel step, the full-recomputation mode's step
    nodes = 8 * pipeline // 8
    text = f"""
project: {{title: T}}
{A100}
baseline:
  training: {{parameters: {12 * layers * hidden**2 + 51200 * hidden}, tokens: {batch * 2048} token}}
  model: {{layers: {layers}, hidden: {hidden}, sequence: 2048, heads: {heads}, vocabulary: 51200, micro_batch: {micro},
          global_batch: {batch}}}
design:
  nodes: {nodes}
  parallelism: {{tensor: 8, pipeline: {pipeline}, micro_batches: {batch // micro}, recompute: selective,
                 sequence_parallel: true, virtual_stages: {virtual}}}
scaling:
  runs: [{{nodes: {nodes}, time: {seqsel} s}}]
"""
    modes = {(m.recompute, m.sequence_parallel): m for m in analyze(make_project(text)).plan_search.declared.modes}
    # within 2 %: the logit layer makes the last stage slowest, and its excess paces every micro-batch
    # (methods.md#uneven-pipeline-stages); the 1T model's full policy comes out 1.6 % under Table 5's
    assert modes[("full", False)].step_s == pytest.approx(full, rel=0.02)
    assert modes[("selective", True)].step_s == pytest.approx(seqsel, rel=1e-9)  # the calibrated one, exactly


def test_uncalibrated_capped_and_better_layouts_are_said() -> None:
    bare = PTD_P[:PTD_P.index("scaling:")]
    capped = analyze(make_project(bare + "plan_search: {max_layouts: 50}\n"))
    assert "search-capped" in {f.code for f in capped.findings} and capped.plan_search.capped
    assert capped.plan_search.enumerated == 50 + capped.plan_search.left_out
    analysis = analyze(make_project(bare))
    assert {"search-uncalibrated", "better-layout"} <= {f.code for f in analysis.findings}
    search = analysis.plan_search
    assert search.efficiency.source == "none" and search.efficiency.value == 1.0
    sentence = analysis.summary.plan_search
    assert sentence.startswith("The best layout the model finds is ")
    assert sentence.endswith(f"the declared one's step is {round(100 * search.declared.gap)} % longer.")


def test_a_declared_layout_within_the_margin_and_one_that_does_not_fit() -> None:
    calibrated = analyze(make_project(PTD_P.replace("design:\n", "plan_search: {margin: 0.5}\ndesign:\n")))
    assert calibrated.plan_search.declared.within_margin
    assert calibrated.summary.plan_search.startswith("The declared layout 8 × 12 × 16 is within ")
    tight = analyze(make_project(PTD_P.replace("device_memory: 80 GB", "device_memory: 20 GB")))
    assert tight.plan_search.declared.fits is False and tight.plan_search.declared.rank is None
    assert tight.summary.plan_search.startswith("The memory model says the declared layout 8 × 12 × 16 does not "
                                                "fit (")  # it ran: the runs outrank the model
    nothing = analyze(make_project(PTD_P.replace("device_memory: 80 GB", "device_memory: 1 GB")))
    assert "no-layout-fits" in {f.code for f in nothing.findings}


def test_the_options_narrow_and_price_the_search() -> None:
    bare = PTD_P[:PTD_P.index("scaling:")] + "pricing: {node_hour: 32.77 USD}\n"
    base = analyze(make_project(bare)).plan_search
    options = """plan_search: {efficiency: 0.5, max_tensor: 4, zero_with_pipeline: true, top: 3, memory_headroom: 0.5,
              micro_batch: [1, 2], scales: [96]}
"""
    search = analyze(make_project(bare + options)).plan_search
    # η given: every compute phase at half the peak, twice the uncalibrated floor
    assert search.efficiency.source == "given" and search.efficiency.value == 0.5
    assert search.declared.step.compute_s == pytest.approx(2 * base.declared.step.compute_s, rel=1e-12)
    # t ≤ 4, three rows, and half of each device's memory kept free: fewer layouts fit
    assert len(search.best) == 3 and all(row.tensor <= 4 for row in search.best)
    assert all(row.memory_per_device_b <= 40e9 * (1 + 1e-12) for row in search.best)
    # the cheapest on demand looks at 96 nodes too (the plan is 192): the same work on half the nodes costs less
    # when its time less than doubles
    assert search.cheapest is not None and search.cheapest.on_demand is not None
    assert search.cheapest.on_demand.nodes in (96, 192)
    assert {row.zero_stage for row in search.best} <= {0, 1, 2, 3}
    shape = Shape(96, 12288, 96, 128, 2048, 51200, 1)
    with_pipelines = enumerate_layouts(1536, shape, 8, 1536, SearchSpace(("full",), (0, 1, 2, 3), False, 8, (1,), True,
                                                                           10**6))
    assert np.any((with_pipelines.pipeline > 1) & (with_pipelines.zero >= 2))


def test_why_each_layout_loses_in_words() -> None:
    # at PTD-P's 192 nodes: the pipeline sends, 2·v·m·(α + A/B), of a layout with v·m twice #1's; the slowest stage
    # of another pipeline depth (the last, with the logit layer) pacing its micro-batches
    best = analyze(make_project(PTD_P)).plan_search.best
    first = best[0]
    assert first.why_text is None
    sends = next(row for row in best if row.why == "pipeline")
    assert sends.why_text.startswith(f"#{sends.rank} loses {sends.loses_by * 100:.3g} % to #1: its pipeline sends "
                                     "take ")
    assert f"(v·m = {sends.virtual_stages * sends.micro_batches:,} against " \
           f"{first.virtual_stages * first.micro_batches:,})" in sends.why_text
    paced = next(row for row in best if row.why == "imbalance")
    layers = paced.layers_per_stage[paced.slowest_stage]
    assert paced.slowest_stage == paced.pipeline - 1  # equal stages: the logit layer makes the last the slowest
    assert f"its slowest stage, {layers} layers, paces {paced.micro_batches:,} micro-batches: " in paced.why_text


def test_a_declared_layout_the_shape_says_does_not_fit_is_a_finding() -> None:
    # no baseline.memory, so the layout's own memory cannot judge it: the shape's 35.4 GB on the first stage against
    # 30 GB is `layout-does-not-fit`, which leads page 1; the runs measured at the plan refute it
    tight = PTD_P.replace("device_memory: 80 GB", "device_memory: 30 GB")
    unmeasured = analyze(make_project(tight[:tight.index("scaling:")]))
    assert unmeasured.plan_search.declared.fits is False
    assert unmeasured.summary.next_action.code == "layout-does-not-fit" and unmeasured.summary.blocker
    measured = analyze(make_project(tight))
    # the runs refute the memory model: it is a finding, and the design starts (docs/methods.md#can-the-design-start)
    assert "memory-model-refuted" in {f.code for f in measured.findings} and measured.summary.can_start.value
    assert measured.summary.can_start.refuted == ("layout-does-not-fit",)
    # page 1's plan-search sentence says the same: the model, not the design, is wrong where the layout ran
    assert unmeasured.plan_search.sentence.startswith("The declared layout 8 × 12 × 16 does not fit (")
    ran = [row.nodes for row in measured.scaling.rows]
    assert measured.plan_search.sentence.startswith("The memory model says the declared layout 8 × 12 × 16 does not "
                                                    "fit (") and "the model overstates its memory" in \
        measured.plan_search.sentence and f"ran at {ran[0]:,.0f}" in measured.plan_search.sentence


def test_each_layouts_term_is_the_one_layout_formula_applied_row_by_row() -> None:
    """The search evaluates transformer.py's one-layout terms once per distinct combination of what they read
    (columns.each_distinct) and spreads them back: the same numbers as row by row."""
    import numpy as np

    from reportgen.analysis.model.columns import each_distinct as _each

    rng = np.random.default_rng(7)
    t, p, held = rng.choice([1, 2, 8], 500), rng.choice([1, 3, 96], 500), rng.choice([1.0, 2.5, 7.25], 500)
    term = lambda a, b, c: a * 1000 + b + c / 7  # noqa: E731
    assert np.array_equal(_each(term, t, p, held), np.array([term(*row) for row in zip(t, p, held, strict=True)]))


def test_each_activation_mode_is_the_most_loaded_stage_of_the_one_memory_function() -> None:
    """Split 26/18/18/18, the first stage is the most loaded: it holds 26 layers of 4 micro-batches in flight, so each
    mode's layers are per layer × 26 × 4, and its activations κ·(layers + extra): the row's parts were the even split's
    ⌈80/4⌉ = 20 layers beside activations of 26 (docs/methods.md#uneven-pipeline-stages)."""
    text = (INPUTS / "llm-70b-3d.yaml").read_text(encoding="utf-8")
    text = text.replace("sequence_parallel: true}", "sequence_parallel: true, layers_per_stage: [26, 18, 18, 18]}")
    search = analyze(make_project(text)).plan_search
    kappa = search.activation_calibration or 1.0
    assert search.declared.most_loaded_stage == 0 and search.declared.stages[0].in_flight == 4
    for mode in search.declared.modes:
        assert mode.layers_b == pytest.approx(mode.per_layer_b * 26 * 4, rel=1e-12)
        assert mode.activations_b == pytest.approx(kappa * (mode.layers_b + mode.extra_b), rel=1e-12)
