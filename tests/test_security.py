"""A project file written by someone else must not run code, fetch, embed or leak anything, or write outside OUT."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from reportgen.commands.cli import main
from reportgen.errors import InputError
from reportgen.pipeline import BuildOptions, build
from reportgen.project.loader import load_project
from reportgen.project.model import Project
from reportgen.project.spec import Items, Section, Text, spec_fields

PAYLOAD = ('<script>alert("xss")</script><img src="file:///etc/passwd" onerror="alert(1)">'
           '<link rel="attachment" href="file:///etc/passwd"><a href="http://127.0.0.1:9/">x</a>'
           '<iframe src="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="></iframe>'
           '<style>body{background:url(file:///etc/hostname)}</style>{{ 7*7 }}')


def free_text_paths(cls: type = Project, prefix: str = "") -> list[str]:
    """Every free-text field of the project file (Text without a fixed vocabulary), as paths into one project."""
    paths = []
    for name, spec, _ in spec_fields(cls):
        path = f"{prefix}.{name}" if prefix else name
        if isinstance(spec, Section):
            paths += free_text_paths(spec.cls, path)
        elif isinstance(spec, Items) and isinstance(spec.item, Section):
            paths += free_text_paths(spec.item.cls, f"{path}[0]")
        elif isinstance(spec, Text):  # a vocabulary is OneOf, not Text
            paths.append(path)
    return paths


def hostile_project() -> str:
    """Every free-text field set to the payload, inside an otherwise valid project."""
    def q(text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    p = q(PAYLOAD)
    return f"""
project: {{title: {p}, authors: [{p}], revision: {p}, date: {p}, problem: {p}, goal: {{text: {p}}}}}
hardware: {{name: {p}, peak_compute: 1 PFLOP/s, memory_bandwidth: 1 TB/s}}
baseline: {{steps: [{{name: {p}, time: 1 s, flops: 1e14 FLOP, bytes: 1e11 B}}]}}
design:
  slots:
    partitioning: {{choice: {p}, detail: {p}, why: {p}, rejected: [{{choice: {p}, why: {p}}}]}}
scaling: {{runs: [{{nodes: 1, time: 100 s}}, {{nodes: 2, time: 60 s}}, {{nodes: 4, time: 40 s}}], superlinear: {p}}}
pricing: {{node_hour: 10 USD}}
decisions: [{{name: {p}, optimize: cost}}]
"""


def test_the_hostile_project_covers_every_free_text_field() -> None:
    covered = {"project.title", "project.authors", "project.revision", "project.date", "project.problem",
               "project.goal.text", "hardware.name", "baseline.steps[0].name", "design.slots.partitioning.choice",
               "design.slots.partitioning.detail", "design.slots.partitioning.why",
               "design.slots.partitioning.rejected[0].choice", "design.slots.partitioning.rejected[0].why",
               "decisions[0].name", "scaling.file", "scaling.superlinear", "prediction.collectives_file",
               "calibration.ledger",
               "pricing.currency",
               "energy.location.country",
               "energy.location.region", "energy.location.cloud"}
    slots = {"communication", "consistency", "coordination", "fault_tolerance", "load_balancing"}
    uncovered = {path for path in free_text_paths()
                 if path not in covered and not any(f"design.slots.{slot}." in path for slot in slots)}
    assert not uncovered, f"add these fields to hostile_project(): {sorted(uncovered)}"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    path = folder / "hostile.yaml"
    path.write_text(hostile_project(), encoding="utf-8")
    build(path, BuildOptions(out_root=folder / "out", use_disk_cache=False))
    return folder / "out" / "hostile"


def test_free_text_is_escaped_everywhere_in_html(hostile: Path) -> None:
    html = (hostile / "report.html").read_text(encoding="utf-8")
    for raw in ("<script>alert(", "<img src=\"file:", "<link rel=\"attachment\"", "<iframe", "<a href=\"http",
                "<style>body{background:url(file"):
        assert raw not in html, raw
    assert html.count("&lt;script&gt;alert(") >= 10
    assert "{{ 7*7 }}" in html and ">49<" not in html  # text is never evaluated as a template
    assert html.count("<script>") == 1  # reportgen's own table sorter, nothing else


def test_the_pdf_embeds_and_links_nothing(hostile: Path) -> None:
    pdf = (hostile / "report.pdf").read_bytes()
    for marker in (b"/EmbeddedFile", b"/JavaScript", b"/JS ", b"/URI", b"/Launch", b"root:x:0"):
        assert marker not in pdf, marker


def test_results_json_keeps_text_as_data(hostile: Path) -> None:
    import json

    document = json.loads((hostile / "results.json").read_text())
    assert document["project"]["title"] == PAYLOAD


def test_a_crafted_template_context_cannot_fetch(tmp_path: Path) -> None:
    """Even SVG that references local files and the network, handed to the renderer, fetches nothing."""
    from reportgen.render.pdf import html_to_pdf

    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
           f'<image xlink:href="{secret.as_uri()}" width="10" height="10"/>'
           f'<image href="http://127.0.0.1:9/x.png" width="10" height="10"/></svg>')
    html = (f'<html><head><link rel="stylesheet" href="{secret.as_uri()}"></head><body>{svg}'
            f'<img src="{secret.as_uri()}"><object data="{secret.as_uri()}"></object>'
            f'<link rel="attachment" href="{secret.as_uri()}">'
            '<img src="data:image/png;base64,iVBORw0KGgo="></body></html>')
    started = time.perf_counter()
    pdf = html_to_pdf(html)
    assert time.perf_counter() - started < 10
    assert b"TOP-SECRET" not in pdf and b"/EmbeddedFile" not in pdf and b"/Image" not in pdf


@pytest.mark.parametrize("text", [
    "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(12))
    + "project: {title: T}\n",
    "project: !!python/object/new:os.system [echo pwned]\n",
    "project: !!python/name:os.system\n",
    "project: {title: T}\nhardware: {network_latency: 9**9**9**9**9**9 s}\n",
    "project: {title: T}\nhardware: {network_latency: " + "(" * 5000 + "s" + ")" * 5000 + "}\n",
    "project: {title: T}\nhardware: {network_latency: 1 s" + " * s / s" * 3000 + "}\n",
    "project: {title: T}\n" + "x: " + "[" * 10000 + "]" * 10000 + "\n",
])
def test_bombs_are_refused_fast(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(text)
    started = time.perf_counter()
    with pytest.raises(InputError) as caught:
        load_project(path)
    assert time.perf_counter() - started < 2
    assert caught.value.problems[0].line >= 1


def test_oversized_files_are_refused_without_reading_them_whole(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as handle:
        handle.write(b"project: {title: T}\n")
        handle.seek(200 * 1024 * 1024)  # a sparse 200 MB file
        handle.write(b"\n")
    started = time.perf_counter()
    with pytest.raises(InputError, match="larger than"):
        load_project(path)
    assert time.perf_counter() - started < 1


def test_scaling_file_cannot_leave_the_project_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside.csv"
    outside.write_text("nodes,time [s]\n1,100\n")
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "link.csv").symlink_to(outside)  # a symlink inside that points outside
    for name in ("../outside.csv", str(outside), "link.csv", "/etc/passwd", "sub/../../outside.csv"):
        path = folder / "p.yaml"
        path.write_text(f"project: {{title: T}}\nscaling: {{file: '{name}'}}\n")
        with pytest.raises(InputError) as caught:
            load_project(path)
        assert caught.value.problems[0].path == "scaling.file", name


def test_calibration_ledger_cannot_leave_the_project_folder(tmp_path: Path) -> None:
    """The history a build pools (docs/methods.md#how-accurate-each-prediction-is) is read as a CSV the project names
    is: inside the project file's folder only."""
    from reportgen.pipeline import own_evidence

    outside = tmp_path / "history.json"
    outside.write_text('{"ledger": []}')
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "link.json").symlink_to(outside)
    for name in ("../history.json", str(outside), "link.json", "/etc/passwd"):
        path = folder / "p.yaml"
        path.write_text(f"project: {{title: T}}\ncalibration: {{ledger: '{name}'}}\n")
        with pytest.raises(InputError) as caught:
            own_evidence(load_project(path))
        assert caught.value.problems[0].path == "calibration.ledger", name


def test_outputs_stay_inside_the_output_folder(tmp_path: Path) -> None:
    for name in ("..yaml", "...yaml"):  # stems "." and ".."
        path = tmp_path / name
        path.write_text("project: {title: T}\n")
        assert main(["build", str(path), "-o", str(tmp_path / "out"), "--format", "json"]) == 2
    assert not (tmp_path / "results.json").exists() and not (tmp_path.parent / "results.json").exists()




def test_bidi_controls_in_project_text_act_inside_it_only(tmp_path: Path) -> None:
    """A right-to-left override left open in a title reversed the report's own sentences after it. Each piece of
    project text with bidi controls is isolated (FSI … PDI); a stray PDI cannot close the wrapper; text without
    controls is kept as written."""
    from reportgen.project.spec import bidi_isolated

    assert bidi_isolated("Plain title") == "Plain title"
    assert bidi_isolated("Evil \u202eadmin") == "\u2068Evil \u202eadmin\u2069"
    assert bidi_isolated("a\u2069\u202eb") == "\u2068a\u202eb\u2069"  # the stray PDI would have ended the isolate
    assert bidi_isolated("\u2067open") == "\u2068\u2067open\u2069\u2069"  # the text's own isolate closed too
    text = ('project: {title: "Evil \u202eadmin", goal: {text: "abc \u2069\u202e def", time_per_run: 1 h}}\n'
            "design: {nodes: 2}\nscaling: {runs: [{nodes: 1, time: 100 s}, {nodes: 2, time: 60 s}]}\n")
    (tmp_path / "bidi.yaml").write_text(text, encoding="utf-8")
    from reportgen.pipeline import BuildOptions, build

    build(tmp_path / "bidi.yaml", BuildOptions(out_root=tmp_path / "out", formats=("html",)))
    html = (tmp_path / "out" / "bidi" / "report.html").read_text(encoding="utf-8")
    depth, overrides = 0, 0
    for character in html:  # every override sits inside an isolate, and every isolate closes
        if character == "\u2068":
            depth += 1
        elif character == "\u2069":
            depth -= 1
            assert depth >= 0
        elif character == "\u202e":
            overrides += 1
            assert depth > 0
    assert depth == 0 and overrides >= 2


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x1e", "\r"])
def test_an_isolate_never_spans_a_line_or_paragraph_separator(tmp_path: Path, separator: str) -> None:
    """A paragraph separator ends every isolate (the bidi algorithm's rule X8): with one between FSI and an override,
    the override ran on past the text and page 1's PDF read reversed. Each line is isolated on its own."""
    from reportgen.pipeline import BuildOptions, build
    from reportgen.project.spec import bidi_isolated

    assert bidi_isolated(f"Evil{separator}\u202eadmin") == f"Evil{separator}\u2068\u202eadmin\u2069"
    assert bidi_isolated(f"\u202ea{separator}b\u2069c") == f"\u2068\u202ea\u2069{separator}\u2068bc\u2069"
    title = f"Evil{separator}\u202eadmin"
    escaped = title.encode("unicode_escape").decode("ascii")
    text = (f'project: {{title: "{escaped}", goal: {{text: "x{escaped}", time_per_run: 1 h}}}}\n'
            "design: {nodes: 2}\nscaling: {runs: [{nodes: 1, time: 100 s}, {nodes: 2, time: 60 s}]}\n")
    (tmp_path / "sep.yaml").write_text(text, encoding="utf-8")
    build(tmp_path / "sep.yaml", BuildOptions(out_root=tmp_path / "out", formats=("html",)))
    html = (tmp_path / "out" / "sep" / "report.html").read_text(encoding="utf-8")
    depth, overrides = 0, 0
    for character in html:
        if character == "\u2068":
            depth += 1
        elif character == "\u2069":
            depth -= 1
        elif character == "\u202e":
            overrides += 1
            assert depth > 0
        elif character in "\n\r\x1c\x1d\x1e\x85\u2028\u2029":
            assert depth == 0  # no isolate is open across a separator
    assert depth == 0 and overrides >= 2
