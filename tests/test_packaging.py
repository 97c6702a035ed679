"""What the wheel and the sdist carry: the licence in both, and in the sdist what the README's commands need."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from tests.conftest import ROOT


def test_the_wheel_and_sdist_carry_the_licence_and_the_sdist_what_make_needs(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "hatchling", "build", "-d", str(tmp_path)], cwd=ROOT, check=True,
                   capture_output=True)
    [wheel] = tmp_path.glob("reportgen-*.whl")
    [sdist] = tmp_path.glob("reportgen-*.tar.gz")
    with zipfile.ZipFile(wheel) as archive:
        assert any(name.endswith(".dist-info/licenses/LICENSE") for name in archive.namelist())
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    needed = {"LICENSE", "README.md", "Makefile", "pyproject.toml", "mkdocs.yml", ".ci/run", "inputs/example.yaml",
              "templates/report.html", "docs/index.md", "tests/conftest.py", "reportgen/commands/cli.py"}
    assert needed <= names, f"the sdist lacks {sorted(needed - names)}"


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.lower().replace("_", "-")] = version
    return pins


def test_every_dependency_is_pinned_and_installed_as_pinned() -> None:
    # outputs are byte-identical only within one set of library versions: make and CI install these
    import re
    import tomllib
    from importlib.metadata import version

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + project["optional-dependencies"]["test"]
    pins = _pins()
    for requirement in wanted:
        name = re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0].lower().replace("_", "-")
        assert name in pins, f"{name} is not pinned in constraints.txt"
        assert version(name) == pins[name], f"{name} {version(name)} is installed, constraints.txt pins {pins[name]}"
