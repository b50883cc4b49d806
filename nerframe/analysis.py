"""The main job: pipelines × accelerators into a result store.

For every pair it computes costs, the schedule and the frame summary, and
writes the Parquet tables of a result store (`nerframe.store`): ``ops``,
``edges``, ``costs`` and ``roofline`` per pipeline, ``schedule`` and
``summary`` per pair, and the ``accelerators`` and ``modules`` tables. A pair
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

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from nerframe.atomic import atomic_folder
from nerframe.builtin_pipelines import PIPELINES, pipeline
from nerframe.costing import costs
from nerframe.errors import NerframeError, UnmappedError
from nerframe.graphs import Graph, expand, read_graph
from nerframe.hardware import BUILTIN, Accelerator, accelerator, accelerator_table, module_table
from nerframe.progress import Progress
from nerframe.rooflines import PRESETS, roofline, system
from nerframe.scheduling import schedule, unmapped_summary
from nerframe.store import write_manifest, write_table


@dataclass(frozen=True)
class Analysis:
    """Where the result store is, and its pipeline × accelerator summary."""

    store: Path
    summary: pl.DataFrame


def analyze(
    pipelines: Sequence[str] | None = None,
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
) -> Analysis:
    """Analyse `pipelines` (built-in names or graph files; default all built-ins)
    on `hardware` (``"native"``: each pipeline's own accelerators; ``"all"``:
    every built-in; or names/paths) and write the result store to `output`.

    With `report`, the HTML report, ``summary.md`` and chart images are built
    into the store too. `fine` expands composite ops into their stages; `model`
    is the built-in pipelines' workload model (``realistic`` or ``spec``, see
    `nerframe.pipeline`).
    """
    graphs = [
        load_graph(name, rays, samples, gaussians, fine, model) for name in _pipelines(pipelines)
    ]
    loaded: dict[str, Accelerator] = {}
    pairs: list[tuple[Graph, Accelerator]] = []
    for g in graphs:
        for name in _hardware(g, hardware):
            if name not in loaded:
                loaded[name] = accelerator(name)
            pairs.append((g, loaded[name]))
    target = Path(output)
    if target.exists() and not (target / "store.json").exists() and any(target.iterdir()):
        raise NerframeError(
            f"{target}: exists and is not a nerframe result store; not replacing it"
        )
    with atomic_folder(target) as building:
        summary = _write(building, graphs, pairs, list(loaded.values()), parallelism, pipelined)
        write_manifest(
            building,
            {
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
        if report:
            from nerframe.report import build_report

            build_report(building)
    return Analysis(target, summary)


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
        systems = [*PRESETS.values(), *(system(a) for a in ran)]
        write_table(store, "roofline", roofline(table, systems), pipeline=g.name)
    with Progress(len(pairs), "analyze", "pairs") as bar:
        for g, accel in pairs:
            try:
                result = schedule(g, accel, parallelism, pipelined)
            except UnmappedError as e:
                summary = unmapped_summary(g, accel, str(e), parallelism, pipelined)
            else:
                where = {"pipeline": g.name, "hardware": accel.name}
                write_table(store, "schedule", result.schedule, **where)
                summary = result.summary
            write_table(store, "summary", summary, pipeline=g.name, hardware=accel.name)
            summaries.append(summary)
            bar.advance(1)
    return pl.concat(summaries)


def _pipelines(names: Sequence[str] | None) -> list[str]:
    if not names or list(names) == ["all"]:
        return list(PIPELINES)
    return list(dict.fromkeys(names))


def load_graph(
    name: str,
    rays: int | None = None,
    samples: int | None = None,
    gaussians: int | None = None,
    fine: bool = False,
    model: str = "realistic",
) -> Graph:
    """A built-in pipeline by name (with its workload in workload `model`) or a
    graph file (.json, .yaml); expanded into its fine graph when `fine`."""
    if name in PIPELINES or not Path(name).suffix:
        g = pipeline(name, rays=rays, samples=samples, gaussians=gaussians, model=model)
    else:
        g = read_graph(name)
    return expand(g) if fine else g


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
