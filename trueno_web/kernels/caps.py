"""What the kernels may use on one adapter, and the tuning picked for it."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_WG_STORAGE = 16384  # WebGPU's default maxComputeWorkgroupStorageSize
REDUCE_MAX_PARTIALS = 1024
# Iterations of all loops of one invocation together, at most: Mesa's llvmpipe (lavapipe) ends a shader's
# loops after 65535 (LP_MAX_TGSI_LOOP_ITERATIONS) without an error. Kernels whose trips grow with a size
# split the work (matmul's K, convolve2d's taps) or raise LimitError (rows); the others stay far below it
# for any binding (reduce: <= 2^28 vec4s / (1024 * 256 threads) / 8 unrolled + 19; softmax: <= ~4100).
LOOP_TRIPS = 65535
# Op costs (ops.Op.cost, summed over a fused step's members) one map, row or reduce step holds at most: a
# longer chain runs as several kernels. Shader compilers are super-linear in kernel size and a huge kernel
# runs slower than a few medium ones (instruction cache), while a few hundred ops amortise the memory passes
# (docs/benchmarks.md, "Deep programs"). A hardware adapter takes twice that: on the H100 a Mandelbrot of
# 300 and 1000 iterations ran 10-20% faster under 512 than under 256, its first call still within 2 s.
FUSE_BUDGET = 256
HARDWARE_FUSE_BUDGET = 512
# Op costs a matmul step's chain (its epilogue) holds at most: a bias, a residual, a relu (the rest of a chain
# goes on as a map step). The product kernel computes the chain once for each element a thread stores (64 on
# the direct kernel, up to 128 on the tiles), inlined, after its loop: on the H100 the MLP's kernels took 2.15 ms
# with its bias + gelu (cost 5) there, 1.88 with the bias alone (the gelu in a map kernel after it, at full
# occupancy), 1.93 with neither (docs/benchmarks.md); on lavapipe a chain of 16 took minutes to compile. Software
# adapters take none: their direct kernel computes a chain per element, a bias's index arithmetic and all, where
# the map kernel does a vec4 at a time (lavapipe: x @ w + b at (1024, 256, 1024) 47-48 ms fused, 44-45 not).
EPILOGUE_BUDGET = 2


def round16(nbytes: int) -> int:
    """Bytes rounded up to whole vec4s (16 at least): what a kernel binding of an array covers."""
    return max(16, -(-nbytes // 16) * 16)


@dataclass
class Caps:
    """What the kernels may use on this adapter, and the tuning picked for it."""

    max_per_dim: int = 65535
    binding_limit: int = 1 << 27  # max_storage_buffer_binding_size
    wg_storage: int = DEFAULT_WG_STORAGE  # max_compute_workgroup_storage_size
    subgroups: bool = False  # the adapter has the WebGPU "subgroups" feature and the device enabled it
    enable_subgroups: bool = True  # the WGSL compiler wants `enable subgroups;` (Tint does; naga refuses it)
    map_vpt: int = 2  # vec4s per thread in map kernels
    reduce_partials: int = REDUCE_MAX_PARTIALS  # workgroups of a reduction's first pass at most
    adapter: str = ""  # the adapter's device name: its measured matmul choices (kernels/matmul_tuned.py)
    matmul: str = ""  # force a matmul.CONFIGS key ("" = pick by shape)
    matmul_splits: int = 0  # force splits of K over workgroups (0 = pick; 1 = none)
    matmul_group: int = 0  # force the rows of tiles per group of the tile order (0 = pick; 1 = row-major)
    matmul_vec: bool | None = None  # force the operands' loads: vec4 where rows are whole vec4s (True) or scalar
    # (False); None: the measured choice, else vec4
    matmul_vec_c: bool | None = None  # force C's stores the same way; None: the measured choice, else the loads'
    # width (a chain's, the epilogue's, stores follow the chain's own loads)
    matmul_direct: bool = False  # row-major products run kernels/matmul_direct.py's kernel (software adapters)
    attention_direct: bool = False  # attention reads keys and values straight from the buffers, one thread a
    # query row, no barrier (software adapters: kernels/attention.py)
    rows_direct: bool = False  # the row kernel runs one thread a row, no workgroup memory, no barrier (software
    # adapters: kernels/rows.py)
    matmul_min_groups: int = 256  # a larger tile or fewer splits only when it still gives this many workgroups
    loop_trips: int = LOOP_TRIPS  # loop iterations per invocation at most (all loops of a kernel together)
    fuse_budget: int = FUSE_BUDGET  # op costs one fused step holds at most (planner.plan)
    epilogue_budget: int = EPILOGUE_BUDGET  # op costs a matmul step's chain holds at most (planner.plan)

    @classmethod
    def for_driver(cls, driver) -> Caps:
        """From a backends.base.Driver's limits and features."""
        limits = driver.limits
        return cls(
            max_per_dim=int(limits["max_compute_workgroups_per_dimension"]),
            binding_limit=int(limits["max_storage_buffer_binding_size"]),
            wg_storage=int(limits["max_compute_workgroup_storage_size"]),
            subgroups="subgroups" in driver.features,
            enable_subgroups=driver.wgsl_enable_subgroups,
            adapter=str(driver.adapter_info.get("device", "")),
            fuse_budget=FUSE_BUDGET if driver.adapter_info["software"] else HARDWARE_FUSE_BUDGET,
            epilogue_budget=0 if driver.adapter_info["software"] else EPILOGUE_BUDGET,
            matmul_direct=bool(driver.adapter_info["software"]),
            attention_direct=bool(driver.adapter_info["software"]),
            rows_direct=bool(driver.adapter_info["software"]),
        )

    def vec_ok(self, elements: int) -> bool:
        """Can `elements` floats be bound as vec4s (the byte size rounded up to 16 fits one binding)?"""
        return round16(elements * 4) <= self.binding_limit
