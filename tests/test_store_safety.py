"""Stores and inputs are never overwritten, names are literal, YAML aliases are capped:
the defects D1, D22 and D2 of ``shared/research/newuser_defects.md``, each with the
report's case.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from pathlib import Path

import pytest

from nerframe import cli

SWEEP = ["sweep", "neurex", "--hardware", "neurex"]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = cli.main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def one_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    status, _, err = run(capsys, *args)
    lines = err.splitlines()
    assert status == 1 and len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def digest(folder: Path) -> dict[str, str]:
    """Every file below `folder` (hidden ones included) and its content's hash."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# ------------------------------------------------------------------ D1: -o into a store


@pytest.fixture
def stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "analyze", "neurex", "--hardware", "neurex", "-o", "S")[0] == 0
    sweep = [*SWEEP, "--vary", "frequency_mhz=200,400,600", "--chunk-size", "2", "-o", "W"]
    assert run(capsys, *sweep)[0] == 0
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        ["report", "S", "-o", "S/store.json"],
        ["report", "S", "-o", "S/summary.md"],
        ["query", "select 1 as a", "--store", "W", "-o", "W/store.json"],
        [
            "query",
            "select * from sweep where config < 1",
            "--store",
            "W",
            "-o",
            "W/sweep/graph=neurex/hardware=neurex/part-000000.parquet",
        ],
        ["costs", "neurex", "-o", "S/summary/pipeline=neurex/hardware=neurex/part-0.parquet"],
        ["costs", "neurex", "-o", "S/new/costs.csv"],  # a new file inside a store too
        ["analyze", "neurex", "--hardware", "neurex", "-o", "S/inner", "--no-report"],
        [*SWEEP, "--vary", "frequency_mhz=1", "-o", "W/sweep/more"],
        [*SWEEP, "--vary", "frequency_mhz=1", "--pareto", "fps,energy", "--chart", "S/p.png"],
        ["query", "select 1 as a", "--store", "W", "-o", "W"],  # the store read
    ],
)
def test_no_output_inside_a_store(stores: Path, capsys, args: list[str]) -> None:
    before = {name: digest(stores / name) for name in ("S", "W")}
    line = one_error(capsys, *args)
    assert args[args.index("-o" if "-o" in args else "--chart") + 1] in line
    assert {name: digest(stores / name) for name in ("S", "W")} == before
    # the stores still answer, with every row
    assert run(capsys, "query", "select count(*) n from sweep", "--store", "W")[1].split()[-1] == (
        "3"
    )
    assert run(capsys, "report", "S")[0] == 0


def test_the_reports_own_place_and_outside_a_store_are_fine(stores: Path, capsys) -> None:
    assert run(capsys, "report", "S", "-o", "S/report.html")[0] == 0
    assert run(capsys, "query", "select 1 as a", "--store", "W", "-o", "out.csv")[0] == 0
    assert (stores / "out.csv").read_text() == "a\n1\n"
    # a store beside another, and a store replaced in place, are not inside a store
    again = ["analyze", "neurex", "--hardware", "neurex", "-o", "S", "--no-report"]
    assert run(capsys, *again)[0] == 0


def test_no_output_over_an_input(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    graph = {"name": "g", "ops": [{"op_type": "UniformSampler", "B": 64, "N": 8}], "edges": []}
    Path("g.json").write_text(json.dumps(graph))
    spec = Path("spec.yaml")
    spec.write_text("graphs: [g.json]\nhardware: neurex\ngrid: {frequency_mhz: [100]}\n")
    accel = Path(cli.__file__).parent / "accelerators" / "neurex.json"
    Path("a.json").write_bytes(accel.read_bytes())
    before = digest(tmp_path)
    for args in (
        ["costs", "g.json", "-o", "g.json"],
        ["hardware", "a.json", "-o", "a.json"],
        ["schedule", "g.json", "--hardware", "a.json", "-o", "./a.json"],
        ["sweep", "--spec", "spec.yaml", "-o", "spec.yaml"],
        ["sweep", "--spec", "spec.yaml", "-o", "."],  # the folder holding the spec
    ):
        line = one_error(capsys, *args)
        assert "an input of this command" in line, line
    assert digest(tmp_path) == before


# ------------------------------------------------------------------ D22: literal names


@pytest.mark.parametrize("name", ["st*", "st?", "st["])
def test_glob_characters_in_a_store_name_read_only_that_store(
    tmp_path: Path, monkeypatch, capsys, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run(capsys, *SWEEP, "--vary", "frequency_mhz=100,200,300", "-o", "st1")[0] == 0
    assert run(capsys, *SWEEP, "--vary", "frequency_mhz=100,200,300,400", "-o", "st2")[0] == 0
    status, out, _ = run(capsys, *SWEEP, "--vary", "frequency_mhz=500", "-o", name)
    assert status == 0
    # one configuration: one printed row (a header, a rule and the row)
    rows = [line for line in out.splitlines() if line.strip().startswith("0 ")]
    assert len(rows) == 1 and " 500 " in rows[0], out
    status, out, _ = run(capsys, "query", "select count(*) n from sweep", "--store", name)
    assert status == 0 and out.split()[-1] == "1"
    _, out, _ = run(capsys, "query", "pareto", "--store", name, "--format", "csv")
    assert out.count("\n") == 2 and ",500.0," in out.splitlines()[1]  # its one row


def test_glob_characters_in_graph_and_accelerator_names(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    files = []
    for i, (name, rays) in enumerate((("g*", 64), ("g1", 128), ("g?", 256))):
        ops = [{"op_type": "UniformSampler", "B": rays, "N": 8}, {"op_type": "RGBRenderer"}]
        ops[1].update(B=rays, N=8)
        Path(f"g{i}.json").write_text(json.dumps({"name": name, "ops": ops, "edges": [[0, 1]]}))
        files.append(f"g{i}.json")
    neurex = json.loads((Path(cli.__file__).parent / "accelerators" / "neurex.json").read_text())
    for i, name in enumerate(("acc*", "acc1")):
        Path(f"a{i}.json").write_text(json.dumps({**neurex, "name": name}))
    args = ["analyze", *files, "--hardware", "a0.json", "a1.json", "-o", "gan", "--no-report"]
    assert run(capsys, *args)[0] == 0
    sql = "select graph, accelerator, count(*) n from {} group by all order by all"
    _, out, _ = run(capsys, "query", sql.format("summary"), "--store", "gan", "--format", "csv")
    expected = [f"{g},{a},1" for g in ("g*", "g1", "g?") for a in ("acc*", "acc1")]
    assert sorted(out.splitlines()[1:]) == sorted(expected)
    ops = "select graph, count(*) n from ops group by all order by all"
    _, out, _ = run(capsys, "query", ops, "--store", "gan", "--format", "csv")
    assert sorted(out.splitlines()[1:]) == ["g*,2", "g1,2", "g?,2"]  # 2 ops each
    _, out, _ = run(capsys, "query", "matrix", "--store", "gan", "--format", "csv")
    assert len(out.splitlines()) == 1 + 6  # one row per pair


# ------------------------------------------------------------------ D2: YAML alias bombs


def bomb(levels: int = 9) -> str:
    """The report's "billion laughs": `levels` levels of 9 aliases each (384 bytes for 9)."""
    lines = ["a: &a [x,x,x,x,x,x,x,x,x]"]
    for previous, name in itertools.pairwise("abcdefghijklmnop"[:levels]):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("file", "tail", "args"),
    [
        (
            "spec.yaml",
            "graphs: [neurex]\nhardware: neurex\ngrid: {frequency_mhz: [100, 200]}\nnotes: *i\n",
            ["sweep", "--spec"],
        ),
        ("spec2.yaml", "graphs: *i\nhardware: neurex\n", ["sweep", "--spec"]),
        ("map.yaml", "classes: *i\n", None),
        ("graph.yaml", "ops: *h\n", ["costs"]),
    ],
)
def test_yaml_alias_bombs_are_refused_at_once(
    tmp_path: Path, monkeypatch, capsys, file: str, tail: str, args: list[str] | None
) -> None:
    monkeypatch.chdir(tmp_path)
    Path(file).write_text(bomb() + tail)
    if args is None:  # a class map is read by trace ops/compare, after its trace
        from nerframe.errors import InvalidInputError
        from nerframe.trace.classify import _read_map

        start = time.perf_counter()
        with pytest.raises(InvalidInputError, match=r"map\.yaml: YAML aliases expand to"):
            _read_map(Path(file))
    else:
        start = time.perf_counter()
        line = one_error(capsys, *args, file)
        assert line.startswith(f"error: {file}: YAML aliases expand to "), line
    assert time.perf_counter() - start < 1.0


def test_ordinary_anchors_and_self_reference(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    Path("spec.yaml").write_text(
        "graphs: [neurex]\nhardware: neurex\n"
        "grid: {frequency_mhz: &f [100, 200], dram_bandwidth_gbps: *f}\n"
    )
    status, _, err = run(capsys, "sweep", "--spec", "spec.yaml")
    assert status == 0, err
    Path("loop.yaml").write_text("graphs: &a [neurex, *a]\nhardware: neurex\n")
    line = one_error(capsys, "sweep", "--spec", "loop.yaml")
    assert line == "error: loop.yaml: malformed YAML: a value contains itself through an alias"
