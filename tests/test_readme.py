"""The README's Python examples run as written, in order, in a fresh folder."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    for number, block in enumerate(blocks):
        exec(compile(block, f"README.md example {number}", "exec"), namespace)
    assert (tmp_path / "store" / "report.html").exists()
    assert (tmp_path / "sweep" / "store.json").exists()
