"""Systolic arrays: folded GEMM cycles per dataflow, against hand derivations, the
scalar oracle (fold by fold, `kernels/reference_schedule.py`) and SCALE-Sim 3.0.0's
recorded cycle counts (``tests/data/scalesim_cycles.csv``, written by
``benchmarks/scalesim_reference.py`` in its own environment)."""

from __future__ import annotations

import csv
import importlib.util
import json
import statistics
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_scheduler import PROPERTY, assert_same, check_invariants, random_problem, run, run_ref

import nerframe
from nerframe.errors import NerframeError
from nerframe.kernels import reference_schedule as ref
from nerframe.kernels.faults import KernelInputError
from nerframe.kernels.systolic import IS, OS, WS, gemm_cycles, mlp_gemms, op_cycles

FIXTURE = Path(__file__).parent / "data" / "scalesim_cycles.csv"
SCRIPT = Path(__file__).parents[1] / "benchmarks" / "scalesim_reference.py"
CODES = {"os": OS, "ws": WS, "is": IS}


def accelerator_file(
    folder: Path, dataflow: object, array: object, *, count: int = 1, **module: object
) -> Path:
    """A one-array accelerator (1 GHz, 1 TB/s DRAM) that runs every op on its array."""
    path = folder / f"array_{dataflow}_{json.dumps(array).replace(' ', '')}_{count}.json"
    path.write_text(
        json.dumps(
            {
                "name": "array",
                "frequency_mhz": 1000,
                "dram_bandwidth_gbps": 1000,
                "dram_pj_per_byte": 0,
                "modules": [
                    {
                        "name": "pe_array",
                        "type": "HOST",
                        "count": count,
                        "latency_cycles": 0,
                        "area_um2": 1,
                        "power_uw": 1,
                        "array": array,
                        "dataflow": dataflow,
                        **module,
                    }
                ],
            }
        )
    )
    return path


def layers_graph(layers: list[tuple[int, int, int]]) -> nerframe.Graph:
    """One single-layer MLP op per (M, K, N), no edges: each op's cycles stand alone."""
    return nerframe.graph(
        "layers",
        [
            {
                "op_type": "MLP",
                "B": m,
                "N": 1,
                "in_dim": k,
                "num_layers": 1,
                "layer_width": n,
                "out_dim": n,
                "bitwidth": 8,
            }
            for m, k, n in layers
        ],
    )


# ------------------------------------------------------------------- hand derivations


@pytest.mark.parametrize(
    ("dataflow", "m", "k", "n", "rows", "cols", "cycles"),
    [
        # os: rows hold M, cols N, K streams; no preload. 3 x 2 folds of 7 + 7 + 5.
        ("os", 20, 5, 12, 8, 8, 6 * 19),
        # ws: rows hold K, cols N, M streams after an 8-cycle weight preload:
        # 1 x 2 folds of 8 + 7 + 7 + 20.
        ("ws", 20, 5, 12, 8, 8, 2 * 42),
        # is: rows hold K, cols M, N streams: 1 x 3 folds of 8 + 7 + 7 + 12.
        ("is", 20, 5, 12, 8, 8, 3 * 34),
        # A 4 x 16 array: ws folds K over 4 rows (2) and N over 16 cols (1).
        ("ws", 100, 8, 3, 4, 16, 2 * (4 + 3 + 15 + 100)),
        # One MAC still crosses the whole array's skew.
        ("os", 1, 1, 1, 32, 32, 31 + 31 + 1),
    ],
)
def test_gemm_cycles_match_hand_derivations(
    dataflow: str, m: int, k: int, n: int, rows: int, cols: int, cycles: int
) -> None:
    assert gemm_cycles(m, k, n, rows, cols, CODES[dataflow]) == cycles
    assert ref.gemm_cycles_by_folds(m, k, n, rows, cols, dataflow) == cycles


def test_k_arrays_split_the_rows() -> None:
    # 98,304 samples over 16 arrays: 6,144 each; ws 32x32, 64 -> 64: 2 x 2 folds.
    gemms = np.array([[98304, 64, 64]])
    assert op_cycles(gemms, 0, 1, 32, 32, WS, 16) == 4 * (32 + 31 + 31 + 6144)
    # M = 10 over 3 arrays: the largest share, 4 rows, sets the time.
    assert op_cycles(np.array([[10, 8, 8]]), 0, 1, 8, 8, OS, 3) == 1 * (7 + 7 + 8)


def test_mlp_gemms_follow_the_spec_layer_list() -> None:
    # spec/operators.md worked example: layers (32,64), (64,64), (64,4).
    assert mlp_gemms(4096 * 64, 32, 3, 64, 4, []) == [
        (262144, 32, 64),
        (262144, 64, 64),
        (262144, 64, 4),
    ]
    # A skip at hidden layer 1 re-reads the input there: fan-in 64 + 32.
    assert mlp_gemms(10, 32, 4, 64, 4, [1])[1] == (10, 96, 64)
    # Backward: dX = dY·Wᵀ and dW = Xᵀ·dY per layer, twice the forward MACs.
    backward = mlp_gemms(10, 32, 2, 64, 4, [], backward=True)
    assert backward == [(10, 64, 32), (32, 10, 64), (10, 4, 64), (64, 10, 4)]
    assert sum(a * b * c for a, b, c in backward) == 2 * 10 * (32 * 64 + 64 * 4)


# --------------------------------------------------------------- the scalar oracle


def _with_arrays(p: dict, seed: int) -> dict:
    """`p` with random GEMM lists on a third of its ops and arrays on half its modules."""
    rng = np.random.default_rng(seed)
    n = len(p["module"])
    shape = p["count"].shape
    sizes = rng.integers(0, 4, n) * (rng.uniform(size=n) < 0.33)
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(sizes, out=ptr[1:])
    dims = [1, 3, 4, 16, 33, 64, 100, 1000]
    gemms = rng.choice(dims, size=(int(ptr[-1]), 3)).astype(np.int64)
    rows = rng.choice([1, 2, 8, 32], size=shape)
    cols = rng.choice([1, 4, 8, 16], size=shape)
    dataflow = rng.integers(0, 4, shape) * (rng.uniform(size=shape) < 0.5)
    # A throughput below an array's 2·rows·cols peak stretches its cycles.
    throughput = np.where(dataflow > 0, 2.0 * rows * cols * rng.uniform(0.3, 1.0, shape), 1.0)
    return p | {
        "gemm_ptr": ptr,
        "gemms": gemms,
        "array_rows": rows,
        "array_cols": cols,
        "dataflow": dataflow,
        "throughput": np.where(dataflow > 0, throughput, p["throughput"]),
    }


@PROPERTY
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 40),
    n_modules=st.integers(1, 4),
    n_configs=st.integers(1, 4),
    split=st.booleans(),
)
def test_kernel_equals_fold_by_fold_reference_with_arrays(
    seed: int, n: int, n_modules: int, n_configs: int, split: bool
) -> None:
    p = _with_arrays(random_problem(seed, n, n_modules, n_configs, max_count=5), seed)
    kernel = run(p, split)
    assert_same(kernel, run_ref(p, split))
    check_invariants(p, kernel)


def test_array_fields_are_checked() -> None:
    p = _with_arrays(random_problem(1, 6, 2, 1, max_count=2), 1)
    with pytest.raises(KernelInputError, match="dataflow of module 0 of configuration 0"):
        run(p | {"dataflow": np.array([[4, 0]])}, True)
    with pytest.raises(KernelInputError, match="array_cols of module 1"):
        run(p | {"array_cols": np.array([[1, 0]])}, True)
    with pytest.raises(KernelInputError, match="gemm_ptr must rise"):
        run(p | {"gemm_ptr": np.arange(7)[::-1].copy()}, True)
    huge = p | {"gemms": np.full_like(p["gemms"], 2**20), "dataflow": np.array([[1, 1]])}
    if huge["gemms"].size:
        with pytest.raises(KernelInputError, match="MACs, beyond the exact range"):
            run(huge, True)


def test_array_durations_beyond_exact_range_name_the_op() -> None:
    p = random_problem(2, 3, 1, 1, max_count=1) | {
        "gemm_ptr": np.array([0, 0, 1, 1]),
        # 2**34 folds of a one-MAC GEMM row, each crossing 2**20 columns' skew
        "gemms": np.array([[2**34, 1, 1]]),
        "array_rows": np.array([[1]]),
        "array_cols": np.array([[2**20]]),
        "dataflow": np.array([[OS]]),
        "throughput": np.array([[2.0**21]]),
    }
    with pytest.raises(KernelInputError, match="op 1 on module 0") as e:
        run(p, True)
    assert e.value.op == 1


# ------------------------------------------------------------------------ SCALE-Sim


def _fixture() -> list[dict[str, str]]:
    lines = [line for line in FIXTURE.read_text().splitlines() if not line.startswith("#")]
    return list(csv.DictReader(lines))


def test_fixture_records_scalesim_and_its_configuration() -> None:
    header = [line for line in FIXTURE.read_text().splitlines() if line.startswith("#")]
    assert header[0].startswith("# SCALE-Sim 3.0.0 ")
    rows = _fixture()
    assert {r["dataflow"] for r in rows} == {"os", "ws", "is"}
    assert {int(r["rows"]) for r in rows} >= {16, 32, 64, 128}
    assert {(r["k"], r["n"]) for r in rows} >= {("64", "4"), ("256", "3")}
    assert all(r["stall_cycles"] == "0" for r in rows)  # compute cycles only
    # the fixture holds exactly the script's cases, in its order
    script = importlib.util.spec_from_file_location("scalesim_reference", SCRIPT)
    assert script is not None and script.loader is not None
    module = importlib.util.module_from_spec(script)
    script.loader.exec_module(module)
    recorded = [
        (r["dataflow"], *(int(r[f]) for f in ("rows", "cols", "m", "k", "n"))) for r in rows
    ]
    assert recorded == module.cases()


def test_compute_cycles_match_scalesim(tmp_path: Path) -> None:
    """Each case scheduled end to end (file, mapping, GEMM list, kernel) as a one-layer
    MLP on a one-array accelerator file; the issue's targets are median |error| <= 5 %
    and max <= 25 % over all three dataflows, narrow layers included."""
    rows = _fixture()
    groups: dict[tuple[str, int, int], list[dict[str, str]]] = {}
    for r in rows:
        groups.setdefault((r["dataflow"], int(r["rows"]), int(r["cols"])), []).append(r)
    errors = {}
    for (dataflow, r, c), cases in groups.items():
        layers = [(int(x["m"]), int(x["k"]), int(x["n"])) for x in cases]
        path = accelerator_file(tmp_path, dataflow, [r, c])
        ours = nerframe.schedule(layers_graph(layers), path).schedule["compute_cycles"]
        for case, cycles in zip(cases, ours.to_list(), strict=True):
            theirs = int(case["cycles"])
            errors[dataflow, r, c, *layers[cases.index(case)]] = (cycles - theirs) / theirs
    size = [abs(e) for e in errors.values()]
    assert len(size) == len(rows)
    assert statistics.median(size) <= 0.05
    assert max(size) <= 0.25
    # The derivation counts cycles where SCALE-Sim's report gives the last cycle's
    # index: one more, in every case.
    assert all(
        int(case["cycles"]) + 1
        == gemm_cycles(
            int(case["m"]), int(case["k"]), int(case["n"]), int(case["rows"]),
            int(case["cols"]), CODES[case["dataflow"]],
        )
        for case in rows
    )  # fmt: skip


# ------------------------------------------------------------ accelerator files, API


def test_array_module_times_mlp_layer_by_layer(tmp_path: Path) -> None:
    # instant3d's forward MLP (32 -> 64 -> 64 -> 4 over 4096 x 24 samples) on sixteen
    # 32x32 ws arrays: 6,144 rows each; folds 1x2, 2x2, 2x1 of 32+31+31+6144.
    path = accelerator_file(tmp_path, "ws", [32, 32], count=16)
    s = nerframe.schedule("instant3d", path).schedule
    mlp = s.filter((pl.col("op_type") == "MLP") & ~pl.col("backward")).row(0, named=True)
    assert mlp["compute_cycles"] == (2 + 4 + 2) * (32 + 31 + 31 + 6144)
    flops = 2 * 4096 * 24 * (32 * 64 + 64 * 64 + 64 * 4)
    assert mlp["array_utilization"] == pytest.approx(flops / (2048 * 16 * mlp["compute_cycles"]))
    # ops that are not MLPs keep the throughput model and have no utilisation
    other = s.filter(pl.col("op_type") != "MLP")
    assert other["array_utilization"].null_count() == other.height
    assert (other["compute_cycles"] == np.ceil(other["flops"] / (2048 * 16))).all()


def test_throughput_is_derived_and_checked(tmp_path: Path) -> None:
    accel = nerframe.accelerator(accelerator_file(tmp_path, "os", [16, 8]))
    module = accel.modules[0]
    assert (module.array, module.dataflow, module.throughput_ops_per_cycle) == ((16, 8), "os", 256)
    same = accelerator_file(tmp_path, "is", [16, 8], throughput_ops_per_cycle=256)
    assert nerframe.accelerator(same).peak_tflops == pytest.approx(0.256)


@pytest.mark.parametrize(
    ("module", "message"),
    [
        ({"throughput_ops_per_cycle": 100}, "must be 2 \\* rows \\* cols = 512 FLOP/cycle"),
        ({"array": [16]}, "field 'modules\\[0\\].array': expected array of length 2, got \\[16\\]"),
        ({"array": [16, 0]}, "field 'modules\\[0\\].array\\[1\\]': expected int >= 1, got 0"),
        (
            {"dataflow": "rs"},
            'field \'modules\\[0\\].dataflow\': expected one of "os", "ws", "is", got "rs"',
        ),
        ({"unit": "sample"}, "must be 'flop' on a systolic array"),
        ({"array": None}, "field 'modules\\[0\\].array': expected array, got null"),
    ],
)
def test_bad_array_fields_name_the_field(tmp_path: Path, module: dict, message: str) -> None:
    fields = {"array": [16, 16], "dataflow": "ws", **module}
    path = accelerator_file(tmp_path, fields.pop("dataflow"), fields.pop("array"), **fields)
    with pytest.raises(NerframeError, match=message):
        nerframe.accelerator(path)


def test_array_and_dataflow_come_together(tmp_path: Path) -> None:
    path = accelerator_file(tmp_path, "ws", [4, 4])
    data = json.loads(path.read_text())
    del data["modules"][0]["dataflow"]
    path.write_text(json.dumps(data))
    with pytest.raises(NerframeError, match=r"'modules\[0\]\.array' needs 'dataflow' too"):
        nerframe.accelerator(path)


def test_cli_reports_a_bad_dataflow_in_one_line(tmp_path: Path, capsys) -> None:
    from nerframe.cli import main

    path = accelerator_file(tmp_path, "xs", [4, 4])
    assert main(["schedule", "neurex", "--hardware", str(path)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "dataflow" in err[0]


def test_sweep_over_array_count_matches_single_schedules(tmp_path: Path) -> None:
    path = accelerator_file(tmp_path, "is", [32, 32])
    accel = nerframe.accelerator(path)
    counts = [1, 3, 16]
    rows = nerframe.sweep("instant3d", accel, {"pe_array.count": counts})
    for count, frame in zip(counts, rows["frame_cycles"].to_list(), strict=True):
        one = accelerator_file(tmp_path, "is", [32, 32], count=count)
        assert frame == nerframe.schedule("instant3d", one).summary["frame_cycles"].item()


def test_dataflow_codes_follow_the_accelerator_models_dataflows() -> None:
    # The kernel declares its codes (it imports nothing from the API layer);
    # nerframe.scheduling passes DATAFLOWS.index(name) + 1.
    from nerframe.accelerator_model import DATAFLOWS

    assert [DATAFLOWS.index(name) + 1 for name in ("os", "ws", "is")] == [OS, WS, IS]
