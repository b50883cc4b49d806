-- breakdown: per pipeline x accelerator and operator category, ops, FLOPs, bytes, busy cycles and energy, with each category's share of the pair's total
SELECT
    graph,
    accelerator,
    category,
    COUNT(*) AS ops,
    SUM(flops) AS flops,
    SUM(bytes_total) AS bytes_total,
    SUM(duration_cycles)::BIGINT AS busy_cycles,
    SUM(energy_j) AS energy_j,
    SUM(flops) / SUM(SUM(flops)) OVER pair AS flops_share,
    SUM(bytes_total) / SUM(SUM(bytes_total)) OVER pair AS bytes_share,
    SUM(duration_cycles)::DOUBLE / SUM(SUM(duration_cycles)) OVER pair AS time_share
FROM schedule
GROUP BY graph, accelerator, category
WINDOW pair AS (PARTITION BY graph, accelerator)
ORDER BY graph, accelerator, category
