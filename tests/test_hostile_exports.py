"""Hostile inputs for the newcomer's tools: `runs export` (docs/measurements.md#moving-inline-runs-to-a-csv), the
YAML hints (docs/project-file.md#syntax-errors), `init --example` (docs/commands.md), file names carrying bidi
controls, and the plan sentence's times. Each input is built for real in tmp_path; each test failed before its fix.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from reportgen import files
from reportgen.analysis.page.prose.plan import hours
from reportgen.errors import InputError, OutputError
from reportgen.project import examples, runs_export
from reportgen.project.loader import LoadedProject, load_project
from tests.test_hostile_sweep import run

FLOW = "project: {title: T}\nscaling:   # measured\n  time_unit: s\n" \
    "  runs: [{nodes: 1, time: 10}, {nodes: 2, time: 6}]\n  axis: nodes\n"
BLOCK = "project: {title: T}\nscaling:   # measured\n  time_unit: s\n  runs:\n    - {nodes: 1, time: 10}\n" \
    "    - {nodes: 2, time: 6}\n  # the next key's comment\n  axis: nodes\n"
EXPORTED = "project: {title: T}\nscaling:   # measured\n  time_unit: s\n  file: runs.csv\n"
# Every line end YAML counts (CR LF, CR, LF, NEL, U+2028): PyYAML numbers lines by each of them
LINE_ENDS = ("\n", "\r\n", "\r", "\x85", "\u2028")
LINE_END_IDS = ("LF", "CRLF", "CR", "NEL", "LS")


def _write(path: Path, text: str, *, line_end: str = "\n", bom: bool = False) -> Path:
    path.write_bytes((codecs.BOM_UTF8 if bom else b"") + text.replace("\n", line_end).encode("utf-8"))
    return path


def _leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.startswith((".reportgen-", "runs")))


# ------------------------------------------------------------------- runs export: a concurrent save is never lost
@pytest.mark.parametrize("save", ["in place", "atomically, same bytes"])
def test_a_save_between_read_and_replace_survives_and_no_csv_is_left(tmp_path: Path, save: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """An editor's save landed while export proved its edit; export then replaced the file with its own edit."""
    project = _write(tmp_path / "p.yaml", BLOCK)
    theirs = BLOCK.replace("title: T", "title: Saved meanwhile") if save == "in place" else BLOCK
    proved = runs_export._prove

    def prove_then_save(loaded: LoadedProject, edited: str, csv_name: str) -> None:  # the other writer, between
        proved(loaded, edited, csv_name)                                                 # export's read and replace
        if save == "in place":
            project.write_text(theirs, encoding="utf-8")
        else:  # an editor's atomic save: a new file (inode) over the old name, bytes unchanged
            (tmp_path / "p.yaml.new").write_text(theirs, encoding="utf-8")
            os.replace(tmp_path / "p.yaml.new", project)

    monkeypatch.setattr(runs_export, "_prove", prove_then_save)
    status, said = run("runs", "export", str(project))
    assert status == 1 and said.count("\n") == 1 and "Traceback" not in said, said
    assert f"{project} changed on disk since reportgen read it" in said
    assert project.read_text(encoding="utf-8") == theirs  # the other writer's bytes survive
    assert _leftovers(tmp_path) == []  # no CSV, no temporary


def test_a_save_between_load_and_export_is_refused(tmp_path: Path) -> None:
    project = _write(tmp_path / "p.yaml", BLOCK)
    loaded = load_project(project)
    project.write_text(BLOCK.replace("time: 6", "time: 7"), encoding="utf-8")  # the positions loaded are stale
    with pytest.raises(OutputError, match="changed on disk"):
        runs_export.export_runs(loaded)
    assert "time: 7" in project.read_text(encoding="utf-8") and _leftovers(tmp_path) == []


# --------------------------------------------------------- runs export: the file's own bytes, line ends and BOM
@pytest.mark.parametrize("bom", [False, True], ids=["no BOM", "BOM"])
@pytest.mark.parametrize("line_end", LINE_ENDS, ids=LINE_END_IDS)
@pytest.mark.parametrize("layout", [FLOW, BLOCK], ids=["flow list", "block list"])
def test_export_keeps_the_files_line_ends_and_bom(tmp_path: Path, layout: str, line_end: str, bom: bool) -> None:
    project = _write(tmp_path / "p.yaml", layout, line_end=line_end, bom=bom)
    before = [(run.nodes, run.time) for run in load_project(project).project.scaling.runs]
    status, said = run("runs", "export", str(project))
    assert status == 0, said
    tail = "  axis: nodes\n" if layout is FLOW else "  # the next key's comment\n  axis: nodes\n"
    expected = (codecs.BOM_UTF8 if bom else b"") + (EXPORTED + tail).replace("\n", line_end).encode("utf-8")
    assert project.read_bytes() == expected
    assert [(run.nodes, run.time) for run in load_project(project).project.scaling.runs] == before


def test_a_read_back_that_fails_is_said_of_the_project_file(tmp_path: Path) -> None:
    """A value the CSV cannot hold (a line break) failed the read-back, located in a runs.csv that was removed."""
    project = _write(tmp_path / "p.yaml", "project: {title: T}\nscaling:\n  runs:\n"
                     '    - {nodes: 1, time: 10 s, energy: "1.5\\nkWh"}\n    - {nodes: 2, time: 6 s}\n')
    text = project.read_bytes()
    status, said = run("runs", "export", str(project))
    assert status == 2 and said.count("\n") == 1 and "Traceback" not in said, said
    assert f"{project}: its runs cannot move to runs.csv" in said and "nothing was changed" in said
    assert not re.search(r"runs\.csv:\d+:\d+", said)  # never located in text that was not written
    assert project.read_bytes() == text and _leftovers(tmp_path) == []


# ------------------------------------------------------- runs export: through a link, numbers as they were written
def test_a_linked_project_file_is_written_through_its_link(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    target = _write(tmp_path / "real" / "p.yaml", FLOW)
    (tmp_path / "p.yaml").symlink_to(Path("real") / "p.yaml")
    assert run("runs", "export", str(tmp_path / "p.yaml"))[0] == 0
    assert (tmp_path / "p.yaml").is_symlink() and os.readlink(tmp_path / "p.yaml") == str(Path("real") / "p.yaml")
    assert target.read_text(encoding="utf-8").startswith(EXPORTED)


def test_worker_times_are_written_as_they_were_typed(tmp_path: Path) -> None:
    """repr() of the SI floats wrote 1e-05 for 0.00001, and 299.99999999999994 for 0.3 s in milliseconds."""
    project = _write(tmp_path / "p.yaml", "project: {title: T}\nscaling:\n  time_unit: ms\n  runs:\n"
                     "    - {nodes: 1, time: 10, workers: [0.00001, 0.30000000000000004, 1_000, 0.3 s, 7 min]}\n"
                     "    - {nodes: 2, time: 6}\n")
    before = load_project(project).project.scaling.runs
    assert run("runs", "export", str(project))[0] == 0
    rows = (tmp_path / "runs.csv").read_text(encoding="utf-8").splitlines()
    assert rows[2] == "1,10,0.00001 0.30000000000000004 1_000 300 420000"
    assert load_project(project).project.scaling.runs == before


# --------------------------------------------------- writes refused by the system: say what actually happened
@contextmanager
def _chattr(flag: str, path: Path) -> Iterator[None]:
    """The inode flag set for the block (chattr +i: immutable, +a: append-only), cleared after it."""
    if shutil.which("chattr") is None or subprocess.run(["chattr", f"+{flag}", str(path)],
                                                        capture_output=True).returncode != 0:
        pytest.skip(f"chattr +{flag} needs root and a file system that keeps inode flags")
    try:
        yield
    finally:
        subprocess.run(["chattr", f"-{flag}", str(path)], check=True)


@pytest.mark.parametrize(("flag", "on", "said"), [("i", "file", "p.yaml: it is immutable (chattr +i)"),
                                                  ("a", "folder", "is append-only (chattr +a)")])
def test_an_immutable_or_append_only_target_is_refused_before_writing(tmp_path: Path, flag: str, on: str,
                                                                     said: str) -> None:
    project = _write(tmp_path / "p.yaml", FLOW)
    with _chattr(flag, project if on == "file" else tmp_path):
        status, output = run("runs", "export", str(project))
        assert status == 1 and said in output and "nothing was written" in output, output
        assert project.read_text(encoding="utf-8") == FLOW and _leftovers(tmp_path) == []


def test_a_refused_rename_is_not_called_an_append_only_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """EPERM on the rename blamed an append-only folder even where the temporary could be removed."""
    project = _write(tmp_path / "p.yaml", FLOW)
    replace = os.replace

    def refused_over_the_project(source: object, target: object) -> None:
        if Path(str(target)).name == "p.yaml":
            raise PermissionError(errno.EPERM, "Operation not permitted")
        replace(source, target)  # type: ignore[arg-type]  # os.replace's paths

    monkeypatch.setattr(files.os, "replace", refused_over_the_project)
    status, said = run("runs", "export", str(project))
    assert status == 1 and "may not be replaced by this user" in said and "append-only" not in said, said
    assert project.read_text(encoding="utf-8") == FLOW and _leftovers(tmp_path) == []


# ----------------------------------------------------------------- YAML hints: the line the slip is on
HINTS = [
    ("colon missing before >", "project:\n  title: T\n  description >\n    long text\n    more\n", "6:1",
     'line 3 ("description >") has no colon: each line of a section is `key: value` (here `description: >`)'),
    ("colon missing in a list item", "project: {title: T}\ndecisions:\n  - name fastest\n    optimize: time\n",
     "4:13", 'line 3 ("- name fastest") has no colon: each line of a section is `key: value` '
     "(here `- name: fastest`)"),
    ("quote open to the end", 'project:\n  title: "Unclosed\n  revision: r1\nscaling:\n  axis: nodes\n', "2:10",
     'the quote " opened here is not closed on its line: YAML read on to line 6'),
    ("quote closed by a later one", "project:\n  title: 'Unclosed\n  revision: r1\n# the model's card\n", "2:10",
     "the quote ' opened here is not closed on its line: YAML read on to line 4"),
    ("a control character", "project:\n  title: T\n  revision: \x07\n", "3:13", "the character #x0007 is not allowed"),
    ("nesting too deep", "project: {title: T}\n\nx: " + "[" * 300 + "\n", "3:68", "the document nests too deeply"),
]


@pytest.mark.parametrize("line_end", LINE_ENDS, ids=LINE_END_IDS)
@pytest.mark.parametrize(("text", "where", "hint"), [case[1:] for case in HINTS], ids=[case[0] for case in HINTS])
def test_a_syntax_error_is_located_at_its_slip(tmp_path: Path, text: str, where: str, hint: str,
                                              line_end: str) -> None:
    """A colon-less line was blamed on the line below; an open quote at the file's end; and in a file with CR, NEL
    or U+2028 line ends every error sat at line 1 (1:1438)."""
    path = _write(tmp_path / "p.yaml", text, line_end=line_end)
    with pytest.raises(InputError) as raised:
        load_project(path)
    [line] = str(raised.value).splitlines()
    assert f"p.yaml:{where}: error: " in line and hint in line, line


@pytest.mark.parametrize("line_end", LINE_ENDS, ids=LINE_END_IDS)
def test_text_that_is_not_utf8_is_located_at_its_line(tmp_path: Path, line_end: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_bytes("project:\n  title: T\n  revision: ".replace("\n", line_end).encode("utf-8") + b"r\xff1\n")
    with pytest.raises(InputError, match=r"p\.yaml:3:14: error: the file is not UTF-8 text"):
        load_project(path)


# ------------------------------------------------------------------------------ init --example: all or nothing
@pytest.mark.parametrize("obstacle", ["dangling link", "folder", "file"])
def test_init_checks_every_target_before_writing_any(tmp_path: Path, obstacle: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A dangling link where the example's CSV goes passed `exists()`: the project was written, then init failed."""
    monkeypatch.chdir(tmp_path)
    companion = tmp_path / "nightly-repeats-runs.csv"
    if obstacle == "dangling link":
        companion.symlink_to(tmp_path / "nowhere")
    elif obstacle == "folder":
        companion.mkdir()
    else:
        companion.write_text("mine\n")
    status, said = run("init", "--example", "nightly-repeats")
    assert status == 2 and said.count("\n") == 1 and "nightly-repeats-runs.csv exists" in said, said
    assert sorted(path.name for path in tmp_path.iterdir()) == ["nightly-repeats-runs.csv"]


def test_init_under_a_path_through_a_file_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").write_text("a file\n")
    status, said = run("init", "--example", "nightly-repeats", "sub/p.yaml")
    assert status == 2 and "goes through sub, which is a file" in said, said
    assert sorted(path.name for path in tmp_path.iterdir()) == ["sub"]


def test_init_failing_midway_removes_what_it_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    created = examples.create_file

    def disk_full_at_the_csv(path: Path, data: bytes) -> None:
        if path.suffix == ".csv":
            raise OutputError(f"cannot write {path}: No space left on device")
        created(path, data)

    monkeypatch.setattr(examples, "create_file", disk_full_at_the_csv)
    status, said = run("init", "--example", "nightly-repeats", str(tmp_path / "new" / "deeper" / "p.yaml"))
    assert status == 1 and "No space left on device" in said, said
    assert list(tmp_path.iterdir()) == []  # the project file and the folders made for it are gone


def test_an_example_from_init_names_no_schema_that_is_not_there(tmp_path: Path) -> None:
    """inputs/*.yaml name ../build/schema.json, which exists in a checkout only: an editor then failed to load it."""
    written = tmp_path / "e.yaml"
    assert run("init", "--example", "example", str(written))[0] == 0
    text = written.read_text(encoding="utf-8")
    modelines = re.findall(r"^#\s+yaml-language-server\s*:.*\$schema=(\S+)", text, re.MULTILINE)  # as the server
    assert all((tmp_path / schema).is_file() for schema in modelines), modelines  # reads them
    assert "reportgen schema > schema.json" in text and run("check", str(written))[0] == 0


# ----------------------------------------------------------------- file names with bidi controls
BIDI_NAME = "r\u202eruns.csv"  # U+202E, right-to-left override


def test_a_csv_named_with_bidi_controls_is_read_and_appended_to(tmp_path: Path) -> None:
    """The name was isolated for display (FSI … PDI) and the isolated name opened: `check` said "no such file", and
    `measure` created a second CSV beside the user's."""
    (tmp_path / BIDI_NAME).write_text("nodes,time [s]\n1,100\n2,55\n", encoding="utf-8")
    project = _write(tmp_path / "p.yaml", 'project: {title: T}\nscaling:\n  file: "r\\u202eruns.csv"\n')
    assert run("check", str(project)) == (0, f"{project}: ok\n")
    status, said = run("measure", "--project", str(project), "--nodes", "4", "--", sys.executable, "-c", "pass")
    assert status == 0 and "r\\u202eruns.csv" in said and "\u202e" not in said, said  # named, shown inert
    assert sorted(path.name for path in tmp_path.iterdir() if path.name.endswith("runs.csv")) == [BIDI_NAME]
    assert [run.nodes for run in load_project(project).project.scaling.runs] == [1, 2, 4]


def test_a_collectives_csv_named_with_bidi_controls_is_read(tmp_path: Path) -> None:
    name = "c\u2066ollectives.csv"  # U+2066, left-to-right isolate
    (tmp_path / name).write_text("nodes,bytes,time\n2,1 GiB,20 ms\n4,1 GiB,30 ms\n", encoding="utf-8")
    project = _write(tmp_path / "p.yaml", "project: {title: T}\nprediction:\n  message_bytes: 1 GiB\n"
                     '  collectives_file: "c\\u2066ollectives.csv"\n')
    assert len(load_project(project).project.prediction.collectives) == 2


# ----------------------------------------------------------------- the plan sentence's times
@pytest.mark.parametrize(("seconds", "shown"), [(7.0, "7 s"), (25 * 60.0, "25 min"), (5400.0, "1.5 h"),
                                                (388 * 3600.0, "388 h")])
def test_a_layouts_time_reads_as_a_duration(seconds: float, shown: str) -> None:
    """One decimal of an hour showed a 7 s run as "0.0 h"."""
    assert hours(seconds) == shown
