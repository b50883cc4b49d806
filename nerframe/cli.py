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

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

import polars as pl

from nerframe.builtin_pipelines import MODELS
from nerframe.errors import NerframeError
from nerframe.graphs import Graph
from nerframe.output import FORMATS, emit, format_value, to_text

COST_VIEW = ["op_id", "op_type", "category", "backward", "scope", "bitwidth", "B", "N", "G"]
COST_TOTALS = ["flops", "bytes_in", "bytes_w", "bytes_out", "bytes_total"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage dump
        sys.stderr.write(f"error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(2)


def _workload(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rays", type=int, metavar="B", help="rays (pixels) per batch [4096]")
    p.add_argument("--samples", type=int, metavar="N", help="samples per ray [64; icarus 192]")
    p.add_argument("--gaussians", type=int, metavar="G", help="Gaussians in the scene [1000000]")
    p.add_argument("--fine", action="store_true", help="expand composites into their stages")
    _model(p)


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
    from nerframe.analysis import load_graph

    return load_graph(name, args.rays, args.samples, args.gaussians, args.fine, args.model)


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


def _for_people(args: argparse.Namespace) -> bool:
    """Output goes to a terminal as a table (not csv/json, not a file)."""
    return args.output is None and (args.format or "table") == "table"


def _warn(lines: Sequence[str]) -> None:
    for line in lines:
        sys.stderr.write(f"warning: {line}\n")


def cmd_pipelines(args: argparse.Namespace) -> None:
    from nerframe.builtin_pipelines import pipelines

    emit(pipelines(args.model), args.format, args.output)


def cmd_costs(args: argparse.Namespace) -> None:
    from nerframe.costing import costs

    table = costs(_graph(args, args.pipeline).ops)
    if _for_people(args):
        table = table.select(*COST_VIEW, "flops", "bytes_total", "intensity")
    emit(table, args.format, args.output, totals=COST_TOTALS)


def cmd_hardware(args: argparse.Namespace) -> None:
    from nerframe.hardware import accelerator, accelerators, module_table

    if args.accelerator is None:
        table = accelerators().with_columns(pl.col("warnings").list.len())
        emit(table.drop("path", "description"), args.format, args.output)
        return
    accel = accelerator(args.accelerator)
    _warn(accel.warnings)
    emit(module_table([accel]), args.format, args.output)
    if _for_people(args):
        mapping = sorted(accel.operator_mapping.items())
        sys.stdout.write(
            f"\n{accel.name}: {accel.description}\n"
            f"clock {accel.frequency_mhz:g} MHz, DRAM {accel.dram_bandwidth_gbps:g} GB/s, "
            f"peak {accel.peak_tflops:.4g} TFLOP/s, area {accel.area_mm2:.4g} mm²\n"
            + "".join(f"  {op} -> {module}\n" for op, module in mapping)
        )


def cmd_schedule(args: argparse.Namespace) -> None:
    from nerframe.hardware import accelerator
    from nerframe.scheduling import schedule

    accel = accelerator(args.hardware)
    _warn(accel.warnings)
    result = schedule(_graph(args, args.pipeline), accel, args.parallelism, args.pipelined)
    table = result.summary if args.summary else result.schedule
    if not _for_people(args):
        emit(table, args.format, args.output)
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
        report=args.report,
        model=args.model,
        images=args.images,
    )
    view = ["graph", "accelerator", "status", "fps", "frame_time_s", "energy_per_frame_j"]
    view += ["avg_power_w", "area_mm2", "dram_utilization", "bottleneck_module"]
    emit(result.summary.select(view), args.format)
    sys.stderr.write(f"wrote {result.store}/\n")


def cmd_sweep(args: argparse.Namespace) -> None:
    from nerframe.sweeps import sweep

    grid = dict(_axis(text) for text in args.vary)
    result = sweep(
        _graph(args, args.pipeline),
        args.hardware,
        grid,
        parallelism=args.parallelism,
        pipelined=args.pipelined,
        output=args.output,
    )
    shown = result.sort("fps", descending=True, nulls_last=True, maintain_order=True)
    if args.top:
        shown = shown.head(args.top)
    view = ["config", *grid, "fps", "energy_per_frame_j", "avg_power_w", "area_mm2"]
    emit(shown.select(*view, "dram_utilization", "bottleneck_module"), args.format)
    if args.output is not None:
        sys.stderr.write(f"wrote {args.output}/ ({result.height:,} configurations)\n")


def _axis(text: str) -> tuple[str, list[float]]:
    name, _, values = text.partition("=")
    try:
        return name.strip(), [float(v) for v in values.split(",")]
    except ValueError:
        raise NerframeError(f"--vary expects PARAM=V1,V2,..., got {text!r}") from None


def cmd_roofline(args: argparse.Namespace) -> None:
    from nerframe.builtin_pipelines import PIPELINES
    from nerframe.charts import roofline_chart, save_chart
    from nerframe.costing import costs
    from nerframe.rooflines import roofline

    graphs = [_graph(args, name) for name in args.pipelines]
    names = args.system or ["A100"] + [
        a for g in graphs if g.name in PIPELINES for a in PIPELINES[g.name].native
    ]
    table = pl.concat([costs(g.ops) for g in graphs])
    result = roofline(table, list(dict.fromkeys(names)))
    if args.output.suffix.lower() in (".csv", ".json", ".parquet", ".txt"):
        emit(result, None, args.output)
    else:
        save_chart(roofline_chart(result), args.output)


def cmd_query(args: argparse.Namespace) -> None:
    from nerframe.sql import query

    emit(query(args.query, args.store), args.format, args.output)


def cmd_report(args: argparse.Namespace) -> None:
    from nerframe.report import build_report

    sys.stderr.write(f"wrote {build_report(args.store, args.output, args.images)}\n")


def parser() -> argparse.ArgumentParser:
    """The argument parser of the ``nerframe`` command."""
    from nerframe import __version__

    top = _Parser(prog="nerframe", description=__doc__.split("\n")[0])
    top.add_argument("--version", action="version", version=f"nerframe {__version__}")
    sub = top.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("pipelines", help="list the built-in pipelines")
    _model(p)
    _output(p)
    p.set_defaults(run=cmd_pipelines)

    p = sub.add_parser("costs", help="per-operator costs of a pipeline, with totals")
    p.add_argument("pipeline", help="a built-in pipeline or a graph file (.json)")
    _workload(p)
    _output(p)
    p.set_defaults(run=cmd_costs)

    p = sub.add_parser("hardware", help="list accelerators, or show one with its load warnings")
    p.add_argument("accelerator", nargs="?", help="a built-in name or a .json file")
    _output(p)
    p.set_defaults(run=cmd_hardware)

    p = sub.add_parser("schedule", help="schedule a pipeline on an accelerator")
    p.add_argument("pipeline", help="a built-in pipeline or a graph file (.json)")
    p.add_argument("--hardware", required=True, help="a built-in accelerator or a .json file")
    p.add_argument("--summary", action="store_true", help="output the summary row (csv/json/-o)")
    _schedule_options(p)
    _workload(p)
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
    _schedule_options(p)
    _workload(p)
    p.set_defaults(run=cmd_analyze)

    p = sub.add_parser("sweep", help="one pipeline on a grid of accelerator variants")
    p.add_argument("pipeline", help="a built-in pipeline or a graph file (.json)")
    p.add_argument("--hardware", required=True, help="a built-in accelerator or a .json file")
    p.add_argument(
        "--vary",
        action="append",
        required=True,
        metavar="PARAM=V1,V2,...",
        help="values to try: frequency_mhz, dram_bandwidth_gbps, dram_pj_per_byte or "
        "MODULE.FIELD (count, throughput_ops_per_cycle, latency_cycles, power_uw, area_um2)",
    )
    p.add_argument(
        "--top", type=non_negative, default=10, help="rows to print, fastest first; 0: all"
    )
    p.add_argument("-o", "--output", type=Path, metavar="DIR", help="write (or resume) a store")
    p.add_argument("--format", choices=FORMATS[:3], help="format of the printed rows")
    _schedule_options(p)
    _workload(p)
    p.set_defaults(run=cmd_sweep)

    p = sub.add_parser("roofline", help="roofline chart (png, svg, html) or table")
    p.add_argument("pipelines", nargs="+", help="built-in pipelines or graph files")
    p.add_argument(
        "--system",
        action="append",
        help="A100, H100 or an accelerator (repeatable) [A100 and the native accelerators]",
    )
    p.add_argument("-o", "--output", type=Path, required=True, metavar="FILE")
    _workload(p)
    p.set_defaults(run=cmd_roofline)

    p = sub.add_parser("query", help="DuckDB SQL (or a named query) over a result store")
    p.add_argument("query", help="a named query (see queries/) or SQL")
    p.add_argument("--store", type=Path, required=True, metavar="DIR")
    _output(p)
    p.set_defaults(run=cmd_query)

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
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    try:
        args = parser().parse_args(argv)
        run: Callable[[argparse.Namespace], None] = args.run
        run(args)
    except KeyboardInterrupt:
        # Ctrl-C: temporary files are already removed on the way out.
        sys.stderr.write("error: interrupted\n")
        return 130
    except NerframeError as e:
        # One line, whatever a library put into the message.
        message = " ".join(line.strip() for line in str(e).splitlines() if line.strip())
        sys.stderr.write(f"error: {message}\n")
        return 1
    except BrokenPipeError:
        return 0
    except OSError as e:  # an unwritable output path, a full disk, ...
        sys.stderr.write(f"error: {e.filename or ''}: {e.strerror or e}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
