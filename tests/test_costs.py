"""Cost formulas: the spec's worked examples, pipeline totals, and kernel == reference."""

from __future__ import annotations

import math
import re
import threading

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nerframe
from nerframe.kernels.costs import PARALLEL_FROM
from nerframe.kernels.reference_costs import reference_cost
from nerframe.schemas import COSTS
from nerframe.taxonomy import OP_TYPES, PARAMETER, op_types

MLP_EXAMPLE = {
    "op_type": "MLP",
    "B": 4096,
    "N": 64,
    "in_dim": 32,
    "num_layers": 3,
    "layer_width": 64,
    "out_dim": 4,
}


def cost_of(**record: object) -> dict[str, object]:
    return nerframe.costs(nerframe.operators([record])).row(0, named=True)


def test_hash_encoding_worked_example() -> None:
    c = cost_of(op_type="HashEncoding", B=4096, N=64, input_dim=3, num_levels=16)
    assert (c["flops"], c["elems_in"], c["elems_out"]) == (369_098_752, 786_432, 8_388_608)


def test_mlp_worked_example() -> None:
    c = cost_of(**MLP_EXAMPLE)
    assert c["flops"] == 3_355_443_200
    assert (c["elems_in"], c["elems_w"], c["elems_out"]) == (8_388_608, 6_532, 1_048_576)


def test_mlp_backward_worked_example() -> None:
    assert cost_of(**MLP_EXAMPLE, backward=True)["flops"] == 6_710_886_400


def test_frustum_culling_projection_worked_example() -> None:
    assert cost_of(op_type="FrustumCullingProjection", G=262_144)["flops"] == 6_619_922_432


PIPELINE_TOTALS = {
    "icarus": 825_444_532_224,
    "neurex": 7_887_388_672,
    "cicero": 7_897_612_288,
    "gscore": 10_463_477_760,
    "gaurast": 6_688_604_160,
    "srender": 15_785_800_496,
    "gsarch": 6_637_486_086,
    "gbu": 6_645_088_256,
    "instant3d": 10_441_457_664,
}


@pytest.mark.parametrize("name", PIPELINE_TOTALS)
def test_pipeline_totals(name: str) -> None:
    g = nerframe.pipeline(name, model="spec")
    assert nerframe.costs(g.ops)["flops"].sum() == PIPELINE_TOTALS[name]
    assert nerframe.costs(nerframe.expand(g).ops)["flops"].sum() == PIPELINE_TOTALS[name]


def test_pipeline_totals_match_the_spec_table(shared) -> None:
    text = (shared / "spec" / "pipelines.md").read_text()
    found = dict(re.findall(r"^\| (\w+) \| \d+ \| ([\d,]+) \|$", text, re.M))
    assert {k: int(v.replace(",", "")) for k, v in found.items()} == PIPELINE_TOTALS


def test_bytes_and_intensity_follow_bitwidth() -> None:
    c = cost_of(op_type="RGBRenderer", B=10, N=4, bitwidth=4)
    assert (c["elems_in"], c["elems_w"], c["elems_out"]) == (120, 40, 30)
    assert (c["bytes_in"], c["bytes_w"], c["bytes_out"]) == (60.0, 20.0, 15.0)
    assert c["bytes_total"] == 95.0
    assert c["intensity"] == 240 / 95


def test_zero_bytes_gives_zero_intensity() -> None:
    ops = nerframe.operators([{"op_type": "HashLookup", "B": 1, "N": 1}])
    assert nerframe.costs(ops)["flops"].item() == 0.0
    c = cost_of(op_type="Recovery", B=1, N=1)
    assert c["intensity"] == c["flops"] / c["bytes_total"]


def test_backward_elements_swap() -> None:
    fwd = cost_of(op_type="Sorting", B=8, N=16)
    bwd = cost_of(op_type="Sorting", B=8, N=16, backward=True)
    assert bwd["flops"] == fwd["flops"]
    assert bwd["elems_in"] == fwd["elems_out"] + fwd["elems_in"]
    assert bwd["elems_w"] == fwd["elems_w"]
    assert bwd["elems_out"] == fwd["elems_in"] + fwd["elems_w"]


def test_log2_terms_at_one_sample() -> None:
    assert cost_of(op_type="Sorting", B=8, N=1)["flops"] == 0.0
    assert cost_of(op_type="Rearrangement", B=8, N=1)["flops"] == 8 + 1
    assert cost_of(op_type="PointArrange", B=1, N=1)["flops"] == 4.0


@pytest.mark.parametrize(
    ("layers", "skips", "weights"),
    [
        (1, [], 32 * 4),
        (2, [], 32 * 64 + 64 * 4),
        (3, [0], 32 * 64 + 64 * 64 + 64 * 4),
        (3, [1], 32 * 64 + 96 * 64 + 64 * 4),
        (3, [2, 7], 32 * 64 + 64 * 64 + 64 * 4),
    ],
)
@pytest.mark.filterwarnings("ignore:ops row .* skip_connections entries")
def test_mlp_layer_shapes(layers: int, skips: list[int], weights: int) -> None:
    c = cost_of(**{**MLP_EXAMPLE, "num_layers": layers, "skip_connections": skips})
    assert c["flops"] == 2 * 4096 * 64 * weights


def test_ceil_of_float_product() -> None:
    # 0.07 * 100 is 7.000000000000001 in float64, so the spec's ceil gives 8.
    assert cost_of(op_type="FrustumCulling", G=100, cull_ratio=0.07)["elems_out"] == 8


def test_costs_schema() -> None:
    out = nerframe.costs(nerframe.pipeline("gbu").ops)
    assert out.schema == COSTS


def test_element_overflow_is_refused() -> None:
    ops = nerframe.operators([{"op_type": "UniformSampler", "B": 2**40, "N": 2**20}])
    with pytest.raises(nerframe.NerframeError, match=r"row 0 .*2\*\*53"):
        nerframe.costs(ops)


def test_flops_beyond_2_53_are_float64_products() -> None:
    record = {**MLP_EXAMPLE, "B": 2**20, "N": 2**20, "in_dim": 1, "layer_width": 512}
    row = nerframe.costs(nerframe.operators([record])).row(0, named=True)
    assert row["elems_in"] == 2**40
    assert row["flops"] > 2**53
    assert row["flops"] == pytest.approx(reference_cost(row)["flops"], rel=1e-15)


# --- kernel == scalar reference on random rows -------------------------------------------

_VALUES = {
    "B": st.integers(1, 5000),
    "N": st.integers(1, 300),
    "G": st.integers(1, 2_000_000),
    "input_dim": st.integers(1, 4),
    "num_levels": st.integers(1, 32),
    "features_per_level": st.integers(1, 8),
    "log2_hashmap_size": st.integers(0, 24),
    "num_features": st.integers(1, 512),
    "use_sin_cos": st.booleans(),
    "in_dim": st.integers(1, 512),
    "num_layers": st.integers(1, 10),
    "layer_width": st.integers(1, 512),
    "out_dim": st.integers(1, 512),
    "skip_connections": st.lists(st.integers(0, 12), max_size=4),
    "use_bias": st.booleans(),
    "degree": st.integers(0, 5),
    "cull_ratio": st.floats(1e-6, 1.0),
    "image_w": st.integers(1, 4000),
    "image_h": st.integers(1, 4000),
    "tile": st.integers(1, 64),
    "tile_keep_ratio": st.floats(1e-6, 1.0),
    "tiles_per_gaussian": st.integers(0, 20_000),
    "coarse_prop": st.floats(1e-6, 1.0),
    "patch_size": st.integers(1, 8),
    "channels": st.integers(1, 8),
}


@st.composite
def records(draw: st.DrawFn) -> dict[str, object]:
    op = op_types()[draw(st.sampled_from(OP_TYPES))]
    record: dict[str, object] = {"op_type": op.name}
    for name in op.parameters:
        if name in op.required or draw(st.booleans()):
            record[name] = draw(_VALUES[name])
    record["backward"] = draw(st.booleans())
    record["bitwidth"] = draw(st.sampled_from([1, 4, 8, 16, 32]))
    return record


# Random skip indices may lie beyond the layers: their warning is expected here.
@pytest.mark.filterwarnings("ignore:ops row .* skip_connections entries")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(records(), min_size=1, max_size=40))
def test_kernel_equals_reference(rows: list[dict[str, object]]) -> None:
    out = nerframe.costs(nerframe.operators(rows))
    for row in out.iter_rows(named=True):
        expected = reference_cost(row)
        got = {k: row[k] for k in expected}
        assert got == expected, row["op_type"]


def test_every_op_type_is_covered_by_the_reference() -> None:
    rows = [
        {"op_type": t.name, **{p: 3 for p in t.required if p != "num_layers"}}
        | ({"num_layers": 2} if "num_layers" in t.required else {})
        for t in op_types().values()
    ]
    out = nerframe.costs(nerframe.operators(rows))
    assert out.height == 38
    for row in out.iter_rows(named=True):
        assert reference_cost(row)["flops"] == row["flops"]
        assert all(math.isfinite(row[c]) for c in ("flops", "bytes_total", "intensity"))


def test_costs_of_a_sliced_table_match() -> None:
    ops = nerframe.pipeline("srender").ops
    whole = nerframe.costs(ops)
    part = nerframe.costs(ops.slice(3, 5))
    assert part.equals(whole.slice(3, 5))
    assert np.array_equal(part["flops"].to_numpy(), whole["flops"].to_numpy()[3:8])


# --- the kernel's checks are validate(thorough=False)'s -------------------------------


def one_of_each() -> pl.DataFrame:
    """A valid ops table: a UniformSampler, then one row of every op type."""
    rows = [{"op_type": "UniformSampler", "B": 2, "N": 2}]
    for t in op_types().values():
        record = {"op_type": t.name, **{p: 3 for p in t.required}}
        if t.name == "MLP":
            record |= {"num_layers": 3, "skip_connections": [1]}
        rows.append(record)
    return nerframe.operators(rows)


def with_value(ops: pl.DataFrame, row: int, column: str, value: object) -> pl.DataFrame:
    """`ops` with one cell replaced (None for null), keeping the ops schema."""
    series = ops[column].to_list()
    series[row] = value
    return ops.with_columns(pl.Series(column, series, dtype=ops.schema[column]))


USED = [(t.name, p) for t in op_types().values() for p in t.parameters]


@pytest.mark.parametrize(("op_type", "parameter"), USED)
def test_a_missing_used_parameter_is_refused(op_type: str, parameter: str) -> None:
    ops = one_of_each()
    row = 1 + OP_TYPES.index(op_type)
    broken = with_value(ops, row, parameter, None)
    where = rf"^ops row {row} \(op_id {row}, {op_type}\)"
    message = rf"{where}: missing required parameter '{parameter}'$"
    with pytest.raises(nerframe.NerframeError, match=message):
        nerframe.costs(broken)


@pytest.mark.parametrize(
    ("op_type", "parameter"),
    [(t, p) for t, p in USED if PARAMETER[p].kind in ("count", "ratio", "indices")],
)
def test_a_used_parameter_out_of_range_is_refused(op_type: str, parameter: str) -> None:
    ops = one_of_each()
    row = 1 + OP_TYPES.index(op_type)
    p = PARAMETER[parameter]
    if p.kind == "count":
        value, rule = p.minimum - 1, f"must be an integer >= {p.minimum}, got {p.minimum - 1}"
    elif p.kind == "ratio":
        value, rule = 0.0, r"must be a number in \(0, 1\], got 0.0"
    else:
        value, rule = [1, -2], r"must be a list of integers >= 0, got \[1, -2\]"
    broken = with_value(ops, row, parameter, value)
    with pytest.raises(nerframe.NerframeError, match=rf"^ops row {row} .*: {parameter} {rule}$"):
        nerframe.costs(broken)


@pytest.mark.parametrize("ratio", [1.5, math.nan, math.inf, -0.5])
def test_ratios_outside_0_1_are_refused(ratio: float) -> None:
    ops = with_value(one_of_each(), 3, "cull_ratio", ratio)
    with pytest.raises(nerframe.NerframeError, match=r"ops row 3 .*cull_ratio must be a number"):
        nerframe.costs(ops)


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("bitwidth", 0, "bitwidth must be an integer in 1..64, got 0"),
        ("bitwidth", 65, "bitwidth must be an integer in 1..64, got 65"),
        ("op_id", -1, "op_id must be >= 0, got -1"),
        ("backward", None, "backward must not be null"),
        ("op_type", None, "op_type must not be null"),
        ("bitwidth", None, "bitwidth must not be null"),
    ],
)
def test_base_columns_are_checked(column: str, value: object, message: str) -> None:
    ops = with_value(one_of_each(), 5, column, value)
    with pytest.raises(nerframe.NerframeError, match=rf"^ops row 5 .*: {message}$"):
        nerframe.costs(ops)


def test_a_null_skip_index_is_refused() -> None:
    frame = pl.DataFrame(
        {"op_type": ["MLP"], "B": [1], "N": [1], "in_dim": [2], "num_layers": [4]},
    ).with_columns(
        layer_width=pl.lit(8), skip_connections=pl.Series([[1, None]], dtype=pl.List(pl.Int32))
    )
    with pytest.raises(nerframe.NerframeError, match="skip_connections must be a list"):
        nerframe.operators(frame)
    ops = with_value(one_of_each(), 14, "skip_connections", [1, None])
    with pytest.raises(nerframe.NerframeError, match=r"ops row 14 .*skip_connections must be"):
        nerframe.costs(ops)


def test_unused_parameters_cannot_change_a_cost() -> None:
    ops = one_of_each()
    # Sorting takes B and N only: a stray G, even out of range, changes nothing.
    row = 1 + OP_TYPES.index("Sorting")
    stray = with_value(ops, row, "G", -5)
    assert nerframe.costs(stray).drop("G").equals(nerframe.costs(ops).drop("G"))
    with pytest.raises(nerframe.NerframeError, match="'G' is not a parameter of this op type"):
        nerframe.ops.validate(stray)


def test_the_first_bad_row_is_named_in_a_large_table() -> None:
    # Large enough to be split between threads; the bad row is in the last share.
    ops = one_of_each()
    big = ops[np.arange(3 * PARALLEL_FROM) % ops.height].with_columns(
        op_id=pl.int_range(3 * PARALLEL_FROM, dtype=pl.Int32)
    )
    # a UniformSampler row (they use N) near the end
    bad_row = (3 * PARALLEL_FROM - 40) // ops.height * ops.height
    broken = with_value(big, bad_row, "N", 0)
    op_type = broken["op_type"][bad_row]
    with pytest.raises(
        nerframe.NerframeError, match=rf"^ops row {bad_row} \(op_id {bad_row}, {op_type}\)"
    ):
        nerframe.costs(broken)


def test_a_large_table_matches_the_reference_across_thread_shares() -> None:
    ops = one_of_each()
    n = 3 * PARALLEL_FROM + 5
    big = ops[np.random.default_rng(3).integers(0, ops.height, n)].with_columns(
        op_id=pl.int_range(n, dtype=pl.Int32), backward=pl.int_range(n) % 3 == 0
    )
    out = nerframe.costs(big)
    for row in out[:: n // 97].iter_rows(named=True):
        expected = reference_cost(row)
        assert {k: row[k] for k in expected} == expected


def test_a_slice_with_nulls_at_odd_bit_offsets() -> None:
    ops = one_of_each()
    part = ops.slice(3, 11)
    whole = nerframe.costs(ops)
    assert nerframe.costs(part).equals(whole.slice(3, 11))
    broken = with_value(ops, 9, "N", None).slice(3, 11)
    with pytest.raises(nerframe.NerframeError, match=r"ops row 6 .*missing required parameter 'N'"):
        nerframe.costs(broken)


def test_small_tables_run_on_the_calling_thread() -> None:
    before = {t.ident for t in threading.enumerate()}
    nerframe.costs(nerframe.pipeline("neurex").ops)
    started = [t for t in threading.enumerate() if t.ident not in before]
    assert not [t for t in started if t.name.startswith("nerframe-costs")]


def test_the_kernels_catalogue_is_the_catalogue() -> None:
    # The cost kernel may not import the catalogue (kernels import nothing from the
    # API layer), so it declares the op types (dispatch codes), parameter rows and
    # minimums its formulas are written for; they must be nerframe.taxonomy's.
    from nerframe.kernels import costs as kernel
    from nerframe.taxonomy import PARAMETERS

    assert kernel.OP_TYPES == OP_TYPES
    assert [t.code for t in op_types().values()] == list(range(kernel.N_TYPES))
    assert tuple(p.name for p in PARAMETERS) == kernel.PARAMETERS
    assert kernel.MINIMUM.tolist() == [p.minimum for p in PARAMETERS]


def test_adam_update_by_hand() -> None:
    # one Adam step over a million float32 parameters (Kingma & Ba 2015, Algorithm 1):
    # m = lerp(m, g) 3 FLOPs, v = b2 v + (1 - b2) g^2 4, sqrt(v) / bc2 + eps 3,
    # p -= lr m / denom 3; g read, p, m and v read and written: 7 x 4 bytes
    row = nerframe.costs(
        nerframe.operators([{"op_type": "AdamUpdate", "B": 1_000_000, "N": 1, "bitwidth": 32}])
    ).row(0, named=True)
    assert row["flops"] == 1_000_000 * (3 + 4 + 3 + 3)
    assert (row["bytes_in"], row["bytes_w"], row["bytes_out"]) == (4e6, 12e6, 12e6)
    assert row["bytes_total"] == 28e6
    assert (row["category"], row["scope"]) == ("COMPUTATION", "frame")


def test_occupancy_march_by_hand() -> None:
    # bicycle's march (scene table): 4096 rays x 975 steps, 20 FLOP-equivalents a step
    # (step size 3, advance 1, position 6, cascade 4, cell 3, Morton address 2, bit
    # test 1), each ray's origin and direction read once (6 values of 4 bytes)
    row = nerframe.costs(
        nerframe.operators([{"op_type": "OccupancyMarch", "B": 4096, "N": 975, "bitwidth": 32}])
    ).row(0, named=True)
    assert row["flops"] == 4096 * 975 * (3 + 1 + 6 + 4 + 3 + 2 + 1) == 79_872_000
    assert (row["bytes_in"], row["bytes_w"], row["bytes_out"]) == (4096 * 6 * 4, 0, 0)
    assert row["category"] == "SAMPLING"
