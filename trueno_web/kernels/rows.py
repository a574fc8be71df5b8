"""The row kernel (shaders/rows.wgsl): reductions along rows fused with the elementwise ops around them
(a graph.RowStep). One group of threads per row computes each reduction's input chain as it reads the
row, folds it, then the elementwise ops on the row's results; a last pass over the row stores the
element values something needs afterwards. Element values are recomputed in each pass that needs
them (loads are cheap next to a round trip through memory); loads may be strided views. A strided element
load whose trailing dimensions span a row (a broadcast position, a transposed or sliced tensor) is read at
base(row) + col * stride: its row's part of the index arithmetic runs once per thread, not per element.
On software adapters (Caps.rows_direct) a thread takes a whole row and folds it alone: a CPU rasterizer runs a
workgroup's lanes one group after another, and a barrier switches every group (docs/benchmarks.md)."""

from __future__ import annotations

import math
import struct
from functools import lru_cache

from ..errors import LimitError
from ..graph import Node, RowStep, function, gathers, row_reduction, storage
from .caps import Caps
from .map import TAKE_WORDS, index_fn, index_view, load_expr, meta_len, take_words, view_key, view_words
from .map_gather import geometry, take_fn
from .rows_split import COLUMN_GROUPS, chunks_per_row, split_dispatches
from .source import (
    META_WORDS,
    ONE_BITS,
    WORKGROUP,
    Dispatch,
    accumulator,
    fill,
    fold,
    functions,
    grid_for,
    pack_meta,
    shader,
)


def rows_key(step: RowStep, nodes: list[Node]) -> tuple:
    """The structure of a row step (what the WGSL depends on, never values or sizes): per load its level
    ("e" element, "r" row) and view_key; per member its level and function or reduction; the stores."""
    local = {nid: ("in", j) for j, nid in enumerate(step.loads)}
    local.update({nid: ("m", k) for k, nid in enumerate(step.nodes)})
    ref = lambda i: local[step.aliases.get(i, i)]  # noqa: E731
    row_loads = {i for m in step.nodes if m in step.row_values and not row_reduction(nodes[m]) for i in nodes[m].inputs}
    whole = {nodes[m].inputs[0] for m in step.nodes if gathers(nodes[m])}  # a gather's data: read at its index
    loads = tuple(
        ("r", view_key(nodes[i].view), None)
        if i in row_loads
        else ("e", view_key(nodes[i].view), None if i in whole else row_split(nodes[i].view, step.cols))
        for i in step.loads
    )
    members = []
    for nid in step.nodes:
        node = nodes[nid]
        refs = tuple(ref(i) for i in node.inputs)
        if gathers(node):  # an element value (planner: never a row value)
            refs = (("whole", refs[0][1], geometry(node)), refs[1])
        if row_reduction(node):
            members.append(("red", fold(node.op, node.dtype), refs, 0))
        else:
            members.append(("r" if nid in step.row_values else "e", function(node, nodes), refs, len(node.params)))
    types = tuple(nodes[i].dtype.wgsl for i in step.loads), tuple(nodes[i].dtype.wgsl for i in step.stores)
    return loads, tuple(members), tuple(local[nid] for nid in step.stores), inplace(step, nodes), types


def inplace(step: RowStep, nodes: list[Node]) -> tuple:
    """Per store, the load it writes through, else None: a value whose result goes into a node the step loads
    plainly at its own level (an element value: elements, read by the thread that writes them; a row value:
    one per row, read before the row's folds, written after them): WebGPU binds such a buffer once,
    read_write."""
    plain = {nid: j for j, nid in enumerate(step.loads) if nodes[nid].view is None}
    out = []
    for nid in step.stores:
        j = plain.get(nodes[nid].into)
        out.append(j if j is not None and nodes[step.loads[j]].size == nodes[nid].size else None)
    return tuple(out)


def centred_squares(members: tuple) -> dict[int, tuple[int, tuple, int]]:
    """The sums of squares about a row value that fold along with a sum of the same elements (var, layer_norm:
    B = sum((X - C)^2) where A = sum(X) folds earlier in the step and C is a row value), by member:
    {B: (A, X, C)}. The row kernel folds each such pair once, in register mode and in a loop alike: A's
    elements, their count and their squares about the thread's own mean (Chan's moments, combined across a
    loop's trips and the row's threads exactly as a two-pass sum of squares would be), then
    B = M2 + n (mean - C)^2."""
    sums = {
        k: m[2] for k, m in enumerate(members) if m[0] == "red" and m[1][:2] == ("x", "tw_add") and m[1][4] == "f32"
    }
    out, taken = {}, set()
    for b, refs in sums.items():
        square = members[refs[0][1]] if refs[0][0] == "m" else None
        if square is None or square[:2] != ("e", "tw_mul") or square[2][0] != square[2][1] or square[2][0][0] != "m":
            continue
        diff = members[square[2][0][1]]
        if diff[:2] != ("e", "tw_sub") or diff[2][1][0] != "m" or members[diff[2][1][1]][0] != "r":
            continue
        x, c = diff[2][0], diff[2][1][1]
        a = next((a for a, r in sums.items() if a < b and r == (x,) and a not in taken), None)
        if a is not None:
            out[b] = (a, x, c)
            taken.add(a)
    return out


def row_split(view, cols: int) -> int | None:
    """How many leading dimensions of an unmasked strided `view`'s index_view number its rows, where its
    trailing ones hold exactly `cols` elements (as few trailing ones as can); None: read through the flat index."""
    if view_key(view) is None or view.mask is not None:
        return None
    shape = index_view(view).shape
    for d in range(len(shape), -1, -1):
        inner = math.prod(shape[d:])
        if inner == cols:
            return d
        if inner > cols:
            return None
    return None


def split_fns(j: int, rank: int, outer: int, at: int) -> str:
    """WGSL of a split load j (its view's words in tw_meta from `at`, as index_fn reads them): tw_rb{j}(row),
    the view's offset plus the row's part; tw_cb{j}(col), the column's part (where more than one dimension
    spans the row; a single one is col * its stride, inline)."""

    def part(name: str, arg: str, dims: range, start: str) -> list[str]:
        lines = [f"fn {name}({arg}: u32) -> i32 {{", f"    var rem = {arg};", f"    var at = {start};"]
        for d in reversed(dims):
            lines.append(
                f"    at = at + i32(rem % tw_meta[{at + 1 + d}u]) * bitcast<i32>(tw_meta[{at + 1 + rank + d}u]);"
            )
            if d != dims.start:
                lines.append(f"    rem = rem / tw_meta[{at + 1 + d}u];")
        return lines + ["    return at;", "}"]

    text = part(f"tw_rb{j}", "row", range(outer), f"bitcast<i32>(tw_meta[{at}u])")
    if rank - outer > 1:
        text += part(f"tw_cb{j}", "col", range(outer, rank), "0")
    return "\n".join(text)


def split_load(j: int, rank: int, outer: int, at: int, col: str = "col") -> str:
    """WGSL expression of split load j at column `col` (after split_fns, with `rb{j}` = tw_rb{j}(at_row))."""
    col = f"tw_cb{j}({col})" if rank - outer > 1 else f"i32({col}) * bitcast<i32>(tw_meta[{at + 2 * rank}u])"
    return f"in{j}[u32(rb{j} + {col})]"


@lru_cache(maxsize=256)
def rows_source(key: tuple, pairs: bool = False, slots: int = 0, direct: bool = False, exact: bool = False) -> str:
    """WGSL of one row-step structure. `pairs`: a float sum's row value is stored as its compensated pair (two
    floats at 2 row and 2 row + 1: the first pass of a split row, whose second pass sums the pairs). `slots`:
    where a thread's columns of a row number `slots` at most, its element loads are read once, into
    registers, before the first fold, and every pass over the row reads those (else 0: each pass is a loop
    that loads). `direct`: one thread a row (tpr 1), DIRECT_ROWS a workgroup, each fold the thread's own (no
    workgroup memory, no barrier). `exact`: in register mode, every slot's column is in the row (slots x tpr =
    cols), so the folds take each slot unguarded. A row past the end folds its clamped row's loads (never
    stored): register mode's folds check the column only."""
    loads, members, stores, through, (load_types, store_types) = key
    access = ["read_write" if j in through else "read" for j in range(len(loads))]
    decls = [
        f"@group(0) @binding({j + 1}) var<storage, {access[j]}> in{j}: array<{load_types[j]}>;"
        for j in range(len(loads))
    ]
    outs = [s for s, t in enumerate(through) if t is None]
    decls += [
        f"@group(0) @binding({len(loads) + 1 + k}) var<storage, read_write> out{s}: array<{store_types[s]}>;"
        for k, s in enumerate(outs)
    ]
    at = META_WORDS + sum(m[3] for m in members)
    moments = centred_squares(members) if not pairs else {}
    leads = {a: x for a, x, _ in moments.values()}  # each sum folded with its squares: its element value

    def needed(refs) -> set:
        """The element values and element loads that computing `refs` needs."""
        need, stack = set(), list(refs)
        while stack:
            r = stack.pop()
            if r not in need and (r[0] == "m" and members[r[1]][0] == "e" or r[0] == "in" and loads[r[1]][0] == "e"):
                need.add(r)
                stack.extend(members[r[1]][2] if r[0] == "m" else ())
        return need

    # register mode keeps the element loads that two passes or more read (a fold's and the stores' pass)
    passes = [needed(m[2]) for m in members if m[0] == "red"]
    passes.append(needed([r for r in stores if members[r[1]][0] == "e"]))
    element_load = {}
    cached = [j for j in range(len(loads)) if slots and sum(("in", j) in p for p in passes) > 1]
    prologue = []  # register mode: each slot's column and the cached loads at it
    for u in range(slots):
        prologue += [f"    let c_{u} = min(lane + {u}u * tpr, cols - 1u);", f"    let i_{u} = at_row * cols + c_{u};"]
    for j, (_, vk, outer) in enumerate(loads):
        if outer is None:
            decls.append(index_fn(j, vk, at, load_types[j]))
            element_load[j] = load_expr(j, vk, "i")
            prologue += [f"    let ld{j}_{u} = {load_expr(j, vk, f'i_{u}')};" for u in range(slots) if j in cached]
        else:
            decls.append(split_fns(j, vk[0], outer, at))
            element_load[j] = split_load(j, vk[0], outer, at)
            prologue += [
                f"    let ld{j}_{u} = {split_load(j, vk[0], outer, at, f'c_{u}')};" for u in range(slots) if j in cached
            ]
        at += meta_len(vk)
    for k, (_, fn, refs, _) in enumerate(members):
        if refs and refs[0][0] == "whole":
            decls.append(take_fn(k, at, fn.endswith("_u32"), refs[0][2]))
            at += TAKE_WORDS
    first_param, q = {}, 0
    for k, m in enumerate(members):
        first_param[k], q = q, q + m[3]
    reducers = [
        f"fn tw_red{k}(x: {m[1][4]}, y: {m[1][4]}) -> {m[1][4]} {{ return {m[1][0]}; }}"
        for k, m in enumerate(members)
        if m[0] == "red"
    ]
    if not direct:  # the workgroup folds' memory: float sums' pairs, other float folds', integer ones' per type
        shared = {"tw_shared": "f32", "tw_pairs": "vec2<f32>"}
        shared |= {f"tw_shared_{m[1][4]}": m[1][4] for m in members if m[0] == "red" and m[1][4] != "f32"}
        shared |= {"tw_moments": "vec4<f32>"} if moments else {}
        decls += [f"var<workgroup> {name}: array<{t}, {WORKGROUP}>;" for name, t in shared.items()]

    def value(r, element: bool) -> str:
        kind, j = r
        if kind == "in":
            return f"e_in{j}" if element and loads[j][0] == "e" else f"r_in{j}"
        return f"r{j}" if members[j][0] != "e" else f"e{j}"

    def call(k: int, element: bool) -> str:
        _, fn, refs, n_p = members[k]
        if refs[0][0] == "whole":  # a gather: its data load read at the element it computes
            j = refs[0][1]
            return load_expr(j, loads[j][1], f"tw_take{k}(i, {value(refs[1], element)})")
        args = [value(r, element) for r in refs] + [f"p{first_param[k] + p}" for p in range(n_p)]
        return f"{fn}({', '.join(args)})"

    def elements(refs, indent: str, u: str = "") -> list[str]:
        """Lines that compute the element values (and element loads) `refs` need, in member order (in register
        mode at slot `u`, from its cached loads)."""
        need = needed(refs)
        lines = [
            f"{indent}let e_in{j} = {f'ld{j}_{u}' if j in cached else element_load[j]};"
            for j in range(len(loads))
            if ("in", j) in need
        ]
        return lines + [f"{indent}let e{k} = {call(k, True)};" for k in range(len(members)) if ("m", k) in need]

    body = [f"    let p{p} = tw_param({p}u);" for p in range(q)]
    body += [
        f"    let r_in{j} = {load_expr(j, vk, 'at_row')};" for j, (level, vk, _) in enumerate(loads) if level == "r"
    ]
    body += [f"    let rb{j} = tw_rb{j}(at_row);" for j, (_, _, outer) in enumerate(loads) if outer is not None]
    body += prologue

    def loop(lines, guarded, stores: bool = False, trip: tuple = ()) -> str:
        """A loop over the row, UNROLL columns a trip, each in its own block: `lines` computes a column's values
        (its column clamped to the row, so every load is in bounds and issued before the blocks' folds),
        `guarded` uses them where the column is in the row (and, for `stores`, the row too); `trip` ends each
        trip, after its blocks. In register mode, a block per slot instead."""
        if slots:
            guard = "live && c < cols" if stores else None if exact else "c < cols"
            use = (
                "\n".join(line[4:] for line in guarded)
                if guard is None
                else (f"        if ({guard}) {{\n" + "\n".join(guarded) + "\n        }")
            )
            return "\n".join(
                f"    {{\n        let c = lane + {u}u * tpr;\n        let col = c_{u};\n        let i = i_{u};\n"
                + "\n".join(line[4:] for line in lines(str(u)))
                + "\n"
                + use
                + "\n    }"
                for u in range(slots)
            )
        use = (
            "\n                if (c < cols) {\n"
            + "\n".join("        " + line for line in guarded)
            + "\n                }"
        )
        blocks = [
            f"            {{\n                let c = c0 + {u}u * tpr;\n                let col = min(c, cols - 1u);\n"
            f"                let i = row * cols + col;\n"
            + "\n".join("    " + line for line in lines(str(u)))
            + (use if guarded else "")
            + "\n            }"
            for u in range(UNROLL)
        ]
        head = f"    if (live) {{\n        for (var c0 = lane; c0 < cols; c0 = c0 + {UNROLL}u * tpr) {{\n"
        return head + "\n".join(blocks + list(trip)) + "\n        }\n    }"

    def fold_tree(k: int, shared: str, finish: str, acc: dict) -> str:
        """The workgroup fold of thread states acc{k} (rows_fold.wgsl), leaving v{k} and r{k}."""
        take = "\n".join(
            f"            if ({j}u < fan) {{ a = {acc['COMBINE']}(a, {shared}[lid + {j}u * stride * spread]); }}"
            for j in range(1, FOLD_RADIX)
        )
        return fill(shader("rows_fold"), K=k, SHARED=shared, FINISH=finish, RADIX=FOLD_RADIX, TAKE=take, **acc).rstrip()

    def moment_pass(k: int, x: tuple, finish: str) -> list[str]:
        """Sum k of element value `x` and the moments of its thread's elements (tw_moments: sum pair, squares
        about the thread's mean, count), folded across the row's threads: v{k} the row's moments, r{k} the sum.
        In register mode the squares are a second pass over the registers; in a loop, each trip's UNROLL
        columns are moments of their own (their squares about their mean), added to the thread's by Chan's
        update (a short dependent chain a trip, not one an element)."""
        if not slots:
            trip = ["            var s = tw_pair(0.0);"] + [
                f"            s = tw_lane_add(s, x{k}_{u});" for u in range(UNROLL)
            ]
            trip.append(f"            let n = f32(min((cols - c0 + tpr - 1u) / tpr, {UNROLL}u));")
            trip.append("            let mean = tw_pair_mean(s, n);")
            squares = " + ".join(f"d{u} * d{u}" for u in range(UNROLL))
            trip += [
                f"            let d{u} = select(0.0, (x{k}_{u} - mean.x) - mean.y, c0 + {u}u * tpr < cols);"
                for u in range(UNROLL)
            ] + [f"            acc{k} = tw_moments_add(acc{k}, vec4<f32>(s, {squares}, n));"]
            lines = [f"    var acc{k} = vec4<f32>(0.0);"] + [f"    var x{k}_{u} = 0.0;" for u in range(UNROLL)]

            def column(u: str) -> list[str]:
                """A trip's column u: its element value, 0 past the row."""
                return elements([x], " " * 12, u) + [f"            x{k}_{u} = select(0.0, {value(x, True)}, c < cols);"]

            lines.append(loop(column, [], trip=trip))
            return folded(k, lines, finish)
        count = f"{slots}.0" if exact else "f32(select(0u, (cols - 1u - lane) / tpr + 1u, lane < cols))"
        lines = [f"    var sum{k} = tw_pair(0.0);"]
        lines.append(
            loop(lambda u: elements([x], " " * 12, u), [f"            sum{k} = tw_lane_add(sum{k}, {value(x, True)});"])
        )
        lines += [
            f"    let n{k} = {count};",
            f"    let mu{k} = tw_pair_mean(sum{k}, n{k});",
            f"    var m2_{k} = 0.0;",
        ]
        lines.append(
            loop(
                lambda u: elements([x], " " * 12, u) + [f"            let d = {value(x, True)} - mu{k}.x;"],
                [f"            m2_{k} = m2_{k} + d * d;"],
            )
        )
        # the squares about mu.x, less n (mu.y)^2: the squares about the mean (mu.x + mu.y)
        lines.append(f"    let acc{k} = vec4<f32>(sum{k}, m2_{k} - n{k} * mu{k}.y * mu{k}.y, n{k});")
        return folded(k, lines, finish)

    def folded(k: int, lines: list[str], finish: str) -> list[str]:
        """`lines` (a thread's moments acc{k}), then their fold across the row's threads."""
        if direct:
            return lines + [f"    let v{k} = acc{k};\n    let r{k} = {finish}(tw_pair_value(v{k}.xy));"]
        return lines + [fold_tree(k, "tw_moments", finish, dict(COMBINE="tw_moments_add", VALUE="tw_moments_sum"))]

    for k, (level, fn, refs, _) in enumerate(members):
        if level == "r":
            body.append(f"    let r{k} = {call(k, False)};")
        elif k in moments:  # folded with its sum's elements (centred_squares)
            a, _, c = moments[k]
            body.append(f"    let r{k} = {fn[3]}(tw_moments_centred(v{a}, r{c}));")
        elif k in leads:
            body += moment_pass(k, leads[k], fn[3])
        elif level == "red":
            _, combine, identity, finish, scalar = fn
            acc = accumulator(combine, identity, scalar)
            args = [value(r, True) for r in refs] + ["0.0" if scalar == "f32" else f"{scalar}(0)"] * (2 - len(refs))
            body.append(f"    var acc{k}: {acc['ACC']} = {acc['LIFT']}({identity});")
            body.append(
                loop(
                    lambda u: elements(refs, " " * 12, u) + [f"            let v = tw_red{k}({', '.join(args)});"],
                    [f"            acc{k} = {acc['ADD1']}(acc{k}, v);"],
                )
            )
            if direct:
                body.append(f"    let v{k} = acc{k};\n    let r{k} = {finish}({acc['VALUE']}(v{k}));")
                continue
            shared = {"vec2<f32>": "tw_pairs", "f32": "tw_shared"}.get(acc["ACC"], f"tw_shared_{scalar}")
            body.append(fold_tree(k, shared, finish, acc))
    row_stores = [
        f"out{s}[2u * row] = v{r[1]}.x; out{s}[2u * row + 1u] = tw_pair_error(v{r[1]});"
        if pairs
        else f"{'out' + str(s) if through[s] is None else 'in' + str(through[s])}[row] = r{r[1]};"
        for s, r in enumerate(stores)
        if members[r[1]][0] != "e"
    ]
    if row_stores:
        body.append("    if (live && lane == 0u) { " + " ".join(row_stores) + " }")
    elem_stores = [(s, r) for s, r in enumerate(stores) if members[r[1]][0] == "e"]
    if elem_stores:
        body.append(
            loop(
                lambda u: elements([r for _, r in elem_stores], " " * 12, u),
                [
                    f"            {'out' + str(s) if through[s] is None else 'in' + str(through[s])}[i] = e{r[1]};"
                    for s, r in elem_stores
                ],
                stores=True,
            )
        )
    return functions() + fill(
        shader("rows"),
        BINDINGS="\n".join(d for d in decls if d),
        REDUCERS="\n".join(reducers),
        BODY="\n".join(body),
        THREADS=DIRECT_ROWS if direct else WORKGROUP,
    )


REGISTER_SLOTS = 16  # a row a thread reads at most this many columns of: its loads kept in registers across passes
FOLD_RADIX = 4  # a workgroup fold's tree: values each folding thread takes a level (4: half the barriers of a
# binary tree, and few enough combines in a row; measured against 2, 8 and 16 in docs/benchmarks.md)
UNROLL = 4  # columns a trip of a row loop: loads in flight per thread (a loop of one load a trip waits for each)
DIRECT_ROWS = 32  # a direct kernel's workgroup (software adapters): rows, one thread each; few enough that a
# step of a few dozen rows still makes a workgroup per core
PER_THREAD = 16  # elements (the softmax kernel: vectors) of a row per thread, about: short rows share a
# workgroup, and fewer threads fold each (measured: docs/benchmarks.md, "#26's workloads")
LIGHT_PER_THREAD = 32  # the same, and LIGHT_SLOTS the register slots, for a row step whose element values are
LIGHT_SLOTS = 32  # light (`light`: sums, var, layer_norm): half the threads fold each row; a step with
# exponentials keeps PER_THREAD and REGISTER_SLOTS, its values' registers (docs/benchmarks.md, fifth session)


def threads_per_row(cols: int, per_thread: int = PER_THREAD) -> int:
    """Threads per row of the row kernel and the one-pass softmax: a power of two, about `per_thread` of the
    row's `cols` elements (or vectors) each, at most 256 (a workgroup); short rows share a workgroup and fold
    across fewer threads."""
    return min(WORKGROUP, 1 << max(-(-cols // per_thread) - 1, 0).bit_length())


def light(step: RowStep, nodes: list[Node]) -> bool:
    """Are the step's element values all ops of cost 1 (adds, products, comparisons: no exponential)?"""
    return all(nodes[m].op.cost <= 1 for m in step.nodes if m not in step.row_values)


def trips(cols: int, folds: int, passes: int, tpr: int) -> int:
    """Loop iterations per thread of `passes` loops over rows of `cols` elements and `folds` workgroup folds."""
    return passes * -(-cols // tpr) + folds * fold_trips(tpr)


def fold_trips(tpr: int) -> int:
    """Loop iterations of one workgroup fold over `tpr` threads: rows_fold.wgsl's tree levels."""
    n, width = 0, tpr
    while width > 1:
        n, width = n + 1, max(width // FOLD_RADIX, 1)
    return n


def check_budget(cols: int, folds: int, passes: int, caps: Caps, per_thread: int) -> None:
    """Raise LimitError where `folds` reductions and `passes` loops over rows of `cols` elements, `per_thread`
    of each a thread, run past the adapter's loop budget (batch.record_checked checks one reduction's own
    pass when it is recorded)."""
    n = trips(cols, folds, passes, threads_per_row(cols, per_thread))
    if n > caps.loop_trips:
        longest = (caps.loop_trips - folds * fold_trips(WORKGROUP)) // passes * WORKGROUP
        raise LimitError(
            f"a reduction along rows of {cols} elements runs {n} loop iterations per GPU thread, past this "
            f"adapter's loop budget of {caps.loop_trips} (Mesa's llvmpipe stops a shader's loops there without "
            f"an error); here rows of up to {longest} elements fit: reshape each row into k rows of cols / k, "
            f"reduce, then reduce the k partial results"
        )


COLUMN_ROWS = 32  # rows a workgroup takes side by side in a column layout: a warp's loads, 128 bytes
COLUMN_GROUPS_MIN = 32  # workgroups a column layout that is not folded in chunks needs, else the row layout
COLUMN_ROWS_MIN = 8  # rows a workgroup a column layout not folded in chunks narrows to, halving from COLUMN_ROWS
# while it makes fewer than rows_split.COLUMN_GROUPS workgroups (var(axis=0): two folds, never in chunks):
# 32-byte segments a warp's load, four times the workgroups (docs/benchmarks.md, seventh session)


def column_spread(step: RowStep, nodes: list[Node], key: tuple, caps: Caps) -> int:
    """COLUMN_ROWS where the step reads columns (`x.sum(axis=0)`: every element load of it a split view whose
    rows are adjacent in memory or the same for every row, no element value stored, rows enough to fill a
    warp, its loops within the adapter's budget with fewer threads a row), so that adjacent threads take
    adjacent rows; else 1 (a row's threads adjacent, reading along the row)."""
    loads, members, stores, _, _ = key
    if step.rows < COLUMN_ROWS or any(members[r[1]][0] == "e" for r in stores):
        return 1
    folds = sum(m[0] == "red" for m in members)
    if trips(step.cols, folds, folds, WORKGROUP // COLUMN_ROWS) > caps.loop_trips:
        return 1
    element = [(i, outer) for i, (level, _, outer) in zip(step.loads, loads) if level == "e"]
    if not element or any(outer is None or outer == 0 for _, outer in element):
        return 1
    steps = [index_view(nodes[i].view).strides[outer - 1] for i, outer in element]  # 0: broadcast along the rows
    return COLUMN_ROWS if 1 in steps and all(s in (0, 1) for s in steps) else 1


def dispatches(step: RowStep, nodes: list[Node], caps: Caps, pairs: bool = False) -> list[Dispatch]:
    """One dispatch: TPR threads per row (threads_per_row), or COLUMN_ROWS rows side by side (column_spread,
    where that makes COLUMN_GROUPS_MIN workgroups at least; down to COLUMN_ROWS_MIN where the rows are not
    folded in chunks and the workgroups few), or where caps.rows_direct one thread a row (its
    loops within the budget); two for a reduction whose rows are folded in chunks first
    (rows_split.chunks_per_row). Raises LimitError where a row is too long for the adapter's loop budget.
    `pairs`: see rows_source."""
    key = rows_key(step, nodes)
    _, members, stores, through, _ = key
    cols = step.cols
    folds = sum(m[0] == "red" for m in members)
    passes = folds + any(members[r[1]][0] == "e" for r in stores)  # a loop over the row each
    direct = caps.rows_direct and trips(cols, folds, passes, 1) <= caps.loop_trips
    spread = 1 if direct else column_spread(step, nodes, key, caps)
    k = 1 if pairs else chunks_per_row(step, nodes, spread)
    if k == 1 and 1 < spread and step.rows < COLUMN_ROWS * COLUMN_GROUPS_MIN:  # too few workgroups side by side
        spread, k = 1, 1 if pairs else chunks_per_row(step, nodes, 1)
    while k == 1 and not pairs and spread > COLUMN_ROWS_MIN and step.rows // spread < COLUMN_GROUPS:
        spread //= 2
    if k > 1:
        return split_dispatches(
            step, nodes, k, lambda part, virtual, pairs=False: dispatches(part, virtual, caps, pairs)
        )
    per_thread, most = (LIGHT_PER_THREAD, LIGHT_SLOTS) if light(step, nodes) else (PER_THREAD, REGISTER_SLOTS)
    tpr = 1 if direct else WORKGROUP // spread if spread > 1 else threads_per_row(cols, per_thread)
    check_budget(cols, folds, passes, caps, per_thread)
    params = tuple(v for nid in step.nodes for v in nodes[nid].params)
    words = [w for i in step.loads for w in view_words(nodes[i].view)]
    words += take_words(step, nodes)
    meta = pack_meta([step.rows, cols, tpr, spread, 0, 0, 0, ONE_BITS], params) + struct.pack(f"<{len(words)}I", *words)
    stored = [nid for nid, t in zip(step.stores, through) if t is None]  # the others: through a load
    binds = tuple(enumerate([storage(nodes, i).id for i in step.loads] + stored, start=1))
    groups = -(-step.rows // (DIRECT_ROWS if direct else WORKGROUP // tpr))
    slots = 1 << (-(-cols // tpr) - 1).bit_length()  # a power of two: few kernel variants
    registers = slots <= most
    source = rows_source(key, pairs, slots if registers else 0, direct, registers and slots * tpr == cols)
    return [Dispatch(source, "main", binds, grid_for(groups, caps.max_per_dim), meta)]
