"""Runs recorded twice (methods.md#3-measured-scaling-and-where-the-speedup-went): runs equal in every column are
most likely one row pasted twice, which the analyses would read as a repeat. Read by the lint's `identical-runs`
and by `check`, which must stay light: nothing here imports the analyses."""

from __future__ import annotations

from collections import Counter

from reportgen.project.model import Project
from reportgen.wording import nodes


def identical_runs(project: Project) -> list[str]:
    """Runs equal in every column, at each node count that has them: "2 runs at 4 nodes are identical"."""
    runs = project.scaling.runs if project.scaling else ()
    counts = Counter(runs)
    return [f"{count} runs at {nodes(run.nodes)} are identical in every column"
            for run, count in sorted(counts.items(), key=lambda item: item[0].nodes) if count > 1]
