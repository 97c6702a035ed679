"""Typography the templates cannot state: a word of a table cell is never broken at its hyphen
(docs/methods.md#a-report-a-reviewer-reads-through).

A browser may end a line after any hyphen or dash, so a column squeezed on a phone broke "on-demand",
"comm-share-departs" and "Karp–Flatt" over two lines and left rows a column wide and many lines tall. Each word of a
table cell that holds a hyphen or a dash is wrapped in `<span class="word">`, which the stylesheet keeps on one line:
the column is then at least as wide as its longest word, and a table wider than the screen scrolls inside itself.
Only text between tags is touched, so attributes, entities and markup pass unchanged.
"""

from __future__ import annotations

import re

_CELL = re.compile(r"(<t[dh][\s>].*?</t[dh]>)", re.S)
_TEXT = re.compile(r">([^<]+)<")
# a word (no spaces) with a hyphen or a dash between two of its characters
_JOINED = re.compile(r"(?<!\S)(\S*[^\s\-–—][-–—‐][^\s\-–—]\S*)")


def keep_words_whole(html: str) -> str:
    """`html` with every hyphenated word of a table cell kept on one line."""
    return _CELL.sub(lambda cell: _TEXT.sub(_wrap_text, cell.group(1)), html)


def _wrap_text(text: re.Match[str]) -> str:
    return ">" + _JOINED.sub(r'<span class="word">\1</span>', text.group(1)) + "<"
