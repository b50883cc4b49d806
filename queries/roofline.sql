-- roofline: per operator and roofline system, arithmetic intensity, attainable FLOP/s (and its share of the peak), bound, ridge and time
SELECT
    graph,
    op_id,
    system,
    op_type,
    category,
    backward,
    flops,
    bytes_total,
    intensity,
    attainable_flops_per_s,
    attainable_flops_per_s / (peak_tflops * 1e12) AS peak_share,
    bound,
    ridge,
    time_s
FROM roofline
ORDER BY graph, op_id, system
