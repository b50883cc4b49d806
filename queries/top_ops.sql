-- top_ops: the ten longest operators (by duration_cycles) of each pipeline x accelerator, with their share of the pair's busy cycles
SELECT
    graph,
    accelerator,
    ROW_NUMBER() OVER pair_by_duration AS op_rank,
    op_id,
    op_type,
    category,
    backward,
    module,
    instances,
    duration_cycles,
    duration_cycles::DOUBLE / SUM(duration_cycles) OVER pair AS busy_share,
    bound
FROM schedule
WINDOW
    pair AS (PARTITION BY graph, accelerator),
    pair_by_duration AS (PARTITION BY graph, accelerator ORDER BY duration_cycles DESC, op_id)
QUALIFY op_rank <= 10
ORDER BY graph, accelerator, op_rank
