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
    -- A row is on the front when it has the least energy among the rows of its fps
    -- (equal rows are all kept) and less than every faster row.
    SELECT
        *,
        min(energy_per_frame_j) OVER (
            PARTITION BY graph ORDER BY fps DESC
            RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW EXCLUDE GROUP
        ) AS best_energy_faster,
        min(energy_per_frame_j) OVER (PARTITION BY graph, fps) AS best_energy_same
    FROM contenders
)
SELECT * EXCLUDE (best_energy_faster, best_energy_same)
FROM ranked
WHERE energy_per_frame_j = best_energy_same
    AND (best_energy_faster IS NULL OR energy_per_frame_j < best_energy_faster)
ORDER BY graph, fps DESC, energy_per_frame_j, config
