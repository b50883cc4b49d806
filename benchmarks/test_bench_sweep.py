"""nerframe.sweep end to end: a 1,000,000-configuration grid on the neurex graph.

Measured against the kernel alone on the same configurations (the Python side
builds the configuration arrays and the result table), in the same run.
"""

from __future__ import annotations

import numpy as np

import nerframe
from nerframe.scheduling import Configurations, Mapped

GRID = {
    "frequency_mhz": np.linspace(200, 2000, 100),
    "systolic_array_32x32.count": np.arange(1, 101),
    "index_generation_unit.count": np.arange(1, 101),
}


def test_sweep_million(benchmark, best_of) -> None:
    graph = nerframe.pipeline("neurex")
    accel = nerframe.accelerator("neurex")
    nerframe.sweep(graph, accel, {"frequency_mhz": [1000]})  # compile outside the timing
    result = benchmark.pedantic(nerframe.sweep, args=(graph, accel, GRID), rounds=3, iterations=1)
    assert result.height == 1_000_000
    seconds = benchmark.stats.stats.min

    configs = Configurations.of(accel)
    repeat = {f: np.repeat(getattr(configs, f), 1_000_000, axis=0) for f in vars(configs)}
    mapped = Mapped.of(graph, accel)
    kernel = best_of(lambda: mapped.run(Configurations(**repeat), "split", keep_ops=False))
    benchmark.extra_info.update(
        configurations_per_s=round(1_000_000 / seconds),
        placements_per_s=round(5_000_000 / seconds),
        kernel_share=round(kernel / seconds, 2),
    )
    # Building configurations and the result table may cost at most 4x the kernel.
    assert kernel / seconds >= 0.2
