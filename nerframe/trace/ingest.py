"""A trace becomes an operator graph: classified calls are the rows, provenance the edges.

Each call is matched against the class maps (`nerframe.trace.classify`):

- **op**: the call becomes one row; its descendants are absorbed into it (their
  time is part of its measured time, their Linear layers build its MLP);
- **ignored**: a known module that is not modelled (an activation): no row;
- **container**: an unmapped module with mapped or unmapped children: no row;
- **unknown**: an unmapped leaf module: no row, listed with its share of the
  measured time (an error under ``strict``).

Calls without a row are transparent: a row that consumes their output depends on
whatever their output derives from. ``B`` and ``N`` come from a row's own rule
(samplers, renderers) or else from its input rows (the product of all but the
last dimension), matched to the ``B·N`` of the nearest upstream row that has one;
rows that match none keep ``B = rows, N = 1`` and are flagged approximate.

>>> from nerframe.trace.tracefile import Call, Trace
>>> lin = ["torch.nn.modules.linear.Linear", "torch.nn.modules.module.Module"]
>>> calls = [Call(0, None, "", lin, {"in_features": 3, "out_features": 4}, {"bias": [4]},
...               [[10, 3]], [[10, 4]], [], [[]], 1e-4)]
>>> g = trace_graph(Trace("one", calls))
>>> g.ops.select("op_type", "B", "N", "in_dim", "out_dim", "num_layers").row(0)
('MLP', 10, 1, 3, 4, 1)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import polars as pl

from nerframe.costing import costs
from nerframe.errors import InvalidInputError, NerframeError, NerframeWarning
from nerframe.graphs import Graph, graph
from nerframe.taxonomy import op_types
from nerframe.trace.classify import LINEAR, ClassMap, Entry, check_parameter, class_map, evaluate
from nerframe.trace.tracefile import (
    SUFFIX,
    Call,
    Port,
    Trace,
    Training,
    dtype_bits,
    read_trace,
)

KERNEL = pl.Struct(
    {
        "name": pl.String,
        "inputs": pl.List(pl.List(pl.Int64)),
        "input_dtypes": pl.List(pl.String),
        "outputs": pl.List(pl.List(pl.Int64)),
        "output_dtypes": pl.List(pl.String),
        "memory": pl.String,
        "max_row_lookups": pl.Int64,
    }
)
"""A recorded kernel (`nerframe.trace.tracefile.Kernel`) as a row of a ``kernels`` column."""


@dataclass(frozen=True, repr=False)  # Graph's short repr, not the tables'
class TracedGraph(Graph):
    """A `Graph` made from a trace, with what the trace measured.

    `calls` has one row per recorded call (``call``, ``path``, ``class``,
    ``status``: op, inside, ignored, container or unknown; ``op_id``,
    ``time_s``, ``share`` of the whole forward's time). `measured` has one row
    per op: its module ``path`` and ``class``, ``measured_s``, the reason it is
    ``approximate`` (null when exact) and its costs (``flops``, ``bytes_total``,
    ``intensity``), kept with it so that the comparison with a roofline holds
    for the traced rows even after `nerframe.expand`; ``kernels`` (the torch
    functions its call and their descendants ran, trace version 3) and ``modules``
    (how many module calls that is) are what the host model (`nerframe.trace.host`)
    predicts it from.

    >>> fc = Call(0, None, "fc", ["torch.nn.modules.linear.Linear"],
    ...           {"in_features": 4, "out_features": 4}, {}, [[500, 4]], [[500, 4]], [], [[]], 2e-4)
    >>> g = trace_graph(Trace("fc", [fc]))
    >>> g.ops.select("op_type", "B").row(0), g.measured.select("path", "measured_s").row(0)
    (('MLP', 500), ('fc', 0.0002))
    """

    calls: pl.DataFrame = field(default_factory=pl.DataFrame)
    measured: pl.DataFrame = field(default_factory=pl.DataFrame)

    @property
    def unknown(self) -> pl.DataFrame:
        """The unknown leaf modules: path, class, time and share of the forward's time.

        >>> odd = Call(1, None, "odd", ["my.Odd"], {}, {}, [[4, 4]], [[4, 4]], [(0, 0)], [[]], 1e-4)
        >>> fc = Call(0, None, "fc", ["torch.nn.modules.linear.Linear"],
        ...           {"in_features": 4, "out_features": 4}, {}, [[4, 4]], [[4, 4]], [], [[]], 1e-4)
        >>> trace_graph(Trace("m", [fc, odd])).unknown.select("path", "class").rows()
        [('odd', 'my.Odd')]
        """
        return self.calls.filter(pl.col("status") == "unknown").drop("status", "op_id")


def read_traced_graph(
    path: str | Path, maps: Sequence[str | Path] = (), strict: bool = False
) -> TracedGraph:
    """The graph of a trace file (see `trace_graph`), named after the file.

    >>> import tempfile, pathlib
    >>> from nerframe.trace.tracefile import write_trace
    >>> lin = ["torch.nn.modules.linear.Linear"]
    >>> call = Call(0, None, "", lin, {"in_features": 3, "out_features": 4}, {}, [[10, 3]],
    ...             [[10, 4]], [], [[]], 1e-4)
    >>> path = write_trace(Trace("m", [call]), pathlib.Path(tempfile.mkdtemp()) / "a.trace.json")
    >>> read_traced_graph(path).name
    'a'
    """
    try:
        name = Path(path).name[: -len(SUFFIX)]
        return trace_graph(read_trace(path), maps, strict=strict, name=name)
    except NerframeError as e:
        message = str(e)
        raise InvalidInputError(
            message if message.startswith(str(path)) else f"{path}: {e}", e.culprit or str(path)
        ) from None


def trace_graph(
    trace: Trace,
    maps: Sequence[str | Path] = (),
    *,
    strict: bool = False,
    name: str | None = None,
    frame_pixels: int = 800 * 800,
) -> TracedGraph:
    """The operator graph of `trace`, classified with the user `maps` over the packaged
    ones; `strict` makes an unknown leaf module an error naming it.

    >>> relu = Call(1, None, "act", ["torch.nn.modules.activation.ReLU"], {}, {}, [[64, 8]],
    ...             [[64, 8]], [(0, 0)], [[]], 1e-6)
    >>> fc = Call(0, None, "fc", ["torch.nn.modules.linear.Linear"],
    ...           {"in_features": 3, "out_features": 8}, {}, [[64, 3]], [[64, 8]], [], [[]], 1e-5)
    >>> g = trace_graph(Trace("net", [fc, relu]))
    >>> g.name, g.ops["op_type"].to_list(), g.calls["status"].to_list()
    ('net', ['MLP'], ['op', 'ignored'])
    """
    builder = _Builder(trace, class_map(maps))
    builder.classify()
    unknown = [c for c in trace.calls if builder.status[c.id] == "unknown"]
    if strict and unknown:
        shown = ", ".join(f"{c.path or '(model)'} ({c.name})" for c in unknown[:5])
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        raise InvalidInputError(
            f"trace {trace.model!r}: unknown leaf module(s) {shown}{more}; "
            "map their classes with --map FILE"
        )
    records = [builder.record(row) for row in range(len(builder.rows))]
    edges = builder.edges()
    builder.batch(records, edges)
    if trace.train is not None:
        # a training trace: each row's backward twin after every forward row, its data
        # edges reversed (a gradient flows from consumer to producer)
        n = len(records)
        records += [{**r, "backward": True} for r in records]
        edges |= {(n + b, n + a) for a, b in edges} | {(i, n + i) for i in range(n)}
        update = optimizer_update(trace.train)
        if update is not None:  # the step reads every gradient
            records.append(update)
            edges |= {(n + i, 2 * n) for i in range(n)}
    _warn_unmodelled(trace, builder, unknown)
    graph_name = name or trace.model or "trace"
    try:
        base = graph(
            graph_name,
            records,
            sorted(edges),
            frame_pixels=frame_pixels,
            kind="inference" if trace.train is None else "training",
        )
    except NerframeError as e:
        raise InvalidInputError(f"trace {trace.model!r}: {e}") from None
    return TracedGraph(
        base.name,
        base.ops,
        base.edges,
        base.frame_pixels,
        base.kind,
        calls=builder.call_table(),
        measured=builder.measured_table(base),
    )


def _warn_unmodelled(trace: Trace, builder: _Builder, unknown: list[Call]) -> None:
    """Warn, wherever a trace is read, of what its graph leaves out or guesses: unknown
    modules have no row (their time is missing from every figure) and rows whose B and
    N match no upstream row change the batches of a frame."""
    total = trace.total_s or sum(c.time_s for c in trace.calls if c.parent is None)
    label = f"trace {trace.model!r}" if trace.model else "trace"
    for c in unknown[:_SHOWN]:
        share = f", {c.time_s / total:.1%} of the measured time" if total else ""
        warnings.warn(
            f"{label}: unknown module {c.path or '(model)'} ({c.name}{share}): no row; "
            "map its class with --map FILE",
            NerframeWarning,
            stacklevel=3,
        )
    if len(unknown) > _SHOWN:
        rest = unknown[_SHOWN:]
        share = f", {sum(c.time_s for c in rest) / total:.1%} of the measured time" if total else ""
        warnings.warn(
            f"{label}: {len(rest)} more unknown modules{share}: no rows",
            NerframeWarning,
            stacklevel=3,
        )
    if builder.guessed:
        paths = ", ".join(builder.rows[r][0].path or "(model)" for r in sorted(builder.guessed))
        warnings.warn(
            f"{label}: B and N of {len(builder.guessed)} row(s) ({paths}) are guessed (their "
            "rows match no upstream sampler's B·N; taken from their input tensors' shapes "
            "[rays, samples, features], else as B = rows, N = 1): the batches of a frame, "
            "and so fps and energy, assume them; map the sampler's class to fix them",
            NerframeWarning,
            stacklevel=3,
        )


_SHOWN = 5
"""Unknown modules named one by one in warnings."""


class _Builder:
    def __init__(self, trace: Trace, classes: ClassMap) -> None:
        self.trace = trace
        self.classes = classes
        self.calls = trace.calls
        self.children: dict[int, list[int]] = {c.id: [] for c in self.calls}
        for c in self.calls:
            if c.parent is not None:
                self.children[c.parent].append(c.id)
        self.status: dict[int, str] = {}
        self.owner: dict[int, int] = {}  # call -> row
        self.rows: list[tuple[Call, Entry]] = []
        self.approximate: dict[int, list[str]] = {}
        self.guessed: set[int] = set()  # rows whose B and N match no upstream row

    def classify(self) -> None:
        for c in self.calls:
            if c.parent is not None and c.parent in self.owner:
                self.owner[c.id] = self.owner[c.parent]
                self.status[c.id] = "inside"
                continue
            entry = self.classes.match(c.classes)
            if entry is not None and not entry.ignored:
                self.owner[c.id] = len(self.rows)
                self.rows.append((c, entry))
                self.status[c.id] = "op"
            elif entry is not None:
                self.status[c.id] = "ignored"
            else:
                self.status[c.id] = "container" if self.children[c.id] else "unknown"

    def descendants(self, call: int) -> list[int]:
        found: list[int] = []
        stack = list(reversed(self.children[call]))
        while stack:
            current = stack.pop()
            found.append(current)
            stack.extend(reversed(self.children[current]))
        return found

    def record(self, row: int) -> dict[str, object]:
        c, entry = self.rows[row]
        where = f"{c.path or '(model)'} ({c.name}, call {c.id})"
        assert entry.op_type is not None
        record: dict[str, object] = {"op_type": entry.op_type}
        scope = {"attr": c.attributes, "param": c.params, "in": c.inputs, "out": c.outputs}
        for name, expression in entry.params.items():
            try:
                value = evaluate(expression, scope)
            except NerframeError as e:
                raise InvalidInputError(f"{where}: {name} from {entry.source}: {e}") from None
            record[name] = check_parameter(name, value, where)
        notes = [entry.approximate] if entry.approximate else []
        bits = _bitwidth(c)
        if bits is not None:
            record["bitwidth"] = bits
        elif c.inputs or c.outputs:
            notes.append("the trace records no dtypes (version 1): bitwidth taken as 16")
        if entry.rule == "linear_layers":
            record.update(self.linear_layers(c, where, notes))
        self.approximate[row] = notes
        return record

    def linear_layers(self, c: Call, where: str, notes: list[str]) -> dict[str, object]:
        """MLP parameters from the Linear calls `c` made (or `c` itself if it is one)."""
        linears = [
            self.calls[i]
            for i in [c.id, *self.descendants(c.id)]
            if LINEAR in self.calls[i].classes
        ]
        if not linears:
            raise InvalidInputError(f"{where}: rule linear_layers found no Linear call in it")
        layers: list[tuple[int, int]] = []
        for lin in linears:
            fan_in, fan_out = lin.attributes.get("in_features"), lin.attributes.get("out_features")
            if not (isinstance(fan_in, int) and isinstance(fan_out, int)):
                raise InvalidInputError(f"{where}: Linear call {lin.id} lacks in/out_features")
            _check_linear(lin, fan_in, fan_out, where)
            layers.append((fan_in, fan_out))
        rows = {math.prod(lin.inputs[0][:-1]) if lin.inputs else 0 for lin in linears}
        if len(rows) != 1 or 0 in rows:
            raise InvalidInputError(
                f"{where}: its Linear calls see different row counts {sorted(rows)}"
            )
        biases = {"bias" in lin.params for lin in linears}
        in_dim, width, out_dim = layers[0][0], layers[0][1], layers[-1][1]
        count = len(layers)
        skips = [
            i
            for i in range(1, count - 1)
            if layers[i][0] == width + in_dim and layers[i][0] != width
        ]
        params: dict[str, object] = {
            "in_dim": in_dim,
            "num_layers": count,
            "layer_width": width if count > 1 else out_dim,
            "out_dim": out_dim,
            "skip_connections": skips,
            "use_bias": biases == {True},
            "_rows": rows.pop(),
            "_shape": linears[0].inputs[0],
        }
        if layers != _mlp_layers(in_dim, count, width, out_dim, skips) or len(biases) > 1:
            notes.append(
                f"its Linear layers {layers} are not a catalogue MLP; modelled as "
                f"{count} layers of width {width}"
            )
        return params

    def resolve(self, port: Port, memo: dict[Port, frozenset[int]]) -> frozenset[int]:
        """The rows whose outputs a consumer of output `port` depends on."""
        call, index = port
        if call in self.owner:
            return frozenset({self.owner[call]})
        if port not in memo:
            memo[port] = frozenset()  # provenance never loops; this guards malformed files
            found: set[int] = set()
            for source in self.calls[call].output_sources[index]:
                found |= self.resolve(source, memo)
            memo[port] = frozenset(found)
        return memo[port]

    def edges(self) -> set[tuple[int, int]]:
        memo: dict[Port, frozenset[int]] = {}
        found: set[tuple[int, int]] = set()
        for c in self.calls:
            if c.id not in self.owner:
                continue
            dst = self.owner[c.id]
            for source in c.sources:
                found.update((src, dst) for src in self.resolve(source, memo) if src != dst)
        return found

    def batch(self, records: list[dict[str, object]], edges: set[tuple[int, int]]) -> None:
        """Fill B and N of rows that lack them from their rows and the upstream rows."""
        upstream: dict[int, list[int]] = {i: [] for i in range(len(records))}
        for src, dst in sorted(edges):
            upstream[dst].append(src)
        for row, record in enumerate(records):
            recorded = record.pop("_rows", None)
            c = self.rows[row][0]
            shape = record.pop("_shape", c.inputs[0] if c.inputs else [])
            if "B" in record and "N" in record:
                continue
            if isinstance(recorded, int):
                rows = recorded
            else:
                if not c.inputs or not c.inputs[0]:
                    raise InvalidInputError(
                        f"{c.path or '(model)'} ({c.name}, call {c.id}): "
                        "no input tensor to take B and N from"
                    )
                rows = math.prod(c.inputs[0][:-1])
            match = self.nearest(row, upstream, records, rows)
            if match is None and isinstance(shape, list) and len(shape) >= 3:
                # No sampler row to match (unknown or not traced): a [..., rays, samples,
                # features] tensor still carries both, as NeRF code batches them
                # (nerfstudio's RaySamples, nerfacc); assumption: the next-to-last
                # dimension is the samples per ray.
                b, n = math.prod(shape[:-2]), shape[-2]
                record["B"], record["N"] = b, n
                self.guessed.add(row)
                self.approximate[row].append(
                    f"no upstream sampler's B·N matches its {rows} rows; B={b}, N={n} taken "
                    f"from its input's shape {shape} (rays × samples × features)"
                )
            elif match is None:
                record["B"], record["N"] = rows, 1
                self.guessed.add(row)
                self.approximate[row].append(
                    f"its {rows} rows match no upstream sampler's B·N; taken as B={rows}, N=1"
                )
            else:
                record["B"], record["N"], source = match
                if source in self.guessed:
                    # B and N inherited from a guess are as approximate as the guess
                    self.guessed.add(row)
                    c_source = self.rows[source][0]
                    self.approximate[row].append(
                        f"B and N taken from {c_source.path or '(model)'} (call {c_source.id}), "
                        "whose B and N are guessed"
                    )

    def nearest(
        self, row: int, upstream: dict[int, list[int]], records: list[dict[str, object]], rows: int
    ) -> tuple[int, int, int] | None:
        """(B, N, row) of the nearest upstream row whose B·N is `rows`."""
        seen = {row}
        frontier = list(upstream[row])
        while frontier:
            following: list[int] = []
            for candidate in frontier:
                if candidate in seen:
                    continue
                seen.add(candidate)
                b, n = records[candidate].get("B"), records[candidate].get("N")
                if isinstance(b, int) and isinstance(n, int) and b * n == rows:
                    return b, n, candidate
                following.extend(upstream[candidate])
            frontier = following
        return None

    def call_table(self) -> pl.DataFrame:
        total = self.trace.total_s or sum(c.time_s for c in self.calls if c.parent is None)
        return pl.DataFrame(
            {
                "call": [c.id for c in self.calls],
                "path": [c.path for c in self.calls],
                "class": [c.name for c in self.calls],
                "status": [self.status[c.id] for c in self.calls],
                "op_id": [self.owner.get(c.id) for c in self.calls],
                "time_s": [c.time_s for c in self.calls],
                "share": [c.time_s / total if total else None for c in self.calls],
            },
            schema={
                "call": pl.Int32,
                "path": pl.String,
                "class": pl.String,
                "status": pl.String,
                "op_id": pl.Int32,
                "time_s": pl.Float64,
                "share": pl.Float64,
            },
        )

    def measured_table(self, g: Graph) -> pl.DataFrame:
        from nerframe.trace.host import inclusive

        work = inclusive(self.trace)
        table = costs(g.ops).select(
            "graph", "op_id", "op_type", "category", "backward", "flops", "bytes_total", "intensity"
        )
        # (path, class, (kernels, module calls), seconds, why approximate)
        rows = [
            (c.path, c.name, work[c.id], c.time_s, self.approximate[i])
            for i, (c, _) in enumerate(self.rows)
        ]
        train = self.trace.train
        if train is not None:  # the backward twins and the optimizer step (`trace_graph`)
            back = inclusive(self.trace, backward=True)
            rows += [
                (c.path, c.name, back[c.id], c.backward_s, self.approximate[i])
                for i, (c, _) in enumerate(self.rows)
            ]
            if g.ops.height > len(rows):  # `trace_graph` appended the `optimizer_update`
                notes = [] if _step_bits(train) else [_NO_STEP_DTYPE]
                step = (train.optimizer_kernels, 0)
                rows.append((OPTIMIZER_PATH, train.optimizer, step, train.optimizer_s, notes))
        return table.with_columns(
            path=pl.Series([path for path, *_ in rows], dtype=pl.String),
            **{"class": pl.Series([name for _, name, *_ in rows], dtype=pl.String)},
            measured_s=pl.Series([row[3] for row in rows], dtype=pl.Float64),
            approximate=pl.Series(
                ["; ".join(row[4]) or None for row in rows],
                dtype=pl.String,
            ),
            kernels=pl.Series(
                [[asdict(k) for k in row[2][0]] for row in rows],
                dtype=pl.List(KERNEL),
            ),
            modules=pl.Series([row[2][1] for row in rows], dtype=pl.Int32),
        )


ADAM = "torch.optim.Adam"
"""The optimizer whose step a training graph costs (``capture --train`` runs it)."""

OPTIMIZER_PATH = "(optimizer)"
"""The ``path`` of a training graph's optimizer-update row in its measured table."""

_NO_STEP_DTYPE = "the optimizer step records no floating-point dtype: bitwidth taken as 32"


def optimizer_update(train: Training) -> dict[str, object] | None:
    """The ops record of a training iteration's optimizer step: one ``AdamUpdate`` over
    every trained parameter (B parameters, N = 1) at the parameters' width, the widest
    floating-point dtype its kernels saw (32, torch's default, when they record none).
    None for an optimizer other than `ADAM` or a model without parameters: the cost
    model has only Adam's update, so another step stays in the trace's ``train`` block.

    >>> from nerframe.trace.tracefile import Kernel, Training
    >>> step = Kernel("_foreach_addcdiv_", [[64]], ["float32"], [[64]], ["float32"])
    >>> optimizer_update(Training(parameters=64, optimizer_kernels=[step]))
    {'op_type': 'AdamUpdate', 'B': 64, 'N': 1, 'bitwidth': 32}
    >>> optimizer_update(Training(optimizer="torch.optim.SGD", parameters=64)) is None
    True
    """
    if train.optimizer != ADAM or train.parameters < 1:
        return None
    bits = _step_bits(train) or 32
    return {"op_type": "AdamUpdate", "B": train.parameters, "N": 1, "bitwidth": bits}


def _step_bits(train: Training) -> int | None:
    """The widest floating-point dtype, in bits, that the optimizer step's kernels read
    or wrote (the parameters' and their moments'); None when they record none."""
    dtypes = [d for k in train.optimizer_kernels for d in (*k.input_dtypes, *k.output_dtypes)]
    return _widest(_floating(dtypes))


def _check_linear(lin: Call, fan_in: int, fan_out: int, where: str) -> None:
    """A Linear call's features must agree with the shapes it saw (a hand-edited trace
    may contradict itself; the shapes are what ran)."""
    for name, shapes, features, what in (
        ("inputs", lin.inputs, fan_in, "in_features"),
        ("outputs", lin.outputs, fan_out, "out_features"),
    ):
        if not shapes or not shapes[0]:
            raise InvalidInputError(f"{where}: Linear call {lin.id} lacks {name!r}")
        if shapes[0][-1] != features:
            raise InvalidInputError(
                f"{where}: Linear call {lin.id} has {what} {features}, but its first "
                f"{name[:-1]} tensor has shape {shapes[0]}"
            )


def _bitwidth(c: Call) -> int | None:
    """A row's bitwidth: the widest floating-point dtype its call saw (activations are
    what an op moves), else its widest dtype; None when the trace records none.
    (assumption: one width per row, as the cost model has.)"""
    dtypes = [*c.input_dtypes, *c.output_dtypes]
    return _widest(_floating(dtypes) or dtypes)


def _floating(dtypes: Sequence[str]) -> list[str]:
    """The floating-point dtypes among `dtypes`."""
    return [d for d in dtypes if d.startswith(("float", "bfloat"))]


def _widest(dtypes: Sequence[str]) -> int | None:
    """The most bits of any of `dtypes` (`dtype_bits`), None when none has a width."""
    return max((b for d in dtypes if (b := dtype_bits(d)) is not None), default=None)


def _mlp_layers(
    in_dim: int, count: int, width: int, out_dim: int, skips: list[int]
) -> list[tuple[int, int]]:
    """The catalogue's layer list of an MLP (spec/operators.md)."""
    if count == 1:
        return [(in_dim, out_dim)]
    middle = [(width + (in_dim if i in skips else 0), width) for i in range(1, count - 1)]
    return [(in_dim, width), *middle, (width, out_dim)]


def graph_document(g: TracedGraph, source: str = "") -> dict[str, object]:
    """The graph-file document of a traced graph (see `nerframe.read_graph`): its ops as
    records of the parameters they use, its edges, and notes (the trace it came from,
    measured times, approximate rows, unknown modules).

    >>> lin = ["torch.nn.modules.linear.Linear"]
    >>> call = Call(0, None, "fc", lin, {"in_features": 3, "out_features": 4}, {}, [[10, 3]],
    ...             [[10, 4]], [], [[]], 1e-4)
    >>> graph_document(trace_graph(Trace("m", [call])))["ops"][0]["in_dim"]
    3
    """
    ops = []
    for row in g.ops.iter_rows(named=True):
        record = {
            "op_type": row["op_type"],
            "backward": row["backward"],
            "bitwidth": row["bitwidth"],
        }
        record.update({k: row[k] for k in op_types()[row["op_type"]].parameters})
        ops.append(record)
    measured = g.measured.select("op_id", "path", "class", "measured_s", "approximate")
    return {
        "name": g.name,
        "kind": g.kind,
        "frame_pixels": g.frame_pixels,
        "ops": ops,
        "edges": [[src, dst, kind] for _, src, dst, kind in g.edges.iter_rows()],
        "notes": {
            "trace": source,
            "ops": measured.to_dicts(),
            "unknown": g.unknown.to_dicts(),
        },
    }
