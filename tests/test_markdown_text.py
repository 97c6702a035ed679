"""Project text in a pull request's Markdown (history.md, diff.md) stays inert, and a number reads as one: "1.02 s",
not "1\\.02 s" (reportgen.render.formatting.markdown_text)."""

from __future__ import annotations

from reportgen.render.formatting import markdown_text
from reportgen.wording import counted, nodes


def test_numbers_and_dates_read_as_written() -> None:
    assert markdown_text("a run takes 1.02 s at 2 nodes, on 2026-11-29") == \
        "a run takes 1.02 s at 2 nodes, on 2026-11-29"


def test_what_markdown_would_read_as_markup_is_escaped() -> None:
    """A list marker, a link, an autolinked domain, emphasis and a table's bar stay text."""
    assert markdown_text("1. see [x](http://a.b) at www.x.com *now* | -") == \
        "1\\. see \\[x\\]\\(http\\://a\\.b\\) at www\\.x\\.com \\*now\\* \\| \\-"
    assert markdown_text("<script>") == "&lt;script&gt;"


def test_one_node_and_one_rank_are_singular() -> None:
    assert (nodes(1), counted(1, "rank"), counted(2, "rank")) == ("1 node", "1 rank", "2 ranks")
