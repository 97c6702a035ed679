"""Input text → YAML nodes that keep their positions, refusing what a safe loader must refuse.

Only composition is used (never construction), so no tag can build an object; the composed graph is then checked
for foreign tags and for alias expansion before anything walks it.
"""

from __future__ import annotations

import codecs
import io
from pathlib import Path

import yaml
from yaml.error import Mark, MarkedYAMLError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from reportgen import wording
from reportgen.errors import InputError, Problem
from reportgen.files import open_regular, why_unreadable
from reportgen.project.stdio import MAX_FILE_BYTES, STDIN, stdin_bytes
from reportgen.project.yaml_hints import explain, position

MAX_EXPANDED_NODES = 100_000  # after alias expansion: refuses "billion laughs" documents
MAX_DEPTH = 64
PRESCAN_DEPTH = 4 * MAX_DEPTH

_YAML = "tag:yaml.org,2002:"
ALLOWED_TAGS = {_YAML + t for t in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp")}


def problem_at(mark: Mark | None, display: str, path: str, message: str) -> Problem:
    if mark is None:
        return Problem(display, 1, 1, path, message)
    return Problem(mark.name if mark.name != "<unicode string>" else display, mark.line + 1, mark.column + 1,
                   path, message)


def read_text(path: Path, display: str, *, limit: int = MAX_FILE_BYTES,
              within: Path | None = None) -> tuple[str, bytes]:
    """The file's text and raw bytes ("-": standard input); InputError for a file too large or not UTF-8. With
    `within`, the file opened must lie in that folder (see open_regular)."""
    data = read_bytes(path, display, limit=limit, within=within)
    try:
        return data.decode("utf-8-sig"), data
    except UnicodeDecodeError as error:
        before = error.object[:error.start].decode("utf-8")  # the object decoded, without a byte-order mark
        line, column = position(before, len(before))
        raise InputError([Problem(display, line, column, "", "the file is not UTF-8 text")]) from None


def read_bytes(path: Path, display: str, *, limit: int = MAX_FILE_BYTES, within: Path | None = None) -> bytes:
    """The file's bytes ("-": standard input), at most `limit` of them; InputError for a file too large or that
    cannot be read. With `within`, the file opened must lie in that folder (see open_regular)."""
    try:
        if path == STDIN:
            data = stdin_bytes(limit)
        else:
            with open_regular(path, within=within) as handle:
                data = handle.read(limit + 1)
    except OSError as error:
        raise InputError([Problem(display, 1, 1, "", why_unreadable(error))]) from None
    if len(data) > limit:
        raise InputError([Problem(display, 1, 1, "", f"the file is larger than {wording.limit(limit)}")])
    return data


UTF8_PIECE = 16 << 20


def read_utf8_bytes(path: Path, display: str, *, limit: int) -> bytes:
    """The file's bytes, checked UTF-8 a piece at a time straight from the buffer, where read_text would also hold
    their text (a file of a gigabyte read by a typed decoder); InputError at the line of the first byte that is not
    UTF-8."""
    data = read_bytes(path, display, limit=limit)
    view = memoryview(data)
    start = 0
    while start < len(data):
        stop = end = min(start + UTF8_PIECE, len(data))
        while stop < len(data) and stop > end - 3 and 0x80 <= data[stop] < 0xC0:  # not inside a character (a
            stop -= 1  # character is 4 bytes at most: past 3 continuation bytes the text is not UTF-8 anyway)
        try:
            codecs.utf_8_decode(view[start:stop], "strict", True)
        except UnicodeDecodeError as error:
            offset = start + error.start
            line_start = data.rfind(b"\n", 0, offset) + 1
            column = len(data[line_start:offset].decode("utf-8")) + 1
            raise InputError([Problem(display, data.count(b"\n", 0, offset) + 1, column, "",
                                      "the file is not UTF-8 text")]) from None
        start = stop
    return data


def compose(text: str, display: str) -> Node:
    """The single YAML document as a node graph; InputError for syntax errors, foreign tags or alias bombs."""
    # PyYAML composes recursively, in time that grows with the square of the nesting: 10,000 brackets took 1.8 s
    # to reach its RecursionError. Brackets nested far past any project's depth are refused before it starts.
    if _too_deep_at(text, PRESCAN_DEPTH) is not None:
        line, column = _too_deep_at(text, MAX_DEPTH) or (1, 1)
        raise InputError([Problem(display, line, column, "", "the document nests too deeply")])
    stream = io.StringIO(text)
    stream.name = display
    try:
        node = yaml.compose(stream, Loader=yaml.SafeLoader)
    except MarkedYAMLError as error:
        mark, message = explain(text, error)
        raise InputError([problem_at(mark, display, "", f"invalid YAML: {message}")]) from None
    except yaml.reader.ReaderError as error:  # a character YAML refuses: located by its position in the text
        line, column = position(text, error.position)
        character = f"#x{error.character:04x}" if isinstance(error.character, int) else repr(error.character)
        raise InputError([Problem(display, line, column, "", f"invalid YAML: the character {character} is not "
                                  "allowed (a control character)")]) from None
    except yaml.YAMLError as error:  # any other error without a position
        raise InputError([Problem(display, 1, 1, "", f"invalid YAML: {error}")]) from None
    except RecursionError:  # PyYAML composes recursively: thousands of nested brackets exhaust the stack
        line, column = _too_deep_at(text, MAX_DEPTH) or _deep_block_at(text, MAX_DEPTH) or (1, 1)
        raise InputError([Problem(display, line, column, "", "the document nests too deeply")]) from None
    if node is None:
        raise InputError([Problem(display, 1, 1, "", "the file is empty: it needs at least a `project` section")])
    problems: list[Problem] = []
    _check_graph(node, display, problems)
    if problems:
        raise InputError(problems)
    return node


def mapping_data(text: str, display: str, *, quiet: bool = False) -> object | None:
    """A data file written as YAML (a load tester's results) as plain data, through the guarded composer (alias
    bombs, deep nesting and foreign tags refused); None when the text is valid YAML but no mapping (a printed
    summary reads as one long string), and with `quiet` when it is no YAML at all either."""
    try:
        node = compose(text, display)
    except InputError:
        if quiet:
            return None
        raise
    if not isinstance(node, MappingNode):
        return None
    document: object = yaml.SafeLoader("").construct_document(node)
    return document


def _deep_block_at(text: str, limit: int) -> tuple[int, int] | None:
    """Where collections first nest deeper than `limit`, block ones too ("- - - …", indented mappings), read from
    PyYAML's events: its parser keeps a stack of states and does not recurse as its composer does."""
    depth = 0
    try:
        for event in yaml.parse(io.StringIO(text), Loader=yaml.SafeLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > limit and event.start_mark is not None:
                    return event.start_mark.line + 1, event.start_mark.column + 1
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return None
    return None


def _too_deep_at(text: str, limit: int) -> tuple[int, int] | None:
    """Where flow brackets first nest deeper than `limit` (1-based line and column), or None. Brackets inside
    quoted text count too, which is why the scan before composing allows four times MAX_DEPTH."""
    if text.count("[") + text.count("{") <= limit:
        return None
    depth = 0
    for index, char in enumerate(text):
        if char in "[{":
            depth += 1
            if depth > limit:
                return position(text, index)
        elif char in "]}":
            depth -= 1
    return None


def _check_graph(root: Node, display: str, problems: list[Problem]) -> None:
    """Refuse object tags, recursion, and documents whose aliases expand past the budget."""
    expanded: dict[int, int] = {}  # node id → size once every alias is expanded
    aliased = [False]  # a node met twice: the document uses aliases

    def size(node: Node, depth: int, active: set[int]) -> int:
        key = id(node)
        if key in expanded:
            aliased[0] = True
            return expanded[key]
        if key in active or depth > MAX_DEPTH:
            raise _Refused(node, "the document nests too deeply or refers to itself through an alias")
        if node.tag not in ALLOWED_TAGS:
            raise _Refused(node, f"the YAML tag {node.tag.replace(_YAML, '!!')} is not allowed in a project file")
        if isinstance(node, ScalarNode) and not _encodable(node.value):
            raise _Refused(node, "the text holds a lone surrogate (an escape such as \\ud800 that is half of a "
                           "character): it is not valid Unicode and cannot be written to a report")
        total = 1
        if isinstance(node, MappingNode | SequenceNode):
            active.add(key)
            children = [n for pair in node.value for n in pair] if isinstance(node, MappingNode) else node.value
            for child in children:
                total += size(child, depth + 1, active)
                if total > MAX_EXPANDED_NODES:
                    # Located at the innermost value whose expansion crosses the budget: where the aliases pile up.
                    raise _Refused(node, f"the document expands past {MAX_EXPANDED_NODES:,} values through aliases: "
                                   "this value repeats aliases that repeat others" if aliased[0] else
                                   f"the document holds more than {MAX_EXPANDED_NODES:,} values: keep large sets of "
                                   "runs in a CSV file beside it (scaling.file)")
            active.discard(key)
        expanded[key] = total
        return total

    try:
        size(root, 0, set())
    except _Refused as refusal:
        problems.append(problem_at(refusal.node.start_mark, display, "", refusal.message))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _Refused(Exception):
    def __init__(self, node: Node, message: str) -> None:
        super().__init__(message)
        self.node, self.message = node, message


def scalar_node(value: str, mark: Mark) -> ScalarNode:
    """A string node at a given position: how CSV cells enter the same validation as YAML values."""
    return ScalarNode(_YAML + "str", value, start_mark=mark, end_mark=mark)


def mapping_node(pairs: list[tuple[ScalarNode, Node]], mark: Mark) -> MappingNode:
    return MappingNode(_YAML + "map", pairs, start_mark=mark, end_mark=mark)


def mark_at(display: str, line: int, column: int) -> Mark:
    """A position for synthetic nodes, 1-based as printed."""
    return Mark(display, 0, line - 1, column - 1, None, 0)
