"""The tree of subcommands an argparse parser holds (`reportgen ingest trace`): what a command declares its parser
on, and one walk for the options every command takes, the command-line reference and the shell completion
scripts."""

from __future__ import annotations

import argparse
from typing import Any, Protocol


class Subcommands(Protocol):
    """What argparse's add_subparsers returns, as far as the commands use it."""

    def add_parser(self, name: str, **options: Any) -> argparse.ArgumentParser: ...


def children(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's direct subcommands by name (argparse keeps them in a private action: no public accessor)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def subcommands(parser: argparse.ArgumentParser,
                prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every subcommand, nested ones included, as (the words that name it, its parser), depth first."""
    found = []
    for name, child in children(parser).items():
        found += [((*prefix, name), child), *subcommands(child, (*prefix, name))]
    return found
