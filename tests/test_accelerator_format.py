"""The declared accelerator format (`nerframe.formats.accelerator`): the built-ins load
as the hand-written reader it replaced loaded them, the policy of every input file
holds, and its JSON Schema judges files as the reader does."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import math
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import nerframe
from nerframe.accelerator_model import Module
from nerframe.cli import main
from nerframe.errors import InvalidInputError
from nerframe.formats import schema
from nerframe.hardware import BUILTIN, accelerator

ACCELERATORS = Path(nerframe.__file__).with_name("accelerators")
RECORDED = Path(__file__).with_name("data") / "builtin_accelerators.json"
RECORDING = json.loads(RECORDED.read_text(encoding="utf-8"))["builtins"]


def _plain(value: Any) -> Any:
    """`value` with NaN as a marker string, so that equal objects compare equal."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _digest(name: str) -> str:
    """The file's digest without its ``assumptions`` block, the last key (added after the
    recording; tests/test_bands.py checks it)."""
    text = (ACCELERATORS / f"{name}.json").read_bytes()
    head, found, _ = text.rpartition(b',\n  "assumptions": ')
    return hashlib.sha256(head + b"\n}\n" if found else text).hexdigest()


@pytest.mark.parametrize("name", sorted(RECORDING))
def test_builtins_load_as_before(name: str) -> None:
    # oracle: the Accelerator objects the hand-written reader loaded (recorded before
    # the declared format replaced it), for every built-in of the recording whose files
    # are unchanged (built-ins added since have no recording)
    entry = RECORDING[name]
    changed = [f for f, digest in entry["files"].items() if _digest(f) != digest]
    if changed:
        pytest.skip(f"{', '.join(changed)}.json changed since the recording")
    loaded = dataclasses.asdict(accelerator(name))
    loaded["path"] = f"nerframe/accelerators/{name}.json"
    loaded.pop("assumptions")  # added after the recording (tests/test_bands.py)
    before = entry["accelerator"]
    # fields added since the recording hold their defaults in an unchanged file
    _drop_new_fields(loaded, before, nerframe.Accelerator)
    for module, old in zip(loaded["modules"], before["modules"], strict=True):
        _drop_new_fields(module, old, Module)
    assert _plain(loaded) == _plain(before)


def _drop_new_fields(loaded: dict[str, Any], recorded: dict[str, Any], cls: type) -> None:
    defaults = {f.name: f.default for f in dataclasses.fields(cls)}
    for key in set(loaded) - set(recorded):
        assert loaded.pop(key) == defaults[key], key


def _file(tmp_path: Path, data: object, name: str = "a.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def _neurex() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ACCELERATORS / "neurex.json").read_text())
    return data


@pytest.mark.parametrize(
    ("where", "value", "message"),
    [
        # booleans are not numbers, fractions are not integers, text is not a number
        (("modules", 0, "count"), True, "field 'modules[0].count': expected int, got true"),
        (("modules", 0, "count"), 8.0, "field 'modules[0].count': expected int, got 8.0"),
        (("dram_pj_per_byte",), "20", "field 'dram_pj_per_byte': expected float, got \"20\""),
        (("modules", 1, "on_chip"), 1, "field 'modules[1].on_chip': expected bool, got 1"),
        (("sram", 0, "size_kb"), 0, "field 'sram[0].size_kb': expected float > 0.0, got 0"),
        (("name",), "  ", "field 'name': expected str matching regex '\\\\S', got \"  \""),
        (("extends",), None, "field 'extends': expected str, got null"),
        (("modules", 1, "array"), [32, 2**21], "field 'modules[1].array[1]': expected int <= "),
        (("sram", 0, "colour"), "red", "unknown field 'sram[0].colour'"),
    ],
)
def test_the_policy_of_every_input_file(
    tmp_path: Path, where: tuple[str | int, ...], value: object, message: str
) -> None:
    data = _neurex()
    target: Any = data
    for step in where[:-1]:
        target = target[step]
    target[where[-1]] = value
    path = _file(tmp_path, data)
    with pytest.raises(InvalidInputError) as err:
        accelerator(path)
    assert str(err.value).startswith(f"{path}: ")
    assert message in str(err.value)


def test_a_file_that_extends_inherits_what_it_leaves_out(tmp_path: Path) -> None:
    plug = {
        "name": "plug",
        "extends": "base.json",  # found beside the naming file, not in the current folder
        "modules": [
            {
                "name": "sorter",
                "type": "SORTING",
                "count": 1,
                "throughput_ops_per_cycle": 4,
                "latency_cycles": 0,
                "area_um2": 1,
                "power_uw": 1,
            }
        ],
    }
    base = {**_neurex(), "name": "base", "gather_sector_bytes": 32, "memory_efficiency": 0.5}
    (tmp_path / "sub").mkdir()
    _file(tmp_path / "sub", base, "base.json")
    a = accelerator(_file(tmp_path / "sub", plug, "plug.json"))
    assert (a.frequency_mhz, a.dram_bandwidth_gbps, a.technology_nm) == (1000.0, 25.6, 28.0)
    assert (a.gather_sector_bytes, a.memory_efficiency, a.kind) == (32.0, 0.5, "accelerator")
    assert [m.name for m in a.modules][-1] == "sorter" and len(a.modules) == 4
    without = {k: v for k, v in plug.items() if k != "extends"}
    with pytest.raises(InvalidInputError, match="missing field 'frequency_mhz'"):
        accelerator(_file(tmp_path, without, "alone.json"))


def test_the_schema_agrees_with_the_reader(tmp_path: Path) -> None:
    # jsonschema (a peer validator) judges the same documents as the reader
    accelerator_schema = schema("accelerator")
    for name in BUILTIN:
        jsonschema.validate(
            json.loads((ACCELERATORS / f"{name}.json").read_text()), accelerator_schema
        )
    bad_documents = []
    for change in (
        lambda d: d.update(frequency_mhz=1e-300),
        lambda d: d["modules"][0].update(count=0),
        lambda d: d["modules"][0].update(unit="photons"),
        lambda d: d["modules"].clear(),
        lambda d: d.update(kind="fpga"),
        lambda d: d["sram"][0].pop("size_kb"),
    ):
        data = copy.deepcopy(_neurex())
        change(data)
        bad_documents.append(data)
    for i, bad in enumerate(bad_documents):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, accelerator_schema)
        with pytest.raises(InvalidInputError):
            accelerator(_file(tmp_path, bad, f"bad{i}.json"))


def test_nerframe_schema_accelerator(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "accelerator"]) == 0
    printed = json.loads(capsys.readouterr().out)
    fields = printed["$defs"]["AcceleratorFile"]["properties"]
    assert {"extends", "modules", "sram_um2_per_kb", "gather_sector_bytes"} <= fields.keys()
    module = printed["$defs"]["ModuleRecord"]
    assert module["properties"]["dataflow"] == {"enum": ["is", "os", "ws"]}  # sorted
    assert set(module["required"]) == {
        "name",
        "type",
        "count",
        "latency_cycles",
        "area_um2",
        "power_uw",
    }


def test_docs_formats_names_every_field() -> None:
    import msgspec

    from nerframe.formats.accelerator import AcceleratorFile, ModuleRecord, SramRecord

    docs = Path(__file__).parents[1] / "docs" / "formats.md"
    section = docs.read_text(encoding="utf-8").split("## Accelerator file")[1].split("\n## ")[0]
    for model in (AcceleratorFile, ModuleRecord, SramRecord):
        for info in msgspec.structs.fields(model):
            assert f"`{info.encode_name}`" in section, (model.__name__, info.encode_name)


def test_docs_formats_names_every_field_of_the_original_format() -> None:
    import msgspec

    from nerframe.formats import rendersim

    docs = Path(__file__).parents[1] / "docs" / "formats.md"
    text = docs.read_text(encoding="utf-8")
    section = text.split("### The original framework's format")[1].split("\n## ")[0]
    records = [
        value
        for value in vars(rendersim).values()
        if isinstance(value, type)
        and issubclass(value, msgspec.Struct)
        and value.__module__ == rendersim.__name__
    ]
    assert len(records) == 8
    for model in records:
        for info in msgspec.structs.fields(model):
            assert f"`{info.encode_name}`" in section, (model.__name__, info.encode_name)
