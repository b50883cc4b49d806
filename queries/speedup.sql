-- speedup: per pipeline, each accelerator's fps over each baseline GPU's fps on the same pipeline (run analyze with --hardware all, or name the GPUs)
SELECT
    a.graph,
    a.accelerator,
    g.accelerator AS gpu,
    a.fps,
    g.fps AS gpu_fps,
    a.fps / g.fps AS speedup,
    g.energy_per_frame_j / a.energy_per_frame_j AS energy_ratio
FROM summary AS a
JOIN summary AS g ON a.graph = g.graph
JOIN accelerators AS k ON k.accelerator = g.accelerator AND k.kind = 'gpu'
-- Accelerators over GPUs only: a GPU over another GPU is no accelerator's speedup.
JOIN accelerators AS ka ON ka.accelerator = a.accelerator AND ka.kind <> 'gpu'
WHERE a.status = 'ok' AND g.status = 'ok' AND a.accelerator <> g.accelerator
ORDER BY a.graph, a.accelerator, gpu
