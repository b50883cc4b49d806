-- matrix: per pipeline x accelerator, status, frames per second, energy per frame, area and average power (an unmapped pair has only its message)
SELECT
    graph,
    accelerator,
    status,
    fps,
    energy_per_frame_j,
    area_mm2,
    avg_power_w,
    frame_time_s,
    dram_utilization,
    bottleneck_module,
    message
FROM summary
ORDER BY graph, accelerator
