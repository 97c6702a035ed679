"""Compare this tree with an earlier revision, alternating: `python bench/alternate.py REV [--pairs 8] [--cached]
[-- build options]`.

This machine's speed drifts by up to 1.5× within minutes, so two benchmark runs minutes apart compare the machine
as much as the code. Here each pair runs the revision's cold build and then this tree's, one right after the other,
so that both see the same machine; both trees are byte-compiled first. The revision is checked out in a temporary
git worktree, removed afterwards.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "inputs" / "example.yaml"


def cold_build(tree: Path, out: Path, options: list[str], *, cached: bool) -> float:
    if not cached:
        shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "reportgen", "build", str(EXAMPLE), "-o", str(out), *options], cwd=tree,
                   env={**os.environ, "PYTHONPATH": str(tree)}, check=True, capture_output=True)
    return time.perf_counter() - started


def summary(samples: list[float]) -> str:
    return (f"median {statistics.median(samples) * 1000:6.0f} ms  "
            f"(range {min(samples) * 1000:.0f}–{max(samples) * 1000:.0f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("revision", help="the earlier revision, e.g. HEAD~3 or a commit hash")
    parser.add_argument("--pairs", type=int, default=8, help="builds of each tree (default 8)")
    parser.add_argument("--cached", action="store_true", help="keep each tree's figure cache between builds")
    own, options = (sys.argv[1:], []) if "--" not in sys.argv else (
        sys.argv[1:sys.argv.index("--")], sys.argv[sys.argv.index("--") + 1:])  # build options after --
    arguments = parser.parse_args(own)
    with tempfile.TemporaryDirectory(prefix="reportgen-alternate-") as scratch:
        old = Path(scratch) / "old"
        subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(old), arguments.revision], cwd=ROOT,
                       check=True)
        try:
            trees = {arguments.revision: old, "this tree": ROOT}
            for tree in trees.values():
                compileall.compile_dir(tree / "reportgen", quiet=1)
            samples: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(arguments.pairs):
                for name, tree in trees.items():
                    out = Path(scratch) / f"out-{tree.name}"
                    samples[name].append(cold_build(tree, out, options, cached=arguments.cached))
            for name, values in samples.items():
                print(f"{name:>12}: {summary(values)}")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
