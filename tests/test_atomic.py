"""Atomic files and folders: nothing partial, nothing lost, permissions from the umask."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nerframe.atomic import atomic_folder, atomic_path


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_file_is_complete_or_absent(tmp_path: Path, umask_022: None) -> None:
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("crash")
    assert list(tmp_path.iterdir()) == []
    with atomic_path(target) as tmp:
        tmp.write_text("whole")
    assert target.read_text() == "whole"
    assert target.stat().st_mode & 0o777 == 0o644


def test_folder_replaces_only_when_complete(tmp_path: Path, umask_022: None) -> None:
    target = tmp_path / "store"
    with atomic_folder(target) as folder:
        (folder / "a").write_text("first")
    assert target.stat().st_mode & 0o777 == 0o755
    with pytest.raises(RuntimeError), atomic_folder(target) as folder:
        (folder / "a").write_text("second, unfinished")
        raise RuntimeError("crash")
    assert (target / "a").read_text() == "first"
    with atomic_folder(target) as folder:
        (folder / "b").write_text("second")
    assert sorted(p.name for p in target.iterdir()) == ["b"]
    assert [p.name for p in tmp_path.iterdir()] == ["store"]
