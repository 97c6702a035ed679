"""Where a project file comes from: a path, or `REV:PATH` read from git (with the CSV it names, if any)."""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from reportgen.errors import InputError, UsageError
from reportgen.project.spec import locate, scalar_text
from reportgen.project.yaml_source import compose, read_text


@dataclass(frozen=True)
class Source:
    path: Path  # a readable file (a temporary copy for a git revision)
    display: str  # as the user named it: "inputs/example.yaml" or "HEAD~1:inputs/example.yaml"
    stem: str  # for output names: "example" or "HEAD~1-example"


@contextmanager
def open_source(spec: str, *, cwd: Path | None = None) -> Iterator[Source]:
    """A project file named by a path or by git's REV:PATH; temporary copies are removed afterwards."""
    plain = Path(spec)
    if plain.exists() or ":" not in spec:
        yield Source(plain, spec, plain.stem)
        return
    revision, _, inside = spec.partition(":")
    with tempfile.TemporaryDirectory(prefix="reportgen-rev-") as folder:
        target = Path(folder) / PurePosixPath(inside).name
        target.write_bytes(_git_show(revision, inside, cwd))
        csv_name = _csv_named_in(target)
        if csv_name is not None and not PurePosixPath(csv_name).is_absolute():
            beside = str(PurePosixPath(inside).parent / csv_name)
            with_csv = Path(folder) / csv_name
            if with_csv.resolve().is_relative_to(Path(folder).resolve()):
                with_csv.parent.mkdir(parents=True, exist_ok=True)
                with_csv.write_bytes(_git_show(revision, beside, cwd))
        safe_revision = re.sub(r"[^A-Za-z0-9._~^-]+", "-", revision)
        yield Source(target, spec, f"{safe_revision}-{PurePosixPath(inside).stem}")


def _git_show(revision: str, path: str, cwd: Path | None) -> bytes:
    try:
        result = subprocess.run(["git", "show", f"{revision}:{path}"], cwd=cwd, capture_output=True, check=False,
                                timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise UsageError(f"cannot run git to read {revision}:{path}: {error}") from None
    if result.returncode != 0:
        reason = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"{revision}:{path}: {reason[-1] if reason else 'not found in git'}")
    return result.stdout


def _csv_named_in(path: Path) -> str | None:
    """scaling.file, read with the loader's guarded composer (the loader validates it properly later)."""
    try:
        root = compose(read_text(path, path.name)[0], path.name)
    except InputError:
        return None
    node = locate(root, "scaling.file")
    return scalar_text(node) if node is not root else None
