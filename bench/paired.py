"""A cold full build of the example beside headless Chromium printing the same HTML, paired and alternated.

    python bench/paired.py [--repeats 7] [--revision REV]

Each trial runs `reportgen build inputs/example.yaml --format html,pdf,json` from a cold process with an empty
figure cache, then Chromium's `--print-to-pdf` of the report.html that build wrote, one after the other, so that
both see the same machine (its speed drifts by tens of percent over minutes). It prints the wall-clock median and
the CPU seconds (user + system) of each, counting every process each started, also those still running when it
exited (on Linux; before session 13 those were missed: a build's PDF workers, Chromium's helpers), and the ratio of
the medians: the figure docs/performance.md records for the PDF path. With --revision, the build is that revision's
(checked out into a temporary worktree and run with this tree's interpreter), to compare a change with what it
replaces. The tree built is byte-compiled first, as `make report` leaves it: where PYTHONDONTWRITEBYTECODE is set
(this machine), every build would otherwise compile reportgen's modules again, a cost that grows with the code
(before session 14 it was counted).
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def timed(command: Sequence[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds of one run, and CPU seconds of every process it started: those it left running as it exited
    (a build's PDF fork server and its workers, which end with it) are reparented to this process and reaped."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, capture_output=True, timeout=300)
    wall = time.perf_counter() - start
    _reap_left_behind()
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def _adopt_orphans() -> None:
    """Become the subreaper of every process started from here (Linux): an orphan is reparented to this process
    rather than to init, so its CPU time reaches os.times() once it is reaped."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _reap_left_behind(seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:  # none left
            return
        if pid == 0:
            time.sleep(0.01)


def browser() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if found is None:
        sys.exit("paired.py: Chromium is not installed (apt-get install chromium)")
    return found


def summary(name: str, samples: list[tuple[float, float]]) -> str:
    walls, cpus = [s[0] for s in samples], [s[1] for s in samples]
    return (f"{name}: wall median {statistics.median(walls):.2f} s ({min(walls):.2f}–{max(walls):.2f}), "
            f"CPU median {statistics.median(cpus):.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7, help="paired trials (default 7)")
    parser.add_argument("--revision", help="build with this git revision instead of the working tree")
    arguments = parser.parse_args()
    chromium = browser()
    _adopt_orphans()
    with tempfile.TemporaryDirectory() as scratch:
        tree = ROOT
        if arguments.revision:
            tree = Path(scratch) / "tree"
            subprocess.run(["git", "worktree", "add", "--detach", str(tree), arguments.revision], cwd=ROOT,
                           check=True, capture_output=True)
        try:
            compileall.compile_dir(tree / "reportgen", quiet=1)
            builds, prints = [], []
            out = Path(scratch) / "out"
            for trial in range(arguments.repeats):
                shutil.rmtree(out, ignore_errors=True)  # an empty figure cache: a first build
                builds.append(timed([sys.executable, "-m", "reportgen", "build", "inputs/example.yaml", "-o",
                                     str(out), "--format", "html,pdf,json"], tree))
                with tempfile.TemporaryDirectory() as profile:
                    prints.append(timed([chromium, *FLAGS, f"--user-data-dir={profile}",
                                         f"--print-to-pdf={Path(scratch) / 'chromium.pdf'}",
                                         (out / "example" / "report.html").as_uri()], tree))
                print(f"trial {trial + 1}: build {builds[-1][0]:.2f} s, Chromium {prints[-1][0]:.2f} s",
                      file=sys.stderr)
        finally:
            if arguments.revision:
                subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
    print(summary("reportgen build → html,pdf,json", builds))
    print(summary("Chromium --print-to-pdf", prints))
    ratio = statistics.median(b[0] for b in builds) / statistics.median(p[0] for p in prints)
    print(f"ratio of wall medians: {ratio:.2f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
