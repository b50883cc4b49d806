"""The package's layout: no import cycles among nerframe's modules, and kernels that
import nothing from the API layer.

The import graph is read with `ast` from the source files, function-level imports
included (a cycle closed by an import inside a function is still a cycle: the two
modules cannot be understood, or tested, one without the other); imports under
``if TYPE_CHECKING:`` are left out (they never run).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Where each package's files live: nerframe.kernels and nerframe.schemas are
# top-level folders mapped into the package (pyproject.toml's package-dir).
FOLDERS = {
    "nerframe": ROOT / "nerframe",
    "nerframe.kernels": ROOT / "kernels",
    "nerframe.schemas": ROOT / "schemas",
}

# None left: probing builds its System from nerframe.roofline_system, not rooflines.
KNOWN_CYCLES: list[set[str]] = []

# Kernels may use the standard library, numpy, numba and one another only: they are
# pure functions over arrays; the API layer builds their inputs (nerframe.cost_inputs)
# and turns their plain errors (nerframe.kernels.faults) into nerframe's.
KERNEL_MAY_IMPORT = {"numpy", "numba", "llvmlite"}


def modules(folders: dict[str, Path]) -> dict[str, Path]:
    """Every module's dotted name and file (a package's name for its ``__init__``)."""
    found: dict[str, Path] = {}
    for package, folder in folders.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def imports(name: str, path: Path) -> set[str]:
    """The dotted names `path` (module `name`) imports when it runs, and for
    ``from a import b`` both ``a`` and ``a.b`` (b may be a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {
        id(node)
        for branch in ast.walk(tree)
        if isinstance(branch, ast.If)
        and ast.unparse(branch.test).endswith("TYPE_CHECKING")
        and not isinstance(branch.test, ast.UnaryOp)
        for statement in branch.body
        for node in ast.walk(statement)
    }
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def import_graph(folders: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules of `folders` it imports."""
    found = modules(folders)
    return {name: (imports(name, path) & set(found)) - {name} for name, path in found.items()}


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = {stack.pop()}
            while node not in component:
                component.add(stack.pop())
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_import_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    """A hand-made package whose cycles are known: a function-level import, a relative
    one and ``from package import module`` close cycles; a TYPE_CHECKING import does not."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "a.py": "def f():\n    from pkg import b\n",
        "b.py": "from .sub import c\n",
        "sub/__init__.py": "",
        "sub/c.py": "from ..a import f\n",
        "d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.e\n",
        "e.py": "import pkg.d\n",
        "f.py": "import pkg.g\n",
        "g.py": "import os\n",
    }
    for name, text in files.items():
        (package / name).write_text(text)
    graph = import_graph({"pkg": package})
    assert graph["pkg.b"] == {"pkg.sub", "pkg.sub.c"}
    assert graph["pkg.d"] == set()
    assert cycles(graph) == [{"pkg.a", "pkg.b", "pkg.sub.c"}]


def test_no_import_cycles_among_nerframe_modules() -> None:
    graph = import_graph(FOLDERS)
    assert "nerframe.sweeps.store" in graph and "nerframe.kernels.sweep_chunk" in graph
    unexpected = [sorted(c) for c in cycles(graph) if c not in KNOWN_CYCLES]
    assert unexpected == []


def test_kernels_import_nothing_from_the_api_layer() -> None:
    upward = set()
    for name, path in modules(FOLDERS).items():
        if not name.startswith("nerframe.kernels"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                targets = [node.module or ""]
            else:
                continue  # a relative import stays inside the kernels
            for target in targets:
                top = target.split(".")[0]
                inside = target == "nerframe.kernels" or target.startswith("nerframe.kernels.")
                if not (inside or top in sys.stdlib_module_names or top in KERNEL_MAY_IMPORT):
                    upward.add((name, target))
    assert upward == set()
