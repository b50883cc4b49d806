"""Start-up: `import nerframe` loads no module until a public name is used, and a
small command imports only what it runs (altair, DuckDB, vl-convert, the sweep and
trace machinery cost more to import than ``nerframe costs`` takes to run)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import nerframe

HEAVY = ("altair", "duckdb", "vl_convert", "dask", "torch", "jsonschema")


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running `code`."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)), file=sys.stderr)"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stderr.splitlines()[-1]))


def _type_checking_imports() -> dict[str, str]:
    """Name -> module of the imports `nerframe/__init__.py` shows type checkers."""
    tree = ast.parse(Path(nerframe.__file__).read_text(encoding="utf-8"))
    (block,) = [
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    ]
    return {
        alias.name: str(node.module)
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module != "nerframe"
        for alias in node.names
    }


def test_import_loads_no_submodule() -> None:
    loaded = _modules_after("import nerframe")
    ours = {m for m in loaded if m.startswith("nerframe.")}
    assert ours == {"nerframe.errors"}
    assert not {m.split(".")[0] for m in loaded} & {*HEAVY, "polars", "numba", "pyarrow"}


@pytest.mark.slow
def test_costs_command_imports_only_what_it_runs() -> None:
    loaded = _modules_after(
        "import contextlib, io\nfrom nerframe.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    main(['costs', 'neurex'])"
    )
    assert not {m.split(".")[0] for m in loaded} & set(HEAVY)
    for unused in ("analysis", "scheduling", "hardware", "sweeps", "trace", "report", "sql"):
        assert f"nerframe.{unused}" not in loaded


def test_every_public_name_resolves_to_its_declared_home() -> None:
    declared = _type_checking_imports()
    errors = {n for n in nerframe.__all__ if n.endswith(("Error", "Warning"))}
    assert set(declared) | errors == set(nerframe.__all__)
    assert set(declared) == set(nerframe._HOMES)
    for name, module in declared.items():
        assert getattr(nerframe, name) is getattr(sys.modules[module], name), name
        assert name in dir(nerframe)
    assert nerframe.trace.TracedGraph is nerframe.TracedGraph
    assert "charts" in dir(nerframe)


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        nerframe.no_such_name  # noqa: B018
