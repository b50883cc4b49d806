"""D2 (newuser_defects.md): a trace's unknown modules must not vanish. The report's model
(Appendix B): 1,024 rays × 32 samples, its sampler, encoder and renderer unmapped, so
only the Linear layers become rows; B and N come from their [rays, samples, features]
inputs, and the store and report name the unknown modules."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import nerframe
from nerframe import cli
from nerframe.trace.tracefile import Call, Trace, write_trace

LINEAR = ["torch.nn.modules.linear.Linear", "torch.nn.modules.module.Module"]
SEQUENTIAL = ["torch.nn.modules.container.Sequential", "torch.nn.modules.module.Module"]
RELU = ["torch.nn.modules.activation.ReLU", "torch.nn.modules.module.Module"]
RAYS, SAMPLES = 1024, 32


def _linear(i: int, parent: int | None, path: str, fan_in: int, fan_out: int, source: int) -> Call:
    return Call(
        i,
        parent,
        path,
        LINEAR,
        {"in_features": fan_in, "out_features": fan_out},
        {"weight": [fan_out, fan_in], "bias": [fan_out]},
        [[RAYS, SAMPLES, fan_in]],
        [[RAYS, SAMPLES, fan_out]],
        [(source, 0)],
        [[]],
        1e-4,
    )


def _trace(tmp_path: Path) -> Path:
    calls = [
        Call(0, None, "sampler", ["mymodels.Sampler"], {}, {}, [[RAYS, 6]],
             [[RAYS, SAMPLES, 3], [RAYS, SAMPLES]], [], [[], []], 1e-4),
        Call(1, None, "enc", ["mymodels.PosEnc"], {"n_freqs": 10}, {}, [[RAYS, SAMPLES, 3]],
             [[RAYS, SAMPLES, 63]], [(0, 0)], [[]], 1e-4),
        Call(2, None, "field", SEQUENTIAL, {}, {}, [[RAYS, SAMPLES, 63]],
             [[RAYS, SAMPLES, 128]], [(1, 0)], [[(5, 0)]], 6e-4),
        _linear(3, 2, "field.0", 63, 128, 1),
        Call(4, 2, "field.1", RELU, {}, {}, [[RAYS, SAMPLES, 128]], [[RAYS, SAMPLES, 128]],
             [(3, 0)], [[]], 1e-5),
        _linear(5, 2, "field.2", 128, 128, 4),
        _linear(6, None, "sigma", 128, 1, 2),
        Call(7, None, "render", ["mymodels.Renderer"], {}, {},
             [[RAYS, SAMPLES, 1], [RAYS, SAMPLES]], [[RAYS, 3]], [(6, 0), (0, 1)], [[]], 1e-4),
    ]  # fmt: skip
    return write_trace(Trace("mine", calls, total_s=1e-3), tmp_path / "run.trace.json")


def _quiet_graph(path: Path) -> nerframe.Graph:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", nerframe.NerframeWarning)
        return nerframe.read_graph(path)


def test_b_and_n_come_from_the_linear_inputs_not_rows_times_one(tmp_path: Path) -> None:
    g = _quiet_graph(_trace(tmp_path))
    assert g.ops["op_type"].to_list() == ["MLP"] * 3
    # each Linear's input is [1024, 32, features]: B = 1024 rays, N = 32 samples
    assert set(g.ops.select("B", "N").rows()) == {(RAYS, SAMPLES)}
    summary = nerframe.schedule(g, "neurex").summary
    # an 800 x 800 frame in batches of 1,024 rays: 640,000 / 1,024 = 625 (the report's
    # fallback B = 32,768, N = 1 gave 20)
    assert summary["batches"].item() == 625


def test_a_flat_input_still_falls_back_to_rows_and_says_so(tmp_path: Path) -> None:
    fc = Call(0, None, "fc", LINEAR, {"in_features": 3, "out_features": 4}, {}, [[512, 3]],
              [[512, 4]], [], [[]], 1e-4)  # fmt: skip
    path = write_trace(Trace("flat", [fc]), tmp_path / "flat.trace.json")
    with pytest.warns(nerframe.NerframeWarning, match=r"B and N of 1 row\(s\) \(fc\) are guessed"):
        g = nerframe.read_graph(path)
    assert g.ops.select("B", "N").row(0) == (512, 1)


def test_the_api_warns_of_each_unknown_module(tmp_path: Path) -> None:
    with pytest.warns(nerframe.NerframeWarning) as caught:
        nerframe.read_graph(_trace(tmp_path))
    unknown = [str(w.message) for w in caught if "unknown module" in str(w.message)]
    assert len(unknown) == 3
    assert any("enc (mymodels.PosEnc, 10.0% of the measured time)" in m for m in unknown)


def test_schedule_on_the_command_line_names_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["schedule", str(_trace(tmp_path)), "--hardware", "neurex"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert sum("unknown module" in line for line in err) == 3
    assert any("are guessed" in line for line in err)


def test_the_store_and_the_report_list_the_unknown_modules(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", nerframe.NerframeWarning)
        nerframe.analyze([_trace(tmp_path)], ["neurex"], output=store)
    run = json.loads((store / "store.json").read_text())["run"]
    found = run["unknown_modules"]["run"]
    assert found["count"] == 3
    assert found["classes"] == ["mymodels.Sampler", "mymodels.PosEnc", "mymodels.Renderer"]
    assert found["share"] == pytest.approx(3e-4 / 1e-3)  # 3 x 0.1 ms of the 1 ms forward
    html = (store / "report.html").read_text()
    assert "Unknown modules" in html
    assert "run: 3 unknown module(s) (mymodels.Sampler, mymodels.PosEnc, mymodels.Renderer" in html
    # the manifest still reads back (its typed model knows the field)
    assert nerframe.store.read_manifest(store)["run"]["unknown_modules"] == run["unknown_modules"]
