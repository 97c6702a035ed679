"""A project's history (methods.md#a-projects-history): the first-parent git history of its project file and the
files it names, each revision analysed once and cached by the content hash of its inputs, and the prediction ledger.

Below the commands, as the build pipeline is: `reportgen history` and `reportgen.history()` both call `history()`.
Revisions are analysed one at a time and only their small records are kept, so memory does not grow with them; a
revision that cannot be built is a record with its one-line error, never the end of the history.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, cast

import msgspec

from reportgen import interrupts
from reportgen.analysis import WITHOUT_LEVERS
from reportgen.analysis.history import Record, coverage, ledger, missed, record_of, unbuilt
from reportgen.errors import InputError, UsageError
from reportgen.files import replace_file, shown_path
from reportgen.project.revisions import files_named_in, named_in_revisions, open_revision, run_git
from reportgen.version import __version__

DEFAULT_LAST = 100
MAX_LAST = 10_000
SCHEMA_VERSION = 1
RECORD_FORMAT = 4  # part of every cache key: a record of another shape is never read back


@dataclass(frozen=True)
class Commit:
    sha: str
    date: str  # ISO 8601, the commit's
    subject: str

    @property
    def label(self) -> str:
        return self.sha[:7]


@dataclass(frozen=True)
class HistoryOptions:
    rev: str | None = None  # A..B, or a single revision (its history up to it)
    last: int = DEFAULT_LAST
    cache: Path | None = None  # where records are cached (None: no cache)


# git's output is read as UTF-8 whatever the repository's i18n.logOutputEncoding says, and every path it is given is
# literal (a CSV named "*" or ":(glob)x" is that file, not a pattern)
GIT_OPTIONS = ("-c", "i18n.logOutputEncoding=UTF-8", "--literal-pathspecs")
MAX_NAMED_PASSES = 8  # the names every revision named are gathered in passes until they stop growing


def _git(top: Path, *arguments: str) -> str:
    return run_git(top, *GIT_OPTIONS, *arguments).decode("utf-8", "replace")


def _repository(path: Path) -> tuple[Path, str]:
    """The repository's top folder and the project file's path in it. The top is git's output less its one line
    feed, as bytes: a folder whose name ends in a space or a line feed, or is not UTF-8, is that folder."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):  # a loop of symbolic links (RuntimeError on Python 3.11 and 3.12)
        raise UsageError(f"{shown_path(path)}: a loop of symbolic links") from None
    folder = resolved.parent
    if not folder.is_dir():
        raise UsageError(f"{shown_path(path)}: no such folder")
    raw = run_git(folder, *GIT_OPTIONS, "rev-parse", "--show-toplevel")
    top = Path(os.fsdecode(raw[:-1] if raw.endswith(b"\n") else raw))
    try:
        return top, resolved.relative_to(top.resolve()).as_posix()
    except ValueError:
        raise UsageError(f"{shown_path(path)}: not inside the repository at {shown_path(top)}") from None


def commits(path: Path, options: HistoryOptions) -> tuple[list[Commit], int, Path, str]:
    """The first-parent commits that changed the project file or a file it names, oldest first, at most `last`
    (the newest); the number there are in all; the repository's top; the file's path in it."""
    if options.rev is not None and options.rev.startswith("-"):
        raise UsageError(f"{options.rev!r} is not a revision range (a revision never starts with '-')")
    if not 1 <= options.last <= MAX_LAST:
        raise UsageError(f"--last must be from 1 to {MAX_LAST:,}")
    top, relative = _repository(path)
    spec = [options.rev or "HEAD"]
    named = {relative, *(_beside(relative, name) for name in (files_named_in(path) if path.is_file() else []))}
    found: list[Commit] = []
    for _ in range(MAX_NAMED_PASSES):  # a CSV only an earlier revision named changes that revision's record too
        found = _log(top, spec, sorted(named), options.last)
        at = named_in_revisions([commit.sha for commit in found], relative, cwd=top)
        more = named | {_beside(relative, name) for names in at.values() for name in names}
        if more == named:
            break
        named = more
    paths = ["--", *sorted(named)]
    total = int(_git(top, "rev-list", "--first-parent", "--count", "--end-of-options", *spec, *paths).strip() or 0)
    return list(reversed(found)), total, top, relative


def _beside(relative: str, name: str) -> str:
    return posixpath.normpath(posixpath.join(posixpath.dirname(relative), name))


def _log(top: Path, spec: list[str], paths: list[str], last: int) -> list[Commit]:
    """The first-parent commits that changed any of `paths`, newest first. Records are NUL-terminated (`-z`) and
    split on NUL only: a subject holding a line or paragraph separator (U+2028, \\x85, \\x1e) followed by a
    commit id never forges a revision, since git writes no NUL inside a record."""
    out = _git(top, "log", "-z", "--first-parent", f"-n{last}", "--format=%H%x1f%cI%x1f%s", "--end-of-options",
               *spec, "--", *paths)
    found = []
    for record in out.split("\0"):
        sha, date, subject = [*record.split("\x1f", 2), "", ""][:3]
        if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha):
            found.append(Commit(sha, date, subject[:200]))
    return found


def _cache_key(folder: Path) -> str:
    """The content hash of a revision's inputs (every file in its scratch folder) and reportgen's version."""
    digest = hashlib.sha256(f"{__version__}\0{RECORD_FORMAT}".encode())
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(os.fsencode(file.relative_to(folder).as_posix()) + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:32]


def _index_key(commit: Commit, relative: str) -> str:
    """A commit never changes: (commit, path, version) names the content without reading it."""
    text = f"{__version__}\0{RECORD_FORMAT}\0{commit.sha}\0{relative}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


# A cached record is read back as strictly as a project file: every field of its type (methods.md#a-projects-history),
# times and node counts positive and finite where the ledger divides by them; anything else is rebuilt, never used
Positive = Annotated[float, msgspec.Meta(gt=0)]


class _Action(msgspec.Struct, forbid_unknown_fields=True):
    code: str
    text: str
    rank: int | None
    kind: str | None


class _AtPlan(msgspec.Struct, forbid_unknown_fields=True):
    regime: str | None
    time_s: float | None
    cost: float | None
    met: bool | None
    time_low: float | None
    time_high: float | None


class _Measured(msgspec.Struct, forbid_unknown_fields=True):
    nodes: Positive
    time_s: Positive | None
    speedup: float | None


class _Prediction(msgspec.Struct, forbid_unknown_fields=True):
    nodes: Positive
    model: str
    time_s: Positive
    low: float | None
    high: float | None


class _Record(msgspec.Struct, forbid_unknown_fields=True):
    built: bool
    error: str | None
    title: str | None
    verdict: str | None
    state: str | None
    why: str | None
    next_action: _Action | None
    met_at_plan: bool | None
    at_plan: list[_AtPlan]
    time_limit_s: float | None
    optimum: str | None
    p_star: float | None
    alpha_s: float | None
    beta_s: float | None
    sigma: float | None
    kappa: float | None
    measured: list[_Measured]
    predictions: list[_Prediction]
    design: str
    design_inputs: dict[str, str]
    slots: dict[str, list[str]]


def _read(cache: Path | None, name: str) -> bytes | None:
    if cache is None:
        return None
    try:
        return (cache / f"{name}.json").read_bytes()
    except OSError:
        return None


def _cached_index(cache: Path | None, name: str) -> str | None:
    data = _read(cache, name)
    try:
        key = msgspec.json.decode(data, type=str) if data is not None else None
    except msgspec.MsgspecError:
        return None
    return key if key is not None and re.fullmatch(r"[0-9a-f]{32}", key) else None


def _cached_record(cache: Path | None, name: str) -> Record | None:
    """A record as stored, or None when there is none or it is not one this version writes (it is rebuilt)."""
    data = _read(cache, name)
    try:
        record = msgspec.json.decode(data, type=_Record, strict=True) if data is not None else None
    except msgspec.MsgspecError:
        return None
    return cast(Record, msgspec.to_builtins(record)) if record is not None else None


def _store(cache: Path | None, name: str, value: object) -> None:
    """Keep a record or an index entry; a cache that cannot be written is skipped (it only saves time)."""
    if cache is None:
        return
    try:
        cache.mkdir(parents=True, exist_ok=True)
        replace_file(cache / f"{name}.json", json.dumps(value, sort_keys=True).encode("utf-8"), sync=False)
    except OSError:
        return


def _analyse(commit: Commit, relative: str, top: Path, cache: Path | None) -> tuple[Record, bool]:
    """A revision's record, and whether it was built now (False: read from the cache). The goal's levers are
    searched only where page 1's next action needs them (reportgen.analysis.page_one.needs_levers), so that every
    revision shows the action a build of it shows."""
    from reportgen.revision_pipeline import analyse_source

    index = _cached_index(cache, f"index-{_index_key(commit, relative)}")
    if index is not None:
        record = _cached_record(cache, f"record-{index}")
        if record is not None:
            return record, False
    try:
        with open_revision(commit.sha, relative, cwd=top, display=f"{commit.label}:{shown_path(relative)}") as source:
            key = _cache_key(source.path.parent)
            record = _cached_record(cache, f"record-{key}")
            if record is None:
                try:
                    loaded, analysis = analyse_source(source, skip=WITHOUT_LEVERS)
                    record = record_of(loaded.project, analysis)
                except InputError as error:
                    record = unbuilt(str(error.problems[0]) if error.problems else str(error))
                _store(cache, f"record-{key}", record)
    except (InputError, UsageError) as error:  # a blob past the limits, a file git cannot give
        return unbuilt(str(error).splitlines()[0]), True
    _store(cache, f"index-{_index_key(commit, relative)}", key)
    return record, True


def history(path: Path, options: HistoryOptions | None = None) -> dict[str, Any]:
    """The history document (history.json): every revision's record, the ledger and each model's coverage."""
    options = options or HistoryOptions()
    found, total, top, relative = commits(Path(path), options)
    revisions = []
    built_now = 0
    for commit in found:
        interrupts.check()
        record, fresh = _analyse(commit, relative, top, options.cache)
        built_now += fresh
        revisions.append({"commit": commit.sha, "label": commit.label, "date": commit.date,
                          "subject": commit.subject, **record})
    rows = ledger([(revision["label"], revision) for revision in revisions])
    accuracy = coverage(rows)
    return {
        "schema_version": SCHEMA_VERSION,
        "project": shown_path(relative),
        "total_revisions": total,
        "capped": total > len(found),
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



@dataclass(frozen=True)
class HistoryContext:
    """What history.html and history.md render. A test checks that the templates use nothing else."""

    project: str  # the project file's path in the repository
    title: str  # the newest built revision's title
    revisions: list[dict[str, Any]]  # each revision's record, oldest first, with its speedups and design changes
    scales: list[float]  # every measured scale of any revision
    ledger: list[dict[str, Any]]  # every prediction and its grade
    coverage: dict[str, Any]  # per model: graded, coverage, median |error|
    findings: list[dict[str, Any]]  # prediction-missed
    capped: bool  # --last left older revisions out
    total: int  # the revisions there are in all
    figures: dict[str, Any]  # the timeline's frame, by key
    version: str
    paper: str = "a4"


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


def _page_context(document: dict[str, Any]) -> dict[str, Any]:
    """What history.html and history.md read: the document, each revision's speedups by scale and what changed in
    its design since the revision built before it."""
    from reportgen.version import __version__ as version

    revisions = []
    previous: dict[str, Any] | None = None
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
        revisions.append({**revision, "speedups": speedups, "changes": changes})
    built = [r for r in revisions if r.get("built")]
    scales = sorted({n for r in built for n in r["speedups"]})
    title = (built[-1].get("title") if built else None) or document["project"]
    return {"project": document["project"], "title": title, "revisions": revisions, "scales": scales,
            "ledger": document["ledger"], "coverage": document["accuracy"], "findings": document["findings"],
            "capped": document["capped"], "total": document["total_revisions"], "version": version}


def write_history(document: dict[str, Any], out_root: Path, formats: tuple[str, ...]) -> list[Path]:
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
