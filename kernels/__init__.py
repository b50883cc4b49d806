"""numba kernels: pure functions over NumPy arrays, plus their scalar references.

Imported as `nerframe.kernels`. Each kernel has a plain-Python reference beside
it that implements the same rules one row (or one configuration) at a time; the
tests check the kernels against it and the benchmarks measure the speed-up.
"""
