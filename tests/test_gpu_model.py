"""The GPU kernel model (`nerframe.gpu`) against the H200 reference measurements.

Oracles: ``../shared/data/gpu/h200/`` (measured on an H200; the tests skip with an
``optional:`` reason without it). ``micro.json`` is the calibration set: each class's
figure is checked against the micro-benchmark row it was derived from. The four
traces and ``whole_forward.json`` are the validation set: never fitted on.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import polars as pl
import pytest

from nerframe import gpu
from nerframe.cli import main
from nerframe.errors import InvalidInputError
from nerframe.trace.compare import compare, median_log_error
from nerframe.trace.ingest import read_traced_graph
from nerframe.trace.tracefile import Kernel, read_trace

H200 = Path(__file__).resolve().parents[2] / "shared" / "data" / "gpu" / "h200"
if not H200.is_dir():  # a worktree: ../shared is beside the checkout's parent
    H200 = Path("/work/shared/data/gpu/h200")
TRACES = ("vanilla.4096", "vanilla.262144", "hashgrid.4096", "hashgrid.262144")


@pytest.fixture(scope="module")
def micro() -> dict:
    path = H200 / "micro.json"
    if not path.is_file():
        pytest.skip(
            "optional: the H200 reference measurements (../shared/data/gpu/h200) are absent"
        )
    return json.loads(path.read_text())


def _row(micro: dict, section: str, **match: object) -> dict:
    (row,) = [r for r in micro[section] if all(r[k] == v for k, v in match.items())]
    return row


def _alone(model: gpu.GpuModel, kernel: Kernel) -> float:
    """A kernel timed alone, as the micro-benchmark timed it."""
    return model.predict([kernel]).total_s


def _f32(shape: list[int]) -> tuple[list[list[int]], list[str]]:
    return [shape], ["float32"]


def test_stored_figures_are_the_fit_of_the_micro_benchmarks(micro: dict) -> None:
    stored = json.loads((Path(gpu.__file__).with_name("systems") / "h200.json").read_text())
    fitted = gpu.fit(micro)
    assert {k: v for k, v in stored["kernels"].items() if k != "source"} == fitted
    assert "../shared/data/gpu/h200" in stored["kernels"]["source"]


def test_launch_class_a_tiny_kernel_costs_the_measured_launch(micro: dict) -> None:
    m = gpu.gpu_model("h200")
    tiny = Kernel("add", [[1], [1]], ["float32"] * 2, [[1]], ["float32"])
    assert _alone(m, tiny) == pytest.approx(micro["launch"]["single_add_1elem_event_s"])
    # back to back: every further kernel adds the back-to-back time
    many = m.predict([tiny] * 101).total_s - m.predict([tiny]).total_s
    assert many / 100 == pytest.approx(micro["launch"]["back_to_back_add_1elem_s"])


def test_view_class_is_free() -> None:
    m = gpu.gpu_model("h200")
    view = Kernel("reshape", [[64, 3]], ["float32"], [[192]], ["float32"], memory="view")
    assert m.work_seconds(view) == (0.0, "view") and m.predict([view]).total_s == 0.0


@pytest.mark.parametrize("op", ["add", "clone", "sin"])
def test_elementwise_class_matches_its_micro_rows(micro: dict, op: str) -> None:
    m = gpu.gpu_model("h200")
    for n in (2**22, 2**24, 2**26, 2**28):
        row = _row(micro, "elementwise", op=op, elements=n)
        inputs = [[n], [n]] if op == "add" else [[n]]
        kernel = Kernel(op, inputs, ["float32"] * len(inputs), [[n]], ["float32"])
        assert m.work_seconds(kernel)[1] == "elementwise"
        assert abs(math.log10(row["seconds"] / _alone(m, kernel))) < 0.1, n


def test_reduce_class_matches_its_micro_row(micro: dict) -> None:
    m = gpu.gpu_model("h200")
    n = 2**28
    row = _row(micro, "elementwise", op="sum_last64", elements=n)
    kernel = Kernel("sum", [[n // 64, 64]], ["float32"], [[n // 64]], ["float32"])
    assert m.work_seconds(kernel)[1] == "reduce"
    assert _alone(m, kernel) == pytest.approx(row["seconds"], rel=0.02)


def test_scan_class_matches_its_micro_row(micro: dict) -> None:
    m = gpu.gpu_model("h200")
    n = 2**28
    row = _row(micro, "elementwise", op="cumprod_last64", elements=n)
    kernel = Kernel("cumprod", [[n // 64, 64]], ["float32"], [[n // 64, 64]], ["float32"])
    assert m.work_seconds(kernel)[1] == "scan"
    assert _alone(m, kernel) == pytest.approx(row["seconds"], rel=0.02)
    # along an outer dimension (last dimension 1): at the element-wise bandwidth
    outer = Kernel("cumprod", [[n // 64, 64, 1]], ["float32"], [[n // 64, 64, 1]], ["float32"])
    assert m.work_seconds(outer)[0] == pytest.approx(2 * 4 * n / m.bandwidth)


@pytest.mark.parametrize("table_rows", [2**14, 2**19, 2**22, 2**24])
def test_gather_class_matches_its_micro_rows(micro: dict, table_rows: int) -> None:
    m = gpu.gpu_model("h200")
    lookups = 2**24
    row = _row(micro, "gather", table_rows=table_rows, lookups=lookups)
    kernel = Kernel(
        "__getitem__",
        [[table_rows, 2], [lookups]],
        ["float32", "int64"],
        [[lookups, 2]],
        ["float32"],
    )
    assert m.work_seconds(kernel)[1] == "gather"
    assert _alone(m, kernel) == pytest.approx(row["seconds"], rel=0.02)


@pytest.mark.parametrize(
    ("dtype", "k", "n", "tolerance"),
    [
        ("float32", 256, 256, 0.1),
        ("float32", 64, 64, 0.1),
        ("bfloat16", 256, 256, 0.1),
        ("bfloat16", 319, 256, 0.1),
        ("float32", 256, 1, 0.15),
    ],
)
def test_gemm_class_matches_its_micro_rows(
    micro: dict, dtype: str, k: int, n: int, tolerance: float
) -> None:
    m = gpu.gpu_model("h200")
    row = _row(micro, "gemm", dtype=dtype, M=4194304, K=k, N=n)
    kernel = Kernel("linear", [[4194304, k], [n, k], [n]], [dtype] * 3, [[4194304, n]], [dtype])
    assert m.work_seconds(kernel)[1] == "gemm"
    assert abs(math.log10(row["seconds"] / _alone(m, kernel))) < tolerance


def test_gemm_fits_reach_their_micro_rows(micro: dict) -> None:
    """Every GEMM row of the calibration set, not just a few: the fit's median error."""
    m = gpu.gpu_model("h200")
    errors = []
    for row in micro["gemm"]:
        k, n, rows, dtype = row["K"], row["N"], row["M"], row["dtype"]
        kernel = Kernel("linear", [[rows, k], [n, k], [n]], [dtype] * 3, [[rows, n]], [dtype])
        errors.append(abs(math.log10(row["seconds"] / _alone(m, kernel))))
    assert sorted(errors)[len(errors) // 2] < 0.1


def test_float32_never_runs_at_the_tensor_peak_unless_tf32_is_recorded() -> None:
    off, on = gpu.gpu_model("h200"), gpu.gpu_model("h200", tf32=True)
    shape = (4194304, 256, 256)
    f32 = off.gemm_fit("float32", 256, 256).rate(*shape)
    assert f32 < 67e12  # the data sheet's FP32 peak
    tf32 = on.gemm_fit("float32", 256, 256).rate(*shape)
    bf16 = on.gemm_fit("bfloat16", 256, 256).rate(*shape)
    assert tf32 == pytest.approx(bf16 / 2) and tf32 > f32


def test_sort_class_is_the_cuda_probe_s_measured_slope() -> None:
    # micro.json measures no sort; nerframe probe --device cuda on the same H200 timed
    # torch.sort of 262,144 and 4,194,304 float32 keys in 106.96 and 295.60 us: its rate
    # beyond its own fixed cost (several launches) is the slope between them
    stored = json.loads((Path(gpu.__file__).with_name("systems") / "h200.json").read_text())
    below, top = stored["probe"]["sort"]
    assert (below["keys"], top["keys"]) == (262144, 4194304)
    slope = (4194304 - 262144) / (top["seconds"] - below["seconds"])
    assert slope == pytest.approx(2.084e10, rel=1e-3)
    m = gpu.gpu_model("h200")
    assert m.sort_rate == pytest.approx(slope, rel=1e-3)
    keys = 2**22
    kernel = Kernel("sort", [[keys]], ["float32"], [[keys], [keys]], ["float32", "int64"])
    seconds, kind = m.work_seconds(kernel)
    assert kind == "sort" and seconds == pytest.approx(keys / slope, rel=1e-3)
    # the probe's fit of these rows is the stored figure
    probe = {"launch": stored["probe"]["launch"], "sort": stored["probe"]["sort"]}
    probe["elementwise"] = [{"op": "add", "elements": 1, "bytes": 1.0, "seconds": 1.0}]
    assert gpu.fit(probe)["sort_keys_per_s"] == stored["probe"]["figures"]["sort_keys_per_s"]


def test_other_gpus_are_scaled_by_data_sheet_ratios() -> None:
    h200, a100 = gpu.gpu_model("h200"), gpu.gpu_model("a100")
    # A100 SXM: 108 SMs x 128 FP32 FLOP/cycle x 1410 MHz = 19.5 TFLOP/s against 67
    fp32 = 108 * 128 * 1410e6
    assert a100.gemm["float32"].peak == pytest.approx(h200.gemm["float32"].peak * fp32 / 67e12)
    assert a100.gemm["float32"].m0 == pytest.approx(h200.gemm["float32"].m0 * 108 / 132)
    assert a100.bandwidth == pytest.approx(h200.bandwidth * 1935 / 4800)
    # a 40 MB L2 against 50 MB: the gather knee moves to smaller tables
    assert a100.gather[0][0] == pytest.approx(h200.gather[0][0] * 40 / 50)
    assert a100.alone_s == h200.alone_s  # launch costs are host-side (an assumption)
    for name in gpu.GPUS:
        model = gpu.gpu_model(name)
        assert model.bandwidth > 0 and model.gemm["float32"].peak > 0
    with pytest.raises(InvalidInputError, match="no GPU kernel model"):
        gpu.gpu_model("neurex")


def test_the_h200_accelerator_runs_at_the_measured_figures() -> None:
    # schedule/analyze's H200 is the trace model's: its file's data sheet is the measured
    # H200's (FP32 67 TFLOP/s at the boost clock, dense FP16 989.4 at 1,830 MHz, both
    # carried by the file's one clock), so scaling changes nothing beyond rounding
    from nerframe.hardware import accelerator

    measured = gpu.gpu_model("h200")
    built_in = gpu.accelerator_model(accelerator("h200"))
    assert built_in.gemm.keys() == measured.gemm.keys()
    for dtype, fit in measured.gemm.items():
        assert built_in.gemm[dtype].peak == pytest.approx(fit.peak, rel=1e-4)
        assert (built_in.gemm[dtype].k0, built_in.gemm[dtype].m0) == (fit.k0, fit.m0)
    assert built_in.gather == measured.gather
    assert (built_in.bandwidth, built_in.alone_s) == (measured.bandwidth, measured.alone_s)
    # the same die in another file (the H100 SXM5, also 67 TFLOP/s FP32 and 989.4 dense
    # FP16 on its data sheet) runs GEMMs at the same peaks, its memory at its bandwidth
    h100 = gpu.accelerator_model(accelerator("h100"))
    for dtype, fit in measured.gemm.items():
        assert h100.gemm[dtype].peak == pytest.approx(fit.peak, rel=1e-4)
    assert h100.bandwidth == pytest.approx(measured.bandwidth * 3350 / 4800)


@pytest.mark.parametrize("model", ["hashgrid@4096", "vanilla@4096"])
def test_an_adam_step_on_the_h200_against_its_measured_step(micro: dict, model: str) -> None:
    # training.json times torch.optim.Adam's step (default foreach kernels) on an H200:
    # the hash grid's 16.8 M parameters are bound by the foreach kernels' 72 bytes a
    # parameter; the vanilla NeRF's 0.6 M by its eight launches, beyond which the step's
    # host-side Python (tensor grouping, bookkeeping) is not modelled: a lower bound
    import nerframe

    iteration = json.loads((H200 / "training.json").read_text())["iterations"][model]
    op = {"op_type": "AdamUpdate", "B": iteration["params"], "N": 1, "bitwidth": 32}
    step = nerframe.graph("adam", [op], [], kind="training")
    predicted = 1 / nerframe.schedule(step, "h200").summary["fps"].item()
    ratio = iteration["adam_s"] / predicted
    if model.startswith("hashgrid"):
        # (the schedule's DRAM term moves the same 72 bytes at the file's DRAM share,
        # which rounds W / 4,800 GB/s to four digits: within 1e-4)
        assert predicted == pytest.approx(
            iteration["params"] * 72 / gpu.gpu_model("h200").bandwidth, rel=1e-4
        )
        assert 1 / 1.3 <= ratio <= 1.3
    else:
        assert predicted == pytest.approx(8 * gpu.gpu_model("h200").back_to_back_s, rel=1e-6)
        assert 1.0 <= ratio <= 2.5


def test_a_cpu_recorded_adam_step_runs_as_foreach_kernels_on_the_h200(
    micro: dict, tmp_path: Path
) -> None:
    # A CPU capture records Adam's per-parameter loop (8 functions per tensor); on the
    # H200 torch ran its foreach step, timed in training.json (oracle): one kernel per
    # function over every tensor
    from nerframe.trace import capture, trace_graph
    from nerframe.trace.ingest import OPTIMIZER_PATH

    class_map = _heldout_map(tmp_path)
    import heldout_models

    net, inputs = heldout_models.build_hashgrid()
    trace = capture(net, *inputs, repeats=1, warmup=1, name="hashgrid", train=True)
    tensors = sum(1 for p in net.parameters() if p.requires_grad)
    assert len(trace.train.optimizer_kernels) == 8 * tensors
    steps = [k for k in gpu.foreach(trace.train.optimizer_kernels) if k.name != "_foreach_add_"]
    assert all(len(k.outputs) == tensors for k in steps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        measured = trace_graph(trace, [class_map], name="hashgrid").measured
    table = compare(measured, gpu.gpu_model("h200"))
    predicted = table.filter(path=OPTIMIZER_PATH)["predicted_s"].item()
    iteration = json.loads((H200 / "training.json").read_text())["iterations"]["hashgrid@4096"]
    assert 1 / 1.3 <= iteration["adam_s"] / predicted <= 1.3


def _heldout_map(tmp_path: Path) -> Path:
    import sys

    # the held-out models' file imports torch (the class map is defined beside them)
    pytest.importorskip("torch", reason="optional: the held-out models' map needs torch")

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    try:
        import heldout_models
    finally:
        sys.path.pop(0)
    path = tmp_path / "heldout.yaml"
    path.write_text(heldout_models.MAP)
    return path


@pytest.fixture(scope="module")
def traces(micro: dict) -> dict[str, Path]:
    found = {name: H200 / "traces" / f"{name}.trace.json" for name in TRACES}
    if not all(p.is_file() for p in found.values()):
        pytest.skip("optional: the H200 reference traces are absent")
    return found


@pytest.mark.filterwarnings("ignore")
def test_traces_whole_forward_within_1_3x(traces: dict[str, Path]) -> None:
    whole = json.loads((H200 / "whole_forward.json").read_text())["seconds"]
    m = gpu.gpu_model("h200")
    for name, path in traces.items():
        model, rays = name.split(".")
        predicted = gpu.predict_forward(m, read_trace(path))
        assert predicted is not None
        ratio = whole[f"{model}@{rays}"] / predicted
        assert 1 / 1.3 <= ratio <= 1.3, (name, ratio)


@pytest.mark.filterwarnings("ignore")
def test_traces_per_op_errors(traces: dict[str, Path], tmp_path: Path) -> None:
    """Per-op median |log10(measured / predicted)| on the four traces. Reached: 0.06 on
    the hash-grid model, 0.07-0.10 on the vanilla NeRF (0.37-0.46 before the CUDA
    probe's narrow ``cat`` joined the stored figures; docs/gpus.md); the roofline was
    1.32 overall."""
    heldout = _heldout_map(tmp_path)
    m = gpu.gpu_model("h200")
    bounds = {"vanilla": 0.15, "hashgrid": 0.1}
    pooled = []
    for name, path in traces.items():
        table = compare(read_traced_graph(path, [heldout]).measured, m)
        error = median_log_error(table)
        assert error is not None and error <= bounds[name.split(".")[0]], (name, error)
        pooled.extend(table["log_error"].drop_nulls().to_list())
    assert sorted(pooled)[len(pooled) // 2] <= 0.15


@pytest.mark.filterwarnings("ignore")
def test_cli_compare_with_a_cuda_probe(
    micro: dict, traces: dict[str, Path], tmp_path: Path, capsys
) -> None:
    # micro.json plus the classes the stored figures take from the H200's CUDA probe
    stored = json.loads((Path(gpu.__file__).with_name("systems") / "h200.json").read_text())
    cat = [{**r, "op": "cat_last_narrow"} for r in stored["probe"]["cat_last_narrow"]]
    document = {**micro, "format": "nerframe-probe", "device_kind": "cuda"}
    document["sort"] = stored["probe"]["sort"]
    document["elementwise"] = [*micro["elementwise"], *cat]
    probe = tmp_path / "cuda.probe.json"
    probe.write_text(json.dumps(document))
    heldout = _heldout_map(tmp_path)
    trace = traces["hashgrid.4096"]
    args = ["trace", "compare", str(trace), "--map", str(heldout), "--format", "csv"]
    assert main([*args, "--probe", str(probe)]) == 0
    by_probe = capsys.readouterr()
    assert main([*args, "--system", "h200"]) == 0
    by_system = capsys.readouterr()
    # the probe's fit is the stored H200 figures' fit: the same predictions (the narrow
    # cat's rate nets out micro.json's launch overhead here, the probe's in the file)
    a = pl.read_csv(by_probe.out.encode())["predicted_s"].to_list()
    b = pl.read_csv(by_system.out.encode())["predicted_s"].to_list()
    assert a == pytest.approx(b, rel=1e-3)
    assert "whole forward" in by_probe.err


def test_probe_without_cuda_is_one_error_line(tmp_path: Path, capsys) -> None:
    torch = pytest.importorskip("torch", reason="optional: needs torch (nerframe[trace])")

    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    out = tmp_path / "cuda.json"
    assert main(["probe", "--device", "cuda", "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: probe --device cuda: CUDA is not available")
    assert not out.exists()


def test_cuda_probe_benchmarks_run_and_fit_on_the_cpu(monkeypatch) -> None:
    """The probe's benchmarks, on the CPU with a wall clock and small sizes: the record
    has micro.json's layout, and `fit` reads it."""
    import time

    torch = pytest.importorskip("torch", reason="optional: needs torch (nerframe[trace])")

    from nerframe import gpu_probe

    monkeypatch.setattr(gpu_probe, "SIZES", (2**10, 2**12))
    monkeypatch.setattr(gpu_probe, "ROWS", (64, 256))
    monkeypatch.setattr(gpu_probe, "TABLES", (2**10,))
    monkeypatch.setattr(gpu_probe, "LOOKUPS", (2**8, 2**10))
    monkeypatch.setattr(gpu_probe, "SORTS", (2**8,))
    monkeypatch.setattr(gpu_probe, "SCATTERS", (2**8, 2**10))
    monkeypatch.setattr(gpu_probe, "REPEATS", 3)
    monkeypatch.setattr(gpu_probe, "CHAIN", 10)

    def timed(work) -> float:
        start = time.perf_counter()
        work()
        return time.perf_counter() - start + 1e-3  # beyond any launch overhead

    record = {
        "launch": {"single_add_1elem_event_s": 2e-5, "back_to_back_add_1elem_s": 1e-5},
        "elementwise": gpu_probe._elementwise(torch, timed, "cpu"),
        "gemm": [r for r in gpu_probe._gemm(torch, timed, "cpu") if r["dtype"] != "float16"],
        "gather": gpu_probe._gather(torch, timed, "cpu"),
        "sort": gpu_probe._sort(torch, timed, "cpu"),
        "scatter": gpu_probe._scatter(torch, timed, "cpu", gpu_probe._put),
        "atomic": gpu_probe._scatter(torch, timed, "cpu", gpu_probe._index_add),
    }
    ops = {r["op"] for r in record["elementwise"]}
    assert {"add", "cumprod_last64", "sum_last64", "cat_two", "cat_last_narrow"} <= ops
    assert {r["dtype"] for r in record["gemm"]} == {"float32", "tf32", "bfloat16"}
    figures = gpu.fit(record)
    assert {"float32", "tf32", "bfloat16", "bfloat16-unaligned"} <= set(figures["gemm"])
    assert figures["sort_keys_per_s"] > 0 and len(figures["gather"]) == 1
    model = gpu.from_figures("cpu-test", figures)
    assert model.sort_rate == figures["sort_keys_per_s"]
    assert model.cat_last_bandwidth == pytest.approx(figures["cat_last_gbps"] * 1e9)
    # the scatter rows: 2^10 lookups into the 2^10-row table of two float32 features
    (scatter,) = figures["scatter"]
    top = record["scatter"][-1]
    assert scatter[0] == 2**10 * 8
    assert scatter[1] == pytest.approx(2**10 / (top["seconds"] - 1e-5), rel=1e-3)
    assert model.scatter == ((scatter[0], scatter[1]),)
    (atomic,) = figures["atomic"]
    top = record["atomic"][-1]
    assert atomic[0] == 2**10 * 8
    assert atomic[1] == pytest.approx(2**10 / (top["seconds"] - 1e-5), rel=1e-3)
    assert model.atomic == ((atomic[0], atomic[1]),)


def test_a_scatter_add_runs_at_the_probed_rate_where_measured() -> None:
    # The gradient of a hash level's gather: 2^21 int64 indices into a 2^19 x 2 table.
    rows, lookups = 2**19, 2**21
    kernel = Kernel(
        "index_put",
        [[rows, 2], [lookups], [lookups, 2]],
        ["float32", "int64", "float32"],
        [[rows, 2]],
        ["float32"],
    )
    plain = gpu.gpu_model("h200")
    table = rows * 2 * 4
    # without a probed scatter: the row sort and the adds at the gather rate. torch
    # sorts (int64 row, int64 position) pairs over the 19 bits of row 2^19 - 1: 3 passes
    # of 16-byte pairs, against the measured sort's 4 passes of 12-byte ones (Indexing.cu)
    expected = lookups * (3 / 4) * (16 / 12) / plain.sort_rate + lookups / plain.gather_rate(table)
    assert plain.work_seconds(kernel) == (pytest.approx(expected), "gather")
    # with one: log-log between the probed tables (here 1 and 16 MB at 4 and 1 G lookups/s)
    probed = gpu.from_figures(
        "probed", {**gpu.scaled("h200"), "scatter": [[2**20, 4e9], [2**24, 1e9]]}
    )
    rate = 4e9 * (1e9 / 4e9) ** (math.log(table / 2**20) / math.log(2**24 / 2**20))
    assert probed.work_seconds(kernel) == (pytest.approx(lookups / rate), "gather")


@pytest.mark.parametrize(
    ("kind", "section", "figure"),
    [("put", "scatter_runs", "serial_lookup_s"), ("index_add", "atomic_runs", "serial_atomic_s")],
)
def test_the_probe_measures_what_a_row_s_repeated_lookups_add(
    monkeypatch, kind: str, section: str, figure: str
) -> None:
    # the runs on the CPU with a fake clock (one tick of 1 ms per timing, so the time
    # grows by 1 ms from one run length to the next): every row the index touches
    # takes exactly the row's repeats (counted from the call's own index, which the
    # call really added into the table), and the fit's slope is the last tick over the
    # two longest runs' difference
    torch = pytest.importorskip("torch", reason="optional: needs torch (nerframe[trace])")

    from nerframe import gpu_probe

    monkeypatch.setattr(gpu_probe, "RUN_LOOKUPS", 2**10)
    monkeypatch.setattr(gpu_probe, "RUN_TABLE", 2**8)
    monkeypatch.setattr(gpu_probe, "RUNS", (4, 16, 256))
    seen: list[tuple[int, int]] = []

    def ticks(work) -> float:
        table = work()
        counts = torch.bincount(work.args[0][0] if kind == "put" else work.args[1])
        seen.append((int(counts.max()), int(counts[counts > 0].min())))
        added = work.args[-1] if kind == "put" else work.args[2]
        assert float(table.sum()) == pytest.approx(float(added.sum()), rel=1e-4)
        return 1e-3 * len(seen)

    add = gpu_probe._put if kind == "put" else gpu_probe._index_add
    runs = gpu_probe._scatter_runs(torch, ticks, "cpu", add)
    assert [r["row_lookups"] for r in runs] == [4, 16, 256]
    assert seen == [(4, 4), (16, 16), (256, 256)]
    launch = {"single_add_1elem_event_s": 2e-5, "back_to_back_add_1elem_s": 1e-5}
    element = {"op": "add", "elements": 1, "bytes": 4e9, "seconds": 1e-3}
    figures = gpu.fit({"launch": launch, "elementwise": [element], section: runs})
    assert figures[figure] == pytest.approx(1e-3 / (256 - 16), rel=1e-3)
    assert set(figures) & {"serial_lookup_s", "serial_atomic_s"} == {figure}


def test_an_atomic_scatter_add_is_charged_no_sort() -> None:
    # nerfacc's accumulate_along_rays: index_add_ of 2^20 samples' RGB into 2^14 rays,
    # which torch runs with atomic adds (no sort): at the gather rate of the 196 KB
    # table without a probe, at the probe's atomic rate with one, and at least the
    # longest run's same-row atomics where a probe measured what one more adds
    rays, samples = 2**14, 2**20
    shapes = ([[rays, 3], [samples], [samples, 3]], ["float32", "int64", "float32"])
    kernel = Kernel("index_add_", *shapes, [[rays, 3]], ["float32"], "fresh", 64)
    h200 = gpu.gpu_model("h200")
    table = rays * 3 * 4
    moved = (rays * 3 + samples * 3) * 4 + samples * 8 + rays * 3 * 4
    expected = max(samples / h200.gather_rate(table), moved / h200.bandwidth)
    assert h200.work_seconds(kernel) == (pytest.approx(expected), "gather")
    sorted_put = Kernel("index_put_", *shapes, [[rays, 3]], ["float32"], "fresh", 64)
    assert h200.work_seconds(sorted_put)[0] > h200.work_seconds(kernel)[0]
    probed = gpu.from_figures(
        "probed", {**gpu.scaled("h200"), "atomic": [[2**10, 8e9], [2**20, 2e9]]}
    )
    rate = 8e9 * (2e9 / 8e9) ** (math.log(table / 2**10) / math.log(2**20 / 2**10))
    assert probed.work_seconds(kernel)[0] == pytest.approx(
        max(samples / rate, moved / h200.bandwidth)
    )
    serial = gpu.from_figures("serial", {**gpu.scaled("h200"), "serial_atomic_s": 1e-4})
    assert serial.work_seconds(kernel)[0] == pytest.approx(64 * 1e-4)
    # the sort-based serial time is not the atomic one
    assert gpu.from_figures("serial", {**gpu.scaled("h200"), "serial_lookup_s": 1e-4}).work_seconds(
        kernel
    ) == h200.work_seconds(kernel)


def test_an_embedding_backward_adds_a_row_s_partial_sums_serially() -> None:
    # torch sums an embedding row's lookups in partials of 10 in parallel, then one
    # thread adds a row's partials: a run of 6,079 lookups is 608 serial adds
    rows, lookups = 2**19, 2**21
    kernel = Kernel(
        "embedding_dense_backward",
        [[lookups, 2], [lookups]],
        ["float32", "int64"],
        [[rows, 2]],
        ["float32"],
        "fresh",
        6079,
    )
    probed = gpu.from_figures("probed", {**gpu.scaled("h200"), "serial_lookup_s": 1e-6})
    assert probed.work_seconds(kernel) == (pytest.approx(608 * 1e-6), "gather")


def test_a_scatter_add_takes_as_long_as_its_longest_run_where_measured() -> None:
    # A hash grid's coarse level: 2^21 lookups into a 2^19-row table, 6,079 of them
    # into one row. With a probed time per repeated lookup, the row's serial adds bound
    # the kernel from below; without one (the built-in H200), repeats change nothing
    rows, lookups = 2**19, 2**21
    shapes = ([[rows, 2], [lookups], [lookups, 2]], ["float32", "int64", "float32"])
    plain = Kernel("index_put", *shapes, [[rows, 2]], ["float32"])
    repeated = Kernel("index_put", *shapes, [[rows, 2]], ["float32"], "fresh", 6079)
    h200 = gpu.gpu_model("h200")
    assert h200.serial_lookup_s == 0 and h200.work_seconds(repeated) == h200.work_seconds(plain)
    probed = gpu.from_figures("probed", {**gpu.scaled("h200"), "serial_lookup_s": 2e-7})
    assert probed.work_seconds(repeated) == (pytest.approx(6079 * 2e-7), "gather")
    # a short run leaves the sort and the adds in charge
    short = Kernel("index_put", *shapes, [[rows, 2]], ["float32"], "fresh", 4)
    assert probed.work_seconds(short) == h200.work_seconds(plain)


def test_a_probed_scatter_scales_to_other_gpus_as_gathers_do(monkeypatch) -> None:
    # tables by the L2 ratio (40 MB against 50), rates by the DRAM ratio (1,935 / 4,800)
    stored = json.loads((Path(gpu.__file__).with_name("systems") / "h200.json").read_text())
    stored["probe"]["figures"]["scatter"] = [[2**20, 4e9], [2**24, 1e9]]
    monkeypatch.setattr(gpu, "_system_document", lambda name: stored)
    a100 = gpu.scaled("a100")
    assert a100["scatter"] == [
        [pytest.approx(2**20 * 40 / 50), pytest.approx(4e9 * 1935 / 4800)],
        [pytest.approx(2**24 * 40 / 50), pytest.approx(1e9 * 1935 / 4800)],
    ]


def test_a_cat_along_a_narrow_last_dimension_uses_the_probed_rate() -> None:
    figures = {**gpu.scaled("h200"), "cat_last_gbps": 500.0}
    model = gpu.from_figures("probed", figures)
    rows = 2**20
    last = Kernel(
        "cat", [[rows, 3], [rows, 30], [rows, 30]], ["float32"] * 3, [[rows, 63]], ["float32"]
    )
    first = Kernel("cat", [[rows, 3], [rows, 3]], ["float32"] * 2, [[2 * rows, 3]], ["float32"])
    moved = 2 * 63 * rows * 4  # every piece read once, the output written once
    assert model.work_seconds(last)[0] == pytest.approx(moved / 500e9)
    assert model.work_seconds(first)[0] == pytest.approx(4 * 3 * rows * 4 / model.bandwidth)
    # the H200's stored figures: the CUDA probe's narrow cat (micro.json has none), its
    # 528,482,304 bytes at 2^26 elements in 773.95 us net of the probe's launch overhead
    stored = json.loads((Path(gpu.__file__).with_name("systems") / "h200.json").read_text())
    (row,) = stored["probe"]["cat_last_narrow"]
    launch = stored["probe"]["launch"]
    overhead = launch["single_add_1elem_event_s"] - launch["back_to_back_add_1elem_s"]
    rate = row["bytes"] / (row["seconds"] - overhead)
    h200 = gpu.gpu_model("h200")
    assert h200.work_seconds(last)[0] == pytest.approx(moved / rate, rel=1e-3)
    assert rate < h200.bandwidth / 5  # far below the element-wise W
    # without any measurement of it, a cat along the last dimension runs at W
    plain = {k: v for k, v in gpu.scaled("h200").items() if k != "cat_last_gbps"}
    unprobed = gpu.from_figures("unprobed", plain)
    assert unprobed.work_seconds(last)[0] == pytest.approx(moved / unprobed.bandwidth)


def test_bad_cuda_probes_and_systems_are_one_error_line(tmp_path: Path, capsys) -> None:
    assert main(["probe", "--device", "cuda"]) == 1  # where would it go?
    assert capsys.readouterr().err.strip() == (
        "error: probe --device cuda: give -o FILE (where to write it)"
    )
    trace = tmp_path / "t.trace.json"
    from nerframe.trace.tracefile import Call, Trace, write_trace

    k = Kernel("relu", [[4]], ["float32"], [[4]], ["float32"])
    linear = ["torch.nn.modules.linear.Linear"]
    call = Call(
        0,
        None,
        "fc",
        linear,
        {"in_features": 4, "out_features": 4},
        {},
        [[8, 4]],
        [[8, 4]],
        [],
        [[]],
        1e-4,
        ["float32"],
        ["float32"],
        [k],
    )
    write_trace(Trace("fc", [call], total_s=1e-4), trace)
    bad = tmp_path / "bad.probe.json"
    bad.write_text(json.dumps({"format": "nerframe-probe", "device_kind": "cuda", "gemm": []}))
    assert main(["trace", "compare", str(trace), "--probe", str(bad)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {bad}: bad CUDA probe")
    assert main(["trace", "compare", str(trace), "--system", "h200", "--format", "csv"]) == 0
    out = capsys.readouterr()
    # one relu alone on the H200: the measured launch of a kernel timed alone
    assert pl.read_csv(out.out.encode())["predicted_s"].to_list() == pytest.approx(
        [gpu.gpu_model("h200").alone_s]
    )
