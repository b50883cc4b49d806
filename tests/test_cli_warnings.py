"""Issue 19 item 6: every command prints each warning as one ``warning: …`` line, with
non-printable characters escaped, through the one `warnings.showwarning` of the CLI."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import nerframe
from nerframe import cli
from nerframe.trace.tracefile import Call, Trace, write_trace

LINEAR = ["torch.nn.modules.linear.Linear", "torch.nn.modules.module.Module"]
# a module path with a newline and an ESC: a trace is user input, and its names end up
# in warnings; on a terminal the ESC would recolour it
ODD = "odd\n\x1b[31mpart"


def _trace(tmp_path: Path) -> Path:
    fc = Call(0, None, "fc", LINEAR, {"in_features": 3, "out_features": 8}, {}, [[64, 3]],
              [[64, 8]], [], [[]], 1e-4)  # fmt: skip
    odd = Call(1, None, ODD, ["my.Odd"], {}, {}, [[64, 8]], [[64, 8]], [(0, 0)], [[]], 1e-4)
    return write_trace(Trace("m", [fc, odd]), tmp_path / "m.trace.json")


def _warning_lines(err: str) -> list[str]:
    lines = [line for line in err.splitlines() if not line.startswith("wrote ")]
    assert all(line.startswith("warning: ") for line in lines), err
    assert "\x1b" not in err
    return lines


COMMANDS = {
    "costs": ["costs", "{trace}"],
    "schedule": ["schedule", "{trace}", "--hardware", "neurex"],
    "analyze": ["analyze", "{trace}", "--hardware", "neurex", "-o", "{out}", "--no-report"],
    "sweep": ["sweep", "{trace}", "--hardware", "neurex", "--vary", "frequency_mhz=500,1000"],
    "trace ops": ["trace", "ops", "{trace}"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_trace_s_warnings_are_one_escaped_line_each_on_every_command(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = _trace(tmp_path)
    argv = [a.format(trace=trace, out=tmp_path / "store") for a in COMMANDS[command]]
    assert cli.main(argv) == 0
    lines = _warning_lines(capsys.readouterr().err)
    # the unknown module, its newline joined and its ESC escaped, exactly once (a sweep
    # reads the trace at every workload point)
    (unknown,) = [line for line in lines if "unknown module" in line]
    assert "odd \\x1b[31mpart (my.Odd, 50.0% of the measured time)" in unknown


def test_a_sweep_s_warnings_are_lines_too(capsys: pytest.CaptureFixture[str]) -> None:
    # no row reaches 1e9 fps: the front is empty, which the API warns about
    argv = ["sweep", "neurex", "--hardware", "neurex", "--vary", "frequency_mhz=500,1000",
            "--min", "fps=1e9", "--pareto", "fps,energy"]  # fmt: skip
    assert cli.main(argv) == 0
    (line,) = _warning_lines(capsys.readouterr().err)
    assert line == (
        "warning: pareto: none of the 2 rows meets every constraint "
        "(fps breaks most: 2 of 2 rows); the result is empty"
    )


def test_a_warning_under_a_drawn_progress_bar_is_a_line_of_its_own() -> None:
    import io

    from nerframe.progress import Progress

    out = io.StringIO()
    cli._SHOWN.clear()
    with Progress(4, "sweep", "configs", stream=out, enabled=True) as bar:
        bar.advance(1)
        cli._show_warning(UserWarning("slow"), UserWarning, "f.py", 1, out)
        bar.advance(3)
    # the bar is cleared (carriage return, blanks) before the line and redrawn after it
    before, after = out.getvalue().split("warning: slow\n")
    assert before.endswith("\r") and "sweep [" in before and "100%" in after


def test_the_cli_has_one_warning_writer() -> None:
    """No command records warnings to print them its own way, nor writes a
    ``warning:`` line itself: `_show_warning` is the only writer."""
    source = inspect.getsource(cli)
    assert "catch_warnings(record=True)" not in source
    writers = [n for n, f in vars(cli).items() if inspect.isfunction(f) and
               'f"warning: ' in inspect.getsource(f)]  # fmt: skip
    assert writers == ["_show_warning"]


def test_the_api_still_raises_nerframe_warnings(tmp_path: Path) -> None:
    with pytest.warns(nerframe.NerframeWarning) as caught:
        nerframe.read_graph(_trace(tmp_path))
    messages = [str(w.message) for w in caught]
    assert any(ODD in m and "unknown module" in m for m in messages), messages
