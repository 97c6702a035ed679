"""Every option's value checked in one place: a value that is empty or `--` is a usage error naming the option
(commands.md, the conventions every command follows), in every command, for every option declared now or later.

argparse itself lets both through. `--output=` hands the empty text to the option's type (`Path("")` is the current
folder), and Python 3.11 and 3.12 drop a value of `--` (`--output=--`, `-o--`) and store an empty list without
calling the type at all: a traceback in about eleven commands, and `build --format=--` wrote nothing. So the check
sits in both places a missing value can show: the type, which sees the text (`""`, and `--` where a version of
argparse hands it on), and the store action, which sees the empty list.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable, Sequence
from typing import Any

NOT_A_VALUE = ("", "--")  # after stripping spaces: what no option of reportgen takes as its value


class Parser(argparse.ArgumentParser):
    """argparse's parser whose plain options (`add_argument("--x")`, the store action) refuse a missing value.
    Subcommands' parsers are made of the same class (argparse's add_subparsers uses the parent's type)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, GivenValue)  # what add_argument uses when no action is named
        self.register("action", "store", GivenValue)
        self.register("action", "append", GivenValues)


class GivenValue(argparse.Action):
    """The store action of an option that takes one value, refusing a value that is empty or `--`. A positional
    argument is stored as argparse stores it: `--` there ends the options, and an empty file name is refused by the
    reader of files with its location."""

    def __init__(self, option_strings: Sequence[str], dest: str, type: Callable[[str], Any] | None = None,
                 **options: Any) -> None:
        if option_strings:
            type = given(type or str, shown_name(option_strings))
        super().__init__(option_strings, dest, type=type, **options)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if self.option_strings and self.nargs is None and isinstance(values, list):  # 3.11/3.12 dropped a `--`
            raise argparse.ArgumentError(None, missing(shown_name(self.option_strings), "--"))
        setattr(namespace, self.dest, values)


class GivenValues(argparse._AppendAction):
    """The append action of an option given once or more, each value refused as GivenValue refuses one."""

    def __init__(self, option_strings: Sequence[str], dest: str, type: Callable[[str], Any] | None = None,
                 **options: Any) -> None:
        super().__init__(option_strings, dest, type=given(type or str, shown_name(option_strings)), **options)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if self.nargs is None and isinstance(values, list):  # 3.11/3.12 dropped a `--`, as GivenValue's
            raise argparse.ArgumentError(None, missing(shown_name(self.option_strings), "--"))
        super().__call__(parser, namespace, values, option_string)


def given(convert: Callable[[str], Any], name: str) -> Callable[[str], Any]:
    """The option's type, refusing first a value that is not one. functools.wraps keeps what the type carries for
    others: its name, which argparse's own errors quote ("invalid int value"), and its attributes (the formats a
    FormatList allows, which shell completion offers)."""

    @functools.wraps(convert)
    def checked(text: str) -> Any:
        if text.strip() in NOT_A_VALUE:
            # an ArgumentError without an argument is said as it is: "--output needs a value", not argparse's
            # "argument -o/--output: …" before it
            raise argparse.ArgumentError(None, missing(name, text))
        return convert(text)

    return checked


def missing(name: str, text: str) -> str:
    return f"{name} needs a value (got {text!r})"


def shown_name(option_strings: Sequence[str]) -> str:
    """The name an error gives an option: its long form (`--output`, not `-o`)."""
    return next((name for name in option_strings if name.startswith("--")), option_strings[0])
