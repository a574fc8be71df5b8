"""`tw.jit`: trace a tensor function once per input signature, then replay what it recorded. (The module
is not named jit.py: importing it would hide the function `tw.jit`.)

The first call with a signature (the tree of the arguments, each tensor's shape, which arguments are the
same array, the values of the other arguments) runs `f` on the arguments as usual: its expressions are
lowered into one batch and executed, and the batch's graph is kept as a `Program`: node templates, the slots
its arguments fill, the device arrays it reads as constants (closures, and host data `f` made, kept resident
after that first run) and its outputs. A later call with the same signature does not run `f`: it fills the
slots with the new arguments, plans (the planner's cache holds the plan: same structure), executes in one
submit and returns the outputs. Tracing, autodiff and tensor bookkeeping happen once.

As in JAX, what `f` reads besides its tensor arguments is frozen at the trace: Python numbers folded into
ops, host data, the values of closed-over tensors at that time. A Python branch on a tensor's value cannot
be traced (the lazy tensor refuses `bool()`).
"""

from __future__ import annotations

import functools
import inspect
import weakref

from .autodiff.trees import flatten, unflatten
from .batch import GpuCommandBatch
from .donation import reuse_donated
from .errors import GpuError, TruenoTypeError, TruenoValueError
from .graph import Node
from .host import HostData
from .planner import plan
from .resident import DeviceArray
from .tensor import Tensor, realize
from .tensor.expr import Expr
from .tensor.lower import record

__all__ = ["jit"]


class Program:
    """One traced signature's batch graph, replayed with new arguments."""

    def __init__(
        self,
        device,
        nodes: list[Node],
        slots: list[int | None],
        consts: dict[int, DeviceArray],
        outs: list[int],
        donated=(),
    ):
        self.device = device
        self.templates = [(n.op, n.inputs, n.params, n.shape, n.options, n.view, n.keep, n.dtype) for n in nodes]
        self.pending = [n.id for n in nodes if n.op is not None]
        self.slots, self.consts, self.outs = slots, consts, outs
        taken = {nid: k for k, nid in enumerate(slots) if nid is not None}
        self.taken = list(taken.items())  # (slot node, the argument it takes)
        self.returned = [(nid, taken.get(nid)) for nid in outs]  # (output node, the argument it is, or None)
        executor = device.executor
        limit = executor.limits["max_storage_buffers_per_shader_stage"]
        traced = plan(nodes, self.pending, True, limit, executor.fuse_budget, executor.epilogue_budget)
        # on the GPU only (the CPU executors compute into arrays of their own anyway): outputs written into donated
        # arguments, and an arena: the buffers of intermediates kept from one run to the next, so a replay binds
        # the same buffers (its bind groups are reused) and allocates none
        gpu = executor.backend == "webgpu"
        self.reuse = reuse_donated(nodes, traced, slots, outs, donated) if gpu else {}
        self.arena: dict[int, object] | None = {} if gpu else None
        self.plans: dict[frozenset, object] = {}  # by the outputs written in place: no planning key per run
        self.schedules: dict[frozenset, object] = {}  # the same, as the executor replays them (executor.schedule)
        weakref.finalize(self, _give_back, executor, self.arena, self.schedules)

    async def run(self, leaves: list) -> list[DeviceArray]:
        """The outputs for arguments `leaves` (DeviceArrays, or HostData uploaded in the same submit)."""
        self.device.check_open()
        donors = {out: leaves[k] for out, k in self.reuse.items() if isinstance(leaves[k], DeviceArray)}
        which = frozenset(donors)  # the structure differs only by what is written in place
        schedule = self.schedules.get(which)
        if schedule is None:
            return await self._execute(leaves, donors, which)
        executor, stats = self.device.executor, (self.device.stats,)
        given, uploaded, claimed = {}, [], set()
        try:
            for nid, k in self.taken:
                leaf = leaves[k]
                if isinstance(leaf, DeviceArray):
                    leaf.check_alive()
                    given[nid] = leaf.buffer
                else:  # HostData
                    given[nid] = executor.upload(leaf, stats)
                    uploaded.append(nid)
            for out, arg in donors.items():
                given[out] = arg.buffer
            try:
                made = await schedule.run(given, stats)
            except GpuError:
                self._forget()  # a pipeline may be invalid: planned afresh next time
                raise
            given.update(made)
            return self._results(leaves, donors, given, claimed)
        finally:
            for nid in uploaded:
                if nid not in claimed:
                    executor.free(given[nid])

    async def _execute(self, leaves: list, donors: dict, which: frozenset) -> list[DeviceArray]:
        """Run the graph's nodes (built from the templates) through the executor, and keep its schedule."""
        executor = self.device.executor
        stats = (self.device.stats,)
        nodes = [
            Node(i, op, inputs, params, shape, options, view=view, keep=keep, dtype=dtype)
            for i, (op, inputs, params, shape, options, view, keep, dtype) in enumerate(self.templates)
        ]
        for nid, value in {**self.consts, **self._bound(leaves)}.items():
            node = nodes[nid]
            if isinstance(value, HostData):
                node.host = value
            else:
                value.check_alive()
                node.buffer, node.imported, node.done = value.buffer, True, True
        for node in nodes:
            if node.view is not None:
                node.done = nodes[node.inputs[0]].done
        for out, arg in donors.items():
            nodes[out].buffer, nodes[out].into = arg.buffer, self.slots[self.reuse[out]]
        planned = self.plans.get(which)
        if planned is None:
            limit = executor.limits["max_storage_buffers_per_shader_stage"]
            planned = self.plans[which] = plan(
                nodes, self.pending, True, limit, executor.fuse_budget, executor.epilogue_budget
            )
        for nid in planned.fused_away:
            nodes[nid].fused_away = True
        if self.arena is not None:
            for nid, buffer in self.arena.items():
                nodes[nid].buffer, nodes[nid].imported = buffer, True
        claimed: set[int] = set()
        try:
            await executor.execute(nodes, planned, stats)
            varying = set(self._bound(leaves)) | {n for n in self.outs if n not in self.consts}
            schedule = executor.schedule(nodes, planned, varying, stats)
            if schedule is not None:
                self.schedules[which] = schedule
            results = self._results(leaves, donors, {n: nodes[n].buffer for n in self.outs}, claimed)
        finally:
            for node in nodes:
                if node.buffer is not None and not node.imported and node.id not in claimed:
                    if self.arena is not None and node.op is not None and node.id not in self.outs:
                        self.arena[node.id] = node.buffer  # kept for the next run
                    else:
                        executor.free(node.buffer)
        return results

    def _results(self, leaves: list, donors: dict, buffers: dict, claimed: set) -> list[DeviceArray]:
        """The DeviceArrays of the outputs: an argument or constant returned as it is, else the buffer of
        the output node (`buffers`), claimed (recorded in `claimed`) by its new DeviceArray."""
        results: dict[int, DeviceArray] = {}
        for nid, k in self.returned:
            if nid in results:
                continue
            value = self.consts.get(nid) if k is None else leaves[k]
            if isinstance(value, DeviceArray):
                results[nid] = value
                continue
            if nid in donors:
                donors[nid].donate()  # its buffer holds this output now
            shape, dtype = self.templates[nid][3], self.templates[nid][7]
            results[nid] = DeviceArray(self.device, buffers[nid], shape, dtype)
            claimed.add(nid)
        return [results[nid] for nid in self.outs]

    def _bound(self, leaves: list) -> dict:
        """Slot node -> the argument it takes (an argument the function never read has no slot)."""
        return {nid: leaves[k] for nid, k in self.taken}

    def _forget(self) -> None:
        """Drop the kept schedules (their buffers back to the pool)."""
        for schedule in self.schedules.values():
            schedule.release()
        self.schedules.clear()


def _give_back(executor, arena: dict | None, schedules: dict) -> None:
    """A dropped program's arena and schedules back to the executor's pool."""
    for buffer in (arena or {}).values():
        executor.free(buffer)
    for schedule in schedules.values():
        schedule.release()


def _signature(args, static: set[int]):
    """(key, tensor leaves, structure): what a trace depends on, and the tensors to bind."""
    tensors, positions, parts = [], [], []
    for i, a in enumerate(args):
        if i in static:
            parts.append(("static", a))
            continue
        if type(a) is Tensor:  # the common case, without a walk: what flatten gives for a bare leaf
            tensors.append(a)
            positions.append(i)
            parts.append((None, ((a.shape, a.expr.dtype.name),)))
            continue
        leaves, structure = flatten(a, f"argument {i}", _any)
        shapes = []
        for leaf in leaves:
            if isinstance(leaf, Tensor):
                tensors.append(leaf)
                positions.append(i)
                shapes.append((leaf.shape, leaf.dtype.name))
            else:
                shapes.append(("value", leaf))
        parts.append((structure, tuple(shapes)))
    devices = {id(t.device): t.device for t in tensors}
    if len(devices) != 1:
        raise TruenoValueError(
            "a jitted function takes tensors of one device" if devices else "a jitted function needs a tensor argument"
        )
    key = tuple(parts)
    try:
        hash(key)
    except TypeError as e:
        raise TruenoTypeError(f"jit: the arguments that are not tensors must be hashable ({e})") from None
    return key, tensors, positions, next(iter(devices.values()))


def _any(x) -> bool:
    return True


def _storage(t: Tensor):
    """What fills an argument's slot: its DeviceArray, or its host data (uploaded with the program's
    kernels); None where it must be computed first."""
    e = t.expr
    if e.view is None and isinstance(e.leaf, (DeviceArray, HostData)):
        return e.leaf
    return None


class Jitted:
    """`f` traced per signature; calling it (await) runs its Program."""

    def __init__(self, f, static_argnums, donate_argnums):
        if inspect.iscoroutinefunction(f):
            raise TruenoTypeError("jit takes a function that builds tensors, not an async function")
        self.f = f
        self.static = {static_argnums} if isinstance(static_argnums, int) else set(static_argnums)
        self.donate = {donate_argnums} if isinstance(donate_argnums, int) else set(donate_argnums)
        self.programs: dict = {}
        functools.update_wrapper(self, f)

    async def __call__(self, *args):
        key, tensors, positions, device = _signature(args, self.static)
        leaves = [_storage(t) for t in tensors]
        if None in leaves:  # lazy arguments and views: computed first, in one batch
            tensors = [t if _storage(t) is not None or t.expr.view is None else t.copy() for t in tensors]
            await realize(*[t for t in tensors if _storage(t) is None])
            leaves = [_storage(t) for t in tensors]
        first: dict[int, int] = {}
        aliases = tuple(first.setdefault(id(leaf), j) for j, leaf in enumerate(leaves))
        program, out_structure = self.programs.get((key, aliases), (None, None))
        if program is None or program.device is not device:  # a new signature, or another device
            donated = [j for j, pos in enumerate(positions) if pos in self.donate]
            return await self._trace(args, leaves, device, (key, aliases), donated)
        return unflatten(
            out_structure, [Tensor(device, Expr(a.shape, leaf=a, dtype=a.dtype)) for a in await program.run(leaves)]
        )

    async def _trace(self, args, leaves, device, key, donated):
        """Run f on placeholders of the arguments, record and execute the batch, keep its Program."""
        placeholders = [Expr(leaf.shape, leaf=leaf, dtype=leaf.dtype) for leaf in leaves]  # one node per argument slot
        it = iter(placeholders)
        traced_args = []
        for i, a in enumerate(args):
            if i in self.static:
                traced_args.append(a)
                continue
            values, structure = flatten(a, "", lambda x: True)
            traced_args.append(unflatten(structure, [Tensor(device, next(it)) if _is_tensor(x) else x for x in values]))
        outputs, out_structure = flatten(self.f(*traced_args), "the jitted function's output", _is_tensor)
        if not outputs:
            raise TruenoValueError("a jitted function returns at least one tensor")
        targets = [o.copy().expr if o.expr.view is not None else o.expr for o in outputs]  # a view: its own array
        batch = GpuCommandBatch(device)
        try:
            ids: dict[int, object] = {}
            order = record(batch, targets, ids, apart=placeholders)
            for e in targets:
                batch.keep(ids[id(e)])
            slots = [ids[id(p)].index if id(p) in ids else None for p in placeholders]  # None: never read
            await batch.execute()
            consts = {}
            for eid, e in order:  # closures' arrays and f's host data: resident constants of the program
                nid = ids[eid].index
                if nid in slots or nid in consts or e.op is not None or e.view is not None:
                    continue  # (equal constants were recorded once: one node)
                consts[nid] = e.leaf if isinstance(e.leaf, DeviceArray) else batch.detach(ids[eid])
            outs = [ids[id(e)].index for e in targets]
            program = Program(device, batch.nodes, slots, consts, outs, donated)
            results = {}
            for e in targets:
                nid = ids[id(e)].index
                if nid not in results:
                    node = batch.nodes[nid]
                    results[nid] = node_array(batch, ids[id(e)], node, consts, slots, leaves)
        finally:
            batch.release()
        self.programs[key] = program, out_structure
        return unflatten(
            out_structure,
            [Tensor(device, Expr(o.shape, leaf=results[n], dtype=results[n].dtype)) for o, n in zip(outputs, outs)],
        )


def node_array(batch, buf, node, consts, slots, leaves) -> DeviceArray:
    """The DeviceArray of an output node after the trace's execute: an argument or constant as it is, else the
    batch's buffer handed over."""
    if node.id in consts:
        return consts[node.id]
    if node.id in slots:
        leaf = leaves[slots.index(node.id)]
        return leaf if isinstance(leaf, DeviceArray) else batch.detach(buf)
    return batch.detach(buf)


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def jit(f=None, static_argnums=(), donate_argnums=()):
    """`f` (a function of tensors and pytrees of them, returning tensors) traced once per signature and
    replayed after; the jitted function is awaited: `out = await step(x, y)` (its outputs are computed).
    `static_argnums`: positions of arguments that are not tensors and select a trace by their value.
    `donate_argnums`: positions of arguments whose arrays a replay may write outputs of their shape into, on
    a GPU (JAX's donation: the arrays passed there are released by the call); an update in place, with no
    new buffer, where the graph allows it."""
    if f is None:
        return functools.partial(jit, static_argnums=static_argnums, donate_argnums=donate_argnums)
    return Jitted(f, static_argnums, donate_argnums)
