"""Writers at the same time, as real commands:
`python bench/concurrent_writers.py [--trials 20] [--writers 6] [--builds 4]`.

(Not `bench/concurrent.py`: run as a script, bench/ comes first on the module path, and that name hid the standard
library's `concurrent` package from bench/run.py.)

Each trial starts `--writers` real `reportgen measure` commands at once on one project (each a different node
count, its command a short sleep), and counts the rows the CSV holds after: a command that printed "appended" and
exited 0 must have its row there. Then `--builds` builds of one project run at once into one output folder, and
each must succeed. Prints one line per trial and a summary; exits 1 if any row was lost or any build failed.
`tests/test_concurrency.py` keeps the same promises with in-process writers.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORTGEN = [sys.executable, "-m", "reportgen"]
PROJECT = "project: {title: Concurrent writers}\nscaling: {file: runs.csv, time_unit: s}\n"
COMMAND = [sys.executable, "-c", "import time; time.sleep(0.2)"]


def one_trial(folder: Path, writers: int) -> tuple[int, int, float]:
    """Rows kept, of `writers` appended at once, and the seconds the trial took."""
    project = folder / "project.yaml"
    project.write_text(PROJECT)
    (folder / "runs.csv").write_text("nodes,time [s]\n")
    started = time.perf_counter()
    commands = [subprocess.Popen([*REPORTGEN, "measure", "--project", str(project), "--nodes", str(nodes), "-q",
                                  "--", *COMMAND], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                for nodes in range(1, writers + 1)]
    succeeded = sum(1 for command in commands if command.wait(120) == 0)
    rows = [line for line in (folder / "runs.csv").read_text().splitlines()[1:] if line and not line.startswith("#")]
    kept = len({row.split(",")[0] for row in rows})
    if succeeded != writers:
        print(f"  {writers - succeeded} measure command(s) failed", file=sys.stderr)
    return kept, succeeded, time.perf_counter() - started


def builds_at_once(folder: Path, builds: int) -> tuple[int, float]:
    """How many of `builds` simultaneous builds into one folder succeeded, and the seconds they took."""
    command = [*REPORTGEN, "build", str(ROOT / "inputs" / "mlperf-ssd.yaml"), "-o", str(folder / "out"), "--format",
               "html,json", "-q"]
    started = time.perf_counter()
    processes = [subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE) for _ in range(builds)]
    outcomes = [(process.wait(300), process.stderr.read().decode() if process.stderr else "") for process in processes]
    for status, said in outcomes:
        if status != 0:
            print(f"  a build failed ({status}): {said.strip()}", file=sys.stderr)
    return sum(1 for status, _ in outcomes if status == 0), time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--writers", type=int, default=6)
    parser.add_argument("--builds", type=int, default=4)
    arguments = parser.parse_args()
    lost = 0
    with tempfile.TemporaryDirectory(prefix="reportgen-concurrent-") as name:
        folder = Path(name)
        for trial in range(1, arguments.trials + 1):
            kept, succeeded, seconds = one_trial(folder, arguments.writers)
            lost += succeeded - kept
            print(f"trial {trial:2d}: {kept}/{arguments.writers} rows kept ({succeeded} commands exited 0) in "
                  f"{seconds:.1f} s", flush=True)
        succeeded, seconds = builds_at_once(folder, arguments.builds)
    print(f"{arguments.trials} trials of {arguments.writers} concurrent measure: {lost} row(s) lost; "
          f"{succeeded}/{arguments.builds} concurrent builds into one folder succeeded in {seconds:.1f} s")
    return 0 if lost == 0 and succeeded == arguments.builds else 1


if __name__ == "__main__":
    raise SystemExit(main())
