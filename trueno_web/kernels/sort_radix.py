"""Sort and argsort of rows longer than kernels/sort.py's BLOCK (shaders/sort_radix.wgsl): an LSD radix sort.

The keys are sort_key.wgsl's unsigned keys (descending: their complement), so an ascending sort of them is
the sort order of every dtype; each pass is stable, so ties keep their input order without comparing
indices. A pass over BITS bits: each tile of TILE keys of a row counts its digits (workgroup atomics); the
row's counts, digit-major (every tile's count of digit 0, then of digit 1, ...), are scanned, which gives
each tile the first place of each digit in the row; each tile then ranks its keys among equal digits in
input order and writes key and payload to their places: STAGED, first into workgroup memory in digit order,
so that neighbouring threads write neighbouring places (a run of each digit a tile) rather than one place
per digit a round. A fixed 32 / BITS passes and no read back: the dispatches are known before the keys are.
The payload is the element's index (argsort) or, in a sort, the value's bits, moved only with the keys that
are not their values' bits rearranged: float32's zeros and NaNs (one key each: -0.0 and NaN payloads come back
as they were); the last pass writes every other value from its key (its inverse), so that a sort of keys
without zeros or NaNs moves no payload at all, and a tile stages payloads only where one of its keys carries
one. A payload is read when it is staged rather than held through the ranking.

The ranking, two ways. Core WebGPU (every adapter): a round of THREADS keys at a time, each thread sets its
bit in its digit's mask in workgroup memory and counts the bits below it (three barriers a round). Where
the adapter has subgroups (SUBGROUPS; shaders/sort_radix_ballot.wgsl): a warp-level multisplit, as in
Onesweep: each subgroup ranks a run of consecutive keys of the tile, one key a lane a round; BITS ballots
give each lane the mask of lanes holding its digit, its rank among them is the count of those below it, and
the lowest of them adds their number to the subgroup's own count of that digit (subgroups of at most 32
lanes, NARROW, use the ballots' first word alone); the subgroups' counts,
scanned across subgroups, place each key in the tile, with no barrier inside the rounds. It takes whole
subgroups of consecutive invocations (as drivers make them) of SG_MIN lanes or more, whose counts fit
workgroup memory; a workgroup checks that at run time (subgroup sizes are not known before) and ranks by
masks otherwise, so that a kernel is right on any adapter. A round's add to a count is done before the next
round's (WGSL has no subgroup barrier): the shuffle that hands its result to the other lanes needs it, and
every lane joins that shuffle before its next add. The dispatches stay multi-pass (no chained scan across workgroups): WebGPU promises no forward
progress between workgroups, and a hang is worse than a slow sort. The scratch holds two (key, payload)
arrays a row (8 bytes an element each, ping-pong between passes) and the counts; rows run in chunks that
keep it within one binding."""

from __future__ import annotations

from functools import cache

from ..errors import LimitError
from .caps import Caps
from .source import Dispatch, fill, grid_for, pack_meta, shader

BITS = 8  # key bits a pass (4 or 8): 32 / BITS passes, 2^BITS digits
THREADS = 256  # threads a workgroup (a multiple of 32, at most 256: WebGPU's default invocations limit)
PER = 8  # keys a thread of a tile (at most 32): TILE = THREADS * PER keys counted and moved by one workgroup
SCAN_PER = 8  # counts a thread of the scan's workgroup
STAGED = True  # keys and payloads go out in digit order through workgroup memory (False: each to its place)
SUBGROUPS = True  # rank by subgroup ballots where the adapter has subgroups (False: workgroup masks always)
UNROLL = True  # the loops over a thread's PER keys written out, its arrays indexed by constants (False: WGSL loops)
NARROW = 32  # subgroups of at most NARROW lanes match digits by one-word ballots (0: four words always)
SG_MIN = 32  # the smallest subgroup that ranks by ballots (a smaller one ranks by masks): THREADS / SG_MIN
# subgroups' counts of 2^BITS digits in workgroup memory
# Workgroup memory of radix_move: max(2^BITS * THREADS / min(32, SG_MIN), TILE) + 3 * 2^BITS + THREADS words,
# within caps.wg_storage (16 KiB on WebGPU's defaults: TILE <= 3072 with 8-bit digits and 256 threads).
# radix_move's subgroup builtins, the keys a thread takes and how they are ranked (with each digit's first
# place in the tile), without subgroups and with them
MASKED = "tw_rank_masks(r, b, t); tw_tile_starts(t, tw_scan_threads(tw_tile_own(t), t));"
CORE = dict(SG_ARGS="", LAYOUT="", RANK=MASKED)
BALLOTS = dict(
    SG_ARGS=", @builtin(subgroup_size) sg: u32, @builtin(subgroup_invocation_id) lane: u32",
    LAYOUT="let ballots = tw_ballots_fit(t, sg, lane);\n"
    "    if (ballots) { lay = vec2<u32>(tw_ballot_first(t, sg, lane), sg); tw_load_keys(r, b * TILE + lay.x, sg); }",
    RANK="if (ballots) { tw_rank_ballots(b, t, sg, lane); "
    f"tw_tile_starts(t, tw_scan_subgroups(tw_tile_own(t), t, sg)); }} else {{ {MASKED} }}",
)


@cache
def radix_source(
    bits: int, threads: int, per: int, scan_per: int, staged: bool, unroll: bool, sg_min: int, narrow: int, enable: bool
) -> str:
    """The kernels' WGSL for these constants (BITS, THREADS, PER, SCAN_PER, STAGED, UNROLL, NARROW; sg_min: SG_MIN
    where subgroups rank, else 0; enable: caps.enable_subgroups)."""
    radix = 1 << bits
    masks = radix * threads // 32
    counts = radix * threads // sg_min if sg_min else 0
    ballots = bool(sg_min)
    head = "enable subgroups;\n" if ballots and enable else ""  # (before any declaration)
    text = shader("sort_radix") + (shader("sort_radix_ballot") if ballots else "")
    return (
        head
        + shader("sort_key")
        + fill(
            unrolled(text, per) if unroll else text,
            **(BALLOTS if ballots else CORE),
            BITS=bits,
            PASSES=32 // bits,
            RADIX=radix,
            THREADS=threads,
            PER=per,
            TILE=threads * per,
            WORDS=threads // 32,
            MASKS=masks,
            CLEAR=max(masks, counts),
            STAGE=max(masks, counts, threads * per),
            SG_MIN=sg_min,
            NARROW=narrow,
            SPAN=-(-radix // threads),
            STAGED=str(staged).lower(),
            SCAN_PER=scan_per,
            SCAN_TILE=threads * scan_per,
        )
    )


LOOP = "for (var i = 0u; i < PER; i = i + 1u) {"


def unrolled(text: str, per: int) -> str:
    """Every loop over a thread's PER keys (LOOP) written out PER times, `i` a constant in each: its arrays of
    keys and ranks are then indexed by constants, which a driver keeps in registers (not in local memory)."""
    while (start := text.find(LOOP)) >= 0:
        depth, end = 1, start + len(LOOP)
        while depth:
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        body = text[start + len(LOOP) : end - 1]
        text = text[:start] + "".join(f"{{ let i = {k}u;{body}}}" for k in range(per)) + text[end:]
    return text


def dispatches(src: int, out: int, rows: int, n: int, flags: int, caps: Caps) -> list[Dispatch]:
    """The passes over `rows` rows of `n` keys of node `src` into node `out` (flags: sort.wgsl's tw_meta[3])."""
    tiles = -(-n // (THREADS * PER))
    counts = (1 << BITS) * tiles
    chunks = -(-counts // (THREADS * SCAN_PER))
    row_bytes = 4 * (4 * n + counts + chunks)
    if row_bytes > caps.binding_limit:
        raise LimitError(
            f"sort: a row of {n} elements needs {row_bytes} bytes of scratch, past this GPU's binding limit of "
            f"{caps.binding_limit}; sort shorter rows (reshape) or use the numpy or wasm-simd backend"
        )
    per_chunk = min(rows, caps.binding_limit // row_bytes)
    sg_min = SG_MIN if SUBGROUPS and caps.subgroups else 0
    source = radix_source(BITS, THREADS, PER, SCAN_PER, STAGED, UNROLL, sg_min, NARROW, caps.enable_subgroups)
    passes = []
    for row0 in range(0, rows, per_chunk):
        count = min(per_chunk, rows - row0)
        scratch = row_bytes * count
        by_tile = grid_for(count * tiles, caps.max_per_dim)
        by_chunk = grid_for(count * chunks, caps.max_per_dim)
        by_row = grid_for(count, caps.max_per_dim)
        for p in range(32 // BITS):
            meta = pack_meta([count, n, tiles, flags, p, row0, chunks, 0])
            passes += [
                Dispatch(source, "radix_count", ((1, src), (3, "partials")), by_tile, meta, scratch),
                Dispatch(source, "radix_scan", ((3, "partials"),), by_chunk, meta, scratch),
                Dispatch(source, "radix_carry", ((3, "partials"),), by_row, meta, scratch),
                Dispatch(source, "radix_move", ((1, src), (2, out), (3, "partials")), by_tile, meta, scratch),
            ]
    return passes
