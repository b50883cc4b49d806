"""Design-space sweeps, one module per part: `spec` (what to sweep), `evaluate`
(the chunked evaluation), `runner` (`nerframe.sweep`, cost estimates), `parts`
(Parquet parts), `store` (result stores), `dask` (the Dask backend), `results`
(best points and Pareto fronts), `feasibility` and `charts`.

Importing this package loads none of them, so that a command pays only for the
parts it uses.
"""
