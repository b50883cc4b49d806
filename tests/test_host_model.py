"""The host model's arithmetic (hand computations), kernel records, CUDA capture paths
and the h200 system file. No timing is asserted: the machine is shared."""

from __future__ import annotations

import dataclasses
import importlib.util
import math
from pathlib import Path

import polars as pl
import pytest

from nerframe.cli import main
from nerframe.errors import InvalidInputError, NerframeError
from nerframe.rooflines import system
from nerframe.trace import Call, Trace, read_trace, trace_graph, write_trace
from nerframe.trace.compare import compare
from nerframe.trace.host import HostModel, inclusive, predict_forward, predict_kernels
from nerframe.trace.tracefile import Kernel

HAVE_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="optional: torch not installed")
HERE = Path(__file__).parent
F32 = "float32"

# A host with round numbers: 1 us per call, 0.5 us per view, 3 us per module call;
# GEMMs at 1 GFLOP/s for K or N = 4 and 16 GFLOP/s for K = N = 64; 1 GB/s fresh up to
# 1 kB and 100 GB/s from 1 MB (log-log between), reused twice that; gathers at
# 1 M rows/s; 200 M elements/s for special functions, 50 M for broadcasts.
MODEL = HostModel(
    1e-6,
    0.5e-6,
    3e-6,
    (
        (4096, 4, 4, F32, 1e9),
        (4096, 4, 64, F32, 1e9),
        (4096, 64, 4, F32, 1e9),
        (4096, 64, 64, F32, 16e9),
    ),
    ((1e3, 1e9), (1e6, 100e9)),
    ((1e3, 2e9), (1e6, 200e9)),
    ((1e3, 1e6),),
    (("simple", 1e12), ("special", 200e6), ("broadcast", 50e6)),
)


def kernel(name: str, inputs, outputs, memory: str = "fresh", dtypes=None) -> Kernel:
    in_dtypes = dtypes or [F32] * len(inputs)
    return Kernel(name, inputs, in_dtypes, outputs, [F32] * len(outputs), memory)


def test_gemm_rate_is_bilinear_in_log_shape_and_clamped() -> None:
    # K = N = 16 is halfway in log2 between 4 and 64 on both axes: the log rate is the
    # mean of the four corners' logs, i.e. the geometric mean (1 * 1 * 1 * 16)^(1/4) = 2
    assert MODEL.gemm_rate(16, 16, F32) == pytest.approx(2e9)
    # halfway in K only, at N = 64: sqrt(1 * 16) = 4
    assert MODEL.gemm_rate(16, 64, F32) == pytest.approx(4e9)
    assert MODEL.gemm_rate(1, 1, F32) == pytest.approx(1e9)  # below the grid: its corner
    assert MODEL.gemm_rate(4096, 4096, F32) == pytest.approx(16e9)  # above: its corner
    assert MODEL.gemm_rate(64, 64, "float16") == pytest.approx(16e9)  # no fp16 point: fp32


def test_gemm_rate_is_interpolated_in_log_m_between_probed_rows() -> None:
    # M = 256 and 4,096 (log2 8 and 12), each a 2 x 2 grid of K, N in {4, 64}: at M =
    # 256 every shape runs at 1 GFLOP/s, at M = 4,096 at 16 GFLOP/s but K = N = 64 at 64
    grid = tuple(
        (m, k, n, F32, rate * (4.0 if (m, k, n) == (4096, 64, 64) else 1.0))
        for m, rate in ((256, 1e9), (4096, 16e9))
        for k in (4, 64)
        for n in (4, 64)
    )
    model = HostModel(1e-6, 0.5e-6, 0, grid, ((1e3, 1e9),), ((1e3, 1e9),), ((1e3, 1e6),))
    # M = 1,024 is halfway in log2 (10): sqrt(1 * 16) = 4 GFLOP/s
    assert model.gemm_rate(4, 4, F32, m=1024) == pytest.approx(4e9)
    # M = 2,048 (log2 11, three quarters) at K = N = 64: 1^(1/4) * 64^(3/4) = 22.63
    assert model.gemm_rate(64, 64, F32, m=2048) == pytest.approx(64e9**0.75 * 1e9**0.25)
    # K = N = 16, halfway on both (bilinear: geometric mean of the corners), at M = 4,096:
    # (16 * 16 * 16 * 64)^(1/4) = 22.63 GFLOP/s
    assert model.gemm_rate(16, 16, F32, m=4096) == pytest.approx((16**3 * 64) ** 0.25 * 1e9)
    # clamped below and above the probed M; None: the largest M
    assert model.gemm_rate(4, 4, F32, m=8) == pytest.approx(1e9)
    assert model.gemm_rate(4, 4, F32, m=10**6) == pytest.approx(16e9)
    assert model.gemm_rate(4, 4, F32) == pytest.approx(16e9)
    # a linear's M is every output dimension but the last: 2 x 512 = 1,024 rows, 4 GFLOP/s
    linear = kernel("linear", [[2, 512, 4], [4, 4], [4]], [[2, 512, 4]])
    assert model.kernel_seconds(linear)[0] == pytest.approx(1e-6 + 2 * 1024 * 4 * 4 / 4e9)
    # a plane that is not a full grid is refused when used
    holed = HostModel(0, 0, 0, grid[:3] + grid[4:], ((1, 1),), ((1, 1),), ((1, 1),))
    with pytest.raises(NerframeError, match=r"not a full K × N grid"):
        holed.gemm_rate(16, 16, F32, m=256)


def test_only_inputs_expanded_to_the_output_are_broadcasts() -> None:
    # cat of (1000, 3) and (1000, 5) into (1000, 8): 64,000 bytes moved (read and
    # written) at the fresh bandwidth, 64 kB lying 0.6 of the way in log from 1 kB to
    # 1 MB: 10^(9 + 2 * log10(64) / 3) B/s; not 8,000 elements at the broadcast rate
    cat = kernel("cat", [[1000, 3], [1000, 5]], [[1000, 8]])
    rate = 10 ** (9 + 2 * math.log10(64) / 3)
    assert MODEL.kernel_seconds(cat)[0] == pytest.approx(1e-6 + 64000 / rate)
    # a reduction (8192, 8, 3) -> (8192, 8) reads more than it writes: no broadcast
    total = kernel("sum", [[8192, 8, 3]], [[8192, 8]])
    moved = 4 * 8192 * 8 * 4
    assert MODEL.kernel_seconds(total)[0] == pytest.approx(1e-6 + moved / 100e9)
    # where(mask (1, 8, 3), a (8192, 1, 3), b (8192, 1, 3)) -> (8192, 8, 3): broadcast
    where = kernel("where", [[1, 8, 3], [8192, 1, 3], [8192, 1, 3]], [[8192, 8, 3]])
    assert MODEL.kernel_seconds(where)[0] == pytest.approx(1e-6 + 8192 * 24 / 50e6)


def test_bandwidth_is_log_log_interpolated_fresh_or_reused() -> None:
    # 31,623 bytes is halfway in log between 1 kB and 1 MB: sqrt(1 * 100) = 10 GB/s
    assert MODEL.bandwidth(10**4.5) == pytest.approx(10e9)
    assert MODEL.bandwidth(10**4.5, reused=True) == pytest.approx(20e9)
    assert MODEL.bandwidth(10.0) == pytest.approx(1e9)


def test_kernel_times_by_hand() -> None:
    # linear 1024 x 16 by 16 x 16: 2 * 1024 * 16 * 16 = 524,288 FLOPs at 2 GFLOP/s
    linear = kernel("linear", [[1024, 16], [16, 16], [16]], [[1024, 16]])
    assert MODEL.kernel_seconds(linear) == (pytest.approx(1e-6 + 524288 / 2e9), "gemm")
    # addmm(bias, x, w): K is the second input's last dimension (64), N = 64
    addmm = kernel("addmm", [[64], [100, 64], [64, 64]], [[100, 64]])
    assert MODEL.kernel_seconds(addmm)[0] == pytest.approx(1e-6 + 2 * 100 * 64 * 64 / 16e9)
    view = kernel("reshape", [[1024, 16]], [[16, 1024]], memory="view")
    assert MODEL.kernel_seconds(view) == (0.5e-6, "view")
    # relu of 250 float32 into fresh memory: 2,000 bytes; 2 kB sits at log10 3.301, a
    # 0.1003 share of the way from 1 kB to 1 MB: 10^(9 + 2 * 0.1003) B/s
    relu = kernel("relu", [[250]], [[250]])
    rate = 10 ** (9 + 2 * math.log10(2) / 3)
    assert MODEL.kernel_seconds(relu) == (pytest.approx(1e-6 + 2000 / rate), "data")
    relu_ = kernel("relu_", [[250]], [[250]], memory="reused")
    assert MODEL.kernel_seconds(relu_)[0] == pytest.approx(1e-6 + 2000 / (2 * rate))
    # sin of 1e5 elements: 800 kB at ~79 GB/s is 10 us, 1e5 at 200 M/s is 500 us
    sin = kernel("sin", [[100_000]], [[100_000]])
    assert MODEL.kernel_seconds(sin)[0] == pytest.approx(1e-6 + 1e5 / 200e6)
    # a broadcast mul (R, 1, 3) x (1, S, 1): 24,576 outputs at 50 M/s
    mul = kernel("mul", [[128, 1, 3], [1, 64, 1]], [[128, 64, 3]])
    assert MODEL.kernel_seconds(mul)[0] == pytest.approx(1e-6 + 24576 / 50e6)
    # a gather of 4,096 rows from an 8 kB table (clamped to the 1 kB point): 1 M rows/s
    gather = kernel("__getitem__", [[1024, 2], [4096]], [[4096, 2]], dtypes=[F32, "int64"])
    assert MODEL.kernel_seconds(gather) == (pytest.approx(1e-6 + 4096 / 1e6), "gather")
    # slicing with a Python index is no gather: no integer tensor among the inputs
    sliced = kernel("__getitem__", [[1024, 2]], [[1024, 1]])
    assert MODEL.kernel_seconds(sliced)[1] == "data"


# A version-4 probe of the same host: 5 us per kernel on cold caches; int64 element-wise
# at 100 M elements/s, remainders at 20 M, reductions at 40 M input elements/s.
MODEL4 = dataclasses.replace(
    MODEL,
    elements=(*MODEL.elements, ("integer", 100e6), ("divide", 20e6), ("reduce", 40e6)),
    cold_s=5e-6,
)


def test_integer_divide_reduce_rates_and_the_cold_call_by_hand() -> None:
    i64 = "int64"
    # int64 add of 1,000 + 1,000: 24 kB moved at ~8.3 GB/s is 2.9 us; 1,000 elements at
    # 100 M/s is 10 us: the slower counts, after the 5 us cold call
    add = Kernel("add", [[1000], [1000]], [i64, i64], [[1000]], [i64])
    assert MODEL4.kernel_seconds(add) == (pytest.approx(5e-6 + 1000 / 100e6), "data")
    # a hash modulo the table size, (8192, 8) int64: 65,536 divisions at 20 M/s
    rem = Kernel("remainder", [[8192, 8]], [i64], [[8192, 8]], [i64])
    assert MODEL4.kernel_seconds(rem)[0] == pytest.approx(5e-6 + 65536 / 20e6)
    # the sum of 8 corners, (8192, 8, 3) -> (8192, 3): 196,608 input elements at 40 M/s
    corners = kernel("sum", [[8192, 8, 3]], [[8192, 3]])
    assert MODEL4.kernel_seconds(corners)[0] == pytest.approx(5e-6 + 196608 / 40e6)
    # a scan keeps its size and is still a reduction: 128 x 65 at 40 M/s
    scan = kernel("cumprod", [[128, 65, 1]], [[128, 65, 1]])
    assert MODEL4.kernel_seconds(scan)[0] == pytest.approx(5e-6 + 8320 / 40e6)
    # max of two tensors is element-wise: 12 kB at 10^(9 + 2 log10(12) / 3) B/s, fresh
    pair = kernel("max", [[1000], [1000]], [[1000]])
    assert MODEL4.kernel_seconds(pair)[0] == pytest.approx(
        5e-6 + 12000 / 10 ** (9 + 2 * math.log10(12) / 3)
    )
    # an int64 broadcast (8192, 1, 3) + (1, 8, 3): 196,608 outputs at the broadcast
    # rate (50 M/s) are slower than at the integer rate (100 M/s)
    corner = Kernel("add", [[8192, 1, 3], [1, 8, 3]], [i64, i64], [[8192, 8, 3]], [i64])
    assert MODEL4.kernel_seconds(corner)[0] == pytest.approx(5e-6 + 196608 / 50e6)
    # every non-view kernel pays the cold call, GEMMs and gathers too; views and module
    # calls keep their own costs
    linear = kernel("linear", [[1024, 16], [16, 16], [16]], [[1024, 16]])
    assert MODEL4.kernel_seconds(linear)[0] == pytest.approx(5e-6 + 524288 / 2e9)
    view = kernel("view", [[1024, 16]], [[16384]], memory="view")
    p = predict_kernels(MODEL4, [linear, view, rem], modules=2)
    assert p.fixed_s == pytest.approx(2 * 3e-6 + 2 * 5e-6 + 0.5e-6)
    assert p.data_s == pytest.approx(65536 / 20e6) and p.gemm_s == pytest.approx(524288 / 2e9)
    # the version-3 model of the same host has none of these: 1 us calls, bytes only
    assert MODEL.kernel_seconds(rem)[0] == pytest.approx(1e-6 + 2 * 524288 / 100e9)


def test_a_call_sums_module_costs_and_kernels() -> None:
    linear = kernel("linear", [[1024, 16], [16, 16], [16]], [[1024, 16]])
    view = kernel("view", [[1024, 16]], [[16384]], memory="view")
    p = predict_kernels(MODEL, [linear, view, linear], modules=3)
    assert p.fixed_s == pytest.approx(3 * 3e-6 + 2 * 1e-6 + 0.5e-6)
    assert p.gemm_s == pytest.approx(2 * 524288 / 2e9)
    assert p.total_s == pytest.approx(p.fixed_s + p.gemm_s) and p.bound == "compute"


def _traced() -> Trace:
    """A model (call 0) with one Linear (call 1) and a ReLU (call 2) inside it."""
    lin = ["torch.nn.modules.linear.Linear", "torch.nn.modules.module.Module"]
    relu = ["torch.nn.modules.activation.ReLU", "torch.nn.modules.module.Module"]
    k_lin = kernel("linear", [[1024, 16], [16, 16], [16]], [[1024, 16]])
    k_relu = kernel("relu", [[1024, 16]], [[1024, 16]])
    k_view = kernel("reshape", [[1024, 16]], [[16384]], memory="view")
    attrs = {"in_features": 16, "out_features": 16}
    calls = [
        Call(0, None, "", ["m.Net"], {}, {}, [[1024, 16]], [[16384]], [], [[(2, 0)]], 5e-3,
             [F32], [F32], [k_view]),
        Call(1, 0, "fc", lin, attrs, {"weight": [16, 16], "bias": [16]}, [[1024, 16]],
             [[1024, 16]], [], [[]], 1e-3, [F32], [F32], [k_lin]),
        Call(2, 0, "act", relu, {}, {}, [[1024, 16]], [[1024, 16]], [(1, 0)], [[]], 1e-4,
             [F32], [F32], [k_relu]),
    ]  # fmt: skip
    return Trace("net", calls, total_s=6e-3)


def test_compare_predicts_traced_ops_with_the_host_model(tmp_path: Path) -> None:
    trace = read_trace(write_trace(_traced(), tmp_path / "n.trace.json"))  # kernels round-trip
    assert trace == _traced()
    work = inclusive(trace)
    assert [len(work[c][0]) for c in (0, 1, 2)] == [3, 1, 1] and work[0][1] == 3
    table = compare(trace_graph(trace).measured, MODEL)
    fc = 3e-6 + 1e-6 + 524288 / 2e9  # one module call, one GEMM kernel
    assert table["predicted_s"].to_list() == pytest.approx([fc])
    assert table["ratio"][0] == pytest.approx(1e-3 / fc) and table["bound"][0] == "compute"
    relu = 1e-6 + 2 * 65536 / MODEL.bandwidth(2 * 65536)
    assert predict_forward(MODEL, trace) == pytest.approx(3 * 3e-6 + 0.5e-6 + fc - 3e-6 + relu)


def test_rows_without_kernels_are_predicted_from_their_costs() -> None:
    lin = ["torch.nn.modules.linear.Linear"]
    call = Call(0, None, "fc", lin, {"in_features": 4, "out_features": 4}, {}, [[500, 4]],
                [[500, 4]], [], [[]], 2e-4, [F32], [F32])  # fmt: skip
    g = trace_graph(Trace("fc", [call]))
    row = g.measured.row(0, named=True)
    flops, size = row["flops"], row["bytes_total"]
    expected = 1e-6 + max(flops / 16e9, size / MODEL.bandwidth(size))
    assert compare(g.measured, MODEL)["predicted_s"][0] == pytest.approx(expected)
    assert predict_forward(MODEL, Trace("fc", [call])) is None


def test_a_kernel_with_mismatched_dtypes_is_refused(tmp_path: Path) -> None:
    bad = Kernel("relu", [[4]], [], [[4]], [F32])
    call = Call(0, None, "", ["M"], {}, {}, [], [], [], [], 0.0, kernels=[bad])
    path = write_trace(Trace("m", [call]), tmp_path / "b.trace.json")
    with pytest.raises(InvalidInputError, match=r"kernel 0 \(relu\): input_dtypes has 0 entries"):
        read_trace(path)


@needs_torch
def test_capture_records_kernels_and_their_memory() -> None:
    import torch

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = torch.nn.Linear(3, 4)
            self.act = torch.nn.ReLU(inplace=True)
            self.register_buffer("table", torch.rand(16, 2))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = self.act(self.fc(x))
            out = torch.empty(8, 4)
            torch.add(h, 1.0, out=out)
            index = (x[:, 0] * 10).long()
            return out.reshape(32) + self.table[index].sum()

    from nerframe.trace import capture

    trace = capture(Net(), torch.rand(8, 3), repeats=1, threads=1)
    assert trace.threads == 1 and trace.device == "cpu"
    by_path = {c.path: c for c in trace.calls}
    assert [(k.name, k.inputs, k.outputs, k.memory) for k in by_path["fc"].kernels] == [
        ("linear", [[8, 3], [4, 3], [4]], [[8, 4]], "fresh")
    ]
    assert [(k.name, k.memory) for k in by_path["act"].kernels] == [("relu", "reused")]
    own = [(k.name, k.memory) for k in by_path[""].kernels]
    assert ("add", "reused") in own  # out=
    assert ("reshape", "view") in own
    gathers = [
        k for k in by_path[""].kernels if k.name == "__getitem__" and "int64" in k.input_dtypes
    ]
    assert gathers and gathers[0].inputs == [[16, 2], [8]]
    assert MODEL.kernel_seconds(gathers[0])[1] == "gather"


class FakeTimer:
    """Marks are ticks of 1 ms; reading one before `synchronize` is an error."""

    def __init__(self) -> None:
        self.ticks, self.synchronized, self.syncs = 0, True, 0

    def mark(self) -> int:
        self.ticks += 1
        self.synchronized = False
        return self.ticks

    def synchronize(self) -> None:
        self.synchronized, self.syncs = True, self.syncs + 1

    def seconds(self, start: int, end: int) -> float:
        assert self.synchronized, "an event was read before the device was synchronised"
        return (end - start) * 1e-3


@needs_torch
def test_event_timing_reads_marks_after_synchronising() -> None:
    import tiny_nerf

    from nerframe.trace import capture

    model, inputs = tiny_nerf.build()
    timer = FakeTimer()
    trace = capture(model, *inputs, repeats=3, warmup=0, timer=timer)
    n = len(trace.calls)
    # one run: the forward's start mark, an entry and exit mark per call, its end mark
    assert trace.total_s == pytest.approx((2 * n + 1) * 1e-3)
    assert trace.calls[0].time_s == pytest.approx((2 * n - 1) * 1e-3)  # the model's call
    leaves = [c for c in trace.calls if not any(d.parent == c.id for d in trace.calls)]
    assert all(c.time_s == pytest.approx(1e-3) for c in leaves)
    assert timer.syncs == 2 * 3  # before and after each timed run


@needs_torch
def test_cuda_without_cuda_is_one_error_line(tmp_path: Path, capsys, monkeypatch) -> None:
    import torch

    from nerframe.trace import capture

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(NerframeError, match=r"--device cuda: CUDA is not available"):
        capture(torch.nn.Linear(3, 4), torch.ones(2, 3), device="cuda")
    out = tmp_path / "t.trace.json"
    target = f"{HERE / 'tiny_nerf.py'}:build"
    assert main(["trace", "capture", target, "-o", str(out), "--device", "cuda"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: capture: --device cuda: CUDA is not available")
    assert err.count("\n") == 1 and not out.exists()


def test_h200_system_file_has_the_data_sheet_figures() -> None:
    # NVIDIA H200 SXM data sheet: FP32 67 TFLOPS; FP16/BF16 1,979 and TF32 989 TFLOPS
    # with sparsity (dense: half); 4.8 TB/s
    assert (system("h200:fp32").peak_tflops, system("h200").bandwidth_gbps) == (67.0, 4800)
    assert system("h200").peak_tflops == 1979 / 2 == system("H200:bf16").peak_tflops
    assert system("h200:tf32").peak_tflops == 989 / 2
    assert "H200 Tensor Core GPU data sheet" in system("h200").source
    with pytest.raises(NerframeError, match=r"no precision 'int4' \(one of fp32, tf32"):
        system("h200:int4")


def test_cli_trace_compare_with_the_host_model(tmp_path: Path, capsys) -> None:
    import json

    probe = tmp_path / "probe.json"
    document = {
        "format": "nerframe-probe",
        "version": 2,
        "peak_tflops": 0.016,
        "bandwidth_gbps": 200.0,
        "call_s": MODEL.call_s,
        "view_s": MODEL.view_s,
        "module_s": MODEL.module_s,
        "gemm": [{"m": m, "k": k, "n": n, "flops_per_s": r} for m, k, n, _, r in MODEL.gemm],
        "fresh": [{"bytes": b, "bytes_per_s": r} for b, r in MODEL.fresh],
        "reused": [{"bytes": b, "bytes_per_s": r} for b, r in MODEL.reused],
        "gather": [{"table_bytes": b, "rows_per_s": r} for b, r in MODEL.gather],
        "elements": [{"kind": k, "elements": 9, "elements_per_s": r} for k, r in MODEL.elements],
        "load": [0.1, 0.1, 0.1],
        "threads": 2,
    }
    probe.write_text(json.dumps(document))
    trace = write_trace(_traced(), tmp_path / "n.trace.json")
    assert main(["trace", "compare", str(trace), "--probe", str(probe), "--format", "csv"]) == 0
    captured = capsys.readouterr()
    table = pl.read_csv(captured.out.encode())
    assert table["predicted_s"].to_list() == pytest.approx([3e-6 + 1e-6 + 524288 / 2e9])
    forward = predict_forward(MODEL, _traced())
    assert forward is not None
    assert captured.err.splitlines()[-1] == (
        f"whole forward: measured {6e-3:.4g} s, predicted {forward:.4g} s "
        f"(measured / predicted {6e-3 / forward:.3g})"
    )
    args = ["trace", "compare", str(trace), "--probe", str(probe), "--system", "h200"]
    assert main(args) == 1
    assert "give --probe (the host model) or --system, not both" in capsys.readouterr().err
    assert main(["trace", "compare", str(trace), "--system", "neurex", "--format", "csv"]) == 0
    assert "whole forward" not in capsys.readouterr().err  # a roofline: per op only
