"""Every dependency pinned and installed as pinned. (What the wheel and the sdist carry is checked by `make package`:
tests/check_package.py.)"""

from __future__ import annotations

from tests.conftest import ROOT


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
