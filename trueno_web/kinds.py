"""Op kinds as data: one row per kind says what differs between them.

A kind's row gives its input names, the kernel template it runs on (elementwise kinds share the fused
`map` template), its output-shape rule (the checks at call time), its work estimate for `auto`, and how
its reference is called: the vectorised NumPy function of a catalog row and the pure-Python one. Every
other layer looks a kind up here or in its own table keyed by template (`kernels.TEMPLATES`,
`backends.wasm_runners.RUNNERS`), so adding a kind is one row here and one entry per backend table.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from . import attention_kind, matmul_kind, sort_kinds
from .errors import TruenoValueError
from .fft_kinds import fft_numpy, fft_python, fft_shape, fft_work
from .gathers import scatter_numpy, scatter_python, scatter_shape, take_numpy, take_python, take_shape
from .layout import contiguous_strides


class Kind(StrEnum):
    UNARY = "unary"
    BINARY = "binary"
    TERNARY = "ternary"
    REDUCE = "reduce"
    SOFTMAX = "softmax"
    MATMUL = "matmul"
    CONV2D = "conv2d"
    SCAN = "scan"  # a running fold along rows (cumulative_sum, cumulative_prod)
    GENERATOR = "generator"  # no inputs: each element computed from its index (tw.random's draws)
    GATHER = "gather"  # take: its first input read at an index computed from its second (fuses as a map member)
    SCATTER = "scatter"  # scatter_add: values added into a copy of x at computed indices (atomics)
    SORT = "sort"  # along the last axis: the values or their indices (sort_kinds.py)
    SEARCH = "search"  # searchsorted: an index into a sorted 1-D x1 per element of x2
    FFT = "fft"  # discrete Fourier transforms along axes (fft_kinds.py): the NumPy backend's only
    ATTENTION = "attention"  # softmax(q @ k^T * scale, masked) @ v, fused: no scores in memory (attention_kind.py)


@dataclass(frozen=True)
class KindRow:
    """What an op kind means everywhere: see the module docstring."""

    kind: Kind
    inputs: tuple[str, ...]  # argument names (a row of the catalog may name its own, e.g. dot's a, b)
    template: str  # the kernel template: map, reduce, softmax, matmul, conv2d, scan, scatter, sort or search
    shape: Callable  # (op, input shapes, options) -> (output shape, resolved options); raises TruenoValueError
    work: Callable  # (output shape, input shapes, options) -> units of work, in auto's GPU_FROM units
    numpy: (
        Callable  # (op, arrays, params, options) -> array: how op.numpy is called (elementwise: out=, see _map_numpy)
    )
    python: Callable  # (op, flat lists, shapes, params, options) -> flat list: how op.ref is called
    views: int = 0  # its first `views` inputs may be strided views (rows at any offset and stride, a row's
    # elements adjacent: layout.View.rows_in_place), which its kernels read in place; the others row-major from 0

    @property
    def elementwise(self) -> bool:
        """Each output element from the same element of each input (a gather reads its data elsewhere)."""
        return self.template == "map" and self.kind != Kind.GATHER

    @property
    def mapped(self) -> bool:
        """Runs in the fused map kernel (elementwise kinds, generators, gathers): the planner fuses it."""
        return self.template == "map"

    @property
    def generator(self) -> bool:
        """No inputs: its output shape is the option `shape`, each element made from its flat index."""
        return self.kind == Kind.GENERATOR


# ---------------------------------------------------------------- output shapes (checked at call time)


def _same_length(op, shapes) -> None:
    if len(shapes) == 1 or all([s == shapes[0] for s in shapes]):
        return
    sizes = [math.prod(s) for s in shapes]
    if len(set(sizes)) > 1:
        got = ", ".join(str(n) for n in sizes[:-1]) + f" and {sizes[-1]}"
        raise TruenoValueError(f"{op.name} needs inputs of the same length; got {got} elements")


def _map_shape(op, shapes, options):
    _same_length(op, shapes)
    return shapes[0], {}


def _generator_shape(op, shapes, options):
    """The option shape=(d0, d1, ...) of non-negative ints, checked; no inputs. A generator with the option
    `strides` (the index iota) gets strides=, one int per dimension (default: row-major)."""
    shape = options.get("shape")
    if not isinstance(shape, tuple) or any(isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in shape):
        raise TruenoValueError(f"{op.name} needs shape= a tuple of non-negative ints; got {shape!r:.60}")
    if "strides" not in op.options:
        if "strides" in options:
            raise TruenoValueError(f"{op.name} takes no strides=")
        return shape, {"shape": shape}
    strides = options.get("strides", contiguous_strides(shape))
    if not isinstance(strides, tuple) or len(strides) != len(shape) or any(type(s) is not int for s in strides):
        raise TruenoValueError(f"{op.name} needs strides= one int per dimension of {shape}; got {strides!r:.60}")
    return shape, {"shape": shape, "strides": strides}


def _generated(o) -> dict:
    """The keyword arguments of a generator's references: its strides where it takes them."""
    return {"strides": o["strides"]} if "strides" in o else {}


def _reduce_shape(op, shapes, options):
    """All of the input to (); or, with the internal option rows=R (the tensor layer's axis reductions),
    the flat input as R contiguous rows to (R,)."""
    _same_length(op, shapes)
    size, rows = math.prod(shapes[0]), options.get("rows")
    if rows is None:
        if not op.empty and size == 0:
            raise TruenoValueError(f"{op.name} of an empty array has no value; check the input's length first")
        return (), {}
    if rows < 0 or (size % rows if rows else size):
        raise TruenoValueError(f"{op.name}: {size} elements do not split into {rows} rows")
    if not op.empty and rows and size == 0:
        raise TruenoValueError(f"{op.name} along an empty axis has no value; check the input's shape first")
    return (rows,), {"rows": rows}


def _scan_shape(op, shapes, options):
    """The input's shape: all of it as one row, or (the internal option rows=R, the tensor layer's scans along an
    axis) the flat input as R contiguous rows, each scanned."""
    size, rows = math.prod(shapes[0]), options.get("rows")
    if rows is None:
        return shapes[0], {}
    if rows < 0 or (size % rows if rows else size):
        raise TruenoValueError(f"{op.name}: {size} elements do not split into {rows} rows")
    return shapes[0], {"rows": rows}


def _softmax_shape(op, shapes, options):
    if len(shapes[0]) not in (1, 2):
        raise TruenoValueError(f"{op.name} works along the last axis of a 1-D or 2-D array; got shape {shapes[0]}")
    return shapes[0], {}


def _rank2(name, shapes, what):
    for s, w in zip(shapes, what):
        if len(s) != 2:
            raise TruenoValueError(f"{name} needs a 2-D {w}; got shape {s} (reshape it, or upload with shape=(h, w))")
    return shapes


def _conv2d_shape(op, shapes, options):
    (ih, iw), (kh, kw) = _rank2(op.name, shapes, ("image", "kernel"))
    if kh == 0 or kw == 0 or kh > ih or kw > iw:
        raise TruenoValueError(
            f"{op.name} needs a non-empty kernel no larger than the image; got image {ih}x{iw}, kernel {kh}x{kw}"
        )
    return (ih - kh + 1, iw - kw + 1), {}


# ---------------------------------------------------------------- how the references are called


def _flat(arrays):
    return [a.reshape(-1) for a in arrays]  # same length, any shapes: flat, as the kernels see them


def _shaped(a, shape):
    return a if a.shape == shape else a.reshape(shape)  # an array of the right shape stays itself (not a view)


def _rows(flat, shape):
    cols = shape[-1] if shape else 1
    if not cols:
        return [[] for _ in range(math.prod(shape[:-1]))]
    return [list(flat[i : i + cols]) for i in range(0, len(flat), cols)]


def _reduce_numpy(op, arrays, params, options):
    import numpy

    rows = options.get("rows")
    if rows is None:
        return numpy.asarray(op.numpy(*_flat(arrays)), dtype=arrays[0].dtype)
    if rows == 0:
        return numpy.zeros(0, arrays[0].dtype)
    return op.numpy(*(a.reshape(rows, -1) for a in arrays), axis=1).astype(arrays[0].dtype)


def _reduce_python(op, lists, shapes, params, options):
    rows = options.get("rows")
    if rows is None:
        return [op.ref(*lists)]
    cols = len(lists[0]) // rows if rows else 0
    return [op.ref(*(xs[r * cols : (r + 1) * cols] for xs in lists)) for r in range(rows)]


def _scan_numpy(op, arrays, params, options):
    """op.numpy along the rows of the flat input, in its dtype (integers wrap)."""
    x = arrays[0].reshape(options.get("rows") or 1, -1) if arrays[0].size else arrays[0]
    return _shaped(op.numpy(x, axis=-1, dtype=x.dtype), arrays[0].shape)


def _scan_python(op, lists, shapes, params, options):
    rows = options.get("rows") or 1
    cols = len(lists[0]) // rows if rows else 0
    return [v for r in range(rows) for v in op.ref(lists[0][r * cols : (r + 1) * cols])]


def _map_numpy(op, arrays, params, options, out=None):
    """op.numpy on the inputs as they are where they have one shape (a broadcast or strided view read in
    place, as NumPy reads it), else flat; shaped as the first. `out` (a flat array of their length): the result
    is written there and `out` returned where the op takes out= (Op.writes_out), else a new array."""
    same = arrays[0].ndim > 0 and all(a.shape == arrays[0].shape for a in arrays)  # 0-d: NumPy's scalars, not arrays
    ins = arrays if same else _flat(arrays)
    if out is not None and op.writes_out:
        op.numpy(*ins, *params, out=out.reshape(ins[0].shape) if same else out)
        return out
    return _shaped(op.numpy(*ins, *params), arrays[0].shape)


def _map_row(kind: Kind, inputs: tuple[str, ...]) -> KindRow:
    """An elementwise kind: same-length inputs, one op.numpy call on them flat, op.ref per element."""
    return KindRow(
        kind,
        inputs,
        "map",
        _map_shape,
        work=lambda out, ins, o: math.prod(out),
        numpy=_map_numpy,
        python=lambda op, lists, shapes, params, o: [op.ref(*vals, *params) for vals in zip(*lists)],
    )


KINDS: dict[Kind, KindRow] = {
    row.kind: row
    for row in (
        *(
            _map_row(kind, inputs)
            for kind, inputs in ((Kind.UNARY, ("x",)), (Kind.BINARY, ("a", "b")), (Kind.TERNARY, ("cond", "a", "b")))
        ),
        KindRow(
            Kind.GENERATOR,
            (),
            "map",  # elementwise: it fuses with what reads it (kernels/map.py gives it the element index)
            _generator_shape,
            work=lambda out, ins, o: math.prod(out),
            numpy=lambda op, arrays, params, o, out=None: op.numpy(o["shape"], *params, **_generated(o)),
            python=lambda op, lists, shapes, params, o: op.ref(
                math.prod(o["shape"]), *params, **({"shape": o["shape"]} if "strides" in o else {}), **_generated(o)
            ),
        ),
        KindRow(
            Kind.GATHER,
            ("x", "indices"),
            "map",  # a member of a fused chain: the map kernel reads x whole at the computed index (kernels/map.py)
            take_shape,
            work=lambda out, ins, o: math.prod(out),
            numpy=take_numpy,
            python=take_python,
        ),
        KindRow(
            Kind.SCATTER,
            ("x", "indices", "values"),
            "scatter",
            scatter_shape,
            work=lambda out, ins, o: math.prod(out) + math.prod(ins[1]),
            numpy=scatter_numpy,
            python=scatter_python,
        ),
        KindRow(
            Kind.REDUCE,
            ("x",),
            "reduce",
            _reduce_shape,
            work=lambda out, ins, o: math.prod(ins[0]),
            numpy=_reduce_numpy,
            python=_reduce_python,
        ),
        KindRow(
            Kind.SCAN,
            ("x",),
            "scan",
            _scan_shape,
            work=lambda out, ins, o: math.prod(out),
            numpy=_scan_numpy,
            python=_scan_python,
        ),
        KindRow(
            Kind.SOFTMAX,
            ("x",),
            "softmax",
            _softmax_shape,
            work=lambda out, ins, o: math.prod(out),
            numpy=lambda op, arrays, params, o: op.numpy(arrays[0]),
            python=lambda op, lists, shapes, params, o: [
                v for row in _rows(lists[0], shapes[0]) if row for v in op.ref(row)
            ],
        ),
        KindRow(
            Kind.MATMUL,
            ("a", "b"),
            "matmul",
            matmul_kind.matmul_shape,
            work=lambda out, ins, o: o["batch"] * o["m"] * o["k"] * o["n"],
            numpy=matmul_kind.matmul_numpy,
            python=matmul_kind.matmul_python,
        ),
        KindRow(
            Kind.CONV2D,
            ("image", "kernel"),
            "conv2d",
            _conv2d_shape,
            work=lambda out, ins, o: math.prod(out) * math.prod(ins[1]),
            numpy=lambda op, arrays, params, o: op.numpy(*arrays),
            python=lambda op, lists, shapes, params, o: op.ref(lists[0], *shapes[0], lists[1], *shapes[1]),
        ),
        KindRow(
            Kind.SORT,
            ("x",),
            "sort",
            sort_kinds.sort_shape,
            work=sort_kinds.sort_work,
            numpy=sort_kinds.sort_numpy,
            python=sort_kinds.sort_python,
        ),
        KindRow(
            Kind.SEARCH,
            ("x1", "x2"),
            "search",
            sort_kinds.search_shape,
            work=sort_kinds.search_work,
            numpy=sort_kinds.search_numpy,
            python=sort_kinds.search_python,
        ),
        KindRow(Kind.FFT, ("x",), "fft", fft_shape, work=fft_work, numpy=fft_numpy, python=fft_python),
        KindRow(
            Kind.ATTENTION,
            ("q", "k", "v"),  # attention_masked names a fourth, its mask (Op.input_names)
            "attention",
            attention_kind.attention_shape,
            work=attention_kind.attention_work,
            numpy=attention_kind.attention_numpy,
            python=attention_kind.attention_python,
            views=3,  # q, k and v: slices of one qkv product, heads apart (kernels/attention.py's layout)
        ),
    )
}

#: every kernel template a plan step runs on: the kinds' own, and "rows" (reductions along rows fused with
#: the elementwise ops around them: graph.RowStep)
TEMPLATES: tuple[str, ...] = (*dict.fromkeys(row.template for row in KINDS.values()), "rows")
#: the templates with no kernel, run by the NumPy backend alone: complex numbers, which no kernel holds
#: (dtypes.check_held refuses them on the other backends before anything is planned)
HOST_TEMPLATES: tuple[str, ...] = ("fft",)
