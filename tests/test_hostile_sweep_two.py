"""The second hostile sweep (issue 33): each defect it found, grouped by mechanism, with the input that broke it.

Every test here failed before its fix. The families are counted in docs/testing.md's table with the first sweep's
(tests/test_hostile_sweep.py names them as attempts that live here).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from reportgen.project.loader import load_project
from tests.conftest import DATA
from tests.test_hostile_sweep import run

EMISSIONS = DATA / "codecarbon" / "emissions.csv"
PROJECT = "project: {title: H}\nscaling: {file: runs.csv, time_unit: s}\n"
RUNS = "nodes,time [s]\n1,100\n2,60\n"
# Every character str.splitlines() ends a line at: each once ended a `# reportgen` comment and started a row
LINE_BREAKS = ("\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def _project(folder: Path) -> Path:
    (folder / "runs.csv").write_text(RUNS)
    path = folder / "p.yaml"
    path.write_text(PROJECT)
    return path


def _emissions_with_run_id(folder: Path, run_id: str) -> Path:
    with EMISSIONS.open(newline="") as stream:
        rows = list(csv.reader(stream))
    column = rows[0].index("run_id")
    rows[-1][column] = run_id
    out = io.StringIO()
    csv.writer(out).writerows(rows)  # quoted as CodeCarbon's writer (pandas) quotes a cell holding a line break
    path = folder / "emissions.csv"
    path.write_text(out.getvalue(), newline="")
    return path


# ------------------------------------------------------------------------- 2. text written into files is inert
@pytest.mark.parametrize("brk", LINE_BREAKS, ids=[f"U+{ord(c):04X}" for c in LINE_BREAKS])
def test_a_line_break_in_a_run_id_never_forges_a_row(tmp_path: Path, brk: str) -> None:
    project = _project(tmp_path)
    forged = f"x{brk}8,1{brk}16,0.5"  # what once became two measured runs, at 8 and 16 nodes
    emissions = _emissions_with_run_id(tmp_path, forged)
    status, said = run("ingest", "codecarbon", str(emissions), "--project", str(project), "--nodes", "2")
    assert status == 0, said
    runs = load_project(project).project.scaling.runs
    assert sorted(r.nodes for r in runs) == [1, 2] and runs[-1].energy is not None
    text = (tmp_path / "runs.csv").read_text()
    comment = next(line for line in text.splitlines() if line.startswith("# reportgen ingest codecarbon"))
    assert brk.encode("unicode_escape").decode("ascii") in comment  # shown, escaped, on the one line
    assert len(text.splitlines()) == 4  # header, 1-node row, comment, 2-node row


def test_a_line_break_in_a_trace_file_name_never_forges_a_row(tmp_path: Path) -> None:
    from tests.test_hostile_sweep import SPLIT_RUNS
    from tests.test_traces import job_trace

    (tmp_path / "runs.csv").write_text(SPLIT_RUNS)
    project = tmp_path / "p.yaml"
    project.write_text(PROJECT)
    trace = tmp_path / "rank\n8,1,1,1\u2028.json"
    trace.write_text(json.dumps(job_trace(0, 1, [1000.0])))
    status, said = run("ingest", "trace", str(trace), "--project", str(project), "--nodes", "1")
    assert status == 0, said
    assert sorted(r.nodes for r in load_project(project).project.scaling.runs) == [1, 2]
    assert "rank\\n8,1,1,1\\u2028.json sha256" in (tmp_path / "runs.csv").read_text()


# ------------------------------------------------------------------- 3. one reader of identity and numbers
@pytest.mark.parametrize("spelling", ["2", "2.0", "02", "+2", "2e0", " 2"])
def test_a_writer_finds_a_scale_by_the_nodes_column_and_its_value(tmp_path: Path, spelling: str) -> None:
    """`nodes` not the first column, and 2 written as the loader reads it: the 2-node run is the one replaced."""
    from reportgen.ingest.measure import Measurement, append_run

    (tmp_path / "runs.csv").write_text(f"time [s],nodes\n100,8\n60,{spelling}\n")
    append_run(tmp_path / "runs.csv", Measurement(2, 55.0, None, {}, 0), time_unit_s=None, replace=True)
    project = tmp_path / "p.yaml"
    project.write_text(PROJECT)
    runs = sorted((r.nodes, r.time) for r in load_project(project).project.scaling.runs)
    assert runs == [(2, 55.0), (8, 100.0)]  # the 8-node run kept, the old 2-node run replaced, no run added


def test_codecarbon_energy_goes_to_the_run_at_its_node_count_whatever_the_column_order(tmp_path: Path) -> None:
    (tmp_path / "runs.csv").write_text("time [s],nodes,energy [kWh]\n100,8,\n60,2.0,\n")
    project = tmp_path / "p.yaml"
    project.write_text(PROJECT)
    status, said = run("ingest", "codecarbon", str(EMISSIONS), "--project", str(project), "--nodes", "2")
    assert status == 0, said
    energy = {r.nodes: r.energy for r in load_project(project).project.scaling.runs}
    assert energy[8] is None and energy[2] is not None and energy[2] > 0


# -------------------------------------------------------------- 1. counts and sizes from outside are bounded
@pytest.mark.parametrize("unit", ["s**0", "s^0", "s**-0", "s^00", "s**2**0"])
def test_a_unit_to_the_power_zero_is_refused_where_it_stands(tmp_path: Path, unit: str) -> None:
    (tmp_path / "p.yaml").write_text(f"project: {{title: T}}\nbaseline: {{training: {{deadline: 5 {unit}, "
                                     "tokens: 1e9}}\n")
    status, said = run("check", str(tmp_path / "p.yaml"))
    assert status == 2 and "Traceback" not in said
    assert f'p.yaml:2:33: error: baseline.training.deadline: expected time like "90 min", got "5 {unit}"' in said
    (tmp_path / "runs.csv").write_text(f"nodes,time [{unit}]\n1,100\n")
    (tmp_path / "p.yaml").write_text("project: {title: T}\nscaling: {file: runs.csv}\n")
    status, said = run("check", str(tmp_path / "p.yaml"))
    assert status == 2 and "Traceback" not in said and "runs.csv:2:3: error: scaling.runs[0].time" in said


@pytest.mark.parametrize("nodes", ["1e30", "1048577"])
def test_a_node_count_past_any_cluster_is_refused_by_check_not_by_the_figures(tmp_path: Path, nodes: str) -> None:
    (tmp_path / "p.yaml").write_text(f"project: {{title: T}}\nscaling: {{time_unit: s, runs: [{{nodes: 1, time: "
                                     f"100}}, {{nodes: {nodes}, time: 50}}]}}\n")
    status, said = run("build", str(tmp_path / "p.yaml"), "-o", str(tmp_path / "out"), "--format", "html")
    assert status == 2 and "Traceback" not in said
    assert "scaling.runs[1].nodes: must be greater than 0 and at most 1,048,576" in said
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------------- 4. the user's environment stays out
@pytest.mark.slow
def test_the_users_matplotlibrc_never_reaches_the_figures(tmp_path: Path) -> None:
    """text.usetex in ./matplotlibrc or $MATPLOTLIBRC broke every build (no LaTeX); figure.dpi changed the report;
    $MPLBACKEND naming a backend this Python lacks broke every build."""
    import os
    import subprocess
    import sys

    from tests.conftest import INPUTS

    rc = tmp_path / "rc"
    rc.mkdir()
    (rc / "matplotlibrc").write_text("text.usetex: True\nfigure.dpi: 300\nfont.size: 20\nlines.linewidth: 9\n")
    clean = {k: v for k, v in os.environ.items() if k not in ("MATPLOTLIBRC", "MPLCONFIGDIR")}

    def build(out: str, cwd: Path, env: dict[str, str]) -> str:
        command = [sys.executable, "-m", "reportgen", "build", str(INPUTS / "mlperf-ssd.yaml"), "-o",
                   str(tmp_path / out), "--format", "html", "-q"]
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return (tmp_path / out / "mlperf-ssd" / "report.html").read_text()

    reference = build("clean", tmp_path, clean)
    assert build("cwd", rc, clean) == reference
    assert build("env", tmp_path, {**clean, "MATPLOTLIBRC": str(rc / "matplotlibrc")}) == reference
    # the backend Jupyter exports, which this interpreter cannot import: every build failed at matplotlib's import
    jupyter = {**clean, "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    assert build("backend", tmp_path, jupyter) == reference


@pytest.mark.slow
def test_a_long_tmpdir_still_makes_the_pdf(tmp_path: Path) -> None:
    """Past ~75 characters of $TMPDIR the fork server's socket path exceeded AF_UNIX's 108 bytes: no PDF, ever."""
    import os
    import subprocess
    import sys

    from tests.conftest import INPUTS

    long = tmp_path / ("t" * 100)
    long.mkdir()
    command = [sys.executable, "-m", "reportgen", "build", str(INPUTS / "mlperf-ssd.yaml"), "-o", str(tmp_path / "o"),
               "--format", "pdf", "-q"]
    done = subprocess.run(command, env={**os.environ, "TMPDIR": str(long)}, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert (tmp_path / "o" / "mlperf-ssd" / "report.pdf").read_bytes().startswith(b"%PDF")


HOSTILE_TEXT = ("![x](http://e.example/i.png) [l](http://e.example) <img src=x onerror=1> </details> <a href=y>a</a> "
                "www.evil.example https://evil.example/p me@evil.example **b** `c` | d")


def test_diff_md_quotes_project_text_as_text_never_as_markup(tmp_path: Path) -> None:
    """diff.md escaped only `|`: images, links and raw HTML from a title, a decision, a slot reached the comment."""
    from markdown_it import MarkdownIt

    from tests.conftest import INPUTS

    text = (INPUTS / "finetune-r1.yaml").read_text(encoding="utf-8")
    new = text.replace("  title: Full fine-tuning of a 30B-parameter model", f"  title: \"{HOSTILE_TEXT}\"")
    new = new.replace("why: Four replicas each take a quarter of the examples.", f"why: \"{HOSTILE_TEXT}\"")
    new = new.replace("name: GCP a2-highgpu-8g (8x A100 40GB)", f"name: \"{HOSTILE_TEXT}\"")
    assert new.count(HOSTILE_TEXT) == 3
    (tmp_path / "old.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "new.yaml").write_text(new, encoding="utf-8")
    status, said = run("diff", str(tmp_path / "old.yaml"), str(tmp_path / "new.yaml"), "-o", str(tmp_path),
                       "--format", "md")
    assert status == 0, said
    markdown = (tmp_path / "diff-old-vs-new" / "diff.md").read_text()
    tokens = MarkdownIt("gfm-like").parse(markdown)
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in t.children or ()}
    assert not kinds & {"link_open", "image"}, kinds  # no link or image, not even an autolinked domain
    raw = {c.content.strip() for t in tokens for c in (t.children or ()) if c.type == "html_inline"} | \
        {t.content.strip() for t in tokens if t.type == "html_block"}
    own = re.compile(r"^(<details><summary>\d+ changed inputs</summary>|</details>)$")  # the template's, no more
    assert all(own.match(html) for html in raw), raw
    assert "evil" in MarkdownIt("gfm-like").render(markdown)  # the text is there, shown as text


# ------------------------------------------------------------ 6. measure says what it measured before refusing
@pytest.mark.slow
@pytest.mark.parametrize("written", ["{\"compute\": -1, \"communication\": 0, \"idle\": 0}",
                                     "{\"compute\": NaN, \"communication\": 0, \"idle\": 0}",
                                     "{\"compute\": 1e40, \"communication\": 0, \"idle\": 0}",
                                     "not json", "x" * ((1 << 20) + 10),
                                     "{\"compute\": 812, \"compute\": 5}", "{\"compute\": 1" + "0" * 400 + "}"],
                         ids=["negative", "nan", "1e40", "not-json", "past-1-MiB", "key-twice", "400-digits"])
def test_an_unusable_split_file_still_prints_the_measured_time_and_energy(tmp_path: Path, written: str) -> None:
    import sys

    project = tmp_path / "p.yaml"
    project.write_text("project: {title: M}\nscaling: {file: runs.csv, time_unit: s}\n")
    (tmp_path / "split.txt").write_text(written)
    writer = (f"import os, shutil; shutil.copy({str(tmp_path / 'split.txt')!r}, "
              "os.environ['REPORTGEN_SPLIT_FILE'])")
    status, said = run("measure", "--project", str(project), "--nodes", "1", "--split", "--", sys.executable, "-c",
                       writer)
    assert status == 2 and "Traceback" not in said
    line = next(line for line in said.splitlines() if "error:" in line)
    assert re.search(r"error: measured: wall time [0-9.,]+ (µs|ms|s|min|h)\b[^,]*, energy .*; not recorded: "
                     r"\$REPORTGEN_SPLIT_FILE: ", line), line
    assert not (tmp_path / "runs.csv").exists()


# ------------------------------------------- 1. (cont.) per-item rows aggregate: a count never makes a page huge
def test_the_timeline_of_200000_workers_draws_groups_at_their_slowest() -> None:
    from reportgen.analysis.measured.scaling import PopRow
    from reportgen.figures.jobs import FigureFrame
    from reportgen.figures.scaling import MAX_DRAWN_WORKERS, _draw_timeline, _worker_group

    assert (_worker_group(400), _worker_group(401), _worker_group(200_000)) == (1, 2, 500)
    workers = tuple(float(100 + i % 7) for i in range(200_000))
    workers = (*workers[:-1], 150.0)  # the straggler is the last worker: its group must show it
    svg = _draw_timeline(FigureFrame("t", "", ""), PopRow(8, 0.9, None, None, 0.1, workers, 2.0))
    bars = svg.count('id="t-patch_')
    assert bars <= 3 * MAX_DRAWN_WORKERS + 16 and len(svg) < 600_000  # three layers of at most 400 bars
    assert "w0–499" in svg and "w0<" not in svg  # groups labelled by the workers they hold


def test_a_long_list_is_shown_by_its_head_and_spread_and_collectives_past_200_are_counted() -> None:
    from reportgen.project.flatten import Leaf
    from reportgen.render.context import normalized_inputs
    from tests.conftest import make_project

    shown = Leaf("scaling.runs[1].workers", tuple(float(i) for i in range(200_000)), "s").shown
    assert shown.endswith("… (200,000 values; least 0, median 100000, most 199999)") and len(shown) < 200
    collectives = ", ".join(f"{{nodes: {2 ** (1 + i % 3)}, bytes: {i + 1} MB, time: {i + 1} ms}}" for i in range(300))
    project = make_project(f"project: {{title: T}}\nprediction: {{t_comp: 1 s, alpha: 8 us, message_bytes: 1 GB, "
                           f"collectives: [{collectives}]}}\n")
    rows = normalized_inputs(project, {})
    listed = {row.path.partition("]")[0] for row in rows if row.path.startswith("prediction.collectives[")}
    assert len(listed) == 3  # one of each node count (2, 4, 8)
    assert any(row.value.startswith("… and 297 more collectives") for row in rows)


# ------------------------------------------------- 3. (cont.) nccl-tests: one table, one row per message size
def _nccl_with(tmp_path: Path, edit: str) -> Path:
    lines = (DATA / "nccl" / "all_reduce_perf-2x8-h100.txt").read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if "#wrong" in line)
    rows = [i for i, line in enumerate(lines) if line.strip()[:1].isdigit() and i > header]
    if edit == "two-tables":  # a second test's table appended after the first
        lines += lines[header - 1: rows[-1] + 1]
    else:  # a row per data type: the first size again, as float
        lines.insert(rows[0] + 1, lines[rows[0]].replace("float", "half"))
    path = tmp_path / f"{edit}.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("edit", ["two-tables", "row-per-type"])
def test_an_nccl_log_of_several_tables_or_types_is_refused_not_merged(tmp_path: Path, edit: str) -> None:
    (tmp_path / "p.yaml").write_text(PROJECT.replace("scaling:", "prediction: {collectives_file: c.csv}\nscaling:"))
    (tmp_path / "runs.csv").write_text(RUNS)
    status, said = run("ingest", "nccl-tests", str(_nccl_with(tmp_path, edit)), "--project", str(tmp_path / "p.yaml"))
    assert status == 2 and "Traceback" not in said, said
    assert ("a second table" if edit == "two-tables" else "bytes again (first on line") in said
    assert not (tmp_path / "c.csv").exists()


# ------------------------------------------------ 5. a failed build never mixes new and old outputs
def test_a_move_that_fails_midway_leaves_every_output_as_it_was(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from reportgen import files
    from reportgen.errors import OutputError

    (tmp_path / "report.html").write_text("old html")
    (tmp_path / "results.json").write_text("old json")
    real, calls = os.replace, []

    def failing_second(source: str, target: str) -> None:
        calls.append(target)
        if len(calls) == 2 and not str(source).endswith(".old"):
            raise OSError(5, "Input/output error")
        real(source, target)

    monkeypatch.setattr(os, "replace", failing_second)
    with pytest.raises(OutputError):
        files.write_files(tmp_path, {"results.json": b"new json", "report.html": b"new html", "new.csv": b"x"})
    assert (tmp_path / "report.html").read_text() == "old html"
    assert (tmp_path / "results.json").read_text() == "old json"  # moved first, then put back
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "results.json"]  # no temporary left


def test_a_link_swapped_in_after_the_check_never_reads_outside_the_project(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """scaling.file was resolved (checked inside the folder), then opened by path: a symlink swapped in between
    read a file outside the project."""
    import os

    from reportgen.project import measurements

    project_folder = tmp_path / "project"
    project_folder.mkdir()
    secret = tmp_path / "secret.csv"
    secret.write_text("nodes,time [s]\n1,1\n2,1\n4,1\n")
    project = _project(project_folder)
    real = measurements.resolve

    def swapped_after_the_check(project_path: Path, relative: str) -> Path:
        checked = real(project_path, relative)
        checked.unlink()
        os.symlink(secret, checked)  # the race, made certain
        return checked

    monkeypatch.setattr(measurements, "resolve", swapped_after_the_check)
    status, said = run("check", str(project))
    assert status == 2 and "Traceback" not in said
    assert "runs.csv:1:1: error: was replaced by a symbolic link after it was checked to be in the project file's " \
        "folder: refused" in said
    # a folder on the way swapped for a link: the kernel's name for the opened file is outside
    from reportgen.files import OutsideFolder, open_regular

    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "runs.csv").write_text("x")
    os.symlink(tmp_path / "elsewhere", project_folder / "sub")
    with pytest.raises(OutsideFolder):
        open_regular(project_folder / "sub" / "runs.csv", within=project_folder)


# ---------------------------------------------------- 4. (cont.) streams a caller closed or filled: one line
@pytest.mark.slow
@pytest.mark.parametrize("case", ["check-to-dev-full", "schema-to-closed-stdout"])
def test_a_full_or_closed_standard_output_is_one_line_and_exit_1(case: str) -> None:
    import subprocess
    import sys

    from tests.conftest import INPUTS

    if case == "check-to-dev-full":
        if not Path("/dev/full").exists():
            pytest.skip("no /dev/full")
        with open("/dev/full", "w") as full:
            done = subprocess.run([sys.executable, "-m", "reportgen", "check", str(INPUTS / "example.yaml")],
                                  stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
        expected = "No space left on device"
    else:
        done = subprocess.run([sys.executable, "-m", "reportgen", "schema", "-o", "-"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, timeout=120,
                              preexec_fn=lambda: __import__("os").close(1))
        expected = "it is closed"
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == f"reportgen: error: cannot write to standard output: {expected}"


@pytest.mark.parametrize("interval", ["nan", "inf", "-1", "0", "1e9"])
def test_a_watch_interval_that_is_not_a_pause_is_a_usage_error(interval: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from reportgen.commands.cli import main

    with pytest.raises(SystemExit) as stopped:  # --interval nan once reached time.sleep: ValueError, a traceback
        main(["watch", "--interval", interval, "x.yaml"])
    assert stopped.value.code == 2
    assert "argument --interval: must be from 0.01 to 3600 seconds" in capsys.readouterr().err


@pytest.mark.parametrize(("count", "said"), [("0", "must be at least 1 build"), ("-3", "must be at least 1 build"),
                                             ("two", "not a whole number of builds")])
def test_a_watch_that_would_build_nothing_is_a_usage_error(count: str, said: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from reportgen.commands.cli import main

    with pytest.raises(SystemExit) as stopped:  # --max-builds 0 watched nothing, said nothing, exit 0
        main(["watch", "--max-builds", count, "x.yaml"])
    assert stopped.value.code == 2 and f"argument --max-builds: {said}" in capsys.readouterr().err


@pytest.mark.slow
def test_a_command_killed_by_a_signal_exits_as_a_shell_would(tmp_path: Path) -> None:
    """A SIGKILLed command made measure exit 247 (−9 & 255); a shell says 137."""
    project = tmp_path / "p.yaml"
    project.write_text(PROJECT)
    status, said = run("measure", "--project", str(project), "--nodes", "1", "--", "sh", "-c", "kill -9 $$")
    assert status == 137 and "the command was killed by signal 9: nothing appended" in said
    assert not (tmp_path / "runs.csv").exists()


@pytest.mark.parametrize("code", ["ÉUR", "ＵＳＤ", "EUＲ"])
def test_a_currency_code_is_three_ascii_capitals(tmp_path: Path, code: str) -> None:
    """"ÉUR" passed str.isupper() and relabelled USD amounts as ÉUR."""
    (tmp_path / "p.yaml").write_text(f"project: {{title: T}}\npricing: {{currency: {json.dumps(code)}, "
                                     "node_hour: 10 USD}\n", encoding="utf-8")
    status, said = run("check", str(tmp_path / "p.yaml"))
    assert status == 2 and "pricing.currency: expected a three-letter currency code" in said


@pytest.mark.parametrize("hidden", ["\u202e", "\u2066", "\u200b", "\ufeff", "\u2067"])
def test_bidi_and_zero_width_characters_never_reach_the_terminal(tmp_path: Path, hidden: str) -> None:
    """A file name or a value quoting U+202E (right-to-left override) reordered the error line on a terminal."""
    path = tmp_path / f"p{hidden}x.yaml"
    path.write_text(f"project: {{title: T}}\ndesign: {{nodes: \"8{hidden}\"}}\n", encoding="utf-8")
    status, said = run("check", str(path))
    assert status == 2 and hidden not in said
    assert hidden.encode("unicode_escape").decode("ascii") in said


def _emissions_rows(folder: Path, edit: str) -> Path:
    lines = EMISSIONS.read_text().splitlines()
    header = lines[0].split(",")
    if edit == "duplicated-column":
        lines[0] = lines[0] + ",energy_consumed"
        lines[1:] = [line + ",0" for line in lines[1:]]
    elif edit == "sixteen-machines":
        lines = [lines[0], *[lines[-1]] * 16]
    else:  # a number CodeCarbon never writes
        cells = lines[-1].split(",")
        cells[header.index("energy_consumed")] = edit
        lines[-1] = ",".join(cells)
    path = folder / "emissions.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(("edit", "reason"), [
    ("duplicated-column", "column energy_consumed appears twice"),
    ("sixteen-machines", "has 16 rows in emissions.csv (one per tracked machine), more than the 2 machines of the run"),
    ("1_000", "energy_consumed must be a number"), ("infinity", "energy_consumed must be a number"),
    ("١٢", "energy_consumed must be a number")])
def test_codecarbon_cells_and_machines_are_read_strictly(tmp_path: Path, edit: str, reason: str) -> None:
    project = _project(tmp_path)
    before = (tmp_path / "runs.csv").read_bytes()
    status, said = run("ingest", "codecarbon", str(_emissions_rows(tmp_path, edit)), "--project", str(project),
                       "--nodes", "2")
    assert status == 2 and "Traceback" not in said and reason in said, said
    assert (tmp_path / "runs.csv").read_bytes() == before


def test_profiler_steps_within_one_microsecond_are_refused_not_divided_by(tmp_path: Path) -> None:
    from tests.test_traces import job_trace

    trace = job_trace(0, 1, [1000.0], steps=2)
    for event in trace["traceEvents"]:
        event["dur"] = 0
        if event["name"].startswith("ProfilerStep"):
            event["ts"] = 5.0  # three steps at one instant: ZeroDivisionError
    (tmp_path / "rank0.json").write_text(json.dumps(trace))
    status, said = run("ingest", "trace", str(tmp_path / "rank0.json"))
    assert status == 2 and "Traceback" not in said
    assert "rank0.json:1:1: error: the 3 profiler steps start within one microsecond" in said


@pytest.mark.slow
@pytest.mark.parametrize("case", ["symlink-loop", "non-utf8-name-on-ascii-terminal", "name-past-255-bytes"])
def test_odd_paths_are_one_line_never_a_traceback(tmp_path: Path, case: str) -> None:
    import os
    import subprocess
    import sys

    environment = dict(os.environ)
    if case == "symlink-loop":
        os.symlink(tmp_path / "b.yaml", tmp_path / "a.yaml")
        os.symlink(tmp_path / "a.yaml", tmp_path / "b.yaml")
        target, expected, status = os.fsencode(tmp_path / "a.yaml"), "error: is a loop of symbolic links", 2
    elif case == "non-utf8-name-on-ascii-terminal":
        target = os.fsencode(tmp_path) + b"/bad\xff.yaml"
        with open(target, "wb") as stream:
            stream.write(b"project: {title: T}\n")
        environment.update(LC_ALL="C", PYTHONIOENCODING="ascii")
        expected, status = "bad\\udcff.yaml: ok", 0
    else:
        target, expected, status = os.fsencode(tmp_path / ("a" * 300 + ".yaml")), "cannot read", 2
    done = subprocess.run([sys.executable.encode(), b"-m", b"reportgen", b"check", target], env=environment,
                          capture_output=True, timeout=120)
    said = (done.stdout + done.stderr).decode("ascii", "replace")
    assert done.returncode == status and "Traceback" not in said and expected in said, said


def test_collectives_read_from_their_csv_are_never_marked_default(tmp_path: Path) -> None:
    from reportgen.render.context import normalized_inputs

    (tmp_path / "c.csv").write_text("nodes,bytes [B],time [us]\n2,1000000,120\n4,1000000,180\n")
    (tmp_path / "p.yaml").write_text("project: {title: T}\nprediction: {t_comp: 1 s, alpha: 8 us, message_bytes: 1 GB, "
                                     "collectives_file: c.csv}\n")
    rows = normalized_inputs(load_project(tmp_path / "p.yaml").project, {})
    sources = {row.source for row in rows if row.path.startswith("prediction.collectives[") and row.unit}
    assert sources == {"from c.csv"}


def test_a_trace_key_nested_in_another_object_is_not_the_trace(tmp_path: Path) -> None:
    """The first "traceEvents": [ anywhere was taken: a nested one ({"meta": {"traceEvents": []}}) hid the trace."""
    from reportgen.ingest import traces
    from tests.test_traces import job_trace

    trace = job_trace(0, 1, [1000.0])
    (tmp_path / "rank0.json").write_text(json.dumps({"meta": {"note": 'a "traceEvents": [ in a string',
                                                              "traceEvents": []}, **trace}))
    job = traces.combine(traces.reduce_files([tmp_path / "rank0.json"], processes=1))
    assert job.run.steps == 3 and job.run.compute_s > 0


def test_an_id_past_64_bits_is_refused_where_it_stands(tmp_path: Path) -> None:
    from tests.test_traces import job_trace

    trace = job_trace(0, 1, [1000.0])
    next(e for e in trace["traceEvents"] if "args" in e)["args"]["correlation"] = 1 << 70  # OverflowError before
    (tmp_path / "rank0.json").write_text(json.dumps(trace))
    status, said = run("ingest", "trace", str(tmp_path / "rank0.json"))
    assert status == 2 and "Traceback" not in said
    assert "Expected `int` <= 9223372036854775807 - at `$.traceEvents[" in said


@pytest.mark.slow
def test_watch_notices_a_csv_created_after_it_started(tmp_path: Path) -> None:
    """A project whose scaling.file did not exist yet failed its first build, and watch never looked at the CSV."""
    import threading
    import time

    from reportgen.commands.watch import WatchEvent, watch
    from reportgen.pipeline import BuildOptions

    project = tmp_path / "p.yaml"
    project.write_text(PROJECT)  # names runs.csv, which is not there yet
    events: list[WatchEvent] = []
    thread = threading.Thread(target=watch, args=(project, BuildOptions(out_root=tmp_path / "out",
                                                                        formats=("json",))),
                              kwargs={"on_event": events.append, "interval": 0.05, "max_builds": 2}, daemon=True)
    thread.start()
    deadline = time.time() + 60
    while not events and time.time() < deadline:
        time.sleep(0.05)
    assert events and not events[0].ok
    (tmp_path / "runs.csv").write_text(RUNS)
    thread.join(timeout=120)
    assert len(events) == 2 and events[1].ok, events


def test_a_revision_spec_without_a_revision_says_so(tmp_path: Path) -> None:
    from tests.conftest import INPUTS

    status, said = run("diff", ":p.yaml", str(INPUTS / "example.yaml"), "-o", str(tmp_path))
    assert status == 2 and "no revision before the ':' (write REV:PATH" in said  # was "'' is not a revision"


def test_block_nesting_too_deep_is_located_where_it_passes_the_limit(tmp_path: Path) -> None:
    """'- - - …' past the composer's recursion was reported at 1:1."""
    (tmp_path / "p.yaml").write_text("- " * 5000 + "\n")
    status, said = run("check", str(tmp_path / "p.yaml"))
    assert status == 2 and "Traceback" not in said
    line = next(line for line in said.splitlines() if "error:" in line)
    assert re.search(r"p\.yaml:1:(\d+): error: the document nests too deeply", line)
    assert not line.split("p.yaml:")[1].startswith("1:1:")


# ------------------------------------------------------------------ 7. the same mechanisms, under hypothesis
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.conftest import examples  # noqa: E402

SWEEP = settings(max_examples=examples(200), deadline=None, derandomize=True)


@SWEEP
@given(st.text())
def test_any_text_in_a_provenance_line_stays_one_inert_line(text: str) -> None:
    import unicodedata

    from reportgen.project.records import PROVENANCE, inert

    line = inert(PROVENANCE + text)
    assert len(line.splitlines()) == 1 and line.startswith(PROVENANCE)
    assert not any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in line)


@SWEEP
@given(st.integers(1, 1 << 20), st.sampled_from(["{}", "{}.0", "0{}", "+{}", "{}e0", " {} ", "{}.000"]))
def test_a_node_count_is_found_however_it_is_spelled(nodes: int, spelling: str) -> None:
    from reportgen.project.measurements import node_count, rows_at

    cell = spelling.format(nodes)
    assert node_count(cell) == nodes
    lines = ["time [s],nodes", f"1,{cell}", f"2,{nodes + 1}"]
    assert rows_at(lines, 0, nodes) == [1]


@SWEEP
@given(st.integers(-99, 99), st.sampled_from(["s", "ms", "min", "h"]))
def test_any_unit_exponent_is_read_or_refused_never_raised(exponent: int, unit: str) -> None:
    from reportgen.project import units

    try:
        units.parse_unit(f"{unit}**{exponent}", units.TIME)
    except units.UnitProblem:
        return


@SWEEP
@given(st.integers(-(1 << 70), 1 << 70))
def test_any_claimed_world_size_is_counted_or_refused(world: int) -> None:
    import tempfile

    from reportgen.errors import InputError
    from reportgen.ingest import traces
    from tests.test_traces import job_trace
    with tempfile.TemporaryDirectory() as folder:
        trace = job_trace(0, 1, [1000.0])
        trace["distributedInfo"]["world_size"] = world
        path = Path(folder) / "rank0.json"
        path.write_text(json.dumps(trace))
        try:
            job = traces.combine(traces.reduce_files([path], processes=1))
        except InputError as error:
            assert "world_size" in str(error) or "Expected `int`" in str(error)
            return
        assert 1 <= job.world_size <= traces.MAX_WORLD_SIZE and job.missing_count == job.world_size - 1


@pytest.mark.parametrize("name", ["loop.csv", "x" * 300 + ".csv"], ids=["symlink-loop", "name-past-255-bytes"])
def test_a_csv_name_the_system_cannot_resolve_is_one_located_line(tmp_path: Path, name: str,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A loop of symbolic links was a RuntimeError traceback from pathlib; a name past 255 bytes a stray OSError
    (exit 1): each is the field's own located error now, exit 2."""
    from reportgen.commands.cli import main

    if name == "loop.csv":
        (tmp_path / name).symlink_to(name)
    (tmp_path / "p.yaml").write_text(f"project: {{title: M}}\nscaling: {{file: {name}}}\n")
    assert main(["check", str(tmp_path / "p.yaml")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "p.yaml:2:17: error: scaling.file: " in err and "Traceback" not in err
    assert ("loop of symbolic links" if name == "loop.csv" else "File name too long") in err
