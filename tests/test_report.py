"""The HTML report: its files, self-containment, determinism, content, and a real
headless-Chromium rendering with networking disabled."""

from __future__ import annotations

import base64
import html
import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from store_fixture import write_store

from nerframe.errors import NerframeError
from nerframe.report import build_report
from nerframe.store import tables

CHROMIUM = Path("/usr/bin/chromium")

# 1 matrix + 2 operator graphs + (Gantt, roofline, breakdown) for each of the 3 ok pairs.
CHARTS = {
    "matrix",
    "area-power",
    "validation",
    "graph--gsplat",
    "graph--hashnerf_train",
    *(
        f"{kind}--{pair}"
        for kind in ("gantt", "roofline", "breakdown")
        for pair in ("gsplat--server_npu", "hashnerf_train--edge_npu", "hashnerf_train--server_npu")
    ),
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = write_store(tmp_path_factory.mktemp("store"))
    build_report(store, images=True)
    return store


def _table(store: Path, name: str) -> pl.DataFrame:
    return pl.read_parquet(tables(store)[name])


def _unmapped_message(store: Path) -> str:
    unmapped = _table(store, "summary").filter(status="unmapped")
    assert unmapped.select("graph", "accelerator").rows() == [("gsplat", "edge_npu")]
    message = unmapped["message"].item()
    assert message.startswith("accelerator 'edge_npu' has no module for op types ")
    assert "Projection, SubtileSkip" in message
    return message


def test_files(store: Path) -> None:
    page = (store / "report.html").read_text()
    assert page.count('<div class="chart" data-chart="') == len(CHARTS)
    names = {p.stem for p in (store / "charts").iterdir()}
    assert names == CHARTS
    for name in CHARTS:
        assert (store / "charts" / f"{name}.png").read_bytes().startswith(b"\x89PNG")
        assert "<svg" in (store / "charts" / f"{name}.svg").read_text()[:200]
    assert not list(store.rglob(".*.tmp"))


def test_nothing_would_load_from_a_server(store: Path) -> None:
    page = (store / "report.html").read_text()
    scripts = re.findall(r"<script([^>]*)>", page)
    assert scripts == ["", ' type="application/json" id="nerframe-charts"', ""]
    # Vega, Vega-Lite and vega-embed are inlined.
    assert "window.vegaEmbed=" in page.replace(" ", "")
    # The markup outside the scripts (the inlined libraries mention tags in strings).
    markup = re.sub(r"(<script[^>]*>).*?(</script>)", r"\1\2", page, flags=re.DOTALL)
    assert not re.search(r"<link\b", markup, flags=re.IGNORECASE)
    assert not re.search(r"<(img|iframe|embed|object|source)\b", markup, flags=re.IGNORECASE)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", markup, flags=re.I)
    assert not re.search(r"url\(\s*[\"']?\s*(https?:)?//", markup, flags=re.IGNORECASE)
    assert "@import" not in markup


def test_same_store_same_bytes(store: Path, tmp_path: Path) -> None:
    first = (store / "report.html").read_bytes()
    summary = (store / "summary.md").read_bytes()
    charts = {p.name: p.read_bytes() for p in (store / "charts").iterdir()}
    again = build_report(store, tmp_path / "again.html")
    assert again == tmp_path / "again.html"
    assert again.read_bytes() == first
    assert (store / "summary.md").read_bytes() == summary
    assert {p.name: p.read_bytes() for p in (store / "charts").iterdir()} == charts


def test_overview_warnings_and_unmapped(store: Path) -> None:
    page = (store / "report.html").read_text()
    overview = page[page.index('<section id="overview">') : page.index('<section id="gsplat">')]
    assert overview.count("<tr class=") == 4
    assert f"gsplat on edge_npu: {html.escape(_unmapped_message(store))}" in overview
    # edge_npu's load warning (its sampler's area equals its power); the others have none.
    loaded = dict(_table(store, "accelerators").select("accelerator", "warnings").rows())
    assert loaded["server_npu"] == []
    (warning,) = loaded["edge_npu"]
    assert warning.startswith("area_um2 equals power_uw for modules sampler: ")
    assert "Accelerator load warnings" in overview
    assert f"edge_npu: {html.escape(warning)}" in overview
    summary = _table(store, "summary")
    # Ops share the DRAM bandwidth, so no pair moves bytes faster than it (gsplat on
    # server_npu did before the rule) and the report needs no warning.
    assert (summary["dram_utilization"] <= 1).all()
    assert summary.filter(graph="gsplat", accelerator="server_npu")["dram_utilization"].item() > 0
    pair = page[page.index('<section id="gsplat--server_npu">') :]
    pair = pair[: pair.index("</section>")]
    assert "DRAM utilisation" not in page and "optimistic" not in page
    assert "accelerator server_npu:" not in pair
    edge = page[page.index('<section id="hashnerf_train--edge_npu">') :]
    edge = edge[: edge.index("</section>")]
    assert f"accelerator edge_npu: {html.escape(warning)}" in edge
    assert "DRAM utilisation" not in edge
    created = json.loads((store / "store.json").read_text())["created"]
    assert f"store created {created}" in page


def test_summary_markdown(store: Path) -> None:
    lines = (store / "summary.md").read_text().splitlines()
    table = [line for line in lines if line.startswith("|")]
    assert table[0].startswith("| pipeline | accelerator | status | fps |")
    assert len(table) == 2 + 4
    assert "| gsplat | edge_npu | unmapped | – |" in table[2]
    assert f"- gsplat on edge_npu: {_unmapped_message(store)}" in lines


def test_stale_charts_go(store: Path, tmp_path: Path) -> None:
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    (copy / "charts" / "gantt--gone--npu.png").write_bytes(b"old")
    (copy / "charts" / "notes.txt").write_text("mine")
    build_report(copy, images=True)
    assert not (copy / "charts" / "gantt--gone--npu.png").exists()
    assert (copy / "charts" / "notes.txt").exists()


def test_store_without_accelerators_table(store: Path, tmp_path: Path) -> None:
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    shutil.rmtree(copy / "accelerators")
    page = build_report(copy, images=True).read_text()
    assert "Accelerator load warnings" not in page
    # The accelerator's own roof comes from the store's roofline table instead.
    assert "server_npu ridge" in (copy / "charts" / "roofline--gsplat--server_npu.svg").read_text()


def test_parts_with_other_columns_are_united(store: Path, tmp_path: Path) -> None:
    # A table's parts are read in one call when their schemas agree; parts written with
    # other columns or types (another version) are united column by column instead.
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    part = next(p for p in tables(copy)["summary"] if "gsplat/hardware=edge_npu" in str(p))
    pl.read_parquet(part).drop("message").with_columns(
        pl.col("area_mm2").cast(pl.Float32)
    ).write_parquet(part)
    page = build_report(copy, tmp_path / "report.html").read_text()
    expected = build_report(store, tmp_path / "expected.html").read_text()
    # The dropped message is the unmapped pair's; only that one changes.
    assert page.count("<tr class=") == expected.count("<tr class=") == 4
    message = html.escape(_unmapped_message(store))
    assert message in expected and message not in page


def test_bad_stores(store: Path, tmp_path: Path) -> None:
    with pytest.raises(NerframeError, match="not a nerframe result store"):
        build_report(tmp_path / "absent")
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    shutil.rmtree(copy / "schedule")
    with pytest.raises(NerframeError, match="table\\(s\\) missing: schedule"):
        build_report(copy, tmp_path / "r.html")
    assert not (tmp_path / "r.html").exists()


# --------------------------------------------------------------------------- browser


class _DevTools:
    """Chromium driven over the DevTools protocol on a pipe (fds 3 and 4 of the child):
    no extra package, no debugging port."""

    def __init__(self, profile: Path, log: Path) -> None:
        to_child, self._write = os.pipe()
        self._read, from_child = os.pipe()
        flags = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            f"--user-data-dir={profile}",
            # Any network request would go to a closed local port and fail.
            "--proxy-server=127.0.0.1:9",
            "--proxy-bypass-list=<-loopback>",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        # A small Python trampoline moves the pipe ends to the fds Chromium expects.
        trampoline = (
            "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
            "os.execv(sys.argv[3], sys.argv[3:])"
        )
        command = [sys.executable, "-c", trampoline, str(to_child), str(from_child)]
        with log.open("wb") as err:
            self._process = subprocess.Popen(
                [*command, str(CHROMIUM), *flags],
                pass_fds=(to_child, from_child),
                stdin=subprocess.DEVNULL,
                stdout=err,
                stderr=err,
            )
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + 60
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._read], [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                raise TimeoutError("Chromium did not answer within 60 s")
            chunk = os.read(self._read, 1 << 16)
            if not chunk:
                raise EOFError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def evaluate(self, session: str, expression: str) -> Any:
        result = self.call("Runtime.evaluate", session, expression=expression, returnByValue=True)
        return result["result"].get("value")

    def close(self) -> None:
        try:
            self.call("Browser.close")
            self._process.wait(timeout=20)
        except (OSError, RuntimeError, TimeoutError, EOFError, subprocess.TimeoutExpired):
            self._process.kill()
            self._process.wait()
        finally:
            os.close(self._write)
            os.close(self._read)


VIEWPORT = 1400

_LAYOUT = """(() => {
  const width = document.documentElement.clientWidth;
  const name = (e) => e.tagName + ":" + e.textContent.slice(0, 40);
  const all = (q) => Array.from(document.querySelectorAll(q));
  return {
    page: document.documentElement.scrollWidth,
    wide_tables: all("table").filter((e) => e.getBoundingClientRect().right > width).map(name),
    spilling: all("td, th, p, li, h1, h2, h3").filter((e) => e.scrollWidth > e.clientWidth + 1)
      .map(name),
    wide_charts: all("[data-chart]").filter((e) => e.scrollWidth > e.clientWidth + 1)
      .map((e) => e.getAttribute("data-chart")),
    cut_labels: all("[data-chart] svg text").map((e) => e.textContent)
      .filter((text) => text.includes("\u2026")),
  };
})()"""
"""What makes a page hard to read: its width, tables and charts wider than the window,
text spilling out of its box, and chart labels cut short."""


@pytest.mark.browser
def test_report_renders_offline_in_chromium(store: Path, tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f"optional: {CHROMIUM} not installed (apt-get install chromium)")
    url = (store / "report.html").as_uri()
    log = tmp_path / "chromium.log"
    browser = _DevTools(tmp_path / "profile", log)
    try:
        target = browser.call("Target.createTarget", url="about:blank")["targetId"]
        session = browser.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            browser.call(f"{domain}.enable", session)
        # the width of the defect report's screenshots (newuser_defects.md D18)
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            session,
            width=VIEWPORT,
            height=900,
            deviceScaleFactor=1,
            mobile=False,
        )
        browser.call("Page.navigate", session, url=url)
        deadline = time.monotonic() + 60
        rendered = None
        while rendered is None and time.monotonic() < deadline:
            rendered = browser.evaluate(
                session, "document.body && document.body.getAttribute('data-charts-rendered')"
            )
            time.sleep(0.2)
        svgs = browser.evaluate(session, "document.querySelectorAll('[data-chart] svg').length")
        failed = browser.evaluate(session, "document.body.innerText.includes('chart failed')")
        layout = browser.evaluate(session, _LAYOUT)
        # a picture of the page for people (pytest --basetemp keeps it)
        shot = browser.call("Page.captureScreenshot", session, captureBeyondViewport=True)
        (tmp_path / "report.png").write_bytes(base64.b64decode(shot["data"]))
    finally:
        browser.close()
    # The page never scrolls sideways: tables wrap, charts fit, no cell spills over.
    assert layout["page"] <= VIEWPORT, layout
    assert layout["wide_tables"] == [], layout
    assert layout["spilling"] == [], layout
    assert layout["wide_charts"] == [], layout
    # Chart text is whole: no label cut with an ellipsis (Gantt lanes, axes, legends).
    assert layout["cut_labels"] == [], layout
    assert rendered == str(len(CHARTS)), log.read_text(errors="replace")[-2000:]
    assert svgs == len(CHARTS)
    assert not failed
    console = [
        e["params"]
        for e in browser.events
        if e.get("method") == "Runtime.exceptionThrown"
        or (
            e.get("method") == "Runtime.consoleAPICalled"
            and e["params"]["type"] in ("error", "assert", "warning")
        )
        or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")
    ]
    assert not console, json.dumps(console)[:2000]
    requests = {
        e["params"]["request"]["url"]
        for e in browser.events
        if e.get("method") == "Network.requestWillBeSent"
    }
    assert requests == {url}


def test_report_of_an_analyze_store(tmp_path: Path) -> None:
    from nerframe.analysis import analyze

    store = analyze(["neurex"], output=tmp_path / "out", report=False).store
    page = build_report(store, images=True).read_text()
    # matrix + area and power + validation + operator graph + (Gantt, roofline,
    # breakdown) on neurex and neurex_server
    assert page.count('<div class="chart" data-chart="') == 10
    assert len(list((store / "charts").glob("*.png"))) == 10
    roof = (store / "charts" / "roofline--neurex--neurex.svg").read_text()
    assert "neurex ridge" in roof and "A100 ridge" in roof


def test_report_states_the_workload_conventions(tmp_path: Path) -> None:
    from nerframe.analysis import analyze

    spec = analyze(["gscore"], output=tmp_path / "spec", report=False, model="spec").store
    page = build_report(spec).read_text()
    assert "<h3>Workload conventions</h3>" in page
    assert "Workload model: <strong>spec</strong>" in page
    assert "G = B·N" in page and "iterations per second" in page
    realistic = analyze(["gscore"], output=tmp_path / "real", report=False).store
    page = build_report(realistic).read_text()
    assert "Workload model: <strong>realistic</strong>" in page
    assert "ops of scope <em>frame</em>" in page


def test_script_bundle_is_cached_across_runs(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nerframe import report

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cached = report.bundle_cache()
    assert cached.parent == tmp_path / "cache" / "nerframe"
    report._bundle.cache_clear()
    first = build_report(store, tmp_path / "a.html").read_text(encoding="utf-8")
    bundle = cached.read_text(encoding="utf-8")
    assert "vegaEmbed" in bundle and f"<script>{bundle}</script>" in first
    # A later run (a new process: the in-memory cache is empty) reads the file.
    cached.write_text("/* cached bundle */", encoding="utf-8")
    report._bundle.cache_clear()
    second = build_report(store, tmp_path / "b.html").read_text(encoding="utf-8")
    assert "<script>/* cached bundle */</script>" in second
    report._bundle.cache_clear()
    # An unwritable cache location only costs time.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a.html"))
    assert build_report(store, tmp_path / "c.html").read_text(encoding="utf-8") == first
    report._bundle.cache_clear()


def test_every_value_on_the_page_is_escaped(store: Path, tmp_path: Path) -> None:
    # The template escapes by default (autoescape): markup in the store's own strings
    # comes out as text, with the entities written here by hand.
    copy = tmp_path / "hostile"
    shutil.copytree(store, copy)
    manifest = json.loads((copy / "store.json").read_text())
    manifest["created"] = "<b>now</b>"
    manifest["run"]["scene"] = '<script>alert("x")</script>\''
    (copy / "store.json").write_text(json.dumps(manifest))
    page = build_report(copy, tmp_path / "page.html").read_text()
    assert "store created &lt;b&gt;now&lt;/b&gt;</p>" in page
    scene = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#x27;"
    assert f"<p>Scene: <strong>{scene}</strong> (not in this version's scene table).</p>" in page
    assert "<b>now" not in page and 'alert("x")' not in page.split("<body>")[1]


def test_the_wheel_ships_the_template() -> None:
    import fnmatch
    import tomllib

    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())
    setuptools = project["tool"]["setuptools"]
    assert "nerframe.templates" in setuptools["packages"]
    patterns = setuptools["package-data"]["nerframe.templates"]
    templates = sorted((root / "nerframe" / "templates").iterdir())
    assert [t.name for t in templates] == ["report.html.j2"]
    for template in templates:
        assert any(fnmatch.fnmatch(template.name, p) for p in patterns)
