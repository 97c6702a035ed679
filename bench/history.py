"""`reportgen history` over 50 revisions of inputs/example.yaml, each with one run's time changed
(methods.md#a-projects-history): the first call analyses every revision, the second reads the cache. The targets are
10 s, plus 0.5 s for each revision whose page 1 reads the goal's levers (a missed or unjudged page whose next action
is of rank 3 or more searches them itself), and 1 s, on 2 cores; the revisions are analysed in worker processes, one per
core (HistoryOptions.jobs).

    python bench/history.py           # 50 revisions
    python bench/history.py 3000      # the hostile sweep's count: within 2 × 121 s cold
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reportgen.project_history import HistoryOptions, history  # noqa: E402

REVISIONS = int(sys.argv[1]) if len(sys.argv) > 1 else 50


def repository(folder: Path) -> Path:
    text = (ROOT / "inputs" / "example.yaml").read_text(encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    project = folder / "example.yaml"
    for index in range(REVISIONS):
        # the 8-node run's compute, a second longer each revision: every revision is another project
        changed = re.sub(r"(nodes: 8, compute: )(\d+)", lambda m, extra=index: f"{m[1]}{int(m[2]) + extra}", text,
                         count=1)
        project.write_text(changed, encoding="utf-8")
        subprocess.run(["git", "add", "example.yaml"], cwd=folder, check=True)
        subprocess.run(["git", "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", f"r{index}"],
                       cwd=folder, check=True)
    return project


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        project = repository(Path(scratch))
        options = HistoryOptions(cache=Path(scratch) / "cache", last=REVISIONS)
        start = time.perf_counter()
        first = history(project, options)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        second = history(project, options)
        warm = time.perf_counter() - start
    assert first["built_now"] == REVISIONS and second["built_now"] == 0
    with_levers = sum(1 for r in first["revisions"] if r["state"] in ("missed", "unjudged")
                      and (r["next_action"]["rank"] or 8) >= 3)
    target = 10.0 + 0.5 * with_levers
    print(f"{REVISIONS} revisions: {cold:.2f} s the first time (target {target:.1f} s: {with_levers} searched the "
          f"levers), {warm:.2f} s the second ({len(first['ledger'])} predictions in the ledger)")


if __name__ == "__main__":
    main()
