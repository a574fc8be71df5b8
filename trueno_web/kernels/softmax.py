"""Softmax and log-softmax along the last axis (shaders/softmax.wgsl): one pass per row, or long rows
split across workgroups (a statistics pass and a write pass) when there are too few rows to fill a GPU.

Memory traffic: the one-pass kernel reads a row once where a thread's vectors of it fit in REGS registers
(softmax_regs.wgsl: one tw_exp an element), else twice from one workgroup (the second read from the cache,
each element's tw_exp computed in both passes); either writes it once. The split kernel reads x twice from
memory (its write pass walks backwards, so the start of it reads what the stats pass left in the cache) and
writes it once. Threads of the one-pass kernel get about rows.PER_THREAD vectors of a row each
(rows.threads_per_row); every loop trip of main has four loads in flight."""

from __future__ import annotations

from functools import cache

from ..graph import Node, OpStep
from .caps import Caps
from .rows import threads_per_row
from .source import ONE_BITS, Dispatch, fill, grid_for, pack_meta, shader

CHUNK_ROWS = 128  # fewer rows than this, and long: split each row across workgroups
CHUNK_VECS = 2048  # at least this many vectors per chunk
TARGET_GROUPS = 512  # workgroups of a split softmax (all rows), one wave on a large GPU
REGS = 16  # vectors of its row a thread holds in registers at most (softmax_regs.wgsl; past it, main's loops)


@cache
def softmax_source(vec: bool, regs: int = 0) -> str:
    """The kernels for rows of vec4s or of floats; with `regs`, softmax_regs.wgsl's main_regs for threads
    holding that many vectors of a row (each slot written out: registers, not an array in memory)."""
    element = shader("softmax_vec4" if vec else "softmax_f32")
    text = shader("functions") + fill(shader("softmax"), V="vec4<f32>" if vec else "f32", ELEMENT=element)
    if not regs:
        return text

    def slots(line: str, pad: str = "            ") -> str:
        """`line` once per slot i: $R its register, $HERE whether the thread has that vector, $AT its index."""
        return "\n".join(
            pad
            + line.replace("$HERE", f"lane + {i}u * tpr < cv").replace("$AT", f"at + {i}u * tpr").replace("$R", f"r{i}")
            for i in range(regs)
        )

    regs_text = fill(
        shader("softmax_regs"),
        DECLS=slots(f"var $R = {'vec4<f32>(0.0)' if vec else '0.0'};", "    "),
        LOADS=slots("if ($HERE) { $R = x[$AT]; }", "        ")
        + "\n"
        + slots("if ($HERE) { m = tw_max(m, tw_vmax($R)); }", "        "),
        SUM=slots("if ($HERE) { $R = tw_terms($R, m); s = tw_vsum(s, $R); }"),
        SUM_LOG=slots("if ($HERE) { s = tw_vsum(s, tw_terms($R, m)); }"),
        STORE=slots("if ($HERE) { y[$AT] = $R * c; }"),
        STORE_LOG=slots("if ($HERE) { y[$AT] = ($R - sd.x) - log_s; }"),
    )
    return text + regs_text


def dispatches(step: OpStep, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    node = nodes[step.node]
    src = node.inputs[0]
    cols = node.shape[-1] if node.shape else 1
    rows = node.size // cols if cols else 0
    vec = cols % 4 == 0 and caps.vec_ok(node.size)
    cv = cols // 4 if vec else cols
    is_log = int(node.op.name == "log_softmax")
    source = softmax_source(vec)
    if 0 < rows < CHUNK_ROWS and cv >= 2 * CHUNK_VECS and rows <= caps.max_per_dim:
        chunks = min(-(-cv // CHUNK_VECS), -(-TARGET_GROUPS // rows))
        per = -(-cv // chunks)
        chunks = -(-cv // per)
        meta = pack_meta([rows, cols, is_log, per, chunks, cv, 256, ONE_BITS])
        binds = ((1, src), (3, "partials"))
        scratch = 16 * rows * chunks  # a vec3 state per chunk (16-byte stride)
        return [
            Dispatch(source, "stats", binds, (chunks, rows), meta, scratch),
            Dispatch(source, "write", ((1, src), (2, node.id), (3, "partials")), (chunks, rows), meta, scratch),
        ]
    tpr = threads_per_row(cv)
    groups = -(-rows // (256 // tpr))
    meta = pack_meta([rows, cols, is_log, 0, 0, cv, tpr, ONE_BITS])
    regs = 1 << (-(-cv // tpr) - 1).bit_length() if cv else 0  # a power of two: few kernel variants
    source, entry = (softmax_source(vec, regs), "main_regs") if 0 < regs <= REGS else (source, "main")
    return [Dispatch(source, entry, ((1, src), (2, node.id)), grid_for(groups, caps.max_per_dim), meta)]
