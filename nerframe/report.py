"""The offline HTML report of a result store.

`build_report` reads a store's tables and writes:

- ``report.html``: one self-contained page (Vega, Vega-Lite and vega-embed inlined
  from vl-convert's bundle, every chart spec and its data inlined; it requests
  nothing from any server). An overview (pipeline × accelerator matrix and table,
  unmapped pairs with their message, accelerator load warnings), then per pipeline
  its operator graph and, per accelerator it ran on, the schedule Gantt chart, the
  roofline against the accelerator's own system and the A100, the breakdown by
  category, and warnings (DRAM utilisation above 1 means the schedule is optimistic);
- ``summary.md``: the summary as a short Markdown table;
- ``charts/NAME.png`` and ``charts/NAME.svg`` for every chart.

The page is laid out by the Jinja2 template ``nerframe/templates/report.html.j2``
(autoescape: every value from the store is escaped); this module prepares its data.
The same store always gives byte-identical files: everything is sorted and the
only time shown is the one in ``store.json``.

>>> build_report("no-such-store")
Traceback (most recent call last):
...
nerframe.errors.StoreError: no-such-store: not a nerframe result store (no such folder)
"""

from __future__ import annotations

import html
import itertools
import json
import os
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, cast

import jinja2
import polars as pl
import vl_convert as vlc
from markupsafe import Markup

from nerframe import charts, schemas
from nerframe.atomic import atomic_folder, atomic_path
from nerframe.charts.tables import CHART, largest
from nerframe.errors import InvalidInputError, NerframeError, StoreError
from nerframe.graphs import per_ray_samples
from nerframe.progress import Progress
from nerframe.rooflines import PRESETS, System, is_preset, roofline
from nerframe.store import damaged_error, read_manifest, tables

REQUIRED = ("summary", "schedule", "costs", "ops", "edges")
"""Tables a store needs for a report (``roofline`` and ``accelerators`` are optional)."""

REFERENCE_SYSTEM = PRESETS["A100"]


Spec = dict[str, Any]


@dataclass(frozen=True)
class _Figure:
    name: str  # file stem under charts/
    spec: Spec


@dataclass
class _Page:
    """The page's blocks in document order, and the charts they place.

    A block is plain data: its ``kind`` (which branch of ``templates/report.html.j2``
    lays it out, as one line of the page) and that branch's values.
    """

    blocks: list[dict[str, object]]
    figures: list[_Figure]

    def add(self, kind: str, **data: object) -> None:
        self.blocks.append({"kind": kind} | data)

    def figure(self, name: str, spec: Spec, title: str | None = None) -> None:
        """Place a chart; `title` replaces its title, its subtitle stays."""
        if title is not None:
            old = spec.get("title")
            subtitle = old.get("subtitle") if isinstance(old, dict) else None
            spec = spec | {"title": {"text": title} | ({"subtitle": subtitle} if subtitle else {})}
        index = len(self.figures)
        self.figures.append(_Figure(name, spec))
        self.add("chart", index=index)

    def note(self, text: str) -> None:
        self.add("note", text=text)

    def table(self, head: list[str], rows: list[dict[str, object]], *, end: bool = False) -> None:
        """A table; each row is ``{"status": class or None, "cells": [(class, text)]}``;
        `end` closes the section in the same line."""
        self.add("table-end" if end else "table", head=head, rows=rows)


def _escape(value: object) -> Markup:
    """Every value the template prints, escaped unless it is already Markup.

    html.escape rather than markupsafe's escape: the same page as the report had
    before the template (``&quot;`` and ``&#x27;``, not ``&#34;`` and ``&#39;``).

    >>> _escape("a < b & 'c'"), _escape(Markup("<b>"))
    (Markup('a &lt; b &amp; &#x27;c&#x27;'), Markup('<b>'))
    """
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value), quote=True))


@cache
def _template() -> jinja2.Template:
    """The page's template, ``nerframe/templates/report.html.j2`` (package data)."""
    # Lines holding only a tag leave nothing and the final newline stays, so each
    # block is exactly one line of the page; StrictUndefined makes a misspelt field an
    # error rather than an empty cell.
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("nerframe", "templates"),
        autoescape=True,
        finalize=_escape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    return environment.get_template("report.html.j2")


def _yes_no(value: object) -> object:
    """A boolean cell as yes or no; anything else as it is."""
    return ("yes" if value else "no") if isinstance(value, bool) else value


def _num(value: float | int | None, digits: int = 4) -> str:
    if value is None:
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}g}"


# Section ids of the page's own parts, which a graph's section id must not take.
_SECTIONS = ("overview", "area-power", "validation", "measured")


def _slugs(names: list[str], taken: tuple[str, ...] = ()) -> dict[str, str]:
    """A distinct chart-file and anchor name per name, none of them in `taken`.

    A name keeps its readable form (runs of other characters than letters, digits,
    ``_`` and ``.`` become ``_``; never ``-``, so ``--`` separates the parts of a
    chart's file name) unless an earlier name has that form too: then it gets ``_2``
    (or ``_3``…). Names that are their own readable form come first, then the others,
    each in the order of `names`.

    >>> _slugs(["a b", "a_b", "gbu_train", "overview"], _SECTIONS)
    {'a_b': 'a_b', 'gbu_train': 'gbu_train', 'overview': 'overview_2', 'a b': 'a_b_2'}
    """
    readable = {name: re.sub(r"[^A-Za-z0-9_.]+", "_", name) for name in names}
    natural = set(readable.values())
    used = set(taken)
    result = {}
    # Names that are their own readable form keep it before others are numbered.
    for name in sorted(names, key=lambda n: readable[n] != n):
        slug = readable[name]
        if slug in used:  # a numbered form is never another name's readable form
            slug = next(
                f"{slug}_{n}" for n in itertools.count(2) if f"{slug}_{n}" not in used | natural
            )
        used.add(slug)
        result[name] = slug
    return result


def _load(store: Path) -> dict[str, pl.DataFrame]:
    parts = tables(store)
    if "schedule" not in parts and "summary" in parts:
        # A store whose pairs are all unmapped has no schedule rows at all.
        statuses = pl.concat(
            [pl.read_parquet(f, columns=["status"], glob=False) for f in parts["summary"]]
        )
        if not (statuses["status"] == "ok").any():
            parts["schedule"] = []
    missing = [t for t in REQUIRED if t not in parts]
    if missing and "sweep" in parts:
        raise StoreError(
            f"{store}: a sweep store; a report is built from a store of analyze (query a "
            "sweep store with 'nerframe query', draw its front with 'sweep --pareto --chart')",
            str(store),
        )
    if missing:
        raise StoreError(
            f"{store}: cannot build a report, table(s) missing: {', '.join(missing)}", str(store)
        )
    frames = {}
    for name, files in parts.items():
        try:
            frames[name] = _read(files) if files else schemas.empty(name)
        except (OSError, pl.exceptions.PolarsError) as e:
            if (error := damaged_error(store, files)) is not None:
                raise error from None
            raise StoreError(
                f"{Path(store, name)}: unreadable table {name!r} ({str(e).splitlines()[0]})",
                str(store),
            ) from None
        frames[name] = _as_table(store, name, frames[name])
    return frames


def _as_table(store: Path, name: str, frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` with the columns and types of table `name`, or a `StoreError` naming the
    table: a readable Parquet part of other columns (a file copied in, a table
    overwritten by ``-o``) gave a TypeError deep in the report."""
    expected = schemas.TABLES.get(name)
    if expected is None:
        return frame
    missing = [c for c in expected if c not in frame.columns]
    problem = f"column {missing[0]!r} is missing" if missing else None
    # (a part of other columns, unioned with the store's own, has rows of no pair)
    keys = [c for c in ("graph", "accelerator") if c in expected and c not in missing]
    if problem is None and (nameless := [c for c in keys if frame[c].null_count()]):
        problem = f"rows without a {nameless[0]}"
    if problem is None:
        try:
            return frame.cast(dict(expected), strict=True)
        except (pl.exceptions.PolarsError, ValueError, TypeError) as e:
            problem = f"a column of another type ({str(e).splitlines()[0]})"
    raise StoreError(
        f"{Path(store, name)}: table {name!r} is not nerframe's: {problem}; run the same "
        f"analyze again to rebuild the store ('nerframe verify {store}' lists its parts)",
        str(store),
    )


def _read(files: list[Path]) -> pl.DataFrame:
    """The rows of a table's Parquet parts, in one read when they share a schema."""
    try:
        return pl.read_parquet(files, hive_partitioning=False, glob=False)
    except (pl.exceptions.SchemaError, pl.exceptions.ColumnNotFoundError):
        # Parts with other columns or types (written by another version): union them.
        return pl.concat(
            [pl.read_parquet(f, hive_partitioning=False, glob=False) for f in files],
            how="diagonal_relaxed",
        )


def _own_system(accel: str, frames: dict[str, pl.DataFrame]) -> System | None:
    """The accelerator's roofline system, from the accelerators table or else from the
    store's roofline rows."""
    if "accelerators" in frames:
        row = frames["accelerators"].filter(pl.col("accelerator") == accel)
        if row.height:
            peak, bandwidth = row.select("peak_tflops", "dram_bandwidth_gbps").row(0)
            # units all rated in items (Gaussians, samples): no FLOP peak, no roofline
            return (
                System(accel, peak, bandwidth, source="store accelerators table") if peak else None
            )
    if "roofline" in frames:
        row = frames["roofline"].filter(pl.col("system") == accel)
        if row.height:
            peak, bandwidth = row.select("peak_tflops", "bandwidth_gbps").row(0)
            return System(accel, peak, bandwidth, source="store roofline table")
    return None


def _accelerator_warnings(frames: dict[str, pl.DataFrame]) -> dict[str, list[str]]:
    if "accelerators" not in frames:
        return {}
    rows = frames["accelerators"].select("accelerator", "warnings").sort("accelerator")
    return {accel: sorted(w or []) for accel, w in rows.iter_rows() if w}


_COLUMNS = (
    ("graph", "pipeline"),
    ("accelerator", "accelerator"),
    ("status", "status"),
    ("fps", "fps"),
    ("energy_per_frame_j", "energy/frame (J)"),
    ("avg_power_w", "avg power (W)"),
    ("area_mm2", "area (mm²)"),
    ("dram_utilization", "DRAM util."),
    ("bottleneck_module", "bottleneck"),
)
_NUMERIC = {"fps", "energy_per_frame_j", "avg_power_w", "area_mm2", "dram_utilization"}


def _cells(row: dict[str, object]) -> list[str]:
    return [_cell(c, row[c]) for c, _ in _COLUMNS]


def _cell(column: str, value: object) -> str:
    # Plain significant digits, no SI prefixes: fps "694m" reads as millions.
    if column in _NUMERIC or (isinstance(value, int) and not isinstance(value, bool)):
        return _num(cast(float | None, value))
    return "–" if value is None else str(value)


def _summary_markdown(summary: pl.DataFrame) -> str:
    lines = [
        "# nerframe summary",
        "",
        "| " + " | ".join(title for _, title in _COLUMNS) + " |",
        "|" + "|".join("---:" if c in _NUMERIC else "---" for c, _ in _COLUMNS) + "|",
    ]
    lines += [
        "| " + " | ".join(c.replace("|", "\\|") for c in _cells(row)) + " |"
        for row in summary.iter_rows(named=True)
    ]
    unmapped = summary.filter(pl.col("status") != "ok")
    if unmapped.height:
        lines += ["", "Unmapped pairs:", ""]
        lines += [
            f"- {g} on {a}: {m}"
            for g, a, m in unmapped.select("graph", "accelerator", "message").iter_rows()
        ]
    return "\n".join(lines) + "\n"


def _summary_rows(summary: pl.DataFrame) -> list[dict[str, object]]:
    return [
        {
            "status": row["status"],
            "cells": [
                ("num" if c in _NUMERIC else "text", v)
                for (c, _), v in zip(_COLUMNS, _cells(row), strict=True)
            ],
        }
        for row in summary.iter_rows(named=True)
    ]


def _workload(graph: str, frames: dict[str, pl.DataFrame], summary: pl.DataFrame) -> str:
    """One sentence: what one frame of `graph` is, from its ops and summary rows."""
    ops = frames["ops"].filter(pl.col("graph") == graph)
    rows = summary.filter(graph=graph)
    kind = "training iteration" if "backward" in ops.columns and ops["backward"].any() else "frame"
    # A scene of Gaussians (some op has G) renders pixels from Gaussians, not rays from
    # samples; B and N are those of the per-pixel rows (`per_ray_samples`).
    gaussians = "G" in ops.columns and ops["G"].max() is not None
    batch = ops.filter((pl.col("scope") == "batch") & pl.col("B").is_not_null())
    unit, item = ("pixels", "Gaussians per pixel") if gaussians else ("rays", "samples per ray")
    parts = []
    if batch.height:
        parts.append(f"{unit} per batch {int(largest(batch['B'])):,}")
        parts.append(f"{item} {per_ray_samples(ops):,}")
    if gaussians:
        parts.append(f"Gaussians in the scene {int(largest(ops['G'])):,}")
    for column, name in (("frame_pixels", "pixel"), ("batches", "batch")):
        if rows[column].max() is not None:
            count = int(largest(rows[column]))
            plural = name if count == 1 else f"{name}es" if name == "batch" else f"{name}s"
            parts.append(f"{count:,} {plural} per {kind}")
    return f"Workload: {len(ops)} ops; " + ", ".join(parts) + "."


def _pair_systems(own: System | None) -> list[System]:
    """The roofline systems of a pair's chart: its accelerator's own and the reference
    (once, when the accelerator is the reference's GPU)."""
    if own is not None and is_preset(own):
        own = None
    return list({s.name: s for s in (own, REFERENCE_SYSTEM) if s is not None}.values())


def _pair_specs(
    frames: dict[str, pl.DataFrame], pairs: list[tuple[str, str]], own: dict[str, System | None]
) -> dict[tuple[str, str], dict[str, Spec]]:
    """Each pair's Gantt, roofline and breakdown specs, kind by kind for every pair at
    once (a pair without schedule or cost rows has none of that kind)."""
    ids = pl.DataFrame(
        {
            CHART: range(len(pairs)),
            "graph": [g for g, _ in pairs],
            "accelerator": [a for _, a in pairs],
        },
        schema={CHART: pl.UInt32, "graph": pl.String, "accelerator": pl.String},
    )
    specs: dict[tuple[str, str], dict[str, Spec]] = {pair: {} for pair in pairs}
    schedule = frames["schedule"].join(ids, on=["graph", "accelerator"])
    for kind, make in (("gantt", charts.gantt_specs), ("breakdown", charts.breakdown_specs)):
        for chart, spec in make(schedule).items():
            specs[pairs[cast(int, chart)]][kind] = spec
    shown = pl.DataFrame(
        [(i, g, s.name) for i, (g, a) in enumerate(pairs) for s in _pair_systems(own[a])],
        schema={CHART: pl.UInt32, "graph": pl.String, "system": pl.String},
        orient="row",
    )
    systems = {s.name: s for _, a in pairs for s in _pair_systems(own[a])}
    if frames["costs"].height and systems:
        rows = roofline(frames["costs"], list(systems.values()))
        for chart, spec in charts.roofline_specs(rows.join(shown, on=["graph", "system"])).items():
            specs[pairs[cast(int, chart)]]["roofline"] = spec
    return specs


def _pair_section(
    page: _Page,
    row: dict[str, object],
    specs: dict[str, Spec],
    own: System | None,
    load: list[str],
    stem: str,
) -> None:
    graph, accel = str(row["graph"]), str(row["accelerator"])
    page.add("pair", id=stem, graph=graph, accelerator=accel)
    page.add(
        "stats",
        stats=[
            (title, _cell(c, row[c]))
            for c, title in (
                ("fps", "fps"),
                ("energy_per_frame_j", "energy/frame (J)"),
                ("avg_power_w", "avg power (W)"),
                # the frame is pre + the batches (makespan, then one interval each) +
                # post: the span of the Gantt chart when the graph has frame ops
                ("frame_cycles", "frame (cycles)"),
                ("pre_cycles", "frame ops before the batches (cycles)"),
                ("makespan_cycles", "makespan (cycles)"),
                ("interval_cycles", "interval (cycles)"),
                ("post_cycles", "frame ops after the batches (cycles)"),
                ("batches", "batches"),
            )
        ],
        bottleneck=row["bottleneck_module"] or "–",
    )
    warnings = [f"accelerator {accel}: {w}" for w in load]
    if warnings:
        page.add("warnings", entries=warnings)
    if "gantt" in specs:
        page.figure(f"gantt--{stem}", specs["gantt"])
    else:
        page.note("The store holds no schedule rows for this pair.")
    if own is None:
        page.note(f"No roofline system for {accel} in the store; showing {REFERENCE_SYSTEM.name}.")
    if "roofline" in specs:
        names = " and ".join(s.name for s in _pair_systems(own))
        # Every chart of a report names its pipeline and accelerator.
        page.figure(f"roofline--{stem}", specs["roofline"], f"Roofline of {graph} on {names}")
    if "breakdown" in specs:
        page.figure(f"breakdown--{stem}", specs["breakdown"], f"Breakdown of {graph} on {accel}")
    page.add("end")


def _area_power_section(page: _Page, frames: dict[str, pl.DataFrame]) -> None:
    """Area and power of the store's accelerators, part by part: the accelerators at
    28 nm, the GPUs apart at their own node."""
    if "accelerators" not in frames:
        return
    from nerframe.area_power import breakdown
    from nerframe.hardware import BUILTIN, accelerator

    tables, missing, gpus = [], [], []
    listed = frames["accelerators"].select("accelerator", "path").sort("accelerator")
    for name, path in listed.rows():
        # a user file may have moved since the run: the report says so rather than fail
        source = path if path and Path(path).is_file() else name if name in BUILTIN else None
        if source is None:
            missing.append(name)
            continue
        accel = accelerator(source)
        tables.append(breakdown(accel))
        if accel.kind == "gpu":
            gpus.append(accel.name)
    page.add("section", id="area-power", title="Area and power")
    page.note(
        "Area = modules (count x area per unit) + SRAM blocks; power = module dynamic power "
        "with every unit busy + leakage; SRAM access energy enters each schedule's energy "
        "through its traffic. Accelerators are compared at 28 nm (the node table, "
        "nerframe.technology); GPUs are shown apart at their own node. Log axes: the grey "
        "bar is the whole design, each point a module or SRAM block; 'nerframe hardware "
        "NAME' lists the parts."
    )
    if tables:
        table = pl.concat(tables)
        spec = charts.area_power_chart(table, gpus=gpus).to_dict(validate=False)
        # the title names the node only when every design in the chart is at it
        page.figure("area-power", spec, "Area and power" if gpus else "Area and power at 28 nm")
    if missing:
        page.note(f"Accelerator files no longer found: {', '.join(missing)}.")
    page.add("end")


def _measured_section(page: _Page, measured: pl.DataFrame) -> None:
    """Traced runs: each op's measured time against its roofline time on the host."""
    from nerframe.trace.compare import median_log_error

    page.add("section", id="measured", title="Measured vs predicted")
    table = measured.sort("graph", "op_id")
    if table["predicted_s"].is_null().all():
        page.note(
            "No host probe result was stored when this store was built: run 'nerframe probe' "
            "and analyse the trace again to compare measured times with the roofline."
        )
    else:
        for graph in table["graph"].unique().sort().to_list():
            error = median_log_error(table.filter(graph=graph))
            shown = "–" if error is None else f"{error:.3g} (×{10**error:.3g})"
            page.add("paragraph", text=f"{graph}: median |log10(measured / predicted)| = {shown}")
        if table["ratio"].is_not_null().any():
            page.figure("measured", charts.measured_chart(table).to_dict(validate=False))
    head = ["graph", "op", "op type", "module", "measured (s)", "predicted (s)", "ratio", "note"]
    rows: list[dict[str, object]] = [
        {
            "status": None,
            "cells": [("text", r[c]) for c in ("graph", "op_id", "op_type", "path")]
            + [("num", _num(r[c])) for c in ("measured_s", "predicted_s", "ratio")]
            + [("text", _approximate(r["approximate"]))],
        }
        for r in table.iter_rows(named=True)
    ]
    page.table(head, rows, end=True)


def _unknown_section(page: _Page, run: dict[str, object]) -> None:
    """Traced graphs' unknown modules: no rows, so their time is in no figure."""
    unknown = run.get("unknown_modules")
    if not isinstance(unknown, dict) or not unknown:
        return
    modules = []
    for graph, found in sorted(unknown.items()):
        share = found.get("share")
        of_time = f", {share:.1%} of the measured time" if isinstance(share, float) else ""
        classes = ", ".join(str(c) for c in found.get("classes", []))
        modules.append(
            {"graph": graph, "count": found.get("count"), "classes": classes, "of_time": of_time}
        )
    page.add("unknown", modules=modules)


def _approximate(reason: str | None) -> str:
    return f"approximate: {reason}" if reason else ""


def _document(page: _Page, specs: list[dict[str, object]]) -> str:
    payload = json.dumps(
        {"config": charts.CONFIG, "charts": specs},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )
    # "<" only occurs inside JSON strings, where \u003c means the same and cannot
    # close the script element.
    payload = payload.replace("<", "\\u003c")
    # Not escaped: the page's own style and scripts, and JSON that cannot close its
    # script element (the bundle's end tags are escaped in `_bundle`, "<" above).
    return _template().render(
        blocks=page.blocks,
        style=Markup(_STYLE),
        bundle=Markup(_bundle()),
        payload=Markup(payload),
        render=Markup(_RENDER),
    )


@cache
def _bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script, from vl-convert (no network).

    Bundling takes seconds, so the script is kept in `bundle_cache` (keyed by the
    vl-convert and Vega-Lite versions, which fix its content) for later runs.
    """
    cached = bundle_cache()
    try:
        return cached.read_text(encoding="utf-8")
    except OSError:
        pass
    # The stub marks the optional snippet argument as required.
    code = vlc.javascript_bundle(vl_version=charts.VL_VERSION)  # type: ignore[call-arg]
    # An end tag inside the code would end the script element; "<\/" means "</" in JS
    # strings and regular expressions alike.
    code = re.sub(r"</(script)", r"<\\/\1", code, flags=re.IGNORECASE)
    try:
        with atomic_path(cached) as tmp:
            tmp.write_text(code, encoding="utf-8")
    except OSError:
        pass  # an unwritable cache only costs the next run the bundling time
    return code


def bundle_cache() -> Path:
    """Where the report's script bundle is cached: ``$XDG_CACHE_HOME/nerframe`` (by
    default ``~/.cache/nerframe``), one file per vl-convert and Vega-Lite version.

    >>> bundle_cache().name.startswith("vega-bundle-")
    True
    """
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "nerframe"
    versions = f"{metadata.version('vl-convert-python')}-vl{charts.VL_VERSION}"
    return root / f"vega-bundle-{versions}.js"


_STYLE = """
body { font-family: "Liberation Sans", Arial, sans-serif; margin: 2em auto; max-width: 1400px;
       padding: 0 1em; color: #222; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; max-width: 100%; }
th, td { border: 1px solid #ddd; padding: 0.3em 0.6em; overflow-wrap: anywhere; }
th { white-space: nowrap; } td.text { min-width: 3em; } td.long { min-width: 18em; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.unmapped { color: #888; }
.warnings li { color: #a33; } .note { color: #666; font-style: italic; }
.chart { margin: 1em 0; overflow-x: auto; max-width: 100%; } .meta { color: #666; }
nav ul { columns: 3; } details.unmapped summary h3 { display: inline; }
""".strip()

_RENDER = """
(function () {
  var data = JSON.parse(document.getElementById("nerframe-charts").textContent);
  var targets = Array.prototype.slice.call(document.querySelectorAll("[data-chart]"));
  var jobs = targets.map(function (el) {
    var spec = data.charts[Number(el.getAttribute("data-chart"))];
    return vegaEmbed(el, spec, {actions: false, renderer: "svg", config: data.config}).then(
      function () { return true; },
      function (err) {
        el.textContent = "chart failed: " + err;
        console.error("nerframe chart " + el.getAttribute("data-chart") + ": " + err);
        return false;
      });
  });
  Promise.all(jobs).then(function (done) {
    document.body.setAttribute("data-charts-rendered",
      String(done.filter(function (ok) { return ok; }).length));
  });
})();
""".strip()


def _validation_section(page: _Page) -> None:
    """Published figures against the built-in model (`nerframe.validate`), with the
    band of each row's assumed figures (docs/uncertainty.md)."""
    from nerframe.charts.validation import validation_chart
    from nerframe.validation import accuracy, summary, validate

    table = validate(bands=True)
    columns = (
        "id",
        "tag",
        "fixes",
        "metric",
        "workload",
        "bound",
        "value",
        "unit",
        "predicted",
        "error",
        "score",
        "low",
        "high",
        "inside",
        "source",
    )
    numbers = ("value", "predicted", "error", "score", "low", "high")
    body: list[dict[str, object]] = [
        {
            "status": None,
            "cells": [
                ("num", _num(row[c], 3))
                if c in numbers
                # the source, a paragraph, takes the width the short cells leave
                else (
                    "text long" if c == "source" else "text",
                    "–" if row[c] is None else _yes_no(row[c]),
                )
                for c in columns
            ],
        }
        for row in table.iter_rows(named=True)
    ]
    page.add("section", id="validation", title="Validation against published figures")
    page.add("paragraph", text=summary(table))
    page.figure("validation", validation_chart(table).to_dict(validate=False))
    # beside the reference framework's own accuracy (NeRArch-Sim, ISCA 2026)
    beside: list[dict[str, object]] = [
        {
            "status": None,
            "cells": [
                ("text", r["measure"]),
                ("text", r["metric"]),
                ("num", r["rows"]),
                ("num", _percent(r["nerframe"])),
                ("num", _percent(r["nerarch_sim"])),
            ],
        }
        for r in accuracy(table).iter_rows(named=True)
    ]
    page.table(["measure", "metric", "rows", "nerframe", "NeRArch-Sim"], beside)
    page.table(list(columns), body)
    page.add("end")


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def _scene(name: object) -> dict[str, object] | None:
    """What the store's scene (the run's ``scene``) sets, for the page's scene sentence;
    None without one, no dataset for a name this version's scene table lacks.

    >>> _scene("lego")["width"], _scene("elsewhere")["dataset"], _scene(None)
    (800, None, None)
    """
    if not isinstance(name, str):
        return None
    from nerframe.scene_table import scene

    try:
        place = scene(name)
    except NerframeError:  # a store written with a scene this version does not list
        return {"name": name, "dataset": None}
    gaussians = (
        f"{place.gaussians:,} Gaussians"
        if place.gaussians
        else "no published Gaussian count (G keeps its default)"
    )
    return {
        "name": place.name,
        "dataset": place.dataset,
        "width": place.width,
        "height": place.height,
        "gaussians": gaussians,
    }


def _export(folder: Path, names: list[str], specs: list[dict[str, object]]) -> None:
    """The charts as ``folder/NAME.svg`` and ``.png``. They are exported into a new
    folder that replaces `folder` once every chart is in it: an interrupted export
    leaves the earlier charts (or none), never a part of them that looks complete."""
    with atomic_folder(folder) as building:
        # vl-convert renders outside the GIL, so the images are exported in parallel.
        with ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:
            done = pool.map(
                lambda named: charts.save_chart(
                    named[1], building / f"{named[0]}.svg", building / f"{named[0]}.png"
                ),
                zip(names, specs, strict=True),
            )
            with Progress(len(names), "report", "charts") as bar:
                try:
                    for _ in done:
                        bar.advance(1)
                except OSError as e:  # a full disk: named by the chart's own path
                    if e.filename is not None and Path(e.filename).parent == building:
                        e.filename = str(folder / Path(e.filename).name)
                    raise
        # The charts of an earlier build go (those that no longer exist would mislead);
        # anything else the user put into the folder stays.
        for kept in sorted(folder.glob("*")) if folder.is_dir() else []:
            if kept.suffix not in (".png", ".svg"):
                copy = shutil.copytree if kept.is_dir() else shutil.copy2
                copy(kept, building / kept.name)


def build_report(store: str | Path, output: str | Path | None = None, images: bool = False) -> Path:
    """Write the report of `store` and return the HTML path.

    Without `output` it writes ``report.html`` and ``summary.md`` into the store;
    with `output` only that HTML file, leaving the store untouched. With
    `images`, the PNG and SVG of every chart go to ``charts/`` beside the HTML
    (each chart rendered once; the PNG is rasterised from its SVG).

    >>> import nerframe, tempfile
    >>> store = nerframe.analyze("neurex", "neurex", tempfile.mkdtemp() + "/s", report=False).store
    >>> build_report(store).name, (store / "summary.md").exists()
    ('report.html', True)
    >>> elsewhere = build_report(store, store.parent / "copy.html")
    >>> elsewhere.read_text() == (store / "report.html").read_text()
    True
    """
    if output is not None and Path(output).suffix.lower() not in (".html", ".htm"):
        # (report -o rows.csv wrote a page of HTML under a table's name)
        raise InvalidInputError(
            f"{output}: a report is an HTML page: give a name ending in .html", str(output)
        )
    store = Path(store)
    manifest = read_manifest(store)
    frames = _load(store)
    summary = frames["summary"].sort("graph", "accelerator")
    load = _accelerator_warnings(frames)
    page = _Page([], [])
    page.add("title")
    page.add("meta", version=manifest.get("nerframe_version"), created=manifest.get("created"))
    page.add("run", json=json.dumps(manifest.get("run"), indent=2, sort_keys=True))
    graphs = summary["graph"].unique().sort().to_list()
    slug = _slugs(graphs, _SECTIONS)
    accel_slug = _slugs(summary["accelerator"].unique().sort().to_list())
    ok = summary.filter(status="ok").select("graph", "accelerator").rows()
    own = {accel: _own_system(accel, frames) for accel in sorted({a for _, a in ok})}
    specs = _pair_specs(frames, ok, own)
    page.add("nav", links=[(slug[g], g) for g in graphs])
    page.add("section", id="overview", title="Overview")
    page.figure("matrix", charts.matrix_spec(summary))
    page.table([title for _, title in _COLUMNS], _summary_rows(summary))
    run = manifest.get("run")
    # the workload conventions the figures follow (README, docs/model.md)
    conventions = run if isinstance(run, dict) else {}
    page.add(
        "conventions",
        spec=conventions.get("model") == "spec",
        scene=_scene(conventions.get("scene")),
    )
    unmapped = summary.filter(pl.col("status") != "ok")
    if unmapped.height:
        page.add("unmapped", pairs=unmapped.select("graph", "accelerator", "message").rows())
    if load:
        page.add("heading", text="Accelerator load warnings")
        page.add("warnings", entries=[f"{a}: {w}" for a, ws in load.items() for w in ws])
    page.add("end")
    _area_power_section(page, frames)
    _validation_section(page)
    if "measured" in frames:
        _measured_section(page, frames["measured"])
        _unknown_section(page, run if isinstance(run, dict) else {})
    for graph in graphs:
        page.add("section", id=slug[graph], title=graph)
        page.add("workload", text=_workload(graph, frames, summary))
        ops = frames["ops"].filter(pl.col("graph") == graph)
        if ops.height:
            page.figure(f"graph--{slug[graph]}", charts.graph_spec(ops, frames["edges"]))
        for row in summary.filter(graph=graph).iter_rows(named=True):
            if row["status"] == "ok":
                pair = (graph, str(row["accelerator"]))
                stem = f"{slug[graph]}--{accel_slug[pair[1]]}"
                _pair_section(page, row, specs[pair], own[pair[1]], load.get(pair[1], []), stem)
            else:
                page.note(f"{row['accelerator']}: {row['status']} ({row['message']})")
        page.add("end")

    names = [f.name for f in page.figures]
    target = Path(output) if output is not None else store / "report.html"
    figures = [figure.spec for figure in page.figures]
    if images:
        _export(target.parent / "charts", names, figures)
    if output is None:
        with atomic_path(store / "summary.md") as tmp:
            tmp.write_text(_summary_markdown(summary), encoding="utf-8")
    with atomic_path(target) as tmp:
        tmp.write_text(_document(page, figures), encoding="utf-8")
    return target
