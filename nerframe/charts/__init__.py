"""Altair charts of nerframe tables, and their offline export.

Every chart function takes polars tables with the columns of `nerframe.schemas`
and returns an altair chart. Tables are aggregated with polars before they are
embedded, so a chart never carries more than `MAX_ROWS` rows per dataset however
large its input: when the exact rows do not fit, operators are merged into
coarser groups (the tooltip then says how many ops a mark stands for).
`save_chart` writes PNG, SVG or self-contained HTML through vl-convert, without
any network access, using the Liberation Sans font vl-convert ships with.
The ``*_spec`` and ``*_specs`` functions give the Vega-Lite specs of the same
charts without building altair objects per chart (`templates`): the specs of every
pair of a store at once, in a fraction of the time. One module per chart, plus the
shared look (`theme`), table preparation (`tables`), templates and export (`export`).

>>> import polars as pl
>>> summary = pl.DataFrame({"graph": ["nerf"], "accelerator": ["npu"], "status": ["ok"],
...                         "fps": [30.0], "energy_per_frame_j": [0.002]})
>>> spec = matrix_chart(summary).to_dict()
>>> [panel["title"] for panel in spec["hconcat"]]
['frames per second', 'energy per frame (J)']
"""

from nerframe.charts.area_power import area_power_chart
from nerframe.charts.breakdown import breakdown_chart, breakdown_specs
from nerframe.charts.dataflow import graph_chart, graph_spec
from nerframe.charts.export import save_chart
from nerframe.charts.gantt import gantt_chart, gantt_specs
from nerframe.charts.matrix import matrix_chart, matrix_spec
from nerframe.charts.measured import measured_chart
from nerframe.charts.roofline_plot import roofline_chart, roofline_specs
from nerframe.charts.tables import CHART, MAX_ROWS
from nerframe.charts.theme import CONFIG, VL_VERSION, Chart

__all__ = [
    "CHART",
    "CONFIG",
    "MAX_ROWS",
    "VL_VERSION",
    "Chart",
    "area_power_chart",
    "breakdown_chart",
    "breakdown_specs",
    "gantt_chart",
    "gantt_specs",
    "graph_chart",
    "graph_spec",
    "matrix_chart",
    "matrix_spec",
    "measured_chart",
    "roofline_chart",
    "roofline_specs",
    "save_chart",
]
