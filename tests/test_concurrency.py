"""Writers at the same time: concurrent `measure` and `ingest` keep every row, concurrent builds into one folder
all succeed. (bench/concurrent_writers.py runs the full 20 trials of six real `reportgen measure` commands.)"""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reportgen.ingest import measure
from reportgen.ingest.measure import Measurement, append_run
from tests.conftest import INPUTS

WRITERS = 6


def _append_slowly(csv: str, nodes: int) -> None:
    """One writer, slowed between its read and its write: without a lock, the others' rows are lost."""
    original = measure.replace_file

    def slow(path: Path, data: bytes, **options: object) -> None:
        time.sleep(0.05)
        original(path, data, **options)  # type: ignore[arg-type]

    measure.replace_file = slow  # type: ignore[assignment]
    append_run(Path(csv), Measurement(nodes, 10.0 * nodes, None, {}, 0), time_unit_s=None, replace=False)


@pytest.mark.parametrize("trial", range(3))
def test_concurrent_writers_lose_no_row(tmp_path: Path, trial: int) -> None:
    csv = tmp_path / "runs.csv"
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_append_slowly, args=(str(csv), nodes)) for nodes in range(1, WRITERS + 1)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(30)
    assert all(writer.exitcode == 0 for writer in writers)
    rows = [line for line in csv.read_text().splitlines()[1:] if not line.startswith("#")]
    assert sorted(int(row.split(",")[0]) for row in rows) == list(range(1, WRITERS + 1))


@pytest.mark.slow
def test_four_builds_into_one_folder_all_succeed(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "reportgen", "build", str(INPUTS / "mlperf-ssd.yaml"), "-o", str(tmp_path),
               "--format", "html,json", "-q"]
    builds = [subprocess.Popen(command, stderr=subprocess.PIPE) for _ in range(4)]
    outcomes = [(build.wait(120), build.stderr.read().decode() if build.stderr else "") for build in builds]
    assert all(status == 0 for status, _ in outcomes), outcomes
    assert not list(tmp_path.rglob(".reportgen-*"))


def test_a_temporary_of_a_live_writer_is_kept_and_a_dead_ones_removed(tmp_path: Path) -> None:
    from reportgen.files import TEMP_PREFIX, remove_stale_temporaries

    live = tmp_path / f"{TEMP_PREFIX}{multiprocessing.current_process().pid}-abc.results.json"
    dead = tmp_path / f"{TEMP_PREFIX}999999999-abc.results.json"
    old_style = tmp_path / f"{TEMP_PREFIX}abc.results.json"
    for path in (live, dead, old_style):
        path.write_text("x")
    remove_stale_temporaries(tmp_path)
    assert live.exists() and not dead.exists() and not old_style.exists()
