"""Where a project file comes from: a path, or git's `REV:PATH`, read with every file it names from that revision.

A revision is user text handed to git, so it is never let near git's options: it is resolved to a commit with
`git rev-parse --end-of-options` (a revision that starts with "-" is refused before even that), and every blob is
then read as `<commit sha>:<path>`, which cannot start with "-". A blob's size is asked first (`git cat-file -s`),
so that a file past reportgen's limits is refused without being read. Paths follow git's own rule: `REV:path` is
relative to the top of the repository, `REV:./path` to the current folder; the CSV files a project names
(scaling.file, prediction.collectives_file) are read from the same revision, beside the project file.
"""

from __future__ import annotations

import os
import posixpath
import re
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from yaml.nodes import MappingNode

from reportgen import wording
from reportgen.errors import InputError, Problem, UsageError
from reportgen.files import shown_path
from reportgen.project.measurements import MAX_CSV_BYTES
from reportgen.project.spec import locate, scalar_text
from reportgen.project.stdio import MAX_FILE_BYTES
from reportgen.project.yaml_source import compose, read_text

GIT_SECONDS = 30
NAMED_FILES = ("scaling.file", "prediction.collectives_file")  # files a project names, read beside it


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
        yield Source(plain, shown_path(spec), plain.stem)
        return
    revision, _, inside = spec.partition(":")
    if not inside.strip():
        raise UsageError(f"{spec}: names no file after the revision; write REV:PATH, e.g. HEAD~1:inputs/example.yaml")
    repository = _Repository(cwd)
    commit = repository.commit(revision)
    path = repository.path_in(inside, spec)
    safe_revision = re.sub(r"[^A-Za-z0-9._~^-]+", "-", revision)
    with _revision_copy(repository, commit, path, revision) as target:
        yield Source(target, shown_path(spec), f"{safe_revision}-{PurePosixPath(path).stem}")


@contextmanager
def open_revision(commit: str, path: str, *, cwd: Path | None, display: str) -> Iterator[Source]:
    """The project file at `path` of a commit git has already resolved (a full SHA), read by object from git's
    database, never through a file the working tree could hold: a working-tree file named `<sha>:p.yaml` (or a link
    so named) cannot stand in for the revision."""
    if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", commit):
        raise UsageError(f"{commit!r} is not a commit id")
    with _revision_copy(_Repository(cwd), commit, path, commit[:7]) as target:
        yield Source(target, display, f"{commit[:7]}-{PurePosixPath(path).stem}")


def named_in_revisions(commits: Sequence[str], path: str, *, cwd: Path | None) -> dict[str, list[str]]:
    """The files the project file names at each commit (scaling.file, prediction.collectives_file), read by object
    in two git processes for all of them (`cat-file --batch-check` for the sizes, `--batch` for the files within
    reportgen's limit); a commit whose file is missing or too large names none."""
    if not commits or "\n" in path:
        return {}
    wanted = b"".join(f"{commit}:".encode() + os.fsencode(path) + b"\n" for commit in commits)
    sizes = _batch(cwd, "--batch-check", wanted).decode("utf-8", "replace").split("\n")
    readable = [commit for commit, line in zip(commits, sizes, strict=False)
                if len(fields := line.split(" ")) == 3 and fields[1] == "blob" and fields[2].isdigit()
                and int(fields[2]) <= MAX_FILE_BYTES]
    out = _batch(cwd, "--batch", b"".join(f"{commit}:".encode() + os.fsencode(path) + b"\n" for commit in readable))
    named: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="reportgen-rev-") as folder:
        target = Path(folder) / "project.yaml"
        position = 0
        for commit in readable:
            header_end = out.index(b"\n", position)
            size = int(out[position:header_end].split(b" ")[2])
            target.write_bytes(out[header_end + 1:header_end + 1 + size])
            named[commit] = files_named_in(target)
            position = header_end + 1 + size + 1  # the content, then a line feed
    return named


def _batch(cwd: Path | None, mode: str, requests: bytes) -> bytes:
    """git cat-file in batch mode, fed `requests` (one object name a line)."""
    try:
        result = subprocess.run(["git", "cat-file", mode], cwd=cwd, input=requests, capture_output=True, check=False,
                                timeout=GIT_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise UsageError(f"cannot run git: {error}") from None
    if result.returncode != 0:
        reason = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(reason[-1] if reason else "git cat-file failed")
    return result.stdout


@contextmanager
def _revision_copy(repository: _Repository, commit: str, path: str, revision: str) -> Iterator[Path]:
    """A temporary copy of the project file at a commit and of each file it names, beside it as in the commit."""
    with tempfile.TemporaryDirectory(prefix="reportgen-rev-") as folder:
        target = Path(folder) / PurePosixPath(path).name
        target.write_bytes(repository.blob(commit, path, f"{revision}:{path}", limit=MAX_FILE_BYTES))
        for name in files_named_in(target):
            beside = Path(folder) / name
            if not beside.resolve().is_relative_to(Path(folder).resolve()):
                continue  # the loader refuses a path that leaves the project's folder, and says so
            wanted = posixpath.normpath(posixpath.join(posixpath.dirname(path), name))
            data = repository.blob(commit, wanted, f"{revision}:{wanted}", limit=MAX_CSV_BYTES)
            try:
                beside.parent.mkdir(parents=True, exist_ok=True)
                beside.write_bytes(data)
            except OSError:  # a name through a file ("p.yaml/x.csv"): no such file, as the loader will say
                continue
        yield target


def run_git(cwd: Path | None, *arguments: str, shown: str | None = None) -> bytes:
    """git's output, within GIT_SECONDS; a UsageError when git cannot run or fails: git's last line of complaint,
    naming `shown` (what was being read) where there is one."""
    try:
        result = subprocess.run(["git", *arguments], cwd=cwd, capture_output=True, check=False, timeout=GIT_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise UsageError(f"cannot run git{f' to read {shown}' if shown else ''}: {error}") from None
    if result.returncode != 0:
        reason = result.stderr.decode("utf-8", "replace").strip().splitlines()
        if shown is None:
            raise UsageError(reason[-1] if reason else "git failed")
        raise UsageError(f"{shown}: {reason[-1] if reason else 'not found in git'}")
    return result.stdout


@dataclass(frozen=True)
class _Repository:
    cwd: Path | None

    def _git(self, *arguments: str, shown: str) -> bytes:
        return run_git(self.cwd, *arguments, shown=shown)

    def commit(self, revision: str) -> str:
        """The revision as a commit's SHA; refused if it could be read as an option."""
        if not revision:  # ":p.yaml": git's own syntax for the index, which reportgen does not read
            raise UsageError("no revision before the ':' (write REV:PATH, such as HEAD~1:p.yaml; a file whose name "
                             "starts with ':' is ./:p.yaml)")
        if revision.startswith("-"):
            raise UsageError(f"{revision!r} is not a revision (a revision never starts with '-')")
        out = self._git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}",
                        shown=revision)
        sha = out.decode("ascii", "replace").strip()
        if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha):
            raise UsageError(f"{revision}: not a commit git knows")
        return sha

    def path_in(self, inside: str, shown: str) -> str:
        """The path from the top of the repository: git's `./` and `../` forms are relative to the current
        folder, any other form to the top."""
        if inside.startswith(("./", "../")) or inside in (".", ".."):
            prefix = self._git("rev-parse", "--show-prefix", shown=shown).decode("utf-8", "replace").strip()
            inside = prefix + inside
        path = posixpath.normpath(inside)
        if path.startswith("../") or path in ("..", ".") or path.startswith("/"):
            raise UsageError(f"{shown}: the path leaves the repository")
        return path

    def blob(self, commit: str, path: str, shown: str, *, limit: int) -> bytes:
        """The file's bytes at the commit, refused without reading it when it is larger than `limit`."""
        size = self._git("cat-file", "-s", f"{commit}:{path}", shown=shown).decode("ascii", "replace").strip()
        if not size.isdigit():
            raise UsageError(f"{shown}: git gives no size for it")
        if int(size) > limit:
            raise InputError([Problem(shown, 1, 1, "", f"the file is larger than {wording.limit(limit)} "
                                      f"({int(size):,} bytes in git): refused without reading it")])
        return self._git("cat-file", "blob", f"{commit}:{path}", shown=shown)


def files_named_in(path: Path) -> list[str]:
    """The relative files the project names (scaling.file, prediction.collectives_file), read with the loader's
    guarded composer (the loader validates them properly later)."""
    try:
        root = compose(read_text(path, path.name)[0], path.name)
    except InputError:
        return []
    names = []
    for field in NAMED_FILES:
        section, _, key = field.partition(".")
        owner = locate(root, section)
        node = next((value for name, value in owner.value if scalar_text(name) == key), None) \
            if isinstance(owner, MappingNode) and owner is not root else None
        text = scalar_text(node) if node is not None else None
        if text and not PurePosixPath(text).is_absolute():
            names.append(text)
    return names
