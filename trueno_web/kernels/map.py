"""The fused elementwise kernel (shaders/map.wgsl): one chain of catalog functions per element; a load
that is a strided view (a broadcast, transpose or slice) is read through index arithmetic."""

from __future__ import annotations

from functools import lru_cache

import struct

from ..graph import MapStep, Node, storage
from .caps import Caps
from .source import META_WORDS, WORKGROUP, Dispatch, fill, grid_for, pack_meta, shader


def strided(step: MapStep, nodes: list[Node]) -> list:
    """Per load, its View where it is read through index arithmetic (else None: a plain flat load)."""
    return [nodes[i].view if nodes[i].view is not None and not nodes[i].view.identity else None for i in step.loads]


def chain_key(step: MapStep, nodes: list[Node]) -> tuple:
    """The structure of a fused chain: what the WGSL text depends on (never values or sizes): the loads
    (the rank of each strided one, 0 for a plain one), the chain of functions, the stores."""
    ranks = tuple(len(v.shape) if v is not None else 0 for v in strided(step, nodes))
    local = {nid: ("in", j) for j, nid in enumerate(step.loads)}
    chain = []
    for k, nid in enumerate(step.nodes):
        node = nodes[nid]
        chain.append((node.op.wgsl, tuple(local[i] for i in node.inputs), len(node.params)))
        local[nid] = ("t", k)
    return ranks, tuple(chain), tuple(local[nid] for nid in step.stores)


def _index_fn(j: int, rank: int, at: int) -> str:
    """WGSL of the element index of strided load j at output element i; its view sits in tw_meta from
    `at`: offset, then the shape, then the strides (i32 bits: a stride may be 0 or negative)."""
    lines = [f"fn tw_at{j}(i: u32) -> u32 {{", "    var rem = i;", f"    var at = bitcast<i32>(tw_meta[{at}u]);"]
    for d in range(rank - 1, -1, -1):
        lines.append(f"    at = at + i32(rem % tw_meta[{at + 1 + d}u]) * bitcast<i32>(tw_meta[{at + 1 + rank + d}u]);")
        if d:
            lines.append(f"    rem = rem / tw_meta[{at + 1 + d}u];")
    return "\n".join(lines + ["    return u32(at);", "}"])


def view_meta(views: list) -> list[int]:
    """The u32 words of the strided loads' views, in load order (see _index_fn)."""
    words = []
    for v in views:
        if v is not None:
            words += [v.offset, *v.shape, *v.strides]
    return [w & 0xFFFFFFFF for w in words]


@lru_cache(maxsize=512)
def map_source(key: tuple, vec: bool, vpt: int) -> str:
    """WGSL of one chain structure, on vec4s (each lane through the same scalar functions) or on f32."""
    ranks, chain, stores = key
    n_loads = len(ranks)
    elem = "vec4<f32>" if vec else "f32"
    decls = [f"@group(0) @binding({j + 1}) var<storage, read> in{j}: array<{elem}>;" for j in range(n_loads)]
    base = n_loads + 1
    decls += [f"@group(0) @binding({base + j}) var<storage, read_write> out{j}: array<{elem}>;"
              for j in range(len(stores))]
    n_params = sum(p for _, _, p in chain)
    at, index_fns = META_WORDS + n_params, []
    for j, rank in enumerate(ranks):
        if rank:
            index_fns.append(_index_fn(j, rank, at))
            at += 1 + 2 * rank
    body = [f"    let p{q} = tw_param({q}u);" for q in range(n_params)]
    body += [f"    let v_in{j} = in{j}[{f'tw_at{j}(i)' if rank else 'i'}];" for j, rank in enumerate(ranks)]
    lanes = (".x", ".y", ".z", ".w") if vec else ("",)

    def name(ref, lane):
        kind, j = ref
        return f"v_in{j}{lane}" if kind == "in" else f"t{j}{'_' + lane[1:] if lane else ''}"

    q = 0
    for k, (fn, inputs, n_p) in enumerate(chain):
        params = [f"p{q + r}" for r in range(n_p)]
        q += n_p
        for lane in lanes:
            args = [name(ref, lane) for ref in inputs] + params
            body.append(f"    let t{k}{'_' + lane[1:] if lane else ''} = {fn}({', '.join(args)});")
    for j, ref in enumerate(stores):
        value = (f"vec4<f32>({', '.join(name(ref, lane) for lane in lanes)})" if vec and ref[0] == "t"
                 else name(ref, ""))
        body.append(f"    out{j}[i] = {value};")
    loop = "\n".join(f"    if (base + {j * WORKGROUP}u < count) {{ tw_chain(base + {j * WORKGROUP}u); }}"
                     for j in range(vpt))
    return shader("functions") + fill(shader("map"), BINDINGS="\n".join(decls + index_fns),
                                      BODY="\n".join(body), VPT=vpt, LOOP=loop)


def dispatches(step: MapStep, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    """One dispatch: vec4 access where every load is plain, else f32 with strided loads indexed."""
    views = strided(step, nodes)
    vec = caps.vec_ok(step.size) and not any(views)
    vpt = max(1, caps.map_vpt) if vec else 1
    source = map_source(chain_key(step, nodes), vec, vpt)
    params = tuple(v for nid in step.nodes for v in nodes[nid].params)
    loads = [storage(nodes, i).id for i in step.loads]
    binds = tuple(enumerate([*loads, *step.stores], start=1))
    count = -(-step.size // 4) if vec else step.size
    groups = -(-count // (WORKGROUP * vpt))
    meta = pack_meta([count], params) + struct.pack(f"<{len(words := view_meta(views))}I", *words)
    return [Dispatch(source, "main", binds, grid_for(groups, caps.max_per_dim), meta)]
