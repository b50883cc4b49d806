"""The main job: pipelines × accelerators into a result store.

For every pair it computes costs, the schedule and the frame summary, and
writes the Parquet tables of a result store (`nerframe.store`): ``ops``,
``edges``, ``costs`` and ``roofline`` per pipeline, ``schedule``,
``module_busy`` and ``summary`` per pair, and the ``accelerators`` and ``modules`` tables. A pair
whose operators cannot all be mapped gets status ``unmapped`` and its reason.

The store is built in a temporary folder beside the target and swapped in
only when complete, so an error never leaves a half store and never destroys
the previous one.

>>> import nerframe, tempfile
>>> result = nerframe.analyze(["neurex"], output=tempfile.mkdtemp() + "/out", report=False)
>>> result.summary.select("graph", "accelerator", "status").rows()
[('neurex', 'neurex', 'ok'), ('neurex', 'neurex_server', 'ok')]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from nerframe.accelerator_model import Accelerator
from nerframe.atomic import atomic_folder
from nerframe.builtin_pipelines import PIPELINES, load_graph
from nerframe.costing import costs
from nerframe.errors import InvalidInputError, NerframeError, StoreError, UnmappedError
from nerframe.graphs import Graph
from nerframe.hardware import BUILTIN, accelerator, accelerator_table, module_table
from nerframe.progress import Progress
from nerframe.rooflines import PRESETS, roofline, system
from nerframe.scheduling import module_busy, schedule, unmapped_summary
from nerframe.store import check_name, is_analysis, locked, write_manifest, write_table
from nerframe.trace.compare import compare_on_host
from nerframe.trace.ingest import TracedGraph


@dataclass(frozen=True)
class Analysis:
    """Where the result store is, and its pipeline × accelerator summary.

    >>> import tempfile
    >>> a = analyze("neurex", "neurex", output=tempfile.mkdtemp() + "/out", report=False)
    >>> a.store.name, a.summary.height
    ('out', 1)
    """

    store: Path
    summary: pl.DataFrame


def analyze(
    pipelines: Sequence[str] | str | None = None,
    hardware: Sequence[str] | str = "native",
    output: str | Path = "nerframe-out",
    parallelism: str = "split",
    pipelined: bool = True,
    fine: bool = False,
    rays: int | None = None,
    samples: int | None = None,
    gaussians: int | None = None,
    report: bool = True,
    model: str = "realistic",
    images: bool = False,
) -> Analysis:
    """Analyse `pipelines` (built-in names or graph files, or one name; default all built-ins)
    on `hardware` (``"native"``: each pipeline's own accelerators; ``"all"``:
    every built-in; or names/paths) and write the result store to `output`.

    With `report`, the HTML report and ``summary.md`` are built into the store
    too, and with `images` the PNG and SVG of every chart under ``charts/``.
    `fine` expands composite ops into their stages; `model` is the built-in
    pipelines' workload model (``realistic`` or ``spec``, see `nerframe.pipeline`).

    >>> import tempfile
    >>> out = tempfile.mkdtemp() + "/store"
    >>> analyze(["neurex", "icarus"], "all", output=out, report=False).summary.height
    28
    """
    names = [pipelines] if isinstance(pipelines, str) else pipelines
    graphs = [load_graph(name, rays, samples, gaussians, fine, model) for name in _pipelines(names)]
    seen: dict[str, int] = {}
    for i, g in enumerate(graphs):
        check_name("graph", g.name)
        if g.name in seen:
            given = _pipelines(names)
            raise InvalidInputError(
                f"two graphs are named {g.name!r} ({given[seen[g.name]]} and {given[i]}); "
                "graph names must be unique in one analysis",
                g.name,
            )
        seen[g.name] = i
    loaded: dict[str, Accelerator] = {}
    pairs: list[tuple[Graph, Accelerator]] = []
    for g in graphs:
        for name in _hardware(g, hardware):
            if name not in loaded:
                loaded[name] = accelerator(name)
            pairs.append((g, loaded[name]))
    for accel in loaded.values():
        check_name("accelerator", accel.name)
    target = Path(output)
    with locked(target):
        _check_replaceable(target)
        try:
            summary = _build(
                target,
                graphs,
                pairs,
                loaded,
                parallelism,
                pipelined,
                (report, images),
                run={
                    "pipelines": [g.name for g in graphs],
                    "hardware": list(loaded),
                    "parallelism": parallelism,
                    "pipelined": pipelined,
                    "fine": fine,
                    "rays": rays,
                    "samples": samples,
                    "gaussians": gaussians,
                    "model": model,
                },
            )
        except (NerframeError, OSError) as e:
            _hide_temporary_names(e, target)
            raise
    return Analysis(target, summary)


def _check_replaceable(target: Path) -> None:
    """Refuse to replace anything but an empty folder or an earlier analysis store."""
    if target.exists() and not target.is_dir():
        raise StoreError(f"{target}: exists and is not a folder; not replacing it", str(target))
    if target.is_dir() and any(target.iterdir()) and not is_analysis(target):
        raise StoreError(
            f"{target}: exists and is not a nerframe result store of analyze (a sweep store "
            "or other files); not replacing it, choose another -o folder",
            str(target),
        )


def _hide_temporary_names(e: BaseException, target: Path) -> None:
    # Errors while building name the hidden folder the store is built in; the
    # user knows the store by its final name.
    building = re.compile(re.escape(str(target.parent / f".{target.name}.")) + r"[0-9a-f]+\.tmp")
    e.args = tuple(building.sub(str(target), a) if isinstance(a, str) else a for a in e.args)
    if isinstance(e, OSError) and e.filename:
        e.filename = building.sub(str(target), str(e.filename))


def _build(
    target: Path,
    graphs: list[Graph],
    pairs: list[tuple[Graph, Accelerator]],
    loaded: dict[str, Accelerator],
    parallelism: str,
    pipelined: bool,
    report: tuple[bool, bool],
    run: dict[str, object],
) -> pl.DataFrame:
    with atomic_folder(target) as building:
        summary = _write(building, graphs, pairs, list(loaded.values()), parallelism, pipelined)
        write_manifest(building, run)
        if report[0]:
            from nerframe.report import build_report

            build_report(building, images=report[1])
    return summary


def _write(
    store: Path,
    graphs: list[Graph],
    pairs: list[tuple[Graph, Accelerator]],
    accels: list[Accelerator],
    parallelism: str,
    pipelined: bool,
) -> pl.DataFrame:
    write_table(store, "accelerators", accelerator_table(accels))
    write_table(store, "modules", module_table(accels))
    summaries = []
    for g in graphs:
        table = costs(g.ops)
        write_table(store, "ops", g.ops, pipeline=g.name)
        write_table(store, "edges", g.edges, pipeline=g.name)
        write_table(store, "costs", table, pipeline=g.name)
        ran = [a for graph, a in pairs if graph is g]
        # an accelerator whose units are all rated in items (Gaussians, samples) has no
        # FLOP peak, hence no roofline
        systems = [*PRESETS.values(), *(system(a) for a in ran if a.peak_tflops > 0)]
        write_table(store, "roofline", roofline(table, systems), pipeline=g.name)
        if isinstance(g, TracedGraph):  # a traced run: its measured times against the host
            write_table(store, "measured", compare_on_host(g.measured), pipeline=g.name)
    with Progress(len(pairs), "analyze", "pairs") as bar:
        for g, accel in pairs:
            try:
                result = schedule(g, accel, parallelism, pipelined)
            except UnmappedError as e:
                summary = unmapped_summary(g, accel, str(e), parallelism, pipelined)
            else:
                busy = module_busy(result, accel)
                write_table(
                    store, "schedule", result.schedule, pipeline=g.name, hardware=accel.name
                )
                write_table(store, "module_busy", busy, pipeline=g.name, hardware=accel.name)
                summary = result.summary
            write_table(store, "summary", summary, pipeline=g.name, hardware=accel.name)
            summaries.append(summary)
            bar.advance(1)
    return pl.concat(summaries)


def _pipelines(names: Sequence[str] | None) -> list[str]:
    if not names or list(names) == ["all"]:
        return list(PIPELINES)
    return list(dict.fromkeys(names))


def _hardware(g: Graph, hardware: Sequence[str] | str) -> list[str]:
    names = [hardware] if isinstance(hardware, str) else list(hardware)
    chosen: list[str] = []
    for name in names:
        if name == "all":
            chosen += BUILTIN
        elif name == "native":
            if g.name not in PIPELINES:
                raise NerframeError(
                    f"graph {g.name!r} has no native accelerator; name one with --hardware"
                )
            chosen += PIPELINES[g.name].native
        else:
            chosen.append(name)
    return list(dict.fromkeys(chosen))
