"""constraints-lowest.txt, which CI's second environment installs, pins every
dependency of pyproject.toml (and the test tools) at its declared lower bound."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _lower_bounds() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    tools = ("pytest>", "pytest-timeout>", "hyp")  # what the lowest environment tests with
    dev = [d for d in project["optional-dependencies"]["dev"] if d.startswith(tools)]
    bounds = {}
    for requirement in [*project["dependencies"], *dev]:
        found = re.fullmatch(
            r"([A-Za-z0-9_.-]+)(?:\[[^]]*\])?>=([0-9.]+)(?:,<[0-9.]+)?", requirement
        )
        assert found, f"no lower bound in {requirement!r}"
        bounds[found[1].lower()] = found[2]
    return bounds


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints-lowest.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.lower()] = version
    return pins


def _same(bound: str, pin: str) -> bool:
    # "1.31" and "1.31.0" are one version
    def parts(v: str) -> list[int]:
        numbers = [int(p) for p in v.split(".")]
        while numbers and numbers[-1] == 0:
            numbers.pop()
        return numbers

    return parts(bound) == parts(pin)


def test_every_dependency_is_pinned_at_its_lower_bound() -> None:
    bounds, pins = _lower_bounds(), _pins()
    assert sorted(bounds) == sorted(pins)
    assert {n: (b, pins[n]) for n, b in bounds.items() if not _same(b, pins[n])} == {}
    assert pins["numpy"].startswith("1.26")  # a nerfstudio 1.1.5 environment's NumPy
