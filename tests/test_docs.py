"""The documentation: generated pages in step with the code, nothing outside the repository referred to. (The site
is built strictly by `make docs`, inside `make test`.)"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reportgen.commands import reference
from tests.conftest import INPUTS, ROOT


@pytest.mark.parametrize("name", sorted(reference.PAGES))
def test_generated_pages_match_the_code(name: str) -> None:
    written = (ROOT / "docs" / "reference" / name).read_text(encoding="utf-8")
    assert written == reference.PAGES[name](), f"docs/reference/{name} is stale: run `make reference`"


def test_the_project_file_reference_lists_every_field() -> None:
    from reportgen.project.model import Project
    from reportgen.project.spec import spec_fields

    page = reference.project_file_page()

    def walk(cls: type, path: str) -> None:
        for name, spec, _ in spec_fields(cls):
            assert f"| `{name}` |" in page.split(f" {path}\n", 1)[-1], f"{path}.{name} is missing"
            inner, suffix = reference._mapping_of(spec)
            if inner is not None:
                walk(inner, f"{path}.{name}{suffix}")

    for name, spec, _ in spec_fields(Project):
        inner, suffix = reference._mapping_of(spec)
        assert inner is not None
        walk(inner, f"{name}{suffix}")


def test_nothing_refers_outside_the_repository() -> None:
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    outside = "../" + "shared"  # spelled apart so that this file does not match itself
    for name in files:
        path = ROOT / name
        if path.suffix in {".gz", ".png", ".pdf", ".svg"} or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        assert outside not in text, f"{name} refers to {outside}"


def test_the_notebook_session_of_the_scripting_page_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/scripting.md shows a notebook session; every `>>>` line of it runs here and prints what the page says."""
    import doctest

    monkeypatch.chdir(ROOT)  # its paths are the repository's, as in the README
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    outcome = doctest.testfile(str(ROOT / "docs" / "scripting.md"), module_relative=False, optionflags=flags,
                               verbose=False, report=True)
    assert outcome.attempted >= 8 and outcome.failed == 0, f"{outcome.failed} of the page's examples differ"


def test_methods_md_holds_each_declared_analysis_method() -> None:
    """The sections of the analyses declared in their modules are written from their Declared.method."""
    assert reference.METHODS.read_text(encoding="utf-8") == reference.methods_page(), (
        "docs/methods.md's declared methods are stale: run `make reference`")
    assert "## Energy-delay product" in reference.declared_methods()


def test_the_reports_methodology_appendix_is_methods_md() -> None:
    """The appendix every report prints is written from docs/methods.md's appendix blocks (`make reference`)."""
    written = reference.METHODOLOGY.read_text(encoding="utf-8")
    assert written == reference.methodology_partial(), "partials/methodology.html is stale: run `make reference`"
    methods = reference.METHODS.read_text(encoding="utf-8")
    changed = methods.replace("I* = π / β\nt_compute = W/π", "I* = π / β_mem\nt_compute = W/π")
    assert "β_mem" in reference.methodology_partial(changed)  # a formula edited in methods.md reaches the report


def test_the_appendix_prints_the_methods_of_the_results_the_report_holds(tmp_path: Path) -> None:
    """docs/methods.md#a-report-a-reviewer-reads-through: a block or a choice marked `if="analysis.<result>"` is
    printed only where that result is: the serving methods in a serving report, never in a training one."""
    from reportgen.pipeline import BuildOptions, build

    serving_block, serving_choice = "Serving projects (project.workload: inference)", "whose baseline gives no replica"
    for example, shown in (("example", False), ("llm-service", True)):
        build(INPUTS / f"{example}.yaml", BuildOptions(out_root=tmp_path, formats=("html",)))
        appendix = (tmp_path / example / "report.html").read_text(encoding="utf-8").split('id="appendix"', 1)[1]
        assert (serving_block in appendix, serving_choice in appendix) == (shown, shown), example
        assert "Roofline (per baseline step)" in appendix and "Ties between computed values" in appendix
    partial = reference.methodology_partial()
    assert partial.count("{% if analysis.serving %}") == 3  # the block and two choices


def test_the_appendix_names_the_axis_of_every_ceiling() -> None:
    """The diagnosis tabulates the project's own ceilings; the methodology names each ceiling's axis from the one
    ceiling table, in its order, and a compute ceiling's axis by workload."""
    import re

    from reportgen.analysis.model.ceilings import CEILING, CEILINGS, WORKLOAD_COMPUTE_CEILING

    partial = " ".join(reference.methodology_partial().split())
    sentence = partial[partial.index("The axis that cures each ceiling:"):]
    sentence = sentence[:sentence.index("machine.") + len("machine.")]
    named = re.findall(r"([a-z-]+) → ([a-z ]+?)(?= \(|;|\.)", sentence)
    assert named == [(kind.name, kind.axis) for kind in CEILINGS]
    compute = sentence[sentence.index("compute →"):sentence.index(")")]  # "(an inference workload: …)"
    for workload, cured in WORKLOAD_COMPUTE_CEILING.items():
        assert f"{workload.replace('-', ' ')} workload: {CEILING[cured].axis}" in compute.replace(
            "data processing:", "data processing workload:"), workload


def test_the_recipe_lists_every_filter_and_macro_a_template_can_use() -> None:
    """docs/architecture.md's recipe names each filter (render/formatting.py) and each macro of the partials."""
    import re

    from reportgen.render.formatting import FILTERS

    recipe = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    recipe = recipe[recipe.index("## Adding an analysis: the recipe"):recipe.index("## The PDF path in ten minutes")]
    filters = set(re.findall(r"^\| `(\w+)` \|", recipe, flags=re.M))
    assert filters == set(FILTERS), sorted(filters ^ set(FILTERS))
    macros = re.findall(r"\{% macro (\w+)\(", (ROOT / "templates" / "partials" / "macros.html").read_text(
        encoding="utf-8"))
    assert macros and [name for name in macros if f"`{name}(" not in recipe] == []


def test_the_profiling_pages_snippets_are_python_and_shell_as_written() -> None:
    """docs/profiling.md's snippets run where PyTorch and the vendors' profilers are (none is a dependency): here each
    Python block must at least compile, and each block names the fields it fills as the table above them does."""
    import re

    text = (ROOT / "docs" / "profiling.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 5
    for block in blocks:
        compile(block, "docs/profiling.md", "exec")
    for field in ("flops", "bytes", "io_bytes", "net_bytes", "time"):
        assert f"print(f\"{field}: " in text, field  # every field of a step has a snippet that prints it
