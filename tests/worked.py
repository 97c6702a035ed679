"""`@worked("<analysis>")`: a test that holds an analysis's arithmetic to numbers worked by hand, written in its
comments (methods.md's formula, the inputs, each step). tests/test_worked_cases.py fails on an analysis of the
registry with no such test, so that a formula cannot be added, or changed, with only a golden file to hold it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

Test = TypeVar("Test", bound=Callable[..., object])


def worked(*analyses: str) -> Callable[[Test], Test]:
    """Marks a test as a worked case of the named analyses (keys of the registry: `scaling`, `energy_delay`)."""

    def mark(test: Test) -> Test:
        test.worked_analyses = analyses  # type: ignore[attr-defined]
        return test

    return mark
