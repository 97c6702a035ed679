"""Command-line conventions: `-` for standard input and output, -q and -v, shell completion, 143 after SIGTERM."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reportgen.commands.cli import main
from tests.conftest import INPUTS, ROOT


def reportgen(*arguments: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reportgen", *arguments], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, check=False)


def test_check_reads_standard_input_and_locates_its_problems() -> None:
    good = reportgen("check", "-", stdin=(INPUTS / "example.yaml").read_text())
    assert good.returncode == 0 and good.stdout == "<stdin>: ok\n"
    bad = reportgen("check", "-", stdin="project: {title: T}\nhardware: {peak_compute: 5 GB}\n")
    assert bad.returncode == 2
    assert bad.stderr.startswith("<stdin>:2:26: error: hardware.peak_compute: expected compute rate")


def test_build_reads_standard_input_into_a_stdin_folder(tmp_path: Path) -> None:
    result = reportgen("build", "-", "-o", str(tmp_path), "--format", "json",
                       stdin=(INPUTS / "example.yaml").read_text())
    assert result.returncode == 0, result.stderr
    document = json.loads((tmp_path / "stdin" / "results.json").read_text())
    assert document["project"]["title"] == "Data-parallel training of a 1.3B-parameter code model"


def test_init_and_schema_write_to_standard_output() -> None:
    starter = reportgen("init", "-")
    assert starter.returncode == 0 and starter.stdout.startswith("# A reportgen project file.")
    assert reportgen("check", "-", stdin=starter.stdout).returncode == 0  # the starter passes check
    assert not (ROOT / "-").exists()
    schema = reportgen("schema", "-o", "-")
    assert json.loads(schema.stdout)["title"] == "reportgen project file"


def test_quiet_prints_only_errors_and_verbose_adds_stage_timings(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "-q", str(INPUTS / "example.yaml")]) == 0
    assert capsys.readouterr().out == ""
    bad = tmp_path / "bad.yaml"
    bad.write_text("project: {title: T}\nhardware: {peak_compute: 5 GB}\n")
    assert main(["check", "--quiet", str(bad)]) == 2
    assert "bad.yaml:2:26: error" in capsys.readouterr().err  # errors are never quiet
    assert main(["build", "-v", str(INPUTS / "example.yaml"), "-o", str(tmp_path), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "wrote 1 file" in captured.out
    assert "load " in captured.err and "analyze " in captured.err and "write " in captured.err
    assert main(["build", "-q", str(INPUTS / "example.yaml"), "-o", str(tmp_path), "--format", "json"]) == 0
    assert capsys.readouterr().out == ""
    assert reportgen("check", "-q", "-v", "inputs/example.yaml").returncode == 2  # one or the other


def complete(script: Path, *words: str) -> list[str]:
    """What bash offers after `words` (the last one is being typed)."""
    quoted = " ".join(f"'{w}'" for w in words)
    program = (f"source {script}; COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; _reportgen; "
               'printf "%s\\n" "${COMPREPLY[@]}"')
    result = subprocess.run(["bash", "-c", program], cwd=ROOT, capture_output=True, text=True, check=True)
    return result.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completes_commands_options_and_choices(tmp_path: Path) -> None:
    script = tmp_path / "reportgen.bash"
    script.write_text(reportgen("completion", "bash").stdout)
    assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0
    assert complete(script, "reportgen", "bu") == ["build"]
    assert complete(script, "reportgen", "ingest", "") == ["trace", "nccl-tests", "codecarbon", "serving"]
    assert complete(script, "reportgen", "ingest", "trace", "--for") == ["--format"]
    assert complete(script, "reportgen", "ingest", "trace", "--format", "") == ["table", "json"]
    assert complete(script, "reportgen", "build", "--paper", "") == ["a4", "letter"]
    assert complete(script, "reportgen", "completion", "") == ["bash", "zsh", "fish"]
    assert complete(script, "reportgen", "check", "inputs/examp") == ["inputs/example.yaml"]  # files otherwise


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts_name_every_command(shell: str) -> None:
    text = reportgen("completion", shell).stdout
    option = "-l format" if shell == "fish" else "--format"  # fish names long options without their dashes
    for command in ("check", "build", "watch", "schema", "diff", "measure", "ingest", "init", "completion",
                    "trace", "nccl-tests", "codecarbon", "serving", option):
        assert command in text, command
    if shutil.which(shell):
        check = [shell, "-n"] if shell == "zsh" else [shell, "--no-execute"]
        assert subprocess.run([*check], input=text, text=True, check=False).returncode == 0


def test_sigterm_stops_a_build_with_143(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    # the signal arrives while the project is analysed: the build stops at the next stage boundary, writes nothing
    from reportgen import pipeline

    analyze = pipeline.analyze_loaded

    def analyze_then_terminated(loaded: Any, **options: Any) -> Any:
        os.kill(os.getpid(), signal.SIGTERM)
        return analyze(loaded, **options)

    monkeypatch.setattr(pipeline, "analyze_loaded", analyze_then_terminated)
    assert main(["build", str(INPUTS / "example.yaml"), "-o", str(tmp_path), "--format", "json"]) == 143
    assert "stopped by SIGTERM" in capsys.readouterr().err
    assert not (tmp_path / "example" / "results.json").exists()


def test_a_stop_inside_a_callback_python_cannot_raise_from_says_nothing_and_is_acted_on() -> None:
    """A SIGTERM handled inside a weak reference's callback raises KeyboardInterrupt where Python can only print it
    ("Exception ignored in ..."): the stop is recorded all the same, so it is acted on at the next check, quietly.
    (In a process of its own: pytest replaces the hook that prints it.)"""
    code = ("import os, signal, weakref\n"
            "from reportgen import interrupts\n"
            "class Thing:\n    pass\n"
            "def terminated(_):\n"
            "    os.kill(os.getpid(), signal.SIGTERM)\n"
            "    for _ in range(100):  # a backward jump: where Python runs the handler, inside this callback\n"
            "        pass\n"
            "try:\n"
            "    with interrupts.stoppable():\n"
            "        thing = Thing()\n"
            "        reference = weakref.ref(thing, terminated)\n"
            "        del thing\n"
            "        assert reference() is None and interrupts.requested()\n"
            "        interrupts.check()\n"
            "except KeyboardInterrupt:\n"
            "    print('stopped')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout == "stopped\n" and result.stderr == "", result.stderr


def test_a_failure_after_a_stop_is_the_stop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A library stopped midway can fail oddly afterwards (matplotlib's "Invalid affine transformation matrix"
    after a SIGTERM during a drawing): the build then says it was stopped, with 143, not that it failed."""
    from reportgen import pipeline

    analyze = pipeline.analyze_loaded

    def terminated_then_broken(loaded: Any, **options: Any) -> Any:
        analyze(loaded)
        with contextlib.suppress(KeyboardInterrupt):  # swallowed, as a library's callback would
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(100):
                pass
        raise ValueError("Invalid affine transformation matrix")

    monkeypatch.setattr(pipeline, "analyze_loaded", terminated_then_broken)
    assert main(["build", str(INPUTS / "example.yaml"), "-o", str(tmp_path), "--format", "json"]) == 143
    err = capsys.readouterr().err
    assert "stopped by SIGTERM" in err and "ValueError" not in err
