"""Named DuckDB queries over a result store, one ``NAME.sql`` file each."""
