"""`make package`: build the wheel and the sdist, and check what they carry: the licence in both, and in the sdist
everything the README's two commands need on a fresh machine. Exits 1 naming what is missing.

Run by `make test` (not a pytest test: it builds both archives, which a fast inner loop should not wait for)."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SDIST_NEEDS = {"LICENSE", "README.md", "Makefile", "pyproject.toml", "mkdocs.yml", ".ci/run", "inputs/example.yaml",
               "templates/report.html", "docs/index.md", "tests/conftest.py", "reportgen/commands/cli.py",
               "constraints.txt"}


WHEEL_NEEDS = ("reportgen/corpus/calibration.json", "reportgen/corpus/NOTICE", "reportgen/corpus/cases.csv",
               "reportgen/corpus/curves/usl-sgi-origin2000-raytracer.yaml")


def problems(folder: Path) -> list[str]:
    """What the archives built into `folder` lack."""
    subprocess.run([sys.executable, "-m", "hatchling", "build", "-d", str(folder)], cwd=ROOT, check=True,
                   capture_output=True)
    [wheel] = folder.glob("reportgen-*.whl")
    [sdist] = folder.glob("reportgen-*.tar.gz")
    found = []
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        if not any(name.endswith(".dist-info/licenses/LICENSE") for name in names):
            found.append(f"{wheel.name} lacks the licence")
        if not any(name.startswith("reportgen/templates/") for name in names):
            found.append(f"{wheel.name} lacks the report templates")
        # the calibration table every build reads, and the corpus and NOTICE it was computed from
        found += [f"{wheel.name} lacks {name}" for name in WHEEL_NEEDS if name not in names]
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    found += [f"{sdist.name} lacks {name}" for name in sorted(SDIST_NEEDS - names)]
    return found


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="reportgen-package-") as folder:
        found = problems(Path(folder))
    for problem in found:
        print(f"make package: {problem}", file=sys.stderr)
    if not found:
        print("make package: the wheel and the sdist carry what they must")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
