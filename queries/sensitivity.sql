-- sensitivity: per graph and swept axis, how far the mean fps moves across the axis's values (swing = (high - low) / mean), most sensitive first
WITH long AS (
    -- Every column that is not a figure is an axis: one (axis, value) row per row and axis.
    UNPIVOT (
        SELECT
            * EXCLUDE (
                accelerator, config, batches, makespan_cycles, interval_cycles, frame_cycles,
                frame_time_s, energy_per_frame_j, avg_power_w, dram_utilization, area_mm2,
                peak_tflops, bottleneck_module, feasible
            )
        FROM sweep
        WHERE fps IS NOT NULL
    )
    ON COLUMNS(* EXCLUDE (graph, fps))
    INTO NAME axis VALUE value
),
means AS (
    SELECT graph, axis, value::DOUBLE AS value, avg(fps) AS mean_fps
    FROM long
    GROUP BY graph, axis, value
)
SELECT
    graph,
    axis,
    count(*) AS axis_values,
    arg_min(value, mean_fps) AS slowest_value,
    arg_max(value, mean_fps) AS fastest_value,
    min(mean_fps) AS fps_low,
    max(mean_fps) AS fps_high,
    (max(mean_fps) - min(mean_fps)) / avg(mean_fps) AS swing
FROM means
GROUP BY graph, axis
ORDER BY graph, swing DESC, axis
