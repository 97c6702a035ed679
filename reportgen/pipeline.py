"""build(): load → analyze → results.json, HTML, PDF → written atomically into OUT/<stem>/."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reportgen import carbon
from reportgen.analysis import analyze
from reportgen.errors import InputError, Problem
from reportgen.outputs import output_dir, write_atomically
from reportgen.project import LoadedProject, load_project
from reportgen.render import render_html, render_pdf
from reportgen.results import dumps, results_document


@dataclass(frozen=True)
class BuildOptions:
    out_root: Path = Path("build")
    formats: tuple[str, ...] = ("html", "pdf", "json")
    paper: str = "a4"


def build(path: Path, options: BuildOptions) -> list[Path]:
    """Build one project's outputs; nothing is written unless every requested format rendered."""
    loaded = load_project(path)
    analysis = analyze(loaded.project, intensity=_intensity(loaded))
    document = results_document(loaded, analysis)
    files: dict[str, bytes] = {}
    if "json" in options.formats:
        files["results.json"] = dumps(document).encode("utf-8")
    if "html" in options.formats or "pdf" in options.formats:
        from reportgen.context import as_template_vars, build_context
        from reportgen.figures import draw_figures
        from reportgen.pdf import preload

        figures = draw_figures(analysis, loaded.project,
                               while_waiting=preload if "pdf" in options.formats else None)
        context = build_context(loaded.project, analysis, document, figures, paper=options.paper,
                                input_name=path.name)
        html = render_html("report.html", as_template_vars(context))
        if "html" in options.formats:
            files["report.html"] = html.encode("utf-8")
        if "pdf" in options.formats:
            files["report.pdf"] = render_pdf(html, epoch=context.epoch)
    return write_atomically(output_dir(options.out_root, path.stem), files)


def _intensity(loaded: LoadedProject) -> carbon.Intensity | None:
    energy = loaded.project.energy
    try:
        return carbon.intensity_for(energy.location if energy else None)
    except carbon.UnknownLocation as error:  # validated at load time; kept for a data file that changed since
        raise InputError([Problem(loaded.display, 1, 1, f"energy.location.{error.field}", str(error))]) from None
