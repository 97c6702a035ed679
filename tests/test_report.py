"""The rendered report: PDF text, bookmarks and metadata; HTML structure; safety; reproducibility."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from fractions import Fraction
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from reportgen.errors import RenderError
from reportgen.pipeline import BuildOptions, build
from reportgen.render import formatting
from tests.conftest import INPUTS, ROOT, example_projects

SECTION_TITLES = ["Summary", "Problem and goal", "Diagnosis: which ceiling binds", "Design",
                  "Measure, attribute, decide", "Appendix: methodology and inputs"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folders = {}
    for name in ("a", "b"):
        out = tmp_path_factory.mktemp(name)
        build(INPUTS / "example.yaml", BuildOptions(out_root=out))
        folders[name] = out / "example"
    return folders


@pytest.fixture(scope="module")
def pdf_text(built: dict[str, Path]) -> list[str]:
    return [page.extract_text() or "" for page in PdfReader(built["a"] / "report.pdf").pages]


def plain(markup: str) -> str:
    return re.sub(r"<[^>]+>", "", str(markup))


@pytest.mark.slow
def test_pdf_has_every_section_and_page_numbers(pdf_text: list[str]) -> None:
    assert 10 <= len(pdf_text) <= 40
    text = "\n".join(pdf_text)
    for title in SECTION_TITLES:
        assert title in text, title
    for number, page in enumerate(pdf_text, start=1):
        assert f"page {number} of {len(pdf_text)}" in page
    assert all("revision r4" in page for page in pdf_text[1:])  # the running header


@pytest.mark.slow
def test_the_example_reads_through_in_23_pages(built: dict[str, Path], pdf_text: list[str]) -> None:
    """docs/methods.md#a-report-a-reviewer-reads-through: the default example's report, appendix included, is at most
    23 pages (22, and page 2 now opens with the ways considered); the tables a figure draws are in the appendix,
    linked from the figure's section."""
    assert len(pdf_text) <= 23, f"the example's report is {len(pdf_text)} pages"
    html = (built["a"] / "report.html").read_text(encoding="utf-8")
    body, appendix = html.split('<section id="appendix">', 1)
    for key in ("lost-folds", "sensitivity", "energy", "energy-delay"):
        assert f'<a href="#data-{key}">' in body and f'id="data-{key}"' in appendix, key
    assert "Lost folds of speedup" not in body and "Lost folds of speedup" in appendix
    assert body.count("<caption>The measured node count and price regime each deployment context") == 1


@pytest.mark.slow
def test_pdf_shows_the_key_results(built: dict[str, Path], pdf_text: list[str]) -> None:
    results = json.loads((built["a"] / "results.json").read_text())
    text = " ".join(" ".join(pdf_text).split())
    expected = [
        f"p* = {formatting.integer(results['prediction']['p_star'])}",
        plain(formatting.number(results["prediction"]["speedup_at_p_star"])),
        f"The binding ceiling is {results['diagnosis']['binding_ceiling']}",
        formatting.nodes(results["scaling"]["knee_nodes"]),
        plain(formatting.money(results["cost"]["rows"][0]["cost"], "USD")),
        plain(formatting.energy(results["energy"]["rows"][3]["energy_kwh"])),
        results["energy"]["carbon_source"],
    ]
    for snippet in expected:
        assert snippet in text, snippet
    for finding in results["findings"]:
        assert finding["code"] in text


@pytest.mark.slow
def test_pdf_draws_every_figure_as_vector_text_and_paths(built: dict[str, Path], pdf_text: list[str]) -> None:
    """The PDF gets each figure as the same SVG the HTML inlines: its longest label is text in the PDF.

    Spaces are ignored: the figures are form XObjects scaled into place, and pypdf's guess of word gaps does not
    apply the form's matrix (poppler's pdftotext extracts "arithmetic intensity I (FLOP per byte ...)" intact)."""
    html = (built["a"] / "report.html").read_text()
    figures = re.findall(r"<svg .*?</svg>", html, re.DOTALL)
    assert len(figures) >= 12
    text = "".join("".join(pdf_text).split())
    for svg in figures:
        labels = [label.strip() for label in re.findall(r"<text[^>]*>([^<]+)</text>", svg)]
        longest = max(labels, key=len)
        assert "".join(longest.split()) in text, longest
    assert b"/Subtype /Image" not in (built["a"] / "report.pdf").read_bytes(), "figures stay vector"


def test_drawing_is_imported_without_matplotlibs_property_tables_or_collector_passes() -> None:
    """The tables of settable properties matplotlib writes into docstrings as its classes are defined are 0.05 s
    of every build: the drawing modules are imported without them, and matplotlib is left as it was."""
    probe = ("import gc, matplotlib.artist as artist\n"
             "kwdoc = artist.kwdoc\n"
             "from reportgen.figures import _import_drawing\n"
             "passes = []\n"
             "gc.callbacks.append(lambda phase, info: passes.append(phase))\n"
             "_import_drawing()\n"
             "gc.callbacks.clear()\n"
             "from matplotlib.lines import Line2D\n"
             "print(artist.kwdoc is kwdoc, 'antialiased' in Line2D.set.__doc__, 'antialiased' in kwdoc(Line2D), "
             "len(passes), gc.isenabled())\n")
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    # matplotlib as it was, its classes without the tables, and no collector pass over what it defines (0.03 s)
    assert shown.stdout.split() == ["True", "False", "True", "0", "True"]


def test_figures_reach_the_pdf_renderer_as_placeholders() -> None:
    from PIL import Image

    from reportgen.figures import FIGURE_SCHEME
    from reportgen.render.pdf_forms import figures_as_placeholders, placeholders

    figure = '<svg role="img" aria-labelledby="a-caption" class="figure-svg" viewBox="0 0 460.8 237.6"><g/></svg>'
    other = '<svg xmlns="http://www.w3.org/2000/svg"><image href="file:///etc/passwd"/></svg>'
    html, figures = figures_as_placeholders(f"<p>{figure}</p>{other}<p>{figure}</p>")
    assert [f.slot.url for f in figures] == [f"{FIGURE_SCHEME}0", f"{FIGURE_SCHEME}1"]
    assert all(f.svg == figure.encode() and (f.slot.width, f.slot.height) == (Fraction("460.8"), Fraction("237.6"))
               for f in figures)
    assert html.count('<img class="figure-svg"') == 2 and other in html, "only reportgen's own figures move"
    images = [Image.open(io.BytesIO(png)) for png in placeholders([f.slot for f in figures]).values()]
    assert all(Fraction(image.width, image.height) == Fraction("460.8") / Fraction("237.6") for image in images), \
        "the layout leaves room of the figure's exact shape"
    assert len({image.size for image in images}) == 2, "and each placeholder is found by a size of its own"


@pytest.mark.parametrize("name", example_projects())
def test_each_figure_is_drawn_at_the_size_its_frame_promised(name: str) -> None:
    """The PDF is laid out from the frames before the figures are drawn: a drawing of another shape would be
    squeezed into the room left for it."""
    from reportgen.pipeline import analyze_loaded
    from reportgen.project.loader import load_project
    from reportgen.render.figure_families import figure_jobs

    loaded = load_project(INPUTS / name)
    analysis, _ = analyze_loaded(loaded)
    jobs = figure_jobs(analysis, loaded.project)
    assert jobs
    for job in jobs:
        size = re.search(r'viewBox="0 0 ([0-9.]+) ([0-9.]+)"', job.run())
        assert size is not None and tuple(Fraction(n) for n in size.groups()) == job.frame.points, job.frame.key


def test_project_text_in_a_figure_is_drawn_as_written_and_kept_inside_it(tmp_path: Path) -> None:
    """A step name is drawn literally (a pair of "$" would be parsed as mathtext and the name lost), and a long one
    is wrapped and shortened: a legend wider than its axes pushed them out of the figure, over the tick labels."""
    import warnings

    from reportgen.pipeline import analyze_loaded
    from reportgen.project.loader import load_project
    from reportgen.render.figure_families import figure_jobs

    name = "forward and backward pass of the encoder stack, $5 per hour and $6 per hour with checkpointing"
    project = tmp_path / "named.yaml"
    project.write_text((INPUTS / "example.yaml").read_text().replace("name: forward+backward", f"name: '{name}'"))
    loaded = load_project(project)
    analysis, _ = analyze_loaded(loaded)
    roofline = next(job for job in figure_jobs(analysis, loaded.project) if job.frame.key == "roofline")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns when its layout collapses
        svg = roofline.run()
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    legend = [text for text in texts if "forward" in text or "checkpointing" in text or "per hour" in text]
    assert "".join(legend).startswith("forward and backward pass of the") and "$5 per hour" in " ".join(legend)
    assert len(legend) >= 2 and all(len(line) <= 64 for line in legend), legend


@pytest.mark.parametrize("count", [16, 128])
def test_a_timeline_of_many_workers_stays_legible(tmp_path: Path, count: int) -> None:
    """128 workers in 4.6 inches: a label each overlapped into a smear, and outlines and hatches drowned the bars."""
    from reportgen.pipeline import analyze_loaded
    from reportgen.project.loader import load_project
    from reportgen.render.figure_families import figure_jobs

    workers = ", ".join(str(2000 + (index * 37) % 500) for index in range(count))
    project = tmp_path / "workers.yaml"
    project.write_text(re.sub(r"workers: \[[^\]]*\]", f"workers: [{workers}]", (INPUTS / "example.yaml").read_text()))
    loaded = load_project(project)
    analysis, _ = analyze_loaded(loaded)
    svg = next(job for job in figure_jobs(analysis, loaded.project) if job.frame.key == "timeline").run()
    labels = re.findall(r"<text[^>]*>(w\d+)</text>", svg)
    assert labels[0] == "w0"
    assert len(labels) == count if count <= 24 else 12 <= len(labels) <= 24, labels
    assert ("<pattern" in svg) == (count <= 24), "hatches only where a bar is tall enough to show one"


def thirteen_scales(folder: Path) -> Path:
    """The example measured at 1 to 4,096 nodes: costs and energies spanning three orders of magnitude."""
    runs = "\n".join(f"    - {{nodes: {2 ** k}, compute: {32400 / 2 ** k:.1f}, communication: {300 * k}, "
                     f"idle: {150 * k}, io: {600 / 2 ** k:.1f}}}" for k in range(13))
    text = (INPUTS / "example.yaml").read_text()
    start, end = text.index("  runs:\n"), text.index("\npricing:")
    project = folder / "scales.yaml"
    project.write_text(f"{text[:start]}  runs:\n{runs}\n{text[end:]}")
    return project


@pytest.mark.slow  # draws every figure of a project of its own
def test_figures_of_wide_ranges_stay_legible(tmp_path: Path) -> None:
    """Node labels that fit side by side with both ends kept, log cost axes over three orders of magnitude, full
    numbers with thousands separators (never a "1e6" in the corner), and no crowded point labels."""
    from reportgen.pipeline import analyze_loaded
    from reportgen.project.loader import load_project
    from reportgen.render.figure_families import figure_jobs

    loaded = load_project(thirteen_scales(tmp_path))
    analysis, _ = analyze_loaded(loaded)
    svgs = {job.frame.key: job.run() for job in figure_jobs(analysis, loaded.project)}

    def texts(key: str) -> list[str]:
        return re.findall(r"<text[^>]*>([^<]*)</text>", svgs[key])

    # node counts of 16 and more (the speedup and efficiency axes stop at 14): 9 per panel if all were labelled
    numbers = [text for text in texts("speedup") if re.fullmatch(r"[\d,]+", text)]
    node_labels = [text for text in numbers if int(text.replace(",", "")) >= 16]
    assert node_labels.count("4,096") == 2 and len(node_labels) <= 8, node_labels
    assert "cost (USD per run, log scale)" in texts("cost-speedup") and "10⁵" in texts("cost-speedup")
    assert "cost (USD per run, log scale)" in texts("regimes")
    assert "20,000" in texts("energy") and not any(re.fullmatch(r"1e\d", text) for text in texts("energy"))


def test_tiny_energies_and_costs_are_drawn_in_a_unit_that_reads() -> None:
    """Per unit of work an energy is some 10⁻⁷ kWh and a cost 10⁻⁶ USD: drawn as µWh and USD per million units of
    work, not as "4" under a "1e−7" in the corner."""
    from reportgen.figures.style import ENERGY_UNITS, MASS_UNITS, TIME_UNITS, readable, unit_for
    from reportgen.pipeline import analyze_loaded
    from reportgen.project.loader import load_project
    from reportgen.render.figure_families import figure_jobs

    assert readable([59.0, 126.0], ENERGY_UNITS) == ([59.0, 126.0], "kWh")
    assert readable([0.25, 0.5], ENERGY_UNITS) == ([250.0, 500.0], "Wh")
    values, unit = readable([4.36e-7, 4.6e-7], ENERGY_UNITS)
    assert unit == "µWh" and [round(v) for v in values] == [436, 460]
    assert readable([1.6e-7], MASS_UNITS)[1] == "µg" and readable([0.0], MASS_UNITS)[1] == "µg"
    assert unit_for([32_400.0], TIME_UNITS)[0] == "h" and unit_for([100.0], TIME_UNITS)[0] == "min"
    loaded = load_project(INPUTS / "bert-dgx-a100.yaml")  # NVIDIA's published BERT runs, per sequence
    analysis, _ = analyze_loaded(loaded)
    svg = next(job for job in figure_jobs(analysis, loaded.project) if job.frame.key == "energy").run()
    assert "energy (µWh per unit of work)" in svg and "CO2e (µg per unit of work)" in svg
    cost = next(job for job in figure_jobs(analysis, loaded.project) if job.frame.key == "cost-speedup")
    assert "cost (USD per million units of work)" in cost.run() and cost.frame.caption.startswith("Cost per unit")


def test_point_labels_are_thinned_where_points_crowd() -> None:
    from reportgen.figures import FigureFrame
    from reportgen.figures.style import figure, thinned_labels

    with figure(FigureFrame("t", "", "", 4, 3)) as fig:
        ax = fig.subplots()
        ax.set_xlim(0, 100)
        ax.set_ylim(0, 100)
        chosen = thinned_labels(ax, [(50, 50), (50.5, 50.5), (10, 10), (90, 90), (10.2, 10)])
    assert chosen == [0, 2, 3], "the first of each crowd keeps its label"


def test_the_page_holds_a_slot_per_figure_and_the_html_a_drawing_in_each(monkeypatch: pytest.MonkeyPatch) -> None:
    from reportgen.figures import FigureFrame
    from reportgen.render import report as render

    a, b, unused = (FigureFrame(key, f"Caption {key}", f"alt {key}") for key in ("a", "b", "unused"))
    monkeypatch.setattr(render, "render_html", lambda *_: f"<p>{b.slot}</p><p>text</p><p>{a.slot}</p>")
    page = render.render_page("report.html", {}, [a, b, unused])
    assert page.frames == (b, a), "in document order; a figure the page does not show is left out"
    assert [slot.url for slot in page.slots()] == ["reportgen-figure:b", "reportgen-figure:a"]
    assert page.svgs({"a": "<svg>A</svg>", "b": "<svg>B</svg>"}) == [b"<svg>B</svg>", b"<svg>A</svg>"]
    html = page.with_drawings({"a": "<svg>A</svg>", "b": "<svg>B</svg>", "unused": "<svg>U</svg>"})
    assert html == "<p><svg>B</svg></p><p>text</p><p><svg>A</svg></p>"


def test_a_figure_the_renderer_cannot_draw_fails_the_build() -> None:
    from reportgen.render.pdf import html_to_pdf

    broken = '<svg role="img" aria-labelledby="a" class="figure-svg" viewBox="0 0 9 9">&undefined;</svg>'
    with pytest.raises(RenderError, match="could not draw a figure"):
        html_to_pdf(f"<figure>{broken}</figure>")


@pytest.mark.slow
def test_pdf_table_of_contents_and_bookmarks(built: dict[str, Path], pdf_text: list[str]) -> None:
    reader = PdfReader(built["a"] / "report.pdf")
    top = [item.title for item in reader.outline if not isinstance(item, list)]
    for title in SECTION_TITLES:
        assert title in top
    contents = next(page for page in pdf_text if "Contents" in page)  # after page 1's summary
    assert re.search(r"Design\s*\.[ .]*\d+", contents), "the contents lists page numbers"


@pytest.mark.slow
def test_pdf_metadata(built: dict[str, Path]) -> None:
    meta = PdfReader(built["a"] / "report.pdf").metadata
    assert meta.title == "Data-parallel training of a 1.3B-parameter code model"
    assert meta.author == "Riya Patel, Tomás Ortega"
    assert "distribute training" in meta["/Keywords"]
    assert meta["/CreationDate"].startswith("D:20261118")  # the project's date, never "now"


@pytest.mark.slow
def test_outputs_are_byte_identical_across_runs(built: dict[str, Path]) -> None:
    for name in ("report.html", "report.pdf", "results.json"):
        assert (built["a"] / name).read_bytes() == (built["b"] / name).read_bytes(), name


class Structure(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.tags: list[str] = []
        self.urls: list[str] = []
        self.figures = self.captions = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        if values.get("id"):
            self.ids.append(values["id"] or "")
        for key in ("href", "src", "xlink:href"):
            if values.get(key):
                self.urls.append(values[key] or "")
        self.figures += tag == "figure"
        self.captions += tag == "figcaption"


@pytest.mark.slow
def test_html_is_self_contained_and_structured(built: dict[str, Path]) -> None:
    html = (built["a"] / "report.html").read_text()
    parser = Structure()
    parser.feed(html)
    for anchor in ("summary", "problem", "diagnosis", "design", "measure", "appendix"):
        assert anchor in parser.ids
    assert len(parser.ids) == len(set(parser.ids)), "element ids are unique across the inlined SVGs"
    assert parser.figures == parser.captions >= 12
    assert all(url.startswith("#") for url in parser.urls), [u for u in parser.urls if not u.startswith("#")]
    assert "link" not in parser.tags and "img" not in parser.tags
    assert parser.tags.count("nav") == 1 and parser.tags.count("main") == 1


@pytest.mark.slow
def test_free_text_is_escaped(tmp_path: Path) -> None:
    hostile = '<script>alert(1)</script><img src="file:///etc/passwd">'
    project = tmp_path / "hostile.yaml"
    project.write_text(f"project:\n  title: '{hostile}'\n  problem: '<a href=\"http://example.com\">x</a>'\n"
                       "design:\n  slots:\n    partitioning: {choice: '<b>bold</b>', why: '<link rel=attachment "
                       "href=file:///etc/passwd>'}\n")
    build(project, BuildOptions(out_root=tmp_path / "out"))
    html = (tmp_path / "out" / "hostile" / "report.html").read_text()
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert '<a href="http://example.com">' not in html and "<link rel=attachment" not in html
    pdf = (tmp_path / "out" / "hostile" / "report.pdf").read_bytes()
    assert b"/EmbeddedFile" not in pdf and b"root:x:0" not in pdf


def test_pdf_renderer_fetches_nothing() -> None:
    from reportgen.render.pdf import html_to_pdf

    html = ('<link rel="attachment" href="file:///etc/passwd"><img src="file:///etc/hostname">'
            '<img src="http://127.0.0.1:9/x.png"><link rel="stylesheet" href="file:///etc/passwd">'
            '<p style="background: url(file:///etc/passwd)">text</p>')
    pdf = html_to_pdf(html)
    assert pdf.startswith(b"%PDF") and b"/EmbeddedFile" not in pdf and b"/Image" not in pdf
    with pytest.raises(RenderError, match="fetches no external resource"):  # nor a figure this report lacks
        html_to_pdf('<img src="reportgen-figure:0">')


def test_templates_use_only_the_documented_context() -> None:
    import dataclasses

    from jinja2 import meta

    from reportgen.render.context import ReportContext
    from reportgen.render.report import environment, markdown_environment
    from reportgen.revision_pipeline import DiffContext

    env = environment()
    report = {f.name for f in dataclasses.fields(ReportContext)} | set(env.globals)
    # names report.html sets for its sections (shorthands of documented fields, such as info = project.project)
    report |= set(re.findall(r"{% set (\w+) =", (ROOT / "templates" / "report.html").read_text()))
    # the declared analysis a chapter's loop hands to the template it includes for it (`view`)
    report |= {name for path in (ROOT / "templates" / "chapters").glob("*.html")
               for name in re.findall(r"{% for (\w+) in declared_views\.", path.read_text())}
    diff = {f.name for f in dataclasses.fields(DiffContext)} | set(env.globals)
    diff_templates = {"diff.html", "diff.md", "partials/diffvalue.html"}
    from reportgen.project_history import HistoryContext

    history = {f.name for f in dataclasses.fields(HistoryContext)} | set(env.globals)
    for path in sorted((ROOT / "templates").rglob("*.*")):
        name = path.relative_to(ROOT / "templates").as_posix()
        if path.suffix not in (".html", ".md"):
            continue
        documented = diff if name in diff_templates else history if name.startswith("history.") else report
        parser = markdown_environment() if path.suffix == ".md" else env
        undeclared = meta.find_undeclared_variables(parser.parse(path.read_text()))
        assert undeclared <= documented, f"{name} uses {sorted(undeclared - documented)}"


@pytest.mark.slow
def test_letter_paper(tmp_path: Path) -> None:
    build(INPUTS / "bert-dgx-a100.yaml", BuildOptions(out_root=tmp_path, formats=("pdf",), paper="letter"))
    box = PdfReader(tmp_path / "bert-dgx-a100" / "report.pdf").pages[0].mediabox
    assert (round(float(box.width)), round(float(box.height))) == (612, 792)  # 8.5 × 11 in


def test_absent_sections_say_what_to_add(tmp_path: Path) -> None:
    project = tmp_path / "minimal.yaml"
    project.write_text("project: {title: Only a title}\n")
    build(project, BuildOptions(out_root=tmp_path / "out", formats=("html",)))
    html = (tmp_path / "out" / "minimal" / "report.html").read_text()
    for hint in ("add scaling.runs", "pricing.node_hour", "energy.node_power", "add prediction.t_comp",
                 "add reliability", "add design.slots", "add a hardware section"):
        assert hint in html, hint


@pytest.mark.slow
def test_installed_wheel_finds_its_templates_and_examples(tmp_path: Path) -> None:
    """A non-editable install ships templates/ inside the package and builds from there."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(tmp_path / "dist"), str(ROOT)], check=True, capture_output=True)
    [wheel] = (tmp_path / "dist").glob("reportgen-*.whl")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                    str(tmp_path / "site"), str(wheel)], check=True, capture_output=True)
    code = ("import reportgen.render.assets as a, sys; print(a.templates_dir()); "
            "from reportgen.commands.cli import main; "
            f"sys.exit(main(['build', {str(INPUTS / 'bert-dgx-a100.yaml')!r}, '-o', {str(tmp_path / 'out')!r}, "
            "'--format', 'html']))")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                            env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(str(tmp_path / "site" / "reportgen" / "templates"))
    assert (tmp_path / "out" / "bert-dgx-a100" / "report.html").stat().st_size > 10_000
    # the examples travel in the package too: `init --example` writes one, with the CSV it names, from the wheel
    code = ("import sys; from reportgen.commands.cli import main; "
            "sys.exit(main(['init', '--example', 'nightly-repeats']) or main(['check', 'nightly-repeats.yaml']))")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                            env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "nightly-repeats-runs.csv").read_bytes() == (INPUTS / "nightly-repeats-runs.csv").read_bytes()
    assert (tmp_path / "site" / "reportgen" / "inputs" / "example.yaml").is_file()


def test_activities_read_in_greyscale_with_cheap_hatches() -> None:
    """Each activity has its own colour and hatch; hatches are line patterns (no dots: matplotlib's dot hatch is a
    19 kB path the PDF renderer parses once per bar), single but for the rare start-up and contention layers' doubled
    ones."""
    from reportgen.figures.style import ACTIVITY

    colours = [colour for colour, _ in ACTIVITY.values()]
    hatches = [hatch for _, hatch in ACTIVITY.values()]
    assert len(set(colours)) == len(colours) and len(set(hatches)) == len(hatches)
    assert all(set(hatch) <= set("/\\|-x+") and len(hatch) <= 2 for hatch in hatches)


@pytest.mark.parametrize("name", ["example.yaml", "inference-service.yaml"])
def test_every_hatch_shows_against_its_fill(name: str) -> None:
    """matplotlib draws a hatch in its edge colour over the fill colour; the same colour twice hides it (the
    fanout figure's "budget exhausted" area had an invisible hatch, so it did not read in greyscale)."""
    from reportgen.pipeline import analyze_loaded
    from reportgen.project.loader import load_project
    from reportgen.render.figure_families import figure_jobs

    loaded = load_project(INPUTS / name)
    analysis, _ = analyze_loaded(loaded)
    patterns = 0
    for job in figure_jobs(analysis, loaded.project):
        for pattern in re.findall(r"<pattern .*?</pattern>", job.run(), re.DOTALL):
            background = re.search(r'<rect [^>]*fill="(#[0-9a-f]{6})"', pattern)
            strokes = set(re.findall(r"stroke: (#[0-9a-f]{6})", pattern))
            assert background and strokes and background.group(1) not in strokes, (job.key, pattern[:300])
            patterns += 1
    assert patterns >= 3


def test_a_load_axis_labels_fractional_levels_uncut() -> None:
    # Levels of a load axis (scaling.axis: load) are fractional: labelled as they are, never rounded onto a
    # neighbour's label, and more than 12 of them (where only powers of two are labelled) do not fail.
    from matplotlib.figure import Figure

    from reportgen.figures.style import log2_axis

    for levels in ([1, 1.53, 2.4, 3.9, 5.2], [1 + 0.7 * i for i in range(16)]):
        ax = Figure(figsize=(6, 3)).subplots()
        ax.plot(levels, levels)
        log2_axis(ax, levels)
        formatter = ax.xaxis.get_major_formatter()
        labels = [formatter(tick, 0) for tick in ax.xaxis.get_major_locator()()]
        assert len(labels) == len(set(labels)), labels
        if len(levels) <= 12:
            assert "1.53" in labels, labels


def test_a_load_axis_of_45_levels_builds_and_its_tables_spread_over_them(tmp_path: Path) -> None:
    """Past 40 scales the tables show a selection; a load axis (fractional levels, one power of two) once crashed
    it (`float & float`), and would have shown 2 of 45 levels."""
    runs = ", ".join(f"{{nodes: {1 + 0.37 * i:.2f}, throughput: {100 * (1 + 0.37 * i) ** 0.8:.1f} sequence/s}}"
                     for i in range(45))
    project = tmp_path / "load.yaml"
    project.write_text(f"project: {{title: Load sweep}}\nscaling: {{axis: load, runs: [{runs}]}}\n")
    from reportgen.commands.cli import main

    assert main(["build", str(project), "-o", str(tmp_path / "out"), "--format", "html", "-q"]) == 0
    html = (tmp_path / "out" / "load" / "report.html").read_text()
    table = html.split("<caption>Per measured scale", 1)[1].split("</table>", 1)[0]
    levels = [float(level) for level in re.findall(r'<tr><td class="n" data-value="([0-9.]+)">', table)]
    assert levels[0] == 1 and levels[-1] == 17.28 and 10 <= len(levels) < 45, levels


def test_every_heading_has_an_id_unique_in_the_page() -> None:
    from reportgen.render.report import with_heading_ids

    html = with_heading_ids('<h2 id="design">Design</h2><h3>The six slots</h3><h3>The six slots</h3>'
                            '<h4>α–β <i>fit</i></h4><h3>Design</h3>')
    assert re.findall(r'<h[2-4] id="([^"]+)"', html) == ["design", "the-six-slots", "the-six-slots-2", "fit",
                                                          "design-2"]


def test_the_built_report_links_every_heading(built: dict[str, Path]) -> None:
    html = (built["a"] / "report.html").read_text(encoding="utf-8")
    headings = re.findall(r"<h[2-4][ >][^>]*>?", html)
    assert headings and all(' id="' in heading for heading in headings), [h for h in headings if ' id="' not in h]
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert len(ids) == len(set(ids))


@pytest.fixture(scope="module")
def every_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every example's HTML and PDF, built by one `reportgen build -j 2` (33 s here, where one build an example took
    110 s): the folder that holds them."""
    out = tmp_path_factory.mktemp("examples")
    subprocess.run([sys.executable, "-m", "reportgen", "build", *map(str, sorted(INPUTS.glob("*.yaml"))), "-o",
                    str(out), "--format", "html,pdf", "-j", "2", "-q"], check=True, timeout=600)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("example", sorted(path.stem for path in INPUTS.glob("*.yaml")))
def test_page_one_holds_the_whole_reviewers_summary(example: str, every_example: Path) -> None:
    """Page 1 is the reviewer's summary (docs/methods.md#page-1-and-the-next-action): the verdict, the next action
    and every line of evidence below it (operating point, scaling, model, layout, diagnosis, evidence) are on it,
    for every example."""
    tmp_path = every_example
    html = (tmp_path / example / "report.html").read_text(encoding="utf-8")
    summary = html.split('id="summary"', 1)[1].split("<h3", 1)[0]
    labels = re.findall(r'<span class="label">([^<]+)</span>', summary)
    page_one = " ".join((PdfReader(tmp_path / example / "report.pdf").pages[0].extract_text() or "").split())
    missing = [label for label in labels if label.replace("Next action", "NEXT ACTION") not in page_one]
    assert labels and not missing, f"{example}: page 2 holds {missing}"
    _assert_tagged(tmp_path / example / "report.pdf")
    _assert_no_page_a_third_blank(tmp_path / example / "report.pdf")


def _assert_no_page_a_third_blank(path: Path) -> None:
    """No page is more than a third blank mid-report (a figure or a table pushed to the next page with what it was
    glued to): only the pages before the ways considered and the appendix (each starts a page: page 2 opens with the
    ways considered, docs/methods.md#ways-considered) and the last may end early. A page's fill is
    its last inked row between the running header and footer, from a 20 dpi greyscale rendering."""
    import shutil
    import tempfile

    import numpy as np
    from PIL import Image

    if shutil.which("pdftoppm") is None:
        pytest.skip("pdftoppm (poppler-utils) is not installed")
    # the pages' text from poppler's pdftotext (a form feed after each page): pypdf took 2.9 s a report for it
    texts = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout.split("\f")
    appendix = next(index for index, text in enumerate(texts)
                    if any(line.startswith("Appendix: methodology") for line in text.splitlines()))
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(["pdftoppm", "-png", "-r", "20", "-gray", str(path), f"{folder}/p"], check=True)
        fills = []
        for png in sorted(Path(folder).glob("p-*.png")):
            pixels = np.asarray(Image.open(png).convert("L"))
            body = pixels[int(len(pixels) * 0.06):int(len(pixels) * 0.93)]
            inked = np.flatnonzero((body < 200).any(axis=1))
            fills.append(inked.max() / len(body) if len(inked) else 0.0)
    ways = next((index for index, text in enumerate(texts) if "Ways considered" in text.splitlines()[:4]
                 or any(line.strip() == "Ways considered" for line in text.splitlines())), None)
    exempt = {appendix - 1, len(fills) - 1} | ({ways - 1} if ways else set())
    blank = [index + 1 for index, fill in enumerate(fills) if fill < 2 / 3 and index not in exempt]
    assert not blank, f"{path.parent.name}: pages {blank} are more than a third blank"


def _assert_tagged(path: Path) -> None:
    """A tagged PDF (PDF/UA structure, as `pdfinfo` reports "Tagged: yes"), in English, whose figures keep their
    text alternatives after the drawings replace the placeholders."""
    import pikepdf

    with pikepdf.open(path) as pdf:
        assert pdf.Root.MarkInfo.Marked is True and "/StructTreeRoot" in pdf.Root
        assert str(pdf.Root.Lang) == "en"
        figures = [element for element in _structure(pdf.Root.StructTreeRoot) if element.get("/S") == "/Figure"]
        assert figures and all(str(element.get("/Alt", "")).strip() for element in figures)


def _structure(element: object) -> Iterator[Any]:
    """Every element of a PDF's structure tree, depth first."""
    import pikepdf

    if isinstance(element, pikepdf.Array):
        for item in element:
            yield from _structure(item)
    elif isinstance(element, pikepdf.Dictionary):
        yield element
        if "/K" in element:
            yield from _structure(element.K)
