"""The example projects that ship with reportgen (`reportgen init --example NAME`): inputs/ of a source checkout,
copied into the wheel as reportgen/inputs, as the templates are."""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from reportgen.errors import UsageError
from reportgen.files import check_output_file, create_file, make_folder
from reportgen.project.records import stores_named


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
    companions: dict[str, bytes]  # the CSV files it names, by the name it gives them, and their records stores


def example(name: str) -> Example:
    """An example project and the measurement files it names beside it (scaling.file, collectives_file)."""
    from reportgen.project.revisions import files_named_in  # here: `--help` lists the names without a YAML reader

    if name not in example_names():
        raise KeyError(name)
    path = examples_dir() / f"{name}.yaml"
    companions = {file: (examples_dir() / file).read_bytes() for file in files_named_in(path)}
    for file, data in list(companions.items()):  # a runs CSV's records stores travel with it
        for store in stores_named(data.decode("utf-8", "replace")):
            named = str(Path(file).parent / store)
            companions[named] = (examples_dir() / named).read_bytes()
    return Example(name, path.read_text(encoding="utf-8"), companions)


# A yaml-language-server modeline whose schema path is relative: in inputs/ it names the checkout's
# build/schema.json, which is nowhere beside a project `init` writes (an editor then reports a schema it cannot load)
_CHECKOUT_MODELINE = re.compile(r"^# yaml-language-server: \$schema=(?![a-z]+://)\S+[ \t]*(\r\n|\n)?", re.MULTILINE)
SCHEMA_NOTE = ("# Editors with yaml-language-server check this file as you type: run `reportgen schema > schema.json`"
               " beside it\n# and make its first line `# yaml-language-server: $schema=schema.json`")


def as_written_by_init(text: str) -> str:
    """A shipped example as `init` writes it: the modeline naming the checkout's schema becomes the note on how to
    make one that exists (docs/project-file.md#editor-support); everything else as shipped."""
    def note(modeline: re.Match[str]) -> str:
        end = modeline.group(1) or "\n"  # the file's own line end
        return SCHEMA_NOTE.replace("\n", end) + end

    return _CHECKOUT_MODELINE.sub(note, text)


def create_all(files: dict[Path, bytes], option: str = "init") -> None:
    """Create every file of `files`, none of which may exist yet, all or none: each target is checked before
    anything is written (a dangling symbolic link is a name taken, a path through a file cannot be one), and a
    failure midway removes what was made, the folders created for it included."""
    for target in files:
        _check_new(target, option)
    made: list[Path] = []
    try:
        for folder in dict.fromkeys(target.parent for target in files):
            made.extend(_missing_folders(folder))
            make_folder(folder)
        for target, data in files.items():
            try:
                create_file(target, data)
            except FileExistsError:  # appeared since the check
                raise UsageError(f"{target} exists; choose another path (init never overwrites)") from None
            made.append(target)
    except BaseException:
        for path in reversed(made):
            with contextlib.suppress(OSError):
                if path.is_dir() and not path.is_symlink():
                    path.rmdir()
                else:
                    path.unlink()
        raise


def _check_new(target: Path, option: str) -> None:
    if os.path.lexists(target):
        what = "a symbolic link" if target.is_symlink() else "a folder" if target.is_dir() else "a file"
        raise UsageError(f"{target} exists ({what}); init never overwrites: choose another path or folder, nothing "
                         "was written")
    check_output_file(target, option)


def _missing_folders(folder: Path) -> list[Path]:
    """The folders make_folder will create for `folder`, outermost first."""
    missing: list[Path] = []
    while not os.path.lexists(folder) and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing[::-1]
