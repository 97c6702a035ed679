"""The command line: exit codes, outputs, atomic writes, init, schema, and what `check` must not import."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from reportgen import __version__
from reportgen.commands.cli import main
from reportgen.errors import RenderError
from tests.conftest import DATA, INPUTS, ROOT, loaded_after


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reportgen", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"reportgen {__version__}"


@pytest.mark.parametrize("command", ["check", "build", "schema", "init", "diff", "measure", "watch"])
def test_every_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    assert "usage: reportgen " + command in capsys.readouterr().out


def test_check_ok_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(INPUTS / "example.yaml")]) == 0
    assert capsys.readouterr().out.strip() == f"{INPUTS / 'example.yaml'}: ok"
    bad = DATA / "bad" / "several-problems.yaml"
    assert main(["check", str(INPUTS / "example.yaml"), str(bad)]) == 2
    captured = capsys.readouterr()
    assert len(captured.err.strip().splitlines()) == 2
    assert "Traceback" not in captured.err


def test_missing_file_is_an_input_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "no/such/file.yaml"]) == 2
    assert "no/such/file.yaml:1:1: error: no such file\n" in capsys.readouterr().err


def test_usage_error_exits_2() -> None:
    result = run("build", "inputs/example.yaml", "--format", "docx")
    assert result.returncode == 2 and "formats are html, pdf, json" in result.stderr


def test_check_does_not_import_heavy_libraries() -> None:
    assert loaded_after(["check", "inputs/example.yaml"],
                        ("matplotlib", "weasyprint", "codecarbon", "pandas", "jinja2")) == []


def test_help_does_not_import_heavy_libraries() -> None:
    code = ("import sys\nfrom reportgen.commands.cli import main\ntry: main(['build', '--help'])\n"
            "except SystemExit: pass\n"
            "print([m for m in ('matplotlib', 'weasyprint', 'pint', 'yaml') if m in sys.modules])")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip().endswith("[]")


@pytest.mark.slow  # two fresh interpreters
@pytest.mark.parametrize("formats", ["json", "html,json"])
def test_a_build_that_draws_nothing_does_not_import_matplotlib(tmp_path: Path, formats: str) -> None:
    """JSON alone, or HTML whose figures are all cached: no figure pool, no matplotlib (0.35 s of a cold build)."""
    assert main(["build", str(INPUTS / "example.yaml"), "-o", str(tmp_path), "--format", "html,json"]) == 0
    code = (f"import sys; from reportgen.commands.cli import main; "
            f"code = main(['build', 'inputs/example.yaml', '-o', {str(tmp_path)!r}, '--format', {formats!r}]); "
            "print(code, 'matplotlib' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip().endswith("0 False"), result.stdout + result.stderr


@pytest.mark.slow
def test_build_writes_all_three_outputs(tmp_path: Path) -> None:
    assert main(["build", str(INPUTS / "example.yaml"), "-o", str(tmp_path)]) == 0
    folder = tmp_path / "example"
    assert sorted(p.name for p in folder.iterdir()) == ["report.html", "report.pdf", "results.json"]
    assert (folder / "report.pdf").read_bytes().startswith(b"%PDF-")
    document = json.loads((folder / "results.json").read_text())
    assert document["schema_version"] == 1
    assert document["project"]["title"] == "Data-parallel training of a 1.3B-parameter code model"
    assert document["project"]["generator_version"] == __version__
    assert oct((folder / "results.json").stat().st_mode & 0o777) != "0o600"


def test_build_chooses_formats(tmp_path: Path) -> None:
    assert main(["build", str(INPUTS / "example.yaml"), "-o", str(tmp_path), "--format", "json"]) == 0
    assert [p.name for p in (tmp_path / "example").iterdir()] == ["results.json"]


def test_failed_build_keeps_previous_outputs(tmp_path: Path, write_project) -> None:
    good = write_project((INPUTS / "example.yaml").read_text().replace("inputs", "inputs"), "p.yaml")
    out = tmp_path / "out"
    assert main(["build", str(good), "-o", str(out), "--format", "html,json"]) == 0
    before = {p.name: p.read_bytes() for p in (out / "p").iterdir()}
    good.write_text(good.read_text().replace("peak_compute: 7.9 PFLOP/s", "peak_compute: 7.9 GB/s"))
    assert main(["build", str(good), "-o", str(out), "--format", "html,json"]) == 2
    after = {p.name: p.read_bytes() for p in (out / "p").iterdir()}
    assert after == before  # untouched, and no temporary files left beside them


def _layout_that_cannot_draw(*_: object, **__: object) -> bytes:
    raise RenderError("the PDF renderer could not draw a figure: broken.svg")


def _layout_with_a_bug(*_: object, **__: object) -> bytes:
    raise RuntimeError("renderer crashed")


@pytest.mark.parametrize(("broken", "said"), [(_layout_that_cannot_draw, "could not draw a figure: broken.svg"),
                                              (_layout_with_a_bug, "RuntimeError: renderer crashed")],
                         ids=["render-error", "bug"])
def test_failed_render_keeps_previous_outputs_and_says_so_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        broken: object, said: str) -> None:
    from reportgen.render import pdf
    from reportgen.render.pdf_workers import helpers_worthwhile

    if not helpers_worthwhile():
        pytest.skip("one core: the PDF is made in this process, where a bug is a bug (with its traceback)")
    assert main(["build", str(INPUTS / "example.yaml"), "-o", str(tmp_path), "--format", "json,html"]) == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "example").iterdir()}
    capsys.readouterr()
    monkeypatch.setattr(pdf, "layout_pdf", broken)  # sent to the PDF workers by name: they run it
    assert main(["build", str(INPUTS / "example.yaml"), "-o", str(tmp_path)]) == 1
    assert {p.name: p.read_bytes() for p in (tmp_path / "example").iterdir()} == before
    error = capsys.readouterr().err
    # a PDF worker's failures, a bug's too, reach the command line as one line (its traceback a note)
    named = f"{INPUTS / 'example.yaml'}: error: "
    assert error.startswith(named) and error.count("\n") == 1 and said in error, error


def test_same_stem_twice_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a").mkdir()
    copy = tmp_path / "a" / "example.yaml"
    copy.write_text((INPUTS / "example.yaml").read_text())
    assert main(["build", str(INPUTS / "example.yaml"), str(copy), "-o", str(tmp_path / "out")]) == 2
    assert "collide" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_init_writes_a_starter_that_passes_check(tmp_path: Path) -> None:
    target = tmp_path / "new" / "project.yaml"
    assert main(["init", str(target)]) == 0
    assert main(["check", str(target)]) == 0
    text = target.read_text()
    assert sum(line.strip().startswith("#") or "#" in line for line in text.splitlines()) > 40
    assert main(["init", str(target)]) == 2  # never overwrites


def yaml_12(text: str) -> object:
    """Load YAML as an editor's YAML 1.2 server would: 1.3e9 is a number, dates are text."""
    class Loader(yaml.SafeLoader):
        pass

    exponent_float = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")
    Loader.add_implicit_resolver("tag:yaml.org,2002:float", exponent_float, list("-+0123456789."))
    Loader.yaml_implicit_resolvers = {k: [(t, r) for t, r in v if t != "tag:yaml.org,2002:timestamp"]
                                      for k, v in Loader.yaml_implicit_resolvers.items()}
    return yaml.load(text, Loader=Loader)


def test_schema_is_draft7_and_accepts_every_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    from reportgen.project.starter import starter_project

    texts = {path.name: path.read_text() for path in INPUTS.glob("*.yaml")}
    for name, text in {**texts, "the starter": starter_project()}.items():
        errors = list(validator.iter_errors(yaml_12(text)))
        assert not errors, f"{name}: {errors[0].message}"
    bad = yaml_12("project: {title: T}\nhardwear: {}\n")
    assert list(validator.iter_errors(bad)), "the schema must refuse unknown keys as the loader does"


def test_schema_documents_every_field() -> None:
    from reportgen.project.schema import project_schema

    def walk(schema: dict, path: str) -> None:
        for name, sub in schema.get("properties", {}).items():
            assert sub.get("description"), f"{path}{name} has no description"
            walk(sub, f"{path}{name}.")
            walk(sub.get("items", {}), f"{path}{name}[].")

    walk(project_schema(), "")


def test_console_script_and_readme_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    first_commands = [line.strip() for line in readme.splitlines() if line.startswith(("make ", "    make "))][:2]
    assert first_commands == ["make report", "make test"]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(["reportgen", "check", "inputs/example.yaml"], cwd=ROOT, capture_output=True,
                            text=True, env=env, check=False)
    assert result.returncode == 0, result.stderr
    missing = subprocess.run(["reportgen", "check", "no-such-project.yaml"], cwd=ROOT, capture_output=True,
                             text=True, env=env, check=False)
    assert missing.returncode == 2 and "no-such-project.yaml" in missing.stderr  # the status passes through


def test_the_console_entry_runs_exit_handlers_and_flushes_its_output() -> None:
    """run() leaves with os._exit, after the exit handlers, to skip the interpreter's teardown: a handler registered
    while the command runs (as logging and multiprocessing register theirs), the output and the status survive."""
    code = ("import atexit, sys\nfrom reportgen.commands import cli\nmain = cli.main\n"
            "def registering(*args):\n    atexit.register(lambda: print('handler ran'))\n    return main(*args)\n"
            "cli.main = registering\n"
            "sys.argv = ['reportgen', 'check', 'no-such-project.yaml']\nprint('before', end='')\ncli.run()\n")
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=environment)
    assert result.returncode == 2
    assert result.stdout.startswith("before") and "handler ran" in result.stdout
    assert "no-such-project.yaml" in result.stderr


@pytest.mark.parametrize(("arguments", "status"), [(["--version"], 0), (["--help"], 0), (["buidl"], 2),
                                                   (["build", "--format", "docx", "x.yaml"], 2)])
def test_the_console_entry_keeps_the_status_of_an_argparse_exit(arguments: list[str], status: int) -> None:
    """argparse ends main() with SystemExit (--help, --version, a usage error): its status is the command's."""
    code = f"import sys\nfrom reportgen.commands import cli\nsys.argv = ['reportgen', *{arguments!r}]\ncli.run()\n"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == status, result.stderr


def test_importing_the_console_entry_registers_no_exit_handler() -> None:
    """run()'s own exit handler must be registered first, to run last: the modules whose import registers one
    (logging, multiprocessing) are imported only once a command runs."""
    code = ("import sys\nimport reportgen.commands.cli\n"
            "print(sorted(m for m in ('logging', 'multiprocessing') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_every_command_is_one_entry_of_the_table() -> None:
    """The parser is built from the table of commands, and each runs through its entry's function: a command is
    added in one place (commands/cli.py COMMANDS)."""
    from reportgen.commands.argtree import subcommands
    from reportgen.commands.cli import BY_NAME, COMMANDS, _parser

    top = [path[0] for path, _ in subcommands(_parser()) if len(path) == 1]
    assert [command.name for command in COMMANDS] == top == list(BY_NAME)
    writers = {name for name, command in BY_NAME.items() if command.writes_outputs}
    assert writers == {"build", "watch", "diff", "history"}


def test_quiet_and_verbose_before_the_command_too(capsys: pytest.CaptureFixture[str]) -> None:
    from reportgen.commands.cli import main

    assert main(["-q", "check", str(ROOT / "inputs" / "example.yaml")]) == 0
    assert capsys.readouterr().out == ""  # the ok line is a status line: silent under -q
    assert main(["check", str(ROOT / "inputs" / "example.yaml")]) == 0
    assert "ok" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "hint"), [(["buidl", "x.yaml"], "did you mean `build`?"),
                                            (["ingest", "traec", "t/"], "did you mean `ingest trace`?"),
                                            (["frobnicate"], "(commands: check, build,")])
def test_a_misspelt_command_gets_the_nearest(argv: list[str], hint: str, capsys: pytest.CaptureFixture[str]) -> None:
    from reportgen.commands.cli import main

    with pytest.raises(SystemExit) as leaving:
        main(argv)
    assert leaving.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("reportgen: error: unknown command") and hint in error and error.count("\n") == 1


def test_format_completes_its_values() -> None:
    from reportgen.commands.cli import _parser
    from reportgen.commands.completion import script

    bash, fish = script("bash", _parser()), script("fish", _parser())
    assert "--format) COMPREPLY=($(compgen -W 'html pdf json csv'" in bash
    assert "-l format -x -a 'html pdf json csv'" in fish


def test_a_long_single_build_shows_its_stage_and_clears_it(capsys: pytest.CaptureFixture[str]) -> None:
    from reportgen.commands.console import StageLine

    quick = StageLine("p.yaml", after=3600)
    quick("analysing")
    quick.clear()
    assert capsys.readouterr().err == ""  # a build under the threshold says nothing
    slow = StageLine("p.yaml", after=0)
    slow("drawing the figures")
    slow("")  # the last stage's end
    slow.clear()
    assert capsys.readouterr().err == "\r\033[Kp.yaml: drawing the figures…\r\033[K"


def test_the_builder_tells_each_stage(tmp_path: Path) -> None:
    from reportgen.pipeline import Builder, BuildOptions

    told: list[str] = []
    Builder(BuildOptions(out_root=tmp_path, formats=("html", "json")), stages=told.append).build(
        ROOT / "inputs" / "example.yaml")
    assert told == ["loading", "analysing", "rendering the page", "drawing the figures", "writing", ""]
    told.clear()
    Builder(BuildOptions(out_root=tmp_path, formats=("json",)), stages=told.append).build(
        ROOT / "inputs" / "example.yaml")
    assert told == ["loading", "analysing", "writing", ""]


def test_a_stray_os_error_names_its_file_not_standard_output() -> None:
    """An OSError no command worded itself was always 'cannot write to standard output', whatever it was about."""
    import errno

    from reportgen.commands.cli import _stray_os_error

    denied = PermissionError(errno.EACCES, "Permission denied", "/srv/out/report.html")
    assert _stray_os_error(denied) == "cannot use /srv/out/report.html: Permission denied"
    moved = OSError(errno.EXDEV, "Invalid cross-device link", "/tmp/a", None, "/srv/b")
    assert _stray_os_error(moved) == "cannot use /tmp/a to /srv/b: Invalid cross-device link"
    undecodable = FileNotFoundError(errno.ENOENT, "No such file or directory", b"/srv/\xff.yaml")
    assert _stray_os_error(undecodable).startswith("cannot use /srv/")  # a name that is not UTF-8: still words
    # no file named, and standard output (pytest's capture) takes writes: the system's reason, not stdout
    assert _stray_os_error(OSError(errno.EIO, "Input/output error")) == (
        "Input/output error (EIO): an operating-system error outside any file reportgen names")
