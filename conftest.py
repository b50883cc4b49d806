"""Run-wide pytest policy: a skip must say it is optional, or it fails the run.

A skip whose reason does not start with ``optional: `` means something the tests
need is missing (a dependency CI should have installed, a fixture that broke), so
it is reported as a failure instead of passing silently.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

OPTIONAL = "optional: "


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2]).removeprefix("Skipped: ")
        if not reason.startswith(OPTIONAL):
            report.outcome = "failed"
            report.longrepr = f"unexpected skip (reason must start with {OPTIONAL!r}): {reason}"
