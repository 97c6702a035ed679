"""docs/tutorial.md runs end to end, in order, as a user would run it in a clone: every `sh` block
of the page, in one shell, in a fresh folder; a step that fails fails the suite."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reportgen.project.loader import load_project
from tests.conftest import ROOT

TUTORIAL = ROOT / "docs" / "tutorial.md"


def printed() -> list[str]:
    """The lines the page quotes as printed (a `text` block after `<!-- printed -->`, or "prints `LINE`" in a
    sentence); `...` stands for any text."""
    page = TUTORIAL.read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- printed -->\n```text\n(.*?)```", page, flags=re.S)
    return [*re.findall(r"prints `([^`]+)`", page), *(line for block in blocks for line in block.strip().splitlines())]


def commands() -> str:
    """The page's shell blocks, in order, with `reportgen` run from this interpreter."""
    blocks = re.findall(r"```sh\n(.*?)```", TUTORIAL.read_text(encoding="utf-8"), flags=re.S)
    script = "\n".join(blocks)
    return re.sub(r"(?m)^reportgen ", f"{sys.executable} -m reportgen ", script)


@pytest.mark.slow
def test_the_tutorial_runs_end_to_end(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "docs" / "tutorial-files", tmp_path / "docs" / "tutorial-files")
    environment = {**os.environ, "HOME": str(tmp_path), "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
                   "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(["bash", "-e", "-x", "-c", commands()], cwd=tmp_path, env=environment, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    folder = tmp_path / "my-design"
    # what the page quotes is what the steps print, as they print it: paths relative to the folder they run in
    output = done.stdout
    assert str(tmp_path) not in output, "a command printed an absolute path under the folder the steps run in"
    quoted = printed()
    assert len(quoted) >= 4
    for line in quoted:
        pattern = ".*".join(re.escape(part) for part in line.split("..."))
        assert re.search(pattern, output), f"docs/tutorial.md quotes a line the steps do not print: {line}"
    # step 3 says what page 1 shows: the verdict box's colour (its state), the next action's finding, and the error
    # among the findings; the warning holds while it is true (docs/methods.md#page-1-from-one-set-of-facts)
    built = json.loads((folder / "build" / "project" / "results.json").read_text())
    code = built["summary"]["next_action"]["code"]
    warning = TUTORIAL.read_text(encoding="utf-8").split("**Page 1 turns amber", 1)[1].split("\n\n", 1)[0]
    assert built["summary"]["state"] in ("partly", "unjudged")
    # the verdict box as the page draws it: its class, and the colour report.css gives that class
    html = (folder / "build" / "project" / "report.html").read_text(encoding="utf-8")
    box = re.search(r'<div id="goal-verdict" class="verdict (\w+)">\s*<p class="big">([^<]*)', html)
    assert box is not None and box[1] == built["summary"]["state"] and box[2].startswith("The goal")
    css = (ROOT / "templates" / "report.css").read_text(encoding="utf-8")
    assert re.search(rf"\.verdict\.{box[1]}\b[^{{]*{{ border-color: var\(--warning\)", css)
    colour = re.search(r"--warning: #([0-9a-f]{6})\b", css)
    assert colour is not None
    red, green, blue = (int(colour[1][i:i + 2], 16) for i in (0, 2, 4))
    assert red > green > blue and blue < 0x40  # amber: red over green, next to no blue
    assert f"`{code}`" in warning and "is the next action" in warning.split(f"`{code}`", 1)[1].split(".", 1)[0]
    assert any(finding["severity"] == "error" and f"`{finding['code']}`" in warning for finding in built["findings"])
    runs = {run.nodes: run for run in load_project(folder / "project.yaml").project.scaling.runs}
    # one row per run: the wall time, the breakdown the traces gave, and the start-up between them
    assert set(runs) == {1, 2}
    for run in runs.values():
        assert run.time is not None and run.compute is not None and run.start_up is not None and run.start_up > 0
    assert runs[2].energy is not None and "ingest codecarbon" in (folder / "runs.csv").read_text()
    assert (folder / "build" / "project" / "report.pdf").exists()
    from reportgen.ingest.emissions import read_emissions

    kept = read_emissions(folder / "emissions.csv")  # CodeCarbon's own record of each measured run, kept beside
    assert kept.energy_kwh > 0 and len((folder / "emissions.csv").read_text().splitlines()) == 3  # header + 2 runs
    assert (folder / "build" / "diff-HEAD~1-project-vs-project" / "diff.md").exists() or \
        any((folder / "build").glob("diff-*/diff.md"))
    assert "key result" in done.stdout + done.stderr
    judged = json.loads((tmp_path / "my-requests" / "build" / "project" / "results.json").read_text())
    # step 5, from every request: two load points, not decided from 60 requests, and the requests that would decide
    points = judged["serving"]["records"]["points"]
    assert [p["offered_per_s"] for p in points] == [4.0, 8.0] and all(p["verdict"] is None for p in points)
    assert "too uncertain from the requests measured" in judged["summary"]["verdict"]
    action = judged["summary"]["next_action"]
    assert action["code"] == "requests-straddle" and "Send 268 requests" in action["text"]
    assert "268" in TUTORIAL.read_text(encoding="utf-8").split("### Judged from every request", 1)[1]
    service = tmp_path / "my-service"  # step 5: load tests from vLLM and MLPerf loadgen
    loads = {run.nodes: run for run in load_project(service / "project.yaml").project.scaling.runs}
    assert set(loads) == {1, 8} and loads[8].ttft_p99 is not None and loads[8].throughput is not None
    serving = json.loads((service / "build" / "project" / "results.json").read_text())["serving"]
    assert serving["unit"] == "token" and [row["serves"] for row in serving["rows"]] == [False, True]
    # the figures step 5 quotes from page 1
    verdict = json.loads((service / "build" / "project" / "results.json").read_text())["summary"]["verdict"]
    page = TUTORIAL.read_text(encoding="utf-8").split("## 5.", 1)[1].split("\n## ", 1)[0]
    quoted = " ".join(page.split()).split("Page 1 holds the planned 8 nodes", 1)[1]
    for figure in ("29,715 tokens/s", "25,000", "1.76 s", "158 ms"):
        assert figure in quoted and figure in verdict, figure
    # and what it says of that verdict: met (green), with a next action that doubts the run it rests on
    summary = json.loads((service / "build" / "project" / "results.json").read_text())["summary"]
    assert summary["state"] == "met" and "Its verdict box is green" in quoted
    assert summary["next_action"]["code"] == "implausible-speedup" and "`implausible-speedup`" in quoted
