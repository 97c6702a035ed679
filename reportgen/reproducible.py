"""SOURCE_DATE_EPOCH, the reproducible-builds convention: the time a build stamps on its outputs, when set.

Read here once, and checked before any work, so that a bad value is one usage error rather than a build that
fails at its last step (https://reproducible-builds.org/specs/source-date-epoch/ asks a malformed value to be an
error, not silently ignored)."""

from __future__ import annotations

import os

from reportgen.errors import UsageError

LAST_EPOCH = 253402300799  # 9999-12-31T23:59:59Z: the last moment a PDF date (and Python's datetime) can hold


def source_date_epoch() -> int | None:
    """The seconds since 1970 the environment fixes for this build; None when SOURCE_DATE_EPOCH is unset or
    empty, UsageError when it is not a whole number of seconds from 0 to LAST_EPOCH."""
    text = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) > LAST_EPOCH:
        raise UsageError(f"SOURCE_DATE_EPOCH={text[:40]!r}: not a date before the year 10000 (a whole number of "
                         f"seconds since 1970, at most {LAST_EPOCH})")
    return int(text)
