"""Fuzzed readers (issue 19 item 4): every input format, mutated, either loads or
raises `InvalidInputError` with one line naming the file — never another exception.

Each test starts from a valid document and applies one drawn mutation: a value
replaced by any JSON value (wrong types, NaN, huge numbers, long text, nesting), a
field deleted or added, a value wrapped in a list or an object, a key given twice,
a deeply nested value, random bytes, a truncation, or another text encoding (the
scene table, a CSV file: a cell replaced, a cell added or dropped, rows repeated, the
header changed, and the same byte-level mutations).

CI runs the bounded profile ``fuzz-ci``; run it long with::

    NERFRAME_FUZZ=long .venv/bin/python -m pytest tests/test_formats_fuzz.py -p no:cacheprovider

(profile ``fuzz-long``: 5,000 random examples per format, or ``$NERFRAME_FUZZ_EXAMPLES``.)
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nerframe
from nerframe.errors import InvalidInputError
from nerframe.hardware import accelerator
from nerframe.scene_table import SCENES, SCHEMA, read_scenes
from nerframe.store import read_manifest, write_manifest
from nerframe.sweeps.spec import sweep_spec
from nerframe.trace.classify import class_map
from nerframe.trace.tracefile import read_trace

settings.register_profile(
    "fuzz-ci",
    max_examples=30,
    deadline=None,
    derandomize=True,  # the suite stays deterministic; the long run explores
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "fuzz-long",
    max_examples=int(os.environ.get("NERFRAME_FUZZ_EXAMPLES", "5000")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = settings.get_profile(
    "fuzz-long" if os.environ.get("NERFRAME_FUZZ") == "long" else "fuzz-ci"
)

ACCELERATORS = Path(nerframe.__file__).with_name("accelerators")

GRAPH: dict[str, Any] = {
    "name": "g",
    "frame_pixels": 4096,
    "rendered_fraction": 1.0,
    "kind": "inference",
    "ops": [
        {"op_type": "UniformSampler", "B": 64, "N": 8},
        {"op_type": "HashEncoding", "B": 64, "N": 8, "num_levels": 4},
        {"op_type": "MLP", "B": 64, "N": 8, "in_dim": 8, "num_layers": 2, "layer_width": 16},
        {"op_type": "RGBRenderer", "B": 64, "N": 8},
    ],
    "edges": [[0, 1], [1, 2, "data"], {"src": 2, "dst": 3}],
}
SPEC: dict[str, Any] = {
    "graphs": ["neurex"],
    "hardware": "neurex",
    "workload": {"rays": [1024, 2048], "MLP.layer_width": [64]},
    "grid": {
        "frequency_mhz": {"start": 500, "stop": 1000, "step": 250},
        "systolic_array_32x32.count": [1, 2],
    },
    "constraints": {"area_mm2": 5, "fps": {"min": 1}},
    "objectives": {"fps": "max", "energy": "min"},
    "chunk_size": 1000,
}
MAP: dict[str, Any] = {
    "description": "fuzz",
    "classes": {
        "m.Sampler": {"op_type": "UniformSampler", "params": {"B": "out[0][0]", "N": "out[0][1]"}},
        "torch.nn.modules.container.Sequential": {"op_type": "MLP", "rule": "linear_layers"},
        "m.Grid": {
            "op_type": "HashEncoding",
            "params": {"num_levels": "attr.levels", "input_dim": "in[0][-1]"},
            "approximate": "a grid",
        },
        "m.Act": {"ignore": True},
    },
}
LINEAR = ["torch.nn.modules.linear.Linear", "torch.nn.modules.module.Module"]


def _call(
    i: int,
    parent: int | None,
    path: str,
    classes: list[str],
    inputs,
    outputs,
    sources,
    output_sources,
    **attributes: Any,
) -> dict[str, Any]:
    return {
        "id": i,
        "parent": parent,
        "path": path,
        "classes": classes,
        "attributes": attributes,
        "params": {"weight": [16, 8]} if classes == LINEAR else {},
        "inputs": inputs,
        "outputs": outputs,
        "input_dtypes": ["float32"] * len(inputs),
        "output_dtypes": ["float32"] * len(outputs),
        "sources": sources,
        "output_sources": output_sources,
        "time_s": 1e-4,
    }


TRACE: dict[str, Any] = {
    "format": "nerframe-trace",
    "version": 2,
    "model": "net",
    "torch": "2.13.0",
    "repeats": 3,
    "warmup": 1,
    "total_s": 1e-3,
    "calls": [
        _call(0, None, "sampler", ["m.Sampler"], [[16, 3]], [[16, 4, 3]], [], [[]]),
        _call(1, None, "grid", ["m.Grid"], [[16, 4, 3]], [[16, 4, 8]], [[0, 0]], [[]], levels=4),
        _call(
            2,
            None,
            "mlp",
            ["torch.nn.modules.container.Sequential"],
            [[16, 4, 8]],
            [[16, 4, 16]],
            [[1, 0]],
            [[[3, 0]]],
        ),
        _call(
            3,
            2,
            "mlp.0",
            LINEAR,
            [[16, 4, 8]],
            [[16, 4, 16]],
            [[1, 0]],
            [[]],
            in_features=8,
            out_features=16,
        ),
        _call(4, None, "odd", ["m.Odd"], [[16, 4, 16]], [[16, 4, 16]], [[2, 0]], [[]]),
    ],
    "extra": {"note": "fuzz"},
}


def _manifest() -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp())
    try:
        write_manifest(
            folder, {"sweep": {"grid": {"frequency_mhz": [500.0]}}, "complete": True, "chunks": 1}
        )
        return json.loads((folder / "store.json").read_text())
    finally:
        shutil.rmtree(folder)


MANIFEST = _manifest()

# --- mutations ----------------------------------------------------------------

_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([0, 1, -1, 2**63, 10**400, 1e-300, 1e308, 0.5, 1.0])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["neurex", "MLP", "data", "float32", "in[0][-1]", "x" * 5_000])
)
VALUES = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
MUTATIONS = (
    "replace",
    "delete",
    "add",
    "wrap",
    "nest",
    "duplicate",
    "deep",
    "bytes",
    "truncate",
    "encode",
)


def _locations(doc: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [here]
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += _locations(value, (*here, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found += _locations(value, (*here, index))
    return found


def _set(doc: Any, where: tuple[Any, ...], value: Any) -> Any:
    if not where:
        return value
    parent = doc
    for step in where[:-1]:
        parent = parent[step]
    parent[where[-1]] = value
    return doc


@st.composite
def mutated(draw: st.DrawFn, valid: dict[str, Any], *, as_yaml: bool = False) -> bytes:
    doc = json.loads(json.dumps(valid))
    how = draw(st.sampled_from(MUTATIONS))
    where = draw(st.sampled_from(_locations(doc)))
    target = doc
    for step in where:
        target = target[step]
    if how == "replace":
        doc = _set(doc, where, draw(VALUES))
    elif how == "delete" and where:
        parent = doc
        for step in where[:-1]:
            parent = parent[step]
        del parent[where[-1]]
    elif how == "add" and isinstance(target, dict):
        target[draw(st.text(min_size=1, max_size=8))] = draw(VALUES)
    elif how == "add" and isinstance(target, list):
        target.append(draw(VALUES))
    elif how == "wrap":
        doc = _set(doc, where, draw(st.sampled_from([[target], {"value": target}])))
    elif how == "nest":
        doc = _set(doc, where, json.loads("[" * 50 + json.dumps(target) + "]" * 50))
    text = (
        yaml.safe_dump(doc, allow_unicode=True)
        if as_yaml and draw(st.booleans())
        else json.dumps(doc, allow_nan=True, ensure_ascii=draw(st.booleans()))
    )
    if how == "duplicate" and isinstance(doc, dict) and doc:
        key = draw(st.sampled_from(sorted(doc)))
        text = "{" + json.dumps(key) + ": " + json.dumps(draw(VALUES)) + ", " + text.lstrip()[1:]
    if how == "deep":
        depth = draw(st.sampled_from([100, 1_000, 100_000]))
        marker = draw(st.sampled_from(["[", '{"a":']))
        closing = "]" if marker == "[" else "}"
        nested = marker * depth + "1" + closing * depth
        text = text.replace('"neurex"', nested, 1) if '"neurex"' in text else nested
    return _as_bytes(draw, text, how)


def _as_bytes(draw: st.DrawFn, text: str, how: str, *, to_encode: str | None = None) -> bytes:
    """`text` in UTF-8, mutated as bytes when `how` says so: bytes inserted, truncated,
    or (`to_encode`, default `text`) written in another encoding."""
    data = text.encode("utf-8")
    if how == "bytes":
        position = draw(st.integers(0, len(data)))
        data = data[:position] + draw(st.binary(min_size=1, max_size=4)) + data[position:]
    elif how == "truncate":
        data = data[: draw(st.integers(0, max(len(data) - 1, 0)))]
    elif how == "encode":
        encoding = draw(st.sampled_from(["utf-16", "utf-32", "latin-1", "cp1252"]))
        data = (text if to_encode is None else to_encode).encode(encoding, "replace")
    return data


def _check(read: Callable[[Path], object], path: Path, data: bytes) -> None:
    """`read(path)` loads, or raises InvalidInputError: one line that names the file."""
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            read(path)
        except InvalidInputError as e:
            message = str(e)
            assert "\n" not in message, message
            assert str(path) in message, message


def _fuzz(
    valid: dict[str, Any], name: str, read: Callable[[Path], object], *, as_yaml: bool = False
) -> None:
    folder = Path(tempfile.mkdtemp())
    try:

        @PROFILE
        @given(mutated(valid, as_yaml=as_yaml))
        def run(data: bytes) -> None:
            _check(read, folder / name, data)

        _check(read, folder / name, json.dumps(valid).encode())  # the valid one loads
        run()
    finally:
        shutil.rmtree(folder)


def test_fuzzed_graph_files() -> None:
    _fuzz(GRAPH, "g.json", nerframe.read_graph)


def test_fuzzed_yaml_graph_files() -> None:
    _fuzz(GRAPH, "g.yaml", nerframe.read_graph, as_yaml=True)


def test_fuzzed_accelerator_files() -> None:
    neurex = json.loads((ACCELERATORS / "neurex.json").read_text())
    _fuzz(neurex, "a.json", accelerator)


def test_fuzzed_sweep_specs() -> None:
    _fuzz(SPEC, "spec.yaml", sweep_spec, as_yaml=True)


def test_fuzzed_trace_files() -> None:
    _fuzz(TRACE, "t.trace.json", read_trace)


def test_fuzzed_traces_read_as_graphs() -> None:
    _fuzz(TRACE, "t.trace.json", nerframe.read_graph)


def test_fuzzed_class_maps() -> None:
    _fuzz(MAP, "map.yaml", lambda path: class_map([path]), as_yaml=True)


def test_fuzzed_store_manifests() -> None:
    _fuzz(MANIFEST, "store.json", lambda path: read_manifest(path.parent))


SCENE_HEADER = ",".join(SCHEMA)
SCENE_ROWS = [
    # name, dataset, width, height, gaussians, samples, unbounded, aabb_scale, march
    # steps, then the four sources
    ["lego", "NeRF-Synthetic", "800", "800", "", "", "", "", "", "a paper p.9", "none", "-", "-"],
    [
        "room",
        "Mip-NeRF360",
        "1557",
        "1038",
        "1548960",
        "59",
        "true",
        "16",
        "975",
        '"p.9, T1"',
        "3DGS code",
        "derived",
        "derived",
    ],
]
_CELLS = (
    st.text(max_size=12)
    | st.sampled_from(["", "0", "-1", "1.5", "1e3", "nan", "inf", "true", '"', '""', "a,b"])
    | st.integers(min_value=-(2**70), max_value=2**70).map(str)
    | st.sampled_from([str(2**63), "x" * 5_000, "Lego", "my scene", "lego"])
)


@st.composite
def mutated_scene_table(draw: st.DrawFn) -> bytes:
    rows = [list(r) for r in SCENE_ROWS]
    how = draw(st.sampled_from(["cell", "column", "row", "header", *MUTATIONS[-3:]]))
    header = SCENE_HEADER
    if how == "cell":
        row, column = draw(st.integers(0, len(rows) - 1)), draw(st.integers(0, len(SCHEMA) - 1))
        rows[row][column] = draw(_CELLS)
    elif how == "column":  # a cell too many or too few
        row = draw(st.sampled_from(rows))
        row.append(draw(_CELLS)) if draw(st.booleans()) else row.pop()
    elif how == "row":  # a copy (a name twice), an empty line or many rows
        rows += draw(st.sampled_from([[rows[0]], [[]], [rows[1]] * 2_000]))
    elif how == "header":
        header = draw(st.sampled_from([header.upper(), header + ",extra", "", "\ufeff" + header]))
    text = "\n".join([header, *(",".join(r) for r in rows)]) + "\n"
    return _as_bytes(draw, text, how, to_encode=text.replace("lego", "légo"))


def test_fuzzed_scene_tables() -> None:
    folder = Path(tempfile.mkdtemp())
    path = folder / "scenes.csv"
    try:
        valid = "\n".join([SCENE_HEADER, *(",".join(r) for r in SCENE_ROWS)]) + "\n"
        _check(read_scenes, path, valid.encode())
        assert read_scenes(path)["name"].to_list() == ["lego", "room"]  # the valid one loads

        @PROFILE
        @given(mutated_scene_table())
        def run(data: bytes) -> None:
            _check(read_scenes, path, data)

        run()
        # and the packaged table, as shipped
        _check(read_scenes, path, SCENES.read_bytes())
    finally:
        shutil.rmtree(folder)
