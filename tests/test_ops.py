"""Building ops tables: defaults, nulls, and every kind of bad input."""

from __future__ import annotations

import math
import re
import warnings

import polars as pl
import pytest

import nerframe
from nerframe.schemas import OPS

SORT = {"op_type": "Sorting", "B": 4, "N": 8}


def test_defaults_and_nulls() -> None:
    ops = nerframe.operators(
        [
            {"op_type": "MLP", "B": 1, "N": 2, "in_dim": 3, "num_layers": 2, "layer_width": 8},
            {"op_type": "OBBIntersection", "G": 5},
            SORT,
        ],
        graph="g",
    )
    assert ops.schema == OPS
    mlp, obb, sort = ops.iter_rows(named=True)
    assert (mlp["out_dim"], mlp["use_bias"], mlp["skip_connections"]) == (8, True, [])
    assert (obb["tile_keep_ratio"], obb["image_w"], obb["tile"]) == (0.05, 1280, 16)
    assert sort["G"] is None and sort["in_dim"] is None
    assert ops["op_id"].to_list() == [0, 1, 2]
    assert ops["graph"].to_list() == ["g"] * 3
    assert ops["category"].to_list() == ["COMPUTATION", "SAMPLING", "BLENDING"]


def test_a_dataframe_is_completed_like_records() -> None:
    frame = pl.DataFrame({"op_type": ["Sorting", "FrustumCulling"], "B": [4, None]})
    frame = frame.with_columns(N=pl.Series([8, None]), G=pl.Series([None, 10]))
    assert nerframe.operators(frame).equals(
        nerframe.operators([SORT, {"op_type": "FrustumCulling", "G": 10}])
    )


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"op_type": "MPL"}, r"unknown op type 'MPL' \(did you mean 'MLP'\?\); valid op types: "),
        ({"op_type": "sorting"}, r"did you mean 'Sorting'"),
        ({"B": 1}, "missing op_type"),
        ({**SORT, "layers": 2}, r"unknown parameter 'layers' \(did you mean 'num_layers'\?\)"),
        ({**SORT, "G": 2}, "Sorting does not take 'G'; it takes B, N"),
        ({"op_type": "Sorting", "B": 4}, "missing required parameter 'N'"),
        ({**SORT, "B": "4"}, "B must be an integer, got '4'"),
        ({**SORT, "B": True}, "B must be an integer, got True"),
        ({**SORT, "B": 2.5}, "B must be an integer, got 2.5"),
        ({**SORT, "B": 0}, "B must be an integer >= 1, got 0"),
        ({**SORT, "N": -3}, "N must be an integer >= 1, got -3"),
        ({**SORT, "N": math.nan}, "N must be an integer, got nan"),
        ({**SORT, "N": math.inf}, "N must be an integer, got inf"),
        ({**SORT, "bitwidth": 0}, "bitwidth must be an integer in 1..64, got 0"),
        (
            {"op_type": "FrustumCulling", "G": 3, "cull_ratio": 0.0},
            r"cull_ratio must be .*\(0, 1\]",
        ),
        ({"op_type": "FrustumCulling", "G": 3, "cull_ratio": 1.5}, r"in \(0, 1\], got 1.5"),
        ({"op_type": "FrustumCulling", "G": 3, "cull_ratio": math.nan}, "must be a finite number"),
        ({"op_type": "FrustumCulling", "G": 3, "cull_ratio": -math.inf}, "finite number"),
        ({"op_type": "RFFEncoding", "B": 1, "N": 1, "use_sin_cos": 1}, "must be true or false"),
        ({**SORT, "backward": "yes"}, "backward must be true or false"),
        ({**SORT, "B": 2**70}, "B is out of range"),
        (
            {
                "op_type": "MLP",
                "B": 1,
                "N": 1,
                "in_dim": 1,
                "num_layers": 2,
                "layer_width": 2,
                "skip_connections": [1, -1],
            },
            r"skip_connections must be a list of integers >= 0",
        ),
        (
            {"op_type": "MLP", "B": 1, "N": 1, "in_dim": 1, "num_layers": 0, "layer_width": 2},
            "num_layers must be an integer >= 1, got 0",
        ),
    ],
)
def test_bad_records(record: dict[str, object], message: str) -> None:
    with pytest.raises(nerframe.NerframeError, match=message) as err:
        nerframe.operators([{"op_type": "UniformSampler", "B": 1, "N": 1}, record])
    assert "row 1" in str(err.value)


def test_duplicate_op_ids_are_refused() -> None:
    with pytest.raises(nerframe.NerframeError, match="op_id must be unique within its graph"):
        nerframe.operators([{**SORT, "op_id": 1}, {**SORT, "op_id": 1}])


def test_category_must_match_the_catalogue() -> None:
    with pytest.raises(nerframe.NerframeError, match="does not match the catalogue's 'BLENDING'"):
        nerframe.operators([{**SORT, "category": "SAMPLING"}])


def test_unknown_dataframe_column() -> None:
    with pytest.raises(nerframe.NerframeError, match="unknown column 'smaples'"):
        nerframe.operators(pl.DataFrame({"op_type": ["Sorting"], "smaples": [3]}))


def test_validate_rejects_a_hand_broken_table() -> None:
    ops = nerframe.operators([SORT]).with_columns(N=pl.lit(None, pl.Int64))
    with pytest.raises(nerframe.NerframeError, match="missing required parameter 'N'"):
        nerframe.costs(ops)
    with pytest.raises(nerframe.NerframeError, match="not an ops table"):
        nerframe.costs(nerframe.operators([SORT]).drop("G"))


MLP3 = {"op_type": "MLP", "B": 1, "N": 1, "in_dim": 2, "num_layers": 3, "layer_width": 4}


@pytest.mark.parametrize(
    ("skips", "idle"),
    [([2], "[2]"), ([1, 7], "[7]"), ([2, 9], "[2, 9]")],
)
def test_skip_connections_without_effect_warn(skips: list[int], idle: str) -> None:
    # A 3-layer MLP has one hidden layer, 1; layer 2 is its output layer.
    record = {**MLP3, "skip_connections": skips}
    message = (
        rf"ops row 1 \(op_id 1, MLP\): skip_connections entries {re.escape(idle)} have no "
        r"effect: a 3-layer MLP re-reads its input only at hidden layers 1\.\.1$"
    )
    with pytest.warns(UserWarning, match=message):
        ops = nerframe.operators([SORT, record])
    assert ops["skip_connections"][1].to_list() == skips


def test_a_two_layer_mlp_has_no_hidden_layer_to_skip_to() -> None:
    record = {**MLP3, "num_layers": 2, "skip_connections": [1]}
    with pytest.warns(UserWarning, match="a 2-layer MLP has no hidden layer to re-read"):
        nerframe.operators([record])


def test_skip_connections_with_effect_do_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nerframe.operators([{**MLP3, "skip_connections": [0, 1]}, SORT])
        nerframe.operators([{**MLP3, "num_layers": 1}])


def test_range_checks_apply_to_used_parameters_only_when_not_thorough() -> None:
    ops = nerframe.operators([SORT]).with_columns(G=pl.lit(-5, pl.Int64))
    assert nerframe.ops.validate(ops, thorough=False).equals(ops)
    with pytest.raises(nerframe.NerframeError, match="'G' is not a parameter of this op type"):
        nerframe.ops.validate(ops)
