"""The starter project that `reportgen init` writes, generated from the field specs in reportgen.project.model.

Every field of the format is in it, in the model's order, with its one line of documentation: the fields a first
project needs are written live with their example values (one coherent project: data-parallel training of a 1.3B
model on 8-GPU nodes), the others commented out for the user to fill in. One source with the loader, the JSON
Schema and the project-file reference, so the starter cannot leave a field out or describe it differently.
"""

from __future__ import annotations

import re

from reportgen.project.model import Project
from reportgen.project.spec import Items, Section, Spec, spec_fields, starter_fields

COMMENT_COLUMN = 46  # where the documentation comment starts
HEADER = """\
# A reportgen project file. Check it with `reportgen check FILE`, build it with `reportgen build FILE`.
# Quantities are text with units ("20 TFLOP/s", "800 GB/s", "10 us", "56 g/kWh"); GB is 10^9 bytes, GiB 2^30.
# Only `project` is required; each other section adds a part of the report, which says what is missing.
# A field or section after `# ` is left out: remove the `# ` (keeping the indentation) and give your value.
# Where a profiled step's time, FLOPs, bytes and network bytes come from (torch.profiler, FlopCounterMode, Nsight
# Compute, rocprof, nccl-tests, iostat), each with a snippet: docs/profiling.md.
# Editors with yaml-language-server validate as you type after `reportgen schema > schema.json` and the line:
# yaml-language-server: $schema=schema.json
"""
_PLAIN = re.compile(r"^[\w .,;/()+*^µ'’-]*$")  # text YAML reads back as the same string
_SPECIAL_START = tuple("-?:,[]{}#&*!|>'\"%@`")


def starter_project() -> str:
    lines: list[str] = []
    live = starter_fields(Project)
    for name, spec, required in spec_fields(Project):
        _field(lines, name, spec, indent="", comments=() if required or name in live else (0,), overrides={})
        lines.append("")
    return HEADER + "\n" + "\n".join(lines).rstrip() + "\n"


def _field(lines: list[str], name: str, spec: Spec, *, indent: str, comments: tuple[int, ...],
           overrides: dict[str, str], bullet: bool = False) -> None:
    """One field at `indent`: a value on its line, or a mapping (or a list of one mapping) with its fields below.
    `comments` are the columns where a `# ` goes: a section left out, and within it a field left out of that."""
    key = ("- " if bullet else "") + name
    section = spec if isinstance(spec, Section) else spec.item if isinstance(spec, Items) else None
    if isinstance(section, Section):
        lines.append(_line(indent, comments, f"{key}:", spec.doc or (section.cls.__doc__ or "").strip()))
        inner = indent + ("  " if bullet else "") + "  "
        live = starter_fields(section.cls)
        for index, (child, child_spec, required) in enumerate(spec_fields(section.cls)):
            first_of_item = isinstance(spec, Items) and index == 0  # a list's item starts with "- "
            child_indent = inner[:-2] if first_of_item else inner
            left_out = not required and child not in live
            _field(lines, child, child_spec, indent=child_indent,
                   comments=(*comments, len(child_indent)) if left_out else comments,
                   overrides=dict(section.examples), bullet=first_of_item)
        return
    value = overrides.get(name) or spec.example_text()
    lines.append(_line(indent, comments, f"{key}: {_scalar(value)}", spec.doc))


def _line(indent: str, comments: tuple[int, ...], text: str, doc: str) -> str:
    line = indent + text
    for column in sorted(set(comments), reverse=True):
        line = line[:column] + "# " + line[column:]
    return f"{line.ljust(COMMENT_COLUMN - 1)} # {doc}" if doc else line


def _scalar(text: str) -> str:
    """A value as YAML reads it back: plain when it can be, else quoted."""
    if (text.startswith("[") and text.endswith("]")) or (_PLAIN.match(text) and not text.startswith(_SPECIAL_START)):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
