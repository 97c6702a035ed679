"""Every option of every command refuses an empty value or `--` as one line and exit 2 (docs/commands.md): Python
3.11 and 3.12's argparse handed `--name=--` on as a list, a traceback in about eleven commands."""

from __future__ import annotations

import argparse

import pytest

from reportgen.commands.cli import _parser, main


def _value_options() -> list[tuple[str, str]]:
    """(command, option) for every option that takes a value, read from the parser itself so that a new one is
    covered the day it is added."""
    parser = _parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found = []
    for name, sub in commands.choices.items():
        for action in sub._actions:
            if action.option_strings and action.nargs != 0 and not isinstance(action, argparse._HelpAction):
                long = [o for o in action.option_strings if o.startswith("--")]
                if long:
                    found.append((name, long[0]))
    return found


OPTIONS = _value_options()


def test_the_parser_has_options_to_check() -> None:
    assert len(OPTIONS) > 20 and ("build", "--format") in OPTIONS


@pytest.mark.parametrize(("command", "option"), OPTIONS, ids=[f"{c} {o}" for c, o in OPTIONS])
@pytest.mark.parametrize("value", ["--", ""])
def test_an_empty_value_is_one_line_and_exit_2(command: str, option: str, value: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main([command, f"{option}={value}", "p.yaml"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"{option} needs a value" in err
