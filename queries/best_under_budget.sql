-- best_under_budget: per graph, the fastest sweep row that meets every constraint of the sweep (its area, power and energy budgets); ties: lower energy, then lower config
WITH candidates AS (
    SELECT * FROM sweep WHERE feasible AND fps IS NOT NULL
),
fastest AS (
    -- Only the rows at their graph's top fps are ranked: a full sort of every
    -- feasible row took 12 s on a 10 M-row store.
    SELECT c.*
    FROM candidates AS c
    JOIN (SELECT graph, max(fps) AS fps FROM candidates GROUP BY graph) AS top
        ON c.graph = top.graph AND c.fps = top.fps
)
SELECT *
FROM fastest
QUALIFY row_number() OVER (
    PARTITION BY graph ORDER BY energy_per_frame_j ASC, config
) = 1
ORDER BY graph
