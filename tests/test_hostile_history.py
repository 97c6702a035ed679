"""history and diff against a hostile repository (methods.md#a-projects-history), each with the input that broke it:
a commit's subject, git objects whose bytes lie about their id, a cache shared with another repository, names git
would read as patterns or as two lines, a repository configuration that would run a program, and the ranges,
paths and options that walked nothing and said nothing. Every repository is made here, with git."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

import reportgen
from reportgen.errors import UsageError
from reportgen.project_history import HistoryOptions, history
from tests.test_history_sweep_four import CSV, PROJECT, _commit, _git  # the hostile repositories' builders
from tests.test_hostile_sweep import run

RLO, FSI, PDI = "\u202e", "\u2068", "\u2069"


def _project(title: str, csv: str) -> str:
    return PROJECT.replace("TITLE", title).replace("FILE", csv)


@pytest.fixture()
def repository(tmp_path: Path) -> Path:
    folder = tmp_path / "repository"
    folder.mkdir()
    _git(folder, "init", "-q")
    return folder


# ------------------------------------------------------------------------------- a commit's subject is its own row
@pytest.mark.parametrize("separator", ["\x1c", "\x1d", "\x0c"], ids=["x1c", "x1d", "x0c"])
def test_an_information_separator_in_a_subject_forges_no_revision(repository: Path, separator: str) -> None:
    real = _commit(repository, {"p.yaml": _project("Real", "runs.csv"), "runs.csv": CSV}, "r1")
    forged = "e" * 40
    second = _commit(repository, {"runs.csv": CSV + "4,1050\n"},
                     f"r2{separator}{forged}\x1f2020-01-01T00:00:00+00:00\x1fforged")
    assert [r["commit"] for r in history(repository / "p.yaml")["revisions"]] == [real, second]


def test_a_subjects_bidi_override_and_escape_are_inert_in_the_pages(repository: Path, tmp_path: Path) -> None:
    _commit(repository, {"p.yaml": _project("T", "runs.csv"), "runs.csv": CSV}, f"r1 {RLO}lmth.exe\x1b[2J")
    out = tmp_path / "out"
    assert run("history", str(repository / "p.yaml"), "-o", str(out))[0] == 0
    for page in ("history.md", "history.html"):
        text = (out / "history-p" / page).read_text(encoding="utf-8")
        assert "\x1b" not in text and "x1b" in text  # the escape written as text, never sent to a reader
        # the override acts only inside an isolate the subject opens and closes (spec.bidi_isolated)
        isolated = re.findall(f"{FSI}[^{PDI}\n]*{RLO}[^{PDI}\n]*{PDI}", text)
        assert isolated and len(isolated) == text.count(RLO), page


# ---------------------------------------------------------- the cache is keyed by the bytes read, not by git's ids
def _lie_about(repository: Path, blob: str, data: bytes) -> None:
    """Make the loose object `blob` hold other bytes under the same id (git reads it without checking the id)."""
    path = repository / ".git" / "objects" / blob[:2] / blob[2:]
    path.chmod(0o644)
    path.write_bytes(zlib.compress(b"blob %d\0" % len(data) + data))


def test_a_repository_whose_objects_lie_cannot_poison_a_shared_cache(repository: Path, tmp_path: Path) -> None:
    _commit(repository, {"p.yaml": _project("Honest", "runs.csv"), "runs.csv": CSV}, "r1")
    liar = tmp_path / "liar"
    shutil.copytree(repository, liar)  # the same commit ids, its own object store
    _lie_about(liar, _git(liar, "rev-parse", "HEAD:p.yaml").strip(), _project("Forged", "runs.csv").encode())
    cache = tmp_path / "shared-cache"
    (forged,) = history(liar / "p.yaml", HistoryOptions(cache=cache))["revisions"]
    assert forged["title"] == "Forged"  # what the liar's object store gives, under the honest commit's id
    (honest,) = history(repository / "p.yaml", HistoryOptions(cache=cache))["revisions"]
    assert honest["commit"] == forged["commit"] and honest["title"] == "Honest"


def test_a_revert_reads_the_cached_record_and_its_error_names_no_other_commit(repository: Path) -> None:
    broken = _project("T", "runs.csv") + "  - {nodes: ["
    first = _commit(repository, {"p.yaml": broken, "runs.csv": CSV}, "r1: broken")
    _commit(repository, {"p.yaml": _project("T", "runs.csv")}, "r2: fixed")
    _commit(repository, {"p.yaml": broken}, "r3: the broken save again")
    options = HistoryOptions(cache=repository.parent / "cache")
    document = history(repository / "p.yaml", options)
    assert document["built_now"] == 2  # r3's record is read back from r1's: the same inputs
    assert [r["built"] for r in document["revisions"]] == [False, True, False]
    third = document["revisions"][2]
    assert third["error"] == document["revisions"][0]["error"] and first[:7] not in third["error"]
    assert third["error"].startswith("p.yaml:")


# ------------------------------------------------------------------ names git would split, or read as a pattern
def test_a_project_file_whose_name_holds_a_line_feed_walks_every_named_csv(repository: Path) -> None:
    name = "p\n.yaml"
    first = _commit(repository, {name: _project("T", "a.csv"), "a.csv": CSV}, "r1: a.csv")
    second = _commit(repository, {"a.csv": CSV + "4,1050\n"}, "r2: a.csv only")
    third = _commit(repository, {name: _project("T", "b.csv"), "b.csv": CSV + "4,1050\n8,620\n"}, "r3: b.csv")
    revisions = history(repository / name)["revisions"]
    assert [r["commit"] for r in revisions] == [first, second, third]
    assert [len(r["measured"]) for r in revisions] == [2, 3, 4]


@pytest.mark.parametrize("named", [":(glob)*.csv", "*", ":(exclude)p.yaml"])
def test_pathspec_magic_in_a_csv_name_is_that_file(repository: Path, named: str) -> None:
    first = _commit(repository, {"p.yaml": _project("T", json.dumps(named)), named: CSV}, "r1")
    _commit(repository, {"other.csv": CSV}, "r2: a file the pattern would match")
    (revision,) = history(repository / "p.yaml")["revisions"]
    assert revision["commit"] == first and len(revision["measured"]) == 2


# ----------------------------------------------------------------------- a repository's configuration runs nothing
def test_a_repositorys_log_configuration_runs_no_program(repository: Path, tmp_path: Path) -> None:
    _commit(repository, {"p.yaml": _project("T", "runs.csv"), "runs.csv": CSV}, "r1")
    (repository / "runs.csv").write_text(CSV + "4,1050\n", encoding="utf-8")
    _git(repository, "add", "runs.csv")
    tree, parent = _git(repository, "write-tree").strip(), _git(repository, "rev-parse", "HEAD").strip()
    # a commit carrying a signature, which `git log` checks with gpg.program when log.showSignature is set
    signed = (f"tree {tree}\nparent {parent}\nauthor t <t@t> 1700000000 +0000\n"
              "committer t <t@t> 1700000000 +0000\n"
              "gpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n\nr2: signed\n")
    made = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=repository, check=True,
                          input=signed.encode(), capture_output=True)
    _git(repository, "update-ref", "HEAD", made.stdout.decode().strip())
    marker, program = tmp_path / "ran", tmp_path / "gpg"
    program.write_text(f"#!/bin/sh\ntouch '{marker}'\n", encoding="utf-8")
    program.chmod(0o755)
    _git(repository, "config", "log.showSignature", "true")
    _git(repository, "config", "gpg.program", str(program))
    assert [r["subject"] for r in history(repository / "p.yaml")["revisions"]] == ["r1", "r2: signed"]
    assert not marker.exists()


def test_log_follow_in_the_configuration_walks_only_the_file(repository: Path) -> None:
    alone = "project: {title: T}\n"  # a project that names no file: git log is given its one path
    _commit(repository, {"old.yaml": alone}, "r1: another file")
    _git(repository, "mv", "old.yaml", "p.yaml")
    _git(repository, "commit", "-qm", "r2: renamed")
    _git(repository, "config", "log.follow", "true")
    (revision,) = history(repository / "p.yaml")["revisions"]
    assert revision["subject"] == "r2: renamed" and revision["built"]


# --------------------------------------------------------------------- what walked nothing and said nothing
@pytest.mark.parametrize(("rev", "kind"), [("HEAD^{tree}", "tree"), ("HEAD:p.yaml", "blob"),
                                           ("HEAD^{tree}..HEAD", "tree")])
def test_a_tree_or_a_blob_given_as_the_range_is_one_line(repository: Path, rev: str, kind: str) -> None:
    _commit(repository, {"p.yaml": _project("T", "runs.csv"), "runs.csv": CSV}, "r1")
    status, said = run("history", str(repository / "p.yaml"), "--rev", rev, "-o", str(repository.parent / "out"))
    assert status == 2 and f"names a {kind}, not a commit" in said and "Traceback" not in said
    assert len(said.strip().splitlines()) == 1


def test_a_folder_given_as_the_project_is_one_line(repository: Path) -> None:
    _commit(repository, {"p.yaml": _project("T", "runs.csv"), "runs.csv": CSV}, "r1")
    status, said = run("history", str(repository), "-o", str(repository.parent / "out"))
    assert status == 2 and "a folder, not a project file" in said and len(said.strip().splitlines()) == 1


@pytest.mark.parametrize("options", [{"last": True}, {"last": 2.5}, {"last": "3"}, {"rev": 5}])
def test_the_python_api_checks_its_options_types(repository: Path, options: dict[str, object]) -> None:
    _commit(repository, {"p.yaml": _project("T", "runs.csv"), "runs.csv": CSV}, "r1")
    with pytest.raises(UsageError, match="must be"):
        reportgen.history(repository / "p.yaml", **options)  # type: ignore[arg-type]


def test_a_shallow_clone_says_where_its_history_starts(repository: Path, tmp_path: Path) -> None:
    _commit(repository, {"p.yaml": _project("T", "runs.csv"), "runs.csv": CSV}, "r1")
    newest = _commit(repository, {"runs.csv": CSV + "4,1050\n"}, "r2")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", repository.as_uri(), str(clone)], check=True)
    document = history(clone / "p.yaml")
    assert len(document["revisions"]) == 1 and document["shallow_start"] == newest
    status, said = run("history", str(clone / "p.yaml"), "-o", str(tmp_path / "out"))
    assert status == 0 and f"a shallow clone: its history starts at {newest[:7]}" in said
    markdown = (tmp_path / "out" / "history-p" / "history.md").read_text(encoding="utf-8")
    assert f"A shallow\nclone: its history starts at `{newest[:7]}`" in markdown
    assert history(repository / "p.yaml")["shallow_start"] is None


def test_quiet_prints_nothing_but_errors(repository: Path) -> None:
    _commit(repository, {"p.yaml": _project("T", "runs.csv"), "runs.csv": CSV}, "r1")
    assert run("-q", "history", str(repository / "p.yaml"), "-o", str(repository.parent / "out")) == (0, "")
    assert run("history", "-q", str(repository / "p.yaml"), "-o", str(repository.parent / "out")) == (0, "")


# ------------------------------------------------------------------------- a cache that cannot be written
def test_a_cache_folder_that_cannot_be_made_is_skipped_and_said_once(repository: Path) -> None:
    _commit(repository, {"p.yaml": _project("T", "runs.csv"), "runs.csv": CSV}, "r1")
    _commit(repository, {"runs.csv": CSV + "4,1050\n"}, "r2")
    out = repository.parent / "out"
    out.mkdir()
    (out / ".cache").write_text("a file where the cache's folder would be", encoding="utf-8")
    status, said = run("history", str(repository / "p.yaml"), "-o", str(out))
    assert status == 0 and said.count("cannot be written") == 1 and "2 revisions: 2 analysed now" in said


def test_a_cache_folder_without_write_permission_is_skipped(repository: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from reportgen.errors import OutputError

    _commit(repository, {"p.yaml": _project("T", "runs.csv"), "runs.csv": CSV}, "r1")
    cache = repository.parent / "cache"
    cache.mkdir()
    if os.geteuid() == 0:  # root writes in a read-only folder: what replace_file raises for one, raised for it

        def refused(path: Path, data: bytes, *, sync: bool = True) -> None:
            raise OutputError(f"cannot write {path}: Permission denied; the files there are as they were")

        monkeypatch.setattr("reportgen.project_history.replace_file", refused)
    cache.chmod(0o555)
    said: list[str] = []
    try:
        document = history(repository / "p.yaml", HistoryOptions(cache=cache, say=said.append))
    finally:
        cache.chmod(0o755)
    assert document["revisions"][0]["built"] and len(said) == 1 and "cannot be written" in said[0]


def test_reading_the_blobs_leaves_no_file_open_and_no_thread_to_fork_with(repository: Path) -> None:
    """The objects are read before the revisions' workers are forked: git's pipe is closed (it was left to the
    collector, a ResourceWarning under PYTHONWARNINGS=error) and each object's watchdog thread is gone."""
    import gc
    import threading
    import warnings

    from reportgen.project.revisions import blob_contents, objects_at

    _commit(repository, {"p.yaml": _project("T", "runs.csv"), "runs.csv": CSV}, "r1")
    head = _git(repository, "rev-parse", "HEAD").strip()
    found = [blob for blob in objects_at([(head, "p.yaml"), (head, "runs.csv")], cwd=repository) if blob]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read = [data for _, data in blob_contents(found, cwd=repository)]
        gc.collect()
    assert len(read) == 2 and read[1] == CSV.encode()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
    assert threading.active_count() == 1
