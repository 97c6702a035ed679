"""reportgen's modules and what each imports of the package, read with `ast` (nothing is imported): the walk
tests/test_quality.py holds to the package's layers and tests/test_layers.py to the analysis core's."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "reportgen"


@dataclass
class Imports:
    run: set[str] = field(default_factory=set)  # imported when the module (or the function holding it) runs
    typing: set[str] = field(default_factory=set)  # under `if TYPE_CHECKING:`: a name for the type checker only


@functools.cache  # read once a session: the walk parses every module of the package
def module_imports(package: Path = PACKAGE) -> dict[str, Imports]:
    """Each module's imports of reportgen modules, by its dotted name; `from a.b import c` counts as a.b.c where c is
    a module, else as a.b. Imports inside functions count: a lazy import is still an import."""
    found: dict[str, Imports] = {}
    for path in package.rglob("*.py"):
        name = ("reportgen." + ".".join(path.relative_to(package).with_suffix("").parts)).removesuffix(".__init__")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        hidden = {id(sub) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in
                  ast.unparse(node.test) for sub in ast.walk(node)}
        imports = Imports()
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            if node.module.startswith("reportgen.") or node.module == "reportgen":
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    as_module = package / (full.removeprefix("reportgen.").replace(".", "/"))
                    named = full if as_module.with_suffix(".py").exists() or as_module.is_dir() else node.module
                    (imports.typing if id(node) in hidden else imports.run).add(named)
        imports.run.discard(name)
        imports.typing.discard(name)
        found[name] = imports
    return found


def circle_in(graph: dict[str, set[str]]) -> list[str] | None:
    """A circle of imports, as the modules in it (the first one again at the end), or None."""
    for start in graph:
        stack, seen = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for dep in graph.get(node, ()):
                if dep == start:
                    return [*path, dep]
                if dep not in seen:
                    seen.add(dep)
                    stack.append((dep, [*path, dep]))
    return None
