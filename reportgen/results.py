"""Analysis → the results.json document of shared/spec/RESULTS.md (raw SI floats, "inf" as a string)."""

from __future__ import annotations

import json
import math
from typing import Any

from reportgen import __version__
from reportgen.analysis import Analysis
from reportgen.project import LoadedProject

SCHEMA_VERSION = 1


def results_document(loaded: LoadedProject, analysis: Analysis) -> dict[str, Any]:
    info = loaded.project.project
    return {
        "schema_version": SCHEMA_VERSION,
        "project": {
            "title": info.title,
            "revision": info.revision,
            "input_sha256": loaded.input_sha256,
            "measurements_sha256": loaded.measurements_sha256,
            "generator_version": __version__,
        },
        "diagnosis": None,
        "checklist": None,
        "prediction": None,
        "scaling": None,
        "cost": None,
        "energy": None,
        "reliability": None,
        "decisions": None,
        "findings": [],
    }


def _jsonable(value: Any) -> Any:
    """Infinity as the string "inf" (JSON has no infinity); NaN never leaves the analyses."""
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if math.isnan(value):
            raise ValueError("NaN in results")
        return value
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    return value


def dumps(document: dict[str, Any]) -> str:
    """Stable text: sorted keys, so two builds of one input are byte-identical."""
    return json.dumps(_jsonable(document), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
