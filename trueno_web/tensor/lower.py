"""realize(): the expressions under some tensors lowered to ONE GpuCommandBatch, executed once. (The
module is not named realize.py: the package's `realize` function would hide it.)

Each shared subexpression is recorded once; elementwise chains fuse in the batch's planner; the
realised tensors, and the host data the batch uploaded (numbers aside), stay on the device as DeviceArrays, and their
expressions are dropped (so a loop that realises each step does not grow a graph). A tensor is read
here only through `t.device` and `t.expr` (and `expr.py`'s layout helpers).
"""

from __future__ import annotations

from ..batch import GpuCommandBatch
from ..errors import TruenoTypeError, TruenoValueError
from ..gcpause import collector_paused
from ..host import HostData
from ..resident import DeviceArray
from .expr import NO_OPTIONS, Expr


async def realize(*tensors) -> None:
    """Compute every tensor given in ONE batch and execute; each keeps its result on its device."""
    if not tensors:
        return
    for t in tensors:
        if not isinstance(getattr(t, "expr", None), Expr):
            raise TruenoTypeError(f"realize() takes tensors, got {type(t).__name__}")
    devices = {id(t.device) for t in tensors}
    if len(devices) > 1:
        raise TruenoValueError("realize() runs one device's tensors at a time; call it once per device")
    batch = GpuCommandBatch(tensors[0].device)
    try:
        ids: dict[int, object] = {}
        targets = []
        for t in tensors:
            view = t.expr.view
            base = t.expr.inputs[0] if view is not None and view.identity else t.expr.contiguous()
            if base.leaf is None or isinstance(base.leaf, HostData):
                targets.append(base)
            if view is not None and not view.identity:
                t.expr = base  # a strided result is read as its row-major copy
        with collector_paused():
            order = record(batch, targets, ids)
        for e in targets:
            batch.keep(ids[id(e)])
        await batch.execute()
        # host data stays on the device, but for numbers (0-d): uploading 4 bytes again costs less than
        # keeping a buffer for every number a loop ever uses (the device's constants are shared expressions)
        uploads = [e for _, e in order if isinstance(e.leaf, HostData) and e.shape]
        arrays: dict[int, DeviceArray] = {}  # node -> its DeviceArray (equal constants share one node)
        for e in [*targets, *uploads]:  # results and uploads stay on the device; expressions go
            if not isinstance(e.leaf, DeviceArray):
                buf = ids[id(e)]
                arr = arrays[buf.index] = arrays.get(buf.index) or batch.detach(buf)
                e.op, e.inputs, e.params, e.options, e.leaf = None, (), (), NO_OPTIONS, arr
    finally:
        batch.release()


def record(batch, roots, ids: dict, apart=()) -> list:
    """Record the expressions under `roots` into `batch`, each once (and equal ones once, but for the roots
    and the expressions in `apart`: jit's argument slots); `ids` maps id(expr) to its BufferId. Returns
    (id, expr) of each, children first."""
    order = _walk(roots)
    _emit(batch, order, ids, {id(e) for e in roots} | {id(e) for e in apart})
    return order


def _walk(roots):
    """(id, expr) of every expression under `roots`, each once, children before parents (no recursion)."""
    seen, order, stack = set(), [], list(roots)
    while stack:
        e = stack.pop()
        if e is None:  # the marker pushed under an expression's inputs: they are all in order now
            e = stack.pop()
            order.append((id(e), e))
        elif id(e) not in seen:
            seen.add(id(e))
            stack += (e, None)
            stack += e.inputs[::-1]  # the first input is explored first: program order for chains like count += x
    return order


def _emit(batch, order, ids: dict, apart: set[int]) -> None:
    """Record the expressions of `order` (from _walk) into the batch; ids maps id(expr) to its BufferId.
    Equal expressions are recorded once, so a kernel loads and computes each value once: 0-d host data of
    the same value (numbers not kept by the device: expr.constant), the same view of one node, and the
    same elementwise op on the same nodes, except the expressions `apart` (a target keeps a DeviceArray
    of its own; an argument slot of a jitted function takes its own value)."""
    seen: dict[tuple, object] = {}
    for key, e in order:
        leaf = e.leaf
        if leaf is not None:
            if isinstance(leaf, DeviceArray):
                ids[key] = batch.import_buffer(leaf)
                continue
            same = ("leaf", leaf.shape, e.dtype.name, bytes(leaf.data)) if leaf.size == 1 and key not in apart else None
            if same is not None and same in seen:
                ids[key] = seen[same]
                continue
            ids[key] = batch.upload(leaf.data, shape=leaf.shape, dtype=e.dtype)
        elif e.view is not None:
            base = ids[id(e.inputs[0])]
            same = ("view", base.index, e.view) if key not in apart else None
            if same is not None and same in seen:
                ids[key] = seen[same]
                continue
            ids[key] = batch.view(base, e.view.shape, e.view.strides, e.view.offset, e.view.mask)
        else:
            inputs = [ids[id(i)] for i in e.inputs]
            same = (
                ("op", e.op.name, tuple([b.index for b in inputs]), e.params, e.dtype.name)
                if e.op.elementwise and not e.options and key not in apart
                else None
            )
            if same is not None and same in seen:
                ids[key] = seen[same]
                continue
            ids[key] = batch.record_checked(e.op, inputs, e.params, e.shape, e.options, e.dtype)
        if same is not None:
            seen[same] = ids[key]
