-- pareto: per graph, the feasible sweep rows no other row beats on both fps (higher) and energy per frame (lower), fastest first
WITH ranked AS (
    -- In order of falling fps (then rising energy), a row is on the front when its
    -- energy is below that of every row before it: those are the only ones that can dominate it.
    SELECT
        *,
        min(energy_per_frame_j) OVER (
            PARTITION BY graph
            ORDER BY fps DESC, energy_per_frame_j ASC, config
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ) AS best_energy_before,
        lag(fps) OVER (
            PARTITION BY graph ORDER BY fps DESC, energy_per_frame_j ASC, config
        ) AS fps_before,
        lag(energy_per_frame_j) OVER (
            PARTITION BY graph ORDER BY fps DESC, energy_per_frame_j ASC, config
        ) AS energy_before
    FROM sweep
    WHERE feasible AND fps IS NOT NULL AND energy_per_frame_j IS NOT NULL
)
SELECT * EXCLUDE (best_energy_before, fps_before, energy_before)
FROM ranked
WHERE best_energy_before IS NULL
    OR energy_per_frame_j < best_energy_before
    -- a row equal to the front row just before it is not dominated either
    OR (fps = fps_before AND energy_per_frame_j = energy_before AND energy_per_frame_j = best_energy_before)
ORDER BY graph, fps DESC, energy_per_frame_j, config
