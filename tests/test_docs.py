"""The figures in README.md and docs/ are the code's: `docs/generate.py` rewrites
them, and these tests regenerate them in memory and fail when a file differs.

After a change that moves a figure, run ``python docs/generate.py`` and commit.
"""

from __future__ import annotations

import doctest
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    return _generator()


@pytest.fixture(scope="module")
def readme_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("readme")


@pytest.fixture(scope="module")
def generated(generator: ModuleType, readme_folder: Path) -> dict[str, str]:
    # One generation for the whole module: the README's examples and every region.
    return generator.generate(ROOT, folder=readme_folder)


@pytest.mark.parametrize("name", _generator().documents())
def test_the_document_is_as_generated(generated: dict[str, str], name: str) -> None:
    text = (ROOT / name).read_text(encoding="utf-8")
    stale = [
        f"line {i + 1}: {old!r} -> {new!r}"
        for i, (old, new) in enumerate(
            zip(text.splitlines(), generated[name].splitlines(), strict=False)
        )
        if old != new
    ]
    assert text == generated[name], (
        f"{name} is stale; run `python docs/generate.py` and commit. First differences: "
        + "; ".join(stale[:5])
    )


def test_every_region_is_known_and_closed(generator: ModuleType) -> None:
    for name in generator.documents():
        text = (ROOT / name).read_text(encoding="utf-8")
        opened = re.findall(r"<!-- generated: ([a-z0-9-]+) -->", text)
        assert text.count("<!-- end generated -->") == len(opened), name
        assert set(opened) <= set(generator.REGIONS) | set(generator.FOREIGN), name
    model = (ROOT / "docs" / "model.md").read_text(encoding="utf-8")
    assert set(generator.REGIONS) <= set(re.findall(r"<!-- generated: ([a-z0-9-]+) -->", model))


def test_every_readme_python_block_is_a_doctest() -> None:
    # a block without prompts would never run, and so could drift unseen
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert len(blocks) >= 3
    for block in blocks:
        assert block.lstrip().startswith(">>> "), block[:80]


def test_readme_examples_made_what_they_say(readme_folder: Path) -> None:
    assert (readme_folder / "store" / "report.html").exists()
    assert (readme_folder / "sweep" / "store.json").exists()


def test_readme_feasible_count_matches_sql_over_the_store(readme_folder: Path) -> None:
    # An oracle apart from the README's polars expression: DuckDB over the Parquet parts.
    import nerframe

    counts = nerframe.query(
        "select count(*) as n, count(*) filter (where feasible) as feasible from sweep",
        readme_folder / "campaign",
    ).row(0)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"\n{counts}\n" in readme
    assert counts[0] == 2 * 2 * 2 * 37 * 4  # the spec's workload x grid combinations


def test_a_changed_figure_is_caught(generator: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    text = (ROOT / "docs" / "model.md").read_text(encoding="utf-8")
    region = text.index("<!-- generated: native-pairs -->")
    row = text.index("| icarus on icarus | ", region)
    changed = text[:row] + text[row:].replace("| icarus on icarus | ", "| icarus on icarus | 9", 1)
    assert changed != text
    (tmp_path / "docs" / "model.md").write_text(changed, encoding="utf-8")
    (tmp_path / "README.md").write_text("no examples here\n", encoding="utf-8")
    assert generator.generate(tmp_path)["docs/model.md"] == text


def test_an_unknown_region_is_one_error_line(generator: ModuleType) -> None:
    with pytest.raises(SystemExit, match="error: doc: unknown generated region 'nope'"):
        generator.fill_regions("<!-- generated: nope -->\n<!-- end generated -->\n", "doc", {})


def test_its_docstring_examples_hold(generator: ModuleType) -> None:
    assert doctest.testmod(generator).failed == 0
