"""Schedule: a plan's dispatches with their bindings resolved once, replayed by a jitted program.

A GPU executor's execute() walks the nodes of a plan every call: it looks its dispatches up, takes buffers,
and builds every binding. A jitted program (programs.py) runs the same plan again and again with the same
intermediates (its arena), constants and parameters; only its arguments and outputs change. A Schedule keeps
the dispatch list with every binding that stays, and the positions where the buffers of `varying` nodes go:
a replay fills those, takes buffers for the outputs that have none, and submits. No node, plan or kernel is
touched.
"""

from __future__ import annotations

from ..graph import Node, storage
from ..stats import Stats

Bind = tuple[int, object, int, int]


def bind(index: int, buffer) -> Bind:
    """A storage binding of a pooled buffer: its bytes in use, rounded up to 16 (vec4 access, as kernels.round16),
    within capacity; written out, as a replay binds its arguments and outputs so on every call."""
    size = (buffer.nbytes + 15) & -16 or 16
    return (index, buffer.raw, 0, size if size < buffer.capacity else buffer.capacity)


class Schedule:
    """The dispatches of one planned graph, replayable with new buffers for the `varying` node ids."""

    def __init__(self, executor, nodes: list[Node], planned, varying: set[int]):
        self.executor = executor
        pool = executor.pool
        # its own parameters and scratch: the executor's plan cache may drop and reuse those of `planned`
        self.meta = pool.take(planned.meta.nbytes, kept=True)
        executor.driver.write_buffer(self.meta.raw, memoryview(planned.meta_bytes))
        need = max(d.scratch for d in planned.dispatches)
        self.scratch = pool.take(max(16, need), kept=True) if need else None
        self.items = []  # (pipeline, binds with None where a varying buffer goes, grid, ((position, index, node)...))
        for d, offset, pipeline in zip(planned.dispatches, planned.offsets, planned.pipelines):
            binds, subs = [(0, self.meta.raw, offset, len(d.meta))], []
            for index, ref in d.bindings:
                if ref == "partials":
                    binds.append(bind(index, self.scratch))
                    continue
                node = storage(nodes, ref)
                if node.id in varying:
                    subs.append((len(binds), index, node.id))
                    binds.append(None)
                else:
                    binds.append(bind(index, node.buffer))
            self.items.append((pipeline, tuple(binds), d.grid, tuple(subs)))
        # the varying nodes a kernel writes: a replay takes their buffers unless it is given one
        self.outputs = [(n, nodes[n].dtype.nbytes(nodes[n].size)) for n in sorted(varying) if nodes[n].op is not None]

    async def run(self, given: dict[int, object], stats: tuple[Stats, ...]) -> dict[int, object]:
        """Submit the dispatches with `given` (node id -> buffer) bound; the buffers taken for the outputs
        not given come back (node id -> buffer), owned by the caller."""
        executor = self.executor
        pool = executor.pool
        made = {n: pool.take(nbytes) for n, nbytes in self.outputs if n not in given}
        buffers = {**given, **made}
        try:
            work = []
            for pipeline, binds, grid, subs in self.items:
                if subs:
                    filled = list(binds)
                    for position, index, n in subs:
                        filled[position] = bind(index, buffers[n])
                    binds = tuple(filled)
                work.append((pipeline, binds, grid))
            await executor.submit(work, stats, queued=True)
        except BaseException:
            for buffer in made.values():
                pool.give(buffer)
            raise
        return made

    def release(self) -> None:
        """Give the schedule's own buffers back (its program is dropped or planned again)."""
        self.executor.pool.give(self.meta, kept=True)
        if self.scratch is not None:
            self.executor.pool.give(self.scratch, kept=True)
