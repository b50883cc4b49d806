-- top_ops: the ten longest operators (by duration_cycles) of each pipeline x accelerator, with their share of the pair's busy cycles
WITH top AS (
    -- max_by keeps the ten largest keys per pair (longest first, lower op id on a tie)
    -- without sorting the whole schedule.
    SELECT
        graph,
        accelerator,
        SUM(duration_cycles) AS busy_cycles,
        max_by(
            struct_pack(op_id, op_type, category, backward, module, instances, duration_cycles, bound),
            struct_pack(duration := duration_cycles, earlier := -op_id),
            10
        ) AS ops
    FROM schedule
    GROUP BY graph, accelerator
),
ranked AS (
    SELECT graph, accelerator, busy_cycles, UNNEST(ops) AS op, generate_subscripts(ops, 1) AS op_rank
    FROM top
)
SELECT
    graph,
    accelerator,
    op_rank,
    op.op_id,
    op.op_type,
    op.category,
    op.backward,
    op.module,
    op.instances,
    op.duration_cycles,
    op.duration_cycles::DOUBLE / busy_cycles AS busy_share,
    op.bound
FROM ranked
ORDER BY graph, accelerator, op_rank
