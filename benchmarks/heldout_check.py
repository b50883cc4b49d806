"""Validate the host model on the held-out pair (`heldout_models.py`), on this machine.

Run from the repository root (not collected by pytest; it takes about two minutes)::

    .venv/bin/python benchmarks/heldout_check.py [--out DIR] [--probe FILE] [--repeats 5] [--train]

It probes the machine (``nerframe probe --force``: micro-benchmarks only; never
these models) unless ``--probe`` names a stored result, captures the vanilla NeRF
and the hash-grid NeRF on the CPU, compares each traced op with the host model
(what ``nerframe trace compare --map DIR/heldout.yaml --probe DIR/probe.json`` prints) and prints,
per model, the per-op median |log10(measured / predicted)|, the whole forward's
measured / predicted (predicted: every kernel and module call of the forward) and
the 1-minute load before and after. Targets: per-op median
|log10| <= 0.15 and each whole forward within 1.5x. ``--train`` captures one training
iteration of each model instead (forward, loss, backward, Adam step; the per-op rows
then include the backward twins) and holds the whole iteration to the same 1.5x. The
traces, the class map, the probe and a CSV per model are written under ``--out``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import heldout_models  # noqa: E402

from nerframe.errors import NerframeWarning  # noqa: E402
from nerframe.probing import host_model, probe, summary  # noqa: E402
from nerframe.trace import capture, trace_graph, write_trace  # noqa: E402
from nerframe.trace.compare import compare, median_log_error  # noqa: E402
from nerframe.trace.host import predict_forward  # noqa: E402

TARGET_LOG = 0.15
TARGET_FORWARD = 1.5


def _seconds(value: float | None) -> str:
    """A time for the per-op lines; a dash where none was measured."""
    return "—".center(11) if value is None else f"{value:.3e} s"


def _ratio(value: float | None) -> str:
    """A ratio for the per-op lines; a dash where there is none."""
    return "—" if value is None else f"{value:.3g}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("heldout-out"))
    parser.add_argument("--probe", type=Path, help="a stored probe result (else probe now)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="torch threads [as set]")
    parser.add_argument("--train", action="store_true", help="a training iteration per model")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    probe_file = args.probe or args.out / "probe.json"
    if args.probe is None:
        record = probe(probe_file, force=True, threads=args.threads)
        print("\n".join(summary(record)))
        print(f"probe load: {record['load'][0]:.2f} -> {record['load_after'][0]:.2f}")
    model = host_model(probe_file)
    class_map = args.out / "heldout.yaml"
    class_map.write_text(heldout_models.MAP)
    met = True
    for name, build in (
        ("vanilla", heldout_models.build_vanilla),
        ("hashgrid", heldout_models.build_hashgrid),
    ):
        net, inputs = build()
        load_before = os.getloadavg()[0]
        trace = capture(
            net,
            *inputs,
            repeats=args.repeats,
            warmup=1,
            name=name,
            threads=args.threads,
            train=args.train,
        )
        load_after = os.getloadavg()[0]
        write_trace(trace, args.out / f"{name}.trace.json")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NerframeWarning)
            graph = trace_graph(trace, [class_map], name=name)
        table = compare(graph.measured, model)
        table.write_csv(args.out / f"{name}.csv")
        error = median_log_error(table)
        forward = predict_forward(model, trace)
        assert error is not None and forward is not None
        whole = "iteration" if trace.train is not None else "forward"
        measured = trace.train.iteration_s if trace.train is not None else trace.total_s
        ratio = measured / forward
        print(
            f"\n{name}: {len(trace.calls)} module calls, load {load_before:.2f} -> {load_after:.2f}"
        )
        backward = dict(zip(graph.ops["op_id"], graph.ops["backward"], strict=True))
        for row in table.iter_rows(named=True):
            # A backward twin without autograd nodes of its own (nothing upstream of it
            # needs a gradient) has no measured time.
            print(
                f"  {row['path']:<22} {row['op_type']:<15} "
                f"{'backward' if backward[row['op_id']] else 'forward ':<8} "
                f"measured {_seconds(row['measured_s'])}  predicted "
                f"{_seconds(row['predicted_s'])}  ratio {_ratio(row['ratio'])}"
            )
        print(f"  per-op median |log10(measured / predicted)|: {error:.3f} (x{10**error:.3g})")
        print(
            f"  whole {whole}: measured {measured:.4g} s, predicted {forward:.4g} s, "
            f"measured / predicted {ratio:.3g}"
        )
        met = met and error <= TARGET_LOG and 1 / TARGET_FORWARD <= ratio <= TARGET_FORWARD
    print(
        f"\ntargets (median |log10| <= {TARGET_LOG}, whole within {TARGET_FORWARD}x): "
        f"{'met' if met else 'NOT met'}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
