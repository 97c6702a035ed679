"""A hint beside PyYAML's syntax errors, at their line: what a person most likely typed
(docs/project-file.md#syntax-errors).

PyYAML names what its parser met ("mapping values are not allowed here"), which reads as nothing to someone who
indented a line by one space too many or wrote a colon in a title. The slips a project file meets most are read from
the line itself: a tab, a key indented deeper than the one above it, a line indented to no level of the file, a
value that holds ": " without quotes, a line without its colon and a quote left open.

Two of them PyYAML meets lines after the slip: a line without its colon runs on as one plain value into the lines
below it, and an open quote takes in every line up to the next quote character (or the end of the file). The value
PyYAML's scanner was reading when it stopped tells where that value started: the hint names that line, and an open
quote is reported where it opens, since where PyYAML stopped says nothing to the reader.

Lines are counted as PyYAML counts them (CR LF, CR, LF, NEL, U+2028 and U+2029 each end one), so that a file saved
with old Mac or Unicode line ends gets the same line numbers and hints as any other.
"""

from __future__ import annotations

import re

import yaml
from yaml.error import Mark, MarkedYAMLError
from yaml.tokens import ScalarToken, Token, ValueToken

_KEY = re.compile(r"^(?P<indent> *)(?:- +)?(?P<key>[^\s#:][^:#]*?):(?:\s|$)")
LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # the line breaks of YAML 1.1, as PyYAML's reader counts them
_QUOTES = ("'", '"')
_QUOTED_CONTEXT = "while scanning a quoted scalar"
_KEY_CONTEXT = "while scanning a simple key"
_FIRST_WORD = re.compile(r"^(?P<lead> *(?:- +)?)(?P<word>[^\s:#]+) +(?P<rest>\S.*)$")


def yaml_lines(text: str) -> list[str]:
    """The text's lines as PyYAML counts them, each with the line break that ends it."""
    lines, start = [], 0
    for match in LINE_BREAK.finditer(text):
        lines.append(text[start:match.end()])
        start = match.end()
    if start < len(text):
        lines.append(text[start:])
    return lines


def position(text: str, index: int) -> tuple[int, int]:
    """The 1-based line and column of the character at `index`, lines counted as PyYAML counts them."""
    line_start, breaks = 0, 0
    for match in LINE_BREAK.finditer(text, 0, index):
        line_start, breaks = match.end(), breaks + 1
    return breaks + 1, index - line_start + 1


def explain(text: str, error: MarkedYAMLError) -> tuple[Mark | None, str]:
    """Where to report PyYAML's syntax error, and its message followed by a hint when a slip explains it."""
    message = str(error.problem or error.context or "invalid YAML").strip()
    mark = error.problem_mark or error.context_mark
    if error.context == _QUOTED_CONTEXT and error.context_mark is not None:  # the file ended inside the quote
        return error.context_mark, _open_quote(text, error.context_mark, mark, message)
    if mark is None:
        return None, message
    scalar, is_value = _scalar_read_before(text, mark.index)
    run_on = scalar if scalar is not None and scalar.start_mark.line < scalar.end_mark.line == mark.line else None
    if run_on is not None and run_on.style in _QUOTES:  # a value read on over lines up to where PyYAML stopped
        return run_on.start_mark, _open_quote(text, run_on.start_mark, mark, message)
    lines = [LINE_BREAK.sub("", line) for line in yaml_lines(text)]
    started: int | None = None  # the line of a key or list item whose colon is missing
    if error.context == _KEY_CONTEXT and error.context_mark is not None:
        started = error.context_mark.line  # the key PyYAML read on in search of its colon
    elif run_on is not None and not is_value:
        started = run_on.start_mark.line
    hint = _no_colon(lines, started) if started is not None else syntax_hint(lines, mark.line, mark.column, message)
    return mark, message + (f"; {hint}" if hint else "")


def _open_quote(text: str, opened: Mark, stopped: Mark | None, message: str) -> str:
    """The hint for a quote left open, reported where it opens."""
    quote = text[opened.index] if opened.index < len(text) and text[opened.index] in _QUOTES else '"'
    inside = "''" if quote == "'" else '\\"'  # how YAML writes the quote itself inside a value so quoted
    read_to = f"on to line {stopped.line + 1}" if stopped is not None else "on"
    return (f"the quote {quote} opened here is not closed on its line: YAML read {read_to} looking for its end "
            f"({message}); close it, and write a {quote} inside the value as {inside}")


def _scalar_read_before(text: str, index: int) -> tuple[ScalarToken | None, bool]:
    """The last value PyYAML's scanner read before `index`, where the parser stopped (the tokens it had queued
    when it failed included), and whether it followed a key's colon."""
    scanner = yaml.SafeLoader(text)
    read: list[Token] = []
    try:
        while scanner.check_token():
            token: Token = scanner.get_token()  # type: ignore[no-untyped-call]
            if token.start_mark.index >= index:
                break
            read.append(token)
    except yaml.YAMLError:
        read.extend(token for token in scanner.tokens if token.start_mark.index < index)
    finally:
        scanner.dispose()
    for at in range(len(read) - 1, -1, -1):
        found = read[at]
        if isinstance(found, ScalarToken):
            return found, at > 0 and isinstance(read[at - 1], ValueToken)
    return None, False


def _no_colon(lines: list[str], index: int) -> str:
    """The hint for a line whose colon is missing: PyYAML read it on into the lines below."""
    if not 0 <= index < len(lines):
        return ""
    line = lines[index].strip()
    fixed = _FIRST_WORD.match(lines[index])
    instead = f" (here `{fixed['lead'].lstrip()}{fixed['word']}: {fixed['rest']}`)" if fixed else ""
    return f'line {index + 1} ("{line}") has no colon: each line of a section is `key: value`{instead}'


def syntax_hint(lines: list[str], line: int, column: int, message: str) -> str:
    """A sentence for the error PyYAML reported at `line`, `column` (0-based), or "" when no slip explains it."""
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
                return _no_colon(lines, index)
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
