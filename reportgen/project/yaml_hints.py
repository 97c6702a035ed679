"""A hint beside PyYAML's syntax errors, at their line: what a person most likely typed
(docs/project-file.md#syntax-errors).

PyYAML names what its parser met ("mapping values are not allowed here"), which reads as nothing to someone who
indented a line by one space too many or wrote a colon in a title. The slips a project file meets most are read from
the line itself: a tab, a key indented deeper than the one above it, a line indented to no level of the file, and a
value that holds ": " without quotes.
"""

from __future__ import annotations

import re

_KEY = re.compile(r"^(?P<indent> *)(?:- +)?(?P<key>[^\s#:][^:#]*?):(?:\s|$)")


def syntax_hint(text: str, line: int, column: int, message: str) -> str:
    """A sentence for the error PyYAML reported at `line`, `column` (0-based), or "" when no slip explains it."""
    lines = text.splitlines()
    if not 0 <= line < len(lines):
        return ""
    here = lines[line]
    if "\t" in message or "\\t" in message or here[:len(here) - len(here.lstrip())].count("\t"):
        return "YAML indents with spaces, never tabs"
    if "mapping values are not allowed" in message:
        if ": " in here[:column]:  # a key, its value, and in the value the colon PyYAML stopped at
            key = _KEY.match(here)
            value = here[key.end():].strip() if key else here.strip()
            name = key.group("key") if key else "key"
            return f'a value that holds ": " must be quoted: {name}: "{value}"'
        above = _previous(lines, line)
        if above is not None and _indent(here) > _indent(lines[above]):
            return (f"line {line + 1} is indented {_spaces(_indent(here))}, deeper than the key on line "
                    f"{above + 1} ({_indent(lines[above])}): keys of one section line up, and only a key whose value "
                    "is left empty takes an indented block under it")
        return 'a value that holds ": " must be quoted'
    if "expected <block end>" in message or "did not find expected key" in message:
        levels = sorted({_indent(lines[index]) for index in range(line) if _is_key(lines[index])})
        if _indent(here) not in levels:
            shown = ", ".join(str(level) for level in levels) or "0"
            return (f"line {line + 1} is indented {_spaces(_indent(here))}, a level no key above it has ({shown}): "
                    "indent it as the keys of its section")
    if "could not find expected ':'" in message:
        above = _previous(lines, line + 1)  # PyYAML stops a line after the one without a colon
        for index in (above, _previous(lines, line)):
            if index is not None and ":" not in lines[index] and not lines[index].lstrip().startswith("-"):
                return (f'line {index + 1} ("{lines[index].strip()}") has no colon: each line of a section is '
                        "`key: value`")
        return "each line of a section is `key: value`; a value that goes on over lines must be quoted"
    return ""


def _spaces(count: int) -> str:
    return f"{count} space{'s' if count != 1 else ''}"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_key(line: str) -> bool:
    return bool(_KEY.match(line)) and not line.lstrip().startswith("#")


def _previous(lines: list[str], line: int) -> int | None:
    """The nearest line above that holds something other than a comment."""
    for index in range(line - 1, -1, -1):
        if lines[index].strip() and not lines[index].lstrip().startswith("#"):
            return index
    return None
