-- pareto: per graph, the feasible sweep rows no other row beats on both fps (higher) and energy per frame (lower), fastest first
WITH candidates AS (
    SELECT * FROM sweep
    WHERE feasible AND fps IS NOT NULL AND energy_per_frame_j IS NOT NULL
),
spans AS (
    SELECT graph, min(fps) AS low, max(fps) - min(fps) AS span FROM candidates GROUP BY graph
),
banded AS (
    -- 4,096 bands of fps per graph: every row of a band is slower than every row of
    -- the bands above it
    SELECT c.*, coalesce(floor((c.fps - s.low) / nullif(s.span, 0) * 4095), 0) AS band
    FROM candidates AS c JOIN spans AS s USING (graph)
),
bands AS (
    SELECT
        graph,
        band,
        min(min(energy_per_frame_j)) OVER (
            PARTITION BY graph ORDER BY band DESC
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ) AS best_energy_faster
    FROM banded
    GROUP BY graph, band
),
contenders AS (
    -- A row that a faster band matches on energy is dominated, and so is any row it
    -- dominates: only the other rows are sorted (a few thousand of 10 M, not all).
    SELECT banded.* EXCLUDE (band)
    FROM banded JOIN bands USING (graph, band)
    WHERE best_energy_faster IS NULL OR energy_per_frame_j < best_energy_faster
),
ranked AS (
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
    FROM contenders
)
SELECT * EXCLUDE (best_energy_before, fps_before, energy_before)
FROM ranked
WHERE best_energy_before IS NULL
    OR energy_per_frame_j < best_energy_before
    -- a row equal to the front row just before it is not dominated either
    OR (fps = fps_before AND energy_per_frame_j = energy_before AND energy_per_frame_j = best_energy_before)
ORDER BY graph, fps DESC, energy_per_frame_j, config
