"""A project's history (methods.md#a-projects-history): the first-parent git history of its project file and the
files it names, each revision analysed once and cached by the content hash of its inputs, and the prediction ledger.

Below the commands, as the build pipeline is: `reportgen history` and `reportgen.history()` both call `history()`.
Revisions are analysed in worker processes (one per core, `jobs`) and only their small records are kept, so memory
does not grow with them; a revision that cannot be built is a record with its one-line error, never the end of the
history.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import msgspec

from reportgen import collector, interrupts
from reportgen.analysis import WITHOUT_LEVERS
from reportgen.analysis.measured.accuracy import calibration_of
from reportgen.analysis.revisions.history import Record, coverage, ledger, missed, own_cases, record_of, unbuilt
from reportgen.errors import InputError, OutputError, UsageError, escaped, printable
from reportgen.files import open_regular, replace_file, shown_path
from reportgen.json_types import JsonRead
from reportgen.project.accuracy_table import DEFAULT_OWN_WEIGHT, AccuracyTable, OwnEvidence, shipped_table
from reportgen.project.measurements import MAX_CSV_BYTES
from reportgen.project.records import MAX_STORE_BYTES
from reportgen.project.revisions import (
    COMMIT_ID,
    GitObject,
    RevisionFiles,
    blob_contents,
    file_limit,
    files_named_in,
    names_in_bytes,
    objects_at,
    open_objects,
    run_git,
    stores_beside,
    stores_in,
)
from reportgen.project.spec import bidi_isolated
from reportgen.project.stdio import MAX_FILE_BYTES
from reportgen.version import __version__

DEFAULT_LAST = 100
MAX_LAST = 10_000
SCHEMA_VERSION = 1
RECORD_FORMAT = 5  # part of every cache key: a record of another shape is never read back


@dataclass(frozen=True)
class Commit:
    sha: str
    date: str  # ISO 8601, the commit's
    subject: str  # as git gives it (history.json); the pages show it inert (_inert)

    @property
    def label(self) -> str:
        return self.sha[:7]


@dataclass(frozen=True)
class HistoryOptions:
    rev: str | None = None  # A..B, or a single revision (its history up to it)
    last: int = DEFAULT_LAST
    cache: Path | None = None  # where records are cached (None: no cache)
    say: Callable[[str], None] | None = None  # told once when the cache cannot be written (the command prints it)
    jobs: int | None = None  # revisions built at a time in worker processes (None: analysing_processes())


# git's output is read as UTF-8 whatever the repository's i18n.logOutputEncoding says; its log never runs gpg (a
# repository's log.showSignature and gpg.program would run a program of its choosing) nor follows renames
# (log.follow would walk another file's history); every path it is given is literal (a CSV named "*" or ":(glob)x"
# is that file, not a pattern)
GIT_OPTIONS = ("-c", "i18n.logOutputEncoding=UTF-8", "-c", "log.showSignature=false", "-c", "log.follow=false",
               "--literal-pathspecs")
MAX_NAMED_PASSES = 8  # the names every revision named are gathered in passes until they stop growing
UNSETTLED_WORDS = (f"the files the revisions name were still changing after {MAX_NAMED_PASSES} passes: a commit that "
                   "changed only a file an older revision named may be missing")


def _git(top: Path, *arguments: str) -> str:
    return run_git(top, *GIT_OPTIONS, *arguments).decode("utf-8", "replace")


def _check(options: HistoryOptions) -> None:
    """The options as the command line gives them: through the Python API any value can arrive (`last=True` walked
    no revision and said nothing)."""
    if options.rev is not None and not isinstance(options.rev, str):
        raise UsageError(f"rev must be a revision range as text (A..B), got {options.rev!r}")
    if options.rev is not None and options.rev.startswith("-"):
        raise UsageError(f"{printable(options.rev)!r} is not a revision range (a revision never starts with '-')")
    if isinstance(options.last, bool) or not isinstance(options.last, int):
        raise UsageError(f"last must be a whole number of revisions, got {options.last!r}")
    if not 1 <= options.last <= MAX_LAST:
        raise UsageError(f"--last must be from 1 to {MAX_LAST:,}")
    if options.jobs is not None and (isinstance(options.jobs, bool) or not isinstance(options.jobs, int)
                                     or not 1 <= options.jobs <= MAX_JOBS_GIVEN):
        raise UsageError(f"-j must be a whole number from 1 to {MAX_JOBS_GIVEN}, got {options.jobs!r}")


def _repository(path: Path) -> tuple[Path, str]:
    """The repository's top folder and the project file's path in it. The top is git's output less its one line
    feed, as bytes: a folder whose name ends in a space or a line feed, or is not UTF-8, is that folder."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):  # a loop of symbolic links (RuntimeError on Python 3.11 and 3.12)
        raise UsageError(f"{shown_path(path)}: a loop of symbolic links") from None
    if resolved.is_dir():  # its parent's history would be walked for a "file" that is the folder: nothing, unsaid
        raise UsageError(f"{shown_path(path)}: a folder, not a project file (name the YAML file to walk)")
    folder = resolved.parent
    if not folder.is_dir():
        raise UsageError(f"{shown_path(path)}: no such folder")
    raw = run_git(folder, *GIT_OPTIONS, "rev-parse", "--show-toplevel")
    top = Path(os.fsdecode(raw[:-1] if raw.endswith(b"\n") else raw))
    try:
        return top, resolved.relative_to(top.resolve()).as_posix()
    except ValueError:
        raise UsageError(f"{shown_path(path)}: not inside the repository at {shown_path(top)}") from None


def _range(top: Path, rev: str | None) -> list[str]:
    """The revisions to walk as git resolves them (`B`, `^A`), each end a commit: a tree or a blob named with --rev
    walked nothing and said nothing. What git is then given is object ids, never the user's text."""
    text = "HEAD" if rev is None else rev
    ends = _git(top, "rev-parse", "--revs-only", "--end-of-options", text).split()
    if not ends or not all(re.fullmatch(rf"\^?(?:{COMMIT_ID.pattern})", end) for end in ends):
        raise UsageError(f"{printable(text)}: not a revision git knows (--rev takes A..B, or one revision)"
                         if rev is not None else "the repository has no commit yet")
    for end in ends:
        oid = end.removeprefix("^")
        try:
            _git(top, "rev-parse", "--verify", "--quiet", f"{oid}^{{commit}}")
        except UsageError:
            kind = _git(top, "cat-file", "-t", oid).strip()
            raise UsageError(f"{printable(text)}: names a {kind}, not a commit (--rev takes A..B of commits)") \
                from None
    return ends


def _shallow_start(top: Path, ends: list[str]) -> str | None:
    """Where a shallow clone's history starts (None: the repository has all of it): older revisions are not there
    to walk, which the history says rather than looking complete."""
    if _git(top, "rev-parse", "--is-shallow-repository").strip() != "true":
        return None
    roots = _git(top, "rev-list", "--first-parent", "--max-parents=0", "--end-of-options", *ends).split()
    return roots[0] if roots else None


def _beside(relative: str, name: str) -> str:
    return posixpath.normpath(posixpath.join(posixpath.dirname(relative), name))


def _log(top: Path, ends: list[str], paths: list[str], last: int) -> list[Commit]:
    """The first-parent commits that changed any of `paths`, newest first. Records are NUL-terminated (`-z`) and
    split on NUL only: a subject holding a line or paragraph separator (U+2028, \x85, \x1e) followed by a
    commit id never forges a revision, since git writes no NUL inside a record (a commit message's NUL ends it)."""
    out = _git(top, "log", "-z", "--first-parent", f"-n{last}", "--format=%H%x1f%cI%x1f%s", "--end-of-options",
               *ends, "--", *paths)
    found = []
    for record in out.split("\0"):
        sha, date, subject = [*record.split("\x1f", 2), "", ""][:3]
        if COMMIT_ID.fullmatch(sha):
            found.append(Commit(sha, date, subject[:200]))
    return found


@dataclass(frozen=True)
class _Walk:
    commits: list[Commit]  # oldest first
    files: dict[str, RevisionFiles]  # by commit: the project file and the files it names, as git's objects
    total: int  # the revisions there are in all, past --last too
    shallow_start: str | None  # where a shallow clone's history starts
    names_unsettled: bool  # the names still grew at the last pass: a commit to a file named later may be missing


def _walk(path: Path, top: Path, relative: str, ends: list[str], last: int, blobs: _Blobs) -> _Walk:
    """The revisions of the project file and of every file any of them named (methods.md#a-projects-history): a
    commit that changed a CSV only an earlier revision named changes that revision's inputs too. The names are
    gathered in passes, each reading the project file of the revisions found so far, until they stop growing."""
    named = {relative, *(_beside(relative, name) for name in (files_named_in(path) if path.is_file() else []))}
    projects: dict[str, GitObject | None] = {}
    found: list[Commit] = []
    unsettled = True
    for _ in range(MAX_NAMED_PASSES):
        found = _log(top, ends, sorted(named), last)
        new = [commit.sha for commit in found if commit.sha not in projects]
        projects.update(zip(new, objects_at([(sha, relative) for sha in new], cwd=top), strict=True))
        blobs.read_projects(projects[sha] for sha in new)
        more = named | {_beside(relative, name) for commit in found for name in blobs.names_of(projects[commit.sha])}
        if more == named:
            unsettled = False
            break
        named = more
    total = int(_git(top, "rev-list", "--first-parent", "--count", "--end-of-options", *ends, "--", *sorted(named))
                .strip() or 0)
    files = _files_of(found, projects, relative, top, blobs)
    return _Walk(list(reversed(found)), files, total, _shallow_start(top, ends), unsettled)


def _files_of(found: list[Commit], projects: dict[str, GitObject | None], relative: str, top: Path,
              blobs: _Blobs) -> dict[str, RevisionFiles]:
    """Each revision's project file and the objects of the files it names, beside it in that revision; the named
    files are read once each (one git process for all), for their content's hash."""
    names = {commit.sha: blobs.names_of(projects[commit.sha]) for commit in found}
    requests = [(sha, _beside(relative, name)) for sha, written in names.items() for name in written]
    at = dict(zip(requests, objects_at(requests, cwd=top), strict=True))
    blobs.read(at.values(), limit=MAX_CSV_BYTES, csv=True)
    # then the records stores each revision's runs CSV names: a service is judged from the requests it kept then
    names = {sha: (*written, *(store for name in written
                               for store in blobs.stores_of(name, at[sha, _beside(relative, name)])))
             for sha, written in names.items()}
    stores = [(sha, _beside(relative, name)) for sha, written in names.items() for name in written
              if (sha, _beside(relative, name)) not in at]
    at.update(zip(stores, objects_at(stores, cwd=top), strict=True))
    blobs.read((at[request] for request in stores), limit=MAX_STORE_BYTES)
    return {sha: RevisionFiles(relative, projects[sha], tuple((name, at[sha, _beside(relative, name)])
                                                                  for name in written))
            for sha, written in names.items()}


Value = TypeVar("Value")
MAX_CACHED_BYTES = 4 << 20  # a cache entry larger than any record is not read


class _Cache:
    """The history's cache folder (None: no cache). What it holds is read back as strictly as input: a file of
    another shape, or not a regular file, is rebuilt, never used. A folder that cannot be written is skipped (it only
    saves time), and said once."""

    def __init__(self, folder: Path | None, say: Callable[[str], None] | None) -> None:
        self.folder, self._say, self._writable = folder, say, folder is not None

    def read(self, name: str, kind: type[Value]) -> Value | None:
        if self.folder is None:
            return None
        try:
            with open_regular(self.folder / f"{name}.json") as handle:
                data = handle.read(MAX_CACHED_BYTES + 1)
            return msgspec.json.decode(data, type=kind, strict=True) if len(data) <= MAX_CACHED_BYTES else None
        except (OSError, msgspec.MsgspecError):
            return None

    def write(self, name: str, value: object) -> None:
        if self.folder is None or not self._writable:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            replace_file(self.folder / f"{name}.json", json.dumps(value, sort_keys=True).encode("utf-8"), sync=False)
        except (OSError, OutputError) as error:
            self._writable = False
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            if self._say is not None:
                self._say(f"the history cache {shown_path(self.folder)} cannot be written ({reason}): it is "
                          "skipped, so the next history analyses every revision again")


@dataclass
class _Blobs:
    """The blobs read this run, by object id: the hash of each one's bytes, and for a project file the names it
    names (parsed once per content, and kept in the cache). Each blob is read once, by id, however many revisions
    hold it."""

    top: Path
    cache: _Cache
    digests: dict[str, str] = field(default_factory=dict)
    names: dict[str, tuple[str, ...]] = field(default_factory=dict)
    stores: dict[str, tuple[str, ...]] = field(default_factory=dict)  # the records stores each CSV names

    def read(self, found: Iterable[GitObject | None], *, limit: int, csv: bool = False) -> None:
        """Each blob's hash; for a runs CSV (`csv`), the records stores it names too (a store's archive holds none)."""
        wanted = {blob.oid: blob for blob in _files_within(found, limit) if blob.oid not in self.digests}
        for blob, data in blob_contents(list(wanted.values()), cwd=self.top):
            self.digests[blob.oid] = hashlib.sha256(data).hexdigest()
            if csv:
                self.stores[blob.oid] = stores_in(data)

    def stores_of(self, name: str, found: GitObject | None) -> list[str]:
        """The records stores a named CSV read this run names, as paths beside the project file."""
        return stores_beside(name, self.stores.get(found.oid, ()) if found is not None else ())

    def read_projects(self, found: Iterable[GitObject | None]) -> None:
        wanted = {blob.oid: blob for blob in _files_within(found, MAX_FILE_BYTES) if blob.oid not in self.names}
        for blob, data in blob_contents(list(wanted.values()), cwd=self.top):
            digest = self.digests[blob.oid] = hashlib.sha256(data).hexdigest()
            self.names[blob.oid] = self._names(digest, data)

    def _names(self, digest: str, data: bytes) -> tuple[str, ...]:
        entry = f"names-{_hashed(__version__, digest)}"
        kept = self.cache.read(entry, list[str])
        if kept is None:
            kept = names_in_bytes(data, "project.yaml")
            self.cache.write(entry, kept)
        return tuple(kept)

    def names_of(self, project: GitObject | None) -> tuple[str, ...]:
        return self.names.get(project.oid, ()) if project is not None else ()

    def identity(self, found: GitObject | None, limit: int) -> str:
        """What a file gives a revision's cache key: the hash of its bytes, or why there are none to read."""
        if found is None:
            return "absent"
        if found.kind != "blob" or found.size > limit:
            return f"{found.kind} of {found.size} bytes"
        return self.digests.get(found.oid, f"unread {found.oid}")


def _files_within(found: Iterable[GitObject | None], limit: int) -> list[GitObject]:
    return [blob for blob in found if blob is not None and blob.kind == "blob" and blob.size <= limit]


def _hashed(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _cache_key(files: RevisionFiles, blobs: _Blobs) -> str:
    """A revision's inputs as one hash: the bytes of its project file and of each file it names (hashed as read, not
    git's object ids, which a repository's own object store could misstate), the project file's path, reportgen's
    version and the record's format. A revision of the same inputs as another (a revert) reads its record."""
    parts = [__version__, str(RECORD_FORMAT), files.path, blobs.identity(files.project, MAX_FILE_BYTES)]
    for name, found in files.named:
        parts += [name, blobs.identity(found, file_limit(name))]
    return _hashed(*parts)


def _one_line(error: Exception) -> str:
    """An error as a revision's record keeps it: its first line, its controls written as escapes."""
    text = str(error.problems[0]) if isinstance(error, InputError) and error.problems else str(error)
    return printable(text.splitlines()[0] if text.strip() else type(error).__name__)


def _cached(files: RevisionFiles, blobs: _Blobs) -> tuple[str, Record | None]:
    """A revision's cache key, and its record when the cache holds one. It is cached by its inputs' content
    (_cache_key), and its errors name the file, not the commit, so that a revision of the same inputs reads a record
    true of it."""
    key = f"record-{_cache_key(files, blobs)}"
    return key, blobs.cache.read(key, Record)


def _built(files: RevisionFiles, top: Path) -> tuple[Record, bool]:
    """A revision's record, built now, and whether it may be cached. The goal's levers are searched only where
    page 1's next action needs them (reportgen.analysis.page.page_one.needs_levers), so that every revision shows the
    action a build of it shows. Run in a worker process where several revisions are built at once."""
    from reportgen.revision_pipeline import analyse_source

    try:
        with open_objects(files, cwd=top, display=shown_path(files.path)) as source:
            loaded, analysis = analyse_source(source, skip=WITHOUT_LEVERS)
            return record_of(loaded.project, analysis), True
    except InputError as error:  # the revision's own content: the same next time, so cached
        return unbuilt(_one_line(error)), True
    except UsageError as error:  # a file git cannot give now (a damaged repository): not cached
        return unbuilt(_one_line(error)), False


PARALLEL_FROM = 8  # below this many revisions to build, one process builds them faster than forking workers
MAX_JOBS = 4
MAX_JOBS_GIVEN = 64  # what -j may ask for: more processes than that only exhaust the machine


def analysing_processes() -> int:
    """How many processes build revisions by default: one per core this process may use, at most MAX_JOBS."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(MAX_JOBS, cores))


def _build_all(wanted: list[RevisionFiles], top: Path, jobs: int) -> Iterator[tuple[Record, bool]]:
    """Each wanted revision's record, in order: built in `jobs` forked worker processes when there are enough of
    them, else here. Only the small records come back, so memory does not grow with the revisions."""
    if jobs < 2 or len(wanted) < PARALLEL_FROM or not hasattr(os, "fork"):
        for files in wanted:
            interrupts.check()
            yield _built(files, top)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    import reportgen.revision_pipeline  # noqa: F401  imported once, before the fork, not in every worker

    collector.set_aside()  # what lives now lives on in the workers: neither side walks it again
    executor = ProcessPoolExecutor(max_workers=min(jobs, len(wanted)), mp_context=multiprocessing.get_context("fork"),
                                   initializer=interrupts.as_worker)
    try:
        with interrupts.shut_down_after(executor):
            for built in executor.map(_built, wanted, [top] * len(wanted), chunksize=4):
                interrupts.check()
                yield built
    finally:
        collector.given_back()


def _records(walk: _Walk, top: Path, blobs: _Blobs, jobs: int) -> tuple[list[tuple[Commit, Record]], int]:
    """Each revision with its record, oldest first, and how many records were built now: the cache's first, then
    each set of inputs it does not hold built once (a revert in this walk reads the record built for the revision it
    reverts to), in `jobs` processes, and cached by this process alone."""
    keys: dict[str, str] = {}
    records: dict[str, Record] = {}
    for commit in walk.commits:
        keys[commit.sha], found = _cached(walk.files[commit.sha], blobs)
        if found is not None:
            records[commit.sha] = found
    wanted = {keys[commit.sha]: walk.files[commit.sha] for commit in walk.commits if commit.sha not in records}
    built: dict[str, Record] = {}
    for key, (record, cacheable) in zip(wanted, _build_all(list(wanted.values()), top, jobs), strict=True):
        built[key] = record
        if cacheable:
            blobs.cache.write(key, msgspec.to_builtins(record))
    kept = [(commit, records[commit.sha] if commit.sha in records else built[keys[commit.sha]])
            for commit in walk.commits]
    return kept, len(wanted)


def history(path: Path, options: HistoryOptions | None = None) -> JsonRead:
    """The history document (history.json): every revision's record, the ledger and each model's coverage."""
    options = options or HistoryOptions()
    _check(options)
    path = Path(path)
    top, relative = _repository(path)
    blobs = _Blobs(top, _Cache(options.cache, options.say))
    walk = _walk(path, top, relative, _range(top, options.rev), options.last, blobs)
    kept, built_now = _records(walk, top, blobs, analysing_processes() if options.jobs is None else options.jobs)
    table = shipped_table()
    rows = ledger([(commit.label, record) for commit, record in kept], table)
    # the newest built revision's predictions pooled with the project's graded ones (the others: the public cells)
    newest = next((index for index in range(len(kept) - 1, -1, -1) if kept[index][1].built), None)
    own = OwnEvidence(own_cases(rows), DEFAULT_OWN_WEIGHT, "this history")
    revisions = [{"commit": commit.sha, "label": commit.label, "date": commit.date, "subject": commit.subject,
                  **_graded(msgspec.to_builtins(record), record, table, own if index == newest else None)}
                 for index, (commit, record) in enumerate(kept)]
    accuracy = coverage(rows)
    return {
        "schema_version": SCHEMA_VERSION,
        "project": shown_path(relative),
        "total_revisions": walk.total,
        "capped": walk.total > len(walk.commits),
        "shallow_start": walk.shallow_start,  # a shallow clone: the commit its history starts at (null: whole)
        # the files the revisions name were still growing after MAX_NAMED_PASSES passes: a commit that changed only
        # a file named by a revision found last may be missing
        "names_unsettled": walk.names_unsettled,
        "built_now": built_now,
        "revisions": revisions,
        "ledger": [row.as_json() for row in rows],
        # per model: the share of graded predictions inside their interval (null without intervals)
        "coverage": {model: summary["coverage"] for model, summary in accuracy.items()},
        "accuracy": accuracy,  # per model: the graded predictions and their median |error|
        "findings": [{"code": "prediction-missed", "severity": "info",
                      "message": f"{row.measured_in} measured {row.nodes:g} nodes at {row.measured_s:.4g} s, outside "
                                 f"what {row.predicted_in} predicted with {row.model} ({row.predicted_s:.4g} s)"}
                     for row in missed(rows)],
    }


def _graded(document: JsonRead, record: Record, table: AccuracyTable | None, own: OwnEvidence | None) -> JsonRead:
    """A revision's record with each prediction's accuracy on published curves (and, for the newest, on the
    project's own graded predictions): methods.md#how-accurate-each-prediction-is."""
    largest = max((m.nodes for m in record.measured), default=0.0)
    for prediction in document.get("predictions", []):
        found = calibration_of(table, prediction["model"], prediction["nodes"] / largest, own=own) \
            if largest > 0 else None
        prediction["calibration"] = None if found is None else msgspec.to_builtins(found)
    return document


@dataclass(frozen=True)
class HistoryContext:
    """What history.html and history.md render. A test checks that the templates use nothing else."""

    project: str  # the project file's path in the repository
    title: str  # the newest built revision's title
    revisions: list[JsonRead]  # each revision's record, oldest first, with its speedups and design changes
    scales: list[float]  # every measured scale of any revision
    ledger: list[JsonRead]  # every prediction and its grade
    coverage: JsonRead  # per model: graded, coverage, median |error|
    findings: list[JsonRead]  # prediction-missed
    capped: bool  # --last left older revisions out
    total: int  # the revisions there are in all
    figures: JsonRead  # the timeline's frame, by key
    version: str
    paper: str = "a4"
    shallow_start: str | None = None  # a shallow clone: the label of the commit its history starts at
    # the names were still growing at the last pass (history.json names_unsettled): UNSETTLED_WORDS, else None
    names_unsettled: str | None = None


CHANGES_NAMED = 8  # design inputs a revision's row names before it counts the rest


def _input_changes(old: dict[str, str], new: dict[str, str]) -> list[tuple[str, str]]:
    """Every design input that changed, by its path ("hardware.network_bandwidth: 10 GB/s → 25 GB/s"), as the diff
    names them; the slots' choices are named by their slot above."""
    paths = sorted(path for path in set(old) | set(new)
                   if old.get(path) != new.get(path) and not path.startswith("design.slots."))
    named = [(path, f"{old.get(path, '(absent)')} → {new.get(path, '(absent)')}") for path in paths[:CHANGES_NAMED]]
    if len(paths) > CHANGES_NAMED:
        named.append(("and", f"{len(paths) - CHANGES_NAMED} more inputs"))
    return named


def _page_context(document: JsonRead) -> JsonRead:
    """What history.html and history.md read: the document, each revision's speedups by scale and what changed in
    its design since the revision built before it."""
    from reportgen.version import __version__ as version

    revisions = []
    previous: JsonRead | None = None
    for revision in document["revisions"]:
        speedups = {m["nodes"]: m["speedup"] for m in revision.get("measured") or ()}
        changes = []
        if revision.get("built") and previous is not None:
            for name in sorted(set(previous["slots"]) | set(revision["slots"])):
                old, new = previous["slots"].get(name), revision["slots"].get(name)
                if old != new:
                    was, now = ", ".join(old or ["none"]), ", ".join(new or ["none"])
                    changes.append((name.replace("_", " "), f"{was} → {now}"))
            changes += _input_changes(previous.get("design_inputs") or {}, revision.get("design_inputs") or {})
            if previous["design"] != revision["design"] and not changes:
                changes.append(("layout or baseline", "changed"))
        if revision.get("built"):
            previous = revision
        revisions.append({**revision, "subject": _inert(revision["subject"]), "speedups": speedups,
                          "changes": changes})
    built = [r for r in revisions if r.get("built")]
    scales = sorted({n for r in built for n in r["speedups"]})
    project = bidi_isolated(document["project"])
    title = (built[-1].get("title") if built else None) or project
    shallow = document.get("shallow_start")
    return {"project": project, "title": title, "revisions": revisions, "scales": scales,
            "ledger": document["ledger"], "coverage": document["accuracy"], "findings": document["findings"],
            "capped": document["capped"], "total": document["total_revisions"], "version": version,
            "shallow_start": shallow[:7] if shallow else None,
            "names_unsettled": UNSETTLED_WORDS if document["names_unsettled"] else None}


_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _inert(subject: str) -> str:
    """A commit's subject as the pages show it: its controls and line separators written as escapes, and its bidi
    controls isolated as a project's own text is (spec.bidi_isolated), so that an override (U+202E) in a subject
    cannot reverse the row, or the page, after it."""
    return bidi_isolated(escaped(subject, _CONTROLS))


def write_history(document: JsonRead, out_root: Path, formats: tuple[str, ...]) -> list[Path]:
    """history.json, history.md and history.html (with its timeline drawn) under OUT/history-<stem>/."""
    from reportgen.files import output_dir, write_files
    from reportgen.render.report import template_vars
    from reportgen.render.results import dumps

    files: dict[str, bytes] = {}
    fields = _page_context(document)
    if "json" in formats:
        files["history.json"] = dumps(document)
    if "md" in formats:
        from reportgen.render.report import render_markdown

        context = template_vars(HistoryContext(**fields, figures={}))
        files["history.md"] = render_markdown("history.md", context).encode("utf-8")
    if "html" in formats:
        from reportgen.figures import FigurePool, draw_figures
        from reportgen.figures.history import timeline
        from reportgen.render.report import Report, render_page

        job = timeline(fields["revisions"])
        jobs = [job] if job is not None else []
        drawings = draw_figures(jobs, pool=FigurePool(None)).svgs
        context = template_vars(HistoryContext(**fields, figures={j.frame.key: j.frame for j in jobs}))
        page = render_page("history.html", context, [j.frame for j in jobs])
        files["history.html"] = Report(page, drawings, 0).html()
    folder = output_dir(out_root, f"history-{Path(document['project']).stem}")
    interrupts.check()
    return write_files(folder, files)
