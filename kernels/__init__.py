"""numba kernels: pure functions over NumPy arrays, plus their scalar references.

Imported as `nerframe.kernels`. Each kernel has a plain-Python reference beside
it that implements the same rules one row (or one configuration) at a time; the
tests check the kernels against it and the benchmarks measure the speed-up.

Importing it asks OpenMP, which runs numba's parallel loops, to let idle threads
sleep (``OMP_WAIT_POLICY=PASSIVE``) unless the environment says otherwise.
"""

import os

# By default an OpenMP thread spins for about 8 ms after each parallel loop before it
# sleeps: CPU time taken from whatever runs next (a sweep's frame building and its
# store's writer thread) for nothing, as waking a sleeping thread costs microseconds
# and a loop here milliseconds. OpenMP reads this when numba first loads it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
