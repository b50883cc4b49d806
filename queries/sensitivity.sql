-- sensitivity: per graph and swept axis, how far the mean fps moves across the axis's values (swing = (high - low) / mean), most sensitive first
WITH long AS (
    -- Every column that is not an identity or a figure is an axis. Figures are the
    -- listed ones and cycle counts (*_cycles without a dot; MODULE.latency_cycles is
    -- an axis), so a figure added later is not taken for an axis.
    UNPIVOT (
        SELECT
            graph,
            fps,
            COLUMNS(lambda c: c NOT IN (
                'graph', 'accelerator', 'config', 'batches', 'frame_time_s', 'fps',
                'energy_per_frame_j', 'avg_power_w', 'dram_utilization', 'area_mm2',
                'peak_tflops', 'bottleneck_module', 'feasible'
            ) AND NOT (c NOT LIKE '%.%' AND suffix(c, '_cycles')))
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
    -- Means equal to within rounding (an axis with no effect, 2e-16 apart) swing 0.
    CASE
        WHEN max(mean_fps) - min(mean_fps) <= 1e-12 * abs(avg(mean_fps)) THEN 0.0
        ELSE (max(mean_fps) - min(mean_fps)) / avg(mean_fps)
    END AS swing
FROM means
GROUP BY graph, axis
ORDER BY graph, swing DESC, axis
