-- best_under_budget: per graph, the fastest sweep row that meets every constraint of the sweep (its area, power and energy budgets); ties: lower energy, then lower config
SELECT *
FROM sweep
WHERE feasible AND fps IS NOT NULL
QUALIFY row_number() OVER (
    PARTITION BY graph ORDER BY fps DESC, energy_per_frame_j ASC, config
) = 1
ORDER BY graph
