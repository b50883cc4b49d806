"""The host roofline system and the measured-vs-predicted comparison."""

from __future__ import annotations

import importlib.util
import json
import math
import os
from pathlib import Path

import polars as pl
import pytest
from test_trace_ingest import USER_MAP, handmade

import nerframe
from nerframe import probing
from nerframe.cli import main
from nerframe.errors import NerframeError
from nerframe.probing import host_model, host_predictor, host_system
from nerframe.rooflines import System
from nerframe.schemas import TABLES
from nerframe.trace import trace_graph, write_trace
from nerframe.trace.compare import compare, median_log_error


@pytest.fixture
def probe_file(tmp_path: Path, monkeypatch) -> Path:
    path = tmp_path / "probe.json"
    monkeypatch.setenv("NERFRAME_PROBE", str(path))
    return path


IDLE = (0.25, 0.5, 0.75)


def test_probe_stores_a_host_system(probe_file: Path) -> None:
    record = nerframe.probe(quick=True, load=lambda: IDLE, cpus=2)
    stored = json.loads(probe_file.read_text())
    assert stored == record and stored["system"] == "host"
    assert (stored["format"], stored["version"]) == ("nerframe-probe", 4)
    assert stored["load"] == list(IDLE) and stored["cpus"] == 2 and stored["busy"] is False
    assert stored["peak_tflops"] > 0 and stored["bandwidth_gbps"] > 0
    host = nerframe.rooflines.system("host")
    assert (host.peak_tflops, host.bandwidth_gbps) == (
        record["peak_tflops"],
        record["bandwidth_gbps"],
    )
    # the roofline figures are the host model's own: the best GEMM and the largest copy
    assert record["peak_tflops"] == max(g["flops_per_s"] for g in record["gemm"]) / 1e12
    assert record["bandwidth_gbps"] == record["reused"][-1]["bytes_per_s"] / 1e9
    model = host_model(probe_file)  # the declared format (nerframe schema probe) reads it
    # a full K x N grid for each M (version 3)
    assert sorted((g[0], g[1], g[2]) for g in model.gemm) == [
        (m, k, n) for m in (64, 256) for k in (4, 64) for n in (4, 64)
    ]
    assert dict(model.elements).keys() == {
        *("simple", "special", "broadcast", "integer", "divide", "reduce")
    }
    assert model.call_s > 0 and model.view_s > 0 and model.threads == record["threads"]
    # version 4: a kernel inside a model costs the fixed cost measured on cold caches
    assert model.cold_s == record["cold_s"] > 0 and model.kernel_s == model.cold_s


def test_a_version_3_probe_is_read_as_it_is(tmp_path: Path) -> None:
    record = nerframe.probe(tmp_path / "p.json", quick=True, load=lambda: IDLE, cpus=2)
    # what version 3 wrote: no cold fixed cost, three element rates
    del record["cold_s"]
    record["version"] = 3
    record["elements"] = [e for e in record["elements"] if e["kind"] in ("simple", "special")]
    old = tmp_path / "v3.json"
    old.write_text(json.dumps(record))
    model = host_model(old)
    assert model.cold_s == 0 and model.kernel_s == model.call_s == record["call_s"]
    assert dict(model.elements).keys() == {"simple", "special"}


@pytest.mark.parametrize(
    ("load1", "cpus", "refused"),
    [(1.5, 2, False), (1.51, 2, True), (0.5, 1, False), (0.6, 1, True), (15.4, 16, False)],
)
def test_probe_refuses_a_busy_machine(
    tmp_path: Path, load1: float, cpus: int, refused: bool
) -> None:
    # the rule: busy when the 1-minute load exceeds the CPU count minus 0.5
    path = tmp_path / "p.json"
    load = (load1, 0.0, 0.0)
    if refused:
        with pytest.raises(NerframeError, match=rf"busy: 1-minute load {load1:.3g} on {cpus} CPUs"):
            nerframe.probe(path, quick=True, load=lambda: load, cpus=cpus)
        assert not path.exists()
        record = nerframe.probe(path, quick=True, load=lambda: load, cpus=cpus, force=True)
        assert record["busy"] is True and json.loads(path.read_text())["load"][0] == load1
    else:
        assert nerframe.probe(path, quick=True, load=lambda: load, cpus=cpus)["busy"] is False


def test_probe_cli_refuses_or_warns(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (99.0, 99.0, 99.0))
    monkeypatch.setattr(probing, "_Sizes", lambda: probing.QUICK)  # the CLI probes full sizes
    out = tmp_path / "p.json"
    assert main(["probe", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert (
        err.startswith("error: the machine is busy: 1-minute load 99 on ") and err.count("\n") == 1
    )
    assert not out.exists()
    assert main(["probe", "-o", str(out), "--force", "--threads", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines()[0].startswith(
        "warning: measured on a busy machine (1-minute load 99 before, 99 after, on "
    )
    assert "fixed cost per call" in captured.out
    # torch's threads are set; NumPy's BLAS threads are its own (recorded as 0)
    expected = 1 if importlib.util.find_spec("torch") else 0
    assert json.loads(out.read_text())["threads"] == expected
    assert host_system(out).name == "host"


def test_a_version_1_probe_is_read_as_before(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"peak_tflops": 0.5, "bandwidth_gbps": 20.0}))
    assert host_predictor(old) == host_system(old)
    assert (host_system(old).peak_tflops, host_system(old).bandwidth_gbps) == (0.5, 20.0)
    with pytest.raises(NerframeError, match=r"version-1 host probe result .* run 'nerframe probe'"):
        host_model(old)
    future = tmp_path / "future.json"
    future.write_text(json.dumps({"format": "nerframe-probe", "version": 5}))
    with pytest.raises(NerframeError, match=r"future.json: field 'version'"):
        host_model(future)


def test_missing_probe_says_what_to_run(probe_file: Path) -> None:
    with pytest.raises(NerframeError, match=r"no host probe result at .*run 'nerframe probe'"):
        nerframe.roofline(nerframe.pipeline("neurex").ops, ["host"])


def test_compare_hand_computed(tmp_path: Path) -> None:
    maps = tmp_path / "m.yaml"
    maps.write_text(USER_MAP)
    g = trace_graph(handmade(), [maps])
    host = System("host", 1e-3, 1.0)  # 1 GFLOP/s, 1 GB/s
    table = compare(g.measured, host)
    costs = nerframe.costs(g.ops)
    flops, size = costs["flops"].to_list(), costs["bytes_total"].to_list()
    predicted = [max(f / 1e9, b / 1e9) for f, b in zip(flops, size, strict=True)]
    assert table["predicted_s"].to_list() == pytest.approx(predicted, rel=1e-12)
    # MLP: 73,728 FLOPs in 73.728 us at 1 GFLOP/s; measured 8 ms.
    assert table["predicted_s"][2] == pytest.approx(73728e-9)
    assert table["ratio"][2] == pytest.approx(0.008 / 73728e-9)
    errors = [
        abs(math.log10(m / p)) for m, p in zip([0.001, 0.003, 0.008, 0.004], predicted, strict=True)
    ]
    assert table["log_error"].to_list() == pytest.approx(errors)
    assert median_log_error(table) == pytest.approx(sorted(errors)[1] / 2 + sorted(errors)[2] / 2)


def test_report_has_the_measured_section(tmp_path: Path, probe_file: Path) -> None:
    nerframe.probe(quick=True, force=True)
    trace = tmp_path / "run.trace.json"
    write_trace(handmade(), trace)
    store = tmp_path / "store"
    nerframe.analyze([str(trace), "neurex"], ["neurex"], store)
    measured = pl.read_parquet(store / "measured" / "pipeline=run" / "part-0.parquet")
    assert measured.schema == TABLES["measured"]
    assert measured["measured_s"].to_list() == [0.002, 0.002, 0.002]
    assert not (store / "measured" / "pipeline=neurex").exists()
    html = (store / "report.html").read_text()
    assert '<section id="measured"><h2>Measured vs predicted</h2>' in html
    assert "run: median |log10(measured / predicted)| = " in html
    assert "measured vs predicted time per traced op" in html  # the chart's spec


def test_report_without_probe_says_so(tmp_path: Path, probe_file: Path) -> None:
    trace = tmp_path / "run.trace.json"
    write_trace(handmade(), trace)
    store = tmp_path / "store"
    nerframe.analyze([str(trace)], ["neurex"], store)
    assert "No host probe result was stored" in (store / "report.html").read_text()


def test_cli_trace_compare(tmp_path: Path, capsys) -> None:
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps({"peak_tflops": 1e-3, "bandwidth_gbps": 1.0}))
    maps = tmp_path / "m.yaml"
    maps.write_text(USER_MAP)
    trace = tmp_path / "run.trace.json"
    write_trace(handmade(), trace)
    args = ["trace", "compare", str(trace), "--map", str(maps), "--probe", str(probe)]
    assert main([*args, "--format", "csv"]) == 0
    captured = capsys.readouterr()
    table = pl.read_csv(captured.out.encode())
    assert table["op_type"].to_list() == ["UniformSampler", "HashEncoding", "MLP", "RGBRenderer"]
    assert table["predicted_s"][2] == pytest.approx(73728e-9)
    costs = nerframe.costs(trace_graph(handmade(), [maps]).ops)
    predicted = [max(f, b) / 1e9 for f, b in costs.select("flops", "bytes_total").rows()]
    errors = sorted(
        abs(math.log10(m / p)) for m, p in zip([1e-3, 3e-3, 8e-3, 4e-3], predicted, strict=True)
    )
    median = (errors[1] + errors[2]) / 2
    assert captured.err.splitlines() == [
        f"warning: {probe} is version 1: predicted with its roofline",
        "warning: trace 'net': unknown module noise (m.Noise, 10.0% of the measured time): "
        "no row; map its class with --map FILE",
        f"median |log10(measured / predicted)|: {median:.3g} (x{10**median:.3g})",
    ]
