"""The plan search's cost (methods.md#the-plan-search): the analysis of a project whose plan has about 10⁵ layouts,
with the search and without it (the same project without its heads), the same with expert and context parallelism
searched (a mixture of experts, e ∈ {1, 8, 64}, cp ∈ {1, 2, 4, 8}, two micro-batch sizes), and a whole build (HTML
and PDF) of Narayanan et al. 2021's 1,536-GPU PTD-P project. Medians of alternated runs; the target is at most 1 s
added at 10⁵ layouts (with e and cp too) and under 10 s for the 1,536-GPU build.

    python bench/plan_search.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reportgen.analysis import analyze
from reportgen.pipeline import BuildOptions, build
from reportgen.project.loader import load_project_text

HARDWARE = """hardware: {peak_compute: 2.496 PFLOP/s, devices_per_node: 8, device_memory: 80 GB,
           intra_node_bandwidth: 300 GB/s, intra_node_latency: 2 us, network_bandwidth: 200 GB/s,
           network_latency: 5 us}"""
MANY = f"""
project: {{title: A plan of about 10^5 layouts}}
{HARDWARE}
baseline:
  training: {{parameters: 1e12, tokens: 1e12 token}}
  model: {{layers: 720, hidden: 12288, sequence: 2048, heads: 96, vocabulary: 51200, global_batch: 7257600}}
design: {{nodes: 7200}}
plan_search:
  micro_batch: [1, 2, 3, 4, 5, 6, 8, 9, 10, 12, 15, 16, 18, 20, 24, 30]
  zero_with_pipeline: true
"""
# the same plan as a mixture of experts with flash attention: e and cp searched beside the rest
WIDE = MANY.replace("  training: {parameters: 1e12, tokens: 1e12 token}",
                    "  training: {parameters: 1e12, tokens: 1e12 token}\n  memory: {parameters: 4e12, "
                    "expert_parameters: 3e12}").replace("global_batch: 7257600}", "global_batch: 7257600, "
                    "flash_attention: true}").replace("  zero_with_pipeline: true", "  zero_with_pipeline: true\n"
                    "  expert_parallel: [1, 8, 64]\n  context_parallel: [1, 2, 4, 8]\n").replace(
                    "micro_batch: [1, 2, 3, 4, 5, 6, 8, 9, 10, 12, 15, 16, 18, 20, 24, 30]", "micro_batch: [1, 2]")
# the tests' copy of Narayanan et al. 2021's project, priced
PTD_P = (Path(__file__).resolve().parent.parent / "tests" / "data" / "ptd-p-175b.yaml").read_text(
    encoding="utf-8").replace("\nscaling:", "\npricing: {node_hour: 32.77 USD}\nscaling:")


def timed(action, repeats: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    root = Path.cwd()
    with_search = load_project_text(MANY, root / "many.yaml", "many.yaml").project
    without = load_project_text(MANY.replace("heads: 96, ", ""), root / "many.yaml", "many.yaml").project
    analyzed = analyze(with_search).plan_search
    assert analyzed is not None
    pairs = [(timed(lambda: analyze(with_search), 1), timed(lambda: analyze(without), 1)) for _ in range(5)]
    added = statistics.median(a - b for a, b in pairs)
    print(f"{analyzed.enumerated:,} layouts ({analyzed.fitting:,} fit): the search adds {added:.2f} s to the analysis "
          f"(median of 5 alternated pairs; with it {statistics.median(a for a, _ in pairs):.2f} s)")
    wide = load_project_text(WIDE, root / "wide.yaml", "wide.yaml").project
    searched = analyze(wide).plan_search
    assert searched is not None
    wide_pairs = [(timed(lambda: analyze(wide), 1), timed(lambda: analyze(without), 1)) for _ in range(3)]
    print(f"with e and cp searched: {searched.enumerated:,} layouts ({searched.fitting:,} fit): the search adds "
          f"{statistics.median(a - b for a, b in wide_pairs):.2f} s (median of 3 alternated pairs)")
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder) / "ptd-p.yaml"
        project.write_text(PTD_P, encoding="utf-8")
        seconds = timed(lambda: build(project, BuildOptions(out_root=Path(folder) / "out",
                                                            formats=("html", "pdf", "json"), use_disk_cache=False)), 3)
    print(f"the 1,536-GPU PTD-P project builds (HTML, PDF, JSON, no figure cache) in {seconds:.2f} s (median of 3)")


if __name__ == "__main__":
    main()
