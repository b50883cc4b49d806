"""The packaged nerfstudio map on real nerfstudio models (nerfstudio is never a dependency)."""

from __future__ import annotations

import importlib.util

import pytest

import nerframe
from nerframe.trace import capture, trace_graph

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("nerfstudio") is None or importlib.util.find_spec("torch") is None,
    reason="optional: nerfstudio not installed",
)


def test_vanilla_nerf() -> None:
    import nerfstudio_models

    g = trace_graph(capture(*_built(nerfstudio_models.vanilla), repeats=1, warmup=0))
    types = g.ops["op_type"].to_list()
    assert types[:10] == [
        "UniformSampler",
        "RFFEncoding",
        "MLP",
        "MLP",
        "RFFEncoding",
        "MLP",
        "MLP",
        "RGBRenderer",
        "DensityRenderer",
        "DensityRenderer",
    ]
    assert types[10] == "PDFSampler"
    base = g.ops.row(2, named=True)  # the NeRF paper's 8 x 256 MLP, input re-read at layer 4
    assert (base["in_dim"], base["num_layers"], base["layer_width"]) == (63, 8, 256)
    assert base["skip_connections"] == [4]
    assert g.ops.row(0, named=True)["N"] == 64 and g.ops.row(0, named=True)["B"] == 64
    assert g.unknown.is_empty()
    assert (0, 1) in g.edges.select("src", "dst").rows()


def test_nerfacto() -> None:
    import nerfstudio_models

    g = trace_graph(capture(*_built(nerfstudio_models.nerfacto), repeats=1, warmup=0))
    assert g.ops["op_type"].to_list()[:3] == ["UniformSampler", "HashEncoding", "MLP"]
    grids = g.ops.filter(op_type="HashEncoding").select("N", "num_levels", "log2_hashmap_size")
    assert grids.rows() == [(256, 5, 17), (96, 5, 17), (48, 16, 15)]
    assert set(g.unknown["class"]) == {
        "nerfstudio.field_components.spatial_distortions.SceneContraction"
    }
    assert nerframe.costs(g.ops)["flops"].sum() > 0


def _built(build):
    model, inputs = build()
    return (model, *inputs)
