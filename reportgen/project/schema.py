"""`reportgen schema`: the draft-07 JSON Schema of the project file, derived from the model's field specs."""

from __future__ import annotations

import json

from reportgen.json_types import JsonObject
from reportgen.project.model import Project
from reportgen.project.spec import struct_schema
from reportgen.version import __version__


def project_schema() -> JsonObject:
    schema = struct_schema(Project)
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": f"https://reportgen.invalid/schema/project-{__version__}.json",
        "title": "reportgen project file",
        **schema,
    }


def schema_text() -> str:
    return json.dumps(project_schema(), indent=2, ensure_ascii=False) + "\n"

