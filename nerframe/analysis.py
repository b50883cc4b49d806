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

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import polars as pl

from nerframe._typing import Parallelism, WorkloadModel
from nerframe.accelerator_model import Accelerator
from nerframe.atomic import atomic_folder
from nerframe.builtin_pipelines import PIPELINES, load_graph, reusing_pipelines
from nerframe.costing import costs
from nerframe.errors import (
    InvalidInputError,
    NerframeError,
    StoreError,
    UnmappedError,
    check_flag,
    name_key,
)
from nerframe.graphs import Graph, expand_graph
from nerframe.hardware import BUILTIN, accelerator, accelerator_table, module_table
from nerframe.progress import Progress
from nerframe.rooflines import PRESETS, is_preset, roofline, system
from nerframe.scheduling import Mapped, module_busy, schedule_mapped, unmapped_summary
from nerframe.store import (
    TableWriter,
    check_name,
    folder_path,
    foreign_entries,
    is_analysis,
    locked,
    write_manifest,
)
from nerframe.trace.compare import compare_on_host
from nerframe.trace.ingest import TracedGraph

T = TypeVar("T")


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
    # The headline figures' ranges over each accelerator's assumed figures, one
    # `nerframe.bands` table per pair that ran (``analyze(bands=True)``); else None.
    bands: pl.DataFrame | None = None

    def __repr__(self) -> str:
        """One line: the store and how many pairs ran.

        >>> import tempfile
        >>> a = analyze("neurex", "neurex", output=tempfile.mkdtemp() + "/out", report=False)
        >>> repr(a).replace(str(a.store.parent), "TMP")
        "Analysis('TMP/out', 1 pair: 1 ok)"
        """
        statuses = self.summary["status"].value_counts()
        statuses = statuses.sort("count", "status", descending=[True, False])
        counts = ", ".join(f"{n} {status}" for status, n in statuses.iter_rows())
        pairs = self.summary.height
        return f"Analysis({str(self.store)!r}, {pairs} pair{'s' * (pairs != 1)}: {counts})"


PipelineLike = str | os.PathLike[str] | Graph
"""A built-in pipeline's name, a graph file or a `Graph`."""
HardwareLike = str | os.PathLike[str] | Accelerator
"""A built-in accelerator's name, an accelerator file or an `Accelerator`."""


def analyze(
    pipelines: Sequence[PipelineLike] | PipelineLike | None = None,
    hardware: Sequence[HardwareLike] | HardwareLike = "native",
    output: str | Path = "nerframe-out",
    *,
    parallelism: Parallelism = "split",
    pipelined: bool = True,
    fine: bool = False,
    rays: int | None = None,
    samples: int | None = None,
    gaussians: int | None = None,
    report: bool = True,
    model: WorkloadModel = "realistic",
    images: bool = False,
    scene: str | None = None,
    bands: bool = False,
) -> Analysis:
    """Analyse `pipelines` (built-in names, graph files or `Graph` objects, or one of
    them; default all built-ins) on `hardware` (``"native"``: each pipeline's own
    accelerators; ``"all"``: every built-in; or names, paths or `Accelerator`
    objects) and write the result store to `output`. `rays`, `samples`,
    `gaussians` and `scene` (a standard scene, see `nerframe.scenes`; the store's
    manifest and report name it) apply to named pipelines, not to `Graph` objects
    (build those with the workload they should have).

    With `report`, the HTML report and ``summary.md`` are built into the store
    too, and with `images` the PNG and SVG of every chart under ``charts/``.
    `fine` expands composite ops into their stages; `model` is the built-in
    pipelines' workload model (``realistic`` or ``spec``, see `nerframe.pipeline`).
    With `bands`, the result's ``bands`` holds, for every pair that ran, the range of
    its headline figures over the accelerator's assumed figures (`nerframe.bands`).

    >>> import tempfile
    >>> out = tempfile.mkdtemp() + "/store"
    >>> analyze(["neurex", "icarus"], "all", output=out, report=False).summary.height
    38
    """
    flags = {
        "pipelined": pipelined,
        "fine": fine,
        "report": report,
        "images": images,
        "bands": bands,
    }
    for name, flag in flags.items():
        check_flag(name, flag)
    # A pipeline at one workload is built once in the whole run: its graph here is
    # the one the report's validation asks for again.
    with reusing_pipelines():
        given = _pipelines(_listed("pipelines", pipelines, Graph))
        workload = {"rays": rays, "samples": samples, "gaussians": gaussians}
        graphs = [_graph(item, workload, fine, model, scene) for item in given]
        seen: dict[str, int] = {}
        for i, g in enumerate(graphs):
            check_name("graph", g.name)
            if name_key(g.name) in seen:
                first, second = (_label(given[j]) for j in (seen[name_key(g.name)], i))
                raise InvalidInputError(
                    f"two graphs are named {g.name!r} ({first} and {second}); "
                    "graph names must be unique in one analysis",
                    g.name,
                )
            seen[name_key(g.name)] = i
        chosen = _listed("hardware", hardware, Accelerator)
        named: dict[str, Accelerator] = {}  # by the name or path given
        loaded: dict[str, Accelerator] = {}  # by accelerator name (its name_key)
        pairs: list[tuple[Graph, Accelerator]] = []
        for g in graphs:
            for item in _hardware(g, chosen):
                if isinstance(item, str) and item not in named:
                    named[item] = accelerator(item)
                accel = named[item] if isinstance(item, str) else item
                # Two accelerators of one name would overwrite each other's partitions.
                earlier = loaded.setdefault(name_key(accel.name), accel)
                if earlier is not accel:
                    alike = (
                        ""
                        if earlier.name == accel.name
                        else f" (written {earlier.name!a} and {accel.name!a}: alike)"
                    )
                    raise InvalidInputError(
                        f"two accelerators are named {accel.name!r}{alike}; accelerator names "
                        "must be unique in one analysis",
                        accel.name,
                    )
                pairs.append((g, accel))
        for accel in loaded.values():
            check_name("accelerator", accel.name)
        target = folder_path(output)
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
                        "hardware": [a.name for a in loaded.values()],
                        "parallelism": parallelism,
                        "pipelined": pipelined,
                        "fine": fine,
                        "rays": rays,
                        "samples": samples,
                        "gaussians": gaussians,
                        "model": model,
                        "scene": scene,
                        **_unknown_modules(graphs),
                    },
                )
            except (NerframeError, OSError) as e:
                _hide_temporary_names(e, target)
                raise
        if not bands:
            return Analysis(target, summary)
        from nerframe.bands import bands as ranges

        ran = set(summary.filter(status="ok").select("graph", "accelerator").iter_rows())
        tables = [
            ranges(g, accel, parallelism=parallelism, pipelined=pipelined)
            for g, accel in pairs
            if (g.name, accel.name) in ran
        ]
        from nerframe.bands import SCHEMA

        return Analysis(
            target, summary, pl.concat(tables) if tables else pl.DataFrame(schema=SCHEMA)
        )


def _unknown_modules(graphs: list[Graph]) -> dict[str, object]:
    """``{"unknown_modules": {graph: {count, classes, share}}}`` for the traced graphs
    with unknown modules (no rows: their time is missing from every figure), else {}.

    >>> from nerframe.trace.ingest import trace_graph
    >>> from nerframe.trace.tracefile import Call, Trace
    >>> fc = Call(0, None, "fc", ["torch.nn.modules.linear.Linear"],
    ...           {"in_features": 4, "out_features": 4}, {}, [[8, 4]], [[8, 4]], [], [[]], 1e-4)
    >>> odd = Call(1, None, "odd", ["my.Odd"], {}, {}, [[8, 4]], [[8, 4]], [(0, 0)], [[]], 1e-4)
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     g = trace_graph(Trace("m", [fc, odd]))
    >>> _unknown_modules([g])
    {'unknown_modules': {'m': {'count': 1, 'classes': ['my.Odd'], 'share': 0.5}}}
    """
    found: dict[str, object] = {}
    for g in graphs:
        if isinstance(g, TracedGraph) and g.unknown.height:
            unknown = g.unknown
            share = unknown["share"].sum() if unknown["share"].null_count() == 0 else None
            found[g.name] = {
                "count": unknown.height,
                "classes": list(dict.fromkeys(unknown["class"].to_list())),
                "share": share,
            }
    return {"unknown_modules": found} if found else {}


def _check_replaceable(target: Path) -> None:
    """Refuse to replace anything but an empty folder or an earlier analysis store
    holding only what nerframe wrote, and never the current folder or one above it
    (the store is replaced whole, and a shell left in it would sit in a removed folder)."""
    here = Path.cwd().resolve()
    if target.resolve() == here or target.resolve() in here.parents:
        raise StoreError(
            f"{target}: is the current folder or holds it; analyze replaces its -o folder "
            "whole, so name a folder below it (e.g. -o nerframe-out)",
            str(target),
        )
    if target.exists() and not target.is_dir():
        raise StoreError(f"{target}: exists and is not a folder; not replacing it", str(target))
    if target.is_dir() and any(target.iterdir()) and not is_analysis(target):
        raise StoreError(
            f"{target}: exists and is not a nerframe result store of analyze (a sweep store "
            "or other files); not replacing it, choose another -o folder",
            str(target),
        )
    if target.is_dir() and any(target.iterdir()) and (foreign := foreign_entries(target)):
        more = f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""
        shown = ", ".join(foreign[:5]) + more
        raise StoreError(
            f"{target}: an earlier store of analyze that also holds files nerframe did not "
            f"write ({shown}); not replacing it, move them or choose another -o folder",
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
        summary, rows = _write(
            building, graphs, pairs, list(loaded.values()), parallelism, pipelined
        )
        write_manifest(building, run, rows)
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
) -> tuple[pl.DataFrame, dict[str, int]]:
    """The summary of every pair, and the rows written by table (the store's files are
    complete on return)."""
    # The tables are written on other threads while the pairs are scheduled.
    with TableWriter(store) as writer:
        writer.write("accelerators", accelerator_table(accels))
        writer.write("modules", module_table(accels))
        summaries = []
        costed: dict[int, pl.DataFrame] = {}  # by graph identity: each graph is costed once
        for g in graphs:
            table = costed[id(g)] = costs(g.ops)
            writer.write("ops", g.ops, pipeline=g.name)
            writer.write("edges", g.edges, pipeline=g.name)
            writer.write("costs", table, pipeline=g.name)
            ran = [a for graph, a in pairs if graph is g]
            # an accelerator whose units are all rated in items (Gaussians, samples) has no
            # FLOP peak, hence no roofline; a GPU that a preset already stands for (a100 for
            # A100) would be the same roofline twice
            own = [system(a) for a in ran if a.peak_tflops > 0]
            systems = [*PRESETS.values(), *(s for s in own if not is_preset(s))]
            writer.write("roofline", roofline(table, systems), pipeline=g.name)
            if isinstance(g, TracedGraph):  # a traced run: its measured times against the host
                writer.write("measured", compare_on_host(g.measured), pipeline=g.name)
        with Progress(len(pairs), "analyze", "pairs") as bar:
            for g, accel in pairs:
                try:
                    mapped = Mapped.of(g, accel, costed[id(g)])
                    result = schedule_mapped(mapped, g, accel, parallelism, pipelined)
                except UnmappedError as e:
                    summary = unmapped_summary(g, accel, str(e), parallelism, pipelined)
                else:
                    busy = module_busy(result, accel)
                    writer.write("schedule", result.schedule, pipeline=g.name, hardware=accel.name)
                    writer.write("module_busy", busy, pipeline=g.name, hardware=accel.name)
                    summary = result.summary
                writer.write("summary", summary, pipeline=g.name, hardware=accel.name)
                summaries.append(summary)
                bar.advance(1)
    return pl.concat(summaries), writer.rows


def _listed(what: str, value: object, kind: type[T]) -> list[str | T]:
    """`value` (one item or a sequence of them) as a list of names or `kind` objects;
    anything else is an InvalidInputError naming `what`."""
    if value is None and what == "pipelines":
        return []
    items = [value] if isinstance(value, str | os.PathLike | kind) else value
    if not isinstance(items, Sequence):
        items = [items]
    listed: list[str | T] = []
    for item in items:
        if isinstance(item, os.PathLike):
            listed.append(str(os.fspath(item)))
        elif isinstance(item, str | kind):
            listed.append(item)
        else:
            raise InvalidInputError(
                f"analyze: {what} must be names, paths or {kind.__name__} objects, "
                f"got {type(item).__name__}",
                what,
            )
    return listed


def _graph(
    item: str | Graph,
    workload: dict[str, int | None],
    fine: bool,
    model: WorkloadModel,
    scene: str | None = None,
) -> Graph:
    if isinstance(item, str):
        rays, samples, gaussians = workload.values()
        return load_graph(item, rays, samples, gaussians, fine, model, scene=scene)
    given = [name for name, value in {**workload, "scene": scene}.items() if value is not None]
    if given:
        raise InvalidInputError(
            f"{given[0]} applies to named pipelines, not to the Graph {item.name!r}: "
            "build the graph with the workload it should have",
            given[0],
        )
    return expand_graph(item) if fine else item


def _label(item: str | Graph) -> str:
    return item if isinstance(item, str) else f"Graph {item.name!r}"


def _pipelines(items: list[str | Graph]) -> list[str | Graph]:
    if not items or items == ["all"]:
        return list(PIPELINES)
    return _once(items)


def _hardware(g: Graph, hardware: list[str | Accelerator]) -> list[str | Accelerator]:
    chosen: list[str | Accelerator] = []
    for item in hardware:
        if item == "all":
            chosen += BUILTIN
        elif item == "native":
            if g.name not in PIPELINES:
                raise InvalidInputError(
                    f"graph {g.name!r} has no native accelerator; name one with --hardware"
                )
            chosen += PIPELINES[g.name].native
        else:
            chosen.append(item)
    return _once(chosen)


def _once(items: list[str | T]) -> list[str | T]:
    """`items` with each name kept at its first place only; objects are kept as given
    (two objects of one name are refused by name later)."""
    return [i for n, i in enumerate(items) if not isinstance(i, str) or i not in items[:n]]
