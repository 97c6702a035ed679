"""`reportgen diff REV:PATH`: every file a project names read from the same revision, git's `./` form honoured, and
a revision never read as one of git's options; a blob past the limits refused without being read."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from reportgen.commands.cli import main

AUTHOR = ("-c", "user.email=a@b", "-c", "user.name=a")
PROJECT = """project: {title: T, revision: REVISION}
prediction: {t_comp: 1 s, alpha: 8 us, beta: 1 ms, collectives_file: collectives.csv}
scaling: {file: runs.csv}
pricing: {node_hour: 10 USD}
"""


def git(folder: Path, *arguments: str) -> None:
    subprocess.run(["git", *arguments], cwd=folder, check=True, capture_output=True)


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """The tutorial's layout: the project and its CSV files in a folder of the repository, two commits."""
    design = tmp_path / "design"
    design.mkdir()
    (design / "p.yaml").write_text(PROJECT.replace("REVISION", "r1"))
    (design / "runs.csv").write_text("nodes,time [s]\n1,100\n2,60\n4,40\n")
    (design / "collectives.csv").write_text("nodes,time [ms]\n2,3\n4,5\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, *AUTHOR, "add", ".")
    git(tmp_path, *AUTHOR, "commit", "-qm", "r1")
    (design / "runs.csv").write_text("nodes,time [s]\n1,100\n2,55\n4,30\n")
    (design / "collectives.csv").write_text("nodes,time [ms]\n2,3\n4,7\n")
    (design / "p.yaml").write_text(PROJECT.replace("REVISION", "r2"))
    git(tmp_path, *AUTHOR, "commit", "-qam", "r2")
    (design / "runs.csv").write_text("nodes,time [s]\n1,100\n2,50\n4,25\n")  # in the working tree only
    return tmp_path


def diff_in(folder: Path, *arguments: str) -> tuple[int, dict[str, object] | None]:
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        out = folder / "out"
        status = main(["diff", "-o", str(out), "--format", "json", "-q", *arguments])
    finally:
        os.chdir(cwd)
    found = sorted(out.glob("*/diff.json")) if status == 0 else []
    return status, json.loads(found[-1].read_text()) if found else None


def changed(document: dict[str, object]) -> dict[str, tuple[object, object]]:
    return {i["path"]: (i["old"], i["new"]) for i in document["inputs"]}  # type: ignore[index, union-attr]


def test_every_file_the_project_names_comes_from_the_revision(repository: Path) -> None:
    status, document = diff_in(repository, "HEAD~1:design/p.yaml", "HEAD:design/p.yaml")
    assert status == 0 and document is not None
    inputs = changed(document)
    # HEAD~1 against HEAD, not the working tree: 60 → 55 s at 2 nodes, and the collective at 4 nodes 5 → 7 ms
    assert inputs["scaling.runs[nodes=2].time"] == ("60 s", "55 s")
    assert inputs["prediction.collectives[nodes=4].time"] == ("5 ms", "7 ms")


def test_the_dot_slash_form_is_relative_to_the_current_folder(repository: Path) -> None:
    status, document = diff_in(repository / "design", "HEAD~1:./p.yaml", "p.yaml")
    assert status == 0 and document is not None
    inputs = changed(document)
    assert inputs["scaling.runs[nodes=2].time"] == ("60 s", "50 s")  # HEAD~1 against the working tree


def test_a_revision_is_never_read_as_an_option(repository: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = repository / "written-by-git"
    status, _ = diff_in(repository, "--", f"--output={target}:design/p.yaml", "design/p.yaml")
    assert status == 2 and not target.exists()
    assert "never starts with '-'" in capsys.readouterr().err


def test_a_revision_with_no_path_is_a_usage_error(repository: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _ = diff_in(repository, "HEAD:", "design/p.yaml")
    error = capsys.readouterr().err
    assert status == 2 and "names no file after the revision" in error and "Traceback" not in error


def test_a_blob_past_the_limit_is_refused_before_it_is_read(repository: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    design = repository / "design"
    (design / "runs.csv").write_bytes(b"nodes,time [s]\n" + b"1,100\n" * 3_000_000)  # 18 MB: past 16 MiB
    git(repository, *AUTHOR, "commit", "-qam", "huge")
    status, _ = diff_in(repository, "HEAD:design/p.yaml", "HEAD~1:design/p.yaml")
    error = capsys.readouterr().err
    assert status == 2 and "refused without reading it" in error and "18,000,015 bytes in git" in error


def test_a_revisions_service_is_judged_from_the_requests_it_kept(tmp_path: Path) -> None:
    """inputs/chat-records.yaml committed with its runs CSV and records stores: `diff REV:PATH` against the working
    file finds nothing changed (the stores were read from the revision, not left out as missing), and the history's
    verdict of the commit is page 1's, judged from the requests (methods.md#the-records-store)."""
    import shutil

    from reportgen.project_history import history

    inputs = Path(__file__).resolve().parent.parent / "inputs"
    folder = tmp_path / "svc"
    folder.mkdir()
    for name in ("chat-records.yaml", "chat-records.csv"):
        shutil.copy(inputs / name, folder / name)
    shutil.copytree(inputs / "chat-records.records", folder / "chat-records.records")
    git(tmp_path, "init", "-q")
    git(tmp_path, *AUTHOR, "add", ".")
    git(tmp_path, *AUTHOR, "commit", "-qm", "r1")
    status, document = diff_in(tmp_path, "HEAD:svc/chat-records.yaml", "svc/chat-records.yaml")
    assert status == 0 and document is not None
    assert document["identical"] and not document["appeared"], document["appeared"]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        (revision,) = history(Path("svc/chat-records.yaml"))["revisions"]
    finally:
        os.chdir(cwd)
    assert revision["built"] and "within every objective for 99 % of requests" in revision["verdict"]


def test_a_revision_given_where_a_file_is_meant_is_told_how_to_name_the_file(
        repository: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`reportgen diff HEAD~1 HEAD` names two revisions, not two files: the error says to write REV:PATH; a name
    that is neither a file nor a revision is just not there."""
    status, _ = diff_in(repository, "HEAD~1", "design/p.yaml")
    assert status == 2
    assert "HEAD~1: no such file, but a git revision: name the project file in it as HEAD~1:PATH" in \
        capsys.readouterr().err
    status, _ = diff_in(repository, "r1", "design/p.yaml")
    assert status == 2
    err = capsys.readouterr().err
    assert "no such file" in err and "REV" not in err and "revision" not in err
