"""Another tool's JSON read by one reader (reportgen/ingest/strict_json.py): what Python's json takes silently is
refused with the key or the number named."""

from __future__ import annotations

import pytest

from reportgen.ingest import strict_json


def test_a_document_without_hostile_shapes_reads_as_json_does() -> None:
    assert strict_json.loads('{"a": [1, 2.5, {"b": null}], "c": true}') == {"a": [1, 2.5, {"b": None}], "c": True}
    assert strict_json.loads(b'{"n": -17}') == {"n": -17}
    biggest = str(int(1.7976931348623157e308))  # the largest float's integer: still a number
    assert strict_json.loads(biggest) == int(biggest)


@pytest.mark.parametrize(("text", "said"), [
    ('{"compute": 1, "compute": 2}', 'the key "compute" appears twice in one object'),
    ('{"a": {"x": 1, "x": 1}}', 'the key "x" appears twice'),  # nested, and equal values too
    ('{"a": NaN}', "NaN is not a number JSON allows"),
    ('[-Infinity]', "-Infinity is not a number JSON allows"),
    ('{"a": 1' + "0" * 400 + "}", "(401 digits) is past any float's range"),
    ('{"a": -1' + "0" * 309 + "}", "(310 digits) is past any float's range"),
])
def test_hostile_shapes_are_refused_naming_what(text: str, said: str) -> None:
    with pytest.raises(ValueError, match=None) as refused:
        strict_json.loads(text)
    assert said in str(refused.value)
