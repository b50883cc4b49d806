-- bottlenecks: per pipeline x accelerator, the bottleneck module, its busy cycles per instance and their share of the batch makespan, and the compute/memory bound mix
WITH modules AS (
    -- Busy cycles per instance, written by the scheduler (the bottleneck's equal the
    -- interval), and the DRAM's where it sets the interval (bottleneck_module 'dram'):
    -- the interval itself.
    SELECT graph, accelerator, module, busy_cycles::DOUBLE AS busy_cycles
    FROM module_busy
    UNION ALL
    SELECT graph, accelerator, 'dram', interval_cycles::DOUBLE
    FROM summary
    WHERE bottleneck_module = 'dram'
),
mix AS (
    SELECT
        graph,
        accelerator,
        COUNT(*) FILTER (WHERE bound = 'compute') AS compute_bound_ops,
        COUNT(*) FILTER (WHERE bound = 'memory') AS memory_bound_ops,
        COALESCE(SUM(duration_cycles) FILTER (WHERE bound = 'memory'), 0)::DOUBLE
            / SUM(duration_cycles) AS memory_bound_time_share
    FROM schedule
    GROUP BY graph, accelerator
)
SELECT
    s.graph,
    s.accelerator,
    s.bottleneck_module,
    m.busy_cycles,
    s.makespan_cycles,
    s.interval_cycles,
    m.busy_cycles / s.makespan_cycles AS busy_share,
    x.compute_bound_ops,
    x.memory_bound_ops,
    x.memory_bound_time_share
FROM summary AS s
LEFT JOIN modules AS m
    ON m.graph = s.graph AND m.accelerator = s.accelerator AND m.module = s.bottleneck_module
LEFT JOIN mix AS x
    ON x.graph = s.graph AND x.accelerator = s.accelerator
WHERE s.status = 'ok'
ORDER BY s.graph, s.accelerator
