"""vLLM's `bench serve --save-detailed` results decoded by msgspec (methods.md#a-service-judged-from-its-requests):
a million requests are a hundred megabytes or more of lists, which Python's json module and a check a value took
6.7 s and 770 MB to read. Here each result is decoded with its lists left as raw JSON, and then one list at a time
into the type it must have (a number where a number is asked: finite, no boolean) and on into a numpy array, so
that one list at a time is ever held as Python objects.

Every field not read is skipped unparsed. The chunk gaps (`itls`) are counted, and summed only where the file has
no `latencies` and E2E is reconstructed from them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sized
from dataclasses import dataclass
from typing import TypeVar

import msgspec
import numpy as np

from reportgen.errors import InputError, Problem
from reportgen.ingest import strict_json

_ABSENT = msgspec.Raw()  # a list the file does not have (msgspec reads only null into `Raw | None`)


class Summary(msgspec.Struct, gc=False):
    """One result object: its per-request lists as raw JSON, and the summary fields read beside them."""

    ttfts: msgspec.Raw
    itls: msgspec.Raw
    output_lens: msgspec.Raw = _ABSENT
    errors: msgspec.Raw = _ABSENT
    start_times: msgspec.Raw = _ABSENT
    latencies: msgspec.Raw = _ABSENT
    queue_times: msgspec.Raw = _ABSENT
    # the summary, any JSON value: each is used only where it has the type it should
    request_rate: object = None  # requests/s, or "inf" for a closed load
    max_concurrency: object = None
    total_output_tokens: object = None
    completed: object = None
    failed: object = None
    mean_e2el_ms: object = None
    gpu_energy_j: object = None


@dataclass(frozen=True)
class Result:
    """One result's requests, a column each, in the file's order (NaN where a request has no value), with the
    lengths of the lists the file gave, and the summary fields as the file wrote them."""

    lengths: dict[str, int]  # each list the file has, by its name
    ttft_s: np.ndarray
    e2e_s: np.ndarray | None  # None where the file has no `latencies` and no E2E could be reconstructed
    output_tokens: np.ndarray | None  # None where the file has no `output_lens`
    ok: np.ndarray | None  # no error (None where the file has no `errors`)
    send_s: np.ndarray | None
    queue_s: np.ndarray | None
    e2e_reconstructed: bool  # E2E is TTFT plus the chunk gaps
    summary: Summary


class _BadList(Exception):
    """A list whose value is not what vLLM writes there: the field (with the index) and msgspec's reason."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field, self.reason = field, reason


_DECODER = msgspec.json.Decoder(Summary)
_NUMBERS = msgspec.json.Decoder(list[float])
_NUMBERS_OR_NULL = msgspec.json.Decoder(list[float | None])
_ERRORS = msgspec.json.Decoder(list[str | None])
_GAPS = msgspec.json.Decoder(list[msgspec.Raw])
_READ = tuple(Summary.__struct_fields__)
_OTHER_FORMATS = (b"metadata", b"benchmarks", b"metrics")  # GuideLLM's and AIPerf's keys: a file with them is ambiguous
_KEYS = re.compile(rb'"(' + b"|".join((*(name.encode() for name in _READ), *_OTHER_FORMATS)) + rb')"')


def plain(raw: bytes) -> list[Result] | None:
    """The results of a file that is plainly vLLM's and nothing else's; None where that takes the strict full
    reading: a key read appears twice in a result (a duplicate, which msgspec would resolve silently to the last;
    or the same word as a value), another format's key appears, or the file does not have vLLM's structure and
    values. A pass over the bytes for the keys, and one typed decoding."""
    seen = _KEYS.findall(raw)
    if set(_OTHER_FORMATS) & set(seen):
        return None
    try:
        summaries = _summaries(raw)
        if len(summaries) > 1:  # results a line (each line is one, or decoding them so would have failed)
            if any(len(found := _KEYS.findall(raw, start, stop)) != len(set(found))
                   for start, stop in strict_json.lines(raw)):
                return None
        elif len(seen) != len(set(seen)):
            return None
        return [_columns(summary) for summary in summaries]
    except (msgspec.DecodeError, _BadList):
        return None


def shaped(raw: bytes) -> bool:
    """Whether the file has vLLM's structure (an object with lists `ttfts` and `itls`, or such objects a line),
    whatever its values."""
    try:
        shapes = _each(_SHAPES, raw)
    except msgspec.DecodeError:
        return False
    return all(_a_list(shape.ttfts) and _a_list(shape.itls) for shape in shapes)


def _a_list(raw: msgspec.Raw) -> bool:
    return bytes(memoryview(raw)[:1]) == b"["  # the first byte alone: a list may be hundreds of megabytes


class _Shape(msgspec.Struct, gc=False):
    ttfts: msgspec.Raw
    itls: msgspec.Raw


_SHAPES = msgspec.json.Decoder(_Shape)


def decode(raw: bytes, shown: str) -> list[Result]:
    """The results of a file recognised as vLLM's: InputError at the line of the result and the field of the first
    value that is not what vLLM writes there."""
    try:
        summaries = _summaries(raw)
    except msgspec.DecodeError as error:
        reason, where = _parts(error)
        index, field = _located(where)
        raise _refused(shown, raw, index, field, reason) from None
    found = []
    for index, summary in enumerate(summaries):
        try:
            found.append(_columns(summary))
        except _BadList as bad:
            raise _refused(shown, raw, index, bad.field, bad.reason) from None
    return found


def _summaries(raw: bytes) -> list[Summary]:
    """One result, or several one a line as --append-result writes them."""
    return _each(_DECODER, raw)


_Decoded = TypeVar("_Decoded")


def _each(decoder: msgspec.json.Decoder[_Decoded], raw: bytes) -> list[_Decoded]:
    """The file as one document, else as one document a line."""
    try:
        return [decoder.decode(raw)]
    except msgspec.ValidationError:  # one document, with a value that is not vLLM's (a kind of DecodeError)
        raise
    except msgspec.DecodeError:  # not one document
        return decoder.decode_lines(raw)


_List = TypeVar("_List", bound=Sized)


def _columns(summary: Summary) -> Result:
    """The lists of one result decoded one at a time into arrays: a list of a million Python floats is 32 MB, its
    array 8 MB."""
    lengths: dict[str, int] = {}

    def decoded(name: str, decoder: msgspec.json.Decoder[_List]) -> _List | None:
        values = _decoded(decoder, getattr(summary, name), name)
        if values is not None:
            lengths[name] = len(values)
        return values

    def numbers(name: str, decoder: msgspec.json.Decoder[_List]) -> np.ndarray | None:
        values = decoded(name, decoder)
        return None if values is None else np.array(values, dtype=float)  # null (not measured) is NaN

    ttft = numbers("ttfts", _NUMBERS_OR_NULL)
    if ttft is None:
        raise _BadList("ttfts", "expected a list, got null")
    gaps = decoded("itls", _GAPS)
    if gaps is None:
        raise _BadList("itls", "expected a list, got null")
    gap_sums = None if not _absent(summary.latencies) else \
        np.array([_gaps_sum(entry, index) for index, entry in enumerate(gaps)], dtype=float)
    del gaps
    tokens = numbers("output_lens", _NUMBERS)
    errors = decoded("errors", _ERRORS)
    ok = None if errors is None else np.fromiter((error == "" for error in errors), bool, len(errors))
    del errors
    send = numbers("start_times", _NUMBERS)
    latencies = numbers("latencies", _NUMBERS_OR_NULL)
    queue = numbers("queue_times", _NUMBERS)
    if gap_sums is not None and len(gap_sums) != len(ttft):
        gap_sums = None  # unequal lengths, which the reader refuses naming every list's
    e2e = latencies if latencies is not None else None if gap_sums is None else ttft + gap_sums
    return Result(lengths, ttft, e2e, tokens, ok, send, queue, latencies is None, summary)


def _absent(raw: msgspec.Raw) -> bool:
    """A list the file does not have, or gives as null."""
    return not len(raw) or (len(raw) == 4 and bytes(raw) == b"null")


def _decoded(decoder: msgspec.json.Decoder[_List], raw: msgspec.Raw, name: str) -> _List | None:
    if _absent(raw):
        return None
    try:
        return decoder.decode(raw)
    except msgspec.DecodeError as error:
        reason, where = _parts(error)
        raise _BadList(name + where, reason) from None


def _gaps_sum(gaps: msgspec.Raw, index: int) -> float:
    """One request's chunk gaps added in order; NaN where the request has no list of them."""
    try:
        return sum(_NUMBERS.decode(gaps))
    except msgspec.DecodeError as error:
        if not isinstance(msgspec.json.decode(gaps), list):
            return math.nan
        reason, where = _parts(error)
        raise _BadList(f"itls[{index}]{where}", reason) from None


def _located(where: str) -> tuple[int, str]:
    """`[1].latencies[3]` (the second of results a line) as (1, "latencies[3]"); `.latencies` as (0, "latencies")."""
    if where.startswith("[") and (found := where[1:].partition("]"))[0].isdigit():
        return int(found[0]), found[2].lstrip(".")
    return 0, where.lstrip(".")


def _refused(shown: str, raw: bytes, index: int, field: str, reason: str) -> InputError:
    """The problem at the line where the index-th result starts (results are a line each; one result, the first
    line that is not blank)."""
    return InputError([Problem(shown, strict_json.record_line(raw, index) or 1, 1, field, reason)])


def _parts(error: msgspec.DecodeError) -> tuple[str, str]:
    """msgspec's "Expected `float`, got `str` - at `$[1].latencies[3]`" as its reason in words and the path after
    the `$` ("[1].latencies[3]")."""
    reason, _, where = str(error).partition(" - at `$")
    return _words(reason), where.rstrip("`")


_WORDS = {"float": "a number", "int": "a whole number", "str": "a string", "null": "null", "array": "a list",
          "object": "an object", "bool": "true or false"}


def _words(reason: str) -> str:
    """msgspec's reason in words: "Expected `float | null`, got `str`" is "expected a number or null, got a
    string"; "Number out of range" is a number past any float's."""
    if reason == "Number out of range":
        return "a number past any float's range"
    reason = re.sub(r"`([^`]*)`", lambda found: " or ".join(_WORDS.get(kind.strip(), kind.strip())
                                                            for kind in found.group(1).split("|")), reason)
    return reason[:1].lower() + reason[1:]
