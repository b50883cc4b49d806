"""Safe import of the original framework's pickled execution DAGs."""

from __future__ import annotations

import pickle
import pickletools
from pathlib import Path

import pytest

from nerframe.cli import main
from nerframe.errors import NerframeError
from nerframe.trace.dag_pickle import read_dag_pickle


def test_shared_sample_dag(shared: Path) -> None:
    path = shared / "data" / "rendersim" / "sample_dag.pkl"
    dag = read_dag_pickle(path)
    assert dag.nodes["node"].to_list() == [
        "ray_sampling",
        "positional_encoding",
        "density_mlp",
        "color_mlp",
        "volume_rendering",
    ]
    first = dag.nodes.row(0, named=True)
    assert first["op_type"] == "SAMPLING"
    assert first["input_shape"] == [1024, 3] and first["output_shape"] == [1024, 128, 3]
    assert (first["flops"], first["memory_bytes"], first["arithmetic_intensity"]) == (
        1310720.0,
        1572864.0,
        2.5,
    )
    assert dag.edges.rows() == [
        ("ray_sampling", "positional_encoding"),
        ("positional_encoding", "density_mlp"),
        ("positional_encoding", "color_mlp"),
        ("density_mlp", "volume_rendering"),
        ("color_mlp", "volume_rendering"),
    ]
    # The file names one global (the DiGraph class): the one the unpickler allows.
    opcodes = [op.name for op, _, _ in pickletools.genops(path.read_bytes())]
    assert [name for name in opcodes if "GLOBAL" in name] == ["STACK_GLOBAL"]


class _Payload:
    """Pickles to a call of os.system that would create `marker`."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("protocol", [0, 2, 4, 5])
def test_malicious_pickle_is_refused_and_nothing_runs(tmp_path: Path, protocol: int) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps({"_node": _Payload(marker)}, protocol=protocol))
    with pytest.raises(NerframeError, match=r"refusing to load global '(os|posix)\.system'"):
        read_dag_pickle(path)
    assert not marker.exists()


def test_other_globals_are_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "graph.pkl"
    # A networkx MultiDiGraph is not the class the original DAGs use.
    path.write_bytes(b"\x80\x04\x8c\x1dnetworkx.classes.multidigraph\x8c\x0cMultiDiGraph\x93)\x81.")
    with pytest.raises(NerframeError, match=r"'networkx\.classes\.multidigraph\.MultiDiGraph'"):
        read_dag_pickle(path)


def test_not_a_dag(tmp_path: Path) -> None:
    path = tmp_path / "list.pkl"
    path.write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(NerframeError, match="does not hold a networkx DiGraph"):
        read_dag_pickle(path)
    path.write_bytes(b"garbage")
    with pytest.raises(NerframeError, match="not a readable pickle"):
        read_dag_pickle(path)


def test_cli_refusal_is_one_line(tmp_path: Path, capsys) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps(_Payload(marker)))
    assert main(["trace", "dag", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "system" in err
    assert not marker.exists()


def test_cli_lists_nodes_and_edges(shared: Path, capsys) -> None:
    path = shared / "data" / "rendersim" / "sample_dag.pkl"
    assert main(["trace", "dag", str(path), "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("node,op_type,input_shape") and len(lines) == 6
    assert main(["trace", "dag", str(path), "--edges", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "ray_sampling,positional_encoding"
