"""Full reductions: all of an array (shaders/reduce.wgsl: partial folds per workgroup, then one workgroup
folds those), with the elementwise chain that computes their input where the plan fused one (a
graph.ReduceStep): the first pass computes the chain per element from its loads as it reads them (plain
loads as vec4s, strided views through index arithmetic) and writes only its partials. Reductions along
rows run in the row kernel (kernels/rows.py)."""

from __future__ import annotations

import struct
from functools import lru_cache

from ..graph import Node, OpStep, ReduceStep, storage
from .caps import Caps
from .map import CODE_BUDGET, chain_key, index_fn, load_expr, meta_len, strided, view_meta
from .source import META_WORDS, ONE_BITS, WORKGROUP, Dispatch, accumulator, fill, fold, functions, pack_meta, shader

ACCUMULATORS = 2  # per thread, each one lane per vec4 component: the loop carries one fold per lane and load
# The chain is inlined 4 times (lanes) per vec4 a thread has in flight: at most map.CODE_BUDGET op costs
# (ops.Op.cost) in all, else fewer vec4s in flight (the same instruction-cache limit as map kernels)
COMPONENTS = (".x", ".y", ".z", ".w")


def fused(step: OpStep | ReduceStep, nodes: list[Node]) -> ReduceStep:
    """A full reduction's step as a ReduceStep (an OpStep's has no chain: its inputs are its loads)."""
    if isinstance(step, ReduceStep):
        return step
    node = nodes[step.node]
    return ReduceStep(nodes[node.inputs[0]].size, list(dict.fromkeys(node.inputs)), [step.node], [step.node])


def reduce_key(step: ReduceStep, nodes: list[Node]) -> tuple:
    """The structure of a reduction step (what the WGSL depends on, never values or sizes): the op's load,
    combine, identity, finish and scalar type for its dtype (source.fold); per load its view_key; the chain's functions; the reduction's operands."""
    loads, chain, *_ = chain_key(step.chain(nodes), nodes)
    local = {nid: ("in", j) for j, nid in enumerate(step.loads)}
    local.update({nid: ("t", k) for k, nid in enumerate(step.nodes[:-1])})
    node = nodes[step.node]
    operands = tuple(local[step.aliases.get(i, i)] for i in node.inputs)
    types = tuple(nodes[i].dtype.wgsl for i in step.loads)
    return fold(node.op, node.dtype), loads, chain, operands, types


def unroll_for(step: ReduceStep, nodes: list[Node]) -> int:
    """vec4s of every load in flight per thread: 8 of one load, 4 of two, ...; fewer where the chain's copies
    would pass CODE_BUDGET."""
    weight = sum(nodes[m].op.cost for m in step.nodes[:-1])
    most = max(1, 8 // len(step.loads))
    return max(1, min(most, CODE_BUDGET // (4 * weight))) if weight else most


@lru_cache(maxsize=256)
def reduce_source(key: tuple, unroll: int, subgroups: bool = False, enable: bool = True) -> str:
    """WGSL of one reduction structure (reduce_key), `unroll` vec4s of every load in flight per thread."""
    (load, combine, identity, finish, scalar), loads, chain, operands, types = key
    acc = accumulator(combine, identity, scalar)
    decls = [acc["DECL"]] + [
        f"@group(0) @binding({3 + j}) var<storage, read> in{j}: array<{types[j] if vk else f'vec4<{types[j]}>'}>;"
        for j, vk in enumerate(loads)
    ]
    at = META_WORDS + sum(n_p for _, _, n_p in chain)
    for j, vk in enumerate(loads):
        decls.append(index_fn(j, vk, at, types[j]))
        at += meta_len(vk)
    name = lambda ref: ("l" if ref[0] == "in" else "t") + str(ref[1])  # noqa: E731
    body, q = [], 0
    for k, (fn, refs, n_p) in enumerate(chain):
        args = [name(r) for r in refs] + [f"tw_param({q + p}u)" for p in range(n_p)]
        body.append(f"    let t{k} = {fn}({', '.join(args)});")
        q += n_p
    xy = [name(r) for r in operands] + ["0.0"]
    body += [f"    let x = {xy[0]};", f"    let y = {xy[1]};"]
    reads = [
        f"    let a{j} = in{j}[i];"
        if vk is None
        else f"    let a{j} = vec4<{types[j]}>({', '.join(load_expr(j, vk, f'min(e + {c}u, n - 1u)') for c in range(4))});"
        for j, vk in enumerate(loads)
    ]
    n_acc = min(ACCUMULATORS, unroll)
    folds = [f"tw_done(acc{u})" for u in range(n_acc)]
    while len(folds) > 1:  # a balanced fold of the accumulators
        folds = [
            f"{{{{COMBINE}}}}({folds[j]}, {folds[j + 1]})" if j + 1 < len(folds) else folds[j]
            for j in range(0, len(folds), 2)
        ]
    text = fill(
        shader("reduce"),
        FOLD=shader("fold_subgroup" if subgroups else "fold_shared"),
        ENABLE="enable subgroups;" if subgroups and enable else "",
        SG_ARGS=", @builtin(subgroup_size) sg_size: u32" if subgroups else "",
        SG_PASS=", sg_size" if subgroups else "",
        BINDINGS="\n".join(d for d in decls if d),
        PARAMS=", ".join(f"l{j}: {types[j]}" for j in range(len(loads))),
        CHAIN="\n".join(body),
        LOADS="\n".join(reads),
        LANES4=", ".join(f"tw_value({', '.join(f'a{j}{c}' for j in range(len(loads)))})" for c in COMPONENTS),
        ACC_FOLD=folds[0],
        UNROLLED=unrolled_loop(unroll, n_acc),
        ACC_DECL="\n".join(f"    var acc{u}: {{{{LANES}}}} = {{{{START}}}};" for u in range(n_acc)),
    )
    text = fill(text, LOAD=load, IDENTITY=identity, FINISH=finish, **acc)
    # `enable` must come before any declaration, so before the shared functions
    head, sep, rest = text.partition("enable subgroups;")
    return (sep + "\n" + functions() + head + rest) if sep else functions() + text


def unrolled_loop(unroll: int, n_acc: int) -> str:
    """The partial pass's main loop: `unroll` vec4 loads, then their folds into `n_acc` accumulators."""
    if unroll == 1:
        return ""
    loads = [f"        let v{u} = tw_load4(i + {u}u * stride, n);" for u in range(unroll)]
    folds = [f"        acc{u % n_acc} = tw_add4(acc{u % n_acc}, v{u});" for u in range(unroll)]
    return "\n".join(
        [f"    for (; i + {unroll - 1}u * stride < nv; i = i + {unroll}u * stride) {{", *loads, *folds, "    }"]
    )


def dispatches(step: OpStep | ReduceStep, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    """Two dispatches: the partial folds (with the chain), then their fold into the result."""
    step = fused(step, nodes)
    n = step.size
    nv = -(-n // 4)
    parts = min(max(-(-nv // (WORKGROUP * 4)), 1), caps.reduce_partials)
    params = tuple(v for nid in step.nodes for v in nodes[nid].params)
    words = view_meta(strided(step, nodes))
    meta = pack_meta([n, parts, nv, 0, 0, 0, 0, ONE_BITS], params) + struct.pack(f"<{len(words)}I", *words)
    source = reduce_source(reduce_key(step, nodes), unroll_for(step, nodes), caps.subgroups, caps.enable_subgroups)
    loads = tuple((3 + j, storage(nodes, i).id) for j, i in enumerate(step.loads))
    return [
        Dispatch(source, "partial", ((1, "partials"),) + loads, (parts, 1), meta, scratch=8 * parts),
        Dispatch(source, "finish", ((1, "partials"), (2, step.node)), (1, 1), meta, scratch=8 * parts),
    ]
