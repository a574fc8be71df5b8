"""A row reduction in two passes (kernels/rows.py): where one workgroup a row, or a row's columns side by side,
would leave most of the GPU idle (`x.mean(axis=(1, 2))` of 64 rows of 2^20; `x.sum(axis=0)` of a few
thousand columns), each row is folded in k chunks first, chunk-major (chunk c of row r is fold c * rows + r,
so a column layout's neighbours stay neighbours), into scratch; then the step itself runs over the rows of
those k folds."""

from __future__ import annotations

from dataclasses import replace

from ..graph import Node, RowStep, row_reduction
from ..layout import View
from .source import Dispatch

SPLIT_ROWS = 256  # a reduction along rows of fewer rows than this, each long, folds each row in chunks first
SPLIT_COLS = 1 << 14
SPLIT_CHUNK = 2048  # elements per chunk at least, along rows
COLUMN_GROUPS = 1024  # a column layout's chunks: workgroups enough for a big GPU
COLUMN_CHUNK = 256  # elements per chunk at least, in a column layout
# a fold of the chunks' folds is the row's: max and min exactly, prod within its roundings, a sum (and a mean: a
# sum, then a scale) through the chunks' compensated pairs
SPLIT_FOLDS = ("sum", "max", "min", "prod")


def chunks_per_row(step: RowStep, nodes: list[Node], spread: int) -> int:
    """How many chunks each row of the step is folded in first, else 1: the step is one fold of one load of its
    own dtype, the rest of it row values (a mean's scale), and the load reads each row along one stride
    (chunk_view); along rows (`spread` 1) the load is plain and the rows are few and long, in a column layout
    (`spread` rows a workgroup) the rows are too few for COLUMN_GROUPS workgroups."""
    if len(step.loads) != 1 or step.aliases:
        return 1
    first, load = nodes[step.nodes[0]], nodes[step.loads[0]]
    if not (row_reduction(first) and first.op.name in SPLIT_FOLDS and first.inputs == (load.id,)):
        return 1
    if load.dtype != first.dtype or any(m not in step.row_values or nodes[m].into is not None for m in step.nodes):
        return 1
    if chunk_view(load, step.rows, step.cols, 1) is None:
        return 1
    if spread > 1:
        more = lambda k: -(-step.rows // spread) * k < COLUMN_GROUPS and step.cols // (2 * k) >= COLUMN_CHUNK  # noqa: E731
    elif load.view is None or load.view.identity:
        if step.rows >= SPLIT_ROWS or step.cols < SPLIT_COLS:
            return 1
        more = lambda k: step.rows * k < 2 * SPLIT_ROWS and step.cols // (2 * k) >= SPLIT_CHUNK  # noqa: E731
    else:
        return 1
    k = 1
    while step.cols % (2 * k) == 0 and more(k):
        k *= 2
    return k


def chunk_view(load: Node, rows: int, cols: int, k: int) -> View | None:
    """The load read as k chunks of each of its rows, chunk-major: shape (k, *row dims, cols // k); None where
    a row is not one stride apart (its columns span several dimensions of the view, or a mask)."""
    v = load.view
    if v is None or v.identity:
        row_shape, row_strides, stride, offset = (rows,), (cols,), 1, 0
    elif v.mask is None and v.shape and v.shape[-1] == cols:
        row_shape, row_strides, stride, offset = v.shape[:-1], v.strides[:-1], v.strides[-1], v.offset
    else:
        return None
    n = cols // k
    return View((k, *row_shape, n), (n * stride, *row_strides, stride), offset)


def split_dispatches(step: RowStep, nodes: list[Node], k: int, run) -> list[Dispatch]:
    """The step in two passes: its fold over rows * k chunks into scratch (a float sum's as compensated pairs,
    so the row's sum keeps its accuracy bound), then the step itself over the rows of those k chunk folds (2k
    pair halves) each, the scratch read as its load. `run(step, nodes, pairs=False)`: rows.dispatches."""
    first, load = nodes[step.nodes[0]], nodes[step.loads[0]]
    chunks, pairs = step.rows * k, first.op.name == "sum" and first.dtype.kind == "float"
    per = 2 if pairs else 1
    base = load.inputs[0] if load.view is not None else load.id
    virtual = list(nodes)  # the nodes as each pass sees them (the batch's own are not changed)
    view = chunk_view(load, step.rows, step.cols, k)
    chunked = Node(len(virtual), None, (base,), (), view.shape, view=view, dtype=load.dtype)
    virtual.append(chunked)
    virtual[first.id] = Node(
        first.id, first.op, (chunked.id,), first.params, (chunks,), {**first.options, "rows": chunks}, dtype=first.dtype
    )
    head = RowStep(chunks, step.cols // k, [first.id], {first.id}, {}, [chunked.id], [first.id])
    (fold,) = run(head, virtual, pairs)
    partial = Node(len(virtual), None, (), (), (chunks * per,), dtype=first.dtype)  # the scratch, read by the rest
    folds = View((step.rows, k, per), (per, step.rows * per, 1))  # row r's k folds (each a pair for a sum)
    rows_of = Node(partial.id + 1, None, (partial.id,), (), folds.shape, view=folds, dtype=first.dtype)
    virtual += [partial, rows_of]
    virtual[first.id] = Node(
        first.id, first.op, (rows_of.id,), first.params, first.shape, first.options, dtype=first.dtype
    )
    rest = RowStep(step.rows, k * per, list(step.nodes), set(step.row_values), {}, [rows_of.id], list(step.stores))
    (finish,) = run(rest, virtual)
    to_scratch = lambda binds, nid: tuple((b, "partials" if ref == nid else ref) for b, ref in binds)  # noqa: E731
    return [
        replace(fold, bindings=to_scratch(fold.bindings, first.id), scratch=chunks * per * 4),
        replace(finish, bindings=to_scratch(finish.bindings, partial.id)),
    ]
