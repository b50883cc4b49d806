"""Design-space sweeps, one module per part: `spec` (what to sweep), `evaluate`
(the chunked evaluation), `store` (Parquet result stores), `results` (best
points and Pareto fronts), `charts`, and `dask` (the Dask backend).

Importing this package loads none of them, so that a command pays only for the
parts it uses.
"""
