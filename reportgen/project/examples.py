"""The example projects that ship with reportgen (`reportgen init --example NAME`): inputs/ of a source checkout,
copied into the wheel as reportgen/inputs, as the templates are."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path


@cache
def examples_dir() -> Path:
    package = Path(__file__).resolve().parents[1]  # reportgen/
    for folder in (package / "inputs", package.parent / "inputs"):
        if folder.is_dir() and any(folder.glob("*.yaml")):
            return folder
    raise FileNotFoundError("reportgen's example projects are missing from this installation")


def example_names() -> tuple[str, ...]:
    return tuple(sorted(path.stem for path in examples_dir().glob("*.yaml")))


@dataclass(frozen=True)
class Example:
    name: str
    text: str  # the project file
    companions: dict[str, bytes]  # the CSV files it names, by the name it gives them


def example(name: str) -> Example:
    """An example project and the measurement files it names beside it (scaling.file, collectives_file)."""
    from reportgen.project.revisions import files_named_in  # here: `--help` lists the names without a YAML reader

    if name not in example_names():
        raise KeyError(name)
    path = examples_dir() / f"{name}.yaml"
    companions = {file: (examples_dir() / file).read_bytes() for file in files_named_in(path)}
    return Example(name, path.read_text(encoding="utf-8"), companions)
