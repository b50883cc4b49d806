"""The ``nerframe`` command line.

Every user error is printed as one ``error: …`` line on stderr with exit
status 1 (2 for a malformed command line, 130 when interrupted with Ctrl-C);
output files are written atomically, so an error never leaves a partial file.

>>> main(["pipelines", "--model", "spec", "--format", "csv"])  # doctest: +ELLIPSIS
pipeline,kind,ops,rays,samples,gaussians,frame_pixels,rendered_fraction,native,total_flops,...
icarus,inference,4,4096,192,,640000,1.0,icarus,825444532224.0,...
0
"""

from __future__ import annotations

# First: a Ctrl-C while the modules below load ends the command quietly (status 130).
from nerframe import interrupts  # isort: split

import argparse
import contextlib
import math
import os
import select
import signal
import socket
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast, get_args

import polars as pl

from nerframe._typing import Compression, Direction, FileFormat
from nerframe.builtin_pipelines import MODELS
from nerframe.errors import InvalidInputError, NerframeError, check_output_path
from nerframe.output import FORMATS, emit, format_value, printable, to_text, wide

if TYPE_CHECKING:
    from nerframe.accelerator_model import Accelerator
    from nerframe.graphs import Graph
    from nerframe.sweeps.spec import SweepSpec
    from nerframe.trace.ingest import TracedGraph

COST_VIEW = ["op_id", "op_type", "category", "backward", "scope", "bitwidth", "B", "N", "G"]
COST_TOTALS = ["flops", "bytes_in", "bytes_w", "bytes_out", "bytes_total"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage dump
        sys.stderr.write(f"error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(2)


def _workload(p: argparse.ArgumentParser) -> None:
    # The defaults depend on the pipeline and the workload model: 'nerframe pipelines'
    # lists them, so the help names no number that is wrong for most pipelines.
    default = "[the pipeline's, as 'nerframe pipelines --model M' lists]"
    p.add_argument("--rays", type=int, metavar="B", help=f"rays (pixels) per batch {default}")
    p.add_argument("--samples", type=int, metavar="N", help=f"samples per ray {default}")
    p.add_argument("--gaussians", type=int, metavar="G", help=f"Gaussians in the scene {default}")
    _scene(p)
    p.add_argument("--fine", action="store_true", help="expand composites into their stages")
    _model(p)


def _scene(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--scene",
        metavar="NAME",
        help="a standard scene (see 'nerframe scenes'): it sets the frame, and the Gaussians "
        "where published; --rays, --samples, --gaussians override it [none: the defaults]",
    )


def _frame(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--width",
        type=int,
        metavar="PX",
        help="frame width in pixels [the scene's, else the pipeline's]",
    )
    p.add_argument(
        "--height",
        type=int,
        metavar="PX",
        help="frame height in pixels [the scene's, else the pipeline's]",
    )


def _model(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        choices=MODELS,
        default="realistic",
        help="workload model of built-in pipelines: realistic, or spec (spec/pipelines.md "
        "exactly) [realistic]",
    )


def _output(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMATS[:3], help="output format [table, or from -o]")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write to FILE")


def _graph(args: argparse.Namespace, name: str) -> Graph:
    from nerframe.builtin_pipelines import load_graph

    return load_graph(
        name,
        args.rays,
        args.samples,
        args.gaussians,
        args.fine,
        args.model,
        scene=args.scene,
        width=args.width,
        height=args.height,
    )


def _schedule_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--parallelism",
        choices=("split", "instance"),
        default="split",
        help="an op takes every instance of its module (split) or one (instance) [split]",
    )
    p.add_argument(
        "--no-pipelining",
        dest="pipelined",
        action="store_false",
        help="batches run one after another instead of streaming through the modules",
    )


def non_negative(text: str) -> int:
    """An argparse type: an integer >= 0."""
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


def positive(text: str) -> int:
    """An argparse type: an integer >= 1."""
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def _for_people(args: argparse.Namespace) -> bool:
    """Output goes to a terminal as a table (not csv/json, not a file)."""
    return args.output is None and (args.format or "table") == "table"


def _warn(lines: Sequence[str]) -> None:
    # the command's own warnings take the same way as those raised through `warnings`
    for line in lines:
        _show_warning(line, UserWarning, "", 0)


def cmd_schema(args: argparse.Namespace) -> None:
    import json

    from nerframe.formats import schema

    sys.stdout.write(json.dumps(schema(args.kind), indent=2, sort_keys=True) + "\n")


def cmd_pipelines(args: argparse.Namespace) -> None:
    from nerframe.builtin_pipelines import pipelines

    emit(pipelines(args.model, scene=args.scene), args.format, args.output)


def cmd_scenes(args: argparse.Namespace) -> None:
    from nerframe.scene_table import scenes

    table = scenes()
    if _for_people(args):  # the sources are long: csv, json or -o give them
        table = table.drop([c for c in table.columns if c.endswith("_source")])
    emit(table, args.format, args.output)
    if _for_people(args):
        sys.stdout.write("\nsources of each figure: nerframe scenes --format csv (or -o FILE)\n")


def cmd_costs(args: argparse.Namespace) -> None:
    from nerframe.costing import costs, frame_total

    graph = _graph(args, args.pipeline)
    table = costs(graph.ops)
    if _for_people(args):
        table = table.select(*COST_VIEW, "flops", "bytes_total", "intensity")
    ratio = {"intensity": ("flops", "bytes_total")}  # of the totals, not a sum
    emit(table, args.format, args.output, totals=COST_TOTALS, ratios=ratio)
    if _for_people(args):  # the totals row counts each op once: say what a frame does
        flops, moved = (frame_total(table, c, graph.batches) for c in ("flops", "bytes_total"))
        batches = f"{graph.batches:,} batch{'' if graph.batches == 1 else 'es'}"
        # a graph of frame-scoped ops only (3dgs) has no batches: "0 batches" read as a fault
        scopes = (
            f"{batches} of the batch ops, the frame ops once"
            if graph.batches
            else "frame ops only, each once"
        )
        sys.stdout.write(
            f"per frame ({scopes}): "
            f"{format_value(flops)} FLOPs, {format_value(moved)} bytes; the total row counts "
            "each op once\n"
        )


def cmd_hardware(args: argparse.Namespace) -> None:
    from nerframe.hardware import accelerator, accelerators, module_table

    if args.accelerator is None:
        table = accelerators().with_columns(pl.col("warnings").list.len())
        emit(table.drop("path", "description"), args.format, args.output)
        return
    accel = accelerator(args.accelerator)
    _warn(accel.warnings)
    if args.breakdown:
        from nerframe.area_power import breakdown

        emit(breakdown(accel), args.format, args.output)
        return
    emit(module_table([accel]), args.format, args.output)
    if _for_people(args):
        mapping = sorted(accel.operator_mapping.items())
        area = "not published" if math.isnan(accel.area_mm2) else f"{accel.area_mm2:.4g} mm²"
        peak = f"{accel.peak_tflops:.4g} TFLOP/s" if accel.peak_tflops else "– (no FLOP unit)"
        sys.stdout.write(
            f"\n{accel.name}: {accel.description}\n"
            f"clock {accel.frequency_mhz:g} MHz, DRAM {accel.dram_bandwidth_gbps:g} GB/s, "
            f"peak {peak}, area {area}\n"
            + "".join(f"  {op} -> {module}\n" for op, module in mapping)
        )
        _area_power(accel)


def _area_power(accel: Accelerator) -> None:
    """The area and power breakdown under the module table, with its totals."""
    from nerframe.area_power import breakdown

    table = breakdown(accel)
    total = table.row(table.height - 1, named=True)
    sys.stdout.write("\narea and power (every unit busy; SRAM access power needs a schedule)\n")
    emit(table.drop("accelerator"), "table", None)

    def mm2(value: float | None) -> str:
        return "not published" if value is None else f"{value:.4g} mm²"

    node = "no node" if math.isnan(accel.technology_nm) else f"{accel.technology_nm:g} nm"
    power_28 = total["power_w_28nm"]
    sys.stdout.write(
        f"total at {node}: area {mm2(total['area_mm2'])}, power {total['power_w']:.4g} W "
        f"(leakage {total['leakage_w']:.3g} W); at 28 nm: area {mm2(total['area_mm2_28nm'])}, "
        f"power {'n/a' if power_28 is None else f'{power_28:.4g} W'}; SRAM "
        f"{accel.sram_energy_pj_per_byte:.3g} pJ per byte read or written\n"
    )


def cmd_schedule(args: argparse.Namespace) -> None:
    from nerframe.hardware import accelerator
    from nerframe.scheduling import schedule

    accel = accelerator(args.hardware)
    _warn(accel.warnings)
    graph = _graph(args, args.pipeline)
    result = schedule(graph, accel, parallelism=args.parallelism, pipelined=args.pipelined)
    ranges = None
    if args.bands:
        from nerframe.bands import bands

        ranges = bands(
            graph, accel, parallelism=args.parallelism, pipelined=args.pipelined, nominal=result
        )
    table = result.summary if args.summary else result.schedule
    if not _for_people(args):
        emit(ranges if ranges is not None else table, args.format, args.output)
        return
    view = ["op_id", "op_type", "backward", "scope", "module", "instances", "start_cycle"]
    view += ["end_cycle"]
    view += ["compute_cycles", "memory_cycles", "bound", "energy_j"]
    sys.stdout.write(to_text(result.schedule.select(view), "table"))
    summary = result.summary.drop("graph", "accelerator", "message").row(0, named=True)
    width = max(map(len, summary))
    sys.stdout.write(
        f"\n{result.summary['graph'].item()} on {accel.name}\n"
        + "".join(f"  {k.ljust(width)}  {format_value(v)}\n" for k, v in summary.items())
    )
    if ranges is not None:
        sys.stdout.write(_bands_text(ranges))


def _bands_text(table: pl.DataFrame) -> str:
    """The bands table for people: the range of each headline figure over the assumed
    figures (docs/uncertainty.md)."""
    shown = table.select("graph", "accelerator", "figure", "nominal", "low", "high")
    count = max(table["configurations"].to_list(), default=0)
    return f"\nbands over the assumed figures ({count} corners; docs/uncertainty.md):\n" + to_text(
        shown, "table"
    )


def cmd_analyze(args: argparse.Namespace) -> None:
    from nerframe.analysis import analyze

    result = analyze(
        args.pipelines,
        args.hardware or "native",
        args.output,
        parallelism=args.parallelism,
        pipelined=args.pipelined,
        fine=args.fine,
        rays=args.rays,
        samples=args.samples,
        gaussians=args.gaussians,
        scene=args.scene,
        report=args.report,
        model=args.model,
        images=args.images,
        bands=args.bands,
    )
    view = ["graph", "accelerator", "status", "fps", "frame_time_s", "energy_per_frame_j"]
    view += ["avg_power_w", "area_mm2", "dram_utilization", "bottleneck_module"]
    emit(result.summary.select(view), args.format)
    if result.bands is not None:
        if args.format in (None, "table"):
            sys.stdout.write(_bands_text(result.bands))
        else:
            emit(result.bands, args.format)
    sys.stderr.write(f"wrote {result.store}/\n")


# Sweeps larger than this run only with --yes; otherwise they report an estimate.
CONFIRM_ABOVE = 20_000_000


def cmd_sweep(args: argparse.Namespace) -> None:
    from nerframe.progress import Progress
    from nerframe.sweeps.evaluate import chunks
    from nerframe.sweeps.results import best, best_in_store, pareto, store_parts
    from nerframe.sweeps.runner import run
    from nerframe.sweeps.spec import sweep_spec

    try:
        spec = sweep_spec(_sweep_data(args))
    except InvalidInputError as e:
        # A field of the spec file the model refused: name the file (its other faults do).
        if args.spec is None or not str(e).startswith("sweep spec: "):
            raise
        raise InvalidInputError(
            f"{args.spec}: {str(e).removeprefix('sweep spec: ')}", e.culprit
        ) from None
    if args.backend != "local" and args.output is None:
        raise InvalidInputError(f"the {args.backend} backend writes a store: give -o DIR")
    if args.scheduler is not None and args.backend != "dask":
        raise InvalidInputError(  # as nerframe.sweeps.runner says it to API callers
            f"a scheduler ({args.scheduler}) is the address of a Dask scheduler: use it with "
            "the dask backend (--backend dask), or leave it out",
            "scheduler",
        )
    if args.chart is not None and not args.pareto:
        raise InvalidInputError("--chart draws the Pareto front: give --pareto too")
    objectives = _objectives(args.pareto) if args.pareto else spec.objectives
    # A spec that names two or more objectives asks for their front, as --pareto does.
    front = bool(args.pareto) or len(objectives) > 1
    if spec.configurations > CONFIRM_ABOVE and not args.yes:
        raise InvalidInputError(_estimate(spec) + "; run it with --yes (or shrink the grid)")
    order = next(iter(objectives.items()))  # rank rows by the first objective
    limits = spec.constraints
    figures = ["fps", "energy_per_frame_j", "avg_power_w", "area_mm2", "dram_utilization"]
    view = ["graph"] if len(spec.graphs) > 1 else []
    view += [*spec.workload, "config", *spec.grid]
    view += [f for f in dict.fromkeys([*objectives, *figures]) if f not in view]
    view.append("bottleneck_module")
    with Progress(spec.configurations, "sweep", "configs") as bar:
        if args.output is None:
            rows = chunks(spec, bar)
            shown = (
                pareto(rows, objectives, constraints=limits)
                if front
                else best(rows, args.top, *order, constraints=limits)
            )
        else:
            run(spec, args.output, args.backend, args.scheduler, bar)
            shown = (
                pareto(store_parts(args.output), objectives, constraints=limits)
                if front
                else best_in_store(
                    args.output, args.top, *order, spec.workload, view, constraints=limits
                )
            )
    if args.chart is not None:  # the whole front, however many rows are printed
        from nerframe.charts import save_chart
        from nerframe.sweeps.charts import pareto_chart

        save_chart(pareto_chart(shown, objectives), args.chart)
    if front and args.top:  # the top rows of each graph's front
        shown = shown.group_by("graph", maintain_order=True).head(args.top)
    emit(shown.select(view), args.format)
    if args.output is not None:
        sys.stderr.write(f"wrote {args.output}/ ({spec.configurations:,} configurations)\n")


def _is_sweep_spec(name: str) -> bool:
    """Whether the file `name` holds a sweep spec (its graphs and grid), not a graph."""
    from nerframe.sweeps.spec import read_spec

    if Path(name).suffix.lower() not in (".yaml", ".yml", ".json") or not Path(name).is_file():
        return False
    try:
        data = read_spec(name)
    except (NerframeError, ValueError):  # not YAML, not text
        return False
    return "graphs" in data and "ops" not in data


def _sweep_data(args: argparse.Namespace) -> dict[str, Any]:
    """The sweep spec: the --spec file's, with the command line's choices on top."""
    from nerframe.sweeps.spec import overlay, read_spec

    data = read_spec(args.spec) if args.spec is not None else {}
    if not args.pipelines and "graphs" not in data:
        raise InvalidInputError("name a pipeline or graph file to sweep (or give --spec FILE)")
    if args.hardware is None and data.get("hardware") is None:
        raise InvalidInputError(
            "name the accelerator to sweep with --hardware (or give a sweep spec with --spec FILE)"
            + "".join(
                f"; {name} is a sweep spec: give it with --spec"
                for name in args.pipelines
                if args.spec is None and _is_sweep_spec(name)
            )
        )
    fixed = {
        "rays": args.rays,
        "samples": args.samples,
        "gaussians": args.gaussians,
        "scene": args.scene,
    }
    given = [f"{name}={value}" for name, value in fixed.items() if value is not None]
    options: dict[str, Any] = {}
    if args.parallelism is not None:
        options["parallelism"] = args.parallelism
    if args.chunk_size is not None:
        options["chunk_size"] = args.chunk_size
    if args.compression is not None:
        options["compression"] = args.compression
    if args.fine:
        options["fine"] = True
    if args.model != "realistic" or "model" not in data:
        options["model"] = args.model
    if not args.pipelined:
        options["pipelined"] = False
    return overlay(
        data,
        graphs=args.pipelines,
        hardware=args.hardware,
        axes=(_axis(text) for text in [*(args.vary or []), *given]),
        bounds=_bounds(args),
        options=options,
    )


def _bounds(args: argparse.Namespace) -> Iterator[tuple[str, str, float]]:
    """The --max and --min bounds (FIGURE=VALUE), parsed as they are consumed."""
    for flag, bounds in (("max", args.max), ("min", args.min)):
        for text in bounds or []:
            name, _, value = (part.strip() for part in text.partition("="))
            try:
                number = float(value)
            except ValueError:
                raise InvalidInputError(f"--{flag} expects FIGURE=VALUE, got {text!r}") from None
            if math.isnan(number):
                raise InvalidInputError(f"--{flag} {name}: a bound is a number, got {value!r}")
            yield name, flag, number


def _objectives(text: str) -> dict[str, Direction]:
    from nerframe.sweeps.spec import ALIASES, FIGURES

    names = [n.strip() for n in text.split(",") if n.strip()]
    if len(names) < 2:
        raise InvalidInputError(
            f"--pareto expects two or more figures, e.g. fps,energy; got {text!r}"
        )
    unknown = [n for n in names if ALIASES.get(n, n) not in FIGURES]
    if unknown:
        raise InvalidInputError(
            f"--pareto: unknown figure {unknown[0]!r}; use {', '.join([*FIGURES, *ALIASES])}"
        )
    figures = [ALIASES.get(n, n) for n in names]
    if len(set(figures)) < len(figures):  # (fps,fps: a front of one figure)
        twice = next(n for n, f in zip(names, figures, strict=True) if figures.count(f) > 1)
        raise InvalidInputError(f"--pareto: figure {twice!r} is given twice; name each once")
    return {f: FIGURES[f] for f in figures}


def _estimate(spec: SweepSpec) -> str:
    """What a sweep would cost, in words (`nerframe.sweeps.runner.estimate`)."""
    from nerframe.sweeps.runner import estimate, size_text

    seconds, size = estimate(spec)
    return (
        f"this sweep has {spec.configurations:,} configurations: about "
        f"{_duration(seconds)} on this machine and a {size_text(size)} store"
    )


def _duration(seconds: float) -> str:
    minutes, seconds = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s"


def _axis(text: str) -> tuple[str, list[float | str]]:
    name, _, values = text.partition("=")
    if name.strip() == "scene":  # names, checked with the spec
        return "scene", [v.strip() for v in values.split(",")]
    try:
        numbers: list[float | str] = [_number(v) for v in values.split(",")]
    except ValueError:
        raise InvalidInputError(f"--vary expects PARAM=V1,V2,..., got {text!r}") from None
    # A value given twice would repeat every configuration it is part of.
    twice = next((v for i, v in enumerate(numbers) if v in numbers[:i]), None)
    if twice is not None:
        raise InvalidInputError(
            f"--vary {name.strip()} lists {twice:g} twice; give each value once"
        )
    return name.strip(), numbers


def _number(text: str) -> float:
    with contextlib.suppress(ValueError):
        return int(text)  # exactly, however large (a float keeps 53 bits)
    value = float(text)
    return int(value) if value.is_integer() and "." not in text else value


def cmd_roofline(args: argparse.Namespace) -> None:
    from nerframe.builtin_pipelines import PIPELINES
    from nerframe.charts import roofline_chart, save_chart
    from nerframe.costing import costs
    from nerframe.rooflines import roofline

    suffix = args.output.suffix.lower()
    tables, charts = (".csv", ".json", ".parquet", ".txt"), (".png", ".svg", ".html")
    if suffix not in (*tables, *charts):
        raise InvalidInputError(
            f"{args.output}: unknown output format {suffix!r}; use {', '.join(charts)} for the "
            f"chart, or {', '.join(tables)} for its table"
        )
    graphs = [_graph(args, name) for name in args.pipelines]
    names = args.system or ["A100"] + [
        a for g in graphs if g.name in PIPELINES for a in PIPELINES[g.name].native
    ]
    table = pl.concat([costs(g.ops) for g in graphs])
    result = roofline(table, list(dict.fromkeys(names)))
    if suffix in tables:
        emit(result, None, args.output)
    else:
        save_chart(roofline_chart(result), args.output)


# Rows a query prints to a terminal, or as a table, unless --limit says otherwise.
QUERY_ROWS = 100


def cmd_query(args: argparse.Namespace) -> None:
    from nerframe.atomic import atomic_path
    from nerframe.output import emit_batches, file_format
    from nerframe.sql import opened

    fmt = args.format or "table"
    # (the folder DuckDB writes an -o file into, under a temporary name)
    writes = () if args.output is None else (Path(os.path.abspath(args.output)).parent,)
    with opened(args.query, args.store, writes=writes) as result:
        if args.output is not None:
            path, fmt = file_format(args.output, args.format)
            limit = args.limit or None
            if fmt == "table":  # aligned columns need every row first
                emit(result.frame(limit), fmt, path)
            else:  # DuckDB writes the file as it reads the rows
                with atomic_path(path) as tmp:
                    result.write(tmp, cast(FileFormat, fmt), limit)
            return
        # Printed: a terminal (or a table anywhere) gets the first rows only; csv or
        # json into a pipe gets every row, a batch at a time.
        limit = args.limit
        if limit is None:
            limit = QUERY_ROWS if fmt == "table" or sys.stdout.isatty() else 0
        if fmt != "table" and not limit:
            emit_batches(result.batches(), fmt)
            return
        shown = result.frame(limit + 1 if limit else None)
        more = 0
        if limit and shown.height > limit:
            shown, more = shown.head(limit), result.count() - limit
        emit(shown, fmt)
    if more:
        note = f"… {more:,} more row{'s' if more > 1 else ''}; use -o FILE (or --limit N)\n"
        (sys.stdout if fmt == "table" else sys.stderr).write(note)


def cmd_report(args: argparse.Namespace) -> None:
    from nerframe.report import build_report

    sys.stderr.write(f"wrote {build_report(args.store, args.output, args.images)}\n")


def cmd_verify(args: argparse.Namespace) -> None:
    from nerframe.errors import StoreError
    from nerframe.store import verify

    problems = verify(args.store)
    for problem in problems:
        sys.stdout.write(printable(f"{problem.path}: {problem.what}; {problem.repair}") + "\n")
    if problems:
        count = f"{len(problems)} problem{'s' * (len(problems) > 1)}"
        raise StoreError(f"{args.store}: {count} (listed above)", str(args.store))
    sys.stdout.write(
        f"{printable(str(args.store))}: ok (every part whole and as its manifest says)\n"
    )


def cmd_validate(args: argparse.Namespace) -> None:
    from nerframe.validation import calibrate, summary, validate

    if args.calibrate:
        emit(calibrate(), args.format, args.output)
        return
    table = validate(bands=args.bands)
    emit(table, args.format, args.output)
    # the summary goes beside a table on the terminal, else to stderr beside the file
    (sys.stdout if _for_people(args) else sys.stderr).write(summary(table) + "\n")


def cmd_probe(args: argparse.Namespace) -> None:
    from nerframe.probing import probe, probe_path, summary

    if args.device == "cuda":
        from nerframe.gpu import fit
        from nerframe.gpu_probe import probe_cuda, write_probe

        if args.output is None:
            raise InvalidInputError("probe --device cuda: give -o FILE (where to write it)")
        measured = probe_cuda()
        figures = fit(measured)
        write_probe(measured, args.output)
        sys.stdout.write(
            f"{measured['device']} (torch {measured['torch']}, CUDA {measured['cuda']}): "
            f"kernel {figures['alone_s'] * 1e6:.3g} us alone, "
            f"{figures['back_to_back_s'] * 1e6:.3g} us back to back; "
            f"{figures['bandwidth_gbps']:.4g} GB/s; float32 GEMM up to "
            f"{figures['gemm']['float32']['peak_tflops']:.3g} TFLOP/s\n"
        )
        sys.stderr.write(f"wrote {args.output}\n")
        return
    record = probe(args.output, force=args.force, threads=args.threads)
    if record["busy"]:
        before, after = record["load"][0], record["load_after"][0]
        _warn(
            [
                f"measured on a busy machine (1-minute load {before:.3g} before, {after:.3g} "
                f"after, on {record['cpus']} CPUs): the figures are low"
            ]
        )
    sys.stdout.write("\n".join(summary(record)) + "\n")
    sys.stderr.write(f"wrote {args.output or probe_path()}\n")


def cmd_trace_capture(args: argparse.Namespace) -> None:
    from nerframe.trace.capture import capture, load_target
    from nerframe.trace.tracefile import is_trace_file, write_trace

    if not is_trace_file(args.output):
        raise InvalidInputError(f"{args.output}: a trace file's name must end in .trace.json")
    try:
        model, inputs = load_target(args.target)
        trace = capture(
            model,
            *inputs,
            repeats=args.repeats,
            warmup=args.warmup,
            grad=args.grad,
            device=args.device,
            threads=args.threads,
            train=args.train,
        )
    except NerframeError:
        raise
    except Exception as e:  # the user's model code failed: say where, in one line
        raise InvalidInputError(f"{args.target}: {type(e).__name__}: {e}") from None
    write_trace(trace, args.output)
    sys.stderr.write(f"wrote {args.output} ({len(trace.calls)} module calls)\n")


def _trace_path(args: argparse.Namespace) -> Path:
    """The command's trace file, refused unless named ``*.trace.json``."""
    from nerframe.trace.tracefile import is_trace_file

    if not is_trace_file(args.trace):
        raise InvalidInputError(f"{args.trace}: not a trace file (expected a .trace.json name)")
    return Path(args.trace)


def _traced(args: argparse.Namespace) -> TracedGraph:
    from nerframe.trace.ingest import read_traced_graph

    # the reader warns of unknown modules and guessed B/N (as every command reading a trace)
    return read_traced_graph(_trace_path(args), args.map or (), args.strict)


def cmd_trace_ops(args: argparse.Namespace) -> None:
    import json

    from nerframe.atomic import atomic_path
    from nerframe.trace.ingest import graph_document

    g = _traced(args)
    if args.output is not None and args.output.suffix.lower() in (".json", ".yaml", ".yml"):
        with atomic_path(args.output) as tmp:
            tmp.write_text(json.dumps(graph_document(g, str(args.trace)), indent=1) + "\n")
        sys.stderr.write(f"wrote {args.output} ({g.ops.height} ops)\n")
        return
    view = g.measured.select("op_id", "op_type", "path", "measured_s", "approximate")
    table = g.ops.select("op_id", "B", "N").join(view, on="op_id", maintain_order="left")
    emit(
        table.select("op_id", "op_type", "B", "N", "path", "measured_s", "approximate"),
        args.format,
        args.output,
    )


def cmd_trace_compare(args: argparse.Namespace) -> None:
    from nerframe import gpu
    from nerframe.probing import host_predictor
    from nerframe.rooflines import System, system
    from nerframe.trace.compare import compare, median_log_error
    from nerframe.trace.host import HostModel, predict_forward
    from nerframe.trace.tracefile import read_trace

    if args.system is not None and args.probe is not None:
        raise InvalidInputError(
            "trace compare: give --probe (the host model) or --system, not both"
        )
    trace = read_trace(_trace_path(args))
    predictor: HostModel | System | gpu.GpuModel
    if args.system is not None and gpu.is_gpu(args.system):
        predictor = gpu.trace_model(args.system, trace)
    elif args.system is not None:
        predictor = system(args.system)
    elif args.probe is not None and gpu.is_gpu_probe(args.probe):
        predictor = gpu.probe_model(args.probe, trace)
    else:
        predictor = host_predictor(args.probe)
    if isinstance(predictor, System) and args.system is None:
        _warn([f"{args.probe or 'the probe result'} is version 1: predicted with its roofline"])
    table = compare(_traced(args).measured, predictor)
    emit(table.drop("graph", "system"), args.format, args.output)
    error = median_log_error(table)
    if error is not None:
        sys.stderr.write(f"median |log10(measured / predicted)|: {error:.3g} (x{10**error:.3g})\n")
    if isinstance(predictor, gpu.GpuModel):
        forward = gpu.predict_forward(predictor, trace)
    elif isinstance(predictor, HostModel):
        forward = predict_forward(predictor, trace)
    else:
        forward = None
    if (
        isinstance(predictor, HostModel)
        and trace.threads
        and predictor.threads
        and trace.threads != predictor.threads
    ):
        _warn(
            [
                f"the trace ran on {trace.threads} threads, the probe on "
                f"{predictor.threads}: probe with --threads {trace.threads}"
            ]
        )
    if forward and trace.train is not None and trace.train.iteration_s:
        measured = trace.train.iteration_s
        sys.stderr.write(
            f"whole iteration: measured {measured:.4g} s, predicted {forward:.4g} s "
            f"(measured / predicted {measured / forward:.3g})\n"
        )
    elif forward and trace.total_s:
        sys.stderr.write(
            f"whole forward: measured {trace.total_s:.4g} s, predicted {forward:.4g} s "
            f"(measured / predicted {trace.total_s / forward:.3g})\n"
        )


def cmd_trace_dag(args: argparse.Namespace) -> None:
    from nerframe.trace.dag_pickle import read_dag_pickle

    dag = read_dag_pickle(args.pickle)
    emit(dag.edges if args.edges else dag.nodes, args.format, args.output)


def _trace_commands(sub: argparse._SubParsersAction[_Parser]) -> None:
    p = sub.add_parser("probe", help="measure this machine (the host model and system 'host')")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="[$NERFRAME_PROBE or cache]")
    p.add_argument(
        "--force",
        action="store_true",
        help="measure even when the 1-minute load exceeds the CPU count minus 0.5",
    )
    p.add_argument("--threads", type=positive, help="torch intra-op threads [as set]")
    p.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="cuda: the GPU kernel model's micro-benchmarks (needs -o) [cpu]",
    )
    p.set_defaults(run=cmd_probe)

    trace = sub.add_parser("trace", help="traces of live PyTorch models")
    commands = trace.add_subparsers(dest="trace_command", required=True, parser_class=_Parser)
    p = commands.add_parser("capture", help="run and record a model (needs nerframe[trace])")
    p.add_argument("target", metavar="MODULE:FUNC", help="FUNC() returns (model, inputs)")
    p.add_argument("-o", "--output", type=Path, required=True, metavar="FILE.trace.json")
    p.add_argument("--repeats", type=int, default=5, help="timed runs; the median is kept [5]")
    p.add_argument("--warmup", type=non_negative, default=1, help="unrecorded runs first [1]")
    p.add_argument(
        "--grad",
        action="store_true",
        help="run with autograd on (default: no_grad); only the forward pass is recorded "
        "(--train records a training iteration)",
    )
    p.add_argument(
        "--train",
        action="store_true",
        help="record one training iteration: forward, loss (mean square of the output), "
        "backward per module and an Adam step",
    )
    p.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="where the model runs; cuda is timed with CUDA events [cpu]",
    )
    p.add_argument("--threads", type=positive, help="torch intra-op threads [as set]")
    p.set_defaults(run=cmd_trace_capture)
    for name, run, text in (
        ("ops", cmd_trace_ops, "the operator graph of a trace (-o graph.json: a graph file)"),
        ("compare", cmd_trace_compare, "each traced op's measured vs predicted time on host"),
    ):
        p = commands.add_parser(name, help=text)
        p.add_argument("trace", type=Path, metavar="FILE.trace.json")
        p.add_argument("--map", type=Path, action="append", metavar="FILE", help="class map (YAML)")
        p.add_argument("--strict", action="store_true", help="unknown leaf modules are errors")
        if name == "compare":
            p.add_argument("--probe", type=Path, metavar="FILE", help="probe result [default]")
            p.add_argument(
                "--system",
                metavar="NAME",
                help="predict with this roofline system (h200, A100…) instead of the host model",
            )
        _output(p)
        p.set_defaults(run=run)
    p = commands.add_parser("dag", help="import an original execution_dag.pkl safely")
    p.add_argument("pickle", type=Path, metavar="FILE.pkl")
    p.add_argument("--edges", action="store_true", help="list the edges instead of the nodes")
    _output(p)
    p.set_defaults(run=cmd_trace_dag)


def parser() -> argparse.ArgumentParser:
    """The argument parser of the ``nerframe`` command."""
    from nerframe import __version__

    top = _Parser(prog="nerframe", description=__doc__.split("\n")[0])
    top.add_argument("--version", action="version", version=f"nerframe {__version__}")
    sub = top.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("pipelines", help="list the built-in pipelines")
    _model(p)
    _scene(p)
    _output(p)
    p.set_defaults(run=cmd_pipelines)

    p = sub.add_parser("scenes", help="list the standard scenes (frame, Gaussians, sources)")
    _output(p)
    p.set_defaults(run=cmd_scenes)

    p = sub.add_parser("costs", help="per-operator costs of a pipeline, with totals")
    p.add_argument("pipeline", help="a built-in pipeline or a graph file (.json)")
    _workload(p)
    _frame(p)
    _output(p)
    p.set_defaults(run=cmd_costs)

    p = sub.add_parser("hardware", help="list accelerators, or show one with its load warnings")
    p.add_argument("accelerator", nargs="?", help="a built-in name or a .json file")
    p.add_argument(
        "--breakdown",
        action="store_true",
        help="emit the area and power breakdown (per module and SRAM block, native and 28 nm) "
        "instead of the module table",
    )
    _output(p)
    p.set_defaults(run=cmd_hardware)

    p = sub.add_parser("schedule", help="schedule a pipeline on an accelerator")
    p.add_argument("pipeline", help="a built-in pipeline or a graph file (.json)")
    p.add_argument("--hardware", required=True, help="a built-in accelerator or a .json file")
    p.add_argument("--summary", action="store_true", help="output the summary row (csv/json/-o)")
    p.add_argument(
        "--bands",
        action="store_true",
        help="also the range of fps, energy, power and area over the assumed figures "
        "(csv/json/-o: that table)",
    )
    _schedule_options(p)
    _workload(p)
    _frame(p)
    _output(p)
    p.set_defaults(run=cmd_schedule)

    p = sub.add_parser("analyze", help="the main job: pipelines x accelerators into a store")
    p.add_argument("pipelines", nargs="*", help="built-in pipelines or graph files [all]")
    p.add_argument(
        "--hardware",
        nargs="+",
        help="accelerators, 'native' (each pipeline's own) or 'all' [native]",
    )
    p.add_argument("-o", "--output", type=Path, default=Path("nerframe-out"), metavar="DIR")
    p.add_argument("--format", choices=FORMATS[:3], help="format of the printed summary")
    p.add_argument("--no-report", dest="report", action="store_false", help="skip the report")
    p.add_argument("--images", action="store_true", help="also write PNG/SVG of every chart")
    p.add_argument(
        "--bands",
        action="store_true",
        help="also print each pair's range of fps, energy, power and area over the assumed figures",
    )
    _schedule_options(p)
    _workload(p)
    p.set_defaults(run=cmd_analyze)

    p = sub.add_parser("sweep", help="graphs x workload points x accelerator variants")
    p.add_argument("pipelines", nargs="*", help="built-in pipelines or graph files [the spec's]")
    p.add_argument("--spec", type=Path, metavar="FILE", help="a YAML/JSON sweep spec")
    p.add_argument("--hardware", help="a built-in accelerator or a .json file [the spec's]")
    p.add_argument(
        "--vary",
        action="append",
        metavar="PARAM=V1,V2,...",
        help="values to try: workload (rays, samples, gaussians, bitwidth, OPTYPE.PARAM, "
        "scene) or "
        "hardware (frequency_mhz, dram_bandwidth_gbps, dram_pj_per_byte, MODULE.FIELD with "
        "FIELD count, throughput_ops_per_cycle, latency_cycles, power_uw or area_um2)",
    )
    p.add_argument(
        "--max", action="append", metavar="FIGURE=V", help="a budget, e.g. area_mm2=5, power=2"
    )
    p.add_argument("--min", action="append", metavar="FIGURE=V", help="a floor, e.g. fps=30")
    p.add_argument(
        "--pareto", metavar="A,B", help="print the Pareto front on these figures (e.g. fps,energy)"
    )
    p.add_argument("--top", type=non_negative, default=10, help="rows to print, best first; 0: all")
    p.add_argument("--chart", type=Path, metavar="FILE", help="draw the Pareto front (--pareto)")
    p.add_argument("-o", "--output", type=Path, metavar="DIR", help="write (or resume) a store")
    p.add_argument(
        "--backend",
        choices=("local", "dask"),
        default="local",
        help="dask: chunks as tasks of a Dask cluster (nerframe[dask], needs -o) [local]",
    )
    p.add_argument("--scheduler", metavar="ADDRESS", help="dask scheduler [a LocalCluster]")
    p.add_argument("--chunk-size", type=positive, metavar="N", help="configurations per chunk")
    p.add_argument(
        "--compression",
        choices=get_args(Compression),
        help="compress the store's parts (lz4: fast, zstd: smaller) [the spec's: none]",
    )
    p.add_argument("--yes", action="store_true", help=f"run grids over {CONFIRM_ABOVE:,} points")
    p.add_argument("--format", choices=FORMATS[:3], help="format of the printed rows")
    _schedule_options(p)
    _workload(p)
    p.set_defaults(run=cmd_sweep, parallelism=None)  # None: the spec's [split]

    p = sub.add_parser("roofline", help="roofline chart (png, svg, html) or table")
    p.add_argument("pipelines", nargs="+", help="built-in pipelines or graph files")
    p.add_argument(
        "--system",
        action="append",
        help="A100, H100 or an accelerator (repeatable) [A100 and the native accelerators]",
    )
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="FILE",
        help="the chart (.png, .svg, .html) or its table (.csv, .json, .parquet, .txt)",
    )
    _workload(p)
    _frame(p)
    p.set_defaults(run=cmd_roofline)

    p = sub.add_parser("query", help="DuckDB SQL (or a named query) over a result store")
    p.add_argument("query", help="a named query (see queries/) or SQL")
    p.add_argument("--store", type=Path, required=True, metavar="DIR")
    _output(p)
    p.add_argument(
        "--limit",
        type=non_negative,
        metavar="N",
        help=f"rows to print or write, 0: all [{QUERY_ROWS} printed to a terminal or as a "
        "table; all in csv/json to a pipe, and in a file]",
    )
    p.set_defaults(run=cmd_query)

    p = sub.add_parser("verify", help="check a result store's parts against its manifest")
    p.add_argument("store", type=Path, metavar="DIR")
    p.set_defaults(run=cmd_verify)

    p = sub.add_parser("validate", help="published figures against the model's predictions")
    p.add_argument(
        "--calibrate",
        action="store_true",
        help="print the parameters the calibration rows fix instead",
    )
    p.add_argument(
        "--bands",
        action="store_true",
        help="add each row's band over the assumed figures and whether the figure is inside",
    )
    _output(p)
    p.set_defaults(run=cmd_validate)

    p = sub.add_parser("report", help="(re)build the HTML report of a result store")
    p.add_argument("store", type=Path, metavar="DIR")
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="FILE",
        help="[DIR/report.html] (elsewhere: the store is untouched)",
    )
    p.add_argument("--images", action="store_true", help="also write PNG/SVG of every chart")
    p.set_defaults(run=cmd_report)
    _trace_commands(sub)
    p = sub.add_parser("schema", help="print the JSON Schema of an input file format")
    p.add_argument(
        "kind",
        metavar="KIND",
        help="accelerator, rendersim, graph, sweep-spec, trace, class-map, manifest or probe",
    )
    p.set_defaults(run=cmd_schema)
    _add_wide(top)
    return top


def _add_wide(p: argparse.ArgumentParser) -> None:
    """``--wide`` on every command: text cells of printed tables in full."""
    commands = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    for action in commands:
        for child in dict.fromkeys(action.choices.values()):
            _add_wide(child)
    if not commands:
        p.add_argument(
            "--wide", action="store_true", help="print long text cells whole (else cut with …)"
        )


# Ctrl-C: the first raises KeyboardInterrupt in the main thread, so that the command
# unwinds (its temporary files removed, its store unlocked). Work inside a library
# (a numba kernel, a DuckDB query, a polars collect) can hold that off, so the
# process ends on its own this long after the first Ctrl-C, or at a second one.
INTERRUPT_GRACE_S = 0.6


_CALLED_BACK = ("polars", "pyarrow", "duckdb", "torch", "importlib")
"""Libraries whose native code calls back into their own Python code, and the import
machinery between such frames: torch's C++ imports its Python modules through pybind11
while ``import torch`` runs, and an exception raised there aborts the process
("terminate called after throwing an instance of 'pybind11::error_already_set'", seen
in CI when a Ctrl-C landed in ``torch/distributed/autograd/__init__.py``)."""


def _called_back(frame: FrameType) -> bool:
    """Whether `frame` runs code of a library in `_CALLED_BACK`."""
    module = str(frame.f_globals.get("__name__", ""))
    return module.partition(".")[0] in _CALLED_BACK


def _untraced(frame: FrameType, event: str, arg: object) -> None:
    """A global trace function that traces no new call (`_Interrupts._raise` needs
    tracing on to reach one running frame's ``f_trace``)."""


class _Interrupts:
    """The command line's Ctrl-C policy (see `INTERRUPT_GRACE_S`), installed by `main`.

    The kernel's signal handler writes to a wake-up socket at once, whatever the
    main thread is doing, so a watcher thread can end the process in time; Python
    runs the handler that raises KeyboardInterrupt only between bytecodes."""

    def __init__(self) -> None:
        self.interrupted = False
        self._finished = threading.Lock()  # held by whoever ends the command
        self._read, self._write = socket.socketpair()
        self._write.setblocking(False)
        self._unraisable_hook = sys.unraisablehook

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # signal handlers belong to the main thread; elsewhere Ctrl-C is Python's
            return
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            # Inherited: a shell starts a script's background jobs so, to keep them
            # running through a Ctrl-C meant for the foreground.
            yield
            return
        previous = signal.signal(signal.SIGINT, self._raise)
        wakeup = signal.set_wakeup_fd(self._write.fileno(), warn_on_full_buffer=False)
        self._unraisable_hook = sys.unraisablehook
        sys.unraisablehook = self._unraisable
        watcher = threading.Thread(target=self._watch, daemon=True)
        watcher.start()
        try:
            yield
        finally:
            signal.set_wakeup_fd(wakeup)
            signal.signal(signal.SIGINT, previous)
            sys.unraisablehook = self._unraisable_hook
            # After a Ctrl-C the watcher ends the process at the deadline, however long
            # the interpreter's own exit takes (torch's, for one, takes seconds).
            if not self.interrupted:
                self._write.close()  # ends the watcher
                watcher.join()
                self._read.close()

    def _raise(self, signum: int, frame: FrameType | None) -> None:
        if self.interrupted:
            return
        self.interrupted = True
        caller = frame
        while caller is not None and _called_back(caller):
            caller = caller.f_back
        if caller is None or caller is frame:
            raise KeyboardInterrupt
        # Python code that a library's native code calls back (polars builds a dtype
        # in Python from Rust) cannot pass the exception through the native frames:
        # polars' Rust panics and prints its backtrace. So it is raised in the first
        # frame outside such libraries, at the next line that frame runs.
        previous = sys.gettrace()

        def interrupt(at: FrameType, event: str, arg: object) -> None:
            sys.settrace(previous)
            at.f_trace = None
            raise KeyboardInterrupt

        caller.f_trace_lines = True
        caller.f_trace = interrupt
        sys.settrace(_untraced)

    def _unraisable(self, info: sys.UnraisableHookArgs) -> None:
        # The KeyboardInterrupt may land where Python cannot propagate it (a finaliser,
        # a C extension's callback: seen in CI with the lowest versions), and Python
        # prints it as "Exception ignored in: ...". The watcher ends the command at the
        # deadline all the same, so on an interrupted run that is noise.
        if not (self.interrupted and issubclass(info.exc_type, KeyboardInterrupt)):
            self._unraisable_hook(info)

    def _watch(self) -> None:
        while (data := self._read.recv(64)) and signal.SIGINT not in data:
            pass  # another signal with a Python handler
        if not data:
            return  # the command is over
        # A second Ctrl-C, or the grace period over: end now.
        select.select([self._read], [], [], INTERRUPT_GRACE_S)
        self.end(hard=True)

    def end(self, *, hard: bool = False) -> None:
        """Report the interruption, unless it was reported or the command ended by itself;
        with `hard`, also remove the temporary files being written and end the process
        at once (status 130 if it was interrupted)."""
        first = self._finished.acquire(blocking=False)
        if first:
            sys.stderr.write("error: interrupted\n")
        if hard:
            from nerframe.atomic import remove_temporaries

            remove_temporaries()
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(130)

    def finish(self) -> None:
        """The command ended by itself: the watcher must not end it again."""
        self._finished.acquire(blocking=False)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    r"""`warnings.showwarning` on the command line, the one way every command shows a
    warning: one ``warning: …`` line (lines joined, control characters escaped), without
    the file and source line Python's own adds; written past a progress bar. A line
    already shown by this command is not repeated (a sweep reads its graph file once per
    workload point, and each read warns the same).

    >>> import io
    >>> out = io.StringIO()
    >>> for _ in range(2):
    ...     _show_warning(UserWarning("two\nlines \x1b[31m"), UserWarning, "f.py", 1, out)
    >>> out.getvalue()
    'warning: two lines \\x1b[31m\n'
    """
    from tqdm import tqdm

    text = " ".join(part.strip() for part in str(message).splitlines() if part.strip())
    if text in _SHOWN:
        return
    _SHOWN.add(text)
    # tqdm.write clears a drawn bar, writes the line and redraws the bar below it
    tqdm.write(f"warning: {printable(text)}", file=file or sys.stderr)


_SHOWN: set[str] = set()
"""The warnings this command has shown (`_show_warning`)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    interrupts = _Interrupts()
    _SHOWN.clear()
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        # nerframe's warnings are about this run's results: every one is shown.
        from nerframe.errors import NerframeWarning

        warnings.simplefilter("always", NerframeWarning)
        try:
            with interrupts.installed():
                try:
                    status = _run(argv, interrupts)
                finally:
                    interrupts.finish()
        except KeyboardInterrupt:  # a Ctrl-C that came as the command ended
            interrupts.end()
            status = 130
    if interrupts.interrupted:
        # Unwound and reported: end now, as the interpreter's own exit can hold the
        # process for seconds (torch's does) past the Ctrl-C deadline.
        interrupts.end(hard=True)
    return status


# Arguments that may name files a command reads (a name that is no file is a built-in).
_INPUTS = (
    "pipeline", "pipelines", "hardware", "accelerator", "system",
    "spec", "store", "trace", "map", "probe", "pickle",
)  # fmt: skip


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before any work, an output (``-o``, ``--chart``) that would write inside
    a result store (its tables, ``store.json``, its report) or over an input of the
    command (a store, graph, spec, accelerator or trace file it reads), or whose folder
    would hold such an input: nerframe never replaces a file it reads or a store's own
    files. ``report STORE -o STORE/report.html`` is the report's own place.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> spec = folder / "spec.yaml"
    >>> _ = spec.write_text("graphs: [neurex]")
    >>> args = argparse.Namespace(spec=spec, output=spec)
    >>> try:
    ...     check_outputs(args)
    ... except InvalidInputError as e:
    ...     print(str(e).removeprefix(str(folder) + "/"))
    spec.yaml: -o would write over an input of this command; choose another name
    """
    flags = {"output": "-o", "chart": "--chart"}
    targets = [(flag, t) for key, flag in flags.items() if (t := getattr(args, key, None))]
    if not targets:
        return  # (nothing imported: a command without an output starts as fast)
    for _, target in targets:
        if isinstance(target, Path):
            check_output_path(target)
    from nerframe.atomic import check_replaceable
    from nerframe.store import enclosing_store

    inputs: list[Path] = []
    for key in _INPUTS:
        value = getattr(args, key, None)
        values = value if isinstance(value, list) else [value]
        inputs += [Path(v) for v in values if isinstance(v, str | Path) and os.path.exists(v)]
    for flag, target in targets:
        real = Path(os.path.realpath(target))
        for source in inputs:
            read = Path(os.path.realpath(source))
            if real == read or real in read.parents:
                what = "over" if real == read else f"the folder holding {source},"
                raise InvalidInputError(
                    f"{target}: {flag} would write {what} an input of this command; "
                    "choose another name",
                    str(target),
                )
        store = enclosing_store(target)
        own_report = getattr(args, "command", None) == "report" and real == Path(
            os.path.realpath(args.store), "report.html"
        )
        if store is not None and not own_report:
            raise InvalidInputError(
                f"{target}: {flag} names a file inside the result store {store}, whose files "
                "only nerframe writes; choose a path outside it",
                str(target),
            )
        # (a device such as /dev/null, or a file where a store's folder goes)
        folder = flag == "-o" and getattr(args, "command", None) in ("analyze", "sweep")
        check_replaceable(target, folder=folder)


def _run(argv: Sequence[str] | None, interrupts: _Interrupts) -> int:
    try:
        args = parser().parse_args(argv)
        run: Callable[[argparse.Namespace], None] = args.run
        check_outputs(args)
        with wide(args.wide):
            run(args)
    except KeyboardInterrupt:
        # Ctrl-C: temporary files are already removed on the way out.
        interrupts.end()
        return 130
    except NerframeError as e:
        if interrupts.interrupted:  # the interrupt, as a library reported it
            interrupts.end()
            return 130
        # One line, whatever a library put into the message.
        message = " ".join(line.strip() for line in str(e).splitlines() if line.strip())
        sys.stderr.write(f"error: {printable(message)}\n")
        return 1
    except BrokenPipeError:
        return 0
    except OSError as e:  # an unwritable output path, a full disk, ...
        if interrupts.interrupted:
            interrupts.end()
            return 130
        sys.stderr.write(f"error: {e.filename or ''}: {e.strerror or e}\n")
        return 1
    except BaseException as e:
        # A library that caught Ctrl-C and raised its own error (a polars callback
        # panics instead of unwinding): it is still the interrupt.
        if interrupts.interrupted:
            interrupts.end()
            return 130
        if not isinstance(e, Exception) or os.environ.get("NERFRAME_TRACEBACK") == "1":
            raise
        # An input no check foresaw reached a library: still one line, never a traceback.
        reason = next((line.strip() for line in str(e).splitlines() if line.strip()), "")
        sys.stderr.write(
            printable(
                f"error: unexpected {type(e).__name__}{': ' + reason if reason else ''} "
                "(a nerframe bug: please report the command; NERFRAME_TRACEBACK=1 shows where)"
            )
            + "\n"
        )
        return 1
    return 0


interrupts.loaded()  # main installs the command's own policy

if __name__ == "__main__":
    sys.exit(main())
