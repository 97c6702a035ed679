"""reportgen's benchmarks: `python bench/run.py [--quick]` (about 3 minutes; --quick about 1).

Each case runs several times; the table shows the median and the spread (min and max) in milliseconds with the
target where an issue sets one, and bench/results.json keeps the figures with the machine they came from.
"Cold" cases start a new Python process, as a user's command does, with an empty figure cache unless the case
says otherwise; "in process" cases time one stage with the libraries already imported.
"""

from __future__ import annotations

import argparse
import compileall
import dataclasses
import functools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "inputs" / "example.yaml"
sys.path.insert(0, str(ROOT))


@dataclasses.dataclass
class Case:
    name: str
    target_ms: float | None
    seconds: list[float]
    note: str = ""

    @property
    def median_ms(self) -> float:
        return statistics.median(self.seconds) * 1000

    def row(self) -> str:
        low, high = min(self.seconds) * 1000, max(self.seconds) * 1000
        target = f"{self.target_ms:8.0f}" if self.target_ms else "       -"
        verdict = "" if not self.target_ms else ("ok" if self.median_ms <= self.target_ms else "over")
        return f"{self.name:<52} {self.median_ms:9.1f} {low:9.1f} {high:9.1f} {target}  {verdict} {self.note}"


def calibration_ms() -> float:
    """The median time of a fixed pure-Python loop: this machine's pace at the moment (its speed drifts by up to
    1.5× within minutes), printed beside the results so that runs from different moments can be compared."""
    def loop() -> None:
        total = 0
        for number in range(2_000_000):
            total += number

    return statistics.median(timed(loop, 5)) * 1000


def timed(function: Callable[[], object], repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return samples


def reportgen(*args: str, cwd: Path = ROOT) -> Callable[[], object]:
    def run() -> object:
        return subprocess.run([sys.executable, "-m", "reportgen", *args], cwd=cwd, check=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return run


def cold_builds(repeats: int, out: Path) -> list[Case]:
    def fresh(formats: str) -> Callable[[], object]:
        def run() -> object:
            shutil.rmtree(out, ignore_errors=True)  # an empty figure cache: a first build
            return reportgen("build", str(EXAMPLE), "-o", str(out), "--format", formats)()
        return run

    return [
        Case("cold check example.yaml", 500, timed(reportgen("check", str(EXAMPLE)), repeats)),
        Case("cold build → json", None, timed(fresh("json"), repeats)),
        Case("cold build → html,json (empty cache)", 1500, timed(fresh("html,json"), repeats)),
        Case("cold build → html,json (figures cached)", 1500,
             timed(reportgen("build", str(EXAMPLE), "-o", str(out), "--format", "html,json"), repeats)),
        Case("cold build → html,pdf,json (empty cache)", 3000, timed(fresh("html,pdf,json"), repeats)),
        Case("cold build → html,pdf,json (figures cached)", 3000,
             timed(reportgen("build", str(EXAMPLE), "-o", str(out), "--format", "html,pdf,json"), repeats)),
        Case("cold diff finetune-r1 r2 → json,md", None,
             timed(reportgen("diff", "inputs/finetune-r1.yaml", "inputs/finetune-r2.yaml", "-o", str(out),
                             "--format", "json,md"), repeats)),
    ]


def warm_rebuild(repeats: int, out: Path) -> list[Case]:
    """A watch-mode rebuild after one run changed: HTML and JSON first, then the PDF."""
    from reportgen.pipeline import BuildOptions, warm_builder

    text = EXAMPLE.read_text()
    project = out / "warm.yaml"
    project.write_text(text)
    html_times, pdf_times = [], []
    with warm_builder(BuildOptions(out_root=out / "warm")) as builder:
        builder.build(project, formats=("html", "json"))
        for index in range(repeats):
            project.write_text(text.replace("compute: 4150", f"compute: {4000 + index}"))
            started = time.perf_counter()
            result = builder.build(project, formats=("html", "json"))
            html_times.append(time.perf_counter() - started)
            builder.write_pdf(result)
            pdf_times.append(time.perf_counter() - started)
    return [Case("warm rebuild after one run changed → html,json", 500, html_times),
            Case("warm rebuild after one run changed → + pdf", 2000, pdf_times)]


def _load_and_analyze(text: str) -> object:
    from reportgen.analysis import analyze
    from reportgen.project.loader import load_project_text

    return analyze(load_project_text(text, ROOT / "b.yaml", "b.yaml").project)


def _layout(project: object) -> None:
    from reportgen.analysis.model.layout import analyze_layout
    from reportgen.project.model import Project

    assert isinstance(project, Project) and project.prediction is not None
    layout = analyze_layout(project, t_comp=project.prediction.t_comp, alpha=5e-6,
                            max_nodes=project.prediction.max_nodes)
    assert layout is not None and layout.curve is not None and len(layout.curve.data) == 10**6


def in_process(repeats: int) -> list[Case]:
    from reportgen.analysis import analyze
    from reportgen.analysis.model.prediction import predict
    from reportgen.project.carbon import intensity_for
    from reportgen.project.loader import load_project, load_project_text

    project = load_project(EXAMPLE).project
    intensity = intensity_for(project.energy.location if project.energy else None)
    cases = [Case("analyses of example.yaml (in process)", 50,
                  timed(lambda: analyze(project, intensity=intensity), repeats * 5))]
    assert project.prediction is not None, "the example declares a prediction"
    for max_nodes in (10**3, 10**4, 10**5, 10**6):
        scaled = dataclasses.replace(project, prediction=dataclasses.replace(project.prediction,
                                                                              max_nodes=max_nodes))
        cases.append(Case(f"prediction, max_nodes = {max_nodes:,}", 200 if max_nodes == 10**6 else None,
                          timed(functools.partial(predict, scaled), repeats * 2)))
    # A layout's sweep (methods.md#22-a-parallel-layout-designparallelism) over every data-parallel degree up to
    # 10^6 (t = pp = 1 on 1-device nodes), with the pattern's prediction beside it: held to today's prediction time
    layout_example = load_project(ROOT / "inputs" / "llm-70b-3d.yaml").project
    assert layout_example.design is not None and layout_example.design.parallelism is not None
    assert layout_example.hardware is not None and layout_example.prediction is not None
    flat = dataclasses.replace(
        layout_example,
        hardware=dataclasses.replace(layout_example.hardware, devices_per_node=1),
        design=dataclasses.replace(layout_example.design, nodes=None, parallelism=dataclasses.replace(
            layout_example.design.parallelism, data=16, tensor=1, pipeline=1)),
        prediction=dataclasses.replace(layout_example.prediction, max_nodes=10**6))
    cases.append(Case("layout sweep, d up to 1,000,000", 200,
                      timed(functools.partial(_layout, flat), repeats * 2)))
    for runs in (5, 100, 1000):
        rows = "\n".join(f"    - {{nodes: {p}, compute: {32400 / p + 3 * p:.3f}, communication: {40 * p ** 0.5:.3f}, "
                         f"idle: {2 * p:.3f}}}" for p in range(1, runs + 1))
        text = f"project: {{title: Scale}}\nscaling:\n  time_unit: s\n  runs:\n{rows}\n"
        loaded = load_project_text(text, ROOT / "bench.yaml", "bench.yaml").project
        cases.append(Case(f"load + analyses, {runs:,} measured runs (in process)", None,
                          timed(functools.partial(_load_and_analyze, text), repeats)))
        del loaded
    return cases


def batches(out: Path, count: int) -> list[Case]:
    """`count` projects (the example with one run varied): separate calls against -j 1 and -j 2, HTML and JSON,
    no figure cache, so every case draws every figure."""
    folder = out / "batch"
    folder.mkdir(parents=True, exist_ok=True)
    text = EXAMPLE.read_text()
    paths = []
    for index in range(count):
        path = folder / f"project{index:02d}.yaml"
        path.write_text(text.replace("compute: 4150", f"compute: {4100 + index}"))
        paths.append(str(path))
    common = ["--format", "html,json", "--no-cache"]

    def separate() -> None:
        for path in paths:
            reportgen("build", path, "-o", str(out / "separate"), *common)()

    cases = [Case(f"{count} separate `reportgen build` calls (per project)", None, [])]
    cases[0].seconds = [s / count for s in timed(separate, 1)]
    for jobs in (1, 2):
        seconds = timed(reportgen("build", *paths, "-o", str(out / f"j{jobs}"), "-j", str(jobs), *common), 1)
        cases.append(Case(f"one call, {count} projects, -j {jobs} (per project)", None, [s / count for s in seconds]))
    ratio = cases[0].median_ms / cases[2].median_ms
    cases[2].note = f"{ratio:.1f}× faster per project than separate calls (target ≥ 2×)"
    return cases


def chromium_reference(repeats: int, out: Path) -> list[Case]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    html = out / "reference" / "example" / "report.html"
    reportgen("build", str(EXAMPLE), "-o", str(out / "reference"), "--format", "html")()
    weasy = Case("HTML → PDF, WeasyPrint (cold process)", None, timed(lambda: subprocess.run(
        [sys.executable, "-c",
         f"from reportgen.render.pdf import html_to_pdf; html_to_pdf(open({str(html)!r}).read())"],
        check=True), repeats))
    if browser is None:
        return [weasy, Case("HTML → PDF, headless Chromium (reference)", None, [0.0],
                            note="skipped: Chromium is not installed (apt-get install chromium)")]
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run"]

    def chromium() -> object:
        with tempfile.TemporaryDirectory() as profile:
            return subprocess.run([browser, *flags, f"--user-data-dir={profile}", f"--print-to-pdf={out / 'c.pdf'}",
                                   html.as_uri()], check=True, capture_output=True, timeout=120)
    return [weasy, Case("HTML → PDF, headless Chromium (reference)", None, timed(chromium, repeats))]


GROUPS: dict[str, Callable[[int, Path, int], list[Case]]] = {
    "cold": lambda repeats, out, _: cold_builds(repeats, out),
    "warm": lambda repeats, out, _: warm_rebuild(repeats, out),
    "in-process": lambda repeats, out, _: in_process(repeats),
    "batch": lambda repeats, out, projects: batches(out, projects),
    "chromium": lambda repeats, out, _: chromium_reference(repeats, out),
}


def markdown_table(cases: list[Case]) -> str:
    """The table of docs/performance.md."""
    lines = ["| case | median | range | target | |", "|---|---:|---:|---:|---|"]
    for case in cases:
        target = f"{case.target_ms:.0f}" if case.target_ms else "–"
        verdict = "" if not case.target_ms else ("met" if case.median_ms <= case.target_ms else "**not met**")
        median = f"{case.median_ms:.1f}" if case.median_ms else "skipped"
        lines.append(f"| {case.name} | {median} | {min(case.seconds) * 1000:.1f}–{max(case.seconds) * 1000:.1f} | "
                     f"{target} | {verdict} {case.note} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5, help="runs per case (default 5)")
    parser.add_argument("--quick", action="store_true", help="2 runs per case and a batch of 6 projects")
    parser.add_argument("--only", choices=sorted(GROUPS), action="append",
                        help="run only this group of cases (repeatable); results files are written for a full run only")
    arguments = parser.parse_args()
    repeats = 2 if arguments.quick else arguments.repeats
    # current bytecode first, as `make report` leaves it: else, where PYTHONDONTWRITEBYTECODE is set, every cold
    # case would compile the modules changed since the last compile again (0.05-0.15 s each)
    compileall.compile_dir(ROOT / "reportgen", quiet=1)
    pace_before = calibration_ms()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        measured = [case for group in (arguments.only or GROUPS)
                    for case in GROUPS[group](repeats, out, 6 if arguments.quick else 20)]
    print(f"{'case':<52} {'median':>9} {'min':>9} {'max':>9} {'target':>8}  (ms)")
    for case in measured:
        print(case.row())
    total = time.perf_counter() - started
    pace = (pace_before, calibration_ms())
    print(f"\n{len(measured)} cases in {total:.0f} s on {platform.platform()}, {os.cpu_count()} CPUs; "
          f"calibration loop {pace[0]:.0f} ms before, {pace[1]:.0f} ms after (lower is a faster machine)")
    if arguments.only:
        return 0
    machine = {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
               "processor": platform.processor() or platform.machine()}
    (ROOT / "bench" / "results.md").write_text(
        markdown_table(measured) + f"\nCalibration loop: {pace[0]:.0f} ms before the cases, {pace[1]:.0f} ms after "
        "(`calibration_ms`; lower is a faster machine).\n")
    (ROOT / "bench" / "results.json").write_text(json.dumps(
        {"machine": machine, "repeats": repeats, "seconds": total,
         "calibration_ms": {"before": pace[0], "after": pace[1]},
         "cases": [{"name": c.name, "median_ms": c.median_ms, "min_ms": min(c.seconds) * 1000,
                    "max_ms": max(c.seconds) * 1000, "target_ms": c.target_ms, "note": c.note} for c in measured]},
        indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
