"""Where a project file comes from: a path, or git's `REV:PATH`, read with every file it names from that revision.

A revision is user text handed to git, so it is never let near git's options: it is resolved to a commit with
`git rev-parse --end-of-options` (a revision that starts with "-" is refused before even that), and every blob is
then read as `<commit sha>:<path>`, which cannot start with "-". A blob's size is asked first (`git cat-file -s`),
so that a file past reportgen's limits is refused without being read. Paths follow git's own rule: `REV:path` is
relative to the top of the repository, `REV:./path` to the current folder; the CSV files a project names
(scaling.file, prediction.collectives_file) are read from the same revision, beside the project file.

`reportgen history` reads its revisions by object id instead (`objects_at`, `blob_contents`, `open_objects`), many
at a time, never through a path the file system could resolve (methods.md#a-projects-history).
"""

from __future__ import annotations

import io
import os
import posixpath
import re
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import yaml
from yaml.nodes import MappingNode, Node

from reportgen import wording
from reportgen.errors import InputError, Problem, UsageError
from reportgen.files import shown_path
from reportgen.project.measurements import MAX_CSV_BYTES
from reportgen.project.records import MAX_STORE_BYTES, stores_named
from reportgen.project.spec import file_name_text, locate, scalar_text
from reportgen.project.stdio import MAX_FILE_BYTES
from reportgen.project.yaml_source import compose, read_text

GIT_SECONDS = 30
COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # SHA-1 or SHA-256
NAMED_FILES = ("scaling.file", "prediction.collectives_file")  # files a project names, read beside it
STORE_SUFFIX = ".npz"  # a records store a runs CSV names (methods.md#the-records-store)


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
        if not plain.exists() and _is_revision(spec, cwd):  # `diff r1 r2`: revisions, where files were meant
            raise UsageError(f"{spec}: no such file, but a git revision: name the project file in it as "
                             f"{spec}:PATH (for example {spec}:inputs/example.yaml; ./PATH is relative to this "
                             "folder)")
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


def _is_revision(text: str, cwd: Path | None) -> bool:
    """Whether git names a commit by the text (never read as an option; False outside a repository)."""
    if not text or text.startswith("-") or "\n" in text:
        return False
    try:
        run_git(cwd, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{text}^{{commit}}")
    except UsageError:
        return False
    return True


@dataclass(frozen=True)
class GitObject:
    """An object of git's database, as `git cat-file --batch-check` describes it."""

    oid: str
    kind: str  # "blob" (a file), "tree" (a folder), "commit" (a submodule)
    size: int


@dataclass(frozen=True)
class RevisionFiles:
    """A project file and the files it names at one commit, each as its object in git's database (None: the commit
    has none there): what `open_objects` reads, and what history's cache key is made of."""

    path: str  # the project file's path in the repository
    project: GitObject | None
    named: tuple[tuple[str, GitObject | None], ...]  # each name as the project writes it, and the object beside it


def objects_at(requests: Sequence[tuple[str, str]], *, cwd: Path | None) -> list[GitObject | None]:
    """The object at each (commit, path), for commits git has already resolved (full ids), None where the commit has
    none: one `git cat-file --batch-check` for them all. A path holding a line feed, which would end its request's
    line, is resolved alone (`git rev-parse`) and then described by its object id like the rest."""
    names = [_object_name(commit, path, cwd) for commit, path in requests]
    asked = [name for name in names if name is not None]
    described = dict(zip(asked, _describe(asked, cwd=cwd), strict=True))
    return [described[name] if name is not None else None for name in names]


def _object_name(commit: str, path: str, cwd: Path | None) -> bytes | None:
    """How `git cat-file --batch-check` is asked for the object at a path of a commit: `<commit>:<path>`, or the
    object's id where the path holds a line feed (None: the commit has no such path)."""
    if not COMMIT_ID.fullmatch(commit):
        raise UsageError(f"{commit!r} is not a commit id")
    name = commit.encode() + b":" + os.fsencode(path)
    if b"\n" not in name:
        return name
    try:
        result = subprocess.run(["git", "rev-parse", "--verify", "--quiet", name], cwd=cwd, capture_output=True,
                                check=False, timeout=GIT_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise UsageError(f"cannot run git: {error}") from None
    oid = result.stdout.strip()
    return oid if result.returncode == 0 and COMMIT_ID.fullmatch(oid.decode("ascii", "replace")) else None


def _describe(names: Sequence[bytes], *, cwd: Path | None) -> list[GitObject | None]:
    """Each object's id, kind and size (None: git has none of that name); the names hold no line feed, so git
    answers each on one line of its own."""
    if not names:
        return []
    out = run_git(cwd, "cat-file", "--batch-check", input=b"".join(name + b"\n" for name in names),
                  timeout=_batch_seconds(len(names)))
    lines = out.decode("ascii", "replace").split("\n")
    return [_described(lines[index]) if index < len(lines) else None for index in range(len(names))]


def _described(line: str) -> GitObject | None:
    fields = line.split(" ")
    if len(fields) != 3 or not COMMIT_ID.fullmatch(fields[0]) or not fields[2].isdigit():
        return None  # "<name> missing", or a name git finds ambiguous
    return GitObject(fields[0], fields[1], int(fields[2]))


def blob_contents(blobs: Sequence[GitObject], *, cwd: Path | None) -> Iterator[tuple[GitObject, bytes]]:
    """Each blob's bytes, read by object id in one `git cat-file --batch` and handed on one at a time, so that memory
    holds one file whatever the number of revisions; a blob git no longer has is left out."""
    if not blobs:
        return
    with tempfile.TemporaryFile() as requests:  # a file, not a pipe: git's answers never wait on our writing
        requests.write(b"".join(blob.oid.encode() + b"\n" for blob in blobs))
        requests.seek(0)
        try:
            process = subprocess.Popen(["git", "cat-file", "--batch"], cwd=cwd, stdin=requests,
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError as error:
            raise UsageError(f"cannot run git: {error}") from None
        try:
            for blob in blobs:
                data = _next_blob(process, blob)
                if data is not None:
                    yield blob, data
        finally:
            process.kill()
            process.wait()
            assert process.stdout is not None
            process.stdout.close()


def _next_blob(process: subprocess.Popen[bytes], blob: GitObject) -> bytes | None:
    """`git cat-file --batch`'s next answer: a line "<oid> <kind> <size>", the bytes and a line feed (None for
    "<oid> missing"). Git is given GIT_SECONDS for each object (a partial clone fetches one it lacks), however long
    the reader takes between them."""
    stream = process.stdout
    assert stream is not None
    watchdog = threading.Timer(GIT_SECONDS, process.kill)
    watchdog.start()
    try:
        header = stream.readline()
        found = _described(header.decode("ascii", "replace").rstrip("\n"))
        data = stream.read(found.size) if found is not None else b""
        ended = stream.read(1) if found is not None else b"\n"
    finally:
        watchdog.cancel()
        watchdog.join()  # gone before anything forks: a process forked with threads alive can deadlock
    if not header or ended != b"\n":
        raise UsageError(f"git stopped giving the repository's objects (more than {GIT_SECONDS} s for one, or a "
                         "damaged repository)")
    return data if found is not None and found.oid == blob.oid and len(data) == found.size else None


def _batch_seconds(count: int) -> float:
    """How long one `git cat-file --batch-check` may take: GIT_SECONDS for each 1,000 objects it describes."""
    return GIT_SECONDS * max(1.0, count / 1000)


@contextmanager
def open_objects(files: RevisionFiles, *, cwd: Path | None, display: str) -> Iterator[Source]:
    """A project file of a commit and the files it names, read by object id from git's database, never through a
    path the file system could resolve: a working-tree file or link named `<sha>:p.yaml` cannot stand in for a
    revision. The copies are removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="reportgen-rev-") as folder:
        target = Path(folder) / PurePosixPath(files.path).name
        target.write_bytes(_file_bytes(files.project, cwd, display, limit=MAX_FILE_BYTES))
        for name, found in files.named:
            beside = Path(folder) / name
            if found is None or found.kind != "blob" or not beside.resolve().is_relative_to(Path(folder).resolve()):
                continue  # the loader says that the file is missing, or that its path leaves the project's folder
            data = _file_bytes(found, cwd, str(PurePosixPath(display).parent / name), limit=file_limit(name))
            try:
                beside.parent.mkdir(parents=True, exist_ok=True)
                beside.write_bytes(data)
            except OSError:  # a name through a file ("p.yaml/x.csv"): no such file, as the loader will say
                continue
        yield Source(target, display, PurePosixPath(files.path).stem)


def _file_bytes(found: GitObject | None, cwd: Path | None, shown: str, *, limit: int) -> bytes:
    """A blob's bytes, read by its id; refused without reading it when it is not a file or larger than `limit`."""
    if found is None:
        raise UsageError(f"{shown}: not in this revision")
    if found.kind != "blob":
        raise UsageError(f"{shown}: {_KINDS.get(found.kind, 'a ' + found.kind)} in this revision, not a file")
    if found.size > limit:
        raise _too_large(shown, found.size, limit)
    return run_git(cwd, "cat-file", "blob", found.oid, shown=shown)


_KINDS = {"tree": "a folder", "commit": "a submodule"}


def _too_large(shown: str, size: int, limit: int) -> InputError:
    return InputError([Problem(shown, 1, 1, "", f"the file is larger than {wording.limit(limit)} ({size:,} bytes "
                               "in git): refused without reading it")])


@contextmanager
def _revision_copy(repository: _Repository, commit: str, path: str, revision: str) -> Iterator[Path]:
    """A temporary copy of the project file at a commit and of each file it names, beside it as in the commit."""
    with tempfile.TemporaryDirectory(prefix="reportgen-rev-") as folder:
        target = Path(folder) / PurePosixPath(path).name
        target.write_bytes(repository.blob(commit, path, f"{revision}:{path}", limit=MAX_FILE_BYTES))
        def copy(name: str, *, optional: bool) -> bytes | None:
            beside = Path(folder) / name
            if not beside.resolve().is_relative_to(Path(folder).resolve()):
                return None  # the loader refuses a path that leaves the project's folder, and says so
            wanted = posixpath.normpath(posixpath.join(posixpath.dirname(path), name))
            if optional and not repository.holds(commit, wanted):
                return None  # a store the commit lacks: the build says its records are missing
            data = repository.blob(commit, wanted, f"{revision}:{wanted}", limit=file_limit(name))
            try:
                beside.parent.mkdir(parents=True, exist_ok=True)
                beside.write_bytes(data)
            except OSError:  # a name through a file ("p.yaml/x.csv"): no such file, as the loader will say
                return None
            return data

        for name in files_named_in(target):
            data = copy(name, optional=False)
            for store in stores_beside(name, stores_in(data or b"")):
                copy(store, optional=True)
        yield target


def run_git(cwd: Path | None, *arguments: str, shown: str | None = None, input: bytes | None = None,
            timeout: float = GIT_SECONDS) -> bytes:
    """git's output (fed `input`), within `timeout`; a UsageError when git cannot run or fails: git's last line of
    complaint, naming `shown` (what was being read) where there is one."""
    try:
        result = subprocess.run(["git", *arguments], cwd=cwd, input=input, capture_output=True, check=False,
                                timeout=timeout)
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
        if not COMMIT_ID.fullmatch(sha):
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

    def holds(self, commit: str, path: str) -> bool:
        """Whether the commit has a file at the path."""
        (found,) = objects_at([(commit, path)], cwd=self.cwd)
        return found is not None and found.kind == "blob"

    def blob(self, commit: str, path: str, shown: str, *, limit: int) -> bytes:
        """The file's bytes at the commit, refused without reading it when it is larger than `limit`."""
        size = self._git("cat-file", "-s", f"{commit}:{path}", shown=shown).decode("ascii", "replace").strip()
        if not size.isdigit():
            raise UsageError(f"{shown}: git gives no size for it")
        if int(size) > limit:
            raise _too_large(shown, int(size), limit)
        return self._git("cat-file", "blob", f"{commit}:{path}", shown=shown)


def files_named_in(path: Path) -> list[str]:
    """The relative files the project names (scaling.file, prediction.collectives_file), read with the loader's
    guarded composer (the loader validates them properly later)."""
    try:
        return _names_in(compose(read_text(path, path.name)[0], path.name))
    except InputError:
        return []


def stores_in(data: bytes) -> tuple[str, ...]:
    """The records stores a runs CSV's bytes name, relative to its folder: a revision's service is judged from the
    requests it kept then, not from their summary columns alone."""
    if b"# reportgen records:" not in data:
        return ()
    return tuple(store for store in stores_named(data.decode("utf-8", "replace")) if store.endswith(STORE_SUFFIX))


def stores_beside(name: str, stores: Iterable[str]) -> list[str]:
    """Stores named by the CSV a project names `name`, as paths beside the project file."""
    return [posixpath.normpath(posixpath.join(posixpath.dirname(name), store)) for store in stores]


def file_limit(name: str) -> int:
    """The largest file a project's revision may name: a records store is an archive of requests, any other a CSV."""
    return MAX_STORE_BYTES if name.endswith(STORE_SUFFIX) else MAX_CSV_BYTES


def names_in_bytes(data: bytes, name: str) -> list[str]:
    """files_named_in for a project file's bytes (a blob read from git): none when they are not UTF-8 YAML. A history
    reads every revision's names before it walks them, so libyaml's event parser reads them where it can be sure
    (no alias, anchor, tag or second document); else the guarded composer does, as the loader will."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return []
    fast = _names_from_events(text)
    if fast is not None:
        return fast
    try:
        return _names_in(compose(text, name))
    except InputError:
        return []


_NULLS = frozenset(("", "~", "null", "Null", "NULL"))  # a plain scalar YAML reads as null (spec.scalar_text: none)


@dataclass
class _Frame:
    """A collection open in the event stream: a mapping waits for a key or a value; `named` is the section or the
    field its value is."""

    mapping: bool
    key: str | None = None
    expect_key: bool = True
    named: str | None = None
    seen: set[str] = field(default_factory=set)
    is_key: bool = False  # a complex key (a collection): the mapping then waits for its value


def _names_from_events(text: str) -> list[str] | None:
    """The names `_names_in` reads from the composed document, read from libyaml's events instead (its parser keeps
    a stack and does not recurse); None where it cannot be sure or is not installed: the caller composes."""
    parser = getattr(yaml, "CSafeLoader", None)
    if parser is None:
        return None
    wanted = {tuple(field_path.split(".", 1)) for field_path in NAMED_FILES}
    found: dict[str, str | None] = {}
    stack: list[_Frame] = []
    documents = 0
    try:
        for event in yaml.parse(io.StringIO(text), Loader=parser):
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    return None
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None or \
                    getattr(event, "tag", None) is not None:
                return None
            if isinstance(event, yaml.CollectionEndEvent):
                if not stack.pop().is_key:
                    _after_node(stack)
            elif isinstance(event, yaml.ScalarEvent | yaml.CollectionStartEvent):
                parent = stack[-1] if stack else None
                scalar = event.value if isinstance(event, yaml.ScalarEvent) else None
                plain = isinstance(event, yaml.ScalarEvent) and bool(event.implicit[0])
                if parent is not None and parent.mapping and parent.expect_key:  # a key: a complex one names nothing
                    parent.key = scalar if scalar is not None and not (plain and scalar in _NULLS) else None
                    parent.expect_key = False
                    if isinstance(event, yaml.CollectionStartEvent):
                        stack.append(_Frame(isinstance(event, yaml.MappingStartEvent), is_key=True))
                    continue
                named = _value_named(stack)
                if isinstance(event, yaml.ScalarEvent):
                    if named is not None and named not in found:  # the first of a key written twice, as `locate`
                        found[named] = None if plain and event.value in _NULLS else event.value
                    _after_node(stack)
                else:
                    if named is not None and named not in found:
                        found[named] = None
                    stack.append(_Frame(isinstance(event, yaml.MappingStartEvent),
                                        named=named if named in {section for section, _ in wanted} else None))
    except yaml.YAMLError:
        return None
    names = []
    for section, key in sorted(wanted, key=lambda pair: NAMED_FILES.index(".".join(pair))):
        text_ = found.get(f"{section}.{key}")
        name = text_.strip() if text_ is not None else None
        if name and not PurePosixPath(name).is_absolute():
            names.append(name)
    return names


def _value_named(stack: list[_Frame]) -> str | None:
    """What a value at this point of the document is: a section of the root mapping ("scaling"), or a field of a
    section's mapping ("scaling.file"); None elsewhere."""
    frame = stack[-1] if stack else None
    key = frame.key if frame is not None and frame.mapping else None
    if frame is None or key is None or key in frame.seen:  # a key written twice: its first value is the one read
        return None
    frame.seen.add(key)
    if len(stack) == 1:
        return key
    if len(stack) == 2 and stack[0].mapping and frame.named is not None:
        return f"{frame.named}.{key}"
    return None


def _after_node(stack: list[_Frame]) -> None:
    """A node ended: the mapping that holds it waits for its next key."""
    if stack and stack[-1].mapping:
        stack[-1].expect_key = True


def _names_in(root: Node) -> list[str]:
    names = []
    for named in NAMED_FILES:
        section, _, key = named.partition(".")
        owner = locate(root, section)
        node = next((value for name, value in owner.value if scalar_text(name) == key), None) \
            if isinstance(owner, MappingNode) and owner is not root else None
        text = file_name_text(node) if node is not None else None
        if text and not PurePosixPath(text).is_absolute():
            names.append(text)
    return names
