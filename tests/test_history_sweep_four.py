"""history against a hostile repository (methods.md#a-projects-history): a subject that tries to forge a revision,
a working-tree file that tries to stand in for one, a CSV only an earlier revision named, a name through the
project file's own, a UTF-16 log encoding and pathspec magic in a CSV's name."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from reportgen.commands.cli import main
from reportgen.project_history import history

PROJECT = """project: {title: TITLE}
scaling:
  file: FILE
"""
CSV = "nodes,time [s]\n1,3600\n2,1900\n"


def _git(folder: Path, *arguments: str) -> str:
    result = subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *arguments], cwd=folder,
                            check=True, capture_output=True)
    return result.stdout.decode("utf-8", "replace")


def _commit(folder: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        _git(folder, "add", "--", name)
    _git(folder, "commit", "-qm", message)
    return _git(folder, "rev-parse", "HEAD").strip()


@pytest.fixture()
def repository(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    return tmp_path


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x1e", "\x0b"])
def test_a_subject_never_forges_a_revision(repository: Path, separator: str) -> None:
    real = _commit(repository, {"p.yaml": PROJECT.replace("TITLE", "Real").replace("FILE", "runs.csv"),
                                "runs.csv": CSV}, "r1")
    forged = "f" * 40
    subject = f"r2{separator}{forged}\x1f2020-01-01T00:00:00+00:00\x1fforged"
    second = _commit(repository, {"runs.csv": CSV + "4,1050\n"}, subject)
    revisions = history(repository / "p.yaml")["revisions"]
    assert [r["commit"] for r in revisions] == [real, second]
    assert forged not in {r["commit"] for r in revisions}


def test_a_working_tree_file_never_stands_in_for_a_revision(repository: Path, tmp_path_factory: pytest.TempPathFactory,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repository)  # history run from the repository's folder, where the files below are
    sha = _commit(repository, {"p.yaml": PROJECT.replace("TITLE", "Real").replace("FILE", "runs.csv"),
                               "runs.csv": CSV}, "r1")
    # a file and a link named as git's REV:PATH, in the folder history runs from
    (repository / f"{sha}:p.yaml").write_text(PROJECT.replace("TITLE", "Forged").replace("FILE", "runs.csv"),
                                             encoding="utf-8")
    outside = tmp_path_factory.mktemp("outside") / "secret.yaml"
    outside.write_text(PROJECT.replace("TITLE", "Outside").replace("FILE", "runs.csv"), encoding="utf-8")
    (repository / f"{sha[:7]}:p.yaml").symlink_to(outside)
    (revision,) = history(Path("p.yaml"))["revisions"]
    assert revision["built"] and revision["title"] == "Real"


def test_a_csv_only_an_earlier_revision_named_is_walked(repository: Path) -> None:
    first = _commit(repository, {"p.yaml": PROJECT.replace("TITLE", "T").replace("FILE", "a.csv"), "a.csv": CSV},
                    "r1: a.csv")
    second = _commit(repository, {"a.csv": CSV + "4,1050\n"}, "r2: a.csv only")
    third = _commit(repository, {"p.yaml": PROJECT.replace("TITLE", "T").replace("FILE", "b.csv"),
                                 "b.csv": CSV + "4,1050\n8,620\n"}, "r3: b.csv")
    document = history(repository / "p.yaml")
    assert [r["commit"] for r in document["revisions"]] == [first, second, third]
    assert [len(r["measured"]) for r in document["revisions"]] == [2, 3, 4]
    assert document["names_unsettled"] is False


def test_names_still_growing_at_the_last_pass_are_said(repository: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """One pass finds r1 and r3 through today's b.csv, and r1 names a.csv: the walk that stops there misses r2, which
    changed a.csv only, and says so in history.json, the command's summary and both pages."""
    _commit(repository, {"p.yaml": PROJECT.replace("TITLE", "T").replace("FILE", "a.csv"), "a.csv": CSV}, "r1")
    _commit(repository, {"a.csv": CSV + "4,1050\n"}, "r2: a.csv only")
    _commit(repository, {"p.yaml": PROJECT.replace("TITLE", "T").replace("FILE", "b.csv"), "b.csv": CSV}, "r3")
    monkeypatch.setattr("reportgen.project_history.MAX_NAMED_PASSES", 1)
    out = repository / "out"
    assert main(["history", str(repository / "p.yaml"), "-o", str(out), "--format", "json,md,html"]) == 0
    assert "still changing after" in capsys.readouterr().out
    document = json.loads((out / "history-p" / "history.json").read_text(encoding="utf-8"))
    assert document["names_unsettled"] is True and len(document["revisions"]) == 2
    for page in ("history.md", "history.html"):
        assert "may be missing" in (out / "history-p" / page).read_text(encoding="utf-8")


def test_a_csv_named_through_the_project_files_own_name_is_one_line(repository: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    good = _commit(repository, {"p.yaml": PROJECT.replace("TITLE", "T").replace("FILE", "runs.csv"),
                                "runs.csv": CSV}, "r1")
    _commit(repository, {"p.yaml": PROJECT.replace("TITLE", "T").replace("FILE", "p.yaml/x.csv")}, "r2: through")
    revisions = history(repository / "p.yaml")["revisions"]
    assert revisions[0]["commit"] == good and revisions[0]["built"]
    assert not revisions[1]["built"] and "\n" not in revisions[1]["error"]
    assert main(["diff", f"{good}:p.yaml", "HEAD:p.yaml", "-o", str(repository / "out")]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_a_utf16_log_encoding_and_pathspec_magic_in_a_name(repository: Path) -> None:
    _git(repository, "config", "i18n.logOutputEncoding", "UTF-16")
    named = "[runs]*.csv"  # brackets and a star: a pattern to git unless its paths are literal
    first = _commit(repository, {"p.yaml": PROJECT.replace("TITLE", "T").replace("FILE", f"'{named}'"),
                                 named: CSV}, "r1 é")
    (repository / "runs1.csv").write_text(CSV, encoding="utf-8")  # what the pattern would match
    second = _commit(repository, {named: CSV + "4,1050\n"}, "r2 ü")
    _commit(repository, {"runs1.csv": CSV + "9,1\n"}, "r3: another file the pattern matches")
    revisions = history(repository / "p.yaml")["revisions"]
    assert [r["commit"] for r in revisions] == [first, second]
    assert [r["subject"] for r in revisions] == ["r1 é", "r2 ü"]


@pytest.mark.parametrize("spoil", [
    lambda r: {**r, "measured": [{"nodes": 1, "time_s": 0, "speedup": 1}]},  # a zero the ledger divides by
    lambda r: {**r, "predictions": [{"nodes": 4}]},  # a prediction without its fields
    lambda r: {**r, "next_action": 5},
    lambda r: {**r, "slots": {"communication": "all-reduce"}},
    lambda r: [r],
    lambda r: {**r, "extra": True},
], ids=["zero-time", "short-prediction", "action-number", "slot-text", "a-list", "unknown-key"])
def test_a_malformed_cached_record_is_rebuilt(repository: Path, spoil) -> None:  # type: ignore[no-untyped-def]
    import json

    from reportgen.project_history import HistoryOptions

    _commit(repository, {"p.yaml": PROJECT.replace("TITLE", "T").replace("FILE", "runs.csv"), "runs.csv": CSV},
            "r1")
    _commit(repository, {"runs.csv": CSV + "4,1050\n"}, "r2")
    options = HistoryOptions(cache=repository / "cache")
    first = history(repository / "p.yaml", options)
    assert first["built_now"] == 2 and history(repository / "p.yaml", options)["built_now"] == 0  # read back
    for path in (repository / "cache").glob("record-*.json"):
        path.write_text(json.dumps(spoil(json.loads(path.read_text(encoding="utf-8")))), encoding="utf-8")
    again = history(repository / "p.yaml", options)
    assert again["built_now"] == 2 and again["revisions"] == first["revisions"] and again["ledger"] == first["ledger"]


def test_an_unwritable_cache_is_skipped(repository: Path) -> None:
    from reportgen.project_history import HistoryOptions

    _commit(repository, {"p.yaml": PROJECT.replace("TITLE", "T").replace("FILE", "runs.csv"), "runs.csv": CSV},
            "r1")
    (repository / "cache").write_text("a file where the cache folder would be", encoding="utf-8")
    document = history(repository / "p.yaml", HistoryOptions(cache=repository / "cache"))
    assert document["revisions"][0]["built"]


@pytest.mark.parametrize("folder", ["ends in a space ", "ends in a line feed\n", b"not utf-8 \xff"],
                         ids=["space", "line-feed", "not-utf-8"])
def test_a_repository_folder_of_any_name(tmp_path: Path, folder: str | bytes) -> None:
    import os

    top = tmp_path / (os.fsdecode(folder) if isinstance(folder, bytes) else folder)
    top.mkdir()
    _git(top, "init", "-q")
    _commit(top, {"p.yaml": PROJECT.replace("TITLE", "T").replace("FILE", "runs.csv"), "runs.csv": CSV}, "r1")
    (revision,) = history(top / "p.yaml")["revisions"]
    assert revision["built"]
    assert main(["history", str(top / "p.yaml"), "-o", str(tmp_path / "out")]) == 0


def test_a_loop_of_links_and_a_name_that_is_not_utf8(repository: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    import os

    (repository / "loop1").symlink_to("loop2")
    (repository / "loop2").symlink_to("loop1")
    assert main(["history", str(repository / "loop1"), "-o", str(repository / "out")]) == 2
    assert "a loop of symbolic links" in capsys.readouterr().err
    name = os.fsdecode(b"n\xffame.yaml")
    _commit(repository, {name: PROJECT.replace("TITLE", "T").replace("FILE", "runs.csv"), "runs.csv": CSV}, "r1")
    monkeypatch.chdir(repository)
    out = repository / "out"
    assert main(["history", name, "-o", str(out)]) == 0
    assert main(["diff", f"HEAD:{name}", name, "-o", str(out)]) == 0
    assert main(["build", name, "--out", str(out), "--format", "html,json"]) == 0
    assert "n\ufffdame.yaml" in (out / os.fsdecode(b"n\xffame") / "report.html").read_text(encoding="utf-8")
    assert "Traceback" not in capsys.readouterr().err


def test_a_revisions_names_pass_reads_a_file_name_as_the_loader_does(tmp_path: Path) -> None:
    """`file: " runs.csv"` names runs.csv to the loader; the names pass, which chooses the files a revision is read
    with, named " runs.csv" and the revision's CSV was then missing (docs/methods.md#a-projects-history)."""
    from reportgen.project.loader import load_project
    from reportgen.project.revisions import names_in_bytes

    text = ('project: {title: T}\nscaling:\n  file: " runs.csv"\n'
            'prediction: {t_comp: 1 s, alpha: 1 us, message_bytes: 1 MB, collectives_file: "nccl.csv  "}\n')
    assert names_in_bytes(text.encode(), "p.yaml") == ["runs.csv", "nccl.csv"]
    (tmp_path / "p.yaml").write_text('project: {title: T}\nscaling:\n  file: " runs.csv"\n', encoding="utf-8")
    (tmp_path / "runs.csv").write_text("nodes,time\n1,10 s\n2,6 s\n", encoding="utf-8")
    assert [run.nodes for run in load_project(tmp_path / "p.yaml").project.scaling.runs] == [1, 2]


NAME_CASES = [
    'scaling: {file: " runs.csv"}', 'scaling:\n  file: runs.csv\nscaling:\n  file: other.csv',
    'scaling:\n  file: a.csv\n  file: b.csv', 'scaling: {file: null}', 'scaling: {file: ~}', 'scaling: {file: ""}',
    'scaling: {file: 123}', 'scaling: {file: [a]}', 'scaling: {file: /abs.csv}', '- scaling', 'x', 'scaling: x',
    'prediction: {collectives_file: n.csv}\nscaling: {file: r.csv}', '{? [a] : b, scaling: {file: r.csv}}',
    'project: {scaling: {file: r.csv}}', 'scaling: {runs: [{file: x}], file: y.csv}', "scaling: {'file': 'q''s.csv'}",
    'scaling:\n  file: >\n    folded.csv\n', 'null: {file: x}\nscaling: {file: y}', 'scaling: {? file : r.csv}',
]


@pytest.mark.parametrize("text", NAME_CASES)
def test_the_names_pass_reads_events_as_the_composer_reads_nodes(text: str) -> None:
    """A history reads every revision's names first; libyaml's events give the names the guarded composer gives
    (first of a key written twice, null, a complex key, quoting), else they defer to it
    (docs/methods.md#a-projects-history)."""
    from reportgen.project.revisions import _names_from_events, _names_in
    from reportgen.project.yaml_source import compose

    fast = _names_from_events(text)
    assert fast is None or fast == _names_in(compose(text, "p.yaml"))


@pytest.mark.parametrize("text", ["scaling: &a {file: r.csv}", "scaling: !!map {file: r.csv}",
                                  "scaling: {file: r.csv}\n---\nscaling: {file: s.csv}", "scaling: {file: r.csv"])
def test_the_names_pass_defers_to_the_composer_where_events_cannot_be_sure(text: str) -> None:
    from reportgen.project.revisions import _names_from_events

    assert _names_from_events(text) is None
