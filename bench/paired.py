"""A cold full build of the example beside headless Chromium printing the same HTML, paired and alternated.

    python bench/paired.py [--repeats 7] [--revision REV]

Each trial runs `reportgen build inputs/example.yaml --format html,pdf,json` from a cold process with an empty
figure cache, then Chromium's `--print-to-pdf` of the report.html that build wrote, one after the other, so that
both see the same machine (its speed drifts by tens of percent over minutes). It prints the wall-clock median and
the CPU seconds (user + system, children included) of each, and the ratio of the medians: the figure
docs/performance.md records for the PDF path. With --revision, the build is that revision's (checked out into a
temporary worktree and run with this tree's interpreter), to compare a change with what it replaces.
"""

from __future__ import annotations

import argparse
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
    """Wall seconds and CPU seconds (this command's children only) of one run."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, capture_output=True, timeout=300)
    wall = time.perf_counter() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


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
    with tempfile.TemporaryDirectory() as scratch:
        tree = ROOT
        if arguments.revision:
            tree = Path(scratch) / "tree"
            subprocess.run(["git", "worktree", "add", "--detach", str(tree), arguments.revision], cwd=ROOT,
                           check=True, capture_output=True)
        try:
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
