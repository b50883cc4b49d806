"""SCALE-Sim 3.0.0 cycle counts of single GEMM layers: the fixture nerframe's
systolic-array model is checked against (``tests/test_systolic.py``).

SCALE-Sim (Samajdar et al., ISPASS 2020; PyPI ``scalesim``) needs numpy < 2 and
pandas < 2.3, so it runs in its own virtual environment, never nerframe's, and
this script imports nothing of nerframe::

    python3 -m venv /work/scalesim-venv
    /work/scalesim-venv/bin/pip install scalesim==3.0.0 "numpy<2" "pandas<2.3"
    /work/scalesim-venv/bin/python benchmarks/scalesim_reference.py

Each case is one GEMM layer (M rows x K inner x N outputs: an MLP layer of M
samples with fan-in K and fan-out N) on one array and dataflow. SCALE-Sim runs
in GEMM mode with ``InterfaceBandwidth = CALC`` (it sizes the DRAM interface so
that the array never stalls: the cycles are compute cycles) and SRAMs far larger
than any operand; its ``Total Cycles`` (prefetch excluded) and stall cycles go to
the CSV, whose comment lines record the version and the configuration. The run
takes about two CPU minutes.

With ``--memory`` it runs the memory-mode cases instead (`memory_cases`: layers
x arrays x dataflows x SRAM sizes, some too small for the input or weight
matrix) and writes SCALE-Sim's SRAM reads and writes per operand and its DRAM
traffic (``DETAILED_ACCESS_REPORT``) to ``tests/data/scalesim_memory.csv``,
which ``tests/test_sram.py`` compares with nerframe's traffic model (about a
minute of CPU).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import itertools
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "data" / "scalesim_cycles.csv"
MEMORY_FIXTURE = FIXTURE.with_name("scalesim_memory.csv")
VERSION = "3.0.0"
# The pipelines' own MLP layers (fan-in, fan-out): Instant-NGP-style hash-grid
# MLPs 32->64, 64->64, 64->64 (neurex, cicero, srender), 64->4 (instant3d's
# output), ICARUS's 256->256; and narrow outputs 64->4, 256->3 (an RGB head).
LAYERS = ((32, 64), (64, 64), (256, 256), (64, 4), (256, 3))
# 256 samples (streaming dominates on arrays up to 64 wide; the cycles are
# linear in M beyond) and 100 (fill and drain weigh more). SCALE-Sim simulates
# cycle by cycle, so the pipelines' real M (4096 rays x 24 samples) would take
# hours; the wide 256 -> 256 layer runs on the 64- and 128-wide arrays only.
SAMPLES = (256, 100)
SQUARE = (16, 32, 64, 128)
WIDE_FROM = 64
# Non-square arrays catch a transposed mapping, which square ones cannot.
OBLONG = ((8, 32), (32, 8))
OBLONG_LAYERS = ((32, 64), (64, 4), (256, 3))
DATAFLOWS = ("os", "ws", "is")
# kB per SRAM: beyond every operand of the cases (64 Ki words at most), so capacity
# never matters; far larger ones make SCALE-Sim set up its buffers for seconds.
SRAM_KB = 1024

CONFIG = """[general]
run_name = case

[architecture_presets]
ArrayHeight = {rows}
ArrayWidth = {cols}
ifmapsramszkB = {ifmap_kb}
filtersramszkB = {filter_kb}
ofmapsramszkB = {ofmap_kb}
IfmapOffset = 0
FilterOffset = 100000000
OfmapOffset = 200000000
Bandwidth = {bandwidth}
Dataflow = {dataflow}
ReadRequestBuffer = 32
WriteRequestBuffer = 32

[layout]
IfmapCustomLayout = False
IfmapSRAMBankBandwidth = 10
IfmapSRAMBankNum = 10
IfmapSRAMBankPort = 2
FilterCustomLayout = False
FilterSRAMBankBandwidth = 10
FilterSRAMBankNum = 10
FilterSRAMBankPort = 2

[sparsity]
SparsitySupport = false
SparseRep = ellpack_block
OptimizedMapping = false
BlockSize = 8
RandomNumberGeneratorSeed = 40

[run_presets]
InterfaceBandwidth = {mode}
UseRamulatorTrace = False
"""
# The layout file SCALE-Sim requires even without custom layouts (unused then).
LAYOUT = "Layer name," + ",".join("f" * 20) + ",\nlayer,1,1,1,1,1,1,0,1,2,0,1,2,0,1,2,3,0,1,2,3,\n"
COLUMNS = ("dataflow", "rows", "cols", "m", "k", "n", "cycles", "stall_cycles")

# Memory mode (``--memory``): SRAM sizes (ifmap, filter, ofmap kB) that hold every
# operand, that hold no input matrix, and that hold no weight slice (capacities
# kept clear of the operand sizes: SCALE-Sim re-reads an operand exactly as large
# as its active half). SCALE-Sim's words are 1 byte and a double-buffered SRAM
# keeps half of its capacity active.
MEMORY_SRAM_KB = ((64, 64, 64), (4, 64, 64), (64, 1, 64))
MEMORY_LAYERS = ((64, 64), (32, 64))
MEMORY_ARRAYS = ((16, 16), (8, 32))
MEMORY_M = 256
ACCESSES = (
    "SRAM IFMAP Reads",
    "SRAM Filter Reads",
    "SRAM OFMAP Writes",
    "DRAM IFMAP Reads",
    "DRAM Filter Reads",
    "DRAM OFMAP Writes",
)
MEMORY_COLUMNS = (
    "dataflow",
    "rows",
    "cols",
    "m",
    "k",
    "n",
    "ifmap_kb",
    "filter_kb",
    "ofmap_kb",
    "sram_ifmap_reads",
    "sram_filter_reads",
    "sram_ofmap_writes",
    "dram_ifmap_reads",
    "dram_filter_reads",
    "dram_ofmap_writes",
)


def cases() -> list[tuple[str, int, int, int, int, int]]:
    """(dataflow, rows, cols, M, K, N) of every case, in the fixture's order."""
    out = [
        (df, side, side, m, k, n)
        for df, side, m, (k, n) in itertools.product(DATAFLOWS, SQUARE, SAMPLES, LAYERS)
        if min(k, n) < 256 or side >= WIDE_FROM
    ]
    out += [
        (df, r, c, SAMPLES[-1], k, n)
        for df, (r, c), (k, n) in itertools.product(DATAFLOWS, OBLONG, OBLONG_LAYERS)
    ]
    return out


def memory_cases() -> list[tuple[str, int, int, int, int, int, tuple[int, int, int]]]:
    """(dataflow, rows, cols, M, K, N, SRAM kB) of every memory-mode case, in order."""
    return [
        (df, r, c, MEMORY_M, k, n, kb)
        for df, (r, c), (k, n), kb in itertools.product(
            DATAFLOWS, MEMORY_ARRAYS, MEMORY_LAYERS, MEMORY_SRAM_KB
        )
    ]


def simulate(
    folder: Path,
    dataflow: str,
    rows: int,
    cols: int,
    m: int,
    k: int,
    n: int,
    *,
    sram_kb: tuple[int, int, int] = (SRAM_KB, SRAM_KB, SRAM_KB),
    report: str = "COMPUTE_REPORT",
) -> dict[str, str]:
    """SCALE-Sim's `report` of one GEMM (its first data row, by column name), with
    ifmap, filter and ofmap SRAMs of `sram_kb` kB."""
    from scalesim.scale_sim import scalesim

    (folder / "scale.cfg").write_text(
        CONFIG.format(
            rows=rows,
            cols=cols,
            dataflow=dataflow,
            ifmap_kb=sram_kb[0],
            filter_kb=sram_kb[1],
            ofmap_kb=sram_kb[2],
            bandwidth=10,
            mode="CALC",
        )
    )
    # GEMM topology: name, M, N, K (SCALE-Sim's order), each row ending in a comma.
    (folder / "topology.csv").write_text(f"Layer, M, N, K,\nlayer, {m}, {n}, {k},\n")
    (folder / "layout.csv").write_text(LAYOUT)
    with contextlib.redirect_stdout(io.StringIO()):
        sim = scalesim(
            save_disk_space=True,
            verbose=False,
            config=str(folder / "scale.cfg"),
            topology=str(folder / "topology.csv"),
            layout=str(folder / "layout.csv"),
            input_type_gemm=True,
        )
        sim.run_scale(top_path=str(folder / "out"))
    lines = (folder / "out" / "case" / f"{report}.csv").read_text().splitlines()
    names = [h.strip() for h in lines[0].split(",")]
    values = [v.strip() for v in lines[1].split(",")]
    return dict(zip(names, values, strict=False))


def write_csv(path: Path, header: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
    """Write `rows` under the comment lines `header`, whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    with partial.open("w", newline="") as f:
        f.write(header)
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
    partial.replace(path)


def memory_main(out: Path, found: str) -> None:
    """Run the memory-mode cases and write their SRAM and DRAM access counts."""
    rows_out = []
    todo = memory_cases()
    with tempfile.TemporaryDirectory() as tmp:
        for i, (df, r, c, m, k, n, kb) in enumerate(todo):
            folder = Path(tmp) / str(i)
            folder.mkdir()
            report = simulate(
                folder, df, r, c, m, k, n, sram_kb=kb, report="DETAILED_ACCESS_REPORT"
            )
            rows_out.append((df, r, c, m, k, n, *kb, *(int(report[a]) for a in ACCESSES)))
            print(f"{i + 1}/{len(todo)}", *rows_out[-1], file=sys.stderr, flush=True)
    write_csv(
        out,
        f"# SCALE-Sim {found} (PyPI scalesim), GEMM mode, benchmarks/scalesim_reference.py"
        " --memory\n"
        "# InterfaceBandwidth CALC, word size 1 byte, double-buffered SRAMs (half active),"
        " no sparsity, default layouts\n"
        "# counts in words: DETAILED_ACCESS_REPORT of one M x K x N GEMM; ifmap = inputs"
        " (M x K), filter = weights (K x N), ofmap = outputs (M x N)\n",
        MEMORY_COLUMNS,
        rows_out,
    )


def main() -> None:
    """Run every case and write the fixture."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="CSV to write (default: the fixture)")
    parser.add_argument(
        "--memory", action="store_true", help="memory mode: SRAM and DRAM access counts"
    )
    args = parser.parse_args()
    found = version("scalesim")
    if found != VERSION:
        raise SystemExit(f"error: scalesim {VERSION} expected, found {found}")
    if args.memory:
        memory_main(args.out or MEMORY_FIXTURE, found)
        return
    out = args.out or FIXTURE
    rows_out = []
    todo = cases()
    with tempfile.TemporaryDirectory() as tmp:
        for i, (df, r, c, m, k, n) in enumerate(todo):
            folder = Path(tmp) / str(i)
            folder.mkdir()
            report = simulate(folder, df, r, c, m, k, n)
            rows_out.append(
                (df, r, c, m, k, n, int(report["Total Cycles"]), int(report["Stall Cycles"]))
            )
            print(f"{i + 1}/{len(todo)}", *rows_out[-1], file=sys.stderr, flush=True)
    write_csv(
        out,
        f"# SCALE-Sim {found} (PyPI scalesim), GEMM mode, benchmarks/scalesim_reference.py\n"
        f"# InterfaceBandwidth CALC (no stalls), ifmap/filter/ofmap SRAM {SRAM_KB} kB each,"
        " no sparsity, default layouts\n"
        "# cycles: COMPUTE_REPORT 'Total Cycles' (prefetch excluded) of one M x K x N GEMM\n",
        COLUMNS,
        rows_out,
    )


if __name__ == "__main__":
    main()
