"""The fused elementwise kernel (shaders/map.wgsl): one chain of catalog functions per element; a load
that is a strided view (a broadcast, transpose or slice) is read through index arithmetic, a vec4 at a time
where its rows are whole aligned vec4s (`vec4_view`: a bias, a slice of rows), else element by element. A generator
(tw.random's rows, the index iota) takes the element's flat index as its first argument (the ref ("idx", 0));
one with strides= other than row-major (an iota broadcast) its strided index (("at", k, rank): the helper
tw_atg{k}, node k of the chain, its shape and strides in tw_meta after the loads' views). A gather (take) reads
its data load whole at the index tw_take{k} computes from the element index and its index value (the ref
("whole", j, flags); its geometry in tw_meta after the generators'; kernels/map_gather.py): that load is not read
at the element index unless another member reads it so."""

from __future__ import annotations

import struct
from functools import lru_cache

from ..graph import MapStep, Node, function, gathers, storage
from ..layout import View, contiguous_strides
from .caps import Caps
from .map_gather import take_fn, take_refs, vec4_ok, vec4_take
from .source import META_WORDS, WORKGROUP, Dispatch, fill, functions, grid_for, pack_meta, shader


def strided(step: MapStep, nodes: list[Node]) -> list:
    """Per load, its View where it is read through index arithmetic (else None: a plain flat load)."""
    return [nodes[i].view if nodes[i].view is not None and not nodes[i].view.identity else None for i in step.loads]


def chain_key(step: MapStep, nodes: list[Node]) -> tuple:
    """The structure of a fused chain: what the WGSL text depends on (never values or sizes): the loads
    (each one's view_key), the chain of functions (for their dtypes), the stores, the stores written
    through a load, and the WGSL types of the loads and of the stores."""
    views = strided(step, nodes)
    loads = tuple(view_key(v) for v in views)
    local = {nid: ("in", j) for j, nid in enumerate(step.loads)}
    chain = []
    for k, nid in enumerate(step.nodes):
        node = nodes[nid]
        refs = tuple(local[i] for i in node.inputs) if node.inputs else (generator_ref(node, k),)
        if gathers(node):  # its data: a load read whole, at the index tw_take{k} computes (map_gather.py)
            refs = take_refs(node, refs, views, nodes)
        chain.append((function(node, nodes), refs, len(node.params)))
        local[nid] = ("t", k)
    types = tuple(nodes[i].dtype.wgsl for i in step.loads), tuple(nodes[i].dtype.wgsl for i in step.stores)
    quads = tuple(vec4_view(v) and t != HALF for v, t in zip(views, types[0]))
    return loads, tuple(chain), tuple(local[nid] for nid in step.stores), inplace(step, nodes, views), types, quads


def vec4_view(view) -> bool:
    """Is a strided view read a vec4 at a time in the vec4 form: unmasked, its index_view's last dimension
    contiguous and whole vec4s, its offset and other strides multiples of 4 (a row-broadcast bias, a slice of
    rows)? Then the four elements of an output vec4 are one aligned vec4 of its storage, found by one index
    computation (tw_at of the vec4's first element), not four."""
    if view is None or view.identity or view.mask is not None:
        return False
    at = index_view(view)
    return (
        bool(at.shape)
        and at.strides[-1] == 1
        and at.shape[-1] % 4 == 0
        and at.offset % 4 == 0
        and all(s % 4 == 0 for s in at.strides[:-1])
    )


def generator_ref(node: Node, k: int) -> tuple:
    """A generator's index argument: ("idx", 0), the flat index, or ("at", k, rank) through its strides."""
    strides = node.options.get("strides")
    if strides is None or strides == contiguous_strides(node.shape, strides):
        return ("idx", 0)
    return ("at", k, len(strides))


def generator_words(step: MapStep, nodes: list[Node]) -> list[int]:
    """The tw_meta words of the chain's strided generators, in chain order (index_fn's: offset 0, shape, strides)."""
    words = []
    for k, nid in enumerate(step.nodes):
        node = nodes[nid]
        if not node.inputs and generator_ref(node, k)[0] == "at":
            words += [0, *node.shape, *node.options["strides"]]
    return [w & 0xFFFFFFFF for w in words]


def inplace(step: MapStep, nodes: list[Node], views=None) -> tuple:
    """Per store, the load it writes through (its result goes into a node the step also reads plainly, at
    the index it writes: WebGPU binds such a buffer once, read_write), else None."""
    views = strided(step, nodes) if views is None else views
    plain = {nid: j for j, nid in enumerate(step.loads) if views[j] is None}
    return tuple(plain.get(nodes[nid].into) for nid in step.stores)


# ---------------------------------------------------------------- loads through a view (shared with other
# generators): load j reads array `in{j}` (array<T>, T its WGSL type) at element `i` of its view's shape, row-major.


def index_view(view: View) -> View:
    """`view` as the index functions read it: an unmasked view's leading dimensions of stride 0 left out (a
    value broadcast along them adds nothing to an address, and no dimension outside them needs their
    quotient), so that a broadcast scalar reads one address with no integer division at all."""
    lead = 0
    if view.mask is None:
        while lead < len(view.shape) and view.strides[lead] == 0:
            lead += 1
    return View(view.shape[lead:], view.strides[lead:], view.offset) if lead else view


def view_key(view) -> tuple[int, bool] | None:
    """What the WGSL of a load depends on: None for a plain flat load (no view, or a row-major one from
    the start), else (rank of its index_view, masked)."""
    if view is None or view.identity:
        return None
    return len(index_view(view).shape), view.mask is not None


def view_words(view) -> list[int]:
    """The u32 tw_meta words of one strided load (see index_fn): its index_view's offset, shape, strides (i32
    bits), then for a masked view lo, hi per dimension; [] for a plain load."""
    if view_key(view) is None:
        return []
    at = index_view(view)
    words = [at.offset, *at.shape, *at.strides]
    for lo, hi in view.mask or ():
        words += [lo, hi]
    return [w & 0xFFFFFFFF for w in words]


def view_meta(views: list) -> list[int]:
    """The words of the loads' views, in load order (plain loads have none)."""
    return [w for v in views for w in view_words(v)]


def meta_len(key) -> int:
    """How many tw_meta words a load of this view_key takes."""
    if key is None:
        return 0
    rank, masked = key
    return 1 + 2 * rank + (2 * rank if masked else 0)


def index_fn(j: int | str, key, at: int, elem: str = "f32", base: str = "") -> str:
    """WGSL helper of load j, its view's words in tw_meta from `at` ('' for a plain load; `base`: a WGSL
    expression and ' + ' before it, where the words' place is known only at run time): a strided load
    gets `tw_at{j}(i) -> u32`, its element index; a masked one `tw_ld{j}(i) -> elem`, the value, 0 outside
    the mask (the address is computed as i32 and read clamped at 0 under `select`: an invalid element's
    address may lie outside the storage). A float16 load (elem HALF) reads through `half_fn`'s helper."""
    if key is None:
        return ""
    half = elem == HALF
    elem = "f32" if half else elem
    rank, masked = key
    shape = lambda d: f"tw_meta[{base}{at + 1 + d}u]"  # noqa: E731
    stride = lambda d: f"bitcast<i32>(tw_meta[{base}{at + 1 + rank + d}u])"  # noqa: E731
    head = f"fn tw_ld{j}(i: u32) -> {elem} {{" if masked else f"fn tw_at{j}(i: u32) -> u32 {{"
    lines = [head, "    var rem = i;", f"    var at = bitcast<i32>(tw_meta[{base}{at}u]);"]
    if masked:
        lines.append("    var ok = true;")
    for d in range(rank - 1, -1, -1):
        if masked:
            lo, hi = at + 1 + 2 * rank + 2 * d, at + 2 + 2 * rank + 2 * d
            lines.append(f"    let k{d} = rem % {shape(d)};")
            lines.append(f"    at = at + i32(k{d}) * {stride(d)};")
            lines.append(f"    ok = ok & (k{d} >= tw_meta[{base}{lo}u]) & (k{d} < tw_meta[{base}{hi}u]);")
        else:
            lines.append(f"    at = at + i32(rem % {shape(d)}) * {stride(d)};")
        if d:
            lines.append(f"    rem = rem / {shape(d)};")
    value = f"tw_h{j}(u32(max(at, 0)))" if half else f"in{j}[u32(max(at, 0))]"
    tail = f"    return select({elem}(0), {value}, ok);" if masked else "    return u32(at);"
    return "\n".join(lines + [tail, "}"])


TAKE_GEOMETRY = ("outer", "n", "inner")  # a gather's tw_meta words (gathers.axis_geometry)
TAKE_WORDS = len(TAKE_GEOMETRY)


def take_words(step, nodes: list[Node]) -> list[int]:
    """The tw_meta words of a step's gathers, in member order (their geometry, TAKE_GEOMETRY)."""
    return [nodes[m].options[w] for m in step.nodes if gathers(nodes[m]) for w in TAKE_GEOMETRY]


HALF = "f16"  # float16's DType.wgsl: two halves of a u32 word, computed as f32 (shaders/functions_half.wgsl)


def half_fn(j: int) -> str:
    """WGSL helper of float16 load j (scalar form): tw_h{j}(e) -> f32, element e of its storage."""
    return f"fn tw_h{j}(e: u32) -> f32 {{ return tw_f16_at(in{j}[e >> 1u], e); }}"


def declared(t: str, vec: bool, store: bool) -> str:
    """The element type a binding of WGSL type `t` is declared with: vec4s or scalars; float16's words two
    or one at a time, atomic where a scalar kernel stores them (a neighbour writes the word's other half)."""
    if t == HALF:
        return "vec2<u32>" if vec else "atomic<u32>" if store else "u32"
    return f"vec4<{t}>" if vec else t


def load_expr(j: int, key, i_expr: str, half: bool = False, vec: bool = False) -> str:
    """WGSL expression of load j at element `i_expr` of its view (after index_fn's helper); `half`: of
    float16 storage (half_fn's helper), `vec`: its vec4 at plain index `i_expr`."""
    if key is None:
        if half:
            return f"tw_f16_vec4(in{j}[{i_expr}])" if vec else f"tw_h{j}({i_expr})"
        return f"in{j}[{i_expr}]"
    if key[1]:
        return f"tw_ld{j}({i_expr})"
    return f"tw_h{j}(tw_at{j}({i_expr}))" if half else f"in{j}[tw_at{j}({i_expr})]"


@lru_cache(maxsize=512)
def map_source(key: tuple, vec: bool, vpt: int) -> str:
    """WGSL of one chain structure, on vec4s (each lane through the same scalar functions) or on scalars."""
    decls, body = chain_wgsl(key, vec)
    loop = "\n".join(
        f"    if (base + {j * WORKGROUP}u < count) {{ tw_chain(base + {j * WORKGROUP}u); }}" for j in range(vpt)
    )
    return functions() + fill(shader("map"), BINDINGS="\n".join(decls), BODY="\n".join(body), VPT=vpt, LOOP=loop)


def chain_wgsl(key: tuple, vec: bool, first: int = 1, start: int = META_WORDS, base: str = "", given: bool = False):
    """(declarations, body lines) of a chain (its chain_key) on element (or vec4) `i`: its bindings from number
    `first` (loads, then stores), their helpers, and the body that loads, computes and stores. The chain's
    scalar parameters come from tw_param, its views' words from tw_meta[base + start] on. `given`: load 0 is
    not read but given as `v` (a matmul's product, kernels/matmul.py's epilogue)."""
    loads, chain, stores, through, (load_types, store_types), quads = key
    n_loads = len(loads)
    bound = [j for j in range(n_loads) if not (given and j == 0)]
    access = ["read_write" if j in through else "read" for j in range(n_loads)]
    decls = [
        f"@group(0) @binding({first + k}) var<storage, {access[j]}> in{j}: array<{declared(load_types[j], vec, False)}>;"
        for k, j in enumerate(bound)
    ]
    after = first + len(bound)
    outs = [j for j, t in enumerate(through) if t is None]
    decls += [
        f"@group(0) @binding({after + k}) var<storage, read_write> out{j}: array<{declared(store_types[j], vec, True)}>;"
        for k, j in enumerate(outs)
    ]
    if not vec:
        decls += [half_fn(j) for j, t in enumerate(load_types) if t == HALF]
    n_params = sum(p for _, _, p in chain)
    at, index_fns = start + n_params, []
    for j, load in enumerate(loads):
        if load is not None:
            index_fns.append(index_fn(j, load, at, load_types[j], base))
            at += meta_len(load)
    for _, inputs, _ in chain:  # strided generators' index helpers
        for ref in inputs:
            if ref[0] == "at":
                index_fns.append(index_fn(f"g{ref[1]}", (ref[2], False), at, "f32", base))
                at += meta_len((ref[2], False))
    for k, (fn, inputs, _) in enumerate(chain):  # gathers' index helpers
        if inputs[0][0] == "whole":
            index_fns.append(take_fn(k, at, fn.endswith("_u32"), inputs[0][2]))
            at += TAKE_WORDS
    elements = {r[1] for _, inputs, _ in chain for r in inputs if r[0] == "in"}
    body = [f"    let p{q} = tw_param({q}u);" for q in range(n_params)]
    body += [
        f"    let v_in{j} = "
        + (
            "v;"
            if given and j == 0
            else f"in{j}[tw_at{j}(i * 4u) / 4u];"
            if vec and quads[j]
            else f"{load_expr(j, load, 'i', load_types[j] == HALF, vec)};"
        )
        for j, load in enumerate(loads)
        if j in elements
    ]
    lanes = (".x", ".y", ".z", ".w") if vec else ("",)

    def name(ref, lane):
        kind, j = ref[:2]
        if kind in ("idx", "at"):  # a generator's argument: the flat element index (of the lane, on vec4s)
            flat = f"(i * 4u + {'xyzw'.index(lane[1:])}u)" if lane else "i"
            return f"tw_atg{j}({flat})" if kind == "at" else flat
        return f"v_in{j}{lane}" if kind == "in" else f"t{j}{'_' + lane[1:] if lane else ''}"

    q = 0
    for k, (fn, inputs, n_p) in enumerate(chain):
        params = [f"p{q + r}" for r in range(n_p)]
        q += n_p
        if inputs[0][0] == "whole" and vec:  # a gather (map_gather.py)
            body += vec4_take(k, inputs, name)
            continue
        if inputs[0][0] == "whole":
            j, index = inputs[0][1], inputs[1]
            v = load_expr(index[1], loads[index[1]], "i") if index[0] in ("row", "lane") else name(index, "")
            body.append(f"    let t{k} = {load_expr(j, loads[j], f'tw_take{k}(i, {v})', load_types[j] == HALF)};")
            continue
        for lane in lanes:
            args = [name(ref, lane) for ref in inputs] + params
            body.append(f"    let t{k}{'_' + lane[1:] if lane else ''} = {fn}({', '.join(args)});")
    for j, ref in enumerate(stores):
        value, half = name(ref, ""), store_types[j] == HALF
        if vec and ref[0] == "t":
            value = f"vec4<{'f32' if half else store_types[j]}>({', '.join(name(ref, lane) for lane in lanes)})"
        target = f"out{j}" if through[j] is None else f"in{through[j]}"
        if half and vec:
            body.append(f"    {target}[i] = tw_f16_pack4({value});")
        elif half:  # this element's half of its word, the other half left to its neighbour
            body.append(f"    atomicAnd(&{target}[i >> 1u], ~(0xffffu << ((i & 1u) * 16u)));")
            body.append(f"    atomicOr(&{target}[i >> 1u], tw_f16_bits({value}) << ((i & 1u) * 16u));")
        else:
            body.append(f"    {target}[i] = {value};")
    return decls + index_fns, body


# A kernel holds its chain once per element it handles in a thread (4 lanes x vpt vec4s, or 1 on f32): at
# most this many op costs (ops.Op.cost: 4 for exp/tanh/log ops, 1 for most) in all; longer chains run on
# fewer copies, down to f32 (one copy). Why: a long chain inlined per element is tens of thousands of GPU
# instructions run once each, missing the instruction cache all the way, and slow to compile
# (docs/benchmarks.md, "Notes moved from code comments").
CODE_BUDGET = 64


def form(step: MapStep, nodes: list[Node], caps: Caps, key: tuple) -> tuple[bool, int]:
    """(vec4 access?, vec4s per thread) of a map step (`key`: its chain_key): vec4 where every load is plain
    (or a gather's index read through its view, map_gather.vec4_ok), every gather's data a plain 32-bit load,
    and the chain's copies fit CODE_BUDGET, else f32 with strided loads indexed."""
    if not caps.vec_ok(step.size) or not vec4_ok(key):
        return False, 1
    weight = sum(nodes[nid].op.cost for nid in step.nodes)
    for vpt in dict.fromkeys((max(1, caps.map_vpt), 1)):
        if 4 * vpt * weight <= CODE_BUDGET:
            return True, vpt
    return False, 1


def dispatches(step: MapStep, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    """One dispatch of the step's chain, in the form `form` picks."""
    views = strided(step, nodes)
    key = chain_key(step, nodes)
    vec, vpt = form(step, nodes, caps, key)
    source = map_source(key, vec, vpt)
    params = tuple(v for nid in step.nodes for v in nodes[nid].params)
    loads = [storage(nodes, i).id for i in step.loads]
    stores = [nid for nid, t in zip(step.stores, inplace(step, nodes, views)) if t is None]  # others: through a load
    binds = tuple(enumerate([*loads, *stores], start=1))
    count = -(-step.size // 4) if vec else step.size
    groups = -(-count // (WORKGROUP * vpt))
    words = view_meta(views) + generator_words(step, nodes) + take_words(step, nodes)
    meta = pack_meta([count], params) + struct.pack(f"<{len(words)}I", *words)
    return [Dispatch(source, "main", binds, grid_for(groups, caps.max_per_dim), meta)]
