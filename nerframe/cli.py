"""The ``nerframe`` command line.

Every user error is printed as one ``error: …`` line on stderr with exit
status 1 (2 for a malformed command line); output files are written atomically,
so an error never leaves a partial file.

>>> main(["pipelines", "--format", "csv"])  # doctest: +ELLIPSIS
pipeline,kind,ops,rays,samples,frame_pixels,total_flops,description
icarus,inference,4,4096,192,640000,825444532224.0,...
0
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from nerframe.errors import NerframeError
from nerframe.output import FORMATS, emit

COST_VIEW = ["op_id", "op_type", "category", "backward", "bitwidth", "B", "N", "G"]
COST_TOTALS = ["flops", "bytes_in", "bytes_w", "bytes_out", "bytes_total"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        sys.stderr.write(f"error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(2)


def _workload(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rays", type=int, metavar="B", help="rays (pixels) per batch [4096]")
    p.add_argument("--samples", type=int, metavar="N", help="samples per ray [64; icarus 192]")
    p.add_argument("--gaussians", type=int, metavar="G", help="Gaussians [rays*samples]")
    p.add_argument("--fine", action="store_true", help="expand composites into their stages")


def _output(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMATS[:3], help="output format [table, or from -o]")
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write to FILE")


def _graph(args: argparse.Namespace, name: str):
    from nerframe.graph import expand, read_graph
    from nerframe.pipelines import PIPELINES, pipeline

    if name in PIPELINES or not Path(name).suffix:
        g = pipeline(name, rays=args.rays, samples=args.samples, gaussians=args.gaussians)
    else:
        g = read_graph(name)
    return expand(g) if args.fine else g


def cmd_pipelines(args: argparse.Namespace) -> None:
    from nerframe.pipelines import pipelines

    emit(pipelines(), args.format, args.output)


def cmd_costs(args: argparse.Namespace) -> None:
    from nerframe.costs import costs

    table = costs(_graph(args, args.pipeline).ops)
    if (args.format or "table") == "table" and args.output is None:
        table = table.select(*COST_VIEW, "flops", "bytes_total", "intensity")
    emit(table, args.format, args.output, totals=COST_TOTALS)


def parser() -> argparse.ArgumentParser:
    """The argument parser of the ``nerframe`` command."""
    top = _Parser(prog="nerframe", description=__doc__.split("\n")[0])
    sub = top.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("pipelines", help="list the built-in pipelines")
    _output(p)
    p.set_defaults(run=cmd_pipelines)

    p = sub.add_parser("costs", help="per-operator costs of a pipeline, with totals")
    p.add_argument("pipeline", help="a built-in pipeline or a graph file (.json)")
    _workload(p)
    _output(p)
    p.set_defaults(run=cmd_costs)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = parser().parse_args(argv)
    run: Callable[[argparse.Namespace], None] = args.run
    try:
        run(args)
    except NerframeError as e:
        sys.stderr.write(f"error: {e}\n")
        return 1
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
