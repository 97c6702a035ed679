"""A hyphenated word of a table cell is kept on one line (docs/methods.md#a-report-a-reviewer-reads-through); the
phone layout itself is measured in Chromium by tests/test_browser.py."""

from __future__ import annotations

from reportgen.render.typography import keep_words_whole


def test_hyphenated_words_of_cells_are_kept_whole_and_nothing_else_changes() -> None:
    html = ('<p>an on-demand price</p><table><thead><tr><th class="n">Karp–Flatt e</th></tr></thead><tbody><tr>'
            '<td data-value="on-demand">on-demand, then spot</td><td><code>comm-share-departs</code> and −3</td>'
            '<td>a - b &amp; x-y</td></tr></tbody></table>')
    kept = keep_words_whole(html)
    assert '<p>an on-demand price</p>' in kept  # prose outside tables wraps as it likes
    assert '<th class="n"><span class="word">Karp–Flatt</span> e</th>' in kept
    assert '<td data-value="on-demand"><span class="word">on-demand,</span> then spot</td>' in kept  # not the attribute
    assert '<code><span class="word">comm-share-departs</span></code> and −3' in kept  # a minus sign is no hyphen
    assert '<td>a - b &amp; <span class="word">x-y</span></td>' in kept  # a spaced dash joins nothing
    assert kept.replace('<span class="word">', "").replace("</span>", "") == html
