"""scatter_add (shaders/scatter.wgsl): a copy of x, then one thread per value adding it at its position with
atomics (float32 through a compare-exchange loop on the bits: WGSL's atomicAdd takes i32 and u32 only)."""

from __future__ import annotations

from ..graph import Node, OpStep, storage
from .caps import Caps
from .source import WORKGROUP, Dispatch, fill, grid_for, pack_meta, shader

FLOAT_ADD = """    loop {
        let old = atomicLoad(&out[at]);
        let sum = bitcast<u32>(bitcast<f32>(old) + values[k]);
        if (atomicCompareExchangeWeak(&out[at], old, sum).exchanged) { break; }
    }"""


def scatter_source(value: str, index: str) -> str:
    """WGSL of scatter_add for values of WGSL type `value` (f32, i32, u32) and indices of `index`."""
    word = "u32" if value == "f32" else value
    add = FLOAT_ADD if value == "f32" else "    atomicAdd(&out[at], values[k]);"
    signed = "v" if index == "i32" else "i32(min(v, 2147483647u))"
    return fill(shader("scatter"), INDEX=index, VALUE=value, WORD=word, SIGNED=signed, ADD=add)


def dispatches(step: OpStep, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    """The copy of x, then the adds (none where there are no values)."""
    node = nodes[step.node]
    if not node.size:
        return []
    x, index, values = (storage(nodes, i).id for i in node.inputs)
    o, count = node.options, nodes[node.inputs[1]].size
    source = scatter_source(nodes[values].dtype.wgsl, nodes[index].dtype.wgsl)
    geometry = [o["outer"], o["n"], o["inner"]]
    out = [
        Dispatch(source, "copy", ((1, x), (4, node.id)), grid_for(-(-node.size // WORKGROUP), caps.max_per_dim),
                 pack_meta([node.size, *geometry]))
    ]  # fmt: skip
    if count:
        binds = ((2, index), (3, values), (4, node.id))
        out.append(Dispatch(source, "add", binds, grid_for(-(-count // WORKGROUP), caps.max_per_dim),
                            pack_meta([count, *geometry])))  # fmt: skip
    return out
