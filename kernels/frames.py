"""Frame figures of one configuration from the schedules of its three phases.

A frame runs the frame-scoped ops before the batches (``pre``), `batches`
batches of the batch phase, then the frame-scoped ops after them (``post``);
see `nerframe.scheduling` for the model. `frame` computes one configuration's
figures from the phases' makespans, the batch interval, energies and busiest
modules. A batch starts no more often than the DRAM moves one batch's bytes
(docs/model.md, "Shared DRAM bandwidth"): the interval is the busiest module's
per-instance cycles or ``ceil(batch DRAM bytes / derated bytes per cycle)``,
whichever is longer, and where the DRAM's is longer the batch phase's bottleneck
is `DRAM`. `frame` also adds the two energy terms that do not depend on the schedule: SRAM
access energy (the phases' SRAM bytes times the energy per byte) and leakage
(its power times the frame time); `frames` applies it to C configurations. Both `nerframe.schedule`
(through `nerframe.scheduling.frame_figures`) and the fused sweep kernel
(`nerframe.kernels.sweep_chunk`) use this one function, so a sweep row and a single
schedule agree bit for bit.

>>> phases = {"makespan": (0, 100, 0), "energy": (0.0, 1e-6, 0.0), "busiest": (0, 1, 0),
...           "dram_bytes": (0.0, 4096.0, 0.0), "batches": 10, "pipelined": True,
...           "frequency_mhz": 1000.0}
>>> f = frame(**phases, interval=40, sram_bytes=(0.0, 1e3, 0.0), dram_bandwidth_gbps=512.0,
...           derated_gbps=512.0, sram_pj_per_byte=2.0, leakage_w=0.5)
>>> f.frame_cycles, f.frame_time_s, f.fps  # 100 + 9 * 40 cycles at 1 GHz
(460, 4.6e-07, 2173913.0434782607)
>>> round(f.energy_per_frame_j, 12)  # 10 batches x 1 uJ + 10 x 1000 B x 2 pJ + 0.5 W x 460 ns
1.025e-05

At 64 GB/s, 64 bytes a cycle, the batch's 4,096 bytes take 64 cycles of DRAM: a
batch starts every 64 cycles, not 40, and the DRAM is the bottleneck.

>>> r = frame(**phases, interval=40, sram_bytes=(0.0, 0.0, 0.0), dram_bandwidth_gbps=64.0,
...           derated_gbps=64.0, sram_pj_per_byte=0.0, leakage_w=0.0)
>>> r.interval_cycles, r.frame_cycles, r.bottleneck == DRAM, r.dram_utilization
... # 100 + 9 * 64 cycles; 10 x 4096 B in 676 x 64 B
(64, 676, True, 0.9467455621301775)
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

DRAM = -1
"""The bottleneck code of the DRAM, where it sets the batch interval (modules are 0 on)."""
# The float figures of `Frame`, in the order of `frames`' float rows.
FLOAT_FIGURES = (
    "frame_time_s",
    "fps",
    "energy_per_frame_j",
    "avg_power_w",
    "dram_utilization",
)


class Frame(NamedTuple):
    """The figures of one frame on one configuration (`frame`)."""

    pre_cycles: int
    makespan_cycles: int  # of one batch
    interval_cycles: int  # between batch starts: the module's or the DRAM's
    post_cycles: int
    frame_cycles: int
    frame_time_s: float
    fps: float  # NaN for a zero-time frame
    energy_per_frame_j: float
    avg_power_w: float  # NaN for a zero-time frame
    dram_utilization: float
    bottleneck: int  # module index, or `DRAM`
    longest: float  # float estimate of frame_cycles, beyond the int64 range on overflow


@njit(cache=True, inline="always")
def frame(
    makespan: tuple[int, int, int],
    interval: int,
    energy: tuple[float, float, float],
    busiest: tuple[int, int, int],
    dram_bytes: tuple[float, float, float],
    sram_bytes: tuple[float, float, float],
    batches: int,
    pipelined: bool,
    frequency_mhz: float,
    dram_bandwidth_gbps: float,
    derated_gbps: float,
    sram_pj_per_byte: float,
    leakage_w: float,
) -> Frame:
    """The frame figures of one configuration.

    The triples are per phase (pre, batch, post): ``makespan`` (of one batch for
    the batch phase), ``energy`` (one run), ``busiest`` (module index),
    ``dram_bytes`` and ``sram_bytes``. ``interval`` is the batch phase's busiest
    module's per-instance cycles; ``dram_bandwidth_gbps`` the peak bandwidth
    (utilisation is measured against it) and ``derated_gbps`` what real work reaches
    (the peak times the memory efficiency: the batch interval's DRAM floor uses it,
    as the scheduler's shared-DRAM rule does). SRAM bytes are read or written per
    run of the phase, ``sram_pj_per_byte`` their access
    energy and ``leakage_w`` the leakage power, drawn for the whole frame time.

    Returns a `Frame`, where the interval is the longer of the module's and the DRAM's (above), the
    bottleneck is the busiest module of the phase taking the most cycles (the
    batch stream on a tie, then pre; for the batches `DRAM` where the DRAM's
    interval is the longer), the DRAM utilization the highest of the phases' bytes
    over what the peak bandwidth moves in their makespans and of the stream's
    (``batches`` batches' bytes in the stream's cycles), fps and power are NaN for
    a zero-time frame, and ``longest`` is a float estimate of the frame's cycles
    that exceeds the int64 range where the integer sum would overflow. A phase
    without ops has makespan, interval, energy and bytes 0.
    """
    pre, batch, post = makespan
    energy_pre, energy_batch, energy_post = energy
    busiest_pre, busiest_batch, busiest_post = busiest
    bytes_pre, bytes_batch, bytes_post = dram_bytes
    sram_pre, sram_batch, sram_post = sram_bytes
    # A batch's bytes take this many cycles of the DRAM: successive batches of a
    # pipelined stream overlap, so starting them faster would move more than the
    # bandwidth over the stream.
    dram_cycles = bytes_batch / (derated_gbps * 1e9 / (frequency_mhz * 1e6))
    busiest_stream = busiest_batch
    if dram_cycles > interval:
        busiest_stream = DRAM
        # Clamped only where `longest` makes the caller refuse the frame anyway.
        interval = math.ceil(min(dram_cycles, 2.0**62))
    stream = batch + (batches - 1) * interval if pipelined else batches * batch
    frame_cycles = pre + stream + post
    longest = (
        float(pre + post)
        + float(batch) * max(batches, 1)
        + max(float(interval), dram_cycles) * batches
    )
    frame_time = frame_cycles / (frequency_mhz * 1e6)
    # The same sum, term by term, as the energies of the phases that have ops.
    joules = 0.0 + energy_pre
    joules = joules + batches * energy_batch
    joules = joules + energy_post
    sram_total = sram_pre + batches * sram_batch + sram_post
    joules = joules + sram_total * sram_pj_per_byte * 1e-12
    joules = joules + leakage_w * frame_time
    bottleneck = busiest_stream
    if pre > stream:
        bottleneck = busiest_pre
    if post > max(stream, pre):
        bottleneck = busiest_post
    fps = math.nan
    power = math.nan
    if frame_time > 0:
        fps = 1 / frame_time
        power = joules / frame_time
    bytes_per_cycle = dram_bandwidth_gbps * 1e9 / (frequency_mhz * 1e6)
    utilization = 0.0
    if pre > 0:
        utilization = max(utilization, bytes_pre / (pre * bytes_per_cycle))
    if batch > 0:
        utilization = max(utilization, bytes_batch / (batch * bytes_per_cycle))
    if stream > 0:
        utilization = max(utilization, batches * bytes_batch / (stream * bytes_per_cycle))
    if post > 0:
        utilization = max(utilization, bytes_post / (post * bytes_per_cycle))
    return Frame(
        pre_cycles=pre,
        makespan_cycles=batch,
        interval_cycles=interval,
        post_cycles=post,
        frame_cycles=frame_cycles,
        frame_time_s=frame_time,
        fps=fps,
        energy_per_frame_j=joules,
        avg_power_w=power,
        dram_utilization=utilization,
        bottleneck=bottleneck,
        longest=longest,
    )


@njit(cache=True)
def frames(
    makespan: np.ndarray,
    interval: np.ndarray,
    energy: np.ndarray,
    busiest: np.ndarray,
    nbytes: np.ndarray,
    batches: int,
    pipelined: bool,
    frequency_mhz: np.ndarray,
    dram_bandwidth_gbps: np.ndarray,
    derated_gbps: np.ndarray,
    sram_bytes: np.ndarray,
    sram_pj_per_byte: np.ndarray,
    leakage_w: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, float]:
    """`frame` for C configurations; per-phase inputs have shape (3, C) in the order
    pre, batch, post (`nbytes` and `sram_bytes` shape (3,)), and `interval` is the
    batch phase's; `derated_gbps`, `sram_pj_per_byte` and `leakage_w` have shape (C,).

    Returns int64 (6, C) rows (pre, makespan, interval, post, frame cycles,
    bottleneck), float64 (5, C) rows (`FLOAT_FIGURES`), and the largest ``longest``.
    """
    n = frequency_mhz.shape[0]
    ints = np.empty((6, n), np.int64)
    floats = np.empty((5, n), np.float64)
    longest = 0.0
    for c in range(n):
        f = frame(
            makespan=(makespan[0, c], makespan[1, c], makespan[2, c]),
            interval=interval[c],
            energy=(energy[0, c], energy[1, c], energy[2, c]),
            busiest=(busiest[0, c], busiest[1, c], busiest[2, c]),
            dram_bytes=(nbytes[0], nbytes[1], nbytes[2]),
            sram_bytes=(sram_bytes[0], sram_bytes[1], sram_bytes[2]),
            batches=batches,
            pipelined=pipelined,
            frequency_mhz=frequency_mhz[c],
            dram_bandwidth_gbps=dram_bandwidth_gbps[c],
            derated_gbps=derated_gbps[c],
            sram_pj_per_byte=sram_pj_per_byte[c],
            leakage_w=leakage_w[c],
        )
        ints[0, c], ints[1, c] = f.pre_cycles, f.makespan_cycles
        ints[2, c], ints[3, c] = f.interval_cycles, f.post_cycles
        ints[4, c], ints[5, c] = f.frame_cycles, f.bottleneck
        floats[0, c], floats[1, c] = f.frame_time_s, f.fps
        floats[2, c], floats[3, c] = f.energy_per_frame_j, f.avg_power_w
        floats[4, c] = f.dram_utilization
        longest = max(longest, f.longest)
    return ints, floats, longest
